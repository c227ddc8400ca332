//! tangle-exec: lowering of validated SPIR-V to an executable program, and the SIMT executor.

pub mod semantics;
