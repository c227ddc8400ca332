//! Sanitizer findings of SPV_KHR_cooperative_matrix, detected by [`crate::run::coopmat`]:
//! an instruction on a matrix executed by part of its scope instance, an operand that must be
//! dynamically uniform and is not, a saturating MulAdd whose A × B overflows, a composite read
//! of a position no element is held at, and a negative Stride (or 0 for a store). Out-of-bounds loads and
//! stores are the ordinary [`crate::Finding::OutOfBounds`].

use std::fmt;

/// One cooperative-matrix finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CoopmatFinding {
    /// 3.42.6: "All dynamic instances of an instruction with an operand or result that is an
    /// object of this type must be executed such that all the invocations in the Scope instance
    /// are active or none of them are."
    NotAllActive {
        /// Invocations of the subgroup executing the instruction.
        active: u32,
        /// Invocations of the subgroup.
        invocations: u32,
    },
    /// "All the operands to this instruction must be dynamically uniform within every instance
    /// of the Scope of the cooperative matrix." Reported for each invocation whose operand
    /// differs from the first active invocation's.
    NotUniform {
        /// Which operand (`Pointer`, `Stride`, `Constituent`, `Scalar`).
        operand: &'static str,
    },
    /// "If the SaturatingAccumulation Cooperative Matrix Operand is present and overflow or
    /// underflow occurs as part of calculating that intermediate result, the result of the
    /// instruction is undefined." The element holds the poison value.
    SaturatingOverflow {
        /// Row of the result element.
        row: u32,
        /// Column of the result element.
        col: u32,
    },
    /// A composite read of an index at which, under the run's layout, the invocation holds no
    /// element of the matrix (rows × columns is not a multiple of the invocations).
    UnownedElement {
        /// The index read.
        index: u32,
    },
    /// ColumnMajorKHR/RowMajorKHR: "Stride must be greater than 0 when passed to
    /// OpCooperativeMatrixStoreKHR and must be greater than or equal to 0 when passed to
    /// OpCooperativeMatrixLoadKHR."
    BadStride {
        /// The Stride operand, as its integer type reads it.
        stride: i128,
        /// A store (else a load).
        store: bool,
    },
}

impl fmt::Display for CoopmatFinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CoopmatFinding::NotAllActive {
                active,
                invocations,
            } => write!(
                f,
                "cooperative-matrix instruction executed by {active} of the {invocations} invocations of its subgroup (all or none must be active)"
            ),
            CoopmatFinding::NotUniform { operand } => write!(
                f,
                "cooperative-matrix operand {operand} is not dynamically uniform in the subgroup"
            ),
            CoopmatFinding::SaturatingOverflow { row, col } => write!(
                f,
                "saturating MulAdd: A x B overflows the result type at element ({row}, {col}) (result undefined)"
            ),
            CoopmatFinding::UnownedElement { index } => write!(
                f,
                "cooperative-matrix index {index} holds no element of the matrix in this invocation under the run's layout"
            ),
            CoopmatFinding::BadStride { stride, store } => {
                let (op, rule) = if *store {
                    ("OpCooperativeMatrixStoreKHR", "greater than 0")
                } else {
                    ("OpCooperativeMatrixLoadKHR", "at least 0")
                };
                write!(f, "{op} with Stride {stride} (it must be {rule})")
            }
        }
    }
}
