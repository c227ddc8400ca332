//! Images, image views, samplers and buffer views: their entry points, their descriptors in
//! `vkUpdateDescriptorSets`, their transfer commands, and the format queries
//! (`vkGetPhysicalDevice{Format,ImageFormat}Properties(2)`). The safe model is
//! [`crate::image`] and [`crate::transfer`].

use super::*;
use crate::exec::Command;
use crate::image::{self, BufferView, Image, ImageView, Sampler};
use crate::objects::{self, lock, Buffer, Descriptor, Device, Memory, Physical};
use crate::transfer::ImageCommand;
use ash::vk::Handle;
use std::sync::Arc;

/// Creates an object with `make` and writes its handle through `out`.
fn create<T: objects::Kind, H: Handle>(
    device: vk::Device,
    out: *mut H,
    what: &str,
    make: impl FnOnce() -> Result<T, Fail>,
) -> Result<vk::Result, Fail> {
    objects::get::<Device>(device.as_raw())?;
    let handle = objects::insert(Arc::new(make()?));
    // SAFETY: the program's output pointer (rule 1).
    unsafe { write(out, H::from_raw(handle), what)? };
    Ok(vk::Result::SUCCESS)
}

/// Destroys the object of a handle (a null handle is allowed and does nothing).
fn destroy<T: objects::Kind>(handle: u64) -> Result<(), Fail> {
    if handle != 0 {
        objects::remove::<T>(handle)?;
    }
    Ok(())
}

pub unsafe extern "system" fn create_image(
    device: vk::Device,
    info: *const vk::ImageCreateInfo<'_>,
    _allocator: *const vk::AllocationCallbacks<'_>,
    out: *mut vk::Image,
) -> vk::Result {
    guard("vkCreateImage", || {
        // SAFETY: the program's struct (rule 1); only its plain members are read.
        let info = unsafe { read(info, "pCreateInfo")? };
        create(device, out, "pImage", || Ok(Image::new(info)?))
    })
}

pub unsafe extern "system" fn destroy_image(
    _device: vk::Device,
    image: vk::Image,
    _allocator: *const vk::AllocationCallbacks<'_>,
) {
    guard_void("vkDestroyImage", || destroy::<Image>(image.as_raw()))
}

/// An image's memory requirements: its packed size rounded up to the alignment, the one type.
fn requirements(image: vk::Image) -> Result<vk::MemoryRequirements, Fail> {
    let i = objects::get::<Image>(image.as_raw())?;
    let align = crate::caps::BUFFER_ALIGNMENT;
    Ok(vk::MemoryRequirements {
        size: i.size().max(1).div_ceil(align).saturating_mul(align),
        alignment: align,
        memory_type_bits: 1,
    })
}

pub unsafe extern "system" fn get_image_memory_requirements(
    _device: vk::Device,
    image: vk::Image,
    out: *mut vk::MemoryRequirements,
) {
    guard_void("vkGetImageMemoryRequirements", || {
        let r = requirements(image)?;
        // SAFETY: the program's output pointer (rule 1).
        unsafe { write(out, r, "pMemoryRequirements") }
    })
}

pub unsafe extern "system" fn get_image_memory_requirements2(
    _device: vk::Device,
    info: *const vk::ImageMemoryRequirementsInfo2<'_>,
    out: *mut vk::MemoryRequirements2<'_>,
) {
    guard_void("vkGetImageMemoryRequirements2", || {
        // SAFETY: the program's structs and chain (rule 1); only `memoryRequirements` and the
        // dedicated-allocation struct's answers are written.
        unsafe {
            super::device::answer_requirements2(out, requirements(read(info, "pInfo")?.image)?)
        }
    })
}

/// Binds `memory` at `offset` to `image`.
fn bind(image: vk::Image, memory: vk::DeviceMemory, offset: u64) -> Result<(), Fail> {
    let i = objects::get::<Image>(image.as_raw())?;
    let m = objects::get::<Memory>(memory.as_raw())?;
    if offset
        .checked_add(i.size())
        .is_none_or(|end| end > m.bytes.len())
    {
        return Err(format!(
            "an image of {} bytes at offset {offset} does not fit the allocation's {} bytes",
            i.size(),
            m.bytes.len()
        )
        .into());
    }
    *lock(&i.bound) = Some((m, offset));
    Ok(())
}

pub unsafe extern "system" fn bind_image_memory(
    _device: vk::Device,
    image: vk::Image,
    memory: vk::DeviceMemory,
    offset: u64,
) -> vk::Result {
    guard("vkBindImageMemory", || {
        bind(image, memory, offset).map(|()| vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn bind_image_memory2(
    _device: vk::Device,
    count: u32,
    infos: *const vk::BindImageMemoryInfo<'_>,
) -> vk::Result {
    guard("vkBindImageMemory2", || {
        // SAFETY: the program's array (rule 1).
        for i in unsafe { slice(infos, count, "pBindInfos")? } {
            bind(i.image, i.memory, i.memory_offset)?;
        }
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn get_image_subresource_layout(
    _device: vk::Device,
    image: vk::Image,
    subresource: *const vk::ImageSubresource,
    out: *mut vk::SubresourceLayout,
) {
    guard_void("vkGetImageSubresourceLayout", || {
        let i = objects::get::<Image>(image.as_raw())?;
        // SAFETY: the program's struct (rule 1).
        let s = unsafe { read(subresource, "pSubresource")? };
        if s.mip_level != 0 || s.array_layer != 0 || s.aspect_mask != vk::ImageAspectFlags::COLOR {
            return Err(
                format!("subresource {s:?}: the image has one color level and layer").into(),
            );
        }
        let layout = vk::SubresourceLayout {
            offset: 0,
            size: i.size(),
            row_pitch: i.row_pitch(),
            array_pitch: i.size(),
            depth_pitch: i.depth_pitch(),
        };
        // SAFETY: the program's output pointer (rule 1).
        unsafe { write(out, layout, "pLayout") }
    })
}

pub unsafe extern "system" fn create_image_view(
    device: vk::Device,
    info: *const vk::ImageViewCreateInfo<'_>,
    _allocator: *const vk::AllocationCallbacks<'_>,
    out: *mut vk::ImageView,
) -> vk::Result {
    guard("vkCreateImageView", || {
        // SAFETY: the program's struct (rule 1); only its plain members are read.
        let info = unsafe { read(info, "pCreateInfo")? };
        let image = objects::get::<Image>(info.image.as_raw())?;
        create(device, out, "pView", || Ok(ImageView::new(image, info)?))
    })
}

pub unsafe extern "system" fn destroy_image_view(
    _device: vk::Device,
    view: vk::ImageView,
    _allocator: *const vk::AllocationCallbacks<'_>,
) {
    guard_void("vkDestroyImageView", || destroy::<ImageView>(view.as_raw()))
}

pub unsafe extern "system" fn create_buffer_view(
    device: vk::Device,
    info: *const vk::BufferViewCreateInfo<'_>,
    _allocator: *const vk::AllocationCallbacks<'_>,
    out: *mut vk::BufferView,
) -> vk::Result {
    guard("vkCreateBufferView", || {
        // SAFETY: the program's struct (rule 1); only its plain members are read.
        let info = unsafe { read(info, "pCreateInfo")? };
        let buffer = objects::get::<Buffer>(info.buffer.as_raw())?;
        create(device, out, "pView", || Ok(BufferView::new(buffer, info)?))
    })
}

pub unsafe extern "system" fn destroy_buffer_view(
    _device: vk::Device,
    view: vk::BufferView,
    _allocator: *const vk::AllocationCallbacks<'_>,
) {
    guard_void("vkDestroyBufferView", || {
        destroy::<BufferView>(view.as_raw())
    })
}

pub unsafe extern "system" fn create_sampler(
    device: vk::Device,
    info: *const vk::SamplerCreateInfo<'_>,
    _allocator: *const vk::AllocationCallbacks<'_>,
    out: *mut vk::Sampler,
) -> vk::Result {
    guard("vkCreateSampler", || {
        // SAFETY: the program's struct (rule 1); only its plain members are read.
        let info = unsafe { read(info, "pCreateInfo")? };
        create(device, out, "pSampler", || {
            Sampler::new(info).map_err(|e| Fail(vk::Result::ERROR_FEATURE_NOT_PRESENT, e))
        })
    })
}

pub unsafe extern "system" fn destroy_sampler(
    _device: vk::Device,
    sampler: vk::Sampler,
    _allocator: *const vk::AllocationCallbacks<'_>,
) {
    guard_void("vkDestroySampler", || destroy::<Sampler>(sampler.as_raw()))
}

/// The descriptors of an image, sampler or texel-buffer write; `None` for other types.
///
/// # Safety
/// `w` is a valid write: for its descriptor type, `pImageInfo` or `pTexelBufferView` holds
/// `descriptorCount` elements.
pub(super) unsafe fn descriptors(
    w: &vk::WriteDescriptorSet<'_>,
    null_ok: bool,
) -> Result<Option<Vec<Descriptor>>, Fail> {
    use vk::DescriptorType as T;
    let n = w.descriptor_count;
    let image_info = || {
        // SAFETY: the caller's promise for image types.
        unsafe { slice(w.p_image_info, n, "pImageInfo") }
    };
    let sampler = |h: vk::Sampler| objects::get::<Sampler>(h.as_raw());
    let view = |h: vk::ImageView| objects::get::<ImageView>(h.as_raw());
    // A null view or buffer view: bound to nothing with `nullDescriptor` (Vulkan
    // `VkWriteDescriptorSet`: "If the nullDescriptor feature is enabled, the buffer,
    // acceleration structure, imageView, or bufferView can be VK_NULL_HANDLE"), else refused.
    let null = |vuid: &str| -> Result<Descriptor, String> {
        match null_ok {
            true => Ok(Descriptor::Null),
            false => Err(format!(
                "{vuid}: a VK_NULL_HANDLE view needs the nullDescriptor feature"
            )),
        }
    };
    let image_vuid = "VUID-VkWriteDescriptorSet-descriptorType-02997";
    let out: Result<Vec<Descriptor>, String> = match w.descriptor_type {
        T::SAMPLER => image_info()?
            .iter()
            .map(|i| Ok(Descriptor::Sampler(sampler(i.sampler)?)))
            .collect(),
        // With immutable samplers the write's sampler is ignored ([`with_immutable`]): a null
        // one is no error here.
        T::COMBINED_IMAGE_SAMPLER => image_info()?
            .iter()
            .map(|i| {
                if i.image_view == vk::ImageView::null() {
                    return null(image_vuid);
                }
                Ok(Descriptor::Image {
                    view: Some(view(i.image_view)?),
                    sampler: match i.sampler {
                        s if s == vk::Sampler::null() => None,
                        s => Some(sampler(s)?),
                    },
                    storage: false,
                })
            })
            .collect(),
        T::SAMPLED_IMAGE | T::STORAGE_IMAGE => image_info()?
            .iter()
            .map(|i| {
                if i.image_view == vk::ImageView::null() {
                    return null(image_vuid);
                }
                Ok(Descriptor::Image {
                    view: Some(view(i.image_view)?),
                    sampler: None,
                    storage: w.descriptor_type == T::STORAGE_IMAGE,
                })
            })
            .collect(),
        T::UNIFORM_TEXEL_BUFFER | T::STORAGE_TEXEL_BUFFER => {
            // SAFETY: the caller's promise for texel-buffer types.
            unsafe { slice(w.p_texel_buffer_view, n, "pTexelBufferView")? }
                .iter()
                .map(|v| {
                    if *v == vk::BufferView::null() {
                        return null("VUID-VkWriteDescriptorSet-descriptorType-02995");
                    }
                    Ok(Descriptor::TexelBuffer {
                        view: objects::get::<BufferView>(v.as_raw())?,
                        storage: w.descriptor_type == T::STORAGE_TEXEL_BUFFER,
                    })
                })
                .collect()
        }
        _ => return Ok(None),
    };
    Ok(Some(out?))
}

/// The immutable samplers of a set layout's bindings, by `(binding, element)`.
///
/// # Safety
/// Each binding's `pImmutableSamplers` is null or holds `descriptorCount` handles.
pub(super) unsafe fn immutable_samplers(
    bindings: &[vk::DescriptorSetLayoutBinding<'_>],
) -> Result<std::collections::BTreeMap<(u32, u32), Arc<Sampler>>, Fail> {
    let mut out = std::collections::BTreeMap::new();
    for b in bindings {
        let kinds = [
            vk::DescriptorType::SAMPLER,
            vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
        ];
        if b.p_immutable_samplers.is_null() || !kinds.contains(&b.descriptor_type) {
            continue;
        }
        // SAFETY: the caller's promise.
        let handles = unsafe {
            slice(
                b.p_immutable_samplers,
                b.descriptor_count,
                "pImmutableSamplers",
            )?
        };
        for (e, h) in handles.iter().enumerate() {
            out.insert((b.binding, e as u32), objects::get::<Sampler>(h.as_raw())?);
        }
    }
    Ok(out)
}

/// A written descriptor with the slot's immutable sampler, if the layout has one (Vulkan
/// `VkDescriptorImageInfo::sampler`: "... if the binding being updated ... uses immutable
/// samplers", the write's sampler is ignored).
pub(super) fn with_immutable(
    layout: &objects::SetLayout,
    slot: (u32, u32),
    d: Descriptor,
) -> Descriptor {
    let Some(fixed) = layout.immutable.get(&slot) else {
        return d;
    };
    match d {
        Descriptor::Image { view, storage, .. } => Descriptor::Image {
            view,
            sampler: Some(fixed.clone()),
            storage,
        },
        Descriptor::Sampler(_) => Descriptor::Sampler(fixed.clone()),
        other => other,
    }
}

/// Records an image command.
fn record_image(buffer: vk::CommandBuffer, c: ImageCommand) -> Result<(), Fail> {
    super::commands::record(buffer, Command::Image(c))
}

pub unsafe extern "system" fn cmd_copy_buffer_to_image(
    buffer: vk::CommandBuffer,
    src: vk::Buffer,
    dst: vk::Image,
    _layout: vk::ImageLayout,
    count: u32,
    regions: *const vk::BufferImageCopy,
) {
    guard_void("vkCmdCopyBufferToImage", || {
        let c = ImageCommand::BufferImage {
            buffer: objects::get::<Buffer>(src.as_raw())?,
            image: objects::get::<Image>(dst.as_raw())?,
            // SAFETY: the program's array (rule 1).
            regions: unsafe { slice(regions, count, "pRegions")? }.to_vec(),
            to_image: true,
        };
        record_image(buffer, c)
    })
}

pub unsafe extern "system" fn cmd_copy_image_to_buffer(
    buffer: vk::CommandBuffer,
    src: vk::Image,
    _layout: vk::ImageLayout,
    dst: vk::Buffer,
    count: u32,
    regions: *const vk::BufferImageCopy,
) {
    guard_void("vkCmdCopyImageToBuffer", || {
        let c = ImageCommand::BufferImage {
            buffer: objects::get::<Buffer>(dst.as_raw())?,
            image: objects::get::<Image>(src.as_raw())?,
            // SAFETY: the program's array (rule 1).
            regions: unsafe { slice(regions, count, "pRegions")? }.to_vec(),
            to_image: false,
        };
        record_image(buffer, c)
    })
}

pub unsafe extern "system" fn cmd_copy_image(
    buffer: vk::CommandBuffer,
    src: vk::Image,
    _src_layout: vk::ImageLayout,
    dst: vk::Image,
    _dst_layout: vk::ImageLayout,
    count: u32,
    regions: *const vk::ImageCopy,
) {
    guard_void("vkCmdCopyImage", || {
        let c = ImageCommand::Copy {
            src: objects::get::<Image>(src.as_raw())?,
            dst: objects::get::<Image>(dst.as_raw())?,
            // SAFETY: the program's array (rule 1).
            regions: unsafe { slice(regions, count, "pRegions")? }.to_vec(),
        };
        record_image(buffer, c)
    })
}

pub unsafe extern "system" fn cmd_clear_color_image(
    buffer: vk::CommandBuffer,
    image: vk::Image,
    _layout: vk::ImageLayout,
    color: *const vk::ClearColorValue,
    count: u32,
    ranges: *const vk::ImageSubresourceRange,
) {
    guard_void("vkCmdClearColorImage", || {
        let image = objects::get::<Image>(image.as_raw())?;
        // SAFETY: the program's union and array (rule 1); the union's members are all 16
        // bytes of plain words, so reading it as `uint32` is reading its bytes.
        let color = unsafe { read(color, "pColor")?.uint32 };
        // SAFETY: as above.
        for r in unsafe { slice(ranges, count, "pRanges")? } {
            if r.aspect_mask != vk::ImageAspectFlags::COLOR
                || r.base_mip_level != 0
                || r.base_array_layer != 0
            {
                return Err(format!("range {r:?}: the image has one color level and layer").into());
            }
        }
        // The image has one level and one layer: any valid range is the whole image.
        if count == 0 {
            return Ok(());
        }
        record_image(buffer, ImageCommand::Clear { image, color })
    })
}

/// The physical device's claims (for the format queries).
fn physical(p: vk::PhysicalDevice) -> Result<(), Fail> {
    objects::get::<Physical>(p.as_raw())?;
    Ok(())
}

pub unsafe extern "system" fn get_physical_device_format_properties(
    p: vk::PhysicalDevice,
    format: vk::Format,
    out: *mut vk::FormatProperties,
) {
    guard_void("vkGetPhysicalDeviceFormatProperties", || {
        physical(p)?;
        // SAFETY: the program's output pointer (rule 1).
        unsafe { write(out, image::format_properties(format), "pFormatProperties") }
    })
}

pub unsafe extern "system" fn get_physical_device_format_properties2(
    p: vk::PhysicalDevice,
    format: vk::Format,
    out: *mut vk::FormatProperties2<'_>,
) {
    guard_void("vkGetPhysicalDeviceFormatProperties2", || {
        physical(p)?;
        // SAFETY: the program's output struct and chain (rule 1); `sType` and `pNext` stay.
        unsafe {
            let next = read(out, "pFormatProperties")?.p_next;
            (*out).format_properties = image::format_properties(format);
            for (s_type, at) in chain(next) {
                if s_type == vk::StructureType::FORMAT_PROPERTIES_3 {
                    put(at, image::format_properties3(format));
                }
            }
        }
        Ok(())
    })
}

pub unsafe extern "system" fn get_physical_device_image_format_properties(
    p: vk::PhysicalDevice,
    format: vk::Format,
    kind: vk::ImageType,
    tiling: vk::ImageTiling,
    usage: vk::ImageUsageFlags,
    flags: vk::ImageCreateFlags,
    out: *mut vk::ImageFormatProperties,
) -> vk::Result {
    guard("vkGetPhysicalDeviceImageFormatProperties", || {
        physical(p)?;
        let Some(props) = image::image_format_properties(format, kind, tiling, usage, flags) else {
            return Ok(vk::Result::ERROR_FORMAT_NOT_SUPPORTED);
        };
        // SAFETY: the program's output pointer (rule 1).
        unsafe { write(out, props, "pImageFormatProperties")? };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn get_physical_device_image_format_properties2(
    p: vk::PhysicalDevice,
    info: *const vk::PhysicalDeviceImageFormatInfo2<'_>,
    out: *mut vk::ImageFormatProperties2<'_>,
) -> vk::Result {
    guard("vkGetPhysicalDeviceImageFormatProperties2", || {
        physical(p)?;
        // SAFETY: the program's structs (rule 1); only `imageFormatProperties` is written.
        let i = unsafe { read(info, "pImageFormatInfo")? };
        let Some(props) =
            image::image_format_properties(i.format, i.ty, i.tiling, i.usage, i.flags)
        else {
            return Ok(vk::Result::ERROR_FORMAT_NOT_SUPPORTED);
        };
        // SAFETY: as above.
        unsafe {
            read(out, "pImageFormatProperties")?;
            (*out).image_format_properties = props;
        }
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn get_physical_device_sparse_image_format_properties2(
    p: vk::PhysicalDevice,
    _info: *const vk::PhysicalDeviceSparseImageFormatInfo2<'_>,
    count: *mut u32,
    _out: *mut vk::SparseImageFormatProperties2<'_>,
) {
    guard_void("vkGetPhysicalDeviceSparseImageFormatProperties2", || {
        physical(p)?;
        // No sparse images: an empty list.
        // SAFETY: the program's count pointer (rule 1).
        unsafe { write(count, 0, "pPropertyCount") }
    })
}
