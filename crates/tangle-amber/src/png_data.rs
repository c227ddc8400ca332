//! PNG buffer data (`BUFFER ... FILE [PNG] path`): a PNG file decoded to 8-bit RGBA pixels, as
//! upstream Amber's delegate decodes it (`lodepng::decode(..., LCT_RGBA, 8)` in its
//! `samples/png.cc`), whatever the buffer's declared type: the parser then takes those bytes as
//! the buffer's bytes (`ParseBufferInitializerFile`: "data->push_back(v.AsUint8())", element count
//! = bytes / format size), so `R8G8B8A8_UNORM` sees the pixels as they are and
//! `B8G8R8A8_UNORM` sees red and blue swapped, exactly as upstream does.
//!
//! Every PNG colour type and bit depth is converted as lodepng converts it to RGBA8: grey is
//! copied to red, green and blue; depths below 8 are scaled to 0..255; 16-bit samples keep their
//! high byte; palettes are looked up; a `tRNS` chunk gives alpha (its colour key becomes alpha 0);
//! without alpha, alpha is 255. Gamma and colour-profile chunks are ignored, as lodepng ignores
//! them by default. Memory is bounded: the image's size is checked against `max_bytes` from its
//! header, before any pixel is allocated.

use std::io::Cursor;

/// A decoded PNG: `width × height` pixels of 4 bytes (R, G, B, A), rows top to bottom.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pixels {
    /// Pixels per row.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// `width * height * 4` bytes.
    pub rgba: Vec<u8>,
}

/// Decodes `file` to RGBA8 pixels, refusing an image whose pixels would take more than
/// `max_bytes` (checked from its header, before decoding). Errors are tangle's own words.
pub fn decode_rgba8(file: &[u8], max_bytes: u64) -> Result<Pixels, String> {
    let mut decoder = png::Decoder::new(Cursor::new(file));
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let header = decoder
        .read_header_info()
        .map_err(|e| format!("not a PNG file: {e}"))?;
    let (width, height) = (header.width, header.height);
    let size = u64::from(width)
        .checked_mul(u64::from(height))
        .and_then(|p| p.checked_mul(4))
        .filter(|b| *b <= max_bytes)
        .ok_or_else(|| {
            format!(
                "the PNG image ({width}x{height} pixels, 4 bytes each) does not fit in the buffer limit ({max_bytes} bytes left)"
            )
        })?;
    let mut reader = decoder
        .read_info()
        .map_err(|e| format!("bad PNG file: {e}"))?;
    let (color, depth) = reader.output_color_type();
    let channels = match color {
        png::ColorType::Grayscale => 1,
        png::ColorType::GrayscaleAlpha => 2,
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        png::ColorType::Indexed => return Err("PNG palette was not expanded".to_string()),
    };
    if depth != png::BitDepth::Eight {
        return Err(format!("PNG decoded to {depth:?} bits, not 8"));
    }
    // `size` fits in usize: it is at most `max_bytes`, which the caller got from memory it may use.
    let pixels = usize::try_from(size / 4).map_err(|_| "the PNG image is too large".to_string())?;
    let mut raw = vec![0u8; pixels * channels];
    reader
        .next_frame(&mut raw)
        .map_err(|e| format!("bad PNG file: {e}"))?;
    // A file cut short after its pixels (no IEND) is refused too, as lodepng refuses it.
    reader.finish().map_err(|e| format!("bad PNG file: {e}"))?;
    let mut rgba = Vec::with_capacity(pixels * 4);
    for p in raw.chunks_exact(channels) {
        let px = match *p {
            [g] => [g, g, g, 255],
            [g, a] => [g, g, g, a],
            [r, g, b] => [r, g, b, 255],
            [r, g, b, a] => [r, g, b, a],
            _ => [0; 4],
        };
        rgba.extend_from_slice(&px);
    }
    Ok(Pixels {
        width,
        height,
        rgba,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Encodes `samples` (one per channel, at `bits`, packed as PNG packs them) as a PNG.
    fn encode(
        w: u32,
        h: u32,
        color: png::ColorType,
        bits: png::BitDepth,
        data: &[u8],
        palette: Option<(&[u8], &[u8])>,
    ) -> Vec<u8> {
        let mut out = Vec::new();
        {
            let mut e = png::Encoder::new(&mut out, w, h);
            e.set_color(color);
            e.set_depth(bits);
            if let Some((plte, trns)) = palette {
                e.set_palette(plte.to_vec());
                e.set_trns(trns.to_vec());
            }
            let mut writer = e.write_header().expect("header");
            writer.write_image_data(data).expect("data");
        }
        out
    }

    /// The plain reference: sample `i` of a row packed at `bits` bits, scaled to 8 bits as
    /// lodepng does (low depths multiplied up to 0..255, 16 bits keep the high byte).
    fn sample(row: &[u8], i: usize, bits: usize) -> u8 {
        match bits {
            16 => row[i * 2],
            8 => row[i],
            b => {
                let bit = i * b;
                let v = (row[bit / 8] >> (8 - b - bit % 8)) & ((1 << b) - 1);
                (u32::from(v) * 255 / ((1 << b) - 1)) as u8
            }
        }
    }

    /// CRC-32 as PNG chunks use it (ISO 3309), bit by bit.
    fn crc32(bytes: &[u8]) -> u32 {
        let mut crc = !0u32;
        for &b in bytes {
            crc ^= u32::from(b);
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0xedb8_8320
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }

    #[test]
    fn every_colour_type_and_depth_decodes_to_rgba8_as_lodepng_does() {
        use png::{BitDepth as D, ColorType as C};
        let mut rng = rand::rngs::StdRng::seed_from_u64(16);
        let cases = [
            (C::Grayscale, D::One, 1),
            (C::Grayscale, D::Two, 1),
            (C::Grayscale, D::Four, 1),
            (C::Grayscale, D::Eight, 1),
            (C::Grayscale, D::Sixteen, 1),
            (C::GrayscaleAlpha, D::Eight, 2),
            (C::GrayscaleAlpha, D::Sixteen, 2),
            (C::Rgb, D::Eight, 3),
            (C::Rgb, D::Sixteen, 3),
            (C::Rgba, D::Eight, 4),
            (C::Rgba, D::Sixteen, 4),
        ];
        for (color, depth, channels) in cases {
            let bits = depth as usize;
            let (w, h) = (rng.random_range(1..9u32), rng.random_range(1..6u32));
            let row_bytes = (w as usize * channels * bits).div_ceil(8);
            let data: Vec<u8> = (0..row_bytes * h as usize).map(|_| rng.random()).collect();
            let file = encode(w, h, color, depth, &data, None);
            let got = decode_rgba8(&file, 1 << 20).expect("decodes");
            assert_eq!((got.width, got.height), (w, h));
            let mut want = Vec::new();
            for row in data.chunks(row_bytes) {
                for x in 0..w as usize {
                    let s: Vec<u8> = (0..channels)
                        .map(|c| sample(row, x * channels + c, bits))
                        .collect();
                    want.extend_from_slice(&match channels {
                        1 => [s[0], s[0], s[0], 255],
                        2 => [s[0], s[0], s[0], s[1]],
                        3 => [s[0], s[1], s[2], 255],
                        _ => [s[0], s[1], s[2], s[3]],
                    });
                }
            }
            assert_eq!(got.rgba, want, "{color:?} {depth:?} {w}x{h}");
        }
    }

    #[test]
    fn palettes_are_looked_up_with_their_transparency() {
        let plte = [10, 20, 30, 40, 50, 60, 70, 80, 90];
        let trns = [0, 128]; // the third entry has no tRNS entry: alpha 255
        let file = encode(
            3,
            1,
            png::ColorType::Indexed,
            png::BitDepth::Eight,
            &[2, 0, 1],
            Some((&plte, &trns)),
        );
        let got = decode_rgba8(&file, 1 << 10).expect("decodes");
        assert_eq!(got.rgba, [70, 80, 90, 255, 10, 20, 30, 0, 40, 50, 60, 128]);
    }

    #[test]
    fn bad_and_oversized_files_are_errors_not_panics() {
        assert!(decode_rgba8(b"", 1 << 20).is_err());
        assert!(decode_rgba8(b"not a png at all", 1 << 20).is_err());
        let file = encode(
            4,
            4,
            png::ColorType::Rgba,
            png::BitDepth::Eight,
            &[7; 64],
            None,
        );
        // 4x4 RGBA8 is 64 bytes: one byte less is refused from the header.
        let err = decode_rgba8(&file, 63).expect_err("too large");
        assert!(err.contains("4x4"), "{err}");
        assert!(decode_rgba8(&file, 64).is_ok());
        // Every truncation of a good file is an error, never a panic.
        for n in 0..file.len() {
            assert!(decode_rgba8(&file[..n], 1 << 20).is_err(), "{n} bytes");
        }
        // A header claiming 65535 x 65535 pixels (with a correct CRC) is refused from the header.
        let mut huge = file.clone();
        huge[16..20].copy_from_slice(&0xffffu32.to_be_bytes());
        huge[20..24].copy_from_slice(&0xffffu32.to_be_bytes());
        let crc = crc32(&huge[12..29]);
        huge[29..33].copy_from_slice(&crc.to_be_bytes());
        let err = decode_rgba8(&huge, 1 << 30).expect_err("too large");
        assert!(err.contains("65535x65535"), "{err}");
    }
}
