//! Fuzz target: the executor's wide path (`tangle_exec::wide`) against its reference path,
//! differentially. The bytes drive a generator of structured SPIR-V compute shaders of the shape
//! the wide path takes (`wide/plan.rs`: 32-bit integer, float and boolean SSA arithmetic,
//! GLSL.std.450 calls, subgroup permutations (rotates, shuffles, broadcasts), packed 4x8-bit dot
//! products, nested `if`/`switch`/bounded loops with `OpPhi`, loads from a storage buffer at the
//! invocation's and at data-dependent indices, stores to another; no barriers, atomics,
//! Workgroup or Function memory, calls). Each valid module is
//! dispatched over several workgroups of 32 to 64 invocations with `RunOptions::wide` on and off
//! (one thread, small step limit, generous time limit, bounded memory): the bound buffers, the
//! findings and the errors must be the same. Divisions by zero, out-of-bounds loads and runaway
//! shapes make the wide path give the dispatch back, which the comparison covers too.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tangle_exec::{Device, Profile, Resources, RunOptions, SpecConstants};
use tangle_spirv::text::{assemble, AssembleOptions};
use tangle_spirv::TargetEnv;
use tangle_validate::{validate, ValidateOptions};

/// The fuzz bytes, read one at a time (0 once exhausted).
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((b, rest)) => {
                self.0 = rest;
                *b
            }
            None => 0,
        }
    }

    fn word(&mut self) -> u32 {
        u32::from_le_bytes([self.byte(), self.byte(), self.byte(), self.byte()])
    }

    fn done(&self) -> bool {
        self.0.is_empty()
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Ty {
    U,
    F,
    B,
}

/// Words per invocation of the output buffer.
const OUTS: u32 = 4;
/// Words of the input buffer a data-dependent load may reach (a power of two).
const WINDOW: u32 = 64;

/// The generator's state: the function body so far, the values in scope, the current block.
struct Gen<'a> {
    bytes: Bytes<'a>,
    body: String,
    pool: Vec<(Ty, String)>,
    next: u32,
    block: String,
    statements: u32,
}

impl Gen<'_> {
    fn id(&mut self, prefix: &str) -> String {
        self.next += 1;
        format!("%{prefix}{}", self.next)
    }

    fn emit(&mut self, line: &str) {
        self.body.push_str(line);
        self.body.push('\n');
    }

    fn label(&mut self, label: &str) {
        self.emit(&format!("{label} = OpLabel"));
        self.block = label.to_string();
    }

    /// A value of type `ty` in scope (one always exists: the constants).
    fn pick(&mut self, ty: Ty) -> String {
        let of: Vec<&String> = self
            .pool
            .iter()
            .filter(|(t, _)| *t == ty)
            .map(|(_, v)| v)
            .collect();
        let k = self.bytes.byte() as usize % of.len().max(1);
        of.get(k)
            .map_or_else(|| "%k0".to_string(), |v| (*v).clone())
    }

    fn define(&mut self, ty: Ty, rhs: &str) -> String {
        let v = self.id("v");
        self.emit(&format!("{v} = {rhs}"));
        self.pool.push((ty, v.clone()));
        v
    }

    /// One value-producing instruction.
    fn op(&mut self) {
        const U2: [&str; 14] = [
            "OpIAdd",
            "OpISub",
            "OpIMul",
            "OpUDiv",
            "OpSDiv",
            "OpUMod",
            "OpSRem",
            "OpSMod",
            "OpShiftLeftLogical",
            "OpShiftRightLogical",
            "OpShiftRightArithmetic",
            "OpBitwiseAnd",
            "OpBitwiseOr",
            "OpBitwiseXor",
        ];
        const U1: [&str; 4] = ["OpNot", "OpSNegate", "OpBitCount", "OpBitReverse"];
        const UX2: [&str; 4] = ["UMin", "UMax", "SMin", "SMax"];
        const UX1: [&str; 3] = ["SAbs", "FindUMsb", "FindILsb"];
        const F2: [&str; 6] = ["OpFAdd", "OpFSub", "OpFMul", "OpFDiv", "OpFRem", "OpFMod"];
        const FX1: [&str; 6] = ["FAbs", "Floor", "Ceil", "Fract", "Sqrt", "Trunc"];
        const FX2: [&str; 3] = ["FMin", "FMax", "Step"];
        const UCMP: [&str; 6] = [
            "OpIEqual",
            "OpINotEqual",
            "OpULessThan",
            "OpSLessThan",
            "OpUGreaterThanEqual",
            "OpSGreaterThan",
        ];
        const FCMP: [&str; 4] = [
            "OpFOrdLessThan",
            "OpFUnordNotEqual",
            "OpFOrdEqual",
            "OpFOrdGreaterThanEqual",
        ];
        let pick = |g: &mut Self, list: &[&'static str]| list[g.bytes.byte() as usize % list.len()];
        let rhs;
        let ty;
        match self.bytes.byte() % 18 {
            16 => return self.subgroup(),
            17 => return self.dot(),
            0..=3 => {
                let (o, a, b) = (pick(self, &U2), self.pick(Ty::U), self.pick(Ty::U));
                (ty, rhs) = (Ty::U, format!("{o} %uint {a} {b}"));
            }
            4 => {
                let (o, a) = (pick(self, &U1), self.pick(Ty::U));
                (ty, rhs) = (Ty::U, format!("{o} %uint {a}"));
            }
            5 => {
                let (o, a, b) = (pick(self, &UX2), self.pick(Ty::U), self.pick(Ty::U));
                (ty, rhs) = (Ty::U, format!("OpExtInst %uint %glsl {o} {a} {b}"));
            }
            6 => {
                let (o, a) = (pick(self, &UX1), self.pick(Ty::U));
                (ty, rhs) = (Ty::U, format!("OpExtInst %uint %glsl {o} {a}"));
            }
            7 => {
                let (c, a, b) = (self.pick(Ty::B), self.pick(Ty::U), self.pick(Ty::U));
                (ty, rhs) = (Ty::U, format!("OpSelect %uint {c} {a} {b}"));
            }
            8 => {
                let o = pick(self, &["OpConvertFToU", "OpBitcast", "OpConvertFToS"]);
                let a = self.pick(Ty::F);
                (ty, rhs) = (Ty::U, format!("{o} %uint {a}"));
            }
            9 => {
                let o = pick(self, &["OpConvertUToF", "OpBitcast", "OpConvertSToF"]);
                let a = self.pick(Ty::U);
                (ty, rhs) = (Ty::F, format!("{o} %float {a}"));
            }
            10 => {
                let (o, a, b) = (pick(self, &F2), self.pick(Ty::F), self.pick(Ty::F));
                (ty, rhs) = (Ty::F, format!("{o} %float {a} {b}"));
            }
            11 => {
                let (o, a) = (pick(self, &FX1), self.pick(Ty::F));
                (ty, rhs) = (Ty::F, format!("OpExtInst %float %glsl {o} {a}"));
            }
            12 => {
                let (o, a, b) = (pick(self, &FX2), self.pick(Ty::F), self.pick(Ty::F));
                (ty, rhs) = (Ty::F, format!("OpExtInst %float %glsl {o} {a} {b}"));
            }
            13 => {
                let (o, a, b) = (pick(self, &UCMP), self.pick(Ty::U), self.pick(Ty::U));
                (ty, rhs) = (Ty::B, format!("{o} %bool {a} {b}"));
            }
            14 => {
                let (o, a, b) = (pick(self, &FCMP), self.pick(Ty::F), self.pick(Ty::F));
                (ty, rhs) = (Ty::B, format!("{o} %bool {a} {b}"));
            }
            _ => {
                let o = pick(
                    self,
                    &[
                        "OpLogicalAnd",
                        "OpLogicalOr",
                        "OpLogicalEqual",
                        "OpLogicalNotEqual",
                    ],
                );
                let (a, b) = (self.pick(Ty::B), self.pick(Ty::B));
                (ty, rhs) = (Ty::B, format!("{o} %bool {a} {b}"));
            }
        }
        self.define(ty, &rhs);
    }

    /// A subgroup permutation of an integer or float value: a rotate (clustered or not), a
    /// shuffle, an xor shuffle, a shift up or down or a broadcast; its delta, lane or mask is
    /// any integer in scope (a constant or loop counter, often dynamically uniform, or a
    /// per-invocation value: undefined then, which both paths must report alike).
    fn subgroup(&mut self) {
        let ty = if self.bytes.byte() % 2 == 0 {
            Ty::U
        } else {
            Ty::F
        };
        let name = if ty == Ty::U { "%uint" } else { "%float" };
        let value = self.pick(ty);
        let operand = self.pick(Ty::U);
        let rhs = match self.bytes.byte() % 7 {
            0 => format!("OpGroupNonUniformRotateKHR {name} %ksub {value} {operand}"),
            1 => {
                let cluster = ["%k2", "%k4", "%k8", "%k16", "%k32"][self.bytes.byte() as usize % 5];
                format!("OpGroupNonUniformRotateKHR {name} %ksub {value} {operand} {cluster}")
            }
            2 => format!("OpGroupNonUniformShuffle {name} %ksub {value} {operand}"),
            3 => format!("OpGroupNonUniformShuffleXor {name} %ksub {value} {operand}"),
            4 => format!("OpGroupNonUniformShuffleUp {name} %ksub {value} {operand}"),
            5 => format!("OpGroupNonUniformShuffleDown {name} %ksub {value} {operand}"),
            _ => format!(
                "OpGroupNonUniformBroadcast {name} %ksub {value} %k{}",
                [0, 1, 2, 3, 7][self.bytes.byte() as usize % 5]
            ),
        };
        self.define(ty, &rhs);
    }

    /// A packed 4 × 8-bit dot product of each signedness, plain or saturating.
    fn dot(&mut self) {
        let (a, b) = (self.pick(Ty::U), self.pick(Ty::U));
        let op = ["OpSDot", "OpUDot", "OpSUDot"][self.bytes.byte() as usize % 3];
        let rhs = if self.bytes.byte() % 2 == 0 {
            format!("{op} %uint {a} {b} PackedVectorFormat4x8Bit")
        } else {
            let acc = self.pick(Ty::U);
            format!("{op}AccSat %uint {a} {b} {acc} PackedVectorFormat4x8Bit")
        };
        self.define(Ty::U, &rhs);
    }

    /// A load from the input buffer at a data-dependent index: inside the window, or (rarely)
    /// anywhere in 1024 words, which may be out of bounds.
    fn load(&mut self) {
        let v = self.pick(Ty::U);
        let mask = if self.bytes.byte() % 8 == 0 {
            "%k1023"
        } else {
            "%kwin"
        };
        let i = self.id("i");
        let p = self.id("p");
        self.emit(&format!("{i} = OpBitwiseAnd %uint {v} {mask}"));
        self.emit(&format!("{p} = OpAccessChain %ptr_u %in %k0 {i}"));
        self.define(Ty::U, &format!("OpLoad %uint {p}"));
    }

    /// A store of a value (a float or boolean converted) to one of the invocation's outputs.
    fn store(&mut self) {
        let slot = self.bytes.byte() as u32 % OUTS;
        let v = match self.bytes.byte() % 3 {
            0 => self.pick(Ty::U),
            1 => {
                let f = self.pick(Ty::F);
                self.define(Ty::U, &format!("OpBitcast %uint {f}"))
            }
            _ => {
                let b = self.pick(Ty::B);
                self.define(Ty::U, &format!("OpSelect %uint {b} %k1 %k0"))
            }
        };
        self.emit(&format!("OpStore %out{slot} {v}"));
    }

    /// Statements until the bytes or the budget run out; control flow nests `depth` deep.
    fn region(&mut self, depth: u32) {
        let count = 1 + self.bytes.byte() % 6;
        for _ in 0..count {
            if self.bytes.done() || self.statements == 0 {
                return;
            }
            self.statements -= 1;
            match self.bytes.byte() % 12 {
                0..=4 => self.op(),
                5 => self.load(),
                6 | 7 => self.store(),
                8 if depth < 3 => self.branch(depth),
                9 if depth < 3 => self.switch(depth),
                10 if depth < 3 => self.looped(depth),
                _ => self.op(),
            }
        }
    }

    /// A nested region whose scope ends with it; returns a `uint` value picked at its end and
    /// the block it ends in.
    fn arm(&mut self, label: &str, depth: u32) -> (String, String) {
        self.label(label);
        let mark = self.pool.len();
        self.region(depth + 1);
        let v = self.pick(Ty::U);
        self.pool.truncate(mark);
        (v, self.block.clone())
    }

    fn branch(&mut self, depth: u32) {
        let c = self.pick(Ty::B);
        let (t, f, m) = (self.id("l"), self.id("l"), self.id("l"));
        self.emit(&format!("OpSelectionMerge {m} None"));
        self.emit(&format!("OpBranchConditional {c} {t} {f}"));
        let (vt, bt) = self.arm(&t, depth);
        self.emit(&format!("OpBranch {m}"));
        let (vf, bf) = self.arm(&f, depth);
        self.emit(&format!("OpBranch {m}"));
        self.label(&m);
        self.define(Ty::U, &format!("OpPhi %uint {vt} {bt} {vf} {bf}"));
    }

    fn switch(&mut self, depth: u32) {
        let sel = self.pick(Ty::U);
        let s = self.id("s");
        self.emit(&format!("{s} = OpBitwiseAnd %uint {sel} %k3"));
        let (a, b, d, m) = (self.id("l"), self.id("l"), self.id("l"), self.id("l"));
        self.emit(&format!("OpSelectionMerge {m} None"));
        self.emit(&format!("OpSwitch {s} {d} 0 {a} 2 {b}"));
        let mut incoming = String::new();
        for l in [a, b, d] {
            let (v, end) = self.arm(&l, depth);
            self.emit(&format!("OpBranch {m}"));
            let _ = write!(incoming, " {v} {end}");
        }
        self.label(&m);
        self.define(Ty::U, &format!("OpPhi %uint{incoming}"));
    }

    /// A loop of `n & 7` iterations (`n` in scope, so trip counts differ between invocations)
    /// carrying an accumulator.
    fn looped(&mut self, depth: u32) {
        let n = self.pick(Ty::U);
        let init = self.pick(Ty::U);
        let nb = self.id("n");
        self.emit(&format!("{nb} = OpBitwiseAnd %uint {n} %k7"));
        let pre = self.block.clone();
        let (h, c, body, cont, merge) = (
            self.id("l"),
            self.id("l"),
            self.id("l"),
            self.id("l"),
            self.id("l"),
        );
        let (i, acc, inext, accnext, lt) = (
            self.id("v"),
            self.id("v"),
            self.id("v"),
            self.id("v"),
            self.id("v"),
        );
        self.emit(&format!("OpBranch {h}"));
        self.label(&h);
        self.emit(&format!("{i} = OpPhi %uint %k0 {pre} {inext} {cont}"));
        self.emit(&format!(
            "{acc} = OpPhi %uint {init} {pre} {accnext} {cont}"
        ));
        self.emit(&format!("OpLoopMerge {merge} {cont} None"));
        self.emit(&format!("OpBranch {c}"));
        self.label(&c);
        self.emit(&format!("{lt} = OpULessThan %bool {i} {nb}"));
        self.emit(&format!("OpBranchConditional {lt} {body} {merge}"));
        self.pool.push((Ty::U, i.clone()));
        self.pool.push((Ty::U, acc.clone()));
        let (v, _) = self.arm(&body, depth);
        self.pool.truncate(self.pool.len().saturating_sub(2));
        self.emit(&format!("OpBranch {cont}"));
        self.label(&cont);
        self.emit(&format!("{inext} = OpIAdd %uint {i} %k1"));
        let combine = ["OpIAdd", "OpBitwiseXor", "OpIMul"][self.bytes.byte() as usize % 3];
        self.emit(&format!("{accnext} = {combine} %uint {acc} {v}"));
        self.emit(&format!("OpBranch {h}"));
        self.label(&merge);
        self.pool.push((Ty::U, i));
        self.pool.push((Ty::U, acc));
    }
}

/// The module's text: fixed declarations, then the generated entry point.
fn module(g: &mut Gen<'_>, local: u32) -> String {
    let mut head = format!(
        r#"OpCapability Shader
OpCapability GroupNonUniform
OpCapability GroupNonUniformShuffle
OpCapability GroupNonUniformShuffleRelative
OpCapability GroupNonUniformBallot
OpCapability GroupNonUniformRotateKHR
OpCapability DotProduct
OpCapability DotProductInput4x8BitPacked
OpExtension "SPV_KHR_subgroup_rotate"
%glsl = OpExtInstImport "GLSL.std.450"
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main" %gid %in %out
OpExecutionMode %main LocalSize {local} 1 1
OpDecorate %gid BuiltIn GlobalInvocationId
OpDecorate %rta ArrayStride 4
OpMemberDecorate %Buf 0 Offset 0
OpDecorate %Buf Block
OpDecorate %in DescriptorSet 0
OpDecorate %in Binding 0
OpDecorate %out DescriptorSet 0
OpDecorate %out Binding 1
%void = OpTypeVoid
%fn = OpTypeFunction %void
%uint = OpTypeInt 32 0
%float = OpTypeFloat 32
%bool = OpTypeBool
%v3uint = OpTypeVector %uint 3
%ptr_gid = OpTypePointer Input %v3uint
%rta = OpTypeRuntimeArray %uint
%Buf = OpTypeStruct %rta
%ptr_buf = OpTypePointer StorageBuffer %Buf
%ptr_u = OpTypePointer StorageBuffer %uint
%gid = OpVariable %ptr_gid Input
%in = OpVariable %ptr_buf StorageBuffer
%out = OpVariable %ptr_buf StorageBuffer
%k0 = OpConstant %uint 0
%k1 = OpConstant %uint 1
%k2 = OpConstant %uint 2
%k3 = OpConstant %uint 3
%k7 = OpConstant %uint 7
%k4 = OpConstant %uint 4
%k8 = OpConstant %uint 8
%k16 = OpConstant %uint 16
%k32 = OpConstant %uint 32
%ksub = OpConstant %uint 3
%kwin = OpConstant %uint {}
%k1023 = OpConstant %uint 1023
%kouts = OpConstant %uint {OUTS}
%true = OpConstantTrue %bool
"#,
        WINDOW - 1
    );
    // Constants the fuzz bytes choose.
    for k in 0..3 {
        let _ = writeln!(head, "%c{k} = OpConstant %uint {}", g.bytes.word());
        g.pool.push((Ty::U, format!("%c{k}")));
    }
    for k in 0..2 {
        let f = f32::from_bits(g.bytes.word());
        let f = if f.is_finite() { f } else { 1.5 };
        let _ = writeln!(head, "%f{k} = OpConstant %float {f:?}");
        g.pool.push((Ty::F, format!("%f{k}")));
    }
    g.pool.push((Ty::U, "%k0".into()));
    g.pool.push((Ty::U, "%k1".into()));
    g.pool.push((Ty::B, "%true".into()));
    g.emit("%main = OpFunction %void None %fn");
    g.label("%entry");
    g.emit("%g = OpLoad %v3uint %gid");
    g.emit("%x = OpCompositeExtract %uint %g 0");
    g.pool.push((Ty::U, "%x".into()));
    // in[x] and in[x + 1] (the input holds one word more than the invocations).
    g.emit("%px = OpAccessChain %ptr_u %in %k0 %x");
    g.define(Ty::U, "OpLoad %uint %px");
    g.emit("%x1 = OpIAdd %uint %x %k1");
    g.emit("%px1 = OpAccessChain %ptr_u %in %k0 %x1");
    g.define(Ty::U, "OpLoad %uint %px1");
    g.emit("%xo = OpIMul %uint %x %kouts");
    for j in 0..OUTS {
        let _ = writeln!(g.body, "%xo{j} = OpIAdd %uint %xo %k{j}");
        let _ = writeln!(g.body, "%out{j} = OpAccessChain %ptr_u %out %k0 %xo{j}");
    }
    g.region(0);
    g.emit("OpReturn");
    g.emit("OpFunctionEnd");
    head + &g.body
}

/// Dispatches run, and of those how many the wide path ran (printed now and then).
static RUNS: AtomicU64 = AtomicU64::new(0);
static WIDE: AtomicU64 = AtomicU64::new(0);
static NATIVE: AtomicU64 = AtomicU64::new(0);

fuzz_target!(|data: &[u8]| {
    let mut bytes = Bytes(data);
    let local = [32, 64, 48, 33][bytes.byte() as usize % 4];
    let groups = 1 + u32::from(bytes.byte() % 6);
    let mut g = Gen {
        bytes,
        body: String::new(),
        pool: Vec::new(),
        next: 0,
        block: String::new(),
        statements: 48,
    };
    let text = module(&mut g, local);
    let Some(env) = TargetEnv::parse("vulkan1.3") else {
        return;
    };
    let options = AssembleOptions { target_env: env };
    let Ok((module, _)) = assemble(&text, &options) else {
        if std::env::var_os("TANGLE_FUZZ_DEBUG").is_some() {
            eprintln!("does not assemble:\n{text}");
        }
        return;
    };
    let valid = match validate(&module, env, &ValidateOptions::default()) {
        Ok(v) => v,
        Err(e) => {
            if std::env::var_os("TANGLE_FUZZ_DEBUG").is_some() {
                eprintln!(
                    "invalid: {}\n{text}",
                    tangle_validate::render_all(&e, &module, "<fuzz>", None)
                );
            }
            return;
        }
    };
    let pipeline = match Device::new(Profile::default()).compute_pipeline(
        &valid,
        "main",
        &SpecConstants::new(),
    ) {
        Ok(p) => p,
        Err(e) => {
            if std::env::var_os("TANGLE_FUZZ_DEBUG").is_some() {
                eprintln!("no pipeline: {e}\n{text}");
            }
            return;
        }
    };
    let total = local * groups;
    // The input: a deterministic function of the bytes' length and the index.
    let seed = data.len() as u32;
    let input: Vec<u8> = (0..(total + 1).max(WINDOW))
        .flat_map(|i| {
            i.wrapping_mul(0x9e37_79b9)
                .wrapping_add(seed)
                .rotate_left(i % 32)
                .to_le_bytes()
        })
        .collect();
    let run = |wide: bool, jit: bool| {
        let mut res = Resources::default();
        res.buffers.insert((0, 0), input.clone());
        res.buffers
            .insert((0, 1), vec![0xa5; (total * OUTS * 4) as usize]);
        let options = RunOptions {
            threads: 1,
            step_limit: 20_000,
            time_limit: Duration::from_secs(30),
            memory_limit: 256 << 20,
            wide,
            jit,
            ..RunOptions::default()
        };
        let report = pipeline.dispatch(&mut res, [groups, 1, 1], &options);
        (report, res)
    };
    let (reference, reference_res) = run(false, false);
    // The wide interpreter alone, then the native tier in front of it.
    for jit in [false, true] {
        let (wide, wide_res) = run(true, jit);
        match (&wide, &reference) {
            (Ok(w), Ok(r)) => {
                assert_eq!(
                    wide_res, reference_res,
                    "buffers differ (jit {jit})\n{text}"
                );
                assert_eq!(
                    w.diagnostics, r.diagnostics,
                    "findings differ (jit {jit})\n{text}"
                );
                assert_eq!(
                    w.summaries, r.summaries,
                    "summaries differ (jit {jit})\n{text}"
                );
                if w.stats.wide_invocations > 0 && !jit {
                    WIDE.fetch_add(1, Ordering::Relaxed);
                }
                if w.stats.jit_invocations > 0 {
                    NATIVE.fetch_add(1, Ordering::Relaxed);
                }
            }
            (Err(w), Err(r)) => {
                assert_eq!(
                    w.to_string(),
                    r.to_string(),
                    "errors differ (jit {jit})\n{text}"
                )
            }
            (w, r) => panic!(
                "one failed (jit {jit}): wide {:?} / reference {:?}\n{text}",
                w.as_ref().err(),
                r.as_ref().err()
            ),
        }
    }
    let runs = RUNS.fetch_add(1, Ordering::Relaxed) + 1;
    if runs.is_power_of_two() && runs >= 64 {
        eprintln!(
            "wide: {runs} dispatches compared, {} run on the wide interpreter, {} as native code",
            WIDE.load(Ordering::Relaxed),
            NATIVE.load(Ordering::Relaxed)
        );
    }
});
