//! The tangle facade: one place to go from a shader to a validated module and a run.
//!
//! ```text
//! load_module(Source::Glsl(..) | Source::Text(..) | Source::Words(..), env)  → Validated module
//! Device::new(profile).compute_pipeline(&module, "main", &spec)          → Pipeline
//! pipeline.dispatch(&mut resources, [x, y, z], &RunOptions::default())    → Report
//! ```
//!
//! Every module is validated before it is returned, because the executor trusts only validated
//! input (DESIGN.md); `compute_pipeline` takes a [`Validated`] module, so nothing else can reach
//! it. [`cpu_backend`] adapts the same path to the Amber runner.

pub mod bench;
pub mod cpu_backend;
mod cpu_views;
pub mod diff;
pub mod findings;
pub mod view;

pub use tangle_exec::{
    Device, Diagnostic, ExecError, Pipeline, Profile, Report, Resources, RunOptions, SpecConstants,
};
pub use tangle_spirv::{Module, TargetEnv};
pub use tangle_validate::Validated;

/// Where a module comes from.
#[derive(Debug, Clone, Copy)]
pub enum Source<'a> {
    /// A SPIR-V binary as words.
    Words(&'a [u32]),
    /// SPIR-V assembly text (SPIRV-Tools syntax).
    Text(&'a str),
    /// A GLSL compute shader, compiled with glslang.
    Glsl(&'a str),
}

/// Why a source did not give a usable module.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    #[error("{0}")]
    Binary(#[from] tangle_spirv::BinaryError),
    #[error("{0}")]
    Text(#[from] tangle_spirv::text::TextError),
    #[error("GLSL: {0}")]
    Glsl(String),
    /// The module is not valid for the environment: every diagnostic, rendered.
    #[error("the module is not valid for {env}:\n{}", diagnostics.join("\n"))]
    Invalid {
        env: TargetEnv,
        diagnostics: Vec<String>,
    },
}

/// Reads, assembles or compiles a module for `env` and validates it.
pub fn load_module(source: Source<'_>, env: TargetEnv) -> Result<Validated<'static>, LoadError> {
    let mut source_map = None;
    let module = match source {
        Source::Words(words) => Module::from_words(words)?,
        Source::Text(text) => {
            let (module, map) = tangle_spirv::text::assemble(
                text,
                &tangle_spirv::text::AssembleOptions { target_env: env },
            )?;
            source_map = Some(map);
            module
        }
        Source::Glsl(glsl) => {
            Module::from_words(&tangle_amber::compile::glsl(glsl, env).map_err(LoadError::Glsl)?)?
        }
    };
    let options = tangle_validate::ValidateOptions::default();
    match tangle_validate::validate(&module, env, &options) {
        Ok(valid) => Ok(valid.into_owned()),
        // Warnings fail too: they mirror the reference validator's SPV_WARNING findings, which
        // make a module invalid.
        Err(found) => {
            let names = tangle_validate::IdNames::new(&module, source_map.as_ref());
            Err(LoadError::Invalid {
                env,
                diagnostics: found
                    .iter()
                    .map(|d| d.render_with(&module, "<module>", source_map.as_ref(), &names))
                    .collect(),
            })
        }
    }
}
