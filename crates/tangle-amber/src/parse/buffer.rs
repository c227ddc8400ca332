//! `BUFFER name (DATA_TYPE type | FORMAT fmt) [STD140|STD430] [DATA ... END | SIZE n (FILL v |
//! SERIES_FROM s INC_BY i)]`.

use super::{declare, number, uint, Parser};
use crate::error::{AmberError, Location};
use crate::layout::{ElementLayout, Layout};
use crate::script::Buffer;
use crate::types::DataType;
use crate::value::Number;

/// Refuses a decimal literal for an integer component (amber rejects it too); `i` counts
/// components across elements.
pub(super) fn check_literal(
    value: Number,
    element: &ElementLayout,
    i: usize,
    at: Location,
) -> Result<(), AmberError> {
    match (value, element.scalar(i)) {
        (Number::Float(f), Some(scalar)) if !scalar.is_float() => Err(AmberError::new(
            at,
            format!(
                "{f} is not an integer, but the component type is {}",
                scalar.name()
            ),
        )),
        _ => Ok(()),
    }
}

impl Parser<'_> {
    /// Checks a buffer size in elements against what is left of the script's buffer limit,
    /// counts it, and returns it in bytes.
    pub(super) fn checked_size(
        &mut self,
        element: &ElementLayout,
        count: usize,
        at: Location,
    ) -> Result<usize, AmberError> {
        let total = count
            .checked_mul(element.stride)
            .and_then(|b| u64::try_from(b).ok())
            .and_then(|b| b.checked_add(self.buffer_bytes))
            .filter(|t| *t <= self.buffer_limit);
        match (total, count.checked_mul(element.stride)) {
            (Some(total), Some(bytes)) => {
                self.buffer_bytes = total;
                Ok(bytes)
            }
            _ => Err(AmberError::new(
                at,
                format!(
                    "the buffer does not fit in the memory limit: the script's buffers may hold {} bytes in all",
                    self.buffer_limit
                ),
            )),
        }
    }

    pub(super) fn buffer(&mut self, at: Location) -> Result<(), AmberError> {
        let name = self.cursor.expect("a buffer name")?;
        let kind = self.cursor.expect("DATA_TYPE or FORMAT")?;
        let type_tok = self.cursor.expect("a type")?;
        let data_type = match kind.text {
            "DATA_TYPE" => DataType::parse(type_tok.text),
            "FORMAT" => DataType::parse_format(type_tok.text),
            t => {
                return Err(AmberError::new(
                    kind.at,
                    format!("expected DATA_TYPE or FORMAT, found '{t}'"),
                ))
            }
        };
        let layout = if self.cursor.eat("STD140") {
            Layout::Std140
        } else {
            self.cursor.eat("STD430");
            Layout::Std430
        };
        let element = match (data_type, self.structs.get(type_tok.text)) {
            (Some(ty), _) => ElementLayout::new(&ty, layout),
            (None, Some(decl)) if kind.text == "DATA_TYPE" => decl.element(layout),
            _ => {
                return Err(AmberError::new(
                    type_tok.at,
                    format!("unknown or unsupported type '{}'", type_tok.text),
                ))
            }
        };
        let bytes = match self.cursor.next() {
            None => Vec::new(),
            Some(t) if t.text == "DATA" => self.data(&element, t.at)?,
            Some(t) if t.text == "SIZE" => self.sized(&element)?,
            Some(t)
                if ["WIDTH", "HEIGHT", "DEPTH", "MIP_LEVELS", "SAMPLES", "FILE"]
                    .contains(&t.text) =>
            {
                return Err(AmberError::new(
                    t.at,
                    format!("BUFFER ... {} is not supported", t.text),
                ))
            }
            Some(t) => {
                return Err(AmberError::new(
                    t.at,
                    format!("expected DATA or SIZE, found '{}'", t.text),
                ))
            }
        };
        self.cursor.end_of_statement()?;
        declare(
            &mut self.names.buffers,
            name,
            "buffer",
            self.script.buffers.len(),
        )?;
        self.script.buffers.push(Buffer {
            name: name.text.to_string(),
            data_type,
            layout,
            element,
            bytes,
            at,
            format: (kind.text == "FORMAT").then(|| type_tok.text.to_string()),
            image: None,
        });
        Ok(())
    }

    /// `DATA v... END`, possibly over several lines; the size is the number of values rounded up
    /// to whole elements.
    pub(super) fn data(
        &mut self,
        element: &ElementLayout,
        at: Location,
    ) -> Result<Vec<u8>, AmberError> {
        let mut values = Vec::new();
        let mut places = Vec::new();
        loop {
            let tok = self
                .cursor
                .next_across_lines()
                .ok_or_else(|| AmberError::new(at, "DATA has no END"))?;
            if tok.text == "END" {
                break;
            }
            let value = number(tok)?;
            check_literal(value, element, values.len(), tok.at)?;
            values.push(value);
            places.push(tok.at);
        }
        let count = values.len().div_ceil(element.components().max(1));
        self.checked_size(element, count, at)?;
        element
            .encode(&values, count)
            .map_err(|(i, e)| AmberError::new(places.get(i).copied().unwrap_or(at), e))
    }

    /// `SIZE n FILL v` or `SIZE n SERIES_FROM s INC_BY i`.
    fn sized(&mut self, element: &ElementLayout) -> Result<Vec<u8>, AmberError> {
        let size_tok = self.cursor.expect("the number of elements")?;
        let count: usize = uint(size_tok, "SIZE")?;
        self.initialized(element, count, size_tok.at)
    }

    /// `FILL v` or `SERIES_FROM s INC_BY i` for `count` elements (after `SIZE n`, or an
    /// `IMAGE`'s dimensions).
    pub(super) fn initialized(
        &mut self,
        element: &ElementLayout,
        count: usize,
        at: Location,
    ) -> Result<Vec<u8>, AmberError> {
        let mut bytes = vec![0u8; self.checked_size(element, count, at)?];
        let init = self.cursor.expect("FILL or SERIES_FROM")?;
        let components = count * element.components();
        match init.text {
            "FILL" => {
                let tok = self.cursor.expect("a fill value")?;
                let value = number(tok)?;
                for k in 0..element.components() {
                    check_literal(value, element, k, tok.at)?;
                }
                for i in 0..components {
                    element
                        .write(&mut bytes, i, value)
                        .map_err(|e| AmberError::new(tok.at, e))?;
                }
            }
            "SERIES_FROM" => {
                if element.components() != 1 {
                    return Err(AmberError::new(
                        init.at,
                        "SERIES_FROM needs a scalar data type",
                    ));
                }
                let start_tok = self.cursor.expect("a start value")?;
                let start = number(start_tok)?;
                check_literal(start, element, 0, start_tok.at)?;
                self.cursor.keyword("INC_BY")?;
                let inc_tok = self.cursor.expect("an increment")?;
                let inc = number(inc_tok)?;
                check_literal(inc, element, 0, inc_tok.at)?;
                let mut value = start;
                for i in 0..components {
                    element
                        .write(&mut bytes, i, value)
                        .map_err(|e| AmberError::new(start_tok.at, e))?;
                    // Integer series wrap in 64 bits; float series add in double (amber's Value).
                    value = match (value, inc) {
                        (Number::Int(v), Number::Int(d)) => {
                            Number::Int(i128::from((v as u64).wrapping_add(d as u64)))
                        }
                        (v, d) => Number::Float(v.as_f64() + d.as_f64()),
                    };
                }
            }
            "FILE" => {
                return Err(AmberError::new(
                    init.at,
                    "buffer data from files is not supported",
                ))
            }
            t => {
                return Err(AmberError::new(
                    init.at,
                    format!("expected FILL or SERIES_FROM, found '{t}'"),
                ))
            }
        }
        Ok(bytes)
    }
}
