//! tangle-validate: the SPIR-V validator of tangle.
//!
//! # Data model
//!
//! Validation reads a [`Module`] (from `tangle-spirv`) for one [`TargetEnv`] and either hands
//! back a [`Validated`] module, or every independent [`Diagnostic`] it found.
//!
//! It works in two layers:
//! * **Facts** ([`facts::Facts`], [`cfg_facts::CfgFacts`]) are gathered once, tolerantly: which
//!   instruction defines each id, what each type and constant is, the declared and implied
//!   capabilities, decorations, entry points and execution modes, and each function's blocks,
//!   edges and dominators. Lookups return `Option`, so a rule that meets a fact made unusable by
//!   an earlier error stays silent rather than piling up follow-on errors.
//! * **Rules** (`rules::*`, one file per family, named as in the rest of tangle: `group` for
//!   SPV_KHR_subgroup_rotate and the non-uniform group ops, `dot` for SPV_KHR_integer_dot_product,
//!   `coopmat` for SPV_KHR_cooperative_matrix, `cfg` for structured control flow and
//!   SPV_KHR_maximal_reconvergence) are small functions over one instruction or one function.
//!   Each family has its own error enum whose variants name the rule in tangle's words, with the
//!   Vulkan VUID beside it ([`ValidationError::vuid`]). The families run in SPIRV-Tools' pass order
//!   so that the first diagnostic usually names the rule the reference validator would.
//!
//! The families, in the order they run (`rules/*.rs`):
//! * `layout` (the id bound, section order, blocks, merge adjacency, version vs environment) and `ids`
//!   (defined once, defined before use except where forward references are allowed);
//! * `capabilities` (grammar-driven capability/extension/version checks of every instruction and
//!   enumerant, with implicitly declared capabilities; Vulkan allow-lists);
//! * `cfg` (branch targets, merge blocks, block order, dominance of definitions over uses, the
//!   structured constructs with their exits and switch fallthrough, and the
//!   SPV_KHR_maximal_reconvergence rules), `interface` (entry points, their interfaces and
//!   call graphs),
//!   `vulkan` (storage classes, resource blocks, bindings, offsets, Invariant, compute
//!   built-ins, workgroup size) and
//!   `block_layout` (std140/std430/relaxed/scalar offsets and strides);
//! * per instruction: `types` (with the restricted uses of 8- and 16-bit values), `coopmat`
//!   (types, constants), `memory` (variables, loads, stores, copies, access chains), `coopmat`
//!   (loads, stores, variables), `memory::operands` (the memory operands of both), `composite`
//!   (composites, conversions), `arith` (arithmetic and bit instructions), `coopmat`
//!   (arithmetic, conversions, MulAdd), `logical`, `atomic` (atomics, barriers, scopes,
//!   semantics), `glsl` (GLSL.std.450), `group` (non-uniform operations, rotate), `dot`
//!   (integer dot product), and `function` (signatures, calls, returns, branch conditions,
//!   OpPhi); then `memory`'s logical-pointer rules (which instructions take and return
//!   pointers, and where variable pointers may point) over the whole module.
//!
//! Where tangle and SPIRV-Tools 2025.5 differ on purpose: rules added to SPIRV-Tools after that
//! release are implemented (the integer dot product type rules, the cooperative matrix scope
//! limit, `OpSpecConstantOp CooperativeMatrixLengthKHR`, Subgroup-only scope for non-uniform
//! operations other than rotate, and the extension's universal rule that the MulAdd signedness
//! operands are used only on integer matrices (`Coopmat::MulAddSignedFlagOnFloat`), which
//! SPIRV-Tools does not check). Also beyond SPIRV-Tools 2025.5: VUID-StandaloneSpirv-
//! PhysicalStorageBuffer64-04708 ("all instructions that support memory access operands and
//! that use a physical pointer must include the Aligned operand") applied to cooperative matrix
//! loads and stores without memory operands (`Memory::PhysicalStorageBufferNotAligned`), which
//! SPIRV-Tools checks only when some memory operand is present.
//!
//! The ids family gates the rest: when ids are undefined, used too early or defined twice, the
//! facts the other families read cannot be trusted, so validation stops after reporting them.
//!
//! Later stages (the executor) take a [`Validated`] and may index the module's facts without
//! re-checking them.

pub mod cfg_facts;
pub mod diag;
pub mod facts;
pub mod rules;
pub mod vuid;

pub use diag::{render_all, Diagnostic, IdNames, InstRef, Severity, ValidationError};
pub use vuid::Vuid;

use cfg_facts::CfgFacts;
use facts::Facts;
use std::borrow::Cow;
use tangle_spirv::{Module, TargetEnv};

/// Validator options: the `spirv-val` flags that relax or tighten rules.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ValidateOptions {
    /// `--relax-logical-pointer`: allow pointers as values in the Logical addressing model.
    pub relax_logical_pointer: bool,
    /// `--relax-block-layout`.
    pub relax_block_layout: bool,
    /// `--uniform-buffer-standard-layout`.
    pub uniform_buffer_standard_layout: bool,
    /// `--scalar-block-layout`.
    pub scalar_block_layout: bool,
    /// `--workgroup-scalar-block-layout`.
    pub workgroup_scalar_block_layout: bool,
    /// `--skip-block-layout`.
    pub skip_block_layout: bool,
    /// `--relax-struct-store`.
    pub relax_struct_store: bool,
    /// `--before-hlsl-legalization`.
    pub before_hlsl_legalization: bool,
    /// `--allow-localsizeid`.
    pub allow_localsizeid: bool,
}

impl ValidateOptions {
    /// Parses `spirv-val` flags (`--relax-logical-pointer` ...); an unknown flag is an error.
    pub fn from_flags<'a>(
        flags: impl IntoIterator<Item = &'a str>,
    ) -> Result<ValidateOptions, String> {
        let mut o = ValidateOptions::default();
        for flag in flags {
            match flag {
                "--relax-logical-pointer" => o.relax_logical_pointer = true,
                "--relax-block-layout" => o.relax_block_layout = true,
                "--uniform-buffer-standard-layout" => o.uniform_buffer_standard_layout = true,
                "--scalar-block-layout" => o.scalar_block_layout = true,
                "--workgroup-scalar-block-layout" => o.workgroup_scalar_block_layout = true,
                "--skip-block-layout" => o.skip_block_layout = true,
                "--relax-struct-store" => o.relax_struct_store = true,
                "--before-hlsl-legalization" => {
                    o.before_hlsl_legalization = true;
                    o.relax_logical_pointer = true;
                }
                "--allow-localsizeid" => o.allow_localsizeid = true,
                other => return Err(format!("unknown validator option '{other}'")),
            }
        }
        Ok(o)
    }
}

/// A module that passed validation, with the facts gathered on the way. Only [`validate`] makes
/// one, so a function that takes a `&Validated` (like the executor's `Device::compute_pipeline`)
/// cannot be handed an unchecked module.
///
/// It borrows the module it checked; [`Validated::into_owned`] makes one that owns it, for
/// callers (the `tangle` facade) that load a module and hand it on.
#[derive(Debug)]
pub struct Validated<'m> {
    module: Cow<'m, Module>,
    env: TargetEnv,
    facts: Facts,
    cfg: CfgFacts,
}

impl<'m> Validated<'m> {
    /// The validated module.
    pub fn module(&self) -> &Module {
        &self.module
    }

    /// The same validated module, owning its instructions (a copy when it was borrowed).
    pub fn into_owned(self) -> Validated<'static> {
        Validated {
            module: Cow::Owned(self.module.into_owned()),
            env: self.env,
            facts: self.facts,
            cfg: self.cfg,
        }
    }

    /// The environment it was validated for.
    pub fn env(&self) -> TargetEnv {
        self.env
    }

    /// Ids, types, constants, decorations, entry points.
    pub fn facts(&self) -> &Facts {
        &self.facts
    }

    /// Functions, blocks, edges.
    pub fn cfg(&self) -> &CfgFacts {
        &self.cfg
    }
}

/// Validates a module for an environment; on failure returns every independent diagnostic, in
/// instruction order within each family.
pub fn validate<'m>(
    module: &'m Module,
    env: TargetEnv,
    options: &ValidateOptions,
) -> Result<Validated<'m>, Vec<Diagnostic>> {
    let facts = Facts::gather(module);
    let cfg = CfgFacts::build(module);
    let cx = rules::Ctx {
        module,
        facts: &facts,
        cfg: &cfg,
        env,
        options,
    };
    let diagnostics = rules::run(&cx);
    if diagnostics.is_empty() {
        Ok(Validated {
            module: Cow::Borrowed(module),
            env,
            facts,
            cfg,
        })
    } else {
        Err(diagnostics)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spirv_val_flags_parse() {
        let o = ValidateOptions::from_flags(["--relax-logical-pointer", "--scalar-block-layout"]);
        assert_eq!(
            o,
            Ok(ValidateOptions {
                relax_logical_pointer: true,
                scalar_block_layout: true,
                ..Default::default()
            })
        );
        let hlsl = ValidateOptions::from_flags(["--before-hlsl-legalization"])
            .map(|o| o.relax_logical_pointer);
        assert_eq!(hlsl, Ok(true));
        assert!(ValidateOptions::from_flags(["--no-such-flag"]).is_err());
    }

    #[test]
    fn validated_module_exposes_its_facts() {
        let text = rules::test_support::compute("", "", "%x = OpIAdd %u32 %u32_1 %u32_1");
        let m = rules::test_support::module(&text, "vulkan1.3");
        let env = TargetEnv::parse("vulkan1.3").expect("env");
        let v = validate(&m, env, &ValidateOptions::default()).expect("valid");
        assert_eq!(v.facts().entry_points.len(), 1);
        assert_eq!(v.cfg().functions.len(), 1);
        assert_eq!(v.env(), env);
    }
}
