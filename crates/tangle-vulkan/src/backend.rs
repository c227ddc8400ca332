//! [`VulkanBackend`]: the Amber [`Backend`] on a Vulkan physical device. Requirements are
//! answered from the device's [`DeviceInfo`] and remembered, so each job's logical device
//! enables what the script asked for plus what the job's module needs ([`crate::plan`]), and
//! nothing else; a device is reused while the next job needs exactly the same.

use crate::device::DeviceInfo;
use crate::error::VulkanError;
use crate::features::Feature;
use crate::plan::plan;
use crate::raw::{Gpu, Instance};
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::ffi::OsString;
use std::sync::Arc;
use std::time::Duration;
use tangle_amber::backend::Requirement;
use tangle_amber::{Backend, BackendError, ComputeJob, JobOutput};

/// How to reach the device and how long a dispatch may take.
#[derive(Debug, Clone)]
pub struct VulkanOptions {
    /// The physical device's index (`--device N`).
    pub device: usize,
    /// How long to wait for one dispatch's fence.
    pub timeout: Duration,
    /// The loader library to open instead of the system's `libvulkan.so.1` (tests use a name
    /// that does not exist to see the no-loader path).
    pub loader: Option<OsString>,
}

impl Default for VulkanOptions {
    fn default() -> Self {
        VulkanOptions {
            device: 0,
            timeout: Duration::from_secs(60),
            loader: std::env::var_os(LOADER_ENV),
        }
    }
}

/// The environment variable naming the loader library to open instead of `libvulkan.so.1`.
pub const LOADER_ENV: &str = "TANGLE_VULKAN_LOADER";

/// Lists the physical devices (for `tangle profiles --devices`).
pub fn list_devices(loader: Option<&std::ffi::OsStr>) -> Result<Vec<DeviceInfo>, VulkanError> {
    let instance = Instance::new(loader)?;
    Ok(instance.devices()?.into_iter().map(|(_, d)| d).collect())
}

/// Runs Amber jobs on a Vulkan device.
pub struct VulkanBackend {
    instance: Arc<Instance>,
    physical: ash::vk::PhysicalDevice,
    info: DeviceInfo,
    gpu: Option<Gpu>,
    /// `DEVICE_FEATURE`s and `DEVICE_EXTENSION`s the script asked for (seen by `supports`).
    asked: RefCell<(BTreeSet<Feature>, BTreeSet<String>)>,
    timeout: Duration,
}

impl VulkanBackend {
    /// Opens the loader and picks the device; errors say which of loader, driver or device is
    /// missing.
    pub fn new(options: &VulkanOptions) -> Result<VulkanBackend, VulkanError> {
        let instance = Instance::new(options.loader.as_deref())?;
        let devices = instance.devices()?;
        let count = devices.len();
        let (physical, info) = devices.into_iter().nth(options.device).ok_or_else(|| {
            VulkanError::NoDevice(match count {
                0 => "the driver reports no physical device".to_string(),
                n => format!("no device {} (there are {n}: 0..{})", options.device, n - 1),
            })
        })?;
        info.usable().map_err(VulkanError::Unsupported)?;
        Ok(VulkanBackend {
            instance,
            physical,
            info,
            gpu: None,
            asked: RefCell::new((BTreeSet::new(), BTreeSet::new())),
            timeout: options.timeout,
        })
    }

    /// What the device reports.
    pub fn device(&self) -> &DeviceInfo {
        &self.info
    }
}

impl Backend for VulkanBackend {
    /// Bindings sharing bytes of one script buffer are descriptors of one `VkBuffer`
    /// ([`crate::plan::PlannedMemory`]).
    fn aliases_bindings(&self) -> bool {
        true
    }

    fn supports(&self, requirement: &Requirement) -> Result<(), String> {
        self.info.supports(requirement)?;
        let mut asked = self.asked.borrow_mut();
        match requirement {
            Requirement::Feature(name) => asked.0.extend(Feature::from_amber(name)),
            Requirement::Extension(name) => {
                asked.1.insert(name.clone());
            }
            Requirement::Property(_) | Requirement::InstanceExtension(_) => {}
        }
        Ok(())
    }

    fn run_compute(&mut self, job: &ComputeJob) -> Result<JobOutput, BackendError> {
        if !job.debug.is_empty() {
            return Err(BackendError::Unsupported(
                "DEBUG: following an invocation's source lines needs tangle's CPU executor".into(),
            ));
        }
        let plan = {
            let asked = self.asked.borrow();
            plan(job, &self.info, &asked.0, &asked.1)?
        };
        let reusable = self.gpu.as_ref().is_some_and(|g| {
            !g.is_broken() && g.features == plan.features && g.extensions == plan.extensions
        });
        if !reusable {
            // A broken device is leaked by its own Drop; a healthy one is destroyed first.
            self.gpu = None;
            self.gpu = Some(Gpu::open(
                Arc::clone(&self.instance),
                self.physical,
                &plan.features,
                &plan.extensions,
            )?);
        }
        let gpu = self
            .gpu
            .as_mut()
            .ok_or_else(|| BackendError::Failed("no device".into()))?;
        let (bindings, elapsed) = gpu.dispatch(job, &plan, self.timeout)?;
        Ok(JobOutput {
            bindings,
            undefined_behaviour: Vec::new(),
            notes: Vec::new(),
            dispatch_time: Some(elapsed),
            debug_paths: Vec::new(),
            // A driver reports no undefined behaviour.
            findings: Vec::new(),
            warnings: Vec::new(),
        })
    }
}
