//! `tangle val IN [--target-env ENV] [spirv-val relaxation flags]`: validate a module, like
//! `spirv-val`. `IN` is a binary (`.spv`) or SPIR-V text (`.spvasm`, assembled for the same
//! environment); other names are recognised by the SPIR-V magic number. Exit 0 valid, 1 invalid
//! (every diagnostic on standard error), 2 unusable input.

use super::{io, Exit};
use tangle_spirv::text::{assemble, AssembleOptions};
use tangle_spirv::{Module, SourceMap};
use tangle_validate::{validate, ValidateOptions};

#[derive(clap::Args)]
pub struct Args {
    /// Input module (.spv binary or .spvasm text), or - for standard input.
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

/// Whether the bytes start with the SPIR-V magic number in either byte order.
fn looks_binary(bytes: &[u8]) -> bool {
    matches!(
        bytes.get(..4),
        Some([0x03, 0x02, 0x23, 0x07] | [0x07, 0x23, 0x02, 0x03])
    )
}

pub fn run(args: &Args) -> Exit {
    let env = match io::target_env(args.target_env.as_deref()) {
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
    let text_input =
        args.input.ends_with(".spvasm") || !(args.input.ends_with(".spv") || looks_binary(&bytes));
    let (module, source): (Module, Option<SourceMap>) = if text_input {
        let Ok(text) = String::from_utf8(bytes) else {
            io::report(&format!(
                "{name}: the input is neither a SPIR-V binary nor UTF-8 text"
            ));
            return Exit::Unusable;
        };
        match assemble(&text, &AssembleOptions { target_env: env }) {
            Ok((m, map)) => (m, Some(map)),
            Err(e) => {
                io::report(&format!("{name}:{e}"));
                return Exit::Unusable;
            }
        }
    } else {
        match Module::from_bytes(&bytes) {
            Ok(m) => (m, None),
            Err(e) => {
                io::report(&format!("{name}: {e}"));
                return Exit::Unusable;
            }
        }
    };
    match validate(&module, env, &args.options()) {
        Ok(_) => Exit::Success,
        Err(diagnostics) => {
            eprint!(
                "{}",
                tangle_validate::render_all(&diagnostics, &module, name, source.as_ref())
            );
            io::report(&format!(
                "{name}: {} problem(s) found; the module is not valid for {env}",
                diagnostics.len()
            ));
            Exit::No
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binaries_are_recognised_in_either_byte_order() {
        assert!(looks_binary(&[0x03, 0x02, 0x23, 0x07, 0, 0]));
        assert!(looks_binary(&[0x07, 0x23, 0x02, 0x03]));
        assert!(!looks_binary(b"OpCapability Shader"));
        assert!(!looks_binary(&[0x03, 0x02]));
    }

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
