//! Compute built-in values, written into each invocation's `Input` variables at start.
//!
//! Subgroups are consecutive runs of `LocalInvocationIndex` of the profile's subgroup size; the
//! last subgroup of a workgroup may be partial.

/// Where one invocation sits in the dispatch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    /// `WorkgroupId`.
    pub workgroup: [u32; 3],
    /// `NumWorkgroups`.
    pub groups: [u32; 3],
    /// `WorkgroupSize`.
    pub local_size: [u32; 3],
    /// `LocalInvocationIndex`.
    pub local_index: u32,
    /// Subgroup size of the profile.
    pub subgroup_size: u32,
}

impl Place {
    /// `LocalInvocationId`.
    pub fn local_id(&self) -> [u32; 3] {
        let [x, y, _] = self.local_size;
        let i = self.local_index;
        [
            i % x.max(1),
            (i / x.max(1)) % y.max(1),
            i / (x.max(1) * y.max(1)),
        ]
    }

    /// `GlobalInvocationId`.
    pub fn global_id(&self) -> [u32; 3] {
        let l = self.local_id();
        std::array::from_fn(|i| {
            self.workgroup[i]
                .wrapping_mul(self.local_size[i])
                .wrapping_add(l[i])
        })
    }

    /// The values of a built-in (`spirv::BuiltIn` number), as components; `None` for built-ins
    /// that are not compute inputs.
    pub fn value(&self, builtin: u32) -> Option<Vec<u64>> {
        use spirv::BuiltIn as B;
        let v3 = |a: [u32; 3]| a.iter().map(|&x| u64::from(x)).collect::<Vec<u64>>();
        let invocations = self
            .local_size
            .iter()
            .map(|&x| u64::from(x))
            .product::<u64>();
        let sg = u64::from(self.subgroup_size.max(1));
        let lane = u64::from(self.local_index) % sg;
        let mask = |f: &dyn Fn(u64) -> bool| -> Vec<u64> {
            (0..4u64)
                .map(|w| {
                    (0..32u64)
                        .filter(|b| f(w * 32 + b) && w * 32 + b < sg)
                        .fold(0u64, |m, b| m | (1 << b))
                })
                .collect()
        };
        Some(match B::from_u32(builtin)? {
            B::LocalInvocationId => v3(self.local_id()),
            B::GlobalInvocationId => v3(self.global_id()),
            B::WorkgroupId => v3(self.workgroup),
            B::NumWorkgroups => v3(self.groups),
            B::WorkgroupSize => v3(self.local_size),
            B::LocalInvocationIndex => vec![u64::from(self.local_index)],
            B::SubgroupSize => vec![sg],
            B::SubgroupLocalInvocationId => vec![lane],
            B::SubgroupId => vec![u64::from(self.local_index) / sg],
            B::NumSubgroups => vec![invocations.div_ceil(sg)],
            B::SubgroupEqMask => mask(&|b| b == lane),
            B::SubgroupGeMask => mask(&|b| b >= lane),
            B::SubgroupGtMask => mask(&|b| b > lane),
            B::SubgroupLeMask => mask(&|b| b <= lane),
            B::SubgroupLtMask => mask(&|b| b < lane),
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_masks() {
        let p = Place {
            workgroup: [2, 1, 0],
            groups: [4, 2, 1],
            local_size: [4, 2, 2],
            local_index: 13,
            subgroup_size: 8,
        };
        assert_eq!(p.local_id(), [1, 1, 1]);
        assert_eq!(p.global_id(), [9, 3, 1]);
        assert_eq!(
            p.value(spirv::BuiltIn::SubgroupLocalInvocationId as u32),
            Some(vec![5])
        );
        assert_eq!(p.value(spirv::BuiltIn::SubgroupId as u32), Some(vec![1]));
        assert_eq!(p.value(spirv::BuiltIn::NumSubgroups as u32), Some(vec![2]));
        assert_eq!(
            p.value(spirv::BuiltIn::SubgroupLtMask as u32),
            Some(vec![0b11111, 0, 0, 0])
        );
        assert_eq!(
            p.value(spirv::BuiltIn::SubgroupGeMask as u32),
            Some(vec![0b1110_0000, 0, 0, 0])
        );
    }
}
