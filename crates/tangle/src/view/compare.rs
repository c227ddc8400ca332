//! Two policies side by side: which steps of a subgroup ran under one policy and not (as often)
//! under the other (the tangles differ), and which stored values the dispatch left different.

use super::model::{PolicyRun, Step};
use crate::cpu_backend::TracedRun;
use serde::Serialize;
use std::collections::HashMap;

/// The most differing stored words listed per dispatch (all are counted).
const MAX_STORES: usize = 64;

/// A 32-bit word of a binding that the two policies left different.
#[derive(Debug, Clone, Serialize)]
pub struct StoreDiff {
    /// `set:binding` (and `[element]` for an array element).
    pub binding: String,
    /// The word's byte offset.
    pub byte: usize,
    /// Its value under each policy, as hexadecimal.
    pub values: [String; 2],
}

/// Marks the steps of each subgroup drawn under both policies whose (block, tangle) ran more
/// often under one than under the other.
pub fn mark_differences(a: &mut PolicyRun, b: &mut PolicyRun) {
    for sa in &mut a.subgroups {
        let Some(sb) = b
            .subgroups
            .iter_mut()
            .find(|s| s.workgroup == sa.workgroup && s.subgroup == sa.subgroup)
        else {
            continue;
        };
        let (da, db) = (differs(&sa.steps, &sb.steps), differs(&sb.steps, &sa.steps));
        for (s, d) in sa.steps.iter_mut().zip(da) {
            s.differs = d;
        }
        for (s, d) in sb.steps.iter_mut().zip(db) {
            s.differs = d;
        }
    }
}

/// For each step of `x`: whether its (block, tangle) ran more often in `x`, up to it, than
/// in all of `y`.
fn differs(x: &[Step], y: &[Step]) -> Vec<bool> {
    let mut left: HashMap<(u32, u128), usize> = HashMap::new();
    for s in y {
        *left.entry((s.block, s.mask.0)).or_default() += 1;
    }
    x.iter()
        .map(|s| {
            let n = left.entry((s.block, s.mask.0)).or_default();
            let differs = *n == 0;
            *n = n.saturating_sub(1);
            differs
        })
        .collect()
}

/// The words of the bindings the two dispatches left different: the first [`MAX_STORES`], and
/// how many in all.
pub fn stores(a: &TracedRun, b: &TracedRun) -> (Vec<StoreDiff>, usize) {
    let mut list = Vec::new();
    let mut count = 0;
    for ((set, binding, element), x) in &a.bindings {
        let Some((_, y)) = b
            .bindings
            .iter()
            .find(|(k, _)| *k == (*set, *binding, *element))
        else {
            continue;
        };
        let name = match element {
            0 => format!("{set}:{binding}"),
            e => format!("{set}:{binding}[{e}]"),
        };
        for (i, (wx, wy)) in x.chunks(4).zip(y.chunks(4)).enumerate() {
            if wx == wy {
                continue;
            }
            count += 1;
            if list.len() < MAX_STORES {
                list.push(StoreDiff {
                    binding: name.clone(),
                    byte: i * 4,
                    values: [hex(wx), hex(wy)],
                });
            }
        }
    }
    (list, count)
}

/// Little-endian bytes as one hexadecimal number.
fn hex(bytes: &[u8]) -> String {
    let v = bytes.iter().rev().fold(0u64, |a, &b| a << 8 | u64::from(b));
    format!("{v:#x}")
}
