//! The decorations a block's layout needs before it can be checked (SPIRV-Tools
//! `CheckDecorationsOfBuffers`' first part): Offset on every member of the block and of structs
//! in it, ArrayStride on arrays, MatrixStride and RowMajor/ColMajor on matrices.

use super::*;

impl Layout<'_> {
    /// SPIRV-Tools' checks that run before the layout: Offset on every member of the block and
    /// of structs in it (through arrays), ArrayStride on array members and MatrixStride and
    /// RowMajor/ColMajor on matrix members (of the block and of structs directly in it). Returns
    /// whether they all hold. Offsets and ArrayStrides on the block's own members are the
    /// `vulkan` family's findings in Vulkan environments; they are not reported twice.
    pub(super) fn required_decorations(&mut self, block: Id) -> bool {
        if let Some(known) = self.required.get(&block) {
            return *known;
        }
        let ok = self.check_required_decorations(block);
        self.required.insert(block, ok);
        ok
    }

    pub(super) fn check_required_decorations(&mut self, block: Id) -> bool {
        let f = self.cx.facts;
        let own_members_reported_elsewhere = self.cx.vulkan();
        if let Some((st, member)) = missing_offset(f, block) {
            if !(own_members_reported_elsewhere && st == block) {
                self.report(st, BlockLayoutError::MissingOffset { block: st, member });
            }
            return false;
        }
        let mut ok = true;
        let mut stack = vec![(block, 0u32)];
        let mut seen = IdSet::default();
        while let Some((st, depth)) = stack.pop() {
            if depth > MAX_DEPTH || !seen.insert(st) {
                continue;
            }
            let Some(Type::Struct { members }) = f.ty(st) else {
                continue;
            };
            for (member, ty) in members.iter().enumerate() {
                let has = |d: D| {
                    f.has_decoration(*ty, d) || member_decoration(f, st, member, d).is_some()
                };
                if matches!(
                    f.ty(*ty),
                    Some(Type::Array { .. } | Type::RuntimeArray { .. })
                ) && !has(D::ArrayStride)
                {
                    ok = false;
                    if !(own_members_reported_elsewhere && st == block) {
                        self.report(
                            st,
                            BlockLayoutError::MissingArrayStride { block: st, member },
                        );
                    }
                }
                // Matrix decorations also apply to arrays of matrices.
                let mut inner = *ty;
                let mut levels = 0;
                while let Some(Type::Array { element, .. } | Type::RuntimeArray { element }) =
                    f.ty(inner)
                {
                    inner = *element;
                    levels += 1;
                    if levels > MAX_DEPTH {
                        break;
                    }
                }
                if matches!(f.ty(inner), Some(Type::Matrix { .. })) {
                    let has = |d: D| {
                        f.has_decoration(inner, d) || member_decoration(f, st, member, d).is_some()
                    };
                    if !has(D::MatrixStride) {
                        ok = false;
                        self.report(
                            st,
                            BlockLayoutError::MissingMatrixStride { block: st, member },
                        );
                    } else if !has(D::RowMajor) && !has(D::ColMajor) {
                        ok = false;
                        self.report(
                            st,
                            BlockLayoutError::MissingMatrixOrder { block: st, member },
                        );
                    }
                }
                // Only structs that are members themselves (not array elements) are searched.
                if matches!(f.ty(*ty), Some(Type::Struct { .. })) {
                    stack.push((*ty, depth + 1));
                }
            }
        }
        ok
    }
}
