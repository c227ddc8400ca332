//! The SPIR-V binary form: reading ([`read()`]), writing ([`write()`]) and their errors.

mod read;
mod write;

pub use read::read;
pub use write::write;

use crate::module::Module;

// The binary conveniences of `Module` live here, above the module's data, so that `module.rs`
// imports nothing of the binary form (the layers run one way: module → binary).
impl Module {
    /// The binary encoding.
    pub fn to_words(&self) -> Vec<u32> {
        write(self)
    }

    /// Decodes a binary (see [`read()`]).
    pub fn from_words(words: &[u32]) -> Result<Module, BinaryError> {
        read(words)
    }

    /// Decodes a binary given as bytes; either endianness is accepted, as the spec allows.
    pub fn from_bytes(bytes: &[u8]) -> Result<Module, BinaryError> {
        read(&words_from_bytes(bytes)?)
    }
}

/// A binary that cannot be decoded, with the word offset where the problem is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("word {offset}: {kind}")]
pub struct BinaryError {
    /// Word offset (0 = magic) of the instruction or header word at fault.
    pub offset: usize,
    pub kind: BinaryErrorKind,
}

/// What is wrong with a binary.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BinaryErrorKind {
    #[error("the binary is {0} bytes long, not a whole number of 32-bit words")]
    NotWords(usize),
    #[error("the header needs 5 words, the binary has {0}")]
    HeaderTooShort(usize),
    #[error("bad magic number {0:#010x} (expected 0x07230203)")]
    BadMagic(u32),
    #[error("unsupported SPIR-V version word {0:#010x} (tangle reads 1.0 to 1.6)")]
    UnsupportedVersion(u32),
    #[error("instruction has word count 0")]
    ZeroWordCount,
    #[error("instruction claims {count} words but only {available} remain")]
    Truncated { count: usize, available: usize },
    #[error("unknown opcode {0}")]
    UnknownOpcode(u16),
    /// SPIR-V `OpSpecConstantOp`: the opcode "must equal one of the following opcodes"; spirv-dis
    /// refuses the others too ("Invalid OpSpecConstantOp opcode: N").
    #[error("OpSpecConstantOp cannot wrap opcode {0}")]
    InvalidSpecConstantOp(u32),
    #[error("{instruction} is missing its {operand} operand")]
    MissingOperand {
        instruction: &'static str,
        operand: &'static str,
    },
    #[error("{instruction} has {extra} words more than its operands use")]
    ExtraWords {
        instruction: &'static str,
        extra: usize,
    },
    #[error("literal string is not nul-terminated")]
    StringNotTerminated,
    #[error("literal string is padded with non-zero bytes after its nul")]
    StringPaddingNotZero,
    #[error("literal string is not valid UTF-8")]
    StringNotUtf8,
    #[error("invalid {kind} operand value {value}")]
    UnknownEnumerant { kind: &'static str, value: u32 },
    #[error(
        "invalid extended instruction import '{0}' (a set spirv-as and spirv-dis do not know)"
    )]
    UnknownExtInstImport(String),
    #[error("unknown extended instruction {number} of {set}")]
    UnknownExtInst { set: &'static str, number: u32 },
    #[error("literal numbers of {0} bits are not supported")]
    UnsupportedLiteralWidth(u32),
    #[error(
        "{instruction}: the literal's type is not a previously declared integer or float type"
    )]
    LiteralTypeUnknown { instruction: &'static str },
    #[error("id {id} is out of range (the header's bound is {bound})")]
    IdOutOfBound { id: u32, bound: u32 },
}

/// Turns bytes into words, detecting the byte order from the magic number.
pub fn words_from_bytes(bytes: &[u8]) -> Result<Vec<u32>, BinaryError> {
    if !bytes.len().is_multiple_of(4) {
        return Err(BinaryError {
            offset: 0,
            kind: BinaryErrorKind::NotWords(bytes.len()),
        });
    }
    let little = bytes
        .get(..4)
        .is_none_or(|m| u32::from_le_bytes([m[0], m[1], m[2], m[3]]) == crate::module::MAGIC);
    Ok(bytes
        .chunks_exact(4)
        .map(|c| {
            let b = [c[0], c[1], c[2], c[3]];
            if little {
                u32::from_le_bytes(b)
            } else {
                u32::from_be_bytes(b)
            }
        })
        .collect())
}

/// Words as little-endian bytes (the byte order tangle writes).
pub fn words_to_bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}
