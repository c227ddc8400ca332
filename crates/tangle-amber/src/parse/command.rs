//! Commands: `RUN`, `EXPECT`, `COPY`, `REPEAT n ... END`. Image forms (`EXPECT img IDX x y SIZE
//! w h EQ_RGB|EQ_RGBA ...`) are refused as outside tangle's subset.

use super::buffer::check_literal;
use super::cursor::Tok;
use super::{lookup, number, uint, Parser};
use crate::error::{AmberError, Location};
use crate::script::{Check, Command, CompareOp, Expect, Tolerance};

/// `REPEAT` blocks nest at most this deep (keeps hostile scripts off the stack limit).
const MAX_REPEAT_DEPTH: usize = 16;

/// `on` / `off`.
pub(super) fn parse_on_off(tok: Tok<'_>) -> Result<bool, AmberError> {
    match tok.text {
        "on" => Ok(true),
        "off" => Ok(false),
        t => Err(AmberError::new(
            tok.at,
            format!("expected on or off, found '{t}'"),
        )),
    }
}

fn compare_op(text: &str) -> Option<CompareOp> {
    Some(match text {
        "EQ" => CompareOp::Eq,
        "NE" => CompareOp::Ne,
        "LT" => CompareOp::Lt,
        "LE" => CompareOp::Le,
        "GT" => CompareOp::Gt,
        "GE" => CompareOp::Ge,
        _ => return None,
    })
}

/// A tolerance: `0.1`, `5%` or `5 %`.
fn tolerance(tok: Tok<'_>, percent_follows: bool) -> Result<Tolerance, AmberError> {
    let (text, percent) = match tok.text.strip_suffix('%') {
        Some(t) => (t, true),
        None => (tok.text, percent_follows),
    };
    let value = crate::value::Number::parse(text)
        .map(crate::value::Number::as_f64)
        .filter(|v| *v >= 0.0)
        .ok_or_else(|| {
            AmberError::new(tok.at, format!("'{}' is not a valid tolerance", tok.text))
        })?;
    Ok(Tolerance { value, percent })
}

impl Parser<'_> {
    /// Parses the command that starts with `first` (already taken).
    pub(super) fn command(&mut self, first: Tok<'_>, depth: usize) -> Result<Command, AmberError> {
        let at = first.at;
        match first.text {
            "RUN" => {
                self.cursor.eat("TIMED_EXECUTION");
                let pipeline = lookup(
                    &self.names.pipelines,
                    self.cursor.expect("a pipeline name")?,
                    "pipeline",
                )?;
                if let Some(t) = self.cursor.peek().filter(|t| t.text.starts_with("DRAW")) {
                    return Err(AmberError::unsupported(
                        t.at,
                        format!("{} (drawing) is outside tangle's compute subset", t.text),
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
                Ok(Command::Run {
                    pipeline,
                    groups,
                    at,
                })
            }
            "COPY" => {
                let from = lookup(
                    &self.names.buffers,
                    self.cursor.expect("a buffer name")?,
                    "buffer",
                )?;
                self.cursor.keyword("TO")?;
                let to = lookup(
                    &self.names.buffers,
                    self.cursor.expect("a buffer name")?,
                    "buffer",
                )?;
                self.cursor.end_of_statement()?;
                Ok(Command::Copy { from, to, at })
            }
            "EXPECT" => Ok(Command::Expect(self.expect_command(at)?)),
            "REPEAT" => {
                if depth >= MAX_REPEAT_DEPTH {
                    return Err(AmberError::new(at, "REPEAT blocks nest too deeply"));
                }
                let count = uint(self.cursor.expect("a repeat count")?, "the repeat count")?;
                self.cursor.end_of_statement()?;
                let mut body = Vec::new();
                loop {
                    if !self.cursor.next_statement() {
                        return Err(AmberError::new(at, "REPEAT has no END"));
                    }
                    let Some(tok) = self.cursor.next() else {
                        continue;
                    };
                    if tok.text == "END" {
                        self.cursor.end_of_statement()?;
                        return Ok(Command::Repeat { count, body, at });
                    }
                    if !["RUN", "EXPECT", "COPY", "REPEAT"].contains(&tok.text) {
                        return Err(AmberError::new(
                            tok.at,
                            format!("'{}' cannot appear inside REPEAT", tok.text),
                        ));
                    }
                    body.push(self.command(tok, depth + 1)?);
                }
            }
            t => Err(AmberError::new(at, format!("unknown command '{t}'"))),
        }
    }

    /// `EXPECT buf IDX off [TOLERANCE t...] OP v...`, `EXPECT a EQ_BUFFER b`,
    /// `EXPECT a RMSE_BUFFER b TOLERANCE t`.
    fn expect_command(&mut self, at: Location) -> Result<Expect, AmberError> {
        let buffer_tok = self.cursor.expect("a buffer name")?;
        let buffer = lookup(&self.names.buffers, buffer_tok, "buffer")?;
        let what = self
            .cursor
            .expect("IDX, EQ_BUFFER, RMSE_BUFFER or EQ_HISTOGRAM_EMD_BUFFER")?;
        let check = match what.text {
            "IDX" => self.probe(buffer)?,
            "EQ_BUFFER" | "RMSE_BUFFER" | "EQ_HISTOGRAM_EMD_BUFFER" => {
                let other_tok = self.cursor.expect("a buffer name")?;
                let other = lookup(&self.names.buffers, other_tok, "buffer")?;
                let (a, b) = (
                    self.script.buffers.get(buffer),
                    self.script.buffers.get(other),
                );
                if a.map(|a| &a.element) != b.map(|b| &b.element) {
                    return Err(AmberError::new(
                        other_tok.at,
                        "the two buffers have different data types or layouts",
                    ));
                }
                if what.text == "EQ_BUFFER" {
                    Check::EqBuffer(other)
                } else {
                    self.cursor.keyword("TOLERANCE")?;
                    let t = tolerance(self.cursor.expect("a tolerance")?, false)?;
                    if what.text == "RMSE_BUFFER" {
                        Check::RmseBuffer(other, t.value)
                    } else {
                        Check::HistogramEmdBuffer(other, t.value)
                    }
                }
            }
            t => {
                return Err(AmberError::new(
                    what.at,
                    format!("EXPECT {t} is not supported"),
                ))
            }
        };
        self.cursor.end_of_statement()?;
        Ok(Expect { buffer, check, at })
    }

    fn probe(&mut self, buffer: usize) -> Result<Check, AmberError> {
        let Some(buf) = self.script.buffers.get(buffer) else {
            return Err(AmberError::new(self.cursor.here(), "unknown buffer"));
        };
        let element = buf.element.clone();
        let stride = element.stride;
        let offset_tok = self.cursor.expect("a byte offset")?;
        let offset: usize = uint(offset_tok, "IDX")?;
        if let Some(t) = self
            .cursor
            .peek()
            .filter(|t| crate::value::Number::parse(t.text).is_some())
        {
            return Err(AmberError::unsupported(
                t.at,
                "image probes (IDX x y SIZE w h, EQ_RGB, EQ_RGBA) are outside tangle's compute subset",
            ));
        }
        // IDX is a byte offset and must land on an element boundary (Verifier::ProbeSSBO).
        if stride == 0 || !offset.is_multiple_of(stride) {
            return Err(AmberError::new(
                offset_tok.at,
                format!("IDX {offset} is not a multiple of the element size ({stride} bytes with padding)"),
            ));
        }
        let mut tol = None;
        if self.cursor.eat("TOLERANCE") {
            // 1..4 values; only the first is used for buffers.
            let mut n = 0;
            while let Some(t) = self.cursor.peek().filter(|t| compare_op(t.text).is_none()) {
                self.cursor.next();
                if t.text == "%" {
                    // A detached `%`: already applied to the value before it.
                    continue;
                }
                let value = tolerance(t, self.cursor.peek().is_some_and(|p| p.text == "%"))?;
                n += 1;
                if n > 4 {
                    return Err(AmberError::new(t.at, "TOLERANCE takes at most 4 values"));
                }
                tol.get_or_insert(value);
            }
            if tol.is_none() {
                return Err(AmberError::new(self.cursor.here(), "expected a tolerance"));
            }
        }
        let op_tok = self
            .cursor
            .expect("a comparison (EQ, NE, LT, LE, GT, GE)")?;
        let op = compare_op(op_tok.text).ok_or_else(|| {
            AmberError::new(op_tok.at, format!("unknown comparison '{}'", op_tok.text))
        })?;
        if tol.is_some() && op != CompareOp::Eq {
            return Err(AmberError::new(op_tok.at, "TOLERANCE works only with EQ"));
        }
        let mut values = Vec::new();
        while let Some(t) = self.cursor.next() {
            let v = number(t)?;
            let first = offset / stride.max(1) * element.components();
            check_literal(v, &element, first.saturating_add(values.len()), t.at)?;
            values.push(v);
        }
        if values.is_empty() {
            return Err(AmberError::new(
                self.cursor.here(),
                "expected at least one value",
            ));
        }
        Ok(Check::Probe {
            offset,
            op,
            tolerance: tol,
            values,
        })
    }
}
