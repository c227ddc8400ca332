//! `DEBUG pipeline x y z` + `THREAD ... END` blocks + `END` (upstream's amber_script.md
//! "Debugger"; its parser test `DebugEventsScript`). Every form upstream parses is read; the
//! forms tangle cannot check exactly are refused as unsupported (exit 77) by name, never passed:
//! `THREAD VERTEX_INDEX` / `FRAGMENT_WINDOW_SPACE_POSITION` (graphics), `EXPECT LOCAL` with a
//! string value (upstream compares the driver's printed text) and a frame's column in
//! `EXPECT CALLSTACK` (upstream's frames have none).

use super::{lookup, uint, Parser};
use crate::error::{AmberError, Location};
use crate::script::{CallFrame, Command, DebugStep, DebugThread, LocalValue};

/// The most threads and commands one `DEBUG` holds (keeps hostile scripts bounded).
const MAX_DEBUG_ITEMS: usize = 1 << 16;

impl<'a> Parser<'a> {
    /// `DEBUG` (already taken at `at`).
    pub(super) fn debug_command(&mut self, at: Location) -> Result<Command, AmberError> {
        let pipeline = lookup(
            &self.names.pipelines,
            self.cursor.expect("a pipeline name")?,
            "pipeline",
        )?;
        if let Some(t) = self.cursor.peek().filter(|t| t.text.starts_with("DRAW")) {
            return Err(AmberError::unsupported(
                t.at,
                format!(
                    "DEBUG {} (drawing) is outside tangle's compute subset",
                    t.text
                ),
            ));
        }
        let mut groups = [0u32; 3];
        for (g, axis) in groups.iter_mut().zip(["x", "y", "z"]) {
            *g = uint(
                self.cursor
                    .expect(&format!("the workgroup count in {axis}"))?,
                "a workgroup count",
            )?;
        }
        self.cursor.end_of_statement()?;
        let mut threads = Vec::new();
        loop {
            let tok = self.statement_token(at, "DEBUG")?;
            match tok.text {
                "END" => break,
                "THREAD" => {
                    if threads.len() >= MAX_DEBUG_ITEMS {
                        return Err(AmberError::new(tok.at, "too many THREADs in one DEBUG"));
                    }
                    threads.push(self.debug_thread(tok.at)?);
                }
                t => {
                    return Err(AmberError::new(
                        tok.at,
                        format!("expected THREAD or END in DEBUG, found '{t}'"),
                    ))
                }
            }
        }
        self.cursor.end_of_statement()?;
        Ok(Command::Debug {
            pipeline,
            groups,
            threads,
            at,
        })
    }

    /// The first token of the next statement inside a block opened at `opened_at`.
    fn statement_token(
        &mut self,
        opened_at: Location,
        what: &str,
    ) -> Result<super::cursor::Tok<'a>, AmberError> {
        loop {
            if !self.cursor.next_statement() {
                return Err(AmberError::new(opened_at, format!("{what} has no END")));
            }
            if let Some(tok) = self.cursor.next() {
                return Ok(tok);
            }
        }
    }

    /// `THREAD GLOBAL_INVOCATION_ID x y z` (after `THREAD`) + commands + `END`.
    fn debug_thread(&mut self, at: Location) -> Result<DebugThread, AmberError> {
        let kind = self.cursor.expect("GLOBAL_INVOCATION_ID")?;
        match kind.text {
            "GLOBAL_INVOCATION_ID" => {}
            "VERTEX_INDEX" | "FRAGMENT_WINDOW_SPACE_POSITION" => {
                return Err(AmberError::unsupported(
                    kind.at,
                    format!(
                        "THREAD {} (a graphics shader) is outside tangle's compute subset",
                        kind.text
                    ),
                ))
            }
            t => {
                return Err(AmberError::new(
                    kind.at,
                    format!("expected GLOBAL_INVOCATION_ID, found '{t}'"),
                ))
            }
        }
        let mut invocation = [0u32; 3];
        for (g, axis) in invocation.iter_mut().zip(["x", "y", "z"]) {
            *g = uint(
                self.cursor.expect(&format!("the invocation's {axis}"))?,
                "an invocation id",
            )?;
        }
        self.cursor.end_of_statement()?;
        let mut steps = Vec::new();
        loop {
            let tok = self.statement_token(at, "THREAD")?;
            if steps.len() >= MAX_DEBUG_ITEMS {
                return Err(AmberError::new(tok.at, "too many commands in one THREAD"));
            }
            let step = match tok.text {
                "END" => break,
                "STEP_IN" => DebugStep::StepIn,
                "STEP_OVER" => DebugStep::StepOver,
                "STEP_OUT" => DebugStep::StepOut,
                "CONTINUE" => DebugStep::Continue,
                "EXPECT" => self.debug_expect(tok.at)?,
                t => {
                    return Err(AmberError::new(
                        tok.at,
                        format!("unknown debugger command '{t}'"),
                    ))
                }
            };
            self.cursor.end_of_statement()?;
            steps.push(step);
        }
        self.cursor.end_of_statement()?;
        Ok(DebugThread {
            invocation,
            steps,
            at,
        })
    }

    /// `EXPECT LOCATION|LOCAL|CALLSTACK ...` inside a `THREAD` (after `EXPECT`).
    fn debug_expect(&mut self, at: Location) -> Result<DebugStep, AmberError> {
        let what = self.cursor.expect("LOCATION, LOCAL or CALLSTACK")?;
        match what.text {
            "LOCATION" => {
                let (file, _) = self.cursor.string("a file name")?;
                let line = uint(self.cursor.expect("a line number")?, "a line number")?;
                let text = match self.cursor.peek() {
                    Some(_) => Some(self.cursor.string("the line's text")?.0),
                    None => None,
                };
                Ok(DebugStep::ExpectLocation {
                    file,
                    line,
                    text,
                    at,
                })
            }
            "LOCAL" => {
                let (name, _) = self.cursor.string("a variable name")?;
                self.cursor.keyword("EQ")?;
                let tok = self.cursor.expect("a value")?;
                // Upstream's tokenizer types the value: an integer, a double (with a fraction
                // or an exponent) or a string, which its debugger compares with the driver's
                // printed text of the value.
                let value = if let Ok(i) = tok.text.parse::<i64>() {
                    LocalValue::Int(i)
                } else if tok.text.starts_with('"') {
                    return Err(AmberError::unsupported(
                        tok.at,
                        format!("EXPECT LOCAL \"{name}\" with a string value: upstream compares it with the driver's printed text of the value, which tangle does not imitate; give a number"),
                    ));
                } else {
                    match tok.text.parse::<f64>() {
                        Ok(f) if f.is_finite() => LocalValue::Float(f),
                        _ => {
                            return Err(AmberError::new(
                                tok.at,
                                format!("EXPECT LOCAL: '{}' is not a number", tok.text),
                            ))
                        }
                    }
                };
                Ok(DebugStep::ExpectLocal { name, value, at })
            }
            "CALLSTACK" => {
                // Frames `"function" "file" line [column]`, one a line, up to END.
                self.cursor.end_of_statement()?;
                let mut frames = Vec::new();
                let mut column = None;
                loop {
                    let tok = self.statement_token(at, "EXPECT CALLSTACK")?;
                    if tok.text == "END" {
                        break;
                    }
                    if frames.len() >= MAX_DEBUG_ITEMS {
                        return Err(AmberError::new(tok.at, "too many frames in one CALLSTACK"));
                    }
                    // A function name has no spaces: the statement's first token, unquoted.
                    let function = tok.text.trim_matches('"').to_string();
                    let (file, _) = self.cursor.string("a file name")?;
                    let line = uint::<u32>(self.cursor.expect("a line number")?, "a line number")?;
                    if let Some(col) = self.cursor.next() {
                        uint::<u32>(col, "a column")?;
                        column = column.or(Some(col.at));
                    }
                    self.cursor.end_of_statement()?;
                    frames.push(CallFrame {
                        function,
                        file,
                        line,
                    });
                }
                if let Some(col) = column {
                    // Upstream's model of a frame (src/debug.h, `debug::StackFrame`: a name and
                    // a `debug::Location` of "a file path and a 1-based line number") has no
                    // column, and its debugger compares file and line only: there is no
                    // upstream meaning to check a column against, so it is refused rather than
                    // ignored or given one of tangle's own (OpLine's column would be one).
                    return Err(AmberError::unsupported(
                        col,
                        "EXPECT CALLSTACK with a frame's column: upstream Amber's stack frames (debug::StackFrame) hold a function name, a file and a line, no column, so there is no column to check; give \"function\" \"file\" line",
                    ));
                }
                Ok(DebugStep::ExpectCallstack { frames, at })
            }
            t => Err(AmberError::new(
                what.at,
                format!("expected LOCATION, LOCAL or CALLSTACK, found '{t}'"),
            )),
        }
    }
}
