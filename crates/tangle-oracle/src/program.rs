//! The random program AST: structured control flow over one subgroup's lanes that records
//! `subgroupBallot(true)` results and constants into per-invocation output slots (the design of
//! the Vulkan CTS `reconvergence.maximal` tests, `shared/notes/cts-tests.md` §1, rewritten as a
//! tree).

/// A whole program: the body of `main` and the bodies of the functions it may call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    /// The body of `main`.
    pub main: Vec<Stmt>,
    /// Function bodies; `Stmt::Call(i)` calls `funcs[i]`. Functions call nothing.
    pub funcs: Vec<Vec<Stmt>>,
}

/// A statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stmt {
    /// Writes `subgroupBallot(true)` to the invocation's next slot.
    Ballot,
    /// Writes `uvec4(value, 0, 0, 0)` to the invocation's next slot.
    Store(u32),
    /// `if (cond) { then } else { otherwise }` (no `else` when `otherwise` is `None`).
    If {
        cond: Cond,
        then: Vec<Stmt>,
        otherwise: Option<Vec<Stmt>>,
    },
    /// A loop; its counter is `loopIdx<depth>` where `depth` counts the enclosing loops of
    /// the current function.
    Loop { kind: LoopKind, body: Vec<Stmt> },
    /// `break;` out of the innermost loop or switch.
    Break,
    /// `continue;` in the innermost loop (never an infinite loop).
    Continue,
    /// `return;` from the current function (from `main`: the invocation ends).
    Return,
    /// `switch (selector) { case v: { body; break; } ... }`.
    Switch {
        selector: Selector,
        cases: Vec<Case>,
    },
    /// Calls `funcs[i]` (only from `main`).
    Call(usize),
    /// `while (!subgroupElect()) {}`: each iteration lets the lowest lane out; writes nothing
    /// (the CTS "noise" op), but every lane must rejoin at the loop merge.
    ElectSpin,
}

/// A condition of an `if`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cond {
    /// Bit `gl_SubgroupInvocationID` of a 128-bit lane mask.
    LaneMask(u128),
    /// `inputA.a[index] == value`, where the input buffer holds `a[i] = i`: uniform.
    Uniform { index: u32, value: u32 },
    /// `gl_LocalInvocationIndex >= bound`.
    LocalIndexAtLeast(u32),
    /// `gl_SubgroupInvocationID % modulus == loopIdx<depth> % modulus`, over the counter of an
    /// enclosing loop of the current function.
    LoopCount { depth: u32, modulus: u32 },
    /// `subgroupElect()`.
    Elect,
    /// `(a && b)` or `(a || b)` of two conditions that are not `Elect` (glslang may compile
    /// them to short-circuit branches; the value is the same either way).
    Pair { a: Simple, b: Simple, and: bool },
}

/// A condition without `subgroupElect()`, for [`Cond::Pair`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Simple {
    /// As [`Cond::LaneMask`].
    LaneMask(u128),
    /// As [`Cond::Uniform`].
    Uniform { index: u32, value: u32 },
    /// As [`Cond::LocalIndexAtLeast`].
    LocalIndexAtLeast(u32),
}

/// The kinds of loop. `test_ballot` puts a ballot in the loop test (`for`: the header's
/// condition, run once more by the invocations that leave; `do`-`while`: the condition in the
/// continue construct), as a comma expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoopKind {
    /// `for (i = 0; i < a[count]; i++)`: `count` (0..=4) iterations for every invocation.
    ForUniform { count: u32, test_ballot: bool },
    /// `for (i = 0; i < (gl_SubgroupInvocationID + offset) % 5; i++)`: 0..=4 iterations,
    /// different per lane.
    ForVarying { offset: u32, test_ballot: bool },
    /// `for (i = 0; i < gl_SubgroupInvocationID + 1; i++)`: lane l runs l + 1 iterations.
    ForLane { test_ballot: bool },
    /// `for (i = 0; ; i++, ballot?)`: ends only through break or return; the body holds an
    /// elect-guarded exit. `continue_ballot` puts a ballot in the continue construct.
    ForInfinite { continue_ballot: bool },
    /// `do { ... } while (++i < a[count])`: `max(count, 1)` iterations (count in 1..=4).
    DoWhileUniform { count: u32, test_ballot: bool },
    /// `do { ... } while (++i > 0)`: ends only through break or return.
    DoWhileInfinite,
}

impl LoopKind {
    /// Whether the loop ends only through break or return (so `continue` is never generated
    /// in it: an invocation that always continues would never reach the elect-guarded exit).
    pub fn is_infinite(self) -> bool {
        matches!(
            self,
            LoopKind::ForInfinite { .. } | LoopKind::DoWhileInfinite
        )
    }
}

/// The selector of a switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Selector {
    /// `inputA.a[index]` (= `index`): uniform.
    Uniform { index: u32 },
    /// `gl_SubgroupInvocationID % modulus`: varying.
    Lane { modulus: u32 },
    /// `loopIdx<depth>`: uniform within one loop iteration.
    LoopCount { depth: u32 },
}

/// One case construct of a switch: a single literal (or `default`) and a body ending in `break`.
/// One literal per case construct keeps the grouping of selector values fixed (several
/// literals for one construct are implementation-defined, issue 1 of the extension).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Case {
    /// The literal; `None` is `default`.
    pub value: Option<u32>,
    /// The body.
    pub body: Vec<Stmt>,
}
