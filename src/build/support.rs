//! begen's C++ support headers (`build-support/include`), embedded in the
//! binary: a build writes them into its work directory, so an installed
//! `begen` needs nothing from its source tree. `BEGEN_SUPPORT_INCLUDE`
//! points a build at another copy (to try changes to the headers).

use std::path::{Path, PathBuf};

use super::files;
use crate::error::Result;

macro_rules! headers {
    ($($path:literal),* $(,)?) => {
        /// Every support header: its path under the include directory, and its text.
        pub(crate) const HEADERS: &[(&str, &str)] = &[
            $(($path, include_str!(concat!("../../build-support/include/", $path)))),*
        ];
    };
}

headers!(
    "begen/abi.h",
    "begen/cuda_driver.h",
    "begen/ffi_support.h",
    "begen/trampoline.h",
    "brainevent/check.h",
    "brainevent/common.h",
    "brainevent/config.h",
    "brainevent/dispatch.h",
    "brainevent/dtypes.h",
    "brainevent/ffi_compat.h",
    "brainevent/tensor.h",
);

/// Writes the embedded headers under `dir` (only those whose bytes
/// changed, so compiled objects stay up to date) and returns `dir`.
pub(crate) fn write_headers(dir: &Path) -> Result<PathBuf> {
    for (path, text) in HEADERS {
        files::write_if_changed(&dir.join(path), text.as_bytes())?;
    }
    Ok(dir.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::HEADERS;

    /// A header added to build-support/include must be embedded too.
    #[test]
    fn every_header_is_embedded() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("build-support/include");
        let mut on_disk = Vec::new();
        for entry in walkdir::WalkDir::new(&root) {
            let entry = entry.expect("build-support/include is readable");
            if entry.file_type().is_file() {
                on_disk.push(crate::source::relative(&root, entry.path()));
            }
        }
        on_disk.sort();
        let mut embedded: Vec<String> = HEADERS.iter().map(|(p, _)| p.to_string()).collect();
        embedded.sort();
        assert_eq!(on_disk, embedded, "list every file of build-support/include in src/build/support.rs");
    }
}
