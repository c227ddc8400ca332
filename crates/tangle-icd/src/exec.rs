//! Recorded commands and their execution at submit, in order, on the executor.
//!
//! A dispatch resolves each buffer the pipeline uses to its window `(memory, offset, range)`
//! (the descriptor's offset and range, plus a dynamic offset), copies the window's bytes into
//! the executor's resources, runs [`tangle_exec::Pipeline::dispatch`], and writes back the
//! windows the pipeline may write. Windows that alias one allocation therefore see each other's
//! writes from one dispatch to the next. Copying the windows is this phase's gap to issue 29's
//! "one memory model" (docs/driver.md).
//!
//! Every command runs after the previous one has finished, so pipeline barriers order nothing
//! further: they are recorded and have no effect.

use crate::findings::Place;
use crate::objects::{
    lock, Buffer, Descriptor, DescriptorSet, Device, Event, Fence, Pipeline, PipelineLayout, Queue,
    Semaphore,
};
use std::collections::BTreeMap;
use std::sync::Arc;
use tangle_exec::{Resources, RunOptions};

/// One recorded command.
#[derive(Debug, Clone)]
pub enum Command {
    /// `vkCmdBindPipeline`.
    BindPipeline(Arc<Pipeline>),
    /// `vkCmdBindDescriptorSets`.
    BindSets {
        layout: Arc<PipelineLayout>,
        first: u32,
        sets: Vec<Arc<DescriptorSet>>,
        dynamic: Vec<u32>,
    },
    /// `vkCmdPushConstants`.
    PushConstants { offset: u32, bytes: Vec<u8> },
    /// `vkCmdDispatch` and `vkCmdDispatchBase`.
    Dispatch { base: [u32; 3], groups: [u32; 3] },
    /// `vkCmdDispatchIndirect`: the group counts are read from the buffer when it runs.
    DispatchIndirect { buffer: Arc<Buffer>, offset: u64 },
    /// `vkCmdCopyBuffer`: `(src offset, dst offset, size)` regions.
    CopyBuffer {
        src: Arc<Buffer>,
        dst: Arc<Buffer>,
        regions: Vec<(u64, u64, u64)>,
    },
    /// `vkCmdFillBuffer` (`size` already resolved from `VK_WHOLE_SIZE`).
    FillBuffer {
        dst: Arc<Buffer>,
        offset: u64,
        size: u64,
        data: u32,
    },
    /// `vkCmdUpdateBuffer`.
    UpdateBuffer {
        dst: Arc<Buffer>,
        offset: u64,
        bytes: Vec<u8>,
    },
    /// `vkCmdPipelineBarrier(2)` and `vkCmdWaitEvents(2)`: nothing to do, commands run one
    /// after another (an event a command waits for was set by an earlier command or the host).
    Barrier,
    /// `vkCmdSetEvent(2)` (`true`) and `vkCmdResetEvent(2)` (`false`).
    SetEvent(Arc<Event>, bool),
}

/// One batch of a `vkQueueSubmit(2)`: what it waits for, its command buffers' commands (copied
/// at submit), what it signals; the fence goes with the submission's last batch.
#[derive(Debug, Default)]
pub struct Submission {
    /// Semaphores and the timeline values to wait for.
    pub waits: Vec<(Arc<Semaphore>, u64)>,
    /// The command buffers' commands.
    pub buffers: Vec<Vec<Command>>,
    /// Semaphores and the timeline values to signal.
    pub signals: Vec<(Arc<Semaphore>, u64)>,
    /// The fence to signal.
    pub fence: Option<Arc<Fence>>,
}

/// Runs the queue's pending submissions in order, until one waits for a timeline value not
/// reached yet (it runs when a later signal, from the host or another queue's submission,
/// reaches it, and calls this again).
pub fn drain(queue: &Queue) {
    let _busy = lock(&queue.busy);
    loop {
        let next = {
            let mut pending = lock(&queue.pending);
            match pending.front() {
                Some(s) if s.waits.iter().all(|(sem, v)| sem.reached(*v)) => pending.pop_front(),
                _ => None,
            }
        };
        let Some(s) = next else { return };
        run(&queue.device, &s.buffers);
        for (sem, v) in &s.signals {
            sem.signal(*v);
        }
        if let Some(f) = &s.fence {
            f.signal();
        }
    }
}

/// A bound descriptor set and its dynamic offsets by `(binding, element)`.
type BoundSet = (Arc<DescriptorSet>, BTreeMap<(u32, u32), u32>);

/// What a command buffer has bound so far while it runs.
#[derive(Default)]
struct Bound {
    pipeline: Option<Arc<Pipeline>>,
    /// Sets by number, each with its dynamic offsets by `(binding, element)`.
    sets: BTreeMap<u32, BoundSet>,
    push: Vec<u8>,
}

/// Runs one submission's command buffers; what goes wrong is kept in the device's findings as
/// a driver error (the program is never stopped).
pub fn run(device: &Device, buffers: &[Vec<Command>]) {
    let submission = {
        let mut f = lock(&device.findings);
        f.submissions += 1;
        f.submissions
    };
    let mut dispatch = 0;
    for commands in buffers {
        let mut bound = Bound {
            push: vec![0; crate::caps::MAX_PUSH_CONSTANTS as usize],
            ..Bound::default()
        };
        for c in commands {
            let place = Place {
                submission,
                dispatch,
            };
            if let Err(e) = step(device, &mut bound, c, place, &mut dispatch) {
                lock(&device.findings).errors.push(format!(
                    "submission {submission}, dispatch {}: {e}",
                    place.dispatch
                ));
            }
        }
    }
    // TANGLE_REPORT is rewritten after every submission, not only at vkDestroyDevice: a
    // program that never destroys its device (ggml keeps it until the process exits) still
    // leaves a complete report.
    lock(&device.findings).write_report(&device.caps.profile.name);
}

/// Runs one command.
fn step(
    device: &Device,
    bound: &mut Bound,
    c: &Command,
    place: Place,
    dispatch: &mut u64,
) -> Result<(), String> {
    match c {
        Command::BindPipeline(p) => bound.pipeline = Some(p.clone()),
        Command::BindSets {
            layout,
            first,
            sets,
            dynamic,
        } => bind_sets(bound, layout, *first, sets, dynamic)?,
        Command::PushConstants { offset, bytes } => {
            let at = *offset as usize;
            let slot = bound
                .push
                .get_mut(at..at + bytes.len())
                .ok_or("push constants past maxPushConstantsSize")?;
            slot.copy_from_slice(bytes);
        }
        Command::Dispatch { base, groups } => {
            *dispatch += 1;
            if *base != [0, 0, 0] {
                return Err(format!(
                    "vkCmdDispatchBase with base workgroup {base:?} is not run yet (only a zero base)"
                ));
            }
            run_dispatch(device, bound, *groups, place)?;
        }
        Command::DispatchIndirect { buffer, offset } => {
            *dispatch += 1;
            let (memory, at) = buffer.window(*offset, 12)?;
            let bytes = memory.bytes.read(at, 12)?;
            let word = |i: usize| {
                let mut w = [0u8; 4];
                w.copy_from_slice(&bytes[i * 4..i * 4 + 4]);
                u32::from_le_bytes(w)
            };
            run_dispatch(device, bound, [word(0), word(1), word(2)], place)?;
        }
        Command::CopyBuffer { src, dst, regions } => {
            for &(from, to, size) in regions {
                let (sm, s) = src.window(from, size)?;
                let (dm, d) = dst.window(to, size)?;
                let bytes = sm.bytes.read(s, size)?;
                dm.bytes.write(d, &bytes)?;
            }
        }
        Command::FillBuffer {
            dst,
            offset,
            size,
            data,
        } => {
            let (m, at) = dst.window(*offset, *size)?;
            let len = usize::try_from(*size).map_err(|_| "fill too large")?;
            let bytes: Vec<u8> = data.to_le_bytes().into_iter().cycle().take(len).collect();
            m.bytes.write(at, &bytes)?;
        }
        Command::UpdateBuffer { dst, offset, bytes } => {
            let (m, at) = dst.window(*offset, bytes.len() as u64)?;
            m.bytes.write(at, bytes)?;
        }
        Command::Barrier => {}
        Command::SetEvent(e, on) => *lock(&e.set) = *on,
    }
    Ok(())
}

/// Binds sets `first..` and hands out the dynamic offsets in binding, then element, order
/// (Vulkan "Descriptor Set Binding": "ordered by binding number within each set").
fn bind_sets(
    bound: &mut Bound,
    layout: &PipelineLayout,
    first: u32,
    sets: &[Arc<DescriptorSet>],
    dynamic: &[u32],
) -> Result<(), String> {
    let mut offsets = dynamic.iter();
    for (i, set) in sets.iter().enumerate() {
        let number = first + i as u32;
        if layout.sets.get(number as usize).is_none() {
            return Err(format!("set {number} is not in the pipeline layout"));
        }
        let mut mine = BTreeMap::new();
        for (binding, b) in &set.layout.bindings {
            if b.dynamic() {
                for element in 0..b.count {
                    let o = offsets
                        .next()
                        .ok_or("fewer dynamic offsets than dynamic descriptors")?;
                    mine.insert((*binding, element), *o);
                }
            }
        }
        bound.sets.insert(number, (set.clone(), mine));
    }
    Ok(())
}

/// The window `(memory, absolute offset, length)` a bound descriptor gives a shader.
fn window(
    bound: &Bound,
    set: u32,
    binding: u32,
    element: u32,
) -> Result<Option<(Arc<crate::objects::Memory>, u64, u64)>, String> {
    let Some((ds, dynamic)) = bound.sets.get(&set) else {
        return Err(format!("no descriptor set is bound at set {set}"));
    };
    let descriptor = lock(&ds.slots).get(&(binding, element)).cloned();
    let Some(descriptor) = descriptor else {
        return Ok(None);
    };
    match descriptor {
        Descriptor::Buffer {
            buffer,
            offset,
            range,
        } => {
            let dynamic = u64::from(dynamic.get(&(binding, element)).copied().unwrap_or(0));
            let start = offset
                .checked_add(dynamic)
                .ok_or("the descriptor's offset overflows")?;
            // VK_WHOLE_SIZE reaches the end of the buffer from where the view starts.
            let len = match range {
                ash::vk::WHOLE_SIZE => buffer.size.checked_sub(start).ok_or_else(|| {
                    format!("set {set} binding {binding}: offset {start} is past the buffer")
                })?,
                r => r,
            };
            let (memory, at) = buffer
                .window(start, len)
                .map_err(|e| format!("set {set} binding {binding}: {e}"))?;
            Ok(Some((memory, at, len)))
        }
        Descriptor::Unsupported(t) => Err(format!(
            "set {set} binding {binding}: descriptors of type {t:?} are not run yet"
        )),
    }
}

/// One dispatch: the windows in, the executor, the written windows out, the findings kept.
fn run_dispatch(
    device: &Device,
    bound: &Bound,
    groups: [u32; 3],
    place: Place,
) -> Result<(), String> {
    let pipeline = bound
        .pipeline
        .as_ref()
        .ok_or("no compute pipeline is bound")?;
    if groups.contains(&0) {
        // A grid of zero workgroups (groupCountX × groupCountY × groupCountZ) runs nothing.
        return Ok(());
    }
    if !pipeline.exec.images().is_empty() {
        return Err("images and texel buffers are not run yet".into());
    }
    let mut resources = Resources {
        push_constants: bound.push.clone(),
        ..Resources::default()
    };
    let mut windows = Vec::new();
    for (set, binding) in pipeline.exec.bindings() {
        if let Some((memory, at, len)) = window(bound, set, binding, 0)? {
            resources
                .buffers
                .insert((set, binding), memory.bytes.read(at, len)?);
            windows.push(((set, binding, 0), memory, at));
        }
    }
    for array in pipeline.exec.descriptor_arrays() {
        let count = match array.count {
            Some(n) => n,
            None => bound
                .sets
                .get(&array.set)
                .and_then(|(s, _)| s.layout.bindings.get(&array.binding))
                .map_or(0, |b| b.count),
        };
        for element in 1..count {
            if let Some((memory, at, len)) = window(bound, array.set, array.binding, element)? {
                let key = (array.set, array.binding, element);
                resources.elements.insert(key, memory.bytes.read(at, len)?);
                windows.push((key, memory, at));
            }
        }
    }
    let report = pipeline
        .exec
        .dispatch(
            &mut resources,
            groups,
            &RunOptions {
                robustness: device.robustness,
                ..RunOptions::default()
            },
        )
        .map_err(|e| format!("{}: {e}", pipeline.label()))?;
    for ((set, binding, element), memory, at) in windows {
        if !pipeline.exec.may_write(set, binding) {
            continue;
        }
        let bytes = match element {
            0 => resources.buffers.get(&(set, binding)),
            e => resources.elements.get(&(set, binding, e)),
        };
        if let Some(bytes) = bytes {
            memory.bytes.write(at, bytes)?;
        }
    }
    let mut f = lock(&device.findings);
    f.dispatches += 1;
    f.add(&pipeline.label(), place, &report.summaries);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::{LayoutBinding, SetLayout};
    use ash::vk::DescriptorType;

    fn set(bindings: &[(u32, DescriptorType, u32)]) -> Arc<DescriptorSet> {
        let layout = SetLayout {
            bindings: bindings
                .iter()
                .map(|&(b, kind, count)| (b, LayoutBinding { kind, count }))
                .collect(),
        };
        Arc::new(DescriptorSet {
            layout: Arc::new(layout),
            pool: 0,
            slots: Default::default(),
        })
    }

    #[test]
    fn dynamic_offsets_go_in_binding_then_element_order() {
        let a = set(&[
            (2, DescriptorType::STORAGE_BUFFER_DYNAMIC, 1),
            (0, DescriptorType::UNIFORM_BUFFER_DYNAMIC, 2),
            (1, DescriptorType::STORAGE_BUFFER, 1),
        ]);
        let b = set(&[(0, DescriptorType::STORAGE_BUFFER_DYNAMIC, 1)]);
        let layout = PipelineLayout {
            sets: vec![a.layout.clone(), b.layout.clone()],
            push_size: 0,
        };
        let mut bound = Bound::default();
        bind_sets(&mut bound, &layout, 0, &[a, b], &[10, 20, 30, 40]).expect("bound");
        let offsets = |set: u32| bound.sets.get(&set).map(|(_, o)| o.clone());
        assert_eq!(
            offsets(0),
            Some(BTreeMap::from([((0, 0), 10), ((0, 1), 20), ((2, 0), 30)]))
        );
        assert_eq!(offsets(1), Some(BTreeMap::from([((0, 0), 40)])));
        // Too few offsets, or a set past the layout, are errors, not panics.
        let c = set(&[(0, DescriptorType::STORAGE_BUFFER_DYNAMIC, 2)]);
        assert!(bind_sets(&mut bound, &layout, 0, std::slice::from_ref(&c), &[1]).is_err());
        assert!(bind_sets(&mut bound, &layout, 2, &[c], &[1, 2]).is_err());
    }
}
