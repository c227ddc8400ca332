//! What can go wrong on the Vulkan side, and what each failure means for a script: a missing
//! loader, driver, device or feature is "unsupported" (exit 77, naming it); a lost device or a
//! dispatch that did not finish in time is a device failure (exit 2, the runner names the `RUN`);
//! a shader the driver refuses is an invalid shader; anything else a failed run.

use tangle_amber::BackendError;

/// A Vulkan backend failure.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum VulkanError {
    /// The Vulkan loader library could not be opened.
    #[error("no Vulkan loader: {0}")]
    NoLoader(String),
    /// The loader found no driver (no ICD), or the instance could not be created.
    #[error("no Vulkan driver: {0}")]
    NoDriver(String),
    /// No physical device, or none at the index asked for.
    #[error("no Vulkan device: {0}")]
    NoDevice(String),
    /// The device lacks a feature, extension, property or limit the job needs.
    #[error("{0}")]
    Unsupported(String),
    /// The job or its shader cannot be run on any device (the driver refused it, or it does not
    /// match the job).
    #[error("{0}")]
    Invalid(String),
    /// `VK_ERROR_DEVICE_LOST`.
    #[error("the Vulkan device was lost ({0})")]
    DeviceLost(String),
    /// The dispatch's fence did not signal in time.
    #[error("the dispatch did not finish within {0} s (fence wait timed out)")]
    Timeout(f64),
    /// A Vulkan call failed otherwise (out of memory, ...).
    #[error("{call} failed: {result}")]
    Api {
        /// The Vulkan command.
        call: &'static str,
        /// Its `VkResult`, as ash prints it.
        result: String,
    },
}

impl VulkanError {
    /// Whether this failure means "this machine cannot run it" (exit 77).
    pub fn is_unsupported(&self) -> bool {
        matches!(
            self,
            VulkanError::NoLoader(_)
                | VulkanError::NoDriver(_)
                | VulkanError::NoDevice(_)
                | VulkanError::Unsupported(_)
        )
    }
}

impl From<VulkanError> for BackendError {
    fn from(e: VulkanError) -> BackendError {
        match e {
            VulkanError::DeviceLost(_) | VulkanError::Timeout(_) => {
                BackendError::Device(e.to_string())
            }
            VulkanError::Invalid(_) => BackendError::Invalid(e.to_string()),
            VulkanError::Api { .. } => BackendError::Failed(e.to_string()),
            _ => BackendError::Unsupported(e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_map_to_the_runner_statuses() {
        let cases = [
            (VulkanError::NoLoader("x".into()), "Unsupported"),
            (VulkanError::NoDriver("x".into()), "Unsupported"),
            (VulkanError::NoDevice("x".into()), "Unsupported"),
            (VulkanError::Unsupported("x".into()), "Unsupported"),
            (VulkanError::Invalid("x".into()), "Invalid"),
            (VulkanError::DeviceLost("x".into()), "Device"),
            (VulkanError::Timeout(1.0), "Device"),
            (
                VulkanError::Api {
                    call: "vkAllocateMemory",
                    result: "ERROR_OUT_OF_DEVICE_MEMORY".into(),
                },
                "Failed",
            ),
        ];
        for (e, kind) in cases {
            let unsupported = e.is_unsupported();
            let b = BackendError::from(e);
            let got = format!("{b:?}");
            assert!(got.starts_with(kind), "{got}");
            assert_eq!(unsupported, kind == "Unsupported");
        }
    }
}
