//! A physical device as plain data ([`DeviceInfo`]): what the driver reports (name, driver,
//! Vulkan version, features, extensions, subgroup and integer-dot-product properties, limits,
//! cooperative-matrix entries), filled in by [`crate::raw`] and read everywhere else, so the
//! questions asked of a device (does it offer this `DEVICE_FEATURE`? which tangle profile
//! describes it?) are answered without a driver in unit tests.

use crate::features::{Feature, CORE_1_3_EXTENSIONS};
use std::collections::BTreeSet;
use tangle_amber::Requirement;
use tangle_exec::profile::file::{
    operation_names as subgroup_operation_names, DeviceFacts, OPERATION_NAMES,
};
use tangle_exec::profile::subgroup_ops;
use tangle_exec::profile::CooperativeMatrixProperties;
use tangle_exec::Profile;

/// The oldest Vulkan version the backend runs on: subgroup size control, integer dot product and
/// zero-initialized workgroup memory are core there.
pub const MIN_API: (u32, u32) = (1, 3);

/// `VkPhysicalDeviceSubgroupProperties` and `VkPhysicalDeviceSubgroupSizeControlProperties`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SubgroupInfo {
    /// `subgroupSize`: the size a shader gets without subgroup size control.
    pub size: u32,
    /// `minSubgroupSize`.
    pub min_size: u32,
    /// `maxSubgroupSize`.
    pub max_size: u32,
    /// `supportedOperations` (`VkSubgroupFeatureFlagBits`).
    pub operations: u32,
    /// `supportedStages` includes compute.
    pub compute: bool,
    /// `requiredSubgroupSizeStages` includes compute.
    pub required_size_compute: bool,
}

/// The `VkPhysicalDeviceLimits` a compute dispatch meets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Limits {
    /// `maxComputeWorkGroupSize`.
    pub max_workgroup_size: [u32; 3],
    /// `maxComputeWorkGroupInvocations`.
    pub max_workgroup_invocations: u32,
    /// `maxComputeWorkGroupCount`.
    pub max_workgroup_count: [u32; 3],
    /// `maxComputeSharedMemorySize`.
    pub max_shared_memory: u32,
    /// `maxPushConstantsSize`.
    pub max_push_constants: u32,
    /// `maxStorageBufferRange`.
    pub max_storage_range: u32,
    /// `maxUniformBufferRange`.
    pub max_uniform_range: u32,
    /// `maxBoundDescriptorSets`.
    pub max_bound_sets: u32,
    /// `minStorageBufferOffsetAlignment`, `minUniformBufferOffsetAlignment` and
    /// `minTexelBufferOffsetAlignment`: a descriptor's offset into a shared `VkBuffer`.
    pub offset_alignment: [u64; 3],
    /// `maxTexelBufferElements`.
    pub max_texel_buffer_elements: u32,
}

/// One physical device.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeviceInfo {
    /// Its index in `vkEnumeratePhysicalDevices` order (`--device N`).
    pub index: usize,
    /// `deviceName`.
    pub name: String,
    /// `deviceType`, in words.
    pub kind: String,
    /// `apiVersion` (major, minor, patch).
    pub api: (u32, u32, u32),
    /// `driverName` and `driverInfo` (`VkPhysicalDeviceDriverProperties`).
    pub driver: String,
    /// `vendorID`, `deviceID`.
    pub ids: (u32, u32),
    /// `driverID` (`VkDriverId`).
    pub driver_id: u32,
    /// The features it offers, of those tangle knows.
    pub features: BTreeSet<Feature>,
    /// Its device extensions.
    pub extensions: BTreeSet<String>,
    /// Subgroup properties.
    pub subgroup: SubgroupInfo,
    /// Compute limits.
    pub limits: Limits,
    /// `VkPhysicalDeviceShaderIntegerDotProductProperties`, member name → value.
    pub dot_product: Vec<(String, bool)>,
    /// `VkPhysicalDeviceFloatControlsProperties` booleans, member name → value.
    pub float_controls: Vec<(String, bool)>,
    /// `vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR`, in driver order.
    pub cooperative_matrix: Vec<CooperativeMatrixProperties>,
}

impl DeviceInfo {
    /// `Err` (why, in words) when the backend cannot use this device at all.
    pub fn usable(&self) -> Result<(), String> {
        let (major, minor, _) = self.api;
        if (major, minor) < MIN_API {
            return Err(format!(
                "'{}' offers Vulkan {major}.{minor}; tangle's Vulkan backend needs {}.{}",
                self.name, MIN_API.0, MIN_API.1
            ));
        }
        Ok(())
    }

    /// Whether the device offers `requirement`; `Err` says what is missing.
    pub fn supports(&self, requirement: &Requirement) -> Result<(), String> {
        let missing = || format!("'{}' does not offer it", self.name);
        match requirement {
            Requirement::Feature(name) => {
                if let Some(op) = name.strip_prefix("SubgroupSupportedOperations.") {
                    let bit = OPERATION_NAMES
                        .iter()
                        .find(|(_, n)| *n == op)
                        .map(|(b, _)| *b);
                    return match bit {
                        Some(b) if self.subgroup.operations & b != 0 => Ok(()),
                        Some(_) => Err(missing()),
                        None => Err(format!("unknown subgroup operation '{op}'")),
                    };
                }
                if name == "SubgroupSupportedStages.compute" {
                    return self.subgroup.compute.then_some(()).ok_or_else(missing);
                }
                match Feature::from_amber(name) {
                    Some(f) if self.features.contains(&f) => Ok(()),
                    Some(_) => Err(missing()),
                    None => Err("tangle's Vulkan backend does not know this feature".into()),
                }
            }
            Requirement::Extension(name) => {
                if self.extensions.contains(name) || CORE_1_3_EXTENSIONS.contains(&name.as_str()) {
                    Ok(())
                } else {
                    Err(missing())
                }
            }
            Requirement::Property(name) => {
                let member = name.strip_prefix("FloatControlsProperties.");
                match member.and_then(|m| self.float_controls.iter().find(|(n, _)| n == m)) {
                    Some((_, true)) => Ok(()),
                    Some((_, false)) => Err(missing()),
                    None => Err("tangle's Vulkan backend does not know this property".into()),
                }
            }
            Requirement::InstanceExtension(name) => {
                // Promoted to Vulkan 1.1, which every usable instance offers.
                if name == "VK_KHR_get_physical_device_properties2" {
                    Ok(())
                } else {
                    Err("tangle's Vulkan backend enables no instance extension".into())
                }
            }
        }
    }

    /// A tangle profile describing this device, so the CPU executor runs as it does: its
    /// subgroup size and operations, compute limits and cooperative-matrix entries.
    pub fn profile(&self) -> Profile {
        let (major, minor, patch) = self.api;
        Profile {
            name: profile_name(&self.name),
            description: format!(
                "{}, {} (Vulkan {major}.{minor}.{patch}; queried by tangle profiles --from-device)",
                self.name, self.driver
            ),
            subgroup_size: self.subgroup.size,
            // Only what tangle implements: an unknown bit a future driver sets is dropped.
            subgroup_operations: self.subgroup.operations & subgroup_ops::ALL,
            max_workgroup_size: self.limits.max_workgroup_size,
            max_workgroup_invocations: self.limits.max_workgroup_invocations,
            max_workgroup_count: self.limits.max_workgroup_count,
            max_shared_memory: self.limits.max_shared_memory,
            cooperative_matrix: self.cooperative_matrix.clone(),
            workgroup_memory_explicit_layout: self
                .extensions
                .contains("VK_KHR_workgroup_memory_explicit_layout"),
            identity: Some(tangle_exec::profile::Identity {
                vendor_id: self.ids.0,
                device_id: self.ids.1,
                driver_id: self.driver_id,
                device_name: self.name.clone(),
            }),
            // The sizes a pipeline may require, where the device offers several.
            subgroup_size_range: {
                let (min, max, size) = (
                    self.subgroup.min_size,
                    self.subgroup.max_size,
                    self.subgroup.size,
                );
                (min < max && (min..=max).contains(&size)).then_some([min, max])
            },
        }
    }

    /// What the device reports beyond its profile, for the profile file's `[device]` table.
    pub fn facts(&self) -> DeviceFacts {
        DeviceFacts {
            subgroup_size_range: Some([self.subgroup.min_size, self.subgroup.max_size]),
            subgroup_stages: if self.subgroup.compute {
                vec!["compute".to_string()]
            } else {
                Vec::new()
            },
            integer_dot_product: self.dot_product.iter().cloned().collect(),
        }
    }

    /// One line per fact, for `tangle profiles --devices`.
    pub fn describe(&self) -> Vec<String> {
        let (major, minor, patch) = self.api;
        let s = &self.subgroup;
        let mut lines = vec![
            format!("{}: {} ({})", self.index, self.name, self.kind),
            format!(
                "  Vulkan {major}.{minor}.{patch}; driver {}; vendor 0x{:04x} device 0x{:04x}",
                self.driver, self.ids.0, self.ids.1
            ),
            format!(
                "  subgroup size {} (control: {}..{}{}); operations: {}",
                s.size,
                s.min_size,
                s.max_size,
                if s.required_size_compute {
                    ""
                } else {
                    ", not for compute"
                },
                subgroup_operation_names(s.operations).join(", ")
            ),
        ];
        if let Err(why) = self.usable() {
            lines.push(format!("  not usable: {why}"));
        }
        let extensions: Vec<&str> = [
            "VK_KHR_shader_subgroup_rotate",
            "VK_KHR_shader_maximal_reconvergence",
            "VK_KHR_cooperative_matrix",
            "VK_KHR_workgroup_memory_explicit_layout",
        ]
        .into_iter()
        .filter(|e| self.extensions.contains(*e))
        .collect();
        lines.push(format!(
            "  extensions tangle uses: {}",
            if extensions.is_empty() {
                "none".to_string()
            } else {
                extensions.join(", ")
            }
        ));
        lines.push(format!(
            "  cooperative-matrix entries: {}",
            self.cooperative_matrix.len()
        ));
        lines
    }
}

/// A profile name from a device name: lower case, words joined by `-` (`NVIDIA H100 80GB HBM3` →
/// `nvidia-h100-80gb-hbm3`).
fn profile_name(device: &str) -> String {
    let words: Vec<String> = device
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect();
    if words.is_empty() {
        "device".to_string()
    } else {
        words.join("-")
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A device like lavapipe (Mesa 22.3 on an AVX2 host), written by hand.
    pub(crate) fn lavapipe_like() -> DeviceInfo {
        DeviceInfo {
            index: 0,
            name: "llvmpipe (LLVM 15.0.6, 256 bits)".into(),
            kind: "CPU".into(),
            api: (1, 3, 230),
            driver: "llvmpipe Mesa 22.3.6".into(),
            ids: (0x10005, 0),
            driver_id: 13,
            features: Feature::ALL
                .iter()
                .copied()
                .filter(|f| {
                    !matches!(
                        f,
                        Feature::ShaderSubgroupRotate
                            | Feature::ShaderSubgroupRotateClustered
                            | Feature::CooperativeMatrix
                            | Feature::ShaderMaximalReconvergence
                    )
                })
                .collect(),
            extensions: ["VK_KHR_workgroup_memory_explicit_layout".to_string()].into(),
            subgroup: SubgroupInfo {
                size: 8,
                min_size: 8,
                max_size: 8,
                operations: subgroup_ops::ALL
                    & !(subgroup_ops::ROTATE | subgroup_ops::ROTATE_CLUSTERED),
                compute: true,
                required_size_compute: true,
            },
            limits: Limits {
                max_workgroup_size: [1024, 1024, 1024],
                max_workgroup_invocations: 1024,
                max_workgroup_count: [65535, 65535, 65535],
                max_shared_memory: 32768,
                max_push_constants: 128,
                max_storage_range: u32::MAX,
                max_uniform_range: 65536,
                max_bound_sets: 8,
                offset_alignment: [16, 16, 16],
                max_texel_buffer_elements: 1 << 27,
            },
            dot_product: Vec::new(),
            float_controls: vec![("shaderDenormPreserveFloat32".into(), false)],
            cooperative_matrix: Vec::new(),
        }
    }

    #[test]
    fn requirements_are_answered_from_the_device() {
        let d = lavapipe_like();
        let f = |n: &str| Requirement::Feature(n.to_string());
        assert_eq!(d.supports(&f("shaderInt64")), Ok(()));
        assert_eq!(d.supports(&f("SubgroupSupportedOperations.ballot")), Ok(()));
        assert_eq!(
            d.supports(&f("SubgroupSizeControl.computeFullSubgroups")),
            Ok(())
        );
        assert_eq!(
            d.supports(&Requirement::Extension("VK_KHR_16bit_storage".into())),
            Ok(())
        );
        for lacking in [
            f("SubgroupSupportedOperations.rotate"),
            f("ShaderSubgroupRotateFeatures.shaderSubgroupRotate"),
            f("geometryShader"),
            Requirement::Extension("VK_KHR_shader_subgroup_rotate".into()),
            Requirement::Property("FloatControlsProperties.shaderDenormPreserveFloat32".into()),
            Requirement::Property("FloatControlsProperties.bogus".into()),
        ] {
            assert!(d.supports(&lacking).is_err(), "{lacking}");
        }
    }

    #[test]
    fn profile_follows_the_device() {
        let d = lavapipe_like();
        let p = d.profile();
        assert_eq!(p.name, "llvmpipe-llvm-15-0-6-256-bits");
        assert_eq!(p.subgroup_size, 8);
        assert_eq!(p.subgroup_operations & subgroup_ops::ROTATE, 0);
        assert_eq!(p.max_shared_memory, 32768);
        assert!(p.cooperative_matrix.is_empty());
        assert_eq!(d.usable(), Ok(()));
        let old = DeviceInfo {
            api: (1, 2, 0),
            ..d
        };
        assert!(old.usable().is_err());
    }
}
