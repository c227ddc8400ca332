//! `OpSwitch` case constructs (SPIR-V 2.11 "Structured Control Flow"; SPIRV-Tools
//! `StructuredSwitchChecks` and `FindCaseFallThrough`): the switch header dominates its cases,
//! a case construct leaves only to the merge block, a structured exit, or one other case
//! construct (its fallthrough), which must be the next target in the `OpSwitch` operand list,
//! and no case construct is the fallthrough of two others.

use super::exits::{structured_exit, Construct};
use super::{CfgError, Flow};
use crate::facts::{IdBuildHasher, IdSet};
use std::collections::HashMap;

/// Where a finding points, and what it is.
type Finding = (Option<usize>, CfgError);

/// The case rules of the switch construct `c`, whose merge block is `merge`.
pub(super) fn check(flow: &Flow, c: &Construct, merge: usize) -> Result<(), Finding> {
    let s = &flow.s;
    let header = c.header;
    let Some(block) = flow.block(header) else {
        return Ok(());
    };
    let at = Some(block.end);
    // Default first, then the case targets, in operand order.
    let Some(labels) = block
        .successors
        .iter()
        .map(|l| flow.index.get(l).copied())
        .collect::<Option<Vec<usize>>>()
    else {
        return Ok(());
    };
    let Some(&default) = labels.first() else {
        return Ok(());
    };
    let cases: IdSet<usize> = labels.iter().copied().filter(|&t| t != merge).collect();
    let default_is_case = labels.iter().skip(1).any(|&t| t == default);
    let mut targeted: HashMap<usize, usize, IdBuildHasher> = HashMap::default();
    let mut fall_throughs: HashMap<usize, Option<usize>, IdBuildHasher> = HashMap::default();
    let mut default_fall_through = None;
    for (k, &target) in labels.iter().enumerate() {
        if target == merge {
            continue;
        }
        let mut next = match fall_throughs.get(&target) {
            Some(&known) => known,
            None => {
                if s.is_reachable(header) && s.is_reachable(target) && !s.dominates(header, target)
                {
                    return Err((
                        at,
                        CfgError::SwitchDoesNotDominateCase {
                            header: flow.label(header),
                            target: flow.label(target),
                        },
                    ));
                }
                let found = fall_through(flow, c, target, &cases).map_err(|e| (at, e))?;
                if let Some(f) = found {
                    *targeted.entry(f).or_default() += 1;
                }
                fall_throughs.insert(target, found);
                found
            }
        };
        // A case falling through to the default (named nowhere else) continues where the
        // default falls through.
        if next == Some(default) && !default_is_case {
            next = default_fall_through;
        }
        let Some(next) = next else {
            continue;
        };
        if k == 0 {
            default_fall_through = Some(next);
            continue;
        }
        // Targets naming the same block in a row count as one.
        let mut last = k;
        while labels.get(last + 1) == Some(&target) {
            last += 1;
        }
        if labels.get(last + 1) != Some(&next) {
            return Err((
                at,
                CfgError::FallthroughNotToNext {
                    case: flow.label(target),
                    next: flow.label(next),
                },
            ));
        }
    }
    let mut several: Vec<usize> = targeted
        .iter()
        .filter(|(_, &count)| count > 1)
        .map(|(&f, _)| f)
        .collect();
    several.sort_unstable();
    if let Some(&f) = several.first() {
        return Err((
            at,
            CfgError::CaseTargetedBySeveral {
                case: flow.label(f),
            },
        ));
    }
    Ok(())
}

/// The case construct another case construct `target` falls through to, if any
/// (SPIRV-Tools `FindCaseFallThrough`): walks the blocks `target` dominates and looks at where
/// they leave it.
fn fall_through(
    flow: &Flow,
    c: &Construct,
    target: usize,
    cases: &IdSet<usize>,
) -> Result<Option<usize>, CfgError> {
    let s = &flow.s;
    let target_reachable = s.is_reachable(target);
    let mut found = None;
    let mut visited = IdSet::<usize>::default();
    let mut stack = vec![target];
    while let Some(b) = stack.pop() {
        if Some(b) == c.exit || !visited.insert(b) {
            continue;
        }
        if target_reachable && s.is_reachable(b) && s.dominates(target, b) {
            // Still inside the case construct.
            stack.extend(s.succ.get(b).into_iter().flatten().copied());
            continue;
        }
        if !cases.contains(&b) {
            if structured_exit(flow, c, b) {
                continue;
            }
            return Err(CfgError::CaseInvalidBranch {
                case: flow.label(target),
                target: flow.label(b),
            });
        }
        match found {
            None if b != target => found = Some(b),
            Some(first) if first != b => {
                return Err(CfgError::CaseFallsThroughToSeveral {
                    case: flow.label(target),
                    first: flow.label(first),
                    second: flow.label(b),
                })
            }
            _ => {}
        }
    }
    Ok(found)
}
