//! The Amber [`Backend`] on tangle's CPU executor: validate the module (`tangle-validate`),
//! lower it (`tangle-exec`), dispatch, and report sanitizer findings as undefined behaviour.
//!
//! Requirements (`DEVICE_FEATURE`, `DEVICE_EXTENSION`, ...) are answered from the device
//! [`Profile`]: its subgroup operations for `SubgroupSupportedOperations.*` and the rotate
//! features/extension, its cooperative-matrix list for VK_KHR_cooperative_matrix and its
//! `cooperativeMatrix` feature, and a fixed list of what the executor implements for the rest.

use std::collections::HashMap;
use tangle_amber::backend::{RequiredSize, Requirement, SubgroupControl};
use tangle_amber::{Backend, BackendError, ComputeJob, JobOutput};
use tangle_exec::profile::subgroup_ops;
use tangle_exec::{Device, ExecError, Pipeline, Profile, Resources, RunOptions, SpecConstants};
use tangle_spirv::{Module, TargetEnv};
use tangle_validate::Validated;

/// Features every profile offers: the executor implements them exactly, independent of the
/// device description.
const FEATURES: &[&str] = &[
    "shaderInt64",
    "shaderInt16",
    "shaderFloat64",
    "Float16Int8Features.shaderFloat16",
    "Float16Int8Features.shaderInt8",
    "Storage8BitFeatures.storageBuffer8BitAccess",
    "Storage8BitFeatures.uniformAndStorageBuffer8BitAccess",
    "Storage8BitFeatures.storagePushConstant8",
    "Storage16BitFeatures.storageBuffer16BitAccess",
    "Storage16BitFeatures.uniformAndStorageBuffer16BitAccess",
    "Storage16BitFeatures.storagePushConstant16",
    "VariablePointerFeatures.variablePointersStorageBuffer",
    "VariablePointerFeatures.variablePointers",
    "ShaderSubgroupExtendedTypesFeatures.shaderSubgroupExtendedTypes",
    "VulkanMemoryModelFeatures.vulkanMemoryModel",
    "VulkanMemoryModelFeatures.vulkanMemoryModelDeviceScope",
    "ZeroInitializeWorkgroupMemoryFeatures.shaderZeroInitializeWorkgroupMemory",
    "SubgroupSizeControl.subgroupSizeControl",
    "SubgroupSizeControl.computeFullSubgroups",
    "SubgroupSupportedStages.compute",
    "BufferDeviceAddressFeatures.bufferDeviceAddress",
    "ShaderIntegerDotProductFeatures.shaderIntegerDotProduct",
    "ShaderMaximalReconvergenceFeatures.shaderMaximalReconvergence",
];

/// Device extensions the executor implements (rotate is checked against the profile).
const EXTENSIONS: &[&str] = &[
    "VK_KHR_shader_maximal_reconvergence",
    "VK_KHR_shader_integer_dot_product",
    "VK_KHR_shader_float16_int8",
    "VK_KHR_16bit_storage",
    "VK_KHR_8bit_storage",
    "VK_KHR_storage_buffer_storage_class",
    "VK_KHR_variable_pointers",
    "VK_EXT_subgroup_size_control",
    "VK_KHR_shader_subgroup_extended_types",
    "VK_KHR_vulkan_memory_model",
    "VK_KHR_buffer_device_address",
    "VK_KHR_spirv_1_4",
    "VK_KHR_shader_float_controls",
    "VK_KHR_shader_subgroup_uniform_control_flow",
    "VK_KHR_zero_initialize_workgroup_memory",
    "VK_KHR_shader_non_semantic_info",
    "VK_KHR_shader_terminate_invocation",
    "VK_KHR_shader_atomic_int64",
];

/// Properties that hold for exact IEEE execution: denormals are preserved, rounding is to
/// nearest even, and signed zeros, infinities and NaNs are preserved.
const PROPERTY_PREFIXES: &[&str] = &[
    "FloatControlsProperties.shaderDenormPreserveFloat",
    "FloatControlsProperties.shaderRoundingModeRTEFloat",
    "FloatControlsProperties.shaderSignedZeroInfNanPreserveFloat",
];

/// Runs Amber jobs on tangle's CPU executor.
#[derive(Debug, Clone)]
pub struct CpuBackend {
    profile: Profile,
    options: RunOptions,
    /// Pipelines already validated and lowered, so a `REPEAT`ed `RUN` pays for it once.
    pipelines: HashMap<PipelineKey, Pipeline>,
    /// The traces of the dispatches so far, when the options ask for them.
    traces: Vec<tangle_exec::Trace>,
}

/// What decides a pipeline: the module, its environment, entry point, specialization and
/// subgroup control.
type PipelineKey = (Vec<u32>, String, String, Vec<(u32, u32)>, SubgroupControl);

impl CpuBackend {
    /// A backend for `profile` with the given dispatch options (threads, step and time limits).
    pub fn new(profile: Profile, options: RunOptions) -> Self {
        CpuBackend {
            profile,
            options,
            pipelines: HashMap::new(),
            traces: Vec::new(),
        }
    }

    /// The traces of the dispatches run so far (when [`RunOptions::trace`] is set), taken out.
    pub fn take_traces(&mut self) -> Vec<tangle_exec::Trace> {
        std::mem::take(&mut self.traces)
    }

    /// Validates, lowers and checks the job's pipeline (or takes it from the cache).
    fn pipeline(&mut self, job: &ComputeJob) -> Result<Pipeline, BackendError> {
        let key = (
            job.spirv.clone(),
            job.target_env.to_string(),
            job.entry_point.clone(),
            job.spec_constants.clone(),
            job.subgroup,
        );
        if let Some(p) = self.pipelines.get(&key) {
            return Ok(p.clone());
        }
        let module =
            Module::from_words(&job.spirv).map_err(|e| BackendError::Invalid(e.to_string()))?;
        let module = validate(&module, job.target_env)?;
        let profile = self.profile_for(job)?;
        let subgroup_size = profile.subgroup_size;
        let device = Device::new(profile);
        let spec: SpecConstants = job
            .spec_constants
            .iter()
            .map(|(id, bits)| (*id, u64::from(*bits)))
            .collect();
        let pipeline = device
            .compute_pipeline(&module, &job.entry_point, &spec)
            .map_err(exec_error)?;
        if job.subgroup.fully_populated
            && pipeline.local_size()[0].checked_rem(subgroup_size) != Some(0)
        {
            // VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT needs the local size in x
            // to be a multiple of the subgroup size.
            return Err(BackendError::Unsupported(format!(
                "FULLY_POPULATED needs the local size in x ({}) to be a multiple of the subgroup size {subgroup_size}",
                pipeline.local_size()[0]
            )));
        }
        self.pipelines.insert(key, pipeline.clone());
        Ok(pipeline)
    }

    /// The subgroup size a job runs with: its `REQUIRED_SIZE`, else the profile's.
    fn profile_for(&self, job: &ComputeJob) -> Result<Profile, BackendError> {
        match job.subgroup.required_size {
            None | Some(RequiredSize::Min) | Some(RequiredSize::Max) => Ok(self.profile.clone()),
            Some(RequiredSize::Size(n)) => self
                .profile
                .clone()
                .with_subgroup_size(n)
                .ok_or_else(|| BackendError::Unsupported(format!("subgroup size {n}"))),
        }
    }
}

/// The Vulkan environment a module of this SPIR-V version runs in (what a Vulkan driver checks).
pub fn vulkan_env(env: TargetEnv) -> TargetEnv {
    if env.is_vulkan() {
        return env;
    }
    let name = match env.spirv_version().minor {
        0 => "vulkan1.0",
        1..=3 => "vulkan1.1",
        4 => "vulkan1.1spv1.4",
        5 => "vulkan1.2",
        _ => "vulkan1.3",
    };
    TargetEnv::parse(name).unwrap_or(env)
}

/// Validates the module; the error lists the validator's first errors.
fn validate(module: &Module, env: TargetEnv) -> Result<Validated<'_>, BackendError> {
    let options = tangle_validate::ValidateOptions::default();
    tangle_validate::validate(module, vulkan_env(env), &options).map_err(|diagnostics| {
        // Warnings count too: they mirror the reference validator's SPV_WARNING findings,
        // which make a module invalid.
        let shown: Vec<String> = diagnostics
            .iter()
            .take(3)
            .map(|d| d.render(module, "shader", None).trim_end().to_string())
            .collect();
        BackendError::Invalid(format!(
            "the module does not validate:\n{}",
            shown.join("\n")
        ))
    })
}

/// What an executor error means for the script: a device limit or a missing feature is
/// "unsupported" (another device could run it, exit 77); a job invalid on every device, such as
/// a zero workgroup dimension from a specialization constant, is an invalid shader (exit 1).
fn exec_error(e: ExecError) -> BackendError {
    match e {
        ExecError::Unsupported { .. } | ExecError::ProfileLacks { .. } | ExecError::Limit(_) => {
            BackendError::Unsupported(e.to_string())
        }
        ExecError::NoEntryPoint(_)
        | ExecError::Malformed { .. }
        | ExecError::Resource(_)
        | ExecError::InvalidEverywhere(_) => BackendError::Invalid(e.to_string()),
        ExecError::Trap(_) => BackendError::Failed(e.to_string()),
    }
}

impl Backend for CpuBackend {
    fn supports(&self, requirement: &Requirement) -> Result<(), String> {
        let ops = self.profile.subgroup_operations;
        let has = |bit: u32| ops & bit != 0;
        // A driver exposes VK_KHR_cooperative_matrix and its feature only with a non-empty
        // property list (lavapipe on 128-bit hosts has neither).
        let coopmat = !self.profile.cooperative_matrix.is_empty();
        let ok = match requirement {
            Requirement::Feature(name) => match name.as_str() {
                "CooperativeMatrixFeaturesKHR.cooperativeMatrix" => coopmat,
                "ShaderSubgroupRotateFeatures.shaderSubgroupRotate" => has(subgroup_ops::ROTATE),
                "ShaderSubgroupRotateFeatures.shaderSubgroupRotateClustered" => {
                    has(subgroup_ops::ROTATE_CLUSTERED)
                }
                n => match n.strip_prefix("SubgroupSupportedOperations.") {
                    Some(op) => match op {
                        "basic" => has(subgroup_ops::BASIC),
                        "vote" => has(subgroup_ops::VOTE),
                        "arithmetic" => has(subgroup_ops::ARITHMETIC),
                        "ballot" => has(subgroup_ops::BALLOT),
                        "shuffle" => has(subgroup_ops::SHUFFLE),
                        "shuffleRelative" => has(subgroup_ops::SHUFFLE_RELATIVE),
                        "clustered" => has(subgroup_ops::CLUSTERED),
                        "quad" => has(subgroup_ops::QUAD),
                        "rotate" => has(subgroup_ops::ROTATE),
                        "rotateClustered" => has(subgroup_ops::ROTATE_CLUSTERED),
                        _ => false,
                    },
                    None => FEATURES.contains(&n),
                },
            },
            Requirement::Extension(name) => match name.as_str() {
                "VK_KHR_shader_subgroup_rotate" => has(subgroup_ops::ROTATE),
                "VK_KHR_cooperative_matrix" => coopmat,
                n => EXTENSIONS.contains(&n),
            },
            Requirement::Property(name) => PROPERTY_PREFIXES.iter().any(|p| name.starts_with(p)),
            Requirement::InstanceExtension(name) => {
                name == "VK_KHR_get_physical_device_properties2"
            }
        };
        if ok {
            Ok(())
        } else {
            Err(format!(
                "the '{}' profile does not offer it",
                self.profile.name
            ))
        }
    }

    fn run_compute(&mut self, job: &ComputeJob) -> Result<JobOutput, BackendError> {
        let pipeline = self.pipeline(job)?;
        let mut resources = Resources {
            push_constants: job.push_constants.clone(),
            ..Resources::default()
        };
        for b in &job.bindings {
            resources
                .buffers
                .insert((b.set, b.binding), b.bytes.clone());
        }
        let report = pipeline
            .dispatch(&mut resources, job.groups, &self.options)
            .map_err(exec_error)?;
        if let Some(trace) = report.trace {
            self.traces.push(trace);
        }
        let bindings = job
            .bindings
            .iter()
            .map(|b| {
                resources
                    .buffers
                    .get(&(b.set, b.binding))
                    .cloned()
                    .unwrap_or_else(|| b.bytes.clone())
            })
            .collect();
        // The module is read again only to show the lines of findings.
        let module = (!report.summaries.is_empty())
            .then(|| Module::from_words(&job.spirv).ok())
            .flatten();
        let undefined_behaviour = report
            .summaries
            .iter()
            .map(|s| crate::findings::render(s, module.as_ref()))
            .collect();
        let findings = report
            .summaries
            .iter()
            .map(|s| crate::findings::machine(s, &report.diagnostics))
            .collect();
        let mut notes = Vec::new();
        if report.stats.dropped_diagnostics > 0 {
            notes.push(format!(
                "{} findings were counted but not kept one by one (--max-findings)",
                report.stats.dropped_diagnostics
            ));
        }
        Ok(JobOutput {
            bindings,
            undefined_behaviour,
            findings,
            notes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requirements_follow_the_profile() {
        let no_rotate = Profile {
            subgroup_operations: subgroup_ops::ALL
                & !(subgroup_ops::ROTATE | subgroup_ops::ROTATE_CLUSTERED),
            ..Profile::default()
        };
        let full = CpuBackend::new(Profile::default(), RunOptions::default());
        let lacking = CpuBackend::new(no_rotate, RunOptions::default());
        let no_coopmat = CpuBackend::new(
            Profile {
                cooperative_matrix: Vec::new(),
                ..Profile::default()
            },
            RunOptions::default(),
        );
        let feature = |n: &str| Requirement::Feature(n.to_string());
        for r in [
            feature("ShaderSubgroupRotateFeatures.shaderSubgroupRotate"),
            feature("SubgroupSupportedOperations.rotateClustered"),
            Requirement::Extension("VK_KHR_shader_subgroup_rotate".into()),
        ] {
            assert_eq!(full.supports(&r), Ok(()), "{r}");
            assert!(lacking.supports(&r).is_err(), "{r}");
        }
        for r in [
            feature("shaderInt64"),
            feature("SubgroupSupportedOperations.ballot"),
            feature("ShaderIntegerDotProductFeatures.shaderIntegerDotProduct"),
            Requirement::Extension("VK_KHR_cooperative_matrix".into()),
            Requirement::Property("FloatControlsProperties.shaderDenormPreserveFloat32".into()),
        ] {
            assert_eq!(lacking.supports(&r), Ok(()), "{r}");
        }
        for r in [
            feature("CooperativeMatrixFeaturesKHR.cooperativeMatrix"),
            Requirement::Extension("VK_KHR_cooperative_matrix".into()),
        ] {
            assert_eq!(full.supports(&r), Ok(()), "{r}");
            let err = no_coopmat.supports(&r).expect_err("no coopmat entries");
            assert!(err.contains("'default' profile"), "{err}");
            for p in Profile::all() {
                let named = CpuBackend::new(p.clone(), RunOptions::default());
                assert_eq!(named.supports(&r), Ok(()), "{} {r}", p.name);
            }
        }
        for r in [
            feature("geometryShader"),
            feature("SubgroupSupportedOperations.bogus"),
            Requirement::Extension("VK_KHR_ray_query".into()),
            Requirement::Property("FloatControlsProperties.shaderDenormFlushToZeroFloat32".into()),
            Requirement::InstanceExtension("VK_KHR_surface".into()),
        ] {
            let err = full.supports(&r).expect_err("unsupported");
            assert!(err.contains("'default' profile"), "{err}");
        }
    }

    #[test]
    fn modules_are_validated_for_the_matching_vulkan_version() {
        for (env, vk) in [
            ("spv1.0", "vulkan1.0"),
            ("spv1.3", "vulkan1.1"),
            ("spv1.4", "vulkan1.1spv1.4"),
            ("spv1.5", "vulkan1.2"),
            ("spv1.6", "vulkan1.3"),
            ("vulkan1.2", "vulkan1.2"),
        ] {
            let env = TargetEnv::parse(env).expect("known env");
            assert_eq!(vulkan_env(env).to_string(), vk);
        }
    }
}
