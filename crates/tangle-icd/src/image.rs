//! Images, image views, samplers and buffer views (texel buffers) as compute uses them, the
//! formats they may have, and how a dispatch hands them to the executor.
//!
//! An image is what the executor represents ([`tangle_exec::Image`]): one mip level, one array
//! layer, one sample, 1D, 2D or 3D. Its memory holds its texels tightly packed, x fastest, then
//! y, then z, for linear and optimal tiling alike (the layout `vkGetImageSubresourceLayout`
//! reports), so a dispatch copies the bytes as they are. Formats are the executor's texel
//! formats ([`tangle_exec::semantics::texel::FORMATS`]), found by their Vulkan name as the Amber
//! CPU backend finds them ([`TexelFormat::by_name`]); every other format supports nothing.
//!
//! A dispatch copies each image and texel buffer the pipeline uses into the executor's
//! resources and writes the storage ones back afterwards ([`bind`], [`write_back`]): images by
//! copy, like the buffers of this phase (docs/driver.md).

use crate::objects::{lock, Buffer, Descriptor, Memory};
use ash::vk;
use std::sync::{Arc, Mutex};
use tangle_exec::program::DescriptorKind;
use tangle_exec::semantics::sampler as x;
use tangle_exec::semantics::texel::{self, Numeric, TexelFormat};
use tangle_exec::{Resources, TexelView};

/// `maxImageDimension1D` and `maxImageDimension2D`.
pub const MAX_DIMENSION: u32 = 16384;
/// `maxImageDimension3D`.
pub const MAX_DIMENSION_3D: u32 = 2048;
/// `maxTexelBufferElements`.
pub const MAX_TEXEL_ELEMENTS: u32 = 1 << 27;

/// The executor's texel format of a Vulkan format, by its name (ash prints `R8G8B8A8_UNORM`).
pub fn texel_format(format: vk::Format) -> Option<&'static TexelFormat> {
    TexelFormat::by_name(&format!("{format:?}"))
}

/// Whether image atomics (`OpImageTexelPointer` and an atomic) may use the format: the 32-bit
/// integer ones, as Vulkan requires of `STORAGE_IMAGE_ATOMIC` (64-bit image atomics need
/// `shaderImageInt64Atomics`, not claimed).
fn atomic(f: &TexelFormat) -> bool {
    matches!(f.name, "R32_UINT" | "R32_SINT")
}

/// `vkGetPhysicalDeviceFormatProperties`: for an executor format, sampled and storage images
/// (linear filtering for the float formats), transfers, uniform and storage texel buffers, and
/// atomics on the 32-bit integer formats; nothing for any other format.
pub fn format_properties(format: vk::Format) -> vk::FormatProperties {
    use vk::FormatFeatureFlags as F;
    let Some(f) = texel_format(format) else {
        return vk::FormatProperties::default();
    };
    let mut image = F::SAMPLED_IMAGE | F::STORAGE_IMAGE | F::TRANSFER_SRC | F::TRANSFER_DST;
    let mut buffer = F::UNIFORM_TEXEL_BUFFER | F::STORAGE_TEXEL_BUFFER;
    if f.numeric.is_float() {
        image |= F::SAMPLED_IMAGE_FILTER_LINEAR;
    }
    if atomic(f) {
        image |= F::STORAGE_IMAGE_ATOMIC;
        buffer |= F::STORAGE_TEXEL_BUFFER_ATOMIC;
    }
    vk::FormatProperties {
        linear_tiling_features: image,
        optimal_tiling_features: image,
        buffer_features: buffer,
    }
}

/// `VkFormatProperties3`: [`format_properties`] with the storage formats also read and written
/// without a declared format (`shaderStorageImageReadWithoutFormat` and `...Write...`).
pub fn format_properties3(format: vk::Format) -> vk::FormatProperties3<'static> {
    use vk::FormatFeatureFlags2 as F2;
    let p = format_properties(format);
    let wide = |f: vk::FormatFeatureFlags| {
        let mut out = F2::from_raw(u64::from(f.as_raw()));
        if f.contains(vk::FormatFeatureFlags::STORAGE_IMAGE)
            || f.contains(vk::FormatFeatureFlags::STORAGE_TEXEL_BUFFER)
        {
            out |= F2::STORAGE_READ_WITHOUT_FORMAT | F2::STORAGE_WRITE_WITHOUT_FORMAT;
        }
        out
    };
    vk::FormatProperties3 {
        linear_tiling_features: wide(p.linear_tiling_features),
        optimal_tiling_features: wide(p.optimal_tiling_features),
        buffer_features: wide(p.buffer_features),
        ..Default::default()
    }
}

/// The usages an image may have: what compute and transfers do with it.
fn usable(usage: vk::ImageUsageFlags) -> bool {
    use vk::ImageUsageFlags as U;
    (U::SAMPLED | U::STORAGE | U::TRANSFER_SRC | U::TRANSFER_DST).contains(usage)
}

/// The image creation flags the driver accepts: views of another format of the same texel size.
fn flags_ok(flags: vk::ImageCreateFlags) -> bool {
    use vk::ImageCreateFlags as C;
    (C::MUTABLE_FORMAT | C::EXTENDED_USAGE).contains(flags)
}

/// The largest extent of an image type.
fn max_extent(kind: vk::ImageType) -> Option<[u32; 3]> {
    Some(match kind {
        vk::ImageType::TYPE_1D => [MAX_DIMENSION, 1, 1],
        vk::ImageType::TYPE_2D => [MAX_DIMENSION, MAX_DIMENSION, 1],
        vk::ImageType::TYPE_3D => [MAX_DIMENSION_3D; 3],
        _ => return None,
    })
}

/// `vkGetPhysicalDeviceImageFormatProperties`: for an executor format, a 1D, 2D or 3D image of
/// sampled, storage and transfer usages, one level, one layer, one sample; `None`
/// (`VK_ERROR_FORMAT_NOT_SUPPORTED`) for anything else.
pub fn image_format_properties(
    format: vk::Format,
    kind: vk::ImageType,
    tiling: vk::ImageTiling,
    usage: vk::ImageUsageFlags,
    flags: vk::ImageCreateFlags,
) -> Option<vk::ImageFormatProperties> {
    texel_format(format)?;
    let tiling_ok = matches!(tiling, vk::ImageTiling::LINEAR | vk::ImageTiling::OPTIMAL);
    if !tiling_ok || !usable(usage) || !flags_ok(flags) {
        return None;
    }
    let [width, height, depth] = max_extent(kind)?;
    Some(vk::ImageFormatProperties {
        max_extent: vk::Extent3D {
            width,
            height,
            depth,
        },
        max_mip_levels: 1,
        max_array_layers: 1,
        sample_counts: vk::SampleCountFlags::TYPE_1,
        max_resource_size: crate::caps::MAX_ALLOCATION,
    })
}

/// An image: its format, extent and, once bound, its memory.
#[derive(Debug)]
pub struct Image {
    /// The executor's format.
    pub format: &'static TexelFormat,
    /// Its type (1D, 2D or 3D).
    pub kind: vk::ImageType,
    /// Width, height, depth (1 where the type has no such dimension).
    pub extent: [u32; 3],
    /// The memory and offset `vkBindImageMemory` gave it.
    pub bound: Mutex<Option<(Arc<Memory>, u64)>>,
}

impl Image {
    /// The image `vkCreateImage` asks for, or why the driver cannot make it (a parameter past
    /// what `vkGetPhysicalDeviceImageFormatProperties` reports: invalid use).
    pub fn new(info: &vk::ImageCreateInfo<'_>) -> Result<Image, String> {
        let format = texel_format(info.format).ok_or_else(|| {
            format!(
                "format {:?} supports no image use on this device (vkGetPhysicalDeviceFormatProperties)",
                info.format
            )
        })?;
        let max = max_extent(info.image_type)
            .ok_or_else(|| format!("image type {:?} does not exist", info.image_type))?;
        if info.mip_levels != 1 {
            return Err(format!(
                "mipLevels {}: the executor's images have one level (maxMipLevels is 1)",
                info.mip_levels
            ));
        }
        if info.array_layers != 1 {
            return Err(format!(
                "arrayLayers {}: the executor's images have one layer (maxArrayLayers is 1)",
                info.array_layers
            ));
        }
        if info.samples != vk::SampleCountFlags::TYPE_1 {
            return Err(format!(
                "samples {:?}: multisampled images are not supported (sampleCounts is 1)",
                info.samples
            ));
        }
        if !flags_ok(info.flags) {
            return Err(format!(
                "flags {:?}: only MUTABLE_FORMAT and EXTENDED_USAGE are supported",
                info.flags
            ));
        }
        let e = info.extent;
        let extent = [e.width, e.height, e.depth];
        if extent.contains(&0) || extent.iter().zip(max).any(|(e, m)| *e > m) {
            return Err(format!(
                "extent {extent:?} of a {:?} image: each dimension from 1 to {max:?}",
                info.image_type
            ));
        }
        Ok(Image {
            format,
            kind: info.image_type,
            extent,
            bound: Mutex::new(None),
        })
    }

    /// Bytes per texel.
    pub fn texel_bytes(&self) -> u64 {
        u64::from(self.format.bytes())
    }

    /// Bytes in one row of texels.
    pub fn row_pitch(&self) -> u64 {
        u64::from(self.extent[0]) * self.texel_bytes()
    }

    /// Bytes in one slice (one z).
    pub fn depth_pitch(&self) -> u64 {
        self.row_pitch() * u64::from(self.extent[1])
    }

    /// The image's size in bytes.
    pub fn size(&self) -> u64 {
        self.depth_pitch() * u64::from(self.extent[2])
    }

    /// The memory and absolute offset of the image's first texel.
    pub fn memory(&self) -> Result<(Arc<Memory>, u64), String> {
        lock(&self.bound)
            .clone()
            .ok_or_else(|| "the image has no memory bound (vkBindImageMemory)".to_string())
    }

    /// The absolute offset of texel `at` (checked: `at` and `len` texels along x lie inside).
    pub fn texel(&self, at: [i64; 3], len: u64) -> Result<u64, String> {
        let inside = at.iter().zip(self.extent).enumerate().all(|(c, (a, e))| {
            let reach = if c == 0 { len.max(1) } else { 1 };
            *a >= 0 && (*a as u64).saturating_add(reach) <= u64::from(e)
        });
        if !inside {
            return Err(format!(
                "texels {at:?} (+{len} in x) lie outside the image's extent {:?}",
                self.extent
            ));
        }
        let [x, y, z] = at.map(|a| a as u64);
        Ok(z * self.depth_pitch() + y * self.row_pitch() + x * self.texel_bytes())
    }
}

/// An image view: the image and the format shaders see it in (of the same texel size).
#[derive(Debug)]
pub struct ImageView {
    /// The image.
    pub image: Arc<Image>,
    /// The view's format.
    pub format: &'static TexelFormat,
}

impl ImageView {
    /// The view `vkCreateImageView` asks for, or why the executor cannot represent it.
    pub fn new(image: Arc<Image>, info: &vk::ImageViewCreateInfo<'_>) -> Result<ImageView, String> {
        let format = texel_format(info.format)
            .ok_or_else(|| format!("format {:?} supports no image use", info.format))?;
        if format.bytes() != image.format.bytes() {
            return Err(format!(
                "a {:?} view of a {} image: the texel sizes differ",
                info.format, image.format.name
            ));
        }
        let same = matches!(
            (info.view_type, image.kind),
            (vk::ImageViewType::TYPE_1D, vk::ImageType::TYPE_1D)
                | (vk::ImageViewType::TYPE_2D, vk::ImageType::TYPE_2D)
                | (vk::ImageViewType::TYPE_3D, vk::ImageType::TYPE_3D)
        );
        if !same {
            return Err(format!(
                "view type {:?} of a {:?} image: only the image's own dimensionality (no arrays, no cubes)",
                info.view_type, image.kind
            ));
        }
        let r = info.subresource_range;
        let one = |n: u32| n == 1 || n == vk::REMAINING_MIP_LEVELS;
        if r.base_mip_level != 0
            || r.base_array_layer != 0
            || !one(r.level_count)
            || !one(r.layer_count)
        {
            return Err(format!(
                "subresource range {r:?}: the image has one level and one layer"
            ));
        }
        let c = info.components;
        let identity = |s: vk::ComponentSwizzle, own: vk::ComponentSwizzle| {
            s == vk::ComponentSwizzle::IDENTITY || s == own
        };
        if !(identity(c.r, vk::ComponentSwizzle::R)
            && identity(c.g, vk::ComponentSwizzle::G)
            && identity(c.b, vk::ComponentSwizzle::B)
            && identity(c.a, vk::ComponentSwizzle::A))
        {
            return Err(format!(
                "component swizzle {c:?}: only the identity is supported"
            ));
        }
        Ok(ImageView { image, format })
    }
}

/// A buffer view: `range` bytes of a buffer from `offset`, as texels of `format`.
#[derive(Debug)]
pub struct BufferView {
    /// The buffer.
    pub buffer: Arc<Buffer>,
    /// The texel format.
    pub format: &'static TexelFormat,
    /// The first byte in the buffer.
    pub offset: u64,
    /// The bytes, a whole number of texels.
    pub range: u64,
}

impl BufferView {
    /// The view `vkCreateBufferView` asks for.
    pub fn new(
        buffer: Arc<Buffer>,
        info: &vk::BufferViewCreateInfo<'_>,
    ) -> Result<BufferView, String> {
        let format = texel_format(info.format)
            .ok_or_else(|| format!("format {:?} supports no texel buffer use", info.format))?;
        let texel = u64::from(format.bytes());
        if !info.offset.is_multiple_of(crate::caps::BUFFER_ALIGNMENT) {
            return Err(format!(
                "offset {} is not a multiple of minTexelBufferOffsetAlignment ({})",
                info.offset,
                crate::caps::BUFFER_ALIGNMENT
            ));
        }
        // "If range is equal to VK_WHOLE_SIZE, the range from offset to the end of the buffer
        // is used ... rounded down to the nearest multiple of the format's texel block size."
        let range = match info.range {
            vk::WHOLE_SIZE => buffer.size.saturating_sub(info.offset) / texel * texel,
            r if r % texel == 0 => r,
            r => {
                return Err(format!(
                    "range {r} is not a multiple of {:?}'s {texel} bytes",
                    info.format
                ))
            }
        };
        if range == 0 || range / texel > u64::from(MAX_TEXEL_ELEMENTS) {
            return Err(format!(
                "{} texels: from 1 to maxTexelBufferElements ({MAX_TEXEL_ELEMENTS})",
                range / texel
            ));
        }
        if info.offset.saturating_add(range) > buffer.size {
            return Err(format!(
                "bytes {}..{} lie outside the buffer's {} bytes",
                info.offset,
                info.offset.saturating_add(range),
                buffer.size
            ));
        }
        Ok(BufferView {
            buffer,
            format,
            offset: info.offset,
            range,
        })
    }
}

/// A sampler: the executor's sampler state.
#[derive(Debug)]
pub struct Sampler {
    /// What sampling through it does.
    pub state: x::Sampler,
}

impl Sampler {
    /// The sampler `vkCreateSampler` asks for, or why it cannot be made (features not claimed:
    /// anisotropy, depth comparison, custom border colors, cubic filters).
    pub fn new(info: &vk::SamplerCreateInfo<'_>) -> Result<Sampler, String> {
        if info.anisotropy_enable != vk::FALSE {
            return Err("anisotropyEnable: samplerAnisotropy is not supported".into());
        }
        if info.compare_enable != vk::FALSE {
            return Err("compareEnable: depth-comparison samplers are not supported".into());
        }
        let filter = |f: vk::Filter| match f {
            vk::Filter::NEAREST => Ok(x::Filter::Nearest),
            vk::Filter::LINEAR => Ok(x::Filter::Linear),
            other => Err(format!("filter {other:?} is not supported")),
        };
        let address = |a: vk::SamplerAddressMode| match a {
            vk::SamplerAddressMode::REPEAT => Ok(x::AddressMode::Repeat),
            vk::SamplerAddressMode::MIRRORED_REPEAT => Ok(x::AddressMode::MirroredRepeat),
            vk::SamplerAddressMode::CLAMP_TO_EDGE => Ok(x::AddressMode::ClampToEdge),
            vk::SamplerAddressMode::CLAMP_TO_BORDER => Ok(x::AddressMode::ClampToBorder),
            vk::SamplerAddressMode::MIRROR_CLAMP_TO_EDGE => Ok(x::AddressMode::MirrorClampToEdge),
            other => Err(format!("address mode {other:?} does not exist")),
        };
        let border = match info.border_color {
            vk::BorderColor::FLOAT_TRANSPARENT_BLACK => x::BorderColor::FloatTransparentBlack,
            vk::BorderColor::INT_TRANSPARENT_BLACK => x::BorderColor::IntTransparentBlack,
            vk::BorderColor::FLOAT_OPAQUE_BLACK => x::BorderColor::FloatOpaqueBlack,
            vk::BorderColor::INT_OPAQUE_BLACK => x::BorderColor::IntOpaqueBlack,
            vk::BorderColor::FLOAT_OPAQUE_WHITE => x::BorderColor::FloatOpaqueWhite,
            vk::BorderColor::INT_OPAQUE_WHITE => x::BorderColor::IntOpaqueWhite,
            other => return Err(format!("border color {other:?} is not supported")),
        };
        let state = x::Sampler {
            mag_filter: filter(info.mag_filter)?,
            min_filter: filter(info.min_filter)?,
            address: [
                address(info.address_mode_u)?,
                address(info.address_mode_v)?,
                address(info.address_mode_w)?,
            ],
            border,
            min_lod: info.min_lod,
            max_lod: info.max_lod,
            normalized: info.unnormalized_coordinates == vk::FALSE,
        };
        x::check_unnormalized(&state, info.mipmap_mode == vk::SamplerMipmapMode::NEAREST)?;
        Ok(Sampler { state })
    }
}

/// The texels a dispatch copies in and, for a storage image or texel buffer, out again.
#[derive(Debug)]
pub struct Window {
    /// `(set, binding, element)`.
    pub key: (u32, u32, u32),
    /// The memory and the absolute offset of the texels.
    pub memory: Arc<Memory>,
    pub at: u64,
    /// Whether the shader may write them (a storage descriptor).
    pub storage: bool,
}

/// An executor image, the memory and absolute offset of its texels, and whether the shader may
/// write it.
type Bound = (tangle_exec::Image, Arc<Memory>, u64, bool);

/// The executor's image for an image or texel-buffer descriptor, and where its texels live.
fn exec_image(d: &Descriptor) -> Result<Option<Bound>, String> {
    Ok(Some(match d {
        Descriptor::Image {
            view: Some(view),
            storage,
            ..
        } => {
            let image = &view.image;
            let (memory, at) = image.memory()?;
            let texels = memory.bytes.read(at, image.size())?;
            let img = tangle_exec::Image {
                format: view.format,
                extent: image.extent,
                texels,
            };
            (img, memory, at, *storage)
        }
        Descriptor::TexelBuffer { view, storage } => {
            let (memory, at) = view.buffer.window(view.offset, view.range)?;
            let texels = memory.bytes.read(at, view.range)?;
            let width = u32::try_from(view.range / u64::from(view.format.bytes()))
                .map_err(|_| "too many texels")?;
            let img = tangle_exec::Image {
                format: view.format,
                extent: [width, 1, 1],
                texels,
            };
            (img, memory, at, *storage)
        }
        _ => return Ok(None),
    }))
}

/// Puts the images, texel buffers and samplers of the bound descriptors (`slots`: every
/// `(set, binding, element)` of the bound sets, with its descriptor) that the pipeline uses
/// into `resources`: images and texel buffers copied, samplers by value. Returns where each
/// image's texels came from, for [`write_back`]. `count(set, binding)` is a binding's
/// descriptor count, for runtime-sized arrays.
pub fn bind(
    pipeline: &tangle_exec::Pipeline,
    slots: &[((u32, u32, u32), Descriptor)],
    count: impl Fn(u32, u32) -> u32,
    resources: &mut Resources,
) -> Result<Vec<Window>, String> {
    let mut keys = std::collections::BTreeSet::new();
    for ib in pipeline.images() {
        keys.insert((ib.set, ib.binding, ib.element.unwrap_or(0)));
    }
    for a in pipeline.descriptor_arrays() {
        if matches!(a.kind, DescriptorKind::Image(_)) {
            for e in 0..a.count.unwrap_or_else(|| count(a.set, a.binding)) {
                keys.insert((a.set, a.binding, e));
            }
        }
    }
    let mut windows = Vec::new();
    for ((set, binding, element), d) in slots {
        let key = (*set, *binding, *element);
        // Samplers are small: every bound one goes in, whichever the shader uses.
        let sampler = match d {
            Descriptor::Sampler(s) => Some(s),
            Descriptor::Image { sampler, .. } => sampler.as_ref(),
            _ => None,
        };
        if let Some(s) = sampler {
            match element {
                0 => resources.samplers.insert((*set, *binding), s.state),
                e => resources
                    .sampler_elements
                    .insert((*set, *binding, *e), s.state),
            };
        }
        if !keys.contains(&key) {
            continue;
        }
        if let Descriptor::Null = d {
            // An image view or buffer view written as VK_NULL_HANDLE (`nullDescriptor`).
            resources.null_images.insert(key);
            continue;
        }
        if let Descriptor::TexelBuffer { view, .. } = d {
            // A texel buffer is a view of its buffer's bytes, as the CPU backend binds one: a
            // write through another descriptor of the same bytes is seen, and nothing is
            // copied back over it after the dispatch.
            let (memory, at) = view
                .buffer
                .window(view.offset, view.range)
                .map_err(|e| format!("set {set} binding {binding}: {e}"))?;
            let texels = TexelView {
                format: view.format,
                view: memory.bytes.view(at, view.range)?,
            };
            resources.texel_views.insert(key, texels);
            continue;
        }
        let Some((img, memory, at, storage)) =
            exec_image(d).map_err(|e| format!("set {set} binding {binding}: {e}"))?
        else {
            continue;
        };
        match element {
            0 => resources.images.insert((*set, *binding), img),
            e => resources.image_elements.insert((*set, *binding, *e), img),
        };
        windows.push(Window {
            key,
            memory,
            at,
            storage,
        });
    }
    Ok(windows)
}

/// Writes the storage images and texel buffers of a dispatch back to their memory.
pub fn write_back(resources: &Resources, windows: &[Window]) -> Result<(), String> {
    for w in windows.iter().filter(|w| w.storage) {
        let (set, binding, element) = w.key;
        let img = match element {
            0 => resources.images.get(&(set, binding)),
            e => resources.image_elements.get(&(set, binding, e)),
        };
        if let Some(img) = img {
            w.memory.bytes.write(w.at, &img.texels)?;
        }
    }
    Ok(())
}

/// One texel of `format` holding a clear color (`VkClearColorValue`'s four 32-bit words:
/// floats for float formats, signed or unsigned integers else), as its bytes.
pub fn clear_texel(format: &TexelFormat, words: [u32; 4]) -> Vec<u8> {
    let components: texel::Components = std::array::from_fn(|i| match format.numeric {
        Numeric::Uint => u64::from(words[i]),
        Numeric::Sint => words[i] as i32 as i64 as u64,
        _ => f64::from(f32::from_bits(words[i])).to_bits(),
    });
    let raw = texel::encode(format, &components);
    raw.to_le_bytes()[..format.bytes() as usize].to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(format: vk::Format, extent: [u32; 3]) -> vk::ImageCreateInfo<'static> {
        vk::ImageCreateInfo::default()
            .image_type(vk::ImageType::TYPE_2D)
            .format(format)
            .extent(vk::Extent3D {
                width: extent[0],
                height: extent[1],
                depth: extent[2],
            })
            .mip_levels(1)
            .array_layers(1)
            .samples(vk::SampleCountFlags::TYPE_1)
    }

    #[test]
    fn formats_are_the_executors_by_name() {
        assert_eq!(
            texel_format(vk::Format::R8G8B8A8_UNORM).map(|f| f.name),
            Some("R8G8B8A8_UNORM")
        );
        assert_eq!(texel_format(vk::Format::D32_SFLOAT), None);
        // Every executor format is reachable from its Vulkan format, so the queries cover them.
        for f in texel::FORMATS {
            let found = (0..200)
                .map(vk::Format::from_raw)
                .any(|v| texel_format(v).is_some_and(|t| t.name == f.name));
            assert!(found, "{}", f.name);
        }
        let none = format_properties(vk::Format::D32_SFLOAT);
        assert!(none.optimal_tiling_features.is_empty() && none.buffer_features.is_empty());
    }

    #[test]
    fn images_are_packed_and_checked() {
        let i = Image::new(&info(vk::Format::R16G16_SFLOAT, [5, 3, 1])).expect("an image");
        assert_eq!((i.row_pitch(), i.depth_pitch(), i.size()), (20, 60, 60));
        assert_eq!(i.texel([2, 1, 0], 3), Ok(20 + 8));
        assert!(i.texel([3, 1, 0], 3).is_err(), "x + len past the width");
        assert!(i.texel([-1, 0, 0], 1).is_err());
        let two_levels = info(vk::Format::R32_UINT, [4, 4, 1]).mip_levels(2);
        assert!(Image::new(&two_levels).is_err_and(|e| e.contains("mipLevels 2")));
        let msaa = info(vk::Format::R32_UINT, [4, 4, 1]).samples(vk::SampleCountFlags::TYPE_4);
        assert!(Image::new(&msaa).is_err_and(|e| e.contains("multisampled")));
        assert!(
            Image::new(&info(vk::Format::R32_UINT, [4, 4, 2])).is_err(),
            "2D depth 2"
        );
        assert!(Image::new(&info(vk::Format::D16_UNORM, [4, 4, 1])).is_err());
    }

    #[test]
    fn clear_colors_are_encoded_in_the_format() {
        let f = |v| texel_format(v).expect("a format");
        let half = 0.5f32.to_bits();
        assert_eq!(
            clear_texel(f(vk::Format::R8G8B8A8_UNORM), [half, 0, 1f32.to_bits(), 0]),
            [128, 0, 255, 0]
        );
        assert_eq!(
            clear_texel(f(vk::Format::R16_SINT), [(-2i32) as u32, 0, 0, 0]),
            (-2i16).to_le_bytes()
        );
    }
}
