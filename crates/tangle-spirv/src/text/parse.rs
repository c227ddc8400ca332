//! The assembler: SPIRV-Tools assembly text → instruction words → [`Module`].
//!
//! It follows `spirv-as` (SPIRV-Tools `text.cpp`) step by step, because "what `spirv-as` accepts,
//! encoded the way it encodes it" is the contract:
//! * an instruction is `OpName operands...` or `%result = OpName operands...`; the opcode must be
//!   available in the target environment's SPIR-V version unless an extension or capability can
//!   enable it;
//! * operands are read one word at a time against a queue of expected operand kinds taken from
//!   the grammar; enumerants with parameters, masks, `OpExtInst` and `OpSpecConstantOp` push the
//!   operands they bring to the front of the queue;
//! * an optional or repeated operand ends where the text ends or the next instruction starts (a
//!   word `Op<Capital>...`, or `%name =`);
//! * `!<n>` writes the raw word `n`; after it the rest of the instruction is read without the
//!   grammar ("context-independent values": numbers, strings or ids), and an instruction that
//!   starts with `!<n>` is written word for word.
//!
//! The words are then decoded by [`crate::binary::read`], so a text module and its binary have
//! the very same [`Module`].

use super::lex::{looks_numeric, unquote, Lexer, Pos, Word};
use super::number::{self, NumberError, NumberType};
use super::symbols::{type_class, Symbols, TypeClass};
use super::{AssembleOptions, TextError};
use crate::grammar::{
    self, Category, InstructionDesc, OperandDesc, OperandKind, Quantifier, Version,
};
use crate::grammar::{ext_set, ExtSet};
use crate::module::{encode_string, Header, Module, SourceMap, GENERATOR, MAGIC};
use std::collections::VecDeque;

const OP_EXT_INST_IMPORT: u16 = 11;
const OP_EXT_INST: u16 = 12;
const OP_CONSTANT: u16 = 43;
const OP_SPEC_CONSTANT: u16 = 50;
const OP_SWITCH: u16 = 251;

/// One entry of the queue of operands an instruction still expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    One(OperandKind),
    Optional(OperandKind),
    /// Zero or more; expands to `Optional(kind), Many(kind)`.
    Many(OperandKind),
    /// After a `!<n>` operand: a number, a string or an id, optional.
    Civ,
}

fn expect(desc: &OperandDesc) -> Expect {
    match desc.quantifier {
        Quantifier::One => Expect::One(desc.kind),
        Quantifier::Optional => Expect::Optional(desc.kind),
        Quantifier::Many => Expect::Many(desc.kind),
    }
}

/// Puts `operands` at the front of the queue, in order.
fn prepend(queue: &mut VecDeque<Expect>, operands: &[OperandDesc]) {
    for desc in operands.iter().rev() {
        queue.push_front(expect(desc));
    }
}

fn error(pos: Pos, message: impl Into<String>) -> TextError {
    TextError {
        line: pos.line,
        column: pos.column,
        message: message.into(),
    }
}

/// Whether `spirv-as` would accept the opcode for this SPIR-V version: the version is in the
/// instruction's range, or an extension or capability can enable it.
fn available(desc: &InstructionDesc, version: Version) -> bool {
    let in_range = desc.version.is_some_and(|v| v <= version)
        && desc.last_version.is_none_or(|l| version <= l);
    in_range || !desc.extensions.is_empty() || !desc.capabilities.is_empty()
}

/// Assembles `source`; see [`super::assemble`].
pub fn assemble(source: &str, options: &AssembleOptions) -> Result<(Module, SourceMap), TextError> {
    let version = options.target_env.spirv_version();
    let mut asm = Assembler {
        lx: Lexer::new(source),
        syms: Symbols::default(),
        version,
        words: Vec::new(),
    };
    let mut starts = Vec::new();
    let mut positions = Vec::new();
    while asm.lx.advance() {
        starts.push(asm.words.len() + 5);
        positions.push(asm.lx.pos());
        asm.instruction()?;
    }
    let header = Header {
        version: (version.major, version.minor),
        generator: GENERATOR,
        bound: asm.syms.bound(),
        schema: 0,
    };
    let mut words = vec![
        MAGIC,
        header.version_word(),
        header.generator,
        header.bound,
        header.schema,
    ];
    words.extend_from_slice(&asm.words);
    // The text instruction a word offset belongs to.
    let at = |offset: usize| {
        let i = starts.partition_point(|s| *s <= offset).saturating_sub(1);
        positions
            .get(i)
            .copied()
            .unwrap_or(Pos { line: 1, column: 1 })
    };
    let module =
        crate::binary::read(&words).map_err(|e| error(at(e.offset), e.kind.to_string()))?;
    let map = SourceMap {
        positions: module
            .instructions
            .iter()
            .map(|inst| at(inst.offset))
            .map(|p| (p.line, p.column))
            .collect(),
        names: asm.syms.names(),
    };
    Ok((module, map))
}

struct Assembler<'a> {
    lx: Lexer<'a>,
    syms: Symbols<'a>,
    version: Version,
    /// The instruction words assembled so far (no header).
    words: Vec<u32>,
}

/// The instruction being assembled.
struct Inst<'a> {
    desc: &'static InstructionDesc,
    words: Vec<u32>,
    /// The `%name` written before `=`.
    result: Option<Word<'a>>,
}

impl<'a> Assembler<'a> {
    /// Assembles the instruction at the current position (after `advance`).
    fn instruction(&mut self) -> Result<(), TextError> {
        let start = self.lx.pos();
        if self.lx.at_byte(b'!') {
            return self.raw_instruction();
        }
        let opcode_first = self.lx.starts_with_op();
        let first = self.lx.word();
        let (result, name) = if opcode_first {
            (None, first)
        } else {
            if !first.text.starts_with('%') {
                let message = if first.text.is_empty() {
                    "unexpected ',': operands are separated by white space".to_string()
                } else {
                    format!(
                        "expected an opcode or a result id at the start of an instruction, found '{}' \
                         (an operand too many for the previous instruction?)",
                        first.text
                    )
                };
                return Err(error(start, message));
            }
            if !self.lx.advance() {
                return Err(error(
                    self.lx.pos(),
                    "expected '=', found the end of the text",
                ));
            }
            let eq = self.lx.word();
            if eq.text != "=" {
                return Err(error(
                    eq.pos,
                    format!("expected '=' after result id {}", first.text),
                ));
            }
            if !self.lx.advance() {
                return Err(error(
                    self.lx.pos(),
                    "expected an opcode, found the end of the text",
                ));
            }
            let ok = self.lx.starts_with_op();
            let name = self.lx.word();
            if !ok {
                return Err(error(
                    name.pos,
                    format!("expected an opcode after '=', found '{}'", name.text),
                ));
            }
            (Some(first), name)
        };
        let desc = grammar::instruction_by_name(name.text)
            .ok_or_else(|| error(name.pos, format!("unknown opcode '{}'", name.text)))?;
        if !available(desc, self.version) {
            return Err(error(
                name.pos,
                format!("{} is not available in SPIR-V {}", name.text, self.version),
            ));
        }
        let has_result = desc
            .operands
            .iter()
            .any(|o| o.kind == OperandKind::IdResult);
        match result {
            None if has_result => {
                return Err(error(
                    start,
                    format!(
                        "{} needs a result id: write '%name = {}'",
                        desc.name, name.text
                    ),
                ))
            }
            Some(r) if !has_result => {
                return Err(error(
                    r.pos,
                    format!(
                        "{} does not produce a result id, so {} cannot be set",
                        desc.name, r.text
                    ),
                ))
            }
            _ => {}
        }
        let mut inst = Inst {
            desc,
            words: vec![0],
            result,
        };
        let mut queue: VecDeque<Expect> = desc.operands.iter().map(expect).collect();
        self.operands(&mut inst, &mut queue)?;
        // However its operands were written (a raw `!N` word skips the check a named or numbered
        // instruction gets), an OpExtInst's set must be an import: spirv-as refuses it otherwise
        // ("Invalid extended instruction import Id").
        if desc.opcode == OP_EXT_INST && inst.words.len() > 3 {
            self.imported_set(&inst, start)?;
        }
        self.record(&inst, start)?;
        self.finish(inst.words, desc.opcode, start)
    }

    /// Reads operands until the queue is empty or an optional operand is absent.
    fn operands(
        &mut self,
        inst: &mut Inst<'a>,
        queue: &mut VecDeque<Expect>,
    ) -> Result<(), TextError> {
        while let Some(next) = queue.pop_front() {
            let (kind, optional) = match next {
                Expect::Many(kind) => {
                    queue.push_front(Expect::Many(kind));
                    queue.push_front(Expect::Optional(kind));
                    continue;
                }
                Expect::One(kind) => (Some(kind), false),
                Expect::Optional(kind) => (Some(kind), true),
                Expect::Civ => (None, true),
            };
            if kind == Some(OperandKind::IdResult) {
                if let Some(result) = inst.result {
                    let id = self.id(result)?;
                    inst.words.push(id);
                    continue;
                }
            }
            let pos = self.lx.pos();
            let found = if !self.lx.advance() {
                "the end of the text"
            } else if self.lx.at_new_instruction() {
                "the next instruction"
            } else {
                ""
            };
            if !found.is_empty() {
                if optional {
                    break;
                }
                let what = kind.map_or("operand", |k| k.desc().name);
                let pos = if found.starts_with("the end") {
                    pos
                } else {
                    self.lx.pos()
                };
                return Err(error(
                    pos,
                    format!("{} expects a {what} operand, found {found}", inst.desc.name),
                ));
            }
            let word = self.lx.word();
            if word.text.starts_with('!') {
                inst.words.push(immediate(word)?);
                *queue = after_immediate(queue);
                continue;
            }
            match kind {
                Some(kind) => self.operand(inst, kind, word, queue)?,
                None => {
                    self.civ(&mut inst.words, word)?;
                    if queue.is_empty() {
                        queue.push_back(Expect::Civ);
                    }
                }
            }
        }
        Ok(())
    }

    /// Encodes one operand word of the given kind.
    fn operand(
        &mut self,
        inst: &mut Inst<'a>,
        kind: OperandKind,
        word: Word<'a>,
        queue: &mut VecDeque<Expect>,
    ) -> Result<(), TextError> {
        let opcode = inst.desc.opcode;
        match kind {
            OperandKind::IdResultType
            | OperandKind::IdResult
            | OperandKind::IdRef
            | OperandKind::IdScope
            | OperandKind::IdMemorySemantics => {
                let id = self.id(word)?;
                inst.words.push(id);
            }
            OperandKind::LiteralString => {
                let Some(s) = unquote(word.text) else {
                    let what = if looks_numeric(word.text) {
                        "a number"
                    } else {
                        "an unquoted word"
                    };
                    return Err(error(
                        word.pos,
                        format!("expected a literal string, found {what} '{}'", word.text),
                    ));
                };
                if opcode == OP_EXT_INST_IMPORT {
                    let set = ext_set(&s).ok_or_else(|| {
                        error(
                            word.pos,
                            format!("unknown extended instruction set \"{s}\""),
                        )
                    })?;
                    if let Some(id) = inst.words.get(1) {
                        self.syms.define_ext_set(*id, set);
                    }
                }
                encode_string(&s, &mut inst.words);
            }
            OperandKind::LiteralInteger => {
                number(
                    word,
                    NumberType::Int {
                        width: 32,
                        signed: false,
                    },
                    &mut inst.words,
                )?;
            }
            OperandKind::LiteralFloat => {
                let ty = NumberType::Float {
                    width: 32,
                    encoding: number::FloatEncoding::Ieee,
                };
                number(word, ty, &mut inst.words)?;
            }
            OperandKind::LiteralContextDependentNumber => {
                let ty = if opcode == OP_CONSTANT || opcode == OP_SPEC_CONSTANT {
                    let ty = inst.words.get(1).and_then(|t| self.syms.type_class(*t));
                    match ty {
                        Some(TypeClass::Scalar(ty)) => ty,
                        _ => {
                            return Err(error(word.pos, format!(
                                "the result type of {} must be a previously declared scalar integer or float type",
                                inst.desc.name
                            )))
                        }
                    }
                } else {
                    number::untyped(word.text)
                };
                number(word, ty, &mut inst.words)?;
            }
            OperandKind::PairLiteralIntegerIdRef => {
                let ty = if opcode == OP_SWITCH {
                    match inst.words.get(1).and_then(|s| self.syms.value_class(*s)) {
                        Some(TypeClass::Scalar(ty @ NumberType::Int { .. })) => ty,
                        _ => {
                            return Err(error(
                                word.pos,
                                "the OpSwitch selector must be the result of an instruction with an integer scalar type",
                            ))
                        }
                    }
                } else {
                    number::untyped(word.text)
                };
                number(word, ty, &mut inst.words)?;
                queue.push_front(Expect::One(OperandKind::IdRef));
            }
            OperandKind::PairIdRefLiteralInteger => {
                let id = self.id(word)?;
                inst.words.push(id);
                queue.push_front(Expect::One(OperandKind::LiteralInteger));
            }
            OperandKind::PairIdRefIdRef => {
                let id = self.id(word)?;
                inst.words.push(id);
                queue.push_front(Expect::One(OperandKind::IdRef));
            }
            OperandKind::LiteralExtInstInteger => self.ext_inst(inst, word, queue)?,
            OperandKind::LiteralSpecConstantOpInteger => {
                let target = grammar::instruction_by_name(&format!("Op{}", word.text))
                    .filter(|t| grammar::spec_constant_op(u32::from(t.opcode)).is_some())
                    .ok_or_else(|| {
                        error(
                            word.pos,
                            format!("'{}' is not an opcode OpSpecConstantOp accepts", word.text),
                        )
                    })?;
                inst.words.push(u32::from(target.opcode));
                prepend(queue, target.operands.get(2..).unwrap_or(&[]));
            }
            kind => self.enumerant(inst, kind, word, queue)?,
        }
        Ok(())
    }

    /// An enumerant name, or for masks names joined by `|`; its parameters join the queue.
    fn enumerant(
        &mut self,
        inst: &mut Inst<'a>,
        kind: OperandKind,
        word: Word<'a>,
        queue: &mut VecDeque<Expect>,
    ) -> Result<(), TextError> {
        let desc = kind.desc();
        let unknown = |name: &str| error(word.pos, format!("unknown {} '{name}'", desc.name));
        match desc.category {
            Category::BitEnum => {
                let mut value = 0u32;
                for name in word.text.split('|') {
                    value |= kind
                        .enumerant_by_name(name)
                        .ok_or_else(|| unknown(word.text))?
                        .value;
                }
                inst.words.push(value);
                // Parameters follow in order of increasing bit.
                for bit in (0..32).rev().map(|b| 1u32 << b).filter(|b| value & b != 0) {
                    if let Some(e) = kind.enumerant(bit) {
                        prepend(queue, e.parameters);
                    }
                }
            }
            Category::ValueEnum => {
                let e = kind
                    .enumerant_by_name(word.text)
                    .ok_or_else(|| unknown(word.text))?;
                inst.words.push(e.value);
                prepend(queue, e.parameters);
            }
            _ => return Err(unknown(word.text)),
        }
        Ok(())
    }

    /// The set an `OpExtInst`'s set operand imported; an error at `pos` if the operand is not an `OpExtInstImport` result, as spirv-as refuses it
    /// ("Invalid extended instruction import Id"), whether the instruction is named or a raw `!N`.
    fn imported_set(&self, inst: &Inst<'a>, pos: Pos) -> Result<ExtSet, TextError> {
        let set_id = inst.words.get(3).copied().unwrap_or(0);
        self.syms.ext_set(set_id).ok_or_else(|| {
            error(
                pos,
                format!(
                    "the set operand of {} is not the result of an OpExtInstImport",
                    inst.desc.name
                ),
            )
        })
    }

    /// The extended instruction of an `OpExtInst`, by name in the set that was imported.
    fn ext_inst(
        &mut self,
        inst: &mut Inst<'a>,
        word: Word<'a>,
        queue: &mut VecDeque<Expect>,
    ) -> Result<(), TextError> {
        match self.imported_set(inst, word.pos)? {
            ExtSet::Known(set) => {
                let ext = set.instruction_by_name(word.text).ok_or_else(|| {
                    error(
                        word.pos,
                        format!(
                            "unknown extended instruction '{}' of set {}",
                            word.text, set.name
                        ),
                    )
                })?;
                inst.words.push(ext.opcode);
                // The extended instruction's own operands replace OpExtInst's open-ended
                // "Operand 1, …": a known instruction takes exactly what its grammar lists
                // (spirv-as refuses an operand too many).
                queue.clear();
                prepend(queue, ext.operands);
            }
            ExtSet::Opaque => {
                // spirv-as reads the number as plain decimal digits here.
                let decimal = word.text.bytes().all(|b| b.is_ascii_digit());
                let n = word.text.parse::<u32>().ok().filter(|_| decimal).ok_or_else(|| {
                    error(word.pos, format!("tangle knows no instruction names of this set: write the number, not '{}'", word.text))
                })?;
                inst.words.push(n);
                queue.push_front(Expect::Many(OperandKind::IdRef));
            }
        }
        Ok(())
    }

    /// A context-independent value after `!<n>`: a number, a string or an id.
    fn civ(&mut self, out: &mut Vec<u32>, word: Word<'a>) -> Result<(), TextError> {
        if number::encode(word.text, number::untyped(word.text), out).is_ok() {
            return Ok(());
        }
        if let Some(s) = unquote(word.text) {
            encode_string(&s, out);
            return Ok(());
        }
        if word.text.starts_with('%') {
            let id = self.id(word)?;
            out.push(id);
            return Ok(());
        }
        Err(error(
            word.pos,
            format!("invalid word after !<integer>: '{}'", word.text),
        ))
    }

    /// An instruction written as raw words: `!<first word>` then context-independent values.
    fn raw_instruction(&mut self) -> Result<(), TextError> {
        let first = self.lx.word();
        let mut words = vec![immediate(first)?];
        while self.lx.advance() && !self.lx.at_new_instruction() {
            let word = self.lx.word();
            if word.text == "=" {
                return Err(error(
                    word.pos,
                    format!("{} cannot come before '='", first.text),
                ));
            }
            if word.text.starts_with('!') {
                words.push(immediate(word)?);
            } else {
                self.civ(&mut words, word)?;
            }
        }
        self.words.extend(words);
        Ok(())
    }

    /// Remembers what later instructions need: type definitions, value types.
    fn record(&mut self, inst: &Inst<'a>, pos: Pos) -> Result<(), TextError> {
        let w = &inst.words;
        let has = |k| inst.desc.operands.iter().any(|o| o.kind == k);
        if inst.desc.name.starts_with("OpType") && has(OperandKind::IdResult) {
            if let Some(id) = w.get(1) {
                let class = type_class(inst.desc.opcode, w.get(2..).unwrap_or(&[]));
                self.syms
                    .define_type(*id, class)
                    .map_err(|m| error(pos, m))?;
            }
        } else if has(OperandKind::IdResultType) {
            if let (Some(ty), Some(id)) = (w.get(1), w.get(2)) {
                self.syms.define_value(*id, *ty);
            }
        }
        Ok(())
    }

    /// Sets the first word (word count and opcode) and appends the instruction.
    fn finish(&mut self, mut words: Vec<u32>, opcode: u16, pos: Pos) -> Result<(), TextError> {
        let count = u16::try_from(words.len()).map_err(|_| {
            error(
                pos,
                format!(
                    "the instruction has {} words; the limit is 65535",
                    words.len()
                ),
            )
        })?;
        if let Some(first) = words.first_mut() {
            *first = (u32::from(count) << 16) | u32::from(opcode);
        }
        self.words.extend(words);
        Ok(())
    }

    /// The number of a `%name` word.
    fn id(&mut self, word: Word<'a>) -> Result<u32, TextError> {
        let Some(name) = word.text.strip_prefix('%') else {
            return Err(error(
                word.pos,
                format!("expected an id (%name), found '{}'", word.text),
            ));
        };
        if name.is_empty() || !name.bytes().all(|b| b == b'_' || b.is_ascii_alphanumeric()) {
            return Err(error(
                word.pos,
                format!(
                    "invalid id '{}': names use letters, digits and '_'",
                    word.text
                ),
            ));
        }
        self.syms.id(name).map_err(|m| error(word.pos, m))
    }
}

/// Encodes a literal number word, with the error at the word.
fn number(word: Word<'_>, ty: NumberType, out: &mut Vec<u32>) -> Result<(), TextError> {
    number::encode(word.text, ty, out).map_err(|e: NumberError| error(word.pos, e.message()))
}

/// The word of a `!<n>` immediate.
fn immediate(word: Word<'_>) -> Result<u32, TextError> {
    let digits = word.text.get(1..).unwrap_or("");
    number::parse_int(digits, 32, false)
        .ok()
        .filter(|_| !digits.starts_with('-'))
        .map(|v| v as u32)
        .ok_or_else(|| {
            error(
                word.pos,
                format!("invalid immediate integer: {}", word.text),
            )
        })
}

/// The queue after a `!<n>` operand: context-independent values, with the result id (if it is
/// still to come) kept at the place `spirv-as` keeps it.
fn after_immediate(queue: &VecDeque<Expect>) -> VecDeque<Expect> {
    match queue
        .iter()
        .rposition(|e| *e == Expect::One(OperandKind::IdResult))
    {
        Some(i) => {
            let mut out: VecDeque<Expect> =
                std::iter::repeat_n(Expect::Civ, queue.len() - i + 1).collect();
            if let Some(slot) = out.get_mut(1) {
                *slot = Expect::One(OperandKind::IdResult);
            }
            out
        }
        None => VecDeque::from([Expect::Civ]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::TargetEnv;
    use proptest::prelude::*;

    fn words_for(text: &str, env: &str) -> Result<Vec<u32>, TextError> {
        let target_env =
            TargetEnv::parse(env).ok_or_else(|| error(Pos { line: 0, column: 0 }, "env"))?;
        assemble(text, &AssembleOptions { target_env }).map(|(m, _)| m.to_words())
    }

    /// The words after the header.
    fn body(text: &str) -> Vec<u32> {
        match words_for(text, "spv1.6") {
            Ok(w) => w.get(5..).unwrap_or_default().to_vec(),
            Err(e) => panic!("{text}: {e}"),
        }
    }

    fn fails_at(text: &str) -> (u32, u32, String) {
        match words_for(text, "spv1.6") {
            Ok(w) => panic!("{text} assembled to {w:x?}"),
            Err(e) => (e.line, e.column, e.message),
        }
    }

    #[test]
    fn header_and_bound() {
        let w = words_for("%a = OpTypeVoid\nOpName %later \"x\"", "vulkan1.1").unwrap_or_default();
        assert_eq!(w.get(..5), Some(&[MAGIC, 0x0001_0300, GENERATOR, 3, 0][..]));
    }

    #[test]
    fn ids_are_numbered_in_binary_operand_order() {
        // Recorded from spirv-as: the result type is numbered before the result.
        assert_eq!(
            body("%2 = OpSUDot %1 %3 %4 PackedVectorFormat4x8Bit"),
            [0x0006_1164, 1, 2, 3, 4, 0]
        );
        assert_eq!(
            body("%2 = OpSUDot %1 %3 %a PackedVectorFormat4x8Bit"),
            [0x0006_1164, 1, 2, 3, 4, 0]
        );
        // Numeric names are names: %10 is the first id.
        assert_eq!(
            body("%10 = OpTypeInt 32 0\n%5 = OpTypeInt 16 0"),
            [0x0004_0015, 1, 32, 0, 0x0004_0015, 2, 16, 0]
        );
    }

    #[test]
    fn strings_with_escapes() {
        // Recorded from spirv-as.
        let w = body(r#"OpSource GLSL 0x1c2 %f "a\"b\\c\d""#);
        assert_eq!(w, [0x0006_0003, 2, 0x1c2, 1, 0x5c62_2261, 0x0000_6463]);
        assert_eq!(
            body(r#"OpSourceExtension "abcd""#),
            [0x0003_0004, 0x6463_6261, 0]
        );
        assert_eq!(
            body("OpSourceExtension \"a b;c\" ; comment"),
            [0x0003_0004, 0x3b62_2061, 0x63]
        );
    }

    #[test]
    fn masks_and_enumerant_parameters() {
        let load = [0x0006_003d, 1, 2, 3, 3, 4];
        assert_eq!(body("%1 = OpLoad %2 %3 Volatile|Aligned 4"), load);
        assert_eq!(body("%1 = OpLoad %2 %3 Aligned|Volatile 4"), load);
        assert_eq!(body("%1 = OpLoad %2 %3 None"), [0x0005_003d, 1, 2, 3, 0]);
        assert_eq!(
            body("OpExecutionMode %1 LocalSize 8 8 1\nOpExecutionMode %1 MaximallyReconvergesKHR\nOpDecorate %2 Offset 16"),
            [0x0006_0010, 1, 17, 8, 8, 1, 0x0003_0010, 1, 6023, 0x0004_0047, 2, 35, 16]
        );
        // Aliases: the KHR spelling of a core enumerant.
        assert_eq!(
            body("OpCapability DotProductInputAllKHR"),
            [0x0002_0011, 6016]
        );
        // Bit parameters come in order of increasing bit.
        assert_eq!(
            body("OpCooperativeMatrixStoreKHR %p %m %l %s MakePointerAvailable|NonPrivatePointer %scope"),
            [0x0007_116a, 1, 2, 3, 4, 0x28, 5]
        );
    }

    #[test]
    fn ext_inst_by_name_and_opaque_sets_by_number() {
        let w = body("%1 = OpExtInstImport \"GLSL.std.450\"\n%2 = OpExtInst %3 %1 FMix %4 %5 %6");
        assert_eq!(w.get(6..), Some(&[0x0008_000c, 2, 3, 1, 46, 4, 5, 6][..]));
        // Recorded from spirv-as.
        let w = body("%1 = OpExtInstImport \"NonSemantic.Foo\"\n%2 = OpExtInst %3 %1 46 %4 %5 %6");
        assert_eq!(w.get(6..), Some(&[0x0008_000c, 2, 3, 1, 46, 4, 5, 6][..]));
    }

    #[test]
    fn spec_constant_op_takes_the_named_opcode_operands() {
        let w = body(
            "%u = OpTypeInt 32 0\n%a = OpSpecConstant %u 1\n%s = OpSpecConstantOp %u IAdd %a %a",
        );
        assert_eq!(w.get(8..), Some(&[0x0006_0034, 1, 3, 128, 2, 2][..]));
    }

    #[test]
    fn switch_literals_follow_the_selector_width() {
        // Recorded from spirv-as.
        let w = body("%1 = OpTypeInt 64 0\n%2 = OpUndef %1\nOpSwitch %2 %3 1 %4 0x100000000 %5");
        assert_eq!(w.get(7..), Some(&[0x0009_00fb, 2, 3, 1, 0, 4, 0, 1, 5][..]));
    }

    #[test]
    fn constants_follow_the_result_type() {
        let w = body("%s8 = OpTypeInt 8 1\n%c = OpConstant %s8 -1\n%f = OpTypeFloat 64\n%d = OpConstant %f -2.5");
        assert_eq!(w.get(4..8), Some(&[0x0004_002b, 1, 2, 0xffff_ffff][..]));
        assert_eq!(w.get(11..), Some(&[0x0005_002b, 3, 4, 0, 0xc004_0000][..]));
    }

    #[test]
    fn raw_words() {
        assert_eq!(body("!0x00020011 !1"), [0x0002_0011, 1]);
        assert_eq!(body("OpCapability !1"), [0x0002_0011, 1]);
        // After an immediate the rest is read without the grammar.
        assert_eq!(body("%1 = OpTypeInt !32 0"), [0x0004_0015, 1, 32, 0]);
    }

    #[test]
    fn errors_name_the_place() {
        let (l, c, m) = fails_at("OpCapability Shader\n  OpFoo");
        assert_eq!((l, c), (2, 3));
        assert!(m.contains("unknown opcode 'OpFoo'"), "{m}");
        let (l, c, m) = fails_at("OpCapability Shader Int8");
        assert_eq!((l, c), (1, 21));
        assert!(m.contains("'Int8'"), "{m}");
        let (l, c, m) = fails_at("OpCapability Shadr");
        assert_eq!((l, c), (1, 14));
        assert!(m.contains("Capability") && m.contains("Shadr"), "{m}");
        let (l, c, m) = fails_at("%x = OpTypeInt 8 1\n%y = OpConstant %x 128");
        assert_eq!((l, c), (2, 20));
        assert!(m.contains("does not fit"), "{m}");
        let (l, c, _) = fails_at("%x = OpTypeInt 8 0\n%y = OpConstant %x -1");
        assert_eq!((l, c), (2, 20));
        let (l, c, m) = fails_at("OpTypeVoid");
        assert_eq!((l, c), (1, 1));
        assert!(m.contains("result id"), "{m}");
        let (_, c, m) = fails_at("%1 = OpNop");
        assert_eq!(c, 1);
        assert!(m.contains("does not produce"), "{m}");
        let (l, _, m) = fails_at("%1 = OpTypeInt 32");
        assert_eq!(l, 1);
        assert!(m.contains("end of the text"), "{m}");
        let (l, c, m) = fails_at("%1 = OpTypeInt 32 0\n%1 = OpTypeInt 32 0");
        assert_eq!((l, c), (2, 1));
        assert!(m.contains("already"), "{m}");
        let (_, c, m) = fails_at("OpSourceExtension \"abc");
        assert_eq!(c, 19);
        assert!(m.contains("literal string"), "{m}");
        let (_, c, _) = fails_at("OpCapability Shader, Int8");
        assert_eq!(c, 20);
        let (_, c, _) = fails_at("OpName %a.b \"x\"");
        assert_eq!(c, 8);
        assert!(
            fails_at("%1 = OpExtInstImport \"GLSL.std.450\"\n%2 = OpExtInst %3 %1 46 %4")
                .2
                .contains("unknown extended")
        );
        // FMix takes three operands, no more: `%7` starts a new instruction, which lacks its `=`
        // (spirv-as: "Expected '=', found end of stream").
        let (line, column, _) = fails_at(
            "%1 = OpExtInstImport \"GLSL.std.450\"\n%2 = OpExtInst %3 %1 FMix %4 %5 %6 %7",
        );
        assert_eq!((line, column), (2, 38));
        assert!(words_for("%1 = OpCopyLogical %2 %3", "spv1.0").is_err());
        assert!(words_for("%1 = OpCopyLogical %2 %3", "spv1.4").is_ok());
    }

    #[test]
    fn source_map_points_at_each_instruction() {
        let text = "; header\n  OpCapability Shader\n%v = OpTypeVoid ; c\n\n    OpName %v \"v\"";
        let (module, map) =
            assemble(text, &AssembleOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(module.instructions.len(), 3);
        assert_eq!(map.positions, [(2, 3), (3, 1), (5, 5)]);
    }

    #[test]
    fn large_modules_assemble() {
        let mut text = String::from("%u = OpTypeInt 32 0\n%c = OpConstant %u 1\n");
        for i in 0..10_000 {
            text.push_str(&format!("%v{i} = OpIAdd %u %c %c\n"));
        }
        let (module, map) =
            assemble(&text, &AssembleOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(module.instructions.len(), 10_002);
        assert_eq!(map.positions.last(), Some(&(10_002, 1)));
        assert_eq!(module.header.bound, 10_003);
    }

    const VOCABULARY: &[&str] = &[
        "%1",
        "%a",
        "=",
        "OpTypeInt",
        "OpConstant",
        "OpSwitch",
        "OpExtInst",
        "OpExtInstImport",
        "OpLoad",
        "OpSpecConstantOp",
        "IAdd",
        "Volatile|Aligned",
        "32",
        "-1",
        "0x",
        "1.5",
        "\"s",
        "\"str\"",
        "!",
        "!7",
        "\n",
        ";",
        ",",
        "\\",
        "OpCapability",
        "Shader",
        "\"GLSL.std.450\"",
        "Sin",
        "0x1p+999",
        "OpDecorate",
        "LocalSize",
        "%",
        "OpTypeFloat",
        "16",
        "64",
        "BFloat16KHR",
        "\0",
    ];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, rng_seed: proptest::test_runner::RngSeed::Fixed(11), ..ProptestConfig::default() })]

        /// Any token soup assembles or fails with a position inside the text; nothing panics.
        #[test]
        fn token_soup_never_panics(tokens in prop::collection::vec(prop::sample::select(VOCABULARY), 0..40)) {
            let text = tokens.join(" ");
            match assemble(&text, &AssembleOptions::default()) {
                Ok((module, map)) => prop_assert_eq!(module.instructions.len(), map.positions.len()),
                Err(e) => prop_assert!(e.line >= 1 && e.column >= 1 && e.line as usize <= text.lines().count().max(1)),
            }
        }

        /// Integers of every width, printed by Rust, become the constant's words.
        #[test]
        fn integer_constants(v in any::<i64>(), w in prop::sample::select(vec![8u32, 16, 32, 64]), signed in any::<bool>()) {
            let v = if signed { i128::from(v) >> (64 - w) } else { i128::from(v as u64 >> (64 - w)) };
            let text = format!("%t = OpTypeInt {w} {}\n%c = OpConstant %t {v}", u8::from(signed));
            let bits = v as u64;
            let mut want = vec![0x0004_0015, 1, w, u32::from(signed), if w > 32 { 0x0005_002b } else { 0x0004_002b }, 1, 2, bits as u32];
            if w > 32 {
                want.push((bits >> 32) as u32);
            }
            prop_assert_eq!(body(&text), want);
        }

        /// Floats of every width, printed by Rust, become the constant's words.
        #[test]
        fn float_constants(bits in any::<u64>(), w in prop::sample::select(vec![16u32, 32, 64])) {
            let (text, want) = match w {
                16 => {
                    let v = half::f16::from_bits(bits as u16);
                    (v.to_string(), vec![u32::from(v.to_bits())])
                }
                32 => {
                    let v = f32::from_bits(bits as u32);
                    (v.to_string(), vec![v.to_bits()])
                }
                _ => {
                    let v = f64::from_bits(bits);
                    (v.to_string(), vec![bits as u32, (bits >> 32) as u32])
                }
            };
            prop_assume!(!text.contains("inf") && !text.contains("NaN"));
            let got = body(&format!("%t = OpTypeFloat {w}\n%c = OpConstant %t {text}"));
            prop_assert_eq!(got.get(6..), Some(&want[..]));
        }

        /// Arbitrary bytes never panic either.
        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,80}") {
            let _ = assemble(&text, &AssembleOptions::default());
        }
    }
}
