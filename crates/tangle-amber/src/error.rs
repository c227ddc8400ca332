//! The one error type of the parser: what went wrong and where (`line:col`, 1-based).
//!
//! [`parse`](crate::parse) sees only the text, so the file name is added by the caller when it
//! prints the error (`file:line:col: message`).

use serde::Serialize;

/// A position in the script: 1-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
pub struct Location {
    /// 1-based line number.
    pub line: u32,
    /// 1-based column (in characters).
    pub col: u32,
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// Whether a script is wrong, or right but outside what tangle runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
pub enum ErrorKind {
    /// A syntax error, an unknown name, a value that does not fit its type (exit 2).
    #[default]
    Malformed,
    /// Valid AmberScript or VkScript that needs something outside tangle's compute subset: a
    /// graphics pipeline, an image probe, OpenCL C, a format or an option tangle cannot honour
    /// (exit 77, like a missing device feature).
    Unsupported,
}

/// A script that cannot be used: a syntax error, an unknown name, an unsupported command, or a
/// value that does not fit its type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{at}: {message}")]
pub struct AmberError {
    /// Where the problem is.
    pub at: Location,
    /// What the problem is, in words.
    pub message: String,
    /// Malformed, or outside tangle's subset.
    pub kind: ErrorKind,
}

impl AmberError {
    /// A malformed script at `at`.
    pub fn new(at: Location, message: impl Into<String>) -> Self {
        AmberError {
            at,
            message: message.into(),
            kind: ErrorKind::Malformed,
        }
    }

    /// A valid script that needs `message`'s feature, which tangle does not run.
    pub fn unsupported(at: Location, message: impl Into<String>) -> Self {
        AmberError {
            kind: ErrorKind::Unsupported,
            ..AmberError::new(at, message)
        }
    }

    /// Whether the script is outside tangle's subset rather than malformed.
    pub fn is_unsupported(&self) -> bool {
        self.kind == ErrorKind::Unsupported
    }
}
