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
    "begen/attrs.h",
    "begen/binary_launch.h",
    "begen/cuda_driver.h",
    "begen/ffi_support.h",
    "begen/list_words.h",
    "begen/native.h",
    "begen/status.h",
    "begen/tensors.h",
    "begen/trampoline.h",
    "begen/version.h",
    "brainevent/check.h",
    "brainevent/common.h",
    "brainevent/config.h",
    "brainevent/dispatch.h",
    "brainevent/dtypes.h",
    "brainevent/ffi_compat.h",
    "brainevent/float16.h",
    "brainevent/span.h",
    "brainevent/tensor.h",
);

/// The embedded headers' version, `MAJOR.MINOR`, read from the
/// `BEGEN_SUPPORT_VERSION_*` defines of `begen/version.h` (the one place it
/// is written), e.g. `1.0`; `unknown` if the defines cannot be read.
#[cfg_attr(not(feature = "cli"), allow(dead_code))] // used by the CLI (`begen doctor`, `begen scan`)
pub(crate) fn version() -> String {
    let text = HEADERS.iter().find(|(p, _)| *p == "begen/version.h").map_or("", |(_, t)| t);
    let define = |name: &str| -> Option<u32> {
        text.lines().find_map(|line| {
            let value = line.trim().strip_prefix("#define")?.trim_start().strip_prefix(name)?;
            value.starts_with(char::is_whitespace).then(|| value.trim().parse().ok())?
        })
    };
    match (define("BEGEN_SUPPORT_VERSION_MAJOR"), define("BEGEN_SUPPORT_VERSION_MINOR")) {
        (Some(major), Some(minor)) => format!("{major}.{minor}"),
        _ => "unknown".to_string(),
    }
}

/// Writes the embedded headers under `work/rel` (only those whose bytes
/// changed, so compiled objects stay up to date) and returns that folder.
pub(crate) fn write_headers(work: &Path, rel: &Path) -> Result<PathBuf> {
    for (path, text) in HEADERS {
        files::write_work_file(work, &rel.join(path), text.as_bytes())?;
    }
    Ok(work.join(rel))
}

#[cfg(test)]
mod tests {
    use super::{HEADERS, version};

    /// The version doctor prints is the one begen/version.h defines.
    #[test]
    fn version_is_read_from_the_header() {
        let v = version();
        let (major, minor) = v.split_once('.').expect("MAJOR.MINOR");
        assert!(major.parse::<u32>().is_ok() && minor.parse::<u32>().is_ok(), "{v}");
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("build-support/include/begen/version.h"),
        )
        .unwrap();
        assert!(text.contains(&format!("#define BEGEN_SUPPORT_VERSION_MAJOR {major}\n")), "{v}");
        assert!(text.contains(&format!("#define BEGEN_SUPPORT_VERSION_MINOR {minor}\n")), "{v}");
    }

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
