//! Where a build keeps its work files, and who may build at once.
//!
//! OUT holds the four outputs and nothing else, so the work files (the
//! generated TUs, objects with their depfiles and commands, the support
//! headers, the work directory's lock) live in a work directory outside it:
//! `--work-dir DIR` (or [`crate::Build::work_dir`]) makes it `DIR/<NAME>`;
//! without one it is `<cache>/begen/work/<key>/<NAME>`, `<cache>` being
//! `$XDG_CACHE_HOME` (else `~/.cache`) and `<key>` a hash of OUT's canonical
//! path. Such a default work directory belongs to one OUT: when OUT was
//! made anew (`rm -rf OUT`), its old work files are dropped, so a fresh OUT
//! is a clean build, as when the work files lived inside it.
//!
//! Two locks, always taken in this order: OUT's own directory (so builds
//! into one OUT are serialised whatever their work directories), then the
//! work directory's `lock` file (so builds sharing one work directory are
//! too). The staging folder for the all-or-nothing commit is on OUT's
//! file system (renames cannot cross file systems): `OUT/.begen-stage-<NAME>`,
//! made under OUT's lock and removed after the commit, failed or not.

use std::fs::File;
use std::path::{Path, PathBuf};

use super::{Env, Reporter};
use crate::error::{Error, Result};
use crate::model::generated::fnv1a;

/// The work directory of one build, held (locked) while the value lives.
pub(crate) struct Workspace {
    /// The library's work directory (absolute: compilers run in it).
    pub dir: PathBuf,
    /// OUT, canonical.
    pub out: PathBuf,
    _out_lock: File,
    _work_lock: File,
}

impl Workspace {
    /// Creates OUT and the work directory of library `name` (under
    /// `work_dir` when one is given), and takes
    /// both locks (waiting, and saying so, while another build holds one).
    pub(crate) fn open(
        out: &Path,
        work_dir: Option<&Path>,
        name: &str,
        env: &Env,
        reporter: &mut dyn Reporter,
    ) -> Result<Workspace> {
        std::fs::create_dir_all(out).map_err(|e| Error::io(out, e))?;
        let out = std::fs::canonicalize(out).map_err(|e| Error::io(out, e))?;
        // A directory can be locked like a file (flock on its descriptor):
        // OUT gains no lock file.
        let out_lock = lock(File::open(&out).map_err(|e| Error::io(&out, e))?, &out, reporter)?;
        let (dir, owned) = match work_dir {
            Some(root) => (root.join(name), false),
            None => (default_root(&out, env).join(name), true),
        };
        create_private(&dir)?;
        let dir = std::path::absolute(&dir).map_err(|e| Error::io(&dir, e))?;
        let path = dir.join("lock");
        // Opened for writing: a link there would be followed.
        if std::fs::symlink_metadata(&path).is_ok_and(|m| !m.is_file()) {
            let _ = std::fs::remove_file(&path);
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        let work_lock = lock(file, &path, reporter)?;
        if owned {
            claim(&dir, &out)?;
        }
        Ok(Workspace { dir, out, _out_lock: out_lock, _work_lock: work_lock })
    }

    /// A fresh, empty staging folder for library `name` inside OUT, removed
    /// when the returned value is dropped.
    pub(crate) fn stage(&self, name: &str) -> Result<Stage> {
        let dir = self.out.join(format!(".begen-stage-{name}"));
        // Under OUT's lock, one left behind is a killed build's.
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        }
        std::fs::create_dir(&dir).map_err(|e| Error::io(&dir, e))?;
        Ok(Stage(dir))
    }
}

/// A staging folder in OUT, removed on drop.
pub(crate) struct Stage(pub PathBuf);

impl Drop for Stage {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Creates the work directory `dir` (with its parents) for its owner only
/// (0700: the work files hold the build's commands and the compiler's
/// output), and makes one that exists so.
fn create_private(dir: &Path) -> Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir).map_err(|e| Error::io(dir, e))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let meta = std::fs::metadata(dir).map_err(|e| Error::io(dir, e))?;
        if meta.permissions().mode() & 0o077 != 0 {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(|e| Error::io(dir, e))?;
        }
    }
    Ok(())
}

/// Takes `file`'s lock (released when it closes).
fn lock(file: File, path: &Path, reporter: &mut dyn Reporter) -> Result<File> {
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            reporter.progress(&format!("Blocking waiting for file lock on {}", path.display()));
            file.lock().map_err(|e| Error::io(path, e))?;
        }
        Err(std::fs::TryLockError::Error(e)) => return Err(Error::io(path, e)),
    }
    Ok(file)
}

/// The default work root of OUT: `<cache>/begen/work/<key>`.
fn default_root(out: &Path, env: &Env) -> PathBuf {
    let cache = env.user_cache().unwrap_or_else(|| std::env::temp_dir().join("begen-cache").join("begen"));
    cache.join("work").join(format!("{:016x}", fnv1a(out.as_os_str().as_encoded_bytes())))
}

/// Makes `dir` (a default work directory) OUT's: its record `out` names
/// OUT and when OUT was made. Another record (OUT made anew, or another OUT
/// with the same key) drops every work file but the lock first.
fn claim(dir: &Path, out: &Path) -> Result<()> {
    let born = std::fs::metadata(out)
        .and_then(|m| m.created())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or_else(|| "unknown".to_string(), |d| d.as_nanos().to_string());
    let record = format!("{}\n{born}\n", out.display());
    let path = dir.join("out");
    if std::fs::read_to_string(&path).is_ok_and(|old| old == record) {
        return Ok(());
    }
    for entry in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let path = entry.path();
        if entry.file_name() == "lock" {
            continue;
        }
        let removed = if entry.file_type().is_ok_and(|t| t.is_dir()) {
            std::fs::remove_dir_all(&path)
        } else {
            std::fs::remove_file(&path)
        };
        removed.map_err(|e| Error::io(&path, e))?;
    }
    super::files::write_record(&path, record.as_bytes()).map_err(|e| Error::io(&path, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::Settings;

    struct Quiet(Vec<String>);
    impl Reporter for Quiet {
        fn diagnostic(&mut self, _: &crate::diag::Diagnostic, _: &crate::source::SourceMap) {}
        fn progress(&mut self, line: &str) {
            self.0.push(line.to_string());
        }
        fn compiler_output(&mut self, _: &str, _: &str) {}
    }

    /// A fresh scratch folder and settings whose OUT is its `out`.
    fn scratch(name: &str) -> (PathBuf, Settings) {
        let dir = std::env::temp_dir().join(format!("begen-work-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut settings = Settings::new("kernels");
        settings.out = Some(dir.join("out"));
        (dir, settings)
    }

    #[test]
    fn the_default_work_directory_is_a_cache_keyed_by_out_outside_it() {
        let (dir, settings) = scratch("default");
        let env = Env::new().with("XDG_CACHE_HOME", &dir.join("cache").display().to_string());
        let work = Workspace::open(settings.out_dir(), settings.work_dir.as_deref(), "k", &env, &mut Quiet(Vec::new()))
            .unwrap();
        let out = std::fs::canonicalize(dir.join("out")).unwrap();
        let key = format!("{:016x}", fnv1a(out.as_os_str().as_encoded_bytes()));
        assert_eq!(work.dir, dir.join("cache/begen/work").join(key).join("k"));
        assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0, "OUT gets no lock file");
        assert!(work.dir.join("lock").is_file());
        drop(work);

        // A relative XDG_CACHE_HOME is ignored (HOME's .cache instead).
        let env = Env::new().with("XDG_CACHE_HOME", "rel").with("HOME", &dir.join("home").display().to_string());
        let work = Workspace::open(settings.out_dir(), settings.work_dir.as_deref(), "k", &env, &mut Quiet(Vec::new()))
            .unwrap();
        assert!(work.dir.starts_with(dir.join("home/.cache/begen/work")), "{}", work.dir.display());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_new_out_drops_the_old_work_files_and_a_given_work_dir_is_kept() {
        let (dir, mut settings) = scratch("claim");
        let env = Env::new().with("XDG_CACHE_HOME", &dir.join("cache").display().to_string());
        let open = |settings: &Settings| {
            Workspace::open(settings.out_dir(), settings.work_dir.as_deref(), "k", &env, &mut Quiet(Vec::new()))
                .unwrap()
        };
        let work = open(&settings).dir.clone();
        std::fs::create_dir_all(work.join("obj")).unwrap();
        std::fs::write(work.join("obj/a.o"), "object").unwrap();
        assert!(open(&settings).dir.join("obj/a.o").is_file(), "the same OUT keeps its objects");
        // OUT made anew: a clean build.
        std::fs::remove_dir_all(dir.join("out")).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let again = open(&settings).dir.clone();
        if std::fs::metadata(dir.join("out")).unwrap().created().is_ok() {
            assert!(!again.join("obj").exists(), "a new OUT starts clean");
        }
        // A work directory given is the user's: nothing is dropped there.
        settings.work_dir = Some(dir.join("mine"));
        std::fs::create_dir_all(dir.join("mine/k/obj")).unwrap();
        std::fs::write(dir.join("mine/k/obj/b.o"), "object").unwrap();
        let mine = open(&settings);
        assert_eq!(mine.dir, dir.join("mine/k"));
        assert!(mine.dir.join("obj/b.o").is_file() && !mine.dir.join("out").exists());
        drop(mine);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_stage_is_in_out_and_goes_away() {
        let (dir, mut settings) = scratch("stage");
        settings.work_dir = Some(dir.join("work"));
        let work =
            Workspace::open(settings.out_dir(), settings.work_dir.as_deref(), "k", &Env::new(), &mut Quiet(Vec::new()))
                .unwrap();
        let stage = work.stage("k").unwrap();
        std::fs::write(stage.0.join("libk.so"), "x").unwrap();
        assert_eq!(stage.0.parent(), Some(work.out.as_path()));
        drop(stage);
        assert_eq!(std::fs::read_dir(&work.out).unwrap().count(), 0);
        drop(work);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
