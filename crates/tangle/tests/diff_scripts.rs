//! Every Amber script of the repository (`examples/`, `tests/amber/**`) through `tangle diff` on
//! the installed Vulkan driver (lavapipe in CI). Each script must agree with tangle's CPU
//! executor (differences explained by undefined behaviour allowed), or be counted, with its
//! reason, as unsupported by the device, unusable (`unusable/`), or invalid on every device (a
//! `RUN` the CPU executor refuses as invalid, which is never sent to the driver), or as a known
//! deviation of the driver: a script that says `# known deviation: NAME (why)` may differ on a
//! device whose name contains NAME (`tests/amber/drivers/` holds the driver bugs `tangle diff`
//! found, as reproducers). Any other difference fails. The counts are printed, and kept for `.ci/run` to show
//! ([`summary::say`]).

mod repository_scripts;
mod summary;

use std::path::Path;
use std::process::Command;
use summary::say;

fn tangle(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tangle"))
        .args(args)
        .output()
        .expect("the tangle binary runs");
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    (out.status.code().unwrap_or(-1), text)
}

/// Whether `script` declares a known deviation of the device `diff_output`'s first line names.
fn known_deviation(script: &Path, diff_output: &str) -> bool {
    let device = diff_output.lines().next().unwrap_or("");
    std::fs::read_to_string(script).is_ok_and(|text| {
        text.lines()
            .filter_map(|l| l.strip_prefix("# known deviation: "))
            .filter_map(|rest| rest.split_whitespace().next())
            // The header reads `SCRIPT: device N: NAME (driver); ...`.
            .any(|name| device.split(": ").any(|part| part.starts_with(name)))
    })
}

#[test]
#[cfg_attr(
    not(vulkan_driver),
    ignore = "needs a Vulkan loader and driver (apt-get install mesa-vulkan-drivers libvulkan1)"
)]
fn every_script_through_tangle_diff() {
    let scripts = repository_scripts::all();
    assert!(scripts.len() >= 30, "only {} scripts found", scripts.len());
    let (mut agree, mut unsupported, mut unusable, mut invalid, mut known) = (0, 0, 0, 0, 0);
    let mut wrong = Vec::new();
    for script in &scripts {
        let path = script.display().to_string();
        let name = repository_scripts::name(script);
        // The CPU side's limit: tests/amber/cli/runaway_loop.amber never ends there.
        let (code, out) = tangle(&["diff", "--time-limit", "5", "--threads", "2", &path]);
        let last = out.lines().last().unwrap_or("").to_string();
        match code {
            0 if last.starts_with("AGREE") => agree += 1,
            77 => {
                say(&format!("skipped {name}: {last}"));
                unsupported += 1;
            }
            2 if path.contains("/unusable/") => unusable += 1,
            1 if last.starts_with("DIFFER") && known_deviation(script, &out) => {
                say(&format!("known deviation {name}: {last}"));
                known += 1;
            }
            1 if last.contains("a RUN did not complete") => {
                // Acceptable only when the CPU executor refuses the RUN on its own, or finds
                // undefined behaviour in the script (the device side may then refuse it as
                // invalid use, as it refuses a pipeline reading push constants none set).
                let (cpu, cpu_out) = tangle(&["run", "--time-limit", "5", &path]);
                let refused = cpu_out.contains("invalid") || cpu_out.contains("time limit");
                if cpu == 1 && (refused || cpu_out.contains("undefined behaviour")) {
                    say(&format!("not compared {name}: {last}"));
                    invalid += 1;
                } else {
                    wrong.push(format!("{name}: exit {code}\n{out}"));
                }
            }
            _ => wrong.push(format!("{name}: exit {code}\n{out}")),
        }
    }
    say(&format!(
        "tangle diff over {} scripts: {agree} agree, {unsupported} unsupported by the device, \
         {invalid} not compared (refused or stopped by the CPU executor), {unusable} unusable, \
         {known} known driver deviations, {} wrong",
        scripts.len(),
        wrong.len()
    ));
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(agree >= 160, "only {agree} scripts agree");
}
