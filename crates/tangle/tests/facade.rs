//! The facade path: a GLSL or text source → validated module → pipeline → dispatch, and the
//! refusal of invalid modules before anything runs.

use tangle::{
    load_module, Device, LoadError, Profile, Resources, RunOptions, Source, SpecConstants,
    TargetEnv,
};

const DOUBLE: &str = r#"#version 450
layout(local_size_x = 16) in;
layout(set = 0, binding = 0, std430) buffer B { uint v[]; };
void main() { v[gl_GlobalInvocationID.x] = 2u * v[gl_GlobalInvocationID.x] + 1u; }
"#;

#[test]
fn glsl_runs_through_the_facade() {
    let env = TargetEnv::parse("vulkan1.3").expect("known env");
    let module = load_module(Source::Glsl(DOUBLE), env).expect("valid GLSL");
    let device = Device::new(Profile::default());
    let pipeline = device
        .compute_pipeline(&module, "main", &SpecConstants::new())
        .expect("lowers");
    let input: Vec<u32> = (0..48).map(|i| i * 7 + 3).collect();
    let mut resources = Resources::default();
    resources
        .buffers
        .insert((0, 0), input.iter().flat_map(|v| v.to_le_bytes()).collect());
    let report = pipeline
        .dispatch(&mut resources, [3, 1, 1], &RunOptions::default())
        .expect("runs");
    assert!(report.diagnostics.is_empty());
    let out: Vec<u32> = resources.buffers[&(0, 0)]
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let expected: Vec<u32> = input.iter().map(|v| 2 * v + 1).collect();
    assert_eq!(out, expected);
}

#[test]
fn invalid_modules_are_refused_with_their_diagnostics() {
    let env = TargetEnv::parse("vulkan1.3").expect("known env");
    // OpGroupNonUniformRotateKHR without its capability and extension.
    let text = "OpCapability Shader\nOpMemoryModel Logical GLSL450\nOpEntryPoint GLCompute %main \"main\"\n\
        OpExecutionMode %main LocalSize 1 1 1\n%void = OpTypeVoid\n%uint = OpTypeInt 32 0\n%u3 = OpConstant %uint 3\n\
        %f = OpTypeFunction %void\n%main = OpFunction %void None %f\n%l = OpLabel\n\
        %r = OpGroupNonUniformRotateKHR %uint %u3 %u3 %u3\nOpReturn\nOpFunctionEnd\n";
    match load_module(Source::Text(text), env) {
        Err(LoadError::Invalid { diagnostics, .. }) => {
            assert!(
                diagnostics.iter().any(|d| d.contains("<module>:11:1")),
                "{diagnostics:?}"
            )
        }
        other => panic!("expected the module to be refused, got {other:?}"),
    }
    assert!(matches!(
        load_module(Source::Words(&[1, 2, 3]), env),
        Err(LoadError::Binary(_))
    ));
    assert!(matches!(
        load_module(Source::Glsl("#version 450\nvoid main() { x = 1; }"), env),
        Err(LoadError::Glsl(_))
    ));
}
