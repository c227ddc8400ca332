//! Numeric literals of the assembly text, parsed and range-checked as SPIRV-Tools'
//! `util/parse_number.cpp` and `util/hex_float.h` do, so that tangle accepts and encodes exactly
//! what `spirv-as` does.
//!
//! * Integers are C `strtoull`/`strtoll` with base 0 (decimal, `0x` hex, `0` octal), an optional
//!   sign, and must fit the target width. Negative values and hex values with the sign bit set
//!   are sign-extended to the word ("the high-order bits of a 16-bit signed integer are
//!   sign-extended" — SPIR-V 2.2.1 "Literal"), everything else is zero-extended.
//! * Decimal floats are read correctly rounded; a value that overflows to infinity is an error,
//!   and `inf`/`nan` spellings are not accepted. 16-bit floats are read as 32-bit floats first,
//!   then truncated toward zero (as `spirv-as` does); bfloat16 keeps the high half of the
//!   32-bit value.
//! * Hex floats (`0x1.8p+1`, `-0x1p-14`) are decoded bit by bit, truncating extra bits; an
//!   exponent too large gives infinity and the pattern `0x1.<nonzero>p+<bias+1>` gives a NaN.

/// The type a literal is encoded for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NumberType {
    /// An integer of `width` bits.
    Int { width: u32, signed: bool },
    /// A floating-point number of `width` bits in the given encoding.
    Float { width: u32, encoding: FloatEncoding },
}

/// The floating-point encodings `OpTypeFloat` can declare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FloatEncoding {
    /// IEEE 754 binary16/32/64 (no `FPEncoding` operand).
    Ieee,
    /// `BFloat16KHR`.
    BFloat16,
    /// `Float8E4M3EXT` (no infinities; 448 is the largest finite value).
    Float8E4M3,
    /// `Float8E5M2EXT`.
    Float8E5M2,
    /// Another encoding, which tangle cannot write literals for.
    Other(u32),
}

/// Why a literal could not be encoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NumberError {
    /// The text is not a number of the type, or does not fit it.
    Invalid(String),
    /// A negative number for an unsigned type (an error even where the operand is optional).
    Negative,
    /// The type is one tangle (or `spirv-as`) cannot write literals for.
    Unsupported(String),
}

impl NumberError {
    /// The message for the user.
    pub fn message(&self) -> String {
        match self {
            NumberError::Invalid(m) | NumberError::Unsupported(m) => m.clone(),
            NumberError::Negative => "cannot put a negative number in an unsigned literal".into(),
        }
    }
}

/// The type `spirv-as` assumes for a literal whose type is not known from context: a 32-bit
/// float if it has a `.`, a signed 32-bit integer if it starts with `-`, else unsigned.
pub fn untyped(text: &str) -> NumberType {
    if text.contains('.') {
        NumberType::Float {
            width: 32,
            encoding: FloatEncoding::Ieee,
        }
    } else {
        NumberType::Int {
            width: 32,
            signed: text.starts_with('-'),
        }
    }
}

/// Appends the words of `text` read as a literal of type `ty` (one word up to 32 bits, two words,
/// low first, for 64 bits).
pub fn encode(text: &str, ty: NumberType, out: &mut Vec<u32>) -> Result<(), NumberError> {
    let (bits, width) = match ty {
        NumberType::Int { width, signed } => (parse_int(text, width, signed)?, width),
        // Non-IEEE encodings are at most 16 bits whatever the declared width (as in spirv-as).
        NumberType::Float { width, encoding } => {
            let words_width = if encoding == FloatEncoding::Ieee {
                width
            } else {
                16
            };
            (parse_float(text, width, encoding)?, words_width)
        }
    };
    out.push(bits as u32);
    if width > 32 {
        out.push((bits >> 32) as u32);
    }
    Ok(())
}

/// An integer literal of `width` bits as its (sign-extended) 64-bit pattern.
pub fn parse_int(text: &str, width: u32, signed: bool) -> Result<u64, NumberError> {
    if width > 64 {
        return Err(NumberError::Unsupported(format!(
            "{width}-bit integer literals are not supported"
        )));
    }
    let negative = text.starts_with('-');
    if negative && !signed {
        return Err(NumberError::Negative);
    }
    let kind = if signed { "signed" } else { "unsigned" };
    let is_hex = text.starts_with("0x") || text.starts_with("0X");
    let Some(value) = parse_c_integer(text) else {
        let what = if negative { "signed" } else { "unsigned" };
        return Err(NumberError::Invalid(format!(
            "invalid {what} integer literal: {text}"
        )));
    };
    let misfit = || {
        NumberError::Invalid(format!(
            "integer {text} does not fit in a {width}-bit {kind} integer"
        ))
    };
    // The three regions of the 64-bit pattern, as in SPIRV-Tools' CheckRangeAndIfHexThenSignExtend.
    let mut magnitude: u64 = if width == 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    };
    let overflow = !magnitude;
    let mut sign = 0;
    if negative || signed {
        magnitude >>= 1;
        sign = magnitude + 1;
    }
    let failed = if negative {
        value & overflow != overflow || value & sign != sign
    } else if is_hex {
        value & overflow != 0
    } else {
        value & magnitude != value
    };
    if failed {
        return Err(misfit());
    }
    if is_hex && value & sign != 0 {
        return Ok(value | overflow);
    }
    Ok(value)
}

/// `strtoll`/`strtoull` with base 0 that must consume the whole text and must not overflow:
/// the two's complement pattern of the value (negative values must fit `i64`).
fn parse_c_integer(text: &str) -> Option<u64> {
    let (negative, body) = match text.as_bytes().first()? {
        b'-' => (true, text.get(1..)?),
        b'+' => (false, text.get(1..)?),
        _ => (false, text),
    };
    let (digits, radix) =
        if let Some(hex) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
            (hex, 16)
        } else if body.len() > 1 && body.starts_with('0') {
            (body.get(1..)?, 8)
        } else {
            (body, 10)
        };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = u64::from_str_radix(digits, radix).ok()?;
    if negative {
        let v = 0i64.checked_sub_unsigned(magnitude)?;
        Some(v as u64)
    } else {
        Some(magnitude)
    }
}

/// The IEEE layout of a binary floating-point format.
#[derive(Debug, Clone, Copy)]
struct Format {
    bits: u32,
    exponent_bits: u32,
    fraction_bits: u32,
    bias: i64,
}

const F16: Format = Format {
    bits: 16,
    exponent_bits: 5,
    fraction_bits: 10,
    bias: 15,
};
const BF16: Format = Format {
    bits: 16,
    exponent_bits: 8,
    fraction_bits: 7,
    bias: 127,
};
const E4M3: Format = Format {
    bits: 8,
    exponent_bits: 4,
    fraction_bits: 3,
    bias: 7,
};
const E5M2: Format = Format {
    bits: 8,
    exponent_bits: 5,
    fraction_bits: 2,
    bias: 15,
};
const F32: Format = Format {
    bits: 32,
    exponent_bits: 8,
    fraction_bits: 23,
    bias: 127,
};
const F64: Format = Format {
    bits: 64,
    exponent_bits: 11,
    fraction_bits: 52,
    bias: 1023,
};

/// A float literal as its bit pattern.
pub fn parse_float(text: &str, width: u32, encoding: FloatEncoding) -> Result<u64, NumberError> {
    // As in spirv-as, a non-IEEE encoding decides the format whatever the declared width.
    let format = match (width, encoding) {
        (16, FloatEncoding::Ieee) => F16,
        (_, FloatEncoding::BFloat16) => BF16,
        (_, FloatEncoding::Float8E4M3) => E4M3,
        (_, FloatEncoding::Float8E5M2) => E5M2,
        (32, FloatEncoding::Ieee) => F32,
        (64, FloatEncoding::Ieee) => F64,
        (_, FloatEncoding::Other(e)) => {
            return Err(NumberError::Unsupported(format!(
                "float literals in encoding {e} are not supported"
            )))
        }
        _ => {
            return Err(NumberError::Unsupported(format!(
                "{width}-bit float literals are not supported"
            )))
        }
    };
    let invalid = || NumberError::Invalid(format!("invalid {width}-bit float literal: {text}"));
    let (negate, rest) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    if let Some(hex) = rest.strip_prefix("0x").or_else(|| rest.strip_prefix("0X")) {
        return parse_hex_float(hex, negate, format).ok_or_else(invalid);
    }
    // After a consumed '-', SPIRV-Tools refuses a second sign.
    if negate && (rest.starts_with('-') || rest.starts_with('+')) {
        return Err(invalid());
    }
    if !is_decimal_float(rest) {
        return Err(invalid());
    }
    match format.bits {
        64 => {
            let v: f64 = rest.parse().map_err(|_| invalid())?;
            let v = if negate { -v } else { v };
            if v.is_infinite() {
                return Err(invalid());
            }
            Ok(v.to_bits())
        }
        _ => {
            let v: f32 = rest.parse().map_err(|_| invalid())?;
            let v = if negate { -v } else { v };
            if v.is_infinite() {
                return Err(invalid());
            }
            match (format.bits, format.exponent_bits) {
                (32, _) => Ok(u64::from(v.to_bits())),
                (16, 8) => Ok(u64::from(v.to_bits() >> 16)),
                (16, _) => f32_to_f16_toward_zero(v).map(u64::from).ok_or_else(invalid),
                // spirv-as: E4M3 refuses values beyond its largest finite value 448, E5M2 those
                // that truncate to infinity (2^16 and more).
                (_, 4) if v.abs() > 448.0 => Err(invalid()),
                (_, _) if v.abs() >= 65536.0 => Err(invalid()),
                _ => Ok(u64::from(f32_to_fp8_toward_zero(v, format))),
            }
        }
    }
}

/// The decimal syntax a C++ stream reads as a float: `[+-]digits[.digits][e[+-]digits]` with at
/// least one mantissa digit.
fn is_decimal_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let digits = |i: &mut usize| {
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - start
    };
    let mut mantissa = digits(&mut i);
    if b.get(i) == Some(&b'.') {
        i += 1;
        mantissa += digits(&mut i);
    }
    if mantissa == 0 {
        return false;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// Truncates a finite `f32` toward zero to binary16; `None` when the magnitude is 2^16 or more
/// (SPIRV-Tools' `castTo(..., kToZero)` then reports an overflow).
fn f32_to_f16_toward_zero(v: f32) -> Option<u16> {
    if v.abs() >= 65536.0 {
        return None;
    }
    let nearest = half::f16::from_f32(v);
    let mut bits = nearest.to_bits();
    // Round-to-nearest went up in magnitude (or to infinity): step one ulp back toward zero.
    if nearest.is_infinite() || nearest.to_f32().abs() > v.abs() {
        bits -= 1;
    }
    Some(bits)
}

/// Truncates a finite `f32` (within range) toward zero to an 8-bit float format: the largest
/// finite code whose value is not beyond `|v|`, with the sign of `v`.
fn f32_to_fp8_toward_zero(v: f32, f: Format) -> u8 {
    let value = |code: u8| {
        let (e, m) = (
            i32::from(code >> f.fraction_bits),
            f32::from(code & ((1 << f.fraction_bits) - 1)),
        );
        let scale = (1u32 << f.fraction_bits) as f32;
        let bias = f.bias as i32;
        if e == 0 {
            m / scale * 2f32.powi(1 - bias)
        } else {
            (1.0 + m / scale) * 2f32.powi(e - bias)
        }
    };
    let max_code: u8 = if f.exponent_bits == 4 { 0x7e } else { 0x7b };
    let magnitude = (0..=max_code)
        .take_while(|c| value(*c) <= v.abs())
        .last()
        .unwrap_or(0);
    magnitude | if v.is_sign_negative() { 0x80 } else { 0 }
}

/// Sign-extends the low `bits` bits of `v` (the C++ `int_type` of the format).
fn wrap_signed(v: i64, bits: u32) -> i64 {
    let shift = 64 - bits;
    v.wrapping_shl(shift).wrapping_shr(shift)
}

/// SPIRV-Tools' hex-float reader (`operator>>(istream&, HexFloat&)`), for the text after `0x`.
fn parse_hex_float(s: &str, negate: bool, f: Format) -> Option<u64> {
    let n = f.bits;
    let umask: u64 = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
    let top = n - 1;
    let b = s.as_bytes();
    let mut i = 0;
    while b.get(i) == Some(&b'0') {
        i += 1;
    }
    let mut fraction: u64 = 0;
    let mut fraction_index: u32 = 0;
    let mut exponent: i64 = f.bias;
    let mut is_denorm = true;
    let mut bits_written = false;
    let mut write = |fraction: &mut u64, bit: u64| {
        // Bits beyond the word are dropped.
        if let Some(shift) = top.checked_sub(fraction_index) {
            *fraction |= bit << shift;
        }
        fraction_index += 1;
    };
    let nibble = |c: u8| char::from(c).to_digit(16).map(u64::from);
    let (mut seen_dot, mut seen_p) = (false, false);
    while !seen_dot && !seen_p {
        let c = *b.get(i)?;
        if c == b'.' {
            seen_dot = true;
        } else if c == b'p' {
            seen_p = true;
        } else {
            let digit = nibble(c)?;
            is_denorm = false;
            for k in (0..4).rev() {
                let bit = (digit >> k) & 1;
                if bits_written {
                    write(&mut fraction, bit);
                    exponent = wrap_signed(exponent + 1, n);
                }
                bits_written |= bit != 0;
            }
        }
        i += 1;
    }
    bits_written = false;
    while seen_dot && !seen_p {
        let c = *b.get(i)?;
        if c == b'p' {
            seen_p = true;
        } else {
            let digit = nibble(c)?;
            for k in (0..4).rev() {
                let bit = (digit >> k) & 1;
                bits_written |= bit != 0;
                if is_denorm && !bits_written {
                    exponent = wrap_signed(exponent - 1, n);
                } else {
                    write(&mut fraction, bit);
                }
            }
        }
        i += 1;
    }
    let mut seen_sign = false;
    let mut exponent_sign: i64 = 1;
    let mut written: i64 = 0;
    while let Some(&c) = b.get(i) {
        if c == b'-' || c == b'+' {
            if seen_sign {
                return None;
            }
            seen_sign = true;
            exponent_sign = if c == b'-' { -1 } else { 1 };
        } else if c.is_ascii_digit() {
            written = wrap_signed(
                written.wrapping_mul(10).wrapping_add(i64::from(c - b'0')),
                n,
            );
        } else {
            // The stream stops here, and the caller requires the whole text to be read.
            return None;
        }
        i += 1;
    }
    written = wrap_signed(written.wrapping_mul(exponent_sign), n);
    exponent = wrap_signed(exponent.wrapping_add(written), n);

    let mut is_zero = is_denorm && fraction == 0;
    if is_denorm && !is_zero {
        fraction = (fraction << 1) & umask;
        exponent = wrap_signed(exponent - 1, n);
    } else if is_zero {
        exponent = 0;
    }
    if exponent <= 0 && !is_zero {
        fraction = (fraction >> 1) | (1u64 << top);
    }
    let fraction_mask = (1u64 << f.fraction_bits) - 1;
    fraction = (fraction >> (n - f.fraction_bits)) & fraction_mask;
    let max_exponent = (1i64 << f.exponent_bits) - 1;
    while exponent < 0 && !is_zero {
        fraction = (fraction >> 1) & fraction_mask;
        exponent += 1;
        if fraction == 0 {
            is_zero = true;
            exponent = 0;
        }
    }
    if exponent > max_exponent {
        exponent = max_exponent;
        fraction = 0;
    }
    let exponent_mask = ((1u64 << f.exponent_bits) - 1) << f.fraction_bits;
    let sign = u64::from(negate) << top;
    Some((sign | fraction | ((exponent as u64) << f.fraction_bits) & exponent_mask) & umask)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn int(text: &str, width: u32, signed: bool) -> Result<u64, NumberError> {
        parse_int(text, width, signed)
    }

    fn float(text: &str, width: u32) -> Option<u64> {
        parse_float(text, width, FloatEncoding::Ieee).ok()
    }

    #[test]
    fn integers_match_spirv_as() {
        // Recorded from spirv-as (SPIRV-Tools 2025.5) OpConstant words.
        assert_eq!(int("-1", 8, true), Ok(u64::MAX));
        assert_eq!(int("-2", 16, true).map(|v| v as u32), Ok(0xffff_fffe));
        assert_eq!(int("0xffff", 16, false), Ok(0xffff));
        assert_eq!(int("0xff", 8, true).map(|v| v as u32), Ok(0xffff_ffff));
        assert_eq!(int("010", 32, true), Ok(8));
        assert_eq!(int("+5", 32, true), Ok(5));
        assert_eq!(int("-0x10", 32, true).map(|v| v as u32), Ok(0xffff_fff0));
        assert_eq!(int("0X1f", 32, true), Ok(0x1f));
        assert_eq!(int("0xffffffffffffffff", 64, true), Ok(u64::MAX));
        assert_eq!(int("18446744073709551615", 64, false), Ok(u64::MAX));
        assert!(matches!(int("128", 8, true), Err(NumberError::Invalid(_))));
        assert_eq!(int("-1", 8, false), Err(NumberError::Negative));
        assert!(int("08", 32, true).is_err());
        assert!(int("4294967296", 32, false).is_err());
        assert!(int("1.5", 32, false).is_err());
        assert!(int("0x", 32, false).is_err());
        assert!(int("-", 32, true).is_err());
        assert!(int("", 32, true).is_err());
        assert!(int("-9223372036854775809", 64, true).is_err());
        assert_eq!(int("-9223372036854775808", 64, true), Ok(1 << 63));
    }

    #[test]
    fn floats_match_spirv_as() {
        // Recorded from spirv-as (SPIRV-Tools 2025.5) OpConstant words.
        assert_eq!(float("0x1p+128", 32), Some(0x7f80_0000));
        assert_eq!(float("-0x1p-14", 32), Some(0xb880_0000));
        assert_eq!(float("0x1.8p+1", 32), Some(0x4040_0000));
        assert_eq!(float("0x1.1p+128", 32), Some(0x7f88_0000));
        assert_eq!(float("1e-50", 32), Some(0));
        assert_eq!(float(".5", 32), Some(0x3f00_0000));
        assert_eq!(float("5.", 32), Some(0x40a0_0000));
        assert_eq!(float("5", 32), Some(0x40a0_0000));
        assert_eq!(float("-0.0", 32), Some(0x8000_0000));
        assert_eq!(float("0.1", 16), Some(0x2e66));
        assert_eq!(float("65535", 16), Some(0x7bff));
        assert_eq!(float("-0x1p-14", 16), Some(0x8400));
        assert_eq!(float("0x1.ffcp+15", 16), Some(0x7bff));
        assert_eq!(float("65536", 16), None);
        assert_eq!(float("1e39", 32), None);
        assert_eq!(float("inf", 32), None);
        assert_eq!(float("nan", 32), None);
        assert_eq!(float("--1", 32), None);
        assert_eq!(float("1e", 32), None);
        assert_eq!(float("0x1.8", 32), None);
        assert_eq!(float("-0x1p-1074", 64), Some(0x8000_0000_0000_0001));
        // Recorded from spirv-as for OpTypeFloat 8 Float8E4M3EXT / Float8E5M2EXT.
        let e4 = |t| parse_float(t, 8, FloatEncoding::Float8E4M3).ok();
        let e5 = |t| parse_float(t, 8, FloatEncoding::Float8E5M2).ok();
        for (t, w) in [
            ("1.5", Some(0x3c)),
            ("-1.5", Some(0xbc)),
            ("448", Some(0x7e)),
            ("449", None),
            ("0.001", Some(0)),
            ("0x1p-9", Some(1)),
            ("0x1.8p+1", Some(0x44)),
            ("1.1", Some(0x38)),
            ("1.2", Some(0x39)),
            ("0.0025", Some(1)),
            ("-448", Some(0xfe)),
            ("0x1p+9", Some(0x78)),
            ("0x1.fp+8", Some(0x7f)),
            ("1e10", None),
        ] {
            assert_eq!(e4(t), w, "e4m3 {t}");
        }
        for (t, w) in [
            ("1.5", Some(0x3e)),
            ("57344", Some(0x7b)),
            ("61440", Some(0x7b)),
            ("65535", Some(0x7b)),
            ("65536", None),
            ("1.2", Some(0x3c)),
            ("1.3", Some(0x3d)),
            ("0.0000153", Some(1)),
            ("0x1p+16", Some(0x7c)),
            ("-0x1p+16", Some(0xfc)),
        ] {
            assert_eq!(e5(t), w, "e5m2 {t}");
        }
        let bf = |t| parse_float(t, 16, FloatEncoding::BFloat16).ok();
        assert_eq!(bf("1.00390625"), Some(0x3f80));
        assert_eq!(bf("1.01171875"), Some(0x3f81));
        assert_eq!(bf("0x1.8p+1"), Some(0x4040));
    }

    #[test]
    fn untyped_rules() {
        assert_eq!(
            untyped("1.5"),
            NumberType::Float {
                width: 32,
                encoding: FloatEncoding::Ieee
            }
        );
        assert_eq!(
            untyped("-1"),
            NumberType::Int {
                width: 32,
                signed: true
            }
        );
        assert_eq!(
            untyped("1"),
            NumberType::Int {
                width: 32,
                signed: false
            }
        );
    }

    /// The word pattern a value of `width` bits takes: sign-extended from 64 bits.
    fn words_of(v: i128, width: u32) -> Vec<u32> {
        let bits = v as u64;
        if width > 32 {
            vec![bits as u32, (bits >> 32) as u32]
        } else {
            vec![bits as u32]
        }
    }

    fn enc(text: &str, ty: NumberType) -> Vec<u32> {
        let mut out = Vec::new();
        match encode(text, ty, &mut out) {
            Ok(()) => out,
            Err(e) => vec![0xdead, e.message().len() as u32],
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, rng_seed: proptest::test_runner::RngSeed::Fixed(7), ..ProptestConfig::default() })]

        #[test]
        fn signed_integers(v in any::<i64>(), w in prop::sample::select(vec![8u32, 16, 32, 64])) {
            let v = i128::from(v) >> (64 - w); // a value that fits w bits
            let ty = NumberType::Int { width: w, signed: true };
            prop_assert_eq!(enc(&v.to_string(), ty), words_of(v, w));
            // Hex spelling of the w-bit pattern is sign-extended the same way.
            let pattern = (v as u64) & if w == 64 { u64::MAX } else { (1 << w) - 1 };
            prop_assert_eq!(enc(&format!("{pattern:#x}"), ty), words_of(v, w));
        }

        #[test]
        fn unsigned_integers(v in any::<u64>(), w in prop::sample::select(vec![8u32, 16, 32, 64])) {
            let v = if w == 64 { v } else { v & ((1 << w) - 1) };
            let ty = NumberType::Int { width: w, signed: false };
            prop_assert_eq!(enc(&v.to_string(), ty), words_of(i128::from(v), w));
            prop_assert_eq!(enc(&format!("{v:#X}").replacen("0X", "0x", 1), ty), words_of(i128::from(v), w));
            prop_assert_eq!(enc(&format!("{v:#o}").replacen("0o", "0", 1), ty), words_of(i128::from(v), w));
        }

        #[test]
        fn out_of_range_integers_fail(v in any::<u64>(), w in prop::sample::select(vec![8u32, 16, 32])) {
            let too_big = u128::from(v) + (1u128 << w);
            prop_assume!(too_big <= u128::from(u64::MAX));
            let ty = NumberType::Int { width: w, signed: false };
            prop_assert!(parse_int(&too_big.to_string(), w, false).is_err());
            prop_assert_eq!(enc(&too_big.to_string(), ty)[0], 0xdead);
        }

        #[test]
        fn f32_values(bits in any::<u32>()) {
            let v = f32::from_bits(bits);
            prop_assume!(v.is_finite());
            let ty = NumberType::Float { width: 32, encoding: FloatEncoding::Ieee };
            prop_assert_eq!(enc(&v.to_string(), ty), vec![bits]);
            prop_assert_eq!(enc(&format!("{v:e}"), ty), vec![bits]);
        }

        #[test]
        fn f64_values(bits in any::<u64>()) {
            let v = f64::from_bits(bits);
            prop_assume!(v.is_finite());
            let ty = NumberType::Float { width: 64, encoding: FloatEncoding::Ieee };
            prop_assert_eq!(enc(&v.to_string(), ty), vec![bits as u32, (bits >> 32) as u32]);
        }

        #[test]
        fn f16_values(bits in any::<u16>()) {
            let v = half::f16::from_bits(bits);
            prop_assume!(v.is_finite());
            let ty = NumberType::Float { width: 16, encoding: FloatEncoding::Ieee };
            prop_assert_eq!(enc(&v.to_string(), ty), vec![u32::from(bits)]);
        }

        #[test]
        fn f16_truncates_toward_zero(x in -65535.0f32..65535.0) {
            let got = parse_float(&x.to_string(), 16, FloatEncoding::Ieee).ok().map(|b| half::f16::from_bits(b as u16));
            let got = got.map(half::f16::to_f32);
            // Independent reference: the largest-magnitude f16 not beyond x, by scanning bits.
            let reference = (0u16..0x7c00).map(|b| half::f16::from_bits(b).to_f32()).take_while(|m| *m <= x.abs()).last();
            prop_assert_eq!(got.map(f32::abs), reference);
        }

        #[test]
        fn hex_floats_round_trip(bits in any::<u32>()) {
            let v = f32::from_bits(bits);
            prop_assume!(v.is_finite() && v.is_normal());
            // Rust has no hex-float formatter: spell 1.m * 2^e from the bits.
            let exp = ((bits >> 23) & 0xff) as i32 - 127;
            let frac = (bits & 0x7f_ffff) << 1; // 24 bits = 6 nibbles
            let text = format!("{}0x1.{frac:06x}p{exp:+}", if v < 0.0 { "-" } else { "" });
            prop_assert_eq!(parse_float(&text, 32, FloatEncoding::Ieee).ok(), Some(u64::from(bits)));
        }
    }
}
