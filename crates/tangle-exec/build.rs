//! Sets `cfg(conformance)` for this crate's tests when `../shared/conformance` sits beside the
//! checkout; without it the tests over the corpora are ignored (see `tangle-reference`).
fn main() {
    tangle_reference::emit_conformance_cfg();
}
