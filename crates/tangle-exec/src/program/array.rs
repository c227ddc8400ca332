//! The op of a per-invocation array held in register slots ([`ArrayOp`]): made only in the fast
//! program by [`crate::lower::promote_inlined`], run by the wide path ([`crate::wide::arrays`],
//! which says how the slots and their "stored" bits work).

use super::Slot;

/// What an [`ArrayOp`] does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArrayKind {
    /// `value` = the element the pointer points at.
    Load,
    /// The element the pointer points at = `value`.
    Store,
    /// Every element undefined (the variable's `UndefMemory`).
    Undef,
    /// The elements and their stored bits copied to another array of the same type, whose
    /// first element's slot `value` is (a whole load of one variable stored to another).
    Copy,
}

/// An access of a per-invocation array held in slots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArrayOp {
    /// What it does.
    pub kind: ArrayKind,
    /// The loaded value's slot, or the stored value's.
    pub value: Slot,
    /// The slot holding the pointer (unused by `Undef`).
    pub ptr: Slot,
    /// The pointer value of the variable's first byte.
    pub origin: u64,
    /// Bytes an element takes (its leaves are `unit` bytes apart from offset 0).
    pub unit: u64,
    /// The first element's slot.
    pub base: Slot,
    /// Elements; their "stored" bits follow them, 64 elements a slot.
    pub count: u32,
}

impl ArrayOp {
    /// The slots of "stored" bits.
    pub fn stored_slots(&self) -> std::ops::Range<Slot> {
        let at = self.base.saturating_add(self.count);
        at..at.saturating_add(self.count.div_ceil(64))
    }

    /// The slots it writes whole and those it reads, for the wide path's dataflows (the
    /// elements' slots are in neither: the "stored" bits guard them at run time).
    pub fn slots(&self) -> (Vec<Slot>, Vec<Slot>) {
        let bits = self.stored_slots();
        match self.kind {
            ArrayKind::Load => (
                vec![self.value],
                [self.ptr].into_iter().chain(bits).collect(),
            ),
            ArrayKind::Store => (
                Vec::new(),
                [self.ptr, self.value].into_iter().chain(bits).collect(),
            ),
            ArrayKind::Undef => (bits.collect(), Vec::new()),
            ArrayKind::Copy => {
                let to = self.value.saturating_add(self.count);
                let to = to..to.saturating_add(self.count.div_ceil(64));
                (to.collect(), bits.collect())
            }
        }
    }
}
