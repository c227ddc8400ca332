//! Where each component of a buffer element lives under std140/std430 (amber's
//! `docs/memory_layout.md`), and encoding literal lists into buffer bytes.
//!
//! * A vector of 3 always occupies 4 components.
//! * A matrix is column-major: `C` columns, each an `R`-vector padded like a vector.
//! * Under std140 only arrays (`T[]`) and matrices round their stride (and a matrix its column
//!   stride) up to 16 bytes; a plain scalar buffer declared `STD140` stays tightly packed.
//! * Texel formats (`FORMAT ...`) are tightly packed.
//!
//! Padding bytes are zero and are skipped when values are written or compared.

use crate::types::{DataType, Scalar};
use crate::value::{Component, Number};
use serde::Serialize;

/// The buffer layout keyword: `STD430` (the default) or `STD140`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
pub enum Layout {
    Std140,
    #[default]
    Std430,
}

/// The byte offsets and types of an element's components, and the element stride.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ElementLayout {
    /// The type of each component (one entry per offset; a struct mixes types).
    pub scalars: Vec<Scalar>,
    /// Bytes from one element to the next, padding included.
    pub stride: usize,
    /// Byte offset of each component inside the element, in value order (column-major).
    pub offsets: Vec<usize>,
}

/// `n` rounded up to a multiple of `to` (`to` > 0).
pub(crate) fn round_up(n: usize, to: usize) -> usize {
    n.div_ceil(to.max(1)).saturating_mul(to.max(1))
}

impl ElementLayout {
    /// The layout of `ty` under `layout`.
    pub fn new(ty: &DataType, layout: Layout) -> ElementLayout {
        let size = ty.scalar.size();
        let rows = usize::from(ty.rows);
        let columns = usize::from(ty.columns);
        if ty.packed {
            return ElementLayout {
                scalars: vec![ty.scalar; rows],
                stride: size * rows,
                offsets: (0..rows).map(|r| r * size).collect(),
            };
        }
        // A vec3 pads to 4 components (its alignment is 4 components).
        let vector = if rows == 3 { 4 * size } else { rows * size };
        let std140 = layout == Layout::Std140;
        let column_stride = if ty.is_matrix() && std140 {
            round_up(vector, 16)
        } else {
            vector
        };
        let offsets = (0..columns)
            .flat_map(|c| (0..rows).map(move |r| c * column_stride + r * size))
            .collect();
        let mut stride = column_stride * columns;
        if std140 && ty.array {
            stride = round_up(stride, 16);
        }
        ElementLayout {
            scalars: vec![ty.scalar; rows * columns],
            stride,
            offsets,
        }
    }

    /// Components per element.
    pub fn components(&self) -> usize {
        self.offsets.len()
    }

    /// The type of the `i`-th component counted across elements.
    pub fn scalar(&self, i: usize) -> Option<Scalar> {
        self.scalars.get(i.checked_rem(self.components())?).copied()
    }

    /// Encodes `count` elements from `values`, consumed component by component; components past
    /// the end of `values` and all padding are zero. The error names the offending literal's index.
    pub fn encode(&self, values: &[Number], count: usize) -> Result<Vec<u8>, (usize, String)> {
        let total = count
            .checked_mul(self.stride)
            .ok_or((0, "the buffer is too large".to_string()))?;
        let mut bytes = vec![0u8; total];
        for (i, value) in values.iter().enumerate() {
            self.write(&mut bytes, i, *value).map_err(|e| (i, e))?;
        }
        Ok(bytes)
    }

    /// Writes `value` as the `i`-th component (counted across elements); a component past the end
    /// of `bytes` is ignored.
    pub fn write(&self, bytes: &mut [u8], i: usize, value: Number) -> Result<(), String> {
        let Some(scalar) = self.scalar(i) else {
            return Ok(());
        };
        let encoded = value.encode(scalar)?;
        let slot = self
            .byte_offset(i)
            .and_then(|at| bytes.get_mut(at..at.checked_add(encoded.len())?));
        if let Some(slot) = slot {
            slot.copy_from_slice(&encoded);
        }
        Ok(())
    }

    /// The byte offset of the `i`-th component counted across elements.
    pub fn byte_offset(&self, i: usize) -> Option<usize> {
        let per = self.components();
        let within = self.offsets.get(i.checked_rem(per)?)?;
        (i / per).checked_mul(self.stride)?.checked_add(*within)
    }

    /// Reads the `i`-th component (counted across elements) of `bytes`, `None` past the end.
    pub fn component(&self, bytes: &[u8], i: usize) -> Option<Component> {
        let at = self.byte_offset(i)?;
        Component::decode(bytes.get(at..)?, self.scalar(i)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(name: &str, l: Layout) -> ElementLayout {
        ElementLayout::new(&DataType::parse(name).unwrap(), l)
    }

    #[test]
    fn strides_follow_memory_layout_md() {
        use Layout::{Std140, Std430};
        // (type, std430 stride, std140 stride)
        let cases = [
            ("uint32", 4, 4),
            ("uint32[]", 4, 16),
            ("int8", 1, 1),
            ("int8[]", 1, 16),
            ("double[]", 8, 16),
            ("vec2<float>", 8, 8),
            ("vec2<float>[]", 8, 16),
            ("vec3<float>", 16, 16),
            ("vec3<float>[]", 16, 16),
            ("vec4<float>", 16, 16),
            ("vec3<double>", 32, 32),
            ("vec2<float16>", 4, 4),
            ("vec3<uint8>", 4, 4),
            ("vec3<uint8>[]", 4, 16),
            ("mat2x2<float>", 16, 32),
            ("mat2x3<float>", 32, 32),
            ("mat3x2<float>", 24, 48),
            ("mat4x4<float>", 64, 64),
            ("mat2x2<double>", 32, 32),
            ("mat3x3<double>", 96, 96),
        ];
        for (name, s430, s140) in cases {
            assert_eq!(layout(name, Std430).stride, s430, "{name} std430");
            assert_eq!(layout(name, Std140).stride, s140, "{name} std140");
        }
    }

    #[test]
    fn matrix_components_are_column_major_with_padded_columns() {
        let l = layout("mat2x3<float>", Layout::Std430);
        assert_eq!(l.offsets, vec![0, 4, 8, 16, 20, 24]);
        let l = layout("mat3x2<float>", Layout::Std140);
        assert_eq!(l.offsets, vec![0, 4, 16, 20, 32, 36]);
    }

    #[test]
    fn encode_skips_padding_and_zero_fills() {
        let l = layout("vec3<uint32>", Layout::Std430);
        let values: Vec<Number> = (1..=4).map(Number::Int).collect();
        let bytes = l.encode(&values, 2).unwrap();
        let words: Vec<u32> = bytes
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(words, vec![1, 2, 3, 0, 4, 0, 0, 0]);
        assert_eq!(l.component(&bytes, 3), Some(Component::Int(4)));
        assert_eq!(l.component(&bytes, 6), None);
    }

    #[test]
    fn random_vectors_round_trip_through_an_independent_offset_formula() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(11);
        for name in [
            "vec2<int16>[]",
            "vec3<int32>",
            "vec4<int8>[]",
            "mat2x3<int64>",
            "mat4x2<int32>[]",
        ] {
            for std in [Layout::Std140, Layout::Std430] {
                let ty = DataType::parse(name).unwrap();
                let l = ElementLayout::new(&ty, std);
                let count = rng.random_range(1..6);
                let values: Vec<i64> = (0..count * ty.components())
                    .map(|_| rng.random_range(-100..100))
                    .collect();
                let numbers: Vec<Number> =
                    values.iter().map(|v| Number::Int(i128::from(*v))).collect();
                let bytes = l.encode(&numbers, count).unwrap();
                let s = ty.scalar.size();
                let rows = usize::from(ty.rows);
                let vec_size = if rows == 3 { 4 * s } else { rows * s };
                let col = if ty.is_matrix() && std == Layout::Std140 {
                    vec_size.div_ceil(16) * 16
                } else {
                    vec_size
                };
                let mut stride = col * usize::from(ty.columns);
                if ty.array && std == Layout::Std140 {
                    stride = stride.div_ceil(16) * 16;
                }
                assert_eq!(bytes.len(), count * stride, "{name}");
                for (i, v) in values.iter().enumerate() {
                    let (e, k) = (i / ty.components(), i % ty.components());
                    let at = e * stride + (k / rows) * col + (k % rows) * s;
                    let got = Component::decode(&bytes[at..], ty.scalar).unwrap();
                    assert_eq!(got, Component::Int(i128::from(*v)), "{name} {i}");
                }
            }
        }
    }
}
