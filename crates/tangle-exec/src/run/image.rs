//! Executing image instructions over a tangle's lanes: texel reads and fetches, writes, texel
//! pointers for image atomics, and size queries, with the format conversions of
//! [`crate::semantics::texel`].
//!
//! An image handle is a pointer to the image's texels, which live in a buffer region of the
//! dispatch; [`ImageView`] says which regions are images and how their texels are laid out.
//! Coordinates outside an image, as the Vulkan spec sorts them ("Integer Texel Coordinate
//! Validation", "Texel Replacement", "Texel Output Validation Operations"): a read or fetch
//! reads an *invalid texel*, and "The value returned by a read of an invalid texel is
//! undefined" — an undefined value, a warning ([`ImageFinding::InvalidTexel`], `image-value`;
//! tangle reads 0); a write: "If the texel fails integer texel coordinate validation, then the
//! write has no effect" — defined, no finding; an atomic (whose write no sentence defines) and
//! a level of detail other than 0 stay `out-of-bounds` errors, and so do a texel buffer's
//! accesses outside it, which the buffer rules cover ("If robustBufferAccess is not enabled,
//! applications must not perform out of bounds accesses").
//! With `robustImageAccess2` (VK_EXT_robustness2, [`Mem::image_robust`]) they are defined and
//! no finding: Vulkan "Texel Replacement": "If the robustImageAccess2 feature is enabled, zero
//! values must be returned", then "Conversion to RGBA" fills the components the format lacks
//! with (0, 0, 1) (`robustImageAccess2`: "with (0,0,1) values inserted for missing G, B, or A
//! components based on the format"), which is the decoding of a texel of zero bits; writes:
//! "If the texel fails integer texel coordinate validation, then the write has no effect";
//! atomics "return zero values" ([`Mem::out_of_range`]). A level of detail other than 0 is
//! not a coordinate outside the image and stays a finding.

use super::access::{LaneFinding, Mem};
use super::alu::{bits_of, rd, wr};
use super::memory::{self as m, View};
use crate::program::Slot;
use crate::report::Finding;
use crate::semantics::sampler::{self, Filter};
use crate::semantics::texel::{self, Components, TexelFormat};
use crate::semantics::{float, mask, sign_extend};
use std::fmt;

/// The component kind of a texel as the shader sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A float of this width.
    Float(u32),
    /// An integer.
    Int { bits: u32, signed: bool },
}

impl Kind {
    /// The component width.
    pub fn bits(self) -> u32 {
        match self {
            Kind::Float(b) | Kind::Int { bits: b, .. } => b,
        }
    }
}

/// One lowered image instruction. Coordinates are `coords` integer components of
/// `coord_bits` bits from slot `coord`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImageInst {
    /// `OpImageRead` / `OpImageFetch` (with its `Lod` image operand, which must be 0: tangle's
    /// images have one level).
    Read {
        dst: Slot,
        count: u32,
        kind: Kind,
        image: Slot,
        coord: Slot,
        coords: u32,
        coord_bits: u32,
        coord_signed: bool,
        lod: Option<Slot>,
        /// Whether the image is a texel buffer (`Dim` Buffer): outside it, the buffer rules.
        texel_buffer: bool,
        /// Whether a load through a null descriptor may read an alpha of 1 (a storage image or
        /// texel buffer with an explicit format without alpha): the implementation's choice.
        null_alpha_one: bool,
    },
    /// `OpImageWrite`.
    Write {
        texel: Slot,
        count: u32,
        kind: Kind,
        image: Slot,
        coord: Slot,
        coords: u32,
        coord_bits: u32,
        coord_signed: bool,
        /// Whether the image is a texel buffer (`Dim` Buffer): outside it, the buffer rules.
        texel_buffer: bool,
    },
    /// `OpImageTexelPointer`: a pointer to the texel, for atomics on its `bytes`-wide scalar.
    TexelPointer {
        dst: Slot,
        bytes: u32,
        image: Slot,
        coord: Slot,
        coords: u32,
        coord_bits: u32,
        coord_signed: bool,
    },
    /// `OpImageSampleExplicitLod` (with `lod`: its slot and float width) or `OpImageGather`
    /// (with `component`): float coordinates through the sampler in the handle.
    Sample {
        dst: Slot,
        count: u32,
        kind: Kind,
        image: Slot,
        coord: Slot,
        coords: u32,
        coord_bits: u32,
        lod: Option<(Slot, u32)>,
        component: Option<Slot>,
    },
    /// `OpSampledImage`: the image's handle with the sampler's handle in its offset bits (an
    /// image from an unbound array element stays as it is, naming that element).
    Combine {
        dst: Slot,
        image: Slot,
        sampler: Slot,
    },
    /// `OpImageQuerySize` / `OpImageQuerySizeLod`.
    QuerySize {
        dst: Slot,
        count: u32,
        bits: u32,
        image: Slot,
        lod: Option<Slot>,
    },
}

/// What a dispatch knows of an image region.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageView {
    /// `DescriptorSet`.
    pub set: u32,
    /// `Binding`.
    pub binding: u32,
    /// The array element (0 for a plain image).
    pub element: u32,
    /// The bound format.
    pub format: &'static TexelFormat,
    /// Width, height, depth.
    pub extent: [u32; 3],
    /// Whether it is a null descriptor (`crate::Resources::null_images`): no texels, an
    /// extent of 0, a format never decoded ([`crate::check::null`]).
    pub null: bool,
}

/// An image instruction's undefined case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImageFinding {
    /// Coordinates (or a level of detail) outside the image: Vulkan "Texel Coordinate
    /// Validation" makes the texel out of bounds, undefined without robust image access.
    OutOfBounds {
        set: u32,
        binding: u32,
        coord: Vec<i64>,
        lod: u64,
        extent: [u32; 3],
    },
    /// An image read or fetch (not a texel buffer's) at level 0 with coordinates outside the
    /// image, without `robustImageAccess2`: Vulkan "Integer Texel Coordinate Validation" makes
    /// the texel an invalid texel, and "Texel Replacement": "The value returned by a read of an
    /// invalid texel is undefined" (a value, not undefined behaviour: a warning). tangle reads
    /// zero.
    InvalidTexel {
        set: u32,
        binding: u32,
        coord: Vec<i64>,
        extent: [u32; 3],
    },
    /// An integer written to a component too narrow for it: "The converted value of any
    /// integer that cannot be represented in the target format is undefined."
    NotRepresentable {
        set: u32,
        binding: u32,
        format: &'static str,
    },
    /// `OpImageTexelPointer` into an image whose texels are not one scalar of the pointer's
    /// width: Vulkan allows image atomics only on R32 and R64 formats
    /// (`VK_FORMAT_FEATURE_STORAGE_IMAGE_ATOMIC_BIT`), and anything else would touch the bytes
    /// of neighbouring texels.
    AtomicFormat {
        set: u32,
        binding: u32,
        format: &'static str,
    },
    /// Sampling through an element of an array of combined image samplers whose image is
    /// bound but not its sampler: Vulkan "Descriptor Set Binding" requires the descriptors a
    /// shader uses to be valid, and tangle reads nothing (0) rather than another sampler.
    NoSampler {
        set: u32,
        binding: u32,
        element: u32,
    },
    /// Linear filtering of an integer format, which has no
    /// `VK_FORMAT_FEATURE_SAMPLED_IMAGE_FILTER_LINEAR_BIT`: the result is undefined.
    LinearFilterOfIntegers {
        set: u32,
        binding: u32,
        format: &'static str,
    },
}

impl ImageFinding {
    /// Whether this is a memory error (reported even with the checks off).
    pub fn is_memory_error(&self) -> bool {
        matches!(
            self,
            ImageFinding::OutOfBounds { .. }
                | ImageFinding::AtomicFormat { .. }
                | ImageFinding::NoSampler { .. }
        )
    }
}

impl fmt::Display for ImageFinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ImageFinding::OutOfBounds {
                set,
                binding,
                coord,
                lod,
                extent,
            } => {
                let [w, h, d] = extent;
                write!(
                    f,
                    "out-of-bounds image access at {coord:?}, level {lod}, of the image at set {set}, binding {binding} ({w}x{h}x{d}, 1 level)"
                )
            }
            ImageFinding::InvalidTexel {
                set,
                binding,
                coord,
                extent,
            } => {
                let [w, h, d] = extent;
                write!(
                    f,
                    "image read at {coord:?}, outside the image at set {set}, binding {binding} ({w}x{h}x{d}): the value of an invalid texel is undefined (tangle reads zero)"
                )
            }
            ImageFinding::AtomicFormat {
                set,
                binding,
                format,
            } => write!(
                f,
                "an image atomic on the {format} image at set {set}, binding {binding}: atomics need a one-component 32- or 64-bit format of the pointer's width"
            ),
            ImageFinding::NoSampler {
                set,
                binding,
                element,
            } => write!(
                f,
                "sampling the image at set {set}, binding {binding} (element {element}) with no sampler: an element of an array of combined image samplers with no sampler bound"
            ),
            ImageFinding::LinearFilterOfIntegers {
                set,
                binding,
                format,
            } => write!(
                f,
                "linear filtering of the {format} image at set {set}, binding {binding}: integer formats cannot be filtered (the result is undefined)"
            ),
            ImageFinding::NotRepresentable {
                set,
                binding,
                format,
            } => write!(
                f,
                "an image write to the {format} image at set {set}, binding {binding} has a component the format cannot represent (its value is undefined)"
            ),
        }
    }
}

/// The image a handle points to.
fn image_of<'a>(mem: &Mem<'a>, handle: u64) -> Option<(&'a View, ImageView, u64)> {
    let (region, _) = m::split_pointer(handle);
    let i = usize::try_from(region.checked_sub(m::FIRST_BUFFER)?).ok()?;
    let view = (*mem.images.get(i)?)?;
    Some((&mem.buffers.get(i)?.0, view, region))
}

/// An access through the null image descriptor `view` ([`ImageView::null`]): defined with
/// `nullDescriptor` (`None`: the caller reads zero or changes nothing), else the finding.
fn null_access(mem: &Mem<'_>, view: &ImageView) -> Option<Finding> {
    let element = (view.element > 0).then_some(view.element);
    crate::check::null::access(mem.null_descriptor, (view.set, view.binding, element)).err()
}

/// The `robust-access` warning of a load through the null image descriptor `view` whose alpha
/// is the implementation's choice (`null_alpha_one` of [`ImageInst::Read`]): 1 (`one`, the
/// policy's `robust-in-range`) or 0. [`crate::run::sanitize`] follows it to where the alpha
/// reaches the output.
fn null_alpha_warning(view: &ImageView, one: bool) -> Finding {
    let region = match view.element {
        0 => format!("image (set {}, binding {})", view.set, view.binding),
        e => format!(
            "image (set {}, binding {}, array element {e})",
            view.set, view.binding
        ),
    };
    Finding::RobustAccess {
        region,
        offset: 0,
        len: 0,
        size: 0,
        what: format!(
            "a load through a null descriptor returned an alpha of {} (an implementation's choice; Texel Replacement: \"for storage images and storage texel buffers using an explicit SPIR-V Image Format, loads from a null descriptor may return an alpha value of 1 ... if the format does not include alpha\")",
            u8::from(one)
        ),
    }
}

/// The byte offset of the texel at the lane's coordinates, or the finding.
#[allow(clippy::too_many_arguments)]
fn texel_offset(
    regs: &[u64],
    n: usize,
    l: usize,
    view: &ImageView,
    coord: Slot,
    coords: u32,
    bits: u32,
    signed: bool,
    lod: u64,
) -> Result<u64, Finding> {
    let mut c = [0i64; 3];
    for (k, ck) in c.iter_mut().enumerate().take(coords as usize) {
        let v = rd(regs, n, coord + k as u32, l) & mask(bits);
        *ck = if signed {
            sign_extend(bits, v)
        } else {
            v as i64
        };
    }
    let inside = c
        .iter()
        .zip(view.extent)
        .all(|(&x, e)| x >= 0 && x < i64::from(e));
    if !inside || lod != 0 {
        return Err(Finding::Image(ImageFinding::OutOfBounds {
            set: view.set,
            binding: view.binding,
            coord: c[..coords as usize].to_vec(),
            lod,
            extent: view.extent,
        }));
    }
    let [w, h, _] = view.extent.map(u64::from);
    let [x, y, z] = c.map(|v| v as u64);
    Ok((x + w * (y + h * z)) * u64::from(view.format.bytes()))
}

/// Reads a texel's bytes as a little-endian integer.
fn read_raw(words: &View, off: u64, bytes: u32) -> u128 {
    let mut raw = 0u128;
    let mut done = 0u32;
    while done < bytes {
        let len = (bytes - done).min(8);
        raw |= u128::from(words.read(off + u64::from(done), len)) << (8 * done);
        done += len;
    }
    raw
}

/// Writes a texel's bytes.
fn write_raw(words: &View, off: u64, bytes: u32, raw: u128) {
    let mut done = 0u32;
    while done < bytes {
        let len = (bytes - done).min(8);
        words.write(off + u64::from(done), len, (raw >> (8 * done)) as u64);
        done += len;
    }
}

/// Executes an image op for the lanes in `mask`; `false` for other ops.
pub fn exec_image(
    op: &crate::program::Op,
    regs: &mut [u64],
    n: usize,
    lanes: u128,
    mem: &Mem<'_>,
    found: &mut Vec<LaneFinding>,
) -> bool {
    let crate::program::Op::Image(inst) = op else {
        return false;
    };
    for l in bits_of(lanes, n) {
        match &**inst {
            ImageInst::Read {
                dst,
                count,
                kind,
                image,
                coord,
                coords,
                coord_bits,
                coord_signed,
                lod,
                texel_buffer,
                null_alpha_one,
            } => {
                let lod = lod.map_or(0, |s| rd(regs, n, s, l));
                let comps = match image_of(mem, rd(regs, n, *image, l)) {
                    // "Loads from a null descriptor return a four component color value of
                    // all zeros", or with an alpha of 1 where the format allows it.
                    Some((_, view, _)) if view.null => match null_access(mem, &view) {
                        Some(f) => {
                            found.push((l, f));
                            None
                        }
                        None if *null_alpha_one && *count == 4 => {
                            let one = mem.robust.1 == crate::check::robust::RobustChoice::InRange;
                            found.push((l, null_alpha_warning(&view, one)));
                            let alpha = match (one, kind) {
                                (false, _) => 0,
                                (true, Kind::Float(_)) => 1f64.to_bits(),
                                (true, Kind::Int { .. }) => 1,
                            };
                            Some([0, 0, 0, alpha])
                        }
                        None => None,
                    },
                    Some((words, view, _)) => {
                        let at = texel_offset(
                            regs,
                            n,
                            l,
                            &view,
                            *coord,
                            *coords,
                            *coord_bits,
                            *coord_signed,
                            lod,
                        );
                        match at {
                            Ok(off) => {
                                let raw = read_raw(words, off, view.format.bytes());
                                Some(texel::decode(view.format, raw))
                            }
                            Err(_) if mem.image_robust && lod == 0 => {
                                Some(texel::decode(view.format, 0))
                            }
                            // An invalid texel of an image: an undefined value, not undefined
                            // behaviour (a texel buffer's stays an out-of-bounds access).
                            Err(Finding::Image(ImageFinding::OutOfBounds { coord, .. }))
                                if lod == 0 && !texel_buffer =>
                            {
                                found.push((
                                    l,
                                    Finding::Image(ImageFinding::InvalidTexel {
                                        set: view.set,
                                        binding: view.binding,
                                        coord,
                                        extent: view.extent,
                                    }),
                                ));
                                None
                            }
                            Err(f) => {
                                found.push((l, f));
                                None
                            }
                        }
                    }
                    None => {
                        found.push((l, mem.no_memory(rd(regs, n, *image, l))));
                        None
                    }
                };
                for k in 0..*count {
                    let v = comps.map_or(0, |c| to_shader(*kind, c[k as usize % 4]));
                    wr(regs, n, dst + k, l, v);
                }
            }
            ImageInst::Write {
                texel,
                count,
                kind,
                image,
                coord,
                coords,
                coord_bits,
                coord_signed,
                texel_buffer,
            } => {
                let Some((words, view, _)) = image_of(mem, rd(regs, n, *image, l)) else {
                    found.push((l, mem.no_memory(rd(regs, n, *image, l))));
                    continue;
                };
                if view.null {
                    // "stores ... to a null descriptor are discarded".
                    found.extend(null_access(mem, &view).map(|f| (l, f)));
                    continue;
                }
                let at = texel_offset(
                    regs,
                    n,
                    l,
                    &view,
                    *coord,
                    *coords,
                    *coord_bits,
                    *coord_signed,
                    0,
                );
                let off = match at {
                    Ok(off) => off,
                    // "If the texel fails integer texel coordinate validation, then the write
                    // has no effect", with or without robustImageAccess2 (a texel buffer's
                    // write outside stays an out-of-bounds access).
                    Err(_) if mem.image_robust || !*texel_buffer => continue,
                    Err(f) => {
                        found.push((l, f));
                        continue;
                    }
                };
                let mut comps: Components = [0; 4];
                for (k, c) in comps.iter_mut().enumerate().take(*count as usize) {
                    *c = from_shader(*kind, rd(regs, n, texel + k as u32, l));
                }
                if texel::encode_is_undefined(view.format, &comps) {
                    found.push((
                        l,
                        Finding::Image(ImageFinding::NotRepresentable {
                            set: view.set,
                            binding: view.binding,
                            format: view.format.name,
                        }),
                    ));
                }
                let raw = texel::encode(view.format, &comps);
                write_raw(words, off, view.format.bytes(), raw);
            }
            ImageInst::TexelPointer {
                dst,
                bytes,
                image,
                coord,
                coords,
                coord_bits,
                coord_signed,
            } => {
                let handle = rd(regs, n, *image, l);
                let p = match image_of(mem, handle) {
                    // No texels: the atomic through it is a null descriptor's
                    // ([`Mem::out_of_range`]: discarded, returning zero).
                    Some((_, view, region)) if view.null => m::make_pointer(region, 0),
                    Some((words, view, region))
                        if view.format.layout.len() != 1 || view.format.bytes() != *bytes =>
                    {
                        found.push((
                            l,
                            Finding::Image(ImageFinding::AtomicFormat {
                                set: view.set,
                                binding: view.binding,
                                format: view.format.name,
                            }),
                        ));
                        // Past the texels: the atomic through it is dropped (and reported out of
                        // bounds as well).
                        m::make_pointer(region, words.len().saturating_add(u64::from(*bytes)))
                    }
                    Some((words, view, region)) => {
                        let at = texel_offset(
                            regs,
                            n,
                            l,
                            &view,
                            *coord,
                            *coords,
                            *coord_bits,
                            *coord_signed,
                            0,
                        );
                        // Outside the image: a pointer just past its texels, so the atomic
                        // through it is the out-of-bounds finding.
                        m::make_pointer(region, at.unwrap_or(words.len()))
                    }
                    None => handle,
                };
                wr(regs, n, *dst, l, p);
            }
            ImageInst::Sample {
                dst,
                count,
                kind,
                image,
                coord,
                coords,
                coord_bits,
                lod,
                component,
            } => {
                let result = sample(
                    regs,
                    n,
                    l,
                    mem,
                    rd(regs, n, *image, l),
                    (*coord, *coords, *coord_bits),
                    *lod,
                    component.map(|c| rd(regs, n, c, l)),
                );
                let comps = match result {
                    Ok(c) => Some(c),
                    Err(f) => {
                        found.push((l, f));
                        None
                    }
                };
                for k in 0..*count {
                    let v = comps.map_or(0, |c| to_shader(*kind, c[k as usize % 4]));
                    wr(regs, n, dst + k, l, v);
                }
            }
            ImageInst::Combine {
                dst,
                image,
                sampler,
            } => {
                let (handle, sampler) = (rd(regs, n, *image, l), rd(regs, n, *sampler, l));
                // A sampled image's image (`OpImage`) still carries its own sampler: replaced.
                let combined = match m::unbound_of(handle) {
                    Some(_) => handle,
                    None => m::make_pointer(m::split_pointer(handle).0, sampler),
                };
                wr(regs, n, *dst, l, combined);
            }
            ImageInst::QuerySize {
                dst,
                count,
                bits,
                image,
                lod,
            } => {
                let lod = lod.map_or(0, |s| rd(regs, n, s, l));
                let extent = match image_of(mem, rd(regs, n, *image, l)) {
                    // Bound to nothing: a size of 0 in every dimension.
                    Some((_, view, _)) if view.null => {
                        found.extend(null_access(mem, &view).map(|f| (l, f)));
                        for k in 0..*count {
                            wr(regs, n, dst + k, l, 0);
                        }
                        continue;
                    }
                    Some((_, view, _)) => {
                        if lod != 0 {
                            // "Level of Detail ... must be ... less than the number of levels".
                            found.push((
                                l,
                                Finding::Image(ImageFinding::OutOfBounds {
                                    set: view.set,
                                    binding: view.binding,
                                    coord: Vec::new(),
                                    lod,
                                    extent: view.extent,
                                }),
                            ));
                        }
                        view.extent
                    }
                    None => {
                        found.push((l, mem.no_memory(rd(regs, n, *image, l))));
                        [0; 3]
                    }
                };
                for k in 0..*count {
                    let e = extent.get(k as usize).copied().unwrap_or(0);
                    let e = u64::from(e).checked_shr(lod as u32).unwrap_or(0).max(1);
                    wr(regs, n, dst + k, l, e & mask(*bits));
                }
            }
        }
    }
    true
}

/// One sample or gather: the texels of the footprint ([`sampler::footprint`]), filtered with
/// their weights (float formats, in f64), or the gathered `component` of the four texels of the
/// 2x2 footprint in the order "(i0, j1), (i1, j1), (i1, j0), (i0, j0)".
#[allow(clippy::too_many_arguments)]
fn sample(
    regs: &[u64],
    n: usize,
    l: usize,
    mem: &Mem<'_>,
    handle: u64,
    (coord, coords, coord_bits): (Slot, u32, u32),
    lod: Option<(Slot, u32)>,
    component: Option<u64>,
) -> Result<Components, Finding> {
    let (words, view, _) = image_of(mem, handle).ok_or_else(|| mem.no_memory(handle))?;
    if view.null {
        // "Loads from a null descriptor return a four component color value of all zeros".
        return match null_access(mem, &view) {
            Some(f) => Err(f),
            None => Ok([0; 4]),
        };
    }
    let (_, sampler_index) = m::split_pointer(handle);
    if let Some((array, index)) = m::unbound_sampler_of(sampler_index) {
        // A sampler from an element of an array of samplers that has nothing bound.
        return Err(mem.unbound(array, index, handle));
    }
    let s = match sampler_index.checked_sub(1) {
        Some(i) => usize::try_from(i)
            .ok()
            .and_then(|i| mem.samplers.get(i))
            .ok_or(Finding::BadPointer { address: handle })?,
        // An element of an array of combined image samplers whose image is bound but not its
        // sampler.
        None => {
            return Err(Finding::Image(ImageFinding::NoSampler {
                set: view.set,
                binding: view.binding,
                element: view.element,
            }))
        }
    };
    let c: Vec<f64> = (0..coords)
        .map(|k| float::to_f64(coord_bits, rd(regs, n, coord + k, l)))
        .collect();
    let filter = match (component, lod) {
        (Some(_), _) => Filter::Linear,
        (None, Some((slot, bits))) => {
            sampler::filter_for(s, float::to_f64(bits, rd(regs, n, slot, l)))
        }
        (None, None) => sampler::filter_for(s, 0.0),
    };
    let float_format = view.format.numeric.is_float();
    if filter == Filter::Linear && !float_format && component.is_none() {
        return Err(Finding::Image(ImageFinding::LinearFilterOfIntegers {
            set: view.set,
            binding: view.binding,
            format: view.format.name,
        }));
    }
    let taps = sampler::footprint(s, filter, &c, view.extent);
    let [w, h, _] = view.extent.map(u64::from);
    let texel = |at: Option<[i64; 3]>| -> Components {
        match at {
            Some([x, y, z]) => {
                let i = (x as u64) + w * ((y as u64) + h * (z as u64));
                let bytes = view.format.bytes();
                texel::decode(view.format, read_raw(words, i * u64::from(bytes), bytes))
            }
            None => s
                .border
                .rgba()
                .map(|v| if float_format { v.to_bits() } else { v as u64 }),
        }
    };
    if let Some(comp) = component {
        let comp = (comp as usize).min(3);
        let mut out = [0u64; 4];
        for (k, &t) in [1usize, 3, 2, 0].iter().enumerate() {
            let at = taps.get(t).and_then(|t| t.0);
            out[k] = texel(at)[comp];
        }
        return Ok(out);
    }
    if !float_format {
        return Ok(texel(taps.first().and_then(|t| t.0)));
    }
    let mut sum = [0f64; 4];
    for (at, weight) in &taps {
        let t = texel(*at);
        for (acc, c) in sum.iter_mut().zip(t) {
            *acc += weight * f64::from_bits(c);
        }
    }
    Ok(sum.map(f64::to_bits))
}

/// A decoded component (f64 bits or a 64-bit integer) as a shader value of `kind`.
fn to_shader(kind: Kind, c: u64) -> u64 {
    match kind {
        Kind::Float(bits) => float::from_f64(bits, f64::from_bits(c)),
        Kind::Int { bits, .. } => c & mask(bits),
    }
}

/// A shader value of `kind` as a component for [`texel::encode`].
fn from_shader(kind: Kind, v: u64) -> u64 {
    match kind {
        Kind::Float(bits) => float::to_f64(bits, v).to_bits(),
        Kind::Int { bits, signed: true } => sign_extend(bits, v & mask(bits)) as u64,
        Kind::Int { bits, .. } => v & mask(bits),
    }
}
