//! What the assembler remembers between instructions: the number of each `%name`, the numeric
//! type of each type id and value id (for `OpConstant` and `OpSwitch` literals), and the set each
//! `OpExtInstImport` imported (for `OpExtInst` instruction names).

use super::number::{FloatEncoding, NumberType};
use crate::grammar::ExtSet;
use crate::module::Id;
use std::collections::HashMap;

/// How `spirv-as` classifies a type id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeClass {
    /// An integer or floating-point scalar: its literals have this type.
    Scalar(NumberType),
    /// Any other type.
    Other,
}

/// The symbol tables of one assembly.
#[derive(Debug)]
pub struct Symbols<'a> {
    ids: HashMap<&'a str, Id>,
    next_id: Id,
    types: HashMap<Id, TypeClass>,
    value_types: HashMap<Id, Id>,
    ext_sets: HashMap<Id, ExtSet>,
}

impl Default for Symbols<'_> {
    fn default() -> Self {
        Symbols {
            ids: HashMap::new(),
            next_id: 1,
            types: HashMap::new(),
            value_types: HashMap::new(),
            ext_sets: HashMap::new(),
        }
    }
}

impl<'a> Symbols<'a> {
    /// The text name of every id.
    pub fn names(&self) -> HashMap<Id, String> {
        self.ids
            .iter()
            .map(|(name, id)| (*id, (*name).to_string()))
            .collect()
    }

    /// The number of `%name` (without the `%`): names are numbered 1, 2, ... in order of first
    /// use, numeric names included, as `spirv-as` does without `--preserve-numeric-ids`.
    pub fn id(&mut self, name: &'a str) -> Result<Id, String> {
        if let Some(id) = self.ids.get(name) {
            return Ok(*id);
        }
        let id = self.next_id;
        self.next_id = id.checked_add(1).ok_or("too many ids")?;
        self.ids.insert(name, id);
        Ok(id)
    }

    /// One more than the largest id handed out.
    pub fn bound(&self) -> u32 {
        self.next_id
    }

    /// Records a type definition; a second definition of the same id is an error in `spirv-as`.
    pub fn define_type(&mut self, id: Id, class: TypeClass) -> Result<(), String> {
        match self.types.entry(id) {
            std::collections::hash_map::Entry::Occupied(_) => {
                Err(format!("id {id} has already been used to define a type"))
            }
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(class);
                Ok(())
            }
        }
    }

    /// Records the type of a value; the first record wins (`spirv-as` ignores redefinitions).
    pub fn define_value(&mut self, id: Id, ty: Id) {
        self.value_types.entry(id).or_insert(ty);
    }

    /// The class of type `ty`, if it was defined.
    pub fn type_class(&self, ty: Id) -> Option<TypeClass> {
        self.types.get(&ty).copied()
    }

    /// The class of the type of value `id`, if both are known.
    pub fn value_class(&self, id: Id) -> Option<TypeClass> {
        self.value_types
            .get(&id)
            .and_then(|ty| self.type_class(*ty))
    }

    /// Records the set an `OpExtInstImport` result imports.
    pub fn define_ext_set(&mut self, id: Id, set: ExtSet) {
        self.ext_sets.insert(id, set);
    }

    /// The set imported as `id`.
    pub fn ext_set(&self, id: Id) -> Option<ExtSet> {
        self.ext_sets.get(&id).copied()
    }
}

/// The class of the type an `OpTypeInt`/`OpTypeFloat`/other type instruction defines, from its
/// operand words after the result id.
pub fn type_class(opcode: u16, operands: &[u32]) -> TypeClass {
    match (opcode, operands) {
        // OpTypeInt Width Signedness
        (21, [width, signedness]) => TypeClass::Scalar(NumberType::Int {
            width: *width,
            signed: *signedness != 0,
        }),
        // OpTypeFloat Width [FP Encoding]
        (22, [width, rest @ ..]) if rest.len() <= 1 => {
            let encoding = match rest.first() {
                None => FloatEncoding::Ieee,
                Some(0) => FloatEncoding::BFloat16,
                Some(4214) => FloatEncoding::Float8E4M3,
                Some(4215) => FloatEncoding::Float8E5M2,
                Some(e) => FloatEncoding::Other(*e),
            };
            TypeClass::Scalar(NumberType::Float {
                width: *width,
                encoding,
            })
        }
        _ => TypeClass::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_numbered_by_first_use() {
        let mut s = Symbols::default();
        assert_eq!(s.id("10"), Ok(1));
        assert_eq!(s.id("main"), Ok(2));
        assert_eq!(s.id("10"), Ok(1));
        assert_eq!(s.id("1"), Ok(3));
        assert_eq!(s.bound(), 4);
    }

    #[test]
    fn types_and_values() {
        let mut s = Symbols::default();
        let int8 = TypeClass::Scalar(NumberType::Int {
            width: 8,
            signed: true,
        });
        assert_eq!(type_class(21, &[8, 1]), int8);
        assert_eq!(s.define_type(1, int8), Ok(()));
        assert!(s.define_type(1, TypeClass::Other).is_err());
        s.define_value(2, 1);
        s.define_value(2, 5);
        assert_eq!(s.value_class(2), Some(int8));
        assert_eq!(
            type_class(22, &[16, 0]),
            TypeClass::Scalar(NumberType::Float {
                width: 16,
                encoding: FloatEncoding::BFloat16
            })
        );
        assert!(matches!(
            crate::grammar::ext_set("GLSL.std.450"),
            Some(ExtSet::Known(_))
        ));
        assert!(matches!(
            crate::grammar::ext_set("NonSemantic.Foo"),
            Some(ExtSet::Opaque)
        ));
        assert!(crate::grammar::ext_set("Foo.bar").is_none());
    }
}
