//! The Vulkan form of a script's images, texel buffers and samplers: a format name
//! ([`tangle_amber::JobImage::format`]) as a `VkFormat`, and a `SAMPLER`'s state as a
//! `VkSamplerCreateInfo`. Pure; the objects themselves are made in [`crate::raw`].

use ash::vk;
use tangle_amber::backend::{AddressMode, BorderColor, Filter, SamplerState};
use tangle_exec::semantics::texel::TexelFormat;

/// The `VkFormat` of a texel format tangle implements ([`TexelFormat::by_name`], the table the
/// CPU backend and the driver use), found by ash's name for it as the driver finds the reverse;
/// `None` for a format tangle does not implement. Every such format is a core Vulkan 1.0 one.
pub fn vk_format(name: &str) -> Option<vk::Format> {
    let format = TexelFormat::by_name(name)?;
    // VK_FORMAT_UNDEFINED (0) to VK_FORMAT_ASTC_12x12_SRGB_BLOCK (184): the core 1.0 formats.
    (1..=184)
        .map(vk::Format::from_raw)
        .find(|f| format!("{f:?}") == format.name)
}

/// The create-info of a `SAMPLER`; a depth-comparison sampler is unsupported, as on the CPU
/// backend (the script names no compare operation).
pub fn sampler_info(s: &SamplerState) -> Result<vk::SamplerCreateInfo<'static>, String> {
    if s.compare {
        return Err("depth-comparison samplers (COMPARE on)".to_string());
    }
    let filter = |f: Filter| match f {
        Filter::Nearest => vk::Filter::NEAREST,
        Filter::Linear => vk::Filter::LINEAR,
    };
    let address = |a: AddressMode| match a {
        AddressMode::Repeat => vk::SamplerAddressMode::REPEAT,
        AddressMode::MirroredRepeat => vk::SamplerAddressMode::MIRRORED_REPEAT,
        AddressMode::ClampToEdge => vk::SamplerAddressMode::CLAMP_TO_EDGE,
        AddressMode::ClampToBorder => vk::SamplerAddressMode::CLAMP_TO_BORDER,
        AddressMode::MirrorClampToEdge => vk::SamplerAddressMode::MIRROR_CLAMP_TO_EDGE,
    };
    let border = match s.border {
        BorderColor::FloatTransparentBlack => vk::BorderColor::FLOAT_TRANSPARENT_BLACK,
        BorderColor::IntTransparentBlack => vk::BorderColor::INT_TRANSPARENT_BLACK,
        BorderColor::FloatOpaqueBlack => vk::BorderColor::FLOAT_OPAQUE_BLACK,
        BorderColor::IntOpaqueBlack => vk::BorderColor::INT_OPAQUE_BLACK,
        BorderColor::FloatOpaqueWhite => vk::BorderColor::FLOAT_OPAQUE_WHITE,
        BorderColor::IntOpaqueWhite => vk::BorderColor::INT_OPAQUE_WHITE,
    };
    let mipmap = match s.mipmap_mode {
        Filter::Nearest => vk::SamplerMipmapMode::NEAREST,
        Filter::Linear => vk::SamplerMipmapMode::LINEAR,
    };
    Ok(vk::SamplerCreateInfo::default()
        .mag_filter(filter(s.mag_filter))
        .min_filter(filter(s.min_filter))
        .mipmap_mode(mipmap)
        .address_mode_u(address(s.address[0]))
        .address_mode_v(address(s.address[1]))
        .address_mode_w(address(s.address[2]))
        .border_color(border)
        .min_lod(s.min_lod)
        .max_lod(s.max_lod)
        .unnormalized_coordinates(!s.normalized))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tangle_exec::semantics::texel::FORMATS;

    #[test]
    fn every_texel_format_has_its_vulkan_format() {
        for f in FORMATS {
            let vk = vk_format(f.name).unwrap_or_else(|| panic!("{}", f.name));
            assert_eq!(format!("{vk:?}"), f.name);
        }
        assert_eq!(
            vk_format("R8G8B8A8_UNORM"),
            Some(vk::Format::R8G8B8A8_UNORM)
        );
        assert_eq!(
            vk_format("VK_FORMAT_A2B10G10R10_UINT_PACK32"),
            Some(vk::Format::A2B10G10R10_UINT_PACK32)
        );
        // Not implemented by tangle: no Vulkan format either.
        assert_eq!(vk_format("B10G11R11_UFLOAT_PACK32"), None);
        assert_eq!(vk_format("NOT_A_FORMAT"), None);
    }

    #[test]
    fn sampler_state_maps_member_by_member() {
        let s = SamplerState {
            mag_filter: Filter::Linear,
            min_filter: Filter::Nearest,
            mipmap_mode: Filter::Linear,
            address: [
                AddressMode::MirroredRepeat,
                AddressMode::ClampToBorder,
                AddressMode::MirrorClampToEdge,
            ],
            border: BorderColor::IntOpaqueWhite,
            min_lod: 0.5,
            max_lod: 3.0,
            normalized: false,
            compare: false,
        };
        let i = sampler_info(&s).expect("maps");
        assert_eq!(
            (i.mag_filter, i.min_filter),
            (vk::Filter::LINEAR, vk::Filter::NEAREST)
        );
        assert_eq!(i.mipmap_mode, vk::SamplerMipmapMode::LINEAR);
        assert_eq!(
            [i.address_mode_u, i.address_mode_v, i.address_mode_w],
            [
                vk::SamplerAddressMode::MIRRORED_REPEAT,
                vk::SamplerAddressMode::CLAMP_TO_BORDER,
                vk::SamplerAddressMode::MIRROR_CLAMP_TO_EDGE
            ]
        );
        assert_eq!(i.border_color, vk::BorderColor::INT_OPAQUE_WHITE);
        assert_eq!((i.min_lod, i.max_lod), (0.5, 3.0));
        assert_eq!(i.unnormalized_coordinates, vk::TRUE);
        assert_eq!(i.compare_enable, vk::FALSE);
        let d = sampler_info(&SamplerState::default()).expect("maps");
        assert_eq!(d.address_mode_u, vk::SamplerAddressMode::REPEAT);
        assert_eq!(d.unnormalized_coordinates, vk::FALSE);
        let compare = SamplerState {
            compare: true,
            ..SamplerState::default()
        };
        assert!(sampler_info(&compare).is_err());
    }
}
