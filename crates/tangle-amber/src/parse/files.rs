//! Files a script names: `SHADER ... FILE path` and `BUFFER ... FILE (BINARY|TEXT|PNG) path`.
//!
//! Paths are relative to the script's directory (amber's delegate resolves them the same way);
//! a script with no directory (standard input, the fuzzer) may not name files. A file is read
//! through a size cap, so a huge or endless file (`/dev/zero`) costs at most the cap: buffer
//! files are capped by what is left of the script's buffer limit, shader files by
//! [`MAX_SHADER_FILE`].

use super::cursor::Tok;
use super::Parser;
use crate::error::AmberError;
use crate::script::ShaderFormat;
use std::io::Read;
use std::path::PathBuf;

/// The largest shader file read (SPIR-V binaries and GLSL sources are far smaller).
pub(super) const MAX_SHADER_FILE: u64 = 64 << 20;

impl Parser<'_> {
    /// The path `tok` names, relative to the script's directory.
    fn script_path(&self, tok: Tok<'_>) -> Result<PathBuf, AmberError> {
        let path = PathBuf::from(tok.text);
        if path.is_absolute() {
            return Ok(path);
        }
        match &self.base_dir {
            Some(dir) => Ok(dir.join(path)),
            None => Err(AmberError::new(
                tok.at,
                format!(
                    "FILE '{}': a script read without a directory (standard input) cannot name files",
                    tok.text
                ),
            )),
        }
    }

    /// Reads at most `cap` bytes of the file `tok` names; a longer file is an error naming `what`
    /// exceeded it.
    pub(super) fn read_file(
        &self,
        tok: Tok<'_>,
        cap: u64,
        what: &str,
    ) -> Result<Vec<u8>, AmberError> {
        let path = self.script_path(tok)?;
        let fail = |e: std::io::Error| {
            AmberError::new(
                tok.at,
                format!("cannot read FILE '{}': {e}", path.display()),
            )
        };
        let file = std::fs::File::open(&path).map_err(fail)?;
        let mut bytes = Vec::new();
        file.take(cap.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(fail)?;
        if bytes.len() as u64 > cap {
            return Err(AmberError::new(
                tok.at,
                format!(
                    "FILE '{}' is larger than {what} ({cap} bytes)",
                    path.display()
                ),
            ));
        }
        Ok(bytes)
    }

    /// The source of `SHADER ... FILE path`: the text, or for SPIRV-BIN the binary's bytes
    /// spelled as SPIRV-HEX text, so that one path turns both into words.
    pub(super) fn shader_file(
        &self,
        tok: Tok<'_>,
        format: ShaderFormat,
    ) -> Result<String, AmberError> {
        let bytes = self.read_file(tok, MAX_SHADER_FILE, "the shader file limit")?;
        if format == ShaderFormat::SpirvBin {
            let mut hex = String::with_capacity(bytes.len() * 3);
            for b in &bytes {
                hex.push_str(&format!("{b:02x} "));
            }
            return Ok(hex);
        }
        String::from_utf8(bytes).map_err(|_| {
            AmberError::new(
                tok.at,
                format!("shader FILE '{}' is not UTF-8 text", tok.text),
            )
        })
    }
}
