//! `OpExtInst` and the GLSL.std.450 extended instructions (the GLSL.std.450 specification;
//! SPIRV-Tools `validate_extensions.cpp`): the set is an `OpExtInstImport`, the instruction
//! exists in it with its operand count, and each instruction gets the result and operand types
//! it is defined on.

use super::Ctx;
use spirv::{Capability, Op, StorageClass};
use tangle_spirv::grammar::{self, Quantifier};
use tangle_spirv::{Id, Instruction, Operand};

/// An extended-instruction rule failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GlslError {
    /// OpExtInst: "Set must be the result of an OpExtInstImport instruction."
    #[error("the OpExtInst set operand is not an OpExtInstImport")]
    SetNotImport,
    /// The number is not an instruction of the set.
    #[error("{set} has no instruction {number}")]
    UnknownInstruction { set: String, number: u32 },
    /// The operand count differs from the instruction's definition.
    #[error("{name} takes {expected} operand(s), not {found}")]
    OperandCount {
        name: &'static str,
        expected: usize,
        found: usize,
    },
    /// "Result Type must be a scalar or vector of floating-point type" (or what the function
    /// is defined on).
    #[error("{name} Result Type must be {expected}")]
    ResultType {
        name: &'static str,
        expected: &'static str,
    },
    /// "The type of each operand must be the same as Result Type" (or what the function's
    /// operand is defined as).
    #[error("{name} operand {index} has the wrong type")]
    OperandType { name: &'static str, index: usize },
    /// A bfloat16 or FP8 result or operand: SPV_KHR_bfloat16 allows bfloat16 values only in
    /// conversions, composites, memory instructions, OpDot and the cooperative-matrix MulAdd.
    #[error("{name} does not support floating-point types with an FP encoding (BFloat16, FP8)")]
    EncodedFloatNotSupported { name: &'static str },
    /// IMix (number 47) was removed from GLSL.std.450; SPIRV-Tools rejects it.
    #[error("GLSL.std.450 IMix is not supported")]
    IMixNotSupported,
    /// "InterpolateAtCentroid ... requires capability InterpolationFunction" (and the other
    /// interpolation functions).
    #[error("{name} needs the InterpolationFunction capability")]
    NeedsInterpolationFunction { name: &'static str },
    /// The interpolation functions are "only valid in the Fragment Execution Model"
    /// (SPIRV-Tools registers an execution-model limitation: "requires Fragment execution
    /// model", in every environment).
    #[error("{name} is used in a function called from a {model} entry point; it needs the Fragment execution model")]
    InterpolateOutsideFragment { name: &'static str, model: String },
}

/// The interpolation functions used in the call tree of an entry point whose execution model
/// is not Fragment.
pub fn check_models(cx: &Ctx, sink: &mut super::Sink) {
    cx.visit_with_models(|index, inst, models| {
        let Some(name) = interpolation_function(cx, inst) else {
            return;
        };
        if let Some(model) = models
            .iter()
            .find(|m| **m != spirv::ExecutionModel::Fragment as u32)
        {
            let e = GlslError::InterpolateOutsideFragment {
                name,
                model: super::model_name(*model),
            };
            sink.error(Some(index), e);
        }
    });
}

/// The name of the GLSL.std.450 interpolation function `inst` calls, if it calls one.
fn interpolation_function(cx: &Ctx, inst: &Instruction) -> Option<&'static str> {
    if inst.op() != Some(Op::ExtInst) {
        return None;
    }
    let name = cx.facts.ext_inst_imports.get(&inst.id_operand(0)?)?;
    if name != "GLSL.std.450" {
        return None;
    }
    let number = u32::try_from(inst.literal_operand(1)?).ok()?;
    let ext = grammar::ext_inst_set(name)?.instruction(number)?;
    matches!(
        ext.name,
        "InterpolateAtCentroid" | "InterpolateAtSample" | "InterpolateAtOffset"
    )
    .then_some(ext.name)
}

/// Checks `OpExtInst`.
pub fn check(cx: &Ctx, inst: &Instruction) -> Result<(), GlslError> {
    if inst.op() != Some(Op::ExtInst) {
        return Ok(());
    }
    let Some(set) = inst.id_operand(0) else {
        return Ok(());
    };
    let Some(name) = cx.facts.ext_inst_imports.get(&set) else {
        return Err(GlslError::SetNotImport);
    };
    if name != "GLSL.std.450" {
        return Ok(());
    }
    let Some(desc) = grammar::ext_inst_set(name) else {
        return Ok(());
    };
    let number = inst.literal_operand(1).map_or(u32::MAX, |n| n as u32);
    let Some(ext) = desc.instruction(number) else {
        return Err(GlslError::UnknownInstruction {
            set: name.clone(),
            number,
        });
    };
    let operands: Vec<Id> = inst
        .operands
        .iter()
        .skip(2)
        .filter_map(Operand::id)
        .collect();
    let fixed = ext
        .operands
        .iter()
        .filter(|o| o.quantifier == Quantifier::One)
        .count();
    let variable = ext.operands.iter().any(|o| o.quantifier != Quantifier::One);
    if operands.len() < fixed || (!variable && operands.len() != fixed) {
        return Err(GlslError::OperandCount {
            name: ext.name,
            expected: fixed,
            found: operands.len(),
        });
    }
    // SPV_KHR_bfloat16: "Variables with a type that is or includes a floating-point type with
    // the BFloat16KHR encoding must only be used with the following instructions", which do not
    // include OpExtInst (SPIRV-Tools: "ExtInst doesn't support BFloat16 type"; FP8 likewise).
    let encoded = inst
        .result_type
        .into_iter()
        .chain(operands.iter().filter_map(|&v| cx.facts.type_of(v)))
        .any(|t| cx.facts.is_encoded_float(t));
    if encoded {
        return Err(GlslError::EncodedFloatNotSupported { name: ext.name });
    }
    let Some(result) = inst.result_type else {
        return Ok(());
    };
    let g = Glsl {
        cx,
        name: ext.name,
        result,
        types: operands.iter().map(|v| cx.facts.type_of(*v)).collect(),
    };
    g.check()
}

/// One GLSL.std.450 instruction being checked: its name, Result Type and operand types.
struct Glsl<'a> {
    cx: &'a Ctx<'a>,
    name: &'static str,
    result: Id,
    types: Vec<Option<Id>>,
}

impl Glsl<'_> {
    fn result_err(&self, expected: &'static str) -> Result<(), GlslError> {
        Err(GlslError::ResultType {
            name: self.name,
            expected,
        })
    }

    fn operand_err(&self, index: usize) -> Result<(), GlslError> {
        Err(GlslError::OperandType {
            name: self.name,
            index,
        })
    }

    fn ty(&self, index: usize) -> Option<Id> {
        self.types.get(index).copied().flatten()
    }

    /// Every operand has the Result Type.
    fn all_result_type(&self) -> Result<(), GlslError> {
        match self.types.iter().position(|t| *t != Some(self.result)) {
            Some(index) => self.operand_err(index),
            None => Ok(()),
        }
    }

    /// Operand `index` has the Result Type.
    fn same(&self, index: usize) -> Result<(), GlslError> {
        if self.ty(index) == Some(self.result) {
            Ok(())
        } else {
            self.operand_err(index)
        }
    }

    /// The pointee of operand `index`, if it is a typed pointer.
    fn pointee(&self, index: usize) -> Option<(Id, u32)> {
        self.ty(index).and_then(|t| self.cx.facts.pointer_info(t))
    }

    /// The checks of SPIRV-Tools `ValidateExtInst` for GLSL.std.450, in its order.
    fn check(&self) -> Result<(), GlslError> {
        let f = self.cx.facts;
        let result = self.result;
        match self.name {
            "Round" | "RoundEven" | "FAbs" | "Trunc" | "FSign" | "Floor" | "Ceil" | "Fract"
            | "Sqrt" | "InverseSqrt" | "FMin" | "FMax" | "FClamp" | "FMix" | "Step"
            | "SmoothStep" | "Fma" | "Normalize" | "FaceForward" | "Reflect" | "NMin" | "NMax"
            | "NClamp" => {
                if !f.is_float_scalar_or_vector(result) {
                    return self.result_err("a float scalar or vector");
                }
                self.all_result_type()
            }
            "SAbs" | "SSign" | "UMin" | "SMin" | "UMax" | "SMax" | "UClamp" | "SClamp"
            | "FindILsb" | "FindUMsb" | "FindSMsb" => {
                if !f.is_int_scalar_or_vector(result) {
                    return self.result_err("an integer scalar or vector");
                }
                let msb = matches!(self.name, "FindUMsb" | "FindSMsb");
                for (index, t) in self.types.iter().enumerate() {
                    let ok = t.is_some_and(|t| {
                        f.is_int_scalar_or_vector(t)
                            && f.dimension(t) == f.dimension(result)
                            && f.width(t) == f.width(result)
                    });
                    if !ok {
                        return self.operand_err(index);
                    }
                    // "this instruction is currently limited to 32-bit width components".
                    if msb && f.width(result) != 32 {
                        return self.result_err("a 32-bit integer scalar or vector");
                    }
                }
                Ok(())
            }
            "Radians" | "Degrees" | "Sin" | "Cos" | "Tan" | "Asin" | "Acos" | "Atan" | "Sinh"
            | "Cosh" | "Tanh" | "Asinh" | "Acosh" | "Atanh" | "Exp" | "Exp2" | "Log" | "Log2"
            | "Atan2" | "Pow" => {
                // "Result Type and the type of x must be 16-bit or 32-bit floating-point".
                if !f.is_float_scalar_or_vector(result) || !matches!(f.width(result), 16 | 32) {
                    return self.result_err("a 16- or 32-bit float scalar or vector");
                }
                self.all_result_type()
            }
            "Determinant" => {
                match self.ty(0).and_then(|t| f.matrix_info(t)) {
                    Some((rows, cols, _, _)) if rows == cols => {}
                    _ => return self.operand_err(0),
                }
                if self.ty(0).and_then(|t| f.component_type(t)) != Some(result) {
                    return self.operand_err(0);
                }
                Ok(())
            }
            "MatrixInverse" => {
                match f.matrix_info(result) {
                    Some((rows, cols, _, _)) if rows == cols => {}
                    _ => return self.result_err("a square matrix"),
                }
                self.same(0)
            }
            "Modf" => {
                if !f.is_float_scalar_or_vector(result) {
                    return self.result_err("a float scalar or vector");
                }
                self.same(0)?;
                match self.pointee(1) {
                    Some((pointee, _)) if pointee == result => Ok(()),
                    _ => self.operand_err(1),
                }
            }
            "ModfStruct" => {
                let members = f.struct_members(result).unwrap_or_default();
                let [first, second] = members else {
                    return self
                        .result_err("a struct of two identical float scalar or vector members");
                };
                if !f.is_float_scalar_or_vector(*first) || second != first {
                    return self
                        .result_err("a struct of two identical float scalar or vector members");
                }
                if self.ty(0) != Some(*first) {
                    return self.operand_err(0);
                }
                Ok(())
            }
            "Frexp" => {
                if !f.is_float_scalar_or_vector(result) {
                    return self.result_err("a float scalar or vector");
                }
                self.same(0)?;
                let exp_ok = self.pointee(1).is_some_and(|(e, _)| {
                    f.is_int_scalar_or_vector(e)
                        && self.exp_width_ok(e)
                        && f.dimension(e) == f.dimension(result)
                });
                if !exp_ok {
                    return self.operand_err(1);
                }
                Ok(())
            }
            "Ldexp" => {
                if !f.is_float_scalar_or_vector(result) {
                    return self.result_err("a float scalar or vector");
                }
                self.same(0)?;
                let exp_ok = self.ty(1).is_some_and(|e| {
                    f.is_int_scalar_or_vector(e) && f.dimension(e) == f.dimension(result)
                });
                if !exp_ok {
                    return self.operand_err(1);
                }
                Ok(())
            }
            "FrexpStruct" => {
                let members = f.struct_members(result).unwrap_or_default();
                let ok = match members {
                    [value, exp] => {
                        f.is_float_scalar_or_vector(*value)
                            && f.is_int_scalar_or_vector(*exp)
                            && self.exp_width_ok(*exp)
                            && f.dimension(*value) == f.dimension(*exp)
                    }
                    _ => false,
                };
                if !ok {
                    return self.result_err("a struct of a float scalar or vector and a 32-bit integer scalar or vector of its component count");
                }
                if self.ty(0) != members.first().copied() {
                    return self.operand_err(0);
                }
                Ok(())
            }
            "PackSnorm4x8" | "PackUnorm4x8" | "PackSnorm2x16" | "PackUnorm2x16"
            | "PackHalf2x16" => {
                if !f.is_int_scalar(result) || f.width(result) != 32 {
                    return self.result_err("a 32-bit integer scalar");
                }
                let count = if self.name.ends_with("4x8") { 4 } else { 2 };
                let ok = self.ty(0).is_some_and(|v| {
                    f.is_float_vector(v) && f.dimension(v) == count && f.width(v) == 32
                });
                if !ok {
                    return self.operand_err(0);
                }
                Ok(())
            }
            "PackDouble2x32" => {
                if !f.is_float_scalar(result) || f.width(result) != 64 {
                    return self.result_err("a 64-bit float scalar");
                }
                let ok = self
                    .ty(0)
                    .is_some_and(|v| f.is_int_vector(v) && f.dimension(v) == 2 && f.width(v) == 32);
                if !ok {
                    return self.operand_err(0);
                }
                Ok(())
            }
            "UnpackSnorm4x8" | "UnpackUnorm4x8" | "UnpackSnorm2x16" | "UnpackUnorm2x16"
            | "UnpackHalf2x16" => {
                let count = if self.name.ends_with("4x8") { 4 } else { 2 };
                if !f.is_float_vector(result)
                    || f.dimension(result) != count
                    || f.width(result) != 32
                {
                    return self.result_err("a 32-bit float vector of the unpacked size");
                }
                if !self
                    .ty(0)
                    .is_some_and(|p| f.is_int_scalar(p) && f.width(p) == 32)
                {
                    return self.operand_err(0);
                }
                Ok(())
            }
            "UnpackDouble2x32" => {
                if !f.is_int_vector(result) || f.dimension(result) != 2 || f.width(result) != 32 {
                    return self.result_err("a 2-component 32-bit integer vector");
                }
                if !self
                    .ty(0)
                    .is_some_and(|v| f.is_float_scalar(v) && f.width(v) == 64)
                {
                    return self.operand_err(0);
                }
                Ok(())
            }
            "Length" | "Distance" => {
                if !f.is_float_scalar(result) {
                    return self.result_err("a float scalar");
                }
                for (index, t) in self.types.iter().enumerate() {
                    let ok = t.is_some_and(|t| {
                        f.is_float_scalar_or_vector(t) && f.component_type(t) == Some(result)
                    });
                    if !ok {
                        return self.operand_err(index);
                    }
                }
                let dims: Vec<u32> = self
                    .types
                    .iter()
                    .flatten()
                    .map(|t| f.dimension(*t))
                    .collect();
                if dims.windows(2).any(|w| w[0] != w[1]) {
                    return self.operand_err(1);
                }
                Ok(())
            }
            "Cross" => {
                if !f.is_float_vector(result) || f.dimension(result) != 3 {
                    return self.result_err("a 3-component float vector");
                }
                self.all_result_type()
            }
            "Refract" => {
                if !f.is_float_scalar_or_vector(result) {
                    return self.result_err("a float scalar or vector");
                }
                self.same(0)?;
                self.same(1)?;
                if !self.ty(2).is_some_and(|t| f.is_float_scalar(t)) {
                    return self.operand_err(2);
                }
                Ok(())
            }
            "InterpolateAtCentroid" | "InterpolateAtSample" | "InterpolateAtOffset" => {
                self.interpolate()
            }
            "IMix" => Err(GlslError::IMixNotSupported),
            _ => Ok(()),
        }
    }

    /// Frexp's exponent: 32 bits (16 too with SPV_AMD_gpu_shader_int16).
    fn exp_width_ok(&self, exp: Id) -> bool {
        let f = self.cx.facts;
        match f.width(exp) {
            32 => true,
            16 => f.has_extension("SPV_AMD_gpu_shader_int16"),
            _ => false,
        }
    }

    /// InterpolateAtCentroid / AtSample / AtOffset: the capability, a 32-bit float result, an
    /// Input pointer to it, a 32-bit integer sample or a 2-component 32-bit float offset. (The
    /// Fragment execution model they need is [`check_models`]' rule.)
    fn interpolate(&self) -> Result<(), GlslError> {
        let f = self.cx.facts;
        if !f.has_capability(Capability::InterpolationFunction) {
            return Err(GlslError::NeedsInterpolationFunction { name: self.name });
        }
        if !f.is_float_scalar_or_vector(self.result) || f.width(self.result) != 32 {
            return self.result_err("a 32-bit float scalar or vector");
        }
        match self.pointee(0) {
            Some((pointee, storage))
                if pointee == self.result && storage == StorageClass::Input as u32 => {}
            _ => return self.operand_err(0),
        }
        let ok = match self.name {
            "InterpolateAtSample" => self
                .ty(1)
                .is_some_and(|t| f.is_int_scalar(t) && f.width(t) == 32),
            "InterpolateAtOffset" => self
                .ty(1)
                .is_some_and(|t| f.is_float_vector(t) && f.dimension(t) == 2 && f.width(t) == 32),
            _ => true,
        };
        if !ok {
            return self.operand_err(1);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::test_support::{compute, module};
    use tangle_spirv::TargetEnv;

    #[test]
    fn operand_count_comes_from_the_grammar() {
        // The assembler refuses a short Fma, so drop its last operand after assembling.
        let text = compute(
            "",
            "%f32 = OpTypeFloat 32\n%one = OpConstant %f32 1",
            "%a = OpExtInst %f32 %glsl Fma %one %one %one",
        )
        .replace(
            "OpMemoryModel",
            "%glsl = OpExtInstImport \"GLSL.std.450\"\nOpMemoryModel",
        );
        let mut m = module(&text, "vulkan1.3");
        let env = TargetEnv::parse("vulkan1.3").expect("env");
        assert!(crate::validate(&m, env, &crate::ValidateOptions::default()).is_ok());
        if let Some(fma) = m
            .instructions
            .iter_mut()
            .find(|i| i.op() == Some(spirv::Op::ExtInst))
        {
            fma.operands.pop();
        }
        let diags =
            crate::validate(&m, env, &crate::ValidateOptions::default()).expect_err("invalid");
        let names: Vec<String> = diags.iter().map(|d| d.error.rule()).collect();
        assert_eq!(names, ["Glsl::OperandCount"]);
    }
}
