//! How a script is parsed ([`ParseOptions`]: the buffer limit and the script's folder), shared
//! by the AmberScript parser (`parse/`) and the VkScript one (`vkscript.rs`), below both: the
//! parser that picks between them (`parse_with`) imports VkScript's, never the other way.

use std::path::PathBuf;

/// The default limit on the bytes of a script's buffers, all together: 4 GiB, the default of
/// `tangle run --memory-limit`.
pub const DEFAULT_BUFFER_LIMIT: u64 = 4 << 30;

/// How a script is parsed.
#[derive(Debug, Clone)]
pub struct ParseOptions {
    /// The most bytes the script's buffers may hold together.
    pub buffer_limit: u64,
    /// The script's directory: `FILE` paths are relative to it. `None` refuses `FILE` inputs
    /// (a script read from standard input, the fuzzer).
    pub base_dir: Option<PathBuf>,
}

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions {
            buffer_limit: DEFAULT_BUFFER_LIMIT,
            base_dir: None,
        }
    }
}
