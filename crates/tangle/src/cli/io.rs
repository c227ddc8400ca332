//! Reading inputs and writing outputs: a path, or `-` for standard input/output.

use super::unusable::{Kind, Unusable};
use std::io::{Read, Write};

/// Reads a whole file, or standard input for `-`.
pub fn read_input(path: &str) -> Result<Vec<u8>, Unusable> {
    let name = display_name(path);
    let read = if path == "-" {
        let mut buf = Vec::new();
        std::io::stdin().read_to_end(&mut buf).map(|_| buf)
    } else {
        std::fs::read(path)
    };
    read.map_err(|e| Unusable::in_file(Kind::Io, name, e.to_string()))
}

/// Writes bytes to a file, or standard output for `-`.
pub fn write_output(path: &str, bytes: &[u8]) -> Result<(), Unusable> {
    let written = if path == "-" {
        let mut out = std::io::stdout().lock();
        out.write_all(bytes).and_then(|()| out.flush())
    } else {
        std::fs::write(path, bytes)
    };
    let name = if path == "-" { "<stdout>" } else { path };
    written.map_err(|e| Unusable::in_file(Kind::Io, name, e.to_string()))
}

/// Prints `tangle: MESSAGE` to standard error, where every diagnostic goes.
pub fn report(message: &str) {
    eprintln!("tangle: {message}");
}

/// The name to show for an input path.
pub fn display_name(path: &str) -> &str {
    if path == "-" {
        "<stdin>"
    } else {
        path
    }
}

/// Parses a `--target-env` value, or explains the accepted spellings.
pub fn target_env(text: Option<&str>) -> Result<tangle_spirv::TargetEnv, Unusable> {
    match text {
        None => Ok(tangle_spirv::TargetEnv::DEFAULT),
        Some(t) => tangle_spirv::TargetEnv::parse(t).ok_or_else(|| {
            Unusable::new(Kind::Usage, format!("unknown target environment '{t}' (expected spv1.0..spv1.6, universal1.0..universal1.6, vulkan1.0..vulkan1.4, vulkan1.1spv1.4, opencl1.2, opencl2.0..opencl2.2)"))
        }),
    }
}
