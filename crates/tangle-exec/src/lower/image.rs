//! Lowering of image variables and image instructions (SPIR-V "Image Instructions") for
//! storage images, sampled images read by `OpImageFetch`, and texel buffers: `OpImageRead`,
//! `OpImageWrite`, `OpImageFetch`, `OpImageTexelPointer`, `OpImageQuerySize(Lod)`,
//! `OpImageQueryLevels`, `OpImageQuerySamples`, and `OpImage` of a `samplerBuffer` (a uniform
//! texel buffer declared as a sampled image).
//!
//! Supported images: Dim 1D, 2D, 3D and Buffer, not arrayed, single-sampled, alone or in
//! descriptor arrays, sized or runtime-sized (as are samplers and combined image samplers). Others (arrayed and cube
//! images, which no upstream Amber script can bind) are refused when used, naming what is
//! missing.

use super::{Lowerer, Out};
use crate::error::ExecError;
use crate::program::{DescriptorArray, DescriptorKind, ImageBinding, Op, RegionKind, Type};
use crate::run::image::{ImageInst, Kind};
use crate::semantics::texel::TexelFormat;
use spirv::Op as SpvOp;
use tangle_spirv::module::Instruction;

/// SPIR-V `Dim` values tangle runs.
const DIM_1D: u64 = 0;
const DIM_2D: u64 = 1;
const DIM_3D: u64 = 2;
const DIM_CUBE: u64 = 3;
const DIM_BUFFER: u64 = 5;

/// `Image Operands` bits.
const LOD: u64 = 0x2;
const SIGN_EXTEND: u64 = 0x1000;
const ZERO_EXTEND: u64 = 0x2000;

/// Whether `op` is an image instruction this file lowers.
pub fn is_image(op: SpvOp) -> bool {
    matches!(
        op,
        SpvOp::Image
            | SpvOp::SampledImage
            | SpvOp::ImageSampleExplicitLod
            | SpvOp::ImageSampleImplicitLod
            | SpvOp::ImageSampleDrefImplicitLod
            | SpvOp::ImageSampleDrefExplicitLod
            | SpvOp::ImageSampleProjImplicitLod
            | SpvOp::ImageSampleProjExplicitLod
            | SpvOp::ImageSampleProjDrefImplicitLod
            | SpvOp::ImageSampleProjDrefExplicitLod
            | SpvOp::ImageGather
            | SpvOp::ImageDrefGather
            | SpvOp::ImageQueryLod
            | SpvOp::ImageRead
            | SpvOp::ImageWrite
            | SpvOp::ImageFetch
            | SpvOp::ImageTexelPointer
            | SpvOp::ImageQuerySize
            | SpvOp::ImageQuerySizeLod
            | SpvOp::ImageQueryLevels
            | SpvOp::ImageQuerySamples
    )
}

impl<'m> Lowerer<'m> {
    /// A UniformConstant variable: an image, texel buffer or combined image sampler becomes
    /// [`RegionKind::Image`], a sampler [`RegionKind::Sampler`], an array of them (sized or
    /// runtime-sized) a [`RegionKind::DescriptorArray`] ([`Lowerer::image_array`]); anything
    /// else (images tangle does not run) is recorded as unsupported, an error only if the
    /// shader uses it (`None`).
    pub(super) fn image_variable(
        &mut self,
        id: u32,
        inst: &Instruction,
    ) -> Result<Option<RegionKind>, ExecError> {
        let pointee = inst
            .result_type
            .and_then(|t| self.type_insts.get(&t))
            .and_then(|t| t.id_operand(1))
            .and_then(|t| self.type_insts.get(&t))
            .copied();
        let set = self.decoration(id, spirv::Decoration::DescriptorSet);
        let set = set.and_then(|p| p.first().copied()).unwrap_or(0) as u32;
        let binding = self.decoration(id, spirv::Decoration::Binding);
        let binding = binding.and_then(|p| p.first().copied()).unwrap_or(0) as u32;
        // An array of images is an array of descriptors, each bound separately (Vulkan
        // "DescriptorSet and Binding": "If the variable is an array, the array elements are
        // consumed by the descriptors of the binding").
        if let Some(array) = pointee.filter(|t| {
            matches!(
                t.op(),
                Some(SpvOp::TypeArray) | Some(SpvOp::TypeRuntimeArray)
            )
        }) {
            return self.image_array(id, array, (set, binding));
        }
        if pointee.is_some_and(|t| t.op() == Some(SpvOp::TypeSampler)) {
            return Ok(Some(RegionKind::Sampler { set, binding }));
        }
        let Some((image, combined)) = self.image_of_type(pointee) else {
            let what = "a UniformConstant variable that is no image, sampler or array of them";
            self.unsupported_ids.insert(id, what.to_string());
            return Ok(None);
        };
        let Some(b) = self.image_binding(id, image, (set, binding), combined)? else {
            return Ok(None);
        };
        let index = self.program.images.len() as u32;
        self.program.images.push(b);
        Ok(Some(RegionKind::Image { index }))
    }

    /// The `OpTypeImage` of an image, texel buffer or combined image sampler type, and whether
    /// it is a combined image sampler: a sampled image is one, except with Dim Buffer
    /// (`samplerBuffer`), which is a uniform texel buffer: no sampler.
    fn image_of_type(&self, ty: Option<&'m Instruction>) -> Option<(&'m Instruction, bool)> {
        let (image, combined) = match ty {
            Some(t) if t.op() == Some(SpvOp::TypeSampledImage) => {
                let image = t
                    .id_operand(0)
                    .and_then(|i| self.type_insts.get(&i))
                    .copied();
                let combined = image.is_some_and(|i| i.literal_operand(1) != Some(DIM_BUFFER));
                (image, combined)
            }
            t => (t, false),
        };
        image
            .filter(|t| t.op() == Some(SpvOp::TypeImage))
            .map(|i| (i, combined))
    }

    /// The image of type `image` bound at `(set, binding)` as the program records it, or
    /// `None` (recorded as unsupported under `id`) for an image tangle does not run. Notes the
    /// variable's `Dim` for the instructions that use it.
    fn image_binding(
        &mut self,
        id: u32,
        image: &Instruction,
        (set, binding): (u32, u32),
        combined: bool,
    ) -> Result<Option<ImageBinding>, ExecError> {
        let lit = |i: usize| image.literal_operand(i).unwrap_or(u64::MAX);
        let (dim, arrayed, ms, sampled, format) = (lit(1), lit(3), lit(4), lit(5), lit(6));
        // Vulkan's image view compatibility table "shows which SPIR-V OpTypeImage Dim and
        // Arrayed parameters correspond to each image view type": an arrayed or cube image
        // needs a 1D_ARRAY, 2D_ARRAY, CUBE or CUBE_ARRAY view, and upstream Amber creates only
        // 1D, 2D and 3D views of one layer (its IMAGE has no layers), so no script can bind one.
        const VIEWS: &str = "upstream Amber's IMAGE has no layers or faces and binds 1D, 2D and 3D image views only";
        let why = if dim == DIM_CUBE {
            Some(format!("a cube image (Dim Cube; {VIEWS})"))
        } else if ![DIM_1D, DIM_2D, DIM_3D, DIM_BUFFER].contains(&dim) {
            Some(format!("an image of Dim {dim} (rect and subpass images)"))
        } else if arrayed != 0 {
            Some(format!("an arrayed image (Arrayed 1; {VIEWS})"))
        } else if ms != 0 {
            Some("a multisampled image".to_string())
        } else if format != 0 && TexelFormat::by_spirv(format as u32).is_none() {
            Some(format!("an image of Image Format {format}"))
        } else {
            None
        };
        if let Some(why) = why {
            self.unsupported_ids.insert(id, why);
            return Ok(None);
        }
        let sampled_type = self.lower_type(image.id_operand(0))?;
        let float = matches!(self.program.ty(sampled_type).ty, Type::Float { .. });
        self.image_dims.insert(id, dim);
        Ok(Some(ImageBinding {
            set,
            binding,
            dim: dim as u32,
            sampled: sampled as u32,
            format: format as u32,
            float,
            combined,
            element: None,
        }))
    }

    /// A variable holding an array (sized or runtime-sized) of storage images, sampled images,
    /// combined image samplers, samplers or texel buffers: a [`DescriptorArray`], whose
    /// elements the dispatch takes from what is bound (Vulkan "DescriptorSet and Binding": "If
    /// the variable is an array, the array elements are consumed by the descriptors of the
    /// binding"; a runtime-sized one is as long as what the application binds), and which an
    /// access chain picks from ([`Lowerer::image_element`]). A combined image sampler's
    /// element `e` goes with the sampler of element `e` of the binding.
    fn image_array(
        &mut self,
        id: u32,
        array: &'m Instruction,
        (set, binding): (u32, u32),
    ) -> Result<Option<RegionKind>, ExecError> {
        let element_ty = array.id_operand(0);
        let element = element_ty.and_then(|t| self.type_insts.get(&t)).copied();
        let count = match array.op() {
            Some(SpvOp::TypeRuntimeArray) => None,
            _ => {
                let count = array
                    .id_operand(1)
                    .and_then(|c| self.values.get(&c).copied())
                    .and_then(|v| self.const_value(v.slot))
                    .and_then(|c| u32::try_from(c).ok());
                let Some(count) = count else {
                    let what = "an array of images or samplers whose length is no 32-bit constant";
                    self.unsupported_ids.insert(id, what.to_string());
                    return Ok(None);
                };
                Some(count)
            }
        };
        let kind = if element.and_then(Instruction::op) == Some(SpvOp::TypeSampler) {
            DescriptorKind::Sampler
        } else {
            let Some((image, combined)) = self.image_of_type(element) else {
                let what = "an array of UniformConstant variables that are no images or samplers";
                self.unsupported_ids.insert(id, what.to_string());
                return Ok(None);
            };
            match self.image_binding(id, image, (set, binding), combined)? {
                Some(b) => DescriptorKind::Image(b),
                None => return Ok(None),
            }
        };
        let index = self.program.descriptor_arrays.len() as u32;
        self.program.descriptor_arrays.push(DescriptorArray {
            set,
            binding,
            count,
            kind,
        });
        let handle_ty = self.lower_type(element_ty)?;
        self.image_arrays.insert(id, (index, handle_ty));
        Ok(Some(RegionKind::DescriptorArray { index }))
    }

    /// `OpAccessChain` (or `OpInBoundsAccessChain`) into an array of images
    /// ([`Lowerer::image_array`]): the element's handle, picked lane by lane from what is
    /// bound ([`Op::Descriptor`]). An element with nothing bound, or an index outside the
    /// array, gives a handle whose every use is a finding naming the binding and index: SPIR-V
    /// leaves such an access undefined, and Vulkan requires the descriptors a shader uses to
    /// be valid. Returns whether `inst` was one.
    pub(super) fn image_element(
        &mut self,
        inst: &Instruction,
        out: &mut Out,
    ) -> Result<bool, ExecError> {
        let Some(&(array, handle_ty)) = inst.id_operand(0).and_then(|a| self.image_arrays.get(&a))
        else {
            return Ok(false);
        };
        if inst.operands.len() != 2 {
            return Err(self
                .unsupported("an access chain into an array of images with more than one index"));
        }
        let dim = inst
            .id_operand(0)
            .and_then(|a| self.image_dims.get(&a).copied());
        let index = self.operand(inst, 1)?;
        let s = self
            .scalar(index.ty)
            .filter(|s| !s.float)
            .ok_or_else(|| self.malformed("index is not an integer"))?;
        let dst = self.value(inst.result_id)?;
        self.emit(
            out,
            Op::Descriptor {
                dst: dst.slot,
                array,
                index: index.slot,
                bits: s.bits,
                signed: s.signed,
            },
        );
        if let Some(id) = inst.result_id {
            self.pointees.insert(id, handle_ty);
            if let Some(dim) = dim {
                self.image_dims.insert(id, dim);
            }
        }
        Ok(true)
    }

    /// The number of coordinates of the image `id` (a variable, or a value loaded from one).
    /// Whether the image `id` (an [`Self::coordinates_of`] operand) is a texel buffer
    /// (`Dim` Buffer), whose accesses outside follow the buffer rules, not the image ones.
    fn is_texel_buffer(&self, id: Option<u32>) -> bool {
        id.and_then(|i| self.image_dims.get(&i).copied()) == Some(DIM_BUFFER)
    }

    /// Whether a load through a null descriptor of the image value `id` may read an alpha of
    /// 1 (Vulkan "Texel Replacement": "for storage images and storage texel buffers using an
    /// explicit SPIR-V Image Format, loads from a null descriptor may return an alpha value of
    /// 1 (float or integer, depending on format) if the format does not include alpha"): its
    /// `OpTypeImage` has `Sampled` 2 and an `Image Format` without an A component.
    fn null_alpha_may_be_one(&self, id: Option<u32>) -> bool {
        let ty = self
            .module
            .instructions
            .iter()
            .find(|i| id.is_some() && i.result_id == id)
            .and_then(|i| i.result_type)
            .and_then(|t| self.type_insts.get(&t))
            .filter(|t| t.op() == Some(SpvOp::TypeImage));
        let Some(ty) = ty else {
            return false;
        };
        let lit = |i: usize| ty.literal_operand(i).unwrap_or(0);
        let format = u32::try_from(lit(6)).ok().and_then(TexelFormat::by_spirv);
        lit(5) == 2 && format.is_some_and(|f| f.layout.iter().all(|&(c, _)| c != 3))
    }

    fn coordinates_of(&self, id: Option<u32>) -> Result<u32, ExecError> {
        let dim = id
            .and_then(|i| self.image_dims.get(&i).copied())
            .ok_or_else(|| {
                self.unsupported("an image that is not loaded directly from its variable")
            })?;
        Ok(match dim {
            DIM_2D => 2,
            DIM_3D => 3,
            _ => 1,
        })
    }

    /// The component kind and count of a numeric scalar or vector type.
    fn kind_of(&self, ty: u32) -> Result<(Kind, u32), ExecError> {
        let s = self
            .scalar(ty)
            .ok_or_else(|| self.malformed("image texel is not numeric"))?;
        let count = match self.program.ty(ty).ty {
            Type::Vector { count, .. } => count,
            _ => 1,
        };
        let kind = if s.float {
            Kind::Float(s.bits)
        } else {
            Kind::Int {
                bits: s.bits,
                signed: s.signed,
            }
        };
        Ok((kind, count))
    }

    /// The Image Operands of `inst` from operand `at`: the Lod id, if any; operands other than
    /// Lod, SignExtend and ZeroExtend are refused (SignExtend/ZeroExtend only restate what the
    /// format's numeric type already says for the integer formats tangle has).
    fn image_operands(&self, inst: &Instruction, at: usize) -> Result<Option<u32>, ExecError> {
        let Some(mask) = inst.literal_operand(at) else {
            return Ok(None);
        };
        if mask & !(LOD | SIGN_EXTEND | ZERO_EXTEND) != 0 {
            return Err(self.unsupported(format!("Image Operands {mask:#x}")));
        }
        if mask & LOD == 0 {
            return Ok(None);
        }
        let lod = self.operand(inst, at + 1)?;
        Ok(Some(lod.slot))
    }

    /// Lowers one image instruction.
    pub fn lower_image(
        &mut self,
        inst: &Instruction,
        op: SpvOp,
        out: &mut Out,
    ) -> Result<(), ExecError> {
        // Every image instruction names the image (or its pointer) first.
        let image_id = inst.id_operand(0);
        let image = self.operand(inst, 0)?.slot;
        if op == SpvOp::Image {
            // The image of a sampled image: the same handle.
            let dst = self.value(inst.result_id)?;
            let dim = image_id.and_then(|i| self.image_dims.get(&i).copied());
            if let (Some(id), Some(dim)) = (inst.result_id, dim) {
                self.image_dims.insert(id, dim);
            }
            self.emit(
                out,
                Op::Copy {
                    dst: dst.slot,
                    src: image,
                },
            );
            return Ok(());
        }
        let coordinate = |l: &Self| -> Result<(u32, u32, bool), ExecError> {
            let c = l.operand(inst, 1)?;
            let s = l.scalar(c.ty).filter(|s| !s.float).ok_or_else(|| {
                l.unsupported("non-integer image coordinates (they need a sampler)")
            })?;
            Ok((c.slot, s.bits, s.signed))
        };
        let float_coordinate = |l: &Self| -> Result<(u32, u32), ExecError> {
            let c = l.operand(inst, 1)?;
            let s = l
                .scalar(c.ty)
                .filter(|s| s.float)
                .ok_or_else(|| l.malformed("sampling coordinates are not floats"))?;
            Ok((c.slot, s.bits))
        };
        let image_inst = match op {
            SpvOp::SampledImage => {
                // The sampler's index goes in the offset bits of the image's handle.
                let dst = self.value(inst.result_id)?;
                let sampler = self.operand(inst, 1)?;
                let dim = image_id.and_then(|i| self.image_dims.get(&i).copied());
                if let (Some(id), Some(dim)) = (inst.result_id, dim) {
                    self.image_dims.insert(id, dim);
                }
                ImageInst::Combine {
                    dst: dst.slot,
                    image,
                    sampler: sampler.slot,
                }
            }
            SpvOp::ImageSampleExplicitLod | SpvOp::ImageGather => {
                let dst = self.value(inst.result_id)?;
                let (kind, count) = self.kind_of(dst.ty)?;
                let (coord, coord_bits) = float_coordinate(self)?;
                let coords = self.coordinates_of(image_id)?;
                let (lod, component) = if op == SpvOp::ImageGather {
                    if inst
                        .literal_operand(3)
                        .is_some_and(|m| m & !(SIGN_EXTEND | ZERO_EXTEND) != 0)
                    {
                        return Err(self.unsupported("Image Operands on OpImageGather"));
                    }
                    (None, Some(self.operand(inst, 2)?.slot))
                } else {
                    // SignExtend/ZeroExtend restate the format's numeric type (see
                    // `image_operands`).
                    let mask = inst.literal_operand(2).unwrap_or(0) & !(SIGN_EXTEND | ZERO_EXTEND);
                    if mask != LOD {
                        return Err(self.unsupported(format!(
                            "OpImageSampleExplicitLod with Image Operands {mask:#x} (only Lod)"
                        )));
                    }
                    let lod = self.operand(inst, 3)?;
                    let bits = self.scalar(lod.ty).map_or(32, |s| s.bits);
                    (Some((lod.slot, bits)), None)
                };
                ImageInst::Sample {
                    dst: dst.slot,
                    count,
                    kind,
                    image,
                    coord,
                    coords,
                    coord_bits,
                    lod,
                    component,
                }
            }
            SpvOp::ImageSampleImplicitLod
            | SpvOp::ImageSampleDrefImplicitLod
            | SpvOp::ImageSampleProjImplicitLod
            | SpvOp::ImageSampleProjDrefImplicitLod
            | SpvOp::ImageQueryLod => {
                // Implicit LODs come from derivatives, which compute shaders have only with
                // derivative groups (SPV_KHR_compute_shader_derivatives): not implemented.
                return Err(self.unsupported(format!(
                    "{} in a compute shader (implicit level of detail needs derivative groups)",
                    inst.name()
                )));
            }
            SpvOp::ImageSampleDrefExplicitLod
            | SpvOp::ImageSampleProjExplicitLod
            | SpvOp::ImageSampleProjDrefExplicitLod
            | SpvOp::ImageDrefGather => {
                return Err(
                    self.unsupported(format!("{} (depth comparison, projection)", inst.name()))
                );
            }
            SpvOp::ImageRead | SpvOp::ImageFetch => {
                let dst = self.value(inst.result_id)?;
                let (kind, count) = self.kind_of(dst.ty)?;
                let (coord, coord_bits, coord_signed) = coordinate(self)?;
                ImageInst::Read {
                    dst: dst.slot,
                    count,
                    kind,
                    image,
                    coord,
                    coords: self.coordinates_of(image_id)?,
                    coord_bits,
                    coord_signed,
                    lod: self.image_operands(inst, 2)?,
                    texel_buffer: self.is_texel_buffer(image_id),
                    null_alpha_one: self.null_alpha_may_be_one(image_id),
                }
            }
            SpvOp::ImageWrite => {
                let texel = self.operand(inst, 2)?;
                let (kind, count) = self.kind_of(texel.ty)?;
                let (coord, coord_bits, coord_signed) = coordinate(self)?;
                self.image_operands(inst, 3)?;
                ImageInst::Write {
                    texel: texel.slot,
                    count,
                    kind,
                    image,
                    coord,
                    coords: self.coordinates_of(image_id)?,
                    coord_bits,
                    coord_signed,
                    texel_buffer: self.is_texel_buffer(image_id),
                }
            }
            SpvOp::ImageTexelPointer => {
                let dst = self.value(inst.result_id)?;
                let pointee = self.pointee_of(dst.ty)?;
                let bytes = self.program.ty(pointee).size as u32;
                let (coord, coord_bits, coord_signed) = coordinate(self)?;
                ImageInst::TexelPointer {
                    dst: dst.slot,
                    bytes,
                    image,
                    coord,
                    coords: self.coordinates_of(image_id)?,
                    coord_bits,
                    coord_signed,
                }
            }
            SpvOp::ImageQuerySize | SpvOp::ImageQuerySizeLod => {
                let dst = self.value(inst.result_id)?;
                let (kind, count) = self.kind_of(dst.ty)?;
                let lod = match op {
                    SpvOp::ImageQuerySizeLod => Some(self.operand(inst, 1)?.slot),
                    _ => None,
                };
                self.coordinates_of(image_id)?;
                ImageInst::QuerySize {
                    dst: dst.slot,
                    count,
                    bits: kind.bits(),
                    image,
                    lod,
                }
            }
            _ => {
                // OpImageQueryLevels and OpImageQuerySamples: tangle's images have one level
                // and one sample.
                let dst = self.value(inst.result_id)?;
                let one = self.constant(1)?;
                self.emit(
                    out,
                    Op::Copy {
                        dst: dst.slot,
                        src: one,
                    },
                );
                return Ok(());
            }
        };
        self.emit(out, Op::Image(Box::new(image_inst)));
        Ok(())
    }
}
