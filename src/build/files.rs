//! Writing outputs: only when the bytes change (an untouched mtime means no
//! recompile downstream), and final outputs staged then renamed into place,
//! so a failed build leaves the previous outputs intact.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Writes `bytes` to `path` unless it already holds exactly them; creates
/// parent directories. Returns whether it wrote. The write goes to a
/// sibling temporary file renamed over `path`, so readers never see half a file.
pub(crate) fn write_if_changed(path: &Path, bytes: &[u8]) -> Result<bool> {
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
/// file, with its mtime, stays). Returns the paths that changed. All or
/// nothing: if one move fails, the files already moved are taken back and
/// the old ones restored, so OUT never mixes two builds.
pub(crate) fn commit_staged(staged: &[PathBuf], out: &Path) -> Result<Vec<PathBuf>> {
    commit_with(staged, out, |from, to| std::fs::rename(from, to))
}

fn commit_with(
    staged: &[PathBuf],
    out: &Path,
    mut rename: impl FnMut(&Path, &Path) -> std::io::Result<()>,
) -> Result<Vec<PathBuf>> {
    // Read and compare everything first: nothing moves before all is known.
    let mut moves = Vec::new();
    for file in staged {
        let Some(name) = file.file_name() else { continue };
        let dest = out.join(name);
        let same = match (std::fs::read(file), std::fs::read(&dest)) {
            (Ok(new), Ok(old)) => new == old,
            (Err(e), _) => return Err(Error::io(file, e)),
            _ => false,
        };
        if same {
            std::fs::remove_file(file).map_err(|e| Error::io(file, e))?;
        } else {
            moves.push((file.clone(), dest));
        }
    }
    // Each old file steps aside before its new one moves in.
    let mut done: Vec<(PathBuf, PathBuf, Option<PathBuf>)> = Vec::new();
    for (file, dest) in &moves {
        let backup = dest.exists().then(|| {
            sibling_tmp(&dest.with_extension(format!(
                "{}.old",
                dest.extension().map(|e| e.to_string_lossy().into_owned()).unwrap_or_default()
            )))
        });
        let result = match &backup {
            Some(b) => rename(dest, b).and_then(|()| {
                rename(file, dest).inspect_err(|_| {
                    let _ = rename(b, dest);
                })
            }),
            None => rename(file, dest),
        };
        if let Err(e) = result {
            for (file, dest, backup) in done.into_iter().rev() {
                let _ = rename(&dest, &file);
                if let Some(b) = backup {
                    let _ = rename(&b, &dest);
                }
            }
            return Err(Error::io(dest, e));
        }
        done.push((file.clone(), dest.clone(), backup));
    }
    let mut changed = Vec::new();
    for (_, dest, backup) in done {
        if let Some(b) = backup {
            let _ = std::fs::remove_file(b);
        }
        changed.push(dest);
    }
    Ok(changed)
}

/// Removes begen's own generated translation units directly in `dir`
/// (`*.begen.cc`, `*.begen.cu`: what emit names them) that are not in
/// `keep` (those of deleted sources), leaving every other file alone: OUT
/// may be a folder the user keeps other things in. Missing `dir` is fine.
pub(crate) fn remove_stale(dir: &Path, keep: &[PathBuf]) -> Result<()> {
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
mod tests {
    use super::*;

    #[test]
    fn a_failed_move_puts_every_old_output_back() {
        let dir = std::env::temp_dir().join(format!("begen-commit-{}", std::process::id()));
        let (stage, out) = (dir.join("stage"), dir.join("out"));
        std::fs::create_dir_all(&stage).unwrap();
        std::fs::create_dir_all(&out).unwrap();
        for (name, old, new) in
            [("a.py", "old a", "new a"), ("b.yaml", "old b", "new b"), ("libk.so", "old so", "new so")]
        {
            std::fs::write(out.join(name), old).unwrap();
            std::fs::write(stage.join(name), new).unwrap();
        }
        let staged: Vec<PathBuf> = ["a.py", "b.yaml", "libk.so"].iter().map(|n| stage.join(n)).collect();
        // The third new file cannot move in.
        let mut calls = 0;
        let err = commit_with(&staged, &out, |from, to| {
            calls += 1;
            if from.ends_with("libk.so") && from.starts_with(&stage) {
                return Err(std::io::Error::other("immutable"));
            }
            std::fs::rename(from, to)
        });
        assert!(err.is_err() && calls > 2);
        for (name, old) in [("a.py", "old a"), ("b.yaml", "old b"), ("libk.so", "old so")] {
            assert_eq!(std::fs::read_to_string(out.join(name)).unwrap(), old, "{name}");
        }
        // And when every move works, all are new.
        let changed = commit_staged(&staged, &out).unwrap();
        assert_eq!(changed.len(), 3);
        assert_eq!(std::fs::read_to_string(out.join("libk.so")).unwrap(), "new so");
        assert_eq!(std::fs::read_dir(&out).unwrap().count(), 3, "no backups left behind");
        std::fs::remove_dir_all(&dir).unwrap();
    }
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
