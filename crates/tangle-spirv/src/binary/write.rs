//! [`Module`] → binary words.

use crate::module::{Module, MAGIC};

/// Encodes the header and every instruction. The header's bound is written as stored; the
/// assembler computes it.
pub fn write(module: &Module) -> Vec<u32> {
    let h = &module.header;
    let mut out = vec![MAGIC, h.version_word(), h.generator, h.bound, h.schema];
    for inst in &module.instructions {
        out.extend(inst.words());
    }
    out
}
