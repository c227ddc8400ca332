//! Query pools of timestamps: `vkCmdWriteTimestamp(2)`, resets from commands and the host, and
//! the results (`vkGetQueryPoolResults`, `vkCmdCopyQueryPoolResults`).
//!
//! The clock is the host's monotonic clock in nanoseconds since the driver first read it
//! ([`now`]), so `timestampPeriod` is 1 and `timestampValidBits` 64. Commands run in submission
//! order on one queue, and [`now`] never goes back, even across threads: timestamps are
//! monotonic in submission order.

use crate::objects::{lock, Buffer, Queue};
use ash::vk;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The clock: nanoseconds since the driver first read it, never smaller than a value it gave.
pub fn now() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    static LAST: AtomicU64 = AtomicU64::new(0);
    let t = u64::try_from(START.get_or_init(Instant::now).elapsed().as_nanos()).unwrap_or(u64::MAX);
    LAST.fetch_max(t, Ordering::SeqCst).max(t)
}

/// Bytes to write at an offset from the start of the results.
pub type Write = (u64, Vec<u8>);

/// A pool of timestamp queries: each unavailable (`None`) or holding its timestamp.
#[derive(Debug)]
pub struct QueryPool {
    /// The queries.
    pub values: Mutex<Vec<Option<u64>>>,
    /// Woken when a query is written.
    pub changed: Condvar,
    /// The device's queue, to wait for with `VK_QUERY_RESULT_WAIT_BIT`.
    pub queue: Arc<Queue>,
}

/// One recorded query command.
#[derive(Debug, Clone)]
pub enum QueryCommand {
    /// `vkCmdResetQueryPool`.
    Reset {
        pool: Arc<QueryPool>,
        first: u32,
        count: u32,
    },
    /// `vkCmdWriteTimestamp(2)`.
    Timestamp { pool: Arc<QueryPool>, query: u32 },
    /// `vkCmdCopyQueryPoolResults`.
    Copy {
        pool: Arc<QueryPool>,
        first: u32,
        count: u32,
        dst: Arc<Buffer>,
        offset: u64,
        stride: u64,
        flags: vk::QueryResultFlags,
    },
}

impl QueryPool {
    /// A pool of `count` unavailable queries.
    pub fn new(count: u32, queue: Arc<Queue>) -> QueryPool {
        QueryPool {
            values: Mutex::new(vec![None; count as usize]),
            changed: Condvar::new(),
            queue,
        }
    }

    /// The range `first .. first + count`, checked against the pool.
    fn range(&self, first: u32, count: u32) -> Result<std::ops::Range<usize>, String> {
        let len = lock(&self.values).len();
        let end = first as usize + count as usize;
        if end > len {
            return Err(format!(
                "queries {first}..{end} lie outside the pool's {len}"
            ));
        }
        Ok(first as usize..end)
    }

    /// Makes queries unavailable (`vkResetQueryPool`, `vkCmdResetQueryPool`).
    pub fn reset(&self, first: u32, count: u32) -> Result<(), String> {
        let r = self.range(first, count)?;
        lock(&self.values)[r].fill(None);
        Ok(())
    }

    /// Writes the clock into a query.
    pub fn write(&self, query: u32) -> Result<(), String> {
        let r = self.range(query, 1)?;
        lock(&self.values)[r].fill(Some(now()));
        self.changed.notify_all();
        Ok(())
    }

    /// The queries' values, waiting for them with `WAIT` while submissions are pending (a
    /// query no pending submission can write is never available: an error, not a hang). On the
    /// queue (`on_queue`) nothing is waited for: an earlier command wrote the query or none will.
    fn values(
        &self,
        first: u32,
        count: u32,
        wait: bool,
        on_queue: bool,
    ) -> Result<Vec<Option<u64>>, String> {
        let r = self.range(first, count)?;
        let mut values = lock(&self.values);
        while wait && values[r.clone()].iter().any(Option::is_none) {
            let idle =
                || lock(&self.queue.pending).is_empty() && self.queue.busy.try_lock().is_ok();
            if on_queue || idle() {
                let missing = r.clone().find(|i| values[*i].is_none()).unwrap_or(r.start);
                return Err(format!(
                    "query {missing} is not written by any submission: VK_QUERY_RESULT_WAIT_BIT would wait for ever"
                ));
            }
            values = self
                .changed
                .wait_timeout(values, Duration::from_millis(5))
                .map(|(v, _)| v)
                .unwrap_or_else(|e| e.into_inner().0);
        }
        Ok(values[r].to_vec())
    }

    /// The results of queries `first .. first + count` as `(byte offset, bytes)` writes, `stride`
    /// bytes apart (Vulkan "Query Operation": a value, then with `WITH_AVAILABILITY` its
    /// availability, each 32 or 64 bits; an unavailable query's value is not written), and
    /// whether every query was available. `on_queue`: for a command, which never waits.
    pub fn results(
        &self,
        (first, count): (u32, u32),
        stride: u64,
        flags: vk::QueryResultFlags,
        on_queue: bool,
    ) -> Result<(Vec<Write>, bool), String> {
        use vk::QueryResultFlags as F;
        if flags.contains(F::PARTIAL) {
            return Err("VK_QUERY_RESULT_PARTIAL_BIT is not allowed for timestamp queries (VUID-vkGetQueryPoolResults-queryType-00818)".into());
        }
        let wide = flags.contains(F::TYPE_64);
        let size = if wide { 8 } else { 4 };
        let word = |v: u64| match wide {
            true => v.to_le_bytes().to_vec(),
            // A value past 32 bits wraps ("may either wrap or saturate").
            false => (v as u32).to_le_bytes().to_vec(),
        };
        let values = self.values(first, count, flags.contains(F::WAIT), on_queue)?;
        let mut writes = Vec::new();
        for (i, v) in values.iter().enumerate() {
            let at = (i as u64).saturating_mul(stride);
            if let Some(v) = v {
                writes.push((at, word(*v)));
            }
            if flags.contains(F::WITH_AVAILABILITY) {
                writes.push((at + size, word(u64::from(v.is_some()))));
            }
        }
        Ok((writes, values.iter().all(Option::is_some)))
    }
}

impl QueryCommand {
    /// Runs the command.
    pub fn run(&self) -> Result<(), String> {
        match self {
            QueryCommand::Reset { pool, first, count } => pool.reset(*first, *count),
            QueryCommand::Timestamp { pool, query } => pool.write(*query),
            QueryCommand::Copy {
                pool,
                first,
                count,
                dst,
                offset,
                stride,
                flags,
            } => {
                // Commands run in order: a query the copy waits for was written before it, or
                // never will be (an error, from `values`).
                let (writes, _) = pool.results((*first, *count), *stride, *flags, true)?;
                for (at, bytes) in writes {
                    let (memory, abs) =
                        dst.window(offset.saturating_add(at), bytes.len() as u64)?;
                    memory.bytes.write(abs, &bytes)?;
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_never_goes_back() {
        let a = now();
        let b = now();
        assert!(b >= a);
    }
}
