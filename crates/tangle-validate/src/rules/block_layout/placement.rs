//! Where explicit layout may appear (VUID-StandaloneSpirv-None-10684): a variable in a storage
//! class without explicit layout must not have a type that carries explicit layout decorations.
//!
//! Mirrors SPIRV-Tools 2025.5 as observed: in Vulkan environments, for modules of SPIR-V 1.5 or
//! later, an `OpVariable` in the Function or Private storage class, or in Workgroup unless the
//! module declares `WorkgroupMemoryExplicitLayoutKHR`, is rejected when its pointee type, or any
//! struct member or array element type in it (not through pointers), is decorated with Offset,
//! ArrayStride, MatrixStride, Block or BufferBlock (on the type or on one of its members); a
//! pointer type's ArrayStride does not count.
//! Input, Output and the buffer storage classes are not checked. Untyped variables are not
//! either: Vulkan rejects untyped pointers in these storage classes before this rule applies.

use super::*;

/// The decorations that give a type an explicit layout.
const EXPLICIT_LAYOUT: [D; 5] = [
    D::Offset,
    D::ArrayStride,
    D::MatrixStride,
    D::Block,
    D::BufferBlock,
];

/// Reports every variable whose storage class does not allow explicit layout but whose type
/// has it.
pub(super) fn check(cx: &Ctx, sink: &mut Sink) {
    if !cx.vulkan() || cx.module.header.version < (1, 5) {
        return;
    }
    let f = cx.facts;
    let workgroup_layout = f.has_capability(C::WorkgroupMemoryExplicitLayoutKHR);
    for (index, inst) in cx.module.instructions.iter().enumerate() {
        if inst.op() != Some(Op::Variable) {
            continue;
        }
        let Some(Type::Pointer { storage, pointee }) = inst.result_type.and_then(|t| f.ty(t))
        else {
            continue;
        };
        let forbidden = *storage == SC::Function as u32
            || *storage == SC::Private as u32
            || (*storage == SC::Workgroup as u32 && !workgroup_layout);
        if !forbidden {
            continue;
        }
        if let Some((ty, decoration)) = explicit_layout(f, *pointee) {
            sink.error(
                Some(index),
                BlockLayoutError::ExplicitLayoutInStorageClass {
                    storage: *storage,
                    ty,
                    decoration,
                },
            );
        }
    }
}

/// The first type in `ty` (itself, its struct members and array elements, depth-first) that
/// carries an explicit layout decoration, with that decoration.
fn explicit_layout(f: &Facts, ty: Id) -> Option<(Id, u32)> {
    let mut stack = vec![(ty, 0u32)];
    let mut seen = IdSet::default();
    while let Some((t, depth)) = stack.pop() {
        if depth > MAX_DEPTH || !seen.insert(t) {
            continue;
        }
        // A pointer's ArrayStride is the stride of OpPtrAccessChain through it, not a layout of
        // the memory the variable holds (SPIRV-Tools accepts it).
        if matches!(f.ty(t), Some(Type::Pointer { .. })) {
            continue;
        }
        let found = f.decorations.get(&t).and_then(|ds| {
            ds.iter()
                .map(|x| x.decoration)
                .find(|d| EXPLICIT_LAYOUT.iter().any(|e| *e as u32 == *d))
        });
        if let Some(decoration) = found {
            return Some((t, decoration));
        }
        match f.ty(t) {
            Some(Type::Struct { members }) => {
                stack.extend(members.iter().rev().map(|m| (*m, depth + 1)))
            }
            Some(Type::Array { element, .. } | Type::RuntimeArray { element }) => {
                stack.push((*element, depth + 1))
            }
            _ => {}
        }
    }
    None
}
