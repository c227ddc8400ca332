//! The glslc binary as ggml's build calls it: a cooperative-matrix shader with an `#include`
//! (no `GL_GOOGLE_include_directive` in the source) and a dependency file, an integer-dot shader
//! written to stdout as ggml's probes ask, and glslc's error text for an unknown extension.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const COOPMAT: &str = r#"#version 450
#extension GL_KHR_cooperative_matrix : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : enable
#include "types.glsl"
layout(local_size_x = 32) in;
layout(binding = 0) buffer A { float16_t a[]; };
layout(binding = 1) buffer D { ACC_TYPE d[]; };
void main() {
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb;
    coopmat<ACC_TYPE, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> mc =
        coopmat<ACC_TYPE, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
    coopMatLoad(ma, a, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(mb, a, 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    mc = coopMatMulAdd(ma, mb, mc);
    coopMatStore(mc, d, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}
"#;

const INTEGER_DOT: &str = r#"#version 450
#extension GL_EXT_integer_dot_product : require
layout(local_size_x = 1) in;
layout(binding = 0) buffer B { int v[]; };
void main() { v[0] = dotPacked4x8EXT(v[1], v[2]); }
"#;

/// A fresh folder for one test's files.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tangle-glslc-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create a scratch folder");
    dir
}

fn glslc(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_glslc"));
    cmd.args(args).env_remove("GLSLC_UNSUPPORTED_EXTENSIONS");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run glslc")
}

/// The SPIR-V words of a module, checking its magic number.
fn words(bytes: &[u8]) -> Vec<u32> {
    assert!(
        bytes.len() >= 20 && bytes.len().is_multiple_of(4),
        "not a SPIR-V module: {} bytes",
        bytes.len()
    );
    let w: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    assert_eq!(w[0], 0x0723_0203, "SPIR-V magic");
    w
}

/// The `OpCapability` operands of a module.
fn capabilities(w: &[u32]) -> Vec<u32> {
    let mut caps = Vec::new();
    let mut i = 5;
    while i < w.len() {
        let (count, op) = ((w[i] >> 16) as usize, w[i] & 0xffff);
        if op == 17 {
            caps.push(w[i + 1]);
        }
        i += count.max(1);
    }
    caps
}

fn path(p: &Path) -> &str {
    p.to_str().expect("utf-8 temp path")
}

#[test]
fn coopmat_shader_with_include_and_dependency_file() {
    let dir = scratch("coopmat");
    let (src, inc, out, dep) = (
        dir.join("mm.comp"),
        dir.join("types.glsl"),
        dir.join("mm.spv"),
        dir.join("mm.d"),
    );
    std::fs::write(&src, COOPMAT).unwrap();
    std::fs::write(&inc, "#define ACC_TYPE ACC\n").unwrap();
    let o = glslc(
        &[
            "-fshader-stage=compute",
            "--target-env=vulkan1.3",
            path(&src),
            "-o",
            path(&out),
            "-O",
            "-MD",
            "-MF",
            path(&dep),
            "-g",
            "-DACC=float",
        ],
        &[],
    );
    assert!(
        o.status.success() && o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let w = words(&std::fs::read(&out).unwrap());
    assert_eq!(w[1], 0x0001_0600, "vulkan1.3 generates SPIR-V 1.6");
    assert!(
        capabilities(&w).contains(&6022),
        "CooperativeMatrixKHR capability"
    );
    let rule = std::fs::read_to_string(&dep).unwrap();
    assert_eq!(
        rule,
        format!("{}: {} {}\n", path(&out), path(&src), path(&inc))
    );
}

#[test]
fn integer_dot_shader_to_stdout() {
    let dir = scratch("dot");
    let src = dir.join("dot.comp");
    std::fs::write(&src, INTEGER_DOT).unwrap();
    let o = glslc(
        &[
            "-o",
            "-",
            "-fshader-stage=compute",
            "--target-env=vulkan1.2",
            path(&src),
        ],
        &[],
    );
    assert!(
        o.status.success() && o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let w = words(&o.stdout);
    assert_eq!(w[1], 0x0001_0500, "vulkan1.2 generates SPIR-V 1.5");
    let caps = capabilities(&w);
    assert!(
        caps.contains(&6019) && caps.contains(&6018),
        "DotProduct and 4x8-bit packed: {caps:?}"
    );
}

#[test]
fn unknown_extension_fails_as_glslc_does() {
    let dir = scratch("unknown");
    let src = dir.join("probe.comp");
    std::fs::write(
        &src,
        "#version 450\n#extension GL_EXT_no_such_thing : require\nvoid main() {}\n",
    )
    .unwrap();
    let o = glslc(
        &[
            "-o",
            "-",
            "-fshader-stage=compute",
            "--target-env=vulkan1.3",
            path(&src),
        ],
        &[],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    assert!(
        err.contains(&format!("{}:2: error: ", path(&src)))
            && err.contains("extension not supported: GL_EXT_no_such_thing")
            && err.trim_end().ends_with("generated."),
        "{err}"
    );
    // ggml's probe text, for an extension glslang knows but the build turns off.
    std::fs::write(&src, INTEGER_DOT).unwrap();
    let off = [(
        "GLSLC_UNSUPPORTED_EXTENSIONS",
        "GL_NV_cooperative_matrix2,GL_EXT_integer_dot_product",
    )];
    let o = glslc(
        &[
            "-o",
            "-",
            "-fshader-stage=compute",
            "--target-env=vulkan1.3",
            path(&src),
        ],
        &off,
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        err.contains("extension not supported: GL_EXT_integer_dot_product"),
        "{err}"
    );
    // Only an extension the preprocessor keeps counts (ggml enables some under `#ifdef`).
    let inactive = "#version 450\n#ifdef COOPMAT2\n#extension GL_NV_cooperative_matrix2 : enable\n#endif\nvoid main() {}\n";
    std::fs::write(&src, inactive).unwrap();
    let o = glslc(
        &[
            "-o",
            "-",
            "-fshader-stage=compute",
            "--target-env=vulkan1.3",
            path(&src),
        ],
        &off,
    );
    assert!(
        o.status.success() && o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
