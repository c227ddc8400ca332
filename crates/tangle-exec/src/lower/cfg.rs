//! Structured order of a function's blocks.
//!
//! Tangles are scheduled by block rank: the waiting tangle with the lowest rank runs first, and
//! tangles at the same position rejoin ([`crate::run::tangle`]). The rank is a reverse post-order
//! in which a header visits its merge block first and its continue target second, so every block
//! of a construct ranks before the construct's continue target and merge block. Invocations that
//! leave a selection, a loop iteration or a loop therefore wait there until every invocation of
//! the construct has arrived: the reconvergence points of SPV_KHR_maximal_reconvergence.

/// Ranks for blocks `0..n`: `succ[b]` are the branch targets of `b`, `merge[b]` and `cont[b]`
/// its structured merge and continue target. Unreachable blocks get ranks after all others.
pub fn structured_ranks(
    succ: &[Vec<u32>],
    merge: &[Option<u32>],
    cont: &[Option<u32>],
) -> Vec<u32> {
    let n = succ.len();
    let mut state = vec![0u8; n]; // 0 new, 1 on stack, 2 done
    let mut post = Vec::with_capacity(n);
    // Iterative DFS: (block, next child index).
    let children = |b: usize| -> Vec<u32> {
        let mut c = Vec::new();
        if let Some(m) = merge.get(b).copied().flatten() {
            c.push(m);
        }
        if let Some(k) = cont.get(b).copied().flatten() {
            c.push(k);
        }
        if let Some(s) = succ.get(b) {
            // Later-listed successors are visited first so the earlier ones rank first.
            c.extend(s.iter().rev().copied());
        }
        c
    };
    if n > 0 {
        let mut stack: Vec<(usize, Vec<u32>, usize)> = vec![(0, children(0), 0)];
        state[0] = 1;
        while let Some((b, kids, i)) = stack.last_mut() {
            if let Some(&k) = kids.get(*i) {
                *i += 1;
                let k = k as usize;
                if k < n && state[k] == 0 {
                    state[k] = 1;
                    let c = children(k);
                    stack.push((k, c, 0));
                }
            } else {
                state[*b] = 2;
                post.push(*b);
                stack.pop();
            }
        }
    }
    let mut rank = vec![u32::MAX; n];
    for (r, &b) in post.iter().rev().enumerate() {
        rank[b] = r as u32;
    }
    for (r, next) in rank
        .iter_mut()
        .filter(|r| **r == u32::MAX)
        .zip(post.len() as u32..)
    {
        *r = next;
    }
    rank
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selection_merge_ranks_last() {
        // 0: header (merge 3) -> 1, 2; 1 -> 3; 2 -> 3.
        let succ = vec![vec![1, 2], vec![3], vec![3], vec![]];
        let r = structured_ranks(&succ, &[Some(3), None, None, None], &[None; 4]);
        assert_eq!(r[0], 0);
        assert!(r[1] < r[3] && r[2] < r[3]);
        assert!(r[1] < r[2]);
    }

    #[test]
    fn loop_body_before_continue_before_merge() {
        // 0 -> 1 (header: merge 4, continue 3) -> 2 (body) -> {3, 4}; 3 -> 1.
        let succ = vec![vec![1], vec![2], vec![3, 4], vec![1], vec![]];
        let r = structured_ranks(
            &succ,
            &[None, Some(4), None, None, None],
            &[None, Some(3), None, None, None],
        );
        assert!(r[1] < r[2] && r[2] < r[3] && r[3] < r[4]);
    }
}
