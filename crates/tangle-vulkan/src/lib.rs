//! tangle-vulkan (being built).
