//! Vulkan format names (`VkFormat` without the `VK_FORMAT_` prefix) as AmberScript's `FORMAT`
//! and `DATA_TYPE` take them, and what they mean for buffer data.
//!
//! [`FORMATS`] lists the uncompressed formats of the Vulkan core specification (section
//! "Formats"); a name's channels, widths and numeric type are read from the name itself, following
//! the spec's naming rules: "each component is named by its letter followed by its width in
//! bits", the numeric format follows, and a `_PACKnn` suffix says the components share one
//! nn-bit word, the first-named component in the most significant bits.
//!
//! As buffer data, amber treats a format's components as integers of their width when the
//! numeric format is `UINT`, `UNORM`, `USCALED` or `SRGB` (unsigned) or `SINT`, `SNORM`, `SSCALED`
//! (signed), and as floats when it is `SFLOAT` (`type::Type::IsSignedInt`/`IsUnsignedInt`/`IsFloat`
//! in amber's `src/type.h`): a `DATA` value for an `R8G8B8A8_UNORM` buffer is the stored byte, not
//! a normalised float. A packed format is one value per element, the whole packed word (amber's
//! `Buffer` counts one input per element when `Format::IsPacked`): `A2B10G10R10_UNORM_PACK32`
//! data are 32-bit words. tangle runs those and the formats whose components are all whole
//! 8/16/32/64-bit values of one numeric type in name order; depth/stencil formats mixing widths
//! or types are refused as unsupported buffer data (exit 77) rather than guessed.

use crate::types::{DataType, Scalar};

/// The numeric format of a Vulkan format's components.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Numeric {
    Unorm,
    Snorm,
    Uscaled,
    Sscaled,
    Uint,
    Sint,
    Srgb,
    Sfloat,
    Ufloat,
}

impl Numeric {
    fn parse(text: &str) -> Option<Numeric> {
        Some(match text {
            "UNORM" => Numeric::Unorm,
            "SNORM" => Numeric::Snorm,
            "USCALED" => Numeric::Uscaled,
            "SSCALED" => Numeric::Sscaled,
            "UINT" => Numeric::Uint,
            "SINT" => Numeric::Sint,
            "SRGB" => Numeric::Srgb,
            "SFLOAT" => Numeric::Sfloat,
            "UFLOAT" => Numeric::Ufloat,
            _ => return None,
        })
    }

    /// The scalar a `bits`-wide component of this numeric format is stored as in a buffer.
    fn scalar(self, bits: u32) -> Option<Scalar> {
        let unsigned = matches!(
            self,
            Numeric::Unorm | Numeric::Uscaled | Numeric::Uint | Numeric::Srgb
        );
        let signed = matches!(self, Numeric::Snorm | Numeric::Sscaled | Numeric::Sint);
        Some(match bits {
            8 if unsigned => Scalar::U8,
            16 if unsigned => Scalar::U16,
            32 if unsigned => Scalar::U32,
            64 if unsigned => Scalar::U64,
            8 if signed => Scalar::I8,
            16 if signed => Scalar::I16,
            32 if signed => Scalar::I32,
            64 if signed => Scalar::I64,
            16 if self == Numeric::Sfloat => Scalar::F16,
            32 if self == Numeric::Sfloat => Scalar::F32,
            64 if self == Numeric::Sfloat => Scalar::F64,
            _ => return None,
        })
    }
}

/// One component of a format: its letter (`R`, `G`, `B`, `A`, `D`, `S`, `X`, `E`) and width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Channel {
    /// The component letter.
    pub letter: char,
    /// Its width in bits.
    pub bits: u32,
    /// Its numeric format (depth/stencil formats mix two).
    pub numeric: Numeric,
}

/// A Vulkan format, as its name describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Format {
    /// The name without `VK_FORMAT_`.
    pub name: &'static str,
    /// The components in name order.
    pub channels: Vec<Channel>,
    /// `_PACKnn`: the width of the word the components share.
    pub pack: Option<u32>,
}

/// What a format name means as buffer data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BufferFormat {
    /// Components stored one after another in name order, each a whole scalar of one type.
    Components {
        /// The component type.
        scalar: Scalar,
        /// How many components an element has.
        count: u8,
    },
    /// A real Vulkan format that tangle does not hold in a buffer; the reason, in words.
    Unsupported(String),
}

impl Format {
    /// Looks `name` up in [`FORMATS`] (a `VK_FORMAT_` prefix is allowed).
    pub fn by_name(name: &str) -> Option<Format> {
        let name = name.strip_prefix("VK_FORMAT_").unwrap_or(name);
        let name = *FORMATS.iter().find(|f| **f == name)?;
        let (body, pack) = match name.rsplit_once("_PACK") {
            Some((body, bits)) => (body, Some(bits.parse().ok()?)),
            None => (name, None),
        };
        // `D32_SFLOAT_S8_UINT`: groups of channels, each followed by its numeric format.
        let mut channels = Vec::new();
        let mut pending: Vec<(char, u32)> = Vec::new();
        for part in body.split('_') {
            if let Some(numeric) = Numeric::parse(part) {
                channels.extend(pending.drain(..).map(|(letter, bits)| Channel {
                    letter,
                    bits,
                    numeric,
                }));
                continue;
            }
            let mut rest = part;
            while let Some(letter) = rest.chars().next().filter(char::is_ascii_uppercase) {
                let after = &rest[1..];
                let digits = after.bytes().take_while(u8::is_ascii_digit).count();
                pending.push((letter, after.get(..digits)?.parse().ok()?));
                rest = &after[digits..];
            }
            if !rest.is_empty() {
                return None;
            }
        }
        (pending.is_empty() && !channels.is_empty()).then_some(Format {
            name,
            channels,
            pack,
        })
    }

    /// How a buffer holds elements of this format.
    pub fn buffer_format(&self) -> BufferFormat {
        let unsupported = |why: &str| BufferFormat::Unsupported(format!("{}: {why}", self.name));
        match self.pack {
            Some(8) => {
                return BufferFormat::Components {
                    scalar: Scalar::U8,
                    count: 1,
                }
            }
            Some(16) => {
                return BufferFormat::Components {
                    scalar: Scalar::U16,
                    count: 1,
                }
            }
            Some(32) => {
                return BufferFormat::Components {
                    scalar: Scalar::U32,
                    count: 1,
                }
            }
            Some(_) => return unsupported("this packed width is outside tangle's subset"),
            None => {}
        }
        let first = self.channels[0];
        if self
            .channels
            .iter()
            .any(|c| (c.bits, c.numeric) != (first.bits, first.numeric) || c.letter == 'X')
        {
            return unsupported(
                "formats mixing component widths or numeric types (depth/stencil) are outside tangle's subset",
            );
        }
        match first.numeric.scalar(first.bits) {
            Some(scalar) => BufferFormat::Components {
                scalar,
                count: self.channels.len() as u8,
            },
            None => unsupported("this component type is outside tangle's subset"),
        }
    }
}

/// The buffer element type a `FORMAT`/`DATA_TYPE` name gives: `None` when `name` is not a
/// Vulkan format name at all, `Err` (why) for a format tangle does not hold in buffers
/// (compressed, multi-planar, depth/stencil).
pub fn buffer_type(name: &str) -> Option<Result<DataType, String>> {
    let Some(format) = Format::by_name(name) else {
        // Real formats outside [`FORMATS`]: block-compressed and multi-planar (YCbCr) ones,
        // told by their families' names; any other name is no format at all (a typo).
        let bare = name.strip_prefix("VK_FORMAT_").unwrap_or(name);
        let numeric = bare.split('_').any(|p| Numeric::parse(p).is_some());
        let compressed = ["BC", "ETC2_", "EAC_", "ASTC_", "PVRTC"]
            .iter()
            .any(|p| bare.starts_with(p));
        let planar = ["PLANE", "_422_", "_420_", "_444_", "X6", "X4"]
            .iter()
            .any(|p| bare.contains(p))
            || ["G8B8G8R8", "B8G8R8G8", "G16B16G16R16", "B16G16R16G16"]
                .iter()
                .any(|p| bare.starts_with(p));
        return (numeric && (compressed || planar)).then(|| {
            Err(format!(
                "{bare}: compressed and multi-planar formats are outside tangle's subset"
            ))
        });
    };
    match format.buffer_format() {
        BufferFormat::Components { scalar, count } => Ok(DataType {
            rows: count,
            packed: true,
            ..DataType::scalar(scalar)
        }),
        BufferFormat::Unsupported(why) => Err(why),
    }
    .into()
}

/// The uncompressed formats of the Vulkan core specification (`VkFormat` 1..=130 and 4-byte
/// `A4R4G4B4`/`A1B5G5R5`/`A8` formats of later versions), without `VK_FORMAT_`.
pub const FORMATS: &[&str] = &[
    "R4G4_UNORM_PACK8",
    "R4G4B4A4_UNORM_PACK16",
    "B4G4R4A4_UNORM_PACK16",
    "R5G6B5_UNORM_PACK16",
    "B5G6R5_UNORM_PACK16",
    "R5G5B5A1_UNORM_PACK16",
    "B5G5R5A1_UNORM_PACK16",
    "A1R5G5B5_UNORM_PACK16",
    "A4R4G4B4_UNORM_PACK16",
    "A4B4G4R4_UNORM_PACK16",
    "A1B5G5R5_UNORM_PACK16",
    "A8_UNORM",
    "R8_UNORM",
    "R8_SNORM",
    "R8_USCALED",
    "R8_SSCALED",
    "R8_UINT",
    "R8_SINT",
    "R8_SRGB",
    "R8G8_UNORM",
    "R8G8_SNORM",
    "R8G8_USCALED",
    "R8G8_SSCALED",
    "R8G8_UINT",
    "R8G8_SINT",
    "R8G8_SRGB",
    "R8G8B8_UNORM",
    "R8G8B8_SNORM",
    "R8G8B8_USCALED",
    "R8G8B8_SSCALED",
    "R8G8B8_UINT",
    "R8G8B8_SINT",
    "R8G8B8_SRGB",
    "B8G8R8_UNORM",
    "B8G8R8_SNORM",
    "B8G8R8_USCALED",
    "B8G8R8_SSCALED",
    "B8G8R8_UINT",
    "B8G8R8_SINT",
    "B8G8R8_SRGB",
    "R8G8B8A8_UNORM",
    "R8G8B8A8_SNORM",
    "R8G8B8A8_USCALED",
    "R8G8B8A8_SSCALED",
    "R8G8B8A8_UINT",
    "R8G8B8A8_SINT",
    "R8G8B8A8_SRGB",
    "B8G8R8A8_UNORM",
    "B8G8R8A8_SNORM",
    "B8G8R8A8_USCALED",
    "B8G8R8A8_SSCALED",
    "B8G8R8A8_UINT",
    "B8G8R8A8_SINT",
    "B8G8R8A8_SRGB",
    "A8B8G8R8_UNORM_PACK32",
    "A8B8G8R8_SNORM_PACK32",
    "A8B8G8R8_USCALED_PACK32",
    "A8B8G8R8_SSCALED_PACK32",
    "A8B8G8R8_UINT_PACK32",
    "A8B8G8R8_SINT_PACK32",
    "A8B8G8R8_SRGB_PACK32",
    "A2R10G10B10_UNORM_PACK32",
    "A2R10G10B10_SNORM_PACK32",
    "A2R10G10B10_USCALED_PACK32",
    "A2R10G10B10_SSCALED_PACK32",
    "A2R10G10B10_UINT_PACK32",
    "A2R10G10B10_SINT_PACK32",
    "A2B10G10R10_UNORM_PACK32",
    "A2B10G10R10_SNORM_PACK32",
    "A2B10G10R10_USCALED_PACK32",
    "A2B10G10R10_SSCALED_PACK32",
    "A2B10G10R10_UINT_PACK32",
    "A2B10G10R10_SINT_PACK32",
    "R16_UNORM",
    "R16_SNORM",
    "R16_USCALED",
    "R16_SSCALED",
    "R16_UINT",
    "R16_SINT",
    "R16_SFLOAT",
    "R16G16_UNORM",
    "R16G16_SNORM",
    "R16G16_USCALED",
    "R16G16_SSCALED",
    "R16G16_UINT",
    "R16G16_SINT",
    "R16G16_SFLOAT",
    "R16G16B16_UNORM",
    "R16G16B16_SNORM",
    "R16G16B16_USCALED",
    "R16G16B16_SSCALED",
    "R16G16B16_UINT",
    "R16G16B16_SINT",
    "R16G16B16_SFLOAT",
    "R16G16B16A16_UNORM",
    "R16G16B16A16_SNORM",
    "R16G16B16A16_USCALED",
    "R16G16B16A16_SSCALED",
    "R16G16B16A16_UINT",
    "R16G16B16A16_SINT",
    "R16G16B16A16_SFLOAT",
    "R32_UINT",
    "R32_SINT",
    "R32_SFLOAT",
    "R32G32_UINT",
    "R32G32_SINT",
    "R32G32_SFLOAT",
    "R32G32B32_UINT",
    "R32G32B32_SINT",
    "R32G32B32_SFLOAT",
    "R32G32B32A32_UINT",
    "R32G32B32A32_SINT",
    "R32G32B32A32_SFLOAT",
    "R64_UINT",
    "R64_SINT",
    "R64_SFLOAT",
    "R64G64_UINT",
    "R64G64_SINT",
    "R64G64_SFLOAT",
    "R64G64B64_UINT",
    "R64G64B64_SINT",
    "R64G64B64_SFLOAT",
    "R64G64B64A64_UINT",
    "R64G64B64A64_SINT",
    "R64G64B64A64_SFLOAT",
    "B10G11R11_UFLOAT_PACK32",
    "E5B9G9R9_UFLOAT_PACK32",
    "D16_UNORM",
    "X8_D24_UNORM_PACK32",
    "D32_SFLOAT",
    "S8_UINT",
    "D16_UNORM_S8_UINT",
    "D24_UNORM_S8_UINT",
    "D32_SFLOAT_S8_UINT",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_name_parses_and_its_widths_add_up() {
        for name in FORMATS {
            let f = Format::by_name(name).unwrap_or_else(|| panic!("{name}"));
            let bits: u32 = f.channels.iter().map(|c| c.bits).sum();
            if let Some(pack) = f.pack {
                assert_eq!(bits, pack, "{name}");
            }
            // The name spells back from its channels (an independent check of the reader).
            let spelled: String = f
                .channels
                .iter()
                .map(|c| format!("{}{}", c.letter, c.bits))
                .collect();
            let letters: String = name.chars().take_while(|c| *c != '_').collect();
            assert!(spelled.starts_with(&letters), "{name}: {spelled}");
        }
    }

    #[test]
    fn buffer_formats_follow_amber_types() {
        let comps = |name: &str| match Format::by_name(name).unwrap().buffer_format() {
            BufferFormat::Components { scalar, count } => Some((scalar, count)),
            BufferFormat::Unsupported(_) => None,
        };
        assert_eq!(comps("R8G8B8A8_UNORM"), Some((Scalar::U8, 4)));
        assert_eq!(comps("B8G8R8A8_SRGB"), Some((Scalar::U8, 4)));
        assert_eq!(comps("R16G16_SNORM"), Some((Scalar::I16, 2)));
        assert_eq!(comps("R8_SSCALED"), Some((Scalar::I8, 1)));
        assert_eq!(comps("R32G32B32_SFLOAT"), Some((Scalar::F32, 3)));
        assert_eq!(comps("R16_SFLOAT"), Some((Scalar::F16, 1)));
        assert_eq!(comps("R64G64_UINT"), Some((Scalar::U64, 2)));
        assert_eq!(comps("D32_SFLOAT"), Some((Scalar::F32, 1)));
        // Packed: one whole word per element.
        assert_eq!(comps("A2B10G10R10_UNORM_PACK32"), Some((Scalar::U32, 1)));
        assert_eq!(comps("R5G6B5_UNORM_PACK16"), Some((Scalar::U16, 1)));
        assert_eq!(comps("R4G4_UNORM_PACK8"), Some((Scalar::U8, 1)));
        assert_eq!(comps("B10G11R11_UFLOAT_PACK32"), Some((Scalar::U32, 1)));
        for refused in [
            "D32_SFLOAT_S8_UINT",
            "D24_UNORM_S8_UINT",
            "D16_UNORM_S8_UINT",
        ] {
            assert_eq!(comps(refused), None, "{refused}");
        }
        for unknown in ["R32_UNORM", "R8G8B8A8", "R7_UINT", ""] {
            assert_eq!(Format::by_name(unknown), None, "{unknown}");
        }
        assert_eq!(comps("VK_FORMAT_R8_UINT"), Some((Scalar::U8, 1)));
        // Not formats at all, real formats tangle refuses, and the DataType of a good one.
        assert_eq!(buffer_type("uint32"), None);
        assert_eq!(buffer_type("vec2<float>"), None);
        // A typo is no format (exit 2), not a real format outside the subset (77).
        assert_eq!(buffer_type("R9_UINT"), None);
        assert!(matches!(buffer_type("ASTC_4x4_SRGB_BLOCK"), Some(Err(_))));
        assert!(matches!(buffer_type("BC1_RGB_UNORM_BLOCK"), Some(Err(_))));
        assert!(matches!(
            buffer_type("G8_B8R8_2PLANE_420_UNORM"),
            Some(Err(_))
        ));
        assert!(matches!(buffer_type("D24_UNORM_S8_UINT"), Some(Err(_))));
        let t = buffer_type("R32G32B32A32_SFLOAT").unwrap().unwrap();
        assert_eq!((t.scalar, t.rows, t.packed), (Scalar::F32, 4, true));
        let ds = Format::by_name("D32_SFLOAT_S8_UINT").unwrap();
        assert_eq!(ds.channels[0].numeric, Numeric::Sfloat);
        assert_eq!(ds.channels[1].numeric, Numeric::Uint);
    }
}
