//! tangle-vulkan: runs the same Amber compute jobs as tangle's CPU executor on a Vulkan driver
//! (lavapipe in CI, NVIDIA on the GPU machine) through `ash`, so their results can be compared
//! (`tangle diff`).
//!
//! # Data model
//! The system loader is opened at run time ([`raw::Instance`]), so a binary without one still
//! starts and says "no Vulkan loader" (exit 77). Each physical device is read once into a
//! [`DeviceInfo`]: plain data (features tangle knows as [`Feature`]s, extensions, subgroup,
//! integer-dot-product and float-controls properties, limits, cooperative-matrix entries) that
//! answers the script's `DEVICE_FEATURE`/`DEVICE_EXTENSION` lines and becomes a tangle
//! [`tangle_exec::Profile`] for the CPU side. Each [`tangle_amber::ComputeJob`] is translated
//! into a [`plan::DispatchPlan`] (descriptor layouts with their arrays, where each binding lives:
//! one `VkBuffer` per run of bindings sharing a script buffer's bytes, an image of its own for
//! an image; push-constant range, specialization map
//! with each constant's own size, required subgroup size and full subgroups, and the features and
//! extensions to enable, read from the module's capabilities by [`facts`]) before any Vulkan
//! object exists, refusing what the device lacks by name; then [`raw`] creates a logical device
//! enabling exactly that, runs the dispatch, waits on a fence with a timeout and reads the
//! buffers back.
//!
//! All `unsafe` code is in [`raw`]; the rest of the crate denies it.

#![deny(unsafe_code)]

pub mod backend;
pub mod device;
pub mod error;
pub mod facts;
pub mod features;
pub mod plan;
#[allow(unsafe_code)]
pub mod raw;
pub mod resources;

pub use backend::{list_devices, VulkanBackend, VulkanOptions, LOADER_ENV};
pub use device::DeviceInfo;
pub use error::VulkanError;
pub use features::Feature;
pub use raw::{device_left_running, exit_now};
