//! Per-pipeline buffer robustness (VK_EXT_pipeline_robustness): what a pipeline's
//! `VkPipelineRobustnessCreateInfoEXT` asks of its storage and uniform buffers, and the
//! robustness a dispatch of it runs with ([`tangle_exec::check::robust`]).
//!
//! Vulkan, `VkPipelineRobustnessBufferBehaviorEXT`: `DEVICE_DEFAULT` "specifies that this
//! pipeline stage follows the robustness behavior of the logical device that created this
//! pipeline"; `DISABLED` "specifies that buffer accesses by this pipeline stage to the relevant
//! resource types must not be out of bounds" (so one is undefined behaviour: an `out-of-bounds`
//! error); `ROBUST_BUFFER_ACCESS` and `ROBUST_BUFFER_ACCESS_2` "specify that out of bounds
//! accesses ... behave as if the robustBufferAccess [robustBufferAccess2] feature is enabled".
//! A structure in the shader stage's chain overrides the pipeline's for that stage.
//!
//! The executor applies one robustness to every buffer of a dispatch, so a dispatch binding both
//! storage and uniform buffers whose behaviours differ is not run (named in the report's
//! `errors`); where only one class is bound, or both agree, it runs exactly.

use ash::vk;
use tangle_exec::check::robust::Robustness;

/// A pipeline's buffer robustness: per class, `None` for the device's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PipelineRobustness {
    /// Storage buffers (`storageBuffers`).
    pub storage: Option<Robustness>,
    /// Uniform buffers (`uniformBuffers`).
    pub uniform: Option<Robustness>,
    /// Images (`images`): `robustImageAccess2` on or off.
    pub images: Option<bool>,
}

/// One `VkPipelineRobustnessBufferBehaviorEXT`: `None` for `DEVICE_DEFAULT`.
pub fn behavior(b: vk::PipelineRobustnessBufferBehaviorEXT) -> Result<Option<Robustness>, String> {
    use vk::PipelineRobustnessBufferBehaviorEXT as B;
    Ok(match b {
        B::DEVICE_DEFAULT => None,
        B::DISABLED => Some(Robustness::Off),
        B::ROBUST_BUFFER_ACCESS => Some(Robustness::Buffer),
        B::ROBUST_BUFFER_ACCESS_2 => Some(Robustness::Buffer2),
        other => return Err(format!("buffer behavior {other:?} does not exist")),
    })
}

impl PipelineRobustness {
    /// The behaviours of one `VkPipelineRobustnessCreateInfoEXT`. `ROBUST_IMAGE_ACCESS` needs
    /// `robustImageAccess`, which tangle does not claim (`robustImageAccess2` it does).
    pub fn from_info(info: &vk::PipelineRobustnessCreateInfoEXT<'_>) -> Result<Self, String> {
        use vk::PipelineRobustnessImageBehaviorEXT as I;
        let images = match info.images {
            I::DEVICE_DEFAULT => None,
            I::DISABLED => Some(false),
            I::ROBUST_IMAGE_ACCESS_2 => Some(true),
            _ => None,
        };
        if !matches!(
            info.images,
            I::DEVICE_DEFAULT | I::DISABLED | I::ROBUST_IMAGE_ACCESS_2
        ) {
            return Err(format!(
                "images {:?}: robustImageAccess is not supported (VUID-VkPipelineRobustnessCreateInfo-robustImageAccess-06930)",
                info.images
            ));
        }
        Ok(PipelineRobustness {
            storage: behavior(info.storage_buffers)?,
            uniform: behavior(info.uniform_buffers)?,
            images,
        })
    }

    /// The robustness a dispatch runs with on a device whose own is `device`, binding buffers
    /// of the descriptor types `kinds`.
    pub fn for_bindings(
        &self,
        device: Robustness,
        kinds: &[vk::DescriptorType],
    ) -> Result<Robustness, String> {
        let uniform = |k: &vk::DescriptorType| {
            matches!(
                *k,
                vk::DescriptorType::UNIFORM_BUFFER | vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC
            )
        };
        let storage = kinds.iter().any(|k| !uniform(k));
        self.resolve(device, storage, kinds.iter().any(uniform))
    }

    /// The robustness a dispatch runs with on a device whose own is `device`, binding storage
    /// buffers (`storage`) and uniform buffers (`uniform`).
    pub fn resolve(
        &self,
        device: Robustness,
        storage: bool,
        uniform: bool,
    ) -> Result<Robustness, String> {
        let s = self.storage.unwrap_or(device);
        let u = self.uniform.unwrap_or(device);
        match (storage, uniform) {
            (true, true) if s != u => Err(format!(
                "the pipeline's robustness differs between storage buffers ({s}) and uniform buffers ({u}), both bound: one robustness per dispatch is run"
            )),
            (false, true) => Ok(u),
            _ => Ok(s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pipeline_overrides_the_device_per_class() {
        let p = PipelineRobustness {
            storage: Some(Robustness::Off),
            uniform: None,
            images: None,
        };
        assert_eq!(
            p.resolve(Robustness::Buffer, true, false),
            Ok(Robustness::Off)
        );
        assert_eq!(
            p.resolve(Robustness::Buffer, false, true),
            Ok(Robustness::Buffer)
        );
        assert!(p.resolve(Robustness::Buffer, true, true).is_err());
        assert_eq!(p.resolve(Robustness::Off, true, true), Ok(Robustness::Off));
        let uniform = [vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC];
        assert_eq!(
            p.for_bindings(Robustness::Buffer2, &uniform),
            Ok(Robustness::Buffer2)
        );
        let both = [
            vk::DescriptorType::STORAGE_BUFFER,
            vk::DescriptorType::UNIFORM_BUFFER,
        ];
        assert!(p.for_bindings(Robustness::Buffer2, &both).is_err());
        assert_eq!(
            PipelineRobustness::default().resolve(Robustness::Buffer2, true, true),
            Ok(Robustness::Buffer2)
        );
        let info = vk::PipelineRobustnessCreateInfoEXT::default()
            .images(vk::PipelineRobustnessImageBehaviorEXT::ROBUST_IMAGE_ACCESS);
        assert!(PipelineRobustness::from_info(&info).is_err());
    }
}
