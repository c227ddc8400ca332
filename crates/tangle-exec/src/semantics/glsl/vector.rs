//! GLSL.std.450 geometric instructions over whole vectors: Length, Distance, Cross, Normalize,
//! FaceForward, Reflect and Refract. Computed in f64, each result component rounded once.

use super::super::float::{fnegate, from_f64, to_f64};

/// The f64 values of a float vector.
pub(super) fn values(bits: u32, v: &[u64]) -> Vec<f64> {
    v.iter().map(|&c| to_f64(bits, c)).collect()
}

/// Euclidean length in f64, scaled so that f64 inputs do not overflow in the squares.
fn length_f64(v: &[f64]) -> f64 {
    let big = v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    if big == 0.0 || big.is_infinite() || big.is_nan() {
        // All zero, an infinity, or NaN: the plain formula gives the right special value.
        return v.iter().map(|x| x * x).sum::<f64>().sqrt();
    }
    big * v.iter().map(|x| (x / big) * (x / big)).sum::<f64>().sqrt()
}

/// The dot product in f64.
fn dot_f64(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Rounds each f64 component to `bits`.
pub(super) fn rounded(bits: u32, v: impl IntoIterator<Item = f64>) -> Vec<u64> {
    v.into_iter().map(|x| from_f64(bits, x)).collect()
}

/// Length: "Result is the length of vector x, i.e., `sqrt(x [0] ^ 2 + x [1] ^ 2 + ...)`."
pub fn length(bits: u32, x: &[u64]) -> u64 {
    from_f64(bits, length_f64(&values(bits, x)))
}

/// Distance: "Result is the distance between p0 and p1, i.e., length(p0 - p1)."
pub fn distance(bits: u32, p0: &[u64], p1: &[u64]) -> u64 {
    let d: Vec<f64> = values(bits, p0)
        .iter()
        .zip(values(bits, p1))
        .map(|(a, b)| a - b)
        .collect();
    from_f64(bits, length_f64(&d))
}

/// Cross: "Result is the cross product of x and y, i.e., the resulting components are, in
/// order: `x[1] * y[2] - y[1] * x[2]`, `x[2] * y[0] - y[2] * x[0]`, `x[0] * y[1] - y[0] * x[1]`".
/// `None`
/// unless both have three components.
pub fn cross(bits: u32, x: &[u64], y: &[u64]) -> Option<[u64; 3]> {
    let (&[x0, x1, x2], &[y0, y1, y2]) = (values(bits, x).as_slice(), values(bits, y).as_slice())
    else {
        return None;
    };
    Some([
        from_f64(bits, x1 * y2 - y1 * x2),
        from_f64(bits, x2 * y0 - y2 * x0),
        from_f64(bits, x0 * y1 - y0 * x1),
    ])
}

/// Normalize: "Result is the vector in the same direction as x but with a length of 1."
pub fn normalize(bits: u32, x: &[u64]) -> Vec<u64> {
    let v = values(bits, x);
    let len = length_f64(&v);
    rounded(bits, v.iter().map(|c| c / len))
}

/// FaceForward N I Nref: "If the dot product of Nref and I is negative, the result is N,
/// otherwise it is -N."
pub fn face_forward(bits: u32, n: &[u64], i: &[u64], nref: &[u64]) -> Vec<u64> {
    if dot_f64(&values(bits, nref), &values(bits, i)) < 0.0 {
        n.to_vec()
    } else {
        n.iter().map(|&c| fnegate(bits, c)).collect()
    }
}

/// Reflect I N: "For the incident vector I and surface orientation N, the result is the
/// reflection direction: I - 2 * dot(N, I) * N".
pub fn reflect(bits: u32, i: &[u64], n: &[u64]) -> Vec<u64> {
    let (i, n) = (values(bits, i), values(bits, n));
    let d = dot_f64(&n, &i);
    rounded(bits, i.iter().zip(&n).map(|(ic, nc)| ic - 2.0 * d * nc))
}

/// Refract I N eta: "k = 1.0 - eta * eta * (1.0 - dot(N, I) * dot(N, I)); if k < 0.0 the result
/// is 0.0; otherwise, the result is eta * I - (eta * dot(N, I) + sqrt(k)) * N". `eta` has its own
/// width `eta_bits` ("a 16-bit or 32-bit floating-point scalar").
pub fn refract(bits: u32, i: &[u64], n: &[u64], eta_bits: u32, eta: u64) -> Vec<u64> {
    let (i, n, eta) = (values(bits, i), values(bits, n), to_f64(eta_bits, eta));
    let d = dot_f64(&n, &i);
    let k = 1.0 - eta * eta * (1.0 - d * d);
    if k < 0.0 {
        return rounded(bits, i.iter().map(|_| 0.0));
    }
    rounded(
        bits,
        i.iter()
            .zip(&n)
            .map(|(ic, nc)| eta * ic - (eta * d + k.sqrt()) * nc),
    )
}

#[cfg(test)]
mod tests {
    use super::super::tests::{fv, FLOATS};
    use super::*;

    #[test]
    fn vector_functions() {
        let v = |bits, xs: &[f64]| xs.iter().map(|&x| fv(bits, x)).collect::<Vec<_>>();
        let back = |bits, xs: &[u64]| xs.iter().map(|&x| to_f64(bits, x)).collect::<Vec<_>>();
        for bits in FLOATS {
            assert_eq!(to_f64(bits, length(bits, &v(bits, &[3.0, 4.0]))), 5.0);
            assert_eq!(
                to_f64(
                    bits,
                    distance(bits, &v(bits, &[1.0, 1.0, 1.0]), &v(bits, &[1.0, 4.0, 5.0]))
                ),
                5.0
            );
            let c = cross(bits, &v(bits, &[1.0, 0.0, 0.0]), &v(bits, &[0.0, 1.0, 0.0]));
            assert_eq!(c.map(|c| back(bits, &c)), Some(vec![0.0, 0.0, 1.0]));
            assert_eq!(cross(bits, &v(bits, &[1.0]), &v(bits, &[1.0])), None);
            assert_eq!(
                back(bits, &normalize(bits, &v(bits, &[0.0, 3.0, -4.0]))),
                [0.0, 0.6f64, -0.8f64]
                    .iter()
                    .map(|&x| to_f64(bits, fv(bits, x)))
                    .collect::<Vec<_>>()
            );
            let n = v(bits, &[0.0, 1.0]);
            assert_eq!(
                back(bits, &face_forward(bits, &n, &v(bits, &[0.0, -1.0]), &n)),
                vec![0.0, 1.0]
            );
            assert_eq!(
                back(bits, &face_forward(bits, &n, &v(bits, &[0.0, 1.0]), &n)),
                vec![-0.0, -1.0]
            );
            assert_eq!(
                back(bits, &reflect(bits, &v(bits, &[1.0, -1.0]), &n)),
                vec![1.0, 1.0]
            );
            // eta = 1: the ray goes straight through.
            assert_eq!(
                back(
                    bits,
                    &refract(bits, &v(bits, &[0.6, -0.8]), &n, 32, fv(32, 1.0))
                ),
                back(bits, &v(bits, &[0.6, -0.8]))
            );
            // Total internal reflection gives zero.
            assert_eq!(
                back(
                    bits,
                    &refract(bits, &v(bits, &[0.8, -0.6]), &n, 32, fv(32, 2.0))
                ),
                vec![0.0, 0.0]
            );
            // Large f64 components do not overflow the length.
            if bits == 64 {
                assert_eq!(to_f64(64, length(64, &v(64, &[3e300, 4e300]))), 5e300);
            }
        }
    }
}
