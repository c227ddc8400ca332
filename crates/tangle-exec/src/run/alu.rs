//! Pure ops over lane arrays: arithmetic, logic, comparison, conversion, selection and component
//! moves. Each op is one tight loop over the lanes of the active mask, calling the per-value
//! functions of [`crate::semantics`]. Lowering folds `OpSpecConstantOp` through
//! [`exec_pure`] too, on a one-lane register file.
//!
//! Register file layout: `regs[slot * lanes + lane]`.

use crate::program::ops::WideOp;
use crate::program::{Conv, FloatBin, FloatCmp, IntBin, IntCmp, IntTern, IntUn, Op, Slot};
use crate::semantics::{convert, float, from_signed, glsl, int, mask as mask_of, sign_extend};
use spirv::GlslStd450Op as G;

static ZEROS: [u64; 128] = [0; 128];

/// The lane array of a slot (zeros for a slot outside the file, which lowering never makes).
#[inline(always)]
pub fn lanes_of(regs: &[u64], n: usize, s: Slot) -> &[u64] {
    let s = s as usize;
    regs.get(s * n..s * n + n).unwrap_or(&ZEROS[..n.min(128)])
}

/// Reads lane `l` of slot `s`.
#[inline(always)]
pub fn rd(regs: &[u64], n: usize, s: Slot, l: usize) -> u64 {
    regs.get(s as usize * n + l).copied().unwrap_or(0)
}

/// Writes lane `l` of slot `s`.
#[inline(always)]
pub fn wr(regs: &mut [u64], n: usize, s: Slot, l: usize, v: u64) {
    if let Some(r) = regs.get_mut(s as usize * n + l) {
        *r = v;
    }
}

/// The register file split around a destination slot: the destination's lanes and the rest.
pub struct Split<'a> {
    lo: &'a [u64],
    hi: &'a [u64],
    d: usize,
    n: usize,
}

impl<'a> Split<'a> {
    /// The lane array of a source slot (never the destination: SSA results differ from their
    /// operands; a source equal to the destination reads as zeros).
    #[inline(always)]
    pub fn get(&self, s: Slot) -> &'a [u64] {
        let s = s as usize;
        let r = if s < self.d {
            self.lo.get(s * self.n..s * self.n + self.n)
        } else if s > self.d {
            let k = s - self.d - 1;
            self.hi.get(k * self.n..k * self.n + self.n)
        } else {
            None
        };
        r.unwrap_or(&ZEROS[..self.n.min(128)])
    }
}

/// Splits `regs` into the lanes of `d` (mutable) and a view of every other slot.
#[inline(always)]
pub fn split(regs: &mut [u64], n: usize, d: Slot) -> Option<(&mut [u64], Split<'_>)> {
    let d = d as usize;
    if (d + 1) * n > regs.len() {
        return None;
    }
    let (lo, rest) = regs.split_at_mut(d * n);
    let (dst, hi) = rest.split_at_mut(n);
    Some((dst, Split { lo, hi, d, n }))
}

/// Iterates the set bits of a lane mask.
#[inline(always)]
pub fn bits(mut m: u128) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if m == 0 {
            None
        } else {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            Some(l)
        }
    })
}

/// The mask with every one of `n` lanes set.
#[inline(always)]
pub fn full_mask(n: usize) -> u128 {
    if n >= 128 {
        u128::MAX
    } else {
        (1u128 << n) - 1
    }
}

#[inline(always)]
fn map1(d: &mut [u64], a: &[u64], mask: u128, f: impl Fn(u64) -> u64) {
    if mask == full_mask(d.len()) {
        for (d, a) in d.iter_mut().zip(a) {
            *d = f(*a);
        }
    } else {
        for (l, (d, a)) in d.iter_mut().zip(a).enumerate() {
            if (mask >> l) & 1 != 0 {
                *d = f(*a);
            }
        }
    }
}

#[inline(always)]
fn map2(d: &mut [u64], a: &[u64], b: &[u64], mask: u128, f: impl Fn(u64, u64) -> u64) {
    if mask == full_mask(d.len()) {
        for ((d, a), b) in d.iter_mut().zip(a).zip(b) {
            *d = f(*a, *b);
        }
    } else {
        for (l, ((d, a), b)) in d.iter_mut().zip(a).zip(b).enumerate() {
            if (mask >> l) & 1 != 0 {
                *d = f(*a, *b);
            }
        }
    }
}

#[inline(always)]
fn map3(
    d: &mut [u64],
    a: &[u64],
    b: &[u64],
    c: &[u64],
    mask: u128,
    f: impl Fn(u64, u64, u64) -> u64,
) {
    for (l, (((d, a), b), c)) in d.iter_mut().zip(a).zip(b).zip(c).enumerate() {
        if (mask >> l) & 1 != 0 {
            *d = f(*a, *b, *c);
        }
    }
}

/// `OpPhi`'s copies on one edge, for the lanes of `mask`, as one parallel copy: every source is
/// read (into `scratch`) before any destination is written.
pub fn phi_copies(
    regs: &mut [u64],
    n: usize,
    copies: &[(Slot, Slot)],
    mask: u128,
    scratch: &mut Vec<u64>,
) {
    scratch.clear();
    for &(_, src) in copies {
        scratch.extend_from_slice(lanes_of(regs, n, src));
    }
    for (i, &(dst, _)) in copies.iter().enumerate() {
        for l in bits_of(mask, n) {
            let v = scratch.get(i * n + l).copied().unwrap_or(0);
            wr(regs, n, dst, l, v);
        }
    }
}

/// The bit pattern of `x` as a float of width `bits`.
pub fn float_const(x: f64, bits: u32) -> u64 {
    float::from_f64(bits, x)
}

/// Executes a pure op (no memory, no control flow) for the lanes in `mask`; returns `false` for
/// ops that are not pure.
pub fn exec_pure(op: &Op, regs: &mut [u64], n: usize, mask: u128) -> bool {
    // An op that reads its own destination (a store folded into a register variable) reads a
    // copy in the file's last slot, which lowering reserves for this.
    let tmp = (regs.len() / n.max(1)).saturating_sub(1) as Slot;
    if let Some(op) = op.unaliased(tmp) {
        if let Some(Op::Copy { dst, .. })
        | Some(Op::IntBin { dst, .. })
        | Some(Op::IntCmp { dst, .. })
        | Some(Op::IntUn { dst, .. })
        | Some(Op::FloatBin { dst, .. })
        | Some(Op::FloatCmp { dst, .. })
        | Some(Op::FNegate { dst, .. })
        | Some(Op::Convert { dst, .. })
        | Some(Op::Select { dst, .. }) = Some(&op)
        {
            let (d, t) = (*dst as usize * n, tmp as usize * n);
            if d + n <= regs.len() && t + n <= regs.len() && d != t {
                regs.copy_within(d..d + n, t);
                return exec_pure(&op, regs, n, mask);
            }
        }
        return true;
    }
    match *op {
        Op::Copy { dst, src } => {
            if let Some((d, s)) = split(regs, n, dst) {
                map1(d, s.get(src), mask, |a| a);
            }
        }
        Op::IntBin {
            op,
            bits,
            dst,
            a,
            b,
        } => {
            if let Some((d, s)) = split(regs, n, dst) {
                int_bin(op, bits, d, s.get(a), s.get(b), mask);
            }
        }
        Op::IntCmp {
            op,
            bits,
            dst,
            a,
            b,
        } => {
            if let Some((d, s)) = split(regs, n, dst) {
                let (a, b) = (s.get(a), s.get(b));
                match op {
                    IntCmp::Eq => map2(d, a, b, mask, int::iequal),
                    IntCmp::Ne => map2(d, a, b, mask, int::inot_equal),
                    IntCmp::UGt => map2(d, a, b, mask, int::ugreater_than),
                    IntCmp::UGe => map2(d, a, b, mask, int::ugreater_than_equal),
                    IntCmp::ULt => map2(d, a, b, mask, int::uless_than),
                    IntCmp::ULe => map2(d, a, b, mask, int::uless_than_equal),
                    IntCmp::SGt => map2(d, a, b, mask, |x, y| int::sgreater_than(bits, x, y)),
                    IntCmp::SGe => map2(d, a, b, mask, |x, y| int::sgreater_than_equal(bits, x, y)),
                    IntCmp::SLt => map2(d, a, b, mask, |x, y| int::sless_than(bits, x, y)),
                    IntCmp::SLe => map2(d, a, b, mask, |x, y| int::sless_than_equal(bits, x, y)),
                }
            }
        }
        Op::IntUn { op, bits, dst, a } => {
            if let Some((d, s)) = split(regs, n, dst) {
                let a = s.get(a);
                match op {
                    IntUn::Negate => map1(d, a, mask, |x| int::snegate(bits, x)),
                    IntUn::Not => map1(d, a, mask, |x| int::not(bits, x)),
                    IntUn::BitReverse => map1(d, a, mask, |x| int::bit_reverse(bits, x)),
                    IntUn::BitCount => map1(d, a, mask, int::bit_count),
                }
            }
        }
        Op::IntTern {
            op,
            bits,
            dst,
            a,
            b,
            c,
        } => {
            if let Some((d, s)) = split(regs, n, dst) {
                let (a, b, c) = (s.get(a), s.get(b), s.get(c));
                match op {
                    IntTern::BitFieldUExtract => map3(d, a, b, c, mask, |x, o, k| {
                        int::bit_field_uextract(bits, x, o, k)
                    }),
                    IntTern::BitFieldSExtract => map3(d, a, b, c, mask, |x, o, k| {
                        int::bit_field_sextract(bits, x, o, k)
                    }),
                }
            }
        }
        Op::BitFieldInsert {
            bits,
            dst,
            base,
            insert,
            offset,
            count,
        } => {
            for l in bits_of(mask, n) {
                let v = int::bit_field_insert(
                    bits,
                    rd(regs, n, base, l),
                    rd(regs, n, insert, l),
                    rd(regs, n, offset, l),
                    rd(regs, n, count, l),
                );
                wr(regs, n, dst, l, v);
            }
        }
        Op::Wide {
            op,
            bits,
            lo,
            hi,
            a,
            b,
        } => {
            for l in bits_of(mask, n) {
                let (x, y) = (rd(regs, n, a, l), rd(regs, n, b, l));
                let (r, h) = match op {
                    WideOp::IAddCarry => int::iadd_carry(bits, x, y),
                    WideOp::ISubBorrow => int::isub_borrow(bits, x, y),
                    WideOp::UMulExtended => int::umul_extended(bits, x, y),
                    WideOp::SMulExtended => int::smul_extended(bits, x, y),
                };
                wr(regs, n, lo, l, r);
                wr(regs, n, hi, l, h);
            }
        }
        Op::FloatBin {
            op,
            bits,
            dst,
            a,
            b,
        } => {
            if let Some((d, s)) = split(regs, n, dst) {
                float_bin(op, bits, d, s.get(a), s.get(b), mask);
            }
        }
        Op::FNegate { bits, dst, a } => {
            if let Some((d, s)) = split(regs, n, dst) {
                map1(d, s.get(a), mask, |x| float::fnegate(bits, x));
            }
        }
        Op::Glsl {
            inst,
            bits,
            dst,
            args,
            argc,
        } => {
            if let Some((d, s)) = split(regs, n, dst) {
                let (a, b, c) = (s.get(args[0]), s.get(args[1]), s.get(args[2]));
                let argc = argc.min(3) as usize;
                for l in bits_of(mask, n) {
                    let all = [
                        a.get(l).copied().unwrap_or(0),
                        b.get(l).copied().unwrap_or(0),
                        c.get(l).copied().unwrap_or(0),
                    ];
                    if let Some(r) = d.get_mut(l) {
                        *r = glsl::eval_componentwise(inst, bits, &all[..argc]).unwrap_or(0);
                    }
                }
            }
        }
        Op::FDot {
            bits,
            dst,
            ref a,
            ref b,
        } => {
            let mut xa = Vec::with_capacity(a.len());
            let mut xb = Vec::with_capacity(b.len());
            for l in bits_of(mask, n) {
                xa.clear();
                xb.clear();
                xa.extend(a.iter().map(|&s| rd(regs, n, s, l)));
                xb.extend(b.iter().map(|&s| rd(regs, n, s, l)));
                wr(regs, n, dst, l, float::fdot(bits, &xa, &xb));
            }
        }
        Op::GlslVector {
            inst,
            bits,
            dst,
            dst_count,
            ref args,
            eta_bits,
        } => {
            let mut vals: Vec<Vec<u64>> = args
                .iter()
                .map(|&(_, c)| Vec::with_capacity(c as usize))
                .collect();
            for l in bits_of(mask, n) {
                for (v, &(s, c)) in vals.iter_mut().zip(args.iter()) {
                    v.clear();
                    v.extend((0..c).map(|i| rd(regs, n, s + i, l)));
                }
                let out = glsl_vector(inst, bits, &vals, eta_bits);
                for i in 0..dst_count {
                    wr(
                        regs,
                        n,
                        dst + i,
                        l,
                        out.get(i as usize).copied().unwrap_or(0),
                    );
                }
            }
        }
        Op::FloatCmp {
            op,
            bits,
            dst,
            a,
            b,
        } => {
            if let Some((d, s)) = split(regs, n, dst) {
                let (a, b) = (s.get(a), s.get(b));
                let f: fn(u32, u64, u64) -> u64 = match op {
                    FloatCmp::OrdEq => float::ford_equal,
                    FloatCmp::OrdNe => float::ford_not_equal,
                    FloatCmp::OrdLt => float::ford_less_than,
                    FloatCmp::OrdGt => float::ford_greater_than,
                    FloatCmp::OrdLe => float::ford_less_than_equal,
                    FloatCmp::OrdGe => float::ford_greater_than_equal,
                    FloatCmp::UnordEq => float::funord_equal,
                    FloatCmp::UnordNe => float::funord_not_equal,
                    FloatCmp::UnordLt => float::funord_less_than,
                    FloatCmp::UnordGt => float::funord_greater_than,
                    FloatCmp::UnordLe => float::funord_less_than_equal,
                    FloatCmp::UnordGe => float::funord_greater_than_equal,
                    FloatCmp::IsNan => |bits, a, _| float::is_nan(bits, a),
                    FloatCmp::IsInf => |bits, a, _| float::is_inf(bits, a),
                };
                map2(d, a, b, mask, |x, y| f(bits, x, y));
            }
        }
        Op::Ldexp {
            bits,
            dst,
            a,
            exp,
            exp_bits,
        } => {
            for l in bits_of(mask, n) {
                let v = glsl::ldexp(
                    bits,
                    rd(regs, n, a, l),
                    sign_extend(exp_bits, rd(regs, n, exp, l)),
                );
                wr(regs, n, dst, l, v);
            }
        }
        Op::Frexp {
            bits,
            dst,
            exp,
            exp_bits,
            a,
        } => {
            for l in bits_of(mask, n) {
                let (m, e) = glsl::frexp(bits, rd(regs, n, a, l));
                wr(regs, n, dst, l, m);
                wr(regs, n, exp, l, from_signed(exp_bits, e));
            }
        }
        Op::Modf {
            bits,
            dst,
            whole,
            a,
        } => {
            for l in bits_of(mask, n) {
                let (fract, w) = glsl::modf(bits, rd(regs, n, a, l));
                wr(regs, n, dst, l, fract);
                wr(regs, n, whole, l, w);
            }
        }
        Op::Convert {
            op,
            from,
            to,
            dst,
            a,
        } => {
            if let Some((d, s)) = split(regs, n, dst) {
                let a = s.get(a);
                match op {
                    Conv::UConvert => map1(d, a, mask, |x| convert::uconvert(from, to, x)),
                    Conv::SConvert => map1(d, a, mask, |x| convert::sconvert(from, to, x)),
                    Conv::FConvert => map1(d, a, mask, |x| convert::fconvert(from, to, x)),
                    Conv::FToU => map1(d, a, mask, |x| convert::convert_f_to_u(from, to, x)),
                    Conv::FToS => map1(d, a, mask, |x| convert::convert_f_to_s(from, to, x)),
                    Conv::UToF => map1(d, a, mask, |x| convert::convert_u_to_f(from, to, x)),
                    Conv::SToF => map1(d, a, mask, |x| convert::convert_s_to_f(from, to, x)),
                }
            }
        }
        Op::Select { dst, cond, a, b } => {
            if let Some((d, s)) = split(regs, n, dst) {
                map3(d, s.get(cond), s.get(a), s.get(b), mask, |c, x, y| {
                    if c != 0 {
                        x
                    } else {
                        y
                    }
                });
            }
        }
        Op::Bitcast {
            dst,
            dst_count,
            dst_bits,
            src,
            src_count,
            src_bits,
        } => {
            if src_bits == dst_bits && src_count == dst_count && src_bits <= 64 {
                // Equal widths: each component at its width (what the bit stream gives).
                for l in bits_of(mask, n) {
                    for i in 0..src_count {
                        let v = rd(regs, n, src + i, l) & mask_of(src_bits);
                        wr(regs, n, dst + i, l, v);
                    }
                }
                return true;
            }
            let mut comps = Vec::with_capacity(src_count as usize);
            for l in bits_of(mask, n) {
                comps.clear();
                comps.extend((0..src_count).map(|i| rd(regs, n, src + i, l)));
                let out =
                    convert::bitcast_components(src_bits, &comps, dst_bits).unwrap_or_default();
                for i in 0..dst_count {
                    wr(
                        regs,
                        n,
                        dst + i,
                        l,
                        out.get(i as usize).copied().unwrap_or(0),
                    );
                }
            }
        }
        Op::ExtractDynamic {
            dst,
            base,
            count,
            index,
            index_bits,
        } => {
            for l in bits_of(mask, n) {
                let i = rd(regs, n, index, l) & mask_of(index_bits);
                // Out of range: "the behavior is undefined"; tangle reads 0.
                let v = if i < u64::from(count) {
                    rd(regs, n, base + i as u32, l)
                } else {
                    0
                };
                wr(regs, n, dst, l, v);
            }
        }
        Op::InsertDynamic {
            dst,
            count,
            value,
            index,
            index_bits,
        } => {
            for l in bits_of(mask, n) {
                let i = rd(regs, n, index, l) & mask_of(index_bits);
                if i < u64::from(count) {
                    let v = rd(regs, n, value, l);
                    wr(regs, n, dst + i as u32, l, v);
                }
            }
        }
        _ => return false,
    }
    true
}

/// The active lanes of `mask` below `n`.
#[inline(always)]
pub fn bits_of(mask: u128, n: usize) -> impl Iterator<Item = usize> {
    bits(mask & full_mask(n))
}

#[inline(always)]
fn int_bin(op: IntBin, bits: u32, d: &mut [u64], a: &[u64], b: &[u64], mask: u128) {
    match op {
        IntBin::Add => map2(d, a, b, mask, |x, y| int::iadd(bits, x, y)),
        IntBin::Sub => map2(d, a, b, mask, |x, y| int::isub(bits, x, y)),
        IntBin::Mul => map2(d, a, b, mask, |x, y| int::imul(bits, x, y)),
        IntBin::UDiv => map2(d, a, b, mask, |x, y| int::udiv(bits, x, y)),
        IntBin::SDiv => map2(d, a, b, mask, |x, y| int::sdiv(bits, x, y)),
        IntBin::UMod => map2(d, a, b, mask, int::umod),
        IntBin::SRem => map2(d, a, b, mask, |x, y| int::srem(bits, x, y)),
        IntBin::SMod => map2(d, a, b, mask, |x, y| int::smod(bits, x, y)),
        IntBin::ShiftLeft => map2(d, a, b, mask, |x, y| int::shift_left_logical(bits, x, y)),
        IntBin::ShiftRightLogical => {
            map2(d, a, b, mask, |x, y| int::shift_right_logical(bits, x, y))
        }
        IntBin::ShiftRightArithmetic => map2(d, a, b, mask, |x, y| {
            int::shift_right_arithmetic(bits, x, y)
        }),
        IntBin::Or => map2(d, a, b, mask, int::bitwise_or),
        IntBin::Xor => map2(d, a, b, mask, int::bitwise_xor),
        IntBin::And => map2(d, a, b, mask, int::bitwise_and),
    }
}

#[inline(always)]
fn float_bin(op: FloatBin, bits: u32, d: &mut [u64], a: &[u64], b: &[u64], mask: u128) {
    match op {
        FloatBin::Add => map2(d, a, b, mask, |x, y| float::fadd(bits, x, y)),
        FloatBin::Sub => map2(d, a, b, mask, |x, y| float::fsub(bits, x, y)),
        FloatBin::Mul => map2(d, a, b, mask, |x, y| float::fmul(bits, x, y)),
        FloatBin::Div => map2(d, a, b, mask, |x, y| float::fdiv(bits, x, y)),
        FloatBin::Rem => map2(d, a, b, mask, |x, y| float::frem(bits, x, y)),
        FloatBin::Mod => map2(d, a, b, mask, |x, y| float::fmod(bits, x, y)),
    }
}

/// The whole-vector GLSL.std.450 instructions on one lane's operand components.
fn glsl_vector(inst: u32, bits: u32, v: &[Vec<u64>], eta_bits: u32) -> Vec<u64> {
    let arg = |i: usize| v.get(i).map_or(&[][..], Vec::as_slice);
    let first = |i: usize| arg(i).first().copied().unwrap_or(0);
    let dim = |len: usize| (1..=4).find(|k| k * k == len).unwrap_or(0);
    let Some(g) = G::from_u32(inst) else {
        return Vec::new();
    };
    match g {
        G::Length => vec![glsl::length(bits, arg(0))],
        G::Distance => vec![glsl::distance(bits, arg(0), arg(1))],
        G::Cross => glsl::cross(bits, arg(0), arg(1)).map_or_else(Vec::new, |c| c.to_vec()),
        G::Normalize => glsl::normalize(bits, arg(0)),
        G::FaceForward => glsl::face_forward(bits, arg(0), arg(1), arg(2)),
        G::Reflect => glsl::reflect(bits, arg(0), arg(1)),
        G::Refract => glsl::refract(bits, arg(0), arg(1), eta_bits, first(2)),
        G::Determinant => {
            glsl::determinant(bits, dim(arg(0).len()), arg(0)).map_or_else(Vec::new, |d| vec![d])
        }
        G::MatrixInverse => {
            glsl::matrix_inverse(bits, dim(arg(0).len()), arg(0)).unwrap_or_default()
        }
        G::PackSnorm4x8 => vec![glsl::pack_snorm_4x8(arg(0))],
        G::PackUnorm4x8 => vec![glsl::pack_unorm_4x8(arg(0))],
        G::PackSnorm2x16 => vec![glsl::pack_snorm_2x16(arg(0))],
        G::PackUnorm2x16 => vec![glsl::pack_unorm_2x16(arg(0))],
        G::PackHalf2x16 => vec![glsl::pack_half_2x16(arg(0))],
        G::PackDouble2x32 => vec![glsl::pack_double_2x32(arg(0))],
        G::UnpackSnorm4x8 => glsl::unpack_snorm_4x8(first(0)).to_vec(),
        G::UnpackUnorm4x8 => glsl::unpack_unorm_4x8(first(0)).to_vec(),
        G::UnpackSnorm2x16 => glsl::unpack_snorm_2x16(first(0)).to_vec(),
        G::UnpackUnorm2x16 => glsl::unpack_unorm_2x16(first(0)).to_vec(),
        G::UnpackHalf2x16 => glsl::unpack_half_2x16(first(0)).to_vec(),
        G::UnpackDouble2x32 => glsl::unpack_double_2x32(first(0)).to_vec(),
        _ => Vec::new(),
    }
}
