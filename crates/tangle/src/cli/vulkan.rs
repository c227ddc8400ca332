//! The Vulkan side of `tangle run --backend vulkan` (and of `tangle diff`): opening the device
//! and turning a loader, driver or device that is missing into the script's `UNSUPPORTED`
//! verdict (exit 77, naming what is missing) rather than an error.

use std::time::Duration;
use tangle_amber::{RunReport, Script, Status};
use tangle_vulkan::{VulkanBackend, VulkanError, VulkanOptions};

/// The backend options for `--device N` and a dispatch time limit.
pub fn options(device: Option<usize>, timeout: Duration) -> VulkanOptions {
    VulkanOptions {
        device: device.unwrap_or(0),
        timeout,
        ..VulkanOptions::default()
    }
}

/// A report that says `script` could not run here, and why (its `EXPECT`s all unreached).
pub fn unsupported(script: &Script, e: &VulkanError) -> RunReport {
    let mut report = RunReport::new();
    report.unreached = tangle_amber::run::tally(&script.commands).1;
    // Every failure to open a device means this machine cannot run the script: no loader, no
    // driver, no such device, a device too old, or a driver that fails its first queries.
    report.set(Status::Unsupported, e.to_string());
    report
}

/// A note naming the device a report's dispatches ran on.
pub fn device_note(backend: &VulkanBackend) -> String {
    let d = backend.device();
    format!(
        "ran on Vulkan device {}: {} ({})",
        d.index, d.name, d.driver
    )
}

/// Runs `script` on the Vulkan device `options` names.
pub fn run(script: &Script, options: &VulkanOptions) -> RunReport {
    match VulkanBackend::new(options) {
        Ok(mut backend) => {
            let mut report = tangle_amber::run(script, &mut backend);
            report.notes.push(device_note(&backend));
            report
        }
        Err(e) => unsupported(script, &e),
    }
}
