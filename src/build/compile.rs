//! Compiling translation units to objects, one compiler run per TU, with a
//! per-object cache so touching one source recompiles one TU.
//!
//! cc decides the compiler and its flags (`cc::Build::try_get_compiler`),
//! begen runs the commands itself: cc recompiles every file of a `Build`
//! each time and only makes static archives, while begen needs stable
//! per-TU objects for a shared library.
//!
//! An object is up to date when its recorded command line (`<obj>.cmd`) is
//! the same, neither the source nor any header the compiler listed in the
//! depfile (`-MMD -MF <obj>.d`, which gcc, clang and nvcc all write)
//! changed (its identity, else its bytes: see [`Stamp`]), and no header
//! appeared where the include search would now find it first (the misses,
//! see [`include_misses`]); all kept in `<obj>.deps`. Commands run in the
//! work directory with relative paths for generated files, so objects do
//! not depend on where OUT is.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::SystemTime;

use super::stamp::{Stamp, content_hash};

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
    /// Flags only this unit gets, after its compiler's (a target's own
    /// headers and defines: torch's, for its registration TU).
    pub(crate) args: Vec<OsString>,
    /// How long it is expected to take, relative to the others (bytes of
    /// source, nvcc's weighted more): a build with no compile times on
    /// record yet starts the heaviest units first.
    pub(crate) weight: u64,
}

/// A compiler program and the flags every TU of one kind gets.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct CompilerCmd {
    pub(crate) program: PathBuf,
    pub(crate) args: Vec<OsString>,
    pub(crate) env: Vec<(OsString, OsString)>,
    /// How many of `args` were written with the program (`CXX="zig c++
    /// -target …"`): the link runs with them too.
    #[serde(default)]
    pub(crate) lead: usize,
    /// What the compiler programs are on disk (see the backends'
    /// `identity`): part of each unit's record, so a compiler changed in
    /// place recompiles. Found anew each build, never kept with the probes.
    #[serde(skip)]
    pub(crate) identity: String,
}

impl CompilerCmd {
    /// Takes program, flags and environment from a cc tool; `program`
    /// replaces cc's choice (nvcc found by begen rather than `$NVCC`).
    /// Without one, the program is the first word of cc's command: a
    /// wrapper cc knows (`CXX="ccache g++"`) runs the compiler, and the
    /// words written after the compiler (`CXX="g++ -DX"`, `CXX="zig c++
    /// -target …"`) come before cc's flags, as they would in a shell.
    pub(crate) fn from_tool(tool: &cc::Tool, program: Option<&Path>) -> CompilerCmd {
        let (program, args) = match program {
            Some(program) => (program.to_path_buf(), tool.args().to_vec()),
            None => {
                let cmd = tool.to_command();
                (PathBuf::from(cmd.get_program()), cmd.get_args().map(OsStr::to_os_string).collect::<Vec<_>>())
            }
        };
        CompilerCmd {
            program,
            lead: args.len().saturating_sub(tool.args().len()),
            args,
            env: tool.get_envs().map(|(k, v)| (k.to_owned(), v.to_owned())).collect(),
            identity: String::new(),
        }
    }

    /// The full argv for one unit.
    pub(crate) fn argv(&self, unit: &Unit) -> Vec<OsString> {
        let mut argv = vec![self.program.clone().into_os_string()];
        argv.extend(self.args.iter().cloned());
        argv.extend(unit.args.iter().cloned());
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

/// The compilers of one build, one per backend (host C++ always).
#[derive(Debug, Clone)]
pub(crate) struct Compilers {
    pub(crate) by_platform: Vec<(Platform, CompilerCmd)>,
    /// A program every compile runs through (`ccache`, `sccache`): not
    /// part of a unit's recorded command (a compiler cache changes no
    /// object), nor of the compilation database.
    /// Its program (found) first, then the arguments written with it
    /// (`env FOO=1 ccache`).
    pub(crate) launcher: Option<Vec<OsString>>,
}

impl Compilers {
    /// The host C++ compiler, whose driver links.
    pub(crate) fn host(&self) -> Result<&CompilerCmd> {
        let found = self.by_platform.iter().find(|(p, _)| *p == Platform::Cpu).map(|(_, cmd)| cmd);
        found.ok_or_else(|| Error::other("internal: no host C++ compiler".to_string()))
    }

    fn for_unit(&self, unit: &Unit) -> Result<&CompilerCmd> {
        let found = self.by_platform.iter().find(|(p, _)| *p == unit.platform).map(|(_, cmd)| cmd);
        found.ok_or_else(|| {
            Error::other(format!("internal: no {} compiler for `{}`", unit.platform.as_str(), unit.name))
        })
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

fn stamp_text(argv: &[OsString], fingerprint: &str, compiler: &str) -> String {
    let mut text: String = argv.iter().map(|a| a.to_string_lossy() + "\n").collect();
    if !fingerprint.is_empty() {
        text.push_str(&format!("# {fingerprint}\n"));
    }
    if !compiler.is_empty() {
        text.push_str(&format!("# compiler {compiler}\n"));
    }
    text
}

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

/// The record of what an object was built from: one line per file it
/// depends on (see [`dep_line`]), then the include-search misses.
fn depsfile(object: &Path) -> PathBuf {
    with_suffix(object, ".deps")
}

/// How much of a compiler's stdout and of its stderr is kept (the first
/// and the last half): enough for any real error, bounded for a runaway.
const KEPT_OUTPUT: usize = 1 << 20;

/// How far a file's timestamps may lag the clock: the kernel stamps files
/// from a coarse clock, at most one tick (1 to 10 ms) behind.
const CLOCK_TICK: std::time::Duration = std::time::Duration::from_millis(10);

/// The hash field of a dependency that changed while the object was
/// compiled: the object may hold its old text, so it never matches.
const CHANGED_DURING_COMPILE: &str = "changed-during-compile";

/// Writes the record of `deps` (paths relative to `work` or absolute):
/// each one's identity and contents' hash, then the include-search misses
/// (see [`include_misses`]). A user's file (absolute) changed after the
/// compile `started` is recorded as [`CHANGED_DURING_COMPILE`]: its bytes
/// now may not be those the compiler read, so the next build compiles
/// again. Returns the dependencies that are not regular files (a FIFO, a
/// device), whose contents are not hashed and so not tracked.
pub(crate) fn record_deps(
    work: &Path,
    object: &Path,
    deps: &[PathBuf],
    argv: &[OsString],
    started: SystemTime,
) -> std::io::Result<Vec<PathBuf>> {
    let mut text = String::new();
    let mut untracked = Vec::new();
    let now = SystemTime::now();
    let since = started.checked_sub(CLOCK_TICK).unwrap_or(started);
    for dep in deps {
        let path = work.join(dep);
        if std::fs::metadata(&path).is_ok_and(|m| !m.is_file()) {
            untracked.push(dep.clone());
        }
        let stamp = Stamp::of(&path).unwrap_or_default();
        let ns = since.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i128);
        if dep.is_absolute() && stamp.mtime.max(stamp.ctime) >= ns {
            text.push_str(&format!(
                "{}:racy {} {CHANGED_DURING_COMPILE} {}\n",
                stamp.times(),
                stamp.size,
                dep.display()
            ));
            continue;
        }
        text.push_str(&dep_line(&path, dep, now));
    }
    for miss in include_misses(work, argv, deps) {
        text.push_str(&format!("absent - - {}\n", miss.display()));
    }
    super::files::write_record(&work.join(depsfile(object)), text.as_bytes())?;
    Ok(untracked)
}

/// One line of a dependency record: `<mtime>:<ctime>:<ino>[:racy] <size>
/// <content hash> <path>`.
fn dep_line(path: &Path, dep: &Path, now: SystemTime) -> String {
    let stamp = Stamp::of(path).unwrap_or_default();
    let hash = content_hash(path).unwrap_or_default();
    let racy = if stamp.is_racy(now) { ":racy" } else { "" };
    format!("{}{racy} {} {hash:016x} {}\n", stamp.times(), stamp.size, dep.display())
}

/// The places where a header could appear and take the place of one the
/// compiler found further along the include search, which no depfile names
/// (they were misses): ninja and ccache keep such misses too. For each
/// dependency found under an include directory (`-I`, `-iquote`) as `rel`,
/// the candidates are `rel` in every directory searched before it: the
/// directory of each file that may have included it (a quoted include
/// looks there first) and the include directories earlier on the command
/// line. Only those that
/// do not exist now are returned; system headers (`-isystem`, the
/// compiler's own) are not followed, as `-MMD` does not list them.
fn include_misses(work: &Path, argv: &[OsString], deps: &[PathBuf]) -> Vec<PathBuf> {
    let mut search: Vec<PathBuf> = Vec::new();
    let mut args = argv.iter().map(|a| a.to_string_lossy());
    while let Some(arg) = args.next() {
        for flag in ["-I", "-iquote"] {
            if let Some(rest) = arg.strip_prefix(flag) {
                let dir = if rest.is_empty() { args.next().map(|a| a.into_owned()) } else { Some(rest.to_string()) };
                if let Some(dir) = dir {
                    search.push(normalize(&work.join(dir)));
                }
                break;
            }
        }
    }
    let found: Vec<(PathBuf, usize)> = deps
        .iter()
        .map(|d| normalize(&work.join(d)))
        .filter_map(|d| {
            let k = search.iter().position(|s| d.starts_with(s))?;
            Some((d, k))
        })
        .collect();
    // The including files: those found on the search path, and begen's
    // generated TUs (relative to the work directory).
    let generated: Vec<PathBuf> = deps.iter().filter(|d| d.is_relative()).map(|d| normalize(&work.join(d))).collect();
    let includers: std::collections::BTreeSet<&Path> =
        found.iter().map(|(d, _)| d).chain(&generated).filter_map(|d| d.parent()).collect();
    let mut misses = std::collections::BTreeSet::new();
    for (dep, k) in &found {
        let Ok(rel) = dep.strip_prefix(&search[*k]) else { continue };
        for dir in includers.iter().copied().chain(search[..*k].iter().map(PathBuf::as_path)) {
            let candidate = dir.join(rel);
            if candidate != *dep && std::fs::symlink_metadata(&candidate).is_err() {
                misses.insert(candidate);
            }
        }
    }
    misses.into_iter().collect()
}

/// `path` with `.` and `dir/..` removed, without asking the file system
/// (a compiler resolves `..` the same way, textually, in include paths).
fn normalize(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if matches!(out.components().next_back(), Some(Component::Normal(_))) => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

/// How a compile pass runs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CompileOptions {
    /// Parallel compiler runs.
    pub(crate) jobs: usize,
    /// Say why each unit is stale (`BEGEN_EXPLAIN`).
    pub(crate) explain: bool,
    /// Every compiler warning in full, not a summary per unit.
    pub(crate) verbose: bool,
    /// A compile running longer is stopped.
    pub(crate) timeout: std::time::Duration,
}

/// Compiles every stale unit (in parallel, `jobs` at a time), reporting
/// `compiling 3/12 name` lines (and, with `explain`, why each unit is
/// stale), and returns how many ran. The compilation database
/// (`compile_commands.json`) is written first, with every unit's command,
/// for editors. Compiler warnings are summarised per unit (all of them in
/// `warnings.log`, see [`warnings`](super::warnings)). All failures are
/// collected into one `Error` of kind `Compile`.
pub(crate) fn compile_units(
    work: &Path,
    units: &[Unit],
    compilers: &Compilers,
    options: CompileOptions,
    reporter: &mut dyn Reporter,
) -> Result<CompileStats> {
    let stale = stale_units(work, units, compilers, options.explain, reporter)?;
    let stats = CompileStats { compiled: stale.len(), up_to_date: units.len() - stale.len() };
    if stale.is_empty() {
        return Ok(stats);
    }
    let failures = run_stale(work, &stale, units, compilers, options, reporter)?;
    if failures.is_empty() {
        return Ok(stats);
    }
    Err(compile_error(failures))
}

/// Every unit's command, into the compilation database, and the units
/// whose objects are stale, longest first (with `explain`, why each is).
fn stale_units<'u>(
    work: &Path,
    units: &'u [Unit],
    compilers: &Compilers,
    explain: bool,
    reporter: &mut dyn Reporter,
) -> Result<Vec<(&'u Unit, Vec<OsString>)>> {
    let mut stale = Vec::new();
    let mut commands = Vec::with_capacity(units.len());
    for unit in units {
        let compiler = compilers.for_unit(unit)?;
        let argv = compiler.argv(unit);
        commands.push((unit, argv.clone()));
        if let Some(why) = staleness(work, unit, &argv, &compiler.identity) {
            if explain {
                reporter.progress(&format!("{}: {why}", unit.name));
            }
            stale.push((unit, argv));
        }
    }
    super::compdb::write(work, &commands)?;
    if !stale.is_empty() {
        longest_first(work, &mut stale);
    }
    Ok(stale)
}

/// Compiles the stale units, `jobs` at a time, reporting progress and
/// warnings; returns the failures, by unit name, with their output.
fn run_stale(
    work: &Path,
    stale: &[(&Unit, Vec<OsString>)],
    units: &[Unit],
    compilers: &Compilers,
    options: CompileOptions,
    reporter: &mut dyn Reporter,
) -> Result<Vec<(String, String)>> {
    for (unit, _) in stale {
        super::files::private_dir(work, unit.object.parent().unwrap_or(Path::new("")))?;
    }
    let total = stale.len();
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<Event>();
    let mut failures = Vec::new();
    let mut warned = super::warnings::Warnings::default();
    std::thread::scope(|scope| {
        for _ in 0..options.jobs.clamp(1, total) {
            let tx = tx.clone();
            let next = &next;
            scope.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some((unit, argv)) = stale.get(i) else {
                        break;
                    };
                    let compiler = compilers.for_unit(unit).ok();
                    let env = compiler.map(|c| c.env.as_slice()).unwrap_or_default();
                    let identity = compiler.map_or("", |c| c.identity.as_str());
                    let _ = tx.send(Event::Started(i));
                    let run = Run { env, identity, launcher: compilers.launcher.as_deref(), timeout: options.timeout };
                    let result = run_one(work, unit, argv, &run);
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
                Event::Finished(i, Ok((output, notes))) => {
                    let unit = stale[i].0;
                    let shown = warned.add(work, &unit.object, &output, options.verbose);
                    let text = shown + &notes;
                    if !text.trim().is_empty() {
                        reporter.compiler_output(&unit.name, &text);
                    }
                }
                Event::Finished(i, Err(output)) => failures.push((stale[i].0.name.clone(), output)),
            }
        }
    });
    warned.finish(work, units, reporter);
    Ok(failures)
}

/// One error for every failed compile.
fn compile_error(mut failures: Vec<(String, String)>) -> Error {
    failures.sort();
    let what = match failures.as_slice() {
        [(name, _)] => format!("compiling {name}"),
        many => format!("compiling {} translation units", many.len()),
    };
    let output =
        failures.iter().map(|(name, out)| format!("--- {name}\n{}", out.trim_end())).collect::<Vec<_>>().join("\n");
    Error::compile(what, output)
}

enum Event {
    Started(usize),
    Finished(usize, std::result::Result<(String, String), String>),
}

/// Runs one compile (through `launcher`, when one is set); `Ok((compiler
/// output, begen's notes))` or `Err(command + output)`. A compile that runs
/// past `timeout` (a source that includes `/dev/zero`, a runaway template)
/// is stopped.
/// How one compile runs: the compiler's environment and identity, the
/// launcher, the time limit.
struct Run<'a> {
    env: &'a [(OsString, OsString)],
    identity: &'a str,
    launcher: Option<&'a [OsString]>,
    timeout: std::time::Duration,
}

fn run_one(
    work: &Path,
    unit: &Unit,
    argv: &[OsString],
    run: &Run<'_>,
) -> std::result::Result<(String, String), String> {
    let Run { env, identity, launcher, timeout } = *run;
    let stamp = work.join(stampfile(&unit.object));
    // The compiler writes the object and its depfile where they are named:
    // whatever is there (a link into another folder among them) goes first,
    // so nothing is written through it.
    for old in [stamp.clone(), work.join(&unit.object), work.join(depfile(&unit.object))] {
        let _ = std::fs::remove_file(&old);
    }
    let mut cmd = match launcher {
        Some([program, args @ ..]) => {
            let mut cmd = Command::new(program);
            cmd.args(args).args(argv);
            cmd
        }
        _ => {
            let mut cmd = Command::new(&argv[0]);
            cmd.args(&argv[1..]);
            cmd
        }
    };
    cmd.current_dir(work);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let program = launcher.and_then(<[_]>::first).unwrap_or(&argv[0]).to_string_lossy();
    let shown = launcher.into_iter().flatten().chain(argv).map(|a| a.to_string_lossy()).collect::<Vec<_>>().join(" ");
    let start = std::time::Instant::now();
    let text = |out: &[u8], err: &[u8]| String::from_utf8_lossy(out).into_owned() + &String::from_utf8_lossy(err);
    let started = SystemTime::now();
    let finished = match process::run_kept(&mut cmd, timeout, KEPT_OUTPUT) {
        Ok(f) => f,
        Err(Stopped::Spawn(e)) => {
            return Err(format!("command: {shown}\ncould not run `{program}`: {e}"));
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
    let text = text(&finished.stdout, &finished.stderr);
    if !finished.status.success() {
        return Err(format!("command: {shown}\n{text}"));
    }
    let deps = std::fs::read_to_string(work.join(depfile(&unit.object))).unwrap_or_default();
    let untracked = record_deps(work, &unit.object, &parse_depfile(&deps), argv, started)
        .map_err(|e| format!("writing the dependencies of {}: {e}", unit.object.display()))?;
    let mut notes = String::new();
    for dep in untracked {
        notes.push_str(&crate::diag::messages::untracked_dependency(&dep.display().to_string()));
        notes.push('\n');
    }
    super::files::write_record(&stamp, stamp_text(argv, &unit.fingerprint, identity).as_bytes())
        .map_err(|e| format!("writing {}: {e}", stamp.display()))?;
    // Only to order the next build: a failure to write it is no error.
    let secs = format!("{:.3}\n", start.elapsed().as_secs_f64());
    let _ = super::files::write_record(&work.join(secsfile(&unit.object)), secs.as_bytes());
    Ok((text, notes))
}

/// `None` when the object exists, was built by the same command, and no
/// file it depends on changed since: the same identity as recorded (see
/// [`Stamp`]: a source put back with an older date by `cp -p`, `tar x` or
/// `rsync -a` has a new change time), or else the same bytes; and no
/// include-search miss exists now (a new header that would be found first).
/// A dependency found unchanged by its bytes gets its new identity
/// recorded, so the next check needs no hashing.
fn staleness(work: &Path, unit: &Unit, argv: &[OsString], compiler: &str) -> Option<String> {
    if !work.join(&unit.object).is_file() {
        return Some("no object yet".into());
    }
    match std::fs::read_to_string(work.join(stampfile(&unit.object))) {
        Ok(stamp) if stamp == stamp_text(argv, &unit.fingerprint, compiler) => {}
        Ok(_) => return Some("the command line, the compiler or the XLA FFI headers changed".into()),
        Err(_) => return Some("no record of the last command".into()),
    }
    let Ok(record) = std::fs::read_to_string(work.join(depsfile(&unit.object))) else {
        return Some("no record of its dependencies".into());
    };
    if record.trim().is_empty() {
        return Some("no dependencies recorded".into());
    }
    match check_deps(work, &record) {
        Err(why) => Some(why),
        Ok(None) => None,
        Ok(Some(refreshed)) => {
            // Only saves hashing next time: a failure to write is no error.
            let _ = super::files::write_record(&work.join(depsfile(&unit.object)), refreshed.as_bytes());
            None
        }
    }
}

/// Checks a dependency record line by line: `Err(why)` for the first
/// change; `Ok(Some(record))` when unchanged but some file was decided by
/// its bytes (the record with its identity now); `Ok(None)` when every
/// identity was as recorded.
pub(crate) fn check_deps(work: &Path, record: &str) -> std::result::Result<Option<String>, String> {
    let mut refreshed = String::new();
    let mut rehashed = false;
    let now = SystemTime::now();
    for line in record.lines() {
        let mut parts = line.splitn(4, ' ');
        let (Some(times), Some(size), Some(hash), Some(dep)) = (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err("its dependency record is unreadable".into());
        };
        let path = work.join(dep);
        if times == "absent" {
            if std::fs::symlink_metadata(&path).is_ok() {
                return Err(format!("{dep} appeared, which the include search would find before a header it used"));
            }
            refreshed.push_str(line);
            refreshed.push('\n');
            continue;
        }
        let (times, racy) = match times.strip_suffix(":racy") {
            Some(t) => (t, true),
            None => (times, false),
        };
        let Some(now_stamp) = Stamp::of(&path) else {
            return Err(format!("{dep} is gone"));
        };
        if !racy && Stamp::parse(times, size) == Some(now_stamp) {
            refreshed.push_str(line);
            refreshed.push('\n');
            continue;
        }
        if hash == CHANGED_DURING_COMPILE {
            return Err(format!("{dep} changed while it was being compiled"));
        }
        if content_hash(&path).map(|h| format!("{h:016x}")).as_deref() != Some(hash) {
            return Err(format!("{dep} changed"));
        }
        rehashed = true;
        refreshed.push_str(&dep_line(&path, Path::new(dep), now));
    }
    Ok(rehashed.then_some(refreshed))
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

    /// A dependency that is a device or a FIFO (`#include
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
        let untracked = record_deps(&work, Path::new("k.o"), &deps, &[], SystemTime::now()).unwrap();
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
            args: Vec::new(),
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

    struct Quiet;
    impl super::Reporter for Quiet {
        fn diagnostic(&mut self, _: &crate::diag::Diagnostic, _: &crate::source::SourceMap) {}
        fn progress(&mut self, _: &str) {}
        fn compiler_output(&mut self, _: &str, _: &str) {}
    }

    /// A scratch work directory, a user source `k.cc` including `k.h`
    /// outside it, and a compiler: a shell script that "compiles" by
    /// copying the source and header text into the object, writing the
    /// depfile, then running `after` (which may edit the header).
    #[cfg(unix)]
    fn fake(name: &str, after: &str) -> (PathBuf, PathBuf, Compilers, Unit) {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("begen-fakecc-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (work, src) = (dir.join("work"), dir.join("src"));
        std::fs::create_dir_all(&work).unwrap();
        std::fs::create_dir_all(&src).unwrap();
        std::fs::write(src.join("k.cc"), "#include \"k.h\"\n").unwrap();
        std::fs::write(src.join("k.h"), "3.0\n").unwrap();
        let cc = dir.join("cc.sh");
        // argv: -MMD -MF <dep> -c <src> -o <obj>
        let script = format!(
            "#!/bin/sh\ncat \"$5\" {h} > \"$7\"\nprintf '%s: %s %s\\n' \"$7\" \"$5\" {h} > \"$3\"\n{after}\n",
            h = src.join("k.h").display()
        );
        std::fs::write(&cc, script).unwrap();
        std::fs::set_permissions(&cc, std::fs::Permissions::from_mode(0o755)).unwrap();
        let stamp = Stamp::of(&cc).unwrap();
        let cmd = CompilerCmd {
            program: cc.clone(),
            args: vec![],
            env: vec![],
            lead: 0,
            identity: format!("{} {} {}", cc.display(), stamp.size, stamp.mtime),
        };
        let compilers = Compilers { by_platform: vec![(Platform::Cpu, cmd)], launcher: None };
        // Sources saved just before a compile starts count as saved during it.
        std::thread::sleep(2 * CLOCK_TICK);
        let unit = Unit {
            source: src.join("k.cc"),
            name: "k.cc".into(),
            platform: Platform::Cpu,
            object: PathBuf::from("obj/src/k.cc.o"),
            fingerprint: String::new(),
            args: Vec::new(),
            weight: 1,
        };
        (dir, work, compilers, unit)
    }

    #[cfg(unix)]
    fn options() -> CompileOptions {
        CompileOptions { jobs: 1, explain: false, verbose: false, timeout: std::time::Duration::from_secs(20) }
    }

    /// Every record beside an object (`.deps`, `.cmd`, `.secs`, `.log`, the
    /// object and its depfile) may be a link planted into another folder:
    /// none is written through. A linked folder on the way is refused.
    #[cfg(unix)]
    #[test]
    fn a_linked_record_is_replaced_never_written_through() {
        let (dir, work, compilers, unit) = fake("links", "echo 'warning: w' >&2");
        std::fs::create_dir_all(work.join("obj/src")).unwrap();
        let victim = dir.join("victim");
        for suffix in [".deps", ".cmd", ".secs", ".log", "", ".d"] {
            std::fs::write(victim.with_extension(format!("v{suffix}")), "precious").unwrap();
            let link = work.join(with_suffix(&unit.object, suffix));
            std::os::unix::fs::symlink(victim.with_extension(format!("v{suffix}")), &link).unwrap();
        }
        let units = [unit.clone()];
        compile_units(&work, &units, &compilers, options(), &mut Quiet).unwrap();
        for suffix in [".deps", ".cmd", ".secs", ".log", "", ".d"] {
            assert_eq!(std::fs::read_to_string(victim.with_extension(format!("v{suffix}"))).unwrap(), "precious");
            let record = work.join(with_suffix(&unit.object, suffix));
            assert!(!std::fs::symlink_metadata(&record).unwrap().file_type().is_symlink(), "{suffix}");
        }
        // A linked folder on the way out of the work directory.
        std::fs::remove_dir_all(work.join("obj")).unwrap();
        std::fs::create_dir_all(dir.join("elsewhere")).unwrap();
        std::os::unix::fs::symlink(dir.join("elsewhere"), work.join("obj")).unwrap();
        let err = compile_units(&work, &units, &compilers, options(), &mut Quiet).unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert_eq!(std::fs::read_dir(dir.join("elsewhere")).unwrap().count(), 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A header saved while its includer compiles: the object may hold the
    /// old text, so the next build compiles again (and then is up to date).
    #[cfg(unix)]
    #[test]
    fn a_header_saved_during_the_compile_recompiles_next_time() {
        let (dir, work, compilers, unit) = fake("race", "");
        let header = dir.join("src/k.h");
        let script = std::fs::read_to_string(dir.join("cc.sh")).unwrap();
        // The header is saved after the compiler read it, before it exits.
        let edit = format!(
            "{script}[ -f {d}/edited ] || {{ printf '9.0\\n' > {h}; touch {d}/edited; }}\n",
            d = dir.display(),
            h = header.display()
        );
        std::fs::write(dir.join("cc.sh"), edit).unwrap();
        let units = [unit.clone()];
        let stats = compile_units(&work, &units, &compilers, options(), &mut Quiet).unwrap();
        assert_eq!(stats.compiled, 1);
        assert!(std::fs::read_to_string(work.join(&unit.object)).unwrap().contains("3.0"), "built from the old text");
        let why =
            staleness(&work, &unit, &compilers.by_platform[0].1.argv(&unit), &compilers.by_platform[0].1.identity);
        assert!(why.as_deref().is_some_and(|w| w.contains("while it was being compiled")), "{why:?}");
        compile_units(&work, &units, &compilers, options(), &mut Quiet).unwrap();
        assert!(std::fs::read_to_string(work.join(&unit.object)).unwrap().contains("9.0"));
        std::thread::sleep(std::time::Duration::from_millis(30));
        let stats = compile_units(&work, &units, &compilers, options(), &mut Quiet).unwrap();
        assert_eq!(stats.compiled, 0, "then up to date");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A compiler (here a wrapper script) edited in place at the same path
    /// is another compiler: its units compile again.
    #[cfg(unix)]
    #[test]
    fn a_compiler_edited_in_place_recompiles() {
        let (dir, work, mut compilers, unit) = fake("edited", "");
        let units = [unit.clone()];
        assert_eq!(compile_units(&work, &units, &compilers, options(), &mut Quiet).unwrap().compiled, 1);
        assert_eq!(compile_units(&work, &units, &compilers, options(), &mut Quiet).unwrap().compiled, 0);
        let cc = dir.join("cc.sh");
        let script = std::fs::read_to_string(&cc).unwrap();
        std::fs::write(&cc, script + "# -DX now\n").unwrap();
        let stamp = Stamp::of(&cc).unwrap();
        compilers.by_platform[0].1.identity = format!("{} {} {}", cc.display(), stamp.size, stamp.mtime);
        assert_eq!(compile_units(&work, &units, &compilers, options(), &mut Quiet).unwrap().compiled, 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A compiler that floods its output is read to its end with only its
    /// first and last bytes kept; one that floods without end is stopped
    /// at the time limit.
    #[cfg(unix)]
    #[test]
    fn a_flooding_compiler_is_bounded_in_memory_and_time() {
        let (dir, work, compilers, unit) =
            fake("flood", "head -c 30000000 /dev/zero | tr '\\0' w >&2; echo; echo the-end >&2; exit 1");
        let units = [unit.clone()];
        let err = compile_units(&work, &units, &compilers, options(), &mut Quiet).unwrap_err().to_string();
        assert!(err.len() < 3 * KEPT_OUTPUT, "{}", err.len());
        assert!(err.contains("the-end") && err.contains("left out"));
        let (dir2, work2, compilers2, unit2) = fake("flood-forever", "exec yes");
        let start = std::time::Instant::now();
        let fast = CompileOptions { timeout: std::time::Duration::from_secs(1), ..options() };
        let err = compile_units(&work2, &[unit2], &compilers2, fast, &mut Quiet).unwrap_err().to_string();
        assert!(err.contains("did not finish within 1 s") && err.len() < 3 * KEPT_OUTPUT, "{}", err.len());
        // A hang catcher only: the 1 s limit is what the message says.
        assert!(start.elapsed() < std::time::Duration::from_secs(120), "{:?}", start.elapsed());
        std::fs::remove_dir_all(&dir).unwrap();
        std::fs::remove_dir_all(&dir2).unwrap();
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
