//! tangle-spirv: SPIR-V modules as data.
//!
//! A [`Module`] is a [`Header`] plus a flat list of [`Instruction`]s, each with its opcode, result
//! type, result id and typed [`Operand`]s in binary order. Everything else in tangle reads this one
//! form. It is produced three ways:
//! * [`binary::read`] decodes words, driven by the [`grammar`] tables (generated from the Khronos
//!   JSON grammar) and a small tracker for context-dependent literal widths;
//! * [`text::assemble`] parses SPIRV-Tools assembly (`spirv-as` syntax), returning a [`SourceMap`]
//!   so later diagnostics can point at `file:line:col`;
//! * programs build it directly.
//!
//! and written back with [`binary::write`] or [`text::disassemble`] (`spirv-dis` syntax).

pub mod binary;
pub mod env;
pub mod grammar;
pub mod module;
pub mod text;

pub use binary::{BinaryError, BinaryErrorKind};
pub use env::TargetEnv;
pub use module::{Header, Id, Instruction, Module, Operand, SourceMap};
