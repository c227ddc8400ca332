//! Module layout (SPIR-V 2.4 "Logical Layout of a Module"): the order of the module's sections,
//! exactly one `OpMemoryModel`, functions made of blocks that each end in one terminator,
//! function-storage variables first in the entry block, and merge instructions right before
//! their branch (SPIRV-Tools `validate_layout.cpp` and `validate_adjacency.cpp`).

use super::{Ctx, Sink};
use crate::cfg_facts::is_terminator;
use spirv::Op;
use tangle_spirv::Instruction;

/// A layout rule failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LayoutError {
    /// 2.4: instructions must be in the order of the module's sections.
    #[error("{op} is out of order: it belongs in the {section} section, which comes earlier")]
    OutOfOrder { op: String, section: &'static str },
    /// 2.17 "Universal Limits": "Result `<id>` bound ... 4,194,303" (SPIRV-Tools checks the
    /// header's bound against it in every environment, `--max-id-bound`).
    #[error("the id bound {bound} is larger than {max}, the universal limit", max = MAX_ID_BOUND)]
    IdBoundTooLarge { bound: u32 },
    /// The environment accepts modules up to its SPIR-V version.
    #[error("SPIR-V version {module} is newer than {env} accepts (up to {max})")]
    VersionTooNew {
        module: String,
        env: String,
        max: String,
    },
    /// 2.4: "The single required OpMemoryModel instruction."
    #[error("the module must have exactly one OpMemoryModel (it has {count})")]
    MemoryModelCount { count: usize },
    /// 2.4: function bodies hold only instructions that may appear in a function.
    #[error("{op} cannot appear inside a function")]
    ModuleLevelInFunction { op: String },
    /// 2.4: instructions of a function body must be inside a function.
    #[error("{op} must be inside a function")]
    NotInFunction { op: String },
    /// 2.2.5: a block is a label, instructions, and one terminator.
    #[error("{op} is not inside a block (a block starts with OpLabel)")]
    OutsideBlock { op: String },
    /// 2.2.5: each block ends with a termination instruction before the next label.
    #[error("the block before this OpLabel has no termination instruction")]
    UnterminatedBlock,
    /// 2.4: each function definition ends with OpFunctionEnd.
    #[error("the function has no OpFunctionEnd")]
    MissingFunctionEnd,
    /// 2.4: OpFunctionParameter comes right after OpFunction.
    #[error("OpFunctionParameter must come before the function's first block")]
    ParameterAfterBlock,
    /// 2.4: "All OpVariable instructions in a function must be the first instructions in the first block."
    #[error("a Function-storage OpVariable must be among the first instructions of the function's first block")]
    VariableNotAtStart,
    /// 2.11 / 3.x OpSelectionMerge: it "must immediately precede either an OpBranchConditional or OpSwitch".
    #[error("OpSelectionMerge must immediately precede OpBranchConditional or OpSwitch")]
    SelectionMergeNotBeforeBranch,
    /// OpLoopMerge: it "must immediately precede either an OpBranch or OpBranchConditional".
    #[error("OpLoopMerge must immediately precede OpBranch or OpBranchConditional")]
    LoopMergeNotBeforeBranch,
}

/// The module sections of 2.4, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Section {
    Capability,
    Extension,
    ExtInstImport,
    MemoryModel,
    EntryPoint,
    ExecutionMode,
    DebugSource,
    DebugNames,
    ModuleProcessed,
    Annotation,
    Global,
    Function,
}

impl Section {
    fn name(self) -> &'static str {
        match self {
            Section::Capability => "capability",
            Section::Extension => "extension",
            Section::ExtInstImport => "extended instruction import",
            Section::MemoryModel => "memory model",
            Section::EntryPoint => "entry point",
            Section::ExecutionMode => "execution mode",
            Section::DebugSource => "debug source",
            Section::DebugNames => "debug name",
            Section::ModuleProcessed => "module-processed",
            Section::Annotation => "annotation",
            Section::Global => "type, constant and global variable",
            Section::Function => "function",
        }
    }
}

/// Where an instruction may appear.
enum Place {
    /// Only in this module section.
    Module(Section),
    /// In the global section or in a function body (OpLine, OpUndef, OpExtInst ...).
    Anywhere,
    /// Only in a function body.
    Body,
}

fn place(inst: &Instruction) -> Place {
    let Some(op) = inst.op() else {
        return Place::Body;
    };
    match op {
        Op::Capability => Place::Module(Section::Capability),
        Op::Extension => Place::Module(Section::Extension),
        Op::ExtInstImport => Place::Module(Section::ExtInstImport),
        Op::MemoryModel => Place::Module(Section::MemoryModel),
        Op::EntryPoint => Place::Module(Section::EntryPoint),
        Op::ExecutionMode | Op::ExecutionModeId => Place::Module(Section::ExecutionMode),
        Op::String | Op::SourceExtension | Op::Source | Op::SourceContinued => {
            Place::Module(Section::DebugSource)
        }
        Op::Name | Op::MemberName => Place::Module(Section::DebugNames),
        Op::ModuleProcessed => Place::Module(Section::ModuleProcessed),
        Op::Decorate
        | Op::DecorateId
        | Op::DecorateString
        | Op::MemberDecorate
        | Op::MemberDecorateString
        | Op::GroupDecorate
        | Op::GroupMemberDecorate
        | Op::DecorationGroup => Place::Module(Section::Annotation),
        Op::TypeForwardPointer => Place::Module(Section::Global),
        Op::Line
        | Op::NoLine
        | Op::Undef
        | Op::ExtInst
        | Op::ExtInstWithForwardRefsKHR
        | Op::Nop => Place::Anywhere,
        // A Function-storage variable lives in a function; any other is global.
        Op::Variable | Op::UntypedVariableKHR => match inst.literal_operand(0) {
            Some(s) if s == spirv::StorageClass::Function as u64 => Place::Body,
            _ => Place::Module(Section::Global),
        },
        _ if crate::facts::is_type_opcode(inst.opcode) => Place::Module(Section::Global),
        _ if inst.desc().is_some_and(|d| d.class == "Constant-Creation") => {
            Place::Module(Section::Global)
        }
        _ => Place::Body,
    }
}

/// Where the walk is inside a function.
#[derive(Clone, Copy, PartialEq, Eq)]
enum InFunction {
    Outside,
    /// After OpFunction, before the first label.
    Header,
    /// Inside a block; `first` is true in the function's first block, `vars_ok` while only
    /// variables (and debug lines) have been seen in it.
    Block {
        first: bool,
        vars_ok: bool,
    },
    /// Between a terminator and the next label.
    BetweenBlocks,
}

/// The largest id bound of 2.17 "Universal Limits".
pub const MAX_ID_BOUND: u32 = 4_194_303;

/// Checks the id bound, the version, section order and function/block structure.
pub fn check(cx: &Ctx, sink: &mut Sink) {
    let bound = cx.module.header.bound;
    if bound > MAX_ID_BOUND {
        sink.error(None, LayoutError::IdBoundTooLarge { bound });
    }
    let max = cx.env.spirv_version();
    let (major, minor) = cx.module.header.version;
    if (major, minor) > (max.major, max.minor) {
        let e = LayoutError::VersionTooNew {
            module: format!("{major}.{minor}"),
            env: cx.env.to_string(),
            max: max.to_string(),
        };
        sink.error(None, e);
    }
    let mut section = Section::Capability;
    let mut state = InFunction::Outside;
    let mut memory_models = 0;
    let instructions = &cx.module.instructions;
    for (index, inst) in instructions.iter().enumerate() {
        let op = inst.op();
        let name = || inst.name();
        if op == Some(Op::MemoryModel) {
            memory_models += 1;
        }
        match op {
            Some(Op::Function) => {
                if state != InFunction::Outside {
                    sink.error(Some(index), LayoutError::MissingFunctionEnd);
                }
                section = Section::Function;
                state = InFunction::Header;
                continue;
            }
            Some(Op::FunctionEnd) => {
                match state {
                    InFunction::Outside => {
                        sink.error(Some(index), LayoutError::NotInFunction { op: name() })
                    }
                    InFunction::Block { .. } => {
                        sink.error(Some(index), LayoutError::UnterminatedBlock)
                    }
                    _ => {}
                }
                state = InFunction::Outside;
                continue;
            }
            Some(Op::FunctionParameter) => {
                match state {
                    InFunction::Outside => {
                        sink.error(Some(index), LayoutError::NotInFunction { op: name() })
                    }
                    InFunction::Header => {}
                    _ => sink.error(Some(index), LayoutError::ParameterAfterBlock),
                }
                continue;
            }
            Some(Op::Label) => {
                match state {
                    InFunction::Outside => {
                        sink.error(Some(index), LayoutError::NotInFunction { op: name() })
                    }
                    InFunction::Block { .. } => {
                        sink.error(Some(index), LayoutError::UnterminatedBlock)
                    }
                    _ => {}
                }
                if state != InFunction::Outside {
                    state = InFunction::Block {
                        first: state == InFunction::Header,
                        vars_ok: true,
                    };
                }
                continue;
            }
            _ => {}
        }
        match (place(inst), state) {
            (Place::Module(s), InFunction::Outside) => {
                if s < section {
                    sink.error(
                        Some(index),
                        LayoutError::OutOfOrder {
                            op: name(),
                            section: s.name(),
                        },
                    );
                } else {
                    section = s;
                }
            }
            (Place::Module(_), _) => sink.error(
                Some(index),
                LayoutError::ModuleLevelInFunction { op: name() },
            ),
            (Place::Anywhere, InFunction::Outside) => {
                // Before the memory model only capabilities and friends may appear.
                if section < Section::MemoryModel && op != Some(Op::Nop) {
                    sink.error(
                        Some(index),
                        LayoutError::OutOfOrder {
                            op: name(),
                            section: Section::Global.name(),
                        },
                    );
                } else if section < Section::Global
                    && !matches!(op, Some(Op::Line | Op::NoLine | Op::Nop))
                {
                    section = Section::Global;
                }
            }
            (Place::Body, InFunction::Outside) => {
                sink.error(Some(index), LayoutError::NotInFunction { op: name() })
            }
            (Place::Anywhere | Place::Body, InFunction::Header | InFunction::BetweenBlocks) => {
                if !matches!(op, Some(Op::Line | Op::NoLine | Op::Nop)) {
                    sink.error(Some(index), LayoutError::OutsideBlock { op: name() });
                }
            }
            (Place::Anywhere | Place::Body, InFunction::Block { first, vars_ok }) => {
                let debug_only = matches!(op, Some(Op::Line | Op::NoLine | Op::Nop | Op::ExtInst));
                if matches!(op, Some(Op::Variable | Op::UntypedVariableKHR)) {
                    if !(first && vars_ok) {
                        sink.error(Some(index), LayoutError::VariableNotAtStart);
                    }
                } else if !debug_only {
                    state = InFunction::Block {
                        first,
                        vars_ok: false,
                    };
                }
            }
        }
        if let Some(o) = op {
            if is_terminator(o) && matches!(state, InFunction::Block { .. }) {
                state = InFunction::BetweenBlocks;
            }
            merge_adjacency(o, instructions.get(index + 1), index, sink);
        }
    }
    if state != InFunction::Outside {
        sink.error(
            instructions.len().checked_sub(1),
            LayoutError::MissingFunctionEnd,
        );
    }
    if memory_models != 1 {
        sink.error(
            None,
            LayoutError::MemoryModelCount {
                count: memory_models,
            },
        );
    }
}

/// A merge instruction must be followed by the branch it declares.
fn merge_adjacency(op: Op, next: Option<&Instruction>, index: usize, sink: &mut Sink) {
    let next = next.and_then(Instruction::op);
    match op {
        Op::SelectionMerge if !matches!(next, Some(Op::BranchConditional | Op::Switch)) => {
            sink.error(Some(index), LayoutError::SelectionMergeNotBeforeBranch)
        }
        Op::LoopMerge if !matches!(next, Some(Op::Branch | Op::BranchConditional)) => {
            sink.error(Some(index), LayoutError::LoopMergeNotBeforeBranch)
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    /// The header's bound is checked in every environment; spirv-val: "The id bound is larger
    /// than the max id bound 4194303."
    #[test]
    fn id_bound_past_the_universal_limit() {
        for env in ["vulkan1.3", "spv1.6"] {
            let mut m = module(&compute("", "", ""), env);
            let env = TargetEnv::parse(env).expect("env");
            let mut verdicts = Vec::new();
            for bound in [super::MAX_ID_BOUND, super::MAX_ID_BOUND + 1, u32::MAX] {
                m.header.bound = bound;
                let found = crate::validate(&m, env, &crate::ValidateOptions::default())
                    .err()
                    .unwrap_or_default();
                verdicts.push(found.iter().map(|d| d.error.rule()).collect::<Vec<_>>());
            }
            assert_eq!(
                verdicts,
                [
                    vec![],
                    vec!["Layout::IdBoundTooLarge".to_string()],
                    vec!["Layout::IdBoundTooLarge".to_string()]
                ]
            );
        }
    }
    use crate::rules::test_support::{compute, module, rules};
    use tangle_spirv::TargetEnv;

    #[test]
    fn module_newer_than_the_environment() {
        let m = module(&compute("", "", ""), "spv1.6");
        let env = TargetEnv::parse("vulkan1.1").expect("env");
        let diags =
            crate::validate(&m, env, &crate::ValidateOptions::default()).expect_err("invalid");
        let names: Vec<String> = diags.iter().map(|d| d.error.rule()).collect();
        assert_eq!(names, ["Layout::VersionTooNew"]);
        assert_eq!(diags.first().map(|d| d.at.index), Some(None));
    }

    #[test]
    fn sections_in_order_are_accepted() {
        let text = "OpCapability Shader\nOpExtension \"SPV_KHR_storage_buffer_storage_class\"\n\
                    %glsl = OpExtInstImport \"GLSL.std.450\"\nOpMemoryModel Logical GLSL450\n\
                    OpEntryPoint GLCompute %main \"main\"\nOpExecutionMode %main LocalSize 1 1 1\n\
                    OpSource GLSL 450\nOpName %main \"main\"\nOpModuleProcessed \"test\"\n\
                    OpDecorate %u32 RelaxedPrecision\n%void = OpTypeVoid\n%fn = OpTypeFunction %void\n\
                    %u32 = OpTypeInt 32 0\n%main = OpFunction %void None %fn\n%entry = OpLabel\nOpReturn\nOpFunctionEnd\n";
        assert_eq!(rules(text, "spv1.6"), Vec::<String>::new());
    }
}
