//! Sanitizer findings of the group instructions (SPIR-V "Non-Uniform Instructions" and
//! SPV_KHR_subgroup_rotate): reads of inactive or nonexistent invocations, operands the spec
//! requires to be dynamically uniform that are not, and cluster sizes the spec leaves undefined.
//!
//! [`crate::run::group`] detects them while it executes a group op and writes [`poison`] into
//! the results that are undefined, so a run goes on and its output shows where the poison went.

use std::fmt;

/// The bit pattern written where a group or dot instruction's result is undefined, cut to the
/// component width (a recognisable `0xdeadbeef…` in memory dumps).
pub fn poison(bits: u32) -> u64 {
    crate::semantics::truncate(bits, 0xdead_beef_dead_beef)
}

/// One invocation's read of another invocation's Value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourceRead {
    /// The reading invocation (`SubgroupLocalInvocationId`).
    pub lane: u32,
    /// The invocation it reads (its id within the group as computed from the operands; negative
    /// for a ShuffleUp past invocation 0).
    pub source: i128,
    /// Whether that invocation exists (it may be past the end of a partial subgroup or of the
    /// group).
    pub exists: bool,
}

/// The most invocations or values a finding prints.
const SHOWN: usize = 8;

/// A sanitizer finding of a group instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupFinding {
    /// An invocation reads the Value of an inactive or nonexistent invocation. Rotate: "the
    /// resulting value is undefined if the selected lane is inactive"; Broadcast, Shuffle*,
    /// Quad*: "The resulting value is undefined if ... is an inactive invocation, or is greater
    /// than or equal to the size of the group".
    InactiveSource {
        /// Every offending read of this execution.
        reads: Vec<SourceRead>,
    },
    /// An operand that must be dynamically uniform differs between the active invocations
    /// (rotate: "Delta must be dynamically uniform within Execution"; Broadcast: "Id must be
    /// dynamically uniform within Execution"; QuadBroadcast: "Index must be dynamically
    /// uniform"; InverseBallot: "Value must be the same for all invocations ...").
    NotUniform {
        /// The operand's name in the spec.
        operand: &'static str,
        /// `(SubgroupLocalInvocationId, value)` of every active invocation.
        values: Vec<(u32, u64)>,
    },
    /// "Behavior is undefined unless ClusterSize is at least 1 and a power of 2. If ClusterSize
    /// is greater than the declared SubGroupSize, executing this instruction results in
    /// undefined behavior."
    ClusterSize {
        /// The ClusterSize operand.
        cluster_size: u64,
        /// The subgroup size.
        subgroup_size: u32,
    },
    /// BallotFindLSB/MSB of a ballot with none of the group's bits set: "If none of the
    /// considered bits is set to 1, the resulting value is undefined."
    EmptyBallot {
        /// The invocations that found no bit.
        lanes: Vec<u32>,
    },
}

impl GroupFinding {
    /// Whether the spec leaves only the result undefined (a read of an inactive invocation, an
    /// empty ballot: [`crate::check::kind::Kind::GroupValue`], a warning) rather than the
    /// behaviour (an operand that must be uniform, a bad ClusterSize).
    pub fn is_undefined_value(&self) -> bool {
        matches!(
            self,
            GroupFinding::InactiveSource { .. } | GroupFinding::EmptyBallot { .. }
        )
    }
}

fn list<T>(items: &[T], f: impl Fn(&T) -> String) -> String {
    let mut s: Vec<String> = items.iter().take(SHOWN).map(f).collect();
    if items.len() > SHOWN {
        s.push(format!("… ({} in all)", items.len()));
    }
    s.join(", ")
}

impl fmt::Display for GroupFinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GroupFinding::InactiveSource { reads } => {
                let text = list(reads, |r| {
                    let what = if r.exists { "inactive" } else { "nonexistent" };
                    format!("invocation {} reads {what} invocation {}", r.lane, r.source)
                });
                write!(f, "reads the Value of an inactive or nonexistent invocation (result undefined; invocations by SubgroupLocalInvocationId): {text}")
            }
            GroupFinding::NotUniform { operand, values } => {
                let text = list(values, |(l, v)| format!("invocation {l}: {v}"));
                write!(f, "{operand} is not dynamically uniform (invocations by SubgroupLocalInvocationId): {text}")
            }
            GroupFinding::ClusterSize { cluster_size, subgroup_size } => write!(
                f,
                "ClusterSize {cluster_size} is larger than the subgroup size {subgroup_size} or not a power of two (undefined behavior)"
            ),
            GroupFinding::EmptyBallot { lanes } => {
                let text = list(lanes, |l| format!("invocation {l}"));
                write!(f, "no bit of the group is set in the ballot (result undefined): {text}")
            }
        }
    }
}
