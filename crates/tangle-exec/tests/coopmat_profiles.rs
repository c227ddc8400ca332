//! Every `VkCooperativeMatrixPropertiesKHR` entry of every named profile, executed: per entry one
//! GLSL module (the profile as is, its own subgroup size) that loads A row-major and B
//! column-major with odd strides, C through a `uvec4` pointer, runs the entry's MulAdd (plain,
//! wrapping, saturating where the entry says, with its signedness mix), round-trips the result
//! through Workgroup memory (scalar and vector pointers), and applies length, splat constants,
//! composite access, element-wise ops, scalar multiply through a function, and conversions —
//! under every layout policy, against plain-Rust references on random inputs written here (not
//! the crate's semantics functions). bfloat16 entries (GL_EXT_bfloat16) run everything but the
//! arithmetic, which bfloat16 does not have; every entry whose shape has a bfloat16 accumulator
//! also converts to bfloat16 (through binary32, as SPV_KHR_bfloat16 defines it). 64-bit entries are not in GLSL (it has no 64-bit
//! `coopmat`): `every_64bit_entry_from_assembly` runs them from SPIR-V assembly.

mod common;

use common::{compile, Rng};
use half::{bf16, f16};
use tangle_exec::profile::{ComponentType as C, CooperativeMatrixProperties};
use tangle_exec::{CoopmatLayout, Device, Profile, Resources, RunOptions, SpecConstants};

fn bits(t: C) -> u32 {
    match t {
        C::Float16 | C::BFloat16 => 16,
        C::Float32 => 32,
        C::Float64 => 64,
        C::Sint(b) | C::Uint(b) => b,
    }
}
fn bytes(t: C) -> usize {
    bits(t) as usize / 8
}
fn is_float(t: C) -> bool {
    matches!(t, C::Float16 | C::BFloat16 | C::Float32 | C::Float64)
}
fn mask(b: u32) -> u64 {
    if b >= 64 {
        u64::MAX
    } else {
        (1 << b) - 1
    }
}
fn glsl(t: C) -> String {
    match t {
        C::Float16 => "float16_t".into(),
        C::BFloat16 => "bfloat16_t".into(),
        C::Float32 => "float".into(),
        C::Float64 => "double".into(),
        C::Sint(b) => format!("int{b}_t"),
        C::Uint(b) => format!("uint{b}_t"),
    }
}
/// An integer component's value.
fn int(t: C, v: u64) -> i128 {
    let v = v & mask(bits(t));
    match t {
        C::Sint(b) if (v >> (b - 1)) & 1 == 1 => i128::from(v) - (1i128 << b),
        _ => i128::from(v),
    }
}
/// A float component's value.
fn float(t: C, v: u64) -> f64 {
    match t {
        C::Float16 => f16::from_bits(v as u16).to_f64(),
        C::BFloat16 => bf16::from_bits(v as u16).to_f64(),
        C::Float32 => f64::from(f32::from_bits(v as u32)),
        _ => f64::from_bits(v),
    }
}
/// `x` converted to the float type `t`: rounded once (f64 → f16 directly), except to bfloat16,
/// which SPV_KHR_bfloat16 reaches through binary32 ("first convert the source value to IEEE754
/// binary32, and then from IEEE754 binary32 to the target format").
fn encode(t: C, x: f64) -> u64 {
    match t {
        C::Float16 => u64::from(f16::from_f64(x).to_bits()),
        C::BFloat16 => u64::from(bf16::from_f32(x as f32).to_bits()),
        C::Float32 => u64::from((x as f32).to_bits()),
        _ => x.to_bits(),
    }
}
/// Significand bits of a float type (the tolerance's unit).
fn precision(t: C) -> i32 {
    match t {
        C::Float16 => 11,
        C::BFloat16 => 8,
        C::Float32 => 24,
        _ => 53,
    }
}
fn pack(t: C, vals: &[u64]) -> Vec<u8> {
    vals.iter()
        .flat_map(|v| v.to_le_bytes()[..bytes(t)].to_vec())
        .collect()
}
fn unpack(t: C, b: &[u8]) -> Vec<u64> {
    b.chunks_exact(bytes(t))
        .map(|c| {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            u64::from_le_bytes(w)
        })
        .collect()
}

/// Random component bits: floats are multiples of 1/4 in [-2, 2] (C: [-8, 8]); integers over
/// their whole range, or in [-3, 3] (`small`), with C pushed toward the range's ends now and then
/// so that saturating entries do saturate.
fn random(t: C, rng: &mut Rng, small: bool, is_c: bool) -> u64 {
    let span = if is_c { 64 } else { 16 };
    if is_float(t) {
        return encode(
            t,
            ((rng.next() % (span + 1)) as f64 - (span / 2) as f64) / 4.0,
        );
    }
    let b = bits(t);
    let v = rng.next() & mask(b);
    if is_c {
        let (lo, hi) = if matches!(t, C::Sint(_)) {
            (1u64 << (b - 1), (1u64 << (b - 1)) - 1)
        } else {
            (0, mask(b))
        };
        let near = rng.next() % 8;
        return match rng.next() % 4 {
            0 => hi.wrapping_sub(near) & mask(b),
            1 => lo.wrapping_add(near) & mask(b),
            _ => v,
        };
    }
    match (small, t) {
        (true, C::Uint(_)) => rng.next() % 4,
        (true, _) => ((rng.next() % 7) as i64 - 3) as u64 & mask(b),
        _ => v,
    }
}

/// One integer MulAdd element: `None` where a saturating accumulation's intermediate overflows
/// (undefined: "If SaturatingAccumulationKHR is present and the intermediate results overflow
/// the Result's range the behavior is undefined" is how tangle reads the spec's note).
fn mul_add_int(e: &CooperativeMatrixProperties, a: &[u64], b: &[u64], c: u64) -> Option<u64> {
    let n = bits(e.result);
    let (lo, hi) = match e.result {
        C::Sint(_) => (-(1i128 << (n - 1)), (1i128 << (n - 1)) - 1),
        _ => (0, (1i128 << n) - 1),
    };
    let (mut exact, mut wrapped, mut overflow) = (0i128, 0u128, false);
    for (&x, &y) in a.iter().zip(b) {
        let (x, y) = (int(e.a, x), int(e.b, y));
        // Two 64-bit factors can exceed i128; the wrapped sum needs only the low bits.
        wrapped = wrapped.wrapping_add((x as u128).wrapping_mul(y as u128));
        match x.checked_mul(y) {
            Some(p) => {
                exact = exact.wrapping_add(p);
                overflow |= !(lo..=hi).contains(&p) || !(lo..=hi).contains(&exact);
            }
            None => overflow = true,
        }
    }
    let c = int(e.c, c);
    if e.saturating {
        (!overflow).then(|| (exact + c).clamp(lo, hi) as u64 & mask(n))
    } else {
        Some(wrapped.wrapping_add(c as u128) as u64 & mask(n))
    }
}

/// The GLSL module of one entry on a subgroup of `sg` invocations (see the file's doc).
/// `targets` are the component types `mc` is converted to.
fn shader(e: &CooperativeMatrixProperties, sg: u32, targets: &[C]) -> String {
    let (m, n, k) = (e.m, e.n, e.k);
    let (ta, tb, tr) = (glsl(e.a), glsl(e.b), glsl(e.result));
    let cv = c_row_vectors(e);
    let sat = if e.saturating {
        ", gl_MatrixOperandsSaturatingAccumulation"
    } else {
        ""
    };
    let mut conv = String::new();
    for (i, &t) in targets.iter().enumerate() {
        // Float to unsigned of a negative value is undefined: convert a square instead.
        let src = if is_float(e.result) && matches!(t, C::Uint(_)) {
            "mc * mc"
        } else {
            "mc"
        };
        conv += &format!(
            "layout(set = 0, binding = {b}) buffer T{i} {{ {g} t{i}[]; }};
void convert{i}(MR mc) {{
  coopmat<{g}, gl_ScopeSubgroup, M, N, gl_MatrixUseAccumulator> x = \
    coopmat<{g}, gl_ScopeSubgroup, M, N, gl_MatrixUseAccumulator>({src});
  coopMatStore(x, t{i}, 0, N, gl_CooperativeMatrixLayoutRowMajor);
}}
",
            b = 5 + i,
            g = glsl(t)
        );
    }
    let calls: String = (0..targets.len())
        .map(|i| format!("  convert{i}(mc);\n"))
        .collect();
    // bfloat16 has conversions and MulAdd, no arithmetic (SPV_KHR_bfloat16).
    let (arith, scale, zero_plus) = if e.result == C::BFloat16 {
        ("", "", "")
    } else {
        (
            "  store(mc + r, 1);
  store(mc - r, 2);
  store(mc * r, 3);
  store(r / MR(TR(3)), 4);
  store(-mc, 5);
  store(scale(mc, TR(3)), 6);
  MR z = MR(TR(5));
  for (int i = 0; i < z.length(); ++i) { z[i] = z[i] + mc[i] * TR(2); }
  store(z, 7);
",
            "MR scale(MR x, TR s) { return x * s; }\n",
            "MR(TR(0)) + ",
        )
    };
    let bf16 = if [e.a, e.b, e.c, e.result]
        .iter()
        .chain(targets)
        .any(|&t| t == C::BFloat16)
    {
        "#extension GL_EXT_bfloat16 : require\n"
    } else {
        ""
    };
    format!(
        "#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
{bf16}layout(local_size_x = {sg}) in;
#define M {m}
#define N {n}
#define K {k}
#define TR {tr}
#define MA coopmat<{ta}, gl_ScopeSubgroup, M, K, gl_MatrixUseA>
#define MB coopmat<{tb}, gl_ScopeSubgroup, K, N, gl_MatrixUseB>
#define MR coopmat<TR, gl_ScopeSubgroup, M, N, gl_MatrixUseAccumulator>
layout(set = 0, binding = 0) buffer A {{ {ta} a[]; }};
layout(set = 0, binding = 1) buffer B {{ {tb} b[]; }};
layout(set = 0, binding = 2) buffer Cv {{ uvec4 c[]; }};
layout(set = 0, binding = 3) buffer R {{ TR r_out[]; }};
layout(set = 0, binding = 4) buffer L {{ uint lens[]; }};
shared TR tile[N * (M + 1)];
shared uvec4 vtile[M * {cv}];
{conv}{scale}void store(MR x, uint region) {{
  coopMatStore(x, r_out, region * M * N, N, gl_CooperativeMatrixLayoutRowMajor);
}}
void main() {{
  MA ma; MB mb; MR mc;
  coopMatLoad(ma, a, 1, K + 1, gl_CooperativeMatrixLayoutRowMajor);
  coopMatLoad(mb, b, 0, K + 3, gl_CooperativeMatrixLayoutColumnMajor);
  coopMatLoad(mc, c, 1, {cv}, gl_CooperativeMatrixLayoutRowMajor);
  MR r = coopMatMulAdd(ma, mb, mc{sat});
  coopMatStore(r, tile, 0, M + 1, gl_CooperativeMatrixLayoutColumnMajor);
  coopMatStore(mc, vtile, 0, {cv}, gl_CooperativeMatrixLayoutRowMajor);
  barrier();
  MR back; MR mc2;
  coopMatLoad(back, tile, 0, M + 1, gl_CooperativeMatrixLayoutColumnMajor);
  coopMatLoad(mc2, vtile, 0, {cv}, gl_CooperativeMatrixLayoutRowMajor);
  store(back, 0);
{arith}  store(mc2, 8);
  coopMatStore({zero_plus}mc, r_out, 9 * M * N, M, gl_CooperativeMatrixLayoutColumnMajor);
  uint inv = gl_LocalInvocationIndex;
  lens[inv * 3] = uint(ma.length());
  lens[inv * 3 + 1] = uint(mb.length());
  lens[inv * 3 + 2] = uint(r.length());
{calls}}}
"
    )
}

/// `uvec4`s per row of C plus one spare (so the stride is not the row length).
fn c_row_vectors(e: &CooperativeMatrixProperties) -> usize {
    (e.n as usize * bytes(e.c)).div_ceil(16) + 1
}

/// Compares `got` with an exact `want` for an integer type, or within `ulps` units of the last
/// place (of the larger magnitude, at least one of 1.0) for a float type.
fn check(t: C, got: u64, want: f64, ulps: f64, what: &str) {
    if is_float(t) {
        let g = float(t, got);
        let unit = 2f64.powi(1 - precision(t)) * want.abs().max(1.0);
        assert!((g - want).abs() <= ulps * unit, "{what}: {g} vs {want}");
    } else {
        assert_eq!(got & mask(bits(t)), want as u64 & mask(bits(t)), "{what}");
    }
}

/// Runs one entry of `profile` under every layout; returns the layouts run.
fn run_entry(profile: &Profile, e: &CooperativeMatrixProperties, seed: u64) -> usize {
    assert_eq!(e.c, e.result, "GLSL's coopMatMulAdd returns C's type");
    let sg = profile.subgroup_size;
    // Conversions go to the other accumulator types the profile lists at this shape (a type
    // it lacks fails at pipeline creation).
    let mut targets: Vec<C> = Vec::new();
    for t in profile
        .cooperative_matrix
        .iter()
        .filter(|f| (f.m, f.n) == (e.m, e.n))
    {
        for t in [t.c, t.result] {
            // A bfloat16 C has no arithmetic to square it with: no unsigned targets.
            let unsigned_of_bf16 = e.result == C::BFloat16 && matches!(t, C::Uint(_));
            if t != e.result && bits(t) < 64 && !unsigned_of_bf16 && !targets.contains(&t) {
                targets.push(t);
            }
        }
    }
    let module = compile(&shader(e, sg, &targets));
    let (m, n, k) = (e.m as usize, e.n as usize, e.k as usize);
    let mut rng = Rng(seed);
    let small = e.saturating;
    // A (m×k) row-major at 1, stride k+1; B (k×n) column-major at 0, stride k+3.
    let a: Vec<u64> = (0..m * k)
        .map(|_| random(e.a, &mut rng, small, false))
        .collect();
    let b: Vec<u64> = (0..k * n)
        .map(|_| random(e.b, &mut rng, small, false))
        .collect();
    let c: Vec<u64> = (0..m * n)
        .map(|_| random(e.c, &mut rng, small, true))
        .collect();
    let mut abuf = vec![0; 1 + m * (k + 1)];
    let mut bbuf = vec![0; n * (k + 3)];
    for i in 0..m {
        abuf[1 + i * (k + 1)..][..k].copy_from_slice(&a[i * k..][..k]);
    }
    for j in 0..n {
        for p in 0..k {
            bbuf[j * (k + 3) + p] = b[p * n + j];
        }
    }
    let cv = c_row_vectors(e);
    let mut cbuf = vec![0u8; 16 * (1 + m * cv)];
    for i in 0..m {
        cbuf[16 * (1 + i * cv)..][..n * bytes(e.c)].copy_from_slice(&pack(e.c, &c[i * n..][..n]));
    }
    let mn = m * n;
    let regions = 10;
    let tr = e.result;
    let float_r = is_float(tr);
    let undefined: Vec<bool> = (0..mn)
        .map(|x| {
            !float_r && {
                let (i, j) = (x / n, x % n);
                let col: Vec<u64> = (0..k).map(|p| b[p * n + j]).collect();
                mul_add_int(e, &a[i * k..][..k], &col, c[x]).is_none()
            }
        })
        .collect();
    let mut bufs = vec![
        pack(e.a, &abuf),
        pack(e.b, &bbuf),
        cbuf,
        vec![0; regions * mn * bytes(tr)],
        vec![0; 3 * sg as usize * 4],
    ];
    bufs.extend(targets.iter().map(|&t| vec![0; mn * bytes(t)]));
    let pipeline = Device::new(profile.clone())
        .compute_pipeline(&module, "main", &SpecConstants::new())
        .unwrap_or_else(|err| panic!("{} {e}: pipeline: {err}", profile.name));
    for layout in CoopmatLayout::all() {
        let what = format!("{} [{e}] {layout}", profile.name);
        let mut res = Resources::default();
        for (i, buf) in bufs.iter().enumerate() {
            res.buffers.insert((0, i as u32), buf.clone());
        }
        let options = RunOptions {
            threads: 1,
            coopmat_layout: layout,
            ..RunOptions::default()
        };
        let report = pipeline
            .dispatch(&mut res, [1, 1, 1], &options)
            .unwrap_or_else(|err| panic!("{what}: dispatch: {err}"));
        let out = |i: u32| &res.buffers[&(0, i)];
        // Exactly the saturating elements whose intermediate overflows are reported.
        let reported = report.diagnostics.len() + report.stats.dropped_diagnostics as usize;
        let want_reports = undefined.iter().filter(|u| **u).count();
        assert_eq!(
            reported,
            want_reports,
            "{what}: {:?}",
            report.diagnostics.first()
        );
        let r = unpack(tr, out(3));
        let cval = |x: usize| {
            if float_r {
                float(tr, c[x])
            } else {
                int(tr, c[x]) as f64
            }
        };
        let ival = |x: usize| int(tr, c[x]);
        for x in 0..mn {
            let at = |region: usize| r[region * mn + x];
            let (i, j) = (x / n, x % n);
            let w = format!("{what} element ({i}, {j})");
            // 0: MulAdd, through Workgroup memory column-major with stride m+1.
            let mad = if float_r {
                let terms: Vec<f64> = (0..k)
                    .map(|p| float(e.a, a[i * k + p]) * float(e.b, b[p * n + j]))
                    .collect();
                let want = cval(x) + terms.iter().sum::<f64>();
                let size = cval(x).abs() + terms.iter().map(|t| t.abs()).sum::<f64>();
                let g = float(tr, at(0));
                let tol = 2f64.powi(1 - precision(tr)) * size.max(1.0) * 2.0;
                assert!((g - want).abs() <= tol, "{w} MulAdd: {g} vs {want}");
                g
            } else if undefined[x] {
                0.0
            } else {
                let col: Vec<u64> = (0..k).map(|p| b[p * n + j]).collect();
                let want = mul_add_int(e, &a[i * k..][..k], &col, c[x]).unwrap_or(0);
                assert_eq!(at(0), want, "{w} MulAdd");
                0.0
            };
            if float_r {
                let (cx, rx) = (cval(x), mad);
                let arithmetic = tr != C::BFloat16;
                for (region, want, ulps) in [
                    (1, cx + rx, 0.5),
                    (2, cx - rx, 0.5),
                    (3, cx * rx, 0.5),
                    (4, rx / 3.0, 3.0),
                    (5, -cx, 0.0),
                    (6, cx * 3.0, 0.5),
                    (7, 5.0 + cx * 2.0, 0.5),
                    (8, cx, 0.0),
                    (9, cx, 0.0),
                ] {
                    if !arithmetic && (1..=7).contains(&region) {
                        continue;
                    }
                    let g = if region == 9 {
                        r[9 * mn + j * m + i]
                    } else {
                        at(region)
                    };
                    check(tr, g, want, ulps, &format!("{w} region {region}"));
                }
            } else if !undefined[x] {
                let (cx, rx) = (ival(x), int(tr, at(0)));
                for (region, want) in [
                    (1, cx.wrapping_add(rx)),
                    (2, cx.wrapping_sub(rx)),
                    (3, cx.wrapping_mul(rx)),
                    (4, rx / 3), // truncating, as OpSDiv and OpUDiv
                    (5, -cx),
                    (6, cx * 3),
                    (7, 5 + cx * 2),
                    (8, cx),
                ] {
                    assert_eq!(
                        at(region),
                        want as u64 & mask(bits(tr)),
                        "{w} region {region}"
                    );
                }
                assert_eq!(
                    r[9 * mn + j * m + i],
                    c[x] & mask(bits(tr)),
                    "{w} column-major"
                );
            }
            // Conversions of C (of C squared from a float to an unsigned type).
            for (ti, &t) in targets.iter().enumerate() {
                let got = unpack(t, out(5 + ti as u32))[x];
                let w = format!("{w} to {t}");
                match (float_r, is_float(t)) {
                    (true, true) => assert_eq!(got, encode(t, cval(x)), "{w}"),
                    (false, true) => assert_eq!(got, encode(t, ival(x) as f64), "{w}"),
                    (true, false) => {
                        let v = if matches!(t, C::Uint(_)) {
                            cval(x) * cval(x)
                        } else {
                            cval(x)
                        };
                        assert_eq!(got, v.trunc() as i64 as u64 & mask(bits(t)), "{w}");
                    }
                    (false, false) => assert_eq!(got, ival(x) as u64 & mask(bits(t)), "{w}"),
                }
            }
        }
        // OpCooperativeMatrixLengthKHR: tangle gives every invocation ⌈rows × columns /
        // invocations⌉ (policy.rs), so all elements are reachable through composite access.
        let lens = common::to_u32s(out(4));
        for (t, (rows, cols)) in [(m, k), (k, n), (m, n)].into_iter().enumerate() {
            let want = (rows * cols).div_ceil(sg as usize) as u32;
            for inv in 0..sg as usize {
                assert_eq!(lens[inv * 3 + t], want, "{what}: length {t} at {inv}");
            }
        }
    }
    CoopmatLayout::all().len()
}

#[test]
fn every_entry_of_every_profile() {
    let (mut entries, mut runs, mut skipped) = (0, 0, 0);
    for profile in Profile::all() {
        for (i, e) in profile.cooperative_matrix.clone().iter().enumerate() {
            let types = [e.a, e.b, e.c, e.result];
            // GLSL has no `coopmat` of double or 64-bit integers (glslang: "coopmat invalid
            // basic type").
            if types.iter().any(|&t| bits(t) == 64) {
                skipped += 1;
                continue;
            }
            runs += run_entry(&profile, e, 1000 * entries as u64 + i as u64);
            entries += 1;
        }
    }
    println!("checked {entries} entries × layouts = {runs} runs ({skipped} 64-bit entries: run from assembly below)");
    assert!(entries > 50);
}

/// The SPIR-V name of a scalar type.
fn asm_type(t: C) -> String {
    match t {
        C::Float16 => "%f16".into(),
        C::BFloat16 => "%bf16".into(),
        C::Float32 => "%f32".into(),
        C::Float64 => "%f64".into(),
        C::Sint(b) => format!("%s{b}"),
        C::Uint(b) => format!("%u{b}"),
    }
}

/// The declaration of a scalar type.
fn asm_declaration(t: C) -> String {
    let name = asm_type(t);
    match t {
        C::BFloat16 => format!("{name} = OpTypeFloat 16 BFloat16KHR"),
        C::Sint(b) => format!("{name} = OpTypeInt {b} 1"),
        C::Uint(b) => format!("{name} = OpTypeInt {b} 0"),
        _ => format!("{name} = OpTypeFloat {}", bits(t)),
    }
}

/// The two conversion targets of an assembly entry's C: another type of the same kind
/// (S/UConvert, FConvert) and one across kinds (ConvertSToF/UToF to f64, ConvertFToS), each an
/// accumulator type the entry's profile lists at its shape.
fn conversion_targets(t: C) -> [C; 2] {
    match t {
        C::Sint(_) => [C::Sint(32), C::Float64],
        C::Uint(_) => [C::Uint(32), C::Float64],
        C::Float32 => [C::Float16, C::Sint(32)],
        C::BFloat16 => [C::Float32, C::Sint(32)],
        _ => [C::Float32, C::Sint(64)],
    }
}

/// Regions of R the 64-bit module writes (see [`asm_module`]).
const ASM_REGIONS: usize = 14;

/// `uvec4`s per row (or column) of `count` components of `t`, plus one spare, so the stride is
/// not the row's length (odd for the 64-bit entries' 8-component rows).
fn vec4_stride(t: C, count: u32) -> u32 {
    (count * bytes(t) as u32).div_ceil(16) + 1
}

/// One entry as SPIR-V assembly (GLSL has no 64-bit `coopmat`, and no bfloat16 constants or
/// composite access without arithmetic), on `sg` invocations:
/// A row-major at element 1 with stride K+1, B column-major with stride K+3, C row-major; the
/// MulAdd with the entry's signedness and saturation, stored through Workgroup memory
/// column-major (stride M+1) into region 0 of R; then 1: C+R, 2: C−R, 3: C·R, 4: −C, 5: the
/// splat constant 5, 6: OpConstantNull, 7: C·3 (OpMatrixTimesScalar for floats), 8: C+C through
/// a function taking and returning a matrix, 9: 5 + 2·C element by element with
/// OpCompositeExtract/Insert over the length, 10: OpPhi of C, 11: R/3; region 12 holds C
/// column-major with stride M. Through vector pointers (`uvec4`, strides from [`vec4_stride`]):
/// C is loaded again row-major from V, stored column-major into W and into Workgroup memory,
/// loaded back from there column-major, and stored into region 13. Lengths of A, B and C go to
/// L, conversions of C to T1 and T2.
///
/// A bfloat16 C has no arithmetic (SPV_KHR_bfloat16 lists the instructions it may be used
/// with): regions 1–4, 7 and 8 are then OpCopyObject of C (8 still through the function), 9
/// inserts the extracted elements unchanged, and 11 is a copy of R.
fn asm_module(e: &CooperativeMatrixProperties, sg: u32) -> String {
    let (m, n, k) = (e.m, e.n, e.k);
    let tc = e.result;
    let [t1, t2] = conversion_targets(tc);
    let float = is_float(tc);
    let arithmetic = tc != C::BFloat16;
    let op = |f: &str, i: &str| {
        if !arithmetic {
            "OpCopyObject".to_string()
        } else if float {
            f.to_string()
        } else {
            i.to_string()
        }
    };
    let div = match tc {
        C::Sint(_) => "OpSDiv",
        C::Uint(_) => "OpUDiv",
        _ => "OpFDiv",
    };
    let signed = |t: C| matches!(t, C::Sint(_));
    let mut operands: Vec<&str> = Vec::new();
    for (t, flag) in [
        (e.a, "MatrixASignedComponentsKHR"),
        (e.b, "MatrixBSignedComponentsKHR"),
        (e.c, "MatrixCSignedComponentsKHR"),
        (e.result, "MatrixResultSignedComponentsKHR"),
    ] {
        if signed(t) {
            operands.push(flag);
        }
    }
    if e.saturating {
        operands.push("SaturatingAccumulationKHR");
    }
    let operands = if operands.is_empty() {
        String::new()
    } else {
        format!(" {}", operands.join("|"))
    };
    // Scalar types, each once.
    let mut scalars: Vec<C> = Vec::new();
    for t in [C::Uint(32), e.a, e.b, tc, t1, t2] {
        if !scalars.contains(&t) {
            scalars.push(t);
        }
    }
    let mut caps = vec!["Shader", "VulkanMemoryModel", "CooperativeMatrixKHR"];
    for t in &scalars {
        match t {
            C::Float16 => caps.extend(["Float16", "StorageBuffer16BitAccess"]),
            C::Float64 => caps.push("Float64"),
            C::Sint(16) | C::Uint(16) => caps.extend(["Int16", "StorageBuffer16BitAccess"]),
            C::Sint(64) | C::Uint(64) => caps.push("Int64"),
            C::BFloat16 => caps.extend(["BFloat16TypeKHR", "BFloat16CooperativeMatrixKHR"]),
            _ => {}
        }
    }
    caps.sort_unstable();
    caps.dedup();
    let mut text: String = caps.iter().map(|c| format!("OpCapability {c}\n")).collect();
    text += "OpExtension \"SPV_KHR_cooperative_matrix\"\n";
    if scalars.contains(&C::BFloat16) {
        text += "OpExtension \"SPV_KHR_bfloat16\"\n";
    }
    text += "OpMemoryModel Logical Vulkan\n";
    let buffers = [e.a, e.b, tc, tc, C::Uint(32), t1, t2];
    // Bindings 7 (V) and 8 (W) hold `uvec4`s.
    let names: Vec<String> = (0..buffers.len() + 2).map(|i| format!("%buf{i}")).collect();
    let (cv, cw) = (vec4_stride(tc, n), vec4_stride(tc, m));
    text += &format!(
        "OpEntryPoint GLCompute %main \"main\" {} %tile %vtile %lid\nOpExecutionMode %main LocalSize {sg} 1 1\nOpDecorate %lid BuiltIn LocalInvocationIndex\n\
OpDecorate %rt_v4 ArrayStride 16\nOpDecorate %blk_v4 Block\nOpMemberDecorate %blk_v4 0 Offset 0\n",
        names.join(" ")
    );
    let blk = |t: C| format!("%blk_{}", &asm_type(t)[1..]);
    for &t in &scalars {
        let s = &asm_type(t)[1..];
        text += &format!(
            "OpDecorate %rt_{s} ArrayStride {}\nOpDecorate {} Block\nOpMemberDecorate {} 0 Offset 0\n",
            bytes(t),
            blk(t),
            blk(t)
        );
    }
    for (i, name) in names.iter().enumerate() {
        text += &format!("OpDecorate {name} DescriptorSet 0\nOpDecorate {name} Binding {i}\n");
    }
    text += "%void = OpTypeVoid\n%fn = OpTypeFunction %void\n%bool = OpTypeBool\n";
    for &t in &scalars {
        let s = &asm_type(t)[1..];
        text += &format!(
            "{}\n%rt_{s} = OpTypeRuntimeArray %{s}\n{} = OpTypeStruct %rt_{s}\n%pblk_{s} = OpTypePointer StorageBuffer {}\n%psb_{s} = OpTypePointer StorageBuffer %{s}\n",
            asm_declaration(t),
            blk(t),
            blk(t)
        );
    }
    let (ta, tb, tcs) = (asm_type(e.a), asm_type(e.b), asm_type(tc));
    let mn = m * n;
    let mut consts = vec![
        0,
        1,
        2,
        3,
        m,
        n,
        k + 1,
        k + 3,
        m + 1,
        n * (m + 1),
        264,
        cv,
        cw,
        n * cw,
    ];
    consts.extend((0..ASM_REGIONS as u32).map(|r| r * mn));
    consts.sort_unstable();
    consts.dedup();
    for c in &consts {
        text += &format!("%c{c} = OpConstant %u32 {c}\n");
    }
    text += "%u32x4 = OpTypeVector %u32 4\n%rt_v4 = OpTypeRuntimeArray %u32x4\n%blk_v4 = OpTypeStruct %rt_v4\n\
%pblk_v4 = OpTypePointer StorageBuffer %blk_v4\n%psb_v4 = OpTypePointer StorageBuffer %u32x4\n";
    let lit = |v: u32| {
        if float {
            format!("{v}.0")
        } else {
            v.to_string()
        }
    };
    text += &format!(
        "%t2 = OpConstant {tcs} {}\n%t3 = OpConstant {tcs} {}\n%t5 = OpConstant {tcs} {}\n%true = OpConstantTrue %bool\n",
        lit(2),
        lit(3),
        lit(5)
    );
    let mat = |name: &str, t: &str, rows: u32, cols: u32, usage: u32| {
        format!("{name} = OpTypeCooperativeMatrixKHR {t} %c3 %c{rows} %c{cols} %c{usage}\n")
    };
    text += &mat("%mA", &ta, m, k, 0);
    text += &mat("%mB", &tb, k, n, 1);
    text += &mat("%mC", &tcs, m, n, 2);
    text += &mat("%mT1", &asm_type(t1), m, n, 2);
    text += &mat("%mT2", &asm_type(t2), m, n, 2);
    // The constants are named by value, so K equal to M or N shares one.
    text += &format!(
        "%k3 = OpConstantComposite %mC %t3\n%k5 = OpConstantComposite %mC %t5\n%null = OpConstantNull %mC\n\
%tilearr = OpTypeArray {tcs} %c{}\n%ptile = OpTypePointer Workgroup %tilearr\n%wp = OpTypePointer Workgroup {tcs}\n\
%tile = OpVariable %ptile Workgroup\n%pin = OpTypePointer Input %u32\n%lid = OpVariable %pin Input\n%fnM = OpTypeFunction %mC %mC\n\
%vtilearr = OpTypeArray %u32x4 %c{}\n%pvtile = OpTypePointer Workgroup %vtilearr\n%wv = OpTypePointer Workgroup %u32x4\n\
%vtile = OpVariable %pvtile Workgroup\n%buf7 = OpVariable %pblk_v4 StorageBuffer\n%buf8 = OpVariable %pblk_v4 StorageBuffer\n",
        n * (m + 1),
        n * cw
    );
    for (&t, name) in buffers.iter().zip(&names) {
        text += &format!(
            "{name} = OpVariable %pblk_{} StorageBuffer\n",
            &asm_type(t)[1..]
        );
    }
    let add = op("OpFAdd", "OpIAdd");
    let twice = if arithmetic {
        format!("{add} %mC %x %x")
    } else {
        "OpCopyObject %mC %x".to_string()
    };
    text += &format!(
        "%twice = OpFunction %mC None %fnM\n%x = OpFunctionParameter %mC\n%tl = OpLabel\n%xx = {twice}\nOpReturnValue %xx\nOpFunctionEnd\n"
    );
    text += "%main = OpFunction %void None %fn\n%entry = OpLabel\n";
    let psb = |t: C| format!("%psb_{}", &asm_type(t)[1..]);
    text += &format!(
        "%pa = OpAccessChain {} %buf0 %c0 %c1\n%a = OpCooperativeMatrixLoadKHR %mA %pa %c0 %c{}\n\
%pb = OpAccessChain {} %buf1 %c0 %c0\n%b = OpCooperativeMatrixLoadKHR %mB %pb %c1 %c{}\n\
%pc = OpAccessChain {} %buf2 %c0 %c0\n%c = OpCooperativeMatrixLoadKHR %mC %pc %c0 %c{n}\n\
%r = OpCooperativeMatrixMulAddKHR %mC %a %b %c{operands}\n\
%pt = OpAccessChain %wp %tile %c0\nOpCooperativeMatrixStoreKHR %pt %r %c1 %c{}\n\
OpControlBarrier %c2 %c2 %c264\n%back = OpCooperativeMatrixLoadKHR %mC %pt %c1 %c{}\n",
        psb(e.a),
        k + 1,
        psb(e.b),
        k + 3,
        psb(tc),
        m + 1,
        m + 1
    );
    let length = (m * n).div_ceil(sg);
    let mut values = vec!["%back".to_string()];
    text += &if arithmetic {
        format!(
            "%v1 = {add} %mC %c %r\n%v2 = {} %mC %c %r\n%v3 = {} %mC %c %r\n%v4 = {} %mC %c\n",
            op("OpFSub", "OpISub"),
            op("OpFMul", "OpIMul"),
            op("OpFNegate", "OpSNegate")
        )
    } else {
        (1..=4)
            .map(|i| format!("%v{i} = OpCopyObject %mC %c\n"))
            .collect()
    };
    text += &if !arithmetic {
        "%v7 = OpCopyObject %mC %c\n".to_string()
    } else if float {
        "%v7 = OpMatrixTimesScalar %mC %c %t3\n".to_string()
    } else {
        "%v7 = OpIMul %mC %c %k3\n".to_string()
    };
    text += "%v8 = OpFunctionCall %mC %twice %c\n";
    let mut z = "%k5".to_string();
    for i in 0..length {
        let element = if arithmetic {
            format!(
                "%m{i} = {} {tcs} %e{i} %t2\n%s{i} = {add} {tcs} %t5 %m{i}\n",
                op("OpFMul", "OpIMul")
            )
        } else {
            format!("%s{i} = OpCopyObject {tcs} %e{i}\n")
        };
        text += &format!(
            "%e{i} = OpCompositeExtract {tcs} %c {i}\n{element}%z{i} = OpCompositeInsert %mC %s{i} {z} {i}\n"
        );
        z = format!("%z{i}");
    }
    // OpSelect does not take matrices; OpPhi does.
    text += "OpSelectionMerge %merge None\nOpBranchConditional %true %then %else\n%then = OpLabel\nOpBranch %merge\n\
%else = OpLabel\nOpBranch %merge\n%merge = OpLabel\n%v10 = OpPhi %mC %c %then %r %else\n";
    text += &if arithmetic {
        format!("%v11 = {div} %mC %r %k3\n")
    } else {
        "%v11 = OpCopyObject %mC %r\n".to_string()
    };
    values.extend(
        [
            "%v1", "%v2", "%v3", "%v4", "%k5", "%null", "%v7", "%v8", &z, "%v10", "%v11",
        ]
        .map(String::from),
    );
    for (region, v) in values.iter().enumerate() {
        text += &format!(
            "%pr{region} = OpAccessChain {} %buf3 %c0 %c{}\nOpCooperativeMatrixStoreKHR %pr{region} {v} %c0 %c{n}\n",
            psb(tc),
            region as u32 * mn
        );
    }
    text += &format!(
        "%pr12 = OpAccessChain {} %buf3 %c0 %c{}\nOpCooperativeMatrixStoreKHR %pr12 %c %c1 %c{m}\n",
        psb(tc),
        12 * mn
    );
    // Vector pointers: StorageBuffer row-major in, column-major out, a Workgroup round trip
    // column-major (the barrier orders the matrix store before the load).
    text += &format!(
        "%pv = OpAccessChain %psb_v4 %buf7 %c0 %c0\n%cvv = OpCooperativeMatrixLoadKHR %mC %pv %c0 %c{cv}\n\
%pw = OpAccessChain %psb_v4 %buf8 %c0 %c0\nOpCooperativeMatrixStoreKHR %pw %cvv %c1 %c{cw}\n\
%pvt = OpAccessChain %wv %vtile %c0\nOpCooperativeMatrixStoreKHR %pvt %cvv %c1 %c{cw}\n\
OpControlBarrier %c2 %c2 %c264\n%cvb = OpCooperativeMatrixLoadKHR %mC %pvt %c1 %c{cw}\n\
%pr13 = OpAccessChain {} %buf3 %c0 %c{}\nOpCooperativeMatrixStoreKHR %pr13 %cvb %c0 %c{n}\n",
        psb(tc),
        13 * mn
    );
    text += "%li = OpLoad %u32 %lid\n%l3 = OpIMul %u32 %li %c3\n";
    for (t, ty) in ["%mA", "%mB", "%mC"].iter().enumerate() {
        text += &format!(
            "%len{t} = OpCooperativeMatrixLengthKHR %u32 {ty}\n%li{t} = OpIAdd %u32 %l3 %c{t}\n%pl{t} = OpAccessChain %psb_u32 %buf4 %c0 %li{t}\nOpStore %pl{t} %len{t}\n"
        );
    }
    let same_kind = match tc {
        C::Sint(_) => "OpSConvert",
        C::Uint(_) => "OpUConvert",
        _ => "OpFConvert",
    };
    let across = match tc {
        C::Sint(_) => "OpConvertSToF",
        C::Uint(_) => "OpConvertUToF",
        _ => "OpConvertFToS",
    };
    text += &format!(
        "%cv1 = {same_kind} %mT1 %c\n%pt1 = OpAccessChain {} %buf5 %c0 %c0\nOpCooperativeMatrixStoreKHR %pt1 %cv1 %c0 %c{n}\n\
%cv2 = {across} %mT2 %c\n%pt2 = OpAccessChain {} %buf6 %c0 %c0\nOpCooperativeMatrixStoreKHR %pt2 %cv2 %c0 %c{n}\n\
OpReturn\nOpFunctionEnd\n",
        psb(t1),
        psb(t2)
    );
    text
}

/// Runs one entry (64-bit or bfloat16) from [`asm_module`] on `sg` invocations under every
/// layout, against the plain-Rust references above.
fn run_asm_entry(profile: &Profile, e: &CooperativeMatrixProperties, sg: u32, seed: u64) {
    use tangle_spirv::text::{assemble, AssembleOptions};
    let text = asm_module(e, sg);
    let (module, _) = assemble(&text, &AssembleOptions::default())
        .unwrap_or_else(|err| panic!("[{e}] {err}\n{text}"));
    let module = common::validated(module);
    let name = profile.name.clone();
    let profile = profile
        .clone()
        .with_subgroup_size(sg)
        .expect("subgroup size");
    let pipeline = Device::new(profile)
        .compute_pipeline(&module, "main", &SpecConstants::new())
        .unwrap_or_else(|err| panic!("[{e}] pipeline: {err}"));
    let (m, n, k) = (e.m as usize, e.n as usize, e.k as usize);
    let mn = m * n;
    let mut rng = Rng(seed);
    let small = e.saturating;
    let a: Vec<u64> = (0..m * k)
        .map(|_| random(e.a, &mut rng, small, false))
        .collect();
    let b: Vec<u64> = (0..k * n)
        .map(|_| random(e.b, &mut rng, small, false))
        .collect();
    let c: Vec<u64> = (0..mn)
        .map(|_| random(e.c, &mut rng, small, true))
        .collect();
    let mut abuf = vec![0; 1 + m * (k + 1)];
    for i in 0..m {
        abuf[1 + i * (k + 1)..][..k].copy_from_slice(&a[i * k..][..k]);
    }
    let mut bbuf = vec![0; n * (k + 3)];
    for j in 0..n {
        for p in 0..k {
            bbuf[j * (k + 3) + p] = b[p * n + j];
        }
    }
    let tr = e.result;
    let [t1, t2] = conversion_targets(tr);
    // C again, rows `cv` uvec4s apart; W receives it column-major, columns `cw` apart.
    let (cv, cw) = (
        vec4_stride(e.c, n as u32) as usize,
        vec4_stride(tr, m as u32) as usize,
    );
    let mut vbuf = vec![0u8; 16 * m * cv];
    for i in 0..m {
        vbuf[16 * i * cv..][..n * bytes(e.c)].copy_from_slice(&pack(e.c, &c[i * n..][..n]));
    }
    let bufs = [
        pack(e.a, &abuf),
        pack(e.b, &bbuf),
        pack(e.c, &c),
        vec![0; ASM_REGIONS * mn * bytes(tr)],
        vec![0; 3 * sg as usize * 4],
        vec![0; mn * bytes(t1)],
        vec![0; mn * bytes(t2)],
        vbuf,
        vec![0; 16 * n * cw],
    ];
    let float_r = is_float(tr);
    let col = |j: usize| -> Vec<u64> { (0..k).map(|p| b[p * n + j]).collect() };
    let undefined: Vec<bool> = (0..mn)
        .map(|x| !float_r && mul_add_int(e, &a[x / n * k..][..k], &col(x % n), c[x]).is_none())
        .collect();
    for layout in CoopmatLayout::all() {
        let what = format!("{} [{e}] on {sg} invocations, {layout}", name);
        let mut res = Resources::default();
        for (i, buf) in bufs.iter().enumerate() {
            res.buffers.insert((0, i as u32), buf.clone());
        }
        let options = RunOptions {
            threads: 1,
            coopmat_layout: layout,
            ..RunOptions::default()
        };
        let report = pipeline
            .dispatch(&mut res, [1, 1, 1], &options)
            .unwrap_or_else(|err| panic!("{what}: dispatch: {err}"));
        let reported = report.diagnostics.len() + report.stats.dropped_diagnostics as usize;
        let want_reports = undefined.iter().filter(|u| **u).count();
        assert_eq!(
            reported,
            want_reports,
            "{what}: {:?}",
            report.diagnostics.first()
        );
        let out = |i: u32| &res.buffers[&(0, i)];
        let r = unpack(tr, out(3));
        let (conv1, conv2) = (unpack(t1, out(5)), unpack(t2, out(6)));
        for x in 0..mn {
            let (i, j) = (x / n, x % n);
            let w = format!("{what} element ({i}, {j})");
            let at = |region: usize| r[region * mn + x];
            assert_eq!(
                r[12 * mn + j * m + i],
                c[x] & mask(bits(tr)),
                "{w} column-major"
            );
            assert_eq!(at(13), c[x] & mask(bits(tr)), "{w} through uvec4s");
            let stored = unpack(tr, &out(8)[16 * j * cw + i * bytes(tr)..][..bytes(tr)])[0];
            assert_eq!(
                stored,
                c[x] & mask(bits(tr)),
                "{w} uvec4 column-major store"
            );
            assert_eq!(at(6), 0, "{w} OpConstantNull");
            if float_r {
                let cx = float(tr, c[x]);
                let terms: Vec<f64> = (0..k)
                    .map(|p| float(e.a, a[i * k + p]) * float(e.b, b[p * n + j]))
                    .collect();
                let want = cx + terms.iter().sum::<f64>();
                let size = cx.abs() + terms.iter().map(|t| t.abs()).sum::<f64>();
                let rx = float(tr, at(0));
                let tol = 2f64.powi(1 - precision(tr)) * size.max(1.0) * 2.0;
                assert!((rx - want).abs() <= tol, "{w} MulAdd: {rx} vs {want}");
                // bfloat16: copies in place of the arithmetic (see [`asm_module`]).
                let arithmetic = tr != C::BFloat16;
                let computed = [
                    (1, cx + rx, 0.5),
                    (2, cx - rx, 0.5),
                    (3, cx * rx, 0.5),
                    (4, -cx, 0.0),
                    (7, cx * 3.0, 0.5),
                    (8, cx + cx, 0.0),
                    (9, 5.0 + 2.0 * cx, 0.5),
                    (11, rx / 3.0, 0.5),
                ];
                let computed = computed.map(|(region, want, ulps)| match (arithmetic, region) {
                    (true, _) => (region, want, ulps),
                    (false, 11) => (region, rx, 0.0),
                    (false, _) => (region, cx, 0.0),
                });
                for (region, want, ulps) in
                    computed.into_iter().chain([(5, 5.0, 0.0), (10, cx, 0.0)])
                {
                    check(tr, at(region), want, ulps, &format!("{w} region {region}"));
                }
                assert_eq!(conv1[x], encode(t1, cx), "{w} to {t1}");
                assert_eq!(
                    conv2[x],
                    cx.trunc() as i64 as u64 & mask(bits(t2)),
                    "{w} to {t2}"
                );
            } else {
                let cx = int(tr, c[x]);
                let fixed = [
                    (4, -cx),
                    (5, 5),
                    (7, cx * 3),
                    (8, cx * 2),
                    (9, 5 + 2 * cx),
                    (10, cx),
                ];
                for (region, want) in fixed {
                    assert_eq!(
                        at(region),
                        want as u64 & mask(bits(tr)),
                        "{w} region {region}"
                    );
                }
                assert_eq!(conv1[x], c[x] & mask(32), "{w} to {t1}");
                assert_eq!(conv2[x], (cx as f64).to_bits(), "{w} to {t2}");
                if undefined[x] {
                    continue;
                }
                let want = mul_add_int(e, &a[i * k..][..k], &col(j), c[x]).unwrap_or(0);
                assert_eq!(at(0), want, "{w} MulAdd");
                let rx = int(tr, want);
                let quotient = if matches!(tr, C::Uint(_)) {
                    i128::from((want & mask(bits(tr))) / 3)
                } else {
                    rx / 3
                };
                for (region, want) in [
                    (1, cx.wrapping_add(rx)),
                    (2, cx.wrapping_sub(rx)),
                    (3, cx.wrapping_mul(rx)),
                    (11, quotient),
                ] {
                    assert_eq!(
                        at(region),
                        want as u64 & mask(bits(tr)),
                        "{w} region {region}"
                    );
                }
            }
        }
        let lens = common::to_u32s(out(4));
        for (t, (rows, cols)) in [(m, k), (k, n), (m, n)].into_iter().enumerate() {
            let want = (rows * cols).div_ceil(sg as usize) as u32;
            for inv in 0..sg as usize {
                assert_eq!(lens[inv * 3 + t], want, "{what}: length {t} at {inv}");
            }
        }
    }
}

/// Every 64-bit entry (all in `default`: f64, i64 and u64 accumulators, plain, saturating and
/// widening), from SPIR-V assembly, on 8, 32 and 64 invocations (lengths 8, 2 and 1).
#[test]
fn every_64bit_entry_from_assembly() {
    let mut runs = 0;
    for profile in Profile::all() {
        for (i, e) in profile.cooperative_matrix.iter().enumerate() {
            if ![e.a, e.b, e.c, e.result].iter().any(|&t| bits(t) == 64) {
                continue;
            }
            for sg in [8, 32, 64] {
                run_asm_entry(&profile, e, sg, 77 * i as u64 + u64::from(sg));
                runs += 1;
            }
        }
    }
    println!(
        "{runs} runs of 64-bit entries × {} layouts",
        CoopmatLayout::all().len()
    );
    assert!(runs >= 24, "{runs}");
}

/// Every bfloat16 entry of every profile from SPIR-V assembly as well (the GLSL test above
/// cannot write OpConstantNull, OpPhi or composite access on them without arithmetic), on 8,
/// 32 and 64 invocations.
#[test]
fn every_bfloat16_entry_from_assembly() {
    let mut runs = 0;
    for profile in Profile::all() {
        for (i, e) in profile.cooperative_matrix.iter().enumerate() {
            if ![e.a, e.b, e.c, e.result].contains(&C::BFloat16) {
                continue;
            }
            for sg in [8, 32, 64] {
                run_asm_entry(&profile, e, sg, 91 * i as u64 + u64::from(sg));
                runs += 1;
            }
        }
    }
    println!(
        "{runs} runs of bfloat16 entries × {} layouts",
        CoopmatLayout::all().len()
    );
    // default: 5, nvidia: 1, intel: 2.
    assert!(runs >= 24, "{runs}");
}
