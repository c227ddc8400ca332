//! Integer and float arithmetic through whole shaders, for every width GLSL allows, on random
//! inputs against plain-Rust references.

mod common;
use common::*;

const HEADER: &str = "#version 450
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require
layout(local_size_x = 64) in;
";

/// Integer ops checked per element; `r[k]` of the output holds op k.
const INT_OPS: usize = 14;

fn int_shader(ty: &str, bits: u32) -> String {
    format!(
        "{HEADER}
layout(std430, binding = 0) buffer A {{ {ty} a[]; }};
layout(std430, binding = 1) buffer B {{ {ty} b[]; }};
layout(std430, binding = 2) buffer R {{ {ty} r[]; }};
void main() {{
  uint i = gl_GlobalInvocationID.x;
  {ty} x = a[i]; {ty} y = b[i];
  uint o = i * {INT_OPS}u;
  r[o + 0] = x + y;
  r[o + 1] = x - y;
  r[o + 2] = x * y;
  r[o + 3] = y != {ty}(0) ? x / y : {ty}(0);
  r[o + 4] = y != {ty}(0) ? x % y : {ty}(0);
  r[o + 5] = x << (y & {ty}({m}));
  r[o + 6] = x >> (y & {ty}({m}));
  r[o + 7] = x & y;
  r[o + 8] = x | y;
  r[o + 9] = x ^ y;
  r[o + 10] = ~x;
  r[o + 11] = {ty}(x < y) + {ty}(2) * {ty}(x == y) + {ty}(4) * {ty}(x >= y);
  r[o + 12] = min(x, y);
  r[o + 13] = -x;
}}",
        m = bits - 1
    )
}

fn check_ints(ty: &str, bits: u32, signed: bool) {
    let mut rng = Rng(u64::from(bits) * 31 + u64::from(signed));
    let n = 128usize;
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let sx = |v: u64| -> i128 {
        if signed {
            (((v << (64 - bits)) as i64) >> (64 - bits)) as i128
        } else {
            v as i128
        }
    };
    let mut a: Vec<u64> = (0..n).map(|_| rng.next() & mask).collect();
    let mut b: Vec<u64> = (0..n).map(|_| rng.next() & mask).collect();
    // Edge values and small divisors.
    a[0] = 0;
    a[1] = mask;
    b[2] = 0;
    b[3] = 1;
    b[4] = 3;
    a[5] = 1 << (bits - 1);
    // Avoid MIN / -1 (undefined) for signed types.
    for i in 0..n {
        if signed && sx(a[i]) == -(1i128 << (bits - 1)) && sx(b[i]) == -1 {
            b[i] = 1;
        }
    }
    let bytes = (bits / 8) as usize;
    let pack = |v: &[u64]| -> Vec<u8> {
        v.iter()
            .flat_map(|x| x.to_le_bytes()[..bytes].to_vec())
            .collect()
    };
    let unpack = |v: &[u8]| -> Vec<u64> {
        v.chunks_exact(bytes)
            .map(|c| {
                let mut w = [0u8; 8];
                w[..bytes].copy_from_slice(c);
                u64::from_le_bytes(w)
            })
            .collect()
    };
    let job = Job::new(
        vec![pack(&a), pack(&b), vec![0; n * INT_OPS * bytes]],
        [(n / 64) as u32, 1, 1],
    );
    let (out, report) = run_glsl(&int_shader(ty, bits), &job);
    // Signed `%` of negative values is only warned about (Vulkan leaves it undefined; SPIR-V
    // defines the value this test checks); anything else found is a failure.
    let errors: Vec<_> = report
        .diagnostics
        .iter()
        .filter(|d| d.finding.kind().severity() == tangle_exec::check::kind::Severity::Error)
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    if signed {
        assert!(report
            .diagnostics
            .iter()
            .any(|d| matches!(d.finding, tangle_exec::Finding::NegativeRemainder { .. })));
    }
    let r = unpack(&out[2]);
    let wrap = |v: i128| (v as u64) & mask;
    for i in 0..n {
        let (x, y) = (a[i], b[i]);
        let (ix, iy) = (sx(x), sx(y));
        let sh = (y & u64::from(bits - 1)) as u32;
        let div = if signed {
            ix.checked_div(iy).map_or(0, wrap)
        } else {
            x.checked_div(y).unwrap_or(0)
        };
        let rem = if y == 0 {
            0
        } else if signed {
            // GLSL `%` on signed integers compiles to OpSMod: the sign follows the divisor.
            let mut m = ix % iy;
            if m != 0 && ((m < 0) != (iy < 0)) {
                m += iy;
            }
            wrap(m)
        } else {
            x % y
        };
        let shr = if signed { wrap(ix >> sh) } else { x >> sh };
        let cmp = u64::from(ix < iy) + 2 * u64::from(ix == iy) + 4 * u64::from(ix >= iy);
        let expect = [
            wrap(ix + iy),
            wrap(ix - iy),
            wrap(ix.wrapping_mul(iy)),
            div,
            rem,
            (x << sh) & mask,
            shr,
            x & y,
            x | y,
            x ^ y,
            !x & mask,
            cmp,
            if ix <= iy { x } else { y },
            wrap(-ix),
        ];
        for (k, e) in expect.iter().enumerate() {
            assert_eq!(r[i * INT_OPS + k], *e, "{ty} op {k} on ({x:#x}, {y:#x})");
        }
    }
}

#[test]
fn int8_uint8() {
    check_ints("int8_t", 8, true);
    check_ints("uint8_t", 8, false);
}

#[test]
fn int16_uint16() {
    check_ints("int16_t", 16, true);
    check_ints("uint16_t", 16, false);
}

#[test]
fn int32_uint32() {
    check_ints("int", 32, true);
    check_ints("uint", 32, false);
}

#[test]
fn int64_uint64() {
    check_ints("int64_t", 64, true);
    check_ints("uint64_t", 64, false);
}

const FLOAT_OPS: usize = 8;

fn float_shader(ty: &str) -> String {
    format!(
        "{HEADER}
layout(std430, binding = 0) buffer A {{ {ty} a[]; }};
layout(std430, binding = 1) buffer B {{ {ty} b[]; }};
layout(std430, binding = 2) buffer R {{ {ty} r[]; }};
void main() {{
  uint i = gl_GlobalInvocationID.x;
  {ty} x = a[i]; {ty} y = b[i];
  uint o = i * {FLOAT_OPS}u;
  r[o + 0] = x + y;
  r[o + 1] = x - y;
  r[o + 2] = x * y;
  r[o + 3] = x / y;
  r[o + 4] = -x;
  r[o + 5] = {ty}(x < y);
  r[o + 6] = abs(x);
  r[o + 7] = floor(x);
}}"
    )
}

/// Runs the float shader on `(a, b)` bit patterns and returns the results.
fn run_floats(ty: &str, bytes: usize, a: &[u64], b: &[u64]) -> Vec<u64> {
    let pack = |v: &[u64]| -> Vec<u8> {
        v.iter()
            .flat_map(|x| x.to_le_bytes()[..bytes].to_vec())
            .collect()
    };
    let n = a.len();
    let job = Job::new(
        vec![pack(a), pack(b), vec![0; n * FLOAT_OPS * bytes]],
        [(n / 64) as u32, 1, 1],
    );
    let (out, report) = run_glsl(&float_shader(ty), &job);
    assert!(report.diagnostics.is_empty());
    out[2]
        .chunks_exact(bytes)
        .map(|c| {
            let mut w = [0u8; 8];
            w[..bytes].copy_from_slice(c);
            u64::from_le_bytes(w)
        })
        .collect()
}

#[test]
fn float32() {
    let mut rng = Rng(5);
    let a: Vec<f32> = (0..128).map(|_| rng.f32()).collect();
    let b: Vec<f32> = (0..128).map(|_| rng.f32()).collect();
    let r = run_floats(
        "float",
        4,
        &a.iter().map(|x| u64::from(x.to_bits())).collect::<Vec<_>>(),
        &b.iter().map(|x| u64::from(x.to_bits())).collect::<Vec<_>>(),
    );
    for i in 0..128 {
        let (x, y) = (a[i], b[i]);
        let e = [
            x + y,
            x - y,
            x * y,
            x / y,
            -x,
            f32::from(u8::from(x < y)),
            x.abs(),
            x.floor(),
        ];
        for (k, e) in e.iter().enumerate() {
            assert_eq!(
                r[i * FLOAT_OPS + k] as u32,
                e.to_bits(),
                "float op {k} on ({x}, {y})"
            );
        }
    }
}

#[test]
fn float64() {
    let mut rng = Rng(6);
    let a: Vec<f64> = (0..128).map(|_| rng.f32() as f64 * 1.000_000_1).collect();
    let b: Vec<f64> = (0..128).map(|_| rng.f32() as f64 / 3.0).collect();
    let r = run_floats(
        "double",
        8,
        &a.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        &b.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
    );
    for i in 0..128 {
        let (x, y) = (a[i], b[i]);
        let e = [
            x + y,
            x - y,
            x * y,
            x / y,
            -x,
            f64::from(u8::from(x < y)),
            x.abs(),
            x.floor(),
        ];
        for (k, e) in e.iter().enumerate() {
            assert_eq!(
                r[i * FLOAT_OPS + k],
                e.to_bits(),
                "double op {k} on ({x}, {y})"
            );
        }
    }
}

#[test]
fn float16() {
    use half::f16;
    let mut rng = Rng(7);
    let a: Vec<f16> = (0..128).map(|_| f16::from_f32(rng.f32() / 100.0)).collect();
    let b: Vec<f16> = (0..128).map(|_| f16::from_f32(rng.f32() / 100.0)).collect();
    let r = run_floats(
        "float16_t",
        2,
        &a.iter().map(|x| u64::from(x.to_bits())).collect::<Vec<_>>(),
        &b.iter().map(|x| u64::from(x.to_bits())).collect::<Vec<_>>(),
    );
    for i in 0..128 {
        let (x, y) = (a[i], b[i]);
        let e = [
            x + y,
            x - y,
            x * y,
            x / y,
            -x,
            f16::from_f32(f32::from(u8::from(x < y))),
            f16::from_f32(x.to_f32().abs()),
            f16::from_f32(x.to_f32().floor()),
        ];
        for (k, e) in e.iter().enumerate() {
            assert_eq!(
                r[i * FLOAT_OPS + k] as u16,
                e.to_bits(),
                "half op {k} on ({x}, {y})"
            );
        }
    }
}

#[test]
fn conversions_between_widths() {
    let src = format!(
        "{HEADER}
layout(std430, binding = 0) buffer A {{ int a[]; }};
layout(std430, binding = 1) buffer R {{ int64_t r[]; }};
void main() {{
  uint i = gl_GlobalInvocationID.x;
  int x = a[i];
  r[i * 6u + 0u] = int64_t(int8_t(x));
  r[i * 6u + 1u] = int64_t(uint16_t(x));
  r[i * 6u + 2u] = int64_t(uint(x));
  r[i * 6u + 3u] = int64_t(float(x) * 0.5);
  r[i * 6u + 4u] = int64_t(double(x) / 3.0);
  r[i * 6u + 5u] = int64_t(float16_t(float(x & 1023)));
}}"
    );
    let mut rng = Rng(9);
    let a: Vec<i32> = (0..64)
        .map(|_| rng.next() as i32 >> (rng.next() % 24))
        .collect();
    let job = Job::new(
        vec![
            a.iter().flat_map(|x| x.to_le_bytes()).collect(),
            vec![0; 64 * 6 * 8],
        ],
        [1, 1, 1],
    );
    let (out, _) = run_glsl(&src, &job);
    let r: Vec<i64> = to_u64s(&out[1]).into_iter().map(|v| v as i64).collect();
    for (i, &x) in a.iter().enumerate() {
        let e = [
            i64::from(x as i8),
            i64::from(x as u16),
            i64::from(x as u32),
            (x as f32 * 0.5) as i64,
            (f64::from(x) / 3.0) as i64,
            half::f16::from_f32((x & 1023) as f32).to_f32() as i64,
        ];
        assert_eq!(&r[i * 6..i * 6 + 6], &e, "conversions of {x}");
    }
}

#[test]
fn vectors_matrices_and_glsl_functions() {
    let src = "#version 450
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer A { vec4 a[]; };
layout(std430, binding = 1) buffer R { float r[]; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  vec4 v = a[i];
  mat2 m = mat2(v.x, v.y, v.z, v.w);
  vec2 p = m * vec2(1.0, 2.0);
  r[i * 8u + 0u] = dot(v, vec4(1.0, -1.0, 2.0, 0.5));
  r[i * 8u + 1u] = p.x;
  r[i * 8u + 2u] = p.y;
  r[i * 8u + 3u] = clamp(v.x, -1.0, 1.0);
  r[i * 8u + 4u] = max(v.y, v.z);
  r[i * 8u + 5u] = v.wzyx[1];
  r[i * 8u + 6u] = mix(v.x, v.y, 0.25);
  r[i * 8u + 7u] = float(uvec2(v.xy * 10.0).x % 7u);
}";
    let mut rng = Rng(11);
    let a: Vec<f32> = (0..128).map(|_| rng.f32().abs()).collect();
    let job = Job::new(vec![f32s(&a), vec![0; 32 * 8 * 4]], [1, 1, 1]);
    let (out, _) = run_glsl(src, &job);
    let r = to_f32s(&out[1]);
    for i in 0..32 {
        let v = &a[i * 4..i * 4 + 4];
        // OpDot and matrix products: products and sum in f64, rounded once.
        let w: Vec<f64> = v.iter().map(|&x| f64::from(x)).collect();
        let dot = (w[0] * 1.0 - w[1] + w[2] * 2.0 + w[3] * 0.5) as f32;
        // mat2 columns (x, y) and (z, w); m * (1, 2) = col0 * 1 + col1 * 2.
        let e = [
            dot,
            (w[0] * 1.0 + w[2] * 2.0) as f32,
            (w[1] * 1.0 + w[3] * 2.0) as f32,
            v[0].clamp(-1.0, 1.0),
            v[1].max(v[2]),
            v[2],
            (w[0] * 0.75 + w[1] * 0.25) as f32,
            (((v[0] * 10.0) as u32) % 7) as f32,
        ];
        for k in 0..8 {
            assert_eq!(
                r[i * 8 + k].to_bits(),
                e[k].to_bits(),
                "op {k} of {v:?}: {} vs {}",
                r[i * 8 + k],
                e[k]
            );
        }
    }
}

#[test]
fn integer_builtin_functions() {
    let src = "#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer A { uint a[]; };
layout(std430, binding = 1) buffer R { uint r[]; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  uint x = a[2u * i]; uint y = a[2u * i + 1u];
  uint o = i * 12u;
  uint carry; r[o + 0u] = uaddCarry(x, y, carry); r[o + 1u] = carry;
  uint hi; uint lo; umulExtended(x, y, hi, lo); r[o + 2u] = hi; r[o + 3u] = lo;
  r[o + 4u] = uint(findMSB(x));
  r[o + 5u] = uint(findLSB(y));
  r[o + 6u] = bitfieldExtract(x, int(y % 16u), int(y % 17u));
  r[o + 7u] = bitfieldInsert(x, y, 3, 11);
  r[o + 8u] = bitCount(x) + 100u * uint(findMSB(int(y)));
  r[o + 9u] = bitfieldReverse(x);
  r[o + 10u] = clamp(x, 1000u, 5000000u);
  r[o + 11u] = uint(clamp(int(x), -70000, 80000)) ^ uint(abs(int(y))) ^ uint(sign(int(x)));
}";
    let mut rng = Rng(21);
    let a: Vec<u32> = (0..128).map(|_| rng.u32()).collect();
    let job = Job::new(vec![u32s(&a), vec![0; 64 * 12 * 4]], [1, 1, 1]);
    let (out, _) = run_glsl(src, &job);
    let r = to_u32s(&out[1]);
    let msb = |v: u32| {
        if v == 0 {
            u32::MAX
        } else {
            31 - v.leading_zeros()
        }
    };
    for i in 0..64 {
        let (x, y) = (a[2 * i], a[2 * i + 1]);
        let (off, cnt) = (y % 16, y % 17);
        let extract = if cnt == 0 || off + cnt > 32 {
            r[i * 12 + 6] // offset + count > 32 is undefined: not checked
        } else {
            (x >> off) & (((1u64 << cnt) - 1) as u32)
        };
        let insert_mask = ((1u32 << 11) - 1) << 3;
        let iy = y as i32;
        let smsb = if iy < 0 { msb(!y) } else { msb(y) };
        let wide = u64::from(x) * u64::from(y);
        let e = [
            x.wrapping_add(y),
            u32::from(x.checked_add(y).is_none()),
            (wide >> 32) as u32,
            wide as u32,
            msb(x),
            if y == 0 { u32::MAX } else { y.trailing_zeros() },
            extract,
            (x & !insert_mask) | ((y << 3) & insert_mask),
            x.count_ones().wrapping_add(100u32.wrapping_mul(smsb)),
            x.reverse_bits(),
            x.clamp(1000, 5_000_000),
            ((x as i32).clamp(-70000, 80000) as u32)
                ^ (iy.wrapping_abs() as u32)
                ^ ((x as i32).signum() as u32),
        ];
        assert_eq!(&r[i * 12..i * 12 + 12], &e, "x = {x:#x}, y = {y:#x}");
    }
}

#[test]
fn float_builtin_functions() {
    let src = "#version 450
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer A { vec4 a[]; };
layout(std430, binding = 1) buffer R { float r[]; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  vec4 v = a[i];
  uint o = i * 12u;
  r[o + 0u] = length(v.xyz);
  vec3 c = cross(v.xyz, v.wzy);
  r[o + 1u] = c.x; r[o + 2u] = c.y; r[o + 3u] = c.z;
  r[o + 4u] = uintBitsToFloat(packHalf2x16(v.xy));
  vec2 u = unpackUnorm2x16(floatBitsToUint(v.z));
  r[o + 5u] = u.x + u.y;
  int e; float m = frexp(v.x, e);
  r[o + 6u] = m; r[o + 7u] = float(e);
  r[o + 8u] = ldexp(v.y, int(v.w) % 20);
  float whole; r[o + 9u] = modf(v.z, whole); r[o + 10u] = whole;
  r[o + 11u] = floor(v.w) + fract(v.x) + step(v.y, v.z) + min(v.x, v.w) + max(v.y, v.z);
}";
    let mut rng = Rng(23);
    let a: Vec<f32> = (0..128).map(|_| rng.f32() / 10.0).collect();
    let job = Job::new(vec![f32s(&a), vec![0; 32 * 12 * 4]], [1, 1, 1]);
    let (out, _) = run_glsl(src, &job);
    let r = to_f32s(&out[1]);
    for i in 0..32 {
        let v: Vec<f32> = a[i * 4..i * 4 + 4].to_vec();
        let w: Vec<f64> = v.iter().map(|&x| f64::from(x)).collect();
        let len = (w[0] * w[0] + w[1] * w[1] + w[2] * w[2]).sqrt() as f32;
        // cross(v.xyz, v.wzy)
        let (p, q) = ([w[0], w[1], w[2]], [w[3], w[2], w[1]]);
        let c = [
            p[1] * q[2] - p[2] * q[1],
            p[2] * q[0] - p[0] * q[2],
            p[0] * q[1] - p[1] * q[0],
        ];
        let h = |x: f32| u32::from(half::f16::from_f32(x).to_bits());
        let packed = f32::from_bits(h(v[0]) | (h(v[1]) << 16));
        let bits = v[2].to_bits();
        let un =
            (f64::from(bits & 0xffff) / 65535.0) as f32 + (f64::from(bits >> 16) / 65535.0) as f32;
        let (m, e) = if v[0] == 0.0 {
            (0.0, 0)
        } else {
            let e = v[0].abs().log2().floor() as i32 + 1;
            let mut m = w[0] / 2f64.powi(e);
            let mut e = e;
            if m.abs() >= 1.0 {
                m /= 2.0;
                e += 1;
            }
            if m.abs() < 0.5 {
                m *= 2.0;
                e -= 1;
            }
            (m as f32, e)
        };
        // GLSL `%` on int is OpSMod: the sign follows the divisor.
        let ld = (w[1] * 2f64.powi((v[3] as i32).rem_euclid(20))) as f32;
        let whole = v[2].trunc();
        let step = if v[2] < v[1] { 0.0 } else { 1.0 };
        let last = v[3].floor() + (v[0] - v[0].floor()) + step + v[0].min(v[3]) + v[1].max(v[2]);
        let e_all = [
            len,
            c[0] as f32,
            c[1] as f32,
            c[2] as f32,
            packed,
            un,
            m,
            e as f32,
            ld,
            v[2] - whole,
            whole,
            last,
        ];
        for k in 0..12 {
            let tol = if k == 0 { 1e-6 * e_all[k].abs() } else { 0.0 };
            if k == 4 {
                assert_eq!(
                    r[i * 12 + k].to_bits(),
                    e_all[k].to_bits(),
                    "packHalf2x16 of {v:?}"
                );
            } else {
                assert!(
                    (r[i * 12 + k] - e_all[k]).abs() <= tol,
                    "function {k} of {v:?}: {} vs {}",
                    r[i * 12 + k],
                    e_all[k]
                );
            }
        }
    }
}
