//! [`Unusable`]: why an input could not be used (exit 2), with what kind of problem it is and
//! where, so that every subcommand prints it the same way: one `tangle: …` line on standard error,
//! and for `tangle run --json` also one JSON report on standard output.

use std::fmt;

/// What kind of problem made an input unusable; the JSON report's `error.kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A file could not be read or written.
    Io,
    /// The file holds something other than what the command reads (binary data, the wrong kind
    /// of text, an empty file).
    Content,
    /// The text has a syntax error, at a line and column.
    Parse,
    /// An option's value is wrong, or options do not go together.
    Usage,
}

impl Kind {
    /// The kind as the JSON report spells it.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Io => "io",
            Kind::Content => "content",
            Kind::Parse => "parse",
            Kind::Usage => "usage",
        }
    }
}

/// Why an input could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unusable {
    /// What kind of problem it is.
    pub kind: Kind,
    /// The input the problem is in (a file name or `<stdin>`), when it is about one.
    pub file: Option<String>,
    /// Where in the input: 1-based line and column, for parse errors.
    pub at: Option<(u32, u32)>,
    /// The problem in words, without the file and location.
    pub message: String,
}

impl Unusable {
    /// A problem of `kind` that is not about one input (an option, an output file).
    pub fn new(kind: Kind, message: impl Into<String>) -> Self {
        Unusable {
            kind,
            file: None,
            at: None,
            message: message.into(),
        }
    }

    /// A problem of `kind` in the input `file`.
    pub fn in_file(kind: Kind, file: &str, message: impl Into<String>) -> Self {
        Unusable {
            file: Some(file.to_string()),
            ..Unusable::new(kind, message)
        }
    }

    /// A syntax error in `file` at `line:col`.
    pub fn parse(file: &str, line: u32, col: u32, message: impl Into<String>) -> Self {
        Unusable {
            at: Some((line, col)),
            ..Unusable::in_file(Kind::Parse, file, message)
        }
    }

    /// The JSON report's `error` object: `kind`, `message`, and `line`/`col` (null when the
    /// problem has no place in the text).
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "kind": self.kind.name(),
            "message": self.message,
            "line": self.at.map(|(line, _)| line),
            "col": self.at.map(|(_, col)| col),
        })
    }
}

impl fmt::Display for Unusable {
    /// `file:line:col: message`, leaving out what is not known.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{file}:")?;
            if let Some((line, col)) = self.at {
                write!(f, "{line}:{col}:")?;
            }
            write!(f, " ")?;
        }
        write!(f, "{}", self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_file_and_place_when_known() {
        let e = Unusable::parse("a.amber", 3, 7, "unknown command 'RUNN'");
        assert_eq!(e.to_string(), "a.amber:3:7: unknown command 'RUNN'");
        assert_eq!(e.json()["line"], 3);
        assert_eq!(e.json()["col"], 7);
        assert_eq!(e.json()["kind"], "parse");
        let e = Unusable::in_file(Kind::Content, "<stdin>", "an empty file");
        assert_eq!(e.to_string(), "<stdin>: an empty file");
        assert!(e.json()["line"].is_null());
        let e = Unusable::new(Kind::Usage, "unknown profile 'x'");
        assert_eq!(e.to_string(), "unknown profile 'x'");
        assert_eq!(e.json()["kind"], "usage");
    }
}
