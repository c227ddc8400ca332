//! `BUFFER name (DATA_TYPE type | FORMAT fmt) [STD140|STD430] [DATA ... END | SIZE n (FILL v |
//! SERIES_FROM s INC_BY i | FILE [BINARY|TEXT|PNG] path) | FILE ...]`.
//!
//! Number conversions follow amber's parser (`ParseBufferInitializerFill`/`Series`, `ParseBufferData`):
//! an integer literal for a float component is converted to the float; a decimal literal in `DATA`
//! for an integer component is an error ("invalid BUFFER data value"); a decimal `FILL` or
//! `SERIES_FROM` value for integer data is read as an integer (amber takes the token's integer
//! part, which its tokenizer leaves 0 for a decimal), so `FILL 0.0` fills with 0, and any other
//! decimal, which amber would also turn into 0, is refused rather than silently zeroed.

use super::cursor::{Cursor, Tok};
use super::{declare, number, uint, Parser};
use crate::error::{AmberError, Location};
use crate::layout::{ElementLayout, Layout};
use crate::script::{Buffer, ImageShape};

/// A buffer's bytes and, when they come from a PNG, its width and height.
type FileData = (Vec<u8>, Option<(u32, u32)>);

/// The largest PNG file read (the decoded pixels are bounded by the buffer limit instead).
const MAX_PNG_FILE: u64 = 64 << 20;
use crate::types::DataType;
use crate::value::Number;

/// Refuses a decimal literal for an integer component (amber rejects it too); `i` counts
/// components across elements.
pub(crate) fn check_literal(
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

/// A `FILL`/`SERIES_FROM` literal as amber converts it for the `k`-th component's type: an
/// integer for a float component becomes that float; a decimal for an integer component is the
/// integer 0 when it is zero (amber reads a decimal token's integer value, 0) and an error
/// otherwise, since amber would silently fill with 0.
fn fill_value(
    value: Number,
    element: &ElementLayout,
    k: usize,
    tok: Tok<'_>,
) -> Result<Number, AmberError> {
    match (value, element.scalar(k)) {
        (Number::Float(f), Some(s)) if !s.is_float() => {
            if f == 0.0 {
                Ok(Number::Int(0))
            } else {
                Err(AmberError::new(
                    tok.at,
                    format!(
                        "{} is not an integer, but the component type is {} (upstream Amber would read it as 0)",
                        tok.text,
                        s.name()
                    ),
                ))
            }
        }
        _ => Ok(value),
    }
}

/// Reads `DATA` values up to `END` (`needs_end`) or to the end of the text, checking each
/// against its component's type. `Err(None)`: the text ended before a needed `END`.
fn data_values(
    cursor: &mut Cursor<'_>,
    element: &ElementLayout,
    needs_end: bool,
) -> Result<(Vec<Number>, Vec<Location>), Option<AmberError>> {
    let mut values = Vec::new();
    let mut places = Vec::new();
    loop {
        let Some(tok) = cursor.next_across_lines() else {
            if needs_end {
                return Err(None);
            }
            break;
        };
        if tok.text == "END" && needs_end {
            break;
        }
        let value = number(tok).map_err(Some)?;
        check_literal(value, element, values.len(), tok.at).map_err(Some)?;
        values.push(value);
        places.push(tok.at);
    }
    Ok((values, places))
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
        self.charge(count.checked_mul(element.stride), at)
    }

    /// What is left of the script's buffer limit.
    fn bytes_left(&self) -> u64 {
        self.buffer_limit.saturating_sub(self.buffer_bytes)
    }

    /// Counts `bytes` (`None`: too many to count) against the script's buffer limit.
    fn charge(&mut self, bytes: Option<usize>, at: Location) -> Result<usize, AmberError> {
        let total = bytes
            .and_then(|b| u64::try_from(b).ok())
            .and_then(|b| b.checked_add(self.buffer_bytes))
            .filter(|t| *t <= self.buffer_limit);
        match (total, bytes) {
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
        // DATA_TYPE takes amber's type names, a STRUCT or a Vulkan format name; FORMAT a format.
        let format = || match crate::format::buffer_type(type_tok.text) {
            Some(Ok(ty)) => Ok(Some(ty)),
            Some(Err(why)) => Err(AmberError::unsupported(type_tok.at, why)),
            None => Ok(None),
        };
        let data_type = match kind.text {
            "DATA_TYPE" => match DataType::parse(type_tok.text) {
                Some(ty) => Some(ty),
                None => format()?,
            },
            "FORMAT" => format()?,
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
        let (bytes, png_size) = match self.cursor.next() {
            None => (Vec::new(), None),
            Some(t) if t.text == "DATA" => (self.data(&element, t.at)?, None),
            Some(t) if t.text == "SIZE" => self.sized(&element)?,
            Some(t) if t.text == "FILE" => self.file_data(&element)?,
            Some(t) if ["WIDTH", "HEIGHT", "DEPTH", "MIP_LEVELS", "SAMPLES"].contains(&t.text) => {
                return Err(AmberError::unsupported(
                    t.at,
                    format!(
                        "BUFFER ... {} (an image) is outside tangle's subset",
                        t.text
                    ),
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
        // A Vulkan format name as the DATA_TYPE gives the buffer that format, as FORMAT does (as
        // in upstream, whose DATA_TYPE buffers all carry a format): it can be bound as a texel
        // buffer, and a PNG one as an image.
        let format = match (kind.text, &data_type) {
            ("FORMAT", _) => Some(type_tok.text.to_string()),
            (_, Some(_))
                if DataType::parse(type_tok.text).is_none()
                    && matches!(crate::format::buffer_type(type_tok.text), Some(Ok(_))) =>
            {
                Some(type_tok.text.to_string())
            }
            _ => None,
        };
        // Upstream gives a PNG buffer the image's width and height, so it can be bound as an
        // image; that holds when one texel is one pixel (a 4-byte format such as R8G8B8A8_UNORM).
        let image = png_size
            .filter(|_| format.is_some() && element.stride == 4)
            .map(|(w, h)| ImageShape {
                dimensions: 2,
                extent: [w, h, 1],
            });
        self.script.buffers.push(Buffer {
            name: name.text.to_string(),
            data_type,
            layout,
            element,
            bytes,
            at,
            format,
            image,
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
        let (values, places) = data_values(&mut self.cursor, element, true)
            .map_err(|e| e.unwrap_or_else(|| AmberError::new(at, "DATA has no END")))?;
        self.encode_values(element, &values, &places, at)
    }

    /// Encodes `values` (read at `places`) as whole elements, counted against the limit.
    fn encode_values(
        &mut self,
        element: &ElementLayout,
        values: &[Number],
        places: &[Location],
        at: Location,
    ) -> Result<Vec<u8>, AmberError> {
        let count = values.len().div_ceil(element.components().max(1));
        self.checked_size(element, count, at)?;
        element
            .encode(values, count)
            .map_err(|(i, e)| AmberError::new(places.get(i).copied().unwrap_or(at), e))
    }

    /// `FILE [BINARY|TEXT|PNG] path` (after `SIZE n`, which the file's contents override, as in
    /// amber's `ParseBufferInitializerFile`): `BINARY` bytes are the buffer's bytes as they are;
    /// `TEXT` holds values as `DATA` does, without `END`; `PNG` (the default when no kind is
    /// named, as upstream) is the image's RGBA8 pixels ([`crate::png_data`]), as whole elements.
    /// Returns the bytes and, for a PNG, its width and height.
    fn file_data(&mut self, element: &ElementLayout) -> Result<FileData, AmberError> {
        let mut kind = self.cursor.expect("BINARY, TEXT, PNG or a file name")?;
        let how = kind.text;
        if ["BINARY", "TEXT", "PNG"].contains(&how) {
            kind = self.cursor.expect("a file name")?;
        }
        let path = kind;
        if how != "BINARY" && how != "TEXT" {
            return self
                .png_data(element, path)
                .map(|(b, size)| (b, Some(size)));
        }
        let bytes = self.read_file(path, self.bytes_left(), "the script's buffer limit")?;
        if how == "BINARY" {
            self.charge(Some(bytes.len()), path.at)?;
            return Ok((bytes, None));
        }
        let text = String::from_utf8(bytes).map_err(|_| {
            AmberError::new(
                path.at,
                format!("FILE TEXT '{}' is not UTF-8 text", path.text),
            )
        })?;
        let in_file = |e: AmberError| {
            AmberError::new(
                path.at,
                format!("FILE TEXT '{}' line {}: {}", path.text, e.at, e.message),
            )
        };
        let mut cursor = Cursor::new(&text);
        let (values, _) = data_values(&mut cursor, element, false)
            .map_err(|e| e.map_or_else(|| AmberError::new(path.at, "unreachable"), in_file))?;
        let places = vec![path.at; values.len()];
        self.encode_values(element, &values, &places, path.at)
            .map(|b| (b, None))
    }

    /// The pixels of the PNG file `path` names, cut to whole elements (upstream's element count
    /// is the byte count over the element size), counted against the buffer limit.
    fn png_data(
        &mut self,
        element: &ElementLayout,
        path: Tok<'_>,
    ) -> Result<(Vec<u8>, (u32, u32)), AmberError> {
        let file = self.read_file(path, MAX_PNG_FILE, "the PNG file limit")?;
        let pixels = crate::png_data::decode_rgba8(&file, self.bytes_left())
            .map_err(|e| AmberError::new(path.at, format!("FILE PNG '{}': {e}", path.text)))?;
        let mut bytes = pixels.rgba;
        let stride = element.stride.max(1);
        bytes.truncate(bytes.len() / stride * stride);
        self.charge(Some(bytes.len()), path.at)?;
        Ok((bytes, (pixels.width, pixels.height)))
    }

    /// `SIZE n FILL v` or `SIZE n SERIES_FROM s INC_BY i`.
    fn sized(&mut self, element: &ElementLayout) -> Result<FileData, AmberError> {
        let size_tok = self.cursor.expect("the number of elements")?;
        let count: usize = uint(size_tok, "SIZE")?;
        if self.cursor.eat("FILE") {
            // The file's contents decide the size.
            return self.file_data(element);
        }
        self.initialized(element, count, size_tok.at)
            .map(|b| (b, None))
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
        let init = self.cursor.expect("FILL, SERIES_FROM or FILE")?;
        let components = count * element.components();
        match init.text {
            "FILL" => {
                let tok = self.cursor.expect("a fill value")?;
                let value = number(tok)?;
                let values: Vec<Number> = (0..element.components())
                    .map(|k| fill_value(value, element, k, tok))
                    .collect::<Result<_, _>>()?;
                for i in 0..components {
                    let v = values
                        .get(i % values.len().max(1))
                        .copied()
                        .unwrap_or(value);
                    element
                        .write(&mut bytes, i, v)
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
                let start = fill_value(number(start_tok)?, element, 0, start_tok)?;
                self.cursor.keyword("INC_BY")?;
                let inc_tok = self.cursor.expect("an increment")?;
                let inc = fill_value(number(inc_tok)?, element, 0, inc_tok)?;
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
            t => {
                return Err(AmberError::new(
                    init.at,
                    format!("expected FILL, SERIES_FROM or FILE, found '{t}'"),
                ))
            }
        }
        Ok(bytes)
    }
}
