//! Uninitialised values: where an undefined value is used, and where it came from.
//!
//! # Spec
//! SPIR-V 2.2.2: "Undefined: ... the result of OpUndef" and 3.32.8 OpVariable: "Initializer ...
//! If not present, the variable's value is undefined"; Vulkan: Workgroup variables without
//! an initializer are undefined until written (unless `VK_KHR_zero_initialize_workgroup_memory`
//! and a null initializer). Using an undefined value where it decides behaviour (a branch
//! condition, an address or index, a value stored to memory others see, a group operation's
//! operand) makes the outcome differ between GPUs; copying it is harmless.
//!
//! # Poison lanes
//! With the check on, each subgroup holds one *origin* per register slot and lane (0: defined;
//! else 1 + the location of the instruction the undefined value came from). Origins are set by
//! loads of Workgroup memory no invocation wrote ([`Shadow`]), by function variables without an
//! initializer (held in registers), and by `OpUndef`; ops carry them from operands to results
//! ([`step`]), and a use listed above is a finding naming the origin. Nothing is tracked while
//! no slot is poisoned, so a clean run pays one flag test per op.

use crate::program::{Op, Program, Slot, Step};
use std::fmt;

/// Where an undefined value was used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UninitFinding {
    /// The use (`branch condition`, `address`, `stored value`, ...).
    pub used_as: &'static str,
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

    /// Marks `[off, off + len)` written.
    pub fn write(&mut self, off: u64, len: u64) {
        for b in off..off.saturating_add(len) {
            if let Some(w) = self.bits.get_mut((b / 64) as usize) {
                *w |= 1 << (b % 64);
            }
        }
    }

    /// Whether every byte of `[off, off + len)` was written.
    pub fn written(&self, off: u64, len: u64) -> bool {
        (off..off.saturating_add(len)).all(|b| {
            self.bits
                .get((b / 64) as usize)
                .is_some_and(|w| w & (1 << (b % 64)) != 0)
        })
    }
}

/// A lane's use of an undefined value: (lane, origin location, use).
pub type Use = (usize, u32, &'static str);

/// The origins of a subgroup's register file (slot-major, like the registers), with the count
/// of undefined entries so that a subgroup whose values all became defined again costs nothing.
#[derive(Debug, Clone, Default)]
pub struct Poison {
    origins: Vec<u32>,
    live: usize,
}

impl Poison {
    /// Origins for `len` register values, all defined; empty (the check off) for 0.
    pub fn new(len: usize) -> Self {
        Poison {
            origins: vec![0; len],
            live: 0,
        }
    }

    /// Whether the check is on for this subgroup.
    pub fn on(&self) -> bool {
        !self.origins.is_empty()
    }

    /// Whether some value is undefined.
    pub fn any(&self) -> bool {
        self.live > 0
    }

    /// Marks every value defined.
    pub fn clear(&mut self) {
        self.origins.fill(0);
        self.live = 0;
    }
}

/// The origin in slot `s` of lane `l`.
pub fn origin(poison: &Poison, n: usize, s: Slot, l: usize) -> u32 {
    poison.origins.get(s as usize * n + l).copied().unwrap_or(0)
}

/// Sets the origin of slot `s` of lane `l`.
pub fn set(poison: &mut Poison, n: usize, s: Slot, l: usize, o: u32) {
    if let Some(p) = poison.origins.get_mut(s as usize * n + l) {
        poison.live = poison.live + usize::from(o != 0) - usize::from(*p != 0);
        *p = o;
    }
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
            sink(poison, n, mask, *index, "a vector index", uses);
            data(poison, n, mask, &[(*dst, 1)], &[(*base, *count)]);
        }
        Op::InsertDynamic {
            dst,
            count,
            value,
            index,
            ..
        } => {
            sink(poison, n, mask, *index, "a vector index", uses);
            data(
                poison,
                n,
                mask,
                &[(*dst, *count)],
                &[(*dst, *count), (*value, 1)],
            );
        }
        Op::Load { dst, ptr, ty } | Op::LoadUniform { dst, ptr, ty } => {
            sink(poison, n, mask, *ptr, "an address", uses);
            // Memory origins are the caller's ([`Shadow`]): the result starts defined.
            data(poison, n, mask, &[(*dst, p.ty(*ty).slots)], &[]);
        }
        Op::Store { ptr, src, ty } => {
            sink(poison, n, mask, *ptr, "an address", uses);
            let slots = p.ty(*ty).slots;
            for l in lanes() {
                if !store_visible(*ptr, l) {
                    continue;
                }
                if let Some(o) = (*src..*src + slots)
                    .map(|s| origin(poison, n, s, l))
                    .find(|&o| o != 0)
                {
                    uses.push((l, o, "a value stored to memory other invocations see"));
                }
            }
        }
        Op::AccessChain { dst, base, steps } => {
            for s in steps.iter() {
                if let Step::Dyn { index, .. } = s {
                    sink(poison, n, mask, *index, "an index", uses);
                }
            }
            data(poison, n, mask, &[(*dst, 1)], &[(*base, 1)]);
        }
        Op::ArrayLength { dst, ptr, .. } => {
            sink(poison, n, mask, *ptr, "an address", uses);
            data(poison, n, mask, &[(*dst, 1)], &[]);
        }
        Op::Atomic {
            dst,
            ptr,
            value,
            comparator,
            ..
        } => {
            sink(poison, n, mask, *ptr, "an address", uses);
            sink(poison, n, mask, *value, "an atomic operand", uses);
            sink(poison, n, mask, *comparator, "an atomic operand", uses);
            data(poison, n, mask, &[(*dst, 1)], &[]);
        }
        Op::CheckDivision { .. }
        | Op::CheckShift { .. }
        | Op::CheckDomain { .. }
        | Op::ControlBarrier { .. }
        | Op::SubgroupBarrier { .. } => {}
        Op::Undef { .. } => {}
        Op::Group(g) => {
            sink(
                poison,
                n,
                mask,
                g.value,
                "a group operation's operand",
                uses,
            );
            return false;
        }
        Op::CopyMemory { .. }
        | Op::Call { .. }
        | Op::Dot(_)
        | Op::Coopmat(_)
        | Op::Descriptor { .. }
        | Op::Image(_) => return false,
    }
    true
}

/// For the lanes in `mask`: every `dst` slot gets the first origin among the `src` slots (none:
/// defined).
fn data(poison: &mut Poison, n: usize, mask: u128, dst: &[(Slot, u32)], src: &[(Slot, u32)]) {
    for l in (0..n).filter(|l| mask & (1 << l) != 0) {
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
    used_as: &'static str,
    uses: &mut Vec<Use>,
) {
    for l in (0..n).filter(|l| mask & (1 << l) != 0) {
        let o = origin(poison, n, slot, l);
        if o != 0 {
            uses.push((l, o, used_as));
            set(poison, n, slot, l, 0);
        }
    }
}

/// Forgets the origins of every slot of the lanes in `mask`.
pub fn forget(poison: &mut Poison, n: usize, mask: u128) {
    let mut live = 0;
    for (i, p) in poison.origins.iter_mut().enumerate() {
        if mask & (1 << (i % n)) != 0 {
            *p = 0;
        }
        live += usize::from(*p != 0);
    }
    poison.live = live;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_flow_through_arithmetic_and_stop_at_a_sink() {
        let p = Program::default();
        let n = 4;
        let mut poison = Poison::new(8 * n);
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
        sink(&mut poison, n, 0b1111, 3, "x", &mut uses);
        assert_eq!(uses, vec![(2, 7, "x")]);
        assert_eq!(origin(&poison, n, 3, 2), 0);
        assert!(!poison.any());
    }

    #[test]
    fn shadow_marks_bytes() {
        let mut s = Shadow::default();
        s.start(100);
        assert!(!s.written(0, 4));
        s.write(2, 4);
        assert!(s.written(2, 4) && !s.written(0, 4) && !s.written(4, 4));
    }
}
