//! Recorded commands and their execution at submit, in order, on the executor.
//!
//! A dispatch resolves each buffer the pipeline uses to its window `(memory, offset, range)`
//! (the descriptor's offset and range, plus a dynamic offset) and binds it as a view of the
//! allocation ([`tangle_exec::Resources::views`]): a `VkDeviceMemory` is the executor's
//! allocation ([`crate::ffi::Bytes`]), so [`tangle_exec::Pipeline::dispatch`] runs on the
//! program's memory in place, with nothing copied in or out, whatever the allocation's size.
//! Windows that alias one allocation see each other's writes within a dispatch, as on a GPU,
//! and the race check keys their bytes by allocation. Copy, fill and update commands write the
//! same allocation.
//!
//! Every command runs after the previous one has finished, so pipeline barriers order nothing
//! further in the execution; what they, events, semaphores and fences would order on a GPU is
//! followed to find hazards between dispatches ([`crate::hazards`]).

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
    /// `vkCmdPipelineBarrier(2)` and `vkCmdWaitEvents(2)`: nothing to run, commands run one
    /// after another (an event a command waits for was set by an earlier command or the host);
    /// what it orders between dispatches, for the hazards.
    Barrier(crate::hazards::Orders),
    /// `vkCmdSetEvent(2)` (`true`) and `vkCmdResetEvent(2)` (`false`).
    SetEvent(Arc<Event>, bool),
    /// Image copies and clears ([`crate::transfer`]).
    Image(crate::transfer::ImageCommand),
    /// Timestamp queries ([`crate::query`]).
    Query(crate::query::QueryCommand),
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
    let mut found = Vec::new();
    let was_lost = queue.device.is_lost();
    {
        let _busy = lock(&queue.busy);
        while let Some(s) = next(queue) {
            found.extend(submit(queue, &s));
        }
    }
    if queue.device.is_lost() && !was_lost {
        crate::findings::lost(&queue.device);
    } else if !found.is_empty() {
        crate::findings::exec_report(&queue.device, false);
    }
    // Only now, with the queue's lock released, the causes found for the first time go to the
    // program's messengers: a callback may submit to this queue or wait for it.
    for (cause, pipeline) in found {
        crate::ffi::deliver_causes(
            queue.device.instance,
            std::slice::from_ref(&cause),
            &pipeline,
        );
    }
}

/// The queue's next submission, if it can run (what it waits for is reached).
fn next(queue: &Queue) -> Option<Submission> {
    let mut pending = lock(&queue.pending);
    match pending.front() {
        Some(s) if s.waits.iter().all(|(sem, v)| sem.reached(*v)) => pending.pop_front(),
        _ => None,
    }
}

/// A cause of findings found for the first time, with its pipeline, for the messengers.
type Found = (crate::findings::Cause, Arc<Pipeline>);

/// Runs one submission: its waits and signals for the hazards, its command buffers, its
/// semaphores and fence; the causes it found first.
fn submit(queue: &Queue, s: &Submission) -> Vec<Found> {
    {
        let mut h = lock(&queue.device.hazards);
        for (sem, _) in &s.waits {
            h.waited(Arc::as_ptr(sem) as usize);
        }
    }
    let found = run(&queue.device, &s.buffers);
    {
        let mut h = lock(&queue.device.hazards);
        let signalled = s.signals.iter().map(|(sem, _)| Arc::as_ptr(sem) as usize);
        for key in signalled.chain(s.fence.iter().map(|f| Arc::as_ptr(f) as usize)) {
            h.signalled(key);
        }
    }
    for (sem, v) in &s.signals {
        sem.signal(*v);
    }
    if let Some(f) = &s.fence {
        f.signal();
    }
    found
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

/// The host waited for `fence` (`None`: for the queue to be idle): every dispatch its
/// submission (or any) ran is ordered before the submissions to come.
pub fn host_waited(device: &Device, fence: Option<&Arc<Fence>>) {
    let mut h = lock(&device.hazards);
    match fence {
        Some(f) => h.waited(Arc::as_ptr(f) as usize),
        None => {
            let mark = h.mark();
            h.order(mark, crate::hazards::Orders::Memory);
        }
    }
}

/// Runs one submission's command buffers; what goes wrong is kept in the device's findings as
/// a driver error (the program is never stopped). Returns the causes found for the first time.
pub fn run(device: &Device, buffers: &[Vec<Command>]) -> Vec<Found> {
    let mut found = Vec::new();
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
            // A lost device runs nothing more (its submissions' fences and semaphores are still
            // signalled, so that no wait hangs: the waits answer VK_ERROR_DEVICE_LOST).
            if device.is_lost() {
                return found;
            }
            let place = Place {
                submission,
                dispatch,
            };
            if let Err(e) = step(device, &mut bound, c, (place, &mut found), &mut dispatch) {
                let e = format!("submission {submission}, dispatch {}: {e}", place.dispatch);
                if device.is_lost() {
                    crate::config::say(&e);
                }
                lock(&device.findings).errors.push(e);
            }
        }
    }
    lock(&device.findings).tiers.write_as_asked();
    // The reports are rewritten after every submission, not only at vkDestroyDevice: a
    // program that never destroys its device (ggml keeps it until the process exits) still
    // leaves a complete report.
    crate::findings::progress(device);
    found
}

/// A dispatch's error in words. One stopped at its time limit loses the device, as a GPU's
/// watchdog does with a dispatch that runs too long (Vulkan, "Lost Device": "Typical reasons
/// for device loss will include things like execution timing out (to prevent denial of
/// service)"): skipping it and signalling its fence would hand the program results it never
/// computed as if they were complete.
fn dispatch_error(device: &Device, pipeline: &Pipeline, e: tangle_exec::ExecError) -> String {
    let text = format!("{}: {e}", pipeline.label());
    match e {
        tangle_exec::ExecError::Trap(tangle_exec::Trap::TimeLimit { .. }) => {
            device
                .lost
                .store(true, std::sync::atomic::Ordering::Release);
            format!("{text}; VK_ERROR_DEVICE_LOST: the device is lost, nothing more runs on it")
        }
        _ => text,
    }
}

/// Runs one command.
fn step(
    device: &Device,
    bound: &mut Bound,
    c: &Command,
    (place, found): (Place, &mut Vec<Found>),
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
            found.extend(run_dispatch(device, bound, (*base, *groups), place)?);
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
            found.extend(run_dispatch(
                device,
                bound,
                ([0; 3], [word(0), word(1), word(2)]),
                place,
            )?);
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
        Command::Barrier(orders) => lock(&device.hazards).barrier(*orders),
        Command::SetEvent(e, on) => *lock(&e.set) = *on,
        Command::Image(c) => c.run()?,
        Command::Query(c) => c.run()?,
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

/// Whether the descriptor at `(binding, element)` of the set bound at `set` is a null buffer
/// descriptor (`nullDescriptor`).
fn is_null(bound: &Bound, set: u32, binding: u32, element: u32) -> bool {
    bound.sets.get(&set).is_some_and(|(ds, _)| {
        matches!(
            lock(&ds.slots).get(&(binding, element)),
            Some(Descriptor::Null)
        )
    })
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
        other => Err(format!(
            "set {set} binding {binding}: {} where the shader has a buffer",
            match other {
                Descriptor::Unsupported(t) => format!("a descriptor of type {t:?}"),
                _ => "an image, sampler or texel buffer descriptor".to_string(),
            }
        )),
    }
}

/// Every descriptor of the bound sets, by `(set, binding, element)`.
fn bound_slots(bound: &Bound) -> Vec<((u32, u32, u32), Descriptor)> {
    let mut out = Vec::new();
    for (set, (ds, _)) in &bound.sets {
        for ((binding, element), d) in lock(&ds.slots).iter() {
            out.push(((*set, *binding, *element), d.clone()));
        }
    }
    out
}

/// The layout binding `(set, binding)` of the bound sets.
fn layout_binding(bound: &Bound, set: u32, binding: u32) -> Option<crate::objects::LayoutBinding> {
    bound
        .sets
        .get(&set)?
        .0
        .layout
        .bindings
        .get(&binding)
        .copied()
}

/// One dispatch of `groups` workgroups from `base` (`vkCmdDispatchBase`): its buffer windows
/// bound as views, its images copied in, the executor, the written images out, the findings
/// kept; the causes it found for the first time.
fn run_dispatch(
    device: &Device,
    bound: &Bound,
    (base, groups): ([u32; 3], [u32; 3]),
    place: Place,
) -> Result<Vec<Found>, String> {
    let started = std::time::Instant::now();
    let pipeline = bound
        .pipeline
        .as_ref()
        .ok_or("no compute pipeline is bound")?;
    if groups.contains(&0) {
        // A grid of zero workgroups (groupCountX × groupCountY × groupCountZ) runs nothing.
        return Ok(Vec::new());
    }
    let max = device.caps.profile.max_workgroup_count;
    if (0..3).any(|c| u64::from(base[c]) + u64::from(groups[c]) > u64::from(max[c])) {
        // VUID-vkCmdDispatchBase-groupCountX-00421 (and Y, Z).
        return Err(format!(
            "base {base:?} + {groups:?} workgroups pass maxComputeWorkGroupCount {max:?}"
        ));
    }
    let mut resources = Resources {
        push_constants: bound.push.clone(),
        ..Resources::default()
    };
    // The windows bound, for the bytes the dispatch touched (hazards between dispatches).
    let mut windows: Vec<Window> = Vec::new();
    for (set, binding) in pipeline.exec.bindings() {
        if is_null(bound, set, binding, 0) {
            resources.null_buffers.insert((set, binding, 0));
        } else if let Some((memory, at, len)) = window(bound, set, binding, 0)? {
            resources
                .views
                .insert((set, binding, 0), memory.bytes.view(at, len)?);
            windows.push(((set, binding, 0), memory, at, len));
        }
    }
    for array in pipeline.exec.descriptor_arrays() {
        // Arrays of images and samplers are bound by `image::bind`.
        if array.kind != tangle_exec::program::DescriptorKind::Buffer {
            continue;
        }
        let count = match array.count {
            Some(n) => n,
            None => bound
                .sets
                .get(&array.set)
                .and_then(|(s, _)| s.layout.bindings.get(&array.binding))
                .map_or(0, |b| b.count),
        };
        // Element 0 too: the shader's array is no plain buffer `bindings` names.
        for element in 0..count {
            let key = (array.set, array.binding, element);
            if resources.views.contains_key(&key) || resources.null_buffers.contains(&key) {
                continue;
            }
            if is_null(bound, array.set, array.binding, element) {
                resources.null_buffers.insert(key);
            } else if let Some((memory, at, len)) =
                window(bound, array.set, array.binding, element)?
            {
                resources.views.insert(key, memory.bytes.view(at, len)?);
                windows.push((key, memory, at, len));
            }
        }
    }
    let slots = bound_slots(bound);
    let count = |set: u32, binding: u32| layout_binding(bound, set, binding).map_or(0, |b| b.count);
    let images = crate::image::bind(&pipeline.exec, &slots, count, &mut resources)?;
    // The descriptor types of the bound buffers, for the pipeline's robustness per class.
    let kinds: Vec<_> = resources
        .views
        .keys()
        .filter_map(|&(s, b, _)| layout_binding(bound, s, b).map(|l| l.kind))
        .collect();
    let robustness = pipeline
        .robustness
        .for_bindings(device.robustness, &kinds)?;
    let settings = &device.settings;
    let trace = crate::view::wanted(settings, pipeline);
    let options = RunOptions {
        robustness,
        image_robustness: pipeline
            .robustness
            .images
            .unwrap_or(device.image_robustness),
        coopmat_robustness: device.coopmat_robustness,
        null_descriptor: device.null_descriptor,
        base,
        allow: settings.allow,
        deny: settings.deny,
        // Hazards between dispatches are races: not looked for when races are allowed.
        touched: !settings
            .allow
            .contains(tangle_exec::check::kind::Kind::Race),
        trace,
        // The first invocations' values, shown on hover, as `tangle run --view` records them.
        watch: match trace {
            true => tangle_exec::trace::first_invocations(
                groups,
                pipeline.exec.local_size(),
                tangle_exec::trace::VIEW_WATCHED,
            ),
            false => Vec::new(),
        },
        time_limit: crate::config::time_limit(),
        coopmat_layout: settings.coopmat_layout,
        threads: crate::config::threads(),
        ..RunOptions::default()
    };
    let report = pipeline
        .exec
        .dispatch(&mut resources, groups, &options)
        .map_err(|e| dispatch_error(device, pipeline, e))?;
    crate::image::write_back(&resources, &images)?;
    crate::view::dispatched(settings, pipeline, (place, groups), &report);
    let accesses = report
        .touched
        .as_ref()
        .map(|t| accesses(t, &windows))
        .unwrap_or_default();
    let label = pipeline.label();
    let hazards = lock(&device.hazards).dispatch(&label, place, &accesses);
    let mut f = lock(&device.findings);
    f.dispatches += 1;
    let mut new = f.add(&label, place, &report.summaries, settings.deny);
    new.extend(
        hazards
            .into_iter()
            .filter_map(|h| f.add_hazard(&label, place, h.message, h.earlier)),
    );
    f.tiers.add(&label, &report, started.elapsed());
    Ok(new
        .iter()
        .filter_map(|&i| f.causes.get(i).cloned())
        .map(|c| (c, pipeline.clone()))
        .collect())
}

/// A binding's window: `(set, binding, element)`, the memory, the offset and the length.
type Window = ((u32, u32, u32), Arc<crate::objects::Memory>, u64, u64);

/// The allocation bytes a dispatch's bindings touched ([`tangle_exec::check::touched`], relative
/// to each binding's window), for the hazards between dispatches.
fn accesses(
    touched: &[tangle_exec::check::touched::Touched],
    windows: &[Window],
) -> Vec<crate::hazards::Access> {
    use crate::hazards::Use;
    let mut out = Vec::new();
    for t in touched {
        let (set, binding, element) = t.key;
        let element = element.unwrap_or(0);
        let Some((_, memory, at, len)) =
            windows.iter().find(|(k, ..)| *k == (set, binding, element))
        else {
            continue;
        };
        let lists = [
            (&t.reads, Use::Read),
            (&t.writes, Use::Write),
            (&t.atomics, Use::Atomic),
        ];
        for (list, how) in lists {
            // A scattered access pattern (a strided binding: one interval per invocation) is
            // left out past the bound, to keep the hazard check's cost bounded: its hazards
            // may be missed, none is invented.
            if list.len() > crate::hazards::Hazards::MAX_INTERVALS {
                continue;
            }
            for &(s, e) in list {
                // Inside the window (an access past it was robust or out of bounds, and no
                // byte of the allocation).
                let (s, e) = (s.min(*len), e.min(*len));
                if s < e {
                    out.push((memory.clone(), at + s, at + e, how));
                }
            }
        }
    }
    out
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
            immutable: Default::default(),
            variable: None,
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
