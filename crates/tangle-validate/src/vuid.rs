//! Vulkan Valid Usage IDs named by environment rules (`VUID-StandaloneSpirv-...`).
//!
//! A rule that comes from the Vulkan specification's "Standalone SPIR-V Validation" section names
//! its VUID through the family error's `vuid()` method; the text lives here once.

/// A Vulkan VUID, stored as its full name (`VUID-StandaloneSpirv-None-04642`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Vuid(pub &'static str);

impl Vuid {
    /// Non-uniform group operations in Vulkan (other than 1.0) must use Subgroup execution scope.
    pub const EXECUTION_SCOPE_SUBGROUP: Vuid = Vuid("VUID-StandaloneSpirv-None-04642");
    /// Execution scopes in Vulkan are limited to Workgroup and Subgroup.
    pub const EXECUTION_SCOPE_WORKGROUP_OR_SUBGROUP: Vuid = Vuid("VUID-StandaloneSpirv-None-04636");
    /// Workgroup execution scope only in TaskNV, MeshNV, TaskEXT, MeshEXT, TessellationControl
    /// and GLCompute entry points.
    pub const WORKGROUP_EXECUTION_SCOPE_MODEL: Vuid = Vuid("VUID-StandaloneSpirv-None-04637");
    /// Cooperative matrix load/store pointers must be Workgroup, StorageBuffer or PhysicalStorageBuffer.
    pub const COOPMAT_POINTER_STORAGE: Vuid = Vuid("VUID-StandaloneSpirv-Pointer-08973");
    /// Cooperative matrix types are limited to Workgroup and Subgroup scope.
    pub const COOPMAT_SCOPE: Vuid = Vuid("VUID-StandaloneSpirv-Scope-12243");
    /// Memory accesses through PhysicalStorageBuffer pointers must be Aligned.
    pub const PHYSICAL_STORAGE_BUFFER_ALIGNED: Vuid =
        Vuid("VUID-StandaloneSpirv-PhysicalStorageBuffer64-04708");
    /// Memory scopes in Vulkan are limited to Device, QueueFamily, Workgroup, Subgroup, Invocation.
    pub const MEMORY_SCOPE: Vuid = Vuid("VUID-StandaloneSpirv-None-04638");
    /// Only `Logical` addressing or `PhysicalStorageBuffer64` is allowed in Vulkan.
    pub const ADDRESSING_MODEL: Vuid = Vuid("VUID-StandaloneSpirv-None-04635");
}

impl std::fmt::Display for Vuid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}
