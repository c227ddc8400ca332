//! The AmberScript parser (compute subset of `shared/notes/amber-format.md`).
//!
//! The whole script is parsed, and every name resolved, before anything runs (as amber does), so
//! a script with an error executes nothing. Every error carries `line:col`; no input panics.

mod buffer;
mod command;
mod cursor;
mod debug;
mod files;
pub mod image;
mod options;
mod pipeline;
mod sampler;
mod structs;

use crate::error::{AmberError, Location};
use crate::script::{Requirement, Script, Shader, ShaderFormat};
use crate::value::Number;
pub(crate) use buffer::check_literal;
pub(crate) use cursor::{Cursor, Tok};
pub use options::{ParseOptions, DEFAULT_BUFFER_LIMIT};
use std::collections::HashMap;
use std::path::PathBuf;
use tangle_spirv::TargetEnv;

/// Parses a script, allowing its buffers [`DEFAULT_BUFFER_LIMIT`] bytes in all.
pub fn parse(text: &str) -> Result<Script, AmberError> {
    parse_limited(text, DEFAULT_BUFFER_LIMIT)
}

/// Parses a script whose buffers may hold at most `buffer_limit` bytes in all: a `BUFFER`
/// that would pass it is an error at its size, refused before its bytes are allocated.
/// `FILE` inputs are refused: the script has no directory to read them from.
pub fn parse_limited(text: &str, buffer_limit: u64) -> Result<Script, AmberError> {
    parse_with(
        text,
        &ParseOptions {
            buffer_limit,
            base_dir: None,
        },
    )
}

/// Parses an AmberScript or, when the text is one ([`crate::vkscript::is_vkscript`]), a
/// VkScript into the same [`Script`].
pub fn parse_with(text: &str, options: &ParseOptions) -> Result<Script, AmberError> {
    let mut script = if crate::vkscript::is_vkscript(text) {
        crate::vkscript::parse(text, options)?
    } else {
        parse_amberscript(text, options)?
    };
    crate::compile::imply_target_envs(&mut script);
    Ok(script)
}

fn parse_amberscript(text: &str, options: &ParseOptions) -> Result<Script, AmberError> {
    let mut p = Parser {
        cursor: Cursor::new(text),
        script: Script::default(),
        names: Names::default(),
        structs: HashMap::new(),
        buffer_limit: options.buffer_limit,
        buffer_bytes: 0,
        base_dir: options.base_dir.clone(),
        virtual_files: HashMap::new(),
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
    /// The script's directory, for `FILE` paths.
    base_dir: Option<PathBuf>,
    /// `VIRTUAL_FILE path ... END` contents by path.
    virtual_files: HashMap<String, String>,
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

/// Statements amber has but tangle's compute subset does not run (exit 77): the `CLEAR`s
/// act on a graphics pipeline's attachments; acceleration structures are for ray tracing.
const UNSUPPORTED: &[&str] = &[
    "CLEAR",
    "CLEAR_COLOR",
    "CLEAR_DEPTH",
    "CLEAR_STENCIL",
    "ACCELERATION_STRUCTURE",
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
            "DEBUG" => {
                let command = self.debug_command(first.at)?;
                self.script.commands.push(command);
                Ok(())
            }
            "VIRTUAL_FILE" => self.virtual_file(first.at),
            t if UNSUPPORTED.contains(&t) => Err(AmberError::unsupported(
                first.at,
                format!("{t} is not part of the compute subset tangle runs"),
            )),
            t => Err(AmberError::new(first.at, format!("unknown command '{t}'"))),
        }
    }

    /// `SHADER (compute|multi) name FORMAT [TARGET_ENV env]` + raw lines + `END`, or
    /// `SHADER ... (FILE|VIRTUAL_FILE) path`.
    fn shader(&mut self, at: Location) -> Result<(), AmberError> {
        let kind = self.cursor.expect("a shader type")?;
        match kind.text {
            "compute" | "multi" => {}
            "vertex"
            | "fragment"
            | "geometry"
            | "tessellation_evaluation"
            | "tessellation_control"
            | "ray_generation"
            | "any_hit"
            | "closest_hit"
            | "miss"
            | "intersection"
            | "callable" => {
                return Err(AmberError::unsupported(
                    kind.at,
                    format!("{} shaders are outside tangle's compute subset", kind.text),
                ))
            }
            t => {
                return Err(AmberError::new(
                    kind.at,
                    format!("unknown shader type '{t}'"),
                ))
            }
        }
        let name = self.cursor.expect("a shader name")?;
        let format_tok = self.cursor.expect("a shader format")?;
        let format = match format_tok.text {
            "GLSL" => ShaderFormat::Glsl,
            "SPIRV-ASM" => ShaderFormat::SpirvAsm,
            "SPIRV-HEX" => ShaderFormat::SpirvHex,
            "SPIRV-BIN" => ShaderFormat::SpirvBin,
            "HLSL" | "OPENCL-C" => {
                return Err(AmberError::unsupported(
                    format_tok.at,
                    format!(
                        "shader format {} is outside tangle's subset (GLSL, SPIRV-ASM, SPIRV-HEX, SPIRV-BIN)",
                        format_tok.text
                    ),
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
        let (source, first_line, file_path) = match self.cursor.peek().map(|t| t.text) {
            Some(how @ ("FILE" | "VIRTUAL_FILE")) => {
                self.cursor.next();
                let path = self.cursor.peek();
                // A quoted path is the string inside the quotes, as upstream's tokenizer reads
                // it (the name DEBUG's EXPECT LOCATION gives the file by).
                let (unquoted, _) = self.cursor.string("a file path")?;
                self.cursor.end_of_statement()?;
                let source = match path {
                    Some(path) if how == "VIRTUAL_FILE" => {
                        self.virtual_files.get(&unquoted).cloned().ok_or_else(|| {
                            AmberError::new(path.at, format!("no VIRTUAL_FILE '{unquoted}'"))
                        })?
                    }
                    Some(path) => self.shader_file(path, format)?,
                    None => return Err(AmberError::new(at, "expected a file path")),
                };
                (source, 1, unquoted)
            }
            _ if format == ShaderFormat::SpirvBin => {
                return Err(AmberError::new(
                    format_tok.at,
                    "a SPIRV-BIN shader is read from a FILE",
                ))
            }
            _ => {
                self.cursor.end_of_statement()?;
                let (source, first_line) = self.cursor.raw_block(at, "SHADER")?;
                (
                    source,
                    first_line,
                    format!("embedded-shaders/{}", name.text),
                )
            }
        };
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
            file_path,
        });
        Ok(())
    }

    /// `VIRTUAL_FILE path` + raw lines + `END`: text a later `SHADER ... VIRTUAL_FILE path`
    /// takes as its source.
    fn virtual_file(&mut self, at: Location) -> Result<(), AmberError> {
        let (path, path_at) = self.cursor.string("a virtual file path")?;
        self.cursor.end_of_statement()?;
        let (text, _) = self.cursor.raw_block(at, "VIRTUAL_FILE")?;
        if self.virtual_files.insert(path.clone(), text).is_some() {
            return Err(AmberError::new(
                path_at,
                format!("VIRTUAL_FILE '{path}' is declared twice"),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
