//! Turning a `SHADER` block into SPIR-V words: GLSL through glslang, SPIRV-ASM through tangle's
//! assembler, SPIRV-HEX by packing bytes.
//!
//! The target environment is the shader's `TARGET_ENV`, or amber's default `spv1.0`. GLSL of a
//! script is compiled with glslang's debug information (`-g`), naming the shader's file as
//! upstream Amber does ([`Shader::file_path`]); glslang's C API is reached in [`glslang_ffi`],
//! the crate's only `unsafe` code.

#[allow(unsafe_code)]
mod glslang_ffi;

use crate::script::{Requirement, Script, Shader, ShaderFormat};
use glslang::{
    CompilerOptions, ShaderInput, ShaderSource, ShaderStage, SpirvVersion, Target, VulkanVersion,
};
use tangle_spirv::text::{assemble, AssembleOptions};
use tangle_spirv::TargetEnv;

/// Why a shader did not compile; the message names the shader and, where known, the script line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("shader '{shader}': {message}")]
pub struct CompileError {
    /// The shader's name.
    pub shader: String,
    /// What went wrong.
    pub message: String,
}

/// amber's default when `TARGET_ENV` is absent.
pub const DEFAULT_TARGET_ENV: TargetEnv =
    TargetEnv::Universal(tangle_spirv::grammar::Version { major: 1, minor: 0 });

/// The environment a shader is built for.
pub fn target_env(shader: &Shader) -> TargetEnv {
    shader.target_env.unwrap_or(DEFAULT_TARGET_ENV)
}

/// The extension whose requirement makes SPIR-V 1.4 the default ([`imply_target_envs`]).
pub const SPIRV_1_4_EXTENSION: &str = "VK_KHR_spirv_1_4";

/// Gives the shaders of a script that requires `VK_KHR_spirv_1_4` (AmberScript
/// `DEVICE_EXTENSION`, VkScript `[require]`) and names no `TARGET_ENV` the environment spv1.4:
/// the Vulkan CTS registers such scripts so (their GLSL and assembly are built and validated
/// for SPIR-V 1.4), where amber alone would build them for spv1.0 and reject a 1.4 shader.
/// A binary (SPIRV-HEX, SPIRV-BIN) keeps the version of its header ([`job_env`]).
pub fn imply_target_envs(script: &mut Script) {
    let wants = script
        .requirements
        .iter()
        .any(|r| matches!(r, Requirement::Extension(e) if e == SPIRV_1_4_EXTENSION));
    if !wants {
        return;
    }
    let spv14 = TargetEnv::Universal(tangle_spirv::grammar::Version { major: 1, minor: 4 });
    for shader in &mut script.shaders {
        if shader.target_env.is_none()
            && matches!(shader.format, ShaderFormat::Glsl | ShaderFormat::SpirvAsm)
        {
            shader.target_env = Some(spv14);
        }
    }
}

/// The environment a compiled shader runs in: its `TARGET_ENV`; else, for a binary (SPIRV-HEX),
/// the SPIR-V version in its header, since no compiler chose one; else amber's default spv1.0.
pub fn job_env(shader: &Shader, words: &[u32]) -> TargetEnv {
    let header = words.get(1).filter(|_| {
        matches!(
            shader.format,
            ShaderFormat::SpirvHex | ShaderFormat::SpirvBin
        ) && shader.target_env.is_none()
    });
    match header.map(|w| ((w >> 16) & 0xff, (w >> 8) & 0xff)) {
        Some((1, minor @ 0..=6)) => {
            TargetEnv::parse(&format!("spv1.{minor}")).unwrap_or(DEFAULT_TARGET_ENV)
        }
        _ => target_env(shader),
    }
}

/// Compiles one shader to SPIR-V words.
pub fn compile(shader: &Shader) -> Result<Vec<u32>, CompileError> {
    let fail = |message: String| CompileError {
        shader: shader.name.clone(),
        message,
    };
    match shader.format {
        ShaderFormat::SpirvHex | ShaderFormat::SpirvBin => hex_words(&shader.source).map_err(fail),
        ShaderFormat::SpirvAsm => {
            let options = AssembleOptions {
                target_env: target_env(shader),
            };
            match assemble(&shader.source, &options) {
                Ok((module, _)) => Ok(module.to_words()),
                Err(e) => {
                    // Report the position in the script, not in the shader body.
                    let line = shader.first_line.saturating_add(e.line).saturating_sub(1);
                    Err(fail(format!("line {line}:{}: {}", e.column, e.message)))
                }
            }
        }
        ShaderFormat::Glsl => glsl_with(
            &shader.source,
            target_env(shader),
            &[],
            Some(&shader.file_path),
        )
        .map_err(|log| fail(glsl_errors(&log, shader.first_line))),
    }
}

/// Compiles `shader` as a pipeline builds it: GLSL with the pipeline's `COMPILE_OPTIONS`
/// definitions; `base` is the shader compiled without options, reused when there are none.
pub fn compile_for(
    shader: &Shader,
    build: &crate::script::ShaderBuild,
    base: &[u32],
) -> Result<Vec<u32>, CompileError> {
    if build.defines.is_empty() || shader.format != ShaderFormat::Glsl {
        return Ok(base.to_vec());
    }
    let defines: Vec<(&str, Option<&str>)> = build
        .defines
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_deref()))
        .collect();
    glsl_with(
        &shader.source,
        target_env(shader),
        &defines,
        Some(&shader.file_path),
    )
    .map_err(|log| CompileError {
        shader: shader.name.clone(),
        message: glsl_errors(&log, shader.first_line),
    })
}

/// Keeps the `ERROR: 0:N: message` lines of a glslang log, with `N` mapped to the script line.
fn glsl_errors(log: &str, first_line: u32) -> String {
    let errors: Vec<String> = log
        .lines()
        .filter_map(|l| l.trim().strip_prefix("ERROR: "))
        .filter(|l| !l.contains("compilation terminated") && !l.contains("compilation errors"))
        .map(|l| {
            let mut parts = l.splitn(3, ':');
            match (
                parts.next(),
                parts.next().and_then(|n| n.trim().parse::<u32>().ok()),
                parts.next(),
            ) {
                (Some(_), Some(n), Some(rest)) => {
                    format!(
                        "line {}:{}",
                        first_line.saturating_add(n).saturating_sub(1),
                        rest
                    )
                }
                _ => l.to_string(),
            }
        })
        .collect();
    if errors.is_empty() {
        log.trim().to_string()
    } else {
        errors.join("; ")
    }
}

/// Parses SPIRV-HEX: whitespace-separated hex bytes (optionally `0x`-prefixed), packed
/// little-endian into words, the first byte the least significant (`ShaderCompiler::ParseHex`).
pub fn hex_words(text: &str) -> Result<Vec<u32>, String> {
    let mut bytes = Vec::new();
    for (n, tok) in text.split_whitespace().enumerate() {
        let digits = tok
            .strip_prefix("0x")
            .or_else(|| tok.strip_prefix("0X"))
            .unwrap_or(tok);
        let byte = u8::from_str_radix(digits, 16)
            .map_err(|_| format!("hex byte {} ('{tok}') is not a byte", n + 1))?;
        bytes.push(byte);
    }
    if bytes.len() % 4 != 0 {
        return Err(format!(
            "{} hex bytes do not make whole 32-bit words",
            bytes.len()
        ));
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

/// The glslang target for a SPIR-V environment: the Vulkan version that first accepts that
/// SPIR-V version (1.0 → Vulkan 1.0, 1.1..1.3 → 1.1, 1.4..1.5 → 1.2, 1.6 → 1.3).
fn glslang_target(env: TargetEnv) -> (VulkanVersion, SpirvVersion) {
    let ver = env.spirv_version();
    let (vulkan, spirv) = match ver.minor {
        0 => (VulkanVersion::Vulkan1_0, SpirvVersion::SPIRV1_0),
        1 => (VulkanVersion::Vulkan1_1, SpirvVersion::SPIRV1_1),
        2 => (VulkanVersion::Vulkan1_1, SpirvVersion::SPIRV1_2),
        3 => (VulkanVersion::Vulkan1_1, SpirvVersion::SPIRV1_3),
        4 => (VulkanVersion::Vulkan1_2, SpirvVersion::SPIRV1_4),
        5 => (VulkanVersion::Vulkan1_2, SpirvVersion::SPIRV1_5),
        _ => (VulkanVersion::Vulkan1_3, SpirvVersion::SPIRV1_6),
    };
    let vulkan = match env {
        TargetEnv::Vulkan { api, .. } => match api.minor {
            0 => VulkanVersion::Vulkan1_0,
            1 => VulkanVersion::Vulkan1_1,
            2 => VulkanVersion::Vulkan1_2,
            3 => VulkanVersion::Vulkan1_3,
            _ => VulkanVersion::Vulkan1_4,
        },
        _ => vulkan,
    };
    (vulkan, spirv)
}

/// Compiles a GLSL compute shader with glslang, without debug information.
pub fn glsl(source: &str, env: TargetEnv) -> Result<Vec<u32>, String> {
    glsl_with(source, env, &[], None)
}

/// Compiles a GLSL compute shader with glslang, with preprocessor `defines` (`-DNAME[=VALUE]`)
/// and, when `file` is given, the debug information of glslang `-g` naming that file
/// (`OpString`, `OpSource` with the text, `OpLine`: the source lines of `DEBUG` and of the
/// sanitizer's reports). The code is otherwise the same: glslang's optimizer stays off.
pub fn glsl_with(
    source: &str,
    env: TargetEnv,
    defines: &[(&str, Option<&str>)],
    file: Option<&str>,
) -> Result<Vec<u32>, String> {
    if source.contains('\0') {
        return Err("the GLSL source contains a NUL character".into());
    }
    let (vulkan, spirv) = glslang_target(env);
    // The safe crate's checks of `#version` and profile against the target, with its messages.
    let checked = ShaderSource::from(source.to_string());
    let options = CompilerOptions {
        target: Target::Vulkan {
            version: vulkan,
            spirv_version: spirv,
        },
        ..CompilerOptions::default()
    };
    ShaderInput::new(
        &checked,
        ShaderStage::Compute,
        &options,
        None::<&[(&str, Option<&str>)]>,
        None,
    )
    .map_err(|e| e.to_string())?;
    glslang_ffi::compile(
        source,
        &glslang_ffi::Request {
            vulkan,
            spirv,
            defines,
            file,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requiring_spirv_1_4_makes_it_the_default_target() {
        let env = |text: &str| -> Vec<Option<String>> {
            crate::parse::parse(text)
                .unwrap()
                .shaders
                .iter()
                .map(|s| s.target_env.map(|e| e.to_string()))
                .collect()
        };
        let asm = "SHADER compute a SPIRV-ASM\nOpCapability Shader\nEND\n";
        let hex = "SHADER compute h SPIRV-HEX\n03 02 23 07\nEND\n";
        let named = "SHADER compute n SPIRV-ASM TARGET_ENV spv1.5\nOpCapability Shader\nEND\n";
        let ext = "DEVICE_EXTENSION VK_KHR_spirv_1_4\n";
        // Assembly (and GLSL) get spv1.4; a binary keeps its header, a TARGET_ENV stays.
        assert_eq!(
            env(&format!("{ext}{asm}{hex}{named}")),
            [Some("spv1.4".into()), None, Some("spv1.5".into())]
        );
        assert_eq!(env(asm), [None]);
        assert_eq!(env(&format!("DEVICE_FEATURE shaderInt64\n{asm}")), [None]);
        // VkScript's [require] alike.
        let vk = "[require]\nVK_KHR_spirv_1_4\n\n[compute shader spirv]\nOpCapability Shader\n";
        assert_eq!(env(vk), [Some("spv1.4".into())]);
    }

    #[test]
    fn binaries_without_target_env_keep_their_header_version() {
        let shader = |format, env: Option<&str>| Shader {
            name: "s".into(),
            format,
            target_env: env.and_then(TargetEnv::parse),
            source: String::new(),
            at: crate::error::Location::default(),
            first_line: 1,
            file_path: "embedded-shaders/s".into(),
        };
        let words = [0x0723_0203, 0x0001_0300];
        assert_eq!(
            job_env(&shader(ShaderFormat::SpirvHex, None), &words).to_string(),
            "spv1.3"
        );
        assert_eq!(
            job_env(&shader(ShaderFormat::SpirvHex, Some("vulkan1.2")), &words).to_string(),
            "vulkan1.2"
        );
        assert_eq!(
            job_env(&shader(ShaderFormat::Glsl, None), &words).to_string(),
            "spv1.0"
        );
        assert_eq!(
            job_env(
                &shader(ShaderFormat::SpirvHex, None),
                &[0x0723_0203, 0x0009_0000]
            )
            .to_string(),
            "spv1.0"
        );
    }

    #[test]
    fn hex_packs_little_endian() {
        assert_eq!(
            hex_words("03 02 23 07 0x00 0x00 0x01 0x00"),
            Ok(vec![0x0723_0203, 0x0001_0000])
        );
        assert!(hex_words("03 02 23").is_err());
        assert!(hex_words("zz 00 00 00").is_err());
        assert!(hex_words("100 00 00 00").is_err());
    }

    #[test]
    fn glsl_compiles_with_the_requested_version() {
        let src = "#version 450\nlayout(local_size_x = 4) in;\nlayout(set = 0, binding = 0) buffer B { uint v[]; };\nvoid main() { v[gl_GlobalInvocationID.x] *= 2u; }\n";
        for (env, word) in [
            ("spv1.0", 0x0001_0000),
            ("spv1.3", 0x0001_0300),
            ("vulkan1.2", 0x0001_0500),
        ] {
            let words = glsl(src, TargetEnv::parse(env).unwrap()).unwrap();
            assert_eq!(words.first(), Some(&0x0723_0203));
            assert_eq!(words.get(1), Some(&word), "{env}");
        }
        let err = glsl(
            "#version 450\nvoid main() { undeclared = 1; }\n",
            DEFAULT_TARGET_ENV,
        )
        .unwrap_err();
        // A definition reaches the preprocessor.
        let guarded = "#version 450\n#ifndef OK\n#error not defined\n#endif\nvoid main() {}\n";
        assert!(glsl(guarded, DEFAULT_TARGET_ENV).is_err());
        assert!(glsl_with(guarded, DEFAULT_TARGET_ENV, &[("OK", None)], None).is_ok());
        assert!(glsl_with(guarded, DEFAULT_TARGET_ENV, &[("OK", Some("1"))], None).is_ok());
        assert!(err.contains("undeclared"), "{err}");
        let mapped = glsl_errors(&err, 10);
        assert!(mapped.starts_with("line 11: 'undeclared'"), "{mapped}");
    }
}
