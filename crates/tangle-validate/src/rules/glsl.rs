//! `OpExtInst` and the GLSL.std.450 extended instructions (the GLSL.std.450 specification;
//! SPIRV-Tools `validate_extensions.cpp`): the set is an `OpExtInstImport`, the instruction
//! exists in it with its operand count, and the float, integer and geometric functions get
//! operands of the types they are defined on.

use super::Ctx;
use spirv::Op;
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
    /// "Result Type must be a scalar or vector of floating-point type" (or integer, per function).
    #[error("{name} Result Type must be {expected}")]
    ResultType {
        name: &'static str,
        expected: &'static str,
    },
    /// "The type of each operand must be the same as Result Type" (or its component type).
    #[error("{name} operand {index} has the wrong type")]
    OperandType { name: &'static str, index: usize },
}

/// What a GLSL.std.450 function is defined on.
enum Shape {
    /// Float scalar/vector result; every operand has the Result Type.
    FloatSame,
    /// Integer scalar/vector result; operands integer with the result's width and component count.
    IntSame,
    /// Float scalar result from float vectors whose component type is the result (Length, Distance).
    FloatLength,
    /// Not checked beyond the operand count.
    Other,
}

fn shape(number: u32) -> Shape {
    match number {
        1..=4 | 6 | 8..=32 | 37 | 40 | 43 | 46 | 48..=50 | 69 | 71 | 79..=81 => Shape::FloatSame,
        5 | 7 | 38 | 39 | 41 | 42 | 44 | 45 | 73..=75 => Shape::IntSame,
        66 | 67 => Shape::FloatLength,
        _ => Shape::Other,
    }
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
    let Some(result) = inst.result_type else {
        return Ok(());
    };
    let f = cx.facts;
    let is_float = |t: Id| {
        f.scalar_or_vector_component(t)
            .is_some_and(|c| f.is_float_scalar(c))
    };
    let is_int = |t: Id| {
        f.scalar_or_vector_component(t)
            .is_some_and(|c| f.is_int_scalar(c))
    };
    let name = ext.name;
    match shape(number) {
        Shape::FloatSame => {
            if !is_float(result) {
                return Err(GlslError::ResultType {
                    name,
                    expected: "a float scalar or vector",
                });
            }
            for (index, v) in operands.iter().enumerate() {
                if f.type_of(*v) != Some(result) {
                    return Err(GlslError::OperandType { name, index });
                }
            }
        }
        Shape::IntSame => {
            if !is_int(result) {
                return Err(GlslError::ResultType {
                    name,
                    expected: "an integer scalar or vector",
                });
            }
            let shape_of = |t: Id| (f.component_count(t), f.bit_width(t));
            for (index, v) in operands.iter().enumerate() {
                let ok = f
                    .type_of(*v)
                    .is_some_and(|t| is_int(t) && shape_of(t) == shape_of(result));
                if !ok {
                    return Err(GlslError::OperandType { name, index });
                }
            }
        }
        Shape::FloatLength => {
            if !f.is_float_scalar(result) {
                return Err(GlslError::ResultType {
                    name,
                    expected: "a float scalar",
                });
            }
            let first = operands.first().and_then(|v| f.type_of(*v));
            for (index, v) in operands.iter().enumerate() {
                let t = f.type_of(*v);
                let ok =
                    t == first && t.and_then(|t| f.scalar_or_vector_component(t)) == Some(result);
                if !ok {
                    return Err(GlslError::OperandType { name, index });
                }
            }
        }
        Shape::Other => {}
    }
    Ok(())
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
