//! `tangle driver --manifest FILE [--library PATH]`: writes the Vulkan loader's JSON manifest
//! for tangle's driver library (`libtangle_icd.so`, crate `tangle-icd`), so that
//! `VK_DRIVER_FILES=FILE` runs an unmodified Vulkan program on tangle (docs/driver.md).

use super::unusable::{Kind, Unusable};
use super::Exit;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// The manifest file to write (`-` for standard output).
    #[arg(long, value_name = "FILE.json")]
    manifest: String,
    /// The driver library; by default the one beside this executable (or in its `deps/` or
    /// `../lib/`).
    #[arg(long, value_name = "PATH")]
    library: Option<PathBuf>,
}

/// The library the manifest names, as an absolute path: `given`, or the one beside this
/// executable.
pub(super) fn library(given: Option<&Path>) -> Result<PathBuf, Unusable> {
    let found = match given {
        Some(path) if path.is_file() => Some(path.to_path_buf()),
        Some(path) => {
            return Err(Unusable::new(
                Kind::Io,
                format!("--library {}: no such file", path.display()),
            ))
        }
        None => std::env::current_exe()
            .ok()
            .and_then(|exe| exe.parent().map(Path::to_path_buf))
            .and_then(|dir| tangle_icd::manifest::find_library(&dir)),
    };
    let path = found.ok_or_else(|| {
        Unusable::new(
            Kind::Usage,
            format!(
                "no {} beside the tangle executable: build it (cargo build -p tangle-icd) or name it with --library",
                tangle_icd::manifest::LIBRARY
            ),
        )
    })?;
    std::fs::canonicalize(&path)
        .map_err(|e| Unusable::new(Kind::Io, format!("{}: {e}", path.display())))
}

pub fn run(args: &Args) -> Result<Exit, Unusable> {
    let library = library(args.library.as_deref())?;
    let text = tangle_icd::manifest::json(&library);
    super::io::write_output(&args.manifest, text.as_bytes())?;
    Ok(Exit::Success)
}
