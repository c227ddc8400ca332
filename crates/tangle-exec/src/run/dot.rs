//! Executing SPV_KHR_integer_dot_product ops (`OpSDot`, `OpUDot`, `OpSUDot` and their AccSat
//! forms) over a tangle's lanes with the pure functions of [`crate::semantics::dot`]; AccSat
//! intermediate overflow is reported as [`crate::Finding::DotAccSatOverflow`].

use super::access::LaneFinding;
use super::alu::{bits_of, rd, wr};
use crate::check::dot::DotOverflow;
use crate::check::group::poison;
use crate::program::{Op, Slot};
use crate::report::Finding;
use crate::semantics::dot::{self as sd, DotKind};
use crate::semantics::{mask, sign_extend};

/// The most components a dot product operand has (vectors of up to 16).
const MAX_COMPONENTS: usize = 16;

/// One lowered dot product instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DotInst {
    /// Signed (`OpSDot`), unsigned (`OpUDot`) or mixed (`OpSUDot`).
    pub kind: DotKind,
    /// Component width of the vectors (8 for the packed 4x8 format).
    pub comp_bits: u32,
    /// Result width.
    pub result_bits: u32,
    /// Components per vector (4 for the packed format).
    pub count: u32,
    /// PackedVectorFormat4x8Bit: each vector is one 32-bit slot.
    pub packed: bool,
    /// Result slot.
    pub dst: Slot,
    /// Vector 1's first slot.
    pub a: Slot,
    /// Vector 2's first slot.
    pub b: Slot,
    /// The Accumulator of the AccSat forms.
    pub acc: Option<Slot>,
}

impl DotInst {
    /// `[signed vector 1, signed vector 2]`.
    fn signedness(&self) -> (bool, bool) {
        match self.kind {
            DotKind::Signed => (true, true),
            DotKind::Unsigned => (false, false),
            DotKind::Mixed => (true, false),
        }
    }

    /// Whether an AccSat intermediate step can overflow at all: no product exceeds 2^(2·cb) in
    /// magnitude, so when count · 2^(2·cb) < 2^(rb-1) no product or partial sum can leave the
    /// result range and the per-lane check is skipped.
    pub(crate) fn may_overflow(&self) -> bool {
        let (cb, rb) = (self.comp_bits, self.result_bits);
        u64::from(self.count).leading_zeros() < 64 - (rb - 1).saturating_sub(2 * cb).min(63)
    }

    /// Reads one vector operand of lane `l` into `out`; returns the component count.
    fn gather(
        &self,
        regs: &[u64],
        n: usize,
        first: Slot,
        l: usize,
        out: &mut [u64; MAX_COMPONENTS],
    ) -> usize {
        if self.packed {
            let unpacked = sd::unpack_4x8(rd(regs, n, first, l));
            out[..4].copy_from_slice(&unpacked);
            return 4;
        }
        let count = (self.count as usize).min(MAX_COMPONENTS);
        for (i, o) in out.iter_mut().enumerate().take(count) {
            *o = rd(regs, n, first + i as u32, l);
        }
        count
    }
}

/// The exact value of a component as the instruction reads it.
fn widened(signed: bool, bits: u32, v: u64) -> i128 {
    if signed {
        i128::from(sign_extend(bits, v))
    } else {
        i128::from(v & mask(bits))
    }
}

impl DotInst {
    /// One invocation's result from its vector components `va`, `vb` and accumulator `acc`
    /// (read only by the AccSat forms); `Err` is the AccSat overflow finding, checked only when
    /// `may_overflow` ([`DotInst::may_overflow`]). Shared by the lane loop below and the native
    /// tier ([`crate::jit`]).
    pub(crate) fn value(
        &self,
        va: &[u64],
        vb: &[u64],
        acc: u64,
        may_overflow: bool,
    ) -> Result<u64, Finding> {
        let (cb, rb) = (self.comp_bits, self.result_bits);
        Ok(match (self.kind, self.acc) {
            (DotKind::Signed, None) => sd::sdot(cb, rb, va, vb),
            (DotKind::Unsigned, None) => sd::udot(cb, rb, va, vb),
            (DotKind::Mixed, None) => sd::sudot(cb, rb, va, vb),
            (kind, Some(_)) => {
                if may_overflow && sd::dot_acc_sat_is_undefined(kind, cb, rb, va, vb) {
                    let (sa, sb) = self.signedness();
                    return Err(Finding::DotAccSatOverflow(DotOverflow {
                        vector1: va.iter().map(|&x| widened(sa, cb, x)).collect(),
                        vector2: vb.iter().map(|&x| widened(sb, cb, x)).collect(),
                        result_bits: rb,
                        signed: kind != DotKind::Unsigned,
                    }));
                }
                match kind {
                    DotKind::Signed => sd::sdot_acc_sat(cb, rb, va, vb, acc),
                    DotKind::Unsigned => sd::udot_acc_sat(cb, rb, va, vb, acc),
                    DotKind::Mixed => sd::sudot_acc_sat(cb, rb, va, vb, acc),
                }
            }
        })
    }
}

/// Executes a dot product op for the lanes in `mask`. Returns `false` for other ops.
pub fn exec_dot(
    op: &Op,
    regs: &mut [u64],
    n: usize,
    lanes: u128,
    found: &mut Vec<LaneFinding>,
) -> bool {
    let Op::Dot(d) = op else { return false };
    let (mut a, mut b) = ([0u64; MAX_COMPONENTS], [0u64; MAX_COMPONENTS]);
    let rb = d.result_bits;
    let may_overflow = d.may_overflow();
    for l in bits_of(lanes, n) {
        let count = d.gather(regs, n, d.a, l, &mut a);
        d.gather(regs, n, d.b, l, &mut b);
        let acc = d.acc.map_or(0, |acc| rd(regs, n, acc, l));
        let v = match d.value(&a[..count], &b[..count], acc, may_overflow) {
            Ok(v) => v,
            Err(f) => {
                found.push((l, f));
                poison(rb)
            }
        };
        wr(regs, n, d.dst, l, v);
    }
    true
}
