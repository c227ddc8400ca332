//! `tangle val` (being built).

use super::{io, Exit};

#[derive(clap::Args)]
pub struct Args {
    /// Input file.
    input: String,
}

pub fn run(args: &Args) -> Exit {
    io::report(&format!("{}: 'tangle val' is not built yet", args.input));
    Exit::Unusable
}
