//! The seeded generator of random [`Program`]s: nested ifs (lane masks, local invocation
//! indices, uniform values, loop counters, elect), uniform / varying / infinite loops with break,
//! continue and elect-guarded exits, returns, switches on uniform and varying selectors, and one
//! level of calls. The same `(seed, depth)` always gives the same program.

use crate::program::{Case, Cond, LoopKind, Program, Selector, Simple, Stmt};

/// SplitMix64: a small fixed-seed random source.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x5eed_0f7a_4e1e)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A value in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u32) -> u32 {
        if n == 0 {
            0
        } else {
            (self.next_u64() % u64::from(n)) as u32
        }
    }

    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: u32) -> bool {
        self.below(100) < percent
    }
}

/// Generates the program of `seed` with constructs nested at most `depth` deep (2..=6 in the
/// tests).
pub fn generate(seed: u64, depth: u32) -> Program {
    let mut g = Gen {
        rng: Rng::new(seed),
        max_depth: depth.max(1),
        budget: 14 + 3 * depth as i32,
        funcs: Vec::new(),
        short_funcs: Vec::new(),
        next_value: 0x10000,
    };
    let ctx = Ctx::default();
    let mut main = g.block(&ctx, 4);
    if main.is_empty() || g.rng.chance(70) {
        main.push(Stmt::Ballot);
    }
    Program {
        main,
        funcs: g.funcs,
    }
}

/// What encloses the statement being generated.
#[derive(Debug, Clone, Default)]
struct Ctx {
    /// Construct nesting depth.
    nesting: u32,
    /// The loops of the current function, outermost first.
    loops: Vec<LoopKind>,
    /// The innermost breakable construct is a switch (a `break` leaves the switch).
    in_switch: bool,
    /// In a called function (a `return` rejoins after the call).
    in_func: bool,
    /// Inside an infinite loop or a `ForLane` loop, which may run up to 128 iterations (no
    /// second long loop is nested in one: trip counts multiply).
    in_infinite: bool,
}

struct Gen {
    rng: Rng,
    max_depth: u32,
    /// Compound statements left to generate: keeps programs small.
    budget: i32,
    funcs: Vec<Vec<Stmt>>,
    /// The functions generated inside a long loop (so without long loops of their own).
    short_funcs: Vec<usize>,
    next_value: u32,
}

impl Gen {
    /// A block of up to `n` statements, interleaved with ballots and stores.
    fn block(&mut self, ctx: &Ctx, n: u32) -> Vec<Stmt> {
        let mut out = Vec::new();
        let count = 1 + self.rng.below(n.max(1));
        for _ in 0..count {
            self.record(&mut out);
            out.push(self.stmt(ctx));
        }
        self.record(&mut out);
        out
    }

    /// Maybe a ballot and maybe a store.
    fn record(&mut self, out: &mut Vec<Stmt>) {
        if self.rng.chance(45) && out.last() != Some(&Stmt::Ballot) {
            out.push(Stmt::Ballot);
        }
        if self.rng.chance(12) {
            self.next_value += 1;
            out.push(Stmt::Store(self.next_value));
        }
    }

    fn stmt(&mut self, ctx: &Ctx) -> Stmt {
        let compound = ctx.nesting < self.max_depth && self.budget > 0;
        let pick = if compound {
            self.rng.below(14)
        } else {
            10 + self.rng.below(5)
        };
        match pick {
            0..=3 => self.if_stmt(ctx),
            4..=6 if ctx.loops.len() < 3 => self.loop_stmt(ctx),
            7 | 8 => self.switch_stmt(ctx),
            9 if !ctx.in_func && ctx.nesting + 1 < self.max_depth => self.call(ctx),
            10 if Self::can_break(ctx) => self.divergent(ctx, Stmt::Break),
            11 if Self::can_continue(ctx) => self.divergent(ctx, Stmt::Continue),
            12 if ctx.nesting > 0 && (ctx.in_func || self.rng.chance(30)) => {
                self.divergent(ctx, Stmt::Return)
            }
            13 if self.rng.chance(10) => Stmt::ElectSpin,
            _ => Stmt::Ballot,
        }
    }

    fn can_break(ctx: &Ctx) -> bool {
        ctx.in_switch || !ctx.loops.is_empty()
    }

    fn can_continue(ctx: &Ctx) -> bool {
        ctx.loops.last().is_some_and(|k| !k.is_infinite())
    }

    /// An escape, usually under a divergent condition so that it is not dead code after it.
    fn divergent(&mut self, ctx: &Ctx, escape: Stmt) -> Stmt {
        if self.rng.chance(25) {
            return escape;
        }
        let cond = self.cond(ctx);
        let mut then = Vec::new();
        self.record(&mut then);
        then.push(escape.clone());
        let otherwise = if self.rng.chance(15) {
            Some(vec![Stmt::Ballot, escape])
        } else {
            None
        };
        Stmt::If {
            cond,
            then,
            otherwise,
        }
    }

    fn inner(&self, ctx: &Ctx) -> Ctx {
        Ctx {
            nesting: ctx.nesting + 1,
            ..ctx.clone()
        }
    }

    fn cond(&mut self, ctx: &Ctx) -> Cond {
        loop {
            return match self.rng.below(6) {
                0 | 1 => {
                    let m = u128::from(self.rng.next_u64()) | u128::from(self.rng.next_u64()) << 64;
                    Cond::LaneMask(m)
                }
                2 => {
                    let index = self.rng.below(8);
                    let value = if self.rng.chance(60) {
                        index
                    } else {
                        self.rng.below(8)
                    };
                    Cond::Uniform { index, value }
                }
                3 => Cond::LocalIndexAtLeast(self.rng.below(200)),
                4 if !ctx.loops.is_empty() => Cond::LoopCount {
                    depth: self.rng.below(ctx.loops.len() as u32),
                    modulus: 2 + self.rng.below(3),
                },
                5 => {
                    if self.rng.chance(70) {
                        Cond::Elect
                    } else {
                        Cond::Pair {
                            a: self.simple(),
                            b: self.simple(),
                            and: self.rng.chance(50),
                        }
                    }
                }
                _ => continue,
            };
        }
    }

    fn simple(&mut self) -> Simple {
        match self.rng.below(3) {
            0 => Simple::LaneMask(
                u128::from(self.rng.next_u64()) | u128::from(self.rng.next_u64()) << 64,
            ),
            1 => {
                let index = self.rng.below(8);
                Simple::Uniform {
                    index,
                    value: if self.rng.chance(60) {
                        index
                    } else {
                        self.rng.below(8)
                    },
                }
            }
            _ => Simple::LocalIndexAtLeast(self.rng.below(200)),
        }
    }

    fn if_stmt(&mut self, ctx: &Ctx) -> Stmt {
        self.budget -= 1;
        let cond = self.cond(ctx);
        let inner = self.inner(ctx);
        let then = self.block(&inner, 2);
        let otherwise = if self.rng.chance(45) {
            Some(self.block(&inner, 2))
        } else {
            None
        };
        Stmt::If {
            cond,
            then,
            otherwise,
        }
    }

    fn loop_stmt(&mut self, ctx: &Ctx) -> Stmt {
        self.budget -= 1;
        let test_ballot = self.rng.chance(25);
        let kind = match self.rng.below(6) {
            0 => LoopKind::ForUniform {
                count: self.rng.below(5),
                test_ballot,
            },
            1 => LoopKind::ForVarying {
                offset: self.rng.below(5),
                test_ballot,
            },
            2 if !ctx.in_infinite => LoopKind::ForInfinite {
                continue_ballot: test_ballot,
            },
            3 if !ctx.in_infinite => LoopKind::DoWhileInfinite,
            4 if !ctx.in_infinite && self.rng.chance(50) => LoopKind::ForLane { test_ballot },
            _ => LoopKind::DoWhileUniform {
                count: 1 + self.rng.below(4),
                test_ballot,
            },
        };
        let mut inner = self.inner(ctx);
        inner.loops.push(kind);
        inner.in_switch = false;
        inner.in_infinite |= matches!(kind, LoopKind::ForLane { .. });
        let body = if kind.is_infinite() {
            inner.in_infinite = true;
            // before; if (subgroupElect()) { ...; break or return; } after
            let mut body = self.block(&inner, 2);
            let mut exit = Vec::new();
            self.record(&mut exit);
            if self.rng.chance(20) {
                let deeper = self.inner(&inner);
                exit.extend(self.block(&deeper, 1));
            }
            self.record(&mut exit);
            exit.push(if ctx.in_func && self.rng.chance(30) {
                Stmt::Return
            } else {
                Stmt::Break
            });
            body.push(Stmt::If {
                cond: Cond::Elect,
                then: exit,
                otherwise: None,
            });
            if self.rng.chance(60) {
                body.extend(self.block(&inner, 1));
            }
            body
        } else {
            self.block(&inner, 2)
        };
        Stmt::Loop { kind, body }
    }

    fn switch_stmt(&mut self, ctx: &Ctx) -> Stmt {
        self.budget -= 1;
        let selector = match self.rng.below(3) {
            0 => Selector::Uniform {
                index: self.rng.below(5),
            },
            1 if !ctx.loops.is_empty() => Selector::LoopCount {
                depth: self.rng.below(ctx.loops.len() as u32),
            },
            _ => Selector::Lane {
                modulus: 2 + self.rng.below(3),
            },
        };
        let mut inner = self.inner(ctx);
        inner.in_switch = true;
        let n = 1 + self.rng.below(3);
        let mut values: Vec<u32> = Vec::new();
        let mut cases = Vec::new();
        for _ in 0..n {
            let v = self.rng.below(5);
            if values.contains(&v) {
                continue;
            }
            values.push(v);
            cases.push(Case {
                value: Some(v),
                body: self.block(&inner, 1),
            });
        }
        if self.rng.chance(40) {
            let at = self.rng.below(cases.len() as u32 + 1) as usize;
            let body = self.block(&inner, 1);
            cases.insert(at.min(cases.len()), Case { value: None, body });
        }
        Stmt::Switch { selector, cases }
    }

    /// A call of a new function, or of one already called elsewhere (at most two functions):
    /// the tangles of different call sites never merge inside the callee, as no related
    /// instance joins them. A function with long loops is not called inside a long loop.
    fn call(&mut self, ctx: &Ctx) -> Stmt {
        let reusable: Vec<usize> = (0..self.funcs.len())
            .filter(|&i| !ctx.in_infinite || self.short_funcs.contains(&i))
            .collect();
        if !reusable.is_empty() && (self.funcs.len() >= 2 || self.rng.chance(40)) {
            let pick = self.rng.below(reusable.len() as u32) as usize;
            return reusable.get(pick).map_or(Stmt::Ballot, |&i| Stmt::Call(i));
        }
        if self.funcs.len() >= 2 {
            return Stmt::Ballot;
        }
        if ctx.in_infinite {
            self.short_funcs.push(self.funcs.len());
        }
        self.budget -= 1;
        let inner = Ctx {
            nesting: ctx.nesting + 1,
            loops: Vec::new(),
            in_switch: false,
            in_func: true,
            in_infinite: ctx.in_infinite,
        };
        let body = self.block(&inner, 3);
        self.funcs.push(body);
        Stmt::Call(self.funcs.len() - 1)
    }
}
