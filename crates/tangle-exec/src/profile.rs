//! Device profiles: the limits and properties a real device would report, which a dispatch runs
//! against (subgroup size, supported subgroup operations, workgroup limits, cooperative-matrix
//! properties in [`coopmat`]).
//!
//! The named profiles are TOML files under `crates/tangle-exec/profiles/` (format: [`file`]),
//! compiled in; their values come from `shared/notes/device-properties.md`.

pub mod coopmat;
pub mod file;

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
    /// Who the device is (`vendorID`, `deviceID`, `driverID`, `deviceName`), when the profile
    /// describes a real one: the driver reports it instead of tangle's own on request
    /// (`TANGLE_IDENTITY=profile`), since programs pick code paths by vendor.
    pub identity: Option<Identity>,
    /// `minSubgroupSize` and `maxSubgroupSize` of the device described, where it offers several
    /// sizes (Intel Xe2 16 to 32, AMD RDNA 32 to 64): a pipeline may require any power of two
    /// between them (`requiredSubgroupSize`), and programs tell devices apart by them (ggml
    /// takes a minimum of 16 on Intel for Xe2). `None`: `subgroup_size` alone.
    pub subgroup_size_range: Option<[u32; 2]>,
}

/// A real device's identity, as `VkPhysicalDeviceProperties` and
/// `VkPhysicalDeviceDriverProperties` report it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Identity {
    /// `vendorID` (a PCI vendor ID, or a Khronos `VkVendorId`).
    pub vendor_id: u32,
    /// `deviceID`.
    pub device_id: u32,
    /// `driverID` (`VkDriverId`).
    pub driver_id: u32,
    /// `deviceName`.
    pub device_name: String,
}

/// The built-in profiles' files, `default` first (`crates/tangle-exec/profiles/`).
const BUILTIN: [&str; 5] = [
    include_str!("../profiles/default.toml"),
    include_str!("../profiles/lavapipe.toml"),
    include_str!("../profiles/nvidia.toml"),
    include_str!("../profiles/amd.toml"),
    include_str!("../profiles/intel.toml"),
];

/// The built-in profiles, parsed once.
fn builtin() -> &'static [Profile] {
    static PROFILES: std::sync::OnceLock<Vec<Profile>> = std::sync::OnceLock::new();
    PROFILES.get_or_init(|| {
        BUILTIN
            .iter()
            .map(|text| {
                // Compiled-in files, checked by `builtin_files_parse_and_round_trip`.
                Profile::from_toml(text)
                    .unwrap_or_else(|e| panic!("a built-in profile does not parse: {e}"))
            })
            .collect()
    })
}

impl Default for Profile {
    /// The `default` profile (`profiles/default.toml`): subgroup size 32, every operation tangle
    /// implements, and cooperative matrices of every component type at small shapes plus every
    /// entry of the named devices' lists.
    fn default() -> Self {
        // `builtin` holds all five files (it panics on one that does not parse).
        builtin()[0].clone()
    }
}

impl Profile {
    /// Every named profile, `default` first: the files under `crates/tangle-exec/profiles/`
    /// (values from `shared/notes/device-properties.md`).
    pub fn all() -> Vec<Profile> {
        builtin().to_vec()
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
    fn builtin_files_parse_and_round_trip() {
        assert_eq!(BUILTIN.len(), Profile::all().len());
        for (text, p) in BUILTIN.iter().zip(Profile::all()) {
            let parsed = Profile::from_toml(text).expect("a built-in profile parses");
            assert_eq!(parsed, p);
            assert_eq!(Profile::from_toml(&parsed.to_toml(None)), Ok(parsed));
        }
        let names: Vec<String> = Profile::all().into_iter().map(|p| p.name).collect();
        assert_eq!(names, ["default", "lavapipe", "nvidia", "amd", "intel"]);
        // Values the tests across the workspace depend on.
        let nvidia = Profile::by_name("nvidia").expect("nvidia");
        assert_eq!(
            (
                nvidia.subgroup_size,
                nvidia.max_shared_memory,
                nvidia.max_workgroup_count
            ),
            (32, 49152, [2_147_483_647, 65535, 65535])
        );
        let lavapipe = Profile::by_name("lavapipe").expect("lavapipe");
        assert_eq!(
            (lavapipe.max_shared_memory, lavapipe.max_workgroup_count[0]),
            (32768, 65535)
        );
        assert_eq!(Profile::default().subgroup_operations, subgroup_ops::ALL);
        assert_eq!(Profile::default().max_workgroup_size, [1024, 1024, 64]);
    }

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
