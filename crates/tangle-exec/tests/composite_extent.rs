//! Whole-composite loads and stores touch their members' bytes and nothing else (issue 28): a
//! matrix its columns (or rows) at their `MatrixStride`, a struct its members at their
//! `Offset`s, an array its elements at their `ArrayStride`; the padding between and after them
//! is never accessed, so it is never out of bounds, never written and never races.
//!
//! A plain-Rust model lays out random shapes (scalars, vectors, matrices column- and row-major,
//! arrays and nested structs, arrays of matrices) under std140, std430 and scalar block layout
//! and says, for a buffer cut at every byte length, whether a whole-value load or store is in
//! bounds, which bytes it reads or writes and, when it is not, which bytes the out-of-bounds
//! finding names (from the first scalar outside to the end of the last). Each shape is loaded
//! from a storage or uniform buffer (or the push constants) in one layout and stored to a
//! buffer in another (`OpCopyLogical` between them), and every tier — the reference path, the
//! wide interpreter, the native tier — must agree with the model byte for byte.

mod common;
use common::{assembled, Rng};
use tangle_exec::{Device, Finding, Pipeline, Profile, Resources, RunOptions, SpecConstants};

/// Block layout rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rules {
    Std140,
    Std430,
    Scalar,
}

/// A logical type: the same shape is laid out twice, under two rules.
#[derive(Debug, Clone)]
enum Shape {
    Float,
    Vector(u32),
    /// `cols` columns of `rows` floats.
    Matrix {
        cols: u32,
        rows: u32,
    },
    Array(Box<Shape>, u32),
    Struct(Vec<Shape>),
}

/// A shape laid out: sizes, strides, offsets and majorness chosen.
#[derive(Debug, Clone)]
struct Laid {
    kind: Kind,
    /// Bytes the value takes in an array or struct (its footprint, padding included).
    size: u64,
    align: u64,
}

#[derive(Debug, Clone)]
enum Kind {
    Float,
    Vector(u32),
    Matrix {
        cols: u32,
        rows: u32,
        row_major: bool,
        stride: u64,
    },
    Array {
        elem: Box<Laid>,
        count: u32,
        stride: u64,
    },
    /// Members with their offsets, and the majorness of matrices reached through each.
    Struct {
        members: Vec<(Laid, u64)>,
    },
}

fn round_up(v: u64, a: u64) -> u64 {
    v.div_ceil(a) * a
}

/// The base alignment of a vector of `n` floats.
fn vector_align(rules: Rules, n: u32) -> u64 {
    match (rules, n) {
        (Rules::Scalar, _) | (_, 1) => 4,
        (_, 2) => 8,
        _ => 16,
    }
}

/// Lays `shape` out under `rules`; `row_major` is the majorness of the matrices it holds
/// through arrays (a struct member chooses it anew, as `RowMajor` decorates members). A member
/// is now and then placed past its aligned offset, leaving padding between members.
fn lay(shape: &Shape, rules: Rules, row_major: bool, rng: &mut Rng) -> Laid {
    match shape {
        Shape::Float => Laid {
            kind: Kind::Float,
            size: 4,
            align: 4,
        },
        Shape::Vector(n) => Laid {
            kind: Kind::Vector(*n),
            size: 4 * u64::from(*n),
            align: vector_align(rules, *n),
        },
        &Shape::Matrix { cols, rows } => {
            // Column-major: `cols` vectors of `rows` floats; row-major the other way round.
            let (vectors, length) = if row_major {
                (rows, cols)
            } else {
                (cols, rows)
            };
            let align = match rules {
                Rules::Std140 => 16,
                _ => vector_align(rules, length),
            };
            let stride = round_up(4 * u64::from(length), align);
            Laid {
                kind: Kind::Matrix {
                    cols,
                    rows,
                    row_major,
                    stride,
                },
                size: stride * u64::from(vectors),
                align,
            }
        }
        Shape::Array(elem, count) => {
            let elem = lay(elem, rules, row_major, rng);
            let align = match rules {
                Rules::Std140 => round_up(elem.align, 16),
                _ => elem.align,
            };
            let stride = round_up(elem.size, align);
            Laid {
                size: stride * u64::from(*count),
                kind: Kind::Array {
                    elem: Box::new(elem),
                    count: *count,
                    stride,
                },
                align,
            }
        }
        Shape::Struct(members) => {
            let mut laid = Vec::new();
            let mut end = 0;
            let mut align = 4;
            for m in members {
                let m = lay(m, rules, rng.next().is_multiple_of(2), rng);
                let mut offset = round_up(end, m.align);
                if rng.next().is_multiple_of(4) {
                    offset += m.align;
                }
                end = offset + m.size;
                align = align.max(m.align);
                laid.push((m, offset));
            }
            if rules == Rules::Std140 {
                align = round_up(align, 16);
            }
            Laid {
                kind: Kind::Struct { members: laid },
                size: round_up(end, align),
                align,
            }
        }
    }
}

/// The byte offset of every float of `laid` (at `base`), in one fixed logical order (matrix
/// components column by column): the same order for two layouts of one shape.
fn floats(laid: &Laid, base: u64, out: &mut Vec<u64>) {
    match &laid.kind {
        Kind::Float => out.push(base),
        Kind::Vector(n) => out.extend((0..u64::from(*n)).map(|i| base + 4 * i)),
        &Kind::Matrix {
            cols,
            rows,
            row_major,
            stride,
        } => {
            for c in 0..u64::from(cols) {
                for r in 0..u64::from(rows) {
                    out.push(if row_major {
                        base + r * stride + 4 * c
                    } else {
                        base + c * stride + 4 * r
                    });
                }
            }
        }
        Kind::Array {
            elem,
            count,
            stride,
        } => {
            for i in 0..u64::from(*count) {
                floats(elem, base + i * stride, out);
            }
        }
        Kind::Struct { members } => {
            for (m, offset) in members {
                floats(m, base + offset, out);
            }
        }
    }
}

/// A random shape of at most `depth` levels of arrays and structs.
fn shape(rng: &mut Rng, depth: u32) -> Shape {
    let small = |rng: &mut Rng| 2 + (rng.next() % 3) as u32;
    match rng.next() % if depth == 0 { 3 } else { 5 } {
        0 => Shape::Float,
        1 => Shape::Vector(small(rng)),
        2 => Shape::Matrix {
            cols: small(rng),
            rows: small(rng),
        },
        3 => Shape::Array(Box::new(shape(rng, depth - 1)), 1 + (rng.next() % 3) as u32),
        _ => Shape::Struct(
            (0..1 + rng.next() % 3)
                .map(|_| shape(rng, depth - 1))
                .collect(),
        ),
    }
}

/// SPIR-V assembly text being built: declarations with their ids.
#[derive(Default)]
struct Asm {
    decorations: String,
    types: String,
    next: u32,
    /// Non-aggregate types and constants, which may be declared once only.
    named: std::collections::HashMap<String, String>,
}

impl Asm {
    fn id(&mut self) -> String {
        self.next += 1;
        format!("%t{}", self.next)
    }

    /// The id of a declaration that may appear once (`OpTypeVector %float 3`, ...).
    fn once(&mut self, decl: &str) -> String {
        if let Some(id) = self.named.get(decl) {
            return id.clone();
        }
        let id = self.id();
        self.types.push_str(&format!("{id} = {decl}\n"));
        self.named.insert(decl.to_string(), id.clone());
        id
    }

    fn float(&mut self) -> String {
        self.once("OpTypeFloat 32")
    }

    fn uint(&mut self, v: u32) -> String {
        let uint = self.once("OpTypeInt 32 0");
        self.once(&format!("OpConstant {uint} {v}"))
    }

    /// Declares the type of `laid`; its matrix decorations go on the struct members that hold it.
    fn ty(&mut self, laid: &Laid) -> String {
        match &laid.kind {
            Kind::Float => self.float(),
            Kind::Vector(n) => {
                let f = self.float();
                self.once(&format!("OpTypeVector {f} {n}"))
            }
            Kind::Matrix { cols, rows, .. } => {
                let f = self.float();
                let column = self.once(&format!("OpTypeVector {f} {rows}"));
                self.once(&format!("OpTypeMatrix {column} {cols}"))
            }
            Kind::Array {
                elem,
                count,
                stride,
            } => {
                let e = self.ty(elem);
                let n = self.uint(*count);
                let id = self.id();
                self.types
                    .push_str(&format!("{id} = OpTypeArray {e} {n}\n"));
                self.decorations
                    .push_str(&format!("OpDecorate {id} ArrayStride {stride}\n"));
                id
            }
            Kind::Struct { members } => {
                let ids: Vec<String> = members.iter().map(|(m, _)| self.ty(m)).collect();
                let id = self.id();
                self.types
                    .push_str(&format!("{id} = OpTypeStruct {}\n", ids.join(" ")));
                for (i, (m, offset)) in members.iter().enumerate() {
                    self.member(&id, i, m, *offset);
                }
                id
            }
        }
    }

    /// The decorations of member `i` of struct `id`: its offset, and the layout of the matrices
    /// it holds (directly or through arrays).
    fn member(&mut self, id: &str, i: usize, laid: &Laid, offset: u64) {
        self.decorations
            .push_str(&format!("OpMemberDecorate {id} {i} Offset {offset}\n"));
        let mut inner = laid;
        while let Kind::Array { elem, .. } = &inner.kind {
            inner = elem;
        }
        if let Kind::Matrix {
            row_major, stride, ..
        } = inner.kind
        {
            let major = if row_major { "RowMajor" } else { "ColMajor" };
            self.decorations.push_str(&format!(
                "OpMemberDecorate {id} {i} {major}\nOpMemberDecorate {id} {i} MatrixStride {stride}\n"
            ));
        }
    }

    /// A `Block` struct holding `laid` at offset 0, and a variable of it in `class`.
    fn block(&mut self, laid: &Laid, ty: &str, class: &str, binding: Option<u32>) -> String {
        let blk = self.id();
        self.types.push_str(&format!("{blk} = OpTypeStruct {ty}\n"));
        self.decorations
            .push_str(&format!("OpDecorate {blk} Block\n"));
        self.member(&blk, 0, laid, 0);
        let ptr = self.once(&format!("OpTypePointer {class} {blk}"));
        let var = self.id();
        self.types
            .push_str(&format!("{var} = OpVariable {ptr} {class}\n"));
        if let Some(b) = binding {
            self.decorations.push_str(&format!(
                "OpDecorate {var} DescriptorSet 0\nOpDecorate {var} Binding {b}\n"
            ));
        }
        var
    }
}

/// The module whose entry point copies the value at binding 0 (laid out as `a`; a uniform
/// buffer under std140, else a storage buffer), or in the push constants (laid out as `a`), to
/// binding 1 (laid out as `b`): 32 invocations load it, the first stores it.
fn module(a: &Laid, a_rules: Rules, b: &Laid, from_push: bool) -> String {
    let mut m = Asm::default();
    let ta = m.ty(a);
    let tb = m.ty(b);
    let in_class = if a_rules == Rules::Std140 {
        "Uniform"
    } else {
        "StorageBuffer"
    };
    let input = m.block(a, &ta, in_class, Some(0));
    let output = m.block(b, &tb, "StorageBuffer", Some(1));
    let push = m.block(a, &ta, "PushConstant", None);
    let zero = m.uint(0);
    let p_in = m.once(&format!("OpTypePointer {in_class} {ta}"));
    let p_push = m.once(&format!("OpTypePointer PushConstant {ta}"));
    let p_out = m.once(&format!("OpTypePointer StorageBuffer {tb}"));
    let void = m.once("OpTypeVoid");
    let func = m.once(&format!("OpTypeFunction {void}"));
    // Matrices, vectors and floats are one type whatever their layout: stored as loaded.
    let copy = if ta == tb {
        "OpCopyObject"
    } else {
        "OpCopyLogical"
    };
    let uint = m.once("OpTypeInt 32 0");
    let boolean = m.once("OpTypeBool");
    let p_index = m.once(&format!("OpTypePointer Input {uint}"));
    let index = m.id();
    m.types
        .push_str(&format!("{index} = OpVariable {p_index} Input\n"));
    m.decorations.push_str(&format!(
        "OpDecorate {index} BuiltIn LocalInvocationIndex\n"
    ));
    // Every invocation loads (32 fill the wide path's batch); invocation 0 alone stores.
    let entry = |name: &str, var: &str, ptr: &str| {
        format!(
            "%{name} = OpFunction {void} None {func}\n%{name}_entry = OpLabel\n\
             %{name}_src = OpAccessChain {ptr} {var} {zero}\n\
             %{name}_v = OpLoad {ta} %{name}_src\n%{name}_w = {copy} {tb} %{name}_v\n\
             %{name}_i = OpLoad {uint} {index}\n%{name}_first = OpIEqual {boolean} %{name}_i {zero}\n\
             OpSelectionMerge %{name}_end None\n\
             OpBranchConditional %{name}_first %{name}_store %{name}_end\n\
             %{name}_store = OpLabel\n\
             %{name}_dst = OpAccessChain {p_out} {output} {zero}\n\
             OpStore %{name}_dst %{name}_w\nOpBranch %{name}_end\n\
             %{name}_end = OpLabel\nOpReturn\nOpFunctionEnd\n"
        )
    };
    // One entry point a module: the wide path takes programs of one function.
    let (name, main, interface) = if from_push {
        ("from_push", entry("main", &push, &p_push), push)
    } else {
        ("from_buffer", entry("main", &input, &p_in), input)
    };
    format!(
        "OpCapability Shader\nOpMemoryModel Logical GLSL450\n\
         OpEntryPoint GLCompute %main \"{name}\" {interface} {output} {index}\n\
         OpExecutionMode %main LocalSize 32 1 1\n{}{}{main}",
        m.decorations, m.types
    )
}

/// What the model says a copy of `len`-byte memory (its contents `bytes`) gives.
#[derive(Debug, PartialEq)]
enum Expect {
    /// In bounds: the output buffer's bytes.
    Bytes(Vec<u8>),
    /// Out of bounds: the finding's offset and length, and the output buffer's bytes.
    OutOfBounds {
        region: String,
        offset: u64,
        len: u64,
        size: u64,
        bytes: Vec<u8>,
    },
}

/// The finding the model gives an access of the floats at `offsets` to a region of `size`
/// bytes, `None` when it is in bounds: from the first float outside to the end of the last.
fn outside(offsets: &[u64], size: u64, region: &str) -> Option<(String, u64, u64, u64)> {
    let out: Vec<u64> = offsets.iter().copied().filter(|&o| o + 4 > size).collect();
    let first = *out.iter().min()?;
    let last = out.iter().max()? + 4;
    Some((region.to_string(), first, last - first, size))
}

/// The output buffer after copying the floats at `from` of `src` to `to` (`None`: zeros, the
/// value an out-of-bounds load gives) over `dst`.
fn copied(dst: &[u8], src: Option<&[u8]>, from: &[u64], to: &[u64]) -> Vec<u8> {
    let mut out = dst.to_vec();
    for (&f, &t) in from.iter().zip(to) {
        let (f, t) = (f as usize, t as usize);
        let v = src.map_or([0; 4], |s| [s[f], s[f + 1], s[f + 2], s[f + 3]]);
        out[t..t + 4].copy_from_slice(&v);
    }
    out
}

/// One layout pair's pipelines, on the three tiers.
struct Case {
    from_buffer: Pipeline,
    from_push: Pipeline,
    a: Vec<u64>,
    b: Vec<u64>,
    a_size: u64,
    b_size: u64,
}

/// The tiers: (name, wide, jit).
const TIERS: [(&str, bool, bool); 3] = [
    ("reference", false, false),
    ("wide", true, false),
    ("native", true, true),
];

/// Runs `pipeline` over the buffers and push constants on every tier, checking each against
/// `expect` (the output buffer, binding 1, and the findings); returns how many in-bounds runs
/// each fast tier took.
fn check(
    what: &str,
    pipeline: &Pipeline,
    (input, output, push): (&[u8], &[u8], &[u8]),
    expect: &Expect,
    taken: &mut [u64; 3],
) {
    for (t, (tier, wide, jit)) in TIERS.iter().enumerate() {
        let mut res = Resources {
            push_constants: push.to_vec(),
            ..Resources::default()
        };
        res.buffers.insert((0, 0), input.to_vec());
        res.buffers.insert((0, 1), output.to_vec());
        let options = RunOptions {
            threads: 1,
            wide: *wide,
            jit: *jit,
            checks: true,
            ..RunOptions::default()
        };
        let report = pipeline
            .dispatch(&mut res, [1, 1, 1], &options)
            .unwrap_or_else(|e| panic!("{what} ({tier}): {e}"));
        let got_bytes = res.buffers.get(&(0, 1)).cloned().unwrap_or_default();
        let findings: Vec<&Finding> = report.diagnostics.iter().map(|d| &d.finding).collect();
        match expect {
            Expect::Bytes(bytes) => {
                assert!(findings.is_empty(), "{what} ({tier}): {findings:?}");
                assert_eq!(&got_bytes, bytes, "{what} ({tier})");
                let ran = match t {
                    1 => report.stats.wide_invocations,
                    2 => report.stats.jit_invocations,
                    _ => 1,
                };
                taken[t] += u64::from(ran > 0);
            }
            Expect::OutOfBounds {
                region,
                offset,
                len,
                size,
                bytes,
            } => {
                let want = Finding::OutOfBounds {
                    region: region.clone(),
                    offset: *offset,
                    len: *len,
                    size: *size,
                };
                // One per invocation that loaded (32) or stored (1) it.
                assert!(
                    !findings.is_empty() && findings.iter().all(|f| **f == want),
                    "{what} ({tier}): {findings:?}, expected {want:?}"
                );
                assert_eq!(&got_bytes, bytes, "{what} ({tier})");
            }
        }
    }
}

/// A pattern of input bytes with no zero byte (so a load that read 0 shows).
fn pattern(len: u64, seed: u64) -> Vec<u8> {
    (0..len)
        .map(|i| (((i + 1) * 37 + seed * 11) % 251 + 1) as u8)
        .collect()
}

/// Every cut of every buffer for one layout pair.
fn run_case(what: &str, case: &Case, taken: &mut [u64; 3]) {
    let fill = 0xee;
    let a_extent = case.a.iter().max().map_or(0, |o| o + 4);
    let b_extent = case.b.iter().max().map_or(0, |o| o + 4);
    // The load's buffer cut at every length (the output whole).
    let out = vec![fill; case.b_size as usize];
    for len in 0..=case.a_size {
        let input = pattern(len, 1);
        let expect = match outside(&case.a, len, "buffer (set 0, binding 0)") {
            None => Expect::Bytes(copied(&out, Some(&input), &case.a, &case.b)),
            Some((region, offset, l, size)) => Expect::OutOfBounds {
                region,
                offset,
                len: l,
                size,
                bytes: copied(&out, None, &case.a, &case.b),
            },
        };
        assert_eq!(len >= a_extent, matches!(expect, Expect::Bytes(_)));
        let what = format!("{what}, load from {len} bytes");
        check(
            &what,
            &case.from_buffer,
            (&input, &out, &[]),
            &expect,
            taken,
        );
    }
    // The store's buffer cut at every length: dropped whole when out of bounds.
    let input = pattern(case.a_size, 2);
    for len in 0..=case.b_size {
        let out = vec![fill; len as usize];
        let expect = match outside(&case.b, len, "buffer (set 0, binding 1)") {
            None => Expect::Bytes(copied(&out, Some(&input), &case.a, &case.b)),
            Some((region, offset, l, size)) => Expect::OutOfBounds {
                region,
                offset,
                len: l,
                size,
                bytes: out.clone(),
            },
        };
        assert_eq!(len >= b_extent, matches!(expect, Expect::Bytes(_)));
        let what = format!("{what}, store to {len} bytes");
        check(
            &what,
            &case.from_buffer,
            (&input, &out, &[]),
            &expect,
            taken,
        );
    }
    // The push constants cut at every length (a device offers at least 128 bytes of them).
    if case.a_size <= 128 {
        let out = vec![fill; case.b_size as usize];
        for len in 0..=case.a_size {
            let push = pattern(len, 3);
            let expect = match outside(&case.a, len, "push constants") {
                None => Expect::Bytes(copied(&out, Some(&push), &case.a, &case.b)),
                Some((region, offset, l, size)) => Expect::OutOfBounds {
                    region,
                    offset,
                    len: l,
                    size,
                    bytes: copied(&out, None, &case.a, &case.b),
                },
            };
            let what = format!("{what}, load from {len} bytes of push constants");
            check(&what, &case.from_push, (&[], &out, &push), &expect, taken);
        }
    }
}

/// The shapes every run covers: upstream Amber's matrices (`mat2x3` with its 4 bytes of
/// trailing padding, `mat3x2`, `mat3`, `mat4x3`), a struct whose member leaves tail padding, an
/// array of matrices and a struct of a vec3 and a float (which std430 packs into 16 bytes).
fn fixed_shapes() -> Vec<Shape> {
    let m = |cols, rows| Shape::Matrix { cols, rows };
    vec![
        m(2, 3),
        m(3, 2),
        m(3, 3),
        m(4, 3),
        Shape::Struct(vec![Shape::Vector(3)]),
        Shape::Array(Box::new(m(2, 3)), 2),
        Shape::Struct(vec![Shape::Vector(3), Shape::Float]),
        Shape::Array(
            Box::new(Shape::Struct(vec![Shape::Float, Shape::Vector(2)])),
            3,
        ),
    ]
}

#[test]
fn composite_accesses_touch_exactly_their_members() {
    let mut rng = Rng(28);
    let device = Device::new(Profile::default());
    let mut shapes = fixed_shapes();
    shapes.extend((0..10).map(|_| shape(&mut rng, 2)));
    let rules = [Rules::Std140, Rules::Std430, Rules::Scalar];
    let mut taken = [0u64; 3];
    let mut runs = 0;
    for (k, s) in shapes.iter().enumerate() {
        // Each fixed shape under every rule; a random one under one random pair.
        let pairs: Vec<(Rules, Rules)> = if k < 8 {
            rules.iter().map(|&r| (r, rules[(k + 1) % 3])).collect()
        } else {
            vec![(
                rules[(rng.next() % 3) as usize],
                rules[(rng.next() % 3) as usize],
            )]
        };
        for (ra, rb) in pairs {
            let a = lay(s, ra, rng.next().is_multiple_of(2), &mut rng);
            let b = lay(s, rb, rng.next().is_multiple_of(2), &mut rng);
            // Keep each run cheap: the larger random shapes are skipped.
            if a.size.max(b.size) > 256 {
                continue;
            }
            let pipeline = |from_push| {
                let text = module(&a, ra, &b, from_push);
                let module = assembled(&text, "vulkan1.3", &["--scalar-block-layout"]);
                let entry = if from_push {
                    "from_push"
                } else {
                    "from_buffer"
                };
                device
                    .compute_pipeline(&module, entry, &SpecConstants::new())
                    .unwrap_or_else(|e| panic!("{s:?}: {e}\n{text}"))
            };
            let (mut fa, mut fb) = (Vec::new(), Vec::new());
            floats(&a, 0, &mut fa);
            floats(&b, 0, &mut fb);
            let case = Case {
                from_buffer: pipeline(false),
                from_push: pipeline(true),
                a: fa,
                b: fb,
                a_size: a.size,
                b_size: b.size,
            };
            run_case(&format!("{s:?} {ra:?} -> {rb:?}"), &case, &mut taken);
            runs += 1;
        }
    }
    assert!(runs >= 24, "{runs} layout pairs run");
    // The fast tiers really ran the in-bounds copies (not all given to the reference path).
    assert!(taken[1] > 0 && taken[2] > 0, "{taken:?}");
}

/// Padding never races: one invocation stores a std430 `mat2x3` (columns at 0 and 16, padding
/// at 12..16) while another writes a float into that padding through a second block bound to
/// the same buffer. Their bytes are disjoint, so there is no data race and both land.
#[test]
fn padding_inside_a_composite_does_not_race() {
    let src = "#version 450
layout(local_size_x = 2) in;
layout(std430, set = 0, binding = 0) buffer M { mat2x3 m; };
layout(std430, set = 0, binding = 0) buffer W { float w[]; };
void main() {
  if (gl_LocalInvocationIndex == 0u) {
    m = mat2x3(1.0, 2.0, 3.0, 4.0, 5.0, 6.0);
  } else {
    w[3] = 9.0;
  }
}";
    let module = common::compile(src);
    for (tier, wide, jit) in TIERS {
        let mut job = common::Job::new(vec![vec![0; 32]], [1, 1, 1]);
        job.wide = wide;
        job.jit = jit;
        let (out, report) = common::run_module(&module, &job);
        assert!(report.diagnostics.is_empty(), "{tier}: {report:?}");
        assert_eq!(
            common::to_f32s(&out[0]),
            [1.0, 2.0, 3.0, 9.0, 4.0, 5.0, 6.0, 0.0],
            "{tier}"
        );
    }
}

/// Padding is never written: after a `mat2x3` is stored whole into workgroup memory, its column
/// bytes are defined and its padding (bytes 12..16 of the std430 layout) is still undefined, read
/// through an aliasing Block view (SPV_KHR_workgroup_memory_explicit_layout). Storing the padding
/// to a buffer is the uninitialised-value finding; storing a column's component is not.
#[test]
fn padding_stays_unwritten() {
    let src = "#version 450
#extension GL_EXT_shared_memory_block : require
layout(local_size_x = 1) in;
shared M { mat2x3 m; };
shared W { float w[8]; };
layout(std430, set = 0, binding = 0) buffer Out { float o[2]; };
void main() {
  m = mat2x3(1.0, 2.0, 3.0, 4.0, 5.0, 6.0);
  o[0] = w[4];
  o[1] = w[3];
}";
    let module = common::compile(src);
    let job = common::Job::new(vec![vec![0; 8]], [1, 1, 1]);
    let (out, report) = common::run_module(&module, &job);
    let uninit: Vec<&Finding> = report
        .diagnostics
        .iter()
        .map(|d| &d.finding)
        .filter(|f| matches!(f, Finding::Uninit(_)))
        .collect();
    assert_eq!(uninit.len(), 1, "{:?}", report.diagnostics);
    assert_eq!(common::to_f32s(&out[0])[0], 4.0);
}
