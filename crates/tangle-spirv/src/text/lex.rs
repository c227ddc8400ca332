//! Splitting assembly text into words, exactly as SPIRV-Tools' `text_handler.cpp` does.
//!
//! The assembler is word driven: it asks for "the next word" and decides from the grammar what
//! the word means. Words are separated by spaces, tabs, carriage returns and newlines; `;` starts
//! a comment that runs to the end of the line; a `"` starts a quoted run in which separators are
//! part of the word, and a `\` escapes the next character. `spirv-as` also ends a word at `,`
//! without skipping it, so a comma outside a string is always an error; tangle reports it as one.
//! A nul byte ends the text, as it ends a C string.

/// A 1-based line and column (in bytes) of the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pos {
    pub line: u32,
    pub column: u32,
}

/// A word of the text and where it starts.
#[derive(Debug, Clone, Copy)]
pub struct Word<'a> {
    pub text: &'a str,
    pub pos: Pos,
}

/// A cursor over the text that skips white space and comments and reads words.
#[derive(Debug, Clone)]
pub struct Lexer<'a> {
    src: &'a str,
    /// Byte index of the next unread byte.
    index: usize,
    line: u32,
    column: u32,
}

impl<'a> Lexer<'a> {
    /// A lexer at the start of `src` (text after a nul byte is ignored).
    pub fn new(src: &'a str) -> Self {
        let end = src.find('\0').unwrap_or(src.len());
        Lexer {
            src: src.get(..end).unwrap_or(src),
            index: 0,
            line: 1,
            column: 1,
        }
    }

    /// The current position.
    pub fn pos(&self) -> Pos {
        Pos {
            line: self.line,
            column: self.column,
        }
    }

    fn byte(&self, at: usize) -> Option<u8> {
        self.src.as_bytes().get(at).copied()
    }

    fn step(&mut self) {
        if self.byte(self.index) == Some(b'\n') {
            self.line += 1;
            self.column = 1;
        } else {
            self.column += 1;
        }
        self.index += 1;
    }

    /// Skips white space and comments; returns false at the end of the text.
    pub fn advance(&mut self) -> bool {
        loop {
            match self.byte(self.index) {
                None => return false,
                Some(b' ' | b'\t' | b'\r' | b'\n') => self.step(),
                Some(b';') => {
                    while let Some(b) = self.byte(self.index) {
                        self.step();
                        if b == b'\n' {
                            break;
                        }
                    }
                }
                Some(_) => return true,
            }
        }
    }

    /// Reads the word at the current position (call [`Lexer::advance`] first). The word may be
    /// empty when the text continues with a `,`.
    pub fn word(&mut self) -> Word<'a> {
        let pos = self.pos();
        let start = self.index;
        let mut quoting = false;
        let mut escaping = false;
        while let Some(b) = self.byte(self.index) {
            if b == b'\\' {
                escaping = !escaping;
            } else {
                match b {
                    b'"' if !escaping => quoting = !quoting,
                    b' ' | b';' | b',' | b'\t' | b'\n' | b'\r' if !escaping && !quoting => break,
                    _ => {}
                }
                escaping = false;
            }
            self.step();
        }
        // Word boundaries are ASCII bytes, so the slice is on character boundaries.
        Word {
            text: self.src.get(start..self.index).unwrap_or(""),
            pos,
        }
    }

    /// Whether the next byte is `b`.
    pub fn at_byte(&self, b: u8) -> bool {
        self.byte(self.index) == Some(b)
    }

    /// Whether the text at the current position (after [`Lexer::advance`]) starts a new
    /// instruction: `Op` followed by a capital letter, or a `%name` word followed by `=`.
    pub fn at_new_instruction(&self) -> bool {
        if self.starts_with_op() {
            return true;
        }
        let mut probe = self.clone();
        let first = probe.word();
        if !first.text.starts_with('%') {
            return false;
        }
        probe.advance() && probe.word().text == "="
    }

    /// Whether the text at the current position starts with `Op` and a capital letter, which is
    /// how `spirv-as` tells an opcode from a result id.
    pub fn starts_with_op(&self) -> bool {
        let b = |i| self.byte(self.index + i);
        b(0) == Some(b'O') && b(1) == Some(b'p') && b(2).is_some_and(|c| c.is_ascii_uppercase())
    }
}

/// The contents of a quoted literal string word (`"a\"b"` → `a"b`), or `None` when the word is
/// not a quoted string. As in `spirv-as`, a backslash makes the next character literal.
pub fn unquote(word: &str) -> Option<String> {
    let inner = word.strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::with_capacity(inner.len());
    let mut escaping = false;
    for c in inner.chars() {
        if c == '\\' && !escaping {
            escaping = true;
        } else {
            out.push(c);
            escaping = false;
        }
    }
    Some(out)
}

/// Whether `spirv-as` would read the word as a number rather than a string (its
/// `spvTextToLiteral` classification: digits, at most one `.`, an optional leading `-`).
pub fn looks_numeric(word: &str) -> bool {
    let body = word.strip_prefix('-').unwrap_or(word);
    !body.is_empty()
        && body.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && body.bytes().filter(|b| *b == b'.').count() <= 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(src: &str) -> Vec<(String, u32, u32)> {
        let mut lx = Lexer::new(src);
        let mut out = Vec::new();
        while lx.advance() {
            let w = lx.word();
            if w.text.is_empty() {
                break;
            }
            out.push((w.text.to_string(), w.pos.line, w.pos.column));
        }
        out
    }

    #[test]
    fn splits_words_with_positions_and_comments() {
        let got = words("%1 = OpTypeInt 32 0 ; comment\n\t OpName %1 \"a b;c\"");
        let want = [
            ("%1", 1, 1),
            ("=", 1, 4),
            ("OpTypeInt", 1, 6),
            ("32", 1, 16),
            ("0", 1, 19),
            ("OpName", 2, 3),
            ("%1", 2, 10),
            ("\"a b;c\"", 2, 13),
        ];
        let want: Vec<_> = want
            .iter()
            .map(|(w, l, c)| (w.to_string(), *l, *c))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn escaped_quote_stays_in_string() {
        assert_eq!(words(r#""a\" b" x"#)[0].0, r#""a\" b""#);
        assert_eq!(unquote(r#""a\"b\\c\d""#).as_deref(), Some(r#"a"b\cd"#));
        assert_eq!(unquote("abc"), None);
        assert_eq!(unquote("\""), None);
    }

    #[test]
    fn comma_ends_a_word_and_is_not_skipped() {
        let mut lx = Lexer::new("Shader,Int8");
        assert!(lx.advance());
        assert_eq!(lx.word().text, "Shader");
        assert!(lx.advance());
        assert_eq!(lx.word().text, "");
    }

    #[test]
    fn new_instruction_detection() {
        let at = |s: &str| {
            let mut lx = Lexer::new(s);
            lx.advance();
            lx.at_new_instruction()
        };
        assert!(at("OpNop"));
        assert!(at("%x = OpNop"));
        assert!(at("%x\n=\nOpNop"));
        assert!(!at("%x %y"));
        assert!(!at("Opfoo"));
        assert!(!at("None"));
    }

    #[test]
    fn numeric_classification() {
        assert!(looks_numeric("12"));
        assert!(looks_numeric("-1.5"));
        assert!(!looks_numeric("-"));
        assert!(!looks_numeric("1.2.3"));
        assert!(!looks_numeric("0x10"));
    }
}
