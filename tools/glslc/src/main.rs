//! `glslc`: the subset of shaderc's `glslc` command line that ggml's Vulkan back end uses
//! (`vulkan-shaders-gen` and the feature probes of `ggml-vulkan/CMakeLists.txt`), on the
//! project's `glslang` crate (glslang 16, which knows the cooperative-matrix, integer-dot and
//! bfloat16 GLSL extensions that Debian 12's glslc lacks). Used by `tools/llama-cpp-vulkan.sh`.
//!
//! Accepted: `-fshader-stage=compute`, `--target-env=vulkan1.0..1.4`, one input file, `-o OUT`
//! (`-` = stdout), `-O`/`-O0`/`-Os` (accepted, no effect: the crate's glslang is built without
//! SPIRV-Tools' optimizer, and ggml turns it off for its cooperative-matrix shaders anyway), `-g`
//! (accepted, no effect), `-MD -MF DEP` (a make rule `OUT: IN INCLUDES…`), `-DNAME[=VALUE]`,
//! `-IDIR`. `#include` works without the shader enabling `GL_GOOGLE_include_directive`, as in
//! glslc. Success prints nothing (ggml fails a shader on any stderr output); a failure prints
//! glslc's `FILE:LINE: error: …` lines and `N error(s) generated.` and exits 1, so ggml's probes
//! see "extension not supported: GL_…" for an unknown extension.
//!
//! `GLSLC_UNSUPPORTED_EXTENSIONS=GL_A,GL_B` makes extensions fail as unknown ones do: the build
//! script uses it for NV cooperative matrix 2, which the tangle driver does not offer, so that ggml
//! skips compiling its shaders.

use glslang::error::GlslangError;
use glslang::include::{IncludeHandler, IncludeResult, IncludeType};
use glslang::{
    Compiler, CompilerOptions, ShaderInput, ShaderSource, ShaderStage, SourceLanguage,
    SpirvVersion, Target, VulkanVersion,
};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// What the command line asked for.
#[derive(Debug, Default)]
struct Args {
    input: Option<String>,
    output: Option<String>,
    dep_file: Option<String>,
    defines: Vec<(String, Option<String>)>,
    include_dirs: Vec<PathBuf>,
    vulkan: Option<VulkanVersion>,
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    match parse_args(&argv).and_then(|args| run(&args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprint!("{message}");
            ExitCode::from(1)
        }
    }
}

/// Reads glslc's flags; an unknown one is an error, as in glslc.
fn parse_args(argv: &[String]) -> Result<Args, String> {
    let mut args = Args::default();
    let mut it = argv.iter();
    while let Some(arg) = it.next() {
        let arg = arg.as_str();
        let mut value = |flag: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("glslc: error: argument to '{flag}' is missing\n"))
        };
        match arg {
            "-o" => args.output = Some(value("-o")?),
            "-MF" => args.dep_file = Some(value("-MF")?),
            "-MD"
            | "-O"
            | "-O0"
            | "-Os"
            | "-g"
            | "-fshader-stage=compute"
            | "-fshader-stage=comp" => {}
            "-c" => {}
            _ if arg.starts_with("-fshader-stage=") => {
                return Err(format!("glslc: error: stage not supported: '{arg}'\n"));
            }
            _ if arg.starts_with("--target-env=") => {
                args.vulkan = Some(match &arg["--target-env=".len()..] {
                    "vulkan" | "vulkan1.0" => VulkanVersion::Vulkan1_0,
                    "vulkan1.1" => VulkanVersion::Vulkan1_1,
                    "vulkan1.2" => VulkanVersion::Vulkan1_2,
                    "vulkan1.3" => VulkanVersion::Vulkan1_3,
                    "vulkan1.4" => VulkanVersion::Vulkan1_4,
                    other => {
                        return Err(format!(
                            "glslc: error: invalid value '{other}' in '{arg}'\n"
                        ))
                    }
                });
            }
            _ if arg.starts_with("-D") && arg.len() > 2 => {
                let def = &arg[2..];
                args.defines.push(match def.split_once('=') {
                    Some((name, value)) => (name.to_owned(), Some(value.to_owned())),
                    None => (def.to_owned(), None),
                });
            }
            _ if arg.starts_with("-I") => {
                let dir = if arg.len() > 2 {
                    arg[2..].to_owned()
                } else {
                    value("-I")?
                };
                args.include_dirs.push(PathBuf::from(dir));
            }
            _ if arg.starts_with('-') && arg != "-" => {
                return Err(format!("glslc: error: unknown argument: '{arg}'\n"));
            }
            _ => {
                if args.input.replace(arg.to_owned()).is_some() {
                    return Err("glslc: error: only one input file is supported\n".to_owned());
                }
            }
        }
    }
    Ok(args)
}

/// The SPIR-V version glslc generates for a Vulkan target.
fn spirv_for(vulkan: VulkanVersion) -> SpirvVersion {
    match vulkan {
        VulkanVersion::Vulkan1_0 => SpirvVersion::SPIRV1_0,
        VulkanVersion::Vulkan1_1 => SpirvVersion::SPIRV1_3,
        VulkanVersion::Vulkan1_2 => SpirvVersion::SPIRV1_5,
        _ => SpirvVersion::SPIRV1_6,
    }
}

/// Compiles the input and writes the outputs.
fn run(args: &Args) -> Result<(), String> {
    let input = args
        .input
        .as_deref()
        .ok_or("glslc: error: no input files\n")?;
    let text = std::fs::read_to_string(input)
        .map_err(|e| format!("glslc: error: cannot open input file: '{input}': {e}\n"))?;
    let vulkan = args.vulkan.unwrap_or(VulkanVersion::Vulkan1_0);
    let mut includer = Includer {
        root_dir: Path::new(input)
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default(),
        dirs: args.include_dirs.clone(),
        included: Vec::new(),
    };
    let spirv = compile(&text, vulkan, &args.defines, &mut includer)
        .map_err(|log| glslc_log(&log, input))?;
    let bytes: Vec<u8> = spirv.iter().flat_map(|w| w.to_le_bytes()).collect();
    let output = args.output.clone().unwrap_or_else(|| "a.spv".to_owned());
    if output == "-" {
        use std::io::Write as _;
        std::io::stdout()
            .write_all(&bytes)
            .map_err(|e| format!("glslc: error: cannot write output: {e}\n"))?;
    } else {
        std::fs::write(&output, &bytes)
            .map_err(|e| format!("glslc: error: cannot write output file: '{output}': {e}\n"))?;
    }
    if let Some(dep) = &args.dep_file {
        let mut rule = format!("{output}: {input}");
        for path in &includer.included {
            rule.push(' ');
            rule.push_str(path);
        }
        rule.push('\n');
        std::fs::write(dep, rule)
            .map_err(|e| format!("glslc: error: cannot write dependency file: '{dep}': {e}\n"))?;
    }
    Ok(())
}

/// One glslang compile; the error is glslang's info log.
fn compile(
    text: &str,
    vulkan: VulkanVersion,
    defines: &[(String, Option<String>)],
    includer: &mut Includer,
) -> Result<Vec<u32>, String> {
    let compiler = Compiler::acquire().ok_or("glslang could not be initialised\n")?;
    let source = ShaderSource::from(with_include_directive(text));
    let options = CompilerOptions {
        source_language: SourceLanguage::GLSL,
        target: Target::Vulkan {
            version: vulkan,
            spirv_version: spirv_for(vulkan),
        },
        ..CompilerOptions::default()
    };
    let defs: Vec<(&str, Option<&str>)> = defines
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_deref()))
        .collect();
    let input = ShaderInput::new(
        &source,
        ShaderStage::Compute,
        &options,
        Some(&defs),
        Some(includer),
    )
    .map_err(log_of)?;
    let shader = glslang::Shader::new(compiler, input)
        .parse()
        .map_err(log_of)?;
    // Only the extensions the preprocessor kept count (ggml enables some under `#ifdef`).
    if let Some(ext) = disabled_extension(&shader.get_preprocessed_code()) {
        let line = ext_line(text, &ext);
        return Err(format!(
            "ERROR: 0:{line}: '#extension' : extension not supported: {ext}\n"
        ));
    }
    shader.compile().map_err(log_of)
}

/// The source with `GL_GOOGLE_include_directive` enabled right after its `#version` line, and a
/// `#line` so that the lines after it keep their numbers (GLSL ≥ 330: the line after `#line N` is
/// line N). It cannot go in glslang's preamble: an `#extension` there makes the `#version` after
/// it an error ("must occur first in shader").
fn with_include_directive(text: &str) -> String {
    let Some(at) = text
        .lines()
        .position(|l| l.trim_start().starts_with("#version"))
    else {
        return text.to_owned();
    };
    let mut out = String::with_capacity(text.len() + 64);
    for (i, line) in text.lines().enumerate() {
        out.push_str(line);
        out.push('\n');
        if i == at {
            out.push_str("#extension GL_GOOGLE_include_directive : enable\n");
            out.push_str(&format!("#line {}\n", i + 2));
        }
    }
    out
}

/// The log text of a glslang error.
fn log_of(e: GlslangError) -> String {
    match e {
        GlslangError::PreprocessError(l)
        | GlslangError::ParseError(l)
        | GlslangError::MapIoError(l)
        | GlslangError::LinkError(l) => l.log,
        other => format!("ERROR: {other}\n"),
    }
}

/// Rewrites glslang's `ERROR: 0:3: msg` lines as glslc's `input:3: error: msg`, and ends with
/// glslc's count line. Lines glslang names by file (from `#include`) keep their file name.
fn glslc_log(log: &str, input: &str) -> String {
    let mut out = String::new();
    let mut errors = 0;
    for line in log.lines() {
        let (kind, rest) = if let Some(rest) = line.strip_prefix("ERROR: ") {
            ("error", rest)
        } else if let Some(rest) = line.strip_prefix("WARNING: ") {
            ("warning", rest)
        } else {
            continue;
        };
        // "N compilation errors.  No code generated." is glslang's summary, replaced below.
        if rest.contains("compilation errors") || rest.starts_with("Linking") {
            continue;
        }
        errors += usize::from(kind == "error");
        let located = rest.split_once(": ").and_then(|(loc, msg)| {
            let (file, line) = loc.rsplit_once(':')?;
            line.parse::<u32>().ok()?;
            let file = if file == "0" || file.is_empty() {
                input
            } else {
                file
            };
            Some(format!("{file}:{line}: {kind}: {msg}\n"))
        });
        out.push_str(&located.unwrap_or_else(|| format!("{input}: {kind}: {rest}\n")));
    }
    if errors == 0 {
        errors = 1;
        out.push_str(&format!("{input}: error: {}\n", log.trim()));
    }
    let plural = if errors == 1 { "" } else { "s" };
    out.push_str(&format!("{errors} error{plural} generated.\n"));
    out
}

/// The first `#extension` the source enables that `GLSLC_UNSUPPORTED_EXTENSIONS` lists.
fn disabled_extension(text: &str) -> Option<String> {
    let list = std::env::var("GLSLC_UNSUPPORTED_EXTENSIONS").ok()?;
    let disabled: Vec<&str> = list
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    text.lines().find_map(|line| {
        let name = line
            .trim()
            .strip_prefix("#extension")?
            .split(':')
            .next()?
            .trim();
        disabled.contains(&name).then(|| name.to_owned())
    })
}

/// The 1-based line of `#extension NAME` in the source.
fn ext_line(text: &str, name: &str) -> usize {
    text.lines()
        .position(|l| l.trim().starts_with("#extension") && l.contains(name))
        .map_or(1, |i| i + 1)
}

/// Resolves `#include`: `"x"` beside the including file, then the `-I` folders; `<x>` in the
/// `-I` folders. Records every file it opened, for the dependency file.
struct Includer {
    root_dir: PathBuf,
    dirs: Vec<PathBuf>,
    included: Vec<String>,
}

impl IncludeHandler for Includer {
    fn include(
        &mut self,
        ty: IncludeType,
        header: &str,
        includer: &str,
        _depth: usize,
    ) -> Option<IncludeResult> {
        let mut candidates = Vec::new();
        if ty == IncludeType::Local {
            // The includer is a name this handler returned (a path), or the root shader.
            let dir = Path::new(includer)
                .parent()
                .filter(|_| self.included.iter().any(|p| p == includer))
                .map_or_else(|| self.root_dir.clone(), Path::to_path_buf);
            candidates.push(dir.join(header));
        }
        candidates.extend(self.dirs.iter().map(|d| d.join(header)));
        let path = candidates.into_iter().find(|p| p.is_file())?;
        let data = std::fs::read_to_string(&path).ok()?;
        let name = path.to_string_lossy().into_owned();
        if !self.included.contains(&name) {
            self.included.push(name.clone());
        }
        Some(IncludeResult { name, data })
    }
}
