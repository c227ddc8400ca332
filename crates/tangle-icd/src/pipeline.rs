//! Shader modules and compute pipelines: SPIR-V is validated with tangle-validate when the
//! module is created (an invalid one is refused with the validator's first errors), and
//! lowered by tangle-exec when the pipeline is created, with its specialization constants and
//! required subgroup size.

use crate::caps::Caps;
use crate::objects::{Pipeline, PipelineLayout, ShaderModule};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tangle_exec::SpecConstants;
use tangle_spirv::{Module, TargetEnv};

/// The environment modules are validated for: the device's Vulkan version, which accepts
/// SPIR-V 1.0 to 1.6.
fn env() -> TargetEnv {
    // A known name: `TargetEnv::parse` accepts it.
    TargetEnv::parse("vulkan1.3").unwrap_or(TargetEnv::DEFAULT)
}

/// Validates `module`; the error lists the validator's first three findings.
fn validate(module: &Module) -> Result<tangle_validate::Validated<'_>, String> {
    let options = tangle_validate::ValidateOptions::default();
    tangle_validate::validate(module, env(), &options).map_err(|diagnostics| {
        let shown: Vec<String> = diagnostics
            .iter()
            .take(3)
            .map(|d| d.render(module, "shader", None).trim_end().to_string())
            .collect();
        format!(
            "the module does not validate for vulkan1.3:\n{}",
            shown.join("\n")
        )
    })
}

/// The module of `vkCreateShaderModule`'s words, if it parses and validates.
pub fn shader_module(words: &[u32]) -> Result<Module, String> {
    let module = Module::from_words(words).map_err(|e| format!("not a SPIR-V module: {e}"))?;
    validate(&module)?;
    Ok(module)
}

/// What `vkCreateComputePipelines` asks for one pipeline.
#[derive(Debug)]
pub struct PipelineRequest {
    /// The module.
    pub module: Arc<ShaderModule>,
    /// The entry point's name.
    pub entry: String,
    /// Specialization constants by `SpecId`.
    pub spec: SpecConstants,
    /// `VkPipelineShaderStageRequiredSubgroupSizeCreateInfo::requiredSubgroupSize`.
    pub subgroup_size: Option<u32>,
    /// `VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT`.
    pub full_subgroups: bool,
    /// The layout.
    pub layout: Arc<PipelineLayout>,
    /// `VkPipelineRobustnessCreateInfoEXT` (the stage's over the pipeline's).
    pub robustness: crate::robustness::PipelineRobustness,
}

/// Lowers a pipeline.
pub fn compute_pipeline(caps: &Caps, r: PipelineRequest) -> Result<Pipeline, String> {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let profile = match r.subgroup_size {
        None => caps.profile.clone(),
        Some(n) => {
            // VUID-VkPipelineShaderStageRequiredSubgroupSizeCreateInfo-requiredSubgroupSize-02760
            // to -02762: a power of two from minSubgroupSize to maxSubgroupSize.
            let (min, max) = caps.subgroup_size_range();
            caps.profile
                .clone()
                .with_subgroup_size(n)
                .filter(|_| (min..=max).contains(&n))
                .ok_or_else(|| {
                    format!(
                        "requiredSubgroupSize {n} is not a power of two from \
                             minSubgroupSize {min} to maxSubgroupSize {max}"
                    )
                })?
        }
    };
    let size = profile.subgroup_size;
    let module = validate(&r.module.module)?;
    let exec = tangle_exec::Device::new(profile)
        .compute_pipeline(&module, &r.entry, &r.spec)
        .map_err(|e| format!("entry point '{}': {e}", r.entry))?;
    if r.full_subgroups && exec.local_size()[0] % size != 0 {
        // VUID-VkPipelineShaderStageCreateInfo-flags-02759: with REQUIRE_FULL_SUBGROUPS the
        // local size in x is a multiple of the subgroup size.
        return Err(format!(
            "REQUIRE_FULL_SUBGROUPS needs the local size in x ({}) to be a multiple of the subgroup size {size}",
            exec.local_size()[0]
        ));
    }
    Ok(Pipeline {
        exec,
        layout: r.layout,
        name: format!(
            "'{}' (pipeline {})",
            r.entry,
            NEXT.fetch_add(1, Ordering::Relaxed)
        ),
        module: r.module,
        debug_name: std::sync::Mutex::new(None),
        robustness: r.robustness,
    })
}
