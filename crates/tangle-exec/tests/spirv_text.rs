//! Shaders written as SPIR-V assembly (instructions glslang does not emit), assembled with
//! `tangle_spirv::text::assemble`.

mod common;
use common::*;

/// Assembles for Vulkan 1.3 and validates (tangle and spirv-val).
fn assemble(src: &str) -> tangle_validate::Validated<'static> {
    let options = tangle_spirv::text::AssembleOptions {
        target_env: tangle_spirv::TargetEnv::parse(ENV).expect("known environment"),
    };
    let module = tangle_spirv::text::assemble(src, &options)
        .map(|(m, _)| m)
        .unwrap_or_else(|e| panic!("assemble: {e:?}"));
    validated(module)
}

#[test]
fn ptr_access_chain_copy_memory_and_64_bit_switch() {
    let src = include_str!("cases/memory/ptr_chain_copy_switch64.spvasm");
    let module = assemble(src);
    let job = Job::new(vec![u32s(&[10, 11, 12, 13, 0, 0, 0, 0])], [1, 1, 1]);
    let (out, report) = run_module(&module, &job);
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
    // dst = src + 4 elements; add 1 for x = 2 and 100 for x = 3.
    assert_eq!(to_u32s(&out[0]), vec![10, 11, 12, 13, 10, 11, 13, 113]);
}

/// `OpSpecConstantOp` folds the opcode it wraps (only those of the spec's list reach the
/// executor: the reader and the validator refuse the others, OpNop included).
#[test]
fn spec_constant_ops_fold_the_wrapped_instruction() {
    let src = r#"
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %buf
               OpExecutionMode %main LocalSize 1 1 1
               OpDecorate %arr ArrayStride 4
               OpMemberDecorate %Buf 0 Offset 0
               OpDecorate %Buf Block
               OpDecorate %buf DescriptorSet 0
               OpDecorate %buf Binding 0
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %bool = OpTypeBool
       %uint = OpTypeInt 32 0
        %v2u = OpTypeVector %uint 2
       %arr = OpTypeRuntimeArray %uint
        %Buf = OpTypeStruct %arr
     %ptr_b = OpTypePointer StorageBuffer %Buf
     %ptr_u = OpTypePointer StorageBuffer %uint
       %buf = OpVariable %ptr_b StorageBuffer
          %a = OpSpecConstant %uint 7
          %b = OpSpecConstant %uint 0xfffffff0
     %uint_0 = OpConstant %uint 0
     %uint_1 = OpConstant %uint 1
     %uint_2 = OpConstant %uint 2
     %uint_3 = OpConstant %uint 3
     %uint_4 = OpConstant %uint 4
        %sum = OpSpecConstantOp %uint IAdd %a %b
      %shift = OpSpecConstantOp %uint ShiftLeftLogical %a %uint_4
       %pair = OpSpecConstantComposite %v2u %a %b
     %second = OpSpecConstantOp %uint CompositeExtract %pair 1
       %less = OpSpecConstantOp %bool ULessThan %a %b
     %chosen = OpSpecConstantOp %uint Select %less %sum %shift
       %main = OpFunction %void None %fn
      %entry = OpLabel
         %p0 = OpAccessChain %ptr_u %buf %uint_0 %uint_0
               OpStore %p0 %sum
         %p1 = OpAccessChain %ptr_u %buf %uint_0 %uint_1
               OpStore %p1 %shift
         %p2 = OpAccessChain %ptr_u %buf %uint_0 %uint_2
               OpStore %p2 %second
         %p3 = OpAccessChain %ptr_u %buf %uint_0 %uint_3
               OpStore %p3 %chosen
               OpReturn
               OpFunctionEnd
"#;
    let module = assemble(src);
    let job = Job::new(vec![u32s(&[0; 4])], [1, 1, 1]);
    let (out, report) = run_module(&module, &job);
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
    let (a, b) = (7u32, 0xffff_fff0u32);
    let sum = a.wrapping_add(b);
    let chosen = if a < b { sum } else { a << 4 };
    assert_eq!(to_u32s(&out[0]), vec![sum, a << 4, b, chosen]);
}

/// Divisions and remainders of specialization constants fold (ggml's flash attention under
/// the `intel` profile divides two: `OpSpecConstantOp UDiv`, refused until then). A zero
/// divisor makes the folded value undefined, like an `OpUndef`'s: stored, it is reported where
/// it reaches the buffer, naming the `OpSpecConstantOp`; discarded by a `Select` (glslang's
/// `SubGroupSize == 0 ? 0 : WorkGroupSize / SubGroupSize`, as ggml writes it), it reports
/// nothing and the chosen value is stored.
#[test]
fn spec_constant_divisions_fold_and_a_zero_divisor_is_an_undefined_value() {
    let src = r#"
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %buf
               OpExecutionMode %main LocalSize 1 1 1
               OpDecorate %arr ArrayStride 4
               OpMemberDecorate %Buf 0 Offset 0
               OpDecorate %Buf Block
               OpDecorate %buf DescriptorSet 0
               OpDecorate %buf Binding 0
               OpDecorate %a SpecId 0
               OpDecorate %b SpecId 1
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
       %bool = OpTypeBool
       %arr = OpTypeRuntimeArray %uint
        %Buf = OpTypeStruct %arr
     %ptr_b = OpTypePointer StorageBuffer %Buf
     %ptr_u = OpTypePointer StorageBuffer %uint
       %buf = OpVariable %ptr_b StorageBuffer
          %a = OpSpecConstant %uint 7
          %b = OpSpecConstant %uint 100
     %uint_0 = OpConstant %uint 0
     %uint_1 = OpConstant %uint 1
     %uint_2 = OpConstant %uint 2
     %uint_3 = OpConstant %uint 3
          %q = OpSpecConstantOp %uint UDiv %b %a
          %r = OpSpecConstantOp %uint UMod %b %a
          %s = OpSpecConstantOp %uint ShiftRightLogical %b %a
       %zero = OpSpecConstantOp %bool IEqual %a %uint_0
     %chosen = OpSpecConstantOp %uint Select %zero %uint_0 %q
       %main = OpFunction %void None %fn
      %entry = OpLabel
         %p0 = OpAccessChain %ptr_u %buf %uint_0 %uint_0
               OpStore %p0 %q
         %p1 = OpAccessChain %ptr_u %buf %uint_0 %uint_1
               OpStore %p1 %r
         %p2 = OpAccessChain %ptr_u %buf %uint_0 %uint_2
               OpStore %p2 %s
         %p3 = OpAccessChain %ptr_u %buf %uint_0 %uint_3
               OpStore %p3 %chosen
               OpReturn
               OpFunctionEnd
"#;
    let module = assemble(src);
    let job = |a: u32, b: u32| {
        let mut job = Job::new(vec![u32s(&[0; 4])], [1, 1, 1]);
        job.spec.insert(0, u64::from(a));
        job.spec.insert(1, u64::from(b));
        job
    };
    for (a, b) in [(7u32, 100u32), (9, 4096), (3, 2)] {
        let (out, report) = run_module(&module, &job(a, b));
        assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
        assert_eq!(
            to_u32s(&out[0]),
            vec![b / a, b % a, b >> a, b / a],
            "{b} / {a}"
        );
    }
    // A zero divisor: the quotient and the remainder are undefined where stored; the shift by
    // zero and the Select's chosen zero are not.
    let (out, report) = run_module(&module, &job(0, 100));
    let places: Vec<tangle_exec::InstRef> = report
        .diagnostics
        .iter()
        .map(|d| match &d.finding {
            tangle_exec::Finding::Uninit(u) => {
                assert_eq!(u.origin.name, "OpSpecConstantOp", "{u}");
                d.at.clone()
            }
            f => panic!("{f:?}"),
        })
        .collect();
    assert_eq!(places.len(), 2, "{:?}", report.diagnostics);
    assert_eq!(to_u32s(&out[0])[2..], [100, 0]);
}

/// An `OpUndef` passed by value to a function, compared there and returned: the branch on the
/// result names the `OpUndef` as the origin (origins survive parameters and returned values),
/// and the same call with a constant is clean.
#[test]
fn undefined_values_keep_their_origin_through_calls() {
    let src = |arg: &str| {
        format!(
            r#"
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main"
               OpExecutionMode %main LocalSize 8 1 1
       %void = OpTypeVoid
       %uint = OpTypeInt 32 0
       %bool = OpTypeBool
         %fn = OpTypeFunction %void
        %fnu = OpTypeFunction %bool %uint
      %undef = OpUndef %uint
         %c3 = OpConstant %uint 3
          %f = OpFunction %bool None %fnu
          %p = OpFunctionParameter %uint
          %l = OpLabel
          %r = OpUGreaterThan %bool %p %c3
               OpReturnValue %r
               OpFunctionEnd
       %main = OpFunction %void None %fn
          %e = OpLabel
          %b = OpFunctionCall %bool %f {arg}
               OpSelectionMerge %m None
               OpBranchConditional %b %t %m
          %t = OpLabel
               OpBranch %m
          %m = OpLabel
               OpReturn
               OpFunctionEnd
"#
        )
    };
    let job = Job::new(vec![], [1, 1, 1]);
    let (_, report) = run_module(&assemble(&src("%undef")), &job);
    assert_eq!(report.diagnostics.len(), 8, "{:?}", report.diagnostics);
    for d in &report.diagnostics {
        match &d.finding {
            tangle_exec::Finding::Uninit(u) => {
                assert_eq!(
                    u.used_as,
                    tangle_exec::check::uninit::UsedAs::BranchCondition
                );
                assert_eq!(u.origin.name, "OpUndef");
            }
            f => panic!("{f:?}"),
        }
    }
    let (_, report) = run_module(&assemble(&src("%c3")), &job);
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
}
