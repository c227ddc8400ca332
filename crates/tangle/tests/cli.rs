//! The `tangle` binary's small subcommands and exit codes: `as`/`dis` on good and bad input,
//! `val` verdicts, and `profiles`.

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
        input.write_all(stdin).expect("stdin is writable");
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
