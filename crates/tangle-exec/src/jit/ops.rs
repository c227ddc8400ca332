//! Native code for the pure ops and the sanitizer's checks: each the exact function of
//! [`crate::run::alu`]'s kernel on a `u64` lane value, spelled in Cranelift instructions
//! where one does precisely that (wrapping integer arithmetic, shifts with the semantics'
//! fallbacks written out, comparisons, selects, f32/f64 add, subtract, multiply and divide the
//! way [`crate::semantics::float`] computes them: widened to f64, one operation, rounded once),
//! and a call of a [`super::helpers`] function around the same semantics function otherwise
//! (division, remainders, f16, conversions with a float side, GLSL.std.450, bit fields, dot
//! products). Every op here is checked against the lane kernels on random inputs (tests
//! below). An op not listed is refused: the program then runs on the interpreters.

use super::compile::{mask, reason, Emitter};
use super::helpers::{self, code};
use crate::program::{Conv, FloatBin, FloatCmp, IntBin, IntCmp, IntUn, Op};
use crate::semantics::dot::DotKind;
use crate::semantics::int;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::types::{F32, F64, I32, I64};
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Value};

impl Emitter<'_> {
    /// Emits a pure op or a check; `Err` for an op without native code.
    pub(super) fn pure(&mut self, op: &Op) -> Result<(), String> {
        match *op {
            Op::Copy { dst, src } => {
                let v = self.get(src)?;
                self.set(dst, v)
            }
            // A run of slots of one width, as a promoted variable's vector or array is loaded
            // and stored (`lower/promote_inlined.rs`): the lane kernel's concatenation and
            // split give each slot back at its width, so a copy each.
            Op::Bitcast {
                dst,
                dst_count,
                dst_bits,
                src,
                src_count,
                src_bits,
            } if dst_bits == src_bits && dst_count == src_count && src_bits <= 64 => {
                let vals = (0..src_count)
                    .map(|i| self.get(src + i))
                    .collect::<Result<Vec<_>, _>>()?;
                for (i, v) in vals.into_iter().enumerate() {
                    let v = self.trunc(src_bits, v);
                    self.set(dst + i as u32, v)?;
                }
                Ok(())
            }
            Op::IntBin {
                op,
                bits,
                dst,
                a,
                b,
            } => {
                let known = self.constant(b);
                let (a, b) = (self.get(a)?, self.get(b)?);
                let v = self.int_bin(op, bits, a, b, known);
                self.set(dst, v)
            }
            Op::IntUn { op, bits, dst, a } => {
                let a = self.get(a)?;
                let v = match op {
                    IntUn::Negate => {
                        let n = self.b.ins().ineg(a);
                        self.trunc(bits, n)
                    }
                    IntUn::Not => {
                        let n = self.b.ins().bnot(a);
                        self.trunc(bits, n)
                    }
                    IntUn::BitReverse if bits == 0 => self.iconst(0),
                    IntUn::BitReverse => {
                        let r = self.b.ins().bitrev(a);
                        self.b.ins().ushr_imm_s(r, i64::from(64 - bits.min(64)))
                    }
                    IntUn::BitCount => self.b.ins().popcnt(a),
                };
                self.set(dst, v)
            }
            Op::IntCmp {
                op,
                bits,
                dst,
                a,
                b,
            } => {
                let (a, b) = (self.get(a)?, self.get(b)?);
                let v = self.int_cmp(op, bits, a, b);
                self.set(dst, v)
            }
            Op::IntTern {
                op,
                bits,
                dst,
                a,
                b,
                c,
            } => {
                // The lane kernel reads a source equal to its destination as 0 (never made
                // by lowering); not mirrored here, so not taken.
                if [a, b, c].contains(&dst) {
                    return Err("a bit field extract reading its destination".into());
                }
                let args = [
                    self.iconst(helpers::bit_field_code(op)),
                    self.iconst(u64::from(bits)),
                    self.get(a)?,
                    self.get(b)?,
                    self.get(c)?,
                    self.iconst(0),
                ];
                let v = self.call(helpers::bit_field as *const (), &args);
                self.set(dst, v)
            }
            Op::BitFieldInsert {
                bits,
                dst,
                base,
                insert,
                offset,
                count,
            } => {
                let args = [
                    self.iconst(2),
                    self.iconst(u64::from(bits)),
                    self.get(base)?,
                    self.get(insert)?,
                    self.get(offset)?,
                    self.get(count)?,
                ];
                let v = self.call(helpers::bit_field as *const (), &args);
                self.set(dst, v)
            }
            Op::FloatBin {
                op,
                bits,
                dst,
                a,
                b,
            } => {
                let (a, b) = (self.get(a)?, self.get(b)?);
                let v = self.float_bin(op, bits, a, b)?;
                self.set(dst, v)
            }
            Op::FNegate { bits, dst, a } => {
                let a = self.get(a)?;
                let sign: u64 = match bits {
                    16 => 1 << 15,
                    64 => 1 << 63,
                    _ => 1 << 31,
                };
                let v = self.b.ins().bxor_imm_s(a, sign as i64);
                self.set(dst, v)
            }
            Op::FloatCmp {
                op,
                bits,
                dst,
                a,
                b,
            } => {
                let (a, b) = (self.get(a)?, self.get(b)?);
                let v = self.float_cmp(op, bits, a, b)?;
                self.set(dst, v)
            }
            Op::Convert {
                op,
                from,
                to,
                dst,
                a,
            } => {
                let a = self.get(a)?;
                let v = match op {
                    Conv::UConvert => {
                        let v = self.trunc(from, a);
                        self.trunc(to, v)
                    }
                    Conv::SConvert => {
                        let v = self.sext(from, a);
                        self.trunc(to, v)
                    }
                    _ => {
                        let c = code::of(&code::CONV, &op).ok_or("a conversion")?;
                        let args = [
                            self.iconst(c),
                            self.iconst(u64::from(from)),
                            self.iconst(u64::from(to)),
                            a,
                        ];
                        self.call(helpers::convert as *const (), &args)
                    }
                };
                self.set(dst, v)
            }
            Op::Select { dst, cond, a, b } => {
                let (c, a, b) = (self.get(cond)?, self.get(a)?, self.get(b)?);
                let v = self.b.ins().select(c, a, b);
                self.set(dst, v)
            }
            Op::Glsl {
                inst,
                bits,
                dst,
                args,
                argc,
            } => {
                let argc = argc.min(3);
                if args[..argc as usize].contains(&dst) {
                    return Err("a GLSL.std.450 instruction reading its destination".into());
                }
                let mut vals = vec![
                    self.iconst(u64::from(inst)),
                    self.iconst(u64::from(bits) | u64::from(argc) << 32),
                ];
                for (i, &s) in args.iter().enumerate() {
                    let v = if (i as u32) < argc {
                        self.get(s)?
                    } else {
                        self.iconst(0)
                    };
                    vals.push(v);
                }
                let v = self.call(helpers::glsl as *const (), &vals);
                self.set(dst, v)
            }
            Op::Dot(ref d) => {
                if !(d.packed && d.comp_bits == 8 && d.count == 4) {
                    return Err("a dot product of unpacked vectors".into());
                }
                let overflow_checked = d.acc.is_some() && d.may_overflow();
                if overflow_checked && d.result_bits >= 64 {
                    return Err("a 64-bit AccSat dot product".into());
                }
                if !overflow_checked && d.result_bits <= 32 {
                    let (a, b) = (self.get(d.a)?, self.get(d.b)?);
                    let acc = match d.acc {
                        Some(s) => Some(self.get(s)?),
                        None => None,
                    };
                    let v = self.dot_packed(d.kind, d.result_bits, a, b, acc);
                    return self.set(d.dst, v);
                }
                let acc = match d.acc {
                    Some(s) => self.get(s)?,
                    None => self.iconst(0),
                };
                let args = [
                    self.iconst(code::dot(d)),
                    self.get(d.a)?,
                    self.get(d.b)?,
                    acc,
                ];
                let v = self.call(helpers::dot_packed as *const (), &args);
                if overflow_checked {
                    let bad = self.b.ins().icmp_imm_s(IntCC::Equal, v, -1);
                    self.give_up_if(bad, reason::DOT);
                }
                self.set(d.dst, v)
            }
            Op::CheckDivision { bits, signed, a, b } => {
                // A constant divisor the check passes for every dividend needs no code.
                let fine = self.constant(b).is_some_and(|d| {
                    !int::unsigned_division_is_undefined(d)
                        && (!signed || crate::semantics::sign_extend(bits, d) != -1)
                });
                if self.key.checks && !fine {
                    let args = [
                        self.iconst(u64::from(bits)),
                        self.iconst(u64::from(signed)),
                        self.get(a)?,
                        self.get(b)?,
                    ];
                    let bad = self.call(helpers::division_undefined as *const (), &args);
                    self.give_up_if(bad, reason::DIVISION);
                }
                Ok(())
            }
            Op::CheckShift { bits, shift } => {
                let fine = self
                    .constant(shift)
                    .is_some_and(|s| !int::shift_is_undefined(bits, s));
                if self.key.checks && !fine {
                    let s = self.get(shift)?;
                    let bad = self.b.ins().icmp_imm_s(
                        IntCC::UnsignedGreaterThanOrEqual,
                        s,
                        i64::from(bits),
                    );
                    self.give_up_if(bad, reason::SHIFT);
                }
                Ok(())
            }
            ref other => Err(format!("no native code for {}", op_name(other))),
        }
    }

    /// A packed 4x8-bit dot product with a result of at most 32 bits whose AccSat steps
    /// cannot overflow, as `semantics::dot` computes it: the components sign- or zero-extended
    /// (Vector 1 signed for `Signed` and `Mixed`, Vector 2 for `Signed`), the exact sum (below
    /// 2^18 in magnitude, exact in i64), then wrapped to the width, or added to the
    /// accumulator (widened with the result's signedness) and clamped to the result's range.
    fn dot_packed(
        &mut self,
        kind: DotKind,
        bits: u32,
        a: Value,
        b: Value,
        acc: Option<Value>,
    ) -> Value {
        let (sa, sb) = match kind {
            DotKind::Signed => (true, true),
            DotKind::Unsigned => (false, false),
            DotKind::Mixed => (true, false),
        };
        let mut sum = self.iconst(0);
        for k in 0..4i64 {
            let byte = |e: &mut Self, v: Value, signed: bool| {
                if signed {
                    let up = e.b.ins().ishl_imm_s(v, 56 - 8 * k);
                    e.b.ins().sshr_imm_s(up, 56)
                } else {
                    let down = e.b.ins().ushr_imm_s(v, 8 * k);
                    e.b.ins().band_imm_s(down, 0xff)
                }
            };
            let x = byte(self, a, sa);
            let y = byte(self, b, sb);
            let p = self.b.ins().imul(x, y);
            sum = self.b.ins().iadd(sum, p);
        }
        let Some(acc) = acc else {
            return self.trunc(bits, sum);
        };
        let signed = kind != DotKind::Unsigned;
        let acc = if signed {
            self.sext(bits, acc)
        } else {
            self.trunc(bits, acc)
        };
        let total = self.b.ins().iadd(sum, acc);
        let (lo, hi) = if signed {
            (
                crate::semantics::signed_min(bits),
                crate::semantics::signed_max(bits),
            )
        } else {
            (0, mask(bits) as i64)
        };
        let lo = self.b.ins().iconst(I64, lo);
        let hi = self.b.ins().iconst(I64, hi);
        let v = self.b.ins().smax(total, lo);
        let v = self.b.ins().smin(v, hi);
        self.trunc(bits, v)
    }

    /// An integer binary op; `known` is `b`'s value when it is a constant.
    pub(super) fn int_bin(
        &mut self,
        op: IntBin,
        bits: u32,
        a: Value,
        b: Value,
        known: Option<u64>,
    ) -> Value {
        match op {
            IntBin::Add | IntBin::Sub | IntBin::Mul if bits == 32 => {
                // The low 32 bits of the result depend on the operands' low 32 bits only: the
                // 32-bit operation, zero-extended (one instruction on x86-64, no mask after it).
                let (x, y) = (self.b.ins().ireduce(I32, a), self.b.ins().ireduce(I32, b));
                let r = match op {
                    IntBin::Add => self.b.ins().iadd(x, y),
                    IntBin::Sub => self.b.ins().isub(x, y),
                    _ => self.b.ins().imul(x, y),
                };
                self.b.ins().uextend(I64, r)
            }
            IntBin::Add => {
                let v = self.b.ins().iadd(a, b);
                self.trunc(bits, v)
            }
            IntBin::Sub => {
                let v = self.b.ins().isub(a, b);
                self.trunc(bits, v)
            }
            IntBin::Mul => {
                let v = self.b.ins().imul(a, b);
                self.trunc(bits, v)
            }
            IntBin::ShiftLeft | IntBin::ShiftRightLogical
                if known.is_some_and(|s| s < u64::from(bits)) =>
            {
                // A constant amount below the width: the plain shift.
                let s = known.unwrap_or(0) as i64;
                if op == IntBin::ShiftLeft {
                    if bits == 32 {
                        let x = self.b.ins().ireduce(I32, a);
                        let r = self.b.ins().ishl_imm_s(x, s);
                        self.b.ins().uextend(I64, r)
                    } else {
                        let v = self.b.ins().ishl_imm_s(a, s);
                        self.trunc(bits, v)
                    }
                } else {
                    self.b.ins().ushr_imm_s(a, s)
                }
            }
            IntBin::UDiv | IntBin::SDiv | IntBin::UMod | IntBin::SRem | IntBin::SMod => {
                let c = code::of(&code::INT_BIN, &op).unwrap_or(0);
                let args = [self.iconst(c), self.iconst(u64::from(bits)), a, b];
                self.call(helpers::int_bin as *const (), &args)
            }
            IntBin::ShiftLeft | IntBin::ShiftRightLogical => {
                // int::shift_*_logical: 0 for a shift of at least the width. Below it,
                // Cranelift's shift (amount taken mod 64) is the plain one.
                let shifted = if op == IntBin::ShiftLeft {
                    let v = self.b.ins().ishl(a, b);
                    self.trunc(bits, v)
                } else {
                    self.b.ins().ushr(a, b)
                };
                let wide =
                    self.b
                        .ins()
                        .icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, b, i64::from(bits));
                let zero = self.iconst(0);
                self.b.ins().select(wide, zero, shifted)
            }
            IntBin::ShiftRightArithmetic => {
                // int::shift_right_arithmetic: the sign-extended value shifted by min(s, 63).
                let x = self.sext(bits, a);
                let cap = self.iconst(63);
                let s = self.b.ins().umin(b, cap);
                let v = self.b.ins().sshr(x, s);
                self.trunc(bits, v)
            }
            IntBin::Or => self.b.ins().bor(a, b),
            IntBin::Xor => self.b.ins().bxor(a, b),
            IntBin::And => self.b.ins().band(a, b),
        }
    }

    fn int_cmp(&mut self, op: IntCmp, bits: u32, a: Value, b: Value) -> Value {
        let (cc, signed) = match op {
            IntCmp::Eq => (IntCC::Equal, false),
            IntCmp::Ne => (IntCC::NotEqual, false),
            IntCmp::UGt => (IntCC::UnsignedGreaterThan, false),
            IntCmp::UGe => (IntCC::UnsignedGreaterThanOrEqual, false),
            IntCmp::ULt => (IntCC::UnsignedLessThan, false),
            IntCmp::ULe => (IntCC::UnsignedLessThanOrEqual, false),
            IntCmp::SGt => (IntCC::SignedGreaterThan, true),
            IntCmp::SGe => (IntCC::SignedGreaterThanOrEqual, true),
            IntCmp::SLt => (IntCC::SignedLessThan, true),
            IntCmp::SLe => (IntCC::SignedLessThanOrEqual, true),
        };
        let (a, b) = if signed {
            (self.sext(bits, a), self.sext(bits, b))
        } else {
            (a, b)
        };
        let c = self.b.ins().icmp(cc, a, b);
        self.bool64(c)
    }

    /// A float of `bits` (32 or 64) from its lane value, as [`crate::semantics::float::to_f64`]
    /// reads it (an f32 from the low 32 bits).
    fn float_of(&mut self, bits: u32, v: Value) -> Value {
        if bits == 64 {
            self.b.ins().bitcast(F64, MemFlagsData::new(), v)
        } else {
            let low = self.b.ins().ireduce(I32, v);
            self.b.ins().bitcast(F32, MemFlagsData::new(), low)
        }
    }

    fn float_bin(&mut self, op: FloatBin, bits: u32, a: Value, b: Value) -> Result<Value, String> {
        let native = matches!(
            op,
            FloatBin::Add | FloatBin::Sub | FloatBin::Mul | FloatBin::Div
        ) && matches!(bits, 32 | 64);
        if !native {
            let c = code::of(&code::FLOAT_BIN, &op).ok_or("a float op")?;
            let args = [self.iconst(c), self.iconst(u64::from(bits)), a, b];
            return Ok(self.call(helpers::float_bin as *const (), &args));
        }
        // float::map2: both operands widened to f64 (exact), one f64 operation, rounded once
        // to the width (`as f32`, round to nearest even).
        let (mut x, mut y) = (self.float_of(bits, a), self.float_of(bits, b));
        if bits == 32 {
            x = self.b.ins().fpromote(F64, x);
            y = self.b.ins().fpromote(F64, y);
        }
        let r = match op {
            FloatBin::Add => self.b.ins().fadd(x, y),
            FloatBin::Sub => self.b.ins().fsub(x, y),
            FloatBin::Mul => self.b.ins().fmul(x, y),
            _ => self.b.ins().fdiv(x, y),
        };
        Ok(if bits == 32 {
            let r = self.b.ins().fdemote(F32, r);
            let r = self.b.ins().bitcast(I32, MemFlagsData::new(), r);
            self.b.ins().uextend(I64, r)
        } else {
            self.b.ins().bitcast(I64, MemFlagsData::new(), r)
        })
    }

    fn float_cmp(&mut self, op: FloatCmp, bits: u32, a: Value, b: Value) -> Result<Value, String> {
        if !matches!(bits, 32 | 64) {
            let c = code::of(&code::FLOAT_CMP, &op).ok_or("a float comparison")?;
            let args = [self.iconst(c), self.iconst(u64::from(bits)), a, b];
            return Ok(self.call(helpers::float_cmp as *const (), &args));
        }
        if op == FloatCmp::IsInf {
            // Exponent all ones, fraction zero, either sign (of the low 32 bits for an f32).
            let (abs, inf) = if bits == 64 {
                (0x7fff_ffff_ffff_ffff_u64, 0x7ff0_0000_0000_0000_u64)
            } else {
                (0x7fff_ffff, 0x7f80_0000)
            };
            let m = self.b.ins().band_imm_s(a, abs as i64);
            let c = self.b.ins().icmp_imm_s(IntCC::Equal, m, inf as i64);
            return Ok(self.bool64(c));
        }
        // float::compare: false (ordered) or true (unordered) when either side is NaN, else
        // the comparison; exact on the narrow values, which widen exactly.
        let cc = match op {
            FloatCmp::OrdEq => FloatCC::Equal,
            FloatCmp::OrdNe => FloatCC::OrderedNotEqual,
            FloatCmp::OrdLt => FloatCC::LessThan,
            FloatCmp::OrdGt => FloatCC::GreaterThan,
            FloatCmp::OrdLe => FloatCC::LessThanOrEqual,
            FloatCmp::OrdGe => FloatCC::GreaterThanOrEqual,
            FloatCmp::UnordEq => FloatCC::UnorderedOrEqual,
            FloatCmp::UnordNe => FloatCC::NotEqual,
            FloatCmp::UnordLt => FloatCC::UnorderedOrLessThan,
            FloatCmp::UnordGt => FloatCC::UnorderedOrGreaterThan,
            FloatCmp::UnordLe => FloatCC::UnorderedOrLessThanOrEqual,
            FloatCmp::UnordGe => FloatCC::UnorderedOrGreaterThanOrEqual,
            FloatCmp::IsNan | FloatCmp::IsInf => FloatCC::Unordered,
        };
        let x = self.float_of(bits, a);
        let y = if op == FloatCmp::IsNan {
            x
        } else {
            self.float_of(bits, b)
        };
        let c = self.b.ins().fcmp(cc, x, y);
        Ok(self.bool64(c))
    }
}

/// An op's name for a refusal message (its variant, without the operands).
fn op_name(op: &Op) -> String {
    let s = format!("{op:?}");
    s.split([' ', '(', '{'])
        .next()
        .unwrap_or_default()
        .to_string()
}
