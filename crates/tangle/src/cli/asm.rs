//! `tangle as IN [-o OUT] [--target-env ENV]`: SPIR-V text → binary, like `spirv-as`.

use super::input::{self, Content};
use super::unusable::{Kind, Unusable};
use super::{io, Exit};

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

/// Assembles the input; text is told from a binary by content ([`input::identify`]).
pub fn run(args: &Args) -> Result<Exit, Unusable> {
    let target_env = io::target_env(args.target_env.as_deref())?;
    let bytes = io::read_input(&args.input)?;
    let name = io::display_name(&args.input);
    let text = match input::identify(&bytes) {
        Content::Text(text) => text,
        Content::Binary(_) => {
            let what = input::instead_of(
                "already a SPIR-V binary",
                "SPIR-V assembly text",
                Some(input::BINARY_HINT),
            );
            return Err(Unusable::in_file(Kind::Content, name, what));
        }
        Content::Other(what) => return Err(Unusable::in_file(Kind::Content, name, what)),
    };
    let (module, _) = input::assemble(name, text, target_env)?;
    let bytes = tangle_spirv::binary::words_to_bytes(&module.to_words());
    io::write_output(&args.output, &bytes)?;
    Ok(Exit::Success)
}
