//! GLSL compute shaders using the four extensions (one per extension, plus one for literal types),
//! compiled by glslang (Vulkan 1.3, SPIR-V 1.6), then binary → [`disassemble`] → [`assemble`] → binary.
//!
//! Checked for each shader (sources are `tests/cases/glsl/*.comp`):
//! * the default text is byte-identical to what `spirv-dis` prints for the glslang binary;
//! * assembling that text gives the same words as `spirv-as` gives for it (generator word aside);
//! * assembling the raw-id text gives the glslang module with its ids renumbered in order of first
//!   appearance (as `spirv-as` numbers them; glslang's bound may also leave gaps), and a second
//!   disassemble → assemble round trip gives identical words.

use glslang::{
    Compiler, CompilerOptions, ShaderInput, ShaderSource, ShaderStage, SpirvVersion, Target,
    VulkanVersion,
};
use tangle_spirv::text::{assemble, disassemble, AssembleOptions, DisassembleOptions};
use tangle_spirv::{Module, TargetEnv};

const CASES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/cases/glsl");

/// Every `.comp` source, sorted by name.
fn sources() -> Vec<(String, String)> {
    let mut files: Vec<_> = std::fs::read_dir(CASES)
        .expect("tests/cases/glsl")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "comp"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            (
                p.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                std::fs::read_to_string(&p).expect("readable shader"),
            )
        })
        .collect()
}

/// Compiles a compute shader for Vulkan 1.3 / SPIR-V 1.6.
fn compile(name: &str, source: &str) -> Vec<u32> {
    let compiler = Compiler::acquire().expect("glslang initialises");
    let source = ShaderSource::from(source);
    let options = CompilerOptions {
        target: Target::Vulkan {
            version: VulkanVersion::Vulkan1_3,
            spirv_version: SpirvVersion::SPIRV1_6,
        },
        ..CompilerOptions::default()
    };
    let input = ShaderInput::new(
        &source,
        ShaderStage::Compute,
        &options,
        None::<&[(&str, Option<&str>)]>,
        None,
    )
    .unwrap_or_else(|e| panic!("{name}: {e:?}"));
    let shader = compiler
        .create_shader(input)
        .unwrap_or_else(|e| panic!("{name}: {e:?}"));
    shader.compile().unwrap_or_else(|e| panic!("{name}: {e:?}"))
}

/// What each shader must compile to, so that a silently dropped feature is caught.
fn expected_features(name: &str) -> &'static [&'static str] {
    match name {
        "rotate.comp" => &[
            "OpExtension \"SPV_KHR_subgroup_rotate\"",
            "OpCapability GroupNonUniformRotateKHR",
            "OpGroupNonUniformRotateKHR %uint %uint_3 ",
            "OpGroupNonUniformRotateKHR %v4float %uint_3 ",
        ],
        "dot.comp" => &[
            "OpCapability DotProductInput4x8BitPacked",
            "OpCapability DotProductInput4x8Bit\n",
            "OpSDot %int",
            "OpUDot %uint",
            "OpSDotAccSat %int",
            "OpSUDotAccSat %int",
            "OpUDotAccSat %uint",
            "PackedVectorFormat4x8Bit",
        ],
        "coopmat.comp" => &[
            "OpExtension \"SPV_KHR_cooperative_matrix\"",
            "OpTypeCooperativeMatrixKHR %half %uint_3 %uint_16 %uint_16 %uint_0",
            "OpCooperativeMatrixLoadKHR",
            "OpCooperativeMatrixMulAddKHR",
            "OpCooperativeMatrixLengthKHR",
            "OpCooperativeMatrixStoreKHR",
        ],
        "reconverge.comp" => &[
            "OpExtension \"SPV_KHR_maximal_reconvergence\"",
            "OpExecutionMode %main MaximallyReconvergesKHR",
            "OpSwitch",
            "OpLoopMerge",
        ],
        "literals.comp" => &[
            "%long_n9000000000 = OpConstant %long -9000000000",
            "%half_0x1_998pn4 = OpConstant %half 0x1.998p-4",
            "%double_1_0000000000000001e_300 = OpConstant %double 1.0000000000000001e+300",
            "%double_0x1pn1074 = OpConstant %double 0x1p-1074",
            " -7 %",
        ],
        _ => &["OpCapability Shader"],
    }
}

/// The words with the generator word cleared (each assembler writes its own).
fn without_generator(mut words: Vec<u32>) -> Vec<u32> {
    if let Some(generator) = words.get_mut(2) {
        *generator = 0;
    }
    words
}

/// Whether `b` is `a` with its ids consistently renamed (a bijection), everything else equal.
fn same_up_to_ids(a: &Module, b: &Module) -> Result<(), String> {
    use std::collections::HashMap;
    if a.instructions.len() != b.instructions.len() {
        return Err(format!(
            "{} vs {} instructions",
            a.instructions.len(),
            b.instructions.len()
        ));
    }
    let mut forward: HashMap<u32, u32> = HashMap::new();
    let mut backward: HashMap<u32, u32> = HashMap::new();
    let mut pair = |x: u32, y: u32| {
        forward.entry(x).or_insert(y) == &y && backward.entry(y).or_insert(x) == &x
    };
    for (i, (x, y)) in a.instructions.iter().zip(&b.instructions).enumerate() {
        let ids = |inst: &tangle_spirv::Instruction| {
            inst.result_type
                .into_iter()
                .chain(inst.result_id)
                .chain(inst.operands.iter().filter_map(|o| o.id()))
                .collect::<Vec<_>>()
        };
        let strip = |inst: &tangle_spirv::Instruction| {
            inst.operands
                .iter()
                .map(|o| {
                    if o.id().is_some() {
                        None
                    } else {
                        Some(o.clone())
                    }
                })
                .collect::<Vec<_>>()
        };
        let (ix, iy) = (ids(x), ids(y));
        let same_shape = x.opcode == y.opcode
            && x.result_type.is_some() == y.result_type.is_some()
            && x.result_id.is_some() == y.result_id.is_some()
            && strip(x) == strip(y)
            && ix.len() == iy.len();
        if !same_shape || !ix.iter().zip(&iy).all(|(p, q)| pair(*p, *q)) {
            return Err(format!("instruction {i} ({}) differs", x.name()));
        }
    }
    Ok(())
}

/// The assembler checks of one shader; the failures.
fn round_trip(name: &str, module: &Module, text: &str, env: TargetEnv) -> Vec<String> {
    let options = AssembleOptions { target_env: env };
    let mut failures = Vec::new();
    match assemble(text, &options) {
        Ok((again, _)) => {
            let reference = tangle_reference::run(
                "spirv-as",
                &["--target-env", "vulkan1.3", "-o", "-", "-"],
                text.as_bytes(),
            )
            .expect("spirv-as assembles spirv-dis text");
            let reference: Vec<u32> = reference
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            if without_generator(again.to_words()) != without_generator(reference) {
                failures.push(format!(
                    "{name}: assembling the friendly-name text differs from spirv-as"
                ));
            }
        }
        Err(e) => failures.push(format!(
            "{name}: tangle cannot assemble its own disassembly: {e}"
        )),
    }
    let raw = DisassembleOptions {
        raw_id: true,
        header: false,
        indent: false,
    };
    let first = match assemble(&disassemble(module, &raw), &options) {
        Ok((m, _)) => m,
        Err(e) => {
            failures.push(format!("{name}: cannot assemble the raw-id text: {e}"));
            return failures;
        }
    };
    if let Err(e) = same_up_to_ids(module, &first) {
        failures.push(format!("{name}: raw-id round trip changed the module: {e}"));
    }
    match assemble(&disassemble(&first, &raw), &options) {
        Ok((second, _)) if second.to_words() == first.to_words() => {}
        Ok(_) => failures.push(format!("{name}: second round trip changed the words")),
        Err(e) => failures.push(format!("{name}: second round trip does not assemble: {e}")),
    }
    failures
}

#[test]
fn glslang_shaders_disassemble_like_spirv_dis_and_reassemble_to_the_same_words() {
    let cases = sources();
    assert!(
        cases.len() >= 4,
        "expected the four extension shaders in {CASES}"
    );
    let env = TargetEnv::parse("vulkan1.3").expect("known environment");
    let mut failures = Vec::new();
    for (name, source) in &cases {
        let words = compile(name, source);
        let module = Module::from_words(&words)
            .unwrap_or_else(|e| panic!("{name}: cannot decode glslang output: {e}"));
        let text = disassemble(&module, &DisassembleOptions::default());
        for feature in expected_features(name) {
            assert!(
                text.contains(feature),
                "{name}: {feature:?} missing from\n{text}"
            );
        }

        let bytes = tangle_spirv::binary::words_to_bytes(&words);
        let reference = tangle_reference::run("spirv-dis", &["--no-color", "-"], &bytes)
            .expect("spirv-dis reads glslang output");
        if text != String::from_utf8_lossy(&reference) {
            failures.push(format!("{name}: text differs from spirv-dis"));
        }

        failures.extend(round_trip(name, &module, &text, env));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
