//! Barrier divergence: an `OpControlBarrier` that not every invocation of its scope instance
//! executes as the same dynamic instance.
//!
//! # Spec
//! SPIR-V, OpControlBarrier: "When Execution is Workgroup or larger, behavior is undefined unless
//! all invocations within Execution execute the same dynamic instance of this instruction. When
//! Execution is Subgroup or Invocation, the behavior of this instruction in non-uniform control
//! flow is defined by the client API." Vulkan (Shader Validation, `VUID-StandaloneSpirv-None-
//! 04634`'s family and the "Control Barrier" rules) requires the barrier to be executed in control
//! flow uniform for its execution scope, which for Subgroup scope means every invocation of the
//! subgroup still running.
//!
//! A workgroup whose subgroups all wait or are done while some invocations wait at a barrier
//! is checked here: every waiting tangle must be at the same position (the same barrier, reached
//! through the same calls), and no invocation may have finished. A divergent workgroup is
//! reported once, at the barrier, and ended: a real GPU would hang or go on with corrupt data.

use std::fmt;

/// A barrier reached by part of its scope instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BarrierFinding {
    /// The barrier's execution scope (`Workgroup` or `Subgroup`).
    pub scope: &'static str,
    /// Invocations of the scope instance that executed this barrier.
    pub arrived: u32,
    /// Invocations of the scope instance.
    pub invocations: u32,
    /// Of the others, how many had finished (the rest wait at another barrier, or at this one
    /// through other calls, or run elsewhere for Subgroup scope).
    pub finished: u32,
}

impl fmt::Display for BarrierFinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let others = self.invocations - self.arrived.min(self.invocations);
        write!(
            f,
            "OpControlBarrier with {} execution scope executed by {} of the {} invocations of its {}",
            self.scope,
            self.arrived,
            self.invocations,
            self.scope.to_lowercase()
        )?;
        if others > 0 {
            write!(
                f,
                " ({} finished, {} elsewhere)",
                self.finished,
                others - self.finished.min(others)
            )?;
        }
        write!(
            f,
            ": control flow not uniform at the barrier (behavior undefined)"
        )
    }
}
