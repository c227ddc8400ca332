//! The AmberScript parser (compute subset of `shared/notes/amber-format.md`).
//!
//! The whole script is parsed, and every name resolved, before anything runs (as amber does), so
//! a script with an error executes nothing. Every error carries `line:col`; no input panics.

mod buffer;
mod command;
mod cursor;
pub mod image;
mod pipeline;
mod sampler;
mod structs;

use crate::error::{AmberError, Location};
use crate::script::{Requirement, Script, Shader, ShaderFormat};
use crate::value::Number;
use cursor::{Cursor, Tok};
use std::collections::HashMap;
use tangle_spirv::TargetEnv;

/// The default limit on the bytes of a script's buffers, all together: 4 GiB, the default of
/// `tangle run --memory-limit`.
pub const DEFAULT_BUFFER_LIMIT: u64 = 4 << 30;

/// Parses a script, allowing its buffers [`DEFAULT_BUFFER_LIMIT`] bytes in all.
pub fn parse(text: &str) -> Result<Script, AmberError> {
    parse_limited(text, DEFAULT_BUFFER_LIMIT)
}

/// Parses a script whose buffers may hold at most `buffer_limit` bytes in all: a `BUFFER`
/// that would pass it is an error at its size, refused before its bytes are allocated.
pub fn parse_limited(text: &str, buffer_limit: u64) -> Result<Script, AmberError> {
    let mut p = Parser {
        cursor: Cursor::new(text),
        script: Script::default(),
        names: Names::default(),
        structs: HashMap::new(),
        buffer_limit,
        buffer_bytes: 0,
    };
    while p.cursor.next_statement() {
        p.statement()?;
    }
    Ok(p.script)
}

/// Name → index maps, one per kind of object.
#[derive(Default)]
struct Names {
    shaders: HashMap<String, usize>,
    buffers: HashMap<String, usize>,
    pipelines: HashMap<String, usize>,
    samplers: HashMap<String, usize>,
}

struct Parser<'a> {
    cursor: Cursor<'a>,
    script: Script,
    names: Names,
    /// `STRUCT` declarations by name.
    structs: HashMap<String, structs::StructDecl>,
    /// The most bytes the script's buffers may hold together.
    buffer_limit: u64,
    /// The bytes of the buffers declared so far.
    buffer_bytes: u64,
}

/// Declares `name` in `map` as the next index, refusing duplicates.
fn declare(
    map: &mut HashMap<String, usize>,
    tok: Tok<'_>,
    kind: &str,
    index: usize,
) -> Result<(), AmberError> {
    if map.insert(tok.text.to_string(), index).is_some() {
        return Err(AmberError::new(
            tok.at,
            format!("{kind} '{}' is declared twice", tok.text),
        ));
    }
    Ok(())
}

/// Looks `tok` up in `map`.
fn lookup(map: &HashMap<String, usize>, tok: Tok<'_>, kind: &str) -> Result<usize, AmberError> {
    map.get(tok.text)
        .copied()
        .ok_or_else(|| AmberError::new(tok.at, format!("unknown {kind} '{}'", tok.text)))
}

/// Parses an unsigned integer token.
fn uint<T: TryFrom<i128>>(tok: Tok<'_>, what: &str) -> Result<T, AmberError> {
    match Number::parse(tok.text) {
        Some(Number::Int(v)) if v >= 0 => T::try_from(v).ok(),
        _ => None,
    }
    .ok_or_else(|| {
        AmberError::new(
            tok.at,
            format!(
                "{what} must be a non-negative integer in range, found '{}'",
                tok.text
            ),
        )
    })
}

/// Parses a number token.
fn number(tok: Tok<'_>) -> Result<Number, AmberError> {
    Number::parse(tok.text)
        .ok_or_else(|| AmberError::new(tok.at, format!("'{}' is not a number", tok.text)))
}

/// Statements amber has but tangle's compute subset does not run.
const UNSUPPORTED: &[&str] = &[
    "CLEAR",
    "CLEAR_COLOR",
    "CLEAR_DEPTH",
    "CLEAR_STENCIL",
    "DEBUG",
    "VIRTUAL_FILE",
];

impl Parser<'_> {
    fn statement(&mut self) -> Result<(), AmberError> {
        let Some(first) = self.cursor.next() else {
            return Ok(());
        };
        match first.text {
            "#!amber" => Ok(()),
            "DEVICE_FEATURE" | "DEVICE_EXTENSION" | "DEVICE_PROPERTY" | "INSTANCE_EXTENSION" => {
                let name = self.cursor.expect("a name")?.text.to_string();
                self.cursor.end_of_statement()?;
                self.script.requirements.push(match first.text {
                    "DEVICE_FEATURE" => Requirement::Feature(name),
                    "DEVICE_EXTENSION" => Requirement::Extension(name),
                    "DEVICE_PROPERTY" => Requirement::Property(name),
                    _ => Requirement::InstanceExtension(name),
                });
                Ok(())
            }
            "SET" => {
                // `SET ENGINE_DATA fence_timeout_ms N`: a Vulkan engine knob, meaningless on the CPU.
                self.cursor.keyword("ENGINE_DATA")?;
                let key = self.cursor.expect("an engine data name")?;
                if key.text != "fence_timeout_ms" {
                    return Err(AmberError::new(
                        key.at,
                        format!("unknown ENGINE_DATA '{}'", key.text),
                    ));
                }
                uint::<u32>(self.cursor.expect("a timeout")?, "the timeout")?;
                self.cursor.end_of_statement()
            }
            "SHADER" => self.shader(first.at),
            "BUFFER" => self.buffer(first.at),
            "IMAGE" => self.image(first.at),
            "SAMPLER" => self.sampler(first.at),
            "STRUCT" => self.structure(first.at),
            "PIPELINE" => self.pipeline(first.at),
            "DERIVE_PIPELINE" => self.derive_pipeline(first.at),
            "RUN" | "EXPECT" | "COPY" | "REPEAT" => {
                let command = self.command(first, 0)?;
                self.script.commands.push(command);
                Ok(())
            }
            t if UNSUPPORTED.contains(&t) => Err(AmberError::new(
                first.at,
                format!("{t} is not part of the compute subset tangle runs"),
            )),
            t => Err(AmberError::new(first.at, format!("unknown command '{t}'"))),
        }
    }

    /// `SHADER (compute|multi) name FORMAT [TARGET_ENV env]` + raw lines + `END`.
    fn shader(&mut self, at: Location) -> Result<(), AmberError> {
        let kind = self.cursor.expect("a shader type")?;
        if kind.text != "compute" && kind.text != "multi" {
            return Err(AmberError::new(
                kind.at,
                format!(
                    "shader type '{}' is not supported (only compute)",
                    kind.text
                ),
            ));
        }
        let name = self.cursor.expect("a shader name")?;
        let format_tok = self.cursor.expect("a shader format")?;
        let format = match format_tok.text {
            "GLSL" => ShaderFormat::Glsl,
            "SPIRV-ASM" => ShaderFormat::SpirvAsm,
            "SPIRV-HEX" => ShaderFormat::SpirvHex,
            "HLSL" | "SPIRV-BIN" | "OPENCL-C" => {
                return Err(AmberError::new(
                    format_tok.at,
                    format!("shader format {} is not supported", format_tok.text),
                ))
            }
            t => {
                return Err(AmberError::new(
                    format_tok.at,
                    format!("unknown shader format '{t}'"),
                ))
            }
        };
        let mut target_env = None;
        if self.cursor.eat("TARGET_ENV") {
            let env = self.cursor.expect("a target environment")?;
            target_env = Some(TargetEnv::parse(env.text).ok_or_else(|| {
                AmberError::new(env.at, format!("unknown TARGET_ENV '{}'", env.text))
            })?);
        }
        if let Some(t) = self
            .cursor
            .peek()
            .filter(|t| t.text == "FILE" || t.text == "VIRTUAL_FILE")
        {
            return Err(AmberError::new(
                t.at,
                "shaders from files are not supported; put the source inline",
            ));
        }
        self.cursor.end_of_statement()?;
        let (source, first_line) = self.cursor.raw_block(at, "SHADER")?;
        declare(
            &mut self.names.shaders,
            name,
            "shader",
            self.script.shaders.len(),
        )?;
        self.script.shaders.push(Shader {
            name: name.text.to_string(),
            format,
            target_env,
            source,
            at,
            first_line,
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests;
