//! Binary → [`Module`]: header checks, then one grammar-driven walk per instruction.
//!
//! The grammar says which operands an instruction has; three things need context from earlier
//! instructions, which the [`Tracker`] keeps:
//! * the width of `OpConstant`/`OpSpecConstant` literals (from the result type),
//! * the width of `OpSwitch` case literals (from the selector's type),
//! * the operands of `OpExtInst` (from the set `OpExtInstImport` named).
//!
//! Every malformed input is a [`BinaryError`] naming the word offset; nothing here panics.

use super::{BinaryError, BinaryErrorKind as E};
use crate::grammar::{self, Category, ExtInstSetDesc, OperandDesc, OperandKind, Quantifier};
use crate::module::{Header, Id, Instruction, Module, Operand, MAGIC};
use std::collections::HashMap;

/// Decodes a whole module from words in host order.
pub fn read(words: &[u32]) -> Result<Module, BinaryError> {
    let err = |offset, kind| BinaryError { offset, kind };
    if words.len() < 5 {
        return Err(err(0, E::HeaderTooShort(words.len())));
    }
    if words[0] != MAGIC {
        return Err(err(0, E::BadMagic(words[0])));
    }
    let version = ((words[1] >> 16) as u8, (words[1] >> 8) as u8);
    if words[1] & 0xff00_00ff != 0 || version.0 != 1 || version.1 > 6 {
        return Err(err(1, E::UnsupportedVersion(words[1])));
    }
    let header = Header {
        version,
        generator: words[2],
        bound: words[3],
        schema: words[4],
    };
    let mut tracker = Tracker::default();
    let mut instructions = Vec::new();
    let mut offset = 5;
    while offset < words.len() {
        let first = words[offset];
        let count = (first >> 16) as usize;
        let opcode = first as u16;
        if count == 0 {
            return Err(err(offset, E::ZeroWordCount));
        }
        let end = offset + count;
        if end > words.len() {
            return Err(err(
                offset,
                E::Truncated {
                    count,
                    available: words.len() - offset,
                },
            ));
        }
        let inst = decode_instruction(opcode, &words[offset + 1..end], offset, &mut tracker)?;
        for id in inst.result_type.iter().chain(inst.result_id.iter()) {
            if *id == 0 || *id >= header.bound {
                return Err(err(
                    offset,
                    E::IdOutOfBound {
                        id: *id,
                        bound: header.bound,
                    },
                ));
            }
        }
        for op in &inst.operands {
            if let Operand::Id(id) = op {
                if *id == 0 || *id >= header.bound {
                    return Err(err(
                        offset,
                        E::IdOutOfBound {
                            id: *id,
                            bound: header.bound,
                        },
                    ));
                }
            }
        }
        tracker.record(&inst);
        instructions.push(inst);
        offset = end;
    }
    Ok(Module {
        header,
        instructions,
    })
}

/// `OpExtInstImport`.
const OP_EXT_INST_IMPORT: u16 = 11;

/// Facts about earlier instructions that decide how later operands are read.
#[derive(Default)]
struct Tracker {
    /// Bit width of each `OpTypeInt`/`OpTypeFloat` result.
    scalar_width: HashMap<Id, u32>,
    /// Result type of each value.
    value_type: HashMap<Id, Id>,
    /// Grammar of each `OpExtInstImport` result (None for sets tangle does not know).
    ext_sets: HashMap<Id, Option<&'static ExtInstSetDesc>>,
}

impl Tracker {
    fn record(&mut self, inst: &Instruction) {
        let Some(id) = inst.result_id else { return };
        match inst.opcode {
            // OpTypeInt, OpTypeFloat: width is the first operand.
            21 | 22 => {
                if let Some(w) = inst.literal_operand(0) {
                    self.scalar_width.insert(id, w as u32);
                }
            }
            OP_EXT_INST_IMPORT => {
                let set = inst.string_operand(0).and_then(grammar::ext_inst_set);
                self.ext_sets.insert(id, set);
            }
            _ => {}
        }
        if let Some(ty) = inst.result_type {
            self.value_type.insert(id, ty);
        }
    }

    /// Width in bits of the scalar type `ty`.
    fn width_of_type(&self, ty: Id) -> Option<u32> {
        self.scalar_width.get(&ty).copied()
    }
}

/// Reads operand words left to right.
struct Cursor<'a> {
    words: &'a [u32],
    pos: usize,
    /// Word offset of the instruction, for errors.
    at: usize,
    name: &'static str,
}

impl Cursor<'_> {
    fn done(&self) -> bool {
        self.pos >= self.words.len()
    }

    fn err(&self, kind: E) -> BinaryError {
        BinaryError {
            offset: self.at,
            kind,
        }
    }

    fn word(&mut self, what: &'static str) -> Result<u32, BinaryError> {
        let w = self.words.get(self.pos).copied().ok_or_else(|| {
            self.err(E::MissingOperand {
                instruction: self.name,
                operand: what,
            })
        })?;
        self.pos += 1;
        Ok(w)
    }

    fn string(&mut self) -> Result<String, BinaryError> {
        let mut bytes = Vec::new();
        loop {
            let w = self.word("literal string")?;
            let word_bytes = w.to_le_bytes();
            for (i, b) in word_bytes.iter().enumerate() {
                if *b == 0 {
                    // "all contents past the end of the string in the final word are padded
                    // with 0" (SPIR-V 2.2.1); other padding could not be written back.
                    if word_bytes.iter().skip(i).any(|p| *p != 0) {
                        return Err(self.err(E::StringPaddingNotZero));
                    }
                    return String::from_utf8(bytes).map_err(|_| self.err(E::StringNotUtf8));
                }
                bytes.push(*b);
            }
            if self.done() {
                return Err(self.err(E::StringNotTerminated));
            }
        }
    }
}

fn decode_instruction(
    opcode: u16,
    words: &[u32],
    at: usize,
    tracker: &mut Tracker,
) -> Result<Instruction, BinaryError> {
    let desc = grammar::instruction(opcode).ok_or(BinaryError {
        offset: at,
        kind: E::UnknownOpcode(opcode),
    })?;
    let mut cur = Cursor {
        words,
        pos: 0,
        at,
        name: desc.name,
    };
    let mut inst = Instruction {
        opcode,
        result_type: None,
        result_id: None,
        operands: Vec::new(),
        offset: at,
    };
    decode_operands(&mut cur, desc.operands, &mut inst, tracker)?;
    // OpExtInstImport of a set spirv-as would not write: spirv-dis refuses the binary ("Invalid
    // extended instruction import"), and its OpExtInsts could not be read by name.
    if opcode == OP_EXT_INST_IMPORT {
        if let Some(name) = inst
            .string_operand(0)
            .filter(|n| grammar::ext_set(n).is_none())
        {
            return Err(cur.err(E::UnknownExtInstImport(name.to_string())));
        }
    }
    if !cur.done() {
        return Err(cur.err(E::ExtraWords {
            instruction: desc.name,
            extra: words.len() - cur.pos,
        }));
    }
    Ok(inst)
}

fn decode_operands(
    cur: &mut Cursor,
    list: &[OperandDesc],
    inst: &mut Instruction,
    tracker: &Tracker,
) -> Result<(), BinaryError> {
    for desc in list {
        match desc.quantifier {
            Quantifier::One => decode_operand(cur, desc, inst, tracker)?,
            Quantifier::Optional => {
                if !cur.done() {
                    decode_operand(cur, desc, inst, tracker)?;
                }
            }
            Quantifier::Many => {
                while !cur.done() {
                    decode_operand(cur, desc, inst, tracker)?;
                }
            }
        }
    }
    Ok(())
}

fn decode_operand(
    cur: &mut Cursor,
    desc: &OperandDesc,
    inst: &mut Instruction,
    tracker: &Tracker,
) -> Result<(), BinaryError> {
    let what = if desc.name.is_empty() {
        desc.kind.desc().name
    } else {
        desc.name
    };
    match desc.kind {
        OperandKind::IdResultType => inst.result_type = Some(cur.word(what)?),
        OperandKind::IdResult => inst.result_id = Some(cur.word(what)?),
        OperandKind::IdRef | OperandKind::IdScope | OperandKind::IdMemorySemantics => {
            inst.operands.push(Operand::Id(cur.word(what)?))
        }
        OperandKind::LiteralString => inst.operands.push(Operand::String(cur.string()?)),
        OperandKind::LiteralInteger
        | OperandKind::LiteralFloat
        | OperandKind::LiteralSpecConstantOpInteger => {
            let v = cur.word(what)?;
            inst.operands.push(Operand::Int(v));
            if desc.kind == OperandKind::LiteralSpecConstantOpInteger {
                decode_spec_constant_op(cur, v, inst, tracker)?;
            }
        }
        OperandKind::LiteralExtInstInteger => {
            let v = cur.word(what)?;
            inst.operands.push(Operand::Int(v));
            decode_ext_inst(cur, v, inst, tracker)?;
        }
        OperandKind::LiteralContextDependentNumber => {
            let width = inst.result_type.and_then(|ty| tracker.width_of_type(ty));
            push_number(cur, width, inst)?;
        }
        OperandKind::PairLiteralIntegerIdRef => {
            // Only OpSwitch uses it: the literal is as wide as the selector.
            let selector = inst.id_operand(0);
            let width = selector
                .and_then(|s| tracker.value_type.get(&s))
                .and_then(|ty| tracker.width_of_type(*ty));
            push_number(cur, width, inst)?;
            inst.operands.push(Operand::Id(cur.word("target label")?));
        }
        OperandKind::PairIdRefLiteralInteger => {
            inst.operands.push(Operand::Id(cur.word(what)?));
            inst.operands.push(Operand::Int(cur.word(what)?));
        }
        OperandKind::PairIdRefIdRef => {
            inst.operands.push(Operand::Id(cur.word(what)?));
            inst.operands.push(Operand::Id(cur.word(what)?));
        }
        kind => decode_enum(cur, kind, what, inst, tracker)?,
    }
    Ok(())
}

fn push_number(
    cur: &mut Cursor,
    width: Option<u32>,
    inst: &mut Instruction,
) -> Result<(), BinaryError> {
    match width {
        Some(w) if w <= 32 => inst
            .operands
            .push(Operand::Int(cur.word("literal number")?)),
        Some(64) => {
            let lo = cur.word("literal number")?;
            let hi = cur.word("literal number (high word)")?;
            inst.operands
                .push(Operand::Wide(u64::from(lo) | (u64::from(hi) << 32)));
        }
        Some(w) => return Err(cur.err(E::UnsupportedLiteralWidth(w))),
        None => {
            return Err(cur.err(E::LiteralTypeUnknown {
                instruction: cur.name,
            }))
        }
    }
    Ok(())
}

fn decode_enum(
    cur: &mut Cursor,
    kind: OperandKind,
    what: &'static str,
    inst: &mut Instruction,
    tracker: &Tracker,
) -> Result<(), BinaryError> {
    let desc = kind.desc();
    let value = cur.word(what)?;
    inst.operands.push(Operand::Enum(kind, value));
    match desc.category {
        Category::ValueEnum => {
            let e = kind.enumerant(value).ok_or_else(|| {
                cur.err(E::UnknownEnumerant {
                    kind: desc.name,
                    value,
                })
            })?;
            decode_operands(cur, e.parameters, inst, tracker)?;
        }
        Category::BitEnum => {
            // Parameters follow in order of increasing bit, as the spec requires.
            for bit in 0..32 {
                let mask = 1u32 << bit;
                if value & mask == 0 {
                    continue;
                }
                let e = kind.enumerant(mask).ok_or_else(|| {
                    cur.err(E::UnknownEnumerant {
                        kind: desc.name,
                        value: mask,
                    })
                })?;
                decode_operands(cur, e.parameters, inst, tracker)?;
            }
        }
        _ => {
            return Err(cur.err(E::UnknownEnumerant {
                kind: desc.name,
                value,
            }))
        }
    }
    Ok(())
}

/// `OpSpecConstantOp`: the operands after the opcode are those of the named instruction, one of
/// those [`grammar::spec_constant_op`] lists.
fn decode_spec_constant_op(
    cur: &mut Cursor,
    opcode: u32,
    inst: &mut Instruction,
    tracker: &Tracker,
) -> Result<(), BinaryError> {
    let target = u16::try_from(opcode)
        .ok()
        .filter(|_| grammar::spec_constant_op(opcode).is_some())
        .and_then(grammar::instruction);
    let target = target.ok_or_else(|| cur.err(E::InvalidSpecConstantOp(opcode)))?;
    let rest: Vec<OperandDesc> = target
        .operands
        .iter()
        .filter(|d| !matches!(d.kind, OperandKind::IdResultType | OperandKind::IdResult))
        .copied()
        .collect();
    decode_operands(cur, &rest, inst, tracker)
}

/// `OpExtInst`: operands come from the imported set's grammar, or are ids for unknown sets.
fn decode_ext_inst(
    cur: &mut Cursor,
    number: u32,
    inst: &mut Instruction,
    tracker: &Tracker,
) -> Result<(), BinaryError> {
    let set = inst
        .id_operand(0)
        .and_then(|id| tracker.ext_sets.get(&id).copied().flatten());
    match set {
        Some(set) => {
            let ext = set.instruction(number).ok_or_else(|| {
                cur.err(E::UnknownExtInst {
                    set: set.name,
                    number,
                })
            })?;
            decode_operands(cur, ext.operands, inst, tracker)?;
            // The known instruction's operands end the instruction: OpExtInst's own trailing
            // `IdRef*` is only for sets tangle does not know. spirv-dis refuses the extra words
            // too ("expected no more operands"), though spirv-as writes them from `!N` words.
            if cur.done() {
                Ok(())
            } else {
                Err(cur.err(E::ExtraWords {
                    instruction: ext.name,
                    extra: cur.words.len() - cur.pos,
                }))
            }
        }
        None => {
            while !cur.done() {
                inst.operands.push(Operand::Id(cur.word("operand")?));
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `OpExtension` with the given string words, after a SPIR-V 1.6 header.
    fn extension(string_words: &[u32]) -> Vec<u32> {
        let count = 1 + string_words.len() as u32;
        let mut words = vec![MAGIC, 0x0001_0600, 0, 1, 0, (count << 16) | 10];
        words.extend(string_words);
        words
    }

    #[test]
    fn string_padding_must_be_zero() {
        // "abc" then its nul: fine.
        let ok = read(&extension(&[u32::from_le_bytes(*b"abc\0")]));
        assert_eq!(
            ok.map(|m| m.instructions[0].string_operand(0).map(String::from)),
            Ok(Some("abc".into()))
        );
        // "ab", nul, then a non-zero byte the module could not write back (found by fuzzing).
        let bad = read(&extension(&[u32::from_le_bytes(*b"ab\0.")]));
        assert_eq!(bad.map_err(|e| e.kind), Err(E::StringPaddingNotZero));
        let unterminated = read(&extension(&[u32::from_le_bytes(*b"abcd")]));
        assert_eq!(
            unterminated.map_err(|e| e.kind),
            Err(E::StringNotTerminated)
        );
    }
}
