//! Semaphores (binary and timeline) and events: creation, host signals, waits and queries.
//! A host signal runs the submissions that were waiting for it ([`crate::exec::drain`]).

use super::*;
use crate::objects::{self, lock, Device, Event, Queue, Semaphore};
use ash::vk::Handle;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub unsafe extern "system" fn create_semaphore(
    device: vk::Device,
    info: *const vk::SemaphoreCreateInfo<'_>,
    _allocator: *const vk::AllocationCallbacks<'_>,
    out: *mut vk::Semaphore,
) -> vk::Result {
    guard("vkCreateSemaphore", || {
        objects::get::<Device>(device.as_raw())?;
        // SAFETY: the program's struct and chain (rule 1).
        let info = unsafe { read(info, "pCreateInfo")? };
        let mut semaphore = Semaphore::default();
        for (s_type, at) in unsafe { chain(info.p_next) } {
            if s_type == vk::StructureType::SEMAPHORE_TYPE_CREATE_INFO {
                // SAFETY: the struct its `sType` names.
                let t = unsafe { &*at.cast::<vk::SemaphoreTypeCreateInfo>() };
                semaphore.timeline = t.semaphore_type == vk::SemaphoreType::TIMELINE;
                *lock(&semaphore.value) = t.initial_value;
            }
        }
        let handle = objects::insert(Arc::new(semaphore));
        // SAFETY: the program's output pointer (rule 1).
        unsafe { write(out, vk::Semaphore::from_raw(handle), "pSemaphore")? };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn destroy_semaphore(
    _device: vk::Device,
    semaphore: vk::Semaphore,
    _allocator: *const vk::AllocationCallbacks<'_>,
) {
    guard_void("vkDestroySemaphore", || {
        if semaphore != vk::Semaphore::null() {
            objects::remove::<Semaphore>(semaphore.as_raw())?;
        }
        Ok(())
    })
}

pub unsafe extern "system" fn get_semaphore_counter_value(
    _device: vk::Device,
    semaphore: vk::Semaphore,
    out: *mut u64,
) -> vk::Result {
    guard("vkGetSemaphoreCounterValue", || {
        let s = objects::get::<Semaphore>(semaphore.as_raw())?;
        let value = *lock(&s.value);
        // SAFETY: the program's output pointer (rule 1).
        unsafe { write(out, value, "pValue")? };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn signal_semaphore(
    device: vk::Device,
    info: *const vk::SemaphoreSignalInfo<'_>,
) -> vk::Result {
    guard("vkSignalSemaphore", || {
        let d = objects::get::<Device>(device.as_raw())?;
        // SAFETY: the program's struct (rule 1).
        let info = unsafe { read(info, "pSignalInfo")? };
        objects::get::<Semaphore>(info.semaphore.as_raw())?.signal(info.value);
        crate::exec::drain(&*objects::get::<Queue>(d.queue)?);
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn wait_semaphores(
    device: vk::Device,
    info: *const vk::SemaphoreWaitInfo<'_>,
    timeout: u64,
) -> vk::Result {
    guard("vkWaitSemaphores", || {
        // SAFETY: the program's struct and arrays (rule 1).
        let info = unsafe { read(info, "pWaitInfo")? };
        let handles = unsafe { slice(info.p_semaphores, info.semaphore_count, "pSemaphores")? };
        let values = unsafe { slice(info.p_values, info.semaphore_count, "pValues")? };
        let waits = handles
            .iter()
            .zip(values)
            .map(|(h, v)| Ok((objects::get::<Semaphore>(h.as_raw())?, *v)))
            .collect::<Result<Vec<_>, Fail>>()?;
        let any = info.flags.contains(vk::SemaphoreWaitFlags::ANY);
        let d = objects::get::<Device>(device.as_raw())?;
        let deadline = Instant::now().checked_add(Duration::from_nanos(timeout));
        loop {
            if d.is_lost() {
                return Ok(vk::Result::ERROR_DEVICE_LOST);
            }
            let reached: Vec<bool> = waits.iter().map(|(s, v)| *lock(&s.value) >= *v).collect();
            if (any && reached.contains(&true)) || (!any && !reached.contains(&false)) {
                return Ok(vk::Result::SUCCESS);
            }
            let left = deadline.map_or(Duration::from_secs(3600), |d| {
                d.saturating_duration_since(Instant::now())
            });
            let Some(i) = reached.iter().position(|r| !r) else {
                return Ok(vk::Result::TIMEOUT);
            };
            if left.is_zero() {
                return Ok(vk::Result::TIMEOUT);
            }
            // A short wait on one semaphore not reached, then all are looked at again.
            let (s, v) = &waits[i];
            let held = lock(&s.value);
            if *held < *v {
                let _ = s
                    .changed
                    .wait_timeout(held, left.min(Duration::from_millis(10)));
            }
        }
    })
}

pub unsafe extern "system" fn create_event(
    device: vk::Device,
    _info: *const vk::EventCreateInfo<'_>,
    _allocator: *const vk::AllocationCallbacks<'_>,
    out: *mut vk::Event,
) -> vk::Result {
    guard("vkCreateEvent", || {
        objects::get::<Device>(device.as_raw())?;
        let handle = objects::insert(Arc::new(Event::default()));
        // SAFETY: the program's output pointer (rule 1).
        unsafe { write(out, vk::Event::from_raw(handle), "pEvent")? };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn destroy_event(
    _device: vk::Device,
    event: vk::Event,
    _allocator: *const vk::AllocationCallbacks<'_>,
) {
    guard_void("vkDestroyEvent", || {
        if event != vk::Event::null() {
            objects::remove::<Event>(event.as_raw())?;
        }
        Ok(())
    })
}

pub unsafe extern "system" fn get_event_status(
    _device: vk::Device,
    event: vk::Event,
) -> vk::Result {
    guard("vkGetEventStatus", || {
        let set = *lock(&objects::get::<Event>(event.as_raw())?.set);
        Ok(if set {
            vk::Result::EVENT_SET
        } else {
            vk::Result::EVENT_RESET
        })
    })
}

pub unsafe extern "system" fn set_event(_device: vk::Device, event: vk::Event) -> vk::Result {
    guard("vkSetEvent", || {
        *lock(&objects::get::<Event>(event.as_raw())?.set) = true;
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn reset_event(_device: vk::Device, event: vk::Event) -> vk::Result {
    guard("vkResetEvent", || {
        *lock(&objects::get::<Event>(event.as_raw())?.set) = false;
        Ok(vk::Result::SUCCESS)
    })
}
