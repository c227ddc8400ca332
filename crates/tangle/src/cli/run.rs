//! `tangle run` (being built).

use super::{io, Exit};

#[derive(clap::Args)]
pub struct Args {
    /// Input file.
    input: String,
}

pub fn run(args: &Args) -> Exit {
    io::report(&format!("{}: 'tangle run' is not built yet", args.input));
    Exit::Unusable
}
