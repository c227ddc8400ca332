//! Every `OpGroupNonUniform*` of the Vulkan categories (basic, vote, arithmetic, ballot, shuffle,
//! shuffle relative, clustered, quad) and rotate, run inside divergent control flow and compared
//! with a plain-Rust model of the tangle: the invocations of a subgroup that took the branch are
//! exactly the invocations each instruction sees. Results the spec leaves undefined (reads of
//! inactive or nonexistent invocations, an empty ballot, a ClusterSize above the subgroup size)
//! must be the poison value, with one sanitizer finding per such execution.

mod common;

use common::{compile, run_module, to_u32s, u32s, Job, Rng};
use tangle_exec::Finding;

/// Invocations per workgroup: not a multiple of 8, so the last subgroup is partial for S ≥ 8.
const LOCAL: usize = 200;
const GROUPS: usize = 2;
const POISON: u32 = 0xdead_beef;
/// What an invocation that skipped the branch leaves in its outputs.
const UNTOUCHED: u32 = 0x1234_5678;
/// A marker for a poison result in the other-widths model.
const POISON_64: i128 = -1 << 100;

/// The invocations of one subgroup that execute an instruction.
struct Tangle<'a> {
    /// Subgroup size.
    s: u32,
    /// Invocations that exist in the subgroup.
    lanes: u32,
    /// Active lanes, ascending.
    active: Vec<u32>,
    /// `data` of every existing lane.
    v: &'a [u32],
    /// `data2` of every existing lane.
    v2: &'a [u32],
}

impl Tangle<'_> {
    fn is_active(&self, l: u32) -> bool {
        self.active.contains(&l)
    }
    /// The Value of lane `src` for a read by an active lane, `None` if `src` is inactive or
    /// does not exist.
    fn read(&self, src: Option<u32>, f: impl Fn(u32) -> u32) -> Option<u32> {
        let src = src?;
        (src < self.lanes && self.is_active(src)).then(|| f(self.v[src as usize]))
    }
    fn ballot(&self, pred: impl Fn(u32) -> bool) -> u128 {
        self.active
            .iter()
            .filter(|&&l| pred(self.v[l as usize]))
            .fold(0, |m, &l| m | (1 << l))
    }
    fn group_bits(&self, m: u128) -> u128 {
        if self.s >= 128 {
            m
        } else {
            m & ((1u128 << self.s) - 1)
        }
    }
}

/// The float operand: never zero, so products reach infinity or zero but never NaN.
fn f(v: u32) -> f32 {
    (v % 64 + 1) as f32 * 0.25
}
fn fb(x: f32) -> u32 {
    x.to_bits()
}
fn p(v: u32) -> bool {
    v & 1 != 0
}
fn bv(v: u32) -> [u32; 4] {
    [v, v.wrapping_mul(3), v ^ 0xffff, !v]
}
fn words(b: [u32; 4]) -> u128 {
    b.iter()
        .enumerate()
        .fold(0, |m, (i, &w)| m | (u128::from(w) << (32 * i)))
}

/// A model: the result of an active lane (`None`: undefined).
type Model = Box<dyn Fn(&Tangle, u32) -> Option<u32>>;

#[derive(Clone, Copy)]
enum Scan {
    Reduce,
    Inclusive,
    Exclusive,
    Cluster4,
}

/// An arithmetic op over the active lanes of the tangle, in lane order.
fn scan(
    t: &Tangle,
    l: u32,
    kind: Scan,
    id: u32,
    x: impl Fn(u32) -> u32,
    op: impl Fn(u32, u32) -> u32,
) -> u32 {
    let lanes = t.active.iter().copied().filter(|&j| match kind {
        Scan::Reduce => true,
        Scan::Inclusive => j <= l,
        Scan::Exclusive => j < l,
        Scan::Cluster4 => j / 4 == l / 4,
    });
    lanes.fold(id, |acc, j| op(acc, x(t.v[j as usize])))
}

/// `(GLSL expression giving a uint, model)`.
fn ops() -> Vec<(String, Model)> {
    let mut out: Vec<(String, Model)> = Vec::new();
    let mut add = |glsl: &str, m: Model| out.push((glsl.to_string(), m));
    add(
        "uint(subgroupElect())",
        Box::new(|t, l| Some(u32::from(t.active.first() == Some(&l)))),
    );
    add(
        "uint(subgroupAll(p))",
        Box::new(|t, _| Some(u32::from(t.active.iter().all(|&j| p(t.v[j as usize]))))),
    );
    add(
        "uint(subgroupAny(p))",
        Box::new(|t, _| Some(u32::from(t.active.iter().any(|&j| p(t.v[j as usize]))))),
    );
    add(
        "uint(subgroupAllEqual(v & 3u))",
        Box::new(|t, _| {
            Some(u32::from(t.active.iter().all(|&j| {
                t.v[j as usize] & 3 == t.v[t.active[0] as usize] & 3
            })))
        }),
    );
    add(
        "uint(subgroupAllEqual(v < 0xf8000000u))",
        Box::new(|t, _| {
            Some(u32::from(t.active.iter().all(|&j| {
                (t.v[j as usize] < 0xf800_0000) == (t.v[t.active[0] as usize] < 0xf800_0000)
            })))
        }),
    );
    add(
        "subgroupBroadcast(v, 1u)",
        Box::new(|t, _| t.read(Some(1), |x| x)),
    );
    add(
        "subgroupBroadcastFirst(v)",
        Box::new(|t, _| t.read(t.active.first().copied(), |x| x)),
    );
    for (c, name) in ["x", "y", "z", "w"].iter().enumerate() {
        add(
            &format!("subgroupBallot(p).{name}"),
            Box::new(move |t, _| Some((t.ballot(p) >> (32 * c)) as u32)),
        );
    }
    add(
        "uint(subgroupInverseBallot(uvec4(0x5a5a5a5au, 0x0f0f0f0fu, 0xffff0000u, 0x12345678u)))",
        Box::new(|_, l| {
            Some((words([0x5a5a_5a5a, 0x0f0f_0f0f, 0xffff_0000, 0x1234_5678]) >> l) as u32 & 1)
        }),
    );
    add(
        "uint(subgroupBallotBitExtract(bv, v % 128u))",
        Box::new(|t, l| {
            let v = t.v[l as usize];
            Some((words(bv(v)) >> (v % 128)) as u32 & 1)
        }),
    );
    add(
        "subgroupBallotBitCount(bv)",
        Box::new(|t, l| Some(t.group_bits(words(bv(t.v[l as usize]))).count_ones())),
    );
    add(
        "subgroupBallotInclusiveBitCount(bv)",
        Box::new(|t, l| {
            let m = t.group_bits(words(bv(t.v[l as usize])));
            Some((0..=l).filter(|&i| (m >> i) & 1 == 1).count() as u32)
        }),
    );
    add(
        "subgroupBallotExclusiveBitCount(bv)",
        Box::new(|t, l| {
            let m = t.group_bits(words(bv(t.v[l as usize])));
            Some((0..l).filter(|&i| (m >> i) & 1 == 1).count() as u32)
        }),
    );
    add(
        "subgroupBallotFindLSB(uvec4(v >> 4))",
        Box::new(|t, l| {
            let m = t.group_bits(words([t.v[l as usize] >> 4; 4]));
            (m != 0).then(|| m.trailing_zeros())
        }),
    );
    add(
        "subgroupBallotFindMSB(uvec4(v >> 4))",
        Box::new(|t, l| {
            let m = t.group_bits(words([t.v[l as usize] >> 4; 4]));
            (m != 0).then(|| 127 - m.leading_zeros())
        }),
    );
    add(
        "subgroupShuffle(v, v2)",
        Box::new(|t, l| t.read(Some(t.v2[l as usize]).filter(|&s| s < t.s), |x| x)),
    );
    add(
        "subgroupShuffleXor(v, 1u)",
        Box::new(|t, l| t.read(Some(l ^ 1), |x| x)),
    );
    add(
        "subgroupShuffleXor(v, 6u)",
        Box::new(|t, l| t.read(Some(l ^ 6).filter(|&s| s < t.s), |x| x)),
    );
    add(
        "subgroupShuffleUp(v, 3u)",
        Box::new(|t, l| t.read(l.checked_sub(3), |x| x)),
    );
    add(
        "subgroupShuffleDown(v, 2u)",
        Box::new(|t, l| t.read(Some(l + 2).filter(|&s| s < t.s), |x| x)),
    );
    add(
        "subgroupQuadBroadcast(v, 2u)",
        Box::new(|t, l| t.read(Some((l & !3) | 2), |x| x)),
    );
    add(
        "subgroupQuadSwapHorizontal(v)",
        Box::new(|t, l| t.read(Some(l ^ 1), |x| x)),
    );
    add(
        "subgroupQuadSwapVertical(v)",
        Box::new(|t, l| t.read(Some(l ^ 2), |x| x)),
    );
    add(
        "subgroupQuadSwapDiagonal(v)",
        Box::new(|t, l| t.read(Some(l ^ 3), |x| x)),
    );
    add(
        "subgroupRotate(v, 3u)",
        Box::new(|t, l| t.read(Some((l + 3) & (t.s - 1)), |x| x)),
    );
    add(
        "subgroupClusteredRotate(v, 1u, 8u)",
        Box::new(|t, l| {
            // ClusterSize 8 above a subgroup of 4 is undefined for every invocation.
            (t.s >= 8).then_some(())?;
            t.read(Some(((l + 1) & 7) | (l & !7)), |x| x)
        }),
    );
    // Arithmetic: (GLSL name, operand expression, identity, value of a lane, operator).
    type Arith = (
        &'static str,
        &'static str,
        u32,
        fn(u32) -> u32,
        fn(u32, u32) -> u32,
    );
    let ariths: [Arith; 16] = [
        ("Add", "v", 0, |v| v, u32::wrapping_add),
        ("Mul", "v", 1, |v| v, u32::wrapping_mul),
        ("Min", "v", u32::MAX, |v| v, u32::min),
        ("Max", "v", 0, |v| v, u32::max),
        (
            "Min",
            "int(v)",
            i32::MAX as u32,
            |v| v,
            |a, b| (a as i32).min(b as i32) as u32,
        ),
        (
            "Max",
            "int(v)",
            i32::MIN as u32,
            |v| v,
            |a, b| (a as i32).max(b as i32) as u32,
        ),
        (
            "Add",
            "fv",
            0,
            |v| fb(f(v)),
            |a, b| fb(f32::from_bits(a) + f32::from_bits(b)),
        ),
        (
            "Mul",
            "fv",
            0x3f80_0000,
            |v| fb(f(v)),
            |a, b| fb(f32::from_bits(a) * f32::from_bits(b)),
        ),
        (
            "Min",
            "fv",
            fb(f32::INFINITY),
            |v| fb(f(v)),
            |a, b| fb(f32::from_bits(a).min(f32::from_bits(b))),
        ),
        (
            "Max",
            "fv",
            fb(f32::NEG_INFINITY),
            |v| fb(f(v)),
            |a, b| fb(f32::from_bits(a).max(f32::from_bits(b))),
        ),
        ("And", "v", u32::MAX, |v| v, |a, b| a & b),
        ("Or", "v", 0, |v| v, |a, b| a | b),
        ("Xor", "v", 0, |v| v, |a, b| a ^ b),
        ("And", "p", 1, |v| u32::from(p(v)), |a, b| a & b),
        ("Or", "p", 0, |v| u32::from(p(v)), |a, b| a | b),
        ("Xor", "p", 0, |v| u32::from(p(v)), |a, b| a ^ b),
    ];
    for (name, x, id, val, op) in ariths {
        for (kind, prefix, suffix) in [
            (Scan::Reduce, "", ""),
            (Scan::Inclusive, "Inclusive", ""),
            (Scan::Exclusive, "Exclusive", ""),
            (Scan::Cluster4, "Clustered", ", 4u"),
        ] {
            let call = format!("subgroup{prefix}{name}({x}{suffix})");
            let glsl = match x {
                "fv" => format!("floatBitsToUint({call})"),
                _ => format!("uint({call})"),
            };
            add(
                &glsl,
                Box::new(move |t, l| Some(scan(t, l, kind, id, val, op))),
            );
        }
    }
    out
}

fn shader(exprs: &[String]) -> String {
    let body: String = exprs
        .iter()
        .enumerate()
        .map(|(k, e)| format!("        o[i * {n} + {k}] = {e};\n", n = exprs.len()))
        .collect();
    format!(
        "#version 450
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_KHR_shader_subgroup_vote : enable
#extension GL_KHR_shader_subgroup_ballot : enable
#extension GL_KHR_shader_subgroup_arithmetic : enable
#extension GL_KHR_shader_subgroup_shuffle : enable
#extension GL_KHR_shader_subgroup_shuffle_relative : enable
#extension GL_KHR_shader_subgroup_clustered : enable
#extension GL_KHR_shader_subgroup_quad : enable
#extension GL_KHR_shader_subgroup_rotate : enable
layout(local_size_x = {LOCAL}) in;
layout(set = 0, binding = 0, std430) readonly buffer D {{ uint data[]; }};
layout(set = 0, binding = 1, std430) readonly buffer D2 {{ uint data2[]; }};
layout(set = 0, binding = 2, std430) readonly buffer C {{ uint cond[]; }};
layout(set = 0, binding = 3, std430) buffer O {{ uint o[]; }};
void main() {{
    uint i = gl_GlobalInvocationID.x;
    uint v = data[i];
    uint v2 = data2[i];
    bool p = (v & 1u) != 0u;
    float fv = float(v % 64u + 1u) * 0.25;
    uvec4 bv = uvec4(v, v * 3u, v ^ 0xffffu, ~v);
    if (cond[i] != 0u) {{
{body}    }}
}}
"
    )
}

#[test]
fn every_group_op_matches_the_tangle_model() {
    let ops = ops();
    let exprs: Vec<String> = ops.iter().map(|(g, _)| g.clone()).collect();
    let k = exprs.len();
    let module = compile(&shader(&exprs));
    let mut rng = Rng(0x09e0_00b5);
    let total = LOCAL * GROUPS;
    let mut checked = 0usize;
    let mut undefined_seen = 0u64;
    for s in [4u32, 8, 16, 32, 64, 128] {
        for density in [8u64, 6, 4, 1] {
            let data: Vec<u32> = (0..total).map(|_| rng.next() as u32).collect();
            let data2: Vec<u32> = (0..total)
                .map(|_| (rng.next() % (u64::from(s) + 2)) as u32)
                .collect();
            // density 8: every invocation takes the branch; otherwise about density/8 of them.
            let cond: Vec<u32> = (0..total)
                .map(|_| u32::from(rng.next() % 8 < density))
                .collect();
            let out = vec![UNTOUCHED; total * k];
            let mut job = Job::new(
                vec![u32s(&data), u32s(&data2), u32s(&cond), u32s(&out)],
                [GROUPS as u32, 1, 1],
            );
            job.subgroup = s;
            let (bufs, report) = run_module(&module, &job);
            let got = to_u32s(&bufs[3]);
            let mut expected_findings = 0u64;
            for g in 0..GROUPS {
                for first in (0..LOCAL).step_by(s as usize) {
                    let lanes = (LOCAL - first).min(s as usize) as u32;
                    let base = g * LOCAL + first;
                    let range = base..base + lanes as usize;
                    let active: Vec<u32> = (0..lanes)
                        .filter(|&l| cond[base + l as usize] != 0)
                        .collect();
                    if active.is_empty() {
                        continue;
                    }
                    let t = Tangle {
                        s,
                        lanes,
                        active,
                        v: &data[range.clone()],
                        v2: &data2[range],
                    };
                    for (j, (glsl, model)) in ops.iter().enumerate() {
                        let mut undefined = false;
                        for &l in &t.active {
                            let want = model(&t, l);
                            undefined |= want.is_none();
                            let at = (base + l as usize) * k + j;
                            assert_eq!(got[at], want.unwrap_or(POISON), "{glsl}: S={s} density={density} workgroup {g} lane {} of subgroup at {first}", l);
                            checked += 1;
                        }
                        expected_findings += u64::from(undefined);
                    }
                    for l in (0..lanes).filter(|l| !t.is_active(*l)) {
                        let at = (base + l as usize) * k;
                        assert!(got[at..at + k].iter().all(|&x| x == UNTOUCHED));
                    }
                }
            }
            let found = report.diagnostics.len() as u64 + report.stats.dropped_diagnostics;
            assert_eq!(found, expected_findings, "S={s} density={density}");
            for d in &report.diagnostics {
                assert!(matches!(d.finding, Finding::Group(_)), "{d}");
            }
            undefined_seen += expected_findings;
        }
    }
    assert!(
        checked > 400_000 && undefined_seen > 100,
        "{checked} results, {undefined_seen} undefined executions"
    );
}

/// The arithmetic, shuffle and broadcast instructions at the other widths: 8-, 16- and 64-bit
/// integers (signed and unsigned), float16 and double, inside divergent control flow, against a
/// model that computes in i128 / f64 and wraps to the type.
#[test]
fn other_widths_match_the_model() {
    // (GLSL type, bits, signed, float)
    let types = [
        ("int8_t", 8, true, false),
        ("uint8_t", 8, false, false),
        ("int16_t", 16, true, false),
        ("uint16_t", 16, false, false),
        ("int64_t", 64, true, false),
        ("uint64_t", 64, false, false),
        ("float16_t", 16, true, true),
        ("double", 64, true, true),
    ];
    let exprs = [
        "subgroupAdd(x)",
        "subgroupInclusiveMin(x)",
        "subgroupExclusiveMax(x)",
        "subgroupClusteredAdd(x, 4u)",
        "subgroupShuffleXor(x, 1u)",
        "subgroupBroadcastFirst(x)",
        "subgroupInclusiveMul(x)",
    ];
    let mut rng = Rng(0x0071_d7e5);
    for (ty, bits, signed, float) in types {
        // Floats hold small integers (sums stay exact); their products could overflow float16.
        let exprs: Vec<&str> = exprs
            .iter()
            .copied()
            .filter(|e| !(float && e.contains("Mul")))
            .collect();
        let body: String = exprs
            .iter()
            .enumerate()
            .map(|(k, e)| {
                format!(
                    "        o[i * {n} + {k}] = int64_t({e});\n",
                    n = exprs.len()
                )
            })
            .collect();
        let src = format!(
            "#version 450
#extension GL_KHR_shader_subgroup_arithmetic : enable
#extension GL_KHR_shader_subgroup_clustered : enable
#extension GL_KHR_shader_subgroup_shuffle : enable
#extension GL_KHR_shader_subgroup_ballot : enable
#extension GL_EXT_shader_explicit_arithmetic_types : enable
#extension GL_EXT_shader_subgroup_extended_types_int8 : enable
#extension GL_EXT_shader_subgroup_extended_types_int16 : enable
#extension GL_EXT_shader_subgroup_extended_types_int64 : enable
#extension GL_EXT_shader_subgroup_extended_types_float16 : enable
layout(local_size_x = 48) in;
layout(set = 0, binding = 0, std430) readonly buffer D {{ int64_t data[]; }};
layout(set = 0, binding = 1, std430) buffer O {{ int64_t o[]; }};
void main() {{
    uint i = gl_GlobalInvocationID.x;
    {ty} x = {ty}(data[i]);
    if ((data[i] & 3) != 0) {{
{body}    }}
}}
"
        );
        let module = compile(&src);
        let wrap = |v: i128| -> i128 {
            if float {
                return v;
            }
            let m = v.rem_euclid(1i128 << bits);
            if signed && m >= 1i128 << (bits - 1) {
                m - (1i128 << bits)
            } else {
                m
            }
        };
        for s in [4u32, 16, 64] {
            let data: Vec<i64> = (0..48)
                .map(|_| {
                    let r = rng.next() as i64;
                    if float {
                        r % 17 - 8
                    } else {
                        r
                    }
                })
                .collect();
            let n = exprs.len();
            let mut job = Job::new(
                vec![
                    data.iter().flat_map(|v| v.to_le_bytes()).collect(),
                    vec![0u8; 48 * n * 8],
                ],
                [1, 1, 1],
            );
            job.subgroup = s;
            let (bufs, report) = run_module(&module, &job);
            let mut findings = 0;
            let got: Vec<i64> = bufs[1]
                .chunks_exact(8)
                .map(|c| i64::from_le_bytes(c.try_into().unwrap_or_default()))
                .collect();
            for first in (0..48).step_by(s as usize) {
                let lanes = (48 - first).min(s as usize);
                let val = |l: usize| wrap(i128::from(data[first + l]));
                let active: Vec<usize> = (0..lanes).filter(|&l| data[first + l] & 3 != 0).collect();
                // ShuffleXor(x, 1) reads an inactive or nonexistent partner: one finding.
                findings += usize::from(active.iter().any(|&l| !active.contains(&(l ^ 1))));
                let fold = |ls: &mut dyn Iterator<Item = usize>,
                            id: i128,
                            f: &dyn Fn(i128, i128) -> i128| {
                    ls.fold(id, |a, l| wrap(f(a, val(l))))
                };
                let (min_id, max_id) = match (float, signed) {
                    (true, _) => (i128::MAX, i128::MIN),
                    (false, true) => ((1i128 << (bits - 1)) - 1, -(1i128 << (bits - 1))),
                    (false, false) => ((1i128 << bits) - 1, 0),
                };
                for &l in &active {
                    let mut want = vec![
                        fold(&mut active.iter().copied(), 0, &|a, b| a + b),
                        fold(
                            &mut active.iter().copied().filter(|&j| j <= l),
                            min_id,
                            &|a, b| a.min(b),
                        ),
                        fold(
                            &mut active.iter().copied().filter(|&j| j < l),
                            max_id,
                            &|a, b| a.max(b),
                        ),
                        fold(
                            &mut active.iter().copied().filter(|&j| j / 4 == l / 4),
                            0,
                            &|a, b| a + b,
                        ),
                        if active.contains(&(l ^ 1)) {
                            val(l ^ 1)
                        } else {
                            POISON_64
                        },
                        val(active[0]),
                    ];
                    if !float {
                        want.push(fold(
                            &mut active.iter().copied().filter(|&j| j <= l),
                            1,
                            &|a, b| a.wrapping_mul(b),
                        ));
                    }
                    for (k, w) in want.iter().enumerate() {
                        let g = got[(first + l) * n + k];
                        if k == 4 && *w == POISON_64 {
                            // Poison converted to int64_t: only the finding is checked.
                            continue;
                        }
                        let w = match (float, k) {
                            // Float identities (±inf) never reach the output: the first lane
                            // of an exclusive scan gets -inf, which int64_t() cannot hold.
                            (true, 2) if active[0] == l => continue,
                            _ => *w,
                        };
                        // int64_t() of a uint64_t keeps the bits: compare modulo 2^64.
                        assert_eq!(g, w as i64, "{ty} S={s} {} lane {}", exprs[k], first + l);
                    }
                }
            }
            assert_eq!(
                report.diagnostics.len() + report.stats.dropped_diagnostics as usize,
                findings,
                "{ty} S={s}"
            );
        }
    }
}
