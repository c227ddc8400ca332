//! [`Module`] → SPIRV-Tools assembly text, byte for byte what `spirv-dis` 2025.5 prints.
//!
//! The layout follows SPIRV-Tools' `Disassembler`: an optional `; SPIR-V` header comment, then
//! one line per instruction. With indentation on, a result id is right-aligned so that `=` sits in
//! column 14 (`%name = ` takes the first 15 columns unless the name is longer), and instructions
//! without a result start at column 16. Operands are printed from the decoded [`Operand`]s:
//! * ids as `%name` (friendly names from [`FriendlyNames`] or raw numbers);
//! * strings quoted, with `"` and `\` escaped;
//! * value enums by enumerant name, masks as `A|B` in increasing bit order (`None` for zero);
//! * `OpExtInst` instruction numbers by name when the set is known, `OpSpecConstantOp` opcodes by
//!   name without `Op`;
//! * `OpConstant`/`OpSpecConstant` and `OpSwitch` literals by their type ([`number`]);
//! * all other literal numbers as unsigned decimals.

pub(crate) mod number;

use super::names::FriendlyNames;
use super::DisassembleOptions;
use crate::grammar::{self, Category, ExtInstSetDesc, OperandKind};
use crate::module::{Header, Id, Instruction, Module, Operand};
use number::{FloatFormat, NumberType, NumberTypes};
use spirv::Op;
use std::collections::HashMap;
use std::fmt::Write;

/// The column width SPIRV-Tools reserves for `%result = `.
const INDENT: usize = 15;

/// Prints `module` as `spirv-dis` does with the given options.
pub(crate) fn disassemble(module: &Module, options: &DisassembleOptions) -> String {
    let names = (!options.raw_id).then(|| FriendlyNames::new(module));
    let mut printer = Printer {
        names,
        indent: options.indent,
        numbers: NumberTypes::default(),
        ext_sets: HashMap::new(),
    };
    let mut out = String::new();
    if options.header {
        header(&mut out, &module.header);
    }
    for inst in &module.instructions {
        printer.instruction(&mut out, inst);
        printer.record(inst);
    }
    out
}

/// The `; SPIR-V` comment block.
fn header(out: &mut String, h: &Header) {
    let tool = h.generator >> 16;
    let misc = h.generator & 0xffff;
    let name = generator_name(tool);
    let _ = writeln!(out, "; SPIR-V");
    let _ = writeln!(out, "; Version: {}.{}", h.version.0, h.version.1);
    match name {
        Some(name) => {
            let _ = writeln!(out, "; Generator: {name}; {misc}");
        }
        // Unknown tools print their number, as spirv-dis does ("Unknown(29793); 1" for tangle).
        None => {
            let _ = writeln!(out, "; Generator: Unknown({tool}); {misc}");
        }
    }
    let _ = writeln!(out, "; Bound: {}", h.bound);
    let _ = writeln!(out, "; Schema: {}", h.schema);
}

/// The vendor and tool that SPIRV-Tools 2025.5 prints for a registered generator tool id (the
/// Khronos registry `spir-v.xml`; recorded from `spirv-dis`).
fn generator_name(tool: u32) -> Option<&'static str> {
    const NAMES: [&str; 50] = [
        "Khronos",
        "LunarG",
        "Valve",
        "Codeplay",
        "NVIDIA",
        "ARM",
        "Khronos LLVM/SPIR-V Translator",
        "Khronos SPIR-V Tools Assembler",
        "Khronos Glslang Reference Front End",
        "Qualcomm",
        "AMD",
        "Intel",
        "Imagination",
        "Google Shaderc over Glslang",
        "Google spiregg",
        "Google rspirv",
        "X-LEGEND Mesa-IR/SPIR-V Translator",
        "Khronos SPIR-V Tools Linker",
        "Wine VKD3D Shader Compiler",
        "Tellusim Clay Shader Compiler",
        "W3C WebGPU Group WHLSL Shader Translator",
        "Google Clspv",
        "LLVM MLIR SPIR-V Serializer",
        "Google Tint Compiler",
        "Google ANGLE Shader Compiler",
        "Netease Games Messiah Shader Compiler",
        "Xenia Xenia Emulator Microcode Translator",
        "Embark Studios Rust GPU Compiler Backend",
        "gfx-rs community Naga",
        "Mikkosoft Productions MSP Shader Compiler",
        "SpvGenTwo community SpvGenTwo SPIR-V IR Tools",
        "Google Skia SkSL",
        "TornadoVM Beehive SPIRV Toolkit",
        "DragonJoker ShaderWriter",
        "Rayan Hatout SPIRVSmith",
        "Saarland University Shady",
        "Taichi Graphics Taichi",
        "heroseh Hero C Compiler",
        "Meta SparkSL",
        "SirLynix Nazara ShaderLang Compiler",
        "Khronos Slang Compiler",
        "Zig Software Foundation Zig Compiler",
        "Rendong Liang spq",
        "LLVM LLVM SPIR-V Backend",
        "Robert Konrad Kongruent",
        "Kitsunebi Games Nuvk SPIR-V Emitter and DLSL compiler",
        "Nintendo",
        "ARM",
        "Goopax",
        "Icyllis Milica Arc3D Shader Compiler",
    ];
    usize::try_from(tool)
        .ok()
        .and_then(|t| NAMES.get(t))
        .copied()
}

/// What printing needs to know about earlier instructions.
struct Printer {
    names: Option<FriendlyNames>,
    indent: bool,
    numbers: NumberTypes,
    /// The grammar of each `OpExtInstImport` result (`None` for sets tangle does not know).
    ext_sets: HashMap<Id, Option<&'static ExtInstSetDesc>>,
}

impl Printer {
    fn record(&mut self, inst: &Instruction) {
        self.numbers.record(inst);
        if inst.op() == Some(Op::ExtInstImport) {
            if let Some(id) = inst.result_id {
                self.ext_sets
                    .insert(id, inst.string_operand(0).and_then(grammar::ext_inst_set));
            }
        }
    }

    fn id(&self, out: &mut String, id: Id) {
        out.push('%');
        match &self.names {
            Some(names) => out.push_str(&names.name(id)),
            None => {
                let _ = write!(out, "{id}");
            }
        }
    }

    /// The type that decides how the context-dependent literals of `inst` read: the result type
    /// of `OpConstant`/`OpSpecConstant`, the selector's type for `OpSwitch`.
    fn literal_type(&self, inst: &Instruction) -> Option<NumberType> {
        match inst.op() {
            Some(Op::Constant | Op::SpecConstant) => {
                inst.result_type.and_then(|t| self.numbers.of_type(t))
            }
            Some(Op::Switch) => inst.id_operand(0).and_then(|s| self.numbers.of_value(s)),
            _ => None,
        }
    }

    /// The name printed for a one-word literal that is an instruction number: the extended
    /// instruction of `OpExtInst` (when its set is known), the opcode of `OpSpecConstantOp`
    /// (without `Op`).
    fn literal_name(
        &self,
        inst: &Instruction,
        position: usize,
        value: u32,
    ) -> Option<&'static str> {
        match (inst.op()?, position) {
            (Op::ExtInst | Op::ExtInstWithForwardRefsKHR, 1) => {
                let set = self.ext_sets.get(&inst.id_operand(0)?).copied().flatten()?;
                set.instruction(value).map(|e| e.name)
            }
            (Op::SpecConstantOp, 0) => {
                // Only the opcodes the assembler reads back (the reader refuses the others, as
                // spirv-dis does, so only a module built in code can hold one).
                grammar::spec_constant_op(value)?;
                let target = grammar::instruction(u16::try_from(value).ok()?)?;
                Some(target.name.strip_prefix("Op").unwrap_or(target.name))
            }
            _ => None,
        }
    }

    fn instruction(&self, out: &mut String, inst: &Instruction) {
        match inst.result_id {
            Some(result) => {
                let mut name = String::new();
                self.id(&mut name, result);
                if self.indent {
                    // `%name` right-aligned in 12 columns, then ` = `.
                    let pad = (INDENT - 3).saturating_sub(name.len());
                    out.extend(std::iter::repeat_n(' ', pad));
                }
                out.push_str(&name);
                out.push_str(" = ");
            }
            None if self.indent => out.extend(std::iter::repeat_n(' ', INDENT)),
            None => {}
        }
        out.push_str(&inst.name());
        if let Some(ty) = inst.result_type {
            out.push(' ');
            self.id(out, ty);
        }
        let literals = self.literal_type(inst);
        // Kinds of the parameters following the last value enum (`LocalSize x y z`), so that a
        // `LiteralFloat` parameter (FPMaxErrorDecorationINTEL) prints as a float.
        let mut parameters: &[grammar::OperandDesc] = &[];
        for (i, operand) in inst.operands.iter().enumerate() {
            out.push(' ');
            let parameter = parameters.first().map(|p| p.kind);
            parameters = parameters.get(1..).unwrap_or_default();
            match operand {
                Operand::Id(id) => self.id(out, *id),
                Operand::String(s) => quote(out, s),
                Operand::Enum(kind, value) => {
                    enumerant(out, *kind, *value);
                    if kind.desc().category == Category::ValueEnum {
                        parameters = kind.enumerant(*value).map_or(&[], |e| e.parameters);
                    }
                }
                Operand::Int(v) => {
                    let named = self.literal_name(inst, i, *v);
                    let literal_type = match parameter {
                        Some(OperandKind::LiteralFloat) => {
                            Some(NumberType::Float(FloatFormat::Single))
                        }
                        _ => literals,
                    };
                    let typed = || literal_type.and_then(|t| number::format(t, operand));
                    match named.map(str::to_string).or_else(typed) {
                        Some(text) => out.push_str(&text),
                        None => {
                            let _ = write!(out, "{v}");
                        }
                    }
                }
                Operand::Wide(v) => match literals.and_then(|t| number::format(t, operand)) {
                    Some(text) => out.push_str(&text),
                    None => {
                        let _ = write!(out, "{v}");
                    }
                },
            }
        }
        out.push('\n');
    }
}

/// A literal string in quotes; only `"` and `\` are escaped.
fn quote(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
}

/// A value-enum word by name, or a mask as its bit names joined by `|`, lowest bit first.
fn enumerant(out: &mut String, kind: OperandKind, value: u32) {
    let name_of = |v: u32| kind.enumerant(v).map(|e| e.name);
    if kind.desc().category != Category::BitEnum {
        match name_of(value) {
            Some(name) => out.push_str(name),
            None => {
                let _ = write!(out, "{value}");
            }
        }
        return;
    }
    if value == 0 {
        // A zero mask is shown by the name of the zero enumerant ("None").
        out.push_str(name_of(0).unwrap_or_default());
        return;
    }
    let mut first = true;
    for bit in (0..32).map(|b| 1u32 << b).filter(|m| value & m != 0) {
        if !first {
            out.push('|');
        }
        first = false;
        match name_of(bit) {
            Some(name) => out.push_str(name),
            None => {
                let _ = write!(out, "{bit:#x}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::module::GENERATOR;

    fn module(instructions: Vec<Instruction>) -> Module {
        Module {
            header: Header {
                version: (1, 6),
                generator: GENERATOR,
                bound: 10,
                schema: 0,
            },
            instructions,
        }
    }

    #[test]
    fn header_names_unknown_generators_by_number() {
        let text = disassemble(&module(vec![]), &DisassembleOptions::default());
        // spirv-dis 2025.5 prints unregistered tools as "Unknown(<tool>)".
        assert_eq!(
            text,
            "; SPIR-V\n; Version: 1.6\n; Generator: Unknown(29793); 1\n; Bound: 10\n; Schema: 0\n"
        );
        let mut m = module(vec![]);
        m.header.generator = 8 << 16 | 11;
        let text = disassemble(&m, &DisassembleOptions::default());
        assert!(
            text.contains("; Generator: Khronos Glslang Reference Front End; 11\n"),
            "{text}"
        );
    }

    #[test]
    fn results_are_right_aligned_and_masks_joined() {
        let m = module(vec![
            Instruction::new(19, None, Some(1), vec![]),
            Instruction::new(
                246,
                None,
                None,
                vec![
                    Operand::Id(2),
                    Operand::Id(3),
                    Operand::Enum(OperandKind::LoopControl, 0b11),
                ],
            ),
            Instruction::new(
                247,
                None,
                None,
                vec![
                    Operand::Id(2),
                    Operand::Enum(OperandKind::SelectionControl, 0),
                ],
            ),
        ]);
        let text = disassemble(
            &m,
            &DisassembleOptions {
                header: false,
                ..DisassembleOptions::default()
            },
        );
        assert_eq!(
            text,
            "       %void = OpTypeVoid\n               OpLoopMerge %2 %3 Unroll|DontUnroll\n               OpSelectionMerge %2 None\n"
        );
    }
}
