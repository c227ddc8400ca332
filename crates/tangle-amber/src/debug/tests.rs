//! Tests of the `DEBUG` replay ([`super::stops`]) and of stepping ([`super::check_thread`]) on a
//! hand-written module whose paths and stops are worked out by hand.

use super::*;
use crate::error::Location;
use tangle_spirv::text::{assemble, AssembleOptions};

/// `%1` (main) calls `%2` (f) twice on line 3; f's body is lines 10 and 11 and has no `OpLine`
/// before its first instruction; main's entry branches to a block that only returns.
const MODULE: &str = r#"
OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %1 "main"
OpExecutionMode %1 LocalSize 1 1 1
%50 = OpString "a.comp"
OpSource GLSL 450 %50 "l1
l2
l3
"
%void = OpTypeVoid
%fn = OpTypeFunction %void
%uint = OpTypeInt 32 0
%fnu = OpTypeFunction %uint
%u1 = OpConstant %uint 1
%2 = OpFunction %uint None %fnu
%20 = OpLabel
%21 = OpIAdd %uint %u1 %u1
OpLine %50 10 1
%22 = OpIAdd %uint %21 %u1
OpLine %50 11 1
OpReturnValue %22
OpFunctionEnd
%1 = OpFunction %void None %fn
%10 = OpLabel
OpLine %50 2 1
%12 = OpIAdd %uint %u1 %u1
OpLine %50 3 1
%13 = OpFunctionCall %uint %2
%14 = OpFunctionCall %uint %2
%15 = OpIAdd %uint %13 %14
OpBranch %11
OpLine %50 1 1
%11 = OpLabel
OpReturn
OpFunctionEnd
"#;

fn module() -> Module {
    assemble(
        MODULE,
        &AssembleOptions {
            target_env: crate::compile::DEFAULT_TARGET_ENV,
        },
    )
    .expect("assembles")
    .0
}

/// The path of the one invocation: main's entry, f twice, main's second block. The assembler
/// numbers ids in order of appearance, so they are read back: functions f, main; labels f's,
/// main's two.
fn path(m: &Module) -> Vec<PathEvent> {
    blocks(&block_path(m))
}

/// The path that starts `blocks` ((function id, label id)), with no values.
fn blocks(blocks: &[(u32, u32)]) -> Vec<PathEvent> {
    blocks
        .iter()
        .map(|&(function, label)| PathEvent::Block { function, label })
        .collect()
}

fn block_path(m: &Module) -> Vec<(u32, u32)> {
    let of = |op: Op| -> Vec<u32> {
        m.instructions
            .iter()
            .filter(|i| i.op() == Some(op))
            .filter_map(|i| i.result_id)
            .collect()
    };
    let (f, l) = (of(Op::Function), of(Op::Label));
    vec![(f[1], l[1]), (f[0], l[0]), (f[0], l[0]), (f[1], l[2])]
}

/// A stop as (file, line, depth).
fn stop(line: u32, depth: usize) -> (String, u32, usize) {
    ("a.comp".into(), line, depth)
}

fn places(stops: &[Stop]) -> Vec<(String, u32, usize)> {
    stops
        .iter()
        .map(|s| (s.file.clone(), s.line, s.depth))
        .collect()
}

#[test]
fn the_replay_follows_calls_returns_and_branches() {
    let m = module();
    let sources = Sources::new(&m);
    assert!(sources.has_lines);
    assert_eq!(sources.line_text("a.comp", 2), Some("l2"));
    assert_eq!(sources.line_text("a.comp", 4), None);
    let got = stops(&m, &sources, &path(&m)).expect("the path fits").stops;
    // Line 3 comes back after each call returns; f's first instruction has no line; the
    // OpLine before %11's label gives its OpReturn line 1.
    let want = [
        stop(2, 1),
        stop(3, 1),
        stop(10, 2),
        stop(11, 2),
        stop(3, 1),
        stop(10, 2),
        stop(11, 2),
        stop(3, 1),
        stop(1, 1),
    ];
    assert_eq!(places(&got), want);
}

#[test]
fn paths_that_do_not_fit_the_module_are_errors() {
    let m = module();
    let s = Sources::new(&m);
    let p = block_path(&m);
    let (main, f, last) = (p[0], p[1], p[3]);
    for bad in [
        vec![],
        vec![main],                   // ends inside the call
        vec![main, last],             // does not enter f at the call
        vec![main, f, (f.0, 9999)],   // no such block
        vec![main, f, f, f],          // branches across functions
        vec![main, f, f, last, last], // goes on after the return
    ] {
        assert!(stops(&m, &s, &blocks(&bad)).is_err(), "{bad:?}");
    }
}

fn thread(steps: Vec<DebugStep>) -> DebugThread {
    DebugThread {
        invocation: [0, 0, 0],
        steps,
        at: Location { line: 1, col: 1 },
    }
}

fn at(line: u32, text: Option<&str>) -> DebugStep {
    DebugStep::ExpectLocation {
        file: "a.comp".into(),
        line,
        text: text.map(str::to_string),
        at: Location { line: 7, col: 1 },
    }
}

/// Whether each `EXPECT LOCATION` of `steps` held.
fn outcomes(steps: Vec<DebugStep>) -> Vec<bool> {
    let m = module();
    let s = Sources::new(&m);
    let stops = stops(&m, &s, &path(&m)).expect("fits");
    check_thread(&thread(steps), &stops, &s, &m)
        .expect("checkable")
        .iter()
        .map(|r| r.passed)
        .collect()
}

#[test]
fn steps_move_as_line_debuggers_do() {
    use DebugStep::*;
    // In: every stop in order.
    let ins = [2, 3, 10, 11, 3, 10, 11, 3, 1];
    let mut steps = vec![at(2, Some("l2"))];
    for line in &ins[1..] {
        steps.push(StepIn);
        steps.push(at(*line, None));
    }
    assert!(outcomes(steps).iter().all(|p| *p));
    // Over: the calls are stepped over; the rest of line 3 after each call is a stop.
    let over = vec![
        at(2, None),
        StepOver,
        at(3, None),
        StepOver,
        at(3, None),
        StepOver,
        at(3, None),
        StepOver,
        at(1, None),
        StepOver,
        at(1, None), // finished: fails
    ];
    assert_eq!(outcomes(over), [true, true, true, true, true, false]);
    // Out: from inside f back to main after the call; from main to the end.
    let out = vec![
        StepIn,
        StepIn,
        at(10, None),
        StepOut,
        at(3, None),
        StepOut,
        at(3, None),
    ];
    assert_eq!(outcomes(out), [true, true, false]);
    // Continue: nothing is paused after it; a wrong line or text fails.
    let cont = vec![at(3, None), at(2, Some("l3")), Continue, at(2, None)];
    assert_eq!(outcomes(cont), [false, false, false]);
}

#[test]
fn a_line_text_the_module_does_not_embed_is_refused_not_passed() {
    let without_source = MODULE.replace("OpSource GLSL 450 %50 \"l1\nl2\nl3\n\"", "");
    let m = assemble(
        &without_source,
        &AssembleOptions {
            target_env: crate::compile::DEFAULT_TARGET_ENV,
        },
    )
    .expect("assembles")
    .0;
    let s = Sources::new(&m);
    let stops = stops(&m, &s, &path(&m)).expect("fits");
    // Without text the location is still checked.
    let ok = check_thread(&thread(vec![at(2, None)]), &stops, &s, &m).expect("checkable");
    assert!(ok[0].passed);
    let e = check_thread(&thread(vec![at(2, Some("l2"))]), &stops, &s, &m).expect_err("no source");
    assert!(e.contains("OpSource"), "{e}");
}

#[test]
fn check_refuses_modules_without_lines_and_reports_missing_invocations() {
    let m = module();
    let words = m.to_words();
    let t = thread(vec![at(2, None)]);
    let results = check(&words, std::slice::from_ref(&t), &[path(&m)]).expect("checks");
    assert!(results[0].passed);
    let results = check(&words, std::slice::from_ref(&t), &[Vec::new()]).expect("checks");
    assert!(!results[0].passed && results[0].message.contains("no such invocation"));
    let no_lines = MODULE.replace("OpLine %50", "OpNop ; ");
    let words = assemble(
        &no_lines
            .lines()
            .map(|l| l.split(';').next().unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n"),
        &AssembleOptions {
            target_env: crate::compile::DEFAULT_TARGET_ENV,
        },
    )
    .expect("assembles")
    .0
    .to_words();
    let (status, why) = check(&words, &[t], &[path(&m)]).expect_err("no OpLine");
    assert_eq!(status, Status::Unsupported);
    assert!(why.contains("OpLine"), "{why}");
}

#[test]
fn more_stops_than_followed_is_refused_not_held() {
    // A block that branches to itself with two lines: two stops per pass.
    let text = r#"
OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %1 "main"
OpExecutionMode %1 LocalSize 1 1 1
%50 = OpString "a.comp"
%void = OpTypeVoid
%fn = OpTypeFunction %void
%u = OpTypeInt 32 0
%1 = OpFunction %void None %fn
%10 = OpLabel
OpBranch %11
%11 = OpLabel
OpLine %50 1 1
%x = OpUndef %u
OpLine %50 2 1
OpBranch %11
OpFunctionEnd
"#;
    let m = assemble(
        text,
        &AssembleOptions {
            target_env: crate::compile::DEFAULT_TARGET_ENV,
        },
    )
    .expect("assembles")
    .0;
    let s = Sources::new(&m);
    let ids = |op: Op| -> Vec<u32> {
        m.instructions
            .iter()
            .filter(|i| i.op() == Some(op))
            .filter_map(|i| i.result_id)
            .collect()
    };
    let (main, labels) = (ids(Op::Function)[0], ids(Op::Label));
    let (entry, block) = (labels[0], labels[1]);
    let mut long = vec![(main, entry)];
    long.extend(std::iter::repeat_n((main, block), MAX_STOPS / 2 + 1));
    assert_eq!(stops(&m, &s, &blocks(&long)), Err(Replay::TooLong));
}

#[test]
fn callstacks_name_functions_by_opname_and_callers_by_their_call_line() {
    use crate::script::CallFrame;
    let named = MODULE.replace(
        "%void = OpTypeVoid",
        "OpName %1 \"main\"\nOpName %2 \"f(u1;\"\n%void = OpTypeVoid",
    );
    let m = assemble(
        &named,
        &AssembleOptions {
            target_env: crate::compile::DEFAULT_TARGET_ENV,
        },
    )
    .expect("assembles")
    .0;
    let s = Sources::new(&m);
    let stops = stops(&m, &s, &path(&m)).expect("fits");
    let frame = |function: &str, line| CallFrame {
        function: function.into(),
        file: "a.comp".into(),
        line,
    };
    let expect = |frames: Vec<CallFrame>| DebugStep::ExpectCallstack {
        frames,
        at: Location { line: 9, col: 1 },
    };
    // Stops: main 2, main 3, f 10 (called from line 3), ...
    let steps = vec![
        expect(vec![frame("main", 2)]),
        DebugStep::StepIn,
        DebugStep::StepIn,
        // glslang's mangled `f(u1;` is the source's `f`.
        expect(vec![frame("f", 10), frame("main", 3)]),
        expect(vec![frame("f", 10)]),
        expect(vec![frame("f", 10), frame("main", 2)]),
        DebugStep::StepOut,
        expect(vec![frame("main", 3)]),
        DebugStep::Continue,
        expect(vec![frame("main", 3)]),
    ];
    let got: Vec<bool> = check_thread(&thread(steps), &stops, &s, &m)
        .expect("checkable")
        .iter()
        .map(|r| r.passed)
        .collect();
    assert_eq!(got, [true, true, false, false, true, false]);
    // Without OpName the frames cannot be named: refused, not passed.
    let m = module();
    let s = Sources::new(&m);
    let stops = super::stops(&m, &s, &path(&m)).expect("fits");
    let e = check_thread(
        &thread(vec![expect(vec![frame("main", 2)])]),
        &stops,
        &s,
        &m,
    )
    .expect_err("no OpName");
    assert!(e.contains("OpName"), "{e}");
}

/// GLSL compiled by tangle carries glslang -g's lines; for SPIR-V 1.0 glslang puts a header
/// before the embedded text, which line numbers skip.
#[test]
fn glsl_modules_carry_their_source_lines() {
    let src = "#version 450\n// two\nlayout(local_size_x = 1) in;\nlayout(binding = 0) buffer B { uint d[]; } b;\nvoid main() {\n  b.d[0] = 7u;\n}\n";
    for env in ["spv1.0", "spv1.3"] {
        let env = tangle_spirv::TargetEnv::parse(env).expect("env");
        let words =
            crate::compile::glsl_with(src, env, &[], Some("embedded-shaders/s")).expect("compiles");
        let m = Module::from_words(&words).expect("reads");
        let s = Sources::new(&m);
        assert!(s.has_lines);
        for (n, line) in src.lines().enumerate() {
            let n = u32::try_from(n + 1).expect("small");
            assert_eq!(
                s.line_text("embedded-shaders/s", n),
                Some(line),
                "{env} line {n}"
            );
        }
        // Without a file name, no debug information.
        let plain = crate::compile::glsl(src, env).expect("compiles");
        assert!(!Sources::new(&Module::from_words(&plain).expect("reads")).has_lines);
    }
}

#[test]
fn only_glslangs_own_header_is_skipped() {
    let header =
        "// OpModuleProcessed client vulkan100\n// OpModuleProcessed entry-point main\n#line 1\n";
    assert_eq!(glslang_body(&format!("{header}a\nb\n")), "a\nb\n");
    // Anything else is the author's text, kept whole.
    for text in [
        "a\nb\n",
        "// OpModuleProcessed x\nnot a line directive\n",
        "#line 1\na\n",
        "// OpModuleProcessed x",
    ] {
        assert_eq!(glslang_body(text), text);
    }
}
