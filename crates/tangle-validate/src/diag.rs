//! Diagnostics: which rule failed ([`ValidationError`], one typed enum per family), where
//! ([`InstRef`]: instruction index, word offset, and `line:col` for text input), and how bad
//! ([`Severity`]), plus rendering with the instruction printed as text.

use crate::rules::{
    arith::ArithError, block_layout::BlockLayoutError, capabilities::CapabilityError,
    cfg::CfgError, composite::CompositeError, coopmat::CoopmatError, dot::DotError,
    function::FunctionError, glsl::GlslError, group::GroupError, ids::IdsError,
    interface::InterfaceError, layout::LayoutError, logical::LogicalError, memory::MemoryError,
    scope::AtomicError, types::TypeError, vulkan::VulkanError,
};
use crate::vuid::Vuid;
use std::borrow::Cow;
use std::collections::HashMap;
use tangle_spirv::text::{disassemble, DisassembleOptions, FriendlyNames};
use tangle_spirv::{Id, Module, Operand, SourceMap};

/// A failed rule, by family.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ValidationError {
    #[error(transparent)]
    Layout(#[from] LayoutError),
    #[error(transparent)]
    Ids(#[from] IdsError),
    #[error(transparent)]
    Capability(#[from] CapabilityError),
    #[error(transparent)]
    Interface(#[from] InterfaceError),
    #[error(transparent)]
    Types(#[from] TypeError),
    #[error(transparent)]
    Memory(#[from] MemoryError),
    #[error(transparent)]
    Arith(#[from] ArithError),
    #[error(transparent)]
    BlockLayout(#[from] BlockLayoutError),
    #[error(transparent)]
    Glsl(#[from] GlslError),
    #[error(transparent)]
    Vulkan(#[from] VulkanError),
    #[error(transparent)]
    Atomic(#[from] AtomicError),
    #[error(transparent)]
    Logical(#[from] LogicalError),
    #[error(transparent)]
    Function(#[from] FunctionError),
    #[error(transparent)]
    Composite(#[from] CompositeError),
    #[error(transparent)]
    Cfg(#[from] CfgError),
    #[error(transparent)]
    Group(#[from] GroupError),
    #[error(transparent)]
    Dot(#[from] DotError),
    #[error(transparent)]
    Coopmat(#[from] CoopmatError),
}

impl ValidationError {
    /// The family name, as used in case files (`Group`, `Coopmat` ...).
    pub fn family(&self) -> &'static str {
        match self {
            ValidationError::Layout(_) => "Layout",
            ValidationError::Ids(_) => "Ids",
            ValidationError::Capability(_) => "Capability",
            ValidationError::Interface(_) => "Interface",
            ValidationError::Types(_) => "Types",
            ValidationError::Memory(_) => "Memory",
            ValidationError::Arith(_) => "Arith",
            ValidationError::BlockLayout(_) => "BlockLayout",
            ValidationError::Glsl(_) => "Glsl",
            ValidationError::Vulkan(_) => "Vulkan",
            ValidationError::Atomic(_) => "Atomic",
            ValidationError::Logical(_) => "Logical",
            ValidationError::Function(_) => "Function",
            ValidationError::Composite(_) => "Composite",
            ValidationError::Cfg(_) => "Cfg",
            ValidationError::Group(_) => "Group",
            ValidationError::Dot(_) => "Dot",
            ValidationError::Coopmat(_) => "Coopmat",
        }
    }

    /// `Family::Variant`, e.g. `Group::RotateDeltaNotUnsigned` (the name case files expect).
    pub fn rule(&self) -> String {
        // The variant name is the `Debug` text up to its fields.
        let debug = match self {
            ValidationError::Layout(e) => format!("{e:?}"),
            ValidationError::Ids(e) => format!("{e:?}"),
            ValidationError::Capability(e) => format!("{e:?}"),
            ValidationError::Interface(e) => format!("{e:?}"),
            ValidationError::Types(e) => format!("{e:?}"),
            ValidationError::Memory(e) => format!("{e:?}"),
            ValidationError::Arith(e) => format!("{e:?}"),
            ValidationError::BlockLayout(e) => format!("{e:?}"),
            ValidationError::Glsl(e) => format!("{e:?}"),
            ValidationError::Vulkan(e) => format!("{e:?}"),
            ValidationError::Atomic(e) => format!("{e:?}"),
            ValidationError::Logical(e) => format!("{e:?}"),
            ValidationError::Function(e) => format!("{e:?}"),
            ValidationError::Composite(e) => format!("{e:?}"),
            ValidationError::Cfg(e) => format!("{e:?}"),
            ValidationError::Group(e) => format!("{e:?}"),
            ValidationError::Dot(e) => format!("{e:?}"),
            ValidationError::Coopmat(e) => format!("{e:?}"),
        };
        let variant = debug.split(['(', ' ', '{']).next().unwrap_or_default();
        format!("{}::{variant}", self.family())
    }

    /// The Vulkan VUID of the rule, for environment rules.
    pub fn vuid(&self) -> Option<Vuid> {
        match self {
            ValidationError::Capability(e) => e.vuid(),
            ValidationError::Memory(e) => e.vuid(),
            ValidationError::Atomic(e) => e.vuid(),
            ValidationError::Group(e) => e.vuid(),
            ValidationError::Coopmat(e) => e.vuid(),
            ValidationError::BlockLayout(e) => e.vuid(),
            ValidationError::Arith(e) => e.vuid(),
            ValidationError::Vulkan(e) => e.vuid(),
            ValidationError::Interface(e) => e.vuid(),
            ValidationError::Layout(_)
            | ValidationError::Ids(_)
            | ValidationError::Types(_)
            | ValidationError::Glsl(_)
            | ValidationError::Logical(_)
            | ValidationError::Function(_)
            | ValidationError::Composite(_)
            | ValidationError::Cfg(_)
            | ValidationError::Dot(_) => None,
        }
    }
}

/// How bad a finding is. Both make the module invalid; `Warning` mirrors rules the reference
/// validator reports as `SPV_WARNING` (its CLI fails on them too).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

/// Where a diagnostic points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InstRef {
    /// Index into [`Module::instructions`]; `None` for module-wide findings (no instruction).
    pub index: Option<usize>,
    /// Word offset of the instruction in the binary encoding (the header is words 0..5).
    pub word_offset: usize,
}

/// One finding.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    pub error: ValidationError,
    pub at: InstRef,
    pub severity: Severity,
}

impl Diagnostic {
    /// Renders the diagnostic as
    /// `error[Group::RotateDeltaNotUnsigned]: MESSAGE` / `  --> file:line:col` / `   | INSTRUCTION` /
    /// `   = VUID-...`. Without a source map the location is the instruction index and word offset.
    /// Ids are shown by name (see [`IdNames`]); [`render_all`] names them once for many.
    pub fn render(&self, module: &Module, file: &str, source: Option<&SourceMap>) -> String {
        self.render_with(module, file, source, &IdNames::new(module, source))
    }

    /// [`Diagnostic::render`] with names chosen once for the module.
    pub fn render_with(
        &self,
        module: &Module,
        file: &str,
        source: Option<&SourceMap>,
        names: &IdNames,
    ) -> String {
        let level = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let mut out = format!("{level}[{}]: {}\n", self.error.rule(), self.error);
        let position = self
            .at
            .index
            .and_then(|i| source.and_then(|s| s.positions.get(i)));
        match (self.at.index, position) {
            (_, Some((line, col))) => out.push_str(&format!("  --> {file}:{line}:{col}\n")),
            (Some(i), None) => out.push_str(&format!(
                "  --> {file}: instruction {i}, word offset {}\n",
                self.at.word_offset
            )),
            (None, None) => out.push_str(&format!("  --> {file}\n")),
        }
        if let Some(inst) = self.at.index.and_then(|i| module.instructions.get(i)) {
            out.push_str(&format!("   | {}\n", instruction_text(module, inst)));
        }
        let mut out = names.apply(&out);
        if let Some(vuid) = self.error.vuid() {
            out.push_str(&format!("   = {vuid}\n"));
        }
        out
    }
}

/// Renders every diagnostic (see [`Diagnostic::render`]), naming the module's ids once.
pub fn render_all(
    diagnostics: &[Diagnostic],
    module: &Module,
    file: &str,
    source: Option<&SourceMap>,
) -> String {
    let names = IdNames::new(module, source);
    diagnostics
        .iter()
        .map(|d| d.render_with(module, file, source, &names))
        .collect()
}

/// How rendered diagnostics show ids: by the names the text the module was assembled from gave
/// them (`%buf`), or for a binary by the friendly names `spirv-dis` would print
/// (`%_ptr_StorageBuffer_uint`, an OpName, or the number).
pub enum IdNames<'a> {
    Source(&'a HashMap<Id, String>),
    Friendly(FriendlyNames),
}

impl<'a> IdNames<'a> {
    /// The names for `module`, from its source text where there is one.
    pub fn new(module: &Module, source: Option<&'a SourceMap>) -> IdNames<'a> {
        match source {
            Some(map) if !map.names.is_empty() => IdNames::Source(&map.names),
            _ => IdNames::Friendly(FriendlyNames::new(module)),
        }
    }

    fn name(&self, id: Id) -> Cow<'_, str> {
        match self {
            IdNames::Source(names) => names
                .get(&id)
                .map_or_else(|| Cow::Owned(id.to_string()), |n| Cow::Borrowed(n.as_str())),
            IdNames::Friendly(names) => names.name(id),
        }
    }

    /// `text` with every `%<number>` replaced by `%<name>`.
    pub fn apply(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(at) = rest.find('%') {
            out.push_str(&rest[..=at]);
            rest = &rest[at + 1..];
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            match rest[..digits].parse::<Id>() {
                Ok(id) => out.push_str(&self.name(id)),
                Err(_) => out.push_str(&rest[..digits]),
            }
            rest = &rest[digits..];
        }
        out.push_str(rest);
        out
    }
}

/// One instruction as assembly text: the disassembler's output for a one-instruction module, or
/// a plain `%id = OpName %type operands` form while the disassembler prints nothing.
pub fn instruction_text(module: &Module, inst: &tangle_spirv::Instruction) -> String {
    let one = Module {
        header: module.header,
        instructions: vec![inst.clone()],
    };
    let options = DisassembleOptions {
        raw_id: true,
        header: false,
        indent: false,
    };
    let text = disassemble(&one, &options);
    let text = text.trim();
    if !text.is_empty() {
        return text.to_string();
    }
    let mut out = String::new();
    if let Some(r) = inst.result_id {
        out.push_str(&format!("%{r} = "));
    }
    out.push_str(&inst.name());
    if let Some(t) = inst.result_type {
        out.push_str(&format!(" %{t}"));
    }
    for op in &inst.operands {
        match op {
            Operand::Id(id) => out.push_str(&format!(" %{id}")),
            Operand::Int(v) => out.push_str(&format!(" {v}")),
            Operand::Wide(v) => out.push_str(&format!(" {v}")),
            Operand::String(s) => out.push_str(&format!(" {s:?}")),
            Operand::Enum(kind, v) => match kind.enumerant(*v) {
                Some(e) => out.push_str(&format!(" {}", e.name)),
                None => out.push_str(&format!(" {v}")),
            },
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_names_replace_numbers_only_after_a_percent_sign() {
        let names: HashMap<Id, String> = [(3, "buf".to_string()), (12, "x".to_string())].into();
        let n = IdNames::Source(&names);
        assert_eq!(
            n.apply("%12 = OpLoad %3 %7 at 12% of %"),
            "%x = OpLoad %buf %7 at 12% of %"
        );
    }
    use crate::rules::test_support::{compute, module};

    #[test]
    fn rule_names_are_family_and_variant() {
        let e = ValidationError::from(GroupError::VulkanScopeNotSubgroup {
            op: "GroupNonUniformIAdd".into(),
        });
        assert_eq!(e.rule(), "Group::VulkanScopeNotSubgroup");
        assert_eq!(e.vuid(), Some(Vuid::EXECUTION_SCOPE_SUBGROUP));
        assert_eq!(
            ValidationError::from(IdsError::Undefined { id: 3 }).rule(),
            "Ids::Undefined"
        );
    }

    #[test]
    fn render_names_rule_position_instruction_and_vuid() {
        let caps = "OpCapability GroupNonUniformArithmetic";
        let text = compute(
            caps,
            "",
            "%r = OpGroupNonUniformIAdd %u32 %u32_1 Reduce %u32_1",
        );
        let (m, map) = tangle_spirv::text::assemble(
            &text,
            &tangle_spirv::text::AssembleOptions {
                target_env: tangle_spirv::TargetEnv::parse("vulkan1.3").expect("env"),
            },
        )
        .expect("assembles");
        let env = tangle_spirv::TargetEnv::parse("vulkan1.3").expect("env");
        let diags =
            crate::validate(&m, env, &crate::ValidateOptions::default()).expect_err("invalid");
        let d = diags.first().expect("one diagnostic");
        let line = text
            .lines()
            .position(|l| l.contains("OpGroupNonUniformIAdd"))
            .expect("line")
            + 1;
        let with_map = d.render(&m, "k.spvasm", Some(&map));
        assert!(
            with_map.starts_with("error[Group::VulkanScopeNotSubgroup]"),
            "{with_map}"
        );
        assert!(
            with_map.contains(&format!("k.spvasm:{line}:")),
            "{with_map}"
        );
        // The instruction is shown with the text's own names ...
        assert!(
            with_map.contains("%r = OpGroupNonUniformIAdd %u32 %u32_1 Reduce %u32_1"),
            "{with_map}"
        );
        assert!(
            with_map.contains("VUID-StandaloneSpirv-None-04642"),
            "{with_map}"
        );
        let without = d.render(&m, "k.spv", None);
        // ... and, for a binary, with the names spirv-dis would give.
        assert!(
            without.contains("OpGroupNonUniformIAdd %uint %uint_1 Reduce %uint_1"),
            "{without}"
        );
        assert!(
            without.contains(&format!("word offset {}", d.at.word_offset)),
            "{without}"
        );
        assert!(d.at.word_offset > 5);
        let _ = module;
    }
}
