//! Stage 5, build: from the checked library and its generated files,
//! compile every translation unit and link `lib<NAME>.so` beside the
//! generated Python module and manifest. `begen::driver::build` runs the
//! whole pipeline into it; this module holds its [`Reporter`] and its
//! results.
//!
//! The build executes the library's plan ([`crate::model::plan`], made by
//! `check`) and reads no setting of its own: [`Toolchain::resolve`] probes
//! the machine for what the plan needs (the work directory, the headers of
//! each selected binding target, asked through its [`TargetToolchain`] —
//! for jax XLA's FFI headers —, one [`backend::Backend`] per backend of the
//! plan, the libraries to link), then [`build_library`] runs compile (each
//! backend's command, [`compile`]; every kernel once, for all targets),
//! link ([`link`]: each target's library from the shared objects and its
//! own units') and commit (every target's staged outputs renamed into OUT
//! together). The build never names a target's code.
//!
//! ```no_run
//! use begen::driver::{Env, Settings, StderrReporter};
//! let mut settings = Settings::new("kernels");
//! settings.out = Some("out".into());
//! let built = begen::driver::build(&settings, &Env::new(), &mut StderrReporter::default())?;
//! println!("{}", built.library_path().display());
//! # Ok::<(), begen::Error>(())
//! ```
//!
//! Decisions, written down once:
//!
//! - Where wrappers compile: each annotated source gets one generated TU
//!   that `#include`s it and adds one `extern "C"` trampoline per kernel,
//!   compiled by the source's own compiler (host C++ for `.cpp`, nvcc for
//!   `.cu`); it includes no XLA header. Every XLA FFI handler of the library
//!   is in one glue TU, `gen/<NAME>.begen.cc`, compiled by the host C++
//!   compiler: XLA's FFI headers, slow to compile (more so under nvcc),
//!   are parsed once per library instead of once per source.
//!   Un-annotated sources compile as they are.
//! - Each platform's TUs compile with its backend ([`backend`]): host C++
//!   with cc's C++ compiler, CUDA with the nvcc begen found.
//! - Linking: the host compiler links the objects directly (no archive)
//!   with `-shared -Wl,--no-undefined --exclude-libs,ALL`, then the plan's
//!   libraries and arguments, then what each backend's runtime needs (the
//!   static CUDA runtime for CUDA objects).
//! - `--platform cpu` with CUDA sources present: those sources and their
//!   kernels are skipped, each with a warning (never silently). `cuda`
//!   requires nvcc. `auto` (the default) requires nvcc only when CUDA
//!   sources exist, and then fails clearly if it is missing.
//! - Layout of OUT: each selected target's outputs (jax's four, torch's
//!   three) and the shipped tuning table, nothing else. The generated TUs
//!   (`gen/`), objects with their depfiles and commands (`obj/`), the
//!   support headers and the lock live in a work directory outside OUT (see
//!   [`work`]: `--work-dir`, else a per-user cache keyed by OUT). Final
//!   outputs — every target's library, module and stub — are staged in one
//!   transient folder of OUT and renamed into place only when every compile
//!   and every link succeeded, and only if their bytes changed.
//! - Determinism: inputs are sorted, no timestamps or random names reach
//!   outputs, commands run in the work directory with relative paths for
//!   generated files, and no debug info is generated unless asked for.

mod arch;
mod backend;
mod compdb;
mod compile;
mod doctor;
mod files;
mod jaxlib;
mod link;
mod probes;
mod process;
mod relink;
mod stamp;
pub(crate) mod support;
mod toolchain;
mod warnings;
mod words;
mod work;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

pub use crate::env::Env;
pub(crate) use crate::model::PlatformChoice;
pub(crate) use jaxlib::headers as jaxlib_headers;
pub(crate) use stamp::content_hash;
pub(crate) use toolchain::{Discovery, xla_ffi_api_version};

use crate::diag::{Diagnostic, Severity};
use crate::error::{Error, Result};
use crate::model::generated::{Emitted, FileKind, GeneratedFile, JAX, TargetId};
use crate::model::plan::{Launcher, Plan};
use crate::model::{Library, Platform};
use crate::source::SourceMap;
use backend::{Backend, LinkNeeds, TuInputs};
use compile::{Compilers, Unit};
#[cfg_attr(not(feature = "cli"), allow(unused_imports))] // used by the CLI (`begen doctor`, `begen scan`)
pub(crate) use doctor::{DoctorAsk, DoctorLine, doctor};

/// Where a build reports as it goes: diagnostics, progress lines and
/// compiler warnings. The CLI prints to stderr; build.rs prints `cargo:` lines.
///
/// ```no_run
/// use begen::driver::{Env, Reporter, Settings};
/// use begen::diag::Diagnostic;
/// use begen::diag::SourceMap;
///
/// /// Collects diagnostics, ignores the rest.
/// #[derive(Default)]
/// struct Quiet(Vec<Diagnostic>);
///
/// impl Reporter for Quiet {
///     fn diagnostic(&mut self, d: &Diagnostic, _: &SourceMap) {
///         self.0.push(d.clone());
///     }
///     fn progress(&mut self, _: &str) {}
///     fn compiler_output(&mut self, _: &str, _: &str) {}
/// }
///
/// let mut quiet = Quiet::default();
/// let mut settings = Settings::new("kernels");
/// settings.out = Some("out".into());
/// begen::driver::build(&settings, &Env::new(), &mut quiet)?;
/// # Ok::<(), begen::Error>(())
/// ```
pub trait Reporter {
    /// A diagnostic, with the source map it points into.
    fn diagnostic(&mut self, diagnostic: &Diagnostic, sources: &SourceMap);
    /// `compiling 3/12 sub/foo.cu`.
    fn progress(&mut self, line: &str);
    /// Output of a compiler run that succeeded (warnings).
    fn compiler_output(&mut self, unit: &str, output: &str);
    /// Every file the scan read (for `cargo:rerun-if-changed`).
    fn files_read(&mut self, _paths: &[PathBuf]) {}
}

/// Prints everything on stderr (the CLI's reporter).
///
/// ```no_run
/// use begen::driver::{Env, Settings, StderrReporter};
/// let mut reporter = StderrReporter { quiet: true };
/// let mut settings = Settings::new("kernels");
/// settings.out = Some("out".into());
/// begen::driver::build(&settings, &Env::new(), &mut reporter)?;
/// # Ok::<(), begen::Error>(())
/// ```
#[derive(Debug, Default)]
pub struct StderrReporter {
    /// Suppresses progress lines.
    pub quiet: bool,
}

impl Reporter for StderrReporter {
    fn diagnostic(&mut self, diagnostic: &Diagnostic, sources: &SourceMap) {
        use std::io::IsTerminal;
        // NO_COLOR only styles text on a terminal; build.rs reports through
        // `cargo:warning` lines (no colour), so no build output depends on it
        // and it needs no `rerun-if-env-changed` through Env.
        #[allow(clippy::disallowed_methods)]
        let color = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
        say(&crate::diag::render::render_text(diagnostic, sources, color));
    }
    fn progress(&mut self, line: &str) {
        if !self.quiet {
            say(line);
        }
    }
    fn compiler_output(&mut self, unit: &str, output: &str) {
        say(&format!("{unit}:\n{}", output.trim_end()));
    }
}

/// Writes a line to stderr; a closed stderr is not a panic.
fn say(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{text}");
}

/// What [`crate::driver::build`] produced.
///
/// ```no_run
/// use begen::driver::{Env, Settings, StderrReporter};
/// let mut settings = Settings::new("kernels");
/// settings.out = Some("out".into());
/// let out = begen::driver::build(&settings, &Env::new(), &mut StderrReporter::default())?;
/// println!("{} ({} compiled, {} up to date)", out.library_path().display(), out.compiled(), out.up_to_date());
/// for path in out.changed() {
///     println!("changed: {}", path.display());
/// }
/// # Ok::<(), begen::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct BuildOutput {
    /// The checked library that was built.
    pub(crate) library: Library,
    /// The first selected target's library: `OUT/lib<NAME>.so` (jax),
    /// `OUT/lib<NAME>_torch.so` in a build for torch alone.
    pub(crate) library_path: PathBuf,
    /// Every output in OUT: each target's library, then the modules,
    /// stubs, manifest and shipped tuning table, in the order emitted.
    pub(crate) outputs: Vec<PathBuf>,
    /// `OUT/<NAME>.py`.
    pub(crate) module_path: PathBuf,
    /// `OUT/<NAME>.pyi`.
    pub(crate) stub_path: PathBuf,
    /// `OUT/<NAME>.yaml`.
    pub(crate) manifest_path: PathBuf,
    /// Outputs whose bytes changed in this build.
    pub(crate) changed: Vec<PathBuf>,
    /// Translation units compiled in this build.
    pub(crate) compiled: usize,
    /// Translation units whose objects were reused from an earlier build.
    pub(crate) up_to_date: usize,
    /// Warnings reported (errors stop the build).
    pub(crate) diagnostics: Vec<Diagnostic>,
    /// The XLA FFI API version of the headers built against.
    pub(crate) xla_ffi_api: Option<String>,
}

/// What [`crate::driver::generate`] wrote.
///
/// ```no_run
/// use begen::driver::{Env, Settings, StderrReporter};
/// let mut settings = Settings::new("kernels");
/// settings.out = Some("gen".into());
/// let generated = begen::driver::generate(&settings, &Env::new(), &mut StderrReporter::default())?;
/// for path in generated.files() {
///     println!("{}", path.display());
/// }
/// println!("{} function(s), {} warning(s)", generated.library().functions().len(), generated.diagnostics().len());
/// # Ok::<(), begen::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Generated {
    /// The checked library the files were generated from.
    pub(crate) library: Library,
    /// Every generated file, under OUT.
    pub(crate) files: Vec<PathBuf>,
    /// Warnings reported (errors stop before anything is written).
    pub(crate) diagnostics: Vec<Diagnostic>,
}

impl BuildOutput {
    /// The checked library that was built.
    pub fn library(&self) -> &Library {
        &self.library
    }

    /// `OUT/lib<NAME>.so` (the first selected target's library:
    /// `OUT/lib<NAME>_torch.so` in a build for torch alone).
    pub fn library_path(&self) -> &Path {
        &self.library_path
    }

    /// Every output in OUT: each selected target's library, then the
    /// modules, stubs, manifest and shipped tuning table.
    pub fn outputs(&self) -> &[PathBuf] {
        &self.outputs
    }

    /// `OUT/<NAME>.py`.
    pub fn module_path(&self) -> &Path {
        &self.module_path
    }

    /// `OUT/<NAME>.pyi`.
    pub fn stub_path(&self) -> &Path {
        &self.stub_path
    }

    /// `OUT/<NAME>.yaml`.
    pub fn manifest_path(&self) -> &Path {
        &self.manifest_path
    }

    /// The outputs whose bytes changed in this build.
    pub fn changed(&self) -> &[PathBuf] {
        &self.changed
    }

    /// How many translation units this build compiled.
    pub fn compiled(&self) -> usize {
        self.compiled
    }

    /// How many translation units' objects were reused from an earlier build.
    pub fn up_to_date(&self) -> usize {
        self.up_to_date
    }

    /// The warnings reported (errors stop the build).
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// The XLA FFI API version of the headers built against (`0.3`).
    pub fn xla_ffi_api(&self) -> Option<&str> {
        self.xla_ffi_api.as_deref()
    }
}

impl Generated {
    /// The checked library the files were generated from.
    pub fn library(&self) -> &Library {
        &self.library
    }

    /// Every generated file, under OUT.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// The warnings reported (errors stop before anything is written).
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }
}

impl BuildOutput {
    /// Copies the files Python needs — every output of the build
    /// ([`BuildOutput::outputs`]: for jax `lib<NAME>.so`, `<NAME>.py`,
    /// `<NAME>.pyi`, the manifest `<NAME>.yaml`; for torch
    /// `lib<NAME>_torch.so`, `<NAME>_torch.py`, `<NAME>_torch.pyi`; and, when
    /// begen.yaml ships one, the tuning table `<NAME>.tune.json`) — into `dir` (a folder of a
    /// Python package), under the same names, so the module finds the
    /// library beside it there too. A file is written only when its bytes
    /// changed (its mtime otherwise kept), through a temporary file renamed
    /// over it, so a process that has the old library loaded keeps working.
    /// Returns the paths in `dir` that were written.
    ///
    /// ```no_run
    /// use begen::driver::{Env, Settings, StderrReporter};
    /// let mut settings = Settings::new("kernels");
    /// settings.out = Some("out".into());
    /// let built = begen::driver::build(&settings, &Env::new(), &mut StderrReporter::default())?;
    /// built.copy_python_outputs("python/mypkg".as_ref())?;
    /// # Ok::<(), begen::Error>(())
    /// ```
    pub fn copy_python_outputs(&self, dir: &Path) -> Result<Vec<PathBuf>> {
        let mut written = Vec::new();
        for from in &self.outputs {
            let bytes = std::fs::read(from).map_err(|e| Error::io(from, e))?;
            let to = dir.join(from.file_name().unwrap_or_default());
            if files::write_if_changed(&to, &bytes)? {
                written.push(to);
            }
        }
        Ok(written)
    }
}

/// What a binding target needs from the machine to compile its own
/// translation units, asked for only for the plan's targets (a build
/// without jax needs no XLA header). Each target implements it in its
/// folder (`src/target/`); the build calls it through the driver.
pub(crate) trait TargetToolchain: Sync {
    /// Finds its headers for `plan`.
    fn find(&self, plan: &Plan, discovery: &Discovery, env: &Env) -> Result<TargetHeaders>;
}

/// What a target's toolchain found.
#[derive(Debug, Clone)]
pub(crate) struct TargetHeaders {
    pub(crate) target: TargetId,
    /// Its headers, as system include directories. Every TU gets them (a
    /// kernel source may include them itself: a native jax kernel does),
    /// which costs nothing where they are not included, and keeps their
    /// warnings out of the user's build output.
    pub(crate) system_includes: Vec<PathBuf>,
    /// Their contents as one fingerprint: part of the record of its own
    /// TUs, so a new version recompiles them.
    pub(crate) fingerprint: String,
    /// Flags only its own TUs get (torch: its headers, which no kernel
    /// includes, and the stable ABI's version define).
    pub(crate) unit_args: Vec<OsString>,
    /// The API version they declare (jax: the XLA FFI API, `0.3`).
    pub(crate) api_version: Option<String>,
    /// Its shared library in OUT (jax: `lib<NAME>.so`).
    pub(crate) library: String,
    /// Whether its library leaves symbols for the loading process to
    /// resolve (torch's stable ABI, resolved from the torch that loads it):
    /// linked without `--no-undefined`.
    pub(crate) undefined_symbols: bool,
}

/// The toolchain pieces a build of one library needs, resolved before
/// anything is generated (a target's API version is written into its
/// files).
pub(crate) struct Toolchain {
    /// Per target of the plan, in its order.
    targets: Vec<TargetHeaders>,
    support_include: PathBuf,
    /// One per backend of the plan, in its order (host C++ first).
    backends: Vec<Box<dyn Backend>>,
    libs: Vec<toolchain::FoundLib>,
    /// The work directory, locked (with OUT) until the build ends.
    work: work::Workspace,
    /// The toolchain's answers kept in the work directory.
    probes: probes::Probes,
}

impl Toolchain {
    /// Takes the work directory (waiting for another build of the same
    /// OUT or work directory), then finds each of the plan's `targets`'
    /// headers (in its order), begen's support headers, every backend the
    /// plan names, and the libraries to link.
    pub(crate) fn resolve(
        library: &Library,
        targets: &[&dyn TargetToolchain],
        env: &Env,
        reporter: &mut dyn Reporter,
    ) -> Result<Toolchain> {
        let plan = &library.plan;
        let work = work::Workspace::open(plan.out(), plan.work_dir.as_deref(), &library.name, env, reporter)?;
        let probes = probes::Probes::load(&work.dir);
        let discovery = Discovery::with_probes(env, &probes);
        let targets = targets.iter().map(|t| t.find(plan, &discovery, env)).collect::<Result<Vec<_>>>()?;
        let support_include = support_headers(env, &work.dir)?;
        let backends =
            plan.backends.iter().map(|b| backend::probe(b.platform, &discovery)).collect::<Result<Vec<_>>>()?;
        let libs = plan
            .link
            .libs
            .iter()
            .map(|l| {
                let toolkit: Vec<PathBuf> = backends.iter().flat_map(|b| b.library_dirs(l)).collect();
                discovery.find_library(l, &plan.link.dirs, &toolkit)
            })
            .collect::<Result<Vec<_>>>()?;
        drop(discovery);
        Ok(Toolchain { targets, support_include, backends, libs, work, probes })
    }

    /// The API version target `id`'s headers declare, if it was found.
    pub(crate) fn api_version(&self, id: TargetId) -> Option<String> {
        self.target(id).and_then(|t| t.api_version.clone())
    }

    fn target(&self, id: TargetId) -> Option<&TargetHeaders> {
        self.targets.iter().find(|t| t.target == id)
    }
}

/// begen's support headers: `BEGEN_SUPPORT_INCLUDE`, else its own, written
/// into the work directory (absolute: compilers run there).
fn support_headers(env: &Env, work: &Path) -> Result<PathBuf> {
    match env.var("BEGEN_SUPPORT_INCLUDE") {
        Some(dir) => Ok(PathBuf::from(dir)),
        None => support::write_headers(work, Path::new("include")),
    }
}

/// The Python that has jax: `BEGEN_PYTHON`, else the venv's begen was
/// installed into, else `python3`.
pub(crate) fn python(env: &Env) -> String {
    Discovery::new(env).python()
}

/// The CUDA major of the nvcc a build would use (`13` of `release 13.0,
/// V13.0.48`), when one is found and answers.
pub(crate) fn nvcc_major(env: &Env) -> Option<u32> {
    let version = Discovery::new(env).cuda().ok()?.version?;
    version.split('.').next()?.trim().parse().ok()
}

/// Runs `python -c script args...` with [`python`], bounded as every
/// question begen asks a program (`BEGEN_PROBE_TIMEOUT`); its stdout, or
/// why there is none.
pub(crate) fn ask_python(env: &Env, script: &str, args: &[&str]) -> std::result::Result<String, String> {
    let d = Discovery::new(env);
    let python = d.python();
    let program = d.program_file(Path::new(&python)).ok_or_else(|| format!("`{python}` was not found"))?;
    let mut all = vec!["-c", script];
    all.extend_from_slice(args);
    let f = d.run_probe(&program, &all)?;
    if !f.status.success() {
        return Err(format!("`{python}` failed: {}", String::from_utf8_lossy(&f.stderr).trim()));
    }
    Ok(String::from_utf8_lossy(&f.stdout).into_owned())
}

/// The API version of each of `targets`' headers that a build would use,
/// where they are found (for `begen generate`, which needs no compiler).
/// The Python's answer is kept in the work directory's `probes.json`, as a
/// build keeps it (the same work directory a build into OUT uses, locked
/// meanwhile), so a repeated generation with nothing changed starts no
/// process; a work directory that cannot be had costs only the probe.
pub(crate) fn api_versions(
    library: &Library,
    targets: &[&dyn TargetToolchain],
    env: &Env,
    reporter: &mut dyn Reporter,
) -> Vec<(TargetId, Option<String>)> {
    let plan = &library.plan;
    let workspace = work::Workspace::open(plan.out(), plan.work_dir.as_deref(), &library.name, env, reporter).ok();
    let probes = workspace.as_ref().map_or_else(probes::Probes::none, |w| probes::Probes::load(&w.dir));
    let discovery = Discovery::with_probes(env, &probes);
    let found: Vec<(TargetId, Option<String>)> =
        targets.iter().filter_map(|t| t.find(plan, &discovery, env).ok()).map(|h| (h.target, h.api_version)).collect();
    drop(discovery);
    probes.finish(env.var("BEGEN_EXPLAIN").is_some(), reporter);
    found
}

/// Writes the generated files of `emitted` under OUT for `begen generate`
/// (only those whose bytes changed; those library `library` generated last
/// time and no longer does removed) and returns their paths.
pub(crate) fn write_sources(out: &Path, library: &str, emitted: &Emitted) -> Result<Vec<PathBuf>> {
    let files: Vec<(&str, &str)> = emitted.files.iter().map(|f| (f.rel_path.as_str(), f.contents.as_str())).collect();
    files::write_generated_files(out, library, &files)
}

/// Refuses, naming it, a file in OUT named like one of the library's
/// outputs (`names`: each selected target's) that begen did not write.
pub(crate) fn refuse_foreign_outputs(library: &Library, names: &[String]) -> Result<()> {
    // The link names its output in its arguments, which are text: an OUT
    // whose path is not UTF-8 would be written as another, lossy, path.
    let out = library.plan.out();
    if std::path::absolute(out).unwrap_or_else(|_| out.to_path_buf()).to_str().is_none() {
        return Err(Error::other(crate::diag::messages::out_not_utf8(&out.display().to_string())));
    }
    files::refuse_foreign(library.plan.out(), &library.name, names, &[])
}

/// Compiles and links a checked [`Library`] from its generated files, as
/// its plan says, with the toolchain found for it: compile, link, commit.
/// On any failure the previous outputs in OUT are left as they were.
pub(crate) fn build_library(
    library: &Library,
    emitted: &Emitted,
    tools: Toolchain,
    env: &Env,
    reporter: &mut dyn Reporter,
) -> Result<BuildOutput> {
    let plan = &library.plan;
    let explain = env.var("BEGEN_EXPLAIN").is_some();
    let work = tools.work.dir.clone();
    let (units, outputs) = write_generated(&work, library, emitted, &tools.targets)?;
    let compilers = compilers(plan, &tools, &work, env)?;
    tools.probes.finish(explain, reporter);
    let options = compile::CompileOptions { jobs: plan.jobs, explain, verbose: plan.verbose, timeout: plan.timeout };
    let stats = compile::compile_units(&work, &units, &compilers, options, reporter)?;
    let all_objects = objects(library, emitted, &work, &units, env, explain, reporter)?;
    let mut needs = LinkNeeds::default();
    for b in &tools.backends {
        let more = b.link_needs()?;
        needs.args.extend(more.args);
        needs.reads.extend(more.reads);
    }
    let host = compilers.host()?;
    // The wrappers' (and plain sources') objects, compiled once, are
    // shared; each target links them with its own units' objects into its
    // own library.
    let unit_of: std::collections::HashMap<&str, TargetId> =
        emitted.target_units().map(|(f, t)| (f.rel_path.as_str(), t)).collect();
    let per_target: Vec<Vec<PathBuf>> = tools
        .targets
        .iter()
        .map(|target| {
            let others = |u: &Unit| unit_of.get(u.name.as_str()).is_some_and(|t| *t != target.target);
            units.iter().zip(&all_objects).filter(|(u, _)| !others(u)).map(|(_, o)| o.clone()).collect()
        })
        .collect();
    let jobs: Vec<link::LinkJob<'_>> = tools
        .targets
        .iter()
        .zip(&per_target)
        .map(|(target, objects)| link::LinkJob {
            work: &work,
            linker: &host.program,
            lead: &host.args[..host.lead.min(host.args.len())],
            objects,
            output: Path::new(&target.library),
            libs: &tools.libs,
            extra: &plan.link.args,
            runtime: &needs.args,
            allow_undefined: target.undefined_symbols,
        })
        .collect();
    let changed = commit(library, &tools, &jobs, &needs.reads, &outputs, explain, reporter)?;
    let libraries: Vec<PathBuf> = tools.targets.iter().map(|t| plan.out().join(&t.library)).collect();
    let mut all_outputs = libraries.clone();
    all_outputs.extend(outputs.iter().map(|f| plan.out().join(&f.rel_path)));
    let paths = plan.outputs.all().map(|name| plan.out().join(name));
    let [jax_library, module_path, stub_path, manifest_path] = paths;
    Ok(BuildOutput {
        library: library.clone(),
        library_path: libraries.first().cloned().unwrap_or(jax_library),
        outputs: all_outputs,
        module_path,
        stub_path,
        manifest_path,
        changed,
        compiled: stats.compiled,
        up_to_date: stats.up_to_date,
        diagnostics: Vec::new(),
        xla_ffi_api: tools.api_version(JAX),
    })
}

/// Each backend's compiler command for the plan (the host's first), and
/// the launcher they run through.
fn compilers(plan: &Plan, tools: &Toolchain, work: &Path, env: &Env) -> Result<Compilers> {
    let discovery = Discovery::with_probes(env, &tools.probes);
    // Relative when it is the work directory's own (commands run there): a
    // command that names no work directory is the same in every one, so a
    // compiler cache (ccache, sccache) hits across them.
    let support = &tools.support_include;
    let mut includes = plan.includes.clone();
    includes.push(support.strip_prefix(work).map_or_else(|_| support.clone(), Path::to_path_buf));
    // Only a target's own TUs include its headers (jax: XLA's, in the
    // glue); every TU keeps them on its path anyway (a kernel source may
    // include them itself), which costs nothing where they are not
    // included. They are not warning-clean under -Wall -Wextra; as system
    // headers their warnings stay out of the user's build output.
    let system_includes: Vec<PathBuf> = tools.targets.iter().flat_map(|t| t.system_includes.clone()).collect();
    let tu = TuInputs {
        includes: &includes,
        system_includes: &system_includes,
        prefix_maps: &plan.prefix_maps,
        work,
        cc_metadata: plan.cc_metadata,
    };
    let mut by_platform = Vec::new();
    for (b, asked) in tools.backends.iter().zip(&plan.backends) {
        by_platform.push((b.platform(), b.command(asked, &tu, &discovery, true)?));
    }
    let launcher = compiler_launcher(plan.launcher.as_ref(), &discovery)?;
    Ok(Compilers { by_platform, launcher })
}

/// The objects to link: each unit's, with the symbols that clash between
/// the modules of a namespaced library made local (see
/// [`link::localize_clashes`]).
fn objects(
    library: &Library,
    emitted: &Emitted,
    work: &Path,
    units: &[Unit],
    env: &Env,
    explain: bool,
    reporter: &mut dyn Reporter,
) -> Result<Vec<PathBuf>> {
    let objects: Vec<PathBuf> = units.iter().map(|u| u.object.clone()).collect();
    // A source tuned over its defines is compiled once per candidate: the
    // candidates' symbols clash like a namespaced library's modules'.
    let candidates: Vec<bool> = units.iter().map(|u| emitted.tune_candidates.contains(&u.name)).collect();
    if !library.namespaced && !candidates.contains(&true) {
        return Ok(objects);
    }
    let tool = |var: &str, default: &str| PathBuf::from(env.var(var).unwrap_or_else(|| default.to_string()));
    let mut notes = Vec::new();
    let localized =
        link::localize_clashes(work, &objects, &candidates, &tool("NM", "nm"), &tool("OBJCOPY", "objcopy"), &mut notes);
    if explain {
        notes.iter().for_each(|n| reporter.progress(n));
    }
    localized
}

/// Links every target's library (`jobs`, one per selected target) into
/// one staging folder of OUT and renames the outputs into place together
/// (only those whose bytes changed): a link that fails commits nothing, so
/// OUT never holds one target's new library beside another's old one.
/// Nothing at all is linked when the objects, the commands and OUT are as
/// the last build left them. Returns the outputs that changed.
fn commit(
    library: &Library,
    tools: &Toolchain,
    jobs: &[link::LinkJob<'_>],
    runtime_reads: &[PathBuf],
    outputs: &[&GeneratedFile],
    explain: bool,
    reporter: &mut dyn Reporter,
) -> Result<Vec<PathBuf>> {
    let plan = &library.plan;
    let work = &tools.work.dir;
    let (out, names) = (plan.out(), &plan.outputs);
    let libraries: Vec<PathBuf> = jobs.iter().map(|j| out.join(j.output)).collect();
    let inputs = relink::LinkInputs::all(
        jobs.iter()
            .map(|job| {
                let mut read: Vec<PathBuf> = job.objects.to_vec();
                read.extend(tools.libs.iter().map(|l| l.dir.join(&l.file)));
                read.extend(runtime_reads.iter().cloned());
                relink::LinkInputs::new(work, job.linker, &link::link_args(job), &read)
            })
            .collect(),
    );
    let expected: Vec<(PathBuf, &[u8])> =
        outputs.iter().map(|f| (out.join(&f.rel_path), f.contents.as_bytes())).collect();
    // A table this build does not ship (begen.yaml no longer names one)
    // must not go on choosing candidates from OUT, even when nothing else
    // changed.
    let table = out.join(&names.tune_table);
    let dropped = library.tuning.table.is_none() && table.is_file();
    if dropped {
        std::fs::remove_file(&table).map_err(|e| Error::io(&table, e))?;
    }
    let Some(why) = inputs.stale(work, &libraries, &expected) else {
        return Ok(if dropped { vec![table] } else { Vec::new() });
    };
    relink::LinkInputs::forget(work);
    let staging = tools.work.stage(&library.name)?;
    let stage = &staging.0;
    let mut staged = Vec::new();
    for job in jobs {
        if explain {
            reporter.progress(&format!("{}: linking, as {why}", job.output.display()));
        } else if jobs.len() > 1 {
            reporter.progress(&format!("linking {}", job.output.display()));
        }
        let staged_lib = stage.join(job.output);
        link::link(&link::LinkJob { output: &staged_lib, ..*job })?;
        staged.push(staged_lib);
    }
    for file in outputs {
        let path = stage.join(&file.rel_path);
        std::fs::write(&path, file.contents.as_bytes()).map_err(|e| Error::io(&path, e))?;
        staged.push(path);
    }
    let mut changed = files::commit_staged(&staged, out, &names.module)?;
    changed.extend(dropped.then_some(table));
    drop(staging);
    inputs.save(work, &libraries);
    Ok(changed)
}

/// The program every compile runs through, as the plan names it, with the
/// arguments written after it (`env FOO=1 ccache`, split as
/// [`words::split`] does; a value that is a file's path as a whole is that
/// file): the program a path, or a name found on `PATH`. One that cannot
/// be found or split is an error naming where it was set.
fn compiler_launcher(launcher: Option<&Launcher>, discovery: &Discovery) -> Result<Option<Vec<OsString>>> {
    let Some(Launcher { program, from }) = launcher else {
        return Ok(None);
    };
    let words = if Path::new(program).is_file() {
        vec![program.clone()]
    } else {
        words::split(program).map_err(|e| {
            Error::toolchain(crate::diag::messages::command_value_unsplittable(from, program, e.column, &e.what))
        })?
    };
    let Some((first, args)) = words.split_first() else {
        return Ok(None);
    };
    match discovery.program_file(Path::new(first)) {
        Some(file) => Ok(Some(std::iter::once(file.into_os_string()).chain(args.iter().map(OsString::from)).collect())),
        None => Err(Error::toolchain(crate::diag::messages::launcher_not_found(first, from))),
    }
}

/// Writes the generated TUs under `work/gen` (only when changed; stale ones
/// removed) and lists every unit to compile, each weighed for the order
/// the compile stage starts them in: the glue, the library's un-annotated
/// sources, then the generated wrappers. Returns the units and
/// the top-level outputs (module, stub, manifest) still to be staged.
fn write_generated<'e>(
    work: &Path,
    library: &Library,
    emitted: &'e Emitted,
    targets: &[TargetHeaders],
) -> Result<(Vec<Unit>, Vec<&'e GeneratedFile>)> {
    let mut units = Vec::new();
    // Weights for the order of a build with no compile times on record: a
    // unit's bytes of source (a wrapper's are its kernel source's), nvcc's
    // four times a host compiler's.
    let size = |path: &Path| std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let weigh = |bytes: u64, platform: Platform| if platform == Platform::Cuda { bytes * 4 } else { bytes };
    let source_bytes: std::collections::HashMap<&str, u64> =
        library.sources.iter().map(|s| (s.file.as_str(), size(&s.path))).collect();
    let generated_unit = |file: &GeneratedFile, platform: Platform| Unit {
        source: PathBuf::from(&file.rel_path),
        name: file.rel_path.clone(),
        platform,
        object: Path::new("obj").join(format!("{}.o", file.rel_path)),
        fingerprint: String::new(),
        args: Vec::new(),
        weight: weigh(
            file.contents.len() as u64 + file.source.as_deref().and_then(|f| source_bytes.get(f)).copied().unwrap_or(0),
            platform,
        ),
    };
    for (file, target) in emitted.target_units() {
        // Host C++ always: the handlers need no CUDA (jax's binaries TU
        // opens the driver at run time), only their target's headers,
        // which `-isystem` keeps out of the depfile: their fingerprint is
        // part of the unit's record, so a new version (a jaxlib upgrade)
        // rebuilds it.
        let mut unit = generated_unit(file, Platform::Cpu);
        if let Some(t) = targets.iter().find(|t| t.target == target) {
            unit.fingerprint = t.fingerprint.clone();
            unit.args = t.unit_args.clone();
        }
        // A heavy unit (every handler's XLA FFI templates) is slower per
        // byte than the kernels.
        if matches!(file.kind, FileKind::TargetUnit { heavy: true, .. }) {
            unit.weight = unit.weight.saturating_mul(4);
        }
        units.push(unit);
    }
    // An annotated source is compiled inside its wrapper TU (which includes
    // it); compiling it on its own as well would define everything twice.
    let wrapped = |file: &str| emitted.wrappers().any(|(w, _)| w.source.as_deref() == Some(file));
    for source in library.sources.iter().filter(|s| !wrapped(&s.file)) {
        let path = std::fs::canonicalize(&source.path).map_err(|e| Error::io(&source.path, e))?;
        let weight = weigh(source_bytes.get(source.file.as_str()).copied().unwrap_or(0), source.platform);
        units.push(Unit {
            source: path,
            name: source.file.clone(),
            platform: source.platform,
            object: Path::new("obj/src").join(format!("{}.o", source.file)),
            fingerprint: String::new(),
            args: Vec::new(),
            weight,
        });
    }
    for (file, platform) in emitted.wrappers() {
        units.push(generated_unit(file, platform));
    }
    // Written only when their bytes changed: the glue, whose text depends on
    // the kernels' names and signatures only, keeps its mtime (and object)
    // while kernel bodies are edited.
    let mut written = Vec::new();
    for file in emitted.translation_units() {
        let path = work.join(&file.rel_path);
        files::write_work_file(work, Path::new(&file.rel_path), file.contents.as_bytes())?;
        written.push(path);
    }
    files::remove_stale(&work.join("gen"), &written)?;
    let outputs = emitted.files.iter().filter(|f| !f.kind.is_translation_unit()).collect();
    Ok((units, outputs))
}

/// The nvcc a build would use, found as `begen doctor` says (`NVCC`,
/// `CUDA_PATH`, `CUDA_HOME`, `PATH`, `/usr/local/cuda`, then pip's CUDA in
/// `BEGEN_PYTHON`'s environment).
///
/// ```no_run
/// let nvcc = begen::build::nvcc(&begen::driver::Env::new())?;
/// println!("{}", nvcc.display());
/// # Ok::<(), begen::Error>(())
/// ```
#[cfg(test)]
pub(crate) fn nvcc(env: &Env) -> Result<PathBuf> {
    Discovery::new(env).cuda().map(|c| c.nvcc)
}

/// Counts diagnostics by severity (for summaries).
pub(crate) fn count(diagnostics: &[Diagnostic], severity: Severity) -> usize {
    diagnostics.iter().filter(|d| d.severity == severity).count()
}

#[cfg(test)]
mod doc_examples {
    //! The examples of this module's crate-private items, run as unit tests
    //! (an example in a doc comment must compile outside the crate).

    #[test]
    fn count() {
        use crate::diag::SourceMap;
        use crate::diag::{Diagnostic, Severity};
        let mut map = SourceMap::default();
        let a = map.add("a.cu", "a.cu", b"void f();".to_vec());
        let diags = [Diagnostic::error(map.span(a, 5, 6), "bad"), Diagnostic::warning(map.span(a, 0, 4), "odd")];
        assert_eq!(crate::build::count(&diags, Severity::Error), 1);
    }
}

/// The readers of the records begen keeps in its work directory (and in
/// OUT), reached directly by the bounded fuzz run (tests/fuzz.rs): each
/// must take any bytes without a panic and either reject the record (the
/// next build redoes the step) or accept a well-formed one. Not an API.
#[doc(hidden)]
pub mod fuzz_hooks {
    use std::path::{Path, PathBuf};

    /// Checks an object's dependency record (`<obj>.deps`, paths relative
    /// to `work`): `Ok(())` when every file is as recorded, else why not.
    pub fn check_deps(work: &Path, record: &str) -> std::result::Result<(), String> {
        super::compile::check_deps(work, record).map(|_| ())
    }

    /// Writes the dependency record of `object` (built from `deps`, paths
    /// relative to `work`) as a compile does; returns its text.
    pub fn record_deps(work: &Path, object: &Path, deps: &[PathBuf]) -> String {
        let started = std::time::SystemTime::UNIX_EPOCH;
        let _ = super::compile::record_deps(work, object, deps, &[], started);
        std::fs::read_to_string(work.join({
            let mut name = object.as_os_str().to_owned();
            name.push(".deps");
            PathBuf::from(name)
        }))
        .unwrap_or_default()
    }

    /// Reads `text` as the identity fields of a record line (`times`,
    /// `size`); `true` when they parse.
    pub fn stamp_parses(times: &str, size: &str) -> bool {
        super::stamp::Stamp::parse(times, size).is_some()
    }

    /// The prerequisites of a compiler's depfile (`<obj>.d`).
    pub fn depfile_prerequisites(text: &str) -> Vec<PathBuf> {
        super::compile::parse_depfile(text)
    }

    /// Loads `work/probes.json` and asks for probe `name` with `inputs`:
    /// the answer on record when it is valid, else `fresh` (the probe
    /// "runs"; with `keep` the answer is recorded and saved with the
    /// identity of `files`).
    pub fn probe(work: &Path, name: &str, inputs: &str, fresh: Vec<String>, keep: Option<Vec<PathBuf>>) -> Vec<String> {
        let probes = super::probes::Probes::load(work);
        let value = probes.get_or(name, inputs, || (fresh, keep));
        probes.save();
        value
    }

    /// Whether the link record in `work` (`link.record`) lets a link of
    /// `args` into `library` be skipped: `None` when it does, else why not.
    /// With `save`, records the link first (as a build does after one).
    pub fn link_stale(work: &Path, args: &[String], library: &Path, save: bool) -> Option<String> {
        let inputs = || super::relink::LinkInputs::new(work, Path::new("ld"), args, &[]);
        if save {
            inputs().save(work, &[library.to_path_buf()]);
        }
        inputs().stale(work, &[library.to_path_buf()], &[])
    }

    /// The `_BEGEN_BUILD` id of the generated module at `path`.
    pub fn module_build(path: &Path) -> Option<String> {
        super::files::module_build(path)
    }

    /// Writes generated `files` (path relative to `out`, text) of
    /// `library` as `begen generate` does, after the record of the last
    /// run (`out/gen/<library>.begen-files`), whatever it holds.
    pub fn write_generated(out: &Path, library: &str, files: &[(&str, &str)]) -> crate::Result<Vec<PathBuf>> {
        super::files::write_generated_files(out, library, files)
    }
}
