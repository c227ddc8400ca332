//! Device profiles: the limits and properties a real device would report, which a dispatch runs
//! against (subgroup size, supported subgroup operations, workgroup limits, cooperative-matrix
//! properties in [`coopmat`]).
//!
//! Values for the named profiles come from `shared/notes/device-properties.md`.

pub mod coopmat;

pub use coopmat::{ComponentType, CooperativeMatrixProperties, MatrixScope};

/// Subgroup operation classes (Vulkan `VkSubgroupFeatureFlagBits`), as a bit set.
pub mod subgroup_ops {
    /// `VK_SUBGROUP_FEATURE_BASIC_BIT`.
    pub const BASIC: u32 = 0x1;
    /// `VK_SUBGROUP_FEATURE_VOTE_BIT`.
    pub const VOTE: u32 = 0x2;
    /// `VK_SUBGROUP_FEATURE_ARITHMETIC_BIT`.
    pub const ARITHMETIC: u32 = 0x4;
    /// `VK_SUBGROUP_FEATURE_BALLOT_BIT`.
    pub const BALLOT: u32 = 0x8;
    /// `VK_SUBGROUP_FEATURE_SHUFFLE_BIT`.
    pub const SHUFFLE: u32 = 0x10;
    /// `VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT`.
    pub const SHUFFLE_RELATIVE: u32 = 0x20;
    /// `VK_SUBGROUP_FEATURE_CLUSTERED_BIT`.
    pub const CLUSTERED: u32 = 0x40;
    /// `VK_SUBGROUP_FEATURE_QUAD_BIT`.
    pub const QUAD: u32 = 0x80;
    /// `VK_SUBGROUP_FEATURE_ROTATE_BIT_KHR`.
    pub const ROTATE: u32 = 0x200;
    /// `VK_SUBGROUP_FEATURE_ROTATE_CLUSTERED_BIT_KHR`.
    pub const ROTATE_CLUSTERED: u32 = 0x400;
    /// Every class tangle implements.
    pub const ALL: u32 = BASIC
        | VOTE
        | ARITHMETIC
        | BALLOT
        | SHUFFLE
        | SHUFFLE_RELATIVE
        | CLUSTERED
        | QUAD
        | ROTATE
        | ROTATE_CLUSTERED;
}

/// A device description a dispatch runs against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    /// The profile's name (`default`, `lavapipe`, ...).
    pub name: String,
    /// One line describing where the values come from.
    pub description: String,
    /// Invocations per subgroup: a power of two in 1..=128.
    pub subgroup_size: u32,
    /// Supported subgroup operation classes, a [`subgroup_ops`] bit set.
    pub subgroup_operations: u32,
    /// `maxComputeWorkGroupSize`.
    pub max_workgroup_size: [u32; 3],
    /// `maxComputeWorkGroupInvocations`.
    pub max_workgroup_invocations: u32,
    /// `maxComputeWorkGroupCount`.
    pub max_workgroup_count: [u32; 3],
    /// `maxComputeSharedMemorySize` in bytes.
    pub max_shared_memory: u32,
    /// `vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR`, in driver order; empty when the
    /// device has no VK_KHR_cooperative_matrix.
    pub cooperative_matrix: Vec<CooperativeMatrixProperties>,
    /// VK_KHR_workgroup_memory_explicit_layout with all four of its features
    /// (`workgroupMemoryExplicitLayout`, `...ScalarBlockLayout`, `...8BitAccess`,
    /// `...16BitAccess`): Workgroup `Block` variables with explicit layouts that alias.
    pub workgroup_memory_explicit_layout: bool,
}

impl Default for Profile {
    /// The `default` profile: subgroup size 32, every operation tangle implements, and
    /// cooperative matrices of every component type at small shapes
    /// ([`coopmat::default_list`]).
    fn default() -> Self {
        Profile {
            name: "default".to_string(),
            description: "tangle's default device: subgroup size 32, every subgroup operation"
                .to_string(),
            subgroup_size: 32,
            subgroup_operations: subgroup_ops::ALL,
            max_workgroup_size: [1024, 1024, 64],
            max_workgroup_invocations: 1024,
            // As NVIDIA reports; Vulkan's minimum is 65535 in each dimension.
            max_workgroup_count: [2_147_483_647, 65535, 65535],
            max_shared_memory: 49152,
            cooperative_matrix: coopmat::default_list(),
            // Every named profile's driver offers the extension with all four features: RADV
            // (src/amd/vulkan/radv_physical_device.c), lavapipe (lvp_device.c) and ANV
            // (anv_physical_device.c) set them true unconditionally, and NVIDIA's driver lists
            // the extension with all four features on every GPU since Turing (not queried on
            // the H200: the notes' query did not ask for it).
            workgroup_memory_explicit_layout: true,
        }
    }
}

impl Profile {
    /// Every named profile, `default` first.
    pub fn all() -> Vec<Profile> {
        let default = Profile::default();
        let lavapipe = Profile {
            name: "lavapipe".to_string(),
            description: "Mesa lavapipe on AVX2 hosts (subgroup size 8; from driver source)"
                .to_string(),
            subgroup_size: 8,
            max_workgroup_count: [65535, 65535, 65535],
            max_shared_memory: 32768,
            cooperative_matrix: coopmat::lavapipe_list(),
            ..default.clone()
        };
        let nvidia = Profile {
            name: "nvidia".to_string(),
            description: "NVIDIA H200, driver 580.159.04 (subgroup size 32; queried)".to_string(),
            subgroup_size: 32,
            max_workgroup_count: [2_147_483_647, 65535, 65535],
            cooperative_matrix: coopmat::nvidia_list(),
            ..default.clone()
        };
        let amd = Profile {
            name: "amd".to_string(),
            description: "AMD RDNA3 with RADV (subgroup size 64; from driver source)".to_string(),
            subgroup_size: 64,
            max_shared_memory: 65536,
            cooperative_matrix: coopmat::amd_list(),
            ..default.clone()
        };
        let intel = Profile {
            name: "intel".to_string(),
            description:
                "Intel Xe2 (Lunar Lake, Battlemage) with ANV (subgroup size 32; from driver source)"
                    .to_string(),
            subgroup_size: 32,
            max_shared_memory: 65536,
            cooperative_matrix: coopmat::intel_list(),
            ..default.clone()
        };
        vec![default, lavapipe, nvidia, amd, intel]
    }

    /// The named profile, if there is one.
    pub fn by_name(name: &str) -> Option<Profile> {
        Profile::all().into_iter().find(|p| p.name == name)
    }

    /// This profile with another subgroup size; `None` unless `n` is a power of two in 1..=128.
    pub fn with_subgroup_size(self, n: u32) -> Option<Profile> {
        if n.is_power_of_two() && n <= 128 {
            Some(Profile {
                subgroup_size: n,
                ..self
            })
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_profiles() {
        assert_eq!(Profile::default().subgroup_size, 32);
        assert_eq!(
            Profile::by_name("lavapipe").map(|p| p.subgroup_size),
            Some(8)
        );
        assert!(Profile::by_name("nope").is_none());
        assert_eq!(
            Profile::default()
                .with_subgroup_size(4)
                .map(|p| p.subgroup_size),
            Some(4)
        );
        assert!(Profile::default().with_subgroup_size(3).is_none());
        assert!(Profile::default().with_subgroup_size(256).is_none());
    }
}
