//! The command line: one file per subcommand, mirroring SPIRV-Tools where they overlap.
//!
//! Exit codes (DESIGN.md): 0 success; 1 the verdict is "no" (invalid module, failed EXPECT, UB
//! found); 2 the input could not be used (I/O, parse, usage); 77 the script needs a feature the
//! device profile lacks.

mod asm;
mod dis;
mod io;
mod policies;
mod profiles;
mod run;
mod val;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

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
enum Command {
    /// Assemble SPIR-V text (SPIRV-Tools syntax) into a binary.
    As(asm::Args),
    /// Disassemble a binary into SPIR-V text (SPIRV-Tools syntax).
    Dis(dis::Args),
    /// Validate a module (.spv or .spvasm).
    Val(val::Args),
    /// Run an Amber script's compute tests.
    Run(run::Args),
    /// List the device profiles (`tangle run --profile NAME`).
    Profiles(profiles::Args),
}

/// Parses the command line and runs the subcommand.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            // --help and --version are successes; everything else is a usage error.
            return if e.use_stderr() {
                ExitCode::from(Exit::Unusable as u8)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    let exit = match cli.command {
        Command::As(args) => asm::run(&args),
        Command::Dis(args) => dis::run(&args),
        Command::Val(args) => val::run(&args),
        Command::Run(args) => run::run(&args),
        Command::Profiles(args) => profiles::run(&args),
    };
    ExitCode::from(exit as u8)
}
