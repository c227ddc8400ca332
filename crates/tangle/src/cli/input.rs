//! What an input holds, decided by its content and never by its file name: a SPIR-V binary
//! (the magic number in either byte order), UTF-8 text, or something else described in words
//! ("an empty file", "binary data that is not SPIR-V (first bytes 7f 45 4c 46: an ELF file)").
//!
//! A binary named `.spvasm` is still a binary and text named `.spv` is still text: names lie
//! more often than magic numbers do.

use super::unusable::{Kind, Unusable};
use tangle_spirv::text::AssembleOptions;
use tangle_spirv::{Module, SourceMap, TargetEnv};

/// The SPIR-V magic number as the first four bytes of a little- and a big-endian binary.
const MAGIC: [[u8; 4]; 2] = [[0x03, 0x02, 0x23, 0x07], [0x07, 0x23, 0x02, 0x03]];

/// Well-known file signatures (first bytes), to name what a wrong input is.
const SIGNATURES: &[(&[u8], &str)] = &[
    (b"\x7fELF", "an ELF file"),
    (b"MZ", "a Windows executable"),
    (b"\xcf\xfa\xed\xfe", "a Mach-O file"),
    (b"\0asm", "a WebAssembly module"),
    (b"BC\xc0\xde", "LLVM bitcode"),
    (b"DXBC", "a DirectX shader container"),
    (b"\x1f\x8b", "gzip data"),
    (b"PK\x03\x04", "a zip archive"),
    (b"\x89PNG", "a PNG image"),
    (
        b"\xff\xfe",
        "UTF-16 text (little-endian); tangle reads UTF-8",
    ),
    (b"\xfe\xff", "UTF-16 text (big-endian); tangle reads UTF-8"),
];

/// What an input holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content<'a> {
    /// Bytes that start with the SPIR-V magic number (either byte order).
    Binary(&'a [u8]),
    /// UTF-8 text, without a byte-order mark.
    Text(&'a str),
    /// Neither: what was found, in words.
    Other(String),
}

/// Looks at the bytes of an input.
pub fn identify(bytes: &[u8]) -> Content<'_> {
    if bytes.is_empty() {
        return Content::Other("an empty file".into());
    }
    if bytes.get(..4).is_some_and(|m| MAGIC.iter().any(|x| x == m)) {
        return Content::Binary(bytes);
    }
    let unmarked = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    // NUL is valid UTF-8 but no text file holds one; many binary headers are otherwise ASCII.
    let has_nul = unmarked.contains(&0);
    match std::str::from_utf8(unmarked) {
        Ok(text) if !has_nul => Content::Text(text),
        Err(e) if !has_nul && e.valid_up_to() > 0 => Content::Other(not_utf8(unmarked, e)),
        _ => Content::Other(describe_binary(bytes)),
    }
}

/// Names text in another encoding by its first byte that is not UTF-8, with its place.
fn not_utf8(bytes: &[u8], e: std::str::Utf8Error) -> String {
    let good = bytes.get(..e.valid_up_to()).unwrap_or_default();
    let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = good.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let col = good
        .get(line_start..)
        .and_then(|l| std::str::from_utf8(l).ok())
        .map_or(1, |l| l.chars().count() + 1);
    let byte = bytes.get(e.valid_up_to()).copied().unwrap_or_default();
    format!("text that is not UTF-8 (byte {byte:02x} at {line}:{col}; tangle reads UTF-8 only)")
}

/// Names binary data that is not SPIR-V by its first bytes.
fn describe_binary(bytes: &[u8]) -> String {
    let first: Vec<String> = bytes.iter().take(4).map(|b| format!("{b:02x}")).collect();
    let first = first.join(" ");
    match SIGNATURES.iter().find(|(sig, _)| bytes.starts_with(sig)) {
        Some((_, what)) => format!("binary data that is not SPIR-V (first bytes {first}: {what})"),
        None => format!("binary data that is neither SPIR-V nor UTF-8 text (first bytes {first})"),
    }
}

/// What kind of text an input is, by telltale lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextKind {
    /// Some line starts like an instruction (`OpCapability …`, `%x = Op…`).
    Assembly,
    /// A `#!amber` line or a `SHADER` block (AmberScript), or a VkScript `[section]`.
    Amber,
    /// A `#version` line.
    Glsl,
    /// None of these.
    Other,
}

impl TextKind {
    /// Looks at the lines of `text`; an Amber script holding SPIR-V assembly is an Amber script.
    pub fn of(text: &str) -> TextKind {
        let has_line = |p: &dyn Fn(&str) -> bool| text.lines().map(str::trim).any(p);
        if has_line(&|l| l.starts_with("#!amber") || l.starts_with("SHADER "))
            || tangle_amber::vkscript::is_vkscript(text)
        {
            TextKind::Amber
        } else if has_line(&|l| l.starts_with("#version")) {
            TextKind::Glsl
        } else if has_line(&is_instruction) {
            TextKind::Assembly
        } else {
            TextKind::Other
        }
    }

    /// The kind in words.
    pub fn noun(self) -> &'static str {
        match self {
            TextKind::Assembly => "SPIR-V assembly text",
            TextKind::Amber => "an Amber script",
            TextKind::Glsl => "GLSL source",
            TextKind::Other => "UTF-8 text",
        }
    }

    /// What to do with text of this kind instead.
    pub fn hint(self) -> Option<&'static str> {
        match self {
            TextKind::Assembly => Some("`tangle as` assembles it, `tangle val` validates it"),
            TextKind::Amber => Some("`tangle run` runs it"),
            TextKind::Glsl => Some("compile it to SPIR-V first, e.g. with glslangValidator -V"),
            TextKind::Other => None,
        }
    }

    /// "GLSL source, not SPIR-V assembly (compile it …)": this text is not what a command reads.
    pub fn instead_of(self, expected: &str) -> String {
        instead_of(self.noun(), expected, self.hint())
    }
}

/// What a SPIR-V binary is good for, when a command wanted something else.
pub const BINARY_HINT: &str = "`tangle dis` prints it as text, `tangle val` validates it";

/// "FOUND, not EXPECTED (HINT)": the one way an input of the wrong kind is reported.
pub fn instead_of(found: &str, expected: &str, hint: Option<&str>) -> String {
    match hint {
        Some(hint) => format!("{found}, not {expected} ({hint})"),
        None => format!("{found}, not {expected}"),
    }
}

/// Whether a (trimmed) line starts like an instruction of SPIR-V assembly.
fn is_instruction(line: &str) -> bool {
    line.starts_with("Op")
        || line
            .strip_prefix('%')
            .and_then(|rest| rest.split_once('='))
            .is_some_and(|(_, op)| op.trim_start().starts_with("Op"))
}

/// Assembles `text` for `env`; when it fails on text that is not assembly, the error says what
/// the text is instead.
pub fn assemble(name: &str, text: &str, env: TargetEnv) -> Result<(Module, SourceMap), Unusable> {
    tangle_spirv::text::assemble(text, &AssembleOptions { target_env: env }).map_err(|e| {
        match TextKind::of(text) {
            TextKind::Assembly => Unusable::parse(name, e.line, e.column, e.message),
            TextKind::Other => Unusable::in_file(
                Kind::Content,
                name,
                format!("UTF-8 text that is not SPIR-V assembly (the assembler stopped at {e})"),
            ),
            kind => Unusable::in_file(Kind::Content, name, kind.instead_of("SPIR-V assembly")),
        }
    })
}

/// Reads a SPIR-V binary.
pub fn read_binary(name: &str, bytes: &[u8]) -> Result<Module, Unusable> {
    Module::from_bytes(bytes)
        .map_err(|e| Unusable::in_file(Kind::Parse, name, format!("SPIR-V binary: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binaries_are_recognised_by_the_magic_number_in_either_byte_order() {
        let le = [0x03, 0x02, 0x23, 0x07, 0, 0];
        let be = [0x07, 0x23, 0x02, 0x03];
        assert_eq!(identify(&le), Content::Binary(&le));
        assert_eq!(identify(&be), Content::Binary(&be));
        assert_eq!(
            identify(b"OpCapability Shader"),
            Content::Text("OpCapability Shader")
        );
        assert_eq!(identify(b"\xef\xbb\xbfOpNop"), Content::Text("OpNop"));
    }

    #[test]
    fn other_inputs_are_named() {
        assert_eq!(identify(b""), Content::Other("an empty file".into()));
        assert_eq!(
            identify(b"\x7fELF\x02\x01\x01\0\xff"),
            Content::Other(
                "binary data that is not SPIR-V (first bytes 7f 45 4c 46: an ELF file)".into()
            )
        );
        assert_eq!(
            identify(&[0xff, 0xfe, b'O', 0]),
            Content::Other("binary data that is not SPIR-V (first bytes ff fe 4f 00: UTF-16 text (little-endian); tangle reads UTF-8)".into())
        );
        assert_eq!(
            identify(b"\x7fELF\x02\x01\x01\0"),
            Content::Other(
                "binary data that is not SPIR-V (first bytes 7f 45 4c 46: an ELF file)".into()
            ),
            "ASCII with a NUL is not text"
        );
        assert_eq!(
            identify(b"; caf\xe9\nOpNop\n"),
            Content::Other(
                "text that is not UTF-8 (byte e9 at 1:6; tangle reads UTF-8 only)".into()
            )
        );
        assert_eq!(
            identify(b"OpNop\n\xc3\xa9\xe9"),
            Content::Other(
                "text that is not UTF-8 (byte e9 at 2:2; tangle reads UTF-8 only)".into()
            )
        );
        assert_eq!(
            identify(&[0x80, 0x81]),
            Content::Other(
                "binary data that is neither SPIR-V nor UTF-8 text (first bytes 80 81)".into()
            )
        );
    }

    #[test]
    fn text_is_told_apart_by_its_lines() {
        assert_eq!(
            TextKind::of("; a comment\n  OpCapability Shader\n"),
            TextKind::Assembly
        );
        assert_eq!(TextKind::of("%void = OpTypeVoid\n"), TextKind::Assembly);
        assert_eq!(
            TextKind::of("#version 450\nvoid main() {}\n"),
            TextKind::Glsl
        );
        assert_eq!(
            TextKind::of("#!amber\nSHADER compute s SPIRV-ASM\nOpCapability Shader\nEND\n"),
            TextKind::Amber
        );
        assert_eq!(TextKind::of("hello\n%x\n"), TextKind::Other);
    }

    #[test]
    fn assembly_errors_say_what_the_text_is() {
        let env = TargetEnv::DEFAULT;
        let e = assemble("a", "OpCapability Shadr\n", env).expect_err("a typo");
        assert_eq!((e.kind, e.at), (Kind::Parse, Some((1, 14))));
        let e = assemble("g", "#version 450\nvoid main() {}\n", env).expect_err("GLSL");
        assert_eq!(e.kind, Kind::Content);
        assert!(e.message.starts_with("GLSL source"), "{e}");
        let e = assemble("t", "hello\n", env).expect_err("prose");
        assert!(
            e.message.starts_with(
                "UTF-8 text that is not SPIR-V assembly (the assembler stopped at 1:1"
            ),
            "{e}"
        );
    }
}
