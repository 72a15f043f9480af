//! Writing outputs: only when the bytes change (an untouched mtime means no
//! recompile downstream), and final outputs staged then renamed into place,
//! so a failed build leaves the previous outputs intact.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Writes `bytes` to `path` unless it already holds exactly them; creates
/// parent directories. Returns whether it wrote. The write goes to a
/// sibling temporary file renamed over `path`, so readers never see half a file.
pub fn write_if_changed(path: &Path, bytes: &[u8]) -> Result<bool> {
    if std::fs::read(path).is_ok_and(|old| old == bytes) {
        return Ok(false);
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    let tmp = sibling_tmp(path);
    std::fs::write(&tmp, bytes).map_err(|e| Error::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))?;
    Ok(true)
}

fn sibling_tmp(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(format!(".begen-tmp-{}", std::process::id()));
    path.with_file_name(name)
}

/// Moves each staged file into `out` under its own name unless `out`
/// already has the same bytes (then the staged copy is dropped and the old
/// file, with its mtime, stays). Returns the paths that changed.
pub fn commit_staged(staged: &[PathBuf], out: &Path) -> Result<Vec<PathBuf>> {
    let mut changed = Vec::new();
    for file in staged {
        let Some(name) = file.file_name() else {
            continue;
        };
        let dest = out.join(name);
        let same = match (std::fs::read(file), std::fs::read(&dest)) {
            (Ok(new), Ok(old)) => new == old,
            (Err(e), _) => return Err(Error::io(file, e)),
            _ => false,
        };
        if same {
            std::fs::remove_file(file).map_err(|e| Error::io(file, e))?;
        } else {
            std::fs::rename(file, &dest).map_err(|e| Error::io(&dest, e))?;
            changed.push(dest);
        }
    }
    Ok(changed)
}

/// Removes begen's own generated translation units directly in `dir`
/// (`*.begen.cc`, `*.begen.cu`: what emit names them) that are not in
/// `keep` (those of deleted sources), leaving every other file alone: OUT
/// may be a folder the user keeps other things in. Missing `dir` is fine.
pub fn remove_stale(dir: &Path, keep: &[PathBuf]) -> Result<()> {
    if !dir.is_dir() {
        return Ok(());
    }
    let ours = |name: &str| name.ends_with(".begen.cc") || name.ends_with(".begen.cu");
    for entry in walkdir::WalkDir::new(dir).max_depth(1).sort_by_file_name() {
        let entry = entry.map_err(|e| {
            let path = e.path().unwrap_or(dir).to_path_buf();
            Error::io(path, e.into())
        })?;
        let name = entry.file_name().to_string_lossy();
        if entry.file_type().is_file() && ours(&name) && !keep.iter().any(|k| k == entry.path()) {
            std::fs::remove_file(entry.path()).map_err(|e| Error::io(entry.path(), e))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod examples {
    #[test]
    fn write_if_changed() {
        let p = std::env::temp_dir().join(format!("begen-doc-{}", std::process::id()));
        assert!(crate::build::files::write_if_changed(&p, b"x").unwrap());
        assert!(!crate::build::files::write_if_changed(&p, b"x").unwrap());
        std::fs::remove_file(p).unwrap();
    }
}
