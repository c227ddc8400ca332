//! Functions and control-flow operands (SPIR-V 3.x "Function Instructions" and "Control-Flow
//! Instructions"; SPIRV-Tools `validate_function.cpp`, `validate_cfg.cpp` operand checks): function
//! and parameter types against the OpTypeFunction, call arguments (pointers to logically
//! matching types with `--before-hlsl-legalization`), returned values, branch conditions, switch
//! selectors, and OpPhi operands.

use super::Ctx;
use crate::facts::Type;
use spirv::Op;
use tangle_spirv::{Id, Instruction, Operand};

/// A function or control-flow operand rule failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FunctionError {
    /// OpFunction: "Function Type is the result of an OpTypeFunction, which must have as its
    /// Return Type the same type as Result Type."
    #[error("the function's Result Type differs from its function type's return type")]
    ReturnTypeMismatch,
    /// OpFunctionParameter: its type must be the matching parameter type of the function type.
    #[error("parameter {index} does not have the function type's parameter type")]
    ParameterTypeMismatch { index: usize },
    /// OpFunctionCall: "Result Type is the type of the return value of the function" and each
    /// argument has the parameter's type.
    #[error("OpFunctionCall {what}")]
    CallMismatch { what: &'static str },
    /// OpReturnValue: "Value ... must match the Return Type operand of the OpTypeFunction".
    #[error("OpReturnValue value does not have the function's return type")]
    ReturnValueType,
    /// OpReturn: "This instruction must only be used in a function whose return type is void"
    /// (OpReturnValue: only in a non-void one).
    #[error("{op} does not match the function's return type (void or not)")]
    ReturnKind { op: String },
    /// OpBranchConditional: "Condition must be a Boolean type scalar."
    #[error("the branch condition must be a boolean scalar")]
    ConditionNotBool,
    /// OpSwitch: "Selector must have a type of OpTypeInt."
    #[error("the switch selector must be an integer scalar")]
    SelectorNotInt,
    /// OpPhi: "the type of each Variable must be the same as Result Type", one pair per parent.
    #[error("OpPhi {what}")]
    Phi { what: &'static str },
}

/// Checks function-structure and control-flow operands; `function_type` is the function type
/// of the enclosing function (for returns and parameters) and `parameter` counts parameters.
pub fn check(
    cx: &Ctx,
    inst: &Instruction,
    enclosing: Option<&Instruction>,
    parameter: usize,
) -> Result<(), FunctionError> {
    let f = cx.facts;
    let signature = |function: &Instruction| match function.id_operand(1).and_then(|t| f.ty(t)) {
        Some(Type::Function { ret, params }) => Some((*ret, params.clone())),
        _ => None,
    };
    match inst.op() {
        Some(Op::Function) => {
            if let Some((ret, _)) = signature(inst) {
                if inst.result_type != Some(ret) {
                    return Err(FunctionError::ReturnTypeMismatch);
                }
            }
        }
        Some(Op::FunctionParameter) => {
            if let Some((_, params)) = enclosing.and_then(signature) {
                if params.get(parameter).copied() != inst.result_type {
                    return Err(FunctionError::ParameterTypeMismatch { index: parameter });
                }
            }
        }
        Some(Op::FunctionCall) => call(cx, inst)?,
        Some(Op::Return | Op::ReturnValue) => {
            let Some((ret, _)) = enclosing.and_then(signature) else {
                return Ok(());
            };
            let void = f.ty(ret) == Some(&Type::Void);
            if void != (inst.op() == Some(Op::Return)) {
                return Err(FunctionError::ReturnKind { op: inst.name() });
            }
            if let Some(value) = inst.id_operand(0) {
                if f.type_of(value) != Some(ret) {
                    return Err(FunctionError::ReturnValueType);
                }
            }
        }
        Some(Op::BranchConditional)
            if !inst
                .id_operand(0)
                .and_then(|c| f.type_of(c))
                .is_some_and(|t| f.is_bool_scalar(t)) =>
        {
            return Err(FunctionError::ConditionNotBool);
        }
        Some(Op::Switch)
            if !inst
                .id_operand(0)
                .and_then(|s| f.type_of(s))
                .is_some_and(|t| f.is_int_scalar(t)) =>
        {
            return Err(FunctionError::SelectorNotInt);
        }
        Some(Op::Phi) => phi(cx, inst)?,
        _ => {}
    }
    Ok(())
}

/// The callee's signature against the result type and arguments.
fn call(cx: &Ctx, inst: &Instruction) -> Result<(), FunctionError> {
    let f = cx.facts;
    let Some(callee) = inst.id_operand(0).and_then(|c| cx.def(c)) else {
        return Ok(());
    };
    if callee.op() != Some(Op::Function) {
        return Err(FunctionError::CallMismatch {
            what: "must call an OpFunction",
        });
    }
    let Some(Type::Function { ret, params }) = callee.id_operand(1).and_then(|t| f.ty(t)) else {
        return Ok(());
    };
    if inst.result_type != Some(*ret) {
        return Err(FunctionError::CallMismatch {
            what: "Result Type must be the callee's return type",
        });
    }
    let args: Vec<Id> = inst
        .operands
        .iter()
        .skip(1)
        .filter_map(Operand::id)
        .collect();
    if args.len() != params.len() {
        return Err(FunctionError::CallMismatch {
            what: "must pass one argument per parameter",
        });
    }
    let matches = |argument: Id, parameter: Id| {
        let Some(ty) = f.type_of(argument) else {
            return false;
        };
        // `--before-hlsl-legalization`: pointer arguments need only point to a type that
        // logically matches the parameter's pointee, in any storage class.
        ty == parameter
            || cx.options.before_hlsl_legalization && pointees_logically_match(cx, ty, parameter)
    };
    if args.iter().zip(params).any(|(a, p)| !matches(*a, *p)) {
        return Err(FunctionError::CallMismatch {
            what: "arguments must have the parameter types",
        });
    }
    Ok(())
}

/// SPIRV-Tools `DoPointeesLogicallyMatch`: both are pointers, the parameter's pointer type has
/// no decoration the argument's lacks, and the pointees are the same or logically match.
fn pointees_logically_match(cx: &Ctx, argument: Id, parameter: Id) -> bool {
    let f = cx.facts;
    let (Some(Type::Pointer { pointee: a, .. }), Some(Type::Pointer { pointee: b, .. })) =
        (f.ty(argument), f.ty(parameter))
    else {
        return false;
    };
    decorations_included(cx, parameter, argument) && (a == b || logically_match(cx, *a, *b, 0))
}

/// Whether every decoration of `b` is also one of `a`.
fn decorations_included(cx: &Ctx, b: Id, a: Id) -> bool {
    let of = |id| {
        cx.facts
            .decorations
            .get(&id)
            .map(Vec::as_slice)
            .unwrap_or_default()
    };
    let a = of(a);
    of(b).iter().all(|d| a.contains(d))
}

/// SPIRV-Tools `LogicallyMatch` (with decorations): arrays of the same length id and structs
/// with as many members whose element types are the same or logically match, each carrying at
/// least the decorations of the other side.
fn logically_match(cx: &Ctx, a: Id, b: Id, depth: u32) -> bool {
    let f = cx.facts;
    if depth > 64 || !decorations_included(cx, b, a) {
        return false;
    }
    let same = |x: Id, y: Id| x == y || logically_match(cx, x, y, depth + 1);
    match (f.ty(a), f.ty(b)) {
        (
            Some(Type::Array {
                element: ea,
                length: la,
            }),
            Some(Type::Array {
                element: eb,
                length: lb,
            }),
        ) => la == lb && same(*ea, *eb),
        (Some(Type::Struct { members: ma }), Some(Type::Struct { members: mb })) => {
            ma.len() == mb.len() && ma.iter().zip(mb).all(|(x, y)| same(*x, *y))
        }
        _ => false,
    }
}

/// OpPhi values have the Result Type and come in (value, parent) pairs.
fn phi(cx: &Ctx, inst: &Instruction) -> Result<(), FunctionError> {
    if !inst.operands.len().is_multiple_of(2) || inst.operands.is_empty() {
        return Err(FunctionError::Phi {
            what: "operands must be (value, parent block) pairs",
        });
    }
    for pair in inst.operands.chunks(2) {
        let value = pair.first().and_then(Operand::id);
        if value.and_then(|v| cx.facts.type_of(v)) != inst.result_type {
            return Err(FunctionError::Phi {
                what: "values must have the Result Type",
            });
        }
        let parent = pair
            .get(1)
            .and_then(Operand::id)
            .and_then(|p| cx.def(p))
            .and_then(Instruction::op);
        if parent != Some(Op::Label) {
            return Err(FunctionError::Phi {
                what: "parents must be blocks",
            });
        }
    }
    Ok(())
}
