//! Compiling translation units to objects, one compiler run per TU, with a
//! per-object cache so touching one source recompiles one TU.
//!
//! cc decides the compiler and its flags (`cc::Build::try_get_compiler`),
//! begen runs the commands itself: cc recompiles every file of a `Build`
//! each time and only makes static archives, while begen needs stable
//! per-TU objects for a shared library.
//!
//! An object is up to date when its recorded command line (`<obj>.cmd`) is
//! the same and neither the source nor any header the compiler listed in the
//! depfile (`-MMD -MF <obj>.d`, which gcc, clang and nvcc all write) is newer
//! than it. Commands run in the work directory with relative paths for
//! generated files, so objects do not depend on where OUT is.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::SystemTime;

use super::Reporter;
use super::process::{self, Stopped};
use crate::error::{Error, Result};
use crate::model::Platform;

/// One translation unit to compile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unit {
    /// The file handed to the compiler: absolute for user sources, relative
    /// to the work directory for generated ones.
    pub(crate) source: PathBuf,
    /// How progress lines name it (`sub/a.cu`, `gen/sub/a.begen.cu`).
    pub(crate) name: String,
    pub(crate) platform: Platform,
    /// The object, relative to the work directory.
    pub(crate) object: PathBuf,
    /// What else the object depends on that no depfile lists (the XLA FFI
    /// headers, which come in through `-isystem`), as a fingerprint: a
    /// change rebuilds the unit.
    pub(crate) fingerprint: String,
    /// How long it is expected to take, relative to the others (bytes of
    /// source, nvcc's weighted more): a build with no compile times on
    /// record yet starts the heaviest units first.
    pub(crate) weight: u64,
}

/// A compiler program and the flags every TU of one kind gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CompilerCmd {
    pub(crate) program: PathBuf,
    pub(crate) args: Vec<OsString>,
    pub(crate) env: Vec<(OsString, OsString)>,
}

impl CompilerCmd {
    /// Takes program, flags and environment from a cc tool; `program`
    /// replaces cc's choice (nvcc found by begen rather than `$NVCC`).
    pub(crate) fn from_tool(tool: &cc::Tool, program: Option<&Path>) -> CompilerCmd {
        CompilerCmd {
            program: program.map(Path::to_path_buf).unwrap_or_else(|| tool.path().to_path_buf()),
            args: tool.args().to_vec(),
            env: tool.get_envs().map(|(k, v)| (k.to_owned(), v.to_owned())).collect(),
        }
    }

    /// The full argv for one unit.
    pub(crate) fn argv(&self, unit: &Unit) -> Vec<OsString> {
        let mut argv = vec![self.program.clone().into_os_string()];
        argv.extend(self.args.iter().cloned());
        argv.push("-MMD".into());
        argv.push("-MF".into());
        argv.push(depfile(&unit.object).into_os_string());
        argv.push("-c".into());
        argv.push(unit.source.clone().into_os_string());
        argv.push("-o".into());
        argv.push(unit.object.clone().into_os_string());
        argv
    }
}

/// The compilers of one build: host C++ always, nvcc when CUDA TUs exist.
#[derive(Debug, Clone)]
pub(crate) struct Compilers {
    pub(crate) host: CompilerCmd,
    pub(crate) cuda: Option<CompilerCmd>,
}

impl Compilers {
    fn for_unit(&self, unit: &Unit) -> Result<&CompilerCmd> {
        match unit.platform {
            Platform::Cpu => Ok(&self.host),
            Platform::Cuda => self
                .cuda
                .as_ref()
                .ok_or_else(|| Error::other(format!("internal: no CUDA compiler for `{}`", unit.name))),
        }
    }
}

/// What a compile pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct CompileStats {
    pub(crate) compiled: usize,
    pub(crate) up_to_date: usize,
}

fn depfile(object: &Path) -> PathBuf {
    with_suffix(object, ".d")
}

fn stampfile(object: &Path) -> PathBuf {
    with_suffix(object, ".cmd")
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

fn stamp_text(argv: &[OsString], fingerprint: &str) -> String {
    let mut text: String = argv.iter().map(|a| a.to_string_lossy() + "\n").collect();
    if !fingerprint.is_empty() {
        text.push_str(&format!("# {fingerprint}\n"));
    }
    text
}

/// The record of what an object was built from: one line per file it
/// depends on, `<mtime ns> <size> <content hash> <path>`.
/// The seconds the object's last compile took, kept beside it to order the
/// next build's units.
fn secsfile(object: &Path) -> PathBuf {
    with_suffix(object, ".secs")
}

/// The order to start `stale` in: the longest compile first, so that the
/// last ones to finish are short and every job slot stays busy to the end
/// (a tree of many sources of very different sizes, like brainevent's,
/// otherwise ends with one long compile running alone). By the times on
/// record when every unit has one, else by the units' weights; ties keep
/// their order.
fn longest_first(work: &Path, stale: &mut Vec<(&Unit, Vec<OsString>)>) {
    let recorded: Option<Vec<f64>> = stale
        .iter()
        .map(|(u, _)| std::fs::read_to_string(work.join(secsfile(&u.object))).ok()?.trim().parse().ok())
        .collect();
    // Weights are byte counts, exact as f64.
    let cost = recorded.unwrap_or_else(|| stale.iter().map(|(u, _)| u.weight as f64).collect());
    let mut keyed: Vec<_> = cost.into_iter().zip(std::mem::take(stale)).collect();
    keyed.sort_by(|a, b| b.0.total_cmp(&a.0));
    stale.extend(keyed.into_iter().map(|(_, s)| s));
}

fn depsfile(object: &Path) -> PathBuf {
    with_suffix(object, ".deps")
}

/// A file's modification time in nanoseconds and size, cheap to compare.
fn stat(path: &Path) -> Option<(u128, u64)> {
    let m = std::fs::metadata(path).ok()?;
    let t = m.modified().ok()?.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    Some((t, m.len()))
}

/// A hash of a file's bytes (to tell a changed file from one whose time
/// only moved, or an older copy put back with its old time). Regular files
/// only: reading a FIFO or a device (`/dev/stdin`) could block, or never end.
pub(crate) fn content_hash(path: &Path) -> Option<u64> {
    use std::hash::{Hash, Hasher};
    if !std::fs::metadata(path).ok()?.is_file() {
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut h);
    Some(h.finish())
}

/// Writes the record of `deps` (paths relative to `work` or absolute);
/// returns those that are not regular files (a FIFO, a device), whose
/// contents are not hashed and so not tracked.
fn record_deps(work: &Path, object: &Path, deps: &[PathBuf]) -> std::io::Result<Vec<PathBuf>> {
    let mut text = String::new();
    let mut untracked = Vec::new();
    for dep in deps {
        let path = work.join(dep);
        if std::fs::metadata(&path).is_ok_and(|m| !m.is_file()) {
            untracked.push(dep.clone());
        }
        let ((t, size), hash) = (stat(&path).unwrap_or_default(), content_hash(&path).unwrap_or_default());
        text.push_str(&format!("{t} {size} {hash:016x} {}\n", dep.display()));
    }
    std::fs::write(work.join(depsfile(object)), text)?;
    Ok(untracked)
}

/// Compiles every stale unit (in parallel, `jobs` at a time), reporting
/// `compiling 3/12 name` lines (and, with `explain`, why each unit is
/// stale), and returns how many ran. All failures are
/// collected into one `Error` of kind `Compile`.
pub(crate) fn compile_units(
    work: &Path,
    units: &[Unit],
    compilers: &Compilers,
    jobs: usize,
    explain: bool,
    timeout: std::time::Duration,
    reporter: &mut dyn Reporter,
) -> Result<CompileStats> {
    let mut stale = Vec::new();
    for unit in units {
        let argv = compilers.for_unit(unit)?.argv(unit);
        if let Some(why) = staleness(work, unit, &argv) {
            if explain {
                reporter.progress(&format!("{}: {why}", unit.name));
            }
            stale.push((unit, argv));
        }
    }
    let stats = CompileStats { compiled: stale.len(), up_to_date: units.len() - stale.len() };
    if stale.is_empty() {
        return Ok(stats);
    }
    longest_first(work, &mut stale);
    for (unit, _) in &stale {
        let dir = work.join(&unit.object);
        if let Some(parent) = dir.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        }
    }

    let total = stale.len();
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<Event>();
    let mut failures = Vec::new();
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, total) {
            let tx = tx.clone();
            let (next, stale) = (&next, &stale);
            scope.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some((unit, argv)) = stale.get(i) else {
                        break;
                    };
                    let env = &compilers.for_unit(unit).map(|c| c.env.clone()).unwrap_or_default();
                    let _ = tx.send(Event::Started(i));
                    let result = run_one(work, unit, argv, env, timeout);
                    let _ = tx.send(Event::Finished(i, result));
                }
            });
        }
        drop(tx);
        let mut started = 0;
        let clock = std::time::Instant::now();
        for event in rx {
            match event {
                Event::Started(i) => {
                    started += 1;
                    let elapsed = clock.elapsed().as_secs_f64();
                    reporter.progress(&format!("[{elapsed:6.1}s] compiling {started}/{total} {}", stale[i].0.name));
                }
                Event::Finished(i, Ok(output)) => {
                    if !output.trim().is_empty() {
                        reporter.compiler_output(&stale[i].0.name, &output);
                    }
                }
                Event::Finished(i, Err(output)) => failures.push((stale[i].0.name.clone(), output)),
            }
        }
    });
    if failures.is_empty() {
        return Ok(stats);
    }
    failures.sort();
    let what = match failures.as_slice() {
        [(name, _)] => format!("compiling {name}"),
        many => format!("compiling {} translation units", many.len()),
    };
    let output =
        failures.iter().map(|(name, out)| format!("--- {name}\n{}", out.trim_end())).collect::<Vec<_>>().join("\n");
    Err(Error::compile(what, output))
}

enum Event {
    Started(usize),
    Finished(usize, std::result::Result<String, String>),
}

/// Runs one compile; `Ok(warnings)` or `Err(command + output)`. A compile
/// that runs past `timeout` (a source that includes `/dev/zero`, a runaway
/// template) is stopped.
fn run_one(
    work: &Path,
    unit: &Unit,
    argv: &[OsString],
    env: &[(OsString, OsString)],
    timeout: std::time::Duration,
) -> std::result::Result<String, String> {
    let stamp = work.join(stampfile(&unit.object));
    let _ = std::fs::remove_file(&stamp);
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..]).current_dir(work);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let shown = argv.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>().join(" ");
    let start = std::time::Instant::now();
    let text = |out: &[u8], err: &[u8]| String::from_utf8_lossy(out).into_owned() + &String::from_utf8_lossy(err);
    let finished = match process::run_bounded(&mut cmd, timeout, u64::MAX) {
        Ok(f) => f,
        Err(Stopped::Spawn(e)) => {
            return Err(format!("command: {shown}\ncould not run `{}`: {e}", argv[0].to_string_lossy()));
        }
        Err(Stopped::Wait(e)) => return Err(format!("command: {shown}\nwaiting for it failed: {e}")),
        Err(Stopped::Timeout(out, err)) => {
            return Err(format!(
                "command: {shown}\n{}it did not finish within {} s and was stopped (BEGEN_COMPILE_TIMEOUT sets \
                 the limit, in seconds)",
                text(&out, &err),
                timeout.as_secs()
            ));
        }
        Err(Stopped::TooMuch) => return Err(format!("command: {shown}\nits output had no end")),
    };
    let mut text = text(&finished.stdout, &finished.stderr);
    if !finished.status.success() {
        return Err(format!("command: {shown}\n{text}"));
    }
    let deps = std::fs::read_to_string(work.join(depfile(&unit.object))).unwrap_or_default();
    let untracked = record_deps(work, &unit.object, &parse_depfile(&deps))
        .map_err(|e| format!("writing the dependencies of {}: {e}", unit.object.display()))?;
    for dep in untracked {
        text.push_str(&crate::diag::messages::untracked_dependency(&dep.display().to_string()));
        text.push('\n');
    }
    std::fs::write(&stamp, stamp_text(argv, &unit.fingerprint))
        .map_err(|e| format!("writing {}: {e}", stamp.display()))?;
    // Only to order the next build: a failure to write it is no error.
    let _ = std::fs::write(work.join(secsfile(&unit.object)), format!("{:.3}\n", start.elapsed().as_secs_f64()));
    Ok(text)
}

/// `None` when the object exists, was built by the same command, and no
/// file it depends on changed since: same time and size as recorded, or
/// else the same bytes. Contents decide, not times: a source put back with
/// an older date (`cp -p`, `tar x`, `rsync -a`) is seen.
fn staleness(work: &Path, unit: &Unit, argv: &[OsString]) -> Option<String> {
    if !work.join(&unit.object).is_file() {
        return Some("no object yet".into());
    }
    match std::fs::read_to_string(work.join(stampfile(&unit.object))) {
        Ok(stamp) if stamp == stamp_text(argv, &unit.fingerprint) => {}
        Ok(_) => return Some("the command line or the XLA FFI headers changed".into()),
        Err(_) => return Some("no record of the last command".into()),
    }
    let Ok(record) = std::fs::read_to_string(work.join(depsfile(&unit.object))) else {
        return Some("no record of its dependencies".into());
    };
    if record.trim().is_empty() {
        return Some("no dependencies recorded".into());
    }
    record.lines().find_map(|line| {
        let mut parts = line.splitn(4, ' ');
        let (t, size, hash, dep) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
        let path = work.join(dep);
        let recorded = (t.parse::<u128>().ok()?, size.parse::<u64>().ok()?);
        match stat(&path) {
            None => Some(format!("{dep} is gone")),
            Some(now) if now == recorded => None,
            Some(_) if content_hash(&path).map(|h| format!("{h:016x}")).as_deref() == Some(hash) => None,
            Some(_) => Some(format!("{dep} changed")),
        }
    })
}

/// The prerequisites of a Makefile-style depfile (`obj: a.cc b.h \` ...).
pub(crate) fn parse_depfile(text: &str) -> Vec<PathBuf> {
    let joined = text.replace("\\\r\n", " ").replace("\\\n", " ");
    let mut deps = Vec::new();
    for line in joined.lines() {
        // The target ends at the first ':' followed by whitespace or the end.
        let bytes = line.as_bytes();
        let Some(colon) =
            (0..bytes.len()).find(|&i| bytes[i] == b':' && bytes.get(i + 1).is_none_or(|b| b.is_ascii_whitespace()))
        else {
            continue;
        };
        let mut word = String::new();
        let mut chars = line[colon + 1..].chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' if chars.peek() == Some(&' ') => {
                    word.push(' ');
                    chars.next();
                }
                '$' if chars.peek() == Some(&'$') => {
                    word.push('$');
                    chars.next();
                }
                c if c.is_whitespace() => {
                    if !word.is_empty() {
                        deps.push(PathBuf::from(std::mem::take(&mut word)));
                    }
                }
                c => word.push(c),
            }
        }
        if !word.is_empty() {
            deps.push(PathBuf::from(word));
        }
    }
    deps
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 25: a dependency that is a device or a FIFO (`#include
    /// "/dev/stdin"`) is never read, when recorded or when checked; it is
    /// returned to be warned about, and a rebuild is decided on its stat.
    #[cfg(unix)]
    #[test]
    fn devices_and_fifos_are_never_hashed() {
        let work = std::env::temp_dir().join(format!("begen-devdeps-{}", std::process::id()));
        std::fs::create_dir_all(&work).unwrap();
        assert!(std::process::Command::new("mkfifo").arg(work.join("pipe")).status().unwrap().success());
        std::fs::write(work.join("k.cc"), "int x;\n").unwrap();
        assert_eq!(content_hash(Path::new("/dev/zero")), None);
        assert_eq!(content_hash(&work.join("pipe")), None);
        assert!(content_hash(&work.join("k.cc")).is_some());
        let deps =
            [PathBuf::from("k.cc"), PathBuf::from("pipe"), PathBuf::from("/dev/zero"), PathBuf::from("/dev/stdin")];
        let untracked = record_deps(&work, Path::new("k.o"), &deps).unwrap();
        assert!(untracked.starts_with(&[PathBuf::from("pipe"), PathBuf::from("/dev/zero")]), "{untracked:?}");
        let record = std::fs::read_to_string(work.join("k.o.deps")).unwrap();
        assert_eq!(record.lines().count(), 4, "{record}");
        std::fs::remove_dir_all(&work).unwrap();
    }

    #[test]
    fn longest_units_start_first() {
        let work = std::env::temp_dir().join(format!("begen-longest-{}", std::process::id()));
        std::fs::create_dir_all(work.join("obj")).unwrap();
        let unit = |name: &str, weight| Unit {
            source: PathBuf::from(name),
            name: name.into(),
            platform: Platform::Cuda,
            object: PathBuf::from(format!("obj/{name}.o")),
            fingerprint: String::new(),
            weight,
        };
        let units = [unit("a", 10), unit("b", 30), unit("c", 20), unit("d", 30)];
        let names = |s: &[(&Unit, Vec<OsString>)]| s.iter().map(|(u, _)| u.name.clone()).collect::<Vec<_>>();
        let mut stale: Vec<_> = units.iter().map(|u| (u, vec![])).collect();
        longest_first(&work, &mut stale);
        assert_eq!(names(&stale), ["b", "d", "c", "a"], "by weight, ties in order");
        // Times on record for some units only: still by weight.
        std::fs::write(work.join("obj/a.o.secs"), "50.0\n").unwrap();
        longest_first(&work, &mut stale);
        assert_eq!(names(&stale), ["b", "d", "c", "a"]);
        // For every unit: by the times.
        for (name, secs) in [("b", "1.5"), ("c", "7"), ("d", "not a number")] {
            std::fs::write(work.join(format!("obj/{name}.o.secs")), secs).unwrap();
        }
        longest_first(&work, &mut stale);
        assert_eq!(names(&stale), ["b", "d", "c", "a"], "one unreadable time: by weight");
        std::fs::write(work.join("obj/d.o.secs"), "0.2").unwrap();
        longest_first(&work, &mut stale);
        assert_eq!(names(&stale), ["a", "c", "b", "d"]);
        let _ = std::fs::remove_dir_all(&work);
    }

    #[test]
    fn depfile_forms() {
        assert_eq!(parse_depfile("a.o: a.cc\n"), [PathBuf::from("a.cc")]);
        let nvcc = "k.o : k.cu \\\n    /x/../include/cuda_runtime.h \\\n    /x/y.h\n";
        assert_eq!(parse_depfile(nvcc).len(), 3);
        assert!(parse_depfile("").is_empty());
    }
}

#[cfg(test)]
mod examples {
    #[test]
    fn parse_depfile() {
        let deps = crate::build::compile::parse_depfile("x.o : a.cc b\\ c.h \\\n  /inc/d.h\n");
        assert_eq!(deps, ["a.cc", "b c.h", "/inc/d.h"].map(std::path::PathBuf::from));
    }
}
