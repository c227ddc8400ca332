//! Pipeline creation against a profile's cooperative-matrix properties: a module whose
//! cooperative-matrix types or `OpCooperativeMatrixMulAddKHR` combinations the device does not
//! list is refused ([`ExecError::ProfileLacks`], exit 77 in `tangle run`), naming the
//! combination and the profile.
//!
//! It runs on the module as specialized: scope, rows, columns and use are read through the
//! constants lowering folded (so specialization constants and `OpSpecConstantOp` have their
//! pipeline values). The Vulkan rules, from the "Runtime SPIR-V validation" section of the
//! Vulkan specification and VkPipelineShaderStageCreateInfo's valid usage:
//!
//! * VUID-RuntimeSpirv-OpTypeCooperativeMatrixKHR-10163: "the component type, scope, number of
//!   rows, and number of columns must match one of the matrices in any of the supported
//!   VkCooperativeMatrixPropertiesKHR, where for Use of MatrixA, the number of rows must match
//!   MSize and the number of columns must match KSize and the type must match AType; for Use of
//!   MatrixB, [rows] KSize, [columns] NSize, BType; for Use of MatrixAccumulator, [rows] MSize,
//!   [columns] NSize and the type must match CType or ResultType". An integer component's
//!   signedness is its `OpTypeInt` Signedness operand, as the Khronos validation layer reads it.
//! * VUID-RuntimeSpirv-OpCooperativeMatrixMulAddKHR-10060: "the operands must match a supported
//!   VkCooperativeMatrixPropertiesKHR, such that" A is MSize×KSize MatrixAKHR of AType, B is
//!   KSize×NSize MatrixBKHR of BType, C and Result are MSize×NSize MatrixAccumulatorKHR of CType
//!   and ResultType; "If and only if ... AType is a signed integer type,
//!   MatrixASignedComponents must be used" (likewise B, C, Result); "If and only if ...
//!   saturatingAccumulation is VK_TRUE, SaturatingAccumulationKHR must be used"; "The scope of
//!   all cooperative matrix operands must match ... scope". An integer operand's signedness is
//!   therefore its operand flag, not its type's Signedness.
//! * VUID-RuntimeSpirv-cooperativeMatrixWorkgroupScope-10164: "If the
//!   cooperativeMatrixWorkgroupScope feature is not enabled, the scope of all
//!   OpTypeCooperativeMatrixKHR must not be VK_SCOPE_WORKGROUP_KHR". A profile has the feature
//!   when it lists a workgroup-scope entry.
//! * VUID-VkPipelineShaderStageCreateInfo-module-08987: "If module uses
//!   OpTypeCooperativeMatrixKHR instructions with Scope equal to Subgroup, then the local
//!   workgroup size in the X dimension of the pipeline must be a multiple of [the] subgroupSize".
//!
//! The cooperativeMatrixFlexibleDimensions rules (VK_NV_cooperative_matrix2) do not apply: no
//! profile offers that feature.

use super::Lowerer;
use crate::error::{malformed, ExecError, InstRef};
use crate::profile::{ComponentType, CooperativeMatrixProperties, MatrixScope, Profile};
use spirv::Op as SpvOp;
use std::collections::HashMap;
use tangle_spirv::module::{Instruction, Module};

/// `CooperativeMatrixOperands` bits (SPV_KHR_cooperative_matrix).
const A_SIGNED: u64 = 0x1;
const B_SIGNED: u64 = 0x2;
const C_SIGNED: u64 = 0x4;
const RESULT_SIGNED: u64 = 0x8;
const SATURATING: u64 = 0x10;

/// `CooperativeMatrixUse` values.
const USE_A: u64 = 0;
const USE_B: u64 = 1;
const USE_ACCUMULATOR: u64 = 2;

/// Checks the module being lowered against `profile` (after the globals and the workgroup size
/// are lowered).
pub(crate) fn check(l: &Lowerer<'_>, profile: &Profile) -> Result<(), ExecError> {
    let constant = |id: u32| l.values.get(&id).and_then(|v| l.const_value(v.slot));
    check_module(l.module, &constant, l.program.local_size, profile)
}

/// One `OpTypeCooperativeMatrixKHR`, its operands evaluated.
#[derive(Debug, Clone, Copy)]
struct MatrixType {
    /// The component: the Vulkan type when there is one, else `None` (FP8 encodings).
    component: Option<ComponentType>,
    /// What the component is, in words, for messages.
    component_name: &'static str,
    /// The integer width, when the component is an integer.
    int_bits: Option<u32>,
    scope: u64,
    rows: u64,
    cols: u64,
    matrix_use: u64,
}

impl MatrixType {
    /// The component type as a MulAdd operand with signedness flag `signed` sees it.
    fn operand_component(&self, signed: bool) -> Option<ComponentType> {
        match self.int_bits {
            Some(bits) if signed => Some(ComponentType::Sint(bits)),
            Some(bits) => Some(ComponentType::Uint(bits)),
            None => self.component,
        }
    }
}

/// The check on a module with a constant evaluator (`constant(id)` gives the specialized value).
fn check_module(
    module: &Module,
    constant: &dyn Fn(u32) -> Option<u64>,
    local_size: [u32; 3],
    profile: &Profile,
) -> Result<(), ExecError> {
    let mut types: HashMap<u32, MatrixType> = HashMap::new();
    // Result types of every id, to find a MulAdd operand's matrix type.
    let mut type_of: HashMap<u32, u32> = HashMap::new();
    for inst in &module.instructions {
        if let (Some(id), Some(ty)) = (inst.result_id, inst.result_type) {
            type_of.insert(id, ty);
        }
        match inst.op() {
            Some(SpvOp::TypeCooperativeMatrixKHR) => {
                let at = InstRef::of(inst);
                let t = matrix_type(module, inst, constant, &at)?;
                check_type(&t, local_size, profile, &at)?;
                if let Some(id) = inst.result_id {
                    types.insert(id, t);
                }
            }
            Some(SpvOp::CooperativeMatrixMulAddKHR) => {
                let at = InstRef::of(inst);
                let operand_type = |id: Option<u32>| {
                    id.and_then(|id| type_of.get(&id))
                        .and_then(|ty| types.get(ty))
                        .copied()
                        .ok_or_else(|| malformed(&at, "an operand is not a cooperative matrix"))
                };
                let result = inst
                    .result_type
                    .and_then(|ty| types.get(&ty))
                    .copied()
                    .ok_or_else(|| malformed(&at, "the result is not a cooperative matrix"))?;
                let (a, b, c) = (
                    operand_type(inst.id_operand(0))?,
                    operand_type(inst.id_operand(1))?,
                    operand_type(inst.id_operand(2))?,
                );
                let flags = inst.literal_operand(3).unwrap_or(0);
                check_mul_add([a, b, c, result], flags, profile, &at)?;
            }
            _ => {}
        }
    }
    Ok(())
}

/// Reads an `OpTypeCooperativeMatrixKHR`'s component type and constant operands.
fn matrix_type(
    module: &Module,
    inst: &Instruction,
    constant: &dyn Fn(u32) -> Option<u64>,
    at: &InstRef,
) -> Result<MatrixType, ExecError> {
    let component_id = inst.id_operand(0);
    let component_inst = module
        .instructions
        .iter()
        .find(|i| i.result_id.is_some() && i.result_id == component_id)
        .ok_or_else(|| malformed(at, "the component type is not defined"))?;
    let width = component_inst.literal_operand(0).unwrap_or(0) as u32;
    let (component, component_name, int_bits) = match component_inst.op() {
        Some(SpvOp::TypeInt) => {
            let signed = component_inst.literal_operand(1) == Some(1);
            let c = if signed {
                ComponentType::Sint(width)
            } else {
                ComponentType::Uint(width)
            };
            (Some(c), "integer", Some(width))
        }
        Some(SpvOp::TypeFloat) => match (width, component_inst.literal_operand(1)) {
            (16, None) => (Some(ComponentType::Float16), "float", None),
            (32, None) => (Some(ComponentType::Float32), "float", None),
            (64, None) => (Some(ComponentType::Float64), "float", None),
            // FPEncoding 0 is BFloat16KHR.
            (16, Some(0)) => (Some(ComponentType::BFloat16), "bfloat16", None),
            _ => (None, "FP8 (or other encoded float)", None),
        },
        _ => return Err(malformed(at, "the component type is not a scalar number")),
    };
    let value = |i: usize, what: &str| {
        inst.id_operand(i)
            .and_then(constant)
            .ok_or_else(|| malformed(at, format!("the {what} operand is not a known constant")))
    };
    Ok(MatrixType {
        component,
        component_name,
        int_bits,
        scope: value(1, "Scope")?,
        rows: value(2, "Rows")?,
        cols: value(3, "Columns")?,
        matrix_use: value(4, "Use")?,
    })
}

/// Names a matrix type: `16x16 FLOAT16 MatrixA, subgroup scope`.
fn describe(t: &MatrixType) -> String {
    let component = t
        .component
        .map_or_else(|| t.component_name.to_string(), |c| c.to_string());
    format!("{}x{} {component} {}", t.rows, t.cols, use_and_scope(t))
}

/// `MatrixA, subgroup scope`.
fn use_and_scope(t: &MatrixType) -> String {
    let matrix_use = match t.matrix_use {
        USE_A => "MatrixA".to_string(),
        USE_B => "MatrixB".to_string(),
        USE_ACCUMULATOR => "MatrixAccumulator".to_string(),
        u => format!("Use {u}"),
    };
    let scope = MatrixScope::from_spirv(t.scope)
        .map_or_else(|| format!("Scope {}", t.scope), |s| format!("{s} scope"));
    format!("{matrix_use}, {scope}")
}

/// VUIDs 10163, 10164 and 08987 for one matrix type.
fn check_type(
    t: &MatrixType,
    local_size: [u32; 3],
    profile: &Profile,
    at: &InstRef,
) -> Result<(), ExecError> {
    let lacks = |what: String| ExecError::ProfileLacks {
        at: at.clone(),
        profile: profile.name.clone(),
        what,
    };
    let scope = MatrixScope::from_spirv(t.scope);
    let entries = &profile.cooperative_matrix;
    if scope == Some(MatrixScope::Workgroup)
        && !entries.iter().any(|e| e.scope == MatrixScope::Workgroup)
    {
        return Err(lacks(format!(
            "a {} cooperative matrix: it has no cooperativeMatrixWorkgroupScope (VUID-RuntimeSpirv-cooperativeMatrixWorkgroupScope-10164)",
            describe(t)
        )));
    }
    let fits = |e: &CooperativeMatrixProperties| {
        let shape = |rows: u32, cols: u32| t.rows == u64::from(rows) && t.cols == u64::from(cols);
        let of = |c: ComponentType| t.component == Some(c);
        Some(e.scope) == scope
            && match t.matrix_use {
                USE_A => shape(e.m, e.k) && of(e.a),
                USE_B => shape(e.k, e.n) && of(e.b),
                USE_ACCUMULATOR => shape(e.m, e.n) && (of(e.c) || of(e.result)),
                _ => false,
            }
    };
    if !entries.iter().any(fits) {
        return Err(lacks(format!(
            "a {} cooperative matrix: no VkCooperativeMatrixPropertiesKHR entry has that shape and component type ({}; VUID-RuntimeSpirv-OpTypeCooperativeMatrixKHR-10163)",
            describe(t),
            listed(profile)
        )));
    }
    let subgroup = profile.subgroup_size;
    if scope == Some(MatrixScope::Subgroup) && !local_size[0].is_multiple_of(subgroup.max(1)) {
        return Err(lacks(format!(
            "a subgroup-scope cooperative matrix with a workgroup size of {} in x, which is not a multiple of its subgroup size {subgroup} (VUID-VkPipelineShaderStageCreateInfo-module-08987)",
            local_size[0]
        )));
    }
    Ok(())
}

/// VUID 10060 for one `OpCooperativeMatrixMulAddKHR` (`[a, b, c, result]`).
fn check_mul_add(
    [a, b, c, r]: [MatrixType; 4],
    flags: u64,
    profile: &Profile,
    at: &InstRef,
) -> Result<(), ExecError> {
    let (ac, bc, cc, rc) = (
        a.operand_component(flags & A_SIGNED != 0),
        b.operand_component(flags & B_SIGNED != 0),
        c.operand_component(flags & C_SIGNED != 0),
        r.operand_component(flags & RESULT_SIGNED != 0),
    );
    let saturating = flags & SATURATING != 0;
    let fits = |e: &CooperativeMatrixProperties| {
        let (m, n, k) = (u64::from(e.m), u64::from(e.n), u64::from(e.k));
        let scope = MatrixScope::from_spirv(a.scope) == Some(e.scope);
        let same_scope = [b, c, r].iter().all(|t| t.scope == a.scope);
        let shapes = (a.rows, a.cols, a.matrix_use) == (m, k, USE_A)
            && (b.rows, b.cols, b.matrix_use) == (k, n, USE_B)
            && (c.rows, c.cols, c.matrix_use) == (m, n, USE_ACCUMULATOR)
            && (r.rows, r.cols, r.matrix_use) == (m, n, USE_ACCUMULATOR);
        // Signedness of integer operands comes from the flags, so comparing the flag-derived
        // component types also gives the "if and only if ... Signed Components" rules.
        let types = (ac, bc, cc, rc) == (Some(e.a), Some(e.b), Some(e.c), Some(e.result));
        scope && same_scope && shapes && types && e.saturating == saturating
    };
    if profile.cooperative_matrix.iter().any(fits) {
        return Ok(());
    }
    let name = |t: &MatrixType, c: Option<ComponentType>| {
        c.map_or_else(|| t.component_name.to_string(), |c| c.to_string())
    };
    let scope = MatrixScope::from_spirv(a.scope)
        .map_or_else(|| format!("Scope {}", a.scope), |s| s.to_string());
    let mut combination = format!(
        "{}x{}x{} {} x {} + {} -> {}, {scope}",
        a.rows,
        b.cols,
        a.cols,
        name(&a, ac),
        name(&b, bc),
        name(&c, cc),
        name(&r, rc),
    );
    if saturating {
        combination.push_str(", saturating");
    }
    Err(ExecError::ProfileLacks {
        at: at.clone(),
        profile: profile.name.clone(),
        what: format!(
            "OpCooperativeMatrixMulAddKHR on {combination} (operands {}; {}): no VkCooperativeMatrixPropertiesKHR entry matches ({}; VUID-RuntimeSpirv-OpCooperativeMatrixMulAddKHR-10060)",
            [a, b, c, r]
                .iter()
                .zip(["A", "B", "C", "Result"])
                .map(|(t, n)| format!("{n} {}x{} {}", t.rows, t.cols, use_and_scope(t)))
                .collect::<Vec<_>>()
                .join(", "),
            if flags & (A_SIGNED | B_SIGNED | C_SIGNED | RESULT_SIGNED) == 0 {
                "no signed-components operands"
            } else {
                "signedness from the Matrix*SignedComponentsKHR operands"
            },
            listed(profile)
        ),
    })
}

/// Points at where the profile's list is printed.
fn listed(profile: &Profile) -> String {
    if profile.cooperative_matrix.is_empty() {
        "the profile has no cooperative matrices".to_string()
    } else {
        format!(
            "`tangle profiles` lists its {} entries",
            profile.cooperative_matrix.len()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tangle_spirv::text::{assemble, AssembleOptions};

    /// The SPIR-V type instruction of a component type.
    fn ty(c: ComponentType) -> String {
        match c {
            ComponentType::Float16 => "OpTypeFloat 16".into(),
            ComponentType::Float32 => "OpTypeFloat 32".into(),
            ComponentType::Float64 => "OpTypeFloat 64".into(),
            ComponentType::BFloat16 => "OpTypeFloat 16 BFloat16KHR".into(),
            ComponentType::Sint(b) => format!("OpTypeInt {b} 1"),
            ComponentType::Uint(b) => format!("OpTypeInt {b} 0"),
        }
    }

    /// A module with A, B, C, Result types of `e` (scope `scope`) and one MulAdd using them,
    /// its signedness operands set from the entry.
    fn module(e: &CooperativeMatrixProperties, scope: u32) -> Module {
        let mut flags = Vec::new();
        for (t, name) in [
            (e.a, "MatrixASignedComponentsKHR"),
            (e.b, "MatrixBSignedComponentsKHR"),
            (e.c, "MatrixCSignedComponentsKHR"),
            (e.result, "MatrixResultSignedComponentsKHR"),
        ] {
            if t.is_signed_int() {
                flags.push(name);
            }
        }
        if e.saturating {
            flags.push("SaturatingAccumulationKHR");
        }
        let text = format!(
            "%u32 = OpTypeInt 32 0
             %scope = OpConstant %u32 {scope}
             %m = OpConstant %u32 {m}
             %n = OpConstant %u32 {n}
             %k = OpConstant %u32 {k}
             %use_a = OpConstant %u32 0
             %use_b = OpConstant %u32 1
             %use_acc = OpConstant %u32 2
             %ca = {ca}
             %cb = {cb}
             %cc = {cc}
             %cr = {cr}
             %ta = OpTypeCooperativeMatrixKHR %ca %scope %m %k %use_a
             %tb = OpTypeCooperativeMatrixKHR %cb %scope %k %n %use_b
             %tc = OpTypeCooperativeMatrixKHR %cc %scope %m %n %use_acc
             %tr = OpTypeCooperativeMatrixKHR %cr %scope %m %n %use_acc
             %void = OpTypeVoid
             %fn = OpTypeFunction %void
             %a = OpUndef %ta
             %b = OpUndef %tb
             %c = OpUndef %tc
             %main = OpFunction %void None %fn
             %l = OpLabel
             %r = OpCooperativeMatrixMulAddKHR %tr %a %b %c {flags}
             OpReturn
             OpFunctionEnd",
            m = e.m,
            n = e.n,
            k = e.k,
            ca = ty(e.a),
            cb = ty(e.b),
            cc = ty(e.c),
            cr = ty(e.result),
            flags = flags.join("|"),
        );
        assemble(&text, &AssembleOptions::default())
            .map(|(m, _)| m)
            .unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    /// `OpConstant` literals: what lowering's folding gives for these modules.
    fn run(module: &Module, local_x: u32, profile: &Profile) -> Result<(), ExecError> {
        let constants: HashMap<u32, u64> = module
            .instructions
            .iter()
            .filter(|i| i.op() == Some(SpvOp::Constant))
            .filter_map(|i| Some((i.result_id?, i.literal_operand(0)?)))
            .collect();
        check_module(
            module,
            &|id| constants.get(&id).copied(),
            [local_x, 1, 1],
            profile,
        )
    }

    fn refusal(r: Result<(), ExecError>) -> String {
        match r {
            Err(e @ ExecError::ProfileLacks { .. }) => e.to_string(),
            other => panic!("expected a profile refusal, got {other:?}"),
        }
    }

    #[test]
    fn every_entry_of_every_profile_passes() {
        for p in Profile::all() {
            for e in &p.cooperative_matrix {
                let r = run(&module(e, 3), p.subgroup_size, &p);
                assert_eq!(r, Ok(()), "{} {e}", p.name);
            }
        }
    }

    #[test]
    fn a_lacking_combination_is_refused_naming_it_and_the_profile() {
        let entry = |m, n, k, a, r, saturating| CooperativeMatrixProperties {
            m,
            n,
            k,
            a,
            b: a,
            c: r,
            result: r,
            saturating,
            scope: MatrixScope::Subgroup,
        };
        use ComponentType::*;
        // Per profile: a type none of its entries has (10163), and a MulAdd whose types each
        // appear but not together (10060).
        let cases = [
            (
                "default",
                entry(32, 32, 32, Float16, Float32, false),
                "32x32 FLOAT16 MatrixA",
            ),
            (
                "nvidia",
                entry(8, 8, 8, Float16, Float32, false),
                "8x8 FLOAT16 MatrixA",
            ),
            (
                "lavapipe",
                entry(16, 16, 16, Float16, Float32, false),
                "16x16 FLOAT16 MatrixA",
            ),
            (
                "amd",
                entry(16, 16, 16, BFloat16, Float32, false),
                "16x16 BFLOAT16 MatrixA",
            ),
            (
                "intel",
                entry(8, 16, 16, Float64, Float64, false),
                "8x16 FLOAT64 MatrixA",
            ),
        ];
        for (name, e, combination) in cases {
            let p = Profile::by_name(name).expect("named profile");
            let msg = refusal(run(&module(&e, 3), p.subgroup_size, &p));
            assert!(msg.contains(&format!("'{name}' profile")), "{msg}");
            assert!(msg.contains(combination), "{msg}");
            assert!(msg.contains("OpTypeCooperativeMatrixKHR-10163"), "{msg}");
        }
        // Types each listed, the MulAdd not: saturating into UINT32 on amd and default, mixed
        // signedness on the others, f16 -> f16 accumulate on nvidia at 16x8x8 with an f32 C.
        let sat_u32 = entry(16, 16, 16, Uint(8), Uint(32), true);
        let mixed = |m, n, k| CooperativeMatrixProperties {
            b: Sint(8),
            ..entry(m, n, k, Uint(8), Sint(32), false)
        };
        let cases = [
            (
                "default",
                CooperativeMatrixProperties {
                    m: 8,
                    n: 8,
                    k: 8,
                    ..sat_u32
                },
            ),
            ("amd", sat_u32),
            ("nvidia", mixed(16, 16, 32)),
            ("lavapipe", mixed(8, 8, 8)),
            ("intel", mixed(8, 16, 32)),
        ];
        for (name, e) in cases {
            let p = Profile::by_name(name).expect("named profile");
            let msg = refusal(run(&module(&e, 3), p.subgroup_size, &p));
            assert!(msg.contains(&format!("'{name}' profile")), "{msg}");
            assert!(msg.contains(&e.to_string()), "{msg} lacks {e}");
            assert!(msg.contains("OpCooperativeMatrixMulAddKHR-10060"), "{msg}");
        }
    }

    #[test]
    fn scope_and_workgroup_size_rules() {
        let p = Profile::default();
        let e = p.cooperative_matrix[0];
        // Workgroup scope without a workgroup-scope entry (10164).
        let msg = refusal(run(&module(&e, 2), 32, &p));
        assert!(
            msg.contains("cooperativeMatrixWorkgroupScope-10164"),
            "{msg}"
        );
        // ... accepted by a profile that lists it.
        let wg = Profile {
            cooperative_matrix: vec![CooperativeMatrixProperties {
                scope: MatrixScope::Workgroup,
                ..e
            }],
            ..Profile::default()
        };
        assert_eq!(run(&module(&e, 2), 32, &wg), Ok(()));
        // Subgroup scope needs whole subgroups in x (08987).
        let msg = refusal(run(&module(&e, 3), 16, &p));
        assert!(
            msg.contains("module-08987") && msg.contains("16 in x"),
            "{msg}"
        );
        assert_eq!(run(&module(&e, 3), 64, &p), Ok(()));
        // A profile without cooperative matrices says so.
        let none = Profile {
            cooperative_matrix: Vec::new(),
            ..Profile::default()
        };
        let msg = refusal(run(&module(&e, 3), 32, &none));
        assert!(msg.contains("has no cooperative matrices"), "{msg}");
    }
}
