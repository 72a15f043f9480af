//! The pipeline's one owner. [`run`] enters the kernel directory's files
//! into a source map, reads each and finds its annotations (`scan`), reads
//! the signatures (`parse`), reads begen.yaml's precompiled kernels
//! (`binary::declare`, the second front end) and checks everything
//! (`check`), and returns the [`Library`] with every diagnostic;
//! [`generate`] and [`build`] go on to `emit` and the `build` stage.
//! `begen scan`, `begen generate`, `begen build` and [`crate::Build`] all
//! start here; nothing else scans.
//!
//! ```text
//!  files ──enter──> SourceMap ──scan──> Scanned ──parse──> Declared ──check──> Library ──emit──> text ──build──> lib.so
//!                   (+ begen.yaml)      (annotations)       (front-end seam)    (model)
//!                   begen.yaml's binaries: ──binary::declare──┘
//! ```
//!
//! Each phase records every problem it finds and goes on; a later phase
//! works with what the earlier ones produced. Only an unreadable root stops
//! a run ([`Error`]).
//!
//! ```no_run
//! let run = begen::driver::run(&begen::driver::Settings::new("kernels"))?;
//! for f in run.library.functions() {
//!     println!("{} {}", f.target(), f.arg_spec().join(" "));
//! }
//! assert!(!run.has_errors());
//! # Ok::<(), begen::Error>(())
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use crate::Error;
use crate::binary;
use crate::build::{self as compile, Toolchain};
pub use crate::build::{BuildOutput, Env, Generated, Reporter, StderrReporter};
use crate::check;
use crate::config::{self, SourceSpec, yaml_path};
use crate::diag::Severity;
use crate::diag::{self, Diagnostic};

use crate::model::Library;
use crate::model::decl::Listed;
pub use crate::model::{Platform, PlatformChoice};
use crate::parse::{self, Headers};
use crate::scan::{self, Kind};
use crate::settings::RunInput;
pub use crate::settings::Settings;

use crate::source::{FileId, SourceMap};
use crate::target;

/// What a run produced.
///
/// ```no_run
/// let run = begen::driver::run(&begen::driver::Settings::new("kernels"))?;
/// println!("{} function(s) in {} source file(s)", run.library.functions().len(), run.source_files);
/// for path in &run.files_read {
///     println!("cargo:rerun-if-changed={}", path.display());
/// }
/// # Ok::<(), begen::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Run {
    /// The checked library: the functions without errors.
    pub library: Library,
    /// Every diagnostic, sorted by file, line and column.
    pub diagnostics: Vec<Diagnostic>,
    /// Every file read, for rendering the diagnostics.
    pub sources: SourceMap,
    /// Every file read (sources, headers, begen.yaml), for
    /// `cargo:rerun-if-changed`.
    pub files_read: Vec<PathBuf>,
    /// How many source files the root holds.
    pub source_files: usize,
}

impl Run {
    /// Whether any diagnostic is an error (then nothing may be built).
    ///
    /// ```no_run
    /// let run = begen::driver::run(&begen::driver::Settings::new("kernels"))?;
    /// if run.has_errors() {
    ///     eprintln!("not building: the kernels have errors");
    /// }
    /// # Ok::<(), begen::Error>(())
    /// ```
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// How much source text a JSON or YAML scan must let go of for the memory
/// to be handed back to the system at once (on a large tree this lowers the
/// peak by about a quarter).
const RELEASE_AT: usize = 8 << 20;

/// Runs the front ends and `check` over `settings.root`. Fails only when the
/// root cannot be read; every other problem is a diagnostic.
///
/// ```no_run
/// use begen::driver::{run, Settings};
/// let run = run(&Settings::new("kernels"))?;
/// for d in &run.diagnostics {
///     eprintln!("{}", begen::diag::render::render_text(d, &run.sources, false));
/// }
/// # Ok::<(), begen::Error>(())
/// ```
pub fn run(settings: &Settings) -> Result<Run, Error> {
    run_in(settings, &Env::new())
}

/// [`run`], reading the environment through `env` (a build's, whose
/// variables build.rs reports to Cargo).
fn run_in(settings: &Settings, env: &Env) -> Result<Run, Error> {
    let root = &settings.root;
    let mut map = SourceMap::default();
    let root_file = map.add(".", root, Vec::new());

    // enter: every source and header (unread), then begen.yaml, into the map.
    let (files, mut diags) = scan::enter(root, &mut map)?;
    let (config, config_file, config_diags) = config::load(root, settings.config.as_deref(), &mut map);
    diags.extend(config_diags);
    let sources: Vec<(FileId, Platform)> = files
        .iter()
        .filter_map(|f| match f.kind {
            Kind::Source(p) => Some((f.id, p)),
            Kind::Header | Kind::Ignored => None,
        })
        .collect();
    let listed = listed(&map, &config, config_file.clone(), &sources);

    // scan: read, annotations; parse: signatures.
    let wanted: BTreeSet<FileId> = listed.keys().copied().collect();
    // Each file is read, scanned and parsed in one go (only the files in
    // flight hold a code view); the scan's diagnostics come first, as if
    // the two ran one after the other.
    let mut pending = scan::pending(&files, &wanted);
    let include_dirs = config.include_dirs.iter().map(|d| root.join(d)).collect();
    let mut headers = Headers::new(root, include_dirs);
    let (mut declared, parse_diags) =
        parse::declare(&mut map, &mut pending, settings.show_sources, &listed, &creators(&config), &mut headers);
    diags.extend(pending.into_iter().flat_map(|p| p.diags));
    diags.extend(parse_diags);
    if !settings.show_sources {
        let config = config_file.as_ref().map(|c| c.id);
        // Handing a small tree's text back would only cost page faults
        // when the check allocates again.
        if map.forget_texts(|id| Some(id) == config) >= RELEASE_AT {
            crate::par::release_memory();
        }
    }

    // The second front end: begen.yaml's precompiled kernels.
    let absolute = std::fs::canonicalize(root).map_err(|e| Error::io(root, e))?;
    let input = RunInput {
        map: &map,
        config: &config,
        config_file: config_file.as_ref(),
        root: &absolute,
        root_file,
        settings,
        env,
        sources: &sources,
    };
    let (kernels, binaries) = binary::declare::declare(&input, &mut diags);
    declared.push(kernels);

    // check: decide everything.
    let (library, check_diags) = check::check(&input, &binaries, declared);
    diags.extend(check_diags);
    // "No annotated function was found" is news only where nothing else was
    // said: when every kernel failed, their errors say why, and the kernels
    // were found.
    if diags.iter().any(|d| d.severity == Severity::Error) {
        diags.retain(|d| d.message != diag::messages::NO_FUNCTIONS);
    }
    diag::sort(&mut diags, &map);

    let mut files_read: BTreeSet<PathBuf> = files.iter().map(|f| map.get(f.id).path.clone()).collect();
    if let Some(c) = config_file {
        files_read.insert(map.get(c.id).path.clone());
    }
    files_read.extend(headers.read);
    Ok(Run {
        library,
        diagnostics: diags,
        sources: map,
        files_read: files_read.into_iter().collect(),
        source_files: sources.len(),
    })
}

/// begen.yaml's `instantiate:` functions by the name of the kernel each is
/// given for (a `module.name` key's kernel is `name`): the front end looks
/// them up in those kernels' sources.
fn creators(config: &config::Config) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (key, f) in &config.functions {
        if let Some(make) = &f.instantiate {
            let kernel = key.rsplit_once('.').map_or(key.as_str(), |(_, name)| name);
            let names = out.entry(kernel.to_string()).or_default();
            if !names.contains(make) {
                names.push(make.clone());
            }
        }
    }
    out
}

/// begen.yaml's `sources:`, by file: the functions each entry names, with
/// where each name is written. Entries naming no source are `check`'s to
/// report.
fn listed(
    map: &SourceMap,
    config: &config::Config,
    config_file: Option<config::ConfigFile>,
    sources: &[(FileId, Platform)],
) -> BTreeMap<FileId, Vec<Listed>> {
    let mut out = BTreeMap::new();
    let Some(cf) = config_file else { return out };
    for (file, spec) in &config.sources {
        let Some(&(id, _)) = sources.iter().find(|(id, _)| map.get(*id).name == *file) else { continue };
        let listed = match spec {
            SourceSpec::Dict(d) => d
                .iter()
                .map(|(k, v)| Listed {
                    span: cf.key(map, &yaml_path!["sources", file, k]),
                    name: k.clone(),
                    tokens: Some(v.clone()),
                })
                .collect(),
            SourceSpec::List(l) => l
                .iter()
                .enumerate()
                .map(|(i, k)| Listed {
                    span: cf.value(map, &yaml_path!["sources", file, i]),
                    name: k.clone(),
                    tokens: None,
                })
                .collect(),
        };
        out.insert(id, listed);
    }
    out
}

/// Runs the pipeline for a build or generation into `settings.out`:
/// reports every diagnostic and the files read; error diagnostics stop here.
fn checked(settings: &Settings, env: &Env, reporter: &mut dyn Reporter) -> Result<Run, Error> {
    let Some(out) = &settings.out else {
        return Err(Error::other("no output directory: set the settings' `out`"));
    };
    let input = Settings { building: true, ..settings.clone() };
    let mut run = run_in(&input, env)?;
    // Each selected binding target's own checks (`target::Target::check`).
    let refused: Vec<Diagnostic> =
        target::selected(&run.library).flat_map(|t| t.check(&run.library, &run.sources)).collect();
    run.diagnostics.extend(refused);
    reporter.files_read(&run.files_read);
    for d in &run.diagnostics {
        reporter.diagnostic(d, &run.sources);
    }
    let errors = compile::count(&run.diagnostics, Severity::Error);
    if errors > 0 {
        return Err(Error::diagnostics(errors));
    }
    refuse_overwriting_inputs(out, &run)?;
    Ok(run)
}

/// An output that is an input (`--out` the kernel directory and a library
/// named `begen`, whose manifest would be `begen.yaml`) is refused before
/// anything is written.
fn refuse_overwriting_inputs(out: &std::path::Path, run: &Run) -> Result<(), Error> {
    let outputs = run.library.plan.outputs.all();
    let same = |a: &std::path::Path, b: &std::path::Path| match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    for (name, output) in outputs.iter().map(|o| (o, out.join(o))) {
        // Only an input of the same file name can be the same file.
        let mut candidates = run.files_read.iter().filter(|input| input.file_name() == Some(name.as_ref()));
        if let Some(input) = candidates.find(|input| same(&output, input)) {
            return Err(Error::other(format!(
                "`{}` would be written over `{}`, which begen reads as input: choose another --out, or \
                 another library name",
                output.display(),
                input.display()
            )));
        }
    }
    Ok(())
}

/// Writes the generated sources, Python module and manifest into `settings.out`
/// without compiling anything (`begen generate`). The one process it may
/// start, the Python asked for jax's XLA FFI headers (the manifest's API
/// version), is asked once: its answer is kept in the work directory
/// (`settings.work_dir`, else the per-user cache keyed by OUT that a build
/// uses; never OUT) while the Python binary and the environment are the same.
///
/// ```no_run
/// use begen::driver::{Env, Settings, StderrReporter};
/// let mut settings = Settings::new("kernels");
/// settings.out = Some("gen".into());
/// let generated = begen::driver::generate(&settings, &Env::new(), &mut StderrReporter::default())?;
/// for file in generated.files() {
///     println!("{}", file.display());
/// }
/// # Ok::<(), begen::Error>(())
/// ```
pub fn generate(settings: &Settings, env: &Env, reporter: &mut dyn Reporter) -> Result<Generated, Error> {
    let run = checked(settings, env, reporter)?;
    let api = compile::api_versions(&run.library, &toolchains(&run.library), env, reporter);
    let emitted = target::emit(&run.library, &|id| api.iter().find(|(t, _)| *t == id).and_then(|(_, v)| v.clone()));
    let files = compile::write_sources(run.library.plan.out(), &run.library.name, &emitted)?;
    Ok(Generated { library: run.library, files, diagnostics: run.diagnostics })
}

/// Runs the whole pipeline: checks, generates, compiles and links into
/// `settings.out` each selected target's outputs — jax: `lib<NAME>.so`,
/// `<NAME>.py`, `<NAME>.pyi` and the manifest `<NAME>.yaml`; torch:
/// `lib<NAME>_torch.so`, `<NAME>_torch.py`, `<NAME>_torch.pyi` — committed
/// together, and nothing else: the work files go to the work
/// directory (`settings.work_dir`, else a per-user cache keyed by OUT). On any
/// failure the previous outputs in OUT are left as they were.
///
/// ```no_run
/// use begen::driver::{Env, Settings, StderrReporter};
/// let mut settings = Settings::new("kernels");
/// settings.out = Some("out".into());
/// let built = begen::driver::build(&settings, &Env::new(), &mut StderrReporter::default())?;
/// println!("{}", built.library_path().display());
/// # Ok::<(), begen::Error>(())
/// ```
pub fn build(settings: &Settings, env: &Env, reporter: &mut dyn Reporter) -> Result<BuildOutput, Error> {
    let run = checked(settings, env, reporter)?;
    let outputs: Vec<String> = target::selected(&run.library).flat_map(|t| t.outputs(&run.library)).collect();
    compile::refuse_foreign_outputs(&run.library, &outputs)?;
    let tools = Toolchain::resolve(&run.library, &toolchains(&run.library), env, reporter)?;
    let emitted = target::emit(&run.library, &|id| tools.api_version(id));
    compile::build_library(&run.library, &emitted, tools, env, reporter)
        .map(|out| BuildOutput { diagnostics: run.diagnostics, ..out })
}

/// The toolchain needs of `library`'s targets, in the plan's order.
fn toolchains(library: &crate::model::Library) -> Vec<&'static dyn compile::TargetToolchain> {
    target::selected(library).map(|t| t.toolchain()).collect()
}

/// `begen doctor`'s report for the caller's `settings`: each backend's
/// plan as `check` would resolve it without a begen.yaml.
#[cfg_attr(not(feature = "cli"), allow(dead_code))] // used by the CLI (`begen doctor`)
pub(crate) fn doctor(settings: &Settings, env: &Env) -> Vec<compile::DoctorLine> {
    let config = config::Config::default();
    let backend = |platform| check::plan_backend(settings, &config, platform, env);
    let ask = compile::DoctorAsk { jax_min: settings.jax_min.as_deref(), arch: &settings.arch, backend: &backend };
    compile::doctor(&ask, env)
}

#[cfg(test)]
mod tests;
