//! GLSL.std.450 instructions called outside their domain: the extended instruction set leaves
//! their result undefined there (a NaN or an infinity on most GPUs, but not the same one on all).
//! Reported as warnings ([`crate::check::kind::Kind::severity`]): the run does not fail.
//!
//! # Spec
//! GLSL.std.450 ("Extended Instruction Set", version 1.00, revision 4), one sentence per
//! instruction, quoted at [`undefined`]. Lowering emits an `Op::CheckDomain` before each
//! component of such an instruction ([`crate::lower::arith`]); `--no-checks` skips it.

use crate::program::Op;
use crate::report::Finding;
use crate::run::access::LaneFinding;
use crate::run::alu::{bits_of, rd};
use crate::semantics::float::to_f64;
use spirv::GlslStd450Op as G;
use std::fmt;

/// A GLSL.std.450 instruction called where its result is undefined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DomainFinding {
    /// The instruction's name (`Sqrt`).
    pub function: &'static str,
    /// The spec's condition (`x < 0`).
    pub condition: &'static str,
    /// The operands, as numbers in words (`-1`, `0.5`).
    pub operands: Vec<String>,
}

impl fmt::Display for DomainFinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "GLSL.std.450 {}({}) is undefined: \"Result is undefined if {}\"",
            self.function,
            self.operands.join(", "),
            self.condition
        )
    }
}

/// Whether instruction `inst` has a domain the checks know (lowering emits checks for these).
pub fn has_domain(inst: u32) -> bool {
    G::from_u32(inst).is_some_and(domain_name)
}

fn domain_name(g: G) -> bool {
    matches!(
        g,
        G::Sqrt
            | G::InverseSqrt
            | G::Log
            | G::Log2
            | G::Pow
            | G::Asin
            | G::Acos
            | G::Acosh
            | G::Atanh
            | G::Atan2
            | G::FClamp
            | G::UClamp
            | G::SClamp
            | G::SmoothStep
    )
}

/// The spec's condition when instruction `g` on operands `args` (bit patterns of width `bits`)
/// has an undefined result; `None` when it is defined (NaN operands are: no bound holds).
pub fn undefined(g: G, bits: u32, args: &[u64; 3]) -> Option<&'static str> {
    let f = |i: usize| to_f64(bits, args[i]);
    let s = |i: usize| crate::semantics::sign_extend(bits, args[i]);
    let u = |i: usize| args[i] & crate::semantics::mask(bits);
    let when = |c: bool, why: &'static str| c.then_some(why);
    match g {
        // "Result is undefined if x < 0."
        G::Sqrt => when(f(0) < 0.0, "x < 0"),
        // "Result is undefined if x ≤ 0."
        G::InverseSqrt | G::Log | G::Log2 => when(f(0) <= 0.0, "x <= 0"),
        // "Result is undefined if x < 0. Result is undefined if x = 0 and y ≤ 0."
        G::Pow => {
            when(f(0) < 0.0, "x < 0").or(when(f(0) == 0.0 && f(1) <= 0.0, "x = 0 and y <= 0"))
        }
        // "Result is undefined if |x| > 1."
        G::Asin | G::Acos => when(f(0).abs() > 1.0, "|x| > 1"),
        // "Result is undefined if x < 1."
        G::Acosh => when(f(0) < 1.0, "x < 1"),
        // "Result is undefined if |x| ≥ 1."
        G::Atanh => when(f(0).abs() >= 1.0, "|x| >= 1"),
        // "Result is undefined if x and y are both 0."
        G::Atan2 => when(f(0) == 0.0 && f(1) == 0.0, "x and y are both 0"),
        // "Result is undefined if minVal > maxVal."
        G::FClamp => when(f(1) > f(2), "minVal > maxVal"),
        G::UClamp => when(u(1) > u(2), "minVal > maxVal"),
        G::SClamp => when(s(1) > s(2), "minVal > maxVal"),
        // "Result is undefined if edge0 ≥ edge1."
        G::SmoothStep => when(f(0) >= f(1), "edge0 >= edge1"),
        _ => None,
    }
}

/// Runs an `Op::CheckDomain` for the lanes in `mask`; `false` for other ops.
pub fn exec_check(
    op: &Op,
    regs: &[u64],
    n: usize,
    mask: u128,
    found: &mut Vec<LaneFinding>,
) -> bool {
    let Op::CheckDomain {
        inst,
        bits,
        args,
        argc,
    } = op
    else {
        return false;
    };
    let Some(g) = G::from_u32(*inst) else {
        return true;
    };
    let int = matches!(g, G::UClamp | G::SClamp);
    for l in bits_of(mask, n) {
        let mut v = [0u64; 3];
        for (i, a) in args.iter().take(*argc as usize).enumerate() {
            v[i] = rd(regs, n, *a, l);
        }
        if let Some(condition) = undefined(g, *bits, &v) {
            let operands = v
                .iter()
                .take(*argc as usize)
                .map(|&x| {
                    if !int {
                        format!("{}", to_f64(*bits, x))
                    } else if g == G::SClamp {
                        format!("{}", crate::semantics::sign_extend(*bits, x))
                    } else {
                        format!("{x}")
                    }
                })
                .collect();
            found.push((
                l,
                Finding::Domain(DomainFinding {
                    function: name(g),
                    condition,
                    operands,
                }),
            ));
        }
    }
    true
}

fn name(g: G) -> &'static str {
    match g {
        G::Sqrt => "Sqrt",
        G::InverseSqrt => "InverseSqrt",
        G::Log => "Log",
        G::Log2 => "Log2",
        G::Pow => "Pow",
        G::Asin => "Asin",
        G::Acos => "Acos",
        G::Acosh => "Acosh",
        G::Atanh => "Atanh",
        G::Atan2 => "Atan2",
        G::FClamp => "FClamp",
        G::UClamp => "UClamp",
        G::SClamp => "SClamp",
        G::SmoothStep => "SmoothStep",
        _ => "?",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(x: &[f32]) -> [u64; 3] {
        let mut v = [0u64; 3];
        for (i, x) in x.iter().enumerate() {
            v[i] = u64::from(x.to_bits());
        }
        v
    }

    /// Against the spec's conditions written out in f32, on a grid of edge values.
    #[test]
    fn conditions_match_a_plain_reference() {
        let grid = [
            f32::NEG_INFINITY,
            -2.0,
            -1.0,
            -0.5,
            -0.0,
            0.0,
            0.5,
            1.0,
            2.0,
            f32::INFINITY,
            f32::NAN,
        ];
        for &x in &grid {
            for &y in &grid {
                let a = f32s(&[x, y]);
                let r = |g| undefined(g, 32, &a).is_some();
                assert_eq!(r(G::Sqrt), x < 0.0, "{x}");
                assert_eq!(r(G::Log), x <= 0.0, "{x}");
                assert_eq!(r(G::InverseSqrt), x <= 0.0, "{x}");
                assert_eq!(r(G::Pow), x < 0.0 || (x == 0.0 && y <= 0.0), "{x} {y}");
                assert_eq!(r(G::Asin), x.abs() > 1.0, "{x}");
                assert_eq!(r(G::Acosh), x < 1.0, "{x}");
                assert_eq!(r(G::Atanh), x.abs() >= 1.0, "{x}");
                assert_eq!(r(G::Atan2), x == 0.0 && y == 0.0, "{x} {y}");
                assert_eq!(r(G::SmoothStep), x >= y, "{x} {y}");
                assert!(!r(G::Exp) && !r(G::Sin));
            }
        }
        assert!(undefined(G::SClamp, 32, &[0, 1, u64::from(u32::MAX)]).is_some());
        assert!(undefined(G::UClamp, 32, &[0, 1, u64::from(u32::MAX)]).is_none());
        assert!(has_domain(G::Sqrt as u32) && !has_domain(G::Exp as u32));
    }
}
