//! `STRUCT name [STRIDE n]` + `<type> <member> [OFFSET b] [ARRAY_STRIDE b] [MATRIX_STRIDE b]`
//! lines + `END`: buffer elements made of several members (undocumented in amber_script.md;
//! used by amber's `tests/cases/*struct*.amber`).
//!
//! Members are placed by the GLSL block rules of the buffer's layout, as a shader declaring the
//! same struct expects: a member starts at the next multiple of its alignment (or at its `OFFSET`);
//! a scalar aligns to its size, a 2-vector to twice that, a 3- or 4-vector to four times (a vec3
//! occupies 3 components, so a scalar may follow in its fourth slot); a matrix is an array of
//! column vectors (`MATRIX_STRIDE` apart); under std140 matrices and structs align to 16. The
//! struct's size is its end rounded up to its alignment, or `STRIDE`.
//! Members may be earlier structs; array members are not supported.

use super::{uint, Parser};
use crate::error::{AmberError, Location};
use crate::layout::{round_up, ElementLayout, Layout};
use crate::types::{DataType, Scalar};

/// Components a struct may have in all (nested structs multiply).
const MAX_COMPONENTS: usize = 4096;

/// A struct laid out under one of the two layouts.
#[derive(Debug, Clone, Default)]
pub(super) struct StructLayout {
    align: usize,
    size: usize,
    components: Vec<(usize, Scalar)>,
}

/// A declared struct: its layout under std140 and under std430.
#[derive(Debug, Clone, Default)]
pub(super) struct StructDecl {
    std140: StructLayout,
    std430: StructLayout,
}

impl StructDecl {
    /// The element layout of a buffer of this struct.
    pub(super) fn element(&self, layout: Layout) -> ElementLayout {
        let l = match layout {
            Layout::Std140 => &self.std140,
            Layout::Std430 => &self.std430,
        };
        ElementLayout {
            scalars: l.components.iter().map(|c| c.1).collect(),
            stride: l.size,
            offsets: l.components.iter().map(|c| c.0).collect(),
        }
    }
}

/// Alignment, size and components (offsets from the member start) of a non-struct member.
fn data_member(ty: &DataType, std140: bool, matrix_stride: Option<usize>) -> StructLayout {
    let s = ty.scalar.size();
    let rows = usize::from(ty.rows);
    let vector_align = if rows == 3 { 4 * s } else { rows * s };
    if !ty.is_matrix() {
        let components = (0..rows).map(|r| (r * s, ty.scalar)).collect();
        return StructLayout {
            align: vector_align,
            size: rows * s,
            components,
        };
    }
    let align = if std140 {
        round_up(vector_align, 16)
    } else {
        vector_align
    };
    let column = matrix_stride.unwrap_or(align);
    let components = (0..usize::from(ty.columns))
        .flat_map(|c| (0..rows).map(move |r| (c * column + r * s, ty.scalar)))
        .collect();
    StructLayout {
        align,
        size: column * usize::from(ty.columns),
        components,
    }
}

impl Parser<'_> {
    pub(super) fn structure(&mut self, at: Location) -> Result<(), AmberError> {
        let name = self.cursor.expect("a struct name")?;
        let mut stride = None;
        if self.cursor.eat("STRIDE") {
            stride = Some(uint::<usize>(self.cursor.expect("a stride")?, "STRIDE")?);
        }
        self.cursor.end_of_statement()?;
        let mut decl = StructDecl::default();
        let mut members = 0;
        loop {
            if !self.cursor.next_statement() {
                return Err(AmberError::new(at, "STRUCT has no END"));
            }
            let Some(ty) = self.cursor.next() else {
                continue;
            };
            if ty.text == "END" {
                self.cursor.end_of_statement()?;
                break;
            }
            self.cursor.expect("a member name")?;
            let (mut offset, mut matrix_stride) = (None, None);
            while let Some(tok) = self.cursor.next() {
                let value: usize = uint(self.cursor.expect("a byte count")?, tok.text)?;
                match tok.text {
                    "OFFSET" => offset = Some(value),
                    "MATRIX_STRIDE" => matrix_stride = Some(value),
                    "ARRAY_STRIDE" => {
                        return Err(AmberError::unsupported(
                            tok.at,
                            "STRUCT array members are outside tangle's subset",
                        ))
                    }
                    t => {
                        return Err(AmberError::new(
                            tok.at,
                            format!("unexpected '{t}' in a STRUCT member"),
                        ))
                    }
                }
            }
            let (m140, m430) = match (DataType::parse(ty.text), self.structs.get(ty.text)) {
                (Some(d), _) if d.array || d.packed => {
                    return Err(AmberError::unsupported(
                        ty.at,
                        "STRUCT array members are outside tangle's subset",
                    ))
                }
                (Some(d), _) => (
                    data_member(&d, true, matrix_stride),
                    data_member(&d, false, matrix_stride),
                ),
                (None, Some(s)) => (s.std140.clone(), s.std430.clone()),
                (None, None) => {
                    return Err(AmberError::new(
                        ty.at,
                        format!("unknown member type '{}'", ty.text),
                    ))
                }
            };
            for (l, m) in [(&mut decl.std140, m140), (&mut decl.std430, m430)] {
                let start = offset.unwrap_or_else(|| round_up(l.size, m.align));
                if l.components.len() + m.components.len() > MAX_COMPONENTS {
                    return Err(AmberError::new(
                        ty.at,
                        format!("the struct has more than {MAX_COMPONENTS} components"),
                    ));
                }
                l.components.extend(
                    m.components
                        .iter()
                        .map(|(o, s)| (start.saturating_add(*o), *s)),
                );
                l.size = l.size.max(start.saturating_add(m.size));
                l.align = l.align.max(m.align);
            }
            members += 1;
        }
        if members == 0 {
            return Err(AmberError::new(at, "the struct has no members"));
        }
        for (l, std140) in [(&mut decl.std140, true), (&mut decl.std430, false)] {
            if std140 {
                l.align = round_up(l.align, 16);
            }
            if let Some(n) = stride.filter(|n| *n < l.size) {
                return Err(AmberError::new(
                    at,
                    format!("STRIDE {n} is smaller than the members ({} bytes)", l.size),
                ));
            }
            l.size = stride.unwrap_or_else(|| round_up(l.size, l.align));
            if l.size == 0 {
                return Err(AmberError::new(at, "the struct has size 0"));
            }
        }
        if self.structs.insert(name.text.to_string(), decl).is_some() {
            return Err(AmberError::new(
                name.at,
                format!("struct '{}' is declared twice", name.text),
            ));
        }
        Ok(())
    }
}
