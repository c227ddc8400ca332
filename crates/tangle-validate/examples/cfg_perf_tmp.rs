use std::time::Instant;
use tangle_spirv::text::{assemble, AssembleOptions};
use tangle_spirv::TargetEnv;

fn main() {
    let env = TargetEnv::parse("vulkan1.3").unwrap();
    for (name, depth, seq) in [("nested", 1500usize, 0usize), ("sequential", 0, 1500), ("mixed", 300, 600)] {
        let mut t = String::from("OpCapability Shader\nOpMemoryModel Logical GLSL450\nOpEntryPoint GLCompute %main \"main\"\nOpExecutionMode %main LocalSize 1 1 1\n%void = OpTypeVoid\n%fn = OpTypeFunction %void\n%bool = OpTypeBool\n%c = OpConstantTrue %bool\n%main = OpFunction %void None %fn\n%e = OpLabel\nOpBranch %n0\n");
        // nested ifs
        for i in 0..depth {
            t += &format!("%n{i} = OpLabel\nOpSelectionMerge %m{i} None\nOpBranchConditional %c %n{} %m{i}\n", i + 1);
        }
        t += &format!("%n{depth} = OpLabel\nOpBranch %l0\n");
        // sequential loops, each with a break-if
        for i in 0..seq {
            t += &format!("%l{i} = OpLabel\nOpLoopMerge %lm{i} %lc{i} None\nOpBranchConditional %c %lb{i} %lm{i}\n%lb{i} = OpLabel\nOpBranchConditional %c %lm{i} %lc{i}\n%lc{i} = OpLabel\nOpBranch %l{i}\n%lm{i} = OpLabel\nOpBranch %l{}\n", i + 1);
        }
        t += &format!("%l{seq} = OpLabel\nOpBranch %m{}\n", depth.saturating_sub(1));
        for i in (0..depth).rev() {
            if i == 0 { t += "%m0 = OpLabel\nOpReturn\n"; } else { t += &format!("%m{i} = OpLabel\nOpBranch %m{}\n", i - 1); }
        }
        if depth == 0 { t = t.replace("OpBranch %m0\n", "OpReturn\n"); t = t.replace("%e = OpLabel\nOpBranch %n0\n%n0 = OpLabel\nOpBranch %l0\n", "%e = OpLabel\nOpBranch %l0\n"); }
        t += "OpFunctionEnd\n";
        let (m, _) = assemble(&t, &AssembleOptions { target_env: env }).unwrap();
        let r = tangle_validate::validate(&m, env, &Default::default());
        if let Err(d) = &r { println!("{name}: INVALID {:?}", d.iter().take(3).map(|d| d.error.rule()).collect::<Vec<_>>()); }
        let start = Instant::now();
        for _ in 0..5 { let _ = tangle_validate::validate(&m, env, &Default::default()); }
        println!("{name}: {} instructions, {:?} per validation", m.instructions.len(), start.elapsed() / 5);
        let words = m.to_words();
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        std::fs::write(format!("/tmp/perf_{name}.spv"), bytes).unwrap();
    }
}
