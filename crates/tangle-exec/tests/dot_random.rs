//! SPV_KHR_integer_dot_product executed through real shaders: for every instruction (`OpSDot`,
//! `OpUDot`, `OpSUDot` and the AccSat forms), every input type (packed 4x8 and vectors of 2, 3,
//! 4, 8, 16 components of 8/16/32/64 bits) and every result width, 224 random vector pairs are
//! run and compared with a plain-Rust reference computed in i128. AccSat inputs whose
//! intermediate products or sums overflow must give the poison value and one sanitizer finding
//! each; the saturation edges are checked one by one.

mod common;

use common::{run_module, to_u64s, u64s, Job, Rng};
use tangle_exec::{Finding, Report};
use tangle_spirv::text::{assemble, AssembleOptions};

/// Invocations (and vector pairs) per configuration.
const PAIRS: usize = 224;
/// The poison value tangle writes for an undefined result.
const POISON: u64 = 0xdead_beef_dead_beef;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    S,
    U,
    SU,
}

impl Kind {
    /// (Vector 1 signed, Vector 2 signed, result range signed).
    fn signs(self) -> (bool, bool, bool) {
        match self {
            Kind::S => (true, true, true),
            Kind::U => (false, false, false),
            Kind::SU => (true, false, true),
        }
    }
    fn opcode(self, acc: bool) -> String {
        let name = match self {
            Kind::S => "SDot",
            Kind::U => "UDot",
            Kind::SU => "SUDot",
        };
        format!("Op{name}{}", if acc { "AccSat" } else { "" })
    }
}

/// One configuration: instruction, input type and result width.
#[derive(Debug, Clone, Copy)]
struct Config {
    kind: Kind,
    acc: bool,
    /// Component width (8 for packed).
    cb: u32,
    /// Components (4 for packed).
    count: u32,
    packed: bool,
    rb: u32,
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

fn widen(signed: bool, bits: u32, v: u64) -> i128 {
    let v = v & mask(bits);
    if signed && bits < 128 && (v >> (bits - 1)) & 1 == 1 {
        i128::from(v) - (1i128 << bits)
    } else {
        i128::from(v)
    }
}

/// The reference: `None` where the spec leaves the result undefined (AccSat intermediate
/// overflow, checked in component order).
fn reference(c: &Config, a: &[u64], b: &[u64], acc: u64) -> Option<u64> {
    let (sa, sb, sr) = c.kind.signs();
    let pairs = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| (widen(sa, c.cb, x), widen(sb, c.cb, y)));
    if !c.acc {
        // "the low-order N bits of the correct result R": i128 arithmetic modulo 2^128 keeps
        // the low 64 bits exact.
        let r = pairs.fold(0i128, |s, (x, y)| s.wrapping_add(x.wrapping_mul(y)));
        return Some((r as u64) & mask(c.rb));
    }
    let (lo, hi) = if sr {
        (-(1i128 << (c.rb - 1)), (1i128 << (c.rb - 1)) - 1)
    } else {
        (0, (1i128 << c.rb) - 1)
    };
    let mut sum = 0i128;
    for (x, y) in pairs {
        let p = x.checked_mul(y)?;
        sum = sum.checked_add(p)?;
        if p < lo || p > hi || sum < lo || sum > hi {
            return None;
        }
    }
    let r = (sum + widen(sr, c.rb, acc)).clamp(lo, hi);
    Some((r as u64) & mask(c.rb))
}

/// Words per invocation in the buffer: Vector 1, Vector 2, Accumulator, result.
fn record(c: &Config) -> usize {
    if c.packed {
        4
    } else {
        2 * c.count as usize + 2
    }
}

/// A shader in which invocation i reads its operands from words `i*R..` of a buffer of u64,
/// runs the dot product and writes the result (zero-extended) to the record's last word.
fn shader(c: &Config) -> String {
    let (sa, sb, sr) = c.kind.signs();
    let r = record(c);
    // 8- and 16-component vectors need Vector16, which implies Kernel, and "The Signedness in
    // OpTypeInt must always be 0 when Kernel capability is used": those shaders use unsigned
    // types only. The instruction, not the type, says how a dot product treats its inputs.
    let kernel = !c.packed && c.count > 4;
    let sign = |s: bool| s && !kernel;
    let mut types: Vec<(u32, bool)> = vec![(32, false), (64, false)];
    // OpSUDot: "the components of Vector 2 must have a Signedness of 0".
    let (comp_a, comp_b) = if c.packed {
        ((32, false), (32, false))
    } else {
        ((c.cb, sign(sa)), (c.cb, sign(sb)))
    };
    let res = (c.rb, sign(sr));
    for t in [comp_a, comp_b, res] {
        if !types.contains(&t) {
            types.push(t);
        }
    }
    let tname = |(bits, s): (u32, bool)| format!("%{}{bits}", if s { "i" } else { "u" });
    let mut s = String::from(
        "OpCapability Shader\nOpCapability Int8\nOpCapability Int16\nOpCapability Int64\n\
         OpCapability DotProduct\nOpCapability DotProductInputAll\nOpCapability DotProductInput4x8BitPacked\n",
    );
    if kernel {
        s += "OpCapability Vector16\n";
    }
    s += "OpMemoryModel Logical GLSL450\nOpEntryPoint GLCompute %main \"main\" %gid %buf\nOpExecutionMode %main LocalSize 32 1 1\n\
         OpDecorate %gid BuiltIn GlobalInvocationId\nOpDecorate %arr ArrayStride 8\nOpMemberDecorate %blk 0 Offset 0\n\
         OpDecorate %blk Block\nOpDecorate %buf DescriptorSet 0\nOpDecorate %buf Binding 0\n\
         %void = OpTypeVoid\n%fn = OpTypeFunction %void\n";
    for &(bits, signed) in &types {
        s += &format!(
            "{} = OpTypeInt {bits} {}\n",
            tname((bits, signed)),
            u32::from(signed)
        );
    }
    s += "%v3u32 = OpTypeVector %u32 3\n%pin = OpTypePointer Input %v3u32\n%gid = OpVariable %pin Input\n\
          %arr = OpTypeRuntimeArray %u64\n%blk = OpTypeStruct %arr\n%pbuf = OpTypePointer StorageBuffer %blk\n\
          %buf = OpVariable %pbuf StorageBuffer\n%pu64 = OpTypePointer StorageBuffer %u64\n";
    // One vector type per component type and count: duplicate non-aggregate types are invalid.
    let vname = |t: (u32, bool)| format!("%v{}{}", c.count, &tname(t)[1..]);
    if !c.packed {
        for t in [comp_a, comp_b] {
            let name = vname(t);
            if !s.contains(&format!("{name} = OpTypeVector")) {
                s += &format!("{name} = OpTypeVector {} {}\n", tname(t), c.count);
            }
        }
    }
    for k in 0..=r {
        s += &format!("%c{k} = OpConstant %u32 {k}\n");
    }
    s += "%main = OpFunction %void None %fn\n%entry = OpLabel\n%g = OpLoad %v3u32 %gid\n%i = OpCompositeExtract %u32 %g 0\n";
    s += &format!("%base = OpIMul %u32 %i %c{r}\n");
    // Converts the u64 `%l{k}` into type `t` as `%x{k}`.
    let conv = |k: usize, t: (u32, bool)| -> String {
        match t {
            (64, false) => format!("%x{k} = OpCopyObject %u64 %l{k}\n"),
            (64, true) => format!("%x{k} = OpBitcast %i64 %l{k}\n"),
            (_, false) => format!("%x{k} = OpUConvert {} %l{k}\n", tname(t)),
            _ => format!("%x{k} = OpSConvert {} %l{k}\n", tname(t)),
        }
    };
    for k in 0..r - 1 {
        s += &format!("%ix{k} = OpIAdd %u32 %base %c{k}\n%p{k} = OpAccessChain %pu64 %buf %c0 %ix{k}\n%l{k} = OpLoad %u64 %p{k}\n");
        let n = if c.packed { 1 } else { c.count as usize };
        let t = if k == r - 2 {
            res
        } else if k < n {
            comp_a
        } else {
            comp_b
        };
        s += &conv(k, t);
    }
    let (va, vb) = if c.packed {
        ("%x0".to_string(), "%x1".to_string())
    } else {
        let n = c.count as usize;
        let a: Vec<String> = (0..n).map(|k| format!("%x{k}")).collect();
        let b: Vec<String> = (n..2 * n).map(|k| format!("%x{k}")).collect();
        s += &format!(
            "%va = OpCompositeConstruct {} {}\n%vb = OpCompositeConstruct {} {}\n",
            vname(comp_a),
            a.join(" "),
            vname(comp_b),
            b.join(" ")
        );
        ("%va".to_string(), "%vb".to_string())
    };
    let acc = if c.acc {
        format!(" %x{}", r - 2)
    } else {
        String::new()
    };
    let fmt = if c.packed {
        " PackedVectorFormat4x8Bit"
    } else {
        ""
    };
    s += &format!(
        "%r = {} {} {va} {vb}{acc}{fmt}\n",
        c.kind.opcode(c.acc),
        tname(res)
    );
    s += &match res {
        (64, false) => "%r64 = OpCopyObject %u64 %r\n".to_string(),
        (64, true) => "%r64 = OpBitcast %u64 %r\n".to_string(),
        _ => "%r64 = OpUConvert %u64 %r\n".to_string(),
    };
    let last = r - 1;
    s += &format!("%io = OpIAdd %u32 %base %c{last}\n%po = OpAccessChain %pu64 %buf %c0 %io\nOpStore %po %r64\nOpReturn\nOpFunctionEnd\n");
    s
}

/// Runs `inputs` (Vector 1, Vector 2, Accumulator per invocation) and returns the results and
/// the report.
fn run(c: &Config, inputs: &[(Vec<u64>, Vec<u64>, u64)]) -> (Vec<u64>, Report) {
    let text = shader(c);
    let (module, _) = assemble(&text, &AssembleOptions::default())
        .unwrap_or_else(|e| panic!("{c:?}: {e}\n{text}"));
    let module = common::validated_in(module, "spv1.6");
    let r = record(c);
    let mut words = vec![0u64; inputs.len().div_ceil(32) * 32 * r];
    for (i, (a, b, acc)) in inputs.iter().enumerate() {
        let rec = &mut words[i * r..(i + 1) * r];
        if c.packed {
            let pack = |v: &[u64]| {
                v.iter()
                    .enumerate()
                    .fold(0u64, |w, (k, &x)| w | ((x & 0xff) << (8 * k)))
            };
            rec[0] = pack(a);
            rec[1] = pack(b);
        } else {
            let n = c.count as usize;
            rec[..n].copy_from_slice(a);
            rec[n..2 * n].copy_from_slice(b);
        }
        rec[r - 2] = *acc;
    }
    let groups = [inputs.len().div_ceil(32) as u32, 1, 1];
    let (bufs, report) = run_module(&module, &Job::new(vec![u64s(&words)], groups));
    let out = to_u64s(&bufs[0]);
    let results = (0..inputs.len()).map(|i| out[i * r + r - 1]).collect();
    (results, report)
}

/// A random component of `bits`: full range, small magnitude, or an edge value.
fn component(rng: &mut Rng, c: &Config, small: u32) -> u64 {
    let (sa, _, _) = c.kind.signs();
    match rng.next() % 4 {
        0 => {
            let edges = [0, 1, mask(c.cb), mask(c.cb) >> 1, 1 << (c.cb - 1)];
            edges[(rng.next() % 5) as usize]
        }
        1 => rng.next() & mask(c.cb),
        _ => {
            let m = rng.next() & mask(small);
            if sa && rng.next() & 1 == 0 {
                m.wrapping_neg() & mask(c.cb)
            } else {
                m
            }
        }
    }
}

fn random_inputs(rng: &mut Rng, c: &Config) -> Vec<(Vec<u64>, Vec<u64>, u64)> {
    // Magnitudes whose products and sums fit the result: |x|,|y| < 2^small.
    let log_count = 32 - (c.count - 1).leading_zeros();
    let small = ((c.rb.saturating_sub(2 + log_count)) / 2).clamp(1, c.cb - 1);
    (0..PAIRS)
        .map(|_| {
            let a = (0..c.count).map(|_| component(rng, c, small)).collect();
            let b = (0..c.count).map(|_| component(rng, c, small)).collect();
            let acc = match rng.next() % 3 {
                0 => {
                    let edges = [
                        0,
                        mask(c.rb),
                        mask(c.rb) >> 1,
                        1 << (c.rb - 1),
                        (mask(c.rb) >> 1) - 1,
                        (1 << (c.rb - 1)) + 1,
                    ];
                    edges[(rng.next() % 6) as usize]
                }
                _ => rng.next() & mask(c.rb),
            };
            (a, b, acc)
        })
        .collect()
}

fn configs() -> Vec<Config> {
    let mut out = Vec::new();
    for kind in [Kind::S, Kind::U, Kind::SU] {
        for acc in [false, true] {
            for rb in [32, 64] {
                out.push(Config {
                    kind,
                    acc,
                    cb: 8,
                    count: 4,
                    packed: true,
                    rb,
                });
            }
            for count in [2, 3, 4, 8, 16] {
                for cb in [8, 16, 32, 64] {
                    for rb in [8, 16, 32, 64].into_iter().filter(|&rb| rb >= cb) {
                        out.push(Config {
                            kind,
                            acc,
                            cb,
                            count,
                            packed: false,
                            rb,
                        });
                    }
                }
            }
        }
    }
    out
}

/// Checks results against the reference: poison and one finding per undefined AccSat.
fn check(
    c: &Config,
    inputs: &[(Vec<u64>, Vec<u64>, u64)],
    results: &[u64],
    report: &Report,
) -> usize {
    let mut undefined = 0;
    for (i, ((a, b, acc), &got)) in inputs.iter().zip(results).enumerate() {
        match reference(c, a, b, *acc) {
            Some(want) => assert_eq!(got, want, "{c:?} pair {i}: {a:x?} . {b:x?} + {acc:#x}"),
            None => {
                undefined += 1;
                assert_eq!(
                    got,
                    POISON & mask(c.rb),
                    "{c:?} pair {i}: undefined result is not poison"
                );
            }
        }
    }
    let found = report.diagnostics.len() as u64 + report.stats.dropped_diagnostics;
    assert_eq!(
        found, undefined as u64,
        "{c:?}: one finding per undefined AccSat"
    );
    for d in &report.diagnostics {
        assert!(
            matches!(d.finding, Finding::DotAccSatOverflow(_)),
            "{c:?}: {d}"
        );
        assert!(d.at.name.contains(&c.kind.opcode(true)), "{c:?}: {d}");
    }
    undefined
}

#[test]
fn random_pairs_match_the_i128_reference() {
    let mut rng = Rng(0x05ee_dd07);
    let configs = configs();
    assert_eq!(configs.len(), 6 * (2 + 5 * 10));
    let (mut undefined, mut defined_acc) = (0, 0);
    for c in &configs {
        let inputs = random_inputs(&mut rng, c);
        let (results, report) = run(c, &inputs);
        let u = check(c, &inputs, &results, &report);
        undefined += u;
        if c.acc {
            defined_acc += PAIRS - u;
        }
    }
    // Both the defined and the undefined AccSat paths were exercised.
    assert!(
        undefined > 1000 && defined_acc > 5000,
        "undefined {undefined}, defined AccSat {defined_acc}"
    );
}

#[test]
fn saturation_edges() {
    let cfg = |kind, cb, rb| Config {
        kind,
        acc: true,
        cb,
        count: 2,
        packed: false,
        rb,
    };
    let m = mask;
    // (config, Vector 1, Vector 2, Accumulator, expected)
    type Case = (Config, [u64; 2], [u64; 2], u64, u64);
    let cases: Vec<Case> = vec![
        // Signed: 127 + 1 saturates to 127; -128 - 1 to -128; exact fits stay exact.
        (cfg(Kind::S, 8, 8), [1, 0], [1, 0], 0x7f, 0x7f),
        (cfg(Kind::S, 8, 8), [m(8), 0], [1, 0], 0x80, 0x80),
        (cfg(Kind::S, 8, 8), [m(8), 0], [1, 0], 0x7f, 0x7e),
        (cfg(Kind::S, 8, 8), [0x7f, 0], [1, 0], 0x81, 0),
        // The dot product itself reaches the range ends without overflowing.
        // (-128)² + (-127)² = 32513 fits a signed 16-bit sum; adding the accumulator saturates.
        (cfg(Kind::S, 8, 16), [0x80, 0x81], [0x80, 0x81], 0, 32513),
        (
            cfg(Kind::S, 8, 16),
            [0x80, 0x81],
            [0x80, 0x81],
            0x7fff,
            0x7fff,
        ),
        (
            cfg(Kind::S, 8, 16),
            [0x80, 0x81],
            [0x80, 0x81],
            0x8000,
            (32513i64 - 32768) as u64 & m(16),
        ),
        // Unsigned: 255 + 1 saturates to 255, never wraps.
        (cfg(Kind::U, 8, 8), [1, 0], [1, 0], 0xff, 0xff),
        (cfg(Kind::U, 8, 8), [15, 0], [17, 0], 0, 0xff),
        (
            cfg(Kind::U, 32, 32),
            [0xffff, 1],
            [0xffff, 0],
            0xffff_fff0,
            u64::from(u32::MAX),
        ),
        (cfg(Kind::U, 64, 64), [1, 0], [1, 0], u64::MAX, u64::MAX),
        // Mixed: signed Vector 1 times unsigned Vector 2, signed saturation.
        (cfg(Kind::SU, 8, 16), [0x80, 0], [0xff, 0], 0x8000, 0x8000),
        (
            cfg(Kind::SU, 8, 16),
            [0x80, 0],
            [0xff, 0],
            0,
            (-128i64 * 255) as u64 & m(16),
        ),
        (cfg(Kind::SU, 64, 64), [m(64), 0], [1, 0], 1 << 63, 1 << 63),
        (
            cfg(Kind::S, 64, 64),
            [1, 0],
            [1, 0],
            (1 << 63) - 1,
            (1 << 63) - 1,
        ),
        (cfg(Kind::S, 64, 64), [m(64), 0], [1, 0], 1 << 63, 1 << 63),
    ];
    for (c, a, b, acc, want) in cases {
        let inputs = vec![(a.to_vec(), b.to_vec(), acc)];
        assert_eq!(
            reference(&c, &a, &b, acc),
            Some(want),
            "reference {c:?} {a:x?} {b:x?} {acc:#x}"
        );
        let (results, report) = run(&c, &inputs);
        assert_eq!(results, [want], "{c:?} {a:x?} {b:x?} {acc:#x}");
        assert!(
            report.diagnostics.is_empty(),
            "{c:?}: {:?}",
            report.diagnostics
        );
    }
}

#[test]
fn acc_sat_overflow_is_reported_and_its_twin_is_clean() {
    // Each product 100 * 100 fits a signed 16-bit result and so do three of them (30000), but
    // the fourth partial sum (40000) does not: undefined. The twin stops at three.
    let c = Config {
        kind: Kind::S,
        acc: true,
        cb: 8,
        count: 4,
        packed: false,
        rb: 16,
    };
    let bad = vec![(vec![100; 4], vec![100; 4], 0)];
    let twin = vec![(vec![100, 100, 100, 0], vec![100; 4], 0)];
    let (results, report) = run(&c, &bad);
    assert_eq!(results, [POISON & 0xffff]);
    assert_eq!(report.diagnostics.len(), 1);
    let d = &report.diagnostics[0];
    let text = d.to_string();
    assert!(
        text.contains("OpSDotAccSat")
            && text.contains("[100, 100, 100, 100]")
            && text.contains("16-bit"),
        "{text}"
    );
    assert_eq!(d.invocation, [0, 0, 0]);
    let (results, report) = run(&c, &twin);
    assert_eq!(results, [30000]);
    assert!(report.diagnostics.is_empty());
    // The wrapping form of the same sum is defined: the low 16 bits of 40000.
    let c = Config { acc: false, ..c };
    let (results, report) = run(&c, &bad);
    assert_eq!(results, [40000 & 0xffff]);
    assert!(report.diagnostics.is_empty());
}

/// `bench/dot_gemv.comp` (dotPacked4x8AccSatEXT over K = 4·words int8) at a small size
/// against plain Rust (the shader's sums stay inside int32; saturation is tested above).
#[test]
fn bench_dot_gemv_matches_rust() {
    let src = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../bench/dot_gemv.comp"
    ));
    let mut rng = Rng(0x0d07_9e37);
    let (rows, words) = (100usize, 64usize);
    let mut a: Vec<u32> = (0..rows * words).map(|_| rng.next() as u32).collect();
    // Rows 0 and 1 hold only the extreme bytes 127 and -128.
    a[..words].fill(0x7f7f_7f7f);
    a[words..2 * words].fill(0x8080_8080);
    let x: Vec<u32> = (0..words)
        .map(|_| rng.next() as u32 | 0x7f00_0000)
        .collect();
    let mut job = Job::new(
        vec![common::u32s(&a), common::u32s(&x), vec![0u8; rows * 4]],
        [2, 1, 1],
    );
    job.push = common::u32s(&[rows as u32, words as u32]);
    let (bufs, report) = run_module(&common::compile(src), &job);
    let got = common::to_u32s(&bufs[2]);
    for r in 0..rows {
        let want = a[r * words..(r + 1) * words]
            .iter()
            .zip(&x)
            .fold(0i64, |acc, (&p, &q)| {
                let d: i64 = (0..4)
                    .map(|k| i64::from((p >> (8 * k)) as i8) * i64::from((q >> (8 * k)) as i8))
                    .sum();
                (acc + d).clamp(i64::from(i32::MIN), i64::from(i32::MAX))
            });
        assert_eq!(got[r] as i32 as i64, want, "row {r}");
    }
    assert!(report.diagnostics.is_empty());
}
