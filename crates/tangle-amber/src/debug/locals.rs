//! `EXPECT LOCAL "name" EQ value` at a pause: the value a local of the paused function holds,
//! from the value sets of the invocation's path ([`super::Replayed::values`]).
//!
//! A name is looked up as upstream's debugger does (google/amber
//! `src/vulkan/engine_vulkan_debugger.cc`, `ExpectLocalT`): split at `.`, the first part a local
//! of the paused frame, each further part a child (a struct member by its `OpMemberName`, a
//! vector component `x`, `y`, `z` or `w`). tangle's locals are the paused function's
//! `OpVariable`s and `OpFunctionParameter`s by `OpName` (else its other named results), and
//! `%N` for result id N. Upstream compares an integer with the value parsed as an integer and a
//! number with a fraction with the value parsed as a double from the driver's text, which
//! prints floats with six decimals (upstream's tests expect `-1.007874` for -128/127): a float
//! local is compared rounded to six decimals. What tangle cannot tell (an unknown or ambiguous
//! name, a composite, an undefined value) is an error of the check, never a pass.

use super::{Replayed, Sources, Stop};
use crate::report::ExpectResult;
use crate::script::LocalValue;
use half::f16;
use spirv::Op;
use std::collections::HashMap;
use tangle_spirv::module::Module;

/// The most nested types a name's path or a type's size walks through.
const MAX_DEPTH: usize = 64;

/// The values in effect at a pause: the path's value sets applied up to it.
#[derive(Debug, Default)]
pub struct State {
    values: HashMap<u32, Vec<u64>>,
    applied: usize,
}

impl State {
    /// Applies the value sets before `stop` (pauses only move forward).
    pub fn advance(&mut self, replayed: &Replayed, stop: &Stop) {
        let upto = stop.values.min(replayed.values.len());
        for set in replayed
            .values
            .get(self.applied..upto)
            .into_iter()
            .flatten()
        {
            for (id, v) in set {
                self.values.insert(*id, v.clone());
            }
        }
        self.applied = self.applied.max(upto);
    }
}

/// A scalar type: (opcode, width, signed).
type Scalar = (Op, u32, bool);

/// The value of `name` at the pause `stop` (the `index`th stop), compared with `want`:
/// `Ok((passed, what it holds))`, or `Err` why tangle cannot tell.
pub fn check(
    module: &Module,
    sources: &Sources,
    (index, stop): (usize, &Stop),
    replayed: &Replayed,
    state: &State,
    name: &str,
    want: LocalValue,
) -> Result<(bool, String), String> {
    let mut parts = name.split('.');
    let first = parts.next().unwrap_or_default();
    let id = local(module, sources, stop.function, first)?;
    let defined = replayed.since.get(&id).is_some_and(|&s| s <= index);
    if !defined {
        return Err(format!(
            "'{first}' has no value yet at this pause (not yet computed, stored to or initialised): its content is undefined"
        ));
    }
    let values = state
        .values
        .get(&id)
        .ok_or_else(|| format!("the backend reported no value of '{first}'"))?;
    let ty = value_type(module, sources, id).ok_or_else(|| format!("'{first}' has no type"))?;
    let (offset, scalar) = walk(module, sources, ty, parts, name)?;
    let raw = values
        .get(offset)
        .copied()
        .ok_or_else(|| format!("the backend reported too few scalars for '{name}'"))?;
    Ok(compare(scalar, raw, want))
}

/// The id `first` names among the locals of `function`.
fn local(module: &Module, sources: &Sources, function: u32, first: &str) -> Result<u32, String> {
    let fname = sources
        .function_name(function)
        .unwrap_or("the paused function");
    if let Some(n) = first.strip_prefix('%') {
        let id = n
            .parse::<u32>()
            .map_err(|_| format!("'{first}': a result is named by its number (%12)"))?;
        return match sources.locals.get(&id) {
            Some(&(f, _)) if f == function => Ok(id),
            _ => Err(format!("'{first}' is not a result of {fname}")),
        };
    }
    let named = |ops: &[Op]| -> Vec<u32> {
        let mut ids: Vec<u32> = sources
            .locals
            .iter()
            .filter(|(_, &(f, _))| f == function)
            .filter(|(id, _)| sources.names.get(id).is_some_and(|n| n == first))
            .filter(|(_, &(_, i))| {
                let op = module.instructions.get(i).and_then(|x| x.op());
                ops.is_empty() || op.is_some_and(|o| ops.contains(&o))
            })
            .map(|(&id, _)| id)
            .collect();
        ids.sort_unstable();
        ids
    };
    let mut ids = named(&[Op::Variable, Op::FunctionParameter]);
    if ids.is_empty() {
        ids = named(&[]);
    }
    match ids.as_slice() {
        [id] => Ok(*id),
        [] => Err(format!("no local of {fname} is named '{first}' (OpName)")),
        _ => Err(format!(
            "{} locals of {fname} are named '{first}': which one is in scope at a line needs the source's lexical scopes, which tangle does not read",
            ids.len()
        )),
    }
}

/// The type of the value the backend reports for `id`: a variable's or pointer parameter's
/// pointee, else the result's type.
fn value_type(module: &Module, sources: &Sources, id: u32) -> Option<u32> {
    let &(_, i) = sources.locals.get(&id)?;
    let inst = module.instructions.get(i)?;
    let ty = inst.result_type?;
    let t = type_inst(module, sources, ty)?;
    match (inst.op(), t.op()) {
        (Some(Op::Variable | Op::FunctionParameter), Some(Op::TypePointer)) => t.id_operand(1),
        _ => Some(ty),
    }
}

fn type_inst<'m>(
    module: &'m Module,
    sources: &Sources,
    id: u32,
) -> Option<&'m tangle_spirv::module::Instruction> {
    module.instructions.get(*sources.globals.get(&id)?)
}

/// Follows the parts after the first of `name` from type `ty`: the scalar's index in the
/// value and its type.
fn walk<'a>(
    module: &Module,
    sources: &Sources,
    mut ty: u32,
    parts: impl Iterator<Item = &'a str>,
    name: &str,
) -> Result<(usize, Scalar), String> {
    let mut offset = 0usize;
    for part in parts {
        let t = type_inst(module, sources, ty).ok_or("a type the module lacks")?;
        match t.op() {
            Some(Op::TypeVector) => {
                let elem = t.id_operand(0).unwrap_or(0);
                let count = t.literal_operand(1).unwrap_or(0) as usize;
                let i = ["x", "y", "z", "w"]
                    .iter()
                    .position(|c| *c == part)
                    .filter(|&i| i < count)
                    .ok_or_else(|| format!("'{name}': the vector has no component '{part}'"))?;
                offset += i * scalars(module, sources, elem, 0).unwrap_or(1);
                ty = elem;
            }
            Some(Op::TypeStruct) => {
                let members: Vec<u32> = t.operands.iter().filter_map(|o| o.id()).collect();
                let i = (0..members.len())
                    .find(|&m| {
                        sources
                            .member_names
                            .get(&(ty, m as u32))
                            .is_some_and(|n| n == part)
                    })
                    .ok_or_else(|| format!("'{name}': the struct has no member '{part}' (OpMemberName)"))?;
                for &m in members.iter().take(i) {
                    offset += scalars(module, sources, m, 0)
                        .ok_or_else(|| format!("'{name}': a member before '{part}' has a type tangle does not size"))?;
                }
                ty = members.get(i).copied().unwrap_or(0);
            }
            _ => {
                return Err(format!(
                    "'{name}': '{part}' of a value that is not a struct or vector (tangle names no array or matrix elements)"
                ))
            }
        }
    }
    let t = type_inst(module, sources, ty).ok_or("a type the module lacks")?;
    let width = t.literal_operand(0).unwrap_or(0) as u32;
    match t.op() {
        Some(Op::TypeBool) => Ok((offset, (Op::TypeBool, 1, false))),
        Some(Op::TypeInt) => Ok((offset, (Op::TypeInt, width, t.literal_operand(1) == Some(1)))),
        Some(Op::TypeFloat) if t.operands.len() == 1 && matches!(width, 16 | 32 | 64) => {
            Ok((offset, (Op::TypeFloat, width, true)))
        }
        _ => Err(format!(
            "'{name}' is not a scalar tangle decodes (a bool, an integer or a 16-, 32- or 64-bit float): name one component (as upstream's debugger lists them: pos.x)"
        )),
    }
}

/// The scalars a value of type `ty` holds (the executor's slots).
fn scalars(module: &Module, sources: &Sources, ty: u32, depth: usize) -> Option<usize> {
    if depth > MAX_DEPTH {
        return None;
    }
    let t = type_inst(module, sources, ty)?;
    let of = |id: Option<u32>| scalars(module, sources, id?, depth + 1);
    match t.op()? {
        Op::TypeBool | Op::TypeInt | Op::TypeFloat | Op::TypePointer => Some(1),
        Op::TypeVector | Op::TypeMatrix => {
            of(t.id_operand(0))?.checked_mul(t.literal_operand(1)? as usize)
        }
        Op::TypeArray => {
            let len = type_inst(module, sources, t.id_operand(1)?)?;
            let len = (len.op()? == Op::Constant).then(|| len.literal_operand(0))??;
            of(t.id_operand(0))?.checked_mul(usize::try_from(len).ok()?)
        }
        Op::TypeStruct => t
            .operands
            .iter()
            .filter_map(|o| o.id())
            .try_fold(0usize, |a, m| a.checked_add(of(Some(m))?)),
        _ => None,
    }
}

/// Compares the scalar `raw` of type `scalar` with `want`: whether it matches and how it reads.
fn compare((op, width, signed): Scalar, raw: u64, want: LocalValue) -> (bool, String) {
    let bits = if width >= 64 {
        raw
    } else {
        raw & ((1u64 << width) - 1)
    };
    if op == Op::TypeFloat {
        let f = match width {
            16 => f16::from_bits(bits as u16).to_f64(),
            32 => f64::from(f32::from_bits(bits as u32)),
            _ => f64::from_bits(bits),
        };
        // The driver's text, six decimals, read back as upstream reads it.
        let shown = format!("{f:.6}");
        let read: f64 = shown.parse().unwrap_or(f64::NAN);
        let passed = match want {
            LocalValue::Int(i) => read == i as f64,
            LocalValue::Float(w) => read == w,
        };
        return (passed, shown);
    }
    let value: i128 = if signed && width < 64 && bits >> (width - 1) & 1 == 1 {
        i128::from(bits) - (1i128 << width)
    } else if signed {
        i128::from(bits as i64)
    } else {
        i128::from(bits)
    };
    let passed = match want {
        LocalValue::Int(i) => value == i128::from(i),
        LocalValue::Float(w) => value as f64 == w,
    };
    (passed, value.to_string())
}

/// `EXPECT LOCAL`'s result line.
pub fn result(
    line: u32,
    buffer: String,
    name: &str,
    want: LocalValue,
    got: Result<(bool, String), &str>,
) -> ExpectResult {
    let want = match want {
        LocalValue::Int(i) => i.to_string(),
        LocalValue::Float(f) => format!("{f}"),
    };
    let (passed, message) = match got {
        Ok((true, _)) => (true, format!("LOCAL {name} = {want}")),
        Ok((false, shown)) => (false, format!("LOCAL {name} = {want}: it holds {shown}")),
        Err(why) => (false, format!("LOCAL {name} = {want}: {why}")),
    };
    ExpectResult {
        line,
        buffer,
        passed,
        mismatch_count: 0,
        message,
        mismatches: Vec::new(),
    }
}
