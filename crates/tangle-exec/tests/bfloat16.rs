//! bfloat16 scalars (SPV_KHR_bfloat16, GLSL's GL_EXT_bfloat16): storage-buffer loads and
//! stores, and every conversion to and from bfloat16 (OpFConvert with f16/f32/f64,
//! OpConvertSToF/UToF from 32- and 64-bit integers, OpConvertFToS/FToU), on random inputs
//! against a plain-Rust rounding written here from the format's definition (the upper half of
//! an IEEE binary32, rounded to nearest with ties to even), reached from f64 and integers
//! through binary32 first, as the extension defines conversions to bfloat16 (inputs whose
//! binary32 value is a bfloat16 tie are mixed in, where rounding once would differ). bfloat16
//! has no arithmetic: an instruction that would compute on it is refused as unsupported, never
//! run as f16.

mod common;

use common::{compile, run_module, to_u32s, u32s, u64s, Job, Rng};
use half::f16;
use tangle_exec::{Device, Profile, SpecConstants};

/// The value of bfloat16 bits: they are the high half of an f32.
fn value(b: u16) -> f64 {
    f64::from(f32::from_bits(u32::from(b) << 16))
}

/// f32 → bfloat16, ties to even on the dropped 16 bits (NaN stays NaN).
fn from_f32(x: f32) -> u16 {
    if x.is_nan() {
        return 0x7fc0 | ((x.to_bits() >> 16) as u16 & 0x8000);
    }
    let b = x.to_bits();
    ((b + 0x7fff + ((b >> 16) & 1)) >> 16) as u16
}

const SHADER: &str = "#version 450
#extension GL_EXT_bfloat16 : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer F { float f[]; };
layout(set = 0, binding = 1) buffer I { int i[]; };
layout(set = 0, binding = 2) buffer U { uint64_t u[]; };
layout(set = 0, binding = 3) buffer B { bfloat16_t b[]; };
layout(set = 0, binding = 4) buffer OB { bfloat16_t ob[]; };
layout(set = 0, binding = 5) buffer OF { float of[]; };
layout(set = 0, binding = 6) buffer OH { float16_t oh[]; };
layout(set = 0, binding = 7) buffer OD { double od[]; };
layout(set = 0, binding = 8) buffer OI { int oi[]; };
layout(set = 0, binding = 9) buffer OU { uint ou[]; };
layout(set = 0, binding = 10) buffer D { double d[]; };
void main() {
  uint x = gl_GlobalInvocationID.x;
  ob[5 * x] = bfloat16_t(f[x]);
  ob[5 * x + 1] = bfloat16_t(i[x]);
  ob[5 * x + 2] = bfloat16_t(u[x]);
  ob[5 * x + 3] = b[x];
  ob[5 * x + 4] = bfloat16_t(d[x]);
  of[x] = float(b[x]);
  oh[x] = float16_t(b[x]);
  od[x] = double(b[x]);
  oi[x] = int(b[x]);
  ou[x] = uint(abs(float(b[x])));
}
";

#[test]
fn conversions_and_storage_on_random_inputs() {
    let module = compile(SHADER);
    let n = 64 * 8;
    let mut rng = Rng(0xbf16);
    // f32 inputs: random bits, with ties and near-ties to the bfloat16 grid mixed in.
    let f: Vec<f32> = (0..n)
        .map(|k| {
            let r = rng.u32();
            let bits = match k % 4 {
                0 => r,
                1 => (r & 0xffff_0000) | 0x8000,
                2 => (r & 0xffff_0000) | 0x7fff,
                _ => (r & 0x8fff_0000) | 0x8001,
            };
            f32::from_bits(bits)
        })
        .collect();
    let i: Vec<i32> = (0..n)
        .map(|_| rng.u32() as i32 >> (rng.u32() % 24))
        .collect();
    // 64-bit inputs beyond 2^53 whose tail makes a false tie through f64 (2^60 + 2^52 + 1).
    let u: Vec<u64> = (0..n)
        .map(|k| match k % 3 {
            0 => rng.next(),
            1 => (1u64 << 60) + (1 << 52) + 1 + (rng.next() & 0xff) * (1 << 53),
            _ => rng.next() >> (rng.u32() % 64),
        })
        .collect();
    // bfloat16 inputs within int range (|x| < 2^30, so int() and uint(abs()) are defined).
    let b: Vec<u16> = (0..n)
        .map(|_| {
            let exponent = 127 - 20 + (rng.u32() % 50);
            ((rng.u32() & 1) << 15 | exponent << 7 | (rng.u32() & 0x7f)) as u16
        })
        .collect();
    // f64 inputs a hair off a bfloat16 tie (which binary32 rounds onto the tie), or random.
    let d: Vec<f64> = (0..n)
        .map(|k| {
            let tie = f64::from(f32::from_bits((rng.u32() & 0x8fff_0000) | 0x8000));
            match k % 3 {
                0 => tie * (1.0 + 2f64.powi(-40)),
                1 => tie * (1.0 - 2f64.powi(-40)),
                _ => f64::from(f[k]) * (1.0 + f64::from(rng.u32()) * 2f64.powi(-60)),
            }
        })
        .collect();
    let f_bytes: Vec<u8> = f.iter().flat_map(|x| x.to_le_bytes()).collect();
    let i_bytes = u32s(&i.iter().map(|&x| x as u32).collect::<Vec<_>>());
    let b_bytes: Vec<u8> = b.iter().flat_map(|x| x.to_le_bytes()).collect();
    let job = Job::new(
        vec![
            f_bytes,
            i_bytes,
            u64s(&u),
            b_bytes,
            vec![0; 10 * n],
            vec![0; 4 * n],
            vec![0; 2 * n],
            vec![0; 8 * n],
            vec![0; 4 * n],
            vec![0; 4 * n],
            d.iter().flat_map(|x| x.to_le_bytes()).collect(),
        ],
        [8, 1, 1],
    );
    let (out, report) = run_module(&module, &job);
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
    let halves = |bytes: &[u8]| -> Vec<u16> {
        bytes
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect()
    };
    let ob = halves(&out[4]);
    let of: Vec<f32> = to_u32s(&out[5]).into_iter().map(f32::from_bits).collect();
    let oh = halves(&out[6]);
    let od: Vec<f64> = out[7]
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect();
    let oi = to_u32s(&out[8]);
    let ou = to_u32s(&out[9]);
    for x in 0..n {
        let want_f = from_f32(f[x]);
        if f[x].is_nan() {
            assert!(value(ob[5 * x]).is_nan(), "{x}: bf16({}) not NaN", f[x]);
        } else {
            assert_eq!(ob[5 * x], want_f, "{x}: bf16({:e})", f[x]);
        }
        // Integers and doubles: to binary32 first (Rust's `as` rounds to nearest even).
        assert_eq!(ob[5 * x + 1], from_f32(i[x] as f32), "{x}: bf16({})", i[x]);
        assert_eq!(
            ob[5 * x + 2],
            from_f32(u[x] as f32),
            "{x}: bf16({}u64)",
            u[x]
        );
        assert_eq!(ob[5 * x + 3], b[x], "{x}: copy");
        if d[x].is_nan() {
            assert!(value(ob[5 * x + 4]).is_nan(), "{x}: bf16({}) not NaN", d[x]);
        } else {
            assert_eq!(
                ob[5 * x + 4],
                from_f32(d[x] as f32),
                "{x}: bf16({:e})",
                d[x]
            );
        }
        let v = value(b[x]);
        assert_eq!(f64::from(of[x]), v, "{x}: float(bf16 {v})");
        assert_eq!(od[x], v, "{x}: double(bf16 {v})");
        assert_eq!(
            oh[x],
            f16::from_f64(v).to_bits(),
            "{x}: float16_t(bf16 {v})"
        );
        assert_eq!(oi[x] as i32, v.trunc() as i32, "{x}: int(bf16 {v})");
        assert_eq!(ou[x], v.abs().trunc() as u32, "{x}: uint(bf16 {v})");
    }
}

/// half's `bf16::from_f32`, which other tests' references use, rounds as the definition does
/// (checked here on random bits and on ties and near-ties).
#[test]
fn half_bf16_rounds_to_nearest_even() {
    let mut rng = Rng(0x5eed_bf16);
    for k in 0..100_000u32 {
        let r = rng.u32();
        let bits = match k % 3 {
            0 => r,
            1 => (r & 0xffff_0000) | 0x8000,
            _ => (r & 0xffff_0000) | (0x7fff + (k & 2)),
        };
        let x = f32::from_bits(bits);
        let got = half::bf16::from_f32(x).to_bits();
        if x.is_nan() {
            assert!(value(got).is_nan(), "{x}");
        } else {
            assert_eq!(got, from_f32(x), "{bits:#x}");
        }
    }
}

/// `OpDot` on bfloat16 vectors (BFloat16DotProductKHR) is valid SPIR-V but its precision is
/// the implementation's: tangle refuses it at pipeline creation (exit 77 in `tangle run`).
#[test]
fn bf16_dot_is_refused_as_unsupported() {
    use tangle_spirv::text::{assemble, AssembleOptions};
    let text = "OpCapability Shader
OpCapability BFloat16TypeKHR
OpCapability BFloat16DotProductKHR
OpExtension \"SPV_KHR_bfloat16\"
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main \"main\"
OpExecutionMode %main LocalSize 1 1 1
%void = OpTypeVoid
%fn = OpTypeFunction %void
%bf16 = OpTypeFloat 16 BFloat16KHR
%v2 = OpTypeVector %bf16 2
%one = OpConstant %bf16 1.0
%vec = OpConstantComposite %v2 %one %one
%main = OpFunction %void None %fn
%entry = OpLabel
%d = OpDot %bf16 %vec %vec
OpReturn
OpFunctionEnd
";
    let (module, _) =
        assemble(text, &AssembleOptions::default()).unwrap_or_else(|err| panic!("{err}"));
    let module = common::validated(module);
    let err = Device::new(Profile::default())
        .compute_pipeline(&module, "main", &SpecConstants::new())
        .err()
        .unwrap_or_else(|| panic!("a bfloat16 OpDot runs"));
    assert!(
        matches!(err, tangle_exec::ExecError::Unsupported { .. })
            && err.to_string().contains("bfloat16 operands of OpDot"),
        "{err}"
    );
}
