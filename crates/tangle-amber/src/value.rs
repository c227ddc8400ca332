//! Numbers as the script spells them, and the component values read back from buffer bytes.
//!
//! A literal keeps its written form (integer or decimal) until it meets the element type: amber
//! stores an integer literal as a 64-bit two's-complement value and casts it to the element type
//! (`static_cast<T>(u64)`), and a float literal converts to the element's float width.

use crate::types::Scalar;
use half::f16;

/// A numeric literal of the script.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    /// A decimal or `0x` hex integer, possibly negative; in `-2^63 ..= 2^64-1`.
    Int(i128),
    /// A decimal number with a fraction or an exponent, or `inf`/`nan`.
    Float(f64),
}

impl Number {
    /// Parses a literal: `-5`, `0xff`, `1.5`, `-2e3`, `inf`, `nan`.
    pub fn parse(text: &str) -> Option<Number> {
        let (negative, magnitude) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text.strip_prefix('+').unwrap_or(text)),
        };
        let int = if let Some(hex) = magnitude
            .strip_prefix("0x")
            .or_else(|| magnitude.strip_prefix("0X"))
        {
            Some(u64::from_str_radix(hex, 16).ok()?)
        } else if !magnitude.is_empty() && magnitude.bytes().all(|b| b.is_ascii_digit()) {
            Some(magnitude.parse::<u64>().ok()?)
        } else {
            None
        };
        if let Some(m) = int {
            let v = if negative {
                -i128::from(m)
            } else {
                i128::from(m)
            };
            return (v >= i128::from(i64::MIN)).then_some(Number::Int(v));
        }
        let plain = magnitude
            .bytes()
            .all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b));
        let special = ["inf", "infinity", "nan"].contains(&magnitude.to_ascii_lowercase().as_str());
        if !(plain || special) {
            return None;
        }
        text.parse::<f64>().ok().map(Number::Float)
    }

    /// The value as a double (integers convert exactly up to 2^53).
    pub fn as_f64(self) -> f64 {
        match self {
            Number::Int(v) => v as f64,
            Number::Float(f) => f,
        }
    }

    /// The little-endian bytes of this literal as a `scalar` component, or why it does not fit.
    pub fn encode(self, scalar: Scalar) -> Result<Vec<u8>, String> {
        if scalar.is_float() {
            let f = self.as_f64();
            return Ok(match scalar {
                Scalar::F16 => f16::from_f64(f).to_le_bytes().to_vec(),
                Scalar::F32 => (f as f32).to_le_bytes().to_vec(),
                _ => f.to_le_bytes().to_vec(),
            });
        }
        match self {
            // Two's complement in 64 bits, then truncated to the element width (amber's cast).
            Number::Int(v) => Ok((v as u64).to_le_bytes()[..scalar.size()].to_vec()),
            Number::Float(f) => Err(format!(
                "{f} is not an integer, but the data type is {}",
                scalar.name()
            )),
        }
    }

    /// The value an integer literal has once cast to `scalar` (truncate, then reinterpret).
    pub fn cast_int(self, scalar: Scalar) -> Option<Component> {
        let bytes = self.encode(scalar).ok()?;
        Component::decode(&bytes, scalar)
    }
}

impl std::fmt::Display for Number {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Number::Int(v) => write!(f, "{v}"),
            Number::Float(x) => write!(f, "{x}"),
        }
    }
}

/// One component read from buffer bytes, in a form that compares like the element's C type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Component {
    /// Any integer type (signed types sign-extended, unsigned zero-extended).
    Int(i128),
    /// Any float type, widened to double (float16 decoded first).
    Float(f64),
}

impl Component {
    /// Decodes a little-endian component; `None` when `bytes` is shorter than the type.
    pub fn decode(bytes: &[u8], scalar: Scalar) -> Option<Component> {
        let mut raw = [0u8; 8];
        raw.get_mut(..scalar.size())?
            .copy_from_slice(bytes.get(..scalar.size())?);
        let bits = u64::from_le_bytes(raw);
        Some(match scalar {
            Scalar::U8 | Scalar::U16 | Scalar::U32 | Scalar::U64 => {
                Component::Int(i128::from(bits))
            }
            Scalar::I8 => Component::Int(i128::from(bits as u8 as i8)),
            Scalar::I16 => Component::Int(i128::from(bits as u16 as i16)),
            Scalar::I32 => Component::Int(i128::from(bits as u32 as i32)),
            Scalar::I64 => Component::Int(i128::from(bits as i64)),
            Scalar::F16 => Component::Float(f16::from_bits(bits as u16).to_f64()),
            Scalar::F32 => Component::Float(f64::from(f32::from_bits(bits as u32))),
            Scalar::F64 => Component::Float(f64::from_bits(bits)),
        })
    }

    /// The value as a double.
    pub fn as_f64(self) -> f64 {
        match self {
            Component::Int(v) => v as f64,
            Component::Float(f) => f,
        }
    }
}

impl std::fmt::Display for Component {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Component::Int(v) => write!(f, "{v}"),
            Component::Float(x) => write!(f, "{x}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_literals() {
        assert_eq!(Number::parse("42"), Some(Number::Int(42)));
        assert_eq!(Number::parse("-5"), Some(Number::Int(-5)));
        assert_eq!(Number::parse("0xff"), Some(Number::Int(255)));
        assert_eq!(
            Number::parse("18446744073709551615"),
            Some(Number::Int(i128::from(u64::MAX)))
        );
        assert_eq!(
            Number::parse("-9223372036854775808"),
            Some(Number::Int(i128::from(i64::MIN)))
        );
        assert_eq!(Number::parse("-9223372036854775809"), None);
        assert_eq!(Number::parse("18446744073709551616"), None);
        assert_eq!(Number::parse("1.5"), Some(Number::Float(1.5)));
        assert_eq!(Number::parse("-2e3"), Some(Number::Float(-2000.0)));
        assert!(matches!(Number::parse("nan"), Some(Number::Float(f)) if f.is_nan()));
        for bad in ["", "-", "0x", "1.2.3", "abc", "0xg", "1,5", "--1"] {
            assert_eq!(Number::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn casts_like_amber() {
        // static_cast<T>(u64): -1 as uint8 is 255; 300 as int8 is 44.
        assert_eq!(
            Number::Int(-1).cast_int(Scalar::U8),
            Some(Component::Int(255))
        );
        assert_eq!(
            Number::Int(300).cast_int(Scalar::I8),
            Some(Component::Int(44))
        );
        assert_eq!(
            Number::Int(0xffff_ffff).cast_int(Scalar::I32),
            Some(Component::Int(-1))
        );
        assert_eq!(
            Number::Int(-2).encode(Scalar::I16).unwrap(),
            vec![0xfe, 0xff]
        );
        assert_eq!(
            Number::Float(1.0).encode(Scalar::F16).unwrap(),
            vec![0x00, 0x3c]
        );
        assert_eq!(
            Number::Int(2).encode(Scalar::F32).unwrap(),
            2.0f32.to_le_bytes().to_vec()
        );
        assert!(Number::Float(1.5).encode(Scalar::U32).is_err());
    }

    #[test]
    fn round_trips_random_values() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for _ in 0..1000 {
            let v: i64 = rng.random();
            for s in [Scalar::I8, Scalar::I16, Scalar::I32, Scalar::I64] {
                let bits = s.size() as u32 * 8;
                // Independent reference: sign-extend the low `bits` bits.
                let expect = i128::from((v << (64 - bits)) >> (64 - bits));
                let bytes = Number::Int(i128::from(v)).encode(s).unwrap();
                assert_eq!(Component::decode(&bytes, s), Some(Component::Int(expect)));
            }
            let f: f32 = rng.random::<f32>() * 1000.0 - 500.0;
            let bytes = Number::Float(f64::from(f)).encode(Scalar::F32).unwrap();
            assert_eq!(
                Component::decode(&bytes, Scalar::F32),
                Some(Component::Float(f64::from(f)))
            );
        }
    }
}
