//! The caller's settings for one run, in one type: the CLI fills it from
//! its arguments, [`crate::Build`] from its setters, and `check` reads it:
//! the library's name, platform and sources, and the build plan (see
//! [`crate::model::plan`]), where these settings come before the
//! environment and begen.yaml. `build` never reads it. Adding a setting
//! touches this struct, the setter that fills it and `check`'s plan.

use std::path::{Path, PathBuf};

use crate::model::PlatformChoice;

/// What to read and how to build it: the settings that override
/// begen.yaml's, for [`crate::driver::run`], [`crate::driver::generate`]
/// and [`crate::driver::build`].
///
/// ```
/// use begen::driver::{PlatformChoice, Settings};
/// let mut settings = Settings::new("kernels");
/// settings.name = Some("mykernels".into());
/// settings.platform = Some(PlatformChoice::Cpu);
/// settings.out = Some("out".into());
/// settings.arch.push("sm_90".into());
/// assert_eq!(settings.root, std::path::Path::new("kernels"));
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Settings {
    /// The kernel directory (scanned recursively).
    pub root: PathBuf,
    /// The configuration file to read instead of `root/begen.yaml`
    /// (`--config`): one kernel directory, several builds. Paths in it stay
    /// relative to `root`. It must exist.
    pub config: Option<PathBuf>,
    /// The library name (`--name`); else begen.yaml's `name`, else the
    /// directory's name.
    pub name: Option<String>,
    /// The FFI target prefix (`--prefix`); else begen.yaml's `prefix`,
    /// else the library name.
    pub prefix: Option<String>,
    /// Else begen.yaml's `platform`, else `auto`.
    pub platform: Option<PlatformChoice>,
    /// Where outputs go (needed by `generate` and `build`): sources under it
    /// are begen's own, not the library's.
    pub out: Option<PathBuf>,
    /// Where the work files go (objects, generated sources, the toolchain
    /// probes' answers, the lock; `generate` keeps only the probes and the
    /// lock there): `<work_dir>/<NAME>/`; else `<cache>/begen/work/<key>/<NAME>`, the
    /// cache being `$XDG_CACHE_HOME` (else `~/.cache`) and the key a hash of
    /// OUT's canonical path. Never OUT, which holds only the four outputs.
    pub work_dir: Option<PathBuf>,
    /// Include directories searched before the root, begen.yaml's and
    /// begen's own (`-I`).
    pub includes: Vec<PathBuf>,
    /// CUDA architectures (`sm_90`, `9.0`, ...); else `BEGEN_CUDA_ARCH`,
    /// begen.yaml, this machine's GPUs, then a built-in list.
    pub arch: Vec<String>,
    /// Extra flags for host C++ TUs (after begen.yaml's `cxx_flags`).
    pub cxx_flags: Vec<String>,
    /// Extra flags for nvcc TUs (after begen.yaml's `cuda.flags`).
    pub cuda_flags: Vec<String>,
    /// Parallel compiler runs; else `NUM_JOBS`, else the number of CPUs.
    pub jobs: Option<usize>,
    /// Libraries to link (after begen.yaml's `link: libs:`), by `-l` name.
    pub link_libs: Vec<String>,
    /// Directories searched for them (before begen.yaml's `link: dirs:`).
    pub link_dirs: Vec<PathBuf>,
    /// Linker arguments (after begen.yaml's `link: args:`).
    pub link_args: Vec<String>,
    /// The oldest jax release the library must load on (`--jax-min`, e.g.
    /// `0.10.2`): its handlers are compiled against that jaxlib's XLA FFI
    /// headers; else begen.yaml's `jax_min`, else the running jaxlib's.
    pub jax_min: Option<String>,
    /// The binding targets to build, in order; empty: begen's default
    /// (`model::generated::DEFAULT_TARGETS`), else begen.yaml's `targets:`.
    /// The CLI's `--target` fills it.
    pub(crate) targets: Vec<crate::model::generated::TargetId>,
    /// The cc configuration host TUs start from (compiler, target, opt
    /// level...). Not public: a cc type in these settings would tie
    /// begen's API to cc's releases; [`crate::Build::cc_host`] gives it
    /// to build scripts.
    pub(crate) host_cc: cc::Build,
    /// The cc configuration CUDA TUs start from.
    pub(crate) cuda_cc: cc::Build,
    /// The library is to be built: a library name taken from the directory
    /// must then be usable (a scan does not need one). Set by `generate`
    /// and `build`.
    pub(crate) building: bool,
    /// cc prints `cargo:` lines (build.rs): its compiler detection then
    /// runs every build, so that Cargo hears of every variable it reads.
    pub(crate) cc_metadata: bool,
    /// A program every compile runs through (`ccache`, `sccache`): the
    /// builder's `.compiler_launcher`; else `BEGEN_COMPILER_LAUNCHER`, else
    /// begen.yaml's `compiler_launcher`.
    pub(crate) compiler_launcher: Option<String>,
    /// Every compiler warning in full (`begen build -v`), not a summary.
    pub(crate) verbose: bool,
    /// Whether the run's diagnostics will be shown as text, with snippets
    /// of the sources (the default): every file's text is then kept in
    /// [`Run::sources`](crate::driver::Run::sources) to the end. `false`
    /// where only positions are shown (`begen scan --format json`, a
    /// caller of [`Run::to_json`](crate::driver::Run::to_json)): each
    /// source's text is let go once it is parsed, most of a large tree's
    /// memory, and rendering a diagnostic shows no snippet.
    pub show_sources: bool,
}

impl Settings {
    /// Settings for `root` outside Cargo: begen.yaml's settings, the host
    /// triple, `-O3` for host TUs (the level setuptools and CMake's Release
    /// build use: bench/flags_bench.py measures it no slower than `-O2`),
    /// `-O2` for nvcc's host code, no debug info, no `cargo:` lines from cc.
    ///
    /// ```
    /// let settings = begen::driver::Settings::new("kernels");
    /// assert!(settings.name.is_none() && settings.out.is_none() && settings.arch.is_empty());
    /// ```
    pub fn new(root: impl Into<PathBuf>) -> Settings {
        let triple = host_triple();
        let mut host_cc = cc::Build::new();
        host_cc
            .target(&triple)
            .host(&triple)
            .opt_level(2)
            .debug(false)
            .cargo_metadata(false)
            .cargo_warnings(false)
            .cargo_output(false);
        let cuda_cc = host_cc.clone();
        host_cc.opt_level(3);
        Settings {
            root: root.into(),
            config: None,
            name: None,
            prefix: None,
            platform: None,
            out: None,
            work_dir: None,
            includes: Vec::new(),
            arch: Vec::new(),
            cxx_flags: Vec::new(),
            cuda_flags: Vec::new(),
            jobs: None,
            link_libs: Vec::new(),
            link_dirs: Vec::new(),
            link_args: Vec::new(),
            jax_min: None,
            targets: Vec::new(),
            cuda_cc,
            host_cc,
            building: false,
            cc_metadata: false,
            compiler_launcher: None,
            verbose: false,
            show_sources: true,
        }
    }

    /// The output directory of a build or generation (the driver refuses
    /// to start one without it; `.` otherwise).
    pub(crate) fn out_dir(&self) -> &Path {
        self.out.as_deref().unwrap_or(Path::new("."))
    }
}

/// The Rust-style target triple of this machine, for cc outside Cargo.
pub(crate) fn host_triple() -> String {
    let arch = std::env::consts::ARCH;
    match std::env::consts::OS {
        "linux" => format!("{arch}-unknown-linux-gnu"),
        "macos" => format!("{arch}-apple-darwin"),
        os => format!("{arch}-unknown-{os}"),
    }
}

/// What the stages after the scan read about one run, built once by the
/// driver: the binary front end (`binary::declare`) and `check` take it.
pub(crate) struct RunInput<'a> {
    /// Every file entered and read.
    pub(crate) map: &'a crate::source::SourceMap,
    /// begen.yaml as read (the defaults when there is none).
    pub(crate) config: &'a crate::config::Config,
    /// begen.yaml's text and word index, when there is one.
    pub(crate) config_file: Option<&'a crate::config::ConfigFile>,
    /// The kernel directory, absolute.
    pub(crate) root: &'a Path,
    /// A pseudo-file standing for the root, for diagnostics about the
    /// library as a whole that no file holds (a name from the directory,
    /// a kernel begen.yaml does not show).
    pub(crate) root_file: crate::source::FileId,
    /// The caller's settings: the library name (`--name`, `Build::name`),
    /// platform, output directory (sources under it are not the library's),
    /// include directories, and whether the library is to be built.
    pub(crate) settings: &'a Settings,
    /// The environment the caller's settings are read with: what the
    /// caller leaves unset, a variable may set before begen.yaml does.
    pub(crate) env: &'a crate::env::Env,
    /// Every source file found, in walk order.
    pub(crate) sources: &'a [(crate::source::FileId, crate::model::Platform)],
}

impl<'a> RunInput<'a> {
    /// Where begen.yaml writes a key path (`yaml_path![...]`): its key, its
    /// value or a word in it, for a diagnostic. The one way every stage
    /// after the scan finds a begen.yaml span; `None` when there is no
    /// begen.yaml.
    pub(crate) fn locate(&self) -> crate::config::Locator<'a> {
        crate::config::Locator { map: self.map, file: self.config_file }
    }
}
