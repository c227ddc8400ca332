//! `tangle dis IN [-o OUT] [--raw-id] [--no-header] [--no-indent]`: binary → text, like `spirv-dis`.

use super::input::{self, Content, TextKind};
use super::unusable::{Kind, Unusable};
use super::{io, Exit};
use tangle_spirv::text::{disassemble, DisassembleOptions};

#[derive(clap::Args)]
pub struct Args {
    /// Input binary, or - for standard input.
    input: String,
    /// Output text, or - for standard output (the default).
    #[arg(short = 'o', default_value = "-")]
    output: String,
    /// Print ids as numbers (%12) instead of friendly names.
    #[arg(long = "raw-id")]
    raw_id: bool,
    /// Leave out the `; SPIR-V` header comments.
    #[arg(long = "no-header")]
    no_header: bool,
    /// Do not right-align result ids.
    #[arg(long = "no-indent")]
    no_indent: bool,
}

/// Disassembles the input; text is told from a binary by content ([`input::identify`]).
pub fn run(args: &Args) -> Result<Exit, Unusable> {
    let bytes = io::read_input(&args.input)?;
    let name = io::display_name(&args.input);
    let module = match input::identify(&bytes) {
        Content::Binary(bytes) => input::read_binary(name, bytes)?,
        Content::Text(text) => {
            let what = TextKind::of(text).instead_of("a SPIR-V binary");
            return Err(Unusable::in_file(Kind::Content, name, what));
        }
        Content::Other(what) => return Err(Unusable::in_file(Kind::Content, name, what)),
    };
    let options = DisassembleOptions {
        raw_id: args.raw_id,
        header: !args.no_header,
        indent: !args.no_indent,
    };
    let text = disassemble(&module, &options);
    io::write_output(&args.output, text.as_bytes())?;
    Ok(Exit::Success)
}
