//! SPV_KHR_cooperative_matrix executed through GLSL shaders (`GL_KHR_cooperative_matrix`), each
//! under every layout policy, against plain-Rust references on random inputs: MulAdd for
//! integer (plain, wrapping, saturating, mixed signedness) and float component types; element-wise
//! arithmetic, scalar multiply, constants, length and composite access, function parameters and
//! conversions; loads and stores through scalar and vector pointers in StorageBuffer and
//! Workgroup memory, row- and column-major with odd strides. The ML-style kernels (tiled GEMM,
//! attention) are in `coopmat_kernels.rs`, the sanitizer findings in `coopmat_sanitizer.rs`.

mod common;

use common::{compile, Rng};
use half::f16;
use tangle_exec::{CoopmatLayout, Device, Report, Resources, RunOptions, SpecConstants};
use tangle_spirv::text::{assemble, AssembleOptions};
use tangle_validate::Validated;

/// Runs `module` on one workgroup with buffers at set 0, bindings 0.., on the coopmat test
/// profile with 32 invocations per subgroup, under `layout`.
fn run_layout(
    module: &Validated<'_>,
    buffers: &[Vec<u8>],
    layout: CoopmatLayout,
) -> (Vec<Vec<u8>>, Report) {
    let job = common::Job {
        profile: Some(common::coopmat_profile(32)),
        coopmat_layout: layout,
        ..common::Job::new(buffers.to_vec(), [1, 1, 1])
    };
    common::run_module(module, &job)
}

const HEADER: &str = "#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
";

/// A scalar component type as GLSL names it.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Ty {
    glsl: &'static str,
    bits: u32,
    signed: bool,
    float: bool,
}

const fn int(glsl: &'static str, bits: u32, signed: bool) -> Ty {
    Ty {
        glsl,
        bits,
        signed,
        float: false,
    }
}
const fn float(glsl: &'static str, bits: u32) -> Ty {
    Ty {
        glsl,
        bits,
        signed: true,
        float: true,
    }
}

const I8: Ty = int("int8_t", 8, true);
const U8: Ty = int("uint8_t", 8, false);
const I16: Ty = int("int16_t", 16, true);
const U16: Ty = int("uint16_t", 16, false);
const I32: Ty = int("int", 32, true);
const U32: Ty = int("uint", 32, false);
const I64: Ty = int("int64_t", 64, true);
const U64: Ty = int("uint64_t", 64, false);
const F16: Ty = float("float16_t", 16);
const F32: Ty = float("float", 32);
const F64: Ty = float("double", 64);

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    }
}

impl Ty {
    fn bytes(self) -> usize {
        self.bits as usize / 8
    }
    /// A value as the i128 it stands for (integers) or its f64 (floats, as bits of f64).
    fn int_value(self, v: u64) -> i128 {
        let v = v & mask(self.bits);
        if self.signed && self.bits < 128 && (v >> (self.bits - 1)) & 1 == 1 {
            i128::from(v) - (1i128 << self.bits)
        } else {
            i128::from(v)
        }
    }
    fn to_f64(self, v: u64) -> f64 {
        match self.bits {
            16 => f16::from_bits(v as u16).to_f64(),
            32 => f64::from(f32::from_bits(v as u32)),
            _ => f64::from_bits(v),
        }
    }
    fn encode(self, x: f64) -> u64 {
        match self.bits {
            16 => u64::from(f16::from_f64(x).to_bits()),
            32 => u64::from((x as f32).to_bits()),
            _ => x.to_bits(),
        }
    }
    /// A random value: small floats; integers over their whole range or small (`small`).
    fn random(self, rng: &mut Rng, small: bool) -> u64 {
        if self.float {
            let x = ((rng.next() % 2001) as f64 - 1000.0) / 250.0;
            return self.encode(x);
        }
        let v = rng.next() & mask(self.bits);
        if small {
            v & 0x7
        } else {
            v
        }
    }
    fn pack(self, vals: &[u64]) -> Vec<u8> {
        vals.iter()
            .flat_map(|v| v.to_le_bytes()[..self.bytes()].to_vec())
            .collect()
    }
    fn unpack(self, bytes: &[u8]) -> Vec<u64> {
        bytes
            .chunks_exact(self.bytes())
            .map(|c| {
                let mut b = [0u8; 8];
                b[..c.len()].copy_from_slice(c);
                u64::from_le_bytes(b)
            })
            .collect()
    }
}

/// Plain-Rust MulAdd of one element: `None` where the spec leaves it undefined (saturating
/// with an intermediate overflow).
#[allow(clippy::too_many_arguments)]
fn reference_int(
    [ta, tb, tc, tr]: [Ty; 4],
    a: &[u64],
    b: &[u64],
    c: u64,
    saturating: bool,
) -> Option<u64> {
    let n = tr.bits;
    let (lo, hi) = if tr.signed {
        (-(1i128 << (n - 1)), (1i128 << (n - 1)) - 1)
    } else {
        (0, (1i128 << n) - 1)
    };
    let mut exact = 0i128;
    let mut wrapped = 0u128;
    let mut undefined = false;
    for (&x, &y) in a.iter().zip(b) {
        let p = ta.int_value(x) * tb.int_value(y);
        wrapped = wrapped.wrapping_add(p as u128);
        // |p| < 2^127 and each partial sum stays in range while defined: no i128 overflow
        // before `undefined` is set.
        exact = exact.wrapping_add(p);
        undefined |= !(lo..=hi).contains(&p) || !(lo..=hi).contains(&exact);
    }
    let cv = tc.int_value(c);
    if saturating {
        (!undefined).then(|| ((exact + cv).clamp(lo, hi) as u128 as u64) & mask(n))
    } else {
        Some((wrapped.wrapping_add(cv as u128) as u64) & mask(n))
    }
}

/// The SPIR-V name and declaration of a component type (integers unsigned: the MulAdd operand
/// flags, not the type, say how they are read).
fn spirv_type(t: Ty) -> (String, String) {
    if t.float {
        (format!("%f{}", t.bits), format!("OpTypeFloat {}", t.bits))
    } else {
        (format!("%u{}", t.bits), format!("OpTypeInt {} 0", t.bits))
    }
}

/// One MulAdd module in SPIR-V assembly: `R = A (m×k) × B (k×n) + C` with buffers A, B, C, R at
/// bindings 0..3, the Signed flags from the types' signedness, and SaturatingAccumulation.
fn mul_add_module(
    [ta, tb, tc, tr]: [Ty; 4],
    (m, n, k): (u32, u32, u32),
    saturating: bool,
) -> Validated<'static> {
    let mut text = String::from(
        "OpCapability Shader\nOpCapability VulkanMemoryModel\nOpCapability CooperativeMatrixKHR\n\
         OpCapability Int8\nOpCapability Int16\nOpCapability Int64\nOpCapability Float16\n\
         OpCapability Float64\nOpCapability StorageBuffer8BitAccess\n\
         OpCapability StorageBuffer16BitAccess\nOpExtension \"SPV_KHR_cooperative_matrix\"\n\
         OpMemoryModel Logical Vulkan\n\
         OpEntryPoint GLCompute %main \"main\" %b0 %b1 %b2 %b3\n\
         OpExecutionMode %main LocalSize 32 1 1\n",
    );
    let tys = [ta, tb, tc, tr];
    for (i, t) in tys.iter().enumerate() {
        text += &format!(
            "OpDecorate %arr{i} ArrayStride {}\nOpDecorate %s{i} Block\n\
             OpMemberDecorate %s{i} 0 Offset 0\nOpDecorate %b{i} DescriptorSet 0\n\
             OpDecorate %b{i} Binding {i}\n",
            t.bytes()
        );
    }
    text += "%void = OpTypeVoid\n%fn = OpTypeFunction %void\n";
    let mut declared: Vec<String> = Vec::new();
    for t in tys.iter().chain([&U32]) {
        let (name, decl) = spirv_type(*t);
        if !declared.contains(&name) {
            text += &format!(
                "{name} = {decl}\n%p{} = OpTypePointer StorageBuffer {name}\n",
                &name[1..]
            );
            declared.push(name);
        }
    }
    text += &format!(
        "%c0 = OpConstant %u32 0\n%c1 = OpConstant %u32 1\n%c2 = OpConstant %u32 2\n\
         %c3 = OpConstant %u32 3\n%cm = OpConstant %u32 {m}\n%cn = OpConstant %u32 {n}\n\
         %ck = OpConstant %u32 {k}\n"
    );
    let name = |t: Ty| spirv_type(t).0;
    text += &format!(
        "%mA = OpTypeCooperativeMatrixKHR {} %c3 %cm %ck %c0\n\
         %mB = OpTypeCooperativeMatrixKHR {} %c3 %ck %cn %c1\n\
         %mC = OpTypeCooperativeMatrixKHR {} %c3 %cm %cn %c2\n",
        name(ta),
        name(tb),
        name(tc)
    );
    let mr = if name(tr) == name(tc) {
        "%mC".to_string()
    } else {
        text += &format!(
            "%mR = OpTypeCooperativeMatrixKHR {} %c3 %cm %cn %c2\n",
            name(tr)
        );
        "%mR".to_string()
    };
    for (i, t) in tys.iter().enumerate() {
        let n = name(*t);
        text += &format!(
            "%arr{i} = OpTypeRuntimeArray {n}\n%s{i} = OpTypeStruct %arr{i}\n\
             %ps{i} = OpTypePointer StorageBuffer %s{i}\n%b{i} = OpVariable %ps{i} StorageBuffer\n"
        );
    }
    let mut flags: Vec<&str> = Vec::new();
    for (t, f) in tys.iter().zip([
        "MatrixASignedComponentsKHR",
        "MatrixBSignedComponentsKHR",
        "MatrixCSignedComponentsKHR",
        "MatrixResultSignedComponentsKHR",
    ]) {
        if !t.float && t.signed {
            flags.push(f);
        }
    }
    if saturating {
        flags.push("SaturatingAccumulationKHR");
    }
    let flags = if flags.is_empty() {
        String::new()
    } else {
        format!(" {}", flags.join("|"))
    };
    let ptr = |i: usize| format!("%p{}", &name(tys[i])[1..]);
    text += &format!(
        "%main = OpFunction %void None %fn\n%entry = OpLabel\n\
         %pa = OpAccessChain {} %b0 %c0 %c0\n%pb = OpAccessChain {} %b1 %c0 %c0\n\
         %pc = OpAccessChain {} %b2 %c0 %c0\n%pr = OpAccessChain {} %b3 %c0 %c0\n\
         %a = OpCooperativeMatrixLoadKHR %mA %pa %c0 %ck\n\
         %b = OpCooperativeMatrixLoadKHR %mB %pb %c0 %cn\n\
         %c = OpCooperativeMatrixLoadKHR %mC %pc %c0 %cn\n\
         %r = OpCooperativeMatrixMulAddKHR {mr} %a %b %c{flags}\n\
         OpCooperativeMatrixStoreKHR %pr %r %c0 %cn\nOpReturn\nOpFunctionEnd\n",
        ptr(0),
        ptr(1),
        ptr(2),
        ptr(3)
    );
    let (module, _) =
        assemble(&text, &AssembleOptions::default()).unwrap_or_else(|e| panic!("{e}\n{text}"));
    common::validated(module)
}

/// Runs one integer MulAdd configuration on random inputs under every layout.
fn check_int_mul_add(tys: [Ty; 4], saturating: bool, small: bool, seed: u64) {
    let [ta, tb, tc, tr] = tys;
    let (m, n, k) = (16u32, 8u32, 32u32);
    let module = mul_add_module(tys, (m, n, k), saturating);
    let mut rng = Rng(seed);
    let a: Vec<u64> = (0..m * k).map(|_| ta.random(&mut rng, small)).collect();
    let b: Vec<u64> = (0..k * n).map(|_| tb.random(&mut rng, small)).collect();
    let c: Vec<u64> = (0..m * n).map(|_| tc.random(&mut rng, small)).collect();
    let (m, n, k) = (m as usize, n as usize, k as usize);
    let want: Vec<Option<u64>> = (0..m * n)
        .map(|e| {
            let (i, j) = (e / n, e % n);
            let row = &a[i * k..i * k + k];
            let col: Vec<u64> = (0..k).map(|p| b[p * n + j]).collect();
            reference_int(tys, row, &col, c[e], saturating)
        })
        .collect();
    let undefined = want.iter().filter(|w| w.is_none()).count();
    for layout in CoopmatLayout::all() {
        let bufs = vec![
            ta.pack(&a),
            tb.pack(&b),
            tc.pack(&c),
            vec![0; m * n * tr.bytes()],
        ];
        let (out, report) = run_layout(&module, &bufs, layout);
        let got = tr.unpack(&out[3]);
        for (e, w) in want.iter().enumerate() {
            match w {
                Some(w) => assert_eq!(got[e], *w, "{tys:?} sat={saturating} {layout}: element {e}"),
                None => assert_eq!(got[e], 0xdead_beef_dead_beef & mask(tr.bits), "poison"),
            }
        }
        let reported = report.diagnostics.len() + report.stats.dropped_diagnostics as usize;
        assert_eq!(reported, undefined, "{layout}");
    }
}

#[test]
fn int_mul_add_wrapping_every_width_and_signedness() {
    let combos = [
        [I8, I8, I32, I32],
        [U8, U8, U32, U32],
        [I8, U8, I32, I32],
        [U8, I8, U32, I32],
        [I8, I8, I16, I16],
        [U16, U16, U16, U16],
        [I16, I16, I64, I64],
        [I32, I32, I32, I32],
        [U32, U32, U64, U64],
        [I64, I64, I64, I64],
        [U8, U8, U8, U8],
        [I8, I8, I8, I32],
        [U8, U8, U16, U32],
    ];
    for (i, tys) in combos.into_iter().enumerate() {
        check_int_mul_add(tys, false, false, 100 + i as u64);
    }
}

#[test]
fn int_mul_add_saturating() {
    // Small inputs: A x B fits and the sum with C saturates at most; large ones: some
    // products overflow, and exactly those elements are reported and poisoned.
    for (i, tys) in [
        [I8, I8, I8, I8],
        [U8, U8, U8, U8],
        [I8, U8, I16, I16],
        [I32, I32, I32, I32],
        [U8, U8, U32, I32],
    ]
    .into_iter()
    .enumerate()
    {
        check_int_mul_add(tys, true, true, 200 + i as u64);
        check_int_mul_add(tys, true, false, 300 + i as u64);
    }
}

#[test]
fn float_mul_add() {
    for (i, tys) in [
        [F16, F16, F32, F32],
        [F16, F16, F16, F16],
        [F32, F32, F32, F32],
        [F64, F64, F64, F64],
    ]
    .into_iter()
    .enumerate()
    {
        let [ta, _, tc, tr] = tys;
        let (m, n, k) = (16usize, 16usize, 16usize);
        let module = mul_add_module(tys, (m as u32, n as u32, k as u32), false);
        let mut rng = Rng(400 + i as u64);
        let a: Vec<u64> = (0..m * k).map(|_| ta.random(&mut rng, false)).collect();
        let b: Vec<u64> = (0..k * n).map(|_| ta.random(&mut rng, false)).collect();
        let c: Vec<u64> = (0..m * n).map(|_| tc.random(&mut rng, false)).collect();
        let want: Vec<f64> = (0..m * n)
            .map(|e| {
                let (r, j) = (e / n, e % n);
                (0..k).fold(tc.to_f64(c[e]), |s, p| {
                    s + ta.to_f64(a[r * k + p]) * ta.to_f64(b[p * n + j])
                })
            })
            .collect();
        // Inputs are below 4 in magnitude, so sums stay below 300: the tolerance is a few
        // units in the last place of the result precision.
        let tol = match tr.bits {
            16 => 0.5,
            32 => 1e-3,
            _ => 1e-9,
        };
        for layout in CoopmatLayout::all() {
            let bufs = vec![
                ta.pack(&a),
                ta.pack(&b),
                tc.pack(&c),
                vec![0; m * n * tr.bytes()],
            ];
            let (out, report) = run_layout(&module, &bufs, layout);
            assert!(report.diagnostics.is_empty());
            let got = tr.unpack(&out[3]);
            for (e, w) in want.iter().enumerate() {
                let g = tr.to_f64(got[e]);
                assert!(
                    (g - w).abs() <= tol,
                    "{tys:?} {layout}: element {e}: {g} vs {w}"
                );
            }
        }
    }
}

/// Element-wise operations, scalar multiply, a splat constant, length and composite access,
/// a function taking and returning matrices, and conversions, on one 16x16 matrix pair.
#[test]
fn element_wise_constants_composite_access_functions_and_conversions() {
    let src = format!(
        "{HEADER}
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer X {{ float x[]; }};
layout(set = 0, binding = 1) buffer Y {{ float y[]; }};
layout(set = 0, binding = 2) buffer O {{ float o[]; }};
layout(set = 0, binding = 3) buffer H {{ float16_t h[]; }};
layout(set = 0, binding = 4) buffer I {{ int i32[]; }};
layout(set = 0, binding = 5) buffer J {{ int16_t i16[]; }};
layout(set = 0, binding = 6) buffer U {{ uint u32[]; }};
#define M coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
M twice_plus(M m, float s) {{ return m + m * s; }}
void main() {{
  M mx; M my;
  coopMatLoad(mx, x, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatLoad(my, y, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatStore(mx + my, o, 0 * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatStore(mx - my, o, 1 * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatStore(mx * my, o, 2 * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatStore(mx / my, o, 3 * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatStore(-mx, o, 4 * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatStore(mx * 3.0, o, 5 * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
  M z = M(7.0);
  for (int k = 0; k < z.length(); ++k) {{ z[k] = z[k] + 2.0 * mx[k]; }}
  coopMatStore(z, o, 6 * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatStore(twice_plus(my, 0.5), o, 7 * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> mh =
      coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(mx);
  coopMatStore(mh, h, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopmat<int, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> mi =
      coopmat<int, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(mx);
  coopMatStore(mi, i32, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopmat<int16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> ms =
      coopmat<int16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(mi);
  coopMatStore(ms, i16, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopmat<uint, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> mu =
      coopmat<uint, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(mx * mx);
  coopMatStore(mu, u32, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  M back = M(mi) + M(mu);
  coopMatStore(back, o, 8 * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
}}
"
    );
    let module = compile(&src);
    let mut rng = Rng(7);
    let x: Vec<f32> = (0..256).map(|_| rng.f32() / 10.0).collect();
    let y: Vec<f32> = (0..256)
        .map(|_| {
            let v = rng.f32() / 10.0;
            if v == 0.0 {
                1.0
            } else {
                v
            }
        })
        .collect();
    let ops: Vec<Box<dyn Fn(f32, f32) -> f32>> = vec![
        Box::new(|a, b| a + b),
        Box::new(|a, b| a - b),
        Box::new(|a, b| a * b),
        Box::new(|a, b| a / b),
        Box::new(|a, _| -a),
        Box::new(|a, _| a * 3.0),
        Box::new(|a, _| 7.0 + 2.0 * a),
        Box::new(|_, b| b + b * 0.5),
        Box::new(|a, _| (a as i32) as f32 + ((a * a) as u32) as f32),
    ];
    for layout in CoopmatLayout::all() {
        let bufs = vec![
            common::f32s(&x),
            common::f32s(&y),
            vec![0; 9 * 256 * 4],
            vec![0; 256 * 2],
            vec![0; 256 * 4],
            vec![0; 256 * 2],
            vec![0; 256 * 4],
        ];
        let (out, report) = run_layout(&module, &bufs, layout);
        assert!(report.diagnostics.is_empty(), "{layout}");
        let o = common::to_f32s(&out[2]);
        for (k, f) in ops.iter().enumerate() {
            for e in 0..256 {
                assert_eq!(o[k * 256 + e], f(x[e], y[e]), "{layout} op {k} element {e}");
            }
        }
        let h = F16.unpack(&out[3]);
        let i32s = common::to_u32s(&out[4]);
        let i16s = I16.unpack(&out[5]);
        let u32s = common::to_u32s(&out[6]);
        for e in 0..256 {
            assert_eq!(
                h[e] as u16,
                f16::from_f32(x[e]).to_bits(),
                "{layout} f16 {e}"
            );
            assert_eq!(i32s[e] as i32, x[e] as i32, "{layout} int {e}");
            assert_eq!(
                i16s[e] as u16 as i16, x[e] as i32 as i16,
                "{layout} int16 {e}"
            );
            assert_eq!(u32s[e], (x[e] * x[e]) as u32, "{layout} uint {e}");
        }
    }
}

/// Loads and stores: f16 data through `uvec4` pointers (stride in uvec4 units), column-major
/// with an odd stride, and staging through Workgroup memory.
#[test]
fn loads_and_stores_through_vectors_columns_odd_strides_and_shared_memory() {
    let src = format!(
        "{HEADER}
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer V {{ uvec4 v[]; }};
layout(set = 0, binding = 1) buffer S {{ float s[]; }};
layout(set = 0, binding = 2) buffer O {{ float16_t o[]; }};
layout(set = 0, binding = 3) buffer P {{ float p[]; }};
shared float tile[16 * 19];
#define H coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define F coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
void main() {{
  // 16 f16 per row = 2 uvec4; rows 3 uvec4 apart, starting at uvec4 1.
  H mh;
  coopMatLoad(mh, v, 1, 3, gl_CooperativeMatrixLayoutRowMajor);
  coopMatStore(mh, o, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  // Column-major, stride 19 floats.
  F mf;
  coopMatLoad(mf, s, 5, 19, gl_CooperativeMatrixLayoutColumnMajor);
  coopMatStore(mf, p, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  // Stored column-major with stride 17.
  coopMatStore(mf, p, 256, 17, gl_CooperativeMatrixLayoutColumnMajor);
  // Through shared memory: stage the row-major copy with stride 19, read it back.
  coopMatStore(mf, tile, 0, 19, gl_CooperativeMatrixLayoutRowMajor);
  barrier();
  F back;
  coopMatLoad(back, tile, 0, 19, gl_CooperativeMatrixLayoutRowMajor);
  coopMatStore(back * 2.0, p, 256 + 17 * 16, 16, gl_CooperativeMatrixLayoutRowMajor);
}}
"
    );
    let module = compile(&src);
    let mut rng = Rng(11);
    let halves: Vec<u16> = (0..16 * 3 * 8 + 8)
        .map(|_| f16::from_f32(rng.f32() / 100.0).to_bits())
        .collect();
    let vbytes: Vec<u8> = halves.iter().flat_map(|h| h.to_le_bytes()).collect();
    let s: Vec<f32> = (0..5 + 16 * 19).map(|_| rng.f32()).collect();
    // Element (r, c) of the uvec4 load: half at uvec4 (1 + 3r), half c of 16 after it.
    let want_h: Vec<u16> = (0..256)
        .map(|e| halves[(1 + 3 * (e / 16)) * 8 + e % 16])
        .collect();
    // Column-major: (r, c) at s[5 + c*19 + r].
    let want_f: Vec<f32> = (0..256).map(|e| s[5 + (e % 16) * 19 + e / 16]).collect();
    for layout in CoopmatLayout::all() {
        let plen = 256 + 17 * 16 + 256;
        let bufs = vec![
            vbytes.clone(),
            common::f32s(&s),
            vec![0; 256 * 2],
            common::f32s(&vec![-1.0; plen]),
        ];
        let (out, report) = run_layout(&module, &bufs, layout);
        assert!(report.diagnostics.is_empty(), "{layout}");
        let o: Vec<u16> = F16.unpack(&out[2]).iter().map(|&v| v as u16).collect();
        assert_eq!(o, want_h, "{layout}");
        let p = common::to_f32s(&out[3]);
        assert_eq!(&p[..256], &want_f[..], "{layout}");
        for e in 0..256 {
            let (r, c) = (e / 16, e % 16);
            assert_eq!(
                p[256 + c * 17 + r],
                want_f[e],
                "{layout} column-major store {e}"
            );
            assert_eq!(p[256 + 17 * 16 + e], want_f[e] * 2.0, "{layout} shared {e}");
        }
        // The store with stride 17 leaves the 17th element of each column alone.
        for c in 0..16 {
            assert_eq!(p[256 + c * 17 + 16], -1.0, "{layout} gap {c}");
        }
    }
}

/// The composite forms GLSL does not produce: rows and columns from specialization constants,
/// `OpSpecConstantComposite`, `OpConstantNull`, a Private variable holding a matrix, `OpPhi`
/// after a branch, `OpBitcast`, a store of `int` components through a `uint` pointer, and loads
/// and stores with memory operands. (`OpSelect` on a matrix is what spirv-val rejects: "Expected
/// scalar or composite type as Result Type".)
const FORMS: &str = "OpCapability Shader
OpCapability VulkanMemoryModel
OpCapability CooperativeMatrixKHR
OpExtension \"SPV_KHR_cooperative_matrix\"
OpMemoryModel Logical Vulkan
OpEntryPoint GLCompute %main \"main\" %bx %bo %priv
OpExecutionMode %main LocalSize 32 1 1
OpDecorate %rows SpecId 0
OpDecorate %cols SpecId 1
OpDecorate %five SpecId 2
OpDecorate %arr ArrayStride 4
OpDecorate %blk Block
OpMemberDecorate %blk 0 Offset 0
OpDecorate %bx DescriptorSet 0
OpDecorate %bx Binding 0
OpDecorate %bo DescriptorSet 0
OpDecorate %bo Binding 1
%void = OpTypeVoid
%fn = OpTypeFunction %void
%bool = OpTypeBool
%u32 = OpTypeInt 32 0
%i32 = OpTypeInt 32 1
%c0 = OpConstant %u32 0
%c2 = OpConstant %u32 2
%c3 = OpConstant %u32 3
%c256 = OpConstant %u32 256
%c512 = OpConstant %u32 512
%c768 = OpConstant %u32 768
%rows = OpSpecConstant %u32 8
%cols = OpSpecConstant %u32 8
%five = OpSpecConstant %u32 5
%mat = OpTypeCooperativeMatrixKHR %u32 %c3 %rows %cols %c2
%imat = OpTypeCooperativeMatrixKHR %i32 %c3 %rows %cols %c2
%splat = OpSpecConstantComposite %mat %five
%null = OpConstantNull %mat
%arr = OpTypeRuntimeArray %u32
%blk = OpTypeStruct %arr
%pblk = OpTypePointer StorageBuffer %blk
%pu32 = OpTypePointer StorageBuffer %u32
%pmat = OpTypePointer Private %mat
%bx = OpVariable %pblk StorageBuffer
%bo = OpVariable %pblk StorageBuffer
%priv = OpVariable %pmat Private
%main = OpFunction %void None %fn
%entry = OpLabel
%px = OpAccessChain %pu32 %bx %c0 %c0
%x = OpCooperativeMatrixLoadKHR %mat %px %c0 %cols Aligned|MakePointerVisible|NonPrivatePointer 4 %c2
OpStore %priv %x
%y = OpLoad %mat %priv
%pflag = OpAccessChain %pu32 %bx %c0 %c512
%flag = OpLoad %u32 %pflag
%cond = OpIEqual %bool %flag %c0
OpSelectionMerge %merge None
OpBranchConditional %cond %then %else
%then = OpLabel
%t = OpIAdd %mat %y %splat
OpBranch %merge
%else = OpLabel
%e = OpISub %mat %y %splat
OpBranch %merge
%merge = OpLabel
%phi = OpPhi %mat %t %then %e %else
%bc = OpBitcast %imat %phi
%po = OpAccessChain %pu32 %bo %c0 %c0
OpCooperativeMatrixStoreKHR %po %bc %c0 %cols
%pn = OpAccessChain %pu32 %bo %c0 %c256
OpCooperativeMatrixStoreKHR %pn %null %c0 %cols Aligned|MakePointerAvailable|NonPrivatePointer 4 %c2
%pz = OpAccessChain %pu32 %bo %c0 %c512
%neg = OpSNegate %imat %bc
OpCooperativeMatrixStoreKHR %pz %neg %c0 %cols
OpReturn
OpFunctionEnd
";

#[test]
fn spec_constant_shapes_null_phi_bitcast_private_and_memory_operands() {
    let (module, _) = assemble(FORMS, &AssembleOptions::default()).expect("assembles");
    let module = common::validated(module);
    for (rows, cols, flag) in [(16u32, 16u32, 0u32), (8, 4, 1), (16, 8, 0)] {
        let mut spec = SpecConstants::new();
        spec.insert(0, u64::from(rows));
        spec.insert(1, u64::from(cols));
        spec.insert(2, 7);
        let elems = (rows * cols) as usize;
        let mut x: Vec<u32> = (0..513).map(|i| i * 3 + 1).collect();
        x[512] = flag;
        for layout in CoopmatLayout::all() {
            let pipeline = Device::new(common::coopmat_profile(32))
                .compute_pipeline(&module, "main", &spec)
                .unwrap_or_else(|e| panic!("pipeline: {e}"));
            let mut res = Resources::default();
            res.buffers.insert((0, 0), common::u32s(&x));
            res.buffers.insert((0, 1), common::u32s(&vec![9; 768]));
            let options = RunOptions {
                threads: 1,
                coopmat_layout: layout,
                ..RunOptions::default()
            };
            let report = pipeline
                .dispatch(&mut res, [1, 1, 1], &options)
                .unwrap_or_else(|e| panic!("dispatch: {e}"));
            assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
            let o = common::to_u32s(&res.buffers[&(0, 1)]);
            for e in 0..elems {
                let want = if flag == 0 {
                    x[e] + 7
                } else {
                    x[e].wrapping_sub(7)
                };
                assert_eq!(o[e], want, "{rows}x{cols} {layout} element {e}");
                assert_eq!(o[256 + e], 0, "null {e}");
                assert_eq!(o[512 + e], want.wrapping_neg(), "negated {e}");
            }
            // Nothing past the matrix is written.
            if elems < 256 {
                assert_eq!(o[elems], 9);
                assert_eq!(o[256 + elems], 9);
            }
        }
    }
}

/// Loads and stores through PhysicalStorageBuffer pointers (`GL_EXT_buffer_reference`), and an
/// out-of-bounds one through them reported like any other.
#[test]
fn loads_and_stores_through_physical_storage_buffer_pointers() {
    let src = format!(
        "{HEADER}
#extension GL_EXT_buffer_reference : require
layout(local_size_x = 32) in;
layout(buffer_reference, std430) buffer Mat {{ float d[]; }};
layout(set = 0, binding = 0) buffer Addr {{ Mat src; Mat dst; uint offset; }};
void main() {{
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m;
  coopMatLoad(m, src.d, offset, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatStore(m * 2.0, dst.d, 0, 16, gl_CooperativeMatrixLayoutColumnMajor);
}}
"
    );
    let module = compile(&src);
    let x: Vec<f32> = (0..256).map(|i| i as f32).collect();
    for (offset, oob) in [(0u32, false), (8, true)] {
        for layout in CoopmatLayout::all() {
            let pipeline = Device::new(common::coopmat_profile(32))
                .compute_pipeline(&module, "main", &SpecConstants::new())
                .unwrap_or_else(|e| panic!("pipeline: {e}"));
            let mut res = Resources::default();
            res.buffers.insert((0, 0), vec![0; 24]);
            res.buffers.insert((0, 1), common::f32s(&x));
            res.buffers.insert((0, 2), vec![0; 1024]);
            let (a1, a2) = (
                res.device_address(0, 1).expect("bound"),
                res.device_address(0, 2).expect("bound"),
            );
            let mut addr = Vec::new();
            addr.extend(a1.to_le_bytes());
            addr.extend(a2.to_le_bytes());
            addr.extend(offset.to_le_bytes());
            addr.extend([0; 4]);
            res.buffers.insert((0, 0), addr);
            let options = RunOptions {
                threads: 1,
                coopmat_layout: layout,
                ..RunOptions::default()
            };
            let report = pipeline
                .dispatch(&mut res, [1, 1, 1], &options)
                .unwrap_or_else(|e| panic!("dispatch: {e}"));
            let found_oob = report
                .diagnostics
                .iter()
                .all(|d| matches!(d.finding, tangle_exec::Finding::OutOfBounds { .. }));
            assert!(
                found_oob && report.diagnostics.is_empty() != oob,
                "{layout}"
            );
            let o = common::to_f32s(&res.buffers[&(0, 2)]);
            for e in 0..256 {
                let (r, c) = (e / 16, e % 16);
                let s = offset as usize + e;
                let want = if s < 256 { 2.0 * s as f32 } else { 0.0 };
                assert_eq!(o[c * 16 + r], want, "{layout} offset {offset} element {e}");
            }
        }
    }
}
