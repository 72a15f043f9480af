//! Writing outputs: only when the bytes change (an untouched mtime means no
//! recompile downstream), and final outputs staged then renamed into place,
//! so a failed build leaves the previous outputs intact.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::model::plan::Outputs;

/// Writes `bytes` to `path` unless it already holds exactly them; creates
/// parent directories. Returns whether it wrote. The write goes to a
/// sibling temporary file renamed over `path`, so readers never see half a file.
pub(crate) fn write_if_changed(path: &Path, bytes: &[u8]) -> Result<bool> {
    if holds(path, bytes) {
        return Ok(false);
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    replace(path, bytes, 0o666).map_err(|e| Error::io(path, e))?;
    Ok(true)
}

/// Whether `path` is a regular file (not a link, a FIFO or a device, which
/// are never read) holding exactly `bytes`.
fn holds(path: &Path, bytes: &[u8]) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file() && m.len() == bytes.len() as u64)
        && std::fs::read(path).is_ok_and(|old| old == bytes)
}

/// Puts `bytes` at `path` in one rename: a fresh sibling temporary file
/// (created new with `mode` less the umask: a link or file already at that
/// name is removed, never written through) renamed over `path`, which
/// replaces a link at `path` rather than following it.
fn replace(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    use std::io::Write;
    let tmp = sibling_tmp(path);
    let _ = std::fs::remove_file(&tmp);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, mode);
    #[cfg(not(unix))]
    let _ = mode;
    let written = options.open(&tmp).and_then(|mut f| f.write_all(bytes)).and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Creates `work/rel` and the folders on the way (owner-only, 0700), and
/// returns it. A symbolic link, or anything but a folder, on the way from
/// `work` is refused: begen never writes out of its work directory.
pub(crate) fn private_dir(work: &Path, rel: &Path) -> Result<PathBuf> {
    let mut dir = work.to_path_buf();
    for part in rel.components() {
        dir.push(part);
        match std::fs::symlink_metadata(&dir) {
            Ok(m) if m.is_dir() => {}
            Ok(m) => {
                let what = if m.file_type().is_symlink() { "a symbolic link" } else { "not a folder" };
                return Err(Error::other(format!(
                    "`{}` in begen's work directory is {what}: begen writes only its own files there and never                      through a link. Remove it (the work directory holds nothing but what begen can make again)",
                    dir.display()
                )));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let mut builder = std::fs::DirBuilder::new();
                #[cfg(unix)]
                std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
                match builder.create(&dir) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && dir.is_dir() => {}
                    Err(e) => return Err(Error::io(&dir, e)),
                }
            }
            Err(e) => return Err(Error::io(&dir, e)),
        }
    }
    Ok(dir)
}

/// Writes the work file `work/rel` (a record, a generated source) unless it
/// already holds exactly `bytes`: owner-only (0600), replaced in one rename,
/// never written through a link (see [`private_dir`]). Returns whether it wrote.
pub(crate) fn write_work_file(work: &Path, rel: &Path, bytes: &[u8]) -> Result<bool> {
    let path = work.join(rel);
    if holds(&path, bytes) {
        return Ok(false);
    }
    private_dir(work, rel.parent().unwrap_or(Path::new("")))?;
    replace(&path, bytes, 0o600).map_err(|e| Error::io(&path, e))?;
    Ok(true)
}

/// [`write_work_file`] for a record whose bytes are seldom the same (no
/// comparison first) and whose folder exists.
pub(crate) fn write_record(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    replace(path, bytes, 0o600)
}

fn sibling_tmp(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(format!(".begen-tmp-{}", std::process::id()));
    path.with_file_name(name)
}

/// Moves each staged output into `out` under its own name unless `out`
/// already has the same bytes (then the staged copy is dropped and the old
/// file, with its mtime, stays). Returns the paths that changed.
///
/// Crash-safe: each file moves in with one `rename`, and `module` (the
/// `<NAME>.py` that loads the library) moves last, so it is the commit
/// point. Before a file is replaced, the old one is kept beside it as
/// `.<file>.begen-old-<build>` (a hard link), `<build>` being the old
/// module's `_BEGEN_BUILD`; the old module loads that kept library while it
/// exists (`_begen_library_file`). So a process killed at any point leaves
/// the old module with its own library, or the new module with the new one;
/// the kept copies go when the commit ends, or at the next commit. If a move
/// fails, the files already moved are put back from their kept copies.
pub(crate) fn commit_staged(staged: &[PathBuf], out: &Path, module: &str) -> Result<Vec<PathBuf>> {
    commit_with(staged, out, module, |from, to| std::fs::rename(from, to))
}

/// The prefix of the kept copies of output `name` (`.<name>.begen-old-`).
fn kept_prefix(name: &str) -> String {
    format!(".{name}{KEPT}")
}

const KEPT: &str = ".begen-old-";

/// The `_BEGEN_BUILD` of the module at `path` (16 hex digits), if it is one
/// begen wrote.
pub(crate) fn module_build(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let id = text.lines().find_map(|l| l.strip_prefix("_BEGEN_BUILD = \"")?.strip_suffix('"'))?;
    (id.len() == 16 && id.bytes().all(|b| b.is_ascii_hexdigit())).then(|| id.to_string())
}

fn commit_with(
    staged: &[PathBuf],
    out: &Path,
    module: &str,
    mut rename: impl FnMut(&Path, &Path) -> std::io::Result<()>,
) -> Result<Vec<PathBuf>> {
    let names: Vec<String> =
        staged.iter().filter_map(|f| f.file_name()).map(|n| n.to_string_lossy().into_owned()).collect();
    // The build the module in OUT is: its kept copies are what it loads
    // after a commit killed half-way, so they stay until this one is done.
    let old = module_build(&out.join(module)).unwrap_or_else(|| "0".repeat(16));
    remove_leftovers(out, &names, Some(&old))?;
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
    // The modules last (each target's): they are what a process imports.
    moves.sort_by_key(|(_, dest)| {
        dest.file_name().is_some_and(|n| n == module) || dest.extension().is_some_and(|e| e == "py")
    });
    let kept_of = |dest: &Path| {
        let name = dest.file_name().unwrap_or_default().to_string_lossy();
        dest.with_file_name(format!("{}{old}", kept_prefix(&name)))
    };
    let mut done: Vec<(PathBuf, PathBuf)> = Vec::new();
    for (file, dest) in &moves {
        let kept = kept_of(dest);
        // A kept copy already there is from a commit killed half-way: it is
        // the old module's library, the one to keep.
        let made = dest.exists() && !kept.exists();
        let result = if made { keep(dest, &kept) } else { Ok(()) }.and_then(|()| rename(file, dest));
        if let Err(e) = result {
            if made {
                let _ = std::fs::remove_file(&kept);
            }
            for (file, dest) in done.into_iter().rev() {
                let _ = rename(&dest, &file);
                let kept = kept_of(&dest);
                if kept.exists() {
                    let _ = rename(&kept, &dest);
                }
            }
            return Err(Error::io(dest, e));
        }
        done.push((file.clone(), dest.clone()));
    }
    remove_leftovers(out, &names, None)?;
    Ok(done.into_iter().map(|(_, dest)| dest).collect())
}

/// Keeps `dest` as `kept`: a hard link, or a copy where the file system
/// has none.
fn keep(dest: &Path, kept: &Path) -> std::io::Result<()> {
    std::fs::hard_link(dest, kept).or_else(|_| std::fs::copy(dest, kept).map(|_| ()))
}

/// Removes what commits killed half-way left in `out` for the outputs
/// `names`: kept copies (except those of build `keep_build`, which the
/// module in OUT may still load), and the temporary files of this and
/// earlier begen versions (`<name>.begen-tmp-<pid>`,
/// `<name>.old.begen-tmp-<pid>`) whose process is gone. Only ever called
/// under OUT's lock.
fn remove_leftovers(out: &Path, names: &[String], keep_build: Option<&str>) -> Result<()> {
    let Ok(entries) = std::fs::read_dir(out) else { return Ok(()) };
    for entry in entries.flatten() {
        let file = entry.file_name();
        let file = file.to_string_lossy();
        let ours = names.iter().any(|name| {
            if let Some(build) = file.strip_prefix(&kept_prefix(name)) {
                return keep_build != Some(build);
            }
            let pid = file
                .strip_prefix(name.as_str())
                .and_then(|rest| rest.strip_prefix(".begen-tmp-").or_else(|| rest.strip_prefix(".old.begen-tmp-")));
            pid.is_some_and(|pid| pid.parse::<u32>().is_ok_and(|pid| !process_alive(pid)))
        });
        if ours && entry.file_type().is_ok_and(|t| t.is_file()) {
            std::fs::remove_file(entry.path()).map_err(|e| Error::io(entry.path(), e))?;
        }
    }
    Ok(())
}

/// Whether process `pid` runs (on Linux; elsewhere, never: a leftover is
/// then removed at the next commit).
fn process_alive(pid: u32) -> bool {
    pid == std::process::id() || Path::new("/proc").join(pid.to_string()).exists()
}

/// Whether the file at `path`, named `rel` under OUT, is one begen wrote
/// for library `library`: each output says so in its first bytes (the
/// module's docstring, the stub's and the generated sources' first
/// comment, the manifest's `library:` and `shared_library:`, the library's
/// exported symbols, which carry its name; another target's library its
/// soname, another target's module or stub "generated by begen" in its
/// first line).
fn written_by_begen(path: &Path, rel: &str, library: &str) -> bool {
    let Ok(bytes) = std::fs::read(path) else { return false };
    let starts = |prefix: String| bytes.starts_with(prefix.as_bytes());
    let outputs = Outputs::of(library);
    if rel == outputs.module {
        starts(format!("\"\"\"{library}: XLA FFI custom calls for JAX, generated by begen."))
    } else if rel == outputs.stub {
        starts(format!("# Type stub for {}, generated by begen.", outputs.module))
    } else if rel == outputs.manifest {
        starts(format!("library: {library}\nshared_library: {}\n", outputs.library))
    } else if rel == outputs.library {
        let has = |needle: String| memchr::memmem::find(&bytes, needle.as_bytes()).is_some();
        bytes.starts_with(b"\x7fELF")
            && (has(format!("{}\0", crate::model::generated::ffi_api_symbol(library)))
                || has(format!("begen_{library}_")))
    } else if rel.ends_with(".so") {
        let soname = format!("{rel}\0");
        bytes.starts_with(b"\x7fELF") && memchr::memmem::find(&bytes, soname.as_bytes()).is_some()
    } else if rel.ends_with(".py") || rel.ends_with(".pyi") {
        let first = bytes.split(|&b| b == b'\n').next().unwrap_or_default();
        memchr::memmem::find(&first.to_ascii_lowercase(), b"generated by begen").is_some()
    } else {
        starts("// Generated by begen ".to_string())
    }
}

/// Refuses to replace a file in OUT that is named like an output of library
/// `library` (`rels`, relative to OUT) but that begen did not write (a
/// user's `setup.py` under `--name setup`), or that is not a file: the
/// error names it. `recorded` are files begen's record says it wrote.
pub(crate) fn refuse_foreign(out: &Path, library: &str, rels: &[String], recorded: &[String]) -> Result<()> {
    for rel in rels {
        let path = out.join(rel);
        let Ok(meta) = std::fs::metadata(&path) else { continue };
        if meta.is_file() && (recorded.contains(rel) || written_by_begen(&path, rel, library)) {
            continue;
        }
        return Err(Error::other(format!(
            "`{}` is in the way: begen would replace it with library {library}'s `{rel}`, but begen did not write \
             it ({}). Move it away, or choose another --out or --name",
            path.display(),
            if meta.is_file() { "it is not a file begen generated for this library" } else { "it is not a file" }
        )));
    }
    Ok(())
}

/// The record of the generated files `begen generate` wrote into OUT for
/// library `library`: `OUT/gen/<library>.begen-files`, one path relative to
/// OUT a line.
fn record_path(out: &Path, library: &str) -> PathBuf {
    out.join("gen").join(format!("{library}.begen-files"))
}

fn read_record(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path).map(|t| t.lines().map(str::to_string).collect()).unwrap_or_default()
}

/// Writes the generated files `files` (path relative to OUT, text) of
/// library `library` into OUT for `begen generate`: each only when its
/// bytes change; a file of another library's record, or one named like
/// these that begen did not write, is refused before anything is written.
/// Then the record is rewritten and the files this library wrote last time
/// and no longer generates are removed (another library's files, and files
/// begen did not write, stay). Returns the paths written or kept.
pub(crate) fn write_generated_files(out: &Path, library: &str, files: &[(&str, &str)]) -> Result<Vec<PathBuf>> {
    let record = record_path(out, library);
    let previous = read_record(&record);
    let suffix = ".begen-files";
    if let Ok(entries) = std::fs::read_dir(out.join("gen")) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(other) = name.strip_suffix(suffix).filter(|o| *o != library) else { continue };
            let theirs = read_record(&entry.path());
            if let Some((rel, _)) = files.iter().find(|(rel, _)| theirs.iter().any(|t| t == rel)) {
                return Err(Error::other(format!(
                    "`{}` is library {other}'s generated file (its record `{}` lists it), and library {library} \
                     would write its own there: generate the two libraries into different --out directories",
                    out.join(rel).display(),
                    entry.path().display()
                )));
            }
        }
    }
    let rels: Vec<String> = files.iter().map(|(rel, _)| rel.to_string()).collect();
    refuse_foreign(out, library, &rels, &previous)?;
    let mut written = Vec::new();
    for (rel, text) in files {
        let path = out.join(rel);
        write_if_changed(&path, text.as_bytes())?;
        written.push(path);
    }
    let mut listed = rels.clone();
    listed.sort();
    write_if_changed(&record, format!("{}\n", listed.join("\n")).as_bytes())?;
    for rel in previous.iter().filter(|p| !rels.contains(p)) {
        // Only what the record names, and only plain relative paths.
        let safe = !rel.is_empty() && Path::new(rel).components().all(|c| matches!(c, std::path::Component::Normal(_)));
        let path = out.join(rel);
        if safe && path.is_file() {
            std::fs::remove_file(&path).map_err(|e| Error::io(&path, e))?;
        }
    }
    Ok(written)
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
        let err = commit_with(&staged, &out, "a.py", |from, to| {
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
        assert_eq!(std::fs::read_dir(&out).unwrap().count(), 3, "no kept copies left behind");
        let changed = commit_staged(&staged, &out, "a.py").unwrap();
        assert_eq!(changed.len(), 3);
        assert_eq!(std::fs::read_to_string(out.join("libk.so")).unwrap(), "new so");
        assert_eq!(std::fs::read_dir(&out).unwrap().count(), 3, "no backups left behind");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[cfg(test)]
mod crash {
    use super::*;

    /// The library the module in `out` loads (`_begen_library_file`).
    fn loaded(out: &Path) -> String {
        let build = module_build(&out.join("k.py")).unwrap();
        let kept = out.join(format!(".libk.so{KEPT}{build}"));
        std::fs::read_to_string(if kept.is_file() { kept } else { out.join("libk.so") }).unwrap()
    }

    fn module(build: char) -> String {
        format!(
            "\"\"\"k: XLA FFI custom calls for JAX, generated by begen.\"\"\"\n_BEGEN_BUILD = \"{}\"\n",
            build.to_string().repeat(16)
        )
    }

    /// A process killed before each rename of a commit (a panic out of the
    /// rename: nothing after it runs) leaves the old module with the old
    /// library or the new module with the new one; the next commit
    /// finishes and removes every leftover.
    #[test]
    fn a_commit_killed_at_any_rename_leaves_one_build_working() {
        let dir = std::env::temp_dir().join(format!("begen-crash-{}", std::process::id()));
        let files = [
            ("libk.so", "so a".to_string(), "so b".to_string()),
            ("k.py", module('a'), module('b')),
            ("k.pyi", "stub a".into(), "stub b".into()),
            ("k.yaml", "a".into(), "b".into()),
        ];
        let (stage, out) = (dir.join("stage"), dir.join("out"));
        let restage = || {
            std::fs::create_dir_all(&stage).unwrap();
            files
                .iter()
                .map(|(name, _, new)| {
                    std::fs::write(stage.join(name), new).unwrap();
                    stage.join(name)
                })
                .collect::<Vec<_>>()
        };
        let (a, b) = (("a".repeat(16), "so a".to_string()), ("b".repeat(16), "so b".to_string()));
        for kill_at in 1..=5 {
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&out).unwrap();
            for (name, old, _) in &files {
                std::fs::write(out.join(name), old).unwrap();
            }
            // A leftover of an older begen's killed commit.
            std::fs::write(out.join("libk.so.old.begen-tmp-4194999"), "x").unwrap();
            let staged = restage();
            let mut calls = 0;
            let killed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                commit_with(&staged, &out, "k.py", |from, to| {
                    calls += 1;
                    assert!(calls != kill_at, "killed");
                    std::fs::rename(from, to)
                })
            }));
            let pair = (module_build(&out.join("k.py")).unwrap(), loaded(&out));
            match killed {
                // Renames 1 to 3 are the library, the stub and the manifest; the module is the 4th.
                Err(_) => assert_eq!(pair, if kill_at <= 4 { a.clone() } else { b.clone() }, "killed at {kill_at}"),
                Ok(done) => {
                    assert_eq!(done.unwrap().len(), 4);
                    assert_eq!(pair, b);
                }
            }
            // The next build commits the same files again and cleans up.
            commit_staged(&restage(), &out, "k.py").unwrap();
            assert_eq!((module_build(&out.join("k.py")).unwrap(), loaded(&out)), b);
            let mut held: Vec<String> =
                std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into()).collect();
            held.sort();
            assert_eq!(held, ["k.py", "k.pyi", "k.yaml", "libk.so"], "killed at rename {kill_at}");
        }
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
