//! tangle-exec: lowering of validated SPIR-V to an executable program, and the SIMT executor.
//!
//! # Data model
//!
//! [`Device::compute_pipeline`] *lowers* one entry point of a module ([`lower`]) into a
//! [`program::Program`]: every SPIR-V type is resolved to a [`program::Type`] that knows its
//! memory layout, every SSA value gets a dense range of *register slots* (one slot per scalar
//! component; a `vec4` takes four, a struct the sum of its members), constants and
//! specialization constants are folded into slot values, and each function becomes a list of
//! blocks of [`program::Op`]s ending in a [`program::Terminator`].
//!
//! A slot value is a `u64` bit pattern: an N-bit integer sits in the low N bits with the upper
//! bits zero (also when negative), floats are f16/f32/f64 bit patterns, booleans 0 or 1, and
//! pointers are `(region << 48) | byte offset` (see [`run::memory`]).
//!
//! [`Pipeline::dispatch`] runs workgroups in parallel on worker threads that take workgroup
//! numbers from one shared counter (so a stopped dispatch stops at once, [`run`]'s `workers`).
//! Inside a workgroup, each subgroup holds a register file of `slots × subgroup size` values (lane arrays) and a set of *tangles*:
//! groups of invocations that execute together. An op runs once per tangle over its active-lane
//! mask. Divergent branches split a tangle; tangles rejoin where the maximal-reconvergence rules
//! say ([`run::tangle`]), or where the dispatch's [`policy`] lets them. Subgroups yield to each
//! other at `OpControlBarrier`. [`RunOptions::trace`] records the tangle events ([`trace`]).
//!
//! Memory use is O(threads × workgroup): register files and per-invocation memory are reused
//! from one workgroup to the next.

#![deny(unsafe_code)]

pub mod allocation;
pub mod check;
pub mod device;
pub mod error;
pub mod jit;
pub mod lower;
pub mod policy;
pub mod profile;
pub mod program;
pub mod report;
pub mod run;
pub mod semantics;
pub mod trace;
pub mod wide;

#[cfg(test)]
mod test_rng;

pub use allocation::{Allocation, BufferView, TexelView};
pub use device::{
    Device, Image, Pipeline, Progress, Resident, Resources, RunOptions, SpecConstants,
};
pub use error::{ExecError, InstRef, Trap};
pub use policy::{BranchOrder, CoopmatLayout, Policy, Reconvergence, RobustChoice, SwitchGrouping};
pub use profile::Profile;
pub use report::{Diagnostic, Finding, PathNotes, RaceCutShort, Report, Stats, Timing};
pub use trace::Trace;
