//! The Amber [`Backend`] on tangle's CPU executor: validate the module (`tangle-validate`),
//! lower it (`tangle-exec`), dispatch, and report sanitizer findings as undefined behaviour.
//!
//! Requirements (`DEVICE_FEATURE`, `DEVICE_EXTENSION`, ...) are answered from the device
//! [`Profile`]: its subgroup operations for `SubgroupSupportedOperations.*` and the rotate
//! features/extension, its cooperative-matrix list for VK_KHR_cooperative_matrix and its
//! `cooperativeMatrix` feature, and a fixed list of what the executor implements for the rest.

use std::collections::HashMap;
use tangle_amber::backend::{
    AddressMode, BindingKind, BorderColor, BufferRobustness, Filter, PathEvent, RequiredSize,
    Requirement, SamplerState, SubgroupControl,
};
use tangle_amber::{Backend, BackendError, ComputeJob, JobBinding, JobImage, JobOutput};
use tangle_exec::check::robust::Robustness;
use tangle_exec::profile::subgroup_ops;
use tangle_exec::semantics::sampler::Sampler;
use tangle_exec::semantics::texel::TexelFormat;
use tangle_exec::{
    Device, ExecError, Image, Pipeline, Profile, Resources, RunOptions, SpecConstants, TexelView,
};
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
    // Out-of-bounds buffer accesses as the features define them (tangle_exec::check::robust).
    BufferRobustness::BUFFER_FEATURE,
    BufferRobustness::BUFFER2_FEATURE,
    // Out-of-bounds image accesses as robustImageAccess2 defines them (tangle_exec::run::image).
    BufferRobustness::IMAGE2_FEATURE,
    // Accesses through null descriptors as nullDescriptor defines them (tangle_exec::check::null).
    BufferRobustness::NULL_FEATURE,
    "SubgroupSizeControl.computeFullSubgroups",
    "SubgroupSupportedStages.compute",
    "BufferDeviceAddressFeatures.bufferDeviceAddress",
    "ShaderIntegerDotProductFeatures.shaderIntegerDotProduct",
    "ShaderMaximalReconvergenceFeatures.shaderMaximalReconvergence",
    // Descriptor arrays of buffers: each element its own descriptor, any index, unbound
    // elements reported only when accessed.
    "shaderStorageBufferArrayDynamicIndexing",
    "shaderUniformBufferArrayDynamicIndexing",
    "DescriptorIndexingFeatures.runtimeDescriptorArray",
    "DescriptorIndexingFeatures.shaderStorageBufferArrayNonUniformIndexing",
    "DescriptorIndexingFeatures.shaderUniformBufferArrayNonUniformIndexing",
    "DescriptorIndexingFeatures.descriptorBindingPartiallyBound",
    // Descriptor arrays of images, texel buffers, samplers and combined image samplers, sized
    // or runtime-sized, likewise.
    "shaderSampledImageArrayDynamicIndexing",
    "shaderStorageImageArrayDynamicIndexing",
    "DescriptorIndexingFeatures.shaderSampledImageArrayNonUniformIndexing",
    "DescriptorIndexingFeatures.shaderStorageImageArrayNonUniformIndexing",
    "DescriptorIndexingFeatures.shaderUniformTexelBufferArrayDynamicIndexing",
    "DescriptorIndexingFeatures.shaderStorageTexelBufferArrayDynamicIndexing",
    "DescriptorIndexingFeatures.shaderUniformTexelBufferArrayNonUniformIndexing",
    "DescriptorIndexingFeatures.shaderStorageTexelBufferArrayNonUniformIndexing",
    // Storage images and texel buffers of every format in tangle_exec::semantics::texel, with
    // or without a declared format.
    "shaderStorageImageExtendedFormats",
    "shaderStorageImageReadWithoutFormat",
    "shaderStorageImageWriteWithoutFormat",
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
    "VK_EXT_descriptor_indexing",
    "VK_EXT_robustness2",
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
    /// The dispatches so far with their traces, when the options ask for them.
    traced: Vec<TracedRun>,
    /// With a trace: how many invocations of each dispatch (the first by workgroup, then by
    /// `LocalInvocationIndex`) the trace records values for too (`tangle run --view`).
    watch_first: usize,
    /// Invocations the dispatches so far ran on the executor's wide path.
    wide_invocations: u64,
    /// Of those, the invocations run as native code.
    jit_invocations: u64,
    /// The buffer robustness every dispatch runs with (`--robustness`), whatever the script's
    /// features enable; `None`: theirs.
    robustness: Option<Robustness>,
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
            traced: Vec::new(),
            watch_first: 0,
            wide_invocations: 0,
            jit_invocations: 0,
            robustness: None,
        }
    }

    /// Runs every dispatch with `robustness` (`--robustness`) instead of what the script's
    /// `DEVICE_FEATURE`s enable.
    pub fn with_robustness(mut self, robustness: Robustness) -> Self {
        self.robustness = Some(robustness);
        self
    }

    /// Invocations the dispatches so far ran on the executor's wide path
    /// ([`tangle_exec::wide`]), of all they ran.
    pub fn wide_invocations(&self) -> u64 {
        self.wide_invocations
    }

    /// Invocations the dispatches so far ran as native code ([`tangle_exec::jit`]), of those
    /// on the wide path.
    pub fn jit_invocations(&self) -> u64 {
        self.jit_invocations
    }

    /// The traces of the dispatches run so far (when [`RunOptions::trace`] is set), taken out.
    pub fn take_traces(&mut self) -> Vec<tangle_exec::Trace> {
        self.take_traced().into_iter().map(|r| r.trace).collect()
    }

    /// The dispatches run so far with their traces (when [`RunOptions::trace`] is set), taken
    /// out.
    pub fn take_traced(&mut self) -> Vec<TracedRun> {
        std::mem::take(&mut self.traced)
    }

    /// With [`RunOptions::trace`]: records the values of the first `n` invocations of each
    /// dispatch too (`values` events), where the script's `DEBUG` names none.
    pub fn watching_first(mut self, n: usize) -> Self {
        self.watch_first = n;
        self
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

/// The executor's image for an image or texel buffer binding; a format tangle does not
/// implement is unsupported (another device could run the job).
fn job_image(b: &JobBinding, image: &JobImage) -> Result<Image, BackendError> {
    let format = TexelFormat::by_name(&image.format)
        .ok_or_else(|| BackendError::Unsupported(format!("images of format {}", image.format)))?;
    Ok(Image {
        format,
        extent: image.extent,
        texels: b.bytes.clone(),
    })
}

/// The executor's sampler for an Amber sampler; depth-comparison samplers are unsupported.
fn job_sampler(s: &SamplerState) -> Result<Sampler, BackendError> {
    use tangle_exec::semantics::sampler as x;
    if s.compare {
        return Err(BackendError::Unsupported(
            "depth-comparison samplers (COMPARE on)".to_string(),
        ));
    }
    let filter = |f: Filter| match f {
        Filter::Nearest => x::Filter::Nearest,
        Filter::Linear => x::Filter::Linear,
    };
    let address = |a: AddressMode| match a {
        AddressMode::Repeat => x::AddressMode::Repeat,
        AddressMode::MirroredRepeat => x::AddressMode::MirroredRepeat,
        AddressMode::ClampToEdge => x::AddressMode::ClampToEdge,
        AddressMode::ClampToBorder => x::AddressMode::ClampToBorder,
        AddressMode::MirrorClampToEdge => x::AddressMode::MirrorClampToEdge,
    };
    let sampler = Sampler {
        mag_filter: filter(s.mag_filter),
        min_filter: filter(s.min_filter),
        address: s.address.map(address),
        border: match s.border {
            BorderColor::FloatTransparentBlack => x::BorderColor::FloatTransparentBlack,
            BorderColor::IntTransparentBlack => x::BorderColor::IntTransparentBlack,
            BorderColor::FloatOpaqueBlack => x::BorderColor::FloatOpaqueBlack,
            BorderColor::IntOpaqueBlack => x::BorderColor::IntOpaqueBlack,
            BorderColor::FloatOpaqueWhite => x::BorderColor::FloatOpaqueWhite,
            BorderColor::IntOpaqueWhite => x::BorderColor::IntOpaqueWhite,
        },
        min_lod: s.min_lod,
        max_lod: s.max_lod,
        normalized: s.normalized,
    };
    x::check_unnormalized(&sampler, s.mipmap_mode == Filter::Nearest)
        .map_err(BackendError::Invalid)?;
    Ok(sampler)
}

impl Backend for CpuBackend {
    /// Bindings of one buffer's overlapping ranges are views of one allocation
    /// ([`crate::cpu_views`]).
    fn aliases_bindings(&self) -> bool {
        true
    }

    fn supports(&self, requirement: &Requirement) -> Result<(), String> {
        let ops = self.profile.subgroup_operations;
        let has = |bit: u32| ops & bit != 0;
        // A driver exposes VK_KHR_cooperative_matrix and its feature only with a non-empty
        // property list (lavapipe on 128-bit hosts has neither).
        let coopmat = !self.profile.cooperative_matrix.is_empty();
        // bfloat16 scalars and matrices where the profile lists bfloat16 matrices (as the NVIDIA
        // and Intel drivers do); its dot product is not offered: tangle refuses it (its
        // precision is the implementation's).
        let bf16 = self.profile.cooperative_matrix.iter().any(|e| {
            [e.a, e.b, e.c, e.result].contains(&tangle_exec::profile::ComponentType::BFloat16)
        });
        let ok = match requirement {
            Requirement::Feature(name) => match name.as_str() {
                "CooperativeMatrixFeaturesKHR.cooperativeMatrix" => coopmat,
                // Element by element, as plain accesses (tangle_exec::run::coopmat).
                BufferRobustness::COOPMAT_FEATURE => coopmat,
                "ShaderBfloat16FeaturesKHR.shaderBFloat16Type"
                | "ShaderBfloat16FeaturesKHR.shaderBFloat16CooperativeMatrix" => bf16,
                "WorkgroupMemoryExplicitLayoutFeaturesKHR.workgroupMemoryExplicitLayout"
                | "WorkgroupMemoryExplicitLayoutFeaturesKHR.workgroupMemoryExplicitLayoutScalarBlockLayout"
                | "WorkgroupMemoryExplicitLayoutFeaturesKHR.workgroupMemoryExplicitLayout8BitAccess"
                | "WorkgroupMemoryExplicitLayoutFeaturesKHR.workgroupMemoryExplicitLayout16BitAccess" => {
                    self.profile.workgroup_memory_explicit_layout
                }
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
                "VK_KHR_shader_bfloat16" => bf16,
                "VK_KHR_workgroup_memory_explicit_layout" => {
                    self.profile.workgroup_memory_explicit_layout
                }
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
        // The time limit bounds the whole RUN: validation and lowering (a pipeline not made
        // before), the native compile and the dispatch.
        let run_started = std::time::Instant::now();
        let pipeline = self.pipeline(job)?;
        if run_started.elapsed() >= self.options.time_limit {
            return Err(exec_error(
                tangle_exec::Trap::TimeLimit {
                    limit_ms: self.options.time_limit.as_millis(),
                    at: None,
                }
                .into(),
            ));
        }
        let mut resources = Resources {
            push_constants: job.push_constants.clone(),
            ..Resources::default()
        };
        // Bindings sharing bytes of one script buffer are views of one allocation.
        let views = crate::cpu_views::shared_views(&job.bindings)?;
        for (b, view) in job.bindings.iter().zip(&views) {
            if let Some(sampler) = &b.sampler {
                // Element 0 of an array of samplers is also its binding's sampler, as for images.
                let sampler = job_sampler(sampler)?;
                match b.element {
                    0 => resources.samplers.insert((b.set, b.binding), sampler),
                    i => resources
                        .sampler_elements
                        .insert((b.set, b.binding, i), sampler),
                };
            }
            let key = (b.set, b.binding, b.element);
            if let (Some(image), Some(view)) = (&b.image, view) {
                let format = job_image(b, image)?.format;
                let view = view.clone();
                resources
                    .texel_views
                    .insert(key, TexelView { format, view });
                continue;
            }
            if let Some(view) = view {
                resources.views.insert(key, view.clone());
                continue;
            }
            if let Some(image) = &b.image {
                // As for buffers, element 0 of an array of images is also its binding's image.
                let image = job_image(b, image)?;
                match b.element {
                    0 => resources.images.insert((b.set, b.binding), image),
                    i => resources
                        .image_elements
                        .insert((b.set, b.binding, i), image),
                };
                continue;
            }
            if b.kind == BindingKind::Sampler {
                continue;
            }
            // Element 0 of an array is also the plain buffer of its binding (a descriptor array
            // with one element bound); the executor tells arrays from plain buffers by the shader.
            match b.element {
                0 => resources
                    .buffers
                    .insert((b.set, b.binding), b.bytes.clone()),
                i => resources
                    .elements
                    .insert((b.set, b.binding, i), b.bytes.clone()),
            };
        }
        // The robustness the script's features enable, unless `--robustness` named one; DEBUG
        // follows invocations through the dispatch's trace.
        let robustness = self.robustness.unwrap_or(match job.robustness {
            BufferRobustness::None => Robustness::Off,
            BufferRobustness::Buffer => Robustness::Buffer,
            BufferRobustness::Buffer2 => Robustness::Buffer2,
        });
        let watch = match job.debug.is_empty() {
            false => job.debug.clone(),
            true if self.options.trace => tangle_exec::trace::first_invocations(
                job.groups,
                pipeline.local_size(),
                self.watch_first,
            ),
            true => self.options.watch.clone(),
        };
        let options = RunOptions {
            trace: self.options.trace || !watch.is_empty(),
            watch,
            started: Some(run_started),
            robustness,
            image_robustness: job.image_robustness,
            coopmat_robustness: job.coopmat_robustness,
            null_descriptor: job.null_descriptor,
            ..self.options.clone()
        };
        let started = std::time::Instant::now();
        let report = pipeline
            .dispatch(&mut resources, job.groups, &options)
            .map_err(exec_error)?;
        let dispatch_time = Some(started.elapsed());
        self.wide_invocations += report.stats.wide_invocations;
        self.jit_invocations += report.stats.jit_invocations;
        let debug_paths = match &report.trace {
            Some(trace) if !job.debug.is_empty() => {
                debug_paths(trace, &job.debug, job.groups, pipeline.local_size())?
            }
            _ => Vec::new(),
        };
        let bindings: Vec<Vec<u8>> = job
            .bindings
            .iter()
            .zip(&views)
            .map(|(b, view)| {
                if let Some(bytes) = view.as_ref().and_then(|v| v.read()) {
                    return bytes;
                }
                let after = match (b.element, &b.image) {
                    _ if b.kind == BindingKind::Sampler => return Vec::new(),
                    (0, Some(_)) => resources.images.get(&(b.set, b.binding)).map(|i| &i.texels),
                    (i, Some(_)) => resources
                        .image_elements
                        .get(&(b.set, b.binding, i))
                        .map(|i| &i.texels),
                    (0, None) => resources.buffers.get(&(b.set, b.binding)),
                    (i, None) => resources.elements.get(&(b.set, b.binding, i)),
                };
                after.cloned().unwrap_or_else(|| b.bytes.clone())
            })
            .collect();
        // The module is read again only to show the lines of findings.
        let module = (!report.summaries.is_empty())
            .then(|| Module::from_words(&job.spirv).ok())
            .flatten();
        // Warnings are reported but fail the run only where `--deny` names their kind.
        let severity = |s: &tangle_exec::check::summary::Summary| options.severity(s.kind);
        let (warnings, errors): (Vec<_>, Vec<_>) = report
            .summaries
            .iter()
            .partition(|s| severity(s) == tangle_exec::check::kind::Severity::Warning);
        let undefined_behaviour = errors
            .into_iter()
            .map(|s| crate::findings::render(s, severity(s), module.as_ref()))
            .collect();
        let warnings = warnings
            .into_iter()
            .map(|s| crate::findings::render(s, severity(s), module.as_ref()))
            .collect();
        let findings: Vec<_> = report
            .summaries
            .iter()
            .map(|s| crate::findings::machine(s, severity(s), &report.diagnostics))
            .collect();
        if let Some(trace) = report.trace.filter(|_| self.options.trace) {
            self.traced.push(TracedRun {
                trace,
                spirv: job.spirv.clone(),
                line: job.line,
                groups: job.groups,
                local_size: pipeline.local_size(),
                bindings: job
                    .bindings
                    .iter()
                    .map(|b| (b.set, b.binding, b.element))
                    .zip(bindings.iter().cloned())
                    .collect(),
                findings: findings.clone(),
            });
        }
        let mut notes = Vec::new();
        if let Some(cut) = &report.race_cut_short {
            notes.push(cut.to_string());
        }
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
            warnings,
            notes,
            dispatch_time,
            debug_paths,
        })
    }
}

/// A dispatch run with a trace ([`CpuBackend::take_traced`]): what `tangle run --view` draws.
#[derive(Debug, Clone)]
pub struct TracedRun {
    /// The tangle events.
    pub trace: tangle_exec::Trace,
    /// The module's words.
    pub spirv: Vec<u32>,
    /// The script line of the `RUN`.
    pub line: u32,
    /// Workgroup counts.
    pub groups: [u32; 3],
    /// The workgroup size.
    pub local_size: [u32; 3],
    /// Every binding's bytes after the dispatch: (set, binding, array element), bytes.
    pub bindings: Vec<((u32, u32, u32), Vec<u8>)>,
    /// The sanitizer's findings (their `line` not filled in).
    pub findings: Vec<tangle_amber::UbSummary>,
}

/// The path of each invocation of `invocations`: the `block` events of `trace` whose lane mask
/// holds it (lane `l` of subgroup `s` is `LocalInvocationIndex` `s * subgroup_size + l`,
/// `docs/trace-format.md`) and its `values` events.
fn debug_paths(
    trace: &tangle_exec::trace::Trace,
    invocations: &[[u32; 3]],
    groups: [u32; 3],
    local: [u32; 3],
) -> Result<Vec<Vec<PathEvent>>, BackendError> {
    use tangle_exec::trace::EventKind;
    if trace.dropped > 0 {
        return Err(BackendError::Unsupported(format!(
            "DEBUG: the dispatch runs more than {} blocks, more than tangle follows",
            tangle_exec::trace::MAX_EVENTS
        )));
    }
    let size = u64::from(trace.subgroup_size.max(1));
    Ok(invocations
        .iter()
        .map(|g| {
            let inside =
                (0..3).all(|i| u64::from(g[i]) < u64::from(groups[i]) * u64::from(local[i]));
            if !inside {
                return Vec::new();
            }
            let wg = [0, 1, 2].map(|i| g[i] / local[i].max(1));
            let l = [0, 1, 2].map(|i| u64::from(g[i] % local[i].max(1)));
            let index = l[0] + u64::from(local[0]) * (l[1] + u64::from(local[1]) * l[2]);
            let (subgroup, lane) = (index / size, index % size);
            trace
                .events
                .iter()
                .filter(|e| e.workgroup == wg && u64::from(e.subgroup) == subgroup)
                .filter_map(|e| match &e.kind {
                    EventKind::Block { mask } if mask >> lane & 1 == 1 => Some(PathEvent::Block {
                        function: e.function,
                        label: e.block,
                    }),
                    EventKind::Values { lane: l, at, set } if u64::from(*l) == lane => {
                        Some(PathEvent::Values {
                            at: *at,
                            set: set.clone(),
                        })
                    }
                    _ => None,
                })
                .collect()
        })
        .collect())
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
        let wg = [
            feature("WorkgroupMemoryExplicitLayoutFeaturesKHR.workgroupMemoryExplicitLayout"),
            feature(
                "WorkgroupMemoryExplicitLayoutFeaturesKHR.workgroupMemoryExplicitLayout8BitAccess",
            ),
            Requirement::Extension("VK_KHR_workgroup_memory_explicit_layout".into()),
        ];
        let no_wg = CpuBackend::new(
            Profile {
                workgroup_memory_explicit_layout: false,
                ..Profile::default()
            },
            RunOptions::default(),
        );
        for r in &wg {
            assert_eq!(full.supports(r), Ok(()), "{r}");
            assert!(no_wg.supports(r).is_err(), "{r}");
        }
        // bfloat16 where the profile lists bfloat16 matrices (nvidia, intel; not lavapipe, amd).
        for r in [
            feature("ShaderBfloat16FeaturesKHR.shaderBFloat16Type"),
            feature("ShaderBfloat16FeaturesKHR.shaderBFloat16CooperativeMatrix"),
            Requirement::Extension("VK_KHR_shader_bfloat16".into()),
        ] {
            for (name, offered) in [
                ("default", true),
                ("nvidia", true),
                ("intel", true),
                ("lavapipe", false),
                ("amd", false),
            ] {
                let profile = Profile::by_name(name).expect("built-in profile");
                let backend = CpuBackend::new(profile, RunOptions::default());
                assert_eq!(backend.supports(&r).is_ok(), offered, "{name} {r}");
            }
        }
        for r in [
            feature("ShaderBfloat16FeaturesKHR.shaderBFloat16DotProduct"),
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
    fn unnormalized_samplers_follow_the_vulkan_rules() {
        let ok = SamplerState {
            normalized: false,
            min_lod: 0.0,
            max_lod: 0.0,
            address: [
                AddressMode::ClampToEdge,
                AddressMode::ClampToBorder,
                AddressMode::Repeat,
            ],
            ..SamplerState::default()
        };
        assert!(job_sampler(&ok).is_ok_and(|s| !s.normalized));
        for bad in [
            SamplerState { max_lod: 1.0, ..ok },
            SamplerState {
                min_filter: Filter::Linear,
                ..ok
            },
            SamplerState {
                address: [AddressMode::Repeat; 3],
                ..ok
            },
        ] {
            assert!(
                matches!(job_sampler(&bad), Err(BackendError::Invalid(_))),
                "{bad:?}"
            );
        }
        let compare = SamplerState {
            compare: true,
            ..SamplerState::default()
        };
        assert!(matches!(
            job_sampler(&compare),
            Err(BackendError::Unsupported(_))
        ));
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
