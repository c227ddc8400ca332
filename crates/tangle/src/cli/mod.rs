//! The command line: one file per subcommand, mirroring SPIRV-Tools where they overlap.
//!
//! Exit codes (DESIGN.md): 0 success; 1 the verdict is "no" (invalid module, failed EXPECT, UB
//! found); 2 the input could not be used (I/O, parse, usage); 77 the script needs a feature the
//! device profile lacks. `tangle exec` exits with its program's status instead ([`exec`]).
//!
//! # Standard output and standard error
//! Every subcommand follows one convention, so that scripts can pipe stdout and people can
//! read stderr:
//! * **stdout carries what the command produces**: the output file when it is `-` (`as`, `dis`),
//!   the verdict (`val`: one `NAME: valid for ENV` or `NAME: not valid for ENV: N problem(s)
//!   found` line; `run`: the report, its findings and its `PASS`/`FAIL`/`UNSUPPORTED`/`ERROR`
//!   line, or with `--json` exactly one JSON object), and listings (`profiles`).
//! * **stderr carries diagnostics**: the validator's findings behind a "no" (`val`), and why an
//!   input could not be used (exit 2), as one `tangle: FILE[:LINE:COL]: MESSAGE` line. A command
//!   that exits 2 prints nothing else on stdout, except `run --json`, whose JSON report then
//!   holds the same error.
//!
//! Inputs are told apart by content, never by file name ([`input`]).

mod asm;
mod bench;
mod diff;
mod dis;
mod driver;
mod exec;
mod exec_view;
mod input;
mod io;
mod limits;
mod policies;
mod profiles;
mod progress;
mod report;
mod run;
mod unusable;
mod val;
mod view;
mod vulkan;

use clap::{Parser, Subcommand};

/// What a subcommand ended with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Success = 0,
    /// The answer is "no": invalid module, failed expectation, undefined behaviour found.
    No = 1,
    /// The input could not be used.
    Unusable = 2,
    /// The job needs a feature the device profile lacks.
    Unsupported = 77,
}

#[derive(Parser)]
#[command(
    name = "tangle",
    version,
    about = "Assemble, disassemble, validate and execute SPIR-V compute shaders exactly, on the CPU"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
// Parsed once per process: the size of `run`'s options costs nothing.
#[allow(clippy::large_enum_variant)]
enum Command {
    /// Assemble SPIR-V text (SPIRV-Tools syntax) into a binary.
    As(asm::Args),
    /// Disassemble a binary into SPIR-V text (SPIRV-Tools syntax).
    Dis(dis::Args),
    /// Validate a module (a SPIR-V binary or SPIR-V text, told apart by content).
    Val(val::Args),
    /// Run an Amber script's compute tests.
    Run(run::Args),
    /// List the device profiles (`tangle run --profile NAME`), or the Vulkan devices.
    Profiles(profiles::Args),
    /// Measure the benchmark workloads against plain Rust (`bench/README.md`).
    Bench(bench::Args),
    /// Run an Amber script on a Vulkan device and on the CPU executor and compare the buffers.
    Diff(diff::Args),
    /// Write the Vulkan loader's manifest for tangle's driver (`VK_DRIVER_FILES=FILE`).
    Driver(driver::Args),
    /// Run an unmodified Vulkan program on tangle's driver and report its undefined behaviour.
    Exec(exec::Args),
}

/// Parses the command line and runs the subcommand.
/// Runs the command line; the process's exit status.
pub fn main() -> u8 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            // --help and --version are successes; everything else is a usage error.
            if !e.use_stderr() {
                return 0;
            }
            let words: Vec<String> = std::env::args().skip(1).collect();
            report::print_command_line_error(&words, &e);
            return Exit::Unusable as u8;
        }
    };
    let result = match cli.command {
        Command::As(args) => asm::run(&args),
        Command::Dis(args) => dis::run(&args),
        Command::Val(args) => val::run(&args),
        Command::Run(args) => run::run(&args),
        Command::Profiles(args) => profiles::run(&args),
        Command::Bench(args) => bench::run(&args),
        Command::Diff(args) => diff::run(&args),
        Command::Driver(args) => driver::run(&args),
        // The program's own exit status, which no `Exit` names.
        Command::Exec(args) => {
            return exec::run(&args).unwrap_or_else(|e| {
                io::report(&e.to_string());
                Exit::Unusable as u8
            })
        }
    };
    let exit = result.unwrap_or_else(|e| {
        io::report(&e.to_string());
        Exit::Unusable
    });
    exit as u8
}
