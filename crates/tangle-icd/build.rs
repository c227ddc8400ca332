//! Sets `cfg(vulkan_driver)` for this crate's tests when a Vulkan loader (and a driver) are
//! installed: the loader tests are ignored without one, or with `TANGLE_REQUIRE_VULKAN=1` the
//! build fails (see `tangle-reference`).
fn main() {
    tangle_reference::emit_vulkan_cfg();
}
