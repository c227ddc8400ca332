//! SPV_KHR_workgroup_memory_explicit_layout: Workgroup `Block` variables share one region with
//! their explicit layouts, so a store through one view is read through the others (8-, 16-,
//! 32-bit and vector views, checked against the little-endian bytes of random words); a profile
//! without VK_KHR_workgroup_memory_explicit_layout refuses the capability, and a module mixing
//! Block and non-Block Workgroup variables is refused.

mod common;

use common::{compile, run_glsl, to_u32s, u32s, Job, Rng};
use tangle_exec::{Device, ExecError, Profile};

/// Invocation i stores word i through `a`, then reads bytes 4i..4i+4 through `c`, halves
/// 2i..2i+2 through `b` and component i of the vector view `d`.
const VIEWS: &str = r#"
#version 450
#extension GL_EXT_shared_memory_block : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 16) in;
shared A { uint w[16]; } a;
shared B { uint16_t h[32]; } b;
shared C { uint8_t y[64]; } c;
shared D { uvec4 v[4]; } d;
layout(set = 0, binding = 0) buffer In { uint words[16]; };
layout(set = 0, binding = 1) buffer Out { uint bytes[64]; uint halves[32]; uint vec[16]; };
void main() {
  uint i = gl_LocalInvocationID.x;
  a.w[i] = words[i];
  barrier();
  for (uint k = 0u; k < 4u; k++) bytes[4u * i + k] = uint(c.y[4u * i + k]);
  for (uint k = 0u; k < 2u; k++) halves[2u * i + k] = uint(b.h[2u * i + k]);
  vec[i] = d.v[i / 4u][i % 4u];
}
"#;

#[test]
fn block_views_alias_one_region() {
    let mut rng = Rng(6);
    for _ in 0..10 {
        let words: Vec<u32> = (0..16).map(|_| rng.u32()).collect();
        let job = Job::new(vec![u32s(&words), vec![0; 4 * 112]], [1, 1, 1]);
        let (out, report) = run_glsl(VIEWS, &job);
        assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
        let out = to_u32s(&out[1]);
        // The reference: the little-endian bytes and halves of the words.
        let bytes: Vec<u32> = words
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .map(u32::from)
            .collect();
        let halves: Vec<u32> = words.iter().flat_map(|w| [w & 0xffff, w >> 16]).collect();
        assert_eq!(&out[..64], &bytes[..]);
        assert_eq!(&out[64..96], &halves[..]);
        assert_eq!(&out[96..], &words[..]);
    }
}

#[test]
fn the_workgroup_size_is_the_largest_block() {
    let device = Device::new(Profile::default());
    let p = device
        .compute_pipeline(&compile(VIEWS), "main", &Default::default())
        .expect("pipeline");
    assert_eq!(p.program().workgroup_bytes, 64);
}

#[test]
fn a_profile_without_the_extension_refuses_the_capability() {
    let device = Device::new(Profile {
        workgroup_memory_explicit_layout: false,
        ..Profile::default()
    });
    let err = device
        .compute_pipeline(&compile(VIEWS), "main", &Default::default())
        .expect_err("refused");
    assert!(
        matches!(&err, ExecError::ProfileLacks { what, .. } if what == "VK_KHR_workgroup_memory_explicit_layout"),
        "{err}"
    );
}

#[test]
fn mixing_block_and_plain_workgroup_variables_is_refused() {
    // spirv-val rejects this module ("either all or none of the Workgroup Storage Class
    // variables in the entry point interface must point to struct types decorated with Block"),
    // and so does tangle's validator (`Interface::WorkgroupBlocksMixed`, with differential cases
    // in tangle-validate), so no validated module reaches the executor's own refusal
    // (`lower/mod.rs` `workgroup_offset`), which stays as a second line.
    let src = r#"
               OpCapability Shader
               OpCapability WorkgroupMemoryExplicitLayoutKHR
               OpExtension "SPV_KHR_workgroup_memory_explicit_layout"
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %blk %plain
               OpExecutionMode %main LocalSize 1 1 1
               OpDecorate %S Block
               OpMemberDecorate %S 0 Offset 0
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
          %S = OpTypeStruct %uint
      %ptr_S = OpTypePointer Workgroup %S
      %ptr_u = OpTypePointer Workgroup %uint
        %blk = OpVariable %ptr_S Workgroup
      %plain = OpVariable %ptr_u Workgroup
       %main = OpFunction %void None %fn
      %entry = OpLabel
               OpReturn
               OpFunctionEnd
"#;
    let env = tangle_spirv::TargetEnv::parse("vulkan1.3").expect("env");
    let (module, _) = tangle_spirv::text::assemble(src, &Default::default()).expect("assembles");
    let diagnostics =
        tangle_validate::validate(&module, env, &tangle_validate::ValidateOptions::default())
            .map(|_| ())
            .expect_err("the validator refuses it");
    assert!(
        diagnostics
            .iter()
            .any(|d| d.error.rule() == "Interface::WorkgroupBlocksMixed"),
        "{}",
        tangle_validate::render_all(&diagnostics, &module, "<test>", None)
    );
}
