//! Feature structs by field name: what the device supports, and the first feature a
//! `vkCreateDevice` asks for that it does not (`VK_ERROR_FEATURE_NOT_PRESENT`, naming it).
//!
//! Every feature struct is a header and a run of `VkBool32`s; `ash`'s derived `Debug` text
//! gives their names in order, so one table of supported names covers the core structs and
//! every extension struct that repeats their fields, and a struct the driver does not claim
//! (`VkPhysicalDeviceBufferDeviceAddressFeatures`, ...) comes out all false.

use std::collections::HashMap;
use std::fmt::Debug;

/// The `(name, value)` pairs of a struct's fields after its `sType` and `pNext` (and without
/// `ash`'s `_marker`), in declaration order, read from its `Debug` text.
pub fn fields<T: Debug>(value: &T) -> Vec<(String, u32)> {
    let text = format!("{value:?}");
    let inner = match (text.find('{'), text.rfind('}')) {
        (Some(a), Some(b)) if a < b => &text[a + 1..b],
        _ => return Vec::new(),
    };
    inner
        .split(", ")
        .filter_map(|f| {
            let (name, v) = f.trim().split_once(": ")?;
            if matches!(name, "s_type" | "p_next" | "_marker") {
                return None;
            }
            Some((name.to_string(), v.parse().unwrap_or(0)))
        })
        .collect()
}

/// The struct's name as its `Debug` text gives it (`PhysicalDeviceVulkan12Features`).
pub fn struct_name<T: Debug>(value: &T) -> String {
    let text = format!("{value:?}");
    format!("Vk{}", text.split(' ').next().unwrap_or_default())
}

/// Every feature the device supports, by field name.
pub fn supported(caps: &crate::caps::Caps) -> HashMap<String, bool> {
    let mut all = Vec::new();
    all.extend(fields(&caps.features()));
    all.extend(fields(&caps.vulkan11()));
    all.extend(fields(&caps.vulkan12()));
    all.extend(fields(&caps.vulkan13()));
    all.extend(fields(&caps.coopmat_features()));
    all.extend(fields(&caps.rotate_features()));
    all.extend(fields(&caps.robustness2()));
    all.extend(fields(&caps.pipeline_robustness()));
    all.extend(fields(&caps.workgroup_layout()));
    all.extend(fields(&caps.maximal_reconvergence()));
    all.extend(fields(&caps.uniform_control_flow()));
    let mut map = HashMap::new();
    for (name, v) in all {
        *map.entry(name).or_insert(false) |= v != 0;
    }
    map
}

/// The words a struct with these field names holds on this device.
pub fn words(names: &[(String, u32)], supported: &HashMap<String, bool>) -> Vec<u32> {
    names
        .iter()
        .map(|(n, _)| u32::from(supported.get(n).copied().unwrap_or(false)))
        .collect()
}

/// The first feature `requested` turns on that the device lacks, as `Struct::field`.
pub fn missing(
    struct_name: &str,
    names: &[(String, u32)],
    requested: &[u32],
    supported: &HashMap<String, bool>,
) -> Option<String> {
    names.iter().zip(requested).find_map(|((n, _), r)| {
        (*r != 0 && !supported.get(n).copied().unwrap_or(false))
            .then(|| format!("{struct_name}::{n}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ash::vk;

    #[test]
    fn names_come_from_the_struct() {
        let v = vk::PhysicalDeviceVulkan11Features {
            storage_buffer16_bit_access: vk::TRUE,
            ..Default::default()
        };
        let f = fields(&v);
        assert_eq!(f.len(), 12);
        assert_eq!(f[0], ("storage_buffer16_bit_access".to_string(), 1));
        assert_eq!(struct_name(&v), "VkPhysicalDeviceVulkan11Features");
        assert_eq!(fields(&vk::PhysicalDeviceFeatures::default()).len(), 55);
    }

    #[test]
    fn missing_features_are_named() {
        let caps = crate::caps::Caps::new(tangle_exec::Profile::default());
        let s = supported(&caps);
        let names = fields(&vk::PhysicalDeviceFeatures::default());
        let mut asked = vec![0; names.len()];
        let int64 = names
            .iter()
            .position(|(n, _)| n == "shader_int64")
            .expect("a field");
        asked[int64] = 1;
        assert_eq!(missing("F", &names, &asked, &s), None);
        let geometry = names
            .iter()
            .position(|(n, _)| n == "geometry_shader")
            .expect("a field");
        asked[geometry] = 1;
        assert_eq!(
            missing("F", &names, &asked, &s),
            Some("F::geometry_shader".into())
        );
        // An extension struct repeating a core field is supported through it.
        let ext = fields(&vk::PhysicalDevice16BitStorageFeatures::default());
        // storageInputOutput16 is a graphics feature: off.
        assert_eq!(words(&ext, &s), [1, 1, 1, 0], "{ext:?}");
        let timeline = fields(&vk::PhysicalDeviceTimelineSemaphoreFeatures::default());
        assert_eq!(words(&timeline, &s), [1]);
        // A struct of features the device lacks altogether comes out all false.
        let bda = fields(&vk::PhysicalDeviceBufferDeviceAddressFeatures::default());
        assert_eq!(words(&bda, &s), [0, 0, 0]);
    }
}
