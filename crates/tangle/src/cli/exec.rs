//! `tangle exec [OPTIONS] -- PROGRAM ARGS...`: runs an unmodified Vulkan program on tangle's
//! driver (`tangle-icd`, docs/driver.md), as CUDA's compute-sanitizer runs a CUDA program.
//!
//! It writes the loader's manifest for the driver library into a folder of its own, points the
//! loader at it alone (`VK_DRIVER_FILES`; `VK_ICD_FILENAMES` and `VK_ADD_DRIVER_FILES` are
//! cleared), passes the options to the driver through its variables (`TANGLE_PROFILE`,
//! `TANGLE_SUBGROUP_SIZE`, `TANGLE_COOPMAT_LAYOUT`, `TANGLE_ALLOW`, `TANGLE_DENY`,
//! `TANGLE_VIEW`) and sets
//! `TANGLE_EXEC` to that folder: the driver then prints no summary of its own and writes each
//! device's JSON report there. When the program ends, the reports are merged, the grouped
//! findings printed on stderr (and written to `--report FILE`), the pictures rendered
//! (`--view DIR`, [`super::exec_view`]), and `tangle exec` exits with the program's status.
//!
//! # Exit status
//! The program's own; `--error-exitcode N` when undefined behaviour (an error-severity
//! finding, `--deny` included) was found; 128 + N when the program was killed by signal N (as
//! shells report it); 127 when it could not be started; 2 when the options are unusable.

use super::unusable::{Kind, Unusable};
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(clap::Args)]
pub struct Args {
    /// The device profile (`default`, `lavapipe`, `nvidia`, `amd`, `intel`, or a profile
    /// file), as `tangle run --profile` takes it.
    #[arg(long, value_name = "NAME|FILE.toml")]
    profile: Option<String>,
    /// The device's subgroup size instead of the profile's (a power of two, 1 to 128).
    #[arg(long = "subgroup-size", value_name = "N")]
    subgroup_size: Option<u32>,
    /// Which invocation holds which cooperative-matrix element (`row-striped`,
    /// `column-striped`, `shuffled:SEED`), as `tangle run --coopmat-layout`.
    #[arg(long = "coopmat-layout", value_name = "LAYOUT")]
    coopmat_layout: Option<String>,
    /// Finding kinds not to look for (`race,uninit`), as `tangle run --allow`.
    #[arg(long, value_name = "KINDS")]
    allow: Option<String>,
    /// Warning kinds to report as undefined behaviour (`uninit,domain`, or `all`), as
    /// `tangle run --deny`.
    #[arg(long, value_name = "KINDS")]
    deny: Option<String>,
    /// Write the findings as JSON (the driver's `TANGLE_REPORT` format, docs/driver.md).
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Exit with N when undefined behaviour was found (compute-sanitizer's
    /// `--error-exitcode`).
    #[arg(long = "error-exitcode", value_name = "N")]
    error_exitcode: Option<u8>,
    /// Write one picture per pipeline (its first dispatch) and an index.html into DIR.
    #[arg(long, value_name = "DIR")]
    view: Option<PathBuf>,
    /// The driver library; by default the one beside this executable.
    #[arg(long, value_name = "PATH")]
    library: Option<PathBuf>,
    /// The program and its arguments (after `--`).
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    program: Vec<String>,
}

/// A folder of this run's own, removed when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Checks the options the driver would refuse, so that a mistake is a usage error here rather
/// than a failed `vkCreateInstance` in the program.
fn check(args: &Args) -> Result<(), Unusable> {
    let usage = |m: String| Unusable::new(Kind::Usage, m);
    if let Some(p) = &args.profile {
        tangle_icd::config::profile_named(p).map_err(|e| usage(format!("--profile {p}: {e}")))?;
    }
    if let Some(n) = args.subgroup_size {
        if !(n.is_power_of_two() && n <= 128) {
            return Err(usage(format!(
                "--subgroup-size {n}: not a power of two in 1..=128"
            )));
        }
    }
    if let Some(l) = &args.coopmat_layout {
        l.parse::<tangle_exec::policy::CoopmatLayout>()
            .map_err(|e| usage(format!("--coopmat-layout {l}: {e}")))?;
    }
    tangle_exec::check::kind::allow_and_deny(
        args.allow.as_deref(),
        args.deny.as_deref(),
        ("--allow", "--deny"),
    )
    .map(|_| ())
    .map_err(usage)
}

/// Runs the program; the exit status `tangle exec` ends with.
pub fn run(args: &Args) -> Result<u8, Unusable> {
    check(args)?;
    let library = super::driver::library(args.library.as_deref())?;
    let io = |e: std::io::Error, what: &Path| {
        Unusable::new(Kind::Io, format!("{}: {e}", what.display()))
    };
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let scratch =
        Scratch(std::env::temp_dir().join(format!("tangle-exec-{}-{nanos}", std::process::id())));
    let reports = scratch.0.join("reports");
    std::fs::create_dir_all(&reports).map_err(|e| io(e, &reports))?;
    let manifest = scratch.0.join("tangle_icd.json");
    std::fs::write(&manifest, tangle_icd::manifest::json(&library))
        .map_err(|e| io(e, &manifest))?;
    let view = match &args.view {
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(|e| io(e, dir))?;
            Some(std::fs::canonicalize(dir).map_err(|e| io(e, dir))?)
        }
        None => None,
    };
    let Some((program, rest)) = args.program.split_first() else {
        return Err(Unusable::new(Kind::Usage, "no program to run"));
    };
    let mut cmd = Command::new(program);
    cmd.args(rest)
        .env("VK_DRIVER_FILES", &manifest)
        .env_remove("VK_ICD_FILENAMES")
        .env_remove("VK_ADD_DRIVER_FILES")
        .env(tangle_icd::config::EXEC, &reports)
        // The report goes where `tangle exec` writes it, merged over the devices.
        .env_remove(tangle_icd::config::REPORT);
    let vars: [(&str, Option<String>); 6] = [
        (tangle_icd::config::PROFILE, args.profile.clone()),
        (
            tangle_icd::config::SUBGROUP_SIZE,
            args.subgroup_size.map(|n| n.to_string()),
        ),
        (
            tangle_icd::config::COOPMAT_LAYOUT,
            args.coopmat_layout.clone(),
        ),
        (tangle_icd::config::ALLOW, args.allow.clone()),
        (tangle_icd::config::DENY, args.deny.clone()),
        (
            tangle_icd::config::VIEW,
            view.as_ref().map(|v| v.to_string_lossy().into_owned()),
        ),
    ];
    for (name, value) in vars {
        match value {
            Some(v) => cmd.env(name, v),
            None => cmd.env_remove(name),
        };
    }
    let status = match cmd.status() {
        Ok(s) => s,
        Err(e) => {
            super::io::report(&format!("cannot run {program}: {e}"));
            // As shells answer a command they cannot run: 127 not found, 126 otherwise.
            return Ok(if e.kind() == std::io::ErrorKind::NotFound {
                127
            } else {
                126
            });
        }
    };
    let report = merged(&reports);
    eprint!("{}", tangle_icd::findings::text(&report));
    if report["devices"] == 0 {
        super::io::report(&format!(
            "{program} left no report on the tangle driver: it created no Vulkan device there, or destroyed none and found nothing"
        ));
    }
    if let Some(path) = &args.report {
        let text = serde_json::to_string_pretty(&report).unwrap_or_default() + "\n";
        std::fs::write(path, text).map_err(|e| io(e, path))?;
    }
    if let Some(dir) = &view {
        let pages = super::exec_view::render(dir).map_err(|e| io(e, dir))?;
        eprintln!(
            "tangle exec: {pages} picture(s) in {}",
            dir.join("index.html").display()
        );
    }
    let ub = report["findings"]
        .as_array()
        .is_some_and(|f| f.iter().any(|c| c["severity"] == "error"));
    Ok(exit_code(
        status,
        ub.then_some(args.error_exitcode).flatten(),
    ))
}

/// The status to end with: `ub_code` when undefined behaviour was found and `--error-exitcode`
/// asked for it, else the program's code, or 128 + the signal that killed it.
fn exit_code(status: std::process::ExitStatus, ub_code: Option<u8>) -> u8 {
    if let Some(n) = ub_code {
        return n;
    }
    if let Some(code) = status.code() {
        // An exit status is 0..=255 on Unix; elsewhere the low byte.
        return (code & 0xff) as u8;
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            super::io::report(&format!("the program was killed by signal {signal}"));
            return 128u8.saturating_add(signal as u8);
        }
    }
    1
}

/// The devices' reports in `dir` merged into one: sums of submissions and dispatches, every
/// device's findings and errors, in the order the devices were destroyed (per process), and
/// `devices`, how many there were.
fn merged(dir: &Path) -> serde_json::Value {
    let mut files: Vec<(u64, u64, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let rest = name.strip_prefix("device-")?.strip_suffix(".json")?;
            let (pid, n) = rest.split_once('-')?;
            Some((pid.parse().ok()?, n.parse().ok()?, e.path()))
        })
        .collect();
    files.sort();
    let mut out = serde_json::json!({
        "profile": serde_json::Value::Null,
        "devices": 0,
        "submissions": 0,
        "dispatches": 0,
        "findings": [],
        "errors": [],
    });
    let mut devices = 0u64;
    let (mut submissions, mut dispatches) = (0u64, 0u64);
    let (mut findings, mut errors) = (Vec::new(), Vec::new());
    for (_, _, path) in files {
        let Some(r) = std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        else {
            continue;
        };
        devices += 1;
        if out["profile"].is_null() {
            out["profile"] = r["profile"].clone();
        }
        submissions += r["submissions"].as_u64().unwrap_or(0);
        dispatches += r["dispatches"].as_u64().unwrap_or(0);
        findings.extend(r["findings"].as_array().cloned().unwrap_or_default());
        errors.extend(r["errors"].as_array().cloned().unwrap_or_default());
    }
    out["devices"] = devices.into();
    out["submissions"] = submissions.into();
    out["dispatches"] = dispatches.into();
    out["findings"] = findings.into();
    out["errors"] = errors.into();
    out
}
