//! tangle-amber: AmberScript for compute, parsed into a [`Script`] and run against a [`Backend`].
//!
//! # Data model
//! [`parse`] reads AmberScript (`shared/notes/amber-format.md`; what lies outside the compute
//! subset is an [`AmberError`] of kind [`ErrorKind::Unsupported`]) and the compute subset of
//! VkScript ([`vkscript`]) into a [`Script`]: requirements (`DEVICE_FEATURE`, `DEVICE_EXTENSION`,
//! ...), shaders (GLSL, SPIRV-ASM, SPIRV-HEX source with a `TARGET_ENV`), buffers (already encoded
//! to bytes under their std140/std430 [`layout`]; elements are scalars, vectors, matrices, `T[]`
//! arrays, texel formats or `STRUCT`s), pipelines (shader, entry point, specialization, `SUBGROUP`
//! control, descriptor bindings, push constants) and commands (`RUN`, `EXPECT`, `COPY`, `REPEAT`).
//! Names are resolved at parse time, so a script that parses refers only to things it declares, and
//! nothing runs before the whole script has parsed.
//!
//! [`run()`] then checks each requirement with [`Backend::supports`], compiles every shader
//! ([`compile`]; a pipeline's `COMPILE_OPTIONS` definitions and `SHADER_OPTIMIZATION` passes,
//! [`optimize`], give it its own module), and executes the commands in order: each `RUN` becomes a
//! self-contained [`ComputeJob`] (SPIR-V words, bindings' bytes, push constants, group counts) and
//! the bytes the backend returns are written back, so buffers persist across runs and pipelines.
//! `EXPECT`s are evaluated with amber's rules ([`verify`]) and collected in a [`RunReport`].
//!
//! This crate does not execute SPIR-V itself: tangle's CPU executor (in the `tangle` crate) and the
//! Vulkan runner implement [`Backend`].

// The one exception, glslang's C API, is `compile/glslang_ffi.rs`.
#![deny(unsafe_code)]

pub mod backend;
pub mod compile;
pub mod debug;
pub mod error;
pub mod format;
pub mod layout;
pub mod optimize;
pub(crate) mod parse;
pub mod png_data;
pub mod report;
pub mod run;
pub mod script;
pub mod types;
pub mod value;
pub mod verify;
pub mod vkscript;

pub use backend::{Backend, BackendError, ComputeJob, JobBinding, JobImage, JobOutput};
pub use error::{AmberError, ErrorKind, Location};
pub use parse::{parse, parse_limited, parse_with, ParseOptions, DEFAULT_BUFFER_LIMIT};
pub use report::{ExpectResult, Mismatch, RunReport, Status, UbInstance, UbSummary};
pub use run::{run, run_observed};
pub use script::{Command, Requirement, Script};
