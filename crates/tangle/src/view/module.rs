//! What `tangle run --view` shows of a module without running it: each block's label (its
//! source line when the module has `OpLine`, else its first instruction's SPIR-V text), the
//! subgroup operations, barriers and cooperative-matrix instructions in it, and each
//! function's control-flow graph (successors from the terminator, merge and continue targets
//! from `OpSelectionMerge` / `OpLoopMerge`).

use serde::Serialize;
use spirv::Op;
use std::collections::HashMap;
use tangle_amber::debug::Sources;
use tangle_spirv::{Instruction, Module};
use tangle_validate::diag::instruction_text;

/// What kind of instruction the picture marks.
pub fn marked_kind(inst: &Instruction) -> Option<&'static str> {
    let name = inst.name();
    match inst.op() {
        Some(Op::ControlBarrier | Op::MemoryBarrier) => Some("barrier"),
        _ if name.contains("CooperativeMatrix") => Some("coopmat"),
        _ if name.starts_with("OpGroup") || name.starts_with("OpSubgroup") => Some("group"),
        _ => None,
    }
}

/// An instruction the picture marks.
#[derive(Debug, Clone, Serialize)]
pub struct Marked {
    /// `group`, `barrier` or `coopmat`.
    pub kind: &'static str,
    /// Its word offset (as `values` events and findings name it).
    pub at: usize,
    /// Its result id, 0 if none.
    pub id: u32,
    /// Its SPIR-V text.
    pub text: String,
}

/// One block.
#[derive(Debug, Clone, Serialize)]
pub struct Block {
    /// The `OpLabel` id.
    pub id: u32,
    /// The `OpFunction` id.
    pub function: u32,
    /// The label: `file:line: text` from the first `OpLine` in effect in the block, else the
    /// first instruction after the label and its `OpPhi`s, as SPIR-V.
    pub label: String,
    /// Whether the label is a source line.
    pub source: bool,
    /// Successor label ids, in terminator order.
    pub succ: Vec<u32>,
    /// The merge block its `OpSelectionMerge` or `OpLoopMerge` names, 0 if none.
    pub merge: u32,
    /// The continue target of its `OpLoopMerge`, 0 if none.
    pub cont: u32,
    /// The marked instructions, in order.
    pub marked: Vec<Marked>,
    /// The word offsets of its `OpFunctionCall`s.
    #[serde(skip)]
    pub calls: Vec<usize>,
    /// The word offsets of its first and one past its last instruction.
    pub words: (usize, usize),
}

/// The blocks of a module, in module order.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Blocks {
    /// Every block.
    pub blocks: Vec<Block>,
    /// Whether the module has `OpLine`.
    pub has_lines: bool,
}

impl Blocks {
    /// The blocks of `module`.
    pub fn of(module: &Module) -> Blocks {
        let sources = Sources::new(module);
        let strings: HashMap<u32, &str> = module
            .instructions
            .iter()
            .filter(|i| i.op() == Some(Op::String))
            .filter_map(|i| Some((i.result_id?, i.string_operand(0)?)))
            .collect();
        let mut out = Blocks {
            has_lines: sources.has_lines,
            ..Blocks::default()
        };
        let mut function = 0;
        let mut line: Option<(u32, u32)> = None;
        let mut open: Option<Block> = None;
        let mut first: Option<String> = None;
        for inst in &module.instructions {
            match inst.op() {
                Some(Op::Function) => function = inst.result_id.unwrap_or(0),
                Some(Op::Line) => {
                    line = inst
                        .id_operand(0)
                        .zip(inst.literal_operand(1))
                        .map(|(f, l)| (f, l as u32));
                }
                Some(Op::NoLine) => line = None,
                Some(Op::Label) => {
                    first = None;
                    open = Some(Block {
                        id: inst.result_id.unwrap_or(0),
                        function,
                        label: String::new(),
                        source: false,
                        succ: Vec::new(),
                        merge: 0,
                        cont: 0,
                        marked: Vec::new(),
                        calls: Vec::new(),
                        words: (inst.offset, inst.offset),
                    });
                }
                _ => {}
            }
            let Some(b) = open.as_mut() else { continue };
            b.words.1 = inst.offset + inst.words().len();
            if let (false, Some((file, l))) = (b.source, line) {
                let file = strings.get(&file).copied().unwrap_or("?");
                let text = sources.line_text(file, l).unwrap_or("").trim();
                b.label = format!("{file}:{l}: {text}");
                b.source = true;
            }
            let skip = matches!(
                inst.op(),
                Some(Op::Label | Op::Phi | Op::Line | Op::NoLine | Op::Variable)
            );
            if first.is_none() && !skip {
                first = Some(instruction_text(module, inst));
            }
            if let Some(kind) = marked_kind(inst) {
                b.marked.push(Marked {
                    kind,
                    at: inst.offset,
                    id: inst.result_id.unwrap_or(0),
                    text: instruction_text(module, inst),
                });
            }
            match inst.op() {
                Some(Op::FunctionCall) => b.calls.push(inst.offset),
                Some(Op::SelectionMerge) => b.merge = inst.id_operand(0).unwrap_or(0),
                Some(Op::LoopMerge) => {
                    b.merge = inst.id_operand(0).unwrap_or(0);
                    b.cont = inst.id_operand(1).unwrap_or(0);
                }
                Some(Op::Branch) => b.succ.extend(inst.id_operand(0)),
                Some(Op::BranchConditional) => {
                    b.succ.extend(inst.id_operand(1));
                    b.succ.extend(inst.id_operand(2));
                }
                // OpSwitch: selector, default, then (literal, label) pairs.
                Some(Op::Switch) => b.succ.extend(
                    inst.operands
                        .iter()
                        .skip(1)
                        .filter_map(tangle_spirv::module::Operand::id),
                ),
                _ => {}
            }
            if inst.op().is_some_and(is_terminator) {
                if let Some(mut b) = open.take() {
                    if !b.source {
                        b.label = first.take().unwrap_or_default();
                    }
                    b.succ.dedup();
                    out.blocks.push(b);
                }
                line = None;
            }
        }
        out
    }

    /// The block with label `id`.
    pub fn get(&self, id: u32) -> Option<&Block> {
        self.blocks.iter().find(|b| b.id == id)
    }
}

/// Whether `op` ends a block (SPIR-V "Termination Instructions" and the branches).
fn is_terminator(op: Op) -> bool {
    matches!(
        op,
        Op::Branch
            | Op::BranchConditional
            | Op::Switch
            | Op::Return
            | Op::ReturnValue
            | Op::Kill
            | Op::TerminateInvocation
            | Op::Unreachable
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_have_successors_merges_and_marked_instructions() {
        let text = "OpCapability Shader\nOpCapability GroupNonUniformBallot\nOpMemoryModel Logical GLSL450\nOpEntryPoint GLCompute %main \"main\"\nOpExecutionMode %main LocalSize 4 1 1\n%void = OpTypeVoid\n%fn = OpTypeFunction %void\n%bool = OpTypeBool\n%u32 = OpTypeInt 32 0\n%v4 = OpTypeVector %u32 4\n%t = OpConstantTrue %bool\n%s3 = OpConstant %u32 3\n%main = OpFunction %void None %fn\n%a = OpLabel\nOpSelectionMerge %m None\nOpBranchConditional %t %b %m\n%b = OpLabel\n%x = OpGroupNonUniformBallot %v4 %s3 %t\nOpBranch %m\n%m = OpLabel\nOpReturn\nOpFunctionEnd\n";
        let (words, _) =
            tangle_spirv::text::assemble(text, &Default::default()).expect("assembles");
        let module = Module::from_words(&words.to_words()).expect("reads back");
        let blocks = Blocks::of(&module);
        assert_eq!(blocks.blocks.len(), 3);
        let a = &blocks.blocks[0];
        assert_eq!(a.succ.len(), 2);
        assert_eq!(a.merge, blocks.blocks[2].id);
        assert_eq!(blocks.blocks[1].marked.len(), 1);
        assert_eq!(blocks.blocks[1].marked[0].kind, "group");
        assert!(a.label.contains("OpSelectionMerge"), "{}", a.label);
        assert!(!blocks.has_lines);
    }
}
