//! `tangle dis IN [-o OUT] [--raw-id] [--no-header] [--no-indent]`: binary → text, like `spirv-dis`.

use super::{io, Exit};
use tangle_spirv::text::{disassemble, DisassembleOptions};
use tangle_spirv::Module;

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

pub fn run(args: &Args) -> Exit {
    let bytes = match io::read_input(&args.input) {
        Ok(b) => b,
        Err(e) => {
            io::report(&e);
            return Exit::Unusable;
        }
    };
    let module = match Module::from_bytes(&bytes) {
        Ok(m) => m,
        Err(e) => {
            io::report(&format!("{}: {e}", io::display_name(&args.input)));
            return Exit::Unusable;
        }
    };
    let options = DisassembleOptions {
        raw_id: args.raw_id,
        header: !args.no_header,
        indent: !args.no_indent,
    };
    let text = disassemble(&module, &options);
    match io::write_output(&args.output, text.as_bytes()) {
        Ok(()) => Exit::Success,
        Err(e) => {
            io::report(&e);
            Exit::Unusable
        }
    }
}
