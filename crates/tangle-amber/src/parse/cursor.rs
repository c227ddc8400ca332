//! Line-oriented tokens: AmberScript statements end at the end of a line, except `DATA ... END`
//! lists, which may span lines, and `SHADER` bodies, which are raw text up to a line `END`.
//!
//! `#` at the start of a token begins a comment running to the end of the line (inside shader
//! bodies `#` is text, e.g. GLSL's `#version`). A `\` token ending a line continues the statement
//! on the next line (amber's tokenizer skips a `\` followed by a newline).

use crate::error::{AmberError, Location};

/// A word of the script and where it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tok<'a> {
    pub text: &'a str,
    pub at: Location,
}

/// Splits one line into tokens (1-based line `number`).
fn tokenize(line: &str, number: u32) -> Vec<Tok<'_>> {
    let mut toks = Vec::new();
    let mut start: Option<(usize, u32)> = None;
    let mut col = 0u32;
    for (i, c) in line.char_indices() {
        col += 1;
        if c.is_whitespace() {
            if let Some((s, scol)) = start.take() {
                toks.push(Tok {
                    text: &line[s..i],
                    at: Location {
                        line: number,
                        col: scol,
                    },
                });
            }
        } else if start.is_none() {
            if c == '#' {
                return toks;
            }
            start = Some((i, col));
        }
    }
    if let Some((s, scol)) = start {
        toks.push(Tok {
            text: &line[s..],
            at: Location {
                line: number,
                col: scol,
            },
        });
    }
    toks
}

/// A cursor over the statements of a script.
pub(crate) struct Cursor<'a> {
    lines: Vec<&'a str>,
    /// How many lines come before `text` in the script (for a part of a script, VkScript's
    /// sections), so that locations are the script's.
    first_line: usize,
    /// Index of the next line to load.
    next_line: usize,
    toks: Vec<Tok<'a>>,
    pos: usize,
    /// Where the current line ends, for "expected ..." errors.
    line_end: Location,
}

impl<'a> Cursor<'a> {
    pub fn new(text: &'a str) -> Self {
        Self::at_line(text, 0)
    }

    /// A cursor over `text`, which starts after `first_line` lines of the script.
    pub fn at_line(text: &'a str, first_line: usize) -> Self {
        Cursor {
            first_line,
            lines: text.lines().collect(),
            next_line: 0,
            toks: Vec::new(),
            pos: 0,
            line_end: Location::default(),
        }
    }

    fn line_number(&self, index: usize) -> u32 {
        u32::try_from(index.saturating_add(self.first_line).saturating_add(1)).unwrap_or(u32::MAX)
    }

    /// Moves to the next line that has tokens; `false` at the end of the script.
    pub fn next_statement(&mut self) -> bool {
        while let Some(line) = self.lines.get(self.next_line) {
            let number = self.line_number(self.next_line);
            self.next_line += 1;
            let mut toks = tokenize(line, number);
            let mut line = *line;
            let mut number = number;
            // `\` at the end of a line: the statement goes on.
            while toks.last().is_some_and(|t| t.text == "\\") {
                toks.pop();
                let Some(next) = self.lines.get(self.next_line) else {
                    break;
                };
                number = self.line_number(self.next_line);
                self.next_line += 1;
                line = next;
                toks.extend(tokenize(next, number));
            }
            if !toks.is_empty() {
                let width = u32::try_from(line.chars().count()).unwrap_or(u32::MAX - 1);
                self.line_end = Location {
                    line: number,
                    col: width.saturating_add(1),
                };
                self.toks = toks;
                self.pos = 0;
                return true;
            }
        }
        self.toks.clear();
        self.pos = 0;
        false
    }

    /// The next token of the current line, without taking it.
    pub fn peek(&self) -> Option<Tok<'a>> {
        self.toks.get(self.pos).copied()
    }

    /// Takes the next token of the current line.
    pub fn next(&mut self) -> Option<Tok<'a>> {
        let tok = self.peek()?;
        self.pos += 1;
        Some(tok)
    }

    /// Where the next token is, or the end of the current line.
    pub fn here(&self) -> Location {
        self.peek().map_or(self.line_end, |t| t.at)
    }

    /// Takes the next token, or fails with "expected `what`".
    pub fn expect(&mut self, what: &str) -> Result<Tok<'a>, AmberError> {
        let at = self.here();
        self.next()
            .ok_or_else(|| AmberError::new(at, format!("expected {what}")))
    }

    /// Takes the next token if it is `keyword`.
    pub fn eat(&mut self, keyword: &str) -> bool {
        if self.peek().is_some_and(|t| t.text == keyword) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// Requires the keyword `keyword` next.
    pub fn keyword(&mut self, keyword: &str) -> Result<(), AmberError> {
        let tok = self.expect(keyword)?;
        if tok.text == keyword {
            Ok(())
        } else {
            Err(AmberError::new(
                tok.at,
                format!("expected {keyword}, found '{}'", tok.text),
            ))
        }
    }

    /// Requires the end of the current line.
    pub fn end_of_statement(&mut self) -> Result<(), AmberError> {
        match self.peek() {
            None => Ok(()),
            Some(t) => Err(AmberError::new(
                t.at,
                format!("unexpected '{}' at the end of the statement", t.text),
            )),
        }
    }

    /// Takes a string: a token, or a `"quoted string"` that may hold spaces and `#` (amber's
    /// tokenizer reads a `"` token up to the next `"` on the line), without its quotes.
    pub fn string(&mut self, what: &str) -> Result<(String, Location), AmberError> {
        let tok = self.expect(what)?;
        if !tok.text.starts_with('"') {
            return Ok((tok.text.to_string(), tok.at));
        }
        // The token is a slice of its line: find it there and read to the closing quote.
        let index = (tok.at.line as usize)
            .saturating_sub(1)
            .saturating_sub(self.first_line);
        let line = self.lines.get(index).copied().unwrap_or_default();
        let start = (tok.text.as_ptr() as usize).saturating_sub(line.as_ptr() as usize);
        let rest = line.get(start.saturating_add(1)..).unwrap_or_default();
        let Some(len) = rest.find('"') else {
            return Err(AmberError::new(tok.at, "a string has no closing \""));
        };
        let end = start.saturating_add(len).saturating_add(2); // past the closing quote
        let covered = line.get(..end).unwrap_or(line).chars().count();
        // Skip the tokens the string covered (its words; a `#` in it ended the line's tokens).
        while self
            .peek()
            .is_some_and(|t| t.at.line == tok.at.line && t.at.col as usize <= covered)
        {
            self.pos += 1;
        }
        Ok((rest.get(..len).unwrap_or_default().to_string(), tok.at))
    }

    /// Takes the next token, moving on to later lines when the current one is used up.
    pub fn next_across_lines(&mut self) -> Option<Tok<'a>> {
        while self.peek().is_none() {
            if !self.next_statement() {
                return None;
            }
        }
        self.next()
    }

    /// The raw lines after the current one up to (not including) a line that is `END` alone;
    /// returns the text and the line number of its first line. The cursor is left on `END`.
    pub fn raw_block(
        &mut self,
        opened_at: Location,
        what: &str,
    ) -> Result<(String, u32), AmberError> {
        let first = self.line_number(self.next_line);
        let mut text = String::new();
        while let Some(line) = self.lines.get(self.next_line) {
            self.next_line += 1;
            if line.trim() == "END" {
                self.toks.clear();
                self.pos = 0;
                return Ok((text, first));
            }
            text.push_str(line);
            text.push('\n');
        }
        Err(AmberError::new(opened_at, format!("{what} has no END")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_carry_columns_and_comments_end_lines() {
        let toks = tokenize("  BUFFER b  DATA_TYPE uint32 # comment DATA", 3);
        let texts: Vec<_> = toks.iter().map(|t| t.text).collect();
        assert_eq!(texts, ["BUFFER", "b", "DATA_TYPE", "uint32"]);
        assert_eq!(toks[1].at, Location { line: 3, col: 10 });
        assert!(tokenize("# only a comment", 1).is_empty());
        // A '#' inside a token is part of it.
        assert_eq!(tokenize("a#b", 1)[0].text, "a#b");
    }

    #[test]
    fn a_backslash_ending_a_line_continues_the_statement() {
        let mut c = Cursor::new("BIND BUFFER b \\\n  AS storage \\  \n BINDING 1\nRUN");
        assert!(c.next_statement());
        let mut texts = Vec::new();
        while let Some(t) = c.next() {
            texts.push((t.text, t.at.line));
        }
        assert_eq!(
            texts,
            [
                ("BIND", 1),
                ("BUFFER", 1),
                ("b", 1),
                ("AS", 2),
                ("storage", 2),
                ("BINDING", 3),
                ("1", 3)
            ]
        );
        assert!(c.next_statement());
        assert_eq!(c.next().map(|t| t.text), Some("RUN"));
        // A backslash inside a line, or glued to a word, is an ordinary token.
        let mut c = Cursor::new("a \\ b\nc d\\\ne");
        assert!(c.next_statement());
        assert_eq!(c.toks.len(), 3);
        assert!(c.next_statement());
        assert_eq!(c.toks.len(), 2);
        // A continuation on the last line ends the statement there.
        let mut c = Cursor::new("a \\");
        assert!(c.next_statement());
        assert_eq!(c.toks.len(), 1);
    }

    #[test]
    fn raw_blocks_keep_hashes_and_stop_at_end() {
        let mut c = Cursor::new("SHADER x\n#version 450\n  END  \nRUN");
        assert!(c.next_statement());
        let (text, first) = c.raw_block(Location::default(), "SHADER").unwrap();
        assert_eq!((text.as_str(), first), ("#version 450\n", 2));
        assert!(c.next_statement());
        assert_eq!(c.next().map(|t| t.text), Some("RUN"));
        let mut c = Cursor::new("SHADER x\nno end");
        assert!(c.next_statement());
        assert!(c.raw_block(Location { line: 1, col: 1 }, "SHADER").is_err());
    }
}
