//! Sanitizer finding of SPV_KHR_integer_dot_product: an AccSat instruction whose products or
//! partial sums overflow the result type ("If any of the multiplications or additions, with the
//! exception of the final accumulation, overflow or underflow, the result of the instruction is
//! undefined."). [`crate::run::dot`] detects it with
//! [`crate::semantics::dot::dot_acc_sat_is_undefined`] and writes
//! [`crate::check::group::poison`] as the result.

use std::fmt;

/// The operands of an AccSat dot product whose intermediate result overflowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DotOverflow {
    /// Vector 1's components, sign- or zero-extended as the instruction reads them.
    pub vector1: Vec<i128>,
    /// Vector 2's components.
    pub vector2: Vec<i128>,
    /// The result width.
    pub result_bits: u32,
    /// Whether the result range is signed.
    pub signed: bool,
}

impl fmt::Display for DotOverflow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = if self.signed { "signed" } else { "unsigned" };
        write!(
            f,
            "a product or partial sum of Vector 1 {:?} and Vector 2 {:?} overflows the {kind} {}-bit result (result undefined)",
            self.vector1, self.vector2, self.result_bits
        )
    }
}
