//! The `tangle` binary: see [`cli`] for the subcommands and exit codes.

mod cli;

fn main() -> std::process::ExitCode {
    let code = cli::main();
    if tangle_vulkan::device_left_running() {
        // A timed-out dispatch may still be running in the driver: end without destroying the
        // driver under it (tangle_vulkan::exit_now), after flushing what was printed.
        use std::io::Write;
        let _ = std::io::stdout().flush();
        let _ = std::io::stderr().flush();
        tangle_vulkan::exit_now(i32::from(code));
    }
    std::process::ExitCode::from(code)
}
