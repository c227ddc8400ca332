//! Null descriptors (VK_EXT_robustness2 `nullDescriptor`): what an access through a descriptor
//! written with `VK_NULL_HANDLE` does, and the finding where the feature is off.
//!
//! # Spec
//! Vulkan, "Features", `nullDescriptor`: "descriptors can be written with a VK_NULL_HANDLE
//! resource or view, which are considered valid to access and act as if the descriptor were
//! bound to nothing". `VkWriteDescriptorSet`: "If the nullDescriptor feature is enabled, the
//! buffer, acceleration structure, imageView, or bufferView can be VK_NULL_HANDLE. Loads from
//! a null descriptor return zero values and stores and atomics to a null descriptor are
//! discarded." "Descriptor Set Binding": "If the nullDescriptor feature is enabled, a null
//! descriptor is also considered valid"; without it, `VkDescriptorBufferInfo` "If the
//! nullDescriptor feature is not enabled, buffer must not be VK_NULL_HANDLE" (a write the
//! driver refuses), and a shader's access through a descriptor that is not valid is
//! undefined behaviour ("descriptors a shader uses must be valid").
//!
//! # What tangle does
//! A null buffer descriptor is a region of no bytes ([`crate::run::memory::View::null`]), so
//! every access through it leaves the range and reaches [`crate::run::access::Mem::out_of_range`],
//! which asks [`access`]: with the feature, a load gives zero, a store is dropped and an
//! atomic changes nothing and returns zero (its load part is a load from a null descriptor),
//! whatever buffer robustness is in force, with no finding — the spec fixes each outcome, so
//! nothing is the implementation's choice and no `robust-access` warning follows the value.
//! `OpArrayLength` gives 0 ("bound to nothing": no bytes). Without the feature each access is
//! a [`Finding::NullDescriptor`] error (kind `descriptor`).

use crate::report::Finding;
use crate::run::access::BufferKey;

/// The outcome of an access through the null descriptor `key`: `Ok` (defined: a load gives
/// zero, a store or atomic changes nothing) with the feature `enabled`, else the finding.
pub fn access(enabled: bool, (set, binding, element): BufferKey) -> Result<(), Finding> {
    match enabled {
        true => Ok(()),
        false => Err(Finding::NullDescriptor {
            set,
            binding,
            element,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::kind::{Kind, Severity};

    /// Defined with the feature; an error of kind `descriptor` naming the binding without it.
    #[test]
    fn null_accesses_are_defined_only_with_the_feature() {
        assert_eq!(access(true, (0, 1, None)), Ok(()));
        let Err(f) = access(false, (0, 1, Some(2))) else {
            panic!("no finding without the feature");
        };
        assert_eq!(f.kind(), Kind::Descriptor);
        assert_eq!(f.kind().severity(), Severity::Error);
        assert!(f.is_memory_error());
        let text = f.to_string();
        assert!(text.contains("set 0, binding 1, array element 2"), "{text}");
        assert!(text.contains("nullDescriptor"), "{text}");
    }
}
