//! Uninitialised values: where an undefined value is used, and where it came from.
//!
//! # Spec
//! SPIR-V 2.2.2: "Undefined: ... the result of OpUndef" and 3.32.8 OpVariable: "Initializer ...
//! If not present, the variable's value is undefined"; Vulkan: Workgroup variables without
//! an initializer are undefined until written (unless `VK_KHR_zero_initialize_workgroup_memory`
//! and a null initializer). Using an undefined value where it decides what runs or what others
//! see (a branch condition, a value stored to memory others see, a group operation's operand)
//! makes the outcome differ between GPUs; copying it is harmless.
//!
//! # Severity
//! An undefined value is a value, not undefined behaviour: a branch on it takes one of its
//! paths on every driver (GraphicsFuzz's `uint d; if (d != 0u)` passes on all of them), so
//! those uses are [`crate::check::kind::Kind::Uninit`], a warning. An undefined value used to
//! select memory (an address, an access-chain or vector index) may be any value, and nearly all
//! of them lie outside the object, which is undefined behaviour ("Behavior is undefined if
//! Index's value is less than zero or greater than or equal to the number of components";
//! Vulkan: "applications must not perform out of bounds accesses"), whatever value tangle
//! happens to hold: [`crate::check::kind::Kind::UninitIndex`], an error ([`UsedAs`]).
//!
//! # Poison lanes
//! With the check on, each subgroup holds one *origin* per register slot and lane (0: defined;
//! else 1 + the location of the instruction the undefined value came from). Origins are set by
//! loads of Workgroup memory no invocation wrote ([`Shadow`]), by function variables without an
//! initializer (held in registers), and by `OpUndef`; ops carry them from operands to results
//! ([`step`]), and a use listed above is a finding naming the origin. Nothing is tracked while
//! no slot is poisoned, so a clean run pays one flag test per op. The same origins follow the
//! values an implementation chose under robustness ([`crate::check::robust::CHOSEN`]), whose
//! uses are `robust-access` warnings instead.
//!
//! Variables kept in invocation memory (`Private` ones, `Function` ones whose address is taken)
//! have an origin per byte and lane ([`step_memory`]): they start undefined without an
//! initializer, a store gives its bytes the stored value's origins and a load gives them back,
//! so an undefined value survives a trip through memory (and, as registers are copied with
//! their origins, through a call's parameters).

use crate::program::{Op, Program, Slot, Step};
use std::fmt;

/// How an undefined value was used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UsedAs {
    /// `OpBranchConditional`'s Condition.
    BranchCondition,
    /// `OpSwitch`'s Selector.
    SwitchSelector,
    /// A pointer operand of a load, store, atomic or `OpArrayLength`.
    Address,
    /// A dynamic index of an access chain.
    Index,
    /// `OpVectorExtractDynamic`/`OpVectorInsertDynamic`'s Index.
    VectorIndex,
    /// A value stored to memory other invocations see.
    StoredValue,
    /// An atomic's Value or Comparator.
    AtomicOperand,
    /// A group operation's Value.
    GroupOperand,
    /// Held by a lane that runs an operation this check does not follow (only a value an
    /// implementation chose under robustness is reported so: [`crate::check::robust`]).
    Untracked,
}

impl UsedAs {
    /// Whether the use selects the memory (or component) accessed: then an arbitrary value
    /// may lie outside it, undefined behaviour ([`crate::check::kind::Kind::UninitIndex`]).
    pub fn selects_memory(self) -> bool {
        matches!(self, UsedAs::Address | UsedAs::Index | UsedAs::VectorIndex)
    }
}

impl fmt::Display for UsedAs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            UsedAs::BranchCondition => "a branch condition",
            UsedAs::SwitchSelector => "a switch selector",
            UsedAs::Address => "an address",
            UsedAs::Index => "an index",
            UsedAs::VectorIndex => "a vector index",
            UsedAs::StoredValue => "a value stored to memory other invocations see",
            UsedAs::AtomicOperand => "an atomic operand",
            UsedAs::GroupOperand => "a group operation's operand",
            UsedAs::Untracked => "a value held into an operation the check does not follow",
        })
    }
}

/// Where an undefined value was used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UninitFinding {
    /// The use.
    pub used_as: UsedAs,
    /// The instruction the undefined value came from.
    pub origin: crate::error::InstRef,
}

impl fmt::Display for UninitFinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "undefined value used as {}; it came from {} (an uninitialised variable, unwritten workgroup memory or OpUndef)",
            self.used_as, self.origin
        )
    }
}

/// Which bytes of a workgroup's memory some invocation wrote (or an initializer set).
#[derive(Debug, Default)]
pub struct Shadow {
    /// Whether the check is on.
    pub on: bool,
    bits: Vec<u64>,
}

impl Shadow {
    /// A shadow, on or off.
    pub fn new(on: bool) -> Self {
        Shadow {
            on,
            bits: Vec::new(),
        }
    }

    /// Starts a workgroup of `bytes` bytes of Workgroup memory, none written.
    pub fn start(&mut self, bytes: u64) {
        self.bits.clear();
        self.bits.resize(bytes.div_ceil(64) as usize, 0);
    }

    /// Marks `[off, off + len)` written (bytes past the workgroup's memory are ignored).
    pub fn write(&mut self, off: u64, len: u64) {
        for (w, m) in words(off, len) {
            match self.bits.get_mut(w) {
                Some(x) => *x |= m,
                None => return,
            }
        }
    }

    /// Whether every byte of `[off, off + len)` was written.
    pub fn written(&self, off: u64, len: u64) -> bool {
        words(off, len).all(|(w, m)| self.bits.get(w).is_some_and(|x| x & m == m))
    }
}

/// The 64-bit words of a bitmap holding bits `[off, off + len)`, each with the mask of those
/// bits in it (a word at a time, not a bit at a time).
fn words(off: u64, len: u64) -> impl Iterator<Item = (usize, u64)> {
    let end = off.saturating_add(len);
    let mut b = off;
    std::iter::from_fn(move || {
        if b >= end {
            return None;
        }
        let w = b / 64;
        let (lo, hi) = (b % 64, (end - w * 64).min(64));
        let upto = if hi == 64 { u64::MAX } else { (1 << hi) - 1 };
        b = (w + 1).saturating_mul(64);
        Some((
            usize::try_from(w).unwrap_or(usize::MAX),
            upto & !((1 << lo) - 1),
        ))
    })
}

/// A lane's use of an undefined value: (lane, origin location, use).
pub type Use = (usize, u32, UsedAs);

/// The origins of a subgroup's register file (slot-major, like the registers), with the count
/// of undefined entries so that a subgroup whose values all became defined again costs nothing,
/// and per slot the lanes whose value is undefined, so that an op whose operands and result
/// are defined in every lane it runs costs a few mask tests, not a look at each lane.
#[derive(Debug, Clone, Default)]
pub struct Poison {
    origins: Vec<u32>,
    /// Per slot, the lanes whose origin is not 0.
    lanes: Vec<u128>,
    live: usize,
    n: usize,
    /// The origin of each byte of the subgroup's invocation memory (lane after lane, like the
    /// memory); empty when not tracked.
    memory: Vec<u32>,
    memory_live: usize,
    lane_bytes: u64,
    /// The out-of-range accesses whose values carry [`crate::check::robust::CHOSEN`] origins.
    pub chosen: crate::check::robust::Chosen,
}

/// The most bytes of invocation memory a subgroup tracks origins for (4 bytes each); past it,
/// memory-held variables are not tracked (uses through them go unreported, never invented).
const MEMORY_LIMIT: u64 = 1 << 22;

impl Poison {
    /// Origins for `len` register values of `n` lanes each (`len` a multiple of `n`), all
    /// defined; empty (the check off) for 0.
    pub fn new(len: usize, n: usize) -> Self {
        let n = n.clamp(1, 128);
        Poison {
            origins: vec![0; len],
            lanes: vec![0; len.div_ceil(n)],
            n,
            ..Poison::default()
        }
    }

    /// Also tracks the invocation memory of `lanes` lanes of `lane_bytes` bytes each (when the
    /// check is on and it is not too large).
    pub fn with_memory(mut self, lanes: usize, lane_bytes: u64) -> Self {
        let total = (lanes as u64).saturating_mul(lane_bytes);
        if self.on() && total <= MEMORY_LIMIT {
            self.memory = vec![0; total as usize];
            self.lane_bytes = lane_bytes;
        }
        self
    }

    /// Whether some byte of invocation memory holds an undefined value.
    pub fn memory_any(&self) -> bool {
        self.memory_live > 0
    }

    /// Whether the check is on for this subgroup.
    pub fn on(&self) -> bool {
        !self.origins.is_empty()
    }

    /// Whether some value is undefined.
    pub fn any(&self) -> bool {
        self.live > 0
    }

    /// Marks every value defined: only the slots holding an undefined value are visited.
    pub fn clear(&mut self) {
        let n = self.n;
        if self.live > 0 {
            for (s, m) in self.lanes.iter_mut().enumerate() {
                if *m != 0 {
                    if let Some(o) = self.origins.get_mut(s * n..s * n + n) {
                        o.fill(0);
                    }
                    *m = 0;
                }
            }
        }
        self.live = 0;
        if self.memory_live > 0 {
            self.memory.fill(0);
        }
        self.memory_live = 0;
        self.chosen.clear();
    }

    /// Sets the origin of bytes `[off, off + len)` of `lane`'s invocation memory.
    pub fn mem_set(&mut self, lane: usize, off: u64, len: u64, o: u32) {
        let Some(bytes) = self.mem_bytes(lane, off, len) else {
            return;
        };
        let Some(bytes) = self.memory.get_mut(bytes) else {
            return;
        };
        let before = bytes.iter().filter(|&&p| p != 0).count();
        bytes.fill(o);
        let after = if o != 0 { bytes.len() } else { 0 };
        self.memory_live = self.memory_live - before + after;
    }

    /// The indices in `memory` of bytes `[off, off + len)` of `lane`'s invocation memory, when
    /// they lie inside the lane's bytes.
    fn mem_bytes(&self, lane: usize, off: u64, len: u64) -> Option<std::ops::Range<usize>> {
        let end = off.checked_add(len).filter(|&e| e <= self.lane_bytes)?;
        let base = (lane as u64).checked_mul(self.lane_bytes)?;
        let (start, end) = (base.checked_add(off)?, base.checked_add(end)?);
        Some(usize::try_from(start).ok()?..usize::try_from(end).ok()?)
    }

    /// The first origin among bytes `[off, off + len)` of `lane`'s invocation memory (0: all
    /// defined).
    pub fn mem_origin(&self, lane: usize, off: u64, len: u64) -> u32 {
        if self.memory_live == 0 {
            return 0;
        }
        self.mem_bytes(lane, off, len)
            .and_then(|r| self.memory.get(r))
            .and_then(|b| b.iter().copied().find(|&o| o != 0))
            .unwrap_or(0)
    }

    /// Marks every byte of the invocation memory of the lanes in `mask` defined.
    fn mem_forget(&mut self, n: usize, mask: u128) {
        for l in (0..n).filter(|l| mask & (1 << l) != 0) {
            self.mem_set(l, 0, self.lane_bytes, 0);
        }
    }
}

/// The origin in slot `s` of lane `l`.
pub fn origin(poison: &Poison, n: usize, s: Slot, l: usize) -> u32 {
    poison.origins.get(s as usize * n + l).copied().unwrap_or(0)
}

/// Sets the origin of slot `s` of lane `l`.
pub fn set(poison: &mut Poison, n: usize, s: Slot, l: usize, o: u32) {
    if let Some(p) = poison.origins.get_mut(s as usize * n + l) {
        if (*p != 0) != (o != 0) {
            poison.live = poison.live + usize::from(o != 0) - usize::from(*p != 0);
            if let Some(m) = poison.lanes.get_mut(s as usize) {
                *m ^= 1 << l;
            }
        }
        *p = o;
    }
}

/// The lanes of `mask` whose value in slot `s` is undefined.
pub fn undefined(poison: &Poison, s: Slot, mask: u128) -> u128 {
    poison.lanes.get(s as usize).map_or(0, |m| m & mask)
}

/// Carries origins through `op` for the lanes in `mask` (after it ran), and lists the uses of
/// undefined values. `store_visible(lane)` says whether a store of that lane goes to memory
/// other invocations see. Returns `false` for ops it does not model: the caller then forgets
/// every origin of those lanes (never inventing a finding).
pub fn step(
    p: &Program,
    op: &Op,
    poison: &mut Poison,
    n: usize,
    mask: u128,
    store_visible: &dyn Fn(Slot, usize) -> bool,
    uses: &mut Vec<Use>,
) -> bool {
    let lanes = || (0..n).filter(move |l| mask & (1 << l) != 0);
    match op {
        Op::Copy { dst, src } => data(poison, n, mask, &[(*dst, 1)], &[(*src, 1)]),
        Op::IntBin { dst, a, b, .. }
        | Op::IntCmp { dst, a, b, .. }
        | Op::FloatBin { dst, a, b, .. }
        | Op::FloatCmp { dst, a, b, .. } => {
            data(poison, n, mask, &[(*dst, 1)], &[(*a, 1), (*b, 1)])
        }
        Op::IntUn { dst, a, .. } | Op::FNegate { dst, a, .. } | Op::Convert { dst, a, .. } => {
            data(poison, n, mask, &[(*dst, 1)], &[(*a, 1)])
        }
        Op::IntTern { dst, a, b, c, .. } => {
            data(poison, n, mask, &[(*dst, 1)], &[(*a, 1), (*b, 1), (*c, 1)])
        }
        Op::BitFieldInsert {
            dst,
            base,
            insert,
            offset,
            count,
            ..
        } => data(
            poison,
            n,
            mask,
            &[(*dst, 1)],
            &[(*base, 1), (*insert, 1), (*offset, 1), (*count, 1)],
        ),
        Op::Wide { lo, hi, a, b, .. } => {
            data(poison, n, mask, &[(*lo, 1), (*hi, 1)], &[(*a, 1), (*b, 1)])
        }
        Op::FDot { dst, a, b, .. } => {
            let src: Vec<(Slot, u32)> = a.iter().chain(b.iter()).map(|&s| (s, 1)).collect();
            data(poison, n, mask, &[(*dst, 1)], &src)
        }
        Op::Glsl {
            dst, args, argc, ..
        } => {
            let src: Vec<(Slot, u32)> = args.iter().take(*argc as usize).map(|&s| (s, 1)).collect();
            data(poison, n, mask, &[(*dst, 1)], &src)
        }
        Op::GlslVector {
            dst,
            dst_count,
            args,
            ..
        } => data(poison, n, mask, &[(*dst, *dst_count)], args),
        Op::Ldexp { dst, a, exp, .. } => data(poison, n, mask, &[(*dst, 1)], &[(*a, 1), (*exp, 1)]),
        Op::Frexp { dst, exp, a, .. } => data(poison, n, mask, &[(*dst, 1), (*exp, 1)], &[(*a, 1)]),
        Op::Modf { dst, whole, a, .. } => {
            data(poison, n, mask, &[(*dst, 1), (*whole, 1)], &[(*a, 1)])
        }
        Op::Select { dst, cond, a, b } => data(
            poison,
            n,
            mask,
            &[(*dst, 1)],
            &[(*cond, 1), (*a, 1), (*b, 1)],
        ),
        Op::Bitcast {
            dst,
            dst_count,
            src,
            src_count,
            ..
        } => data(
            poison,
            n,
            mask,
            &[(*dst, *dst_count)],
            &[(*src, *src_count)],
        ),
        Op::ExtractDynamic {
            dst,
            base,
            count,
            index,
            ..
        } => {
            sink(poison, n, mask, *index, UsedAs::VectorIndex, uses);
            data(poison, n, mask, &[(*dst, 1)], &[(*base, *count)]);
        }
        Op::InsertDynamic {
            dst,
            count,
            value,
            index,
            ..
        } => {
            sink(poison, n, mask, *index, UsedAs::VectorIndex, uses);
            data(
                poison,
                n,
                mask,
                &[(*dst, *count)],
                &[(*dst, *count), (*value, 1)],
            );
        }
        Op::Load { dst, ptr, ty } | Op::LoadUniform { dst, ptr, ty } => {
            sink(poison, n, mask, *ptr, UsedAs::Address, uses);
            // Memory origins are the caller's ([`Shadow`]): the result starts defined.
            data(poison, n, mask, &[(*dst, p.ty(*ty).slots)], &[]);
        }
        Op::Store { ptr, src, ty } => {
            sink(poison, n, mask, *ptr, UsedAs::Address, uses);
            let slots = p.ty(*ty).slots;
            for l in lanes() {
                if !store_visible(*ptr, l) {
                    continue;
                }
                if let Some(o) = (*src..*src + slots)
                    .map(|s| origin(poison, n, s, l))
                    .find(|&o| o != 0)
                {
                    uses.push((l, o, UsedAs::StoredValue));
                }
            }
        }
        Op::AccessChain { dst, base, steps } => {
            for s in steps.iter() {
                if let Step::Dyn { index, .. } = s {
                    sink(poison, n, mask, *index, UsedAs::Index, uses);
                }
            }
            data(poison, n, mask, &[(*dst, 1)], &[(*base, 1)]);
        }
        Op::ArrayLength { dst, ptr, .. } => {
            sink(poison, n, mask, *ptr, UsedAs::Address, uses);
            data(poison, n, mask, &[(*dst, 1)], &[]);
        }
        Op::Atomic {
            dst,
            ptr,
            value,
            comparator,
            ..
        } => {
            sink(poison, n, mask, *ptr, UsedAs::Address, uses);
            sink(poison, n, mask, *value, UsedAs::AtomicOperand, uses);
            sink(poison, n, mask, *comparator, UsedAs::AtomicOperand, uses);
            data(poison, n, mask, &[(*dst, 1)], &[]);
        }
        Op::CheckDivision { .. }
        | Op::CheckShift { .. }
        | Op::CheckDomain { .. }
        | Op::CheckWrap { .. }
        | Op::CheckRemainderSign { .. }
        | Op::ControlBarrier { .. }
        | Op::Fence { .. }
        | Op::SubgroupBarrier { .. } => {}
        Op::Undef { .. } | Op::UndefMemory { .. } => {}
        Op::Group(g) => {
            sink(poison, n, mask, g.value, UsedAs::GroupOperand, uses);
            return false;
        }
        Op::CopyMemory { .. }
        | Op::Call { .. }
        | Op::Dot(_)
        | Op::Coopmat(_)
        | Op::Descriptor { .. }
        | Op::Image(_)
        // The fast program's only: the reference path never runs it.
        | Op::Array(_) => return false,
    }
    true
}

/// Carries origins through invocation memory for `op` (after it ran, and after [`step`]) for the
/// lanes in `mask`: `pointer(slot, lane)` is a lane's pointer operand, `loc` the op's location.
/// Stores give bytes the stored value's origins, loads give them back; ops it does not model
/// that may write invocation memory make those lanes' bytes defined (never a false finding).
pub fn step_memory(
    p: &Program,
    op: &Op,
    poison: &mut Poison,
    n: usize,
    mask: u128,
    pointer: &dyn Fn(Slot, usize) -> u64,
    loc: u32,
) {
    use crate::run::memory::{split_pointer, REGION_INVOCATION};
    if poison.memory.is_empty() {
        return;
    }
    let lanes = || (0..n).filter(move |l| mask & (1 << l) != 0);
    let mine = |ptr: Slot, l: usize| match split_pointer(pointer(ptr, l)) {
        (REGION_INVOCATION, off) => Some(off),
        _ => None,
    };
    match op {
        Op::UndefMemory { ptr, bytes } => {
            for l in lanes() {
                if let Some(off) = mine(*ptr, l) {
                    poison.mem_set(l, off, *bytes, loc + 1);
                }
            }
        }
        Op::Store { ptr, src, ty } if poison.memory_any() || poison.any() => {
            for l in lanes() {
                let Some(off) = mine(*ptr, l) else { continue };
                for (i, leaf) in p.leaves_of(*ty).iter().enumerate() {
                    let o = origin(poison, n, src + i as u32, l);
                    poison.mem_set(l, off + leaf.offset, u64::from(leaf.bytes), o);
                }
            }
        }
        Op::Load { dst, ptr, ty } if poison.memory_any() => {
            for l in lanes() {
                let Some(off) = mine(*ptr, l) else { continue };
                for (i, leaf) in p.leaves_of(*ty).iter().enumerate() {
                    let o = poison.mem_origin(l, off + leaf.offset, u64::from(leaf.bytes));
                    if o != 0 {
                        set(poison, n, dst + i as u32, l, o);
                    }
                }
            }
        }
        Op::CopyMemory { dst, src, size } if poison.memory_any() => {
            for l in lanes() {
                let Some(to) = mine(*dst, l) else { continue };
                for b in 0..*size {
                    let o = mine(*src, l).map_or(0, |from| poison.mem_origin(l, from + b, 1));
                    poison.mem_set(l, to + b, 1, o);
                }
            }
        }
        Op::Atomic { .. } | Op::Coopmat(_) | Op::Image(_) if poison.memory_any() => {
            poison.mem_forget(n, mask);
        }
        _ => {}
    }
}

/// For the lanes in `mask`: every `dst` slot gets the first origin among the `src` slots (none:
/// defined).
fn data(poison: &mut Poison, n: usize, mask: u128, dst: &[(Slot, u32)], src: &[(Slot, u32)]) {
    let mask = mask & crate::run::alu::full_mask(n);
    let slots = |v: &[(Slot, u32)]| {
        v.iter()
            .flat_map(|&(s, c)| s..s + c)
            .fold(0u128, |m, s| m | undefined(poison, s, mask))
    };
    // Only lanes with an undefined operand, or an undefined value to overwrite, change.
    let lanes = slots(src) | slots(dst);
    for l in crate::run::alu::bits(lanes) {
        let o = src
            .iter()
            .flat_map(|&(s, c)| s..s + c)
            .map(|s| origin(poison, n, s, l))
            .find(|&o| o != 0)
            .unwrap_or(0);
        for s in dst.iter().flat_map(|&(s, c)| s..s + c) {
            set(poison, n, s, l, o);
        }
    }
}

/// Lists the lanes whose `slot` holds an undefined value, and marks them defined (one finding
/// per use).
pub fn sink(
    poison: &mut Poison,
    n: usize,
    mask: u128,
    slot: Slot,
    used_as: UsedAs,
    uses: &mut Vec<Use>,
) {
    let mask = mask & crate::run::alu::full_mask(n);
    for l in crate::run::alu::bits(undefined(poison, slot, mask)) {
        let o = origin(poison, n, slot, l);
        if o != 0 {
            uses.push((l, o, used_as));
            set(poison, n, slot, l, 0);
        }
    }
}

/// Lists, for each lane in `mask` that holds a value an implementation chose under robustness
/// ([`crate::check::robust::CHOSEN`]) in some slot, that value as [`UsedAs::Untracked`]: before
/// an op this check does not follow forgets the lane's origins, a value that may flow through
/// it is reported rather than lost.
pub fn held_chosen(poison: &Poison, n: usize, mask: u128, uses: &mut Vec<Use>) {
    if poison.live == 0 {
        return;
    }
    for l in (0..n).filter(|l| mask & (1 << l) != 0) {
        let held = (0..poison.lanes.len())
            .filter(|&s| undefined(poison, s as Slot, 1 << l) != 0)
            .map(|s| origin(poison, n, s as Slot, l))
            .find(|&o| o & crate::check::robust::CHOSEN != 0);
        if let Some(o) = held {
            uses.push((l, o, UsedAs::Untracked));
        }
    }
}

/// Forgets the origins of every slot of the lanes in `mask`.
pub fn forget(poison: &mut Poison, n: usize, mask: u128) {
    let mask = mask & crate::run::alu::full_mask(n);
    for (s, m) in poison.lanes.iter_mut().enumerate() {
        let hit = *m & mask;
        for l in crate::run::alu::bits(hit) {
            if let Some(p) = poison.origins.get_mut(s * n + l) {
                *p = 0;
            }
        }
        poison.live -= hit.count_ones() as usize;
        *m &= !mask;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_flow_through_arithmetic_and_stop_at_a_sink() {
        let p = Program::default();
        let n = 4;
        let mut poison = Poison::new(8 * n, n);
        set(&mut poison, n, 1, 2, 7);
        let mut uses = Vec::new();
        let add = Op::IntBin {
            op: crate::program::IntBin::Add,
            bits: 32,
            dst: 3,
            a: 1,
            b: 0,
        };
        assert!(step(
            &p,
            &add,
            &mut poison,
            n,
            0b1111,
            &|_, _| true,
            &mut uses
        ));
        assert_eq!(origin(&poison, n, 3, 2), 7);
        assert_eq!(origin(&poison, n, 3, 1), 0);
        let copy = Op::Copy { dst: 1, src: 0 };
        step(&p, &copy, &mut poison, n, 0b0100, &|_, _| true, &mut uses);
        assert_eq!(
            origin(&poison, n, 1, 2),
            0,
            "overwritten by a defined value"
        );
        sink(
            &mut poison,
            n,
            0b1111,
            3,
            UsedAs::BranchCondition,
            &mut uses,
        );
        assert_eq!(uses, vec![(2, 7, UsedAs::BranchCondition)]);
        assert_eq!(origin(&poison, n, 3, 2), 0);
        assert!(!poison.any());
    }

    /// Stores give memory their value's origins, loads give them back, byte by byte and lane
    /// by lane; a defined store over part of an undefined value leaves the rest undefined.
    #[test]
    fn origins_survive_invocation_memory() {
        use crate::run::memory::{make_pointer, REGION_INVOCATION};
        let n = 2;
        let p = Program::default();
        let mut poison = Poison::new(4 * n, n).with_memory(n, 16);
        poison.mem_set(1, 0, 8, 9);
        assert!(poison.memory_any());
        assert_eq!(poison.mem_origin(1, 4, 4), 9);
        assert_eq!(poison.mem_origin(0, 0, 8), 0, "lane 0 untouched");
        poison.mem_set(1, 0, 4, 0);
        assert_eq!(poison.mem_origin(1, 0, 4), 0);
        assert_eq!(poison.mem_origin(1, 0, 8), 9, "bytes 4..8 still undefined");
        // Past the lane's bytes: ignored, never a panic.
        poison.mem_set(1, 14, 8, 3);
        assert_eq!(poison.mem_origin(1, 14, 8), 0);
        // An op it does not model that may write memory forgets the lane's origins.
        let atomic = Op::Atomic {
            op: crate::program::AtomicOp::IAdd,
            bits: 32,
            float: false,
            sync: 0,
            dst: 0,
            ptr: 1,
            value: 2,
            comparator: 3,
        };
        let ptr = make_pointer(REGION_INVOCATION, 0);
        step_memory(&p, &atomic, &mut poison, n, 0b10, &|_, _| ptr, 0);
        assert!(!poison.memory_any());
    }

    #[test]
    fn shadow_marks_bytes() {
        let mut s = Shadow::default();
        s.start(100);
        assert!(!s.written(0, 4));
        s.write(2, 4);
        assert!(s.written(2, 4) && !s.written(0, 4) && !s.written(4, 4));
    }

    /// The register origins as the check kept them before the per-slot lane masks: one origin
    /// per slot and lane, every lane of the mask visited.
    struct Model {
        origins: Vec<u32>,
        n: usize,
    }

    impl Model {
        fn data(&mut self, mask: u128, dst: &[(Slot, u32)], src: &[(Slot, u32)]) {
            for l in (0..self.n).filter(|l| mask & (1 << l) != 0) {
                let o = src
                    .iter()
                    .flat_map(|&(s, c)| s..s + c)
                    .map(|s| {
                        self.origins
                            .get(s as usize * self.n + l)
                            .copied()
                            .unwrap_or(0)
                    })
                    .find(|&o| o != 0)
                    .unwrap_or(0);
                for s in dst.iter().flat_map(|&(s, c)| s..s + c) {
                    if let Some(p) = self.origins.get_mut(s as usize * self.n + l) {
                        *p = o;
                    }
                }
            }
        }

        fn sink(&mut self, mask: u128, slot: Slot, used_as: UsedAs, uses: &mut Vec<Use>) {
            for l in (0..self.n).filter(|l| mask & (1 << l) != 0) {
                let i = slot as usize * self.n + l;
                if let Some(&o) = self.origins.get(i).filter(|&&o| o != 0) {
                    uses.push((l, o, used_as));
                    self.origins[i] = 0;
                }
            }
        }
    }

    /// Random ops over random origins: the masked origins give every origin, every use and
    /// `any` as the lane-by-lane model does, for subgroups of 1 to 128 lanes and masks with
    /// bits past the subgroup.
    #[test]
    fn lane_masks_keep_the_lane_by_lane_origins() {
        use crate::program::IntBin;
        let mut x = 0x5eed_1234_u64;
        let mut next = |m: u64| crate::test_rng::xorshift(&mut x) % m;
        let p = Program::default();
        for &n in &[1usize, 3, 8, 32, 64, 128] {
            let slots = 12u32;
            let mut poison = Poison::new(slots as usize * n, n);
            let mut model = Model {
                origins: vec![0; slots as usize * n],
                n,
            };
            for _ in 0..4000 {
                let mask =
                    (u128::from(next(u64::MAX)) << 64 | u128::from(next(u64::MAX))) >> next(128);
                let (a, b, c) = (next(14) as Slot, next(14) as Slot, next(14) as Slot);
                let (mut uses, mut want) = (Vec::new(), Vec::new());
                match next(8) {
                    0 | 1 => {
                        let (l, o) = (
                            next(n as u64) as usize,
                            next(3) as u32 * (1 + next(9) as u32),
                        );
                        set(&mut poison, n, a, l, o);
                        if let Some(p) = model.origins.get_mut(a as usize * n + l) {
                            *p = o;
                        }
                    }
                    2 => {
                        let op = Op::IntBin {
                            op: IntBin::Add,
                            bits: 32,
                            dst: a,
                            a: b,
                            b: c,
                        };
                        step(&p, &op, &mut poison, n, mask, &|_, _| true, &mut uses);
                        model.data(mask, &[(a, 1)], &[(b, 1), (c, 1)]);
                    }
                    3 => {
                        let op = Op::Select {
                            dst: a,
                            cond: b,
                            a: c,
                            b: a,
                        };
                        step(&p, &op, &mut poison, n, mask, &|_, _| true, &mut uses);
                        model.data(mask, &[(a, 1)], &[(b, 1), (c, 1), (a, 1)]);
                    }
                    4 => {
                        let (dc, sc) = (1 + next(3) as u32, 1 + next(3) as u32);
                        let op = Op::Bitcast {
                            dst: a,
                            dst_count: dc,
                            dst_bits: 32,
                            src: b,
                            src_count: sc,
                            src_bits: 32,
                        };
                        step(&p, &op, &mut poison, n, mask, &|_, _| true, &mut uses);
                        model.data(mask, &[(a, dc)], &[(b, sc)]);
                    }
                    5 => {
                        let op = Op::InsertDynamic {
                            dst: a,
                            count: 3,
                            value: b,
                            index: c,
                            index_bits: 32,
                        };
                        step(&p, &op, &mut poison, n, mask, &|_, _| true, &mut uses);
                        model.sink(mask, c, UsedAs::VectorIndex, &mut want);
                        model.data(mask, &[(a, 3)], &[(a, 3), (b, 1)]);
                    }
                    6 => {
                        sink(&mut poison, n, mask, a, UsedAs::BranchCondition, &mut uses);
                        model.sink(mask, a, UsedAs::BranchCondition, &mut want);
                    }
                    _ => {
                        forget(&mut poison, n, mask);
                        for (i, p) in model.origins.iter_mut().enumerate() {
                            if mask & (1 << (i % n)) != 0 {
                                *p = 0;
                            }
                        }
                    }
                }
                assert_eq!(uses, want, "n {n}");
                for s in 0..slots + 2 {
                    for l in 0..n {
                        let m = model.origins.get(s as usize * n + l);
                        assert_eq!(
                            origin(&poison, n, s, l),
                            m.copied().unwrap_or(0),
                            "n {n} slot {s} lane {l}"
                        );
                    }
                }
                assert_eq!(poison.any(), model.origins.iter().any(|&o| o != 0), "n {n}");
            }
            poison.clear();
            assert!(!poison.any() && (0..slots).all(|s| undefined(&poison, s, u128::MAX) == 0));
        }
    }

    /// Invocation memory's origins and the Workgroup shadow, set and read a range at a time,
    /// against one origin (one bit) per byte: partial words, ranges across words, ranges past
    /// a lane's or the workgroup's bytes.
    #[test]
    fn byte_ranges_match_a_byte_model() {
        let mut x = 0x0bad_cafe_u64;
        let mut next = |m: u64| crate::test_rng::xorshift(&mut x) % m;
        let (n, lane_bytes) = (3usize, 150u64);
        let mut poison = Poison::new(n, n).with_memory(n, lane_bytes);
        let mut model = vec![0u32; n * lane_bytes as usize];
        let mut shadow = Shadow::new(true);
        shadow.start(300);
        // The bitmap's last word holds bytes 300..320 too (as before: bits, not bounds).
        let mut written = [false; 320];
        for _ in 0..20_000 {
            let (lane, off, len) = (next(n as u64) as usize, next(170), next(40));
            let fits = off + len <= lane_bytes;
            let range = lane * lane_bytes as usize + off as usize
                ..lane * lane_bytes as usize + (off + len) as usize;
            if next(2) == 0 {
                let o = next(3) as u32 * next(5) as u32;
                poison.mem_set(lane, off, len, o);
                if fits {
                    model[range].fill(o);
                }
            } else {
                let want = if fits {
                    model[range].iter().copied().find(|&o| o != 0).unwrap_or(0)
                } else {
                    0
                };
                assert_eq!(
                    poison.mem_origin(lane, off, len),
                    want,
                    "{lane} {off} {len}"
                );
            }
            assert_eq!(poison.memory_any(), model.iter().any(|&o| o != 0));
            let (off, len) = (next(320), next(140));
            if next(3) == 0 {
                shadow.write(off, len);
                for b in off..(off + len).min(320) {
                    written[b as usize] = true;
                }
            } else {
                let want = (off..off + len).all(|b| written.get(b as usize) == Some(&true));
                assert_eq!(shadow.written(off, len), want, "{off} {len}");
            }
        }
    }
}
