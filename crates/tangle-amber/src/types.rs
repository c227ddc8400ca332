//! Buffer element types: `DATA_TYPE` names (`uint32`, `vec3<float>`, `mat2x3<double>`, `int8[]`);
//! Vulkan format names (`R32G32B32A32_SFLOAT`) become a [`DataType`] through [`crate::format`].

use serde::Serialize;

/// A scalar component type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Scalar {
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F16,
    F32,
    F64,
}

impl Scalar {
    /// Size in bytes.
    pub fn size(self) -> usize {
        match self {
            Scalar::I8 | Scalar::U8 => 1,
            Scalar::I16 | Scalar::U16 | Scalar::F16 => 2,
            Scalar::I32 | Scalar::U32 | Scalar::F32 => 4,
            Scalar::I64 | Scalar::U64 | Scalar::F64 => 8,
        }
    }

    /// Whether this is a floating-point type.
    pub fn is_float(self) -> bool {
        matches!(self, Scalar::F16 | Scalar::F32 | Scalar::F64)
    }

    /// Whether this is a signed integer type.
    pub fn is_signed_int(self) -> bool {
        matches!(self, Scalar::I8 | Scalar::I16 | Scalar::I32 | Scalar::I64)
    }

    /// The AmberScript spelling.
    pub fn name(self) -> &'static str {
        match self {
            Scalar::I8 => "int8",
            Scalar::I16 => "int16",
            Scalar::I32 => "int32",
            Scalar::I64 => "int64",
            Scalar::U8 => "uint8",
            Scalar::U16 => "uint16",
            Scalar::U32 => "uint32",
            Scalar::U64 => "uint64",
            Scalar::F16 => "float16",
            Scalar::F32 => "float",
            Scalar::F64 => "double",
        }
    }

    /// Parses an AmberScript scalar type name.
    pub fn parse(name: &str) -> Option<Scalar> {
        Some(match name {
            "int8" => Scalar::I8,
            "int16" => Scalar::I16,
            "int32" => Scalar::I32,
            "int64" => Scalar::I64,
            "uint8" => Scalar::U8,
            "uint16" => Scalar::U16,
            "uint32" => Scalar::U32,
            "uint64" => Scalar::U64,
            "float16" => Scalar::F16,
            "float" => Scalar::F32,
            "double" => Scalar::F64,
            _ => return None,
        })
    }
}

/// The type of one buffer element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct DataType {
    /// The component type.
    pub scalar: Scalar,
    /// Components per column: 1 for a scalar, 2..=4 for a vector or a matrix column.
    pub rows: u8,
    /// Columns: 1 unless this is a matrix (`mat<C>x<R>`).
    pub columns: u8,
    /// The `[]` suffix: the buffer is a shader array of this type, which changes std140 padding.
    pub array: bool,
    /// A texel format (`FORMAT R32G32B32_SFLOAT`): components are tightly packed, never padded.
    pub packed: bool,
}

impl DataType {
    /// A scalar type.
    pub fn scalar(scalar: Scalar) -> Self {
        DataType {
            scalar,
            rows: 1,
            columns: 1,
            array: false,
            packed: false,
        }
    }

    /// Whether this is a matrix type.
    pub fn is_matrix(&self) -> bool {
        self.columns > 1
    }

    /// Components (excluding padding) per element.
    pub fn components(&self) -> usize {
        usize::from(self.rows) * usize::from(self.columns)
    }

    /// Parses a `DATA_TYPE` name: a scalar, `vec<N><T>`, `mat<C>x<R><T>`, optionally with `[]`.
    pub fn parse(name: &str) -> Option<DataType> {
        let (base, array) = match name.strip_suffix("[]") {
            Some(base) => (base, true),
            None => (name, false),
        };
        let generic = |rest: &str| -> Option<Scalar> {
            Scalar::parse(rest.strip_prefix('<')?.strip_suffix('>')?)
        };
        let dim = |c: u8| -> Option<u8> { (b'2'..=b'4').contains(&c).then(|| c - b'0') };
        let mut ty = if let Some(rest) = base.strip_prefix("vec") {
            let n = dim(*rest.as_bytes().first()?)?;
            DataType {
                rows: n,
                ..DataType::scalar(generic(rest.get(1..)?)?)
            }
        } else if let Some(rest) = base.strip_prefix("mat") {
            let bytes = rest.as_bytes();
            let columns = dim(*bytes.first()?)?;
            if bytes.get(1) != Some(&b'x') {
                return None;
            }
            let rows = dim(*bytes.get(2)?)?;
            DataType {
                rows,
                columns,
                ..DataType::scalar(generic(rest.get(3..)?)?)
            }
        } else {
            DataType::scalar(Scalar::parse(base)?)
        };
        ty.array = array;
        Some(ty)
    }
}

impl std::fmt::Display for DataType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.scalar.name();
        match (self.columns, self.rows) {
            (1, 1) => write!(f, "{s}")?,
            (1, n) => write!(f, "vec{n}<{s}>")?,
            (c, r) => write!(f, "mat{c}x{r}<{s}>")?,
        }
        if self.array {
            write!(f, "[]")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_type_names() {
        let t = DataType::parse("vec3<float>").unwrap();
        assert_eq!(
            (t.scalar, t.rows, t.columns, t.array),
            (Scalar::F32, 3, 1, false)
        );
        let t = DataType::parse("mat2x3<double>[]").unwrap();
        assert_eq!(
            (t.scalar, t.rows, t.columns, t.array),
            (Scalar::F64, 3, 2, true)
        );
        let t = DataType::parse("int8[]").unwrap();
        assert_eq!(
            (t.scalar, t.rows, t.columns, t.array),
            (Scalar::I8, 1, 1, true)
        );
        for bad in [
            "vec5<float>",
            "vec2<flot>",
            "mat2<float>",
            "mat2x<float>",
            "vec",
            "",
            "[]",
            "vec2float",
        ] {
            assert_eq!(DataType::parse(bad), None, "{bad}");
        }
        for name in ["uint16", "vec4<int64>", "mat4x2<float16>[]"] {
            assert_eq!(DataType::parse(name).unwrap().to_string(), name);
        }
    }
}
