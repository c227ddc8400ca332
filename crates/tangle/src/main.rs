//! The `tangle` binary: see [`cli`] for the subcommands and exit codes.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
