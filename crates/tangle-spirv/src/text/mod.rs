//! SPIR-V assembly text in SPIRV-Tools syntax: the assembler ([`assemble`]) and the disassembler
//! ([`disassemble`]).
//!
//! NOTE: the two entry points below are the stable interface other crates use; their bodies are
//! being written (see the parse/print modules as they land).

mod names;
mod print;

pub use names::FriendlyNames;

mod lex;
mod number;
mod parse;
mod symbols;

use crate::env::TargetEnv;
use crate::module::{Module, SourceMap};

/// Options of [`assemble`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AssembleOptions {
    /// Decides the header's SPIR-V version, as `spirv-as --target-env` does.
    pub target_env: TargetEnv,
}

impl Default for AssembleOptions {
    fn default() -> Self {
        AssembleOptions {
            target_env: TargetEnv::DEFAULT,
        }
    }
}

/// Options of [`disassemble`], named after `spirv-dis`'s flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DisassembleOptions {
    /// `--raw-id`: print `%12` instead of friendly names.
    pub raw_id: bool,
    /// The `; SPIR-V` header comment block (off with `--no-header`).
    pub header: bool,
    /// Right-align result ids (off with `--no-indent`).
    pub indent: bool,
}

impl Default for DisassembleOptions {
    fn default() -> Self {
        DisassembleOptions {
            raw_id: false,
            header: true,
            indent: true,
        }
    }
}

/// A text that cannot be assembled: what and where (1-based line and column).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{line}:{column}: {message}")]
pub struct TextError {
    pub line: u32,
    pub column: u32,
    pub message: String,
}

/// Assembles SPIRV-Tools assembly text into a module, with the position of each instruction.
///
/// Accepts what `spirv-as` (SPIRV-Tools 2025.5, without `--preserve-numeric-ids`) accepts and
/// produces the same words, apart from the generator word: ids are numbered in order of first
/// use, the header's version comes from `options.target_env`, and the bound is one more than the
/// largest id. See the `parse` module for the details.
pub fn assemble(source: &str, options: &AssembleOptions) -> Result<(Module, SourceMap), TextError> {
    parse::assemble(source, options)
}

/// Prints a module as SPIRV-Tools assembly text.
pub fn disassemble(module: &Module, options: &DisassembleOptions) -> String {
    print::disassemble(module, options)
}
