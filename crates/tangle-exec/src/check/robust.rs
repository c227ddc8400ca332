//! Robust buffer access: what a load, store or atomic outside its buffer's bound range does
//! when the program enabled a robustness feature, and whether that is still a finding.
//!
//! # Spec
//! Vulkan, "Features", `robustBufferAccess`: "Out-of-bounds buffer loads will return any of
//! the following values: Values from anywhere within the memory range(s) bound to the buffer
//! (possibly including bytes of memory past the end of the buffer, up to the end of the bound
//! range). Zero values, or (0,0,0,x) vectors for vector reads ..."; "Out-of-bounds writes may
//! modify values within the memory range(s) bound to the buffer, but must not modify any other
//! memory."; "Out-of-bounds atomics may modify values within the memory range(s) bound to the
//! buffer, but must not modify any other memory, and return an undefined value."
//! `robustBufferAccess2` (VK_EXT_robustness2): "Out of bounds buffer loads will return zero
//! values"; "out of bounds writes must not modify any memory"; "out of bounds atomics must
//! not modify any memory, and return an undefined value". Without either: "If
//! robustBufferAccess is not enabled, applications must not perform out of bounds accesses",
//! so an access outside the range is undefined behaviour (`out-of-bounds`, an error).
//!
//! # What tangle does
//! Under robustness an access outside the range is no longer undefined behaviour. Where the
//! spec fixes the outcome (`robustBufferAccess2`'s zero loads and discarded stores) there is no
//! finding. Where it leaves the implementation a choice (`robustBufferAccess`'s loads, stores
//! and atomics; any robust atomic's returned value) the run takes the choice the policy names
//! ([`RobustChoice`]: zero values and discarded writes, or the bytes at the same offset
//! wrapped into the bound range), so a program whose output depends on the choice shows it
//! under `--policy all`, and reports a `robust-access` warning with the sentence above:
//! * a store or atomic under `robustBufferAccess` at the access: its effect ("may modify
//!   values within the memory range(s) bound to the buffer") is the implementation's choice;
//! * a value the implementation chose (a `robustBufferAccess` load's, a `robustBufferAccess2`
//!   atomic's returned value) only where it reaches the output: the reference path follows it
//!   with the uninitialised-value check's origins ([`crate::check::uninit`]), marked
//!   [`CHOSEN`], and warns where it is stored to memory other invocations see, is an atomic's
//!   operand, decides a branch, selects memory, is a group operation's operand, or enters an
//!   operation that check does not follow ([`Chosen`]). A value that is dropped is no finding.
//!
//! Robustness covers storage and uniform buffers only: workgroup memory, push constants and
//! texel buffers keep `out-of-bounds` errors; images follow `robustImageAccess2`, and without
//! it the spec's own image rules ([`crate::run::image`]); null descriptors are defined with
//! `nullDescriptor` whatever the robustness ([`crate::check::null`]); cooperative-matrix loads and stores follow the buffer robustness
//! element by element only with `cooperativeMatrixRobustBufferAccess`
//! ([`crate::RunOptions::coopmat_robustness`]), and otherwise keep `out-of-bounds` errors.
//! The range is the descriptor's own: tangle's devices report both
//! `robust…BufferAccessSizeAlignment`s as 1, so no rounding up applies.

use crate::report::Finding;
use std::collections::HashMap;
use std::fmt;

/// The buffer robustness in force for a dispatch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Robustness {
    /// No robustness feature: an access outside the range is undefined behaviour.
    #[default]
    Off,
    /// `robustBufferAccess` (core).
    Buffer,
    /// `robustBufferAccess2` (VK_EXT_robustness2).
    Buffer2,
}

impl Robustness {
    /// The name `--robustness` takes.
    pub fn name(self) -> &'static str {
        match self {
            Robustness::Off => "none",
            Robustness::Buffer => "buffer",
            Robustness::Buffer2 => "buffer2",
        }
    }
}

impl fmt::Display for Robustness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Robustness {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "none" => Ok(Robustness::Off),
            "buffer" => Ok(Robustness::Buffer),
            "buffer2" => Ok(Robustness::Buffer2),
            _ => Err(format!(
                "unknown robustness '{s}' (expected none, buffer or buffer2)"
            )),
        }
    }
}

/// Which of the outcomes `robustBufferAccess` allows a run takes (part of the policy).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum RobustChoice {
    /// Loads return zero, writes and atomics are discarded.
    #[default]
    Zero,
    /// Loads, writes and atomics use the bytes at the access's offset wrapped into the bound
    /// range (an access the range cannot hold is treated as [`RobustChoice::Zero`]).
    InRange,
}

/// The kind of an access outside its range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Load,
    Store,
    Atomic,
}

impl Access {
    fn verb(self) -> &'static str {
        match self {
            Access::Load => "load",
            Access::Store => "store",
            Access::Atomic => "atomic",
        }
    }
}

/// What an access outside a buffer's range does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// The offset in the range the access uses instead ([`RobustChoice::InRange`]); `None`:
    /// loads give zero, stores and atomics change nothing.
    pub at: Option<u64>,
    /// The reason for a `robust-access` warning, when the outcome is the implementation's
    /// choice; `None` when the spec fixes it.
    pub warning: Option<&'static str>,
}

/// The outcome of an access of `len` bytes at `offset` into a buffer range of `size` bytes,
/// which it does not fit in; `None` without robustness (undefined behaviour).
pub fn outcome(
    robustness: Robustness,
    choice: RobustChoice,
    access: Access,
    offset: u64,
    len: u64,
    size: u64,
) -> Option<Outcome> {
    let wrapped = || match choice {
        RobustChoice::Zero => None,
        RobustChoice::InRange if len <= size && len > 0 => {
            // The largest start at which the access fits, aligned down to its size so that a
            // word stays a word.
            let last = (size - len) / len * len;
            Some((offset % (last + len)).min(last) / len * len)
        }
        RobustChoice::InRange => None,
    };
    match (robustness, access) {
        (Robustness::Off, _) => None,
        (Robustness::Buffer2, Access::Load | Access::Store) => Some(Outcome {
            at: None,
            warning: None,
        }),
        (Robustness::Buffer2, Access::Atomic) => Some(Outcome {
            at: None,
            warning: Some(ATOMIC_VALUE),
        }),
        (Robustness::Buffer, access) => Some(Outcome {
            at: wrapped(),
            warning: Some(match access {
                Access::Load => LOAD_VALUE,
                Access::Store => STORE_EFFECT,
                Access::Atomic => ATOMIC_VALUE,
            }),
        }),
    }
}

/// Whether an access's warning waits for its value to reach the output ([`Chosen`]) rather
/// than being reported at the access: a load under `robustBufferAccess`, whose value is the
/// implementation's choice but whose effect is none, and an atomic under
/// `robustBufferAccess2`, whose write is discarded but whose returned value is undefined.
pub fn follows_value(robustness: Robustness, access: Access) -> bool {
    matches!(
        (robustness, access),
        (Robustness::Buffer, Access::Load) | (Robustness::Buffer2, Access::Atomic)
    )
}

/// The bit of an uninitialised-value origin ([`crate::check::uninit`]) that marks a value an
/// implementation chose under robustness; the rest is 1 + the location of the access.
pub const CHOSEN: u32 = 1 << 31;

/// The out-of-range accesses whose values a subgroup follows, by (location, lane): each lane's
/// last one at each instruction, to name it when its value reaches the output.
#[derive(Debug, Clone, Default)]
pub struct Chosen {
    accesses: HashMap<(u32, usize), Finding>,
}

impl Chosen {
    /// Records `lane`'s access at location `loc` with the warning it deferred; returns the
    /// origin its value carries.
    pub fn record(&mut self, loc: u32, lane: usize, warning: Finding) -> u32 {
        self.accesses.insert((loc, lane), warning);
        CHOSEN | (loc.saturating_add(1) & !CHOSEN)
    }

    /// Forgets every access (a new workgroup).
    pub fn clear(&mut self) {
        self.accesses.clear();
    }

    /// The warning of `lane` using a value of origin `origin` as `used`, where the origin is
    /// [`CHOSEN`] (`None` otherwise); `at` names the access it came from.
    pub fn finding(
        &self,
        origin: u32,
        lane: usize,
        used: &dyn fmt::Display,
        at: &dyn fmt::Display,
    ) -> Option<Finding> {
        if origin & CHOSEN == 0 {
            return None;
        }
        let loc = (origin & !CHOSEN).saturating_sub(1);
        let reached = format!("; its value, from {at}, is used here as {used}");
        Some(match self.accesses.get(&(loc, lane)) {
            Some(Finding::RobustAccess {
                region,
                offset,
                len,
                size,
                what,
            }) => Finding::RobustAccess {
                region: region.clone(),
                offset: *offset,
                len: *len,
                size: *size,
                what: format!("{what}{reached}"),
            },
            _ => Finding::RobustAccess {
                region: "a buffer".to_string(),
                offset: 0,
                len: 0,
                size: 0,
                what: format!("a value an implementation chose under robustness{reached}"),
            },
        })
    }
}

/// The sentence behind a `robustBufferAccess` load's warning.
const LOAD_VALUE: &str = "robustBufferAccess: \"Out-of-bounds buffer loads will return any of \
                          the following values: Values from anywhere within the memory range(s) \
                          bound to the buffer ... Zero values\"";
/// The sentence behind a `robustBufferAccess` store's warning.
const STORE_EFFECT: &str = "robustBufferAccess: \"Out-of-bounds writes may modify values within \
                            the memory range(s) bound to the buffer\"";
/// The sentence behind a robust atomic's warning.
const ATOMIC_VALUE: &str = "robustBufferAccess/robustBufferAccess2: out-of-bounds atomics \
                            \"return an undefined value\"";

/// A `robust-access` finding's text: the access, the outcome taken and its sentence.
pub fn describe(access: Access, outcome: &Outcome, reason: &str) -> String {
    let taken = match (access, outcome.at) {
        (Access::Load, None) => "returned zero".to_string(),
        (Access::Load, Some(at)) => format!("returned the bytes at offset {at} of the range"),
        (Access::Store, None) => "was discarded".to_string(),
        (Access::Store, Some(at)) => format!("wrote the bytes at offset {at} of the range"),
        (Access::Atomic, None) => "was discarded and returned zero".to_string(),
        (Access::Atomic, Some(at)) => format!("ran on the bytes at offset {at} of the range"),
    };
    format!(
        "robust {} outside the bound range {taken} (an implementation's choice; {reason})",
        access.verb()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn robust_buffer_access_2_fixes_loads_and_stores_and_leaves_atomic_values_undefined() {
        let o = |a| outcome(Robustness::Buffer2, RobustChoice::InRange, a, 40, 4, 16);
        assert_eq!(
            o(Access::Load).map(|o| (o.at, o.warning.is_some())),
            Some((None, false))
        );
        assert_eq!(
            o(Access::Store).map(|o| (o.at, o.warning.is_some())),
            Some((None, false))
        );
        assert_eq!(o(Access::Atomic).map(|o| o.warning.is_some()), Some(true));
        assert_eq!(
            outcome(Robustness::Off, RobustChoice::Zero, Access::Load, 40, 4, 16),
            None
        );
    }

    #[test]
    fn in_range_offsets_stay_inside_the_range_and_aligned() {
        for size in 0..40u64 {
            for len in [1u64, 2, 4, 8, 16] {
                for offset in 0..100u64 {
                    let o = outcome(
                        Robustness::Buffer,
                        RobustChoice::InRange,
                        Access::Load,
                        offset,
                        len,
                        size,
                    );
                    let Some(Outcome { at, warning }) = o else {
                        panic!("robustBufferAccess always has an outcome");
                    };
                    assert!(warning.is_some());
                    match at {
                        Some(at) => {
                            assert!(at + len <= size, "{offset} {len} {size}: {at}");
                            assert_eq!(at % len, 0);
                        }
                        None => assert!(len > size, "{offset} {len} {size}"),
                    }
                }
            }
        }
    }
}
