//! Pure functions giving each instruction its exact result.
//!
//! Nothing here knows about registers, lanes, memory or control flow: every function maps
//! canonical lane values to a canonical lane value, and the executor (`run/`) calls them in
//! tight loops over the active lanes.
//!
//! # Value model
//!
//! A scalar lane value is a `u64` bit pattern. For an N-bit integer (N = 8, 16, 32, 64) the low
//! N bits hold the value and the upper bits are **zero** (canonical form, also for negative
//! signed values). Floats hold their IEEE bits (f16, f32, f64; see [`float`] for the conversions) in the
//! low bits, upper bits zero. A Bool is 0 or 1. Widths are passed as `bits: u32`. Every function
//! takes canonical inputs and returns canonical outputs.
//!
//! # Undefined results
//!
//! Where the specification says a result is undefined (division by zero, shift ≥ width, …) the
//! function still returns a documented, deterministic value and never panics; a sibling
//! predicate named `…_is_undefined` tells the executor's sanitizer that the case happened:
//!
//! | instruction | predicate |
//! |-------------|-----------|
//! | UDiv, UMod | [`int::unsigned_division_is_undefined`] |
//! | SDiv, SRem, SMod | [`int::signed_division_is_undefined`]; Vulkan's negative-operand rule [`int::vulkan_signed_remainder_is_undefined`] |
//! | shifts | [`int::shift_is_undefined`] |
//! | BitFieldInsert, BitField{S,U}Extract | [`int::bit_field_is_undefined`] |
//! | NoSignedWrap / NoUnsignedWrap decorations | [`int::iadd_wraps`], [`int::isub_wraps`], [`int::imul_wraps`], [`int::snegate_wraps`], [`int::shift_left_logical_wraps`] |
//! | FRem, FMod | [`float::fremainder_is_undefined`] |
//! | ConvertFToU, ConvertFToS | [`convert::convert_f_to_u_is_undefined`], [`convert::convert_f_to_s_is_undefined`] |
//! | GLSL.std.450 component-wise | [`glsl::componentwise_is_undefined`]; also [`glsl::frexp_is_undefined`], [`glsl::ldexp_is_undefined`], [`glsl::matrix_inverse_is_undefined`] |
//! | S/U/SUDotAccSat | [`dot::dot_acc_sat_is_undefined`] |
//! | CooperativeMatrixMulAdd | [`coopmat::IntMulAdd::element_is_undefined`] |
//! | GroupNonUniformRotateKHR | [`group::rotate_cluster_is_undefined`]; shuffles, quads and ballot searches return `None` |
//!
//! # Files
//!
//! | file          | covers |
//! |---------------|--------|
//! | `mod.rs`      | value model, [`mask`], [`truncate`], [`sign_extend`], [`from_signed`], signed bounds |
//! | [`int`]       | core integer arithmetic, bitwise, shifts, bit fields, carry/borrow/extended multiply, comparisons, no-wrap checks |
//! | [`float`]     | FAdd…FMod, FNegate, ordered/unordered comparisons, IsNan/IsInf, QuantizeToF16, Dot; f16/f32/f64; bit pattern ↔ f64 ([`float::to_f64`], [`float::from_f64`], a correctly rounded f64 → f16) |
//! | [`convert`]   | ConvertFToU/FToS/SToF/UToF, UConvert, SConvert, FConvert, Bitcast (component regrouping) |
//! | [`glsl`]      | GLSL.std.450: `glsl/mod.rs` the component-wise dispatcher [`glsl::eval_componentwise`] and its domain rules; `parts.rs` Modf/Frexp/Ldexp; `pack.rs` Pack*/Unpack*; `vector.rs` Length…Refract; `matrix.rs` Determinant, MatrixInverse |
//! | [`dot`]       | SPV_KHR_integer_dot_product: SDot/UDot/SUDot (+AccSat), packed 4x8 unpacking, overflow predicate |
//! | [`coopmat`]   | SPV_KHR_cooperative_matrix: the value of one OpCooperativeMatrixMulAddKHR element (integer signedness, wrapping, saturation; floats accumulated at the Result's precision, bf16 included) |
//! | [`coopmat_kernel`] | the blocked, vectorizable OpCooperativeMatrixMulAddKHR over whole matrices ([`coopmat_kernel::mul_add`]), bit-identical to [`coopmat::mul_add_element`] |
//! | `coopmat_fma` | the f16 × f16 → f32 steps of [`coopmat_kernel`] as fused multiply-adds where the CPU has AVX2 and FMA (picked at run time; the crate's second `unsafe` module, its `//!` gives the soundness argument) |
//! | [`coopmat_types`] | the component types of one OpCooperativeMatrixMulAddKHR ([`coopmat_types::MulAddTypes`]), shared by the element reference and the MulAdd kernel |
//! | [`group`]     | SPV_KHR_subgroup_rotate source lane, shuffle/quad source lanes, ballot bit helpers, reduction/scan operators ([`group::GroupOp`]) and identities |

pub mod convert;
pub mod coopmat;
#[allow(unsafe_code)]
mod coopmat_fma;
pub mod coopmat_kernel;
pub mod coopmat_types;
pub mod dot;
pub mod float;
pub mod glsl;
pub mod group;
pub mod int;
pub mod sampler;
pub mod texel;

/// The mask of the low `bits` bits (`bits` ≥ 64 gives all ones, 0 gives 0).
pub fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// Keeps the low `bits` bits of `v`: the canonical form of an N-bit value.
pub fn truncate(bits: u32, v: u64) -> u64 {
    v & mask(bits)
}

/// Reads the low `bits` bits of `v` as a two's-complement signed value.
pub fn sign_extend(bits: u32, v: u64) -> i64 {
    match bits {
        0 => 0,
        1..=63 => {
            let shift = 64 - bits;
            ((v << shift) as i64) >> shift
        }
        _ => v as i64,
    }
}

/// The canonical N-bit bit pattern of the signed value `v` (its low `bits` bits).
pub fn from_signed(bits: u32, v: i64) -> u64 {
    truncate(bits, v as u64)
}

/// The most negative value of an N-bit signed integer.
pub fn signed_min(bits: u32) -> i64 {
    match bits {
        0 => 0,
        1..=63 => -(1i64 << (bits - 1)),
        _ => i64::MIN,
    }
}

/// The largest value of an N-bit signed integer.
pub fn signed_max(bits: u32) -> i64 {
    match bits {
        0 => 0,
        1..=63 => (1i64 << (bits - 1)) - 1,
        _ => i64::MAX,
    }
}

/// Shared test configuration: deterministic, few enough cases to keep debug test time low.
#[cfg(test)]
pub(crate) fn proptest_config() -> proptest::test_runner::Config {
    proptest::test_runner::Config {
        cases: 256,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x7a9e_1e5e),
        failure_persistence: None,
        ..proptest::test_runner::Config::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers_on_edges() {
        assert_eq!(mask(0), 0);
        assert_eq!(mask(8), 0xff);
        assert_eq!(mask(64), u64::MAX);
        assert_eq!(sign_extend(8, 0x80), -128);
        assert_eq!(sign_extend(8, 0x7f), 127);
        assert_eq!(sign_extend(16, 0xffff), -1);
        assert_eq!(sign_extend(64, u64::MAX), -1);
        assert_eq!(from_signed(8, -1), 0xff);
        assert_eq!(from_signed(32, i64::from(i32::MIN)), 0x8000_0000);
        for bits in [8u32, 16, 32, 64] {
            assert_eq!(from_signed(bits, signed_min(bits)), 1u64 << (bits - 1));
            assert_eq!(from_signed(bits, signed_max(bits)), mask(bits) >> 1);
            assert_eq!(sign_extend(bits, from_signed(bits, -5)), -5);
        }
    }
}
