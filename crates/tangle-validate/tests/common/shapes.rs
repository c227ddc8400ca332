//! Large modules of one shape each, as SPIR-V text, for the scaling measurements
//! (`benches/scaling.rs`) and the nesting-limit test (`tests/scaling.rs`):
//! * [`deep`] — selections nested `n` deep;
//! * [`wide`] — `n` selections one after another, each using a value of the entry block;
//! * [`calls`] — `n` functions, each calling the next.

use std::fmt::Write as _;

const HEADER: &str = "OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main \"main\"
OpExecutionMode %main LocalSize 1 1 1
%void = OpTypeVoid
%fn = OpTypeFunction %void
%bool = OpTypeBool
%u32 = OpTypeInt 32 0
%u1 = OpConstant %u32 1
%c = OpConstantTrue %bool
";

/// `n` nested selections: header `h{i}` branches to `h{i+1}` or to its merge block `m{i}`, and
/// each merge block branches to the enclosing one. Valid up to a nesting depth of 1023.
pub fn deep(n: usize) -> String {
    let mut s = String::from(HEADER);
    s.push_str("%main = OpFunction %void None %fn\n%h0 = OpLabel\n");
    for i in 0..n {
        let _ = writeln!(
            s,
            "OpSelectionMerge %m{i} None\nOpBranchConditional %c %h{} %m{i}\n%h{} = OpLabel",
            i + 1,
            i + 1
        );
    }
    let _ = writeln!(s, "OpBranch %m{}", n.saturating_sub(1));
    for i in (0..n).rev() {
        let _ = writeln!(s, "%m{i} = OpLabel");
        if i == 0 {
            s.push_str("OpReturn\n");
        } else {
            let _ = writeln!(s, "OpBranch %m{}", i - 1);
        }
    }
    s.push_str("OpFunctionEnd\n");
    s
}

/// `n` selections in sequence, each merge block the next header; every then-block uses a value
/// defined in the entry block, so that dominance is checked across the whole function.
pub fn wide(n: usize) -> String {
    let mut s = String::from(HEADER);
    s.push_str("%main = OpFunction %void None %fn\n%h0 = OpLabel\n%v = OpIAdd %u32 %u1 %u1\n");
    for i in 0..n {
        let next = i + 1;
        let _ = writeln!(
            s,
            "OpSelectionMerge %h{next} None\nOpBranchConditional %c %t{i} %h{next}\n\
             %t{i} = OpLabel\n%x{i} = OpIAdd %u32 %v %u1\nOpBranch %h{next}\n%h{next} = OpLabel"
        );
    }
    s.push_str("OpReturn\nOpFunctionEnd\n");
    s
}

/// `n` functions after `main`, each calling the next.
pub fn calls(n: usize) -> String {
    let mut s = String::from(HEADER);
    for i in 0..=n {
        let name = if i == 0 {
            "main".to_string()
        } else {
            format!("f{i}")
        };
        let _ = writeln!(s, "%{name} = OpFunction %void None %fn\n%e{i} = OpLabel");
        if i < n {
            let _ = writeln!(s, "%r{i} = OpFunctionCall %void %f{}", i + 1);
        }
        s.push_str("OpReturn\nOpFunctionEnd\n");
    }
    s
}
