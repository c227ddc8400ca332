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
    /// that are not compute inputs. No allocation: it runs for every invocation.
    pub fn value(&self, builtin: u32) -> Option<Components> {
        use spirv::BuiltIn as B;
        let v3 = |a: [u32; 3]| Components::new(&a.map(u64::from));
        let one = |v: u64| Components::new(&[v]);
        let invocations = self
            .local_size
            .iter()
            .map(|&x| u64::from(x))
            .product::<u64>();
        let sg = u64::from(self.subgroup_size.max(1));
        let lane = u64::from(self.local_index) % sg;
        let mask = |f: &dyn Fn(u64) -> bool| -> Components {
            let words: [u64; 4] = std::array::from_fn(|w| {
                let w = w as u64;
                (0..32u64)
                    .filter(|b| f(w * 32 + b) && w * 32 + b < sg)
                    .fold(0u64, |m, b| m | (1 << b))
            });
            Components::new(&words)
        };
        Some(match B::from_u32(builtin)? {
            B::LocalInvocationId => v3(self.local_id()),
            B::GlobalInvocationId => v3(self.global_id()),
            B::WorkgroupId => v3(self.workgroup),
            B::NumWorkgroups => v3(self.groups),
            B::WorkgroupSize => v3(self.local_size),
            B::LocalInvocationIndex => one(u64::from(self.local_index)),
            B::SubgroupSize => one(sg),
            B::SubgroupLocalInvocationId => one(lane),
            B::SubgroupId => one(u64::from(self.local_index) / sg),
            B::NumSubgroups => one(invocations.div_ceil(sg)),
            B::SubgroupEqMask => mask(&|b| b == lane),
            B::SubgroupGeMask => mask(&|b| b >= lane),
            B::SubgroupGtMask => mask(&|b| b > lane),
            B::SubgroupLeMask => mask(&|b| b <= lane),
            B::SubgroupLtMask => mask(&|b| b < lane),
            _ => return None,
        })
    }
}

/// The components of a built-in's value (at most 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Components {
    parts: [u64; 4],
    len: usize,
}

impl Components {
    fn new(values: &[u64]) -> Self {
        let mut parts = [0; 4];
        let len = values.len().min(4);
        parts[..len].copy_from_slice(&values[..len]);
        Components { parts, len }
    }

    /// The components in order.
    pub fn as_slice(&self) -> &[u64] {
        &self.parts[..self.len]
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
        let value = |b: spirv::BuiltIn| p.value(b as u32).map(|c| c.as_slice().to_vec());
        assert_eq!(
            value(spirv::BuiltIn::SubgroupLocalInvocationId),
            Some(vec![5])
        );
        assert_eq!(value(spirv::BuiltIn::SubgroupId), Some(vec![1]));
        assert_eq!(value(spirv::BuiltIn::NumSubgroups), Some(vec![2]));
        assert_eq!(
            value(spirv::BuiltIn::GlobalInvocationId),
            Some(vec![9, 3, 1])
        );
        assert_eq!(
            value(spirv::BuiltIn::SubgroupLtMask),
            Some(vec![0b11111, 0, 0, 0])
        );
        assert_eq!(
            value(spirv::BuiltIn::SubgroupGeMask),
            Some(vec![0b1110_0000, 0, 0, 0])
        );
    }
}
