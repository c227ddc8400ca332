//! tangle facade.

pub mod cpu_backend;
