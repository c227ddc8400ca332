//! Robust buffer access (issue 34, part 1), checked against a plain-Rust model of the Vulkan
//! rules (`tangle_exec::check::robust` cites them): loads, stores and atomics partly and wholly
//! past the end of a buffer whose size is not a multiple of the access size, with no
//! robustness (undefined behaviour: `out-of-bounds`, an error), `robustBufferAccess` (the
//! implementation's choice: a `robust-access` warning, values as the policy picks them) and
//! `robustBufferAccess2` (zero loads, discarded stores: no finding; an atomic's undefined
//! value: a warning only where it is used), enabled by the script's `DEVICE_FEATURE` or by
//! `--robustness`, under both choices of the policy; and the warning of a value the
//! implementation chose only where that value reaches the output.

use std::process::Command;

mod script_run;

/// The buffer's bytes: 14, so that word 3 (bytes 12..16) is partly outside.
const SIZE: usize = 14;
/// Invocations: words 0..=2 inside, 3 partly outside, 4 and 5 wholly outside.
const N: usize = 6;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Access {
    Load,
    Store,
    Atomic,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Robustness {
    None,
    Buffer,
    Buffer2,
}

fn initial() -> Vec<u8> {
    (0..SIZE as u8)
        .map(|b| b.wrapping_mul(37).wrapping_add(5))
        .collect()
}

fn word(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

/// The model: where an access of word `i` goes (`None`: nowhere, zero) under the robustness
/// and choice (`in_range`): the offset wrapped into the range, aligned to the word, as
/// `check::robust` documents its in-range choice.
fn place(r: Robustness, in_range: bool, i: usize) -> Option<usize> {
    let offset = i * 4;
    if offset + 4 <= SIZE {
        return Some(offset);
    }
    match (r, in_range) {
        (Robustness::Buffer, true) => {
            let last = (SIZE - 4) / 4 * 4;
            Some((offset % (last + 4)).min(last) / 4 * 4)
        }
        _ => None,
    }
}

/// The expected output words and buffer bytes after the dispatch.
fn model(access: Access, r: Robustness, in_range: bool) -> (Vec<u32>, Vec<u8>) {
    let mut buf = initial();
    let mut out = vec![0u32; N];
    for (i, o) in out.iter_mut().enumerate() {
        let at = place(r, in_range, i);
        match access {
            Access::Load => *o = at.map_or(0, |a| word(&buf, a)),
            // Only the invocations past the end store, so in-range stores never meet.
            Access::Store if i >= 3 => {
                if let Some(a) = at {
                    buf[a..a + 4].copy_from_slice(&(100 + i as u32).to_le_bytes());
                }
            }
            Access::Store => {}
            Access::Atomic if i >= 3 => {
                // The returned value of a robust atomic is undefined: not compared.
                if let Some(a) = at {
                    let v = word(&buf, a).wrapping_add(1);
                    buf[a..a + 4].copy_from_slice(&v.to_le_bytes());
                }
            }
            Access::Atomic => {}
        }
    }
    (out, buf)
}

fn script(access: Access, feature: Option<&str>, expect: Option<(Vec<u32>, Vec<u8>)>) -> String {
    let body = match access {
        Access::Load => "o[i] = a[i];",
        Access::Store => "if (i >= 3u) { a[i] = 100u + i; }",
        Access::Atomic => "if (i >= 3u) { atomicAdd(a[i], 1u); }",
    };
    let data: Vec<String> = initial().iter().map(u8::to_string).collect();
    let mut text = String::from("#!amber\n");
    if let Some(f) = feature {
        text.push_str(&format!("DEVICE_FEATURE {f}\n"));
    }
    text.push_str(&format!(
        r#"SHADER compute s GLSL TARGET_ENV vulkan1.1
#version 450
layout(local_size_x = {N}) in;
layout(set = 0, binding = 0, std430) buffer A {{ uint a[]; }};
layout(set = 0, binding = 1, std430) buffer O {{ uint o[]; }};
void main() {{
  uint i = gl_LocalInvocationIndex;
  {body}
}}
END
BUFFER a DATA_TYPE uint8 DATA {data} END
BUFFER o DATA_TYPE uint32 SIZE {N} FILL 0
PIPELINE compute p
  ATTACH s
  BIND BUFFER a AS storage DESCRIPTOR_SET 0 BINDING 0
  BIND BUFFER o AS storage DESCRIPTOR_SET 0 BINDING 1
END
RUN p 1 1 1
"#,
        data = data.join(" ")
    ));
    if let Some((out, buf)) = expect {
        let o: Vec<String> = out.iter().map(u32::to_string).collect();
        let b: Vec<String> = buf.iter().map(u8::to_string).collect();
        if access == Access::Load {
            text.push_str(&format!("EXPECT o IDX 0 EQ {}\n", o.join(" ")));
        }
        text.push_str(&format!("EXPECT a IDX 0 EQ {}\n", b.join(" ")));
    }
    text
}

/// `tangle run --json` of `text` with `args`: (exit code, finding kinds with severities, output).
fn run(text: &str, args: &[&str]) -> (i32, Vec<(String, String)>, String) {
    script_run::run_json("robustness", text, args)
}

fn warning() -> Vec<(String, String)> {
    vec![("robust-access".into(), "warning".into())]
}

#[test]
fn every_access_under_every_robustness_and_choice_matches_the_model() {
    let features = [
        (Robustness::None, None, "none"),
        (Robustness::Buffer, Some("robustBufferAccess"), "buffer"),
        (
            Robustness::Buffer2,
            Some("Robustness2FeaturesEXT.robustBufferAccess2"),
            "buffer2",
        ),
    ];
    for access in [Access::Load, Access::Store, Access::Atomic] {
        for (r, feature, flag) in features {
            for in_range in [false, true] {
                let policy = if in_range {
                    "robust-in-range"
                } else {
                    "robust-zero"
                };
                let expect = (r != Robustness::None).then(|| model(access, r, in_range));
                // The same through the script's feature and through --robustness.
                let by_feature = script(access, feature, expect.clone());
                let by_flag = script(access, None, expect);
                for (text, extra) in [(&by_feature, None), (&by_flag, Some(flag))] {
                    let mut args = vec!["--policy", policy];
                    if let Some(f) = extra {
                        args.extend(["--robustness", f]);
                    }
                    let what = format!("{access:?}, {r:?}, {policy}, {args:?}");
                    let (code, kinds, out) = run(text, &args);
                    let (want_code, want_kinds) = match (r, access) {
                        (Robustness::None, _) => {
                            (1, vec![("out-of-bounds".into(), "error".into())])
                        }
                        // The atomic's undefined returned value is dropped: no finding.
                        (Robustness::Buffer2, _) => (0, vec![]),
                        _ => (0, warning()),
                    };
                    assert_eq!((code, kinds), (want_code, want_kinds), "{what}:\n{out}");
                }
            }
        }
    }
}

/// `--policy all` names a script whose output depends on robustBufferAccess's choice, and
/// `--robustness none` overrides the script's feature.
#[test]
fn a_result_that_depends_on_the_choice_is_named_and_none_overrides_the_feature() {
    let text = script(
        Access::Load,
        Some("robustBufferAccess"),
        Some(model(Access::Load, Robustness::Buffer, false)),
    );
    let out = Command::new(env!("CARGO_BIN_EXE_tangle"))
        .arg("run")
        .arg(script_run::save("robustness", &text))
        .args(["--policy", "all"])
        .output()
        .expect("the tangle binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("fail under maximal,true-first,by-case,robust-in-range")
            && stdout.contains("under robustBufferAccess"),
        "{stdout}"
    );
    let (code, kinds, out) = run(&text, &["--robustness", "none"]);
    assert_eq!(
        (code, kinds),
        (1, vec![("out-of-bounds".into(), "error".into())]),
        "{out}"
    );
    let (code, _, out) = run(&text, &["--robustness", "bogus"]);
    assert_eq!(code, 2, "{out}");
}

/// A dispatch large enough for the fast tiers, reading past the end of its input under
/// `robustBufferAccess2`: every tier gives the zeros the spec fixes, with no finding (the wide
/// path and the native tier run the reference path's access code or give the dispatch back).
#[test]
fn every_tier_gives_robust_buffer_access_2_zeros() {
    let words = 999usize;
    let bytes: Vec<String> = (0..words * 4 + 2).map(|b| (b % 251).to_string()).collect();
    let expect: Vec<String> = (0..1024)
        .map(|i| {
            if i < words {
                let b = |k: usize| ((i * 4 + k) % 251) as u32;
                let w = b(0) | b(1) << 8 | b(2) << 16 | b(3) << 24;
                w.wrapping_mul(3).to_string()
            } else {
                "0".to_string()
            }
        })
        .collect();
    let text = format!(
        r#"#!amber
DEVICE_FEATURE Robustness2FeaturesEXT.robustBufferAccess2
SHADER compute s GLSL TARGET_ENV vulkan1.1
#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) buffer A {{ uint a[]; }};
layout(set = 0, binding = 1, std430) buffer O {{ uint o[]; }};
void main() {{
  uint i = gl_GlobalInvocationID.x;
  o[i] = a[i] * 3u;
}}
END
BUFFER a DATA_TYPE uint8 DATA {} END
BUFFER o DATA_TYPE uint32 SIZE 1024 FILL 7
PIPELINE compute p
  ATTACH s
  BIND BUFFER a AS storage DESCRIPTOR_SET 0 BINDING 0
  BIND BUFFER o AS storage DESCRIPTOR_SET 0 BINDING 1
END
RUN p 16 1 1
EXPECT o IDX 0 EQ {}
"#,
        bytes.join(" "),
        expect.join(" ")
    );
    for tier in [&["--reference"][..], &["--no-jit"][..], &[][..]] {
        let (code, kinds, out) = run(&text, tier);
        assert_eq!((code, kinds), (0, vec![]), "{tier:?}:\n{out}");
    }
}

/// A script with `body` as `main`'s, `a` holding 4 words, `o` 8 (8 invocations), under
/// `feature`.
fn values_script(feature: &str, body: &str) -> String {
    format!(
        r#"#!amber
DEVICE_FEATURE {feature}
SHADER compute s GLSL TARGET_ENV vulkan1.1
#version 450
layout(local_size_x = 8) in;
layout(set = 0, binding = 0, std430) buffer A {{ uint a[]; }};
layout(set = 0, binding = 1, std430) buffer O {{ uint o[]; }};
void main() {{
  uint i = gl_LocalInvocationIndex;
  {body}
}}
END
BUFFER a DATA_TYPE uint32 DATA 5 6 7 8 END
BUFFER o DATA_TYPE uint32 SIZE 8 FILL 0
PIPELINE compute p
  ATTACH s
  BIND BUFFER a AS storage DESCRIPTOR_SET 0 BINDING 0
  BIND BUFFER o AS storage DESCRIPTOR_SET 0 BINDING 1
END
RUN p 1 1 1
"#
    )
}

/// The value a `robustBufferAccess` load past the end returns is the implementation's choice:
/// a `robust-access` warning where it reaches the output (stored, after arithmetic and a trip
/// through a function variable; deciding a branch that stores; an atomic's operand), none
/// where it is dropped. Likewise the undefined value a `robustBufferAccess2` atomic past the
/// end returns; its zero loads are defined wherever they go. Both scripts of
/// `tests/amber/robust/` too, on the reference path and the default tiers.
#[test]
fn a_chosen_value_is_a_warning_only_where_it_reaches_the_output() {
    let buffer = "robustBufferAccess";
    let buffer2 = "Robustness2FeaturesEXT.robustBufferAccess2";
    let cases = [
        (buffer, "uint v = a[i]; if (i < 4u) { o[i] = v; }", false),
        (buffer, "uint v = a[i] + 1u; o[i] = v * 2u;", true),
        (
            buffer,
            "uint v[2]; v[i & 1u] = a[i]; o[i] = v[i & 1u];",
            true,
        ),
        (buffer, "if (a[i] == 0u) { o[i] = 1u; }", true),
        (buffer, "uint v = a[i]; atomicAdd(o[0], v);", true),
        (
            buffer,
            "uint v = a[i] * 0u; if (i < 4u) { o[i] = 1u; }",
            false,
        ),
        (buffer2, "o[i] = a[i];", false),
        (buffer2, "if (i >= 4u) { atomicAdd(a[i], 1u); }", false),
        (
            buffer2,
            "if (i >= 4u) { o[i] = atomicAdd(a[i], 1u); }",
            true,
        ),
    ];
    for (feature, body, warns) in cases {
        let text = values_script(feature, body);
        for policy in ["robust-zero", "robust-in-range"] {
            let (code, kinds, out) = run(&text, &["--policy", policy]);
            let want = if warns { warning() } else { vec![] };
            assert_eq!(
                (code, kinds),
                (0, want),
                "{feature}: {body} ({policy}):\n{out}"
            );
        }
    }
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/amber/robust");
    for (file, warns) in [
        ("buffer_past_end.amber", false),
        ("buffer_value_stored.amber", true),
    ] {
        let text = std::fs::read_to_string(dir.join(file)).expect("the script");
        for tier in [&["--reference"][..], &[][..]] {
            let (code, kinds, out) = run(&text, tier);
            let want = if warns { warning() } else { vec![] };
            assert_eq!((code, kinds), (0, want), "{file} {tier:?}:\n{out}");
        }
    }
}

/// `robustImageAccess2`: reads outside a storage image give zero with (0, 0, 1) inserted for
/// the components the format lacks, writes outside change nothing, and an image atomic outside
/// returns zero and changes nothing: no finding. Without the feature, as the spec sorts them: a
/// read outside reads an invalid texel, whose value is undefined (an `image-value` warning; the
/// run passes unless `--deny image-value`), a write outside "has no effect" (no finding), and
/// an atomic outside stays an `out-of-bounds` error.
#[test]
fn robust_image_access_2_defines_reads_writes_and_atomics_outside_the_image() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/amber/robust");
    let text = std::fs::read_to_string(dir.join("image2_past_end.amber")).expect("the script");
    let off = text.replace(
        "DEVICE_FEATURE Robustness2FeaturesEXT.robustImageAccess2\n",
        "",
    );
    assert_ne!(off, text);
    let error = vec![("out-of-bounds".to_string(), "error".to_string())];
    assert_eq!(run(&text, &[]).0, 0, "{}", run(&text, &[]).2);
    assert_eq!(run(&text, &[]).1, vec![]);
    // Without the feature the reads (invocations 4 and 5) are invalid texels, read as zero;
    // the writes outside have no effect.
    let off = off.replace("EQ 501 601 701 801 1 1", "EQ 501 601 701 801 0 0");
    let value = vec![("image-value".to_string(), "warning".to_string())];
    let (code, kinds, out) = run(&off, &[]);
    assert_eq!((code, kinds), (0, value.clone()), "{out}");
    assert!(
        out.contains("the value of an invalid texel is undefined"),
        "{out}"
    );
    let (code, kinds, out) = run(&off, &["--deny", "image-value"]);
    assert_eq!(
        (code, kinds),
        (1, vec![("image-value".to_string(), "error".to_string())]),
        "{out}"
    );
    // The same without a read's value reaching past the image's texels: the warning only.
    let writes =
        std::fs::read_to_string(dir.join("image_outside_no_robustness.amber")).expect("the script");
    let (code, kinds, out) = run(&writes, &[]);
    assert_eq!((code, kinds), (0, value), "{out}");
    let atomic = |feature: &str| {
        format!(
            r#"#!amber
{feature}
SHADER compute s GLSL TARGET_ENV vulkan1.1
#version 450
layout(local_size_x = 6) in;
layout(set = 0, binding = 0, r32ui) uniform uimage1D img;
layout(set = 0, binding = 1, std430) buffer O {{ uint o[]; }};
void main() {{
  int i = int(gl_LocalInvocationIndex);
  o[i] = imageAtomicAdd(img, i, 10u);
}}
END
IMAGE img FORMAT R32_UINT DIM_1D WIDTH 4 DATA 1 2 3 4 END
BUFFER o DATA_TYPE uint32 SIZE 6 FILL 7
PIPELINE compute p
  ATTACH s
  BIND BUFFER img AS storage_image DESCRIPTOR_SET 0 BINDING 0
  BIND BUFFER o AS storage DESCRIPTOR_SET 0 BINDING 1
END
RUN p 1 1 1
EXPECT img IDX 0 EQ 11 12 13 14
EXPECT o IDX 0 EQ 1 2 3 4 0 0
"#
        )
    };
    let on = atomic("DEVICE_FEATURE Robustness2FeaturesEXT.robustImageAccess2");
    let (code, kinds, out) = run(&on, &[]);
    assert_eq!((code, kinds), (0, vec![]), "{out}");
    let (code, kinds, out) = run(&atomic(""), &[]);
    assert_eq!((code, kinds), (1, error), "{out}");
}

/// A cooperative-matrix load of an 8x8 float matrix from a 60-float buffer (its last 4
/// elements past the end), stored whole into a 64-float one, and a store of a whole matrix
/// into a 60-float buffer, under `features`.
fn coopmat_script(features: &[&str], store_past: bool) -> String {
    let lines: String = features
        .iter()
        .map(|f| format!("DEVICE_FEATURE {f}\n"))
        .collect();
    let (src, dst) = if store_past { (64, 60) } else { (60, 64) };
    let data: Vec<String> = (0..src).map(|i| (i + 1).to_string()).collect();
    let expect: Vec<String> = (0..60).map(|i| (i + 1).to_string()).collect();
    let tail = match store_past {
        true => String::new(),
        false => "EXPECT dst IDX 240 EQ 0 0 0 0\n".to_string(),
    };
    format!(
        r#"#!amber
DEVICE_EXTENSION VK_KHR_cooperative_matrix
DEVICE_FEATURE CooperativeMatrixFeaturesKHR.cooperativeMatrix
{lines}SHADER compute s GLSL TARGET_ENV vulkan1.3
#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer In {{ float src[]; }};
layout(set = 0, binding = 1) buffer Out {{ float dst[]; }};
void main() {{
  if (gl_SubgroupID == 0u) {{
    coopmat<float, gl_ScopeSubgroup, 8, 8, gl_MatrixUseAccumulator> m;
    coopMatLoad(m, src, 0, 8, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(m, dst, 0, 8, gl_CooperativeMatrixLayoutRowMajor);
  }}
}}
END
BUFFER src DATA_TYPE float DATA {data} END
BUFFER dst DATA_TYPE float SIZE {dst} FILL 0
PIPELINE compute p
  ATTACH s
  BIND BUFFER src AS storage DESCRIPTOR_SET 0 BINDING 0
  BIND BUFFER dst AS storage DESCRIPTOR_SET 0 BINDING 1
END
RUN p 1 1 1
EXPECT dst IDX 0 EQ {expect}
{tail}"#,
        data = data.join(" "),
        expect = expect.join(" "),
    )
}

/// Cooperative-matrix loads and stores past a buffer's end take the plain accesses' robust
/// path element by element where `cooperativeMatrixRobustBufferAccess` is enabled:
/// `robustBufferAccess2` zeros and drops (no finding), `robustBufferAccess` takes the policy's
/// choice (a warning). Without that feature, or without buffer robustness, they stay
/// `out-of-bounds` errors.
#[test]
fn cooperative_matrix_accesses_past_the_end_follow_robustness_with_the_feature() {
    let coopmat = "CooperativeMatrixFeaturesKHR.cooperativeMatrixRobustBufferAccess";
    let buffer = "robustBufferAccess";
    let buffer2 = "Robustness2FeaturesEXT.robustBufferAccess2";
    let error = vec![("out-of-bounds".to_string(), "error".to_string())];
    for store_past in [false, true] {
        let cases = [
            (vec![], 1, error.clone()),
            (vec![buffer2], 1, error.clone()),
            (vec![coopmat], 1, error.clone()),
            (vec![coopmat, buffer2], 0, vec![]),
            (vec![coopmat, buffer], 0, warning()),
        ];
        for (features, code, kinds) in cases {
            let features: &[&str] = &features;
            let text = coopmat_script(features, store_past);
            let (got, found, out) = run(&text, &["--policy", "robust-zero"]);
            assert_eq!(
                (got, found),
                (code, kinds),
                "{features:?}, store past: {store_past}:\n{out}"
            );
        }
    }
}
