//! Errors that stop a pipeline from being built or a dispatch from finishing.
//!
//! Findings that let a run go on (out-of-bounds accesses, division by zero, ...) are not errors
//! but [`crate::Diagnostic`]s in the [`crate::Report`].

use std::fmt;

/// Where in the module something happened: the instruction's name, result id and word offset.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InstRef {
    /// The opcode name (`OpIAdd`).
    pub name: String,
    /// The instruction's result id, if it has one.
    pub result_id: Option<u32>,
    /// Word offset of the instruction in the binary it was read from (0 when built in memory).
    pub offset: usize,
    /// The source line the module's debug information (`OpLine`) gives the instruction.
    pub source: Option<Box<SourceLine>>,
}

/// A place in the source a module was compiled from, as an `OpLine` names it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SourceLine {
    /// The `OpString` the `OpLine`'s File operand names (`loop.comp`).
    pub file: String,
    /// The line (the spec leaves its base to the source language; glslang counts from 1).
    pub line: u32,
    /// The column (0 when the compiler gives none).
    pub column: u32,
}

impl fmt::Display for SourceLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)?;
        if self.column != 0 {
            write!(f, ":{}", self.column)?;
        }
        Ok(())
    }
}

impl InstRef {
    /// The location of a module instruction.
    pub fn of(inst: &tangle_spirv::module::Instruction) -> Self {
        InstRef {
            name: inst.name(),
            result_id: inst.result_id,
            offset: inst.offset,
            source: None,
        }
    }
}

impl fmt::Display for InstRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.result_id {
            Some(id) => write!(f, "%{id} = {}", self.name)?,
            None => write!(f, "{}", self.name)?,
        }
        match (self.offset, &self.source) {
            (0, None) => Ok(()),
            (0, Some(line)) => write!(f, " ({line})"),
            (word, None) => write!(f, " (word {word})"),
            (word, Some(line)) => write!(f, " (word {word}, {line})"),
        }
    }
}

/// Why a pipeline could not be built or a dispatch could not finish.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExecError {
    /// The module has no `OpEntryPoint GLCompute` of that name.
    #[error("no GLCompute entry point named '{0}'")]
    NoEntryPoint(String),
    /// An instruction, type or capability outside what the executor implements.
    #[error("{at}: {what} is not supported by tangle's executor")]
    Unsupported { at: InstRef, what: String },
    /// The module uses something the device profile does not offer (a cooperative-matrix type or
    /// MulAdd combination it does not list): another device could run it.
    #[error("{at}: the '{profile}' profile does not support {what}")]
    ProfileLacks {
        at: InstRef,
        profile: String,
        what: String,
    },
    /// The module is inconsistent in a way validation should have caught.
    #[error("{at}: {message}")]
    Malformed { at: InstRef, message: String },
    /// A resource the shader declares is missing or too small.
    #[error("resource error: {0}")]
    Resource(String),
    /// The dispatch exceeds a device limit or an internal limit: another device could run it.
    #[error("limit exceeded: {0}")]
    Limit(String),
    /// The module, as specialized, is invalid on every device (a workgroup dimension of zero):
    /// unlike [`ExecError::Limit`], no profile could run it.
    #[error("invalid on every device: {0}")]
    InvalidEverywhere(String),
    /// A dispatch stopped for a reason the shader caused.
    #[error(transparent)]
    Trap(#[from] Trap),
}

/// A run stopped by a guard.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Trap {
    /// An invocation executed more instructions than `RunOptions::step_limit`.
    #[error("step limit of {limit} instructions exceeded at {at} by invocation {invocation:?} (runaway loop?)")]
    StepLimit {
        limit: u64,
        at: InstRef,
        invocation: [u32; 3],
    },
    /// The run took longer than `RunOptions::time_limit`; `at` is an instruction a stopped
    /// invocation was at (none when every worker was between workgroups).
    #[error("time limit of {limit_ms} ms exceeded{}", .at.as_ref().map(|a| format!(" at {a}")).unwrap_or_default())]
    TimeLimit { limit_ms: u128, at: Option<InstRef> },
    /// The dispatch needs more memory than `RunOptions::memory_limit`, even on one thread;
    /// refused before allocating.
    #[error(
        "the dispatch needs {needed} bytes ({what}), more than the memory limit of {limit} bytes"
    )]
    MemoryLimit {
        limit: u64,
        needed: u64,
        what: String,
    },
}

/// Shorthand for building [`ExecError::Unsupported`].
pub(crate) fn unsupported(at: &InstRef, what: impl Into<String>) -> ExecError {
    ExecError::Unsupported {
        at: at.clone(),
        what: what.into(),
    }
}

/// Shorthand for building [`ExecError::Malformed`].
pub(crate) fn malformed(at: &InstRef, message: impl Into<String>) -> ExecError {
    ExecError::Malformed {
        at: at.clone(),
        message: message.into(),
    }
}
