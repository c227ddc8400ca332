//! The loader's JSON manifest for the driver library (Vulkan-Loader
//! `docs/LoaderDriverInterface.md`, "Driver Manifest File Format"), and where the library is.
//!
//! `tangle driver --manifest FILE` writes it; the tests write one for the library cargo built.

use std::path::{Path, PathBuf};

/// The library's file name on this platform.
pub const LIBRARY: &str = if cfg!(target_os = "macos") {
    "libtangle_icd.dylib"
} else if cfg!(windows) {
    "tangle_icd.dll"
} else {
    "libtangle_icd.so"
};

/// The manifest text for the library at `library` (an absolute path is best: a relative one is
/// taken from the manifest's folder). `api_version` is what the driver implements, so the loader
/// treats it as a 1.3 driver (below 1.1 it would rewrite programs' versions to 1.0).
pub fn json(library: &Path) -> String {
    let manifest = serde_json::json!({
        "file_format_version": "1.0.1",
        "ICD": {
            "library_path": library.to_string_lossy(),
            "api_version": format!("1.3.{}", ash::vk::HEADER_VERSION),
            "library_arch": if cfg!(target_pointer_width = "64") { "64" } else { "32" },
            "is_portability_driver": false,
        }
    });
    // A `json!` value always serializes.
    serde_json::to_string_pretty(&manifest).unwrap_or_default() + "\n"
}

/// The driver library beside an executable in `dir`: in `dir` itself (an install, or cargo's
/// profile folder after `cargo build -p tangle-icd`), in `dir/deps` (where cargo leaves a
/// dependency's `cdylib`, rebuilt with the executable), or in `../lib`; the newest where there
/// are several, so that a stale copy never wins.
pub fn find_library(dir: &Path) -> Option<PathBuf> {
    [
        dir.join(LIBRARY),
        dir.join("deps").join(LIBRARY),
        dir.join("..").join("lib").join(LIBRARY),
    ]
    .into_iter()
    .filter(|p| p.is_file())
    .max_by_key(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_names_the_library_and_version() {
        let text = json(Path::new("/opt/tangle/libtangle_icd.so"));
        let v: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
        assert_eq!(v["file_format_version"], "1.0.1");
        assert_eq!(v["ICD"]["library_path"], "/opt/tangle/libtangle_icd.so");
        assert!(v["ICD"]["api_version"]
            .as_str()
            .is_some_and(|s| s.starts_with("1.3.")));
        assert_eq!(v["ICD"]["is_portability_driver"], false);
    }
}
