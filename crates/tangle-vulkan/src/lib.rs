//! tangle-vulkan: will run the same compute job on a Vulkan driver (lavapipe in CI, NVIDIA on the
//! GPU machine) through `ash`, so that results can be diffed against tangle's executor.
//!
//! Not written yet: no issue has asked for it so far. The crate exists so that the workspace
//! has the shape of DESIGN.md. It exports nothing and claims to do nothing.
