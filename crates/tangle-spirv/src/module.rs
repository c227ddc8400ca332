//! The module as data: a header and a flat list of decoded instructions.
//!
//! This is the one representation every stage shares. An [`Instruction`] keeps its opcode, its
//! result type and result id split out (most consumers want them), and the remaining operands in
//! binary order as typed [`Operand`]s. Enumerant parameters (`LocalSize 8 8 1`, `Offset 16`) follow
//! their enum word inline, exactly as in the binary, so `words()` re-encodes an instruction without
//! consulting the grammar.
//!
//! Where an instruction came from is kept in [`Instruction::offset`] (its word offset in a binary)
//! and, for text input, in the [`SourceMap`] the assembler returns beside the module.

use crate::grammar::{self, OperandKind};

/// A SPIR-V result id (`%n`).
pub type Id = u32;

/// The SPIR-V magic number, first word of every module.
pub const MAGIC: u32 = 0x0723_0203;

/// tangle's generator word: an unregistered tool id (0x7461, "ta") in the high half, version 1 in
/// the low half.
pub const GENERATOR: u32 = 0x7461_0001;

/// The five-word module header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// SPIR-V version as (major, minor).
    pub version: (u8, u8),
    pub generator: u32,
    /// One more than the largest id used.
    pub bound: u32,
    /// Reserved schema word (0).
    pub schema: u32,
}

impl Header {
    /// The version as the header word encodes it (`0x00MMmm00`).
    pub fn version_word(&self) -> u32 {
        (u32::from(self.version.0) << 16) | (u32::from(self.version.1) << 8)
    }
}

/// One operand word group of an instruction.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Operand {
    /// An id reference (`IdRef`, `IdScope`, `IdMemorySemantics`).
    Id(Id),
    /// A one-word literal: `LiteralInteger`, `LiteralExtInstInteger`, `LiteralSpecConstantOpInteger`,
    /// `LiteralFloat`, or a context-dependent number of 32 or fewer bits (sign- or zero-extended
    /// as the binary form requires; floats as their bit pattern).
    Int(u32),
    /// A two-word context-dependent number (64-bit `OpConstant`, `OpSwitch` on a 64-bit selector);
    /// the binary stores the low word first.
    Wide(u64),
    /// A nul-terminated UTF-8 literal string.
    String(String),
    /// A value-enum word or a bit-mask word of the given kind.
    Enum(OperandKind, u32),
}

impl Operand {
    /// Appends the operand's binary words.
    pub fn encode(&self, out: &mut Vec<u32>) {
        match self {
            Operand::Id(v) | Operand::Int(v) | Operand::Enum(_, v) => out.push(*v),
            Operand::Wide(v) => {
                out.push(*v as u32);
                out.push((*v >> 32) as u32);
            }
            Operand::String(s) => encode_string(s, out),
        }
    }

    /// The id, if this operand is one.
    pub fn id(&self) -> Option<Id> {
        match self {
            Operand::Id(id) => Some(*id),
            _ => None,
        }
    }

    /// The literal value of a one- or two-word number, or an enum word.
    pub fn literal(&self) -> Option<u64> {
        match self {
            Operand::Int(v) | Operand::Enum(_, v) => Some(u64::from(*v)),
            Operand::Wide(v) => Some(*v),
            _ => None,
        }
    }
}

/// Appends a literal string: UTF-8 bytes, a nul, padded with nuls to a word boundary, little-endian.
pub fn encode_string(s: &str, out: &mut Vec<u32>) {
    let bytes = s.as_bytes();
    for chunk in bytes.chunks(4) {
        let mut word = [0u8; 4];
        word[..chunk.len()].copy_from_slice(chunk);
        out.push(u32::from_le_bytes(word));
    }
    if bytes.len().is_multiple_of(4) {
        out.push(0);
    }
}

/// A decoded instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instruction {
    pub opcode: u16,
    pub result_type: Option<Id>,
    pub result_id: Option<Id>,
    /// The operands after the result type and id, in binary order.
    pub operands: Vec<Operand>,
    /// Word offset of the instruction's first word in the binary it was read from (0 when built
    /// in memory). Diagnostics for binary input name it.
    pub offset: usize,
}

impl Instruction {
    /// A new instruction with no location.
    pub fn new(
        opcode: u16,
        result_type: Option<Id>,
        result_id: Option<Id>,
        operands: Vec<Operand>,
    ) -> Self {
        Instruction {
            opcode,
            result_type,
            result_id,
            operands,
            offset: 0,
        }
    }

    /// The opcode as the `spirv` crate's enum, if it knows it.
    pub fn op(&self) -> Option<spirv::Op> {
        spirv::Op::from_u32(u32::from(self.opcode))
    }

    /// The grammar's description of the opcode.
    pub fn desc(&self) -> Option<&'static grammar::InstructionDesc> {
        grammar::instruction(self.opcode)
    }

    /// The opcode's name (`OpIAdd`), or `Op<n>` when the grammar does not know it.
    pub fn name(&self) -> String {
        self.desc()
            .map_or_else(|| format!("Op{}", self.opcode), |d| d.name.to_string())
    }

    /// The id at operand position `i` (after result type and id), if there is one.
    pub fn id_operand(&self, i: usize) -> Option<Id> {
        self.operands.get(i).and_then(Operand::id)
    }

    /// The literal or enum value at operand position `i`, if there is one.
    pub fn literal_operand(&self, i: usize) -> Option<u64> {
        self.operands.get(i).and_then(Operand::literal)
    }

    /// The string at operand position `i`, if there is one.
    pub fn string_operand(&self, i: usize) -> Option<&str> {
        match self.operands.get(i) {
            Some(Operand::String(s)) => Some(s),
            _ => None,
        }
    }

    /// The binary encoding, first word (word count | opcode) included.
    pub fn words(&self) -> Vec<u32> {
        let mut out = vec![0];
        out.extend(self.result_type);
        out.extend(self.result_id);
        for op in &self.operands {
            op.encode(&mut out);
        }
        out[0] = ((out.len() as u32) << 16) | u32::from(self.opcode);
        out
    }
}

/// A whole module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Module {
    pub header: Header,
    pub instructions: Vec<Instruction>,
}

/// Where each instruction of an assembled module came from in its text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceMap {
    /// `(line, column)`, 1-based, of each instruction, by instruction index.
    pub positions: Vec<(u32, u32)>,
    /// The name each id had in the text (without the `%`), so that messages about the module
    /// can speak the author's names: `%buf`, or `%10` where the text wrote `%10` (which need
    /// not be id 10, since the assembler numbers names in order of first use).
    pub names: std::collections::HashMap<Id, String>,
}
