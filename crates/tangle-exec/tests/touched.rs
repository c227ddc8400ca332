//! `RunOptions::touched`: the bytes each binding's accesses touched, the same on the native
//! tier, the wide path and the reference path (`check/touched.rs`), for the driver's hazards
//! between dispatches.

mod common;

use common::{compile, u32s};
use tangle_exec::check::touched::Touched;
use tangle_exec::{Device, Profile, Resources, RunOptions, SpecConstants};

/// `y[i] = x[2 i] + 1` for `i < 40`: strided loads of a read-only buffer, a run of stores.
const STRIDED: &str = "#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) readonly buffer X { uint x[]; };
layout(set = 0, binding = 1, std430) buffer Y { uint y[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < 40u) y[i] = x[2u * i] + 1u;
}
";

fn touched((wide, jit): (bool, bool), record: bool) -> Option<Vec<Touched>> {
    let module = compile(STRIDED);
    let device = Device::new(Profile::default());
    let pipeline = device
        .compute_pipeline(&module, "main", &SpecConstants::new())
        .expect("pipeline");
    let mut res = Resources::default();
    res.buffers.insert((0, 0), u32s(&[7; 128]));
    res.buffers.insert((0, 1), u32s(&[0; 64]));
    let options = RunOptions {
        wide,
        jit,
        touched: record,
        ..RunOptions::default()
    };
    let report = pipeline
        .dispatch(&mut res, [1, 1, 1], &options)
        .expect("dispatch");
    assert_eq!(res.buffers.get(&(0, 1)).map(|b| b[0]), Some(8));
    report.touched
}

#[test]
fn both_paths_record_the_bytes_each_binding_touched() {
    let reads: Vec<(u64, u64)> = (0..40).map(|i| (8 * i, 8 * i + 4)).collect();
    let want = vec![
        Touched {
            key: (0, 0, None),
            reads,
            ..Touched::default()
        },
        Touched {
            key: (0, 1, None),
            writes: vec![(0, 160)],
            ..Touched::default()
        },
    ];
    assert_eq!(
        touched((false, false), true),
        Some(want.clone()),
        "reference path"
    );
    assert_eq!(
        touched((true, false), true),
        Some(want.clone()),
        "wide path"
    );
    assert_eq!(touched((true, true), true), Some(want), "native tier");
    // Not asked for: no record.
    assert_eq!(touched((true, true), false), None);
}
