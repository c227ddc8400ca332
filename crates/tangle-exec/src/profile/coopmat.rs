//! The cooperative-matrix part of a device profile: the list a driver returns from
//! `vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR`, one [`CooperativeMatrixProperties`] per
//! supported (M, N, K, A/B/C/Result component types, saturatingAccumulation, scope) combination.
//!
//! The named profiles' lists are in their files (`crates/tangle-exec/profiles/*.toml`), copied
//! in driver order from `shared/notes/device-properties.md` (§1.5 NVIDIA H200, §2.4 lavapipe,
//! §3.1 RADV on RDNA3, §4.1 ANV on Xe2). What a module may use given such a list is
//! `lower/coopmat_support.rs`.

use std::fmt;

/// `VkComponentTypeKHR`: the component type of one matrix of an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ComponentType {
    /// `VK_COMPONENT_TYPE_FLOAT16_KHR`.
    Float16,
    /// `VK_COMPONENT_TYPE_FLOAT32_KHR`.
    Float32,
    /// `VK_COMPONENT_TYPE_FLOAT64_KHR`.
    Float64,
    /// `VK_COMPONENT_TYPE_BFLOAT16_KHR` (VK_KHR_shader_bfloat16).
    BFloat16,
    /// `VK_COMPONENT_TYPE_SINT{8,16,32,64}_KHR`, by width.
    Sint(u32),
    /// `VK_COMPONENT_TYPE_UINT{8,16,32,64}_KHR`, by width.
    Uint(u32),
}

impl ComponentType {
    /// Whether this is a signed integer type (the Vulkan rules tie the `Matrix*SignedComponents`
    /// operands to exactly these).
    pub fn is_signed_int(self) -> bool {
        matches!(self, ComponentType::Sint(_))
    }
}

impl fmt::Display for ComponentType {
    /// The Vulkan name without prefix and suffix (`FLOAT16`, `SINT8`, `BFLOAT16`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ComponentType::Float16 => write!(f, "FLOAT16"),
            ComponentType::Float32 => write!(f, "FLOAT32"),
            ComponentType::Float64 => write!(f, "FLOAT64"),
            ComponentType::BFloat16 => write!(f, "BFLOAT16"),
            ComponentType::Sint(bits) => write!(f, "SINT{bits}"),
            ComponentType::Uint(bits) => write!(f, "UINT{bits}"),
        }
    }
}

/// `VkScopeKHR` of an entry: the scope instance that holds one matrix value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MatrixScope {
    /// `VK_SCOPE_SUBGROUP_KHR` (SPIR-V Scope 3).
    Subgroup,
    /// `VK_SCOPE_WORKGROUP_KHR` (SPIR-V Scope 2). A `VkCooperativeMatrixPropertiesKHR` entry
    /// may not carry it ("scope must be VK_SCOPE_SUBGROUP_KHR"); only
    /// VK_NV_cooperative_matrix2's `cooperativeMatrixWorkgroupScope` offers it, so no named
    /// profile lists it. It exists for profiles built in code.
    Workgroup,
}

impl MatrixScope {
    /// The scope with this SPIR-V `Scope` value, if cooperative matrices may have it.
    pub fn from_spirv(scope: u64) -> Option<MatrixScope> {
        match scope {
            3 => Some(MatrixScope::Subgroup),
            2 => Some(MatrixScope::Workgroup),
            _ => None,
        }
    }
}

impl fmt::Display for MatrixScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MatrixScope::Subgroup => write!(f, "subgroup"),
            MatrixScope::Workgroup => write!(f, "workgroup"),
        }
    }
}

/// One `VkCooperativeMatrixPropertiesKHR` entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CooperativeMatrixProperties {
    /// `MSize`: rows of A, C and Result.
    pub m: u32,
    /// `NSize`: columns of B, C and Result.
    pub n: u32,
    /// `KSize`: columns of A, rows of B.
    pub k: u32,
    /// `AType`.
    pub a: ComponentType,
    /// `BType`.
    pub b: ComponentType,
    /// `CType`.
    pub c: ComponentType,
    /// `ResultType`.
    pub result: ComponentType,
    /// `saturatingAccumulation`: whether `SaturatingAccumulationKHR` must be present (`true`) or
    /// absent (`false`).
    pub saturating: bool,
    /// `scope`.
    pub scope: MatrixScope,
}

impl fmt::Display for CooperativeMatrixProperties {
    /// `16x16x16 FLOAT16 x FLOAT16 + FLOAT32 -> FLOAT32, subgroup` (MxNxK), with `, saturating`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}x{}x{} {} x {} + {} -> {}, {}",
            self.m, self.n, self.k, self.a, self.b, self.c, self.result, self.scope
        )?;
        if self.saturating {
            write!(f, ", saturating")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::Profile;
    use ComponentType::{BFloat16 as BF16, Float16 as F16, Float32 as F32, Float64 as F64};
    const S32: ComponentType = ComponentType::Sint(32);

    fn list(name: &str) -> Vec<CooperativeMatrixProperties> {
        Profile::by_name(name)
            .map(|p| p.cooperative_matrix)
            .unwrap_or_default()
    }

    #[test]
    fn lists_match_the_notes() {
        // Entry counts from the notes' summary table.
        assert_eq!(list("nvidia").len(), 11);
        assert_eq!(list("lavapipe").len(), 4);
        assert_eq!(list("amd").len(), 14);
        assert_eq!(list("intel").len(), 6);
        assert_eq!(list("amd").iter().filter(|e| e.saturating).count(), 4);
        assert!(list("amd")
            .iter()
            .filter(|e| e.saturating)
            .all(|e| e.result == S32));
        // The default list reaches every component type the executor runs, and holds every
        // entry of the named devices.
        let default = list("default");
        for t in [F16, F32, F64, BF16]
            .into_iter()
            .chain([8, 16, 32, 64].map(ComponentType::Sint))
            .chain([8, 16, 32, 64].map(ComponentType::Uint))
        {
            assert!(default.iter().any(|e| e.a == t && e.result == t), "{t}");
        }
        for name in ["nvidia", "lavapipe", "amd", "intel"] {
            assert!(list(name).iter().all(|e| default.contains(e)), "{name}");
        }
        for name in ["default", "nvidia", "lavapipe", "amd", "intel"] {
            assert!(list(name).iter().all(|e| e.scope == MatrixScope::Subgroup));
        }
        assert_eq!(
            list("nvidia")[3].to_string(),
            "16x16x16 FLOAT16 x FLOAT16 + FLOAT32 -> FLOAT32, subgroup"
        );
        assert_eq!(
            list("amd")[2].to_string(),
            "16x16x16 UINT8 x UINT8 + SINT32 -> SINT32, subgroup, saturating"
        );
    }
}
