//! Differential test of the disassembler against SPIRV-Tools' `spirv-dis`.
//!
//! Every `.spvasm` of the validator corpus in `shared/conformance/spirv-val/` that `spirv-as`
//! assembles (with the case's `asm_target_env` and `asm_flags`) is disassembled by tangle and by
//! `spirv-dis` in four flag combinations; the texts must be byte-identical.

use tangle_reference::{conformance_rows, run, CONFORMANCE};
use tangle_spirv::text::{disassemble, DisassembleOptions};
use tangle_spirv::Module;

/// The `spirv-dis` flag sets compared, with the matching options.
fn modes() -> [(&'static [&'static str], DisassembleOptions); 4] {
    let opts = |raw_id, header, indent| DisassembleOptions {
        raw_id,
        header,
        indent,
    };
    [
        (&[], opts(false, true, true)),
        (
            &["--raw-id", "--no-header", "--no-indent"],
            opts(true, false, false),
        ),
        (&["--no-header"], opts(false, false, true)),
        (&["--no-indent"], opts(false, true, false)),
    ]
}

/// The first differing line of two texts, for the failure message.
fn first_difference(actual: &str, expected: &str) -> String {
    actual
        .lines()
        .zip(expected.lines())
        .find(|(a, e)| a != e)
        .map_or_else(
            || "(one text is a prefix of the other)".to_string(),
            |(a, e)| format!("\n  tangle:    {a}\n  spirv-dis: {e}"),
        )
}

#[test]
#[cfg_attr(
    not(conformance),
    ignore = "needs ../shared/conformance beside the checkout"
)]
fn disassembly_matches_spirv_dis_on_the_validator_corpus() {
    let dir = format!("{CONFORMANCE}/spirv-val");
    let cases = conformance_rows("spirv-val");
    let mut compared = 0;
    let mut failures = Vec::new();
    for case in &cases {
        let file = format!("{dir}/{}", case["file"]);
        let source = std::fs::read(&file).unwrap_or_else(|e| panic!("{file}: {e}"));
        let mut args: Vec<&str> = vec!["--target-env", &case["asm_target_env"]];
        args.extend(case["asm_flags"].split_whitespace());
        args.extend(["-o", "-", "-"]);
        // Cases the reference assembler rejects (text for newer tools, deliberately malformed
        // text) have no binary to compare.
        let Ok(binary) = run("spirv-as", &args, &source) else {
            continue;
        };
        failures.extend(compare_all_modes(&file, &binary));
        compared += 1;
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // 225 of the 262 cases assembled with SPIRV-Tools 2025.5; a large drop means a broken harness.
    assert!(
        compared >= 200,
        "only {compared} of {} cases assembled",
        cases.len()
    );
    eprintln!(
        "{compared} of {} modules compared in {} modes each",
        cases.len(),
        modes().len()
    );
}

/// Disassembles `binary` with tangle and `spirv-dis` in every mode; the mismatches.
fn compare_all_modes(what: &str, binary: &[u8]) -> Vec<String> {
    let module = match Module::from_bytes(binary) {
        Ok(m) => m,
        Err(e) => return vec![format!("{what}: tangle cannot decode: {e}")],
    };
    let mut failures = Vec::new();
    // The decoder keeps every word: re-encoding gives the binary back.
    if tangle_spirv::binary::words_to_bytes(&module.to_words()) != binary {
        failures.push(format!(
            "{what}: re-encoding the decoded module changes the words"
        ));
    }
    for (flags, options) in modes() {
        let mut dis_args = flags.to_vec();
        dis_args.extend(["--no-color", "-"]);
        let expected = run("spirv-dis", &dis_args, binary)
            .unwrap_or_else(|e| panic!("{what}: spirv-dis fails: {e}"));
        let expected = String::from_utf8_lossy(&expected);
        let actual = disassemble(&module, &options);
        if actual != expected {
            failures.push(format!(
                "{what} {flags:?}: {}",
                first_difference(&actual, &expected)
            ));
        }
    }
    failures
}

/// Hand-written modules in `tests/cases/dis/` that exercise what the corpus lacks: every literal
/// type, name collisions, OpSwitch on signed and 64-bit selectors, unknown extended sets.
#[test]
fn handwritten_cases_match_spirv_dis() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/cases/dis");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("tests/cases/dis")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .collect();
    files.sort();
    let mut failures = Vec::new();
    let mut compared = 0;
    for file in files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "spvasm"))
    {
        let source = std::fs::read(file).expect("readable case");
        let binary = run("spirv-as", &["-o", "-", "-"], &source)
            .unwrap_or_else(|e| panic!("{}: spirv-as fails: {e}", file.display()));
        failures.extend(compare_all_modes(&file.display().to_string(), &binary));
        compared += 1;
    }
    assert!(compared >= 3, "only {compared} cases found in {dir}");
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// A small deterministic generator (xorshift64*), so the test needs no extra crate.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The bits of a random float of `width` bits with `fraction` fraction bits: uniform bit
/// patterns, decimal-looking values around the `%g` switch points, and special values.
fn random_float_bits(rng: &mut Rng, width: u32, fraction: u32) -> u64 {
    let mask = if width == 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    };
    let exponent_bits = width - 1 - fraction;
    let exp_all = ((1u64 << exponent_bits) - 1) << fraction;
    let sign = (rng.below(2)) << (width - 1);
    match rng.below(6) {
        0 => rng.next() & mask,
        // Zero, subnormal, infinity, NaN.
        1 => {
            sign | [
                0,
                1,
                rng.next() & ((1 << fraction) - 1),
                exp_all,
                exp_all | (rng.next() & ((1 << fraction) - 1)) | 1,
            ][rng.below(5) as usize]
        }
        _ if width == 32 => {
            let scale = 10f32.powi(rng.below(24) as i32 - 12);
            u64::from(((rng.below(2_000_000) as f32) * scale).to_bits())
        }
        _ if width == 64 => {
            let scale = 10f64.powi(rng.below(44) as i32 - 22);
            ((rng.below(2_000_000_000_000) as f64) * scale).to_bits()
        }
        _ => rng.next() & mask,
    }
}

/// A random integer literal of `width` bits, spread over magnitudes; narrow signed values are
/// sign-extended to 32 bits and narrow unsigned ones zero-extended, as the binary form requires.
fn random_int_bits(rng: &mut Rng, width: u32, signed: bool) -> u64 {
    let raw = rng.next() >> rng.below(64);
    if width == 64 {
        return raw;
    }
    let raw = raw & ((1 << width) - 1);
    if signed && width < 32 && (raw >> (width - 1)) & 1 == 1 {
        raw | (u64::from(u32::MAX) << width & u64::from(u32::MAX))
    } else {
        raw
    }
}

/// Random constants of every scalar type, random switch literals and random colliding names, in
/// one module, against `spirv-dis`.
#[test]
fn random_literals_and_names_match_spirv_dis() {
    use tangle_spirv::grammar::OperandKind;
    use tangle_spirv::module::{Header, Instruction, Operand, GENERATOR};
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let mut insts = Vec::new();
    let op = |opcode: u16, ty: Option<u32>, id: Option<u32>, operands: Vec<Operand>| {
        Instruction::new(opcode, ty, id, operands)
    };
    for cap in [1u32, 9, 10, 11, 22, 39, 5116, 4212] {
        insts.push(op(
            17,
            None,
            None,
            vec![Operand::Enum(OperandKind::Capability, cap)],
        ));
    }
    for ext in ["SPV_KHR_bfloat16", "SPV_EXT_float8"] {
        insts.push(op(10, None, None, vec![Operand::String(ext.into())]));
    }
    insts.push(op(
        14,
        None,
        None,
        vec![
            Operand::Enum(OperandKind::AddressingModel, 0),
            Operand::Enum(OperandKind::MemoryModel, 1),
        ],
    ));
    // (type id, width, kind): 0 unsigned, 1 signed, 2 float with fraction bits in the last field.
    let mut next_id = 1u32;
    let fresh = |next: &mut u32| {
        *next += 1;
        *next - 1
    };
    let mut types = Vec::new();
    let mut type_insts = Vec::new();
    for (width, signed) in [
        (8, 0),
        (8, 1),
        (16, 0),
        (16, 1),
        (32, 0),
        (32, 1),
        (64, 0),
        (64, 1),
    ] {
        let id = fresh(&mut next_id);
        type_insts.push(op(
            21,
            None,
            Some(id),
            vec![Operand::Int(width), Operand::Int(signed)],
        ));
        types.push((id, width, signed, 0));
    }
    for (width, fraction, encoding) in [
        (16, 10, None),
        (32, 23, None),
        (64, 52, None),
        (16, 7, Some(0)),
        (8, 3, Some(4214)),
        (8, 2, Some(4215)),
    ] {
        let id = fresh(&mut next_id);
        let mut operands = vec![Operand::Int(width)];
        operands.extend(encoding.map(|e| Operand::Enum(OperandKind::FPEncoding, e)));
        type_insts.push(op(22, None, Some(id), operands));
        types.push((id, width, 2, fraction));
    }
    let mut constants = Vec::new();
    let mut selectors = Vec::new();
    for i in 0..600 {
        let (ty, width, kind, fraction) = types[rng.below(types.len() as u64) as usize];
        let bits = if kind == 2 {
            random_float_bits(&mut rng, width, fraction)
        } else {
            random_int_bits(&mut rng, width, kind == 1)
        };
        let literal = if width == 64 {
            Operand::Wide(bits)
        } else {
            Operand::Int(bits as u32)
        };
        let id = fresh(&mut next_id);
        let opcode = if i % 5 == 0 { 50 } else { 43 }; // OpSpecConstant or OpConstant
        constants.push(op(opcode, Some(ty), Some(id), vec![literal]));
        if kind != 2 && opcode == 43 {
            selectors.push((id, width, kind == 1));
        }
    }
    // Names drawn from a small alphabet so that they collide and need sanitizing.
    let mut names = Vec::new();
    for _ in 0..150 {
        let target = 2 + rng.below(u64::from(next_id) - 2) as u32;
        let len = rng.below(4) as usize;
        let name: String = (0..len)
            .map(|_| ['a', '_', '1', ' ', '.', 'é'][rng.below(6) as usize])
            .collect();
        names.push(op(
            5,
            None,
            None,
            vec![Operand::Id(target), Operand::String(name)],
        ));
    }
    insts.extend(names);
    insts.extend(type_insts);
    insts.extend(constants);
    // A function whose switches read literals through their selectors' types.
    let void = fresh(&mut next_id);
    let fn_ty = fresh(&mut next_id);
    insts.push(op(19, None, Some(void), vec![]));
    insts.push(op(33, None, Some(fn_ty), vec![Operand::Id(void)]));
    let function = fresh(&mut next_id);
    insts.push(op(
        54,
        Some(void),
        Some(function),
        vec![
            Operand::Enum(OperandKind::FunctionControl, 0),
            Operand::Id(fn_ty),
        ],
    ));
    insts.push(op(248, None, Some(fresh(&mut next_id)), vec![]));
    for (selector, width, signed) in selectors.iter().take(60) {
        let target = fresh(&mut next_id);
        let mut operands = vec![Operand::Id(*selector), Operand::Id(target)];
        for _ in 0..3 {
            let v = random_int_bits(&mut rng, *width, *signed);
            operands.push(if *width == 64 {
                Operand::Wide(v)
            } else {
                Operand::Int(v as u32)
            });
            operands.push(Operand::Id(target));
        }
        insts.push(op(251, None, None, operands));
        insts.push(op(248, None, Some(target), vec![]));
    }
    insts.push(op(253, None, None, vec![]));
    insts.push(op(56, None, None, vec![]));
    let header = Header {
        version: (1, 6),
        generator: GENERATOR,
        bound: next_id,
        schema: 0,
    };
    let module = Module {
        header,
        instructions: insts,
    };
    let binary = tangle_spirv::binary::words_to_bytes(&module.to_words());
    let failures = compare_all_modes("random module", &binary);
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
