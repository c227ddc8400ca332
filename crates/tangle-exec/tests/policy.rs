//! Scheduling policies (`tangle_exec::policy`): reconvergence `maximal`/`weak`/`random:SEED`,
//! branch order, switch grouping, determinism across thread counts, and the trace of a run.

mod common;

use common::{compile, to_u32s, u32s};
use tangle_exec::{Device, Policy, Profile, Report, Resources, RunOptions};
use tangle_validate::Validated;

/// Runs `module` with one zeroed buffer of `words` words at (0, 0).
fn run(
    module: &Validated<'_>,
    words: usize,
    groups: u32,
    subgroup: u32,
    policy: &str,
    threads: usize,
    trace: bool,
) -> (Vec<u32>, Report) {
    let profile = Profile::default()
        .with_subgroup_size(subgroup)
        .expect("subgroup size");
    let pipeline = Device::new(profile)
        .compute_pipeline(module, "main", &Default::default())
        .unwrap_or_else(|e| panic!("pipeline: {e}"));
    let mut res = Resources::default();
    res.buffers.insert((0, 0), u32s(&vec![0; words]));
    let options = RunOptions {
        threads,
        policy: policy.parse::<Policy>().expect("policy"),
        trace,
        ..RunOptions::default()
    };
    let report = pipeline
        .dispatch(&mut res, [groups, 1, 1], &options)
        .unwrap_or_else(|e| panic!("dispatch: {e}"));
    (to_u32s(&res.buffers[&(0, 0)]), report)
}

/// Eight invocations: an outer branch on `id < 4`, an inner one on `id < 2` in its true side,
/// a ballot after the inner merge (word id) and one after the outer merge (word 8 + id). Each
/// workgroup writes its own 16 words.
const NESTED: &str = r#"#version 450
#extension GL_KHR_shader_subgroup_ballot : require
layout(local_size_x = 8) in;
layout(set = 0, binding = 0) buffer B { uint data[]; };
void main() {
    uint id = gl_SubgroupInvocationID;
    uint base = gl_WorkGroupID.x * 24u;
    uint r;
    if (id < 4u) {
        if (id < 2u) { data[base + 16u + id] = 1u; } else { data[base + 16u + id] = 2u; }
        r = subgroupBallot(true).x;
    } else {
        data[base + 16u + id] = 3u;
        r = 100u;
    }
    data[base + id] = r;
    data[base + 8u + id] = subgroupBallot(true).x;
}
"#;

#[test]
fn ballot_after_a_nested_merge_differs_between_maximal_and_weak() {
    let m = compile(NESTED);
    let (max, _) = run(&m, 24, 1, 8, "maximal", 1, false);
    // Maximal: the inner selection merge is related to the inner OpSelectionMerge, whose tangle
    // held lanes 0-3: "T(L) will include all non-escaping invocations in T(M)".
    assert_eq!(&max[..8], &[0xf, 0xf, 0xf, 0xf, 100, 100, 100, 100]);
    let (weak, _) = run(&m, 24, 1, 8, "weak", 1, false);
    // Weak: lanes 4-7 are still in the outer else side, so control flow at the inner merge is
    // not uniform and the two inner tangles stay apart.
    assert_eq!(&weak[..8], &[0x3, 0x3, 0xc, 0xc, 100, 100, 100, 100]);
    // After the outer merge every invocation is there: uniform control flow, all policies
    // run the ballot together.
    for p in Policy::all() {
        let (out, _) = run(&m, 24, 1, 8, &p.to_string(), 1, false);
        assert_eq!(&out[8..16], &[0xff; 8], "{p}");
        assert_eq!(&out[16..24], &[1, 1, 2, 2, 3, 3, 3, 3], "{p}");
    }
}

#[test]
fn random_reconvergence_is_seeded_and_independent_of_threads() {
    let m = compile(NESTED);
    let groups = 64;
    let words = 24 * groups as usize;
    let (one, _) = run(&m, words, groups, 8, "random:7", 1, false);
    let (four, _) = run(&m, words, groups, 8, "random:7", 4, false);
    assert_eq!(one, four);
    let (again, _) = run(&m, words, groups, 8, "random:7", 2, false);
    assert_eq!(one, again);
    let (mut merged, mut apart) = (0, 0);
    for g in one.chunks_exact(24) {
        match &g[..4] {
            [0xf, 0xf, 0xf, 0xf] => merged += 1,
            [0x3, 0x3, 0xc, 0xc] => apart += 1,
            other => panic!("a ballot no policy allows: {other:?}"),
        }
        assert_eq!(
            &g[4..16],
            &[100, 100, 100, 100, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]
        );
    }
    // A fair coin per workgroup: both outcomes occur among 64 workgroups.
    assert!(merged > 0 && apart > 0, "merged {merged}, apart {apart}");
    let (other_seed, _) = run(&m, words, groups, 8, "random:8", 1, false);
    assert_ne!(one, other_seed);
}

/// Each invocation takes a ticket from a counter in its side of a divergent branch; the side
/// that runs first takes the low tickets.
const TICKETS: &str = r#"#version 450
layout(local_size_x = 8) in;
layout(set = 0, binding = 0) buffer B { uint counter; uint ticket[]; };
void main() {
    uint id = gl_LocalInvocationID.x;
    if ((id & 1u) == 0u) {
        ticket[id] = atomicAdd(counter, 1u);
    } else {
        ticket[id] = atomicAdd(counter, 1u) + 100u;
    }
}
"#;

#[test]
fn branch_order_is_observable_through_memory() {
    let m = compile(TICKETS);
    let sides = |policy: &str, threads: usize| {
        let (out, _) = run(&m, 9, 1, 8, policy, threads, false);
        assert_eq!(out[0], 8);
        let even: Vec<u32> = (0..8).step_by(2).map(|i| out[1 + i]).collect();
        let odd: Vec<u32> = (1..8).step_by(2).map(|i| out[1 + i] - 100).collect();
        (even, odd)
    };
    // True side first: the even invocations take tickets 0-3.
    assert_eq!(
        sides("maximal,true-first", 1),
        (vec![0, 1, 2, 3], vec![4, 5, 6, 7])
    );
    assert_eq!(
        sides("weak,true-first", 1),
        (vec![0, 1, 2, 3], vec![4, 5, 6, 7])
    );
    assert_eq!(
        sides("maximal,false-first", 1),
        (vec![4, 5, 6, 7], vec![0, 1, 2, 3])
    );
    assert_eq!(
        sides("weak,false-first,by-selector", 1),
        (vec![4, 5, 6, 7], vec![0, 1, 2, 3])
    );
    // A random order is one of the two, the same for every thread count.
    let mut seen = Vec::new();
    for seed in 0..16 {
        let p = format!("maximal,random:{seed}");
        let got = sides(&p, 1);
        assert_eq!(got, sides(&p, 4), "{p}");
        assert!(
            got == (vec![0, 1, 2, 3], vec![4, 5, 6, 7])
                || got == (vec![4, 5, 6, 7], vec![0, 1, 2, 3]),
            "{p}: {got:?}"
        );
        seen.push(got.0[0]);
    }
    assert!(seen.contains(&0) && seen.contains(&4), "{seen:?}");
}

/// Invocations 0-3 reach one case construct through four selector values.
const SWITCH: &str = r#"#version 450
#extension GL_KHR_shader_subgroup_ballot : require
layout(local_size_x = 8) in;
layout(set = 0, binding = 0) buffer B { uint data[]; };
void main() {
    uint id = gl_SubgroupInvocationID;
    switch (id) {
    case 0u: case 1u: case 2u: case 3u:
        data[id] = subgroupBallot(true).x;
        break;
    default:
        data[id] = 100u;
        break;
    }
    data[8u + id] = subgroupBallot(true).x;
}
"#;

#[test]
fn switch_grouping_by_case_or_by_selector() {
    let m = compile(SWITCH);
    // "Invocations with different Selector values executing the same case construct may be
    // partitioned into the same tangle": by-case does, by-selector does not.
    let (by_case, _) = run(&m, 16, 1, 8, "maximal,by-case", 1, false);
    assert_eq!(&by_case[..8], &[0xf, 0xf, 0xf, 0xf, 100, 100, 100, 100]);
    let (by_sel, _) = run(&m, 16, 1, 8, "maximal,by-selector", 1, false);
    assert_eq!(&by_sel[..8], &[1, 2, 4, 8, 100, 100, 100, 100]);
    // Both reconverge at the switch's merge block.
    assert_eq!(&by_case[8..], &[0xff; 8]);
    assert_eq!(&by_sel[8..], &[0xff; 8]);
}

/// The trace as JSON, parsed: (kind, mask, child masks) per event of workgroup 0.
fn events(report: &Report) -> Vec<(String, u128, Vec<u128>)> {
    let trace = report.trace.as_ref().expect("a trace");
    let text = tangle_exec::trace::file_json(std::slice::from_ref(trace));
    let v: serde_json::Value = serde_json::from_str(&text).expect("the trace is JSON");
    assert_eq!(v["version"], 1);
    let d = &v["dispatches"][0];
    assert_eq!(d["subgroup_size"], 8);
    let mask = |m: &serde_json::Value| {
        u128::from_str_radix(
            m.as_str().expect("mask string").trim_start_matches("0x"),
            16,
        )
        .expect("hex mask")
    };
    d["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|e| {
            assert_eq!(e["workgroup"], serde_json::json!([0, 0, 0]));
            assert_eq!(e["subgroup"], 0);
            assert!(e["function"].as_u64().is_some_and(|f| f > 0));
            assert!(e["block"].as_u64().is_some_and(|b| b > 0));
            let kind = e["kind"].as_str().expect("kind").to_string();
            let children = match kind.as_str() {
                "split" => e["into"]
                    .as_array()
                    .expect("into")
                    .iter()
                    .map(|c| mask(&c["mask"]))
                    .collect(),
                "join" => e["from"]
                    .as_array()
                    .expect("from")
                    .iter()
                    .map(mask)
                    .collect(),
                _ => Vec::new(),
            };
            (kind, mask(&e["mask"]), children)
        })
        .collect()
}

#[test]
fn trace_records_splits_joins_and_blocks() {
    let m = compile(NESTED);
    let (_, plain) = run(&m, 24, 1, 8, "maximal", 1, false);
    assert!(plain.trace.is_none());
    let (_, report) = run(&m, 24, 1, 8, "maximal", 1, true);
    let ev = events(&report);
    let of = |k: &str| -> Vec<(u128, Vec<u128>)> {
        ev.iter()
            .filter(|e| e.0 == k)
            .map(|e| (e.1, e.2.clone()))
            .collect()
    };
    assert_eq!(
        ev.first().map(|e| (e.0.as_str(), e.1)),
        Some(("block", 0xff))
    );
    assert_eq!(
        of("split"),
        vec![(0xff, vec![0x0f, 0xf0]), (0x0f, vec![0x3, 0xc])]
    );
    assert_eq!(
        of("join"),
        vec![(0x0f, vec![0x3, 0xc]), (0xff, vec![0x0f, 0xf0])]
    );
    assert_eq!(report.stats.splits, 2);
    assert_eq!(report.stats.joins, 2);
    // Blocks: the entry, then lanes 0-3, 0-1, 2-3, the inner merge with 0-3, the else side,
    // the outer merge with all.
    let blocks: Vec<u128> = of("block").into_iter().map(|b| b.0).collect();
    assert_eq!(blocks, vec![0xff, 0x0f, 0x3, 0xc, 0x0f, 0xf0, 0xff]);

    // Weak: no join at the inner merge; the three tangles rejoin at the outer one.
    let (_, report) = run(&m, 24, 1, 8, "weak", 1, true);
    let ev = events(&report);
    let joins: Vec<Vec<u128>> = ev
        .iter()
        .filter(|e| e.0 == "join")
        .map(|e| e.2.clone())
        .collect();
    assert_eq!(joins.len(), 1, "{ev:?}");
    let mut from = joins[0].clone();
    from.sort_unstable();
    assert_eq!(from, vec![0x3, 0xc, 0xf0]);
}

#[test]
fn the_maximal_reconvergence_mode_overrides_the_policy() {
    // The entry point declares MaximallyReconvergesKHR: "Invocations in the entry point will
    // obey the rules in Maximal Reconvergence", whatever reconvergence the policy names.
    let src = NESTED
        .replace(
            "#extension GL_KHR_shader_subgroup_ballot : require",
            "#extension GL_KHR_shader_subgroup_ballot : require\n#extension GL_EXT_maximal_reconvergence : require",
        )
        .replace("void main() {", "void main() [[maximally_reconverges]] {");
    let m = compile(&src);
    for p in [
        "weak",
        "random:1",
        "random:2,false-first",
        "weak,false-first,by-selector",
    ] {
        let (out, report) = run(&m, 24, 1, 8, p, 1, true);
        assert_eq!(&out[..8], &[0xf, 0xf, 0xf, 0xf, 100, 100, 100, 100], "{p}");
        let policy = report.trace.map(|t| t.policy).unwrap_or_default();
        assert!(policy.starts_with("maximal,"), "{policy}");
    }
}

/// A switch inside a loop: invocations 0-3 `continue` from one case construct (four selector
/// values), the others break out of the switch; all meet at the continue target.
const SWITCH_IN_LOOP: &str = r#"#version 450
#extension GL_KHR_shader_subgroup_ballot : require
layout(local_size_x = 8) in;
layout(set = 0, binding = 0) buffer B { uint data[]; };
void main() {
    uint id = gl_SubgroupInvocationID;
    for (uint k = 0u; k < 2u; k++) {
        data[k * 8u + id] = subgroupBallot(true).x;
        switch (id) {
        case 0u: case 1u: case 2u: case 3u:
            data[16u + k * 8u + id] = subgroupBallot(true).x;
            continue;
        default:
            break;
        }
        data[16u + k * 8u + id] = 100u;
    }
    data[32u + id] = subgroupBallot(true).x;
}
"#;

#[test]
fn by_selector_tangles_rejoin_once_they_leave_the_switch() {
    let m = compile(SWITCH_IN_LOOP);
    for (policy, case) in [
        ("maximal,by-case", [0xf; 4]),
        ("maximal,by-selector", [1, 2, 4, 8]),
        ("weak,by-selector", [1, 2, 4, 8]),
        ("maximal,false-first,by-selector", [1, 2, 4, 8]),
    ] {
        let (out, _) = run(&m, 40, 1, 8, policy, 1, false);
        // "at the beginning of each iteration of the loop, invocations that entered the loop
        // together and are continuing to the execute the loop will be converged".
        assert_eq!(&out[..16], &[0xff; 16], "{policy}");
        for k in 0..2 {
            let at = 16 + k * 8;
            assert_eq!(&out[at..at + 4], &case, "{policy} iteration {k}");
            assert_eq!(&out[at + 4..at + 8], &[100; 4], "{policy} iteration {k}");
        }
        assert_eq!(&out[32..], &[0xff; 8], "{policy}");
    }
}

#[test]
fn traces_do_not_depend_on_the_thread_count() {
    let m = compile(NESTED);
    for policy in ["maximal", "random:3,random:4,by-selector"] {
        let (_, one) = run(&m, 24 * 16, 16, 8, policy, 1, true);
        let (_, four) = run(&m, 24 * 16, 16, 8, policy, 4, true);
        let (one, four) = (one.trace.expect("trace"), four.trace.expect("trace"));
        assert_eq!(one, four, "{policy}");
        let groups: Vec<u32> = one.events.iter().map(|e| e.workgroup[0]).collect();
        assert!(
            groups.windows(2).all(|w| w[0] <= w[1]),
            "{policy}: {groups:?}"
        );
        assert_eq!(groups.last(), Some(&15));
    }
}
