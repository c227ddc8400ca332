//! Sanitizer findings as a person reads them and as a machine reads them: one diagnostic per
//! cause ([`tangle_exec::check::summary::Summary`]: every finding of one kind at one
//! instruction), rendered like the validator's diagnostics (`error[KIND]: MESSAGE`, `--> place`,
//! `| line`, `= notes`), with the GLSL source line when the module embeds its source and
//! carries `OpLine` (glslang `-g`), and the instruction's SPIR-V text otherwise.

use tangle_amber::{UbInstance, UbSummary};
use tangle_exec::check::kind::Severity;
use tangle_exec::check::summary::Summary;
use tangle_exec::{Diagnostic, InstRef};
use tangle_spirv::Module;

fn xyz(v: [u32; 3]) -> String {
    format!("({}, {}, {})", v[0], v[1], v[2])
}

fn range(r: ([u32; 3], [u32; 3])) -> String {
    if r.0 == r.1 {
        xyz(r.0)
    } else {
        format!("{}..{}", xyz(r.0), xyz(r.1))
    }
}

/// The text of line `line` of the source file `file`, when the module embeds it (`OpSource`
/// with a File and Source operand, continued by `OpSourceContinued`), read as `DEBUG` reads it.
fn source_text(module: &Module, file: &str, line: u32) -> Option<String> {
    tangle_amber::debug::Sources::new(module)
        .line_text(file, line)
        .map(|l| l.trim_end().to_string())
}

/// Where a finding is: `file:line:col` from `OpLine`, or the word offset.
fn place(at: &InstRef) -> String {
    match &at.source {
        Some(line) => line.to_string(),
        None if at.offset > 0 => format!("shader: word {}", at.offset),
        None => "shader".to_string(),
    }
}

/// The line shown under the place: the source line, else the instruction's SPIR-V text.
fn shown_line(at: &InstRef, module: Option<&Module>) -> Option<String> {
    let module = module?;
    if let Some(src) = &at.source {
        if let Some(text) = source_text(module, &src.file, src.line) {
            return Some(format!("{} | {}", src.line, text.trim()));
        }
    }
    let inst = module
        .instructions
        .iter()
        .find(|i| at.offset > 0 && i.offset == at.offset)?;
    Some(format!(
        "| {}",
        tangle_validate::diag::instruction_text(module, inst)
    ))
}

/// One finding of a cause; its text only where it differs from the cause's first.
fn instance(d: &Diagnostic, first: &Diagnostic) -> String {
    let mut s = format!(
        "invocation {} of workgroup {}",
        xyz(d.invocation),
        xyz(d.workgroup)
    );
    if d.finding != first.finding {
        s.push_str(&format!(": {}", d.finding));
    }
    s
}

/// One cause as text: `error[race]: …` (or `warning[…]`, as `severity` says), the place, the
/// line, how many findings, which invocations and workgroups, and the first few findings.
pub fn render(s: &Summary, severity: Severity, module: Option<&Module>) -> String {
    let Some(first) = s.first() else {
        return String::new();
    };
    let mut out = format!("{severity}[{}]: {}\n", s.kind, first.finding);
    out.push_str(&format!("  --> {}\n", place(&first.at)));
    if let Some(line) = shown_line(&first.at, module) {
        out.push_str(&format!("   {line}\n"));
    }
    let times = if s.count == 1 { "time" } else { "times" };
    out.push_str(&format!(
        "   = {} {times}, by invocations {} of workgroups {}\n",
        s.count,
        range(s.invocations),
        range(s.workgroups)
    ));
    for d in &s.examples {
        out.push_str(&format!("   = {}\n", instance(d, first)));
    }
    if s.count > s.examples.len() as u64 {
        out.push_str(&format!(
            "   = ... {} more\n",
            s.count - s.examples.len() as u64
        ));
    }
    out.trim_end().to_string()
}

/// One cause in machine form, with its severity in the run (`--deny` may have made a warning
/// an error), the spec sentence of its kind and the findings the run kept one by one
/// (`diagnostics`, the report's list, bounded by `--max-findings`).
pub fn machine(s: &Summary, severity: Severity, diagnostics: &[Diagnostic]) -> UbSummary {
    let first = s.first().cloned().unwrap_or_else(|| Diagnostic {
        finding: tangle_exec::Finding::DivisionByZero,
        at: InstRef::default(),
        invocation: [0; 3],
        workgroup: [0; 3],
    });
    let at = &first.at;
    let findings = diagnostics
        .iter()
        .filter(|d| d.at == *at && d.finding.kind() == s.kind)
        .map(|d| UbInstance {
            invocation: d.invocation,
            workgroup: d.workgroup,
            message: d.finding.to_string(),
        })
        .collect();
    UbSummary {
        line: 0,
        kind: s.kind.to_string(),
        severity: severity.to_string(),
        default_severity: s.kind.severity().to_string(),
        spec: s.kind.spec().to_string(),
        message: first.finding.to_string(),
        instruction: match at.result_id {
            Some(id) => format!("%{id} = {}", at.name),
            None => at.name.clone(),
        },
        word: at.offset,
        source: at.source.as_ref().map(ToString::to_string),
        count: s.count,
        invocations: [s.invocations.0, s.invocations.1],
        workgroups: [s.workgroups.0, s.workgroups.1],
        findings,
    }
}
