//! The descriptors of a dispatch: the handles of the program's image and sampler variables,
//! each image checked against the shader's declaration, and the tables of its descriptor arrays
//! (of buffers, images, combined image samplers and samplers, sized or runtime-sized), which
//! [`crate::program::Op::Descriptor`] picks elements from.
//!
//! An image handle is the pointer to its texels' region, with a combined image sampler's
//! sampler handle in the offset bits; a sampler handle is its index in the dispatch's samplers
//! plus 1.

use super::access::{BufferKey, DescriptorTable};
use super::image::ImageView;
use super::memory;
use crate::error::ExecError;
use crate::program::{DescriptorKind, ImageBinding, Program};
use crate::semantics::sampler::Sampler;
use crate::semantics::texel::TexelFormat;

/// The dispatch's samplers with their `(set, binding, array element)`.
pub type Samplers = [((u32, u32, u32), Sampler)];

/// The handle of the sampler bound at `key`, if any.
fn bound_sampler(samplers: &Samplers, key: (u32, u32, u32)) -> Option<u64> {
    let i = samplers.iter().position(|(k, _)| *k == key)?;
    Some(i as u64 + 1)
}

/// The handle of the plain sampler variable at `(set, binding)`, which must be bound.
pub fn sampler_handle(samplers: &Samplers, set: u32, binding: u32) -> Result<u64, ExecError> {
    bound_sampler(samplers, (set, binding, 0)).ok_or_else(|| {
        ExecError::Resource(format!(
            "the shader uses a sampler at set {set}, binding {binding}, but none is bound"
        ))
    })
}

/// Checks the image `view` bound for `b` against the shader's declaration: Vulkan requires the
/// view's format to be the `Image Format` when that is not Unknown, its numeric type to match
/// the `Sampled Type` (float or integer), and its type to match the `Dim` (a 1D image or texel
/// buffer has height and depth 1, a 2D image depth 1).
fn check_image(b: &ImageBinding, view: &ImageView) -> Result<(), ExecError> {
    if view.null {
        // Bound to nothing: no format or extent to match.
        return Ok(());
    }
    let fmt = view.format;
    let declared = TexelFormat::by_spirv(b.format);
    let why = if declared.is_some_and(|d| d != fmt) {
        Some(format!(
            "the shader declares Image Format {} ({})",
            b.format,
            declared.map_or("?", |d| d.name)
        ))
    } else if fmt.numeric.is_float() != b.float {
        Some(format!(
            "the shader's Sampled Type is {}",
            if b.float { "a float" } else { "an integer" }
        ))
    } else {
        let [_, h, d] = view.extent;
        match b.dim {
            0 | 5 if h != 1 || d != 1 => Some("the shader declares a one-dimensional image".into()),
            1 if d != 1 => Some("the shader declares a 2D image".into()),
            _ => None,
        }
    };
    let (set, binding) = (b.set, b.binding);
    let at = match b.element {
        Some(e) => format!("set {set}, binding {binding}, array element {e}"),
        None => format!("set {set}, binding {binding}"),
    };
    match why {
        Some(why) => Err(ExecError::Resource(format!(
            "the image at {at} is {} {:?}, but {why}",
            fmt.name, view.extent
        ))),
        None => Ok(()),
    }
}

/// The handle of the program's image variable `index` (an entry of
/// [`Program::images`]), which must be bound; `images` says which of the dispatch's regions
/// are images.
pub fn image_handle(
    prog: &Program,
    index: u32,
    images: &[Option<ImageView>],
    samplers: &Samplers,
) -> Result<u64, ExecError> {
    let b = prog
        .images
        .get(index as usize)
        .ok_or_else(|| ExecError::Resource("an image variable the program lacks".into()))?;
    let (set, binding) = (b.set, b.binding);
    let found = images.iter().enumerate().find_map(|(r, v)| {
        v.filter(|v| (v.set, v.binding, v.element) == (set, binding, 0))
            .map(|v| (r, v))
    });
    let Some((region, view)) = found else {
        return Err(ExecError::Resource(format!(
            "the shader uses an image at set {set}, binding {binding}, but none is bound"
        )));
    };
    check_image(b, &view)?;
    let sampler = match b.combined {
        true => sampler_handle(samplers, set, binding)?,
        false => 0,
    };
    // A combined image sampler's handle carries its sampler in the offset bits.
    Ok(memory::buffer_address(region) | sampler)
}

/// The bound elements of every descriptor array of the program, as (element, handle) pairs
/// sorted by element: buffers from `keys` (the dispatch's buffer regions in order; a plain
/// buffer at an array's `(set, binding)` is its element 0, a binding with one descriptor),
/// images from `images` (each checked against the array's declaration) with a combined image
/// sampler's sampler of the same element, samplers from `samplers`. A runtime-sized array is
/// as long as what is bound (Vulkan: "the size of the array is determined by the descriptor
/// count of the binding"); nothing bound at an element is a finding only when the shader uses
/// it. An element bound twice, or one past a sized array's length, is a resource error, and so
/// is an array of buffers with nothing bound, as for a plain buffer.
pub fn descriptor_tables(
    prog: &Program,
    keys: &[BufferKey],
    images: &[Option<ImageView>],
    samplers: &Samplers,
) -> Result<Vec<DescriptorTable>, ExecError> {
    let mut tables = Vec::with_capacity(prog.descriptor_arrays.len());
    for a in &prog.descriptor_arrays {
        let (set, binding) = (a.set, a.binding);
        let here = |s: u32, b: u32| (s, b) == (set, binding);
        let mut bound: Vec<(u32, u64)> = Vec::new();
        match a.kind {
            DescriptorKind::Buffer => {
                for (region, key) in keys.iter().enumerate() {
                    let element = match *key {
                        (s, b, None) if here(s, b) => 0,
                        (s, b, Some(i)) if here(s, b) => i,
                        _ => continue,
                    };
                    bound.push((element, memory::buffer_address(region)));
                }
            }
            DescriptorKind::Image(b) => {
                for (region, view) in images.iter().enumerate() {
                    let Some(view) = view.filter(|v| here(v.set, v.binding)) else {
                        continue;
                    };
                    let e = view.element;
                    let declared = ImageBinding {
                        element: Some(e),
                        ..b
                    };
                    check_image(&declared, &view)?;
                    // An element whose image is bound but not its sampler gets none: sampling
                    // through it is a finding.
                    let sampler = match b.combined {
                        true => bound_sampler(samplers, (set, binding, e)).unwrap_or(0),
                        false => 0,
                    };
                    bound.push((e, memory::buffer_address(region) | sampler));
                }
            }
            DescriptorKind::Sampler => {
                for (i, &((s, b, e), _)) in samplers.iter().enumerate() {
                    if here(s, b) {
                        bound.push((e, i as u64 + 1));
                    }
                }
            }
        }
        bound.sort_unstable();
        if let Some(w) = bound.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(ExecError::Resource(format!(
                "element {} of the descriptor array at set {set}, binding {binding} is bound twice",
                w[0].0
            )));
        }
        if let Some((n, (e, _))) = a.count.zip(bound.last()).filter(|(n, (e, _))| e >= n) {
            return Err(ExecError::Resource(format!(
                "element {e} is bound, but the descriptor array at set {set}, binding {binding} has {n} elements"
            )));
        }
        if bound.is_empty() && a.kind == DescriptorKind::Buffer {
            return Err(ExecError::Resource(format!(
                "the shader uses a descriptor array at set {set}, binding {binding}, but none of its elements is bound"
            )));
        }
        tables.push((*a, bound));
    }
    Ok(tables)
}
