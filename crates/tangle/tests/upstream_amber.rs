//! The corpus of `tests/amber/upstream/`: tangle's own equivalents of upstream Amber's
//! `tests/cases` compute scripts (AmberScript and VkScript, each named after the upstream case it
//! mirrors) and, in `graphicsfuzz/`, of the Vulkan CTS GraphicsFuzz compute scripts whose
//! undefined values drove issue 28. Every script runs through `tangle run --json` and must end as
//! [`TABLE`] says: it passes, or it fails only on undefined behaviour (the kinds of its error
//! findings, each with the sentence of the specification that makes it undefined), or it needs
//! something outside tangle's subset (exit 77, the report naming it), or it is one of upstream's
//! `*.expect_fail.*` scripts and fails as upstream expects. A script missing from the table, or
//! a row without its script, fails the test, so the table stays the corpus's list.
//!
//! `amber_scripts.rs` reads only the folders it names, so these scripts are checked here alone;
//! the tests that walk `tests/amber/` recursively take them too (`wide_path.rs` every script,
//! `diff_scripts.rs` and `spirv_val_agrees.rs` the `.amber` ones).

mod summary;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use summary::say;
use tangle_exec::check::kind::Kind;

/// How a script must end.
enum Outcome {
    /// Exit 0: every expectation holds and no error finding.
    Pass,
    /// Exit 1 with error findings of exactly these kinds (as `--allow` names them), each given
    /// with the sentence of the specification that makes it undefined behaviour.
    Ub(&'static [(&'static str, &'static str)]),
    /// Exit 77, the report naming this.
    Unsupported(&'static str),
    /// An upstream `*.expect_fail.*` script: exit 1 or 2, the output naming this.
    ExpectFail(&'static str),
}

use Outcome::{ExpectFail, Pass, Ub, Unsupported};

/// Vulkan, "Memory Model", Data Race.
const RACE: (&str, &str) = (
    "race",
    "Vulkan memory model, Data Race: \"For a given memory location, if there is a write and a \
     read or write from different invocations that are not ordered by happens-before, then \
     there is a data race\", and a data race results in undefined behavior. Several workgroups \
     store the same words with nothing ordering them.",
);

/// Vulkan, "Robust Buffer Access".
const OUT_OF_BOUNDS: (&str, &str) = (
    "out-of-bounds",
    "Vulkan, Robust Buffer Access: \"If the robustBufferAccess feature is not enabled, \
     applications must not perform out of bounds accesses\". The first compute runs when the \
     buffers hold the 16 bytes written so far, behind blocks of 88.",
);

/// Vulkan, vkCmdDispatch.
const PUSH_CONSTANTS_UNSET: (&str, &str) = (
    "out-of-bounds",
    "Vulkan, VUID-vkCmdDispatch-maintenance4-08602 (formerly VUID-vkCmdDispatch-None-02698): \
     without maintenance4, for each push constant the shader statically uses, \"a push constant \
     value must have been set for the same pipeline bind point\". The first compute reads push \
     constants before any is written (tangle: a push-constant block 0 bytes long).",
);

/// Scripts that pass since issue 28's fixes, named by the fix (each failed before it).
/// A composite load or store touches only its members' bytes, never the padding.
const MEMBERS: Outcome = Pass;
/// VkScript `[comment]` sections.
const COMMENT: Outcome = Pass;
/// `probe ssbo` reads what `ssbo subdata` wrote with no compute between.
const NO_COMPUTE: Outcome = Pass;
/// An undefined value used is a warning, not an error.
const UNDEFINED_VALUE: Outcome = Pass;

/// Every script of `tests/amber/upstream/` (relative path) and how it must end.
const TABLE: &[(&str, Outcome)] = &[
    ("buffer_load_binary.amber", Pass),
    ("buffer_load_text.amber", Pass),
    ("buffer_rmse.amber", Pass),
    (
        "buffer_rmse_tolerance_too_large.expect_fail.amber",
        ExpectFail("RMSE"),
    ),
    (
        "buffer_without_format.expect_fail.vkscript",
        ExpectFail("binding"),
    ),
    ("compute_accumulated_ubo_definition.amber", Pass),
    ("compute_accumulated_ubo_definition.vkscript", Pass),
    ("compute_descriptor_array_ssbo.amber", Pass),
    ("compute_descriptor_array_storagetexelbuffer.amber", Pass),
    ("compute_dynamic_buffers.amber", Pass),
    ("compute_dynamic_buffers_descriptor_array.amber", Pass),
    // Opens with a [comment] section: runs once issue 28's VkScript fix is in.
    ("compute_in_spirv_generated_by_clspv.amber", Ub(&[RACE])),
    ("compute_mat2x2.amber", MEMBERS),
    ("compute_mat2x2.vkscript", Pass),
    ("compute_mat2x2float.vkscript", MEMBERS),
    ("compute_mat2x3.amber", MEMBERS),
    ("compute_mat2x3.vkscript", Pass),
    ("compute_mat2x3float.vkscript", MEMBERS),
    ("compute_mat2x4_row_major_col_major.amber", Pass),
    ("compute_mat3x2.amber", MEMBERS),
    ("compute_mat3x2.vkscript", Pass),
    ("compute_mat3x2float.vkscript", MEMBERS),
    ("compute_mat3x3.amber", MEMBERS),
    ("compute_mat3x3.vkscript", Pass),
    ("compute_mat3x3float.vkscript", MEMBERS),
    ("compute_mat3x4.amber", Pass),
    ("compute_mat3x4.vkscript", Pass),
    ("compute_mat3x4float.vkscript", Pass),
    ("compute_mat4x3.amber", MEMBERS),
    ("compute_mat4x3.vkscript", Pass),
    ("compute_mat4x3float.vkscript", MEMBERS),
    ("compute_nothing.vkscript", Pass),
    ("compute_nothing_with_ssbo.vkscript", Pass),
    // Six views of one buffer (uniform, storage, texel buffers) alias: issue 29's item 3.
    ("compute_one_buffer_in_multiple_bindings.amber", Pass),
    ("compute_pack_half2x16.amber", Pass),
    ("compute_probe_mat3.amber", MEMBERS),
    ("compute_probe_mat3.vkscript", Pass),
    ("compute_push_const_mat2x2.amber", Pass),
    ("compute_push_const_mat2x2.vkscript", Pass),
    ("compute_push_const_mat2x2float.vkscript", Pass),
    ("compute_push_const_mat2x3.amber", MEMBERS),
    ("compute_push_const_mat2x3.vkscript", Pass),
    ("compute_push_const_mat2x3float.vkscript", MEMBERS),
    ("compute_push_const_mat3x2.amber", Pass),
    ("compute_push_const_mat3x2.vkscript", Pass),
    ("compute_push_const_mat3x2float.vkscript", Pass),
    ("compute_push_const_mat3x3.amber", MEMBERS),
    ("compute_push_const_mat3x3.vkscript", Pass),
    ("compute_push_const_mat3x3float.vkscript", MEMBERS),
    ("compute_push_const_mat3x4.amber", Pass),
    ("compute_push_const_mat3x4.vkscript", Pass),
    ("compute_push_const_mat3x4float.vkscript", Pass),
    ("compute_push_const_mat4x3.amber", MEMBERS),
    ("compute_push_const_mat4x3float.vkscript", MEMBERS),
    (
        "compute_push_constant_after_compute_ssbo.amber",
        Ub(&[PUSH_CONSTANTS_UNSET, RACE]),
    ),
    ("compute_push_constant_and_ssbo.amber", Ub(&[RACE])),
    ("compute_push_constant_and_ssbo.vkscript", Ub(&[RACE])),
    ("compute_robust_buffer_access_ssbo.amber", Pass),
    ("compute_ssbo.vkscript", Pass),
    ("compute_ssbo_with_entrypoint_command.amber", COMMENT),
    ("compute_ssbo_with_entrypoint_command.vkscript", COMMENT),
    ("compute_ssbo_with_tolerance.amber", Pass),
    ("compute_ssbo_with_tolerance.vkscript", Pass),
    ("compute_ssbo_without_probe.vkscript", Pass),
    ("compute_timed_execution_single.amber", Pass),
    ("compute_ubo_and_ssbo.amber", Pass),
    ("compute_ubo_and_ssbo_layouts.amber", Pass),
    ("compute_workgroup_atomic.amber", Pass),
    ("compute_workgroup_init.amber", Pass),
    (
        "computes_compiled_by_clspv/ReadConstantStruct.cl.amber",
        COMMENT,
    ),
    (
        "computes_compiled_by_clspv/composite_construct_array.amber",
        COMMENT,
    ),
    ("computes_compiled_by_clspv/copy_opt.amber", Pass),
    ("computes_compiled_by_clspv/fills.amber", COMMENT),
    (
        "computes_compiled_by_clspv/hack_undef_composite.amber",
        COMMENT,
    ),
    (
        "computes_compiled_by_clspv/read_constant_data.cl.amber",
        COMMENT,
    ),
    ("computes_compiled_by_clspv/stripe.comp.amber", Pass),
    ("computes_compiled_by_clspv/wrap2.amber", UNDEFINED_VALUE),
    ("computes_compiled_by_clspv/wrap_call.cl.amber", COMMENT),
    ("computes_compiled_by_clspv/write_w0.spvasm.amber", COMMENT),
    ("copy_data_buffer.amber", Pass),
    ("float16.amber", Pass),
    ("glsl_read_and_write_image3d_rgba32i.amber", Pass),
    ("graphicsfuzz/loops-breaks-returns.amber", UNDEFINED_VALUE),
    (
        "graphicsfuzz/two-nested-for-loops-with-returns.amber",
        UNDEFINED_VALUE,
    ),
    ("int8.amber", Pass),
    (
        "multiple_ssbo_with_sparse_descriptor_set_in_compute_pipeline.vkscript",
        Ub(&[OUT_OF_BOUNDS, RACE]),
    ),
    (
        "multiple_ssbo_with_sparse_descriptor_set_in_compute_pipeline_less_than_4.vkscript",
        Ub(&[RACE]),
    ),
    ("non_default_entry_point.amber", Pass),
    ("opencl_c_copy.amber", Unsupported("OPENCL-C")),
    (
        "probe_no_compute_with_multiple_ssbo_commands.vkscript",
        NO_COMPUTE,
    ),
    ("probe_no_compute_with_ssbo.vkscript", NO_COMPUTE),
    ("repeat.amber", Pass),
    ("scratch_ssbo.vkscript", Pass),
    ("shader_specialization.amber", Pass),
    ("ssbo_subdata_size.vkscript", Pass),
    ("storage16.amber", Pass),
];

fn upstream_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/amber/upstream")
}

/// The `.amber` and `.vkscript` files under `dir`, recursively, as paths relative to `root`.
fn scripts(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for path in entries.filter_map(|e| e.ok().map(|e| e.path())) {
        if path.is_dir() {
            scripts(root, &path, out);
        } else if path
            .extension()
            .is_some_and(|x| x == "amber" || x == "vkscript")
        {
            let relative = path.strip_prefix(root).unwrap_or(&path);
            out.push(relative.to_string_lossy().replace('\\', "/"));
        }
    }
}

/// `tangle run SCRIPT --json`: (exit code, stdout, stderr).
fn tangle_run(script: &Path) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tangle"))
        .arg("run")
        .arg(script)
        .args(["--threads", "2", "--json"])
        .output()
        .expect("the tangle binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The kinds of the error findings in a `--json` report, and the report's first reason for not
/// passing (empty when it passed or is not JSON).
fn error_kinds(json: &str) -> (BTreeSet<String>, String) {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(json) else {
        return (BTreeSet::new(), String::new());
    };
    let report = &v["report"];
    let kinds = report["findings"]
        .as_array()
        .map(|findings| {
            findings
                .iter()
                .filter(|f| f["severity"] == "error")
                .filter_map(|f| f["kind"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let why = report["message"].as_str().unwrap_or_default().to_string();
    (kinds, why)
}

/// Why `got` is not what `expect` says, if it is not.
fn mismatch(expect: &Outcome, (code, stdout, stderr): &(i32, String, String)) -> Option<String> {
    let (kinds, why) = error_kinds(stdout);
    let wrong = match expect {
        Pass => *code != 0 || !kinds.is_empty(),
        Ub(findings) => {
            let want: BTreeSet<String> = findings.iter().map(|(k, _)| k.to_string()).collect();
            *code != 1 || kinds != want
        }
        Unsupported(reason) => *code != 77 || !stdout.contains(reason),
        ExpectFail(says) => {
            !(*code == 1 || *code == 2) || !(stdout.contains(says) || stderr.contains(says))
        }
    };
    // The report's reason, or what the binary said when there is no report.
    let said = match (why.is_empty(), stderr.trim().is_empty()) {
        (false, _) => why,
        (true, false) => stderr.clone(),
        (true, true) => stdout.clone(),
    };
    wrong.then(|| format!("exit {code}, error findings {kinds:?}: {}", said.trim()))
}

#[test]
fn every_upstream_script_ends_as_its_table_row_says() {
    let root = upstream_dir();
    let mut found = Vec::new();
    scripts(&root, &root, &mut found);
    found.sort();
    let rows: BTreeSet<&str> = TABLE.iter().map(|(name, _)| *name).collect();
    assert_eq!(rows.len(), TABLE.len(), "a script has two rows");
    let unlisted: Vec<&String> = found
        .iter()
        .filter(|s| !rows.contains(s.as_str()))
        .collect();
    assert!(unlisted.is_empty(), "add a row to TABLE for {unlisted:?}");
    let missing: Vec<&&str> = rows
        .iter()
        .filter(|r| !found.iter().any(|s| s == *r))
        .collect();
    assert!(missing.is_empty(), "rows without a script: {missing:?}");

    let mut wrong = Vec::new();
    let (mut pass, mut ub, mut unsupported, mut expect_fail) = (0, 0, 0, 0);
    for (name, expect) in TABLE {
        let got = tangle_run(&root.join(name));
        if let Some(why) = mismatch(expect, &got) {
            wrong.push(format!("tests/amber/upstream/{name}: {why}"));
        }
        match expect {
            Pass => pass += 1,
            Ub(_) => ub += 1,
            Unsupported(_) => unsupported += 1,
            ExpectFail(_) => expect_fail += 1,
        }
    }
    say(&format!(
        "tests/amber/upstream: {} scripts: {pass} pass, {ub} fail on undefined behaviour only, \
         {unsupported} unsupported, {expect_fail} expected failures",
        TABLE.len(),
    ));
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Every undefined-behaviour row names its kinds once and gives each its sentence.
#[test]
fn every_undefined_behaviour_row_quotes_its_specification() {
    for (name, expect) in TABLE {
        if let Ub(findings) = expect {
            assert!(!findings.is_empty(), "{name}: no finding named");
            for (kind, sentence) in *findings {
                assert!(
                    Kind::by_name(kind).is_some(),
                    "{name}: unknown finding kind {kind}"
                );
                assert!(sentence.contains('"'), "{name}: {kind} quotes no sentence");
            }
        }
    }
}
