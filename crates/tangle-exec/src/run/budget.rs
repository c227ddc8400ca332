//! The dispatch's memory budget ([`crate::RunOptions::memory_limit`]) and its thread count:
//! what the executor will hold is added up before anything is allocated.

use crate::device::{Resources, RunOptions};
use crate::error::{ExecError, Trap};
use crate::program::Program;

/// Bytes one worker thread holds: the register file and the Function/Private memory of every
/// subgroup of a workgroup, and the workgroup's Workgroup memory.
pub(super) fn per_worker(prog: &Program, sg: usize) -> u64 {
    let invocations = prog
        .local_size
        .iter()
        .map(|&x| u64::from(x))
        .product::<u64>();
    let subgroups = invocations.div_ceil(sg.max(1) as u64);
    let regs = u64::from(prog.slots)
        .saturating_mul(sg as u64)
        .saturating_mul(8);
    let invocation = prog.invocation_bytes.saturating_mul(sg as u64);
    subgroups
        .saturating_mul(regs.saturating_add(invocation))
        .saturating_add(prog.workgroup_bytes)
}

/// The worker threads of a dispatch of `total` workgroups: the options' count (0: every core),
/// capped to the machine's cores, to `total`, and to what the memory budget holds after the
/// executor's copy of the buffers and the shared register template. One worker that does not
/// fit is [`Trap::MemoryLimit`].
pub(super) fn threads(
    prog: &Program,
    sg: usize,
    res: &Resources,
    options: &RunOptions,
    total: u64,
) -> Result<usize, ExecError> {
    let cores = super::workers::cores();
    let asked = match options.threads {
        0 => cores,
        n => n.min(cores),
    };
    let wanted = asked
        .min(usize::try_from(total).unwrap_or(usize::MAX))
        .max(1);
    let buffers = res
        .buffers
        .values()
        .chain(res.elements.values())
        .chain(res.images.values().map(|i| &i.texels))
        .chain(res.image_elements.values().map(|i| &i.texels))
        .map(|b| b.len() as u64)
        // A view is not copied; a dispatch that may restart keeps a copy of its bytes.
        .chain(res.views.values().map(|v| v.range))
        .chain(res.texel_views.values().map(|t| t.view.range))
        .sum::<u64>()
        .saturating_add(res.push_constants.len() as u64);
    let template = u64::from(prog.slots)
        .saturating_mul(sg as u64)
        .saturating_mul(8);
    let fixed = buffers.saturating_add(template);
    let worker = per_worker(prog, sg);
    let room = options.memory_limit.saturating_sub(fixed);
    let fit = room.checked_div(worker).unwrap_or(u64::MAX);
    if fit == 0 {
        return Err(Trap::MemoryLimit {
            limit: options.memory_limit,
            needed: fixed.saturating_add(worker),
            what: format!(
                "{buffers} bytes of buffers, {template} of register template, {worker} per worker thread"
            ),
        }
        .into());
    }
    Ok(wanted.min(usize::try_from(fit).unwrap_or(usize::MAX)))
}
