//! Races on cooperative-matrix memory that hold whatever element layout the implementation
//! chooses (issue 34, part 2): a subgroup stores a matrix with `coopMatStore` and then each
//! invocation reads elements back with plain loads. Which invocation held which element is
//! implementation-dependent (SPV_KHR_cooperative_matrix: "The mapping of components to
//! invocations and indexes is implementation-dependent."), so without a barrier that orders
//! the store before the loads, some legal layout makes an invocation read an element another
//! invocation wrote: a data race. tangle must report it under every layout it models
//! (`row-striped`, where each invocation here reads only what it held, included) and every
//! subgroup size, on workgroup and storage memory, and report nothing once a subgroup or
//! workgroup barrier orders the two.

mod script_run;

/// What stands between the matrix store and the plain loads.
#[derive(Clone, Copy, Debug)]
enum Between {
    Nothing,
    SubgroupBarrier,
    ControlBarrier,
}

impl Between {
    fn glsl(self) -> &'static str {
        match self {
            Between::Nothing => "",
            Between::SubgroupBarrier => "subgroupBarrier();",
            Between::ControlBarrier => {
                "controlBarrier(gl_ScopeWorkgroup, gl_ScopeWorkgroup, \
                 gl_StorageSemanticsShared | gl_StorageSemanticsBuffer, gl_SemanticsAcquireRelease);"
            }
        }
    }
}

/// The script: each subgroup of a 128-invocation workgroup loads an 8×8 f32 matrix from `src`,
/// stores it to `mem` (`shared` or the storage buffer `tmp`), and each invocation copies the
/// elements the row-striped layout gave it from `mem` to `dst` with plain loads.
fn script(shared: bool, between: Between) -> String {
    let mem = if shared { "sh" } else { "tmp" };
    let data: Vec<String> = (0..2048).map(|i| (i % 97).to_string()).collect();
    format!(
        r#"#!amber
DEVICE_EXTENSION VK_KHR_cooperative_matrix
DEVICE_FEATURE CooperativeMatrixFeaturesKHR.cooperativeMatrix
SHADER compute s GLSL TARGET_ENV vulkan1.3
#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x = 128) in;
layout(set = 0, binding = 0) buffer In {{ float src[]; }};
layout(set = 0, binding = 1) buffer Out {{ float dst[]; }};
layout(set = 0, binding = 2) buffer Tmp {{ float tmp[]; }};
shared float sh[2048];
void main() {{
  coopmat<float, gl_ScopeSubgroup, 8, 8, gl_MatrixUseAccumulator> m;
  uint base = gl_SubgroupID * 64u;
  coopMatLoad(m, src, base, 8, gl_CooperativeMatrixLayoutRowMajor);
  coopMatStore(m, {mem}, base, 8, gl_CooperativeMatrixLayoutRowMajor);
  {between}
  uint per = (64u + gl_SubgroupSize - 1u) / gl_SubgroupSize;
  for (uint i = 0u; i < per; i++) {{
    uint e = gl_SubgroupInvocationID * per + i;
    if (e < 64u) {{ dst[base + e] = {mem}[base + e]; }}
  }}
}}
END
BUFFER src DATA_TYPE float DATA {data} END
BUFFER dst DATA_TYPE float SIZE 2048 FILL 0
BUFFER tmp DATA_TYPE float SIZE 2048 FILL 0
PIPELINE compute p
  ATTACH s
  BIND BUFFER src AS storage DESCRIPTOR_SET 0 BINDING 0
  BIND BUFFER dst AS storage DESCRIPTOR_SET 0 BINDING 1
  BIND BUFFER tmp AS storage DESCRIPTOR_SET 0 BINDING 2
END
RUN p 1 1 1
"#,
        between = between.glsl(),
        data = data.join(" "),
    )
}

/// `tangle run --json` of `text` with `args`: (exit code, finding kinds, output).
fn run(text: &str, args: &[&str]) -> (i32, Vec<String>, String) {
    let (code, kinds, out) = script_run::run_json("coopmat-ownership", text, args);
    let mut kinds: Vec<String> = kinds.into_iter().map(|(k, _)| k).collect();
    kinds.dedup();
    (code, kinds, out)
}

const LAYOUTS: [&str; 3] = ["row-striped", "column-striped", "shuffled:7"];
const SIZES: [&str; 6] = ["4", "8", "16", "32", "64", "128"];

#[test]
fn a_plain_read_of_a_stored_matrix_races_under_every_layout_without_a_barrier() {
    for shared in [true, false] {
        let text = script(shared, Between::Nothing);
        for layout in LAYOUTS {
            for size in SIZES {
                let args = ["--coopmat-layout", layout, "--subgroup-size", size];
                let (code, kinds, out) = run(&text, &args);
                assert_eq!(
                    (code, kinds.as_slice()),
                    (1, ["race".to_string()].as_slice()),
                    "shared {shared}, {args:?}:\n{out}"
                );
            }
        }
    }
}

#[test]
fn a_barrier_between_the_matrix_store_and_the_plain_reads_leaves_no_race() {
    for shared in [true, false] {
        for between in [Between::SubgroupBarrier, Between::ControlBarrier] {
            let text = script(shared, between);
            for layout in LAYOUTS {
                for size in SIZES {
                    let args = ["--coopmat-layout", layout, "--subgroup-size", size];
                    let (code, kinds, out) = run(&text, &args);
                    assert!(
                        code == 0 && kinds.is_empty(),
                        "shared {shared}, {between:?}, {args:?}:\n{out}"
                    );
                }
            }
        }
    }
}

/// Every tier answers alike: the reference path alone, and the default (whose fast tiers
/// leave such a program to the reference path, `wide::plan`).
#[test]
fn the_reference_path_and_the_default_agree_on_the_race() {
    let text = script(false, Between::Nothing);
    for extra in [&["--reference"][..], &["--no-jit"][..], &[][..]] {
        let mut args = vec!["--subgroup-size", "32"];
        args.extend_from_slice(extra);
        let (code, kinds, out) = run(&text, &args);
        assert_eq!(
            (code, kinds),
            (1, vec!["race".to_string()]),
            "{args:?}:\n{out}"
        );
    }
}
