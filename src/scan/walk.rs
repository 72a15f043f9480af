//! Walks the kernel directory: deterministic order (sorted by name), symlinks
//! followed but loops reported, hidden entries (`.git`, `.venv`) skipped.

use std::path::{Path, PathBuf};

use walkdir::WalkDir;

use crate::Error;
use crate::model::Platform;
use crate::source::relative;

/// What a file is to begen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Looks like a source but is not read as one (`.CU`, `.Cpp`, `.c`):
    /// an annotation in it gets a warning.
    Ignored,
    Source(Platform),
    Header,
}

/// A file found under the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// Relative to the root, `/`-separated.
    pub(crate) file: String,
    pub(crate) path: PathBuf,
    pub(crate) kind: Kind,
}

/// A file begen does not read as a source that a user may think it does:
/// a source extension in other case (`.CU`), or C (`.c`).
fn near_source(path: &Path) -> bool {
    let Some(ext) = path.extension().and_then(|e| e.to_str()) else { return false };
    let lower = ext.to_ascii_lowercase();
    (lower != ext && matches!(lower.as_str(), "cu" | "cpp" | "cc" | "cxx")) || ext == "c"
}

/// Classifies a path by its extension.
pub(crate) fn kind_of(path: &Path) -> Option<Kind> {
    let ext = path.extension()?.to_str()?;
    match ext {
        "cu" => Some(Kind::Source(Platform::Cuda)),
        "cpp" | "cc" | "cxx" => Some(Kind::Source(Platform::Cpu)),
        "h" | "hh" | "hpp" | "hxx" | "cuh" => Some(Kind::Header),
        _ => None,
    }
}

/// A path under the root the walk could not enter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WalkError {
    pub(crate) entry: Entry,
    pub(crate) text: String,
    /// A symbolic link back to an ancestor or out of the root: a warning,
    /// not an error.
    pub(crate) is_loop: bool,
}

/// Lists the sources and headers under `root`. Fails only when `root`
/// itself cannot be read; what goes wrong below it is returned apart.
pub(crate) fn walk(root: &Path) -> Result<(Vec<Entry>, Vec<WalkError>), Error> {
    std::fs::read_dir(root).map_err(|e| Error::io(root, e))?;
    let mut entries = Vec::new();
    let mut errors = Vec::new();
    // Links are followed inside the root only: a link to `/` would walk the
    // whole file system.
    let inside = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let outside = std::cell::RefCell::new(Vec::new());
    let walker = WalkDir::new(root).follow_links(true).sort_by_file_name().into_iter().filter_entry(|e| {
        if e.depth() > 0 && e.file_name().to_string_lossy().starts_with('.') {
            return false;
        }
        if e.path_is_symlink()
            && e.file_type().is_dir()
            && !std::fs::canonicalize(e.path()).is_ok_and(|target| target.starts_with(&inside))
        {
            outside.borrow_mut().push(e.path().to_path_buf());
            return false;
        }
        true
    });
    for item in walker {
        match item {
            Ok(e) => {
                let looks_like = kind_of(e.path()).is_some() || near_source(e.path());
                if !e.file_type().is_file() {
                    // A FIFO or device named like a source: said, never read.
                    if looks_like && !e.file_type().is_dir() {
                        let entry =
                            Entry { file: relative(root, e.path()), path: e.path().to_path_buf(), kind: Kind::Header };
                        errors.push(WalkError { entry, text: "not a regular file; not read".into(), is_loop: true });
                    }
                    continue;
                }
                if let Some(kind) = kind_of(e.path()) {
                    entries.push(Entry { file: relative(root, e.path()), path: e.path().to_path_buf(), kind });
                } else if near_source(e.path()) {
                    let entry =
                        Entry { file: relative(root, e.path()), path: e.path().to_path_buf(), kind: Kind::Ignored };
                    entries.push(entry);
                }
            }
            Err(err) => {
                let path = err.path().map(Path::to_path_buf).unwrap_or_else(|| root.to_path_buf());
                let text = match err.loop_ancestor() {
                    Some(a) => crate::diag::messages::symlink_loop(&relative(root, a)),
                    None => err.io_error().map_or_else(|| err.to_string(), ToString::to_string),
                };
                let entry = Entry { file: relative(root, &path), path, kind: Kind::Header };
                errors.push(WalkError { entry, text, is_loop: err.loop_ancestor().is_some() });
            }
        }
    }
    for path in outside.into_inner() {
        let text = "symbolic link to a directory outside the kernel directory; not followed".to_string();
        let entry = Entry { file: relative(root, &path), path, kind: Kind::Header };
        errors.push(WalkError { entry, text, is_loop: true });
    }
    Ok((entries, errors))
}
