//! The program's `VK_EXT_debug_utils` messengers and what the driver tells them: each cause of
//! findings when it is first found (when the submission that found it has run, inside the
//! program's `vkQueueSubmit`, so a program stopping in its callback stops at that submission,
//! not at `vkDestroyDevice`), each hazard between dispatches, and each invalid use the driver
//! answers with an error, as validation layers deliver theirs.
//!
//! The loader implements `VK_EXT_debug_utils` for the program and calls every driver's
//! `vkCreateDebugUtilsMessengerEXT` that the driver returns (Vulkan-Loader `debug_utils.c`,
//! `terminator_CreateDebugUtilsMessengerEXT`); the driver keeps the messengers here and calls
//! them itself ([`crate::ffi`] makes the call). Messengers are copied out of the registry's
//! lock, and findings delivered after the queue's lock is let go ([`crate::exec::drain`]),
//! before any callback runs: a callback may call Vulkan functions, which may take any of the
//! driver's locks or create and destroy messengers.

use crate::objects::lock;
use ash::vk;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// One messenger: the instance it belongs to, what it asks for, and its callback.
#[derive(Debug, Clone, Copy)]
pub struct Messenger {
    /// The instance's handle.
    pub instance: u64,
    /// `messageSeverity`.
    pub severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    /// `messageType`.
    pub types: vk::DebugUtilsMessageTypeFlagsEXT,
    /// `pfnUserCallback`.
    pub callback: vk::PFN_vkDebugUtilsMessengerCallbackEXT,
    /// `pUserData`, as an address (it is the program's, handed back unchanged).
    pub user_data: usize,
}

/// One message: a finding, a hazard or an invalid use.
#[derive(Debug, Clone)]
pub struct Message {
    /// Error for undefined behaviour and invalid use, warning for a warning finding.
    pub severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    /// `pMessageIdName`: the finding kind (`race`), or `tangle-invalid-use`.
    pub id: String,
    /// `pMessage`.
    pub text: String,
    /// The objects it names: type, handle and the program's name for it.
    pub objects: Vec<(vk::ObjectType, u64, Option<String>)>,
}

/// The id of invalid-use messages.
pub const INVALID_USE: &str = "tangle-invalid-use";

/// The live messengers by handle.
fn registry() -> &'static Mutex<Vec<(u64, Messenger)>> {
    static LIST: OnceLock<Mutex<Vec<(u64, Messenger)>>> = OnceLock::new();
    LIST.get_or_init(Default::default)
}

/// Registers a messenger; its handle (odd, from its own counter: messengers are only ever
/// looked up here).
pub fn add(m: Messenger) -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let handle = (1 << 62) | NEXT.fetch_add(1, Ordering::Relaxed) << 1 | 1;
    lock(registry()).push((handle, m));
    handle
}

/// Unregisters a messenger; whether it was live.
pub fn remove(handle: u64) -> bool {
    let mut list = lock(registry());
    let before = list.len();
    list.retain(|(h, _)| *h != handle);
    list.len() != before
}

/// Unregisters an instance's messengers (at `vkDestroyInstance`).
pub fn remove_instance(instance: u64) {
    lock(registry()).retain(|(_, m)| m.instance != instance);
}

/// The messengers that take a message of `severity` and type VALIDATION, of `instance` (every
/// instance's for `None`: an invalid use the driver cannot tie to one), copied out of the lock.
pub fn matching(
    instance: Option<u64>,
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
) -> Vec<Messenger> {
    lock(registry())
        .iter()
        .map(|(_, m)| *m)
        .filter(|m| instance.is_none_or(|i| m.instance == i))
        .filter(|m| m.severity.intersects(severity))
        .filter(|m| {
            m.types
                .contains(vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION)
        })
        .collect()
}

/// The message of a cause of findings, naming the pipeline: its handle and name (the
/// program's, else the driver's label).
pub fn of_cause(c: &crate::findings::Cause, pipeline: Option<(u64, String)>) -> Message {
    let severity = if c.warning {
        vk::DebugUtilsMessageSeverityFlagsEXT::WARNING
    } else {
        vk::DebugUtilsMessageSeverityFlagsEXT::ERROR
    };
    let at = match (&c.between, &c.at.source) {
        (Some(b), _) => format!(
            "between {} (submission {} dispatch {}) and this dispatch",
            b.pipeline, b.place.submission, b.place.dispatch
        ),
        (None, Some(s)) => s.to_string(),
        (None, None) => format!("{} at word {}", c.at.name, c.at.offset),
    };
    Message {
        severity,
        id: c.kind.clone(),
        text: format!(
            "{}[{}]: {} --> {at} in {}, submission {} dispatch {}",
            if c.warning { "warning" } else { "error" },
            c.kind,
            c.message,
            c.pipeline,
            c.first.submission,
            c.first.dispatch
        ),
        objects: pipeline
            .map(|(h, name)| (vk::ObjectType::PIPELINE, h, Some(name)))
            .into_iter()
            .collect(),
    }
}
