//! Runner tests with a fake backend that doubles every u32 of every storage binding and adds the
//! first push-constant word: real buffer traffic, checked against plain-Rust references.

use super::run;
use crate::backend::{Backend, BackendError, BindingKind, ComputeJob, JobOutput, Requirement};
use crate::parse;
use crate::report::Status;

#[derive(Default)]
struct Doubler {
    features: Vec<&'static str>,
    jobs: Vec<ComputeJob>,
    fail_with: Option<BackendError>,
    ub: Vec<String>,
}

impl Backend for Doubler {
    fn supports(&self, requirement: &Requirement) -> Result<(), String> {
        match requirement {
            Requirement::Feature(f) if self.features.contains(&f.as_str()) => Ok(()),
            r => Err(format!("the fake device lacks {r}")),
        }
    }

    fn run_compute(&mut self, job: &ComputeJob) -> Result<JobOutput, BackendError> {
        self.jobs.push(job.clone());
        if let Some(e) = self.fail_with.clone() {
            return Err(e);
        }
        let add = job
            .push_constants
            .get(..4)
            .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        let bindings = job
            .bindings
            .iter()
            .map(|b| match b.kind {
                // The fake leaves uniform buffers and images as they were.
                BindingKind::Uniform
                | BindingKind::StorageImage
                | BindingKind::SampledImage
                | BindingKind::UniformTexelBuffer
                | BindingKind::StorageTexelBuffer
                | BindingKind::CombinedImageSampler
                | BindingKind::Sampler => b.bytes.clone(),
                BindingKind::Storage => b
                    .bytes
                    .chunks(4)
                    .flat_map(|c| match <[u8; 4]>::try_from(c) {
                        Ok(w) => u32::from_le_bytes(w)
                            .wrapping_mul(2)
                            .wrapping_add(add)
                            .to_le_bytes()
                            .to_vec(),
                        Err(_) => c.to_vec(),
                    })
                    .collect(),
            })
            .collect();
        Ok(JobOutput {
            bindings,
            undefined_behaviour: self.ub.clone(),
            findings: Vec::new(),
            warnings: Vec::new(),
            notes: vec!["fake".into()],
            dispatch_time: None,
            debug_paths: Vec::new(),
        })
    }
}

const PRELUDE: &str =
    "SHADER compute s SPIRV-HEX TARGET_ENV spv1.3\n03 02 23 07 00 03 01 00\nEND\n";

fn run_text(text: &str, backend: &mut Doubler) -> crate::report::RunReport {
    let script = parse(&format!("{PRELUDE}{text}")).unwrap_or_else(|e| panic!("{e}"));
    run(&script, backend)
}

#[test]
fn runs_repeat_and_checks_expectations() {
    let mut b = Doubler::default();
    let r = run_text(
        "BUFFER a DATA_TYPE uint32 DATA 1 2 3 4 END\nPIPELINE compute p\nATTACH s SPECIALIZE 3 AS uint32 9\nBIND BUFFER a AS storage DESCRIPTOR_SET 1 BINDING 2\nEND\n\
REPEAT 3\nRUN p 4 2 1\nEND\nEXPECT a IDX 0 EQ 8 16 24 32\nEXPECT a IDX 8 GT 23\nEXPECT a IDX 4 EQ 16 99 24\n",
        &mut b,
    );
    assert_eq!(r.status, Status::Fail, "{r:?}");
    assert_eq!(r.runs, 3);
    assert_eq!(r.expects.len(), 3);
    assert!(r.expects[0].passed && r.expects[1].passed && !r.expects[2].passed);
    let bad = &r.expects[2];
    assert_eq!((bad.line, bad.mismatch_count), (14, 2));
    let m = &bad.mismatches[0];
    assert_eq!(
        (
            m.byte_offset,
            m.element,
            m.expected.as_str(),
            m.actual.as_str()
        ),
        (8, 2, "EQ 99", "24")
    );
    assert!(
        r.message.as_deref().unwrap_or("").contains("line 14"),
        "{:?}",
        r.message
    );
    let job = &b.jobs[0];
    assert_eq!(
        (
            job.groups,
            job.spec_constants.clone(),
            job.entry_point.as_str()
        ),
        ([4, 2, 1], vec![(3, 9)], "main")
    );
    assert_eq!((job.bindings[0].set, job.bindings[0].binding), (1, 2));
    assert_eq!(job.spirv, vec![0x0723_0203, 0x0001_0300]);
    assert_eq!(job.target_env.to_string(), "spv1.3");
    assert_eq!(r.notes.len(), 3);
}

#[test]
fn missing_requirements_stop_before_anything_runs() {
    let mut b = Doubler {
        features: vec!["shaderInt64"],
        ..Doubler::default()
    };
    let text = "BUFFER a DATA_TYPE uint32 DATA 1 END\nPIPELINE compute p\nATTACH s\nBIND BUFFER a AS storage BINDING 0\nEND\nRUN p 1 1 1\n";
    let r = run_text(
        &format!("DEVICE_FEATURE shaderInt64\nDEVICE_FEATURE shaderFloat64\n{text}"),
        &mut b,
    );
    assert_eq!(r.status, Status::Unsupported);
    assert!(
        r.message
            .as_deref()
            .unwrap_or("")
            .contains("DEVICE_FEATURE shaderFloat64"),
        "{:?}",
        r.message
    );
    assert!(b.jobs.is_empty());
    let r = run_text(&format!("DEVICE_FEATURE shaderInt64\n{text}"), &mut b);
    assert_eq!((r.status, r.runs), (Status::Pass, 1));
}

#[test]
fn buffers_persist_across_pipelines_copies_and_bind_kinds() {
    let mut b = Doubler::default();
    let r = run_text(
        "BUFFER a DATA_TYPE uint32 SIZE 4 SERIES_FROM 1 INC_BY 1\nBUFFER u DATA_TYPE uint32 SIZE 4 FILL 5\nBUFFER pc DATA_TYPE uint32 DATA 100 END\n\
BUFFER c DATA_TYPE uint32 SIZE 1 FILL 0\nBUFFER ref DATA_TYPE uint32 DATA 104 108 112 116 END\n\
PIPELINE compute p1\nATTACH s\nBIND BUFFER a AS storage BINDING 0\nBIND BUFFER u AS uniform BINDING 1\nEND\n\
PIPELINE compute p2\nATTACH s\nBIND BUFFER c AS storage BINDING 0\nBIND BUFFER pc AS push_constant\nEND\n\
RUN p1 1 1 1\nCOPY a TO c\nRUN p2 1 1 1\nEXPECT c EQ_BUFFER ref\nEXPECT u IDX 0 EQ 5 5 5 5\nEXPECT a IDX 0 EQ 2 4 6 8\n",
        &mut b,
    );
    assert_eq!(r.status, Status::Pass, "{r:?}");
    assert!(r.expects.iter().all(|e| e.passed));
    assert_eq!(b.jobs[1].push_constants, 100u32.to_le_bytes().to_vec());
}

#[test]
fn descriptor_ranges_bind_only_part_of_a_buffer() {
    let mut b = Doubler::default();
    let r = run_text(
        "BUFFER a DATA_TYPE uint32 DATA 1 2 3 4 5 END\nPIPELINE compute p\nATTACH s\n\
BIND BUFFER a AS storage_dynamic DESCRIPTOR_SET 0 BINDING 0 OFFSET 4 DESCRIPTOR_RANGE 8\nEND\nRUN p 1 1 1\nEXPECT a IDX 0 EQ 1 4 6 4 5\n",
        &mut b,
    );
    assert_eq!(r.status, Status::Pass, "{r:?}");
    assert_eq!(b.jobs[0].bindings[0].bytes.len(), 8);
    let r = run_text(
        "BUFFER a DATA_TYPE uint32 DATA 1 END\nPIPELINE compute p\nATTACH s\nBIND BUFFER a AS storage BINDING 0 DESCRIPTOR_OFFSET 4 DESCRIPTOR_RANGE 4\nEND\nRUN p 1 1 1\n",
        &mut b,
    );
    assert_eq!(r.status, Status::Error);
    assert!(
        r.message.as_deref().unwrap_or("").contains("outside"),
        "{:?}",
        r.message
    );
}

#[test]
fn backend_errors_and_findings_decide_the_status() {
    let text = "BUFFER a DATA_TYPE uint32 DATA 1 END\nPIPELINE compute p\nATTACH s\nBIND BUFFER a AS storage BINDING 0\nEND\nRUN p 1 1 1\nRUN p 1 1 1\nEXPECT a IDX 0 EQ 4\n";
    for (error, status) in [
        (
            BackendError::Unsupported("subgroup size 256".into()),
            Status::Unsupported,
        ),
        (BackendError::Invalid("no entry point".into()), Status::Fail),
        (BackendError::Failed("step limit".into()), Status::Fail),
        (BackendError::Device("device lost".into()), Status::Error),
    ] {
        let mut b = Doubler {
            fail_with: Some(error.clone()),
            ..Doubler::default()
        };
        let r = run_text(text, &mut b);
        assert_eq!(r.status, status, "{error}");
        assert_eq!(
            (r.runs, b.jobs.len(), r.expects.len(), r.unreached),
            (0, 1, 0, 1),
            "a backend error stops the run before its EXPECT"
        );
        assert!(r
            .message
            .as_deref()
            .unwrap_or("")
            .contains(&error.to_string()));
    }
    let mut b = Doubler {
        ub: vec!["division by zero".into()],
        ..Doubler::default()
    };
    let r = run_text(text, &mut b);
    assert_eq!(
        (r.status, r.runs, r.undefined_behaviour.len()),
        (Status::Fail, 2, 2)
    );
    assert!(
        r.expects[0].passed,
        "the EXPECT itself holds; the finding alone fails the script"
    );
}

#[test]
fn probes_past_the_end_fail() {
    let mut b = Doubler::default();
    let r = run_text(
        "BUFFER a DATA_TYPE uint32 DATA 1 2 END\nEXPECT a IDX 4 EQ 2 3\n",
        &mut b,
    );
    assert_eq!(r.status, Status::Fail);
    assert!(
        r.expects[0].message.contains("past the end"),
        "{}",
        r.expects[0].message
    );
}

#[test]
fn compile_errors_are_unusable_input() {
    let script = parse(
        "SHADER compute g GLSL\n#version 450\nvoid main() { nope(); }\nEND\n\
BUFFER a DATA_TYPE uint32 DATA 1 END\nEXPECT a IDX 0 EQ 1\n",
    )
    .unwrap();
    let r = run(&script, &mut Doubler::default());
    assert_eq!((r.status, r.unreached), (Status::Error, 1));
    assert!(
        r.message.as_deref().unwrap_or("").contains("shader 'g'"),
        "{:?}",
        r.message
    );
}

#[test]
fn random_data_matches_a_plain_rust_reference() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(42);
    for _ in 0..20 {
        let n = rng.random_range(1..20);
        let repeats = rng.random_range(0..5u32);
        let add: u32 = rng.random();
        let data: Vec<u32> = (0..n).map(|_| rng.random()).collect();
        let expect: Vec<u32> = data
            .iter()
            .map(|v| (0..repeats).fold(*v, |x, _| x.wrapping_mul(2).wrapping_add(add)))
            .collect();
        let join = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(" ");
        let text = format!(
            "BUFFER a DATA_TYPE uint32 DATA {} END\nBUFFER pc DATA_TYPE uint32 DATA {add} END\nBUFFER r DATA_TYPE uint32 DATA {} END\n\
PIPELINE compute p\nATTACH s\nBIND BUFFER a AS storage BINDING 0\nBIND BUFFER pc AS push_constant\nEND\n\
REPEAT {repeats}\nRUN p 1 1 1\nEND\nEXPECT a IDX 0 EQ {}\nEXPECT a EQ_BUFFER r\nEXPECT a RMSE_BUFFER r TOLERANCE 0\n",
            join(&data),
            join(&expect),
            join(&expect)
        );
        let r = run_text(&text, &mut Doubler::default());
        assert_eq!(r.status, Status::Pass, "{r:?}");
        assert_eq!(r.expects.len(), 3);
    }
}

#[test]
fn float_and_signed_expectations_follow_amber() {
    let mut b = Doubler::default();
    let r = run_text(
        "BUFFER f DATA_TYPE float DATA 0.1 1.0 -2.5 END\nBUFFER i DATA_TYPE int8 DATA -1 127 END\nBUFFER v DATA_TYPE vec3<float> STD140 DATA 1 2 3 4 5 6 END\n\
EXPECT f IDX 0 EQ 0.1 1 -2.5\nEXPECT f IDX 4 TOLERANCE 0.01 EQ 1.005\nEXPECT f IDX 4 TOLERANCE 1% EQ 1.009\nEXPECT f IDX 8 LT -2\n\
EXPECT i IDX 0 LT 0\nEXPECT i IDX 0 EQ 255 127\nEXPECT v IDX 16 EQ 4 5 6\nEXPECT f IDX 4 TOLERANCE 0.001 EQ 1.01\n",
        &mut b,
    );
    let passed: Vec<bool> = r.expects.iter().map(|e| e.passed).collect();
    assert_eq!(
        passed,
        vec![true, true, true, true, true, true, true, false],
        "{r:?}"
    );
}

#[test]
fn random_scripts_run_without_panicking() {
    use rand::{Rng, SeedableRng};
    // Random command sequences over fixed declarations (buffers of several layouts, a plain and a
    // dynamic-offset pipeline with push constants), including mismatched sizes after COPY.
    let declarations = "BUFFER a DATA_TYPE uint32 SIZE 4 FILL 1\n\
BUFFER b DATA_TYPE vec3<int16> STD140 DATA 1 2 3 4 END\n\
BUFFER c DATA_TYPE float[] STD140 SIZE 3 SERIES_FROM 0.5 INC_BY 2\n\
PIPELINE compute p\nATTACH s\nBIND BUFFER a AS storage BINDING 0\nEND\n\
PIPELINE compute q\nATTACH s\nBIND BUFFER a AS storage_dynamic BINDING 0 OFFSET 4 DESCRIPTOR_RANGE 8\n\
BIND BUFFER c AS push_constant\nEND\n";
    let fragments = [
        "RUN p 1 1 1\n",
        "RUN q 2 1 1\n",
        "COPY a TO c\n",
        "COPY c TO a\n",
        "COPY b TO a\n",
        "EXPECT a IDX 0 EQ 2\n",
        "EXPECT a IDX 4 LT 5 5 5\n",
        "EXPECT c IDX 16 TOLERANCE 1% EQ 2.5\n",
        "EXPECT a EQ_BUFFER a\n",
        "EXPECT b RMSE_BUFFER b TOLERANCE 0\n",
        "EXPECT b IDX 16 NE 0 0 0\n",
        "REPEAT 2\nRUN p 1 1 1\nEXPECT a IDX 0 GE 0\nEND\n",
    ];
    let mut rng = rand::rngs::StdRng::seed_from_u64(9);
    let mut ran = 0;
    for _ in 0..400 {
        let n = rng.random_range(1..12);
        let commands: String = (0..n)
            .map(|_| fragments[rng.random_range(0..fragments.len())])
            .collect();
        let text = format!("{PRELUDE}{declarations}{commands}");
        let script = parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let r = run(&script, &mut Doubler::default());
        // Every EXPECT is either evaluated or counted as not reached; the REPEAT fragment's runs
        // twice.
        let repeats = commands.matches("REPEAT").count();
        let expects = commands.matches("EXPECT").count() + repeats;
        assert_eq!(r.expects.len() + r.unreached, expects, "{text}\n{r:?}");
        if r.status != Status::Error {
            assert_eq!(r.unreached, 0, "only a stop leaves EXPECTs unreached");
        }
        // A non-passing status always says why, and every failed EXPECT makes the script fail.
        assert_eq!(
            r.status == Status::Pass,
            r.message.is_none(),
            "{text}\n{r:?}"
        );
        if r.expects.iter().any(|e| !e.passed) {
            assert_ne!(r.status, Status::Pass, "{text}\n{r:?}");
        }
        ran += r.runs;
    }
    assert!(ran > 400, "{ran} dispatches");
}

#[test]
fn a_script_that_runs_and_checks_nothing_is_an_error() {
    let pipeline = "PIPELINE compute p\nATTACH s\nBIND BUFFER a AS storage BINDING 0\nEND\n";
    let buffer = "BUFFER a DATA_TYPE uint32 DATA 1 END\n";
    for text in [
        String::new(),
        "# only a comment\n".to_string(),
        format!("{PRELUDE}{buffer}{pipeline}"),
        format!("{PRELUDE}{buffer}BUFFER b DATA_TYPE uint32 DATA 2 END\nCOPY a TO b\n"),
        format!("{PRELUDE}{buffer}{pipeline}REPEAT 0\nRUN p 1 1 1\nEND\n"),
    ] {
        let script = parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let mut b = Doubler::default();
        let r = run(&script, &mut b);
        assert_eq!(r.status, Status::Error, "{text}");
        let message = r.message.unwrap_or_default();
        assert!(
            message.contains("no RUN and no EXPECT"),
            "{text}: {message}"
        );
        assert!(b.jobs.is_empty());
    }
    // A RUN alone still checks something (the sanitizer's findings); an EXPECT alone checks the
    // initial contents.
    for commands in ["RUN p 1 1 1\n", "EXPECT a IDX 0 EQ 1\n"] {
        let r = run_text(
            &format!("{buffer}{pipeline}{commands}"),
            &mut Doubler::default(),
        );
        assert_eq!(r.status, Status::Pass, "{commands}: {r:?}");
    }
}

#[test]
fn a_stopped_run_counts_the_expects_it_did_not_reach() {
    let text = "BUFFER a DATA_TYPE uint32 DATA 1 END\nPIPELINE compute p\nATTACH s\nBIND BUFFER a AS storage BINDING 0\nEND\n\
EXPECT a IDX 0 EQ 1\nRUN p 1 1 1\nEXPECT a IDX 0 EQ 2\nREPEAT 3\nEXPECT a IDX 0 GT 0\nEND\n";
    let mut b = Doubler {
        fail_with: Some(BackendError::Failed("step limit".into())),
        ..Doubler::default()
    };
    let r = run_text(text, &mut b);
    assert_eq!(r.status, Status::Fail);
    assert_eq!((r.expects.len(), r.unreached), (1, 4), "{r:?}");
    // A missing requirement stops the run before anything: every EXPECT is unreached.
    let r = run_text(&format!("DEVICE_FEATURE shaderInt64\n{text}"), &mut b);
    assert_eq!(
        (r.status, r.expects.len(), r.unreached),
        (Status::Unsupported, 0, 5)
    );
    // A run that goes to the end reaches every EXPECT.
    let r = run_text(text, &mut Doubler::default());
    assert_eq!(
        (r.status, r.expects.len(), r.unreached),
        (Status::Pass, 5, 0),
        "{r:?}"
    );
}

#[test]
fn repeat_progress_counts_the_outermost_repeat() {
    let script = parse(&format!(
        "{PRELUDE}BUFFER a DATA_TYPE uint32 DATA 1 END\nPIPELINE compute p\nATTACH s\nBIND BUFFER a AS storage DESCRIPTOR_SET 0 BINDING 0\nEND\n\
REPEAT 3\nREPEAT 2\nRUN p 1 1 1\nEND\nEND\nREPEAT 2\nRUN p 1 1 1\nEND\n"
    ))
    .unwrap_or_else(|e| panic!("{e}"));
    let mut calls = Vec::new();
    let mut b = Doubler::default();
    let r = super::run_observed(&script, &mut b, &mut |done, total| {
        calls.push((done, total))
    });
    assert_eq!(r.status, Status::Pass, "{r:?}");
    assert_eq!(r.runs, 8);
    // The inner REPEAT 2 is not reported; each outermost one counts from 0 to its count.
    assert_eq!(
        calls,
        vec![(0, 3), (1, 3), (2, 3), (3, 3), (0, 2), (1, 2), (2, 2)]
    );
    // A run that stops inside a REPEAT reports no iteration it did not finish.
    let mut calls = Vec::new();
    let mut b = Doubler {
        fail_with: Some(BackendError::Failed("stop".into())),
        ..Doubler::default()
    };
    super::run_observed(&script, &mut b, &mut |done, total| {
        calls.push((done, total))
    });
    assert_eq!(calls, vec![(0, 3)]);
}
