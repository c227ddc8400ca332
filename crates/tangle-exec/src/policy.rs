//! Scheduling policies: the behaviours the specs leave to the implementation, so that a shader
//! can be run under each of them and one that depends on a particular GPU's choice is caught.
//!
//! * [`Reconvergence`]: where split tangles rejoin. `maximal` follows SPV_KHR_maximal_reconvergence
//!   (tangles rejoin at merge blocks, continue targets, case constructs and after calls; see
//!   [`crate::run::tangle`]). `weak` keeps only what Vulkan guarantees without the mode: the
//!   invocations are together in *uniform* control flow (SPIR-V "Uniform Control Flow"; with
//!   SPV_KHR_subgroup_uniform_control_flow, invocations of a subgroup must reconverge at a
//!   merge block when they were uniform on entry to the loop or selection and all leave it
//!   through that merge block), so split tangles rejoin only where every invocation of the
//!   subgroup still running has arrived at the same place (which covers that rule, and also
//!   rejoins after calls and at continue targets when that happens). `random:SEED` decides at
//!   each point where `maximal` would rejoin tangles whether to rejoin them (a seeded coin per
//!   tangle), again always rejoining in uniform control flow. An entry point that declares
//!   `MaximallyReconvergesKHR` always runs `maximal` ([`crate::run::tangle::Schedule::new`]).
//! * [`BranchOrder`]: which side of a divergent `OpBranchConditional` runs first, observable
//!   through memory. It only reorders the sides inside a construct: the construct's merge block
//!   and continue target still rank after both ([`crate::lower::cfg`]). `random:SEED` picks the
//!   order per branch instruction (and the case order per `OpSwitch`) from the seed.
//! * [`SwitchGrouping`]: "Invocations with different Selector values executing the same case
//!   construct may be partitioned into the same tangle" (SPV_KHR_maximal_reconvergence,
//!   Divergence): `by-case` runs them together, `by-selector` in one tangle per selector value
//!   until the switch's merge block.
//!
//! * [`CoopmatLayout`]: "The mapping of components to invocations and indexes is
//!   implementation-dependent" (SPV_KHR_cooperative_matrix, 2.2 Terms): which invocation holds
//!   which element of a cooperative matrix, and at which index of its composite view. Chosen per
//!   run (`--coopmat-layout`), not per scheduling policy, since it changes no schedule.
//!
//! Every choice is deterministic for a given policy: random choices come from a generator seeded
//! by the policy's seed, the workgroup and the subgroup, never from the thread that runs it.

pub use crate::check::robust::RobustChoice;
use crate::program::{Program, Terminator};
use std::fmt;
use std::str::FromStr;

/// Where split tangles rejoin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Reconvergence {
    /// SPV_KHR_maximal_reconvergence.
    #[default]
    Maximal,
    /// Only in uniform control flow.
    Weak,
    /// At each reconvergence point, a seeded coin decides.
    Random(u64),
}

/// Which side of a divergent branch runs first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum BranchOrder {
    /// The True Label's side.
    #[default]
    TrueFirst,
    /// The False Label's side.
    FalseFirst,
    /// Chosen per branch instruction from the seed.
    Random(u64),
}

/// How a divergent `OpSwitch` groups invocations that reach the same case construct.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SwitchGrouping {
    /// One tangle per selector value (the least the spec allows).
    BySelector,
    /// One tangle per case construct (the most the spec allows).
    #[default]
    ByCase,
}

/// A scheduling policy. Written `RECONVERGENCE[,BRANCH-ORDER][,SWITCH-GROUPING][,ROBUST]`,
/// e.g. `weak`, `maximal,false-first`, `random:7,random:7,by-selector`, `robust-in-range`;
/// named parts may come in any order, parts left out take their defaults (`maximal`,
/// `true-first`, `by-case`, `robust-zero`), and `random:SEED` is the reconvergence when it
/// comes first and the branch order elsewhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Policy {
    /// Where tangles rejoin.
    pub reconvergence: Reconvergence,
    /// Which side of a divergent branch runs first.
    pub branch_order: BranchOrder,
    /// How a divergent switch groups invocations.
    pub switch_grouping: SwitchGrouping,
    /// What an access outside a buffer does under `robustBufferAccess`, where the spec lets the
    /// implementation choose ([`crate::check::robust`]).
    pub robust: RobustChoice,
}

impl Policy {
    /// The policies `tangle run --policy all` runs a script under: the default first, then each
    /// choice changed alone and in combination, and three seeded random ones.
    pub fn all() -> Vec<Policy> {
        use BranchOrder as B;
        use Reconvergence as R;
        use SwitchGrouping as S;
        let p = |reconvergence, branch_order, switch_grouping| Policy {
            reconvergence,
            branch_order,
            switch_grouping,
            robust: RobustChoice::Zero,
        };
        vec![
            p(R::Maximal, B::TrueFirst, S::ByCase),
            p(R::Maximal, B::FalseFirst, S::ByCase),
            p(R::Maximal, B::TrueFirst, S::BySelector),
            p(R::Weak, B::TrueFirst, S::ByCase),
            p(R::Weak, B::FalseFirst, S::BySelector),
            p(R::Random(1), B::Random(1), S::ByCase),
            p(R::Random(2), B::Random(2), S::BySelector),
            p(R::Random(3), B::TrueFirst, S::ByCase),
            Policy {
                robust: RobustChoice::InRange,
                ..Policy::default()
            },
        ]
    }
}

/// A policy string that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown policy part '{0}' (expected maximal, weak, random:SEED, true-first, false-first, by-selector, by-case, robust-zero or robust-in-range)")]
pub struct PolicyError(pub String);

fn seed(s: &str) -> Option<u64> {
    s.strip_prefix("random:")?.parse().ok()
}

impl FromStr for Policy {
    type Err = PolicyError;

    /// Parses the command-line form. `random:SEED` first sets the reconvergence, anywhere else
    /// the branch order (`random:1,random:2` is both; `maximal,random:2` the branch order).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut p = Policy::default();
        for (i, part) in s.split(',').map(str::trim).enumerate() {
            match part {
                "maximal" => p.reconvergence = Reconvergence::Maximal,
                "weak" => p.reconvergence = Reconvergence::Weak,
                "true-first" => p.branch_order = BranchOrder::TrueFirst,
                "false-first" => p.branch_order = BranchOrder::FalseFirst,
                "by-selector" => p.switch_grouping = SwitchGrouping::BySelector,
                "by-case" => p.switch_grouping = SwitchGrouping::ByCase,
                "robust-zero" => p.robust = RobustChoice::Zero,
                "robust-in-range" => p.robust = RobustChoice::InRange,
                _ => match (seed(part), i) {
                    (Some(n), 0) => p.reconvergence = Reconvergence::Random(n),
                    (Some(n), _) => p.branch_order = BranchOrder::Random(n),
                    _ => return Err(PolicyError(part.to_string())),
                },
            }
        }
        Ok(p)
    }
}

impl fmt::Display for Reconvergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reconvergence::Maximal => write!(f, "maximal"),
            Reconvergence::Weak => write!(f, "weak"),
            Reconvergence::Random(s) => write!(f, "random:{s}"),
        }
    }
}

impl fmt::Display for BranchOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BranchOrder::TrueFirst => write!(f, "true-first"),
            BranchOrder::FalseFirst => write!(f, "false-first"),
            BranchOrder::Random(s) => write!(f, "random:{s}"),
        }
    }
}

impl fmt::Display for SwitchGrouping {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SwitchGrouping::BySelector => write!(f, "by-selector"),
            SwitchGrouping::ByCase => write!(f, "by-case"),
        }
    }
}

impl fmt::Display for Policy {
    /// The full form, which [`Policy::from_str`] reads back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{},{},{}",
            self.reconvergence, self.branch_order, self.switch_grouping
        )?;
        // The robust choice only where it is not the default, so that the policies' names
        // stay as they were for every program without robustness.
        match self.robust {
            RobustChoice::Zero => Ok(()),
            RobustChoice::InRange => write!(f, ",robust-in-range"),
        }
    }
}

/// How the elements of a cooperative matrix are spread over the invocations of its scope: the
/// (invocation, index) of its composite view that holds element (row, column). With `L` =
/// `OpCooperativeMatrixLengthKHR` = ⌈rows × columns / invocations⌉, element number `e` of the
/// chosen order lives at invocation `e / L`, index `e % L`; positions past the last element are
/// owned by no element (reading them is a sanitizer finding).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CoopmatLayout {
    /// Elements numbered in row-major order: each invocation holds a run of one row.
    #[default]
    RowStriped,
    /// Elements numbered in column-major order: each invocation holds a run of one column.
    ColumnStriped,
    /// Every element at a position drawn from a seeded permutation of all positions.
    Shuffled(u64),
}

impl CoopmatLayout {
    /// The layouts a test runs a shader under to catch one that assumes a layout.
    pub fn all() -> [CoopmatLayout; 4] {
        [
            CoopmatLayout::RowStriped,
            CoopmatLayout::ColumnStriped,
            CoopmatLayout::Shuffled(1),
            CoopmatLayout::Shuffled(2),
        ]
    }
}

/// A `--coopmat-layout` value that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown cooperative-matrix layout '{0}' (expected row-striped, column-striped or shuffled:SEED)")]
pub struct CoopmatLayoutError(pub String);

impl FromStr for CoopmatLayout {
    type Err = CoopmatLayoutError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "row-striped" => Ok(CoopmatLayout::RowStriped),
            "column-striped" => Ok(CoopmatLayout::ColumnStriped),
            t => t
                .strip_prefix("shuffled:")
                .and_then(|n| n.parse().ok())
                .map(CoopmatLayout::Shuffled)
                .ok_or_else(|| CoopmatLayoutError(s.to_string())),
        }
    }
}

impl fmt::Display for CoopmatLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CoopmatLayout::RowStriped => write!(f, "row-striped"),
            CoopmatLayout::ColumnStriped => write!(f, "column-striped"),
            CoopmatLayout::Shuffled(s) => write!(f, "shuffled:{s}"),
        }
    }
}

/// A small seeded generator (SplitMix64): deterministic, no state shared between threads.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed` mixed with `streams` (e.g. workgroup and subgroup index).
    pub fn new(seed: u64, streams: &[u64]) -> Self {
        let mut r = Rng(seed);
        for &s in streams {
            r.0 = r.next_u64() ^ s;
        }
        Rng(r.next_u64())
    }

    /// The next value.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A fair coin.
    pub fn coin(&mut self) -> bool {
        self.next_u64() & 1 == 1
    }
}

/// Block ranks per function under a branch order: the structured order of
/// [`crate::lower::cfg::structured_ranks`] with the successors of each `OpBranchConditional`
/// (and, for a random order, each `OpSwitch`) visited in the policy's order. `TrueFirst` is the
/// order the lowering computed.
pub fn ranks(prog: &Program, order: BranchOrder) -> Vec<Vec<u32>> {
    prog.functions
        .iter()
        .enumerate()
        .map(|(fi, func)| {
            if order == BranchOrder::TrueFirst {
                return func.blocks.iter().map(|b| b.rank).collect();
            }
            let succ: Vec<Vec<u32>> = func
                .blocks
                .iter()
                .enumerate()
                .map(|(bi, b)| {
                    let mut s = b.terminator.successors();
                    let flip = match order {
                        BranchOrder::TrueFirst => false,
                        BranchOrder::FalseFirst => {
                            matches!(b.terminator, Terminator::BranchConditional { .. })
                        }
                        BranchOrder::Random(seed) => Rng::new(seed, &[fi as u64, bi as u64]).coin(),
                    };
                    if flip {
                        s.reverse();
                    }
                    s
                })
                .collect();
            let merges: Vec<Option<u32>> = func.blocks.iter().map(|b| b.merge).collect();
            let conts: Vec<Option<u32>> = func.blocks.iter().map(|b| b.continue_target).collect();
            crate::lower::cfg::structured_ranks(&succ, &merges, &conts)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_policy_of_the_set_prints_and_parses_back() {
        for p in Policy::all() {
            assert_eq!(p.to_string().parse::<Policy>(), Ok(p), "{p}");
        }
        assert_eq!(Policy::all()[0], Policy::default());
    }

    #[test]
    fn parts_parse_in_any_order_with_defaults() {
        let p: Policy = "by-selector,weak".parse().unwrap_or_default();
        assert_eq!(p.reconvergence, Reconvergence::Weak);
        assert_eq!(p.branch_order, BranchOrder::TrueFirst);
        assert_eq!(p.switch_grouping, SwitchGrouping::BySelector);
        let p: Policy = "random:5,random:9".parse().unwrap_or_default();
        assert_eq!(p.reconvergence, Reconvergence::Random(5));
        assert_eq!(p.branch_order, BranchOrder::Random(9));
        let p: Policy = "weak,random:3".parse().unwrap_or_default();
        assert_eq!(p.reconvergence, Reconvergence::Weak);
        assert_eq!(p.branch_order, BranchOrder::Random(3));
        for bad in ["", "fast", "random:x", "random:-1", "maximal,,weak"] {
            assert!(bad.parse::<Policy>().is_err(), "{bad}");
        }
    }

    #[test]
    fn coopmat_layouts_print_and_parse_back() {
        for l in CoopmatLayout::all() {
            assert_eq!(l.to_string().parse::<CoopmatLayout>(), Ok(l), "{l}");
        }
        assert_eq!(CoopmatLayout::default(), CoopmatLayout::RowStriped);
        for bad in ["", "rows", "shuffled:", "shuffled:x", "shuffled:-1"] {
            assert!(bad.parse::<CoopmatLayout>().is_err(), "{bad}");
        }
    }

    #[test]
    fn rng_is_deterministic_and_stream_dependent() {
        let a: Vec<u64> = (0..4).map(|_| Rng::new(1, &[2, 3]).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        assert_ne!(
            Rng::new(1, &[2, 3]).next_u64(),
            Rng::new(1, &[3, 2]).next_u64()
        );
    }
}
