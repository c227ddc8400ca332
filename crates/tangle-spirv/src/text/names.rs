//! Friendly names for ids, as `spirv-dis` chooses them (SPIRV-Tools' `FriendlyNameMapper`).
//!
//! One pass over the module in order; the first suggestion for an id wins:
//! * `OpName` strings, sanitized (characters outside `[A-Za-z0-9_]` become `_`, empty becomes `_`);
//! * `OpDecorate ... BuiltIn` on a variable: `gl_GlobalInvocationID`, `SubgroupSize`, ...;
//! * types: `void`, `bool`, `uint`, `int`, `ulong`, `half`, `float`, `v4float`, `mat4v4float`,
//!   `_arr_uint_uint_4`, `_runtimearr_uint`, `_ptr_StorageBuffer_uint`, `_struct_12`, ...;
//! * constants: `true`, `false`, `uint_0`, `int_n1` (a minus sign becomes `n`), `float_0_5`;
//! * every other result id: its number.
//!
//! A name already taken gets `_0`, `_1`, ... appended, and so does a name of digits alone that is
//! the label of another, unnamed id (spirv-dis prints both as `%1`, which assembles to other words). Type names refer to the names their
//! operands have *at that point*, so a forward reference shows as a number (`mat4` + `28`).

use super::print::number::{self, NumberTypes};
use crate::grammar::OperandKind;
use crate::module::{Id, Instruction, Module, Operand};
use spirv::{BuiltIn, Decoration, Op};
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

/// The friendly name of every id of a module.
#[derive(Debug, Default)]
pub struct FriendlyNames {
    names: HashMap<Id, String>,
    used: HashSet<String>,
}

impl FriendlyNames {
    /// Chooses names for the ids of `module`.
    pub fn new(module: &Module) -> Self {
        let mut names = FriendlyNames::default();
        let mut numbers = NumberTypes::default();
        for inst in &module.instructions {
            names.suggest(inst, &numbers);
            numbers.record(inst);
        }
        names.unclash_numeric_names(module.header.bound);
        names
    }

    /// An id with no friendly name prints as its number, so a name of digits alone on another
    /// id (`OpName %2 "1"`) would print both as `%1`, and that text assembles to other words.
    /// spirv-dis keeps the clash; tangle renames the named id as for any duplicate (`%1_0`).
    fn unclash_numeric_names(&mut self, bound: u32) {
        let mut clashes: Vec<(Id, String)> = self
            .names
            .iter()
            .filter(|(&id, name)| {
                name.parse::<Id>().is_ok_and(|other| {
                    other != id
                        && other < bound
                        && *name == &other.to_string()
                        && !self.names.contains_key(&other)
                })
            })
            .map(|(&id, name)| (id, name.clone()))
            .collect();
        clashes.sort();
        for (id, name) in clashes {
            self.names.remove(&id);
            self.save(id, &name);
        }
    }

    /// The name of `id` (without `%`); ids the module never defines are shown as their number.
    pub fn name(&self, id: Id) -> Cow<'_, str> {
        match self.names.get(&id) {
            Some(name) => Cow::Borrowed(name),
            None => Cow::Owned(id.to_string()),
        }
    }

    /// Records a name for `id` unless it already has one, making it unique.
    fn save(&mut self, id: Id, suggested: &str) {
        if self.names.contains_key(&id) {
            return;
        }
        let base = sanitize(suggested);
        let mut name = base.clone();
        let mut index = 0u32;
        while self.used.contains(&name) {
            name = format!("{base}_{index}");
            index += 1;
        }
        self.used.insert(name.clone());
        self.names.insert(id, name);
    }

    fn suggest(&mut self, inst: &Instruction, numbers: &NumberTypes) {
        let id_name = |this: &Self, i: usize| {
            inst.id_operand(i)
                .map_or_else(String::new, |id| this.name(id).into_owned())
        };
        let literal = |i: usize| inst.literal_operand(i).unwrap_or(0);
        let Some(op) = inst.op() else {
            return self.save_default(inst);
        };
        let Some(result) = inst.result_id else {
            match op {
                Op::Name => {
                    if let (Some(target), Some(name)) = (inst.id_operand(0), inst.string_operand(1))
                    {
                        self.save(target, name);
                    }
                }
                // Decorations come after OpName, so a name wins over a built-in's.
                Op::Decorate => {
                    if let (Some(target), Some(Operand::Enum(_, d)), Some(Operand::Enum(_, b))) = (
                        inst.id_operand(0),
                        inst.operands.get(1),
                        inst.operands.get(2),
                    ) {
                        if *d == Decoration::BuiltIn as u32 {
                            if let Some(name) = BuiltIn::from_u32(*b).and_then(builtin_name) {
                                self.save(target, name);
                            }
                        }
                    }
                }
                _ => {}
            }
            return;
        };
        let name: String = match op {
            Op::TypeVoid => "void".into(),
            Op::TypeBool => "bool".into(),
            Op::TypeInt => {
                let (root, mut sign) = match literal(0) {
                    8 => ("char".to_string(), ""),
                    16 => ("short".to_string(), ""),
                    32 => ("int".to_string(), ""),
                    64 => ("long".to_string(), ""),
                    w => (w.to_string(), "i"),
                };
                if literal(1) == 0 {
                    sign = "u";
                }
                format!("{sign}{root}")
            }
            Op::TypeFloat => match (literal(0), inst.operands.get(1)) {
                (_, Some(Operand::Enum(_, e))) => match *e {
                    0 => "bfloat16".into(),
                    4214 => "fp8e4m3".into(),
                    4215 => "fp8e5m2".into(),
                    _ => format!("fp{}", literal(0)),
                },
                (16, _) => "half".into(),
                (32, _) => "float".into(),
                (64, _) => "double".into(),
                (w, _) => format!("fp{w}"),
            },
            Op::TypeVector => format!("v{}{}", literal(1), id_name(self, 0)),
            Op::TypeMatrix => format!("mat{}{}", literal(1), id_name(self, 0)),
            Op::TypeArray => format!("_arr_{}_{}", id_name(self, 0), id_name(self, 1)),
            Op::TypeRuntimeArray => format!("_runtimearr_{}", id_name(self, 0)),
            Op::TypePointer => format!(
                "_ptr_{}_{}",
                enum_name(OperandKind::StorageClass, literal(0)),
                id_name(self, 1)
            ),
            Op::TypeUntypedPointerKHR => {
                format!("_ptr_{}", enum_name(OperandKind::StorageClass, literal(0)))
            }
            Op::TypePipe => format!(
                "Pipe{}",
                enum_name(OperandKind::AccessQualifier, literal(0))
            ),
            Op::TypeEvent => "Event".into(),
            Op::TypeDeviceEvent => "DeviceEvent".into(),
            Op::TypeReserveId => "ReserveId".into(),
            Op::TypeQueue => "Queue".into(),
            Op::TypeOpaque => format!(
                "Opaque_{}",
                sanitize(inst.string_operand(0).unwrap_or_default())
            ),
            Op::TypePipeStorage => "PipeStorage".into(),
            Op::TypeNamedBarrier => "NamedBarrier".into(),
            // Structs only say what they are, with the raw id.
            Op::TypeStruct => format!("_struct_{result}"),
            Op::ConstantTrue => "true".into(),
            Op::ConstantFalse => "false".into(),
            Op::Constant => {
                let ty = inst.result_type.unwrap_or(0);
                let value = numbers
                    .of_type(ty)
                    .zip(inst.operands.first())
                    .and_then(|(t, v)| number::format(t, v))
                    .unwrap_or_default();
                // 'n' signifies negative; other invalid characters become '_' when sanitized.
                format!("{}_{}", self.name(ty), value.replace('-', "n"))
            }
            _ => return self.save_default(inst),
        };
        self.save(result, &name);
    }

    /// Any other result id is named by its number, so that an `OpName "7"` elsewhere cannot
    /// collide with it.
    fn save_default(&mut self, inst: &Instruction) {
        if let Some(id) = inst.result_id {
            self.save(id, &id.to_string());
        }
    }
}

/// The name of an enumerant, or `StorageClass<n>` for a value the grammar lacks.
fn enum_name(kind: OperandKind, value: u64) -> String {
    u32::try_from(value)
        .ok()
        .and_then(|v| kind.enumerant(v))
        .map_or_else(|| format!("StorageClass{value}"), |e| e.name.to_string())
}

/// Replaces every character outside `[A-Za-z0-9_]` by `_`; the empty name becomes `_`.
fn sanitize(suggested: &str) -> String {
    if suggested.is_empty() {
        return "_".into();
    }
    // SPIRV-Tools replaces each byte, so a multi-byte UTF-8 character gives several `_`.
    suggested
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b == b'_' {
                b as char
            } else {
                '_'
            }
        })
        .collect()
}

/// The GLSL-style names SPIRV-Tools gives to built-in variables.
fn builtin_name(b: BuiltIn) -> Option<&'static str> {
    use BuiltIn as B;
    Some(match b {
        B::Position => "gl_Position",
        B::PointSize => "gl_PointSize",
        B::ClipDistance => "gl_ClipDistance",
        B::CullDistance => "gl_CullDistance",
        B::VertexId => "gl_VertexID",
        B::InstanceId => "gl_InstanceID",
        B::PrimitiveId => "gl_PrimitiveID",
        B::InvocationId => "gl_InvocationID",
        B::Layer => "gl_Layer",
        B::ViewportIndex => "gl_ViewportIndex",
        B::TessLevelOuter => "gl_TessLevelOuter",
        B::TessLevelInner => "gl_TessLevelInner",
        B::TessCoord => "gl_TessCoord",
        B::PatchVertices => "gl_PatchVertices",
        B::FragCoord => "gl_FragCoord",
        B::PointCoord => "gl_PointCoord",
        B::FrontFacing => "gl_FrontFacing",
        B::SampleId => "gl_SampleID",
        B::SamplePosition => "gl_SamplePosition",
        B::SampleMask => "gl_SampleMask",
        B::FragDepth => "gl_FragDepth",
        B::HelperInvocation => "gl_HelperInvocation",
        B::NumWorkgroups => "gl_NumWorkGroups",
        B::WorkgroupSize => "gl_WorkGroupSize",
        B::WorkgroupId => "gl_WorkGroupID",
        B::LocalInvocationId => "gl_LocalInvocationID",
        B::GlobalInvocationId => "gl_GlobalInvocationID",
        B::LocalInvocationIndex => "gl_LocalInvocationIndex",
        B::WorkDim => "WorkDim",
        B::GlobalSize => "GlobalSize",
        B::EnqueuedWorkgroupSize => "EnqueuedWorkgroupSize",
        B::GlobalOffset => "GlobalOffset",
        B::GlobalLinearId => "GlobalLinearId",
        B::SubgroupSize => "SubgroupSize",
        B::SubgroupMaxSize => "SubgroupMaxSize",
        B::NumSubgroups => "NumSubgroups",
        B::NumEnqueuedSubgroups => "NumEnqueuedSubgroups",
        B::SubgroupId => "SubgroupId",
        B::SubgroupLocalInvocationId => "SubgroupLocalInvocationId",
        B::VertexIndex => "gl_VertexIndex",
        B::InstanceIndex => "gl_InstanceIndex",
        B::SubgroupEqMask => "SubgroupEqMaskKHR",
        B::SubgroupGeMask => "SubgroupGeMaskKHR",
        B::SubgroupGtMask => "SubgroupGtMaskKHR",
        B::SubgroupLeMask => "SubgroupLeMaskKHR",
        B::SubgroupLtMask => "SubgroupLtMaskKHR",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicates_get_numbered_suffixes() {
        let mut names = FriendlyNames::default();
        names.save(1, "1");
        names.save(2, "1");
        names.save(3, "a b");
        names.save(4, "a_b");
        names.save(5, "");
        names.save(3, "ignored");
        assert_eq!(names.name(2), "1_0");
        assert_eq!(names.name(3), "a_b");
        assert_eq!(names.name(4), "a_b_0");
        assert_eq!(names.name(5), "_");
        assert_eq!(names.name(9), "9");
    }
}
