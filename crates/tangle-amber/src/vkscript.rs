//! VkScript (amber's `docs/vk_script.md`, the VkRunner format), its compute subset, parsed into
//! the same [`Script`] as AmberScript so that both share the runner.
//!
//! Sections are `[name]` lines; `[comment]` sections are skipped. `[require]` lists device
//! features and extensions;
//! `[compute shader]` (GLSL), `[compute shader spirv]` (SPIR-V assembly) or
//! `[compute shader spirv hex]` holds the shader; `[test]` holds commands:
//! `ssbo B size`, `ssbo B subdata type offset values`, `uniform ubo B type offset values`,
//! `uniform type offset values` (push constants), `compute X Y Z`, `compute entrypoint name`,
//! `probe ssbo type B offset op values` and `tolerance t...`. A binding `B` is `binding` (set 0)
//! or `set:binding`. Graphics sections and commands are refused as outside tangle's subset
//! (exit 77).
//!
//! The translation: every `ssbo`/`uniform ubo` binding becomes a buffer bound to every pipeline
//! (one per entry point), holding what the data commands before the first `compute` or probe
//! wrote (amber's `Buffer::SetDataWithOffset`: whole elements at a byte offset, std430 for storage
//! and push constants, std140 for uniform buffers; the buffer grows to fit). A probe reads the
//! buffer as the probe's type: it becomes a `COPY` into a view buffer of that type and an `EXPECT`
//! on the view. Data commands after the first `compute` or probe change the buffer at that point
//! of the run:
//! they become `Write` commands (the zeroed whole elements, then each component), so that a
//! partly written element keeps its other components, as in amber.

use crate::error::{AmberError, Location};
use crate::layout::{ElementLayout, Layout};
use crate::parse::{Cursor, ParseOptions, Tok};
use crate::script::{
    Binding, BindingKind, Buffer, Check, Command, CompareOp, Expect, Pipeline, Requirement, Script,
    Shader, ShaderBuild, ShaderFormat, SubgroupControl, Tolerance,
};
use crate::types::{DataType, Scalar};
use crate::value::Number;
use std::collections::HashMap;

/// Whether `text` is a VkScript: its first line that is neither blank nor a comment opens a
/// `[section]` (an AmberScript statement never starts with `[`, and `#!amber` marks AmberScript).
pub fn is_vkscript(text: &str) -> bool {
    text.lines()
        .map(str::trim)
        .find(|l| l.starts_with("#!amber") || !(l.is_empty() || l.starts_with('#')))
        .is_some_and(|l| l.starts_with('['))
}

/// A `[section]` and the lines it spans (0-based, header excluded).
struct Section<'a> {
    name: &'a str,
    at: Location,
    lines: std::ops::Range<usize>,
}

/// Splits the text at its `[section]` header lines.
fn sections(text: &str) -> Result<Vec<Section<'_>>, AmberError> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<Section<'_>> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim();
        let at = Location {
            line: u32::try_from(i + 1).unwrap_or(u32::MAX),
            col: 1,
        };
        if let Some(name) = trimmed.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
            if let Some(last) = out.last_mut() {
                last.lines.end = i;
            }
            out.push(Section {
                name: name.trim(),
                at,
                lines: i + 1..lines.len(),
            });
        } else if out.is_empty() && !trimmed.is_empty() && !trimmed.starts_with('#') {
            return Err(AmberError::new(at, "text before the first [section]"));
        }
    }
    Ok(out)
}

/// A VkScript data type name as an AmberScript [`DataType`] (`uint` → `uint32`, `vec3` →
/// `vec3<float>`, `dmat2x3` → `mat2x3<double>`, `i8vec2` → `vec2<int8>`).
fn data_type(name: &str) -> Option<DataType> {
    let scalar = |s: &str| -> Option<Scalar> {
        Some(match s {
            "int" => Scalar::I32,
            "uint" => Scalar::U32,
            "int8_t" => Scalar::I8,
            "uint8_t" => Scalar::U8,
            "int16_t" => Scalar::I16,
            "uint16_t" => Scalar::U16,
            "int64_t" => Scalar::I64,
            "uint64_t" => Scalar::U64,
            "float16_t" => Scalar::F16,
            "float" => Scalar::F32,
            "double" => Scalar::F64,
            _ => return None,
        })
    };
    if let Some(s) = scalar(name) {
        return Some(DataType::scalar(s));
    }
    let dim = |c: u8| (b'2'..=b'4').contains(&c).then(|| c - b'0');
    let prefixes = [
        ("dmat", Scalar::F64, true),
        ("mat", Scalar::F32, true),
        ("dvec", Scalar::F64, false),
        ("i8vec", Scalar::I8, false),
        ("u8vec", Scalar::U8, false),
        ("i16vec", Scalar::I16, false),
        ("u16vec", Scalar::U16, false),
        ("i64vec", Scalar::I64, false),
        ("u64vec", Scalar::U64, false),
        ("f16vec", Scalar::F16, false),
        ("ivec", Scalar::I32, false),
        ("uvec", Scalar::U32, false),
        ("vec", Scalar::F32, false),
    ];
    let (rest, s, matrix) = prefixes
        .iter()
        .find_map(|(p, s, m)| Some((name.strip_prefix(p)?, *s, *m)))?;
    let b = rest.as_bytes();
    let (columns, rows) = match (matrix, b) {
        (false, [n]) => (1, dim(*n)?),
        (true, [n]) => (dim(*n)?, dim(*n)?),
        (true, [c, b'x', r]) => (dim(*c)?, dim(*r)?),
        _ => return None,
    };
    Some(DataType {
        rows,
        columns,
        ..DataType::scalar(s)
    })
}

/// What a binding holds.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Storage,
    Uniform,
    Push,
}

/// A buffer being assembled from data commands.
struct Building {
    kind: Kind,
    set: u32,
    binding: u32,
    bytes: Vec<u8>,
    /// The largest size the buffer reaches during the run (counted against the limit).
    max_len: usize,
    /// The type of the first data command (later ones may use others).
    data_type: Option<DataType>,
}

/// The VkScript translator's state.
struct Translator<'t> {
    /// The script's lines.
    lines: Vec<&'t str>,
    options: &'t ParseOptions,
    script: Script,
    /// Index into `script.buffers` and the buffer being built, by (kind, set, binding).
    buffers: HashMap<(Kind, u32, u32), usize>,
    building: Vec<Building>,
    /// View buffers by (buffer, type).
    views: HashMap<(usize, DataType), usize>,
    /// Entry point names, one pipeline each, in order of first use.
    entry_points: Vec<String>,
    entry_point: String,
    tolerance: Option<Tolerance>,
    /// A `compute` or a `probe` has been emitted: data commands from here on change the buffer
    /// at their point of the run, not its initial contents.
    started: bool,
    bytes: u64,
}

/// Parses a VkScript.
pub fn parse(text: &str, options: &ParseOptions) -> Result<Script, AmberError> {
    let mut t = Translator {
        lines: text.lines().collect(),
        options,
        script: Script::default(),
        buffers: HashMap::new(),
        building: Vec::new(),
        views: HashMap::new(),
        entry_points: Vec::new(),
        entry_point: "main".into(),
        tolerance: None,
        started: false,
        bytes: 0,
    };
    let mut shader = None;
    for section in sections(text)? {
        match section.name {
            "require" => t.require(&section)?,
            "test" => t.test(&section)?,
            // Ignored whole, as amber's section parser drops it (`NodeType::kComment`).
            "comment" => {}
            name if name.split_whitespace().take(2).eq(["compute", "shader"]) => {
                let format = match name.split_whitespace().skip(2).collect::<Vec<_>>()[..] {
                    [] => ShaderFormat::Glsl,
                    ["spirv"] => ShaderFormat::SpirvAsm,
                    ["spirv", "hex"] => ShaderFormat::SpirvHex,
                    _ => {
                        return Err(AmberError::new(
                            section.at,
                            format!("unknown shader section [{name}]"),
                        ))
                    }
                };
                if shader.is_some() {
                    return Err(AmberError::new(section.at, "a second [compute shader]"));
                }
                let source = t.section_text(&section) + "\n";
                shader = Some(Shader {
                    name: "compute".into(),
                    format,
                    target_env: None,
                    source,
                    at: section.at,
                    first_line: section.at.line.saturating_add(1),
                    file_path: "embedded-shaders/compute".into(),
                });
            }
            "vertex data" | "indices" => {
                return Err(AmberError::unsupported(
                    section.at,
                    format!(
                        "VkScript [{}] (graphics) is outside tangle's compute subset",
                        section.name
                    ),
                ))
            }
            name if name.contains("shader") => {
                return Err(AmberError::unsupported(
                    section.at,
                    format!("VkScript [{name}] (graphics) is outside tangle's compute subset"),
                ))
            }
            name => {
                return Err(AmberError::new(
                    section.at,
                    format!("unknown VkScript section [{name}]"),
                ))
            }
        }
    }
    t.finish(shader)
}

/// The bytes of the `k`-th component (counted across elements) relative to the first element.
fn component_range(element: &ElementLayout, k: usize) -> Option<std::ops::Range<usize>> {
    let start = element.byte_offset(k)?;
    Some(start..start + element.scalar(k)?.size())
}

/// `B` or `set:binding`.
fn binding(tok: Tok<'_>) -> Result<(u32, u32), AmberError> {
    let bad = || AmberError::new(tok.at, format!("'{}' is not a binding", tok.text));
    let num = |s: &str| match Number::parse(s) {
        Some(Number::Int(v)) => u32::try_from(v).ok(),
        _ => None,
    };
    match tok.text.split_once(':') {
        Some((s, b)) => Ok((num(s).ok_or_else(bad)?, num(b).ok_or_else(bad)?)),
        None => Ok((0, num(tok.text).ok_or_else(bad)?)),
    }
}

/// A non-negative integer token.
fn uint(tok: Tok<'_>, what: &str) -> Result<usize, AmberError> {
    match Number::parse(tok.text) {
        Some(Number::Int(v)) => usize::try_from(v).ok(),
        _ => None,
    }
    .ok_or_else(|| {
        AmberError::new(
            tok.at,
            format!(
                "{what} must be a non-negative integer, found '{}'",
                tok.text
            ),
        )
    })
}

/// A tolerance: `0.1` or `0.1%`.
fn tolerance(tok: Tok<'_>) -> Result<Tolerance, AmberError> {
    let (text, percent) = match tok.text.strip_suffix('%') {
        Some(t) => (t, true),
        None => (tok.text, false),
    };
    match Number::parse(text).map(Number::as_f64) {
        Some(value) if value >= 0.0 => Ok(Tolerance { value, percent }),
        _ => Err(AmberError::new(
            tok.at,
            format!("'{}' is not a tolerance", tok.text),
        )),
    }
}

impl Translator<'_> {
    /// The lines of a section, joined.
    fn section_text(&self, section: &Section<'_>) -> String {
        self.lines
            .get(section.lines.clone())
            .unwrap_or_default()
            .join("\n")
    }

    fn require(&mut self, section: &Section<'_>) -> Result<(), AmberError> {
        let text = self.section_text(section);
        let mut c = Cursor::at_line(&text, section.lines.start);
        while c.next_statement() {
            let Some(tok) = c.next() else { continue };
            match tok.text {
                // Framebuffer settings configure graphics pipelines only; a compute test is
                // unaffected by them.
                "framebuffer" | "depthstencil" => {
                    c.expect("a format")?;
                }
                "fbsize" => {
                    c.expect("a width")?;
                    c.expect("a height")?;
                }
                "fence_timeout" => {
                    uint(c.expect("a timeout")?, "fence_timeout")?;
                }
                name if name.starts_with("VK_") => {
                    self.script
                        .requirements
                        .push(Requirement::Extension(name.to_string()));
                }
                name => self
                    .script
                    .requirements
                    .push(Requirement::Feature(name.to_string())),
            }
            c.end_of_statement()?;
        }
        Ok(())
    }

    fn test(&mut self, section: &Section<'_>) -> Result<(), AmberError> {
        let text = self.section_text(section);
        let mut c = Cursor::at_line(&text, section.lines.start);
        while c.next_statement() {
            let Some(tok) = c.next() else { continue };
            match tok.text {
                "compute" => self.compute(&mut c, tok)?,
                "ssbo" => {
                    let (set, b) = binding(c.expect("a binding")?)?;
                    let next = c.expect("a size or subdata")?;
                    if next.text == "subdata" {
                        self.data(&mut c, Kind::Storage, set, b, tok)?;
                    } else {
                        let size = uint(next, "the ssbo size")?;
                        self.grow(Kind::Storage, set, b, size, next.at)?;
                    }
                }
                "uniform" => {
                    if c.eat("ubo") {
                        let (set, b) = binding(c.expect("a binding")?)?;
                        self.data(&mut c, Kind::Uniform, set, b, tok)?;
                    } else {
                        self.data(&mut c, Kind::Push, 0, 0, tok)?;
                    }
                }
                "probe" if c.peek().is_some_and(|t| t.text == "ssbo") => {
                    c.next();
                    self.probe(&mut c, tok.at)?;
                }
                "tolerance" => {
                    let mut values = Vec::new();
                    while let Some(t) = c.next() {
                        values.push(tolerance(t)?);
                    }
                    if values.is_empty() || values.len() > 4 {
                        return Err(AmberError::new(tok.at, "tolerance takes 1 to 4 values"));
                    }
                    // One tolerance for every component is what EXPECT TOLERANCE holds.
                    if values.iter().any(|v| *v != values[0]) {
                        return Err(AmberError::unsupported(
                            tok.at,
                            "per-component tolerances (different values) are outside tangle's VkScript subset",
                        ));
                    }
                    self.tolerance = values.first().copied();
                }
                t => {
                    return Err(AmberError::unsupported(
                        tok.at,
                        format!(
                            "VkScript command '{t}' (graphics or unknown) is outside tangle's compute subset"
                        ),
                    ))
                }
            }
            c.end_of_statement()?;
        }
        Ok(())
    }

    /// `compute X Y Z` or `compute entrypoint NAME`.
    fn compute(&mut self, c: &mut Cursor<'_>, tok: Tok<'_>) -> Result<(), AmberError> {
        if c.eat("entrypoint") {
            self.entry_point = c.expect("an entry point name")?.text.to_string();
            return Ok(());
        }
        let mut groups = [0u32; 3];
        for g in &mut groups {
            let t = c.expect("a workgroup count")?;
            *g = u32::try_from(uint(t, "a workgroup count")?)
                .map_err(|_| AmberError::new(t.at, "the workgroup count is too large"))?;
        }
        let pipeline = match self
            .entry_points
            .iter()
            .position(|e| *e == self.entry_point)
        {
            Some(i) => i,
            None => {
                self.entry_points.push(self.entry_point.clone());
                self.entry_points.len() - 1
            }
        };
        self.started = true;
        self.script.commands.push(Command::Run {
            pipeline,
            groups,
            at: tok.at,
        });
        Ok(())
    }

    /// The buffer of (kind, set, binding), created empty on first use.
    fn buffer(&mut self, kind: Kind, set: u32, b: u32) -> usize {
        if let Some(i) = self.buffers.get(&(kind, set, b)) {
            return *i;
        }
        let i = self.script.buffers.len();
        let name = match kind {
            Kind::Storage => format!("ssbo {set}:{b}"),
            Kind::Uniform => format!("ubo {set}:{b}"),
            Kind::Push => "push constants".to_string(),
        };
        self.script.buffers.push(Buffer {
            name,
            data_type: None,
            layout: Layout::Std430,
            element: ElementLayout::new(&DataType::scalar(Scalar::U8), Layout::Std430),
            bytes: Vec::new(),
            at: Location::default(),
            format: None,
            image: None,
        });
        self.building.push(Building {
            kind,
            set,
            binding: b,
            bytes: Vec::new(),
            max_len: 0,
            data_type: None,
        });
        self.buffers.insert((kind, set, b), i);
        i
    }

    /// Grows a buffer to `size` bytes, counted against the script's buffer limit: its initial
    /// contents before the first `compute` or `probe`, a `Write` that grows it during the run
    /// after.
    fn grow(
        &mut self,
        kind: Kind,
        set: u32,
        b: u32,
        size: usize,
        at: Location,
    ) -> Result<(), AmberError> {
        let i = self.buffer(kind, set, b);
        let started = self.started;
        let Some(buf) = self.building.get_mut(i) else {
            return Ok(());
        };
        if size > buf.max_len {
            let more = (size - buf.max_len) as u64;
            self.bytes = self
                .bytes
                .checked_add(more)
                .filter(|t| *t <= self.options.buffer_limit)
                .ok_or_else(|| {
                    AmberError::new(
                        at,
                        format!(
                            "the buffer does not fit in the memory limit: the script's buffers may hold {} bytes in all",
                            self.options.buffer_limit
                        ),
                    )
                })?;
            buf.max_len = size;
        }
        if !started && size > buf.bytes.len() {
            buf.bytes.resize(size, 0);
        } else if started {
            self.script.commands.push(Command::Write {
                buffer: i,
                offset: size,
                bytes: Vec::new(),
                at,
            });
        }
        Ok(())
    }

    /// `TYPE OFFSET VALUES...` of `ssbo B subdata`, `uniform ubo B` or `uniform`: written as
    /// amber's `SetDataWithOffset` does (the whole elements written are zeroed first, padding
    /// included; then each component).
    fn data(
        &mut self,
        c: &mut Cursor<'_>,
        kind: Kind,
        set: u32,
        b: u32,
        cmd: Tok<'_>,
    ) -> Result<(), AmberError> {
        let ty_tok = c.expect("a data type")?;
        let ty = data_type(ty_tok.text).ok_or_else(|| {
            AmberError::new(ty_tok.at, format!("unknown data type '{}'", ty_tok.text))
        })?;
        let offset = uint(c.expect("a byte offset")?, "the offset")?;
        let mut values = Vec::new();
        while let Some(t) = c.next() {
            let v = Number::parse(t.text)
                .ok_or_else(|| AmberError::new(t.at, format!("'{}' is not a number", t.text)))?;
            if matches!(v, Number::Float(_)) && !ty.scalar.is_float() {
                return Err(AmberError::new(
                    t.at,
                    format!(
                        "{} is not an integer, but the type is {}",
                        t.text, ty_tok.text
                    ),
                ));
            }
            values.push(v);
        }
        if values.is_empty() {
            return Err(AmberError::new(c.here(), "expected at least one value"));
        }
        let layout = if kind == Kind::Uniform {
            Layout::Std140
        } else {
            Layout::Std430
        };
        let element = ElementLayout::new(&ty, layout);
        let count = values.len().div_ceil(element.components().max(1));
        let end = count
            .checked_mul(element.stride)
            .and_then(|n| n.checked_add(offset))
            .ok_or_else(|| AmberError::new(cmd.at, "the data does not fit in memory"))?;
        self.grow(kind, set, b, end, cmd.at)?;
        let i = self.buffer(kind, set, b);
        let Some(buf) = self.building.get_mut(i) else {
            return Ok(());
        };
        // Upstream's own scripts write one binding with several types (floats with the padding
        // spelled out, then the matrix they make; a vec4, then floats): each command lays out its
        // own values, and the buffer keeps the first command's type.
        buf.data_type.get_or_insert(ty);
        let whole = values.len() / element.components().max(1) * element.stride;
        let mut region = vec![0u8; end - offset];
        for (k, v) in values.iter().enumerate() {
            element
                .write(&mut region, k, *v)
                .map_err(|e| AmberError::new(cmd.at, e))?;
        }
        if !self.started {
            if let Some(dst) = buf.bytes.get_mut(offset..end) {
                dst[..whole].copy_from_slice(&region[..whole]);
                for k in whole / element.stride.max(1) * element.components()..values.len() {
                    if let Some(range) = component_range(&element, k) {
                        dst[range.clone()].copy_from_slice(&region[range]);
                    }
                }
            }
            return Ok(());
        }
        // During the run: the whole elements at once, then the components of a partial one.
        self.script.commands.push(Command::Write {
            buffer: i,
            offset,
            bytes: region[..whole].to_vec(),
            at: cmd.at,
        });
        for k in whole / element.stride.max(1) * element.components()..values.len() {
            if let Some(range) = component_range(&element, k) {
                self.script.commands.push(Command::Write {
                    buffer: i,
                    offset: offset + range.start,
                    bytes: region[range].to_vec(),
                    at: cmd.at,
                });
            }
        }
        Ok(())
    }

    /// `probe ssbo TYPE B OFFSET OP VALUES...`: a `COPY` of the buffer into a view of the
    /// probe's type, and an `EXPECT` on the view.
    fn probe(&mut self, c: &mut Cursor<'_>, at: Location) -> Result<(), AmberError> {
        let ty_tok = c.expect("a data type")?;
        let ty = data_type(ty_tok.text).ok_or_else(|| {
            AmberError::new(ty_tok.at, format!("unknown data type '{}'", ty_tok.text))
        })?;
        let (set, b) = binding(c.expect("a binding")?)?;
        let offset_tok = c.expect("a byte offset")?;
        let offset = uint(offset_tok, "the offset")?;
        let op_tok = c.expect("a comparison")?;
        let (op, tolerance) = match op_tok.text {
            "==" => (CompareOp::Eq, None),
            "!=" => (CompareOp::Ne, None),
            "<" => (CompareOp::Lt, None),
            "<=" => (CompareOp::Le, None),
            ">" => (CompareOp::Gt, None),
            ">=" => (CompareOp::Ge, None),
            "~=" => (CompareOp::Eq, self.tolerance),
            t => {
                return Err(AmberError::new(
                    op_tok.at,
                    format!("unknown comparison '{t}'"),
                ))
            }
        };
        let element = ElementLayout::new(&ty, Layout::Std430);
        let mut values = Vec::new();
        while let Some(t) = c.next() {
            let v = Number::parse(t.text)
                .ok_or_else(|| AmberError::new(t.at, format!("'{}' is not a number", t.text)))?;
            crate::parse::check_literal(v, &element, values.len(), t.at)?;
            values.push(v);
        }
        if values.is_empty() {
            return Err(AmberError::new(c.here(), "expected at least one value"));
        }
        if element.stride == 0 || offset % element.stride != 0 {
            return Err(AmberError::new(
                offset_tok.at,
                format!(
                    "offset {offset} is not a multiple of the {} element size ({} bytes)",
                    ty_tok.text, element.stride
                ),
            ));
        }
        let source = self.buffer(Kind::Storage, set, b);
        let view = match self.views.get(&(source, ty)) {
            Some(v) => *v,
            None => {
                let v = self.script.buffers.len();
                self.script.buffers.push(Buffer {
                    name: format!("ssbo {set}:{b} as {}", ty_tok.text),
                    data_type: Some(ty),
                    layout: Layout::Std430,
                    element: element.clone(),
                    bytes: Vec::new(),
                    at,
                    format: None,
                    image: None,
                });
                self.views.insert((source, ty), v);
                v
            }
        };
        self.script.commands.push(Command::Copy {
            from: source,
            to: view,
            at,
        });
        // The probe reads the buffer as the commands so far left it: a data command after it,
        // even with no `compute` between (upstream's `probe_no_compute_with_ssbo.vkscript`),
        // is a `Write` at its point of the run.
        self.started = true;
        self.script.commands.push(Command::Expect(Expect {
            buffer: view,
            check: Check::Probe {
                offset,
                op,
                tolerance,
                values,
            },
            at,
        }));
        Ok(())
    }

    /// Fills in the buffers' contents and builds one pipeline per entry point.
    fn finish(mut self, shader: Option<Shader>) -> Result<Script, AmberError> {
        // Views are as large as their source at run time: count them against the limit too.
        let views: u64 = self
            .views
            .keys()
            .map(|(src, _)| self.building.get(*src).map_or(0, |b| b.max_len as u64))
            .sum();
        if self.bytes.saturating_add(views) > self.options.buffer_limit {
            return Err(AmberError::new(
                Location { line: 1, col: 1 },
                format!(
                    "the buffers and probe views do not fit in the memory limit ({} bytes)",
                    self.options.buffer_limit
                ),
            ));
        }
        let mut bindings = Vec::new();
        let mut push_constants = None;
        for (i, built) in self.building.into_iter().enumerate() {
            let Some(buf) = self.script.buffers.get_mut(i) else {
                continue;
            };
            buf.bytes = built.bytes;
            if let Some(ty) = built.data_type {
                let layout = if built.kind == Kind::Uniform {
                    Layout::Std140
                } else {
                    Layout::Std430
                };
                buf.data_type = Some(ty);
                buf.layout = layout;
                buf.element = ElementLayout::new(&ty, layout);
            }
            let kind = match built.kind {
                Kind::Storage => BindingKind::Storage,
                Kind::Uniform => BindingKind::Uniform,
                Kind::Push => {
                    push_constants = Some(i);
                    continue;
                }
            };
            bindings.push(Binding {
                buffer: i,
                kind,
                set: built.set,
                binding: built.binding,
                element: 0,
                offset: 0,
                range: None,
                sampler: None,
            });
        }
        match shader {
            Some(shader) => {
                let at = shader.at;
                self.script.shaders.push(shader);
                for entry_point in &self.entry_points {
                    self.script.pipelines.push(Pipeline {
                        name: format!("compute ({entry_point})"),
                        shader: 0,
                        entry_point: entry_point.clone(),
                        spec_constants: Vec::new(),
                        subgroup: SubgroupControl::default(),
                        bindings: bindings.clone(),
                        push_constants,
                        build: ShaderBuild::default(),
                        at,
                    });
                }
            }
            None if !self.entry_points.is_empty() => {
                return Err(AmberError::new(
                    Location { line: 1, col: 1 },
                    "`compute` needs a [compute shader] section",
                ))
            }
            None => {}
        }
        Ok(self.script)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vk(text: &str) -> Result<Script, AmberError> {
        parse(text, &ParseOptions::default())
    }

    #[test]
    fn detects_vkscript_by_its_first_section() {
        assert!(is_vkscript("# comment\n\n[require]\n"));
        assert!(is_vkscript("[compute shader]\n#version 450\n"));
        assert!(!is_vkscript("#!amber\n[x]\n"));
        assert!(!is_vkscript("SHADER compute s GLSL\n"));
        assert!(!is_vkscript(""));
    }

    #[test]
    fn type_names_map_to_amber_types() {
        for (vk, amber) in [
            ("uint", "uint32"),
            ("int", "int32"),
            ("int8_t", "int8"),
            ("vec3", "vec3<float>"),
            ("dvec2", "vec2<double>"),
            ("ivec4", "vec4<int32>"),
            ("u16vec2", "vec2<uint16>"),
            ("mat3x2", "mat3x2<float>"),
            ("mat2", "mat2x2<float>"),
            ("dmat4x3", "mat4x3<double>"),
        ] {
            assert_eq!(data_type(vk).map(|t| t.to_string()).as_deref(), Some(amber));
        }
        for bad in ["vec", "vec5", "mat2x", "uint32", "ivec22", ""] {
            assert_eq!(data_type(bad), None, "{bad}");
        }
    }

    #[test]
    fn translates_data_commands_computes_and_probes() {
        let s = vk("[compute shader]\n#version 450\nvoid main() {}\n\n[require]\nshaderInt64\nVK_KHR_storage_buffer_storage_class\nfbsize 10 10\n\n[test]\nssbo 0:1 subdata vec3 16 1 2 3\nuniform ubo 2 float 16 7.5\nuniform uint 4 9 \\\n  10\ntolerance 1%\ncompute 2 1 1\nprobe ssbo vec3 0:1 16 ~= 1 2 3\nprobe ssbo uint 1 0 == 0\n").unwrap();
        assert_eq!(
            s.requirements,
            [
                Requirement::Feature("shaderInt64".into()),
                Requirement::Extension("VK_KHR_storage_buffer_storage_class".into())
            ]
        );
        let ssbo = &s.buffers[0];
        assert_eq!(ssbo.bytes.len(), 32);
        let f = |b: &[u8], at: usize| f32::from_le_bytes(b[at..at + 4].try_into().unwrap());
        assert_eq!(
            (f(&ssbo.bytes, 16), f(&ssbo.bytes, 20), f(&ssbo.bytes, 24)),
            (1.0, 2.0, 3.0)
        );
        assert_eq!(s.buffers[1].bytes.len(), 20);
        assert_eq!(f(&s.buffers[1].bytes, 16), 7.5);
        assert_eq!(s.buffers[2].bytes, [0, 0, 0, 0, 9, 0, 0, 0, 10, 0, 0, 0]);
        let p = &s.pipelines[0];
        assert_eq!(p.push_constants, Some(2));
        assert_eq!(
            p.bindings
                .iter()
                .map(|b| (b.set, b.binding, b.kind))
                .collect::<Vec<_>>(),
            [(0, 1, BindingKind::Storage), (0, 2, BindingKind::Uniform)]
        );
        assert!(matches!(
            s.commands[0],
            Command::Run {
                groups: [2, 1, 1],
                ..
            }
        ));
        assert!(matches!(s.commands[1], Command::Copy { from: 0, .. }));
        match &s.commands[2] {
            Command::Expect(e) => assert_eq!(
                e.check,
                Check::Probe {
                    offset: 16,
                    op: CompareOp::Eq,
                    tolerance: Some(Tolerance {
                        value: 1.0,
                        percent: true
                    }),
                    values: vec![Number::Int(1), Number::Int(2), Number::Int(3)],
                }
            ),
            c => panic!("{c:?}"),
        }
    }

    #[test]
    fn graphics_is_unsupported_and_typos_are_malformed() {
        for text in [
            "[vertex shader passthrough]\n",
            "[fragment shader]\nvoid main(){}\n",
            "[vertex data]\n0/R32_SFLOAT\n1\n",
            "[test]\ndraw rect -1 -1 2 2\n",
            "[test]\nclear\n",
            "[test]\nprobe all rgba 1 1 1 1\n",
            "[test]\ntolerance 1 2\n",
        ] {
            let e = vk(text).expect_err(text);
            assert!(e.is_unsupported(), "{text:?}: {e}");
        }
        for text in [
            "[tset]\n",
            "[test]\nssbo 0 subdata uint 0 1.5\n",
            "[test]\nssbo x:y 4\n",
            "[test]\nprobe ssbo vec4 0 4 == 1\n",
            "[test]\nprobe ssbo uint 0 0 =~ 1\n",
            "[test]\ncompute 1 1 1\n",
        ] {
            let e = vk(text).expect_err(text);
            assert!(!e.is_unsupported(), "{text:?}: {e}");
        }
        // Positions are the script's, not the section's.
        let e = vk("# c\n[compute shader]\nx\n\n[test]\nssbo 0 4\nssbo 0 subdata uint 0 1.5\n")
            .unwrap_err();
        assert_eq!((e.at.line, e.at.col), (7, 23), "{e}");
        let e = vk("[test]\nssbo 0 99999999999999\n").unwrap_err();
        assert!(e.message.contains("memory limit"), "{e}");
    }

    #[test]
    fn comment_sections_are_skipped() {
        // Anything goes in a [comment], even what would be an error in [test].
        let s = vk("# c\n[comment]\nprobe all rgba 1 1 1 1\nnot a command\n\n[test]\nssbo 0 4\n[comment]\ncompute 9 9 9\n").unwrap();
        assert!(s.commands.is_empty(), "{:?}", s.commands);
        assert_eq!(s.buffers[0].bytes.len(), 4);
        // Only that exact name.
        assert!(vk("[comments]\n").is_err());
    }

    #[test]
    fn data_after_a_probe_is_written_at_its_point_of_the_run() {
        // No compute at all: the probe reads the first data, the second changes the buffer
        // after it (a Write), not the initial contents.
        let s = vk("[test]\nssbo 0 subdata uint 0 1 2\nprobe ssbo uint 0 0 == 1 2\nssbo 0 subdata uint 4 7 8\nprobe ssbo uint 0 0 == 1 7 8\n").unwrap();
        assert_eq!(s.buffers[0].bytes, [1, 0, 0, 0, 2, 0, 0, 0]);
        let kinds: Vec<&str> = s
            .commands
            .iter()
            .map(|c| match c {
                Command::Copy { .. } => "copy",
                Command::Expect(_) => "expect",
                Command::Write { .. } => "write",
                _ => "other",
            })
            .collect();
        assert_eq!(
            kinds,
            ["copy", "expect", "write", "write", "copy", "expect"]
        );
        let written: Vec<(usize, &[u8])> = s
            .commands
            .iter()
            .filter_map(|c| match c {
                Command::Write { offset, bytes, .. } => Some((*offset, bytes.as_slice())),
                _ => None,
            })
            .collect();
        // The growth to 12 bytes, then the two values at byte 4.
        assert_eq!(written, [(12, &[][..]), (4, &[7, 0, 0, 0, 8, 0, 0, 0][..])]);
    }

    #[test]
    fn random_token_soup_never_panics() {
        use rand::{Rng, SeedableRng};
        let words = [
            "[require]",
            "[test]",
            "[compute shader]",
            "[compute shader spirv hex]",
            "ssbo",
            "subdata",
            "uniform",
            "ubo",
            "probe",
            "compute",
            "entrypoint",
            "tolerance",
            "uint",
            "vec3",
            "mat2x3",
            "dmat4",
            "0",
            "1:2",
            "4",
            "-1",
            "1.5",
            "0x10",
            "99999999999",
            "%",
            "1%",
            "==",
            "~=",
            "<",
            "\\",
            "#",
            "\n",
            "\n",
            "\n",
        ];
        let mut rng = rand::rngs::StdRng::seed_from_u64(16);
        for _ in 0..2000 {
            let mut text = String::from("[test]\n");
            for _ in 0..rng.random_range(0..40) {
                text.push_str(words[rng.random_range(0..words.len())]);
                text.push(' ');
            }
            // Any outcome but a panic; errors carry a position inside the text.
            if let Err(e) = vk(&text) {
                assert!(
                    e.at.line as usize <= text.lines().count().max(1),
                    "{text:?}: {e}"
                );
            }
        }
    }

    #[test]
    fn data_after_a_compute_becomes_writes_at_that_point() {
        let s = vk("[compute shader]\nx\n[test]\nssbo 0 subdata uvec2 0 1 2\ncompute 1 1 1\nssbo 0 subdata uvec2 8 3 4 5\n").unwrap();
        // Initial contents: the element before the compute.
        assert_eq!(s.buffers[0].bytes, [1, 0, 0, 0, 2, 0, 0, 0]);
        let writes: Vec<(usize, Vec<u8>)> = s
            .commands
            .iter()
            .filter_map(|c| match c {
                Command::Write { offset, bytes, .. } => Some((*offset, bytes.clone())),
                _ => None,
            })
            .collect();
        // Growth to 24 bytes, the whole element at 8, then the lone component at 16.
        assert_eq!(
            writes,
            [
                (24, vec![]),
                (8, vec![3, 0, 0, 0, 4, 0, 0, 0]),
                (16, vec![5, 0, 0, 0])
            ]
        );
        assert!(matches!(s.commands[0], Command::Run { .. }));
    }

    /// Upstream's `compute_mat2x3.amber` and `compute_ubo_and_ssbo_layouts.amber` write one
    /// binding with several types: each command lays out its own values.
    #[test]
    fn one_binding_takes_data_commands_of_several_types() {
        let s = vk("[compute shader]\nx\n[test]\nssbo 0 subdata float 0 1 0 0 0 2\nssbo 0 subdata int 20 -3\nssbo 0 subdata mat2x3 32 4 5 6 7 8 9\nuniform ubo 1 vec2 0 1 2\nuniform ubo 1 float 16 3\n").unwrap();
        let f = |b: &[u8], at: usize| f32::from_le_bytes(b[at..at + 4].try_into().unwrap());
        let ssbo = &s.buffers[0].bytes;
        // The mat2x3's columns at a stride of 16 (std430), the last one padded to the stride.
        assert_eq!(ssbo.len(), 64);
        assert_eq!((f(ssbo, 0), f(ssbo, 16)), (1.0, 2.0));
        assert_eq!(ssbo[20..24], (-3i32).to_le_bytes());
        let m: Vec<f32> = [32, 36, 40, 48, 52, 56]
            .iter()
            .map(|&o| f(ssbo, o))
            .collect();
        assert_eq!(m, [4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
        // The buffer keeps the first command's type.
        assert_eq!(s.buffers[0].data_type, data_type("float"));
        let ubo = &s.buffers[1].bytes;
        assert_eq!((f(ubo, 0), f(ubo, 4), f(ubo, 16)), (1.0, 2.0, 3.0));
    }
}
