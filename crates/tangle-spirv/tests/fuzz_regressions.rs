//! Inputs the fuzz targets once crashed on (`fuzz/regressions/{text,differential,binary}/`), run
//! through the same checks as the targets: whatever assembles and decodes disassembles to text
//! that assembles again to the same words, and whatever decodes re-encodes to its input.

use std::path::PathBuf;
use tangle_spirv::text::{assemble, disassemble, AssembleOptions, DisassembleOptions};
use tangle_spirv::Module;

fn inputs(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fuzz/regressions"
    ))
    .join(target);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p, bytes)
        })
        .collect()
}

#[test]
fn text_inputs_round_trip_through_the_binary_reader() {
    let mut checked = 0;
    for (path, bytes) in inputs("text").into_iter().chain(inputs("differential")) {
        let source = String::from_utf8_lossy(&bytes);
        let Ok((assembled, _)) = assemble(&source, &AssembleOptions::default()) else {
            continue;
        };
        let words = assembled.to_words();
        let Ok(module) = Module::from_words(&words) else {
            continue;
        };
        for raw_id in [true, false] {
            let options = DisassembleOptions {
                raw_id,
                header: false,
                indent: false,
            };
            let text = disassemble(&module, &options);
            let again = assemble(&text, &AssembleOptions::default()).unwrap_or_else(|e| {
                panic!("{}: own disassembly rejected: {e}\n{text}", path.display())
            });
            if !source.contains('!') {
                assert_eq!(again.0.to_words(), words, "{}", path.display());
            }
        }
        checked += 1;
    }
    println!("{checked} regression inputs round-tripped");
}

/// `OpExtInst … FMix %x %y !6 %z`: spirv-as writes the extra word and spirv-dis refuses the
/// binary ("expected no more operands"). tangle's reader refused it neither: it read the extra word
/// as OpExtInst's trailing operands and printed text its own assembler rejected. Now the reader
/// refuses it like spirv-dis, and so does the assembler, whose modules are what the reader makes
/// of their words (a text module and its binary are the same `Module`).
#[test]
fn extra_words_after_an_extended_instruction_are_refused() {
    let source = "%1 = OpExtInstImport \"GLSL.std.450\"\n%2 = OpExtInst %3 %1 FMix %4 %5 !6 %7\n";
    let err = assemble(source, &AssembleOptions::default()).expect_err("the reader refuses it");
    let text = err.to_string();
    assert!(text.starts_with("2:1") && text.contains("FMix"), "{text}");
}

/// `%1 = OpExtInstImport !3`: a raw word where the set's name goes imports the set "\x03", which
/// spirv-as refuses to write by name and spirv-dis refuses to read ("Invalid extended instruction
/// import"). tangle's reader accepted it and printed `OpExtInstImport "\x03"`, which its own
/// assembler rejected. Now the reader refuses the import, so the assembler does too.
#[test]
fn an_import_of_a_set_spirv_dis_does_not_know_is_refused() {
    let err = assemble("%1 = OpExtInstImport !3\n", &AssembleOptions::default())
        .expect_err("the reader refuses the import");
    assert!(
        err.to_string()
            .contains("invalid extended instruction import"),
        "{err}"
    );
    // The binary alone: header, then `OpExtInstImport %1 "foo"`.
    let words = [
        0x0723_0203,
        0x0001_0600,
        0,
        2,
        0,
        (3 << 16) | 11,
        1,
        0x006f_6f66,
    ];
    let err = Module::from_words(&words).expect_err("spirv-dis refuses it too");
    assert!(err.to_string().contains("'foo'"), "{err}");
    // Sets spirv-as knows by name, and any NonSemantic one, are read as before.
    for name in [
        "GLSL.std.450",
        "NonSemantic.Shader.DebugInfo.100",
        "DebugInfo",
    ] {
        let source = format!("%1 = OpExtInstImport \"{name}\"\n");
        assert!(
            assemble(&source, &AssembleOptions::default()).is_ok(),
            "{name}"
        );
    }
}

/// `OpSource … %file` (id 1, never defined, so shown as `%1`) then `OpName %w "1"` (id 2): the
/// friendly disassembly printed both as `%1`, which assembles to other words. A name of digits
/// alone now goes only to the id of that number; id 2 is printed `%1_0`.
#[test]
fn a_numeric_name_never_takes_another_ids_label() {
    let source = "OpSource GLSL 450 %file\nOpName %w \"1\"\nOpName %v \"3\"\n%v = OpTypeVoid\n";
    let (module, _) = assemble(source, &AssembleOptions::default()).expect("assembles");
    let options = DisassembleOptions {
        raw_id: false,
        header: false,
        indent: false,
    };
    let text = disassemble(&module, &options);
    assert!(
        text.contains("OpName %1_0 \"1\"") && text.contains("OpName %3 \"3\""),
        "{text}"
    );
    let (again, _) = assemble(&text, &AssembleOptions::default()).expect("assembles again");
    assert_eq!(again.to_words(), module.to_words(), "{text}");
}

/// `OpSpecConstantOp %int !0`: spirv-as writes opcode 0 (OpNop), which spirv-dis and spirv-val
/// refuse ("Invalid OpSpecConstantOp opcode: 0"). tangle's reader decoded it, the disassembler
/// printed `OpSpecConstantOp %int Nop`, and the assembler refused that text. Now the reader refuses
/// every opcode outside the spec's list, so the assembler does too, naming the instruction.
#[test]
fn spec_constant_op_opcodes_outside_the_list_are_refused() {
    for opcode in ["!0", "!61", "!65664"] {
        let source = format!("%int = OpTypeInt 32 1\n%x = OpSpecConstantOp %int {opcode}\n");
        let err = assemble(&source, &AssembleOptions::default()).expect_err("refused");
        let text = err.to_string();
        assert!(
            text.starts_with("2:1") && text.contains("OpSpecConstantOp"),
            "{text}"
        );
    }
    // By name, only the listed opcodes assemble; each prints back as the name it was read from.
    for (name, accepted) in [("IAdd", true), ("Nop", false), ("Load", false)] {
        let source =
            format!("%int = OpTypeInt 32 1\n%a = OpConstant %int 1\n%x = OpSpecConstantOp %int {name} %a %a\n");
        let assembled = assemble(&source, &AssembleOptions::default());
        assert_eq!(assembled.is_ok(), accepted, "{name}");
        if let Ok((module, _)) = assembled {
            let text = disassemble(&module, &DisassembleOptions::default());
            assert!(
                text.contains(&format!("OpSpecConstantOp %int {name} ")),
                "{text}"
            );
        }
    }
}

/// `%a = OpExtInst %f32 %gl !5 %x` with `%gl` no import: the assembler checked the set only for
/// a named instruction, so the raw `!5` assembled, and the disassembly (`… %gl 5 %x`) was refused.
/// spirv-as refuses both ("Invalid extended instruction import Id"); so does tangle now.
#[test]
fn an_ext_inst_of_no_import_is_refused_also_by_raw_number() {
    for number in ["!5", "5", "Sqrt"] {
        let source = format!("%f32 = OpTypeFloat 32\n%a = OpExtInst %f32 %gl {number} %x\n");
        let err = assemble(&source, &AssembleOptions::default()).expect_err("refused");
        assert!(
            err.to_string()
                .contains("not the result of an OpExtInstImport"),
            "{number}: {err}"
        );
    }
}

/// `OpConstant %i8 !128`: a raw word whose high bits are not the sign extension the spec asks of
/// an 8-bit signed literal. spirv-dis prints it as `128`, which neither assembler reads back for
/// an 8-bit signed type; tangle's disassembler printed the same. Now such a literal (integers
/// and floats narrower than 32 bits) is printed as its raw word, and reads back to the same words.
#[test]
fn a_narrow_literal_with_stray_high_bits_prints_as_its_raw_word() {
    let source = "%i8 = OpTypeInt 8 1\n%c = OpConstant %i8 !128\n%d = OpConstant %i8 -128\n\
                  %h = OpTypeFloat 16\n%e = OpConstant %h !0xffff3c00\n%f = OpConstant %h 1\n";
    let (module, _) = assemble(source, &AssembleOptions::default()).expect("assembles");
    for raw_id in [true, false] {
        let options = DisassembleOptions {
            raw_id,
            header: false,
            indent: false,
        };
        let text = disassemble(&module, &options);
        assert!(
            text.contains("!0x00000080") && text.contains("!0xffff3c00"),
            "{text}"
        );
        assert!(
            text.contains(" -128\n") && text.contains(" 0x1p+0\n"),
            "{text}"
        );
        let (again, _) = assemble(&text, &AssembleOptions::default()).expect("reads back");
        assert_eq!(again.to_words(), module.to_words(), "{text}");
    }
}

/// `%2 = OpExtInst %3 !4 %5 %6`: a raw word in the set's place; after it the operands are read
/// without the grammar, so no step checked that id 4 is an import, and the disassembly (`%3 %4 4
/// %5`) was refused. The set is now checked once the instruction's operands are read, whatever
/// their form; spirv-as refuses it too.
#[test]
fn an_ext_inst_whose_set_is_a_raw_word_of_no_import_is_refused() {
    let source = "%1 = OpExtInstImport \"GLSL.std.450\"\n%2 = OpExtInst %3 !4 %5 %6\n";
    let err = assemble(source, &AssembleOptions::default()).expect_err("refused");
    assert!(
        err.to_string()
            .contains("not the result of an OpExtInstImport"),
        "{err}"
    );
    let source = "%1 = OpExtInstImport \"GLSL.std.450\"\n%2 = OpExtInst %3 !1 !31 %5\n";
    assert!(
        assemble(source, &AssembleOptions::default()).is_ok(),
        "a raw word naming the import"
    );
}
