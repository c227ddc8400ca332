//! Race-log entries of whole matrix tiles: one run of consecutive invocations repeated on
//! rows a pitch apart ([`Rows`], what a cooperative-matrix store under a row-striped layout
//! writes), and their screen ([`screen`]).
//!
//! A tiled GEMM's tile stores were 16 entries a tile in the log of runs ([`super::races`]), most
//! of the entries of its race screen, which sorted and swept them after the dispatch (a fifth
//! of a 1024³ GEMM's time on 16 cores). As one entry a tile the log is 16 times shorter, and a
//! region that only such entries of one shape touch is screened as a grid of rectangles
//! without being cut into rows: two entries share a byte only where their row ranges and
//! their column ranges both overlap. Anything else (another shape, a run of another kind in the
//! same region, a row longer than the pitch) is cut into its rows and screened as runs: the
//! answer never depends on which way a region went, only the time.

use super::races::Access;

/// One access per row on `rows` rows: row `r` is `row` moved `r · pitch` bytes on, by the
/// invocations `r · row.count` after `row`'s. `row` is a run (`step == len`): each byte of a row
/// belongs to one invocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Rows {
    /// Row 0 (the ordering is by its pointer first).
    pub(crate) row: Access,
    /// Bytes from a row's start to the next row's.
    pub(crate) pitch: u64,
    /// Rows (at least 1).
    pub(crate) rows: u64,
}

impl Rows {
    /// Row `r`'s access.
    pub(crate) fn at(&self, r: u64) -> Access {
        Access {
            ptr: self.row.ptr.wrapping_add(r.wrapping_mul(self.pitch)),
            first: self.row.first.wrapping_add(r.wrapping_mul(self.row.count)),
            ..self.row
        }
    }

    /// The bytes one row covers.
    fn width(&self) -> u64 {
        self.row.end() - self.row.ptr
    }

    /// Every row's access, into `out`.
    fn cut_into(&self, out: &mut Vec<Access>) {
        out.extend((0..self.rows).map(|r| self.at(r)));
    }

    /// What two entries of one shape must agree on for the grid screen.
    fn shape(&self) -> (u64, u64, u64, u64, u64) {
        (
            self.row.len,
            self.row.step,
            self.row.count,
            self.pitch,
            self.rows,
        )
    }
}

/// Screens the regions `rows` touches that no entry of `parts` (the runs, each part sorted)
/// touches and whose entries share one shape, as grids: `true` when two entries there might
/// race. The entries of every other region are cut into their rows and added to `parts` as one
/// more sorted part, for the screen of runs.
pub(crate) fn screen(mut rows: Vec<Rows>, parts: &mut Vec<Vec<Access>>) -> bool {
    use rayon::slice::ParallelSliceMut;
    // On the pool where the screen runs there ([`super::races::Gather::may_race`]).
    if rows.len() < super::races::POOLED_SCREEN {
        rows.sort_unstable();
    } else {
        rows.par_sort_unstable();
    }
    // A tile stored again by the same subgroup at the same place is the same accesses: once
    // (its overlaps are checked lane by lane, which a loop of such stores would make quadratic).
    rows.dedup();
    let mut cut: Vec<Access> = Vec::new();
    let mut rest = &rows[..];
    while let Some(head) = rest.first() {
        let region = super::races::region(head.row.ptr);
        let n = rest.partition_point(|r| super::races::region(r.row.ptr) == region);
        let (these, after) = rest.split_at(n);
        rest = after;
        let runs_there = parts.iter().any(|p| {
            let from = p.partition_point(|a| super::races::region(a.ptr) < region);
            p.get(from)
                .is_some_and(|a| super::races::region(a.ptr) == region)
        });
        match (!runs_there).then(|| grid_may_race(these)).flatten() {
            Some(true) => return true,
            Some(false) => {}
            None => these.iter().for_each(|r| r.cut_into(&mut cut)),
        }
    }
    if !cut.is_empty() {
        cut.par_sort_unstable();
        parts.push(cut);
    }
    false
}

/// Whether two of `rows` (one region's, sorted) might race, screened as rectangles of a grid:
/// `None` where they are not all of one shape with rows no wider than the pitch, each row
/// inside one grid row (the caller cuts them into runs then).
///
/// With `base` the first entry's pointer, an entry starts at grid row `q = (ptr − base) / pitch`
/// and column `m = (ptr − base) % pitch`; its rows are grid rows `q .. q + rows`, each the columns
/// `m .. m + width`. Sorted by pointer they are sorted by `(q, m)`; two share a byte exactly when
/// `|q − q'| < rows` and `|m − m'| < width`. Those that do race unless both read, or every byte
/// they share is the same invocation's in both (the same tile stored twice by one subgroup:
/// [`shares_between_invocations`], rare, as any overlap of a correct program's tiles is).
fn grid_may_race(rows: &[Rows]) -> Option<bool> {
    let head = rows.first()?;
    if head.row.len == 0 {
        return None;
    }
    let (shape, width, pitch) = (head.shape(), head.width(), head.pitch);
    let base = head.row.ptr;
    let fits = |r: &Rows| {
        r.shape() == shape
            && r.row.step == r.row.len
            && r.rows >= 1
            && width <= pitch
            && (r.row.ptr - base) % pitch + width <= pitch
    };
    if pitch == 0 || !rows.iter().all(fits) {
        return None;
    }
    // Each entry's (q, m), made once: the loops below look them up many times.
    let places: Vec<(u64, u64)> = rows
        .iter()
        .map(|r| ((r.row.ptr - base) / pitch, (r.row.ptr - base) % pitch))
        .collect();
    let races = |i: usize, j: usize| {
        let (a, b) = (&rows[i], &rows[j]);
        (a.row.write || b.row.write) && shares_between_invocations((a, places[i]), (b, places[j]))
    };
    // The start of each grid row's entries, and that row.
    let mut groups: Vec<(u64, usize)> = Vec::new();
    for (i, &(q, m)) in places.iter().enumerate() {
        if groups.last().is_none_or(|&(g, _)| g != q) {
            groups.push((q, i));
        }
        let g = groups.len() - 1;
        // The entries of this grid row before it that overlap it are the ones right before it
        // (one width each, sorted by column).
        for a in (groups[g].1..i).rev() {
            if places[a].1 + width <= m {
                break;
            }
            if races(a, i) {
                return Some(true);
            }
        }
        // Earlier grid rows less than `rows` above: those starting in the columns it overlaps.
        for k in (0..g).rev() {
            let (qk, start) = groups[k];
            if q - qk >= head.rows {
                break;
            }
            let end = groups.get(k + 1).map_or(i, |&(_, s)| s);
            let group = places.get(start..end).unwrap_or_default();
            let from = start + group.partition_point(|&(_, ma)| ma + width <= m);
            for (a, &(_, ma)) in places.iter().enumerate().take(end).skip(from) {
                if ma >= m + width {
                    break;
                }
                if races(a, i) {
                    return Some(true);
                }
            }
        }
    }
    Some(false)
}

/// Whether two overlapping entries of one shape, at grid places `(q, m)`, give a byte they
/// share to two invocations: lane by lane over their shared grid rows, each run of `a` against
/// the (at most two) runs of `b` it overlaps. Row `Q − q`'s lane `l` of an entry is invocation
/// `first + (Q − q) · count + l`, at columns `m + l · len ..`.
fn shares_between_invocations(
    (a, (qa, ma)): (&Rows, (u64, u64)),
    (b, (qb, mb)): (&Rows, (u64, u64)),
) -> bool {
    let (len, count) = (i128::from(a.row.len), i128::from(a.row.count));
    let invocation = |r: &Rows, row: u64, lane: i128| {
        r.row
            .first
            .wrapping_add(row.wrapping_mul(r.row.count))
            .wrapping_add(lane as u64)
    };
    let rows = qa.max(qb)..qa.min(qb).saturating_add(a.rows);
    rows.into_iter().any(|grid_row| {
        (0..count).any(|la| {
            let start = i128::from(ma) + la * len - i128::from(mb);
            let lanes =
                start.div_euclid(len).max(0)..=((start + len - 1).div_euclid(len)).min(count - 1);
            lanes
                .into_iter()
                .any(|lb| invocation(a, grid_row - qa, la) != invocation(b, grid_row - qb, lb))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_rng::xorshift;

    /// Every pair of invocations touching one byte, one of them writing, over the entries'
    /// bytes: the reference the screens answer to.
    fn bytes_race(accesses: &[Access]) -> bool {
        let mut touched: Vec<(u64, u64, bool)> = Vec::new();
        for a in accesses {
            for l in 0..a.count {
                let at = a.ptr + l * a.step;
                touched.extend((at..at + a.len).map(|b| (b, a.first + l, a.write)));
            }
        }
        touched.sort_unstable();
        touched.iter().enumerate().any(|(i, &(b, f, w))| {
            touched[i + 1..]
                .iter()
                .take_while(|&&(c, _, _)| c == b)
                .any(|&(_, g, v)| f != g && (w || v))
        })
    }

    /// A random log of tiles of one shape or several, on grids (as a GEMM stores them) and
    /// off them, some twice (by the same invocations or others), some read, with or without
    /// runs in the same region.
    fn random_case(x: &mut u64) -> (Vec<Rows>, Vec<Access>) {
        let len = [4, 8][(xorshift(x) % 2) as usize];
        let count = 1 + xorshift(x) % 3;
        let width = len * count;
        let pitch = width * (1 + xorshift(x) % 4) + [0, 4][(xorshift(x) % 2) as usize];
        let nrows = 1 + xorshift(x) % 4;
        let on_grid = !xorshift(x).is_multiple_of(3);
        let mut rows: Vec<Rows> = Vec::new();
        for t in 0..1 + xorshift(x) % 8 {
            let (q, m) = if on_grid {
                (
                    (xorshift(x) % 3) * nrows,
                    (xorshift(x) % (pitch / width).max(1)) * width,
                )
            } else {
                (xorshift(x) % 6, (xorshift(x) % (pitch / 4)) * 4)
            };
            let first = if xorshift(x).is_multiple_of(4) {
                rows.last().map_or(0, |r| r.row.first)
            } else {
                t * 64
            };
            let r = Rows {
                row: Access {
                    ptr: (5 << 48) | (64 + q * pitch + m),
                    len,
                    step: len,
                    count,
                    first,
                    write: !xorshift(x).is_multiple_of(5),
                },
                pitch: if xorshift(x).is_multiple_of(10) {
                    pitch + 4
                } else {
                    pitch
                },
                rows: nrows,
            };
            rows.push(r);
            if xorshift(x).is_multiple_of(6) {
                // The same tile again: by the same invocations or the next ones, where it
                // was or moved on 4 bytes (half a run of 8) or a run (the next invocation's
                // bytes, all of them the same invocation's in both when it is one on).
                let (later, shift) =
                    [(0, 0), (1, 0), (0, 4), (1, len), (0, len)][(xorshift(x) % 5) as usize];
                rows.push(Rows {
                    row: Access {
                        first: r.row.first + later,
                        ptr: r.row.ptr + shift,
                        ..r.row
                    },
                    ..r
                });
            }
        }
        let mut runs: Vec<Access> = Vec::new();
        if xorshift(x).is_multiple_of(4) {
            runs.push(Access {
                ptr: (5 << 48) | ((xorshift(x) % 64) * 4),
                len: 4,
                step: 4,
                count: 1 + xorshift(x) % 4,
                first: 1000,
                write: xorshift(x).is_multiple_of(2),
            });
        }
        (rows, runs)
    }

    /// Random tiles of one shape or several, on grids (as a GEMM stores them) and off them,
    /// some twice (by the same invocations or others), some read, with or without runs in
    /// the same region: the screen with its grids answers exactly as the bytes say, and each
    /// way (grid or cut into rows) was taken.
    #[test]
    fn tiles_screen_as_the_bytes_they_touch() {
        let mut x = 0x6a09_e667_f3bc_c909u64;
        let (mut raced, mut clean, mut grids, mut cuts) = (0, 0, 0, 0);
        for _ in 0..3000 {
            let (rows, runs) = random_case(&mut x);
            let mut all: Vec<Access> = runs.clone();
            rows.iter().for_each(|r| r.cut_into(&mut all));
            let want = bytes_race(&all);
            let mut parts = vec![runs.clone()];
            let found = screen(rows.clone(), &mut parts);
            // The grid answers alone; the cut rows go on to the screen of runs, whose joined
            // runs may over-report (never miss) where rows of other invocations overlap.
            let got = found || crate::wide::races::may_race(&mut parts.concat());
            if parts.len() == 1 {
                grids += 1;
                assert_eq!(got, want, "{rows:?} {runs:?}");
            } else {
                cuts += 1;
                assert!(got || !want, "{rows:?} {runs:?}");
            }
            if want {
                raced += 1;
            } else {
                clean += 1;
            }
        }
        assert!(raced > 300 && clean > 300, "{raced} {clean}");
        assert!(grids > 500 && cuts > 500, "{grids} {cuts}");
    }

    /// A 64 × 64 grid of 16-row tiles, as the 1024³ GEMM stores them, is clean; the same grid
    /// with one tile moved a row down, or one column over, races.
    #[test]
    fn a_gemm_s_tiles_are_clean_and_a_moved_one_races() {
        let tile = |tm: u64, tn: u64, down: u64, over: u64| Rows {
            row: Access {
                ptr: (5 << 48) | ((tm * 16 + down) * 4096 + tn * 64 + over),
                len: 32,
                step: 32,
                count: 2,
                first: (tm * 64 + tn) * 32,
                write: true,
            },
            pitch: 4096,
            rows: 16,
        };
        let grid: Vec<Rows> = (0..64)
            .flat_map(|tm| (0..64).map(move |tn| tile(tm, tn, 0, 0)))
            .collect();
        let mut parts = Vec::new();
        assert!(!screen(grid.clone(), &mut parts));
        assert!(parts.is_empty(), "the grid was cut into rows");
        for (down, over) in [(1, 0), (0, 4), (15, 60)] {
            let mut moved = grid.clone();
            moved[64 * 10 + 7] = tile(10, 7, down, over);
            assert!(screen(moved, &mut Vec::new()), "{down} {over}");
        }
    }

    /// Tiles handed in by several workers beside their runs screen through a [`Gather`] as
    /// the tiles' screen and the runs' screen do together: the written regions the tiles'
    /// rows add keep the runs' reads of them.
    #[test]
    fn gathered_tiles_screen_as_their_screen_and_the_runs_do() {
        use crate::wide::races::Gather;
        let mut x = 0x3c6e_f372_fe94_f82bu64;
        let mut raced = 0;
        for _ in 0..2000 {
            let (rows, runs) = random_case(&mut x);
            let mut parts = vec![runs.clone()];
            let want = screen(rows.clone(), &mut parts)
                || crate::wide::races::may_race(&mut parts.concat());
            let gather = Gather::default();
            let split = (xorshift(&mut x) as usize) % (rows.len() + 1);
            gather.hand_in_rows(rows[..split].to_vec());
            gather.hand_in(runs.clone());
            gather.hand_in_rows(rows[split..].to_vec());
            assert_eq!(gather.may_race(), want, "{rows:?} {runs:?}");
            raced += usize::from(want);
        }
        assert!(raced > 300 && raced < 1700, "{raced}");
    }
}
