//! Control flow executed by tangles: divergent branches, loops with break/continue, switch
//! with fall-through, calls with early returns; every subgroup size; results against a
//! plain-Rust model of each invocation, and the same results for 1 and 4 threads.

mod common;
use common::*;

const SHADER: &str = "#version 450
layout(local_size_x = 48) in;
layout(std430, binding = 0) buffer A { uint a[]; };
layout(std430, binding = 1) buffer R { uint r[]; };
uint f(uint x) {
  if (x % 3u == 0u) return x / 3u;
  for (uint k = 0u; k < (x & 7u); ++k) {
    if (k == 5u) return x + 100u;
    x = x * 3u + k;
  }
  return x;
}
void main() {
  uint i = gl_GlobalInvocationID.x;
  uint x = a[i];
  uint acc = 0u;
  for (uint j = 0u; j < (x & 15u); ++j) {
    if (((x >> j) & 1u) == 1u) { acc += j; continue; }
    switch ((x + j) % 4u) {
      case 0u: acc ^= 0x55u; break;
      case 1u: acc += 3u;
      case 2u: acc *= 5u; break;
      default: if (acc > 1000u) { j = 100u; } break;
    }
    if (acc > 100000u) break;
    acc += f(acc + j);
  }
  uint w = 0u;
  while (true) { w++; if (w * w > (x & 255u)) break; }
  uint tmp[8];
  for (uint k = 0u; k < 8u; ++k) tmp[k] = acc * k + w;
  r[i] = acc + w * 7919u + gl_LocalInvocationIndex * 3u + tmp[x % 8u];
}";

fn f(mut x: u32) -> u32 {
    if x.is_multiple_of(3) {
        return x / 3;
    }
    // The loop condition reads the updated x each time.
    let mut k = 0;
    while k < (x & 7) {
        if k == 5 {
            return x.wrapping_add(100);
        }
        x = x.wrapping_mul(3).wrapping_add(k);
        k += 1;
    }
    x
}

fn model(i: u32, x: u32) -> u32 {
    let mut acc = 0u32;
    let mut j = 0u32;
    while j < (x & 15) {
        if (x >> j) & 1 == 1 {
            acc = acc.wrapping_add(j);
            j += 1;
            continue;
        }
        match x.wrapping_add(j) % 4 {
            0 => acc ^= 0x55,
            1 => acc = acc.wrapping_add(3).wrapping_mul(5),
            2 => acc = acc.wrapping_mul(5),
            _ => {
                if acc > 1000 {
                    j = 100;
                }
            }
        }
        if acc > 100_000 {
            break;
        }
        acc = acc.wrapping_add(f(acc.wrapping_add(j)));
        j += 1;
    }
    let mut w = 0u32;
    loop {
        w += 1;
        if w * w > (x & 255) {
            break;
        }
    }
    let tmp: Vec<u32> = (0..8)
        .map(|k| acc.wrapping_mul(k).wrapping_add(w))
        .collect();
    acc.wrapping_add(w.wrapping_mul(7919))
        .wrapping_add((i % 48) * 3)
        .wrapping_add(tmp[(x % 8) as usize])
}

fn inputs(n: usize) -> Vec<u32> {
    let mut rng = Rng(42);
    (0..n).map(|_| rng.next() as u32).collect()
}

#[test]
fn divergent_control_flow_every_subgroup_size() {
    let n = 48 * 5;
    let a = inputs(n);
    let module = compile(SHADER);
    for sg in [1u32, 2, 4, 8, 16, 32, 64, 128] {
        let mut job = Job::new(vec![u32s(&a), vec![0; n * 4]], [5, 1, 1]);
        job.subgroup = sg;
        let (out, report) = run_module(&module, &job);
        let r = to_u32s(&out[1]);
        for i in 0..n {
            assert_eq!(
                r[i],
                model(i as u32, a[i]),
                "invocation {i}, subgroup size {sg}"
            );
        }
        if sg > 1 {
            assert!(
                report.stats.splits > 0 && report.stats.joins > 0,
                "sg {sg}: {:?}",
                report.stats
            );
        }
    }
}

#[test]
fn same_results_for_one_and_four_threads() {
    let n = 48 * 40;
    let a = inputs(n);
    let module = compile(SHADER);
    let mut job = Job::new(vec![u32s(&a), vec![0; n * 4]], [40, 1, 1]);
    let (out1, rep1) = run_module(&module, &job);
    job.threads = 4;
    let (out4, rep4) = run_module(&module, &job);
    assert_eq!(out1, out4);
    assert_eq!(rep1.stats, rep4.stats);
    let r = to_u32s(&out1[1]);
    assert_eq!(r[n - 1], model((n - 1) as u32, a[n - 1]));
}

#[test]
fn uniform_branches_do_not_split() {
    let src = "#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer R { uint r[]; };
layout(push_constant) uniform P { uint k; } p;
void main() {
  uint acc = 0u;
  for (uint j = 0u; j < p.k; ++j) { if (p.k > 3u) acc += j; else acc -= j; }
  r[gl_GlobalInvocationID.x] = acc;
}";
    let mut job = Job::new(vec![vec![0; 64 * 4]], [1, 1, 1]);
    job.push = u32s(&[10]);
    let (out, report) = run_glsl(src, &job);
    assert!(to_u32s(&out[0]).iter().all(|&v| v == 45));
    assert_eq!(report.stats.splits, 0);
    assert_eq!(report.stats.joins, 0);
}

#[test]
fn subgroup_builtins_with_partial_last_subgroup() {
    let src = "#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_ballot : require
layout(local_size_x = 20, local_size_y = 2) in;
layout(std430, binding = 0) buffer R { uint r[]; };
void main() {
  uint i = gl_LocalInvocationIndex + gl_WorkGroupID.x * 40u;
  r[i * 6u + 0u] = gl_SubgroupSize;
  r[i * 6u + 1u] = gl_SubgroupInvocationID;
  r[i * 6u + 2u] = gl_SubgroupID;
  r[i * 6u + 3u] = gl_NumSubgroups;
  r[i * 6u + 4u] = gl_SubgroupLtMask.x;
  r[i * 6u + 5u] = gl_LocalInvocationID.y * 100u + gl_GlobalInvocationID.x;
}";
    let module = compile(src);
    for sg in [1u32, 4, 8, 16, 32, 64] {
        let mut job = Job::new(vec![vec![0; 80 * 6 * 4]], [2, 1, 1]);
        job.subgroup = sg;
        let (out, _) = run_module(&module, &job);
        let r = to_u32s(&out[0]);
        for i in 0..80u32 {
            let li = i % 40;
            let lane = li % sg;
            let lt = if lane >= 32 {
                u32::MAX
            } else {
                (1u32 << lane) - 1
            };
            let e = [
                sg,
                lane,
                li / sg,
                40u32.div_ceil(sg),
                lt,
                (li / 20) * 100 + (i / 40) * 20 + li % 20,
            ];
            assert_eq!(
                &r[(i * 6) as usize..(i * 6 + 6) as usize],
                &e,
                "invocation {i}, sg {sg}"
            );
        }
    }
}

#[test]
fn local_variables_keep_value_semantics() {
    let src = "#version 450
layout(local_size_x = 8) in;
layout(std430, binding = 0) buffer A { uint a[]; };
layout(std430, binding = 1) buffer R { uint r[]; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  uint x = a[i] + 1u;
  uint y = x;
  x = x * 3u;
  uint z = y;
  y = x ^ z;
  x = x + y;
  uvec2 v = uvec2(x, y);
  v.x = v.y;
  v.y = v.x + z;
  r[i] = x * 7u + y * 5u + z + v.x * 11u + v.y * 13u;
}";
    let a: Vec<u32> = (0..8).map(|i| i * 1000 + 17).collect();
    let job = Job::new(vec![u32s(&a), vec![0; 32]], [1, 1, 1]);
    let (out, _) = run_glsl(src, &job);
    let r = to_u32s(&out[1]);
    for (i, &ai) in a.iter().enumerate() {
        let mut x = ai + 1;
        let mut y = x;
        x = x.wrapping_mul(3);
        let z = y;
        y = x ^ z;
        x = x.wrapping_add(y);
        let (vx, vy) = (y, y.wrapping_add(z));
        let e = x
            .wrapping_mul(7)
            .wrapping_add(y.wrapping_mul(5))
            .wrapping_add(z)
            .wrapping_add(vx.wrapping_mul(11))
            .wrapping_add(vy.wrapping_mul(13));
        assert_eq!(r[i], e, "invocation {i}");
    }
}
