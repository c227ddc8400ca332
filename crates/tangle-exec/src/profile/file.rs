//! Profile files: a [`Profile`] as TOML, the format of the built-in profiles
//! (`crates/tangle-exec/profiles/*.toml`, compiled in), of `tangle profiles --from-device -o
//! FILE.toml` and of `tangle run --profile FILE.toml`.
//!
//! ```toml
//! name = "lavapipe"
//! description = "..."
//! subgroup_size = 8
//! subgroup_operations = ["basic", "vote", "arithmetic", "ballot"]
//! max_workgroup_size = [1024, 1024, 64]
//! max_workgroup_invocations = 1024
//! max_workgroup_count = [65535, 65535, 65535]
//! max_shared_memory = 32768
//! cooperative_matrix = ["8x8x8 FLOAT16 x FLOAT16 + FLOAT16 -> FLOAT16, subgroup"]
//! workgroup_memory_explicit_layout = true   # optional, true when absent
//!
//! [identity]                     # optional: the real device's identity (TANGLE_IDENTITY)
//! vendor_id = 0x10005
//! device_id = 0
//! driver_id = 13
//! device_name = "llvmpipe (LLVM 15.0.6, 256 bits)"
//!
//! [device]                       # optional: what a device reported beyond the profile
//! subgroup_size_range = [32, 32]
//! subgroup_stages = ["compute"]
//! [device.integer_dot_product]
//! integerDotProduct4x8BitPackedSignedAccelerated = true
//! ```
//!
//! Cooperative-matrix entries are written as [`CooperativeMatrixProperties`] prints them
//! (`MxNxK A x B + C -> Result, scope[, saturating]`), one string each, and read back with
//! [`str::parse`]. Of the `[device]` table, `subgroup_size_range` is the profile's
//! [`Profile::subgroup_size_range`] (the driver reports it and lets pipelines require any size
//! in it); the rest is kept for people reading the file.

use super::coopmat::{ComponentType, CooperativeMatrixProperties, MatrixScope};
use super::{subgroup_ops, Profile};
use std::collections::BTreeMap;
use std::str::FromStr;

/// The names of the subgroup-operation bits, as Vulkan's `VkSubgroupFeatureFlagBits` (and
/// amber's `SubgroupSupportedOperations.NAME`) spell them.
pub const OPERATION_NAMES: [(u32, &str); 10] = [
    (subgroup_ops::BASIC, "basic"),
    (subgroup_ops::VOTE, "vote"),
    (subgroup_ops::ARITHMETIC, "arithmetic"),
    (subgroup_ops::BALLOT, "ballot"),
    (subgroup_ops::SHUFFLE, "shuffle"),
    (subgroup_ops::SHUFFLE_RELATIVE, "shuffleRelative"),
    (subgroup_ops::CLUSTERED, "clustered"),
    (subgroup_ops::QUAD, "quad"),
    (subgroup_ops::ROTATE, "rotate"),
    (subgroup_ops::ROTATE_CLUSTERED, "rotateClustered"),
];

/// The Vulkan names of the subgroup-operation bits set in `bits`.
pub fn operation_names(bits: u32) -> Vec<&'static str> {
    OPERATION_NAMES
        .iter()
        .filter(|(bit, _)| bits & bit != 0)
        .map(|(_, name)| *name)
        .collect()
}

/// What a device reported beyond what the executor uses (informational).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceFacts {
    /// `minSubgroupSize`, `maxSubgroupSize`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subgroup_size_range: Option<[u32; 2]>,
    /// `supportedStages` of `VkPhysicalDeviceSubgroupProperties`, by stage name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subgroup_stages: Vec<String>,
    /// `VkPhysicalDeviceShaderIntegerDotProductProperties`, member name → value.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub integer_dot_product: BTreeMap<String, bool>,
}

/// The file's layout.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileFile {
    name: String,
    description: String,
    subgroup_size: u32,
    subgroup_operations: Vec<String>,
    max_workgroup_size: [u32; 3],
    max_workgroup_invocations: u32,
    max_workgroup_count: [u32; 3],
    max_shared_memory: u32,
    cooperative_matrix: Vec<String>,
    /// VK_KHR_workgroup_memory_explicit_layout with its four features; offered unless a file
    /// says `false` (every named driver offers it: see `Profile`).
    #[serde(default = "offered")]
    workgroup_memory_explicit_layout: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    identity: Option<super::Identity>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    device: Option<DeviceFacts>,
}

fn offered() -> bool {
    true
}

impl Profile {
    /// The profile as a profile file, with the device's extra facts when given.
    pub fn to_toml(&self, device: Option<&DeviceFacts>) -> String {
        let file = ProfileFile {
            name: self.name.clone(),
            description: self.description.clone(),
            subgroup_size: self.subgroup_size,
            subgroup_operations: operation_names(self.subgroup_operations)
                .into_iter()
                .map(str::to_string)
                .collect(),
            max_workgroup_size: self.max_workgroup_size,
            max_workgroup_invocations: self.max_workgroup_invocations,
            max_workgroup_count: self.max_workgroup_count,
            max_shared_memory: self.max_shared_memory,
            cooperative_matrix: self
                .cooperative_matrix
                .iter()
                .map(ToString::to_string)
                .collect(),
            workgroup_memory_explicit_layout: self.workgroup_memory_explicit_layout,
            identity: self.identity.clone(),
            device: device.cloned().or_else(|| {
                self.subgroup_size_range.map(|range| DeviceFacts {
                    subgroup_size_range: Some(range),
                    ..DeviceFacts::default()
                })
            }),
        };
        // Serializing plain strings, integers and arrays cannot fail.
        toml::to_string_pretty(&file).unwrap_or_default()
    }

    /// Reads a profile file; the error says what is wrong, in words.
    pub fn from_toml(text: &str) -> Result<Profile, String> {
        let file: ProfileFile = toml::from_str(text).map_err(|e| e.to_string())?;
        let mut operations = 0;
        for name in &file.subgroup_operations {
            let bit = OPERATION_NAMES
                .iter()
                .find(|(_, n)| n == name)
                .map(|(b, _)| *b)
                .ok_or_else(|| format!("unknown subgroup operation '{name}'"))?;
            operations |= bit;
        }
        let cooperative_matrix = file
            .cooperative_matrix
            .iter()
            .map(|e| e.parse())
            .collect::<Result<Vec<CooperativeMatrixProperties>, String>>()?;
        Profile {
            name: file.name,
            description: file.description,
            subgroup_size: 1,
            subgroup_operations: operations,
            max_workgroup_size: file.max_workgroup_size,
            max_workgroup_invocations: file.max_workgroup_invocations,
            max_workgroup_count: file.max_workgroup_count,
            max_shared_memory: file.max_shared_memory,
            cooperative_matrix,
            workgroup_memory_explicit_layout: file.workgroup_memory_explicit_layout,
            identity: file.identity,
            subgroup_size_range: file.device.as_ref().and_then(|d| d.subgroup_size_range),
        }
        .with_subgroup_size(file.subgroup_size)
        .ok_or_else(|| {
            format!(
                "subgroup_size {}: must be a power of two from 1 to 128",
                file.subgroup_size
            )
        })
        .and_then(|p| match p.subgroup_size_range {
            Some([min, max])
                if !(min.is_power_of_two()
                    && max <= 128
                    && min <= p.subgroup_size
                    && p.subgroup_size <= max
                    && max.is_power_of_two()) =>
            {
                Err(format!(
                    "subgroup_size_range [{min}, {max}]: powers of two from 1 to 128 around \
                     subgroup_size {}",
                    p.subgroup_size
                ))
            }
            _ => Ok(p),
        })
    }
}

impl FromStr for ComponentType {
    type Err = String;

    /// The Vulkan name without prefix and suffix, as [`ComponentType`] prints it.
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "FLOAT16" => ComponentType::Float16,
            "FLOAT32" => ComponentType::Float32,
            "FLOAT64" => ComponentType::Float64,
            "BFLOAT16" => ComponentType::BFloat16,
            _ => {
                let (signed, bits) = if let Some(b) = s.strip_prefix("SINT") {
                    (true, b)
                } else if let Some(b) = s.strip_prefix("UINT") {
                    (false, b)
                } else {
                    return Err(format!("unknown component type '{s}'"));
                };
                let bits: u32 = match bits {
                    "8" => 8,
                    "16" => 16,
                    "32" => 32,
                    "64" => 64,
                    _ => return Err(format!("unknown component type '{s}'")),
                };
                if signed {
                    ComponentType::Sint(bits)
                } else {
                    ComponentType::Uint(bits)
                }
            }
        })
    }
}

impl FromStr for CooperativeMatrixProperties {
    type Err = String;

    /// `MxNxK A x B + C -> Result, scope[, saturating]`, as the entry prints itself.
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("not a cooperative-matrix entry (MxNxK A x B + C -> R, scope): '{s}'");
        let mut parts = s.split(',').map(str::trim);
        let main = parts.next().ok_or_else(bad)?;
        let scope = match parts.next() {
            Some("subgroup") => MatrixScope::Subgroup,
            Some("workgroup") => MatrixScope::Workgroup,
            _ => return Err(bad()),
        };
        let saturating = match parts.next() {
            None => false,
            Some("saturating") => true,
            Some(_) => return Err(bad()),
        };
        if parts.next().is_some() {
            return Err(bad());
        }
        let words: Vec<&str> = main.split_whitespace().collect();
        let [shape, a, "x", b, "+", c, "->", result] = words[..] else {
            return Err(bad());
        };
        let dims: Vec<u32> = shape
            .split('x')
            .map(|d| d.parse::<u32>().map_err(|_| bad()))
            .collect::<Result<_, _>>()?;
        let [m, n, k] = dims[..] else {
            return Err(bad());
        };
        Ok(CooperativeMatrixProperties {
            m,
            n,
            k,
            a: a.parse()?,
            b: b.parse()?,
            c: c.parse()?,
            result: result.parse()?,
            saturating,
            scope,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_read_back_what_they_print() {
        for p in Profile::all() {
            for e in &p.cooperative_matrix {
                assert_eq!(e.to_string().parse::<CooperativeMatrixProperties>(), Ok(*e));
            }
        }
        for bad in [
            "16x16 FLOAT16 x FLOAT16 + FLOAT16 -> FLOAT16, subgroup",
            "16x16x16 FLOAT16 x FLOAT16 + FLOAT16 -> FLOAT16",
            "16x16x16 FLOAT16 x FLOAT16 + FLOAT16 -> SINT7, subgroup",
            "16x16x16 FLOAT16 x FLOAT16 + FLOAT16 -> FLOAT16, subgroup, saturating, x",
        ] {
            assert!(bad.parse::<CooperativeMatrixProperties>().is_err(), "{bad}");
        }
    }

    #[test]
    fn bad_files_are_refused_in_words() {
        let good = Profile::default().to_toml(None);
        assert_eq!(Profile::from_toml(&good), Ok(Profile::default()));
        for (from, to, says) in [
            ("subgroup_size = 32", "subgroup_size = 33", "power of two"),
            ("\"ballot\"", "\"ballots\"", "unknown subgroup operation"),
            ("name = ", "nmae = ", "unknown field"),
        ] {
            let text = good.replacen(from, to, 1);
            let err = Profile::from_toml(&text).expect_err(to);
            assert!(err.contains(says), "{err}");
        }
        // A subgroup size range must hold the profile's size, in powers of two.
        for range in ["[64, 128]", "[8, 16]", "[12, 32]", "[16, 256]"] {
            let text = format!("{good}\n[device]\nsubgroup_size_range = {range}\n");
            let err = Profile::from_toml(&text).expect_err(range);
            assert!(err.contains("subgroup_size_range"), "{err}");
        }
        let text = format!("{good}\n[device]\nsubgroup_size_range = [16, 64]\n");
        let ranged = Profile::from_toml(&text).expect("32 in 16..64");
        assert_eq!(ranged.subgroup_size_range, Some([16, 64]));
        assert_eq!(Profile::from_toml(&ranged.to_toml(None)), Ok(ranged));
    }
}
