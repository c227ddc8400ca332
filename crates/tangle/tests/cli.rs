//! The `tangle` binary's subcommands and exit codes: `as`/`dis` on good and bad input, `val`
//! verdicts, `profiles` and `driver --manifest`; and the reports of every subcommand (issue 11,
//! part 5): which stream carries what, inputs told apart by content, `run --json` on errors, and
//! the exit codes of scripts that cannot run anywhere, run nothing, or stop before their
//! `EXPECT`s.

use std::io::Write;
use std::process::{Command, Stdio};

/// Runs `tangle ARGS` with `stdin` as standard input: (exit code, stdout bytes, stderr).
fn tangle(args: &[&str], stdin: &[u8]) -> (i32, Vec<u8>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tangle"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the tangle binary starts");
    if let Some(mut input) = child.stdin.take() {
        // A command that fails before reading its input closes the pipe early.
        if let Err(e) = input.write_all(stdin) {
            assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "stdin: {e}");
        }
    }
    let out = child
        .wait_with_output()
        .expect("the tangle binary finishes");
    (
        out.status.code().unwrap_or(-1),
        out.stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const MODULE: &str = "OpCapability Shader\nOpMemoryModel Logical GLSL450\n%void = OpTypeVoid\n";

#[test]
fn as_then_dis_round_trips_through_pipes() {
    let (code, binary, err) = tangle(
        &["as", "-", "-o", "-", "--target-env", "vulkan1.1"],
        MODULE.as_bytes(),
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        &binary[..8],
        &[0x03, 0x02, 0x23, 0x07, 0x00, 0x03, 0x01, 0x00],
        "magic and version 1.3"
    );
    let (code, text, err) = tangle(
        &["dis", "-", "--raw-id", "--no-header", "--no-indent"],
        &binary,
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        String::from_utf8_lossy(&text),
        "OpCapability Shader\nOpMemoryModel Logical GLSL450\n%1 = OpTypeVoid\n"
    );
}

#[test]
fn bad_input_is_exit_2_with_a_location() {
    let (code, _, err) = tangle(
        &["as", "-", "-o", "-"],
        b"OpCapability Shader\nOpCapability Shadr\n",
    );
    assert_eq!(code, 2);
    assert!(err.contains(":2:14:"), "{err}");
    let (code, _, err) = tangle(&["dis", "-"], &[0x03, 0x02, 0x23, 0x07, 0, 0]);
    assert_eq!(code, 2);
    assert!(err.contains("word 0"), "{err}");
    let (code, _, _) = tangle(&["as", "-", "--target-env", "vulkan9.9"], MODULE.as_bytes());
    assert_eq!(code, 2);
}

#[test]
fn val_says_valid_or_invalid() {
    let dir = std::env::temp_dir().join(format!("tangle-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let valid = dir.join("valid.spvasm");
    let module = "OpCapability Shader\nOpMemoryModel Logical GLSL450\nOpEntryPoint GLCompute %main \"main\"\n\
        OpExecutionMode %main LocalSize 1 1 1\n%void = OpTypeVoid\n%f = OpTypeFunction %void\n\
        %main = OpFunction %void None %f\n%l = OpLabel\nOpReturn\nOpFunctionEnd\n";
    std::fs::write(&valid, module).expect("write");
    let (code, _, err) = tangle(&["val", valid.to_str().unwrap_or_default()], b"");
    assert_eq!(code, 0, "{err}");
    // A rotate without its capability.
    let invalid = dir.join("invalid.spvasm");
    let text = module
        .replace(
            "%l = OpLabel\n",
            "%l = OpLabel\n%r = OpGroupNonUniformRotateKHR %uint %u3 %u3 %u3\n",
        )
        .replace(
            "%void = OpTypeVoid\n",
            "%void = OpTypeVoid\n%uint = OpTypeInt 32 0\n%u3 = OpConstant %uint 3\n",
        );
    std::fs::write(&invalid, text).expect("write");
    let (code, _, err) = tangle(&["val", invalid.to_str().unwrap_or_default()], b"");
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("GroupNonUniformRotateKHR"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn profiles_lists_the_default_device() {
    let (code, out, _) = tangle(&["profiles"], b"");
    assert_eq!(code, 0);
    let out = String::from_utf8_lossy(&out);
    assert!(
        out.contains("default:") && out.contains("subgroup size 32"),
        "{out}"
    );
    assert!(
        out.contains("lavapipe:") && out.contains("subgroup size 8"),
        "{out}"
    );
}

#[test]
fn driver_writes_the_loader_manifest_for_the_built_library() {
    // The driver library is a dependency of the binary, so cargo built it beside it.
    let (code, out, err) = tangle(&["driver", "--manifest", "-"], b"");
    assert_eq!(code, 0, "{err}");
    let json: serde_json::Value = serde_json::from_slice(&out).expect("a JSON manifest");
    let library = json["ICD"]["library_path"]
        .as_str()
        .expect("a library path");
    assert!(library.ends_with("libtangle_icd.so"), "{library}");
    assert!(std::path::Path::new(library).is_absolute() && std::path::Path::new(library).is_file());
    assert!(json["ICD"]["api_version"]
        .as_str()
        .is_some_and(|v| v.starts_with("1.3.")));
    // A library that does not exist is a usage error, named.
    let (code, out, err) = tangle(
        &["driver", "--manifest", "-", "--library", "/nonexistent.so"],
        b"",
    );
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(err.contains("/nonexistent.so"), "{err}");
}

#[test]
fn profiles_list_cooperative_matrix_entries() {
    let (code, out, _) = tangle(&["profiles"], b"");
    assert_eq!(code, 0);
    let out = String::from_utf8_lossy(&out);
    // Each profile's list, in driver order, one entry a line (notes §1.5, §2.4, §3.1, §4.1).
    for (profile, count, entry) in [
        (
            "nvidia:",
            11,
            "16x16x16 FLOAT16 x FLOAT16 + FLOAT32 -> FLOAT32, subgroup",
        ),
        (
            "lavapipe:",
            4,
            "8x8x8 SINT8 x SINT8 + SINT32 -> SINT32, subgroup",
        ),
        (
            "amd:",
            14,
            "16x16x16 SINT8 x UINT8 + SINT32 -> SINT32, subgroup, saturating",
        ),
        (
            "intel:",
            6,
            "8x16x16 BFLOAT16 x BFLOAT16 + BFLOAT16 -> BFLOAT16, subgroup",
        ),
        (
            "default:",
            70,
            "8x8x8 FLOAT64 x FLOAT64 + FLOAT64 -> FLOAT64, subgroup",
        ),
    ] {
        let section: String = out
            .split_inclusive('\n')
            .skip_while(|l| !l.starts_with(profile))
            .skip(1)
            .take_while(|l| l.starts_with(' '))
            .collect();
        assert!(
            section.contains(&format!("{count} entries:")),
            "{profile} {count}\n{section}"
        );
        assert!(
            section.contains(&format!("    {entry}\n")),
            "{profile}\n{section}"
        );
    }
    assert!(out.contains("Intel Xe2"), "{out}");
}

/// A 16x16 f16 MatrixA type: on the `nvidia` list, not on lavapipe's (8x8x8 only).
const COOPMAT_16X16_A: &[u8] = b"#!amber
SHADER compute s SPIRV-ASM TARGET_ENV spv1.6
               OpCapability Shader
               OpCapability Float16
               OpCapability VulkanMemoryModel
               OpCapability CooperativeMatrixKHR
               OpExtension \"SPV_KHR_cooperative_matrix\"
               OpMemoryModel Logical Vulkan
               OpEntryPoint GLCompute %main \"main\"
               OpExecutionMode %main LocalSize 32 1 1
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
        %f16 = OpTypeFloat 16
       %uint = OpTypeInt 32 0
   %subgroup = OpConstant %uint 3
        %c16 = OpConstant %uint 16
      %use_a = OpConstant %uint 0
         %ta = OpTypeCooperativeMatrixKHR %f16 %subgroup %c16 %c16 %use_a
       %main = OpFunction %void None %fn
          %l = OpLabel
               OpReturn
               OpFunctionEnd
END
PIPELINE compute p
  ATTACH s
END
RUN p 1 1 1
";

#[test]
fn a_cooperative_matrix_the_profile_lacks_is_unsupported() {
    let dir = Scratch::new("coopmat-profile");
    let script = dir.file("coopmat.amber", COOPMAT_16X16_A);
    let (code, out, err) = tangle(&["run", &script, "--profile", "lavapipe"], b"");
    let out = String::from_utf8_lossy(&out);
    assert_eq!(code, 77, "{out}{err}");
    assert!(
        out.contains("'lavapipe' profile does not support a 16x16 FLOAT16 MatrixA"),
        "{out}{err}"
    );
    let (code, out, err) = tangle(&["run", &script, "--profile", "nvidia"], b"");
    assert_eq!(code, 0, "{}{err}", String::from_utf8_lossy(&out));
}

/// A scratch directory for one test's files, removed when dropped.
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new(test: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("tangle-cli-{test}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        Scratch(dir)
    }

    /// Writes `bytes` to `name` in the directory; the path as a string.
    fn file(&self, name: &str, bytes: &[u8]) -> String {
        let path = self.0.join(name);
        std::fs::write(&path, bytes).expect("write");
        path.to_string_lossy().into_owned()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A script of `tests/amber/`.
fn amber(path: &str) -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/amber")
        .join(path)
        .to_string_lossy()
        .into_owned()
}

/// A valid compute module as text.
const COMPUTE: &str =
    "OpCapability Shader\nOpMemoryModel Logical GLSL450\nOpEntryPoint GLCompute %main \"main\"\n\
    OpExecutionMode %main LocalSize 1 1 1\n%void = OpTypeVoid\n%f = OpTypeFunction %void\n\
    %main = OpFunction %void None %f\n%l = OpLabel\nOpReturn\nOpFunctionEnd\n";

/// `COMPUTE` assembled, little-endian.
fn compute_binary() -> Vec<u8> {
    let (code, binary, err) = tangle(&["as", "-", "-o", "-"], COMPUTE.as_bytes());
    assert_eq!(code, 0, "{err}");
    binary
}

/// Parses standard output as exactly one JSON value (trailing text would fail).
fn one_json(stdout: &[u8]) -> serde_json::Value {
    serde_json::from_slice(stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON value ({e}):\n{}",
            String::from_utf8_lossy(stdout)
        )
    })
}

#[test]
fn a_zero_workgroup_dimension_is_exit_1_naming_it() {
    // The shader is valid and fits every device's limits but for the zero, so no profile could
    // run it: a "no" (1), not "unsupported" (77).
    for (script, names) in [
        (
            "fail/zero_workgroup_size.amber",
            [
                "0x1x1",
                "x comes from",
                "(SpecId 0) in the WorkgroupSize built-in",
            ],
        ),
        (
            "fail/zero_local_size_id.amber",
            [
                "1x0x1",
                "y comes from",
                "the LocalSizeId operand %3 (SpecId 3)",
            ],
        ),
    ] {
        for profile in ["default", "lavapipe"] {
            let (code, stdout, stderr) =
                tangle(&["run", &amber(script), "--profile", profile], b"");
            let stdout = String::from_utf8_lossy(&stdout);
            assert_eq!(code, 1, "{script}: {stdout}{stderr}");
            assert!(stdout.starts_with("FAIL "), "{stdout}");
            assert!(stdout.contains("invalid on every device"), "{stdout}");
            for name in names {
                assert!(stdout.contains(name), "{script}: {name}: {stdout}");
            }
            assert!(!stdout.contains("UNSUPPORTED"), "{stdout}");
            assert_eq!(stderr, "", "the verdict is not a diagnostic");
        }
    }
}

#[test]
fn a_script_that_runs_and_checks_nothing_is_exit_2() {
    let dir = Scratch::new("idle");
    let definitions = dir.file(
        "definitions.amber",
        b"#!amber\nSHADER compute s GLSL\n#version 450\nvoid main() {}\nEND\nBUFFER b DATA_TYPE uint32 DATA 1 2 END\n",
    );
    let empty = dir.file("empty.amber", b"");
    for script in [definitions.as_str(), empty.as_str(), "-"] {
        let (code, stdout, stderr) = tangle(&["run", script], b"");
        let stdout = String::from_utf8_lossy(&stdout);
        assert_eq!(code, 2, "{script}: {stdout}{stderr}");
        assert!(stdout.starts_with("ERROR "), "{stdout}");
        assert!(
            stdout.contains("no RUN and no EXPECT: it runs nothing and checks nothing"),
            "{stdout}"
        );
        let (code, stdout, _) = tangle(&["run", script, "--json"], b"");
        assert_eq!(code, 2);
        let report = one_json(&stdout);
        assert_eq!(report["status"], "Error");
        assert_eq!(report["report"]["runs"], 0);
        let message = report["report"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("runs nothing"), "{message}");
        let (code, stdout, _) = tangle(&["run", script, "--policy", "all"], b"");
        assert_eq!(code, 2, "{}", String::from_utf8_lossy(&stdout));
    }
}

/// `run --json` arguments, the error kind, words of the message (or script name), line and
/// column.
type ErrorCase<'a> = (Vec<&'a str>, &'a str, &'a str, Option<(u64, u64)>);

#[test]
fn json_prints_one_report_on_stdout_for_every_error() {
    let dir = Scratch::new("json");
    let script = amber("double.amber");
    let parse_error = amber("unusable/parse_error.amber");
    let not_utf8 = dir.file("latin1.amber", b"# caf\xe9\nRUN p 1 1 1\n");
    let binary = dir.file("shader.amber", &compute_binary());
    let missing = dir.file("gone.amber", b"");
    let _ = std::fs::remove_file(&missing);
    let trace = dir.0.join("no-such-dir/trace.json");
    let trace = trace.to_string_lossy();
    let cases: Vec<ErrorCase> = vec![
        (vec![&missing], "io", "gone.amber", None),
        (
            vec![&not_utf8],
            "content",
            "text that is not UTF-8 (byte e9 at 1:6",
            None,
        ),
        (
            vec![&binary],
            "content",
            "a SPIR-V binary, not an Amber script",
            None,
        ),
        (
            vec![&parse_error],
            "parse",
            "unknown or unsupported type 'uint33'",
            Some((3, 23)),
        ),
        (
            vec![&script, "--profile", "gpu9000"],
            "usage",
            "unknown profile 'gpu9000'",
            None,
        ),
        (
            vec![&script, "--policy", "sideways"],
            "usage",
            "--policy sideways",
            None,
        ),
        (
            vec![&script, "--subgroup-size", "3"],
            "usage",
            "power of two",
            None,
        ),
        (
            vec![&script, "--policy", "all", "--trace", "t.json"],
            "usage",
            "--trace",
            None,
        ),
        (
            vec![&script, "--trace", &trace],
            "io",
            "cannot write the trace",
            None,
        ),
        (
            vec![&script, "--time-limit", "nan"],
            "usage",
            "--time-limit nan: must be a number of seconds",
            None,
        ),
        (
            vec![&script, "--time-limit", "-1"],
            "usage",
            "--time-limit -1: must be",
            None,
        ),
        (
            vec![&script, "--time-limit", "1e19"],
            "usage",
            "--time-limit 1e19: must be",
            None,
        ),
        (
            vec![&script, "--step-limit", "0"],
            "usage",
            "--step-limit 0: must be a whole number",
            None,
        ),
        (
            vec![&script, "--step-limit", "99999999999999999999"],
            "usage",
            "--step-limit 99999999999999999999: must be",
            None,
        ),
        (
            vec![&script, "--memory-limit", "2X"],
            "usage",
            "--memory-limit 2X: must be a whole number of bytes",
            None,
        ),
        (
            vec![&script, "--threads", "many"],
            "usage",
            "--threads many: must be auto or a whole number",
            None,
        ),
        (
            vec![&script, "--memory-limit", "100"],
            "parse",
            "does not fit in the memory limit",
            Some((11, 34)),
        ),
    ];
    for (args, kind, words, at) in cases {
        let mut argv = vec!["run", "--json"];
        argv.extend(&args);
        let (code, stdout, stderr) = tangle(&argv, b"");
        assert_eq!(code, 2, "{args:?}: {stderr}");
        let report = one_json(&stdout);
        assert_eq!(report["status"], "Error", "{args:?}: {report}");
        assert_eq!(report["error"]["kind"], kind, "{args:?}: {report}");
        let message = report["error"]["message"].as_str().unwrap_or_default();
        let shown = format!("{message} {}", report["script"]);
        assert!(shown.contains(words), "{args:?}: {report}");
        assert!(report.get("report").is_none(), "{report}");
        match at {
            Some((line, col)) => {
                assert_eq!(report["error"]["line"], line, "{report}");
                assert_eq!(report["error"]["col"], col, "{report}");
            }
            None => assert!(report["error"]["line"].is_null(), "{report}"),
        }
        // The same error, for people, on stderr.
        assert!(
            stderr.starts_with("tangle: ") && stderr.contains(message),
            "{args:?}: {stderr}"
        );
    }
    // Options clap rejects before `run` starts still give a report, without a script name.
    for (args, words) in [
        (
            vec!["--subgroup-size", "many"],
            "invalid value 'many' for '--subgroup-size",
        ),
        (vec!["--bogus-flag"], "unexpected argument '--bogus-flag'"),
    ] {
        let mut argv = vec!["run", &script, "--json"];
        argv.extend(args);
        let (code, stdout, stderr) = tangle(&argv, b"");
        assert_eq!(code, 2, "{stderr}");
        let report = one_json(&stdout);
        assert_eq!(report["status"], "Error", "{report}");
        assert_eq!(report["error"]["kind"], "usage", "{report}");
        assert!(report["script"].is_null(), "{report}");
        let message = report["error"]["message"].as_str().unwrap_or_default();
        assert!(message.starts_with(words), "{report}");
        assert!(stderr.contains(words), "{stderr}");
    }
    let (code, stdout, _) = tangle(&["run", &script, "--subgroup-size", "many"], b"");
    assert_eq!((code, stdout.len()), (2, 0), "no JSON without --json");
    // Success and failure reports share the top-level fields.
    let (code, stdout, _) = tangle(&["run", "--json", &script], b"");
    assert_eq!(code, 0);
    let report = one_json(&stdout);
    assert_eq!(report["status"], "Pass");
    assert_eq!(report["report"]["status"], "Pass");
    assert!(report["script"]
        .as_str()
        .unwrap_or_default()
        .ends_with("double.amber"));
}

#[test]
fn a_run_that_stops_says_how_many_expects_it_did_not_reach() {
    let script = amber("fail/zero_workgroup_size.amber");
    let (code, stdout, _) = tangle(&["run", &script], b"");
    let stdout = String::from_utf8_lossy(&stdout);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains(": 0/1 expectations held, 1 not reached, 0 dispatches: line 20: RUN p"),
        "{stdout}"
    );
    let (_, stdout, _) = tangle(&["run", &script, "--json"], b"");
    let report = one_json(&stdout);
    assert_eq!(report["report"]["unreached"], 1, "{report}");
    assert_eq!(
        report["report"]["expects"].as_array().map(Vec::len),
        Some(0)
    );
    // A run that goes to the end reaches everything.
    let (_, stdout, _) = tangle(&["run", &amber("double.amber"), "--json"], b"");
    assert_eq!(one_json(&stdout)["report"]["unreached"], 0);
}

/// Arguments, stdin, exit code, what stdout holds (nothing when empty), and whether stderr has a
/// diagnostic.
type StreamCase<'a> = (Vec<&'a str>, &'a [u8], i32, &'a str, bool);

#[test]
fn verdicts_go_to_stdout_and_diagnostics_to_stderr() {
    let dir = Scratch::new("streams");
    let valid = dir.file("valid.spvasm", COMPUTE.as_bytes());
    // An addition whose result type is void.
    let invalid = dir.file(
        "invalid.spvasm",
        COMPUTE
            .replace("%l = OpLabel\n", "%l = OpLabel\n%x = OpIAdd %void %l %l\n")
            .as_bytes(),
    );
    let (pass, fail, unusable) = (
        amber("double.amber"),
        amber("fail/expect_mismatch.amber"),
        amber("unusable/parse_error.amber"),
    );
    let binary = compute_binary();
    let cases: Vec<StreamCase> = vec![
        (
            vec!["as", "-", "-o", "-"],
            COMPUTE.as_bytes(),
            0,
            "\x03\x02\x23\x07",
            false,
        ),
        (vec!["as", "-", "-o", "-"], b"OpBogus\n", 2, "", true),
        (
            vec!["dis", "-"],
            &binary,
            0,
            "OpEntryPoint GLCompute",
            false,
        ),
        (vec!["dis", "-"], b"\x07\x23", 2, "", true),
        (
            vec!["val", &valid],
            b"",
            0,
            "valid.spvasm: valid for spv1.6\n",
            false,
        ),
        (
            vec!["val", &invalid],
            b"",
            1,
            "invalid.spvasm: not valid for spv1.6: ",
            true,
        ),
        (vec!["val", "-", "--target-env", "nope"], b"", 2, "", true),
        (vec!["run", &pass], b"", 0, "PASS ", false),
        (vec!["run", &fail], b"", 1, "EXPECT failed", false),
        (vec!["run", &unusable], b"", 2, "", true),
        (vec!["profiles"], b"", 0, "default:", false),
    ];
    for (args, stdin, code, out, diagnostic) in cases {
        let (got, stdout, stderr) = tangle(&args, stdin);
        assert_eq!(got, code, "{args:?}: {stderr}");
        if out.is_empty() {
            assert!(
                stdout.is_empty(),
                "{args:?}: {}",
                String::from_utf8_lossy(&stdout)
            );
        } else {
            let found = stdout.windows(out.len()).any(|w| w == out.as_bytes());
            assert!(found, "{args:?}: {}", String::from_utf8_lossy(&stdout));
        }
        assert_eq!(!stderr.is_empty(), diagnostic, "{args:?}: {stderr}");
        if code == 2 {
            assert!(stderr.starts_with("tangle: "), "{args:?}: {stderr}");
            assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        }
    }
}

#[test]
fn inputs_are_told_apart_by_content_not_by_name() {
    let dir = Scratch::new("content");
    let binary = compute_binary();
    let big_endian: Vec<u8> = binary
        .chunks_exact(4)
        .flat_map(|w| [w[3], w[2], w[1], w[0]])
        .collect();
    let binary_named_text = dir.file("binary.spvasm", &binary);
    let big_endian_named_text = dir.file("big.spvasm", &big_endian);
    let text_named_binary = dir.file("text.spv", COMPUTE.as_bytes());
    for module in [
        &binary_named_text,
        &big_endian_named_text,
        &text_named_binary,
    ] {
        let (code, stdout, stderr) = tangle(&["val", module], b"");
        assert_eq!(code, 0, "{module}: {stderr}");
        assert!(String::from_utf8_lossy(&stdout).contains(": valid for"));
    }
    let (code, text, stderr) = tangle(&["dis", &binary_named_text, "--raw-id"], b"");
    assert_eq!(code, 0, "{stderr}");
    assert!(String::from_utf8_lossy(&text).contains("OpEntryPoint GLCompute %1 \"main\""));
    let (code, _, stderr) = tangle(&["as", &text_named_binary, "-o", "-"], b"");
    assert_eq!(code, 0, "{stderr}");
    // What was found instead, named.
    let elf = dir.file("a.spv", b"\x7fELF\x02\x01\x01\0\0\0\0\0");
    let empty = dir.file("empty.spv", b"");
    let glsl = dir.file("shader.spvasm", b"#version 450\nvoid main() {}\n");
    let prose = dir.file("notes.spvasm", b"hello world\n");
    let junk = dir.file("junk.spv", &[0x80, 0x81, 0x82, 0x83]);
    let cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
        (
            vec!["dis", &text_named_binary],
            vec!["SPIR-V assembly text, not a SPIR-V binary", "`tangle as`"],
        ),
        (
            vec!["as", &binary_named_text, "-o", "-"],
            vec!["already a SPIR-V binary", "`tangle dis`"],
        ),
        (
            vec!["val", &elf],
            vec!["first bytes 7f 45 4c 46: an ELF file"],
        ),
        (
            vec!["dis", &elf],
            vec!["binary data that is not SPIR-V", "an ELF file"],
        ),
        (vec!["val", &empty], vec!["empty.spv: an empty file"]),
        (vec!["dis", &empty], vec!["an empty file"]),
        (vec!["as", &empty, "-o", "-"], vec!["an empty file"]),
        (
            vec!["val", &glsl],
            vec!["GLSL source, not SPIR-V assembly", "glslangValidator"],
        ),
        (
            vec!["as", &prose, "-o", "-"],
            vec!["UTF-8 text that is not SPIR-V assembly", "1:1"],
        ),
        (vec!["dis", &prose], vec!["UTF-8 text, not a SPIR-V binary"]),
        (
            vec!["val", &junk],
            vec!["neither SPIR-V nor UTF-8 text (first bytes 80 81 82 83)"],
        ),
        (
            vec!["run", &binary_named_text],
            vec!["a SPIR-V binary, not an Amber script"],
        ),
        (
            vec!["run", &text_named_binary],
            vec!["SPIR-V assembly text, not an Amber script"],
        ),
    ];
    for (args, words) in cases {
        let (code, stdout, stderr) = tangle(&args, b"");
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stdout.is_empty(), "{args:?}");
        for w in words {
            assert!(stderr.contains(w), "{args:?}: {w}: {stderr}");
        }
    }
}

/// A script whose one `RUN` has far more workgroups than can run: 65535 x 65535 x 1, each
/// looping a while.
const HUGE_RUN: &str = "#!amber
SHADER compute spin GLSL
#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer R { uint r[]; };
void main() { uint k = 0u; for (uint i = 0u; i < 200u; i++) { k += i * r[0]; } atomicAdd(r[1], k); }
END
BUFFER r DATA_TYPE uint32 DATA 1 0 END
PIPELINE compute p
  ATTACH spin
  BIND BUFFER r AS storage DESCRIPTOR_SET 0 BINDING 0
END
RUN p 65535 65535 1
EXPECT r IDX 0 EQ 1
";

#[test]
fn the_time_limit_stops_a_huge_dispatch_and_prints_nothing_else_off_a_terminal() {
    let dir = Scratch::new("huge");
    let script = dir.file("huge.amber", HUGE_RUN.as_bytes());
    let start = std::time::Instant::now();
    let (code, stdout, stderr) = tangle(&["run", &script, "--time-limit", "1.5"], b"");
    let took = start.elapsed();
    println!("--time-limit 1.5 on 65535 x 65535 workgroups: stopped after {took:?}");
    let stdout = String::from_utf8_lossy(&stdout);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("time limit of 1500 ms exceeded"),
        "{stdout}"
    );
    assert!(stdout.contains("1 not reached"), "{stdout}");
    // Standard error is a pipe here: no progress bar, nothing at all.
    assert_eq!(stderr, "");
    // A hang guard, not a speed claim: the old executor ran on for minutes.
    assert!(took < std::time::Duration::from_secs(12), "{took:?}");
    // Many threads are capped to the machine's cores, not started.
    let (code, stdout, stderr) = tangle(
        &["run", &amber("double.amber"), "--threads", "1000000"],
        b"",
    );
    assert_eq!(code, 0, "{}{stderr}", String::from_utf8_lossy(&stdout));
}

/// The time limit bounds the whole `RUN` (issue 28): validation, lowering and the native
/// compile count, not only the dispatch. At 1 ms the `RUN` of issue 28's shader (whose compile
/// alone takes far longer) fails with the limit named, exit 1 as a runaway dispatch does; with
/// the default limit it passes.
#[test]
fn the_time_limit_counts_the_compile_and_lowering_of_a_run() {
    let script = amber("group/rotate_divergent_pairs.amber");
    let (code, stdout, stderr) = tangle(&["run", &script, "--time-limit", "0.001"], b"");
    let stdout = String::from_utf8_lossy(&stdout);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("time limit of 1 ms exceeded"), "{stdout}");
    let (code, stdout, stderr) = tangle(&["run", &script], b"");
    assert_eq!(code, 0, "{}{stderr}", String::from_utf8_lossy(&stdout));
}

#[test]
fn a_dispatch_past_the_memory_limit_is_refused() {
    // The script's 128 bytes of buffers fit in 1K; the executor's register file does not.
    let (code, stdout, stderr) = tangle(
        &["run", &amber("double.amber"), "--memory-limit", "1K"],
        b"",
    );
    let stdout = String::from_utf8_lossy(&stdout);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("more than the memory limit of 1024 bytes"),
        "{stdout}"
    );
}

#[test]
fn a_register_file_past_the_memory_limit_exits_as_the_memory_limit() {
    // 1024 invocations keeping 40000 values each: a register file past the cap tangle once
    // refused on its own (exit 77); now the memory limit the user set bounds it, like the rest
    // of a dispatch's memory: the RUN fails (exit 1) naming the limit, on either path.
    let mut shader = String::from(
        "OpCapability Shader\nOpMemoryModel Logical GLSL450\nOpEntryPoint GLCompute %main \"main\" %lii\n\
OpExecutionMode %main LocalSize 1024 1 1\nOpDecorate %lii BuiltIn LocalInvocationIndex\n\
%void = OpTypeVoid\n%fn = OpTypeFunction %void\n%uint = OpTypeInt 32 0\n%ptr = OpTypePointer Input %uint\n\
%lii = OpVariable %ptr Input\n%main = OpFunction %void None %fn\n%entry = OpLabel\n%v0 = OpLoad %uint %lii\n",
    );
    for k in 1..40_000 {
        shader.push_str(&format!("%v{k} = OpIAdd %uint %v{} %v0\n", k - 1));
    }
    shader.push_str("OpReturn\nOpFunctionEnd\n");
    let script = format!(
        "#!amber\nSHADER compute s SPIRV-ASM\n{shader}END\nPIPELINE compute p\nATTACH s\nEND\nRUN p 4 1 1\n"
    );
    let dir = Scratch::new("registers");
    let path = dir.file("registers.amber", script.as_bytes());
    for extra in [&[][..], &["--reference"][..]] {
        let mut args = vec!["run", path.as_str(), "--memory-limit", "64M"];
        args.extend_from_slice(extra);
        let (code, stdout, stderr) = tangle(&args, b"");
        let stdout = String::from_utf8_lossy(&stdout);
        assert_eq!(code, 1, "{extra:?}: {stdout}{stderr}");
        assert!(
            stdout.contains("more than the memory limit of 67108864 bytes"),
            "{extra:?}: {stdout}"
        );
    }
}

#[test]
fn a_terminal_gets_a_progress_bar_for_a_long_dispatch() {
    // `script` (util-linux) runs tangle on a pseudo-terminal.
    let found = Command::new("script").arg("--version").output();
    if found.map_or(true, |o| !o.status.success()) {
        println!("skipped: `script` (util-linux) is not installed, so no terminal to test on");
        return;
    }
    let dir = Scratch::new("pty");
    let script = dir.file("huge.amber", HUGE_RUN.as_bytes());
    let command = format!(
        "{} run {script} --time-limit 3",
        env!("CARGO_BIN_EXE_tangle")
    );
    let out = Command::new("script")
        .args(["-q", "-e", "-c", &command, "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .expect("script runs");
    let shown = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{shown}");
    assert!(shown.contains("workgroups ["), "no bar drawn:\n{shown}");
    assert!(shown.contains("time limit of 3000 ms exceeded"), "{shown}");
    // Under --json the terminal gets the report only.
    let out = Command::new("script")
        .args(["-q", "-e", "-c", &format!("{command} --json"), "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .expect("script runs");
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        !shown.contains("workgroups ["),
        "a bar under --json:\n{shown}"
    );
}

/// `tangle bench` names the workloads it knows; an unknown one is a usage error (exit 2).
#[test]
fn bench_refuses_an_unknown_workload() {
    let (code, stdout, stderr) = tangle(&["bench", "--quick", "matmul"], b"");
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty());
    assert!(
        stderr.contains("no benchmark workload named 'matmul'"),
        "{stderr}"
    );
}

/// `tangle bench compile` prints the native compile against program size alone: a row per
/// generated program, each compiled, and the longest compile of the run (issue 28).
#[test]
fn bench_prints_the_native_compile_against_program_size() {
    let (code, stdout, stderr) = tangle(&["bench", "--quick", "--no-driver", "compile"], b"");
    let stdout = String::from_utf8_lossy(&stdout);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains("native compile against program size"),
        "{stdout}"
    );
    let rows: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.contains("µs per op"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .collect();
    assert_eq!(rows.len(), 3, "{stdout}");
    assert!(rows.iter().all(|r| !r.contains("not compiled")), "{stdout}");
    assert!(stdout.contains("longest native compile: "), "{stdout}");
}

/// `--large` (the 2048³ GEMM as well) and `--quick` contradict each other: a usage error.
#[test]
fn bench_refuses_quick_with_large() {
    let (code, stdout, stderr) = tangle(&["bench", "--quick", "--large", "coopmat_gemm"], b"");
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty());
    assert!(
        stderr.contains("'--quick' cannot be used with '--large'"),
        "{stderr}"
    );
}

#[test]
fn reference_runs_the_reference_path_alone_and_is_cpu_only() {
    // The same script passes with and without the wide path.
    let script = amber("wide/masked_stores.amber");
    for extra in [&[][..], &["--reference"][..]] {
        let mut args = vec!["run", script.as_str()];
        args.extend_from_slice(extra);
        let (code, out, _) = tangle(&args, b"");
        assert_eq!(code, 0, "{extra:?}: {}", String::from_utf8_lossy(&out));
    }
    // Only tangle's CPU executor has the two paths.
    let (code, _, err) = tangle(&["run", "--backend", "vulkan", "--reference", &script], b"");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--reference"), "{err}");
}
