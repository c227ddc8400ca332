//! tangle-icd: tangle as a Vulkan installable client driver (issue 29). The Vulkan loader opens
//! this library (`libtangle_icd.so`, named by the manifest `tangle driver --manifest` writes),
//! and an unmodified Vulkan compute program then runs its dispatches on tangle's exact executor,
//! with the sanitizer's findings reported when the device is destroyed.
//!
//! # Data model
//!
//! Every Vulkan object is a Rust value in one process-wide table ([`objects`]), keyed by its
//! handle; the C boundary ([`ffi`], the crate's only `unsafe` code) reads the program's structs
//! into owned values, looks handles up, and calls the safe modules:
//! * [`caps`]: what the one physical device claims, from a tangle profile ([`config`]);
//!   [`features`] compares a device's requested features with them;
//! * device memory is one byte store per allocation ([`objects::Memory`]), mapped at a fixed
//!   address; a buffer is a view `(memory, offset, size)`, and a descriptor a view of a buffer;
//! * [`pipeline`]: shader modules are validated with tangle-validate, pipelines lowered by
//!   tangle-exec with their specialization;
//! * [`exec`]: command buffers record [`exec::Command`]s, which `vkQueueSubmit` runs in order on
//!   the submitting thread, each dispatch on the executor's worker pool;
//! * [`findings`]: the sanitizer's findings grouped per cause over the program run;
//! * [`image`] (images, views, samplers, texel buffers, formats) and [`transfer`] (their copy
//!   commands); [`query`] (timestamps); [`robustness`] (VK_EXT_pipeline_robustness);
//!   [`hazards`] finds hazards between dispatches, [`messages`] delivers findings to the
//!   program's debug-utils messengers, [`view`] dumps pictures' data (`TANGLE_VIEW`).
//!
//! docs/driver.md describes the entry points, the claims and what is still missing.

#![deny(unsafe_code)]

pub mod caps;
pub mod config;
pub mod exec;
pub mod features;
#[allow(unsafe_code)]
mod ffi;
pub mod findings;
pub mod hazards;
pub mod image;
pub mod manifest;
pub mod messages;
pub mod objects;
pub mod pipeline;
pub mod query;
pub mod robustness;
pub mod transfer;
pub mod view;
