//! The component types of one OpCooperativeMatrixMulAddKHR: what the MulAdd kernel and the
//! per-element reference both take, so the executor names an instruction's types once.

/// The type of a cooperative matrix's components, as a MulAdd operand sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Component {
    /// IEEE binary16 / binary32 / binary64, by width.
    Float(u32),
    /// bfloat16 (`OpTypeFloat 16 BFloat16KHR`).
    BFloat16,
    /// An integer of this width; `signed` is the operand's Matrix{A,B,C,Result}SignedComponentsKHR
    /// flag, not the type's signedness.
    ///
    /// # Spec
    /// "If the Component Type of any matrix operand is an integer type, then its components are
    /// treated as signed if the Matrix{A,B,C,Result}SignedComponentsKHR Cooperative Matrix Operand
    /// is present and are treated as unsigned otherwise."
    Int {
        /// Component width in bits.
        bits: u32,
        /// The operand's SignedComponents flag.
        signed: bool,
    },
}

/// The component types of A, B, C and the Result of one OpCooperativeMatrixMulAddKHR, with its
/// SaturatingAccumulationKHR operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MulAddTypes {
    /// Component type of A (M×K).
    pub a: Component,
    /// Component type of B (K×N).
    pub b: Component,
    /// Component type of C (M×N).
    pub c: Component,
    /// Component type of the Result (M×N).
    pub result: Component,
    /// SaturatingAccumulationKHR.
    pub saturating: bool,
}
