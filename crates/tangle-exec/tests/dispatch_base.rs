//! `RunOptions::base` (`vkCmdDispatchBase`): `WorkgroupId` runs from the base, and
//! `GlobalInvocationId` with it, on every path a dispatch may take (a base routes it to the
//! reference path); `NumWorkgroups` stays the count.

mod common;
use common::*;
use tangle_exec::{Device, Profile, Resources, RunOptions};

const SHADER: &str = r#"
#version 450
layout(local_size_x = 4) in;
layout(set = 0, binding = 0) buffer Out { uint o[]; };
void main() {
    o[gl_GlobalInvocationID.x] =
        100000u * gl_NumWorkGroups.x + 1000u * gl_WorkGroupID.x + gl_GlobalInvocationID.x;
}
"#;

#[test]
fn workgroup_ids_start_at_the_base() {
    let pipeline = Device::new(Profile::default())
        .compute_pipeline(&compile(SHADER), "main", &Default::default())
        .expect("pipeline");
    for (wide, jit) in [(true, true), (true, false), (false, false)] {
        let mut res = Resources::default();
        res.buffers.insert((0, 0), u32s(&[7; 24]));
        let options = RunOptions {
            base: [3, 0, 0],
            wide,
            jit,
            threads: 2,
            ..RunOptions::default()
        };
        pipeline
            .dispatch(&mut res, [2, 1, 1], &options)
            .expect("a dispatch");
        let out = to_u32s(&res.buffers[&(0, 0)]);
        // Workgroups 3 and 4: invocations 12..20; the rest untouched.
        let want: Vec<u32> = (0..24)
            .map(|i| match i {
                12..20 => 200_000 + 1000 * (i / 4) + i,
                _ => 7,
            })
            .collect();
        assert_eq!(out, want, "wide {wide}, jit {jit}");
    }
}
