//! Evaluating `EXPECT`s against buffer bytes, with amber's comparison rules
//! (`Verifier::ProbeSSBO`, `Buffer::IsEqual`, `Buffer::CompareRMSE`).
//!
//! * Expected values are first converted to the element type: integers by amber's
//!   `static_cast<T>(u64)`, floats rounded to the element's width (so `EQ 0.1` holds for a
//!   `float` that stores 0.1f, as in amber where the probe compares in the element's C type).
//! * Integers compare exactly, in the element type's signedness.
//! * Floats with plain `EQ` allow a relative difference of 1e-8 (`kEpsilon` 1e-6 %); NaN equals NaN.
//! * `TOLERANCE t` is absolute, `t%` relative to the expected value.

use crate::layout::ElementLayout;
use crate::report::{ExpectResult, Mismatch, MAX_MISMATCHES};
use crate::script::{Check, CompareOp, Expect, Script, Tolerance};
use crate::types::Scalar;
use crate::value::{Component, Number};

/// Collects mismatches, keeping the first few.
struct Mismatches {
    list: Vec<Mismatch>,
    count: usize,
}

impl Mismatches {
    fn new() -> Self {
        Mismatches {
            list: Vec::new(),
            count: 0,
        }
    }

    fn push(&mut self, layout: &ElementLayout, i: usize, expected: String, actual: String) {
        self.count += 1;
        if self.list.len() < MAX_MISMATCHES {
            let per = layout.components().max(1);
            self.list.push(Mismatch {
                byte_offset: layout.byte_offset(i).unwrap_or(0),
                element: i / per,
                component: i % per,
                expected,
                actual,
            });
        }
    }
}

/// Whether `actual` and `expected` are equal within `tolerance` (amber's `IsEqualWithTolerance`).
fn within(actual: f64, expected: f64, tolerance: Tolerance) -> bool {
    let allowed = if tolerance.percent {
        tolerance.value / 100.0 * expected.abs()
    } else {
        tolerance.value
    };
    (actual - expected).abs() <= allowed
}

/// Compares one component.
fn compare(
    actual: Component,
    expected: Component,
    op: CompareOp,
    tolerance: Option<Tolerance>,
) -> bool {
    match (actual, expected) {
        (Component::Int(a), Component::Int(e)) => match (op, tolerance) {
            (CompareOp::Eq, Some(t)) => within(a as f64, e as f64, t),
            (CompareOp::Eq, None) => a == e,
            (CompareOp::Ne, _) => a != e,
            (CompareOp::Lt, _) => a < e,
            (CompareOp::Le, _) => a <= e,
            (CompareOp::Gt, _) => a > e,
            (CompareOp::Ge, _) => a >= e,
        },
        (a, e) => {
            let (a, e) = (a.as_f64(), e.as_f64());
            match (op, tolerance) {
                (CompareOp::Eq, _) if a.is_nan() || e.is_nan() => a.is_nan() && e.is_nan(),
                (CompareOp::Eq, Some(t)) => within(a, e, t),
                (CompareOp::Eq, None) => {
                    a == e
                        || within(
                            a,
                            e,
                            Tolerance {
                                value: 1e-6,
                                percent: true,
                            },
                        )
                }
                (CompareOp::Ne, _) => a != e,
                (CompareOp::Lt, _) => a < e,
                (CompareOp::Le, _) => a <= e,
                (CompareOp::Gt, _) => a > e,
                (CompareOp::Ge, _) => a >= e,
            }
        }
    }
}

/// Evaluates `expect` against the current buffer contents (indexed like [`Script::buffers`]).
pub fn verify(script: &Script, buffers: &[Vec<u8>], expect: &Expect) -> ExpectResult {
    let name = script
        .buffers
        .get(expect.buffer)
        .map_or("?", |b| b.name.as_str());
    let mut result = ExpectResult {
        line: expect.at.line,
        buffer: name.to_string(),
        passed: false,
        message: String::new(),
        mismatches: Vec::new(),
        mismatch_count: 0,
    };
    let (Some(buffer), Some(bytes)) = (
        script.buffers.get(expect.buffer),
        buffers.get(expect.buffer),
    ) else {
        result.message = "unknown buffer".into();
        return result;
    };
    let layout = &buffer.element;
    let mut mismatches = Mismatches::new();
    match &expect.check {
        Check::Probe {
            offset,
            op,
            tolerance,
            values,
        } => {
            result.message = format!(
                "{name} IDX {offset} {} ({} values)",
                op.keyword(),
                values.len()
            );
            let first = offset / layout.stride.max(1) * layout.components();
            for (j, value) in values.iter().enumerate() {
                let i = first.saturating_add(j);
                let Some(actual) = layout.component(bytes, i) else {
                    result.message = format!(
                        "{name} IDX {offset}: the probe of {} values runs past the end of the buffer ({} bytes)",
                        values.len(),
                        bytes.len()
                    );
                    return result;
                };
                let Some(expected) = layout.scalar(i).and_then(|s| expected_component(*value, s))
                else {
                    result.message = format!("{name}: {value} does not fit the element type");
                    return result;
                };
                if !compare(actual, expected, *op, *tolerance) {
                    mismatches.push(
                        layout,
                        i,
                        format!("{} {expected}", op.keyword()),
                        actual.to_string(),
                    );
                }
            }
        }
        Check::EqBuffer(other) => {
            let other_name = script.buffers.get(*other).map_or("?", |b| b.name.as_str());
            result.message = format!("{name} EQ_BUFFER {other_name}");
            let other_bytes = buffers.get(*other).map_or(&[][..], Vec::as_slice);
            if other_bytes.len() != bytes.len() {
                result.message = format!(
                    "{name} has {} bytes but {other_name} has {}",
                    bytes.len(),
                    other_bytes.len()
                );
                return result;
            }
            let total = bytes.len() / layout.stride.max(1) * layout.components();
            for i in 0..total {
                let (a, e) = (layout.component(bytes, i), layout.component(other_bytes, i));
                if a.map(bits) != e.map(bits) {
                    let show = |c: Option<Component>| c.map_or("-".to_string(), |c| c.to_string());
                    mismatches.push(layout, i, show(e), show(a));
                }
            }
            if mismatches.count == 0 && bytes != other_bytes {
                result.message = format!("{name} EQ_BUFFER {other_name}: the padding bytes differ");
                return result;
            }
        }
        Check::RmseBuffer(other, tolerance) => {
            let other_name = script.buffers.get(*other).map_or("?", |b| b.name.as_str());
            let other_bytes = buffers.get(*other).map_or(&[][..], Vec::as_slice);
            if other_bytes.len() != bytes.len() {
                result.message = format!(
                    "{name} has {} bytes but {other_name} has {}",
                    bytes.len(),
                    other_bytes.len()
                );
                return result;
            }
            let total = bytes.len() / layout.stride.max(1) * layout.components();
            let sum: f64 = (0..total)
                .filter_map(|i| {
                    Some(
                        layout.component(bytes, i)?.as_f64()
                            - layout.component(other_bytes, i)?.as_f64(),
                    )
                })
                .map(|d| d * d)
                .sum();
            let rmse = if total == 0 {
                0.0
            } else {
                (sum / total as f64).sqrt()
            };
            result.message =
                format!("{name} RMSE_BUFFER {other_name}: rmse {rmse} (tolerance {tolerance})");
            result.passed = rmse <= *tolerance;
            return result;
        }
        Check::HistogramEmdBuffer(other, tolerance) => {
            let other_name = script.buffers.get(*other).map_or("?", |b| b.name.as_str());
            let other_bytes = buffers.get(*other).map_or(&[][..], Vec::as_slice);
            match histogram_emd(layout, bytes, other_bytes) {
                Ok(emd) => {
                    result.message = format!(
                        "{name} EQ_HISTOGRAM_EMD_BUFFER {other_name}: emd {emd} (tolerance {tolerance})"
                    );
                    result.passed = emd <= *tolerance;
                }
                Err(why) => result.message = format!("{name} EQ_HISTOGRAM_EMD_BUFFER: {why}"),
            }
            return result;
        }
    }
    result.passed = mismatches.count == 0;
    result.mismatch_count = mismatches.count;
    result.mismatches = mismatches.list;
    if !result.passed {
        result.message = format!(
            "{}: {} of the components differ",
            result.message, mismatches.count
        );
    }
    result
}

/// The largest earth mover's distance over the four channels' 256-bin histograms of two buffers
/// of 4 x 8-bit unsigned elements, as amber's `Buffer::CompareHistogramEMD` computes it: each
/// histogram is normalised by its buffer's element count, the distance is the sum of the absolute
/// cumulative differences over the bins, divided by 256.
fn histogram_emd(layout: &ElementLayout, a: &[u8], b: &[u8]) -> Result<f64, String> {
    const BINS: usize = 256;
    if layout.components() != 4 || layout.scalars.iter().any(|s| *s != Scalar::U8) {
        return Err("the comparison needs 8-bit unsigned elements of four channels".into());
    }
    let histograms = |bytes: &[u8]| {
        let count = bytes.len() / layout.stride.max(1);
        let mut bins = vec![[0u64; BINS]; 4];
        for e in 0..count {
            for (c, channel) in bins.iter_mut().enumerate() {
                if let Some(v) = bytes.get(e * layout.stride + layout.offsets[c]) {
                    channel[usize::from(*v)] += 1;
                }
            }
        }
        (bins, count.max(1) as f64)
    };
    let ((ha, na), (hb, nb)) = (histograms(a), histograms(b));
    let mut max_emd = 0f64;
    for c in 0..4 {
        let (mut accum, mut total) = (0f64, 0f64);
        for i in 0..BINS {
            accum += ha[c][i] as f64 / na - hb[c][i] as f64 / nb;
            total += accum.abs();
        }
        max_emd = max_emd.max(total / BINS as f64);
    }
    Ok(max_emd)
}

/// The comparable identity of a component for byte-wise equality (floats by bits).
fn bits(c: Component) -> (i128, u64) {
    match c {
        Component::Int(v) => (v, 0),
        Component::Float(f) => (0, f.to_bits()),
    }
}

/// An expected literal converted to the element type.
fn expected_component(value: Number, scalar: Scalar) -> Option<Component> {
    Component::decode(&value.encode(scalar).ok()?, scalar)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_comparisons_use_the_element_signedness() {
        let int = |v| Component::Int(v);
        assert!(compare(int(-1), int(0), CompareOp::Lt, None));
        assert!(compare(int(4_294_967_295), int(0), CompareOp::Gt, None));
        assert!(compare(
            int(5),
            int(7),
            CompareOp::Eq,
            Some(Tolerance {
                value: 2.0,
                percent: false
            })
        ));
        assert!(!compare(
            int(5),
            int(8),
            CompareOp::Eq,
            Some(Tolerance {
                value: 2.0,
                percent: false
            })
        ));
    }

    #[test]
    fn float_equality_is_nearly_exact_unless_tolerant() {
        let f = Component::Float;
        assert!(compare(f(f64::NAN), f(f64::NAN), CompareOp::Eq, None));
        assert!(!compare(f(1.0), f(f64::NAN), CompareOp::Eq, None));
        assert!(compare(f(1.0 + 1e-9), f(1.0), CompareOp::Eq, None));
        assert!(!compare(f(1.0 + 1e-7), f(1.0), CompareOp::Eq, None));
        assert!(compare(
            f(1.05),
            f(1.0),
            CompareOp::Eq,
            Some(Tolerance {
                value: 10.0,
                percent: true
            })
        ));
        assert!(!compare(
            f(1.2),
            f(1.0),
            CompareOp::Eq,
            Some(Tolerance {
                value: 10.0,
                percent: true
            })
        ));
        assert!(compare(f(0.0), f(-0.0), CompareOp::Eq, None));
    }

    #[test]
    fn histogram_emd_matches_a_hand_computed_distance() {
        let ty = crate::types::DataType::parse("vec4<uint8>").unwrap();
        let layout = ElementLayout::new(&ty, crate::layout::Layout::Std430);
        let zeros = vec![0u8; 8];
        assert_eq!(histogram_emd(&layout, &zeros, &zeros), Ok(0.0));
        // Channel 0 moves all its earth from bin 0 to bin 255: 255 bins carry a mass of 1.
        let mut far = zeros.clone();
        far[0] = 255;
        far[4] = 255;
        let emd = histogram_emd(&layout, &zeros, &far).unwrap();
        assert!((emd - 255.0 / 256.0).abs() < 1e-12, "{emd}");
        // Half the elements of one channel move by 2 bins: mass 0.5 over 2 bins.
        let mut near = zeros.clone();
        near[5] = 2;
        let emd = histogram_emd(&layout, &zeros, &near).unwrap();
        assert!((emd - 1.0 / 256.0).abs() < 1e-12, "{emd}");
        let ty = crate::types::DataType::parse("vec4<uint16>").unwrap();
        let wide = ElementLayout::new(&ty, crate::layout::Layout::Std430);
        assert!(histogram_emd(&wide, &zeros, &zeros).is_err());
    }
}
