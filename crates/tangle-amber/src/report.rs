//! What a run found: the verdict, every `EXPECT`'s result with its first mismatches, and the
//! backend's findings. Serializable, for `tangle run --json`.

use serde::Serialize;

/// The verdict of a script.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Status {
    /// Every `EXPECT` held and no undefined behaviour was found.
    Pass,
    /// An `EXPECT` failed, the shader was invalid, the run stopped, or undefined behaviour was found.
    Fail,
    /// The script needs something the device lacks.
    Unsupported,
    /// The script could not be used (a shader did not compile, a binding lies outside its buffer).
    Error,
}

/// One component that did not compare as expected.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mismatch {
    /// Byte offset of the component in the buffer.
    pub byte_offset: usize,
    /// Element index.
    pub element: usize,
    /// Component index within the element.
    pub component: usize,
    /// The expected value (or the other buffer's value).
    pub expected: String,
    /// The value found.
    pub actual: String,
}

/// The result of one `EXPECT`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExpectResult {
    /// Script line of the `EXPECT`.
    pub line: u32,
    /// The buffer checked.
    pub buffer: String,
    /// Whether the expectation held.
    pub passed: bool,
    /// A one-line description of the check and, when it failed, why.
    pub message: String,
    /// The first mismatching components (at most [`MAX_MISMATCHES`]).
    pub mismatches: Vec<Mismatch>,
    /// How many components mismatched in all.
    pub mismatch_count: usize,
}

/// One finding of undefined behaviour, in machine form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UbInstance {
    /// The invocation's `GlobalInvocationId`.
    pub invocation: [u32; 3],
    /// Its `WorkgroupId`.
    pub workgroup: [u32; 3],
    /// What was found, in words.
    pub message: String,
}

/// Every finding of one kind at one instruction (one cause), in machine form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UbSummary {
    /// Script line of the `RUN`.
    pub line: u32,
    /// The kind, as `--allow` names it (`race`, `uninit`, `barrier`, ...).
    pub kind: String,
    /// `error` (the run fails) or `warning` (reported only, as for `domain`), in this run
    /// (`--deny` makes a warning an error).
    pub severity: String,
    /// The kind's severity without `--deny`: `error` for undefined behaviour, `warning` for an
    /// undefined value.
    pub default_severity: String,
    /// The spec sentence the kind rests on, which decides its default severity.
    pub spec: String,
    /// The first finding, in words.
    pub message: String,
    /// The instruction (`%12 = OpLoad`).
    pub instruction: String,
    /// Its word offset in the module (0 when unknown).
    pub word: usize,
    /// Its source place (`file:line[:col]`) when the module has `OpLine` debug information.
    pub source: Option<String>,
    /// Findings of this cause in all.
    pub count: u64,
    /// Component-wise smallest and largest `GlobalInvocationId` involved.
    pub invocations: [[u32; 3]; 2],
    /// Component-wise smallest and largest `WorkgroupId` involved.
    pub workgroups: [[u32; 3]; 2],
    /// The findings one by one, as far as the run kept them (`--max-findings`).
    pub findings: Vec<UbInstance>,
}

/// How many mismatches an [`ExpectResult`] lists.
pub const MAX_MISMATCHES: usize = 8;

/// The outcome of running a script.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunReport {
    /// The verdict.
    pub status: Status,
    /// Why the status is not `Pass` (the first reason), if it is not.
    pub message: Option<String>,
    /// Every `EXPECT` evaluated, in execution order (a `REPEAT` body's once per iteration).
    pub expects: Vec<ExpectResult>,
    /// `EXPECT`s the run stopped before reaching (counted as [`RunReport::expects`] counts
    /// them), because a requirement, a shader or a `RUN` failed first: 0 when the run went to
    /// the end.
    pub unreached: usize,
    /// Dispatches completed.
    pub runs: usize,
    /// Undefined behaviour the backend found, with the script line of the `RUN`: one text per
    /// cause.
    pub undefined_behaviour: Vec<String>,
    /// The same findings in machine form, one per cause (empty for a backend that gives none),
    /// warnings included.
    pub findings: Vec<UbSummary>,
    /// Findings that are warnings (a value the spec leaves undefined that most shaders
    /// tolerate), with the script line of the `RUN`: one text per cause; they do not fail it.
    pub warnings: Vec<String>,
    /// Other backend remarks.
    pub notes: Vec<String>,
}

impl RunReport {
    /// An empty passing report.
    pub fn new() -> Self {
        RunReport {
            status: Status::Pass,
            message: None,
            expects: Vec::new(),
            unreached: 0,
            runs: 0,
            undefined_behaviour: Vec::new(),
            findings: Vec::new(),
            warnings: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// Records a non-passing outcome; the first reason is kept, and a worse status wins
    /// (Error/Unsupported over Fail).
    pub fn set(&mut self, status: Status, message: String) {
        let replace = matches!(
            (self.status, status),
            (Status::Pass, _) | (Status::Fail, Status::Error | Status::Unsupported)
        );
        if replace {
            self.status = status;
            self.message = Some(message);
        }
    }
}

impl Status {
    /// The verdict as a word: `PASS`, `FAIL`, `UNSUPPORTED` or `ERROR`.
    pub fn word(self) -> &'static str {
        match self {
            Status::Pass => "PASS",
            Status::Fail => "FAIL",
            Status::Unsupported => "UNSUPPORTED",
            Status::Error => "ERROR",
        }
    }
}

impl Default for RunReport {
    fn default() -> Self {
        Self::new()
    }
}
