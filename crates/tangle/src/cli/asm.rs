//! `tangle as IN [-o OUT] [--target-env ENV]`: SPIR-V text → binary, like `spirv-as`.

use super::{io, Exit};
use tangle_spirv::text::{assemble, AssembleOptions};

#[derive(clap::Args)]
pub struct Args {
    /// Input text file, or - for standard input.
    input: String,
    /// Output binary, or - for standard output (default: out.spv, as spirv-as does).
    #[arg(short = 'o', default_value = "out.spv")]
    output: String,
    /// Environment deciding the header's SPIR-V version (default spv1.6).
    #[arg(long = "target-env")]
    target_env: Option<String>,
}

pub fn run(args: &Args) -> Exit {
    let target_env = match io::target_env(args.target_env.as_deref()) {
        Ok(env) => env,
        Err(e) => {
            io::report(&e);
            return Exit::Unusable;
        }
    };
    let bytes = match io::read_input(&args.input) {
        Ok(b) => b,
        Err(e) => {
            io::report(&e);
            return Exit::Unusable;
        }
    };
    let name = io::display_name(&args.input);
    let Ok(text) = String::from_utf8(bytes) else {
        io::report(&format!("{name}: the input is not UTF-8 text"));
        return Exit::Unusable;
    };
    match assemble(&text, &AssembleOptions { target_env }) {
        Ok((module, _)) => {
            let bytes = tangle_spirv::binary::words_to_bytes(&module.to_words());
            match io::write_output(&args.output, &bytes) {
                Ok(()) => Exit::Success,
                Err(e) => {
                    io::report(&e);
                    Exit::Unusable
                }
            }
        }
        Err(e) => {
            io::report(&format!("{name}:{e}"));
            Exit::Unusable
        }
    }
}
