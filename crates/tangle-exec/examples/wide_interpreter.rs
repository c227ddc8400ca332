//! The prototype behind `docs/executor.md`: how fast can an *interpreter* run `alu_hash` and
//! `saxpy` if it has the shape issue 14 proposes — typed 32-bit lane registers, one decoded op
//! dispatched once per batch of `W` lanes, uniform values held once, full-mask loops with no
//! per-lane branching, contiguous loads and stores proven by one check — before the real executor
//! is rebuilt around it. It is a measurement, not part of tangle: the programs are hand-lowered
//! from `bench/alu_hash.comp` and `bench/saxpy.comp` exactly as tangle's lowering emits them
//! (`Op`s per block, the loop counter as a value), and the results are checked against plain
//! Rust before any rate is printed.
//!
//! `cargo run --release -p tangle-exec --example wide_interpreter` prints, per batch width, the
//! rate on one thread and the ratio to plain Rust on one thread; compare with `tangle bench
//! --threads 1` (lavapipe with `LP_NUM_THREADS=1`) on the same machine.

use std::time::Instant;

/// An operand: a register of lanes, or a uniform register (one value for the whole batch).
#[derive(Clone, Copy)]
enum V {
    Lanes(usize),
    Uniform(usize),
}

/// The binary operations the two shaders need, on 32-bit values (floats as their bits).
#[derive(Clone, Copy)]
enum Bin {
    Add,
    Mul,
    Xor,
    Shl,
    Shr,
    FAdd,
    FMul,
}

/// One decoded op.
enum Op {
    /// Lane register `d` = `a op b`.
    Lanes { op: Bin, d: usize, a: V, b: V },
    /// Uniform register `d` = `a op b` (lowering proved both uniform).
    Uniform {
        op: Bin,
        d: usize,
        a: usize,
        b: usize,
    },
    /// Lane register `d` = the batch's first invocation index + lane.
    GlobalId { d: usize },
    /// Uniform register `d` = push constant word `word`.
    Push { d: usize, word: usize },
    /// Lane mask register `d` = `a < b` unsigned.
    LessLanes { d: usize, a: V, b: V },
    /// Uniform `d` = `a < b` unsigned (as 0/1).
    LessUniform { d: usize, a: usize, b: usize },
    /// Lane register `d` = buffer `buf` at the lanes' indices in `index`.
    Load { d: usize, buf: usize, index: usize },
    /// Buffer `buf` at the lanes' indices in `index` = lane register `src`.
    Store {
        buf: usize,
        index: usize,
        src: usize,
    },
}

/// How a block ends.
enum Term {
    Jump(usize),
    /// On a uniform condition: one branch for the whole batch.
    IfUniform {
        cond: usize,
        then: usize,
        other: usize,
    },
    /// On a lane condition: `then` runs for the lanes where it holds, then `merge`.
    IfLanes {
        cond: usize,
        then: usize,
        merge: usize,
    },
    Return,
}

struct Block {
    ops: Vec<Op>,
    term: Term,
}

/// The batch state: lane registers (each `W` values), uniform registers and the active mask.
struct Batch {
    lanes: Vec<Vec<u32>>,
    uniform: Vec<u32>,
    first: u32,
    /// Lanes that exist (the last batch of a dispatch may be partial).
    count: usize,
}

fn apply(op: Bin, x: u32, y: u32) -> u32 {
    match op {
        Bin::Add => x.wrapping_add(y),
        Bin::Mul => x.wrapping_mul(y),
        Bin::Xor => x ^ y,
        Bin::Shl => x.wrapping_shl(y),
        Bin::Shr => x.wrapping_shr(y),
        Bin::FAdd => (f32::from_bits(x) + f32::from_bits(y)).to_bits(),
        Bin::FMul => (f32::from_bits(x) * f32::from_bits(y)).to_bits(),
    }
}

/// Where a lane operand comes from: another register, one uniform value, or the destination's
/// own old value (`x ^= y` updates in place).
#[derive(Clone, Copy)]
enum Src<'a> {
    Slice(&'a [u32]),
    Splat(u32),
    Dst,
}

/// `d = a op b` over lanes, with `op` hoisted out of the loop (one loop per operation and operand
/// shape, so each is a straight vectorisable loop); the masked form keeps inactive lanes.
#[inline(always)]
fn lanes(op: Bin, d: &mut [u32], a: Src, b: Src, mask: Option<&[bool]>) {
    macro_rules! each {
        ($f:expr) => {{
            let f = $f;
            if let Some(m) = mask {
                for l in 0..d.len() {
                    let get = |s: Src, d: &[u32]| match s {
                        Src::Slice(x) => x[l],
                        Src::Splat(u) => u,
                        Src::Dst => d[l],
                    };
                    if m[l] {
                        d[l] = f(get(a, d), get(b, d));
                    }
                }
                return;
            }
            match (a, b) {
                (Src::Slice(a), Src::Slice(b)) => d
                    .iter_mut()
                    .zip(a)
                    .zip(b)
                    .for_each(|((d, a), b)| *d = f(*a, *b)),
                (Src::Slice(a), Src::Splat(u)) => {
                    d.iter_mut().zip(a).for_each(|(d, a)| *d = f(*a, u))
                }
                (Src::Splat(u), Src::Slice(b)) => {
                    d.iter_mut().zip(b).for_each(|(d, b)| *d = f(u, *b))
                }
                (Src::Dst, Src::Slice(b)) => d.iter_mut().zip(b).for_each(|(d, b)| *d = f(*d, *b)),
                (Src::Dst, Src::Splat(u)) => d.iter_mut().for_each(|d| *d = f(*d, u)),
                (Src::Slice(a), Src::Dst) => d.iter_mut().zip(a).for_each(|(d, a)| *d = f(*a, *d)),
                (Src::Splat(u), Src::Dst) => d.iter_mut().for_each(|d| *d = f(u, *d)),
                (Src::Dst, Src::Dst) => d.iter_mut().for_each(|d| *d = f(*d, *d)),
                (Src::Splat(u), Src::Splat(v)) => d.fill(f(u, v)),
            }
        }};
    }
    match op {
        Bin::Add => each!(|x: u32, y: u32| x.wrapping_add(y)),
        Bin::Mul => each!(|x: u32, y: u32| x.wrapping_mul(y)),
        Bin::Xor => each!(|x: u32, y: u32| x ^ y),
        Bin::Shl => each!(|x: u32, y: u32| x.wrapping_shl(y)),
        Bin::Shr => each!(|x: u32, y: u32| x.wrapping_shr(y)),
        Bin::FAdd => each!(|x: u32, y: u32| (f32::from_bits(x) + f32::from_bits(y)).to_bits()),
        Bin::FMul => each!(|x: u32, y: u32| (f32::from_bits(x) * f32::from_bits(y)).to_bits()),
    }
}

/// Runs one op for the batch; `mask` is `None` when every lane is active.
#[inline(always)]
fn exec(op: &Op, s: &mut Batch, push: &[u32], bufs: &mut [Vec<u32>], mask: Option<&[bool]>) {
    let w = s.count;
    match *op {
        Op::Lanes { op, d, a, b } => {
            // Take the destination out so the sources can be borrowed beside it.
            let mut out = std::mem::take(&mut s.lanes[d]);
            let src = |v: V| match v {
                V::Lanes(r) if r == d => Src::Dst,
                V::Lanes(r) => Src::Slice(&s.lanes[r][..w]),
                V::Uniform(u) => Src::Splat(s.uniform[u]),
            };
            lanes(op, &mut out[..w], src(a), src(b), mask);
            s.lanes[d] = out;
        }
        Op::Uniform { op, d, a, b } => s.uniform[d] = apply(op, s.uniform[a], s.uniform[b]),
        Op::GlobalId { d } => {
            let first = s.first;
            for (l, x) in s.lanes[d][..w].iter_mut().enumerate() {
                *x = first + l as u32;
            }
        }
        Op::Push { d, word } => s.uniform[d] = push[word],
        Op::LessUniform { d, a, b } => s.uniform[d] = u32::from(s.uniform[a] < s.uniform[b]),
        Op::LessLanes { d, a, b } => {
            let get = |v: V, l: usize, s: &Batch| match v {
                V::Lanes(r) => s.lanes[r][l],
                V::Uniform(u) => s.uniform[u],
            };
            let out: Vec<u32> = (0..w)
                .map(|l| u32::from(get(a, l, s) < get(b, l, s)))
                .collect();
            s.lanes[d][..w].copy_from_slice(&out);
        }
        Op::Load { d, buf, index } => {
            let mut out = std::mem::take(&mut s.lanes[d]);
            let idx = &s.lanes[index][..w];
            let base = idx[0] as usize;
            let contiguous = idx.iter().enumerate().all(|(l, &i)| i as usize == base + l);
            let b = &bufs[buf];
            match (contiguous && base + w <= b.len(), mask) {
                (true, None) => out[..w].copy_from_slice(&b[base..base + w]),
                _ => {
                    for l in 0..w {
                        if mask.is_none_or(|m| m[l]) {
                            out[l] = b.get(idx[l] as usize).copied().unwrap_or(0);
                        }
                    }
                }
            }
            s.lanes[d] = out;
        }
        Op::Store { buf, index, src } => {
            let idx = &s.lanes[index][..w];
            let base = idx[0] as usize;
            let contiguous = idx.iter().enumerate().all(|(l, &i)| i as usize == base + l);
            let b = &mut bufs[buf];
            let v = &s.lanes[src][..w];
            match (contiguous && base + w <= b.len(), mask) {
                (true, None) => b[base..base + w].copy_from_slice(v),
                _ => {
                    for l in 0..w {
                        if mask.is_none_or(|m| m[l]) {
                            if let Some(x) = b.get_mut(idx[l] as usize) {
                                *x = v[l];
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Runs the program for one batch of `count` invocations starting at `first`.
fn run_batch(
    prog: &[Block],
    regs: (usize, usize),
    first: u32,
    count: usize,
    w: usize,
    push: &[u32],
    bufs: &mut [Vec<u32>],
) {
    let mut s = Batch {
        lanes: vec![vec![0; w]; regs.0],
        uniform: vec![0; regs.1],
        first,
        count,
    };
    let mut block = 0;
    // The mask of an `IfLanes` region, and where it merges.
    let mut region: Option<(Vec<bool>, usize)> = None;
    loop {
        if let Some((_, merge)) = &region {
            if *merge == block {
                region = None;
            }
        }
        let b = &prog[block];
        let mask = region.as_ref().map(|(m, _)| &m[..]);
        for op in &b.ops {
            exec(op, &mut s, push, bufs, mask);
        }
        match b.term {
            Term::Jump(t) => block = t,
            Term::IfUniform { cond, then, other } => {
                block = if s.uniform[cond] != 0 { then } else { other }
            }
            Term::IfLanes { cond, then, merge } => {
                let m: Vec<bool> = s.lanes[cond][..count].iter().map(|&c| c != 0).collect();
                let all = m.iter().all(|&x| x);
                let none = !m.iter().any(|&x| x);
                if none {
                    block = merge;
                } else {
                    if !all {
                        region = Some((m, merge));
                    }
                    block = then;
                }
            }
            Term::Return => return,
        }
    }
}

/// Runs `n` invocations in batches of `w`; seconds taken.
fn run(
    prog: &[Block],
    regs: (usize, usize),
    n: usize,
    w: usize,
    push: &[u32],
    bufs: &mut [Vec<u32>],
) -> f64 {
    let t = Instant::now();
    let mut first = 0;
    while first < n {
        let count = w.min(n - first);
        run_batch(prog, regs, first as u32, count, w, push, bufs);
        first += count;
    }
    t.elapsed().as_secs_f64()
}

/// `bench/alu_hash.comp` as tangle lowers it, with the loop counter and bound uniform.
fn alu_hash() -> (Vec<Block>, (usize, usize)) {
    use V::{Lanes as L, Uniform as U};
    // Lanes: 0 id, 1 x, 2 tmp. Uniforms: 0 k, 1 iters, 2 cond, 3.. constants.
    let (c_golden, c_one, c13, c_m, c7) = (3, 4, 5, 6, 7);
    let blocks = vec![
        Block {
            ops: vec![
                Op::GlobalId { d: 0 },
                Op::Lanes {
                    op: Bin::Mul,
                    d: 1,
                    a: L(0),
                    b: U(c_golden),
                },
                Op::Lanes {
                    op: Bin::Add,
                    d: 1,
                    a: L(1),
                    b: U(c_one),
                },
                Op::Push { d: 1, word: 0 },
                Op::Uniform {
                    op: Bin::Xor,
                    d: 0,
                    a: 0,
                    b: 0,
                },
            ],
            term: Term::Jump(1),
        },
        Block {
            ops: vec![Op::LessUniform { d: 2, a: 0, b: 1 }],
            term: Term::IfUniform {
                cond: 2,
                then: 2,
                other: 3,
            },
        },
        Block {
            ops: vec![
                Op::Lanes {
                    op: Bin::Shr,
                    d: 2,
                    a: L(1),
                    b: U(c13),
                },
                Op::Lanes {
                    op: Bin::Xor,
                    d: 1,
                    a: L(1),
                    b: L(2),
                },
                Op::Lanes {
                    op: Bin::Mul,
                    d: 1,
                    a: L(1),
                    b: U(c_m),
                },
                Op::Lanes {
                    op: Bin::Shl,
                    d: 2,
                    a: L(1),
                    b: U(c7),
                },
                Op::Lanes {
                    op: Bin::Xor,
                    d: 1,
                    a: L(1),
                    b: L(2),
                },
                Op::Lanes {
                    op: Bin::Add,
                    d: 1,
                    a: L(1),
                    b: U(0),
                },
                Op::Uniform {
                    op: Bin::Add,
                    d: 0,
                    a: 0,
                    b: c_one,
                },
            ],
            term: Term::Jump(1),
        },
        Block {
            ops: vec![Op::Store {
                buf: 0,
                index: 0,
                src: 1,
            }],
            term: Term::Return,
        },
    ];
    (blocks, (3, 8))
}

/// `bench/saxpy.comp`: `if (i < n) y[i] = a * x[i] + y[i]`.
fn saxpy() -> (Vec<Block>, (usize, usize)) {
    use V::{Lanes as L, Uniform as U};
    // Lanes: 0 i, 1 cond, 2 x, 3 y. Uniforms: 0 a, 1 n.
    let blocks = vec![
        Block {
            ops: vec![
                Op::GlobalId { d: 0 },
                Op::Push { d: 0, word: 0 },
                Op::Push { d: 1, word: 1 },
                Op::LessLanes {
                    d: 1,
                    a: L(0),
                    b: U(1),
                },
            ],
            term: Term::IfLanes {
                cond: 1,
                then: 1,
                merge: 2,
            },
        },
        Block {
            ops: vec![
                Op::Load {
                    d: 2,
                    buf: 0,
                    index: 0,
                },
                Op::Load {
                    d: 3,
                    buf: 1,
                    index: 0,
                },
                Op::Lanes {
                    op: Bin::FMul,
                    d: 2,
                    a: U(0),
                    b: L(2),
                },
                Op::Lanes {
                    op: Bin::FAdd,
                    d: 3,
                    a: L(2),
                    b: L(3),
                },
                Op::Store {
                    buf: 1,
                    index: 0,
                    src: 3,
                },
            ],
            term: Term::Jump(2),
        },
        Block {
            ops: vec![],
            term: Term::Return,
        },
    ];
    (blocks, (4, 2))
}

fn main() {
    let widths = [8usize, 32, 64, 128, 256, 512, 1024];
    // alu_hash at 1/16 of its standard size, one thread.
    let (n, iters) = (65536usize, 256u32);
    let hash = |i: u32| {
        let mut x = i.wrapping_mul(2_654_435_761).wrapping_add(1);
        for k in 0..iters {
            x ^= x >> 13;
            x = x.wrapping_mul(0x5bd1_e995);
            x ^= x << 7;
            x = x.wrapping_add(k);
        }
        x
    };
    let t = Instant::now();
    let expect: Vec<u32> = (0..n as u32).map(hash).collect();
    let rust = t.elapsed().as_secs_f64();
    let bodies = (n * iters as usize) as f64;
    println!(
        "alu_hash, {n} invocations x {iters}, one thread: plain Rust {:.0} M loop bodies/s",
        bodies / rust / 1e6
    );
    let (prog, regs) = alu_hash();
    let consts = [2_654_435_761u32, 1, 13, 0x5bd1_e995, 7];
    for &w in &widths {
        // The constants are uniform registers 3..8, set through push words 2.. (a prototype's shortcut).
        let mut p = vec![Block {
            ops: (0..5)
                .map(|i| Op::Push {
                    d: 3 + i,
                    word: 1 + i,
                })
                .collect(),
            term: Term::Jump(1),
        }];
        p.extend(prog.iter().map(|b| Block {
            ops: b.ops.iter().map(clone_op).collect(),
            term: shift_term(&b.term, 1),
        }));
        let mut push = vec![iters];
        push.extend(consts);
        let mut bufs = vec![vec![0u32; n]];
        let secs = run(&p, regs, n, w, &push, &mut bufs);
        assert_eq!(bufs[0], expect, "alu_hash at width {w}");
        println!(
            "  width {w:5}: {:8.0} M loop bodies/s  ({:.3}x plain Rust)",
            bodies / secs / 1e6,
            rust / secs
        );
    }
    // saxpy at 1/16 of its standard size.
    let n = 1usize << 20;
    let x: Vec<u32> = (0..n).map(|i| (i as f32 * 0.5).to_bits()).collect();
    let y: Vec<u32> = (0..n).map(|i| (1.0 - i as f32).to_bits()).collect();
    let a = 2.5f32;
    let t = Instant::now();
    let expect: Vec<u32> = x
        .iter()
        .zip(&y)
        .map(|(x, y)| (a * f32::from_bits(*x) + f32::from_bits(*y)).to_bits())
        .collect();
    let rust = t.elapsed().as_secs_f64();
    println!(
        "saxpy, n = {n}, one thread: plain Rust {:.2} GB/s",
        12.0 * n as f64 / rust / 1e9
    );
    let (prog, regs) = saxpy();
    for &w in &widths {
        let mut bufs = vec![x.clone(), y.clone()];
        let secs = run(
            &prog,
            regs,
            n - 3,
            w,
            &[a.to_bits(), (n - 3) as u32],
            &mut bufs,
        );
        assert_eq!(bufs[1][..n - 3], expect[..n - 3], "saxpy at width {w}");
        println!(
            "  width {w:5}: {:8.2} GB/s  ({:.3}x plain Rust)",
            12.0 * n as f64 / secs / 1e9,
            rust / secs
        );
    }
}

fn clone_op(op: &Op) -> Op {
    match *op {
        Op::Lanes { op, d, a, b } => Op::Lanes { op, d, a, b },
        Op::Uniform { op, d, a, b } => Op::Uniform { op, d, a, b },
        Op::GlobalId { d } => Op::GlobalId { d },
        Op::Push { d, word } => Op::Push { d, word },
        Op::LessLanes { d, a, b } => Op::LessLanes { d, a, b },
        Op::LessUniform { d, a, b } => Op::LessUniform { d, a, b },
        Op::Load { d, buf, index } => Op::Load { d, buf, index },
        Op::Store { buf, index, src } => Op::Store { buf, index, src },
    }
}

fn shift_term(t: &Term, by: usize) -> Term {
    match *t {
        Term::Jump(b) => Term::Jump(b + by),
        Term::IfUniform { cond, then, other } => Term::IfUniform {
            cond,
            then: then + by,
            other: other + by,
        },
        Term::IfLanes { cond, then, merge } => Term::IfLanes {
            cond,
            then: then + by,
            merge: merge + by,
        },
        Term::Return => Term::Return,
    }
}
