//! The SPIR-V grammar as static tables: every core instruction with its operands, every operand kind
//! with its enumerants (values, parameters, aliases, capabilities, extensions, versions), and the
//! `GLSL.std.450` / `OpenCL.std` extended instruction sets.
//!
//! `generated.rs` is produced by `tools/gen-grammar` from the Khronos JSON grammar (the same
//! SPIRV-Headers release that SPIRV-Tools 2025.5 uses); `.ci/run` regenerates it and fails on a diff.
//! This file adds the lookups every stage uses (by opcode, by name, by alias).

// Generated tables are kept exactly as the generator prints them (CI diffs them), so rustfmt skips them.
#[rustfmt::skip]
mod generated;
mod spec_constant_op;

pub use generated::{OperandKind, GLSL_STD_450, INSTRUCTIONS, OPENCL_STD, OPERAND_KINDS};
pub use spec_constant_op::{spec_constant_op, SpecConstantOpNeeds};

use std::collections::HashMap;
use std::sync::OnceLock;

/// A SPIR-V version, as in the module header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    pub major: u8,
    pub minor: u8,
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// How often an operand may appear.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantifier {
    /// Exactly once.
    One,
    /// Zero or one time (`?` in the grammar).
    Optional,
    /// Zero or more times (`*` in the grammar); always the last logical operand.
    Many,
}

/// The grammar's category of an operand kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    /// A mask: several enumerants or-ed into one word, written `A|B` in text.
    BitEnum,
    /// One enumerant per word.
    ValueEnum,
    /// A result id or an id reference.
    Id,
    /// Literal numbers and strings.
    Literal,
    /// A pair of other kinds (`bases`), e.g. the `OpSwitch` (literal, label) targets.
    Composite,
}

/// One logical operand of an instruction or of an enumerant's parameter list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OperandDesc {
    pub kind: OperandKind,
    pub quantifier: Quantifier,
    /// The grammar's name for it (e.g. `'Delta'`); empty when the grammar gives none.
    pub name: &'static str,
}

/// A core instruction.
#[derive(Debug)]
pub struct InstructionDesc {
    pub name: &'static str,
    pub opcode: u16,
    pub class: &'static str,
    pub operands: &'static [OperandDesc],
    /// Values of the `Capability` enumerants, any one of which enables the instruction.
    pub capabilities: &'static [u32],
    /// Extensions, any one of which enables the instruction.
    pub extensions: &'static [&'static str],
    /// First core version that has it; `None` means "only through an extension".
    pub version: Option<Version>,
    /// Last core version that has it, when it was removed.
    pub last_version: Option<Version>,
    /// Other spellings accepted by the assembler (e.g. `OpSDotKHR`).
    pub aliases: &'static [&'static str],
}

/// One enumerant of a `ValueEnum` or `BitEnum` operand kind.
#[derive(Debug)]
pub struct EnumerantDesc {
    pub name: &'static str,
    pub value: u32,
    /// Operands that follow the enum word when this enumerant is present (`LocalSize x y z`).
    pub parameters: &'static [OperandDesc],
    pub capabilities: &'static [u32],
    pub extensions: &'static [&'static str],
    pub version: Option<Version>,
    pub last_version: Option<Version>,
    pub aliases: &'static [&'static str],
}

/// An operand kind.
#[derive(Debug)]
pub struct OperandKindDesc {
    pub kind: OperandKind,
    pub name: &'static str,
    pub category: Category,
    /// For `Composite` kinds: the kinds of the pair.
    pub bases: &'static [OperandKind],
    pub enumerants: &'static [EnumerantDesc],
}

/// An extended instruction (`OpExtInst` payload).
#[derive(Debug)]
pub struct ExtInstDesc {
    pub name: &'static str,
    pub opcode: u32,
    pub operands: &'static [OperandDesc],
    pub capabilities: &'static [u32],
}

/// An extended instruction set known by name in `OpExtInstImport`.
#[derive(Debug)]
pub struct ExtInstSetDesc {
    pub name: &'static str,
    pub instructions: &'static [ExtInstDesc],
}

impl OperandKind {
    /// The grammar description of this kind.
    pub fn desc(self) -> &'static OperandKindDesc {
        // `OPERAND_KINDS` is generated in the same order as the enum's variants.
        &OPERAND_KINDS[self as usize]
    }

    /// Whether the kind is an enum written by enumerant names in text.
    pub fn is_enum(self) -> bool {
        matches!(
            self.desc().category,
            Category::BitEnum | Category::ValueEnum
        )
    }

    /// The enumerant with this exact value (for value enums, or one bit of a mask).
    pub fn enumerant(self, value: u32) -> Option<&'static EnumerantDesc> {
        self.desc().enumerants.iter().find(|e| e.value == value)
    }

    /// The enumerant spelled `name` or one of its aliases.
    pub fn enumerant_by_name(self, name: &str) -> Option<&'static EnumerantDesc> {
        let enumerants = self.desc().enumerants;
        enumerants
            .iter()
            .find(|e| e.name == name)
            .or_else(|| enumerants.iter().find(|e| e.aliases.contains(&name)))
    }
}

struct Index {
    by_opcode: HashMap<u16, &'static InstructionDesc>,
    by_name: HashMap<&'static str, &'static InstructionDesc>,
}

fn index() -> &'static Index {
    static INDEX: OnceLock<Index> = OnceLock::new();
    INDEX.get_or_init(|| {
        let mut by_opcode = HashMap::new();
        let mut by_name = HashMap::new();
        for inst in INSTRUCTIONS {
            by_opcode.entry(inst.opcode).or_insert(inst);
            by_name.insert(inst.name, inst);
        }
        for inst in INSTRUCTIONS {
            for alias in inst.aliases {
                by_name.entry(*alias).or_insert(inst);
            }
        }
        Index { by_opcode, by_name }
    })
}

/// The core instruction with this opcode.
pub fn instruction(opcode: u16) -> Option<&'static InstructionDesc> {
    index().by_opcode.get(&opcode).copied()
}

/// The core instruction spelled `name` (with `Op`), aliases included.
pub fn instruction_by_name(name: &str) -> Option<&'static InstructionDesc> {
    index().by_name.get(name).copied()
}

/// The extended instruction set imported under this name, if tangle knows its grammar.
pub fn ext_inst_set(name: &str) -> Option<&'static ExtInstSetDesc> {
    [&GLSL_STD_450, &OPENCL_STD]
        .into_iter()
        .find(|set| set.name == name)
}

/// An extended instruction set imported by `OpExtInstImport`.
#[derive(Debug, Clone, Copy)]
pub enum ExtSet {
    /// A set whose grammar tangle has: instructions are written by name.
    Known(&'static ExtInstSetDesc),
    /// A set `spirv-as` accepts but tangle has no grammar for (`NonSemantic.*`, ...):
    /// instructions are written by number, operands are ids.
    Opaque,
}

/// Sets `spirv-as` recognises beyond `GLSL.std.450` and `OpenCL.std` (its
/// `spvExtInstImportTypeGet`); any `NonSemantic.` name is accepted too.
const OTHER_KNOWN_SETS: &[&str] = &[
    "SPV_AMD_shader_explicit_vertex_parameter",
    "SPV_AMD_shader_trinary_minmax",
    "SPV_AMD_gcn_shader",
    "SPV_AMD_shader_ballot",
    "DebugInfo",
    "OpenCL.DebugInfo.100",
];

/// The set imported under `name`, or `None` if `spirv-as` would reject the import (and `spirv-dis`
/// the binary: "Invalid extended instruction import").
pub fn ext_set(name: &str) -> Option<ExtSet> {
    if let Some(set) = ext_inst_set(name) {
        return Some(ExtSet::Known(set));
    }
    (name.starts_with("NonSemantic.") || OTHER_KNOWN_SETS.contains(&name)).then_some(ExtSet::Opaque)
}

impl ExtInstSetDesc {
    /// The instruction with this number.
    pub fn instruction(&self, opcode: u32) -> Option<&'static ExtInstDesc> {
        self.instructions.iter().find(|i| i.opcode == opcode)
    }

    /// The instruction spelled `name`.
    pub fn instruction_by_name(&self, name: &str) -> Option<&'static ExtInstDesc> {
        self.instructions.iter().find(|i| i.name == name)
    }
}

/// The name of a capability value (for messages).
pub fn capability_name(value: u32) -> &'static str {
    OperandKind::Capability
        .enumerant(value)
        .map_or("<unknown capability>", |e| e.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_generated_in_enum_order() {
        for (i, desc) in OPERAND_KINDS.iter().enumerate() {
            assert_eq!(desc.kind as usize, i, "{}", desc.name);
        }
    }

    #[test]
    fn aliases_and_parameters_are_known() {
        assert_eq!(
            instruction_by_name("OpSDotKHR").map(|i| i.opcode),
            Some(4450)
        );
        assert_eq!(
            instruction(4431).map(|i| i.name),
            Some("OpGroupNonUniformRotateKHR")
        );
        let local_size = OperandKind::ExecutionMode
            .enumerant_by_name("LocalSize")
            .map(|e| e.parameters.len());
        assert_eq!(local_size, Some(3));
        let alias = OperandKind::Capability
            .enumerant_by_name("DotProductInputAllKHR")
            .map(|e| e.value);
        assert_eq!(alias, Some(6016));
        assert_eq!(
            GLSL_STD_450.instruction_by_name("FMix").map(|i| i.opcode),
            Some(46)
        );
    }
}
