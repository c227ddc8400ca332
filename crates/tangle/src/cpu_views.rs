//! The CPU backend's bindings of overlapping ranges of one script buffer: each run of
//! overlapping ranges becomes one [`Allocation`] holding the bytes they cover, and each of its
//! bindings a view of it ([`tangle_exec::Resources::views`], `texel_views` for texel buffers),
//! so writes through one are seen through the others within the dispatch and the race check
//! sees the same bytes, as descriptors of one `VkBuffer` on a device. Bindings that share no
//! bytes keep their own copies.

use tangle_amber::backend::{BackendError, JobBinding};
use tangle_amber::script::BindingKind;
use tangle_exec::{Allocation, BufferView};

/// Whether a binding of `kind` is bound as a view when it overlaps another: buffers and texel
/// buffers (whose texels are the buffer's bytes).
fn viewable(kind: BindingKind) -> bool {
    matches!(
        kind,
        BindingKind::Storage
            | BindingKind::Uniform
            | BindingKind::StorageTexelBuffer
            | BindingKind::UniformTexelBuffer
    )
}

/// For each binding, the view it is bound as when its range overlaps another binding's of the
/// same script buffer; `None` for the others. An image (not a texel buffer) overlapping another
/// binding is unsupported: its texels are the executor's own copy.
pub fn shared_views(bindings: &[JobBinding]) -> Result<Vec<Option<BufferView>>, BackendError> {
    let mut views = vec![None; bindings.len()];
    for run in tangle_amber::backend::shared_runs(bindings) {
        share(bindings, &run, &mut views)?;
    }
    Ok(views)
}

/// Makes the bindings `run` (overlapping ranges of one buffer, by start) views of one
/// allocation, when there are several.
fn share(
    bindings: &[JobBinding],
    run: &[usize],
    views: &mut [Option<BufferView>],
) -> Result<(), BackendError> {
    let ([_, _, ..], Some(start)) = (run, run.first().map(|&f| bindings[f].offset)) else {
        return Ok(());
    };
    if let Some(&image) = run.iter().find(|&&i| !viewable(bindings[i].kind)) {
        let b = &bindings[image];
        return Err(BackendError::Unsupported(format!(
            "the image at set {} binding {} shares bytes with another binding (tangle binds an image's texels as a copy)",
            b.set, b.binding
        )));
    }
    let end = run
        .iter()
        .map(|&i| bindings[i].offset + bindings[i].bytes.len())
        .max()
        .unwrap_or(start);
    // Every byte of the run lies in some binding's range (they overlap one after another),
    // and they all hold the script buffer's bytes.
    let mut bytes = vec![0u8; end - start];
    for &i in run {
        let b = &bindings[i];
        if let Some(slot) = bytes.get_mut(b.offset - start..b.offset - start + b.bytes.len()) {
            slot.copy_from_slice(&b.bytes);
        }
    }
    let memory = Allocation::from_bytes(&bytes);
    for &i in run {
        let b = &bindings[i];
        if let Some(v) = views.get_mut(i) {
            *v = Some(BufferView {
                memory: memory.clone(),
                offset: (b.offset - start) as u64,
                range: b.bytes.len() as u64,
            });
        }
    }
    Ok(())
}
