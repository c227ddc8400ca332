//! Transfer commands on images: `vkCmdCopyBufferToImage`, `vkCmdCopyImageToBuffer`,
//! `vkCmdCopyImage` and `vkCmdClearColorImage`, row by row on the images' packed texels
//! ([`crate::image`]).
//!
//! Vulkan "Copying Data Between Buffers and Images": texel (x, y, z) of a region is at
//! `bufferOffset + (((z × imageHeight) + y) × rowLength + x) × texelBlockSize` in the buffer,
//! where `rowLength` is `bufferRowLength` or, when 0, the region's width, and `imageHeight`
//! `bufferImageHeight` or its height.

use crate::image::Image;
use crate::objects::Buffer;
use ash::vk;
use std::sync::Arc;

/// One recorded image command.
#[derive(Debug, Clone)]
pub enum ImageCommand {
    /// `vkCmdCopyBufferToImage` (`to_image`) and `vkCmdCopyImageToBuffer`.
    BufferImage {
        buffer: Arc<Buffer>,
        image: Arc<Image>,
        regions: Vec<vk::BufferImageCopy>,
        to_image: bool,
    },
    /// `vkCmdCopyImage`.
    Copy {
        src: Arc<Image>,
        dst: Arc<Image>,
        regions: Vec<vk::ImageCopy>,
    },
    /// `vkCmdClearColorImage`: the color's four 32-bit words.
    Clear { image: Arc<Image>, color: [u32; 4] },
}

/// Checks a region's subresource: the color aspect of level 0, layer 0.
fn subresource(s: &vk::ImageSubresourceLayers) -> Result<(), String> {
    let layers = s.layer_count == 1 || s.layer_count == vk::REMAINING_ARRAY_LAYERS;
    if s.aspect_mask != vk::ImageAspectFlags::COLOR
        || s.mip_level != 0
        || s.base_array_layer != 0
        || !layers
    {
        return Err(format!(
            "subresource {s:?}: the image has one color level and one layer"
        ));
    }
    Ok(())
}

/// The region's offset and extent as arrays.
fn xyz(o: vk::Offset3D, e: vk::Extent3D) -> ([i64; 3], [u64; 3]) {
    (
        [o.x, o.y, o.z].map(i64::from),
        [e.width, e.height, e.depth].map(u64::from),
    )
}

/// The rows of a region: `(row index (y, z), image texel of its start)`.
fn rows(offset: [i64; 3], extent: [u64; 3]) -> impl Iterator<Item = ([u64; 2], [i64; 3])> {
    (0..extent[2]).flat_map(move |z| {
        (0..extent[1]).map(move |y| {
            (
                [y, z],
                [offset[0], offset[1] + y as i64, offset[2] + z as i64],
            )
        })
    })
}

/// Copies one buffer↔image region.
fn buffer_image(
    buffer: &Buffer,
    image: &Image,
    r: &vk::BufferImageCopy,
    to_image: bool,
) -> Result<(), String> {
    subresource(&r.image_subresource)?;
    let (offset, extent) = xyz(r.image_offset, r.image_extent);
    let texel = image.texel_bytes();
    let row_length = match r.buffer_row_length {
        0 => extent[0],
        n => u64::from(n),
    };
    let image_height = match r.buffer_image_height {
        0 => extent[1],
        n => u64::from(n),
    };
    let (memory, base) = image.memory()?;
    let len = extent[0] * texel;
    for ([y, z], at) in rows(offset, extent) {
        let from = r.buffer_offset + ((z * image_height + y) * row_length) * texel;
        let (bm, b) = buffer.window(from, len)?;
        let i = base + image.texel(at, extent[0])?;
        if to_image {
            memory.bytes.write(i, &bm.bytes.read(b, len)?)?;
        } else {
            bm.bytes.write(b, &memory.bytes.read(i, len)?)?;
        }
    }
    Ok(())
}

/// Copies one image→image region (the texel sizes must match: "compatible formats").
fn image_image(src: &Image, dst: &Image, r: &vk::ImageCopy) -> Result<(), String> {
    subresource(&r.src_subresource)?;
    subresource(&r.dst_subresource)?;
    if src.texel_bytes() != dst.texel_bytes() {
        return Err(format!(
            "copying {} texels into {} texels: the formats are not size-compatible",
            src.format.name, dst.format.name
        ));
    }
    let (from, extent) = xyz(r.src_offset, r.extent);
    let (to, _) = xyz(r.dst_offset, r.extent);
    let (sm, sb) = src.memory()?;
    let (dm, db) = dst.memory()?;
    let len = extent[0] * src.texel_bytes();
    for (([_, _], s), (_, d)) in rows(from, extent).zip(rows(to, extent)) {
        let bytes = sm.bytes.read(sb + src.texel(s, extent[0])?, len)?;
        dm.bytes.write(db + dst.texel(d, extent[0])?, &bytes)?;
    }
    Ok(())
}

impl ImageCommand {
    /// Runs the command.
    pub fn run(&self) -> Result<(), String> {
        match self {
            ImageCommand::BufferImage {
                buffer,
                image,
                regions,
                to_image,
            } => regions
                .iter()
                .try_for_each(|r| buffer_image(buffer, image, r, *to_image)),
            ImageCommand::Copy { src, dst, regions } => {
                regions.iter().try_for_each(|r| image_image(src, dst, r))
            }
            ImageCommand::Clear { image, color } => {
                let texel = crate::image::clear_texel(image.format, *color);
                let (memory, at) = image.memory()?;
                let count = usize::try_from(image.size() / image.texel_bytes())
                    .map_err(|_| "image too large")?;
                memory.bytes.write(at, &texel.repeat(count))
            }
        }
    }
}
