//! GLSL emission of a [`Program`]: a compute shader with `[[maximally_reconverges]]`
//! (`GL_EXT_maximal_reconvergence`) over three storage buffers, laid out like the CTS tests:
//! `inputA.a[i] = i` (set 0, binding 0), the slots `outputB.b[loc * N + id]` (binding 1) and the
//! per-invocation slot counters `outputC.loc[id]` (binding 2), where `N` is the workgroup size
//! and `id` is `gl_LocalInvocationIndex`.

use crate::program::{Case, Cond, LoopKind, Program, Selector, Simple, Stmt};
use std::fmt::Write;

/// The GLSL source of `program` for a one-dimensional workgroup of `invocations` invocations.
pub fn emit(program: &Program, invocations: u32) -> String {
    let mut e = Emitter {
        out: String::new(),
        n: invocations,
        indent: 1,
        loops: 0,
    };
    e.out.push_str(&prelude(invocations));
    for (i, f) in program.funcs.iter().enumerate() {
        let _ = writeln!(e.out, "void func{i}() {{");
        e.loops = 0;
        e.block(f);
        e.out.push_str("}\n\n");
    }
    e.out.push_str("void main() [[maximally_reconverges]] {\n");
    e.loops = 0;
    e.block(&program.main);
    e.out.push_str("}\n");
    e.out
}

/// The shader text before the functions: version, extensions, workgroup size, the buffers and
/// `testBit`.
pub fn prelude(invocations: u32) -> String {
    HEADER.replace("@N@", &invocations.to_string())
}

const HEADER: &str = "#version 450
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_KHR_shader_subgroup_ballot : enable
#extension GL_EXT_maximal_reconvergence : require
layout(local_size_x = @N@, local_size_y = 1, local_size_z = 1) in;
layout(set = 0, binding = 0, std430) buffer InputA { uint a[]; } inputA;
layout(set = 0, binding = 1, std430) buffer OutputB { uvec4 b[]; } outputB;
layout(set = 0, binding = 2, std430) buffer OutputC { uint loc[]; } outputC;

bool testBit(uvec4 m, uint bit) { return ((m[bit >> 5u] >> (bit & 31u)) & 1u) != 0u; }

";

struct Emitter {
    out: String,
    n: u32,
    indent: usize,
    /// Loops of the current function enclosing the statement being emitted.
    loops: u32,
}

impl Emitter {
    fn line(&mut self, s: &str) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
        self.out.push_str(s);
        self.out.push('\n');
    }

    fn slot(&self) -> String {
        format!(
            "outputB.b[outputC.loc[gl_LocalInvocationIndex]++ * {}u + gl_LocalInvocationIndex]",
            self.n
        )
    }

    fn block(&mut self, stmts: &[Stmt]) {
        for s in stmts {
            self.stmt(s);
        }
    }

    fn nested(&mut self, open: &str, body: &[Stmt], close: &str) {
        self.line(open);
        self.indent += 1;
        self.block(body);
        self.indent -= 1;
        self.line(close);
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Ballot => {
                let l = format!("{} = subgroupBallot(true);", self.slot());
                self.line(&l);
            }
            Stmt::Store(v) => {
                let l = format!("{} = uvec4(0x{v:x}u, 0u, 0u, 0u);", self.slot());
                self.line(&l);
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                let c = self.cond(cond);
                match otherwise {
                    None => self.nested(&format!("if ({c}) {{"), then, "}"),
                    Some(e) => {
                        self.nested(&format!("if ({c}) {{"), then, "} else {");
                        self.indent += 1;
                        self.block(e);
                        self.indent -= 1;
                        self.line("}");
                    }
                }
            }
            Stmt::Loop { kind, body } => self.looped(*kind, body),
            Stmt::Break => self.line("break;"),
            Stmt::Continue => self.line("continue;"),
            Stmt::Return => self.line("return;"),
            Stmt::Switch { selector, cases } => self.switch(selector, cases),
            Stmt::Call(i) => self.line(&format!("func{i}();")),
            Stmt::ElectSpin => self.line("while (!subgroupElect()) {}"),
        }
    }

    fn cond(&self, c: &Cond) -> String {
        match *c {
            Cond::LaneMask(m) => format!(
                "testBit(uvec4(0x{:x}u, 0x{:x}u, 0x{:x}u, 0x{:x}u), gl_SubgroupInvocationID)",
                m as u32,
                (m >> 32) as u32,
                (m >> 64) as u32,
                (m >> 96) as u32
            ),
            Cond::Uniform { index, value } => format!("inputA.a[{index}] == {value}u"),
            Cond::LocalIndexAtLeast(b) => format!("gl_LocalInvocationIndex >= {b}u"),
            Cond::LoopCount { depth, modulus } => {
                format!("gl_SubgroupInvocationID % {modulus}u == uint(loopIdx{depth}) % {modulus}u")
            }
            Cond::Elect => "subgroupElect()".to_string(),
            Cond::Pair { a, b, and } => {
                format!(
                    "({} {} {})",
                    self.cond(&a.into()),
                    if and { "&&" } else { "||" },
                    self.cond(&b.into())
                )
            }
        }
    }

    fn looped(&mut self, kind: LoopKind, body: &[Stmt]) {
        let d = self.loops;
        self.loops += 1;
        let i = format!("loopIdx{d}");
        let test = |t: bool| {
            if t {
                format!("{} = subgroupBallot(true), ", self.slot())
            } else {
                String::new()
            }
        };
        match kind {
            LoopKind::ForUniform { count, test_ballot } => {
                let t = test(test_ballot);
                self.nested(
                    &format!("for (int {i} = 0; ({t}{i} < int(inputA.a[{count}])); {i}++) {{"),
                    body,
                    "}",
                )
            }
            LoopKind::ForVarying {
                offset,
                test_ballot,
            } => {
                let t = test(test_ballot);
                let head = format!("for (int {i} = 0; ({t}{i} < int((gl_SubgroupInvocationID + {offset}u) % 5u)); {i}++) {{");
                self.nested(&head, body, "}")
            }
            LoopKind::ForLane { test_ballot } => {
                let t = test(test_ballot);
                self.nested(
                    &format!(
                        "for (int {i} = 0; ({t}{i} < int(gl_SubgroupInvocationID) + 1); {i}++) {{"
                    ),
                    body,
                    "}",
                )
            }
            LoopKind::ForInfinite { continue_ballot } => {
                let step = if continue_ballot {
                    format!("{i}++, {} = subgroupBallot(true)", self.slot())
                } else {
                    format!("{i}++")
                };
                self.nested(&format!("for (int {i} = 0; ; {step}) {{"), body, "}")
            }
            LoopKind::DoWhileUniform { count, test_ballot } => {
                let t = test(test_ballot);
                self.line("{");
                self.indent += 1;
                self.line(&format!("int {i} = 0;"));
                self.nested(
                    "do {",
                    body,
                    &format!("}} while (({t}++{i} < int(inputA.a[{count}])));"),
                );
                self.indent -= 1;
                self.line("}");
            }
            LoopKind::DoWhileInfinite => {
                self.line("{");
                self.indent += 1;
                self.line(&format!("int {i} = 0;"));
                self.nested("do {", body, &format!("}} while (++{i} > 0);"));
                self.indent -= 1;
                self.line("}");
            }
        }
        self.loops -= 1;
    }

    fn switch(&mut self, selector: &Selector, cases: &[Case]) {
        let sel = match *selector {
            Selector::Uniform { index } => format!("inputA.a[{index}]"),
            Selector::Lane { modulus } => format!("gl_SubgroupInvocationID % {modulus}u"),
            Selector::LoopCount { depth } => format!("uint(loopIdx{depth})"),
        };
        self.line(&format!("switch ({sel}) {{"));
        for c in cases {
            let label = match c.value {
                Some(v) => format!("case {v}u: {{"),
                None => "default: {".to_string(),
            };
            self.indent += 1;
            self.line(&label);
            self.indent += 1;
            self.block(&c.body);
            self.line("break;");
            self.indent -= 1;
            self.line("}");
            self.indent -= 1;
        }
        self.line("}");
    }
}

impl From<Simple> for Cond {
    fn from(s: Simple) -> Cond {
        match s {
            Simple::LaneMask(m) => Cond::LaneMask(m),
            Simple::Uniform { index, value } => Cond::Uniform { index, value },
            Simple::LocalIndexAtLeast(b) => Cond::LocalIndexAtLeast(b),
        }
    }
}
