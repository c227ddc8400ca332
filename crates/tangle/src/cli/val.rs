//! `tangle val IN [--target-env ENV] [spirv-val relaxation flags]`: validate a module, like
//! `spirv-val`. `IN` is a SPIR-V binary or SPIR-V text (assembled for the same environment),
//! told apart by content, whatever its name. Exit 0 valid, 1 invalid, 2 unusable input; the
//! verdict is one line on standard output, every diagnostic goes to standard error.

use super::input::{self, Content};
use super::unusable::{Kind, Unusable};
use super::{io, Exit};
use tangle_validate::{validate, ValidateOptions};

#[derive(clap::Args)]
pub struct Args {
    /// Input module (a SPIR-V binary or SPIR-V text, whatever its name), or - for standard input.
    input: String,
    /// Environment to validate for (default spv1.6), spelled as for spirv-val.
    #[arg(long = "target-env")]
    target_env: Option<String>,
    /// Allow pointers as values in the Logical addressing model.
    #[arg(long = "relax-logical-pointer")]
    relax_logical_pointer: bool,
    /// Relax block layout rules.
    #[arg(long = "relax-block-layout")]
    relax_block_layout: bool,
    /// Uniform buffers use the standard layout.
    #[arg(long = "uniform-buffer-standard-layout")]
    uniform_buffer_standard_layout: bool,
    /// Use scalar block layout.
    #[arg(long = "scalar-block-layout")]
    scalar_block_layout: bool,
    /// Use scalar block layout for Workgroup blocks.
    #[arg(long = "workgroup-scalar-block-layout")]
    workgroup_scalar_block_layout: bool,
    /// Skip block layout checks.
    #[arg(long = "skip-block-layout")]
    skip_block_layout: bool,
    /// Allow storing structs of different but matching types.
    #[arg(long = "relax-struct-store")]
    relax_struct_store: bool,
    /// Accept HLSL before legalization (implies --relax-logical-pointer).
    #[arg(long = "before-hlsl-legalization")]
    before_hlsl_legalization: bool,
    /// Allow LocalSizeId in environments that would not.
    #[arg(long = "allow-localsizeid")]
    allow_localsizeid: bool,
}

impl Args {
    fn options(&self) -> ValidateOptions {
        ValidateOptions {
            relax_logical_pointer: self.relax_logical_pointer || self.before_hlsl_legalization,
            relax_block_layout: self.relax_block_layout,
            uniform_buffer_standard_layout: self.uniform_buffer_standard_layout,
            scalar_block_layout: self.scalar_block_layout,
            workgroup_scalar_block_layout: self.workgroup_scalar_block_layout,
            skip_block_layout: self.skip_block_layout,
            relax_struct_store: self.relax_struct_store,
            before_hlsl_legalization: self.before_hlsl_legalization,
            allow_localsizeid: self.allow_localsizeid,
        }
    }
}

/// Validates the input: the verdict on stdout, the findings on stderr.
pub fn run(args: &Args) -> Result<Exit, Unusable> {
    let env = io::target_env(args.target_env.as_deref())?;
    let bytes = io::read_input(&args.input)?;
    let name = io::display_name(&args.input);
    let (module, source) = match input::identify(&bytes) {
        Content::Binary(bytes) => (input::read_binary(name, bytes)?, None),
        Content::Text(text) => {
            let (module, map) = input::assemble(name, text, env)?;
            (module, Some(map))
        }
        Content::Other(what) => return Err(Unusable::in_file(Kind::Content, name, what)),
    };
    match validate(&module, env, &args.options()) {
        Ok(_) => {
            println!("{name}: valid for {env}");
            Ok(Exit::Success)
        }
        Err(diagnostics) => {
            eprint!(
                "{}",
                tangle_validate::render_all(&diagnostics, &module, name, source.as_ref())
            );
            println!(
                "{name}: not valid for {env}: {} problem(s) found",
                diagnostics.len()
            );
            Ok(Exit::No)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hlsl_legalization_implies_relaxed_logical_pointers() {
        use clap::Parser;
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            args: Args,
        }
        let cli = Cli::try_parse_from([
            "val",
            "m.spv",
            "--before-hlsl-legalization",
            "--target-env",
            "vulkan1.3",
        ]);
        let options = cli.map(|c| c.args.options()).expect("parses");
        assert!(options.relax_logical_pointer && options.before_hlsl_legalization);
        assert!(!options.scalar_block_layout);
    }
}
