//! GLSL.std.450 matrix instructions: Determinant and MatrixInverse, over column-major n×n
//! matrices of float bit patterns (n ≤ 4), computed in f64 and rounded once.

use super::super::float::from_f64;
use super::vector::{rounded, values};

/// The largest matrix order accepted: SPIR-V matrices used with these instructions are 2×2 to
/// 4×4, and cofactor expansion costs n!.
const MAX_ORDER: usize = 4;

/// Determinant of an n×n f64 matrix stored column-major, by cofactor expansion along the first
/// column (n ≤ 4 in SPIR-V, so the factorial cost is small).
fn det_f64(n: usize, m: &[f64]) -> f64 {
    match n {
        0 => 1.0,
        1 => m.first().copied().unwrap_or(0.0),
        _ => (0..n)
            .map(|row| {
                let sign = if row % 2 == 0 { 1.0 } else { -1.0 };
                let a = m.get(row).copied().unwrap_or(0.0);
                sign * a * det_f64(n - 1, &minor(n, m, row, 0))
            })
            .sum(),
    }
}

/// The column-major minor of `m` without `row` and `col`.
fn minor(n: usize, m: &[f64], row: usize, col: usize) -> Vec<f64> {
    (0..n)
        .filter(|&c| c != col)
        .flat_map(|c| {
            (0..n)
                .filter(move |&r| r != row)
                .map(move |r| m.get(c * n + r).copied().unwrap_or(0.0))
        })
        .collect()
}

/// Determinant: "Result is the determinant of x." `m` holds the n×n components column by
/// column. `None` when `m` does not have n·n components or n > 4.
pub fn determinant(bits: u32, n: usize, m: &[u64]) -> Option<u64> {
    if n > MAX_ORDER || m.len() != n * n {
        return None;
    }
    Some(from_f64(bits, det_f64(n, &values(bits, m))))
}

/// MatrixInverse: "Result is a matrix that is the inverse of x. The values in the result are
/// undefined if x is singular or poorly-conditioned (nearly singular)." Computed as the
/// adjugate over the determinant in f64 (a singular matrix gives infinities or NaN). Input and
/// output are column-major; `None` when `m` does not have n·n components or n > 4.
pub fn matrix_inverse(bits: u32, n: usize, m: &[u64]) -> Option<Vec<u64>> {
    if n > MAX_ORDER || m.len() != n * n {
        return None;
    }
    let v = values(bits, m);
    let det = det_f64(n, &v);
    // inverse[c][r] = cofactor(r, c) / det: the adjugate is the transposed cofactor matrix.
    let out = (0..n).flat_map(|c| {
        let v = &v;
        (0..n).map(move |r| {
            let sign = if (r + c) % 2 == 0 { 1.0 } else { -1.0 };
            // `+ 0.0` turns the -0 of a negated zero cofactor into +0 (a zero has no sign here).
            sign * det_f64(n - 1, &minor(n, v, c, r)) / det + 0.0
        })
    });
    Some(rounded(bits, out))
}

/// Whether MatrixInverse is undefined: the matrix is singular (zero determinant in f64).
pub fn matrix_inverse_is_undefined(bits: u32, n: usize, m: &[u64]) -> bool {
    if n > MAX_ORDER {
        return true;
    }
    det_f64(n, &values(bits, m)) == 0.0
}

#[cfg(test)]
mod tests {
    use super::super::super::float::to_f64;
    use super::super::super::proptest_config;
    use super::super::tests::{fv, FLOATS};
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn rejects_bad_shapes() {
        assert_eq!(determinant(32, 5, &[0; 25]), None);
        assert_eq!(determinant(32, 2, &[0; 3]), None);
        assert_eq!(matrix_inverse(32, usize::MAX, &[]), None);
        assert!(matrix_inverse_is_undefined(32, 9, &[]));
        let id: Vec<u64> = [1.0, 0.0, 0.0, 1.0].iter().map(|&x| fv(32, x)).collect();
        assert_eq!(matrix_inverse(32, 2, &id), Some(id.clone()));
        assert_eq!(determinant(32, 2, &id), Some(fv(32, 1.0)));
    }

    /// Leibniz determinant over integer matrices in i128: an independent reference.
    fn leibniz(n: usize, m: &[i64]) -> i128 {
        fn perms(n: usize) -> Vec<Vec<usize>> {
            if n == 0 {
                return vec![vec![]];
            }
            let mut out = vec![];
            for p in perms(n - 1) {
                for pos in 0..n {
                    let mut q = p.clone();
                    q.insert(pos, n - 1);
                    out.push(q);
                }
            }
            out
        }
        perms(n)
            .into_iter()
            .map(|p| {
                let inversions = (0..n)
                    .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
                    .filter(|&(i, j)| p[i] > p[j])
                    .count();
                let sign: i128 = if inversions % 2 == 0 { 1 } else { -1 };
                // element (row r, column p[r]) in column-major storage
                sign * (0..n)
                    .map(|r| i128::from(m[p[r] * n + r]))
                    .product::<i128>()
            })
            .sum()
    }

    proptest! {
        #![proptest_config(proptest_config())]
        #[test]
        fn determinant_random(n in 1usize..5, cells in proptest::collection::vec(-20i64..20, 16)) {
            let m = &cells[..n * n];
            for bits in FLOATS {
                let mv: Vec<u64> = m.iter().map(|&x| fv(bits, x as f64)).collect();
                let want = leibniz(n, m);
                let got = determinant(bits, n, &mv);
                prop_assert_eq!(got, Some(fv(bits, want as f64)));
                if want != 0 && bits == 64 {
                    // m * inverse ≈ identity.
                    let inv: Vec<f64> = matrix_inverse(bits, n, &mv).unwrap_or_default().iter().map(|&x| to_f64(64, x)).collect();
                    for r in 0..n {
                        for c in 0..n {
                            let s: f64 = (0..n).map(|k| m[k * n + r] as f64 * inv[c * n + k]).sum();
                            let id = if r == c { 1.0 } else { 0.0 };
                            prop_assert!((s - id).abs() < 1e-9, "{} {} {}", r, c, s);
                        }
                    }
                } else {
                    prop_assert_eq!(matrix_inverse_is_undefined(bits, n, &mv), want == 0);
                }
            }
        }
    }
}
