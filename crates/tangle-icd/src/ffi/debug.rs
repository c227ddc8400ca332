//! `VK_EXT_debug_utils` messengers: `vkCreateDebugUtilsMessengerEXT`,
//! `vkDestroyDebugUtilsMessengerEXT`, `vkSubmitDebugUtilsMessageEXT`, those chained in
//! `VkInstanceCreateInfo::pNext`, and the calls of the program's callbacks
//! ([`crate::messages`] keeps the messengers and makes the messages).

use super::*;
use crate::messages::{self, Message, Messenger};
use ash::vk::Handle;
use std::ffi::CString;

/// The messenger a create-info describes, for `instance`.
fn messenger(instance: u64, info: &vk::DebugUtilsMessengerCreateInfoEXT<'_>) -> Messenger {
    Messenger {
        instance,
        severity: info.message_severity,
        types: info.message_type,
        callback: info.pfn_user_callback,
        user_data: info.p_user_data as usize,
    }
}

pub unsafe extern "system" fn create_debug_utils_messenger(
    instance: vk::Instance,
    info: *const vk::DebugUtilsMessengerCreateInfoEXT<'_>,
    _allocator: *const vk::AllocationCallbacks<'_>,
    out: *mut vk::DebugUtilsMessengerEXT,
) -> vk::Result {
    // The loader holds its lock here: a failure is printed only, never sent to a callback.
    quiet_guard("vkCreateDebugUtilsMessengerEXT", || {
        crate::objects::get::<crate::objects::Instance>(instance.as_raw())?;
        // SAFETY: the program's create-info (rule 1).
        let info = unsafe { read(info, "pCreateInfo")? };
        if info.pfn_user_callback.is_none() {
            return Err("pfnUserCallback is NULL".into());
        }
        let handle = messages::add(messenger(instance.as_raw(), info));
        // SAFETY: the program's output pointer (rule 1).
        unsafe {
            write(
                out,
                vk::DebugUtilsMessengerEXT::from_raw(handle),
                "pMessenger",
            )?
        };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn destroy_debug_utils_messenger(
    _instance: vk::Instance,
    handle: vk::DebugUtilsMessengerEXT,
    _allocator: *const vk::AllocationCallbacks<'_>,
) {
    let _ = quiet_guard("vkDestroyDebugUtilsMessengerEXT", || {
        if handle != vk::DebugUtilsMessengerEXT::null() && !messages::remove(handle.as_raw()) {
            return Err(format!(
                "{:#x} is not a live VkDebugUtilsMessengerEXT",
                handle.as_raw()
            )
            .into());
        }
        Ok(vk::Result::SUCCESS)
    });
}

pub unsafe extern "system" fn submit_debug_utils_message(
    instance: vk::Instance,
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    types: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
) {
    guard_void("vkSubmitDebugUtilsMessageEXT", || {
        // The loader calls the program's callbacks for this itself (its terminator does not
        // call drivers); a program reaching the driver directly gets the message passed on.
        // SAFETY: the program's callback data (rule 1); it is handed on unchanged.
        unsafe { read(data, "pCallbackData")? };
        for m in messages::matching(Some(instance.as_raw()), severity) {
            if m.types.intersects(types) {
                // SAFETY: the program's callback and data, as it registered and passed them.
                unsafe { call(&m, severity, types, data) };
            }
        }
        Ok(())
    })
}

/// [`guard`] without the messengers: failures are printed on stderr only.
fn quiet_guard(name: &str, body: impl FnOnce() -> Result<vk::Result, Fail>) -> vk::Result {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        Ok(Ok(r)) => r,
        Ok(Err(Fail(code, message))) => {
            say(&format!("{name}: {message}"));
            code
        }
        Err(_) => {
            say(&format!("{name}: internal error (a panic, caught)"));
            vk::Result::ERROR_UNKNOWN
        }
    }
}

/// Calls one messenger.
///
/// # Safety
/// `data` points to valid callback data for the call; the messenger's callback is the
/// program's, which the spec requires to be callable with it until the messenger is destroyed.
unsafe fn call(
    m: &Messenger,
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    types: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
) {
    if let Some(f) = m.callback {
        // SAFETY: the caller's promise; the user data is the program's own pointer.
        unsafe { f(severity, types, data, m.user_data as *mut std::ffi::c_void) };
    }
}

/// Sends `message` to the messengers of `instance` (of every instance for `None`), outside
/// every lock of the driver's (the list is a copy).
pub fn deliver(instance: Option<u64>, message: &Message) {
    let targets = messages::matching(instance, message.severity);
    send(&targets, message);
}

/// Sends `message` to `targets`.
fn send(targets: &[Messenger], message: &Message) {
    if targets.is_empty() {
        return;
    }
    let text = |s: &str| CString::new(s.replace('\0', " ")).unwrap_or_default();
    let id = text(&message.id);
    let body = text(&message.text);
    let names: Vec<Option<CString>> = message
        .objects
        .iter()
        .map(|(_, _, n)| n.as_deref().map(text))
        .collect();
    let objects: Vec<vk::DebugUtilsObjectNameInfoEXT<'_>> = message
        .objects
        .iter()
        .zip(&names)
        .map(
            |((kind, handle, _), name)| vk::DebugUtilsObjectNameInfoEXT {
                object_type: *kind,
                object_handle: *handle,
                p_object_name: name.as_ref().map_or(std::ptr::null(), |n| n.as_ptr()),
                ..Default::default()
            },
        )
        .collect();
    let data = vk::DebugUtilsMessengerCallbackDataEXT {
        p_message_id_name: id.as_ptr(),
        p_message: body.as_ptr(),
        object_count: objects.len() as u32,
        p_objects: objects.as_ptr(),
        ..Default::default()
    };
    let types = vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION;
    for m in targets {
        // SAFETY: `data` and everything it points to live until the loop ends.
        unsafe { call(m, message.severity, types, &data) };
    }
}

/// Sends an invalid-use failure to every messenger (the entry point's instance is not known in
/// general: an unknown handle names none).
pub fn invalid_use(name: &str, message: &str) {
    deliver(None, &invalid_use_message(name, message));
}

/// The message of an invalid use.
fn invalid_use_message(name: &str, message: &str) -> Message {
    Message {
        severity: vk::DebugUtilsMessageSeverityFlagsEXT::ERROR,
        id: messages::INVALID_USE.to_string(),
        text: format!("{name}: {message}"),
        objects: Vec::new(),
    }
}

/// Sends a `vkCreateInstance` failure to the messengers chained in its create-info (they exist
/// for that call alone: Vulkan `VkDebugUtilsMessengerCreateInfoEXT`, "used during
/// vkCreateInstance and vkDestroyInstance").
///
/// # Safety
/// `chain` is null or the head of a valid `pNext` chain.
pub unsafe fn instance_creation_failed(chain: *const std::ffi::c_void, message: &str) {
    // SAFETY: the caller's promise.
    let chained: Vec<Messenger> = unsafe { super::chain(chain) }
        .into_iter()
        .filter(|(t, _)| *t == vk::StructureType::DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT)
        .map(|(_, at)| {
            // SAFETY: a struct of this `sType` is a messenger create-info.
            let info = unsafe { &*at.cast::<vk::DebugUtilsMessengerCreateInfoEXT<'_>>() };
            messenger(0, info)
        })
        .filter(|m| {
            m.severity
                .contains(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR)
                && m.types
                    .contains(vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION)
        })
        .collect();
    send(&chained, &invalid_use_message("vkCreateInstance", message));
}

/// Sends causes of findings found for the first time to the device's instance's messengers,
/// naming the pipeline (its handle is looked up only when some messenger listens).
pub fn causes(
    instance: u64,
    causes: &[crate::findings::Cause],
    pipeline: &std::sync::Arc<crate::objects::Pipeline>,
) {
    let any = vk::DebugUtilsMessageSeverityFlagsEXT::ERROR
        | vk::DebugUtilsMessageSeverityFlagsEXT::WARNING;
    if causes.is_empty() || messages::matching(Some(instance), any).is_empty() {
        return;
    }
    let name = crate::objects::lock(&pipeline.debug_name)
        .clone()
        .unwrap_or_else(|| pipeline.name.clone());
    let handle = crate::objects::handle_of(pipeline);
    for c in causes {
        let message = messages::of_cause(c, handle.map(|h| (h, name.clone())));
        deliver(Some(instance), &message);
    }
}
