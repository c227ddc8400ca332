//! `DEBUG` on a backend that reports an invocation's path: the source lines one invocation
//! executed, in order, and the debugger commands of a `THREAD` checked against them.
//!
//! The backend returns the blocks the invocation started, in order (for tangle's CPU executor,
//! the `block` events of its trace that include the invocation's lane). This module replays
//! them over the module's instructions: from each block's `OpLabel` to its terminator, into
//! callees at `OpFunctionCall` (the next block the path names is the callee's first) and back
//! to the instruction after the call at `OpReturn`/`OpReturnValue`. Each instruction executed
//! carries the source line of the `OpLine` in effect: SPIR-V "Debug Instructions", `OpLine`:
//! "This location information applies to the instructions physically following this
//! instruction, up to the first occurrence of any of the following: the next end of block, the
//! next OpLine instruction, or the next OpNoLine instruction."
//!
//! A *stop* (where a debugger pauses) is a maximal run of executed instructions with one source
//! line in one call frame (the rest of a line after a call returns to it is a new stop);
//! instructions without a line are not stops and do not end one. A thread starts paused
//! at its first stop; `STEP_IN` goes to the next stop, `STEP_OVER` to the next stop in the same
//! frame or a caller, `STEP_OUT` to the next stop in a caller, `CONTINUE` runs to the end. The
//! text of `EXPECT LOCATION ... "text"` is the line of the source the module embeds for that
//! file (`OpSource` and `OpSourceContinued`). `EXPECT CALLSTACK` lists the frames at a stop,
//! innermost first, each named by its function's `OpName` (glslang's mangled `sq(u1;` is the
//! source's `sq`) with the line in effect in it (in a caller, the line of its call). Upstream
//! Amber leaves stepping to the driver's debugger (SwiftShader's); these are tangle's
//! definitions, the usual ones of line debuggers. The `OpVariable`s of a function's first block
//! are declarations, not statements, so they are not a stop: glslang `-g` gives them the line of
//! the function's header, and a line debugger steps into a function at its first statement.

use crate::backend::PathEvent;
use crate::error::Location;
use crate::report::{ExpectResult, Status};
use crate::script::{CallFrame, DebugStep, DebugThread};
use spirv::Op;
use std::collections::HashMap;
use std::rc::Rc;
use tangle_spirv::module::Module;

/// The most stops one thread is followed through (a shader may run up to the step limit's
/// instructions, each a line of its own: the stops are held in memory).
pub const MAX_STOPS: usize = 1 << 20;

/// A source line: (`OpString` id, line).
pub type SourceLine = (u32, u32);

/// The callers of a frame, outermost first: each one's function (`OpFunction` id) and the line
/// in effect at its call.
pub type Callers = Rc<[(u32, Option<SourceLine>)]>;

/// Where a thread pauses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stop {
    /// The source file (`OpString`).
    pub file: String,
    /// The source line.
    pub line: u32,
    /// Call depth: 1 in the entry point.
    pub depth: usize,
    /// The function paused in (`OpFunction` id).
    pub function: u32,
    /// The callers, outermost first: each one's function and the line in effect at its call
    /// (`OpString` id, line). Shared by the stops between one call or return and the next.
    pub callers: Callers,
    /// How many of the path's value sets ([`Replayed::values`]) took effect before the pause.
    pub values: usize,
}

/// An invocation's path replayed over its module.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Replayed {
    /// Where it pauses.
    pub stops: Vec<Stop>,
    /// The value sets of the path (`PathEvent::Values`), in the order they took effect.
    pub values: Vec<ValueSet>,
    /// For each id: the first stop at which it holds a value (a result computed, a variable
    /// stored to or initialised, a parameter passed); ids not here have none at any stop.
    pub since: HashMap<u32, usize>,
}

/// What the module says about source lines.
#[derive(Debug, Default)]
pub struct Sources {
    /// `OpString` texts by id.
    strings: HashMap<u32, String>,
    /// `OpName`s by id.
    names: HashMap<u32, String>,
    /// Embedded source texts by file name (`OpSource` + `OpSourceContinued`).
    pub texts: HashMap<String, String>,
    /// Whether any `OpLine` is present.
    pub has_lines: bool,
    /// Each block's instruction range (`OpLabel` index, end exclusive), by label id.
    blocks: HashMap<u32, (usize, usize)>,
    /// Each function's first block, by function id.
    first_block: HashMap<u32, u32>,
    /// The line in effect at each block's `OpLabel` (an `OpLine` between the previous block's
    /// end and the label).
    label_lines: HashMap<u32, Option<(u32, u32)>>,
    /// Every result of a function (parameters, variables, values), by id: its function, its
    /// instruction's index.
    locals: HashMap<u32, (u32, usize)>,
    /// Instructions by result id outside functions (types, constants), as indices.
    globals: HashMap<u32, usize>,
    /// Each function's parameters, by function id.
    params: HashMap<u32, Vec<u32>>,
    /// `OpMemberName`s by (struct id, member).
    member_names: HashMap<(u32, u32), String>,
    /// The variable each pointer made by an access chain (or copied) points into, by id.
    roots: HashMap<u32, u32>,
}

impl Sources {
    /// Indexes `module`.
    pub fn new(module: &Module) -> Sources {
        let mut s = Sources::default();
        let mut last_source_file: Option<String> = None;
        let mut line: Option<(u32, u32)> = None;
        let mut function: Option<u32> = None;
        let mut open: Option<(u32, usize)> = None;
        for (i, inst) in module.instructions.iter().enumerate() {
            if let Some(id) = inst.result_id {
                match function {
                    Some(f) if inst.op() != Some(Op::Label) => {
                        s.locals.insert(id, (f, i));
                        if inst.op() == Some(Op::FunctionParameter) {
                            s.params.entry(f).or_default().push(id);
                        }
                    }
                    None if inst.op() != Some(Op::Function) => {
                        s.globals.insert(id, i);
                    }
                    _ => {}
                }
            }
            match inst.op() {
                Some(
                    Op::AccessChain
                    | Op::InBoundsAccessChain
                    | Op::PtrAccessChain
                    | Op::InBoundsPtrAccessChain
                    | Op::CopyObject,
                ) => {
                    if let (Some(id), Some(base)) = (inst.result_id, inst.id_operand(0)) {
                        let root = s.roots.get(&base).copied().unwrap_or(base);
                        s.roots.insert(id, root);
                    }
                }
                Some(Op::MemberName) => {
                    if let (Some(id), Some(m), Some(name)) = (
                        inst.id_operand(0),
                        inst.literal_operand(1),
                        inst.string_operand(2),
                    ) {
                        s.member_names.insert((id, m as u32), name.to_string());
                    }
                }
                Some(Op::String) => {
                    if let (Some(id), Some(text)) = (inst.result_id, inst.string_operand(0)) {
                        s.strings.insert(id, text.to_string());
                    }
                }
                Some(Op::Name) => {
                    if let (Some(id), Some(name)) = (inst.id_operand(0), inst.string_operand(1)) {
                        s.names.insert(id, name.to_string());
                    }
                }
                Some(Op::Source) => {
                    let file = inst
                        .id_operand(2)
                        .and_then(|id| s.strings.get(&id))
                        .cloned();
                    last_source_file = None;
                    if let (Some(file), Some(text)) = (file, inst.string_operand(3)) {
                        s.texts.insert(file.clone(), text.to_string());
                        last_source_file = Some(file);
                    }
                }
                Some(Op::SourceContinued) => {
                    if let (Some(file), Some(more)) = (&last_source_file, inst.string_operand(0)) {
                        if let Some(text) = s.texts.get_mut(file) {
                            text.push_str(more);
                        }
                    }
                }
                Some(Op::Line) => {
                    s.has_lines = true;
                    line = inst
                        .id_operand(0)
                        .zip(inst.literal_operand(1))
                        .map(|(f, l)| (f, l as u32));
                }
                Some(Op::NoLine) => line = None,
                Some(Op::Function) => function = inst.result_id,
                Some(Op::Label) => {
                    if let Some(label) = inst.result_id {
                        open = Some((label, i));
                        s.label_lines.insert(label, line);
                        if let Some(f) = function {
                            s.first_block.entry(f).or_insert(label);
                        }
                    }
                }
                Some(op) if is_terminator(op) => {
                    if let Some((label, start)) = open.take() {
                        s.blocks.insert(label, (start, i + 1));
                    }
                    line = None;
                }
                Some(Op::FunctionEnd) => {
                    function = None;
                    line = None;
                }
                _ => {}
            }
        }
        s
    }

    /// The text of line `line` (1-based) of `file`'s embedded source.
    pub fn line_text(&self, file: &str, line: u32) -> Option<&str> {
        let index = usize::try_from(line).ok()?.checked_sub(1)?;
        glslang_body(self.texts.get(file)?).lines().nth(index)
    }

    /// A function's source name: its `OpName`, up to the parameter list glslang appends
    /// (`sq(u1;` is GLSL's `sq`).
    pub fn function_name(&self, function: u32) -> Option<&str> {
        let name = self.names.get(&function)?;
        Some(name.split('(').next().unwrap_or(name))
    }

    /// The file an `OpString` id names.
    fn file(&self, id: u32) -> String {
        self.strings.get(&id).cloned().unwrap_or_default()
    }
}

/// The source text without the header glslang `-g` puts before it for SPIR-V 1.0, which has no
/// `OpModuleProcessed`: a comment line `// OpModuleProcessed ...` for each process, then
/// `#line 1`, so that line 1 is the source's first line again (glslang's `GlslangToSpv`).
fn glslang_body(text: &str) -> &str {
    let mut rest = text;
    while let Some(after) = rest.strip_prefix("// OpModuleProcessed ") {
        rest = after.split_once('\n').map_or("", |(_, r)| r);
    }
    if rest.len() == text.len() {
        return text;
    }
    rest.strip_prefix("#line 1\n").unwrap_or(text)
}

/// Block terminators (SPIR-V "Termination Instructions").
fn is_terminator(op: Op) -> bool {
    matches!(
        op,
        Op::Branch
            | Op::BranchConditional
            | Op::Switch
            | Op::Return
            | Op::ReturnValue
            | Op::Kill
            | Op::Unreachable
            | Op::TerminateInvocation
            | Op::IgnoreIntersectionKHR
            | Op::TerminateRayKHR
            | Op::EmitMeshTasksEXT
    )
}

/// A call frame of the replay.
struct Frame {
    function: u32,
    /// The next instruction to execute.
    next: usize,
    /// Its block's end (exclusive).
    end: usize,
    /// The line in effect.
    line: Option<(u32, u32)>,
}

/// Why a path could not be replayed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Replay {
    /// The path and the module disagree (where, in words).
    Mismatch(String),
    /// More than [`MAX_STOPS`] stops.
    TooLong,
}

impl From<String> for Replay {
    fn from(e: String) -> Replay {
        Replay::Mismatch(e)
    }
}

impl From<&str> for Replay {
    fn from(e: &str) -> Replay {
        Replay::Mismatch(e.to_string())
    }
}

/// One value set of a path: the values (by id, scalars) that changed.
pub type ValueSet = Vec<(u32, Vec<u64>)>;

/// The value sets of a path waiting to take effect, and what has taken effect.
struct Values<'p> {
    /// `(at, set)` in path order: the set takes effect after the instruction at word offset
    /// `at` (after the call returns, for an `OpFunctionCall`), or at the start of the next
    /// block entered for `at` 0.
    pending: std::iter::Peekable<std::slice::Iter<'p, (usize, &'p ValueSet)>>,
    taken: Vec<ValueSet>,
}

impl Values<'_> {
    /// Takes the sets due at `at`.
    fn take(&mut self, at: usize) {
        while let Some((_, set)) = self.pending.next_if(|(a, _)| *a == at) {
            self.taken.push((*set).clone());
        }
    }
}

/// Replays `path` (the blocks an invocation started, in order, with the values it held) over
/// `module`: the invocation's stops and values. An error says where the path and the module
/// disagree, or that the invocation stops at more than [`MAX_STOPS`] lines.
pub fn stops(module: &Module, sources: &Sources, path: &[PathEvent]) -> Result<Replayed, Replay> {
    let mut out: Vec<Stop> = Vec::new();
    let mut since: HashMap<u32, usize> = HashMap::new();
    let sets: Vec<(usize, &ValueSet)> = path
        .iter()
        .filter_map(|e| match e {
            PathEvent::Values { at, set } => Some((*at, set)),
            PathEvent::Block { .. } => None,
        })
        .collect();
    let mut values = Values {
        pending: sets.iter().peekable(),
        taken: Vec::new(),
    };
    let blocks: Vec<(u32, u32)> = path
        .iter()
        .filter_map(|e| match e {
            PathEvent::Block { function, label } => Some((*function, *label)),
            PathEvent::Values { .. } => None,
        })
        .collect();
    let mut last: Option<(u32, u32, usize)> = None;
    let mut frames: Vec<Frame> = Vec::new();
    // The callers of the top frame, rebuilt after each call and return.
    let mut callers: Callers = Rc::from(Vec::new());
    let mut path = blocks.iter();
    let enter = |frames: &mut Vec<Frame>,
                 values: &mut Values<'_>,
                 step: Option<&(u32, u32)>,
                 push: bool| {
        let &(function, label) = step.ok_or("the path ended inside the shader")?;
        let &(start, end) = sources
            .blocks
            .get(&label)
            .ok_or_else(|| format!("the path names block %{label}, which the module lacks"))?;
        let frame = Frame {
            function,
            next: start + 1,
            end,
            line: sources.label_lines.get(&label).copied().flatten(),
        };
        if push {
            frames.push(frame);
        } else if let Some(top) = frames.last_mut() {
            if top.function != function {
                return Err(format!(
                    "the path branches from function %{} into block %{label} of %{function}",
                    top.function
                ));
            }
            *top = frame;
        }
        values.take(0);
        Ok::<(), String>(())
    };
    enter(&mut frames, &mut values, path.next(), true)?;
    while let Some(top) = frames.last_mut() {
        let Some(inst) = module
            .instructions
            .get(top.next)
            .filter(|_| top.next < top.end)
        else {
            return Err("a block ended without a terminator".into());
        };
        top.next += 1;
        let op = inst.op();
        match op {
            Some(Op::Line) => {
                top.line = inst
                    .id_operand(0)
                    .zip(inst.literal_operand(1))
                    .map(|(f, l)| (f, l as u32));
                continue;
            }
            Some(Op::NoLine) => {
                top.line = None;
                continue;
            }
            // A function's variables are declared in its first block, before its first
            // statement (glslang -g gives them the line of the function's header): like a line
            // debugger skipping a prologue, they are not a stop.
            Some(Op::Nop | Op::Variable) => {
                if let (Some(id), Some(_)) = (inst.result_id, inst.id_operand(1)) {
                    // "Initializer ... the variable's initial value" (OpVariable).
                    since.entry(id).or_insert(out.len());
                }
                values.take(inst.offset);
                continue;
            }
            _ => {}
        }
        let depth = frames.len();
        let Some(top) = frames.last() else { break };
        if let Some((file, line)) = top.line {
            if last != Some((file, line, depth)) {
                if out.len() >= MAX_STOPS {
                    return Err(Replay::TooLong);
                }
                last = Some((file, line, depth));
                out.push(Stop {
                    file: sources.file(file),
                    line,
                    depth,
                    function: top.function,
                    callers: Rc::clone(&callers),
                    values: values.taken.len(),
                });
            }
        }
        // What this instruction gives a value to, from the next stop on.
        let written = match op {
            Some(Op::Store | Op::CopyMemory | Op::CopyMemorySized) => inst.id_operand(0),
            _ => None,
        };
        for id in inst.result_id.into_iter().chain(written) {
            let id = sources.roots.get(&id).copied().unwrap_or(id);
            since.entry(id).or_insert(out.len());
        }
        if op != Some(Op::FunctionCall) {
            values.take(inst.offset);
        }
        match op {
            Some(Op::FunctionCall) => {
                let callee = inst.id_operand(0).unwrap_or(0);
                // A pointer argument may be written through (an `out` parameter): its
                // variable has a value from the call on. The callee's parameters have theirs.
                let args = inst.operands.iter().skip(1).filter_map(|o| o.id());
                for id in args {
                    let id = sources.roots.get(&id).copied().unwrap_or(id);
                    since.entry(id).or_insert(out.len());
                }
                for &id in sources.params.get(&callee).into_iter().flatten() {
                    since.entry(id).or_insert(out.len());
                }
                let step = path.next();
                if step.map(|s| s.0) != Some(callee)
                    || step.map(|s| s.1) != sources.first_block.get(&callee).copied()
                {
                    return Err(format!("the path does not enter %{callee} at its call").into());
                }
                enter(&mut frames, &mut values, step, true)?;
                callers = caller_list(&frames);
            }
            Some(Op::Return | Op::ReturnValue) => {
                frames.pop();
                callers = caller_list(&frames);
                // The caller's stop resumes: a line seen again after a call is a new stop.
                last = None;
                // The call's result and what the callee wrote through pointers.
                if let Some(call) = frames
                    .last()
                    .and_then(|f| module.instructions.get(f.next.wrapping_sub(1)))
                {
                    values.take(call.offset);
                }
            }
            Some(Op::Branch | Op::BranchConditional | Op::Switch) => {
                enter(&mut frames, &mut values, path.next(), false)?;
            }
            Some(o) if is_terminator(o) => frames.clear(),
            _ => {}
        }
    }
    if path.next().is_some() {
        return Err("the path goes on after the entry point returned".into());
    }
    if let Some((at, _)) = values.pending.peek() {
        return Err(format!("the path holds values after the instruction at word {at}, which the replay did not reach").into());
    }
    Ok(Replayed {
        stops: out,
        values: values.taken,
        since,
    })
}

/// The callers of the top frame of `frames`: each one's function and line.
fn caller_list(frames: &[Frame]) -> Callers {
    let callers = frames.len().saturating_sub(1);
    frames
        .iter()
        .take(callers)
        .map(|f| (f.function, f.line))
        .collect()
}

/// Checks one thread's commands against its replayed path: one [`ExpectResult`] per
/// `EXPECT`. `Err`: a check tangle cannot make (the source text is not in the module, a local
/// it cannot name or decode).
pub fn check_thread(
    thread: &DebugThread,
    replayed: &Replayed,
    sources: &Sources,
    module: &Module,
) -> Result<Vec<ExpectResult>, String> {
    let [x, y, z] = thread.invocation;
    let stops = replayed.stops.as_slice();
    let mut state = locals::State::default();
    let mut results = Vec::new();
    let mut pos = (!stops.is_empty()).then_some(0usize);
    for step in &thread.steps {
        let here = pos.and_then(|p| stops.get(p).map(|s| (p, s.depth)));
        pos = match step {
            DebugStep::StepIn => here.map(|(p, _)| p + 1).filter(|&p| p < stops.len()),
            DebugStep::StepOver => here.and_then(|(p, d)| next_where(stops, p, |s| s.depth <= d)),
            DebugStep::StepOut => here.and_then(|(p, d)| next_where(stops, p, |s| s.depth < d)),
            DebugStep::Continue => None,
            DebugStep::ExpectLocal { name, value, at } => {
                let buffer = format!("THREAD {x} {y} {z}");
                let got = match pos.and_then(|p| stops.get(p).map(|s| (p, s))) {
                    None => Err("the invocation is not paused: it has finished"),
                    Some((p, stop)) => {
                        state.advance(replayed, stop);
                        let got = locals::check(
                            module,
                            sources,
                            (p, stop),
                            replayed,
                            &state,
                            name,
                            *value,
                        )
                        .map_err(|why| format!("line {}: EXPECT LOCAL {name}: {why}", at.line))?;
                        Ok(got)
                    }
                };
                results.push(locals::result(at.line, buffer, name, *value, got));
                pos
            }
            DebugStep::ExpectCallstack { frames, at } => {
                let stop = pos.and_then(|p| stops.get(p));
                results.push(callstack_result(thread, frames, *at, stop, sources)?);
                pos
            }
            DebugStep::ExpectLocation {
                file,
                line,
                text,
                at,
            } => {
                let want = match text {
                    Some(t) => format!("{file}:{line} \"{t}\""),
                    None => format!("{file}:{line}"),
                };
                let failure = match pos.and_then(|p| stops.get(p)) {
                    None => Some("the invocation is not paused: it has finished".to_string()),
                    Some(s) if s.file != *file || s.line != *line => {
                        Some(format!("paused at {}:{}", s.file, s.line))
                    }
                    Some(s) => match text {
                        None => None,
                        Some(t) => match sources.line_text(&s.file, s.line) {
                            None => {
                                return Err(format!(
                                    "line {}: EXPECT LOCATION with a line's text: the module embeds no source text for '{}' line {} (OpSource)",
                                    at.line, s.file, s.line
                                ))
                            }
                            Some(actual) if actual == t => None,
                            Some(actual) => Some(format!("the line reads \"{actual}\"")),
                        },
                    },
                };
                results.push(ExpectResult {
                    line: at.line,
                    buffer: format!("THREAD {x} {y} {z}"),
                    passed: failure.is_none(),
                    mismatch_count: 0,
                    message: match failure {
                        None => format!("LOCATION {want}"),
                        Some(why) => format!("LOCATION {want}: {why}"),
                    },
                    mismatches: Vec::new(),
                });
                pos
            }
        };
    }
    Ok(results)
}

/// `EXPECT CALLSTACK`'s result at `stop` (`None`: the invocation has finished). `Err`: a
/// check tangle cannot make (a function of the stack has no `OpName`).
fn callstack_result(
    thread: &DebugThread,
    want: &[CallFrame],
    at: Location,
    stop: Option<&Stop>,
    sources: &Sources,
) -> Result<ExpectResult, String> {
    let [x, y, z] = thread.invocation;
    let show = |frames: &[CallFrame]| -> String {
        frames
            .iter()
            .map(|f| format!("{} {}:{}", f.function, f.file, f.line))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let actual = match stop {
        None => None,
        Some(stop) => {
            // Innermost first, as the command lists them.
            let here = std::iter::once((stop.function, Some((stop.file.clone(), stop.line))));
            let up = stop
                .callers
                .iter()
                .rev()
                .map(|&(f, line)| (f, line.map(|(file, l)| (sources.file(file), l))));
            let mut frames = Vec::new();
            for (function, line) in here.chain(up) {
                let name = sources.function_name(function).ok_or_else(|| {
                    format!(
                        "line {}: EXPECT CALLSTACK: function %{function} has no OpName to name it by",
                        at.line
                    )
                })?;
                let (file, line) = line.unwrap_or_default();
                frames.push(CallFrame {
                    function: name.to_string(),
                    file,
                    line,
                });
            }
            Some(frames)
        }
    };
    let failure = match &actual {
        None => Some("the invocation is not paused: it has finished".to_string()),
        Some(frames) if frames.as_slice() != want => Some(format!("the stack is {}", show(frames))),
        Some(_) => None,
    };
    Ok(ExpectResult {
        line: at.line,
        buffer: format!("THREAD {x} {y} {z}"),
        passed: failure.is_none(),
        mismatch_count: 0,
        message: match failure {
            None => format!("CALLSTACK {}", show(want)),
            Some(why) => format!("CALLSTACK {}: {why}", show(want)),
        },
        mismatches: Vec::new(),
    })
}

/// How many `EXPECT LOCATION`s, `EXPECT LOCAL`s and `EXPECT CALLSTACK`s `threads` hold.
pub fn expectations(threads: &[DebugThread]) -> usize {
    threads
        .iter()
        .flat_map(|t| &t.steps)
        .filter(|s| {
            matches!(
                s,
                DebugStep::ExpectLocation { .. }
                    | DebugStep::ExpectCallstack { .. }
                    | DebugStep::ExpectLocal { .. }
            )
        })
        .count()
}

/// Checks every thread of a `DEBUG` against the paths the backend returned for it (in order):
/// their `EXPECT LOCATION` results, or why the `DEBUG` could not be checked.
pub fn check(
    words: &[u32],
    threads: &[DebugThread],
    paths: &[Vec<PathEvent>],
) -> Result<Vec<ExpectResult>, (Status, String)> {
    let module = Module::from_words(words).map_err(|e| (Status::Error, e.to_string()))?;
    let sources = Sources::new(&module);
    if !sources.has_lines {
        return Err((
            Status::Unsupported,
            "the shader has no OpLine debug information to follow (GLSL is compiled with it; give SPIR-V with OpLine)".into(),
        ));
    }
    if paths.len() != threads.len() {
        return Err((
            Status::Error,
            "the backend did not follow every THREAD".into(),
        ));
    }
    let mut results = Vec::new();
    for (thread, path) in threads.iter().zip(paths) {
        if path.is_empty() {
            let [x, y, z] = thread.invocation;
            results.push(ExpectResult {
                line: thread.at.line,
                buffer: format!("THREAD {x} {y} {z}"),
                passed: false,
                message: format!(
                    "THREAD GLOBAL_INVOCATION_ID {x} {y} {z}: the dispatch has no such invocation"
                ),
                mismatches: Vec::new(),
                mismatch_count: 0,
            });
            continue;
        }
        let replayed = stops(&module, &sources, path).map_err(|e| match e {
            Replay::TooLong => (
                Status::Unsupported,
                format!("the invocation stops at more than {MAX_STOPS} source lines, more than DEBUG follows"),
            ),
            Replay::Mismatch(e) => (
                Status::Error,
                format!("the executed path does not fit the module: {e}"),
            ),
        })?;
        results.extend(
            check_thread(thread, &replayed, &sources, &module)
                .map_err(|e| (Status::Unsupported, e))?,
        );
    }
    Ok(results)
}

/// The first stop after `p` that satisfies `f`.
fn next_where(stops: &[Stop], p: usize, f: impl Fn(&Stop) -> bool) -> Option<usize> {
    stops
        .iter()
        .enumerate()
        .skip(p + 1)
        .find(|(_, s)| f(s))
        .map(|(i, _)| i)
}

mod locals;

#[cfg(test)]
mod tests;
