//! The rule families and the order they run in.
//!
//! Kept close to SPIRV-Tools' pass order (`validate.cpp`) so the first diagnostic usually names
//! the rule the reference validator reports first: layout and ids (as while reading), then the
//! grammar-driven capability checks, then the whole-module checks (control flow and maximal
//! reconvergence, entry point interfaces, Vulkan resources and built-ins, block layout), then one
//! pass over the instructions running the opcode families in the reference's order (types and
//! constants, memory, composites and conversions, arithmetic, logical, atomics and barriers,
//! extended instructions, cooperative matrix arithmetic, non-uniform groups, dot product, and
//! function/control-flow operands). Every family reports independently; id errors stop validation
//! because the facts the others read are unusable then. Diagnostics come back ordered by
//! instruction, module-wide ones last.

pub mod arith;
pub mod atomic;
pub mod block_layout;
pub mod capabilities;
pub mod cfg;
pub mod composite;
pub mod coopmat;
pub mod dot;
pub mod function;
pub mod glsl;
pub mod group;
pub mod ids;
pub mod interface;
pub mod layout;
pub mod logical;
pub mod memory;
pub mod memory_semantics;
pub mod scope;
pub mod types;
pub mod vulkan;

use crate::cfg_facts::CfgFacts;
use crate::diag::{Diagnostic, InstRef, Severity, ValidationError};
use crate::facts::{Facts, IdMap};
use crate::ValidateOptions;
use tangle_spirv::{Instruction, Module, TargetEnv};

/// What every rule reads.
pub struct Ctx<'a> {
    pub module: &'a Module,
    pub facts: &'a Facts,
    pub cfg: &'a CfgFacts,
    pub env: TargetEnv,
    pub options: &'a ValidateOptions,
}

impl Ctx<'_> {
    /// Whether the Vulkan environment rules apply.
    pub fn vulkan(&self) -> bool {
        self.env.is_vulkan()
    }

    /// The instruction defining `id`.
    pub fn def(&self, id: tangle_spirv::Id) -> Option<&Instruction> {
        self.facts
            .defs
            .get(&id)
            .and_then(|i| self.module.instructions.get(*i))
    }

    /// The ids the instructions of the functions in the call trees of `roots` refer to, once
    /// each, in module order (SPIRV-Tools' `EntryPointReferences`, inverted).
    pub fn ids_used_by(&self, roots: &[tangle_spirv::Id]) -> Vec<tangle_spirv::Id> {
        let reachable = self.cfg.reachable_functions(roots);
        let mut seen = crate::facts::IdSet::default();
        let mut used = Vec::new();
        for func in self
            .cfg
            .functions
            .iter()
            .filter(|f| reachable.contains(&f.id))
        {
            let body = self
                .module
                .instructions
                .get(func.start..=func.end)
                .unwrap_or_default();
            for id in body
                .iter()
                .flat_map(|i| i.operands.iter().filter_map(tangle_spirv::Operand::id))
            {
                if seen.insert(id) {
                    used.push(id);
                }
            }
        }
        used
    }

    /// For each function in the call tree of an entry point, the execution models of those
    /// entry points, in the order of the first entry point of each that reaches the function:
    /// SPIRV-Tools checks a function's execution-model limitations against each.
    ///
    /// One pass over the call graph for all entry points together (components of mutually
    /// recursive functions first merged), rather than a walk per entry point.
    pub fn entry_models(&self) -> IdMap<Vec<u32>> {
        let entries = &self.facts.entry_points;
        let mut distinct: Vec<u32> = Vec::new();
        for e in entries {
            if !distinct.contains(&e.model) {
                distinct.push(e.model);
            }
        }
        let calls = self.cfg.call_graph();
        let n = calls.len();
        let m = distinct.len();
        let index: IdMap<usize> = self
            .cfg
            .functions
            .iter()
            .enumerate()
            .map(|(i, f)| (f.id, i))
            .collect();
        // first[f * m + k]: the first entry point of the k-th model whose call tree holds f.
        let mut first = vec![usize::MAX; n * m];
        for (i, e) in entries.iter().enumerate() {
            let k = distinct.iter().position(|d| *d == e.model).unwrap_or(0);
            if let Some(slot) = index
                .get(&e.function)
                .and_then(|f| first.get_mut(f * m + k))
            {
                *slot = (*slot).min(i);
            }
        }
        // Components come callees first, so going backwards every caller is done before its
        // callees; the members of a component reach each other.
        for members in crate::cfg_facts::strongly_connected(&calls).iter().rev() {
            let mut merged = vec![usize::MAX; m];
            for &f in members {
                for (k, slot) in merged.iter_mut().enumerate() {
                    *slot = (*slot).min(first.get(f * m + k).copied().unwrap_or(usize::MAX));
                }
            }
            for &f in members {
                for (k, &v) in merged.iter().enumerate() {
                    if let Some(slot) = first.get_mut(f * m + k) {
                        *slot = v;
                    }
                    for &g in calls.get(f).into_iter().flatten() {
                        if let Some(slot) = first.get_mut(g * m + k) {
                            *slot = (*slot).min(v);
                        }
                    }
                }
            }
        }
        let mut models: IdMap<Vec<u32>> = IdMap::default();
        for (f, function) in self.cfg.functions.iter().enumerate() {
            let mut reached: Vec<(usize, u32)> = (0..m)
                .filter_map(|k| {
                    let by = first.get(f * m + k).copied().unwrap_or(usize::MAX);
                    (by != usize::MAX).then(|| (by, distinct.get(k).copied().unwrap_or(0)))
                })
                .collect();
            if reached.is_empty() {
                continue;
            }
            reached.sort_unstable();
            models.insert(
                function.id,
                reached.into_iter().map(|(_, model)| model).collect(),
            );
        }
        models
    }

    /// Calls `visit(index, instruction, models)` for every instruction of every function in the
    /// call tree of an entry point, with the execution models of those entry points.
    pub fn visit_with_models(&self, mut visit: impl FnMut(usize, &Instruction, &[u32])) {
        let models = self.entry_models();
        for func in &self.cfg.functions {
            let Some(models) = models.get(&func.id) else {
                continue;
            };
            let body = self
                .module
                .instructions
                .get(func.start..=func.end)
                .unwrap_or_default();
            for (offset, inst) in body.iter().enumerate() {
                visit(func.start + offset, inst, models);
            }
        }
    }
}

/// Vulkan: the execution models that have workgroups (TaskNV, MeshNV, TaskEXT, MeshEXT,
/// TessellationControl and GLCompute).
pub fn workgroup_execution_model(model: u32) -> bool {
    [
        spirv::ExecutionModel::TaskNV,
        spirv::ExecutionModel::MeshNV,
        spirv::ExecutionModel::TaskEXT,
        spirv::ExecutionModel::MeshEXT,
        spirv::ExecutionModel::TessellationControl,
        spirv::ExecutionModel::GLCompute,
    ]
    .into_iter()
    .any(|m| m as u32 == model)
}

/// The grammar's name of an execution model.
pub fn model_name(model: u32) -> String {
    tangle_spirv::grammar::OperandKind::ExecutionModel
        .enumerant(model)
        .map_or_else(|| model.to_string(), |e| e.name.to_string())
}

/// Collects diagnostics; word offsets are filled in at the end.
#[derive(Default)]
pub struct Sink {
    diagnostics: Vec<Diagnostic>,
}

impl Sink {
    /// Records an error at an instruction (`None` for module-wide findings).
    pub fn error(&mut self, index: Option<usize>, error: impl Into<ValidationError>) {
        self.push(index, error.into(), Severity::Error);
    }

    /// Records a finding with a severity.
    pub fn push(&mut self, index: Option<usize>, error: ValidationError, severity: Severity) {
        self.diagnostics.push(Diagnostic {
            error,
            at: InstRef {
                index,
                word_offset: 0,
            },
            severity,
        });
    }

    /// Records the result of a per-instruction rule.
    pub fn check<E: Into<ValidationError>>(&mut self, index: usize, result: Result<(), E>) {
        if let Err(e) = result {
            self.error(Some(index), e);
        }
    }

    fn len(&self) -> usize {
        self.diagnostics.len()
    }
}

/// Runs every family and returns the diagnostics with word offsets filled in.
pub fn run(cx: &Ctx) -> Vec<Diagnostic> {
    let mut sink = Sink::default();
    layout::check(cx, &mut sink);
    let before_ids = sink.len();
    ids::check(cx, &mut sink);
    if sink.len() == before_ids {
        capabilities::check(cx, &mut sink);
        types::unique(cx, &mut sink);
        cfg::check(cx, &mut sink);
        interface::check(cx, &mut sink);
        vulkan::check(cx, &mut sink);
        block_layout::check(cx, &mut sink);
        let mut enclosing = None;
        let mut parameter = 0;
        for (index, inst) in cx.module.instructions.iter().enumerate() {
            match inst.op() {
                Some(spirv::Op::Function) => {
                    enclosing = Some(inst);
                    parameter = 0;
                }
                Some(spirv::Op::FunctionEnd) => enclosing = None,
                _ => {}
            }
            instruction(cx, index, inst, &mut sink);
            sink.check(index, function::check(cx, inst, enclosing, parameter));
            if inst.op() == Some(spirv::Op::FunctionParameter) {
                parameter += 1;
            }
        }
        coopmat::check_module(cx, &mut sink);
        memory::check_logical_pointers(cx, &mut sink);
        atomic::check_models(cx, &mut sink);
        group::check_models(cx, &mut sink);
        glsl::check_models(cx, &mut sink);
        cfg::check_models(cx, &mut sink);
    }
    finish(cx.module, sink.diagnostics)
}

/// The per-instruction families, in SPIRV-Tools' pass order.
fn instruction(cx: &Ctx, index: usize, inst: &Instruction, sink: &mut Sink) {
    sink.check(index, types::check(cx, inst));
    sink.check(index, coopmat::check_type(cx, inst));
    sink.check(index, coopmat::check_constant(cx, inst));
    sink.check(index, memory::check(cx, inst));
    sink.check(index, coopmat::check_memory(cx, inst));
    sink.check(index, memory::operands::check(cx, inst));
    sink.check(index, composite::check(cx, inst));
    sink.check(index, arith::check(cx, inst));
    sink.check(index, logical::check(cx, inst));
    sink.check(index, atomic::check(cx, inst));
    sink.check(index, glsl::check(cx, inst));
    sink.check(index, coopmat::check_arith(cx, inst));
    match group::check(cx, inst) {
        Ok(()) => {}
        // SPIRV-Tools reports the ClusterSize value rule as a warning, which still fails.
        Err(e @ group::GroupError::ClusterSizeNotPowerOfTwo) => {
            sink.push(Some(index), e.into(), Severity::Warning)
        }
        Err(e) => sink.error(Some(index), e),
    }
    sink.check(index, dot::check(cx, inst));
}

/// Fills in word offsets and orders diagnostics by position (stable, so family order is kept
/// within one instruction).
fn finish(module: &Module, mut diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
    if diagnostics.is_empty() {
        return diagnostics;
    }
    let mut offsets = Vec::with_capacity(module.instructions.len());
    let mut offset = 5;
    for inst in &module.instructions {
        offsets.push(if inst.offset != 0 {
            inst.offset
        } else {
            offset
        });
        offset += inst.words().len();
    }
    for d in &mut diagnostics {
        d.at.word_offset =
            d.at.index
                .and_then(|i| offsets.get(i).copied())
                .unwrap_or(0);
    }
    diagnostics.sort_by_key(|d| d.at.index.unwrap_or(usize::MAX));
    diagnostics
}

#[cfg(test)]
pub(crate) mod test_support {
    //! Assembling small modules for unit tests.
    use tangle_spirv::text::{assemble, AssembleOptions};
    use tangle_spirv::{Module, TargetEnv};

    /// Assembles `text` for `env`; panics with the assembler's message when it fails.
    pub fn module(text: &str, env: &str) -> Module {
        let target_env = TargetEnv::parse(env).expect("known env");
        match assemble(text, &AssembleOptions { target_env }) {
            Ok((m, _)) => m,
            Err(e) => panic!("test module does not assemble: {e}"),
        }
    }

    /// The `Family::Variant` names of every diagnostic (empty when valid).
    pub fn rules(text: &str, env: &str) -> Vec<String> {
        let m = module(text, env);
        match crate::validate(
            &m,
            TargetEnv::parse(env).expect("env"),
            &crate::ValidateOptions::default(),
        ) {
            Ok(_) => Vec::new(),
            Err(diags) => diags.iter().map(|d| d.error.rule()).collect(),
        }
    }

    /// A GLCompute module with `decls` among the types and `body` in `main`.
    pub fn compute(caps: &str, decls: &str, body: &str) -> String {
        format!(
            "OpCapability Shader\n{caps}\nOpMemoryModel Logical GLSL450\nOpEntryPoint GLCompute %main \"main\"\n\
             OpExecutionMode %main LocalSize 1 1 1\n%void = OpTypeVoid\n%fn = OpTypeFunction %void\n\
             %u32 = OpTypeInt 32 0\n%i32 = OpTypeInt 32 1\n%u32_1 = OpConstant %u32 1\n%u32_3 = OpConstant %u32 3\n\
             {decls}\n%main = OpFunction %void None %fn\n%entry = OpLabel\n{body}\nOpReturn\nOpFunctionEnd\n"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::{compute, rules};

    #[test]
    fn independent_errors_are_all_reported_in_order() {
        let caps = "OpCapability GroupNonUniformRotateKHR\nOpExtension \"SPV_KHR_subgroup_rotate\"";
        let body = "%a = OpGroupNonUniformRotateKHR %u32 %u32_3 %u32_1 %i32_1\n\
                    %b = OpIAdd %u32 %u32_1 %u32_1\n\
                    %c = OpGroupNonUniformRotateKHR %u32 %u32_3 %i32_1 %u32_1";
        let got = rules(
            &compute(caps, "%i32_1 = OpConstant %i32 1", body),
            "vulkan1.3",
        );
        assert_eq!(
            got,
            [
                "Group::RotateDeltaNotUnsigned",
                "Group::RotateValueTypeMismatch"
            ]
        );
    }

    #[test]
    fn undefined_ids_stop_the_other_families() {
        let body = "%a = OpIAdd %u32 %nowhere %u32_1\n%b = OpFAdd %u32 %u32_1 %u32_1";
        assert_eq!(
            rules(&compute("", "", body), "vulkan1.3"),
            ["Ids::Undefined"]
        );
    }
}

#[cfg(test)]
mod entry_model_tests {
    use super::test_support::module;
    use super::Ctx;
    use crate::cfg_facts::CfgFacts;
    use crate::facts::{Facts, IdMap};
    use std::fmt::Write as _;
    use tangle_spirv::TargetEnv;

    /// The models of the entry points reaching each function, entry point by entry point.
    fn naive(cx: &Ctx) -> IdMap<Vec<u32>> {
        let mut models: IdMap<Vec<u32>> = IdMap::default();
        for entry in &cx.facts.entry_points {
            for function in cx.cfg.reachable_functions(&[entry.function]) {
                if cx.cfg.functions.iter().any(|f| f.id == function) {
                    let list = models.entry(function).or_default();
                    if !list.contains(&entry.model) {
                        list.push(entry.model);
                    }
                }
            }
        }
        models
    }

    #[test]
    fn entry_models_match_a_walk_per_entry_point() {
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut random = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        for _ in 0..50 {
            let functions = 2 + random(10);
            let models = ["GLCompute", "Vertex", "Fragment"];
            let mut text = String::from("OpCapability Shader\nOpMemoryModel Logical GLSL450\n");
            for e in 0..1 + random(4) {
                let model = models[random(models.len())];
                let _ = writeln!(
                    text,
                    "OpEntryPoint {model} %f{} \"e{e}\"",
                    random(functions)
                );
            }
            text.push_str("%void = OpTypeVoid\n%fn = OpTypeFunction %void\n");
            for f in 0..functions {
                let _ = writeln!(text, "%f{f} = OpFunction %void None %fn\n%l{f} = OpLabel");
                for c in 0..random(3) {
                    let _ = writeln!(
                        text,
                        "%c{f}_{c} = OpFunctionCall %void %f{}",
                        random(functions)
                    );
                }
                text.push_str("OpReturn\nOpFunctionEnd\n");
            }
            let m = module(&text, "spv1.6");
            let (facts, cfg) = (Facts::gather(&m), CfgFacts::build(&m));
            let cx = Ctx {
                module: &m,
                facts: &facts,
                cfg: &cfg,
                env: TargetEnv::parse("spv1.6").expect("env"),
                options: &Default::default(),
            };
            assert_eq!(cx.entry_models(), naive(&cx), "{text}");
        }
    }
}
