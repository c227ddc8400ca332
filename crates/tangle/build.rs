//! Sets `cfg(vulkan_driver)` for this crate's tests when a Vulkan loader and driver are
//! installed; without them the Vulkan tests are ignored, or with `TANGLE_REQUIRE_VULKAN=1` the
//! build fails (see `tangle-reference`).
fn main() {
    tangle_reference::emit_vulkan_cfg();
}
