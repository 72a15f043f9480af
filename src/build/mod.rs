//! Stage 5, build: from the checked library and its generated files,
//! compile every translation unit and link `lib<NAME>.so` beside the
//! generated Python module and manifest. `begen::driver::build` runs the
//! whole pipeline into it; this module holds its environment ([`Env`]), its
//! [`Reporter`] and its results.
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
//!   compiler: XLA's FFI headers (about 1.5 s of g++ per TU, more under
//!   nvcc) are parsed once per library instead of once per source.
//!   Un-annotated sources compile as they are.
//! - Host TUs: cc's C++ compiler (`CXX`), `-std=c++17 -fPIC`. CUDA TUs: the
//!   nvcc begen found, driven with cc's flags for nvcc (`-ccbin` = the host
//!   compiler, `-Xcompiler -fPIC`), `-std=c++17` and one `-gencode` per
//!   architecture (see [`arch`]).
//! - Linking: the host compiler links the objects directly (no archive)
//!   with `-shared -Wl,--no-undefined`. CUDA libraries link the *static*
//!   CUDA runtime (`libcudart_static.a`, nvcc's own default), so the `.so`
//!   needs no `libcudart.so` on the loader's path; `--exclude-libs,ALL`
//!   keeps that runtime's symbols private so they never clash with the
//!   runtime JAX loads. CUDA and XLA share the driver's primary context,
//!   so XLA's stream is valid in the kernel's runtime.
//! - `--platform cpu` with CUDA sources present: those sources and their
//!   kernels are skipped, each with a warning (never silently). `cuda`
//!   requires nvcc. `auto` (the default) requires nvcc only when CUDA
//!   sources exist, and then fails clearly if it is missing.
//! - Layout of OUT: the four outputs and nothing else. The generated TUs
//!   (`gen/`), objects with their depfiles and commands (`obj/`), the
//!   support headers and the lock live in a work directory outside OUT (see
//!   [`work`]: `--work-dir`, else a per-user cache keyed by OUT). Final
//!   outputs are staged in a transient folder of OUT and renamed into place
//!   only when everything succeeded, and only if their bytes changed.
//! - Determinism: inputs are sorted, no timestamps or random names reach
//!   outputs, commands run in the work directory with relative paths for
//!   generated files, and no debug info is generated unless asked for.

mod arch;
mod compdb;
mod compile;
mod env;
mod files;
mod jaxlib;
mod link;
mod probes;
mod process;
mod relink;
mod stamp;
mod support;
mod toolchain;
mod warnings;
mod work;

use std::path::{Path, PathBuf};

pub(crate) use crate::model::PlatformChoice;
pub(crate) use arch::CudaArch;
pub use env::Env;

use crate::diag::{Diagnostic, Severity};
use crate::error::{Error, Result};
use crate::model::generated::{Emitted, FileKind, GeneratedFile};
use crate::model::{Library, Platform};
use crate::settings::Settings;
use crate::source::SourceMap;
use compile::{CompilerCmd, Compilers, Unit};
use toolchain::Discovery;

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
    /// `OUT/lib<NAME>.so`.
    pub(crate) library_path: PathBuf,
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

    /// `OUT/lib<NAME>.so`.
    pub fn library_path(&self) -> &Path {
        &self.library_path
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
    /// Copies the files Python needs — `lib<NAME>.so`, `<NAME>.py`,
    /// `<NAME>.pyi` and the manifest `<NAME>.yaml` — into `dir` (a folder of a
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
        for from in [&self.library_path, &self.module_path, &self.stub_path, &self.manifest_path] {
            let bytes = std::fs::read(from).map_err(|e| Error::io(from, e))?;
            let to = dir.join(from.file_name().unwrap_or_default());
            if files::write_if_changed(&to, &bytes)? {
                written.push(to);
            }
        }
        Ok(written)
    }
}

/// The toolchain pieces a build of one library needs, resolved before
/// anything is generated (the XLA FFI API version is written into the
/// manifest).
pub(crate) struct Toolchain {
    xla_include: PathBuf,
    support_include: PathBuf,
    /// The XLA FFI API version of the headers built against.
    pub(crate) xla_ffi_api: Option<String>,
    cuda: Option<toolchain::Cuda>,
    libs: Vec<toolchain::FoundLib>,
    /// The work directory, locked (with OUT) until the build ends.
    work: work::Workspace,
    /// The toolchain's answers kept in the work directory.
    probes: probes::Probes,
}

impl Toolchain {
    /// Takes the work directory (waiting for another build of the same
    /// OUT or work directory), then finds XLA's FFI headers, begen's
    /// support headers and, when the library builds CUDA sources, nvcc.
    pub(crate) fn resolve(
        library: &Library,
        opts: &Settings,
        env: &Env,
        reporter: &mut dyn Reporter,
    ) -> Result<Toolchain> {
        let work = work::Workspace::open(opts, &library.name, env, reporter)?;
        let probes = probes::Probes::load(&work.dir);
        let discovery = Discovery::with_probes(env, &probes);
        let xla_include = xla_headers(&discovery, env, library.settings.jax_min.as_deref())?;
        let support_include = match env.var("BEGEN_SUPPORT_INCLUDE") {
            Some(dir) => PathBuf::from(dir),
            // Absolute: compilers run in the work directory.
            None => support::write_headers(&work.dir.join("include"))?,
        };
        let xla_ffi_api = toolchain::xla_ffi_api_version(&xla_include);
        let cuda = if library.settings.cuda { Some(discovery.cuda()?) } else { None };
        let settings = &library.settings;
        let dirs: Vec<PathBuf> = opts.link_dirs.iter().chain(&settings.link_dirs).cloned().collect();
        let libs = settings
            .link_libs
            .iter()
            .chain(&opts.link_libs)
            .map(|l| discovery.find_library(l, &dirs, cuda.as_ref()))
            .collect::<Result<Vec<_>>>()?;
        drop(discovery);
        Ok(Toolchain { xla_include, support_include, xla_ffi_api, cuda, libs, work, probes })
    }
}

/// The XLA FFI headers a build compiles against: jaxlib `jax_min`'s (from
/// the per-user cache, downloaded once), else `XLA_FFI_INCLUDE_DIR`, else
/// the running jaxlib's.
fn xla_headers(discovery: &Discovery, env: &Env, jax_min: Option<&str>) -> Result<PathBuf> {
    match jax_min {
        Some(version) => jaxlib::headers(env, &discovery.python(), version),
        None => discovery.xla_ffi_include(),
    }
}

/// The XLA FFI API version of the headers a build would use, if they are
/// found (for `begen generate`, which needs no compiler). The Python's
/// answer is kept in the work directory's `probes.json`, as a build keeps
/// it (the same work directory a build into OUT uses, locked meanwhile), so
/// a repeated generation with nothing changed starts no process; a work
/// directory that cannot be had costs only the probe.
pub(crate) fn xla_ffi_api(
    library: &Library,
    opts: &Settings,
    env: &Env,
    reporter: &mut dyn Reporter,
) -> Option<String> {
    let workspace = work::Workspace::open(opts, &library.name, env, reporter).ok();
    let probes = workspace.as_ref().map_or_else(probes::Probes::none, |w| probes::Probes::load(&w.dir));
    let discovery = Discovery::with_probes(env, &probes);
    let include = xla_headers(&discovery, env, library.settings.jax_min.as_deref()).ok();
    drop(discovery);
    probes.finish(env.var("BEGEN_EXPLAIN").is_some(), reporter);
    include.and_then(|i| toolchain::xla_ffi_api_version(&i))
}

/// Writes the generated files of `emitted` under OUT for `begen generate`
/// (only those whose bytes changed; those library `library` generated last
/// time and no longer does removed) and returns their paths.
pub(crate) fn write_sources(out: &Path, library: &str, emitted: &Emitted) -> Result<Vec<PathBuf>> {
    let files: Vec<(&str, &str)> = emitted.files.iter().map(|f| (f.rel_path.as_str(), f.contents.as_str())).collect();
    files::write_generated_files(out, library, &files)
}

/// Refuses, naming it, a file in OUT named like one of library `name`'s
/// four outputs that begen did not write.
pub(crate) fn refuse_foreign_outputs(out: &Path, name: &str) -> Result<()> {
    let four = [format!("lib{name}.so"), format!("{name}.py"), format!("{name}.pyi"), format!("{name}.yaml")];
    files::refuse_foreign(out, name, &four, &[])
}

/// Compiles and links a checked [`Library`] from its generated files: its
/// settings supply include directories, flags and whether nvcc is needed.
/// On any failure the previous outputs in OUT are left as they were.
pub(crate) fn build_library(
    library: &Library,
    emitted: &Emitted,
    tools: Toolchain,
    opts: &Settings,
    env: &Env,
    reporter: &mut dyn Reporter,
) -> Result<BuildOutput> {
    let Toolchain { xla_include, support_include, xla_ffi_api, cuda, libs, work: workspace, probes } = tools;
    let discovery = Discovery::with_probes(env, &probes);
    let settings = &library.settings;
    let work = workspace.dir.clone();
    let explain = env.var("BEGEN_EXPLAIN").is_some();
    let (units, outputs) = write_generated(&work, library, emitted, &xla_include)?;

    let mut includes: Vec<PathBuf> = opts.includes.clone();
    includes.extend(settings.include_dirs.iter().cloned());
    includes.push(library.root.clone());
    // Relative when it is the work directory's own (commands run there): a
    // command that names no work directory is the same in every one, so a
    // compiler cache (ccache, sccache) hits across them.
    includes.push(support_include.strip_prefix(&work).map_or_else(|_| support_include.clone(), Path::to_path_buf));
    // Only the glue includes XLA's headers; every TU keeps them on its path
    // anyway (a kernel source may include them itself), which costs nothing
    // where they are not included. They are not warning-clean under -Wall
    // -Wextra; as system headers their warnings stay out of the user's
    // build output.
    let system_includes = vec![xla_include];

    // `__FILE__` (BE_CHECK's messages) relative to the kernel directory, so
    // the library holds no path of the machine it was built on and the same
    // tree gives the same bytes wherever it is.
    let maps = file_prefix_maps(&library.root);
    let cxx_flags: Vec<String> = maps.iter().cloned().chain(settings.cxx_flags.iter().cloned()).collect();
    let host = host_compiler(opts, &cxx_flags, &includes, &system_includes, &work, Some(&discovery))?;
    let cuda_cmd = match &cuda {
        Some(cuda) => {
            let (archs, _) = discovery.cuda_archs(&opts.arch, &settings.cuda_arch, cuda)?;
            // nvcc has no such option of its own: its host compiler, which
            // also preprocesses the device code, does the mapping.
            let cuda_flags: Vec<String> =
                maps.iter().map(|m| format!("-Xcompiler={m}")).chain(settings.cuda_flags.iter().cloned()).collect();
            Some(cuda_compiler(opts, &cuda_flags, &includes, &system_includes, &work, cuda, &archs, Some(&discovery))?)
        }
        None => None,
    };
    let launcher = compiler_launcher(opts, settings, &discovery, env)?;
    let compilers = Compilers { host: host.clone(), cuda: cuda_cmd, launcher };
    drop(discovery);
    probes.finish(explain, reporter);
    let jobs = opts.jobs.unwrap_or_else(|| {
        env.var("NUM_JOBS")
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
    });
    // A compile that hangs is stopped: 30 minutes by default.
    let seconds = env.var("BEGEN_COMPILE_TIMEOUT").and_then(|s| s.parse::<u64>().ok()).unwrap_or(1800);
    let timeout = std::time::Duration::from_secs(seconds.max(1));
    let options = compile::CompileOptions { jobs, explain, verbose: opts.verbose, timeout };
    let stats = compile::compile_units(&work, &units, &compilers, options, reporter)?;

    let lib_file = format!("lib{}.so", library.name);
    let mut objects: Vec<PathBuf> = units.iter().map(|u| u.object.clone()).collect();
    if library.namespaced {
        let tool = |var: &str, default: &str| PathBuf::from(env.var(var).unwrap_or_else(|| default.to_string()));
        let mut notes = Vec::new();
        let localized =
            link::localize_clashes(&work, &objects, &tool("NM", "nm"), &tool("OBJCOPY", "objcopy"), &mut notes);
        if explain {
            notes.iter().for_each(|n| reporter.progress(n));
        }
        objects = localized?;
    }
    // Binary kernels open the CUDA driver with dlopen (in libc from glibc 2.34, in libdl before).
    let extra: Vec<String> = settings
        .link_args
        .iter()
        .chain(&opts.link_args)
        .cloned()
        .chain(library.binaries.iter().take(1).map(|_| "-ldl".to_string()))
        .collect();
    fn job<'a>(base: &link::LinkJob<'a>, output: &'a Path) -> link::LinkJob<'a> {
        link::LinkJob { output, ..*base }
    }
    let lib_path = PathBuf::from(&lib_file);
    let base = link::LinkJob {
        work: &work,
        linker: &host.program,
        objects: &objects,
        output: &lib_path,
        cudart_dir: cuda.as_ref().map(|c| c.cudart_dir.as_deref()),
        libs: &libs,
        extra: &extra,
    };

    // Nothing to link or write when the objects, the command and OUT are
    // as the last build left them.
    let out = opts.out_dir();
    let name = &library.name;
    let paths = OutputPaths::new(out, name);
    let mut read: Vec<PathBuf> = objects.clone();
    read.extend(libs.iter().map(|l| l.dir.join(&l.file)));
    if let Some(dir) = cuda.as_ref().and_then(|c| c.cudart_dir.as_ref()) {
        read.push(dir.join("libcudart_static.a"));
    }
    let inputs = relink::LinkInputs::new(&work, &host.program, &link::link_args(&base)?, &read);
    let expected: Vec<(PathBuf, &[u8])> =
        outputs.iter().map(|f| (out.join(&f.rel_path), f.contents.as_bytes())).collect();
    let why = inputs.stale(&work, &paths.library, &expected);
    let changed = match why {
        None => Vec::new(),
        Some(why) => {
            if explain {
                reporter.progress(&format!("{lib_file}: linking, as {why}"));
            }
            relink::LinkInputs::forget(&work);
            let staging = workspace.stage(&library.name)?;
            let stage = &staging.0;
            let staged_lib = stage.join(&lib_file);
            link::link(&job(&base, &staged_lib))?;
            let mut staged = vec![stage.join(&lib_file)];
            for file in outputs {
                let path = stage.join(&file.rel_path);
                std::fs::write(&path, file.contents.as_bytes()).map_err(|e| Error::io(&path, e))?;
                staged.push(path);
            }
            let changed = files::commit_staged(&staged, out, &format!("{name}.py"))?;
            drop(staging);
            inputs.save(&work, &paths.library);
            changed
        }
    };

    Ok(BuildOutput {
        library: library.clone(),
        library_path: paths.library,
        module_path: paths.module,
        stub_path: paths.stub,
        manifest_path: paths.manifest,
        changed,
        compiled: stats.compiled,
        up_to_date: stats.up_to_date,
        diagnostics: Vec::new(),
        xla_ffi_api,
    })
}

/// The four outputs' paths in OUT.
struct OutputPaths {
    library: PathBuf,
    module: PathBuf,
    stub: PathBuf,
    manifest: PathBuf,
}

impl OutputPaths {
    fn new(out: &Path, name: &str) -> OutputPaths {
        OutputPaths {
            library: out.join(format!("lib{name}.so")),
            module: out.join(format!("{name}.py")),
            stub: out.join(format!("{name}.pyi")),
            manifest: out.join(format!("{name}.yaml")),
        }
    }
}

/// The program every compile runs through: the settings' (build.rs's
/// `.compiler_launcher`), else `BEGEN_COMPILER_LAUNCHER`, else begen.yaml's
/// `compiler_launcher`; a path, or a name found on `PATH`. One that cannot
/// be found is an error naming where it was set.
fn compiler_launcher(
    opts: &Settings,
    settings: &crate::model::Settings,
    discovery: &Discovery,
    env: &Env,
) -> Result<Option<PathBuf>> {
    let (program, from) =
        match (&opts.compiler_launcher, env.var("BEGEN_COMPILER_LAUNCHER"), &settings.compiler_launcher) {
            (Some(p), _, _) => (p.clone(), "the build script's `.compiler_launcher`"),
            (None, Some(p), _) => (p, "BEGEN_COMPILER_LAUNCHER"),
            (None, None, Some(p)) => (p.clone(), "begen.yaml's `compiler_launcher`"),
            (None, None, None) => return Ok(None),
        };
    let program = program.trim();
    if program.is_empty() {
        return Ok(None);
    }
    match discovery.program_file(Path::new(program)) {
        Some(file) => Ok(Some(file)),
        None => Err(Error::toolchain(crate::diag::messages::launcher_not_found(program, from))),
    }
}

/// `-ffile-prefix-map` flags that write the kernel directory `root` (as
/// given and, where it differs, as the file system resolves it) as nothing,
/// so `__FILE__` of `root/sub/k.cpp` is `sub/k.cpp`. Roots whose path has
/// a `=` or a comma (which would end the option or nvcc's `-Xcompiler`
/// argument) are left unmapped.
fn file_prefix_maps(root: &Path) -> Vec<String> {
    let mut roots = vec![root.to_path_buf()];
    if let Ok(real) = std::fs::canonicalize(root)
        && real != root
    {
        roots.push(real);
    }
    roots
        .iter()
        .map(|r| r.display().to_string())
        .filter(|r| !r.contains(['=', ',']) && !r.is_empty())
        .map(|r| format!("-ffile-prefix-map={}/=", r.trim_end_matches('/')))
        .collect()
}

/// The XLA FFI headers' contents, as one fingerprint.
fn xla_fingerprint(include: &Path) -> String {
    let mut parts = Vec::new();
    for header in ["xla/ffi/api/ffi.h", "xla/ffi/api/api.h", "xla/ffi/api/c_api.h"] {
        let hash = stamp::content_hash(&include.join(header)).unwrap_or_default();
        parts.push(format!("{header}={hash:016x}"));
    }
    format!("xla-ffi {}", parts.join(" "))
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
    xla_include: &Path,
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
        weight: weigh(
            file.contents.len() as u64 + file.source.as_deref().and_then(|f| source_bytes.get(f)).copied().unwrap_or(0),
            platform,
        ),
    };
    for glue in emitted.glue_parts() {
        // Host C++ always: the handlers need no CUDA, only XLA's headers,
        // which `-isystem` keeps out of the depfile: their fingerprint is
        // part of the glue's record, so a jaxlib upgrade rebuilds it.
        let mut unit = generated_unit(glue, Platform::Cpu);
        unit.fingerprint = xla_fingerprint(xla_include);
        // Every handler's XLA FFI templates: slower per byte than the kernels.
        unit.weight = unit.weight.saturating_mul(4);
        units.push(unit);
    }
    // The binaries TU: host C++ too (the driver is opened at run time).
    for file in emitted.files.iter().filter(|f| f.kind == FileKind::Binaries) {
        let mut unit = generated_unit(file, Platform::Cpu);
        unit.fingerprint = xla_fingerprint(xla_include);
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
        files::write_if_changed(&path, file.contents.as_bytes())?;
        written.push(path);
    }
    files::remove_stale(&work.join("gen"), &written)?;
    let outputs = emitted
        .files
        .iter()
        .filter(|f| !matches!(f.kind, FileKind::Wrapper(_) | FileKind::Glue | FileKind::Binaries))
        .collect();
    Ok((units, outputs))
}

fn cc_error(what: &str, e: cc::Error) -> Error {
    Error::toolchain(format!("{what}: {e}. Set CXX to a working C++17 compiler (g++ or clang++)."))
}

/// The host C++ command from cc: its compiler and flags, plus C++17, PIC,
/// the include directories and the configured flags. With a `discovery`
/// that keeps probes, cc's detection is reused (see [`detected`]).
fn host_compiler(
    opts: &Settings,
    cxx_flags: &[String],
    includes: &[PathBuf],
    system_includes: &[PathBuf],
    work: &Path,
    discovery: Option<&Discovery>,
) -> Result<CompilerCmd> {
    let mut b = opts.host_cc.clone();
    b.cpp(true).pic(true).std("c++17").out_dir(work.join("cc")).includes(includes);
    for dir in system_includes {
        b.flag("-isystem").flag(dir.as_os_str());
    }
    for flag in cxx_flags.iter().chain(&opts.cxx_flags) {
        b.flag(flag);
    }
    detected(&b, "host C++ compiler", opts, discovery, None, || {
        let tool = b.try_get_compiler().map_err(|e| cc_error("no usable host C++ compiler", e))?;
        Ok(CompilerCmd::from_tool(&tool, None))
    })
}

/// The nvcc command: cc's flags for nvcc with begen's nvcc as the program.
#[allow(clippy::too_many_arguments)]
fn cuda_compiler(
    opts: &Settings,
    cuda_flags: &[String],
    includes: &[PathBuf],
    system_includes: &[PathBuf],
    work: &Path,
    cuda: &toolchain::Cuda,
    archs: &[CudaArch],
    discovery: Option<&Discovery>,
) -> Result<CompilerCmd> {
    let mut b = opts.cuda_cc.clone();
    // cc's `.std()` would reach only the host compiler (`-Xcompiler`); nvcc's
    // own front end needs the dialect too.
    b.cpp(true).cuda(true).pic(true).out_dir(work.join("cc")).includes(includes).flag("-std=c++17");
    for dir in system_includes {
        b.flag("-isystem").flag(dir.as_os_str());
    }
    for flag in arch::gencode_flags(archs) {
        b.flag(flag);
    }
    for flag in cuda_flags.iter().chain(&opts.cuda_flags) {
        b.flag(flag);
    }
    detected(&b, "CUDA compiler", opts, discovery, Some(&cuda.nvcc), || {
        // cc asserts (panics) when CXX carries arguments in CUDA mode; turn that
        // into an error rather than a backtrace.
        let tool = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| b.try_get_compiler()))
            .map_err(|_| {
                Error::toolchain(
                    "cc cannot drive nvcc when CXX carries arguments; set CXX to the compiler alone \
                     (flags go in CXXFLAGS)"
                        .to_string(),
                )
            })?
            .map_err(|e| cc_error("no usable host compiler for nvcc", e))?;
        Ok(CompilerCmd::from_tool(&tool, Some(&cuda.nvcc)))
    })
}

/// cc's answer for the configuration `b` (`detect` runs cc, which starts
/// the compiler to learn its family), kept in the build's probes while
/// `b`, the environment and the compiler binaries (the program, nvcc's
/// `-ccbin` host compiler) are the same. Not kept when cc prints `cargo:`
/// lines (build.rs): Cargo must hear of every variable cc reads, each time.
fn detected(
    b: &cc::Build,
    what: &str,
    opts: &Settings,
    discovery: Option<&Discovery>,
    nvcc: Option<&Path>,
    detect: impl FnOnce() -> Result<CompilerCmd>,
) -> Result<CompilerCmd> {
    let config = cc_config(b);
    let Some(discovery) = discovery.filter(|_| !opts.cc_metadata && !config.contains("metadata: true")) else {
        return detect();
    };
    let inputs = format!("{config}\nnvcc {}", nvcc.map(|p| p.display().to_string()).unwrap_or_default());
    let mut failure = None;
    let cmd: Option<CompilerCmd> = discovery.remembered(what, &inputs, || match detect() {
        Ok(cmd) => {
            let mut programs = vec![cmd.program.clone()];
            let mut args = cmd.args.iter().map(|a| a.to_string_lossy());
            while let Some(arg) = args.next() {
                match arg.strip_prefix("-ccbin") {
                    Some("") => programs.extend(args.next().map(|a| PathBuf::from(a.as_ref()))),
                    Some(rest) => programs.push(PathBuf::from(rest.trim_start_matches('='))),
                    None => {}
                }
            }
            let files: Option<Vec<PathBuf>> = programs.iter().map(|p| discovery.program_file(p)).collect();
            (Some(cmd), files)
        }
        Err(e) => {
            failure = Some(e);
            (None, None)
        }
    });
    match (cmd, failure) {
        (Some(cmd), _) => Ok(cmd),
        (None, Some(e)) => Err(e),
        (None, None) => Err(Error::other(format!("internal: no answer for the {what}"))),
    }
}

/// cc's configuration as text, without its caches (filled as cc runs) and
/// its once-only flags, which say nothing about the compiler it picks.
fn cc_config(b: &cc::Build) -> String {
    let mut text = format!("{b:?}");
    for field in ["build_cache: ", "checked_dbg_var: "] {
        text = without_field(&text, field);
    }
    text
}

/// `text` (a `Debug` rendering) without the value of `field`: up to the
/// next `,` or closing bracket outside brackets and quotes.
fn without_field(text: &str, field: &str) -> String {
    let Some(start) = text.find(field) else {
        return text.to_string();
    };
    let value = start + field.len();
    let (mut depth, mut quoted, mut escaped) = (0i32, false, false);
    let mut end = text.len();
    for (i, c) in text[value..].char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            _ if quoted => {}
            '{' | '[' | '(' => depth += 1,
            '}' | ']' | ')' if depth == 0 => {
                end = value + i;
                break;
            }
            '}' | ']' | ')' => depth -= 1,
            ',' if depth == 0 => {
                end = value + i;
                break;
            }
            _ => {}
        }
    }
    format!("{}{}", &text[..value], &text[end..])
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

/// One line of `begen doctor`: what, and what was found (or why not).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(not(feature = "cli"), allow(dead_code))] // used by the CLI (`begen doctor`, `begen scan`)
pub(crate) struct DoctorLine {
    /// The piece looked for, e.g. `nvcc` or `XLA FFI headers`.
    pub(crate) what: &'static str,
    /// What was found (path, version...), or why nothing usable was.
    pub(crate) found: std::result::Result<String, String>,
    /// A missing piece that every build needs (nvcc is only needed for CUDA).
    pub(crate) required: bool,
}

/// What a build will compile against and so which jax releases it loads on
/// (nothing is downloaded here).
fn doctor_target(jax_min: Option<&str>, running: Option<&PathBuf>, env: &Env) -> String {
    let api = |dir: &Path| toolchain::xla_ffi_api_version(dir).unwrap_or_else(|| "unknown".into());
    match jax_min {
        Some(v) if !crate::model::is_release_number(v) => format!("--jax-min `{v}` is not a jax release number"),
        Some(v) => match (jaxlib::cached(env, v), jaxlib::cache_dir(env, v)) {
            (Some(dir), _) => {
                format!("XLA FFI API {} from jaxlib {v}'s headers ({}): jax {v} and newer", api(&dir), dir.display())
            }
            (None, Some(dir)) => format!(
                "jaxlib {v}'s XLA FFI headers: jax {v} and newer (not cached yet: a build downloads them into {})",
                dir.join("include").display()
            ),
            (None, None) => format!("jaxlib {v}'s XLA FFI headers, but neither XDG_CACHE_HOME nor HOME is set"),
        },
        None => match running {
            Some(dir) => format!(
                "XLA FFI API {} (the headers above): jax releases with that API and newer; --jax-min VERSION for older ones",
                api(dir)
            ),
            None => "unknown: no XLA FFI headers found".to_string(),
        },
    }
}

/// Resolves every toolchain piece the way [`build`] would and says what
/// it found; `opts.root` supplies begen.yaml's CUDA settings when present.
#[cfg_attr(not(feature = "cli"), allow(dead_code))] // used by the CLI (`begen doctor`, `begen scan`)
pub(crate) fn doctor(opts: &Settings, env: &Env) -> Vec<DoctorLine> {
    let d = Discovery::new(env);
    let mut lines = Vec::new();
    let line =
        |what, found: Result<String>, required| DoctorLine { what, found: found.map_err(|e| e.to_string()), required };
    let xla = d.xla_ffi_include();
    lines.push(line(
        "XLA FFI headers",
        xla.as_ref()
            .map(|dir| {
                let api = toolchain::xla_ffi_api_version(dir).unwrap_or_else(|| "unknown".into());
                format!("{} (API {api})", dir.display())
            })
            .map_err(|e| Error::toolchain(e.to_string())),
        true,
    ));
    lines.push(line("builds target", Ok(doctor_target(opts.jax_min.as_deref(), xla.as_ref().ok(), env)), true));
    let support = match env.var("BEGEN_SUPPORT_INCLUDE") {
        Some(dir) => format!("{dir} (BEGEN_SUPPORT_INCLUDE)"),
        None => format!(
            "embedded, version {} ({} headers, written into each build's work directory)",
            support::version(),
            support::HEADERS.len()
        ),
    };
    lines.push(line("support headers", Ok(support), true));
    let scratch = std::env::temp_dir().join(format!("begen-doctor-{}", std::process::id()));
    // The compiler must run, not only be named.
    let host = host_compiler(opts, &[], &[], &[], &scratch, None).and_then(|cmd| {
        let runs = std::process::Command::new(&cmd.program).arg("--version").output();
        match runs {
            Ok(out) if out.status.success() => Ok(describe_cmd(&cmd)),
            Ok(out) => Err(Error::toolchain(format!(
                "`{}` does not run: {}",
                cmd.program.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            ))),
            Err(e) => Err(Error::toolchain(format!(
                "`{}` does not run ({e}): install a C++17 compiler or set CXX",
                cmd.program.display()
            ))),
        }
    });
    lines.push(line("host C++ (cc, CXX)", host, true));
    // Architectures asked for are checked even without nvcc.
    if !opts.arch.is_empty() {
        let asked =
            arch::parse_list(&opts.arch).map(|l| l.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(", "));
        lines.push(line(
            "--arch",
            asked.map_err(|bad| {
                Error::toolchain(format!("`{bad}` is not a CUDA architecture (write sm_90, 90 or 9.0)"))
            }),
            true,
        ));
    }
    match d.cuda() {
        Ok(cuda) => {
            let version = cuda.version.clone().unwrap_or_else(|| "version unknown".into());
            lines.push(line("nvcc", Ok(format!("{} ({version})", cuda.nvcc.display())), false));
            lines.push(line(
                "CUDA runtime (static)",
                cuda.cudart_dir
                    .as_ref()
                    .map(|p| p.join("libcudart_static.a").display().to_string())
                    .ok_or_else(|| Error::toolchain("libcudart_static.a not found beside nvcc")),
                false,
            ));
            let archs = d.cuda_archs(&opts.arch, &[], &cuda).map(|(archs, source)| {
                let names: Vec<String> = archs.iter().map(|a| a.to_string()).collect();
                format!("{} (from {}); {}", names.join(", "), source.describe(), arch::gencode_flags(&archs).join(" "))
            });
            lines.push(line("CUDA architectures", archs, false));
        }
        Err(e) => lines.push(line("nvcc", Err(e), false)),
    }
    lines.push(line("Python asked", Ok(d.python()), false));
    lines.push(line("JAX in that Python", jax_report(&d), false));
    let _ = std::fs::remove_dir_all(&scratch);
    lines
}

/// jax and jaxlib versions and the backends JAX finds (a GPU needs its
/// CUDA plugin), as `BEGEN_PYTHON` sees them.
#[cfg_attr(not(feature = "cli"), allow(dead_code))] // used by the CLI (`begen doctor`, `begen scan`)
fn jax_report(d: &Discovery) -> Result<String> {
    let probe = "import jax, jaxlib; print(jax.__version__, jaxlib.__version__, \
                 sorted({d.platform for d in jax.devices()}), jax.default_backend())";
    let python = d.python();
    let out = d.run_probe(Path::new(&python), &["-c", probe]).map_err(Error::toolchain)?;
    if !out.status.success() {
        let why = String::from_utf8_lossy(&out.stderr);
        let last = why.trim().lines().last().unwrap_or("no output");
        return Err(Error::toolchain(format!("`{python}` cannot import jax: {last}")));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut parts = text.split_whitespace();
    let (jax, jaxlib) = (parts.next().unwrap_or("?"), parts.next().unwrap_or("?"));
    let rest: Vec<&str> = parts.collect();
    Ok(format!("jax {jax}, jaxlib {jaxlib}; devices {}", rest.join(" ")))
}

#[cfg_attr(not(feature = "cli"), allow(dead_code))] // used by the CLI (`begen doctor`, `begen scan`)
fn describe_cmd(cmd: &CompilerCmd) -> String {
    let mut s = cmd.program.display().to_string();
    for a in &cmd.args {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
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
