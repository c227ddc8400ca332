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

/// A script that cannot be used: a syntax error, an unknown name, an unsupported command, or a
/// value that does not fit its type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{at}: {message}")]
pub struct AmberError {
    /// Where the problem is.
    pub at: Location,
    /// What the problem is, in words.
    pub message: String,
}

impl AmberError {
    /// An error at `at`.
    pub fn new(at: Location, message: impl Into<String>) -> Self {
        AmberError {
            at,
            message: message.into(),
        }
    }
}
