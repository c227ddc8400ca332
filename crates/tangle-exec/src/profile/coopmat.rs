//! The cooperative-matrix part of a device profile: the list a driver returns from
//! `vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR`, one [`CooperativeMatrixProperties`] per
//! supported (M, N, K, A/B/C/Result component types, saturatingAccumulation, scope) combination.
//!
//! The named profiles' lists are copied, in driver order, from `shared/notes/device-properties.md`
//! (§1.5 NVIDIA H200, §2.4 lavapipe, §3.1 RADV on RDNA3, §4.1 ANV on Xe2). What a module may use
//! given such a list is `lower/coopmat_support.rs`.

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

use ComponentType::{BFloat16 as BF16, Float16 as F16, Float32 as F32, Float64 as F64};
const S8: ComponentType = ComponentType::Sint(8);
const S32: ComponentType = ComponentType::Sint(32);
const U8: ComponentType = ComponentType::Uint(8);
const U32: ComponentType = ComponentType::Uint(32);

/// A subgroup-scope entry whose C type is its Result type, as every driver in the notes lists.
fn entry(
    (m, n, k): (u32, u32, u32),
    a: ComponentType,
    b: ComponentType,
    result: ComponentType,
    saturating: bool,
) -> CooperativeMatrixProperties {
    CooperativeMatrixProperties {
        m,
        n,
        k,
        a,
        b,
        c: result,
        result,
        saturating,
        scope: MatrixScope::Subgroup,
    }
}

/// The `default` profile's list: small shapes that let tests reach every component type tangle
/// executes, every signedness mix of 8-bit inputs, saturating accumulation on every integer
/// type, widening accumulators, and a shape with M, N and K all different (so a transposed
/// operand cannot pass unnoticed); then every entry of the `nvidia`, `lavapipe`, `amd` and `intel`
/// lists, so that a kernel written for any of those devices runs on `default`.
///
/// Subgroup scope only: `VkCooperativeMatrixPropertiesKHR` requires "scope must be
/// VK_SCOPE_SUBGROUP_KHR", and no device in the notes offers workgroup scope; a test that needs
/// it builds a profile with a [`MatrixScope::Workgroup`] entry.
pub fn default_list() -> Vec<CooperativeMatrixProperties> {
    let small = (8, 8, 8);
    let ints = [8, 16, 32, 64].map(ComponentType::Sint);
    let uints = [8, 16, 32, 64].map(ComponentType::Uint);
    let mut list = Vec::new();
    // Every component type, T x T + T -> T.
    for t in [F16, F32, F64, BF16].into_iter().chain(ints).chain(uints) {
        list.push(entry(small, t, t, t, false));
    }
    // The ML accumulators: 16-bit floats into f32.
    list.push(entry(small, F16, F16, F32, false));
    list.push(entry(small, BF16, BF16, F32, false));
    // 8-bit inputs of either signedness into 32 bits (as RADV lists them), saturating into SINT32.
    for a in [U8, S8] {
        for b in [U8, S8] {
            list.push(entry(small, a, b, U32, false));
            list.push(entry(small, a, b, S32, false));
            list.push(entry(small, a, b, S32, true));
        }
    }
    // Saturating accumulation at every integer width and signedness.
    for t in ints.into_iter().chain(uints) {
        list.push(entry(small, t, t, t, true));
    }
    // Widening accumulators.
    for (a, r) in [
        (S8, ComponentType::Sint(16)),
        (ComponentType::Sint(16), ComponentType::Sint(64)),
        (U8, ComponentType::Uint(16)),
        (U32, ComponentType::Uint(64)),
        (F16, F64),
    ] {
        list.push(entry(small, a, a, r, false));
    }
    // M, N and K all different.
    list.push(entry((8, 16, 4), F16, F16, F32, false));
    list.push(entry((8, 16, 4), S8, S8, S32, false));
    // Every entry a real device lists, so a kernel written for one runs on `default` too.
    for e in [nvidia_list(), lavapipe_list(), amd_list(), intel_list()].concat() {
        if !list.contains(&e) {
            list.push(e);
        }
    }
    list
}

/// NVIDIA H200, driver 580.159.04: the 11 entries queried (notes §1.5), in driver order.
pub fn nvidia_list() -> Vec<CooperativeMatrixProperties> {
    vec![
        entry((16, 16, 16), F16, F16, F16, false),
        entry((16, 8, 16), F16, F16, F16, false),
        entry((16, 8, 8), F16, F16, F16, false),
        entry((16, 16, 16), F16, F16, F32, false),
        entry((16, 8, 16), F16, F16, F32, false),
        entry((16, 8, 8), F16, F16, F32, false),
        entry((16, 16, 32), U8, U8, U32, false),
        entry((16, 16, 32), S8, S8, S32, false),
        entry((16, 8, 32), U8, U8, U32, false),
        entry((16, 8, 32), S8, S8, S32, false),
        entry((16, 16, 16), BF16, BF16, F32, false),
    ]
}

/// Mesa 26 lavapipe on a host with 256-bit vectors (notes §2.4); hosts with 128-bit vectors
/// expose no cooperative matrices at all.
pub fn lavapipe_list() -> Vec<CooperativeMatrixProperties> {
    let s = (8, 8, 8);
    vec![
        entry(s, F16, F16, F16, false),
        entry(s, F16, F16, F32, false),
        entry(s, U8, U8, U32, false),
        entry(s, S8, S8, S32, false),
    ]
}

/// RADV on RDNA3 (GFX11), default options: the 14 entries of notes §3.1 (no bf16, which needs
/// `RADV_EXPERIMENTAL_BFLOAT16` before GFX12; no FP8, which needs GFX11.7).
pub fn amd_list() -> Vec<CooperativeMatrixProperties> {
    let s = (16, 16, 16);
    let mut list = Vec::new();
    for a in [U8, S8] {
        for b in [U8, S8] {
            list.push(entry(s, a, b, U32, false));
            list.push(entry(s, a, b, S32, false));
            list.push(entry(s, a, b, S32, true));
        }
    }
    list.push(entry(s, F16, F16, F16, false));
    list.push(entry(s, F16, F16, F32, false));
    list
}

/// ANV on Xe2 (Lunar Lake, Battlemage): the 6 entries of notes §4.1 (M = 8, N = 16,
/// K = 16 for 16-bit inputs and 32 for 8-bit inputs).
pub fn intel_list() -> Vec<CooperativeMatrixProperties> {
    vec![
        entry((8, 16, 16), F16, F16, F16, false),
        entry((8, 16, 16), F16, F16, F32, false),
        entry((8, 16, 16), BF16, BF16, BF16, false),
        entry((8, 16, 16), BF16, BF16, F32, false),
        entry((8, 16, 32), S8, S8, S32, false),
        entry((8, 16, 32), U8, U8, U32, false),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_match_the_notes() {
        // Entry counts from the notes' summary table.
        assert_eq!(nvidia_list().len(), 11);
        assert_eq!(lavapipe_list().len(), 4);
        assert_eq!(amd_list().len(), 14);
        assert_eq!(intel_list().len(), 6);
        assert_eq!(amd_list().iter().filter(|e| e.saturating).count(), 4);
        assert!(amd_list()
            .iter()
            .filter(|e| e.saturating)
            .all(|e| e.result == S32));
        // The default list reaches every component type the executor runs.
        let default = default_list();
        for t in [F16, F32, F64, BF16]
            .into_iter()
            .chain([8, 16, 32, 64].map(ComponentType::Sint))
            .chain([8, 16, 32, 64].map(ComponentType::Uint))
        {
            assert!(default.iter().any(|e| e.a == t && e.result == t), "{t}");
        }
        for list in [
            default,
            nvidia_list(),
            lavapipe_list(),
            amd_list(),
            intel_list(),
        ] {
            assert!(list.iter().all(|e| e.scope == MatrixScope::Subgroup));
        }
        assert_eq!(
            nvidia_list()[3].to_string(),
            "16x16x16 FLOAT16 x FLOAT16 + FLOAT32 -> FLOAT32, subgroup"
        );
        assert_eq!(
            amd_list()[2].to_string(),
            "16x16x16 UINT8 x UINT8 + SINT32 -> SINT32, subgroup, saturating"
        );
    }
}
