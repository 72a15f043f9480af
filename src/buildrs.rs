//! The build.rs front end: a cc-style builder over [`crate::driver::build`].

use std::path::{Path, PathBuf};

use crate::build::{BuildOutput, Env, PlatformChoice, Reporter};
use crate::diag::Diagnostic;
use crate::error::{Error, Result};
use crate::settings::Settings;
use crate::source::SourceMap;

/// Builds an annotated kernel directory from a Cargo build script.
///
/// Scans `dir`, generates the wrappers into `OUT_DIR`, compiles them with
/// cc (nvcc for `.cu`), links `lib<NAME>.so`, writes `<NAME>.py`,
/// `<NAME>.pyi` and `<NAME>.yaml` beside it, and tells Cargo when to rerun:
/// `cargo:rerun-if-changed` for the directory and every file read,
/// `cargo:rerun-if-env-changed` for every variable read. Diagnostics become
/// `cargo:warning=` lines. Unchanged outputs keep their mtime. It also sets
/// `BEGEN_<NAME>_DIR` (upper case) for the crate being built, so code can
/// find the outputs with `env!`. [`Build::python_out`] also places the
/// Python module and the library inside a Python package.
///
/// ```no_run
/// // build.rs
/// begen::Build::new()
///     .dir("kernels")
///     .platform("auto")
///     .flag("-O3")
///     .compile("mykernels");
/// ```
#[derive(Debug, Clone)]
pub struct Build {
    /// What the driver gets; the setters below fill it (`out` defaults to
    /// `OUT_DIR` when the build starts).
    settings: Settings,
    /// Parsed when the build starts, so a bad one is a `Result`.
    platform: Option<String>,
    python_out: Option<PathBuf>,
    /// Checked when the build starts, like `--target`.
    targets: Option<Vec<String>>,
    cargo_metadata: bool,
}

impl Default for Build {
    fn default() -> Build {
        Build::new()
    }
}

impl Build {
    /// A builder for the directory `kernels` (relative to the crate, where
    /// build scripts run), no debug info (cc would add nvcc's `-G`, which
    /// makes kernels very slow), Cargo's target and opt level.
    ///
    /// ```no_run
    /// // build.rs
    /// let out = begen::Build::new().compile("mykernels");
    /// println!("cargo:warning=built {}", out.library_path().display());
    /// ```
    pub fn new() -> Build {
        let mut host_cc = cc::Build::new();
        host_cc.debug(false).cargo_warnings(false);
        let mut settings = Settings::new("kernels");
        settings.cuda_cc = host_cc.clone();
        settings.host_cc = host_cc;
        settings.cc_metadata = true;
        Build { settings, platform: None, python_out: None, targets: None, cargo_metadata: true }
    }

    /// The kernel directory to scan.
    ///
    /// ```no_run
    /// begen::Build::new().dir("src/kernels").compile("mykernels");
    /// ```
    pub fn dir(&mut self, dir: impl AsRef<Path>) -> &mut Build {
        self.settings.root = dir.as_ref().to_path_buf();
        self
    }

    /// The configuration file to read instead of the kernel directory's
    /// `begen.yaml` (paths in it stay relative to the kernel directory).
    ///
    /// ```no_run
    /// begen::Build::new().dir("kernels").config("kernels/cpu-only.yaml").compile("mykernels_cpu");
    /// ```
    pub fn config(&mut self, file: impl AsRef<Path>) -> &mut Build {
        self.settings.config = Some(file.as_ref().to_path_buf());
        self
    }

    /// The library name (also settable in [`Build::compile`]).
    ///
    /// ```no_run
    /// // The name given here is used when `compile` gets an empty one.
    /// begen::Build::new().name("mykernels").compile("");
    /// ```
    pub fn name(&mut self, name: &str) -> &mut Build {
        self.settings.name = Some(name.to_string());
        self
    }

    /// `cpu`, `cuda` or `auto` (checked when building).
    ///
    /// ```no_run
    /// begen::Build::new().platform("cpu").compile("mykernels");
    /// ```
    pub fn platform(&mut self, platform: &str) -> &mut Build {
        self.platform = Some(platform.to_string());
        self
    }

    /// The bindings to build, as `begen build --target` names them (`jax`,
    /// `torch`; default: begen.yaml's `targets:`, else `jax`): `torch` adds
    /// `lib<NAME>_torch.so`, `<NAME>_torch.py` and `.pyi` (docs/pytorch.md;
    /// the build finds torch's headers through `BEGEN_TORCH_PYTHON`), which
    /// [`Build::python_out`] copies too. An unknown name fails the build,
    /// naming the closest.
    ///
    /// ```no_run
    /// begen::Build::new().targets(&["jax", "torch"]).compile("mykernels");
    /// ```
    pub fn targets(&mut self, targets: &[&str]) -> &mut Build {
        self.targets = Some(targets.iter().map(|t| t.to_string()).collect());
        self
    }

    /// Adds CUDA architectures (`sm_90`, `9.0`, `sm_90a`; comma-separated lists too).
    ///
    /// ```no_run
    /// begen::Build::new().arch("sm_80,sm_90").arch("sm_90a").compile("mykernels");
    /// ```
    pub fn arch(&mut self, arch: &str) -> &mut Build {
        self.settings.arch.push(arch.to_string());
        self
    }

    /// Adds an include directory, searched before begen's own.
    ///
    /// ```no_run
    /// begen::Build::new().include("third_party/include").compile("mykernels");
    /// ```
    pub fn include(&mut self, dir: impl AsRef<Path>) -> &mut Build {
        self.settings.includes.push(dir.as_ref().to_path_buf());
        self
    }

    /// Adds a flag for host C++ translation units.
    ///
    /// ```no_run
    /// begen::Build::new().flag("-O3").flag("-march=native").compile("mykernels");
    /// ```
    pub fn flag(&mut self, flag: &str) -> &mut Build {
        self.settings.cxx_flags.push(flag.to_string());
        self
    }

    /// Adds a flag for nvcc translation units.
    ///
    /// ```no_run
    /// begen::Build::new().cuda_flag("-lineinfo").compile("mykernels");
    /// ```
    pub fn cuda_flag(&mut self, flag: &str) -> &mut Build {
        self.settings.cuda_flags.push(flag.to_string());
        self
    }

    /// Where outputs go (default: `OUT_DIR`).
    ///
    /// ```no_run
    /// // Outside a build script, where there is no OUT_DIR.
    /// let out = begen::Build::new().out_dir("target/kernels").cargo_metadata(false).try_compile("mykernels")?;
    /// assert!(out.library_path().starts_with("target/kernels"));
    /// # Ok::<(), begen::Error>(())
    /// ```
    pub fn out_dir(&mut self, dir: impl AsRef<Path>) -> &mut Build {
        self.settings.out = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Where the work files go (objects, generated sources, the lock), as
    /// `dir/<NAME>/` (default: `OUT_DIR/.begen/<NAME>/` in a build script,
    /// a per-user cache keyed by the out directory outside one). Never the
    /// out directory itself when that is not `OUT_DIR`, nor a Python package.
    ///
    /// ```no_run
    /// begen::Build::new().out_dir("python/mypkg").work_dir("target/begen").compile("_kernels");
    /// ```
    pub fn work_dir(&mut self, dir: impl AsRef<Path>) -> &mut Build {
        self.settings.work_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// A program every compile runs through, such as `ccache` or `sccache`
    /// (a path, or a name found on `PATH`); it must exist. Overrides
    /// `BEGEN_COMPILER_LAUNCHER` and begen.yaml's `compiler_launcher`.
    ///
    /// ```no_run
    /// begen::Build::new().compiler_launcher("sccache").compile("mykernels");
    /// ```
    pub fn compiler_launcher(&mut self, program: impl AsRef<std::ffi::OsStr>) -> &mut Build {
        self.settings.compiler_launcher = Some(program.as_ref().to_string_lossy().into_owned());
        self
    }

    /// Also places the Python-facing outputs — `lib<NAME>.so`, `<NAME>.py`,
    /// `<NAME>.pyi` and `<NAME>.yaml` — in `dir`, e.g. the folder of a Python
    /// package that a wheel (maturin, hatchling) picks up: the module finds
    /// the library beside it. Relative to the crate (where build scripts
    /// run); created if missing; a file is rewritten only when its bytes
    /// changed. The build itself still happens in the out directory
    /// (`OUT_DIR`), where its objects make the next build incremental.
    ///
    /// ```no_run
    /// // build.rs of a crate whose Python package is python/mypkg
    /// begen::Build::new().dir("kernels").python_out("python/mypkg").compile("_kernels");
    /// // python/mypkg/_kernels.py: `from mypkg import _kernels`
    /// ```
    pub fn python_out(&mut self, dir: impl AsRef<Path>) -> &mut Build {
        self.python_out = Some(dir.as_ref().to_path_buf());
        self
    }

    /// The oldest jax release the library must load on: its handlers are
    /// compiled against that jaxlib's XLA FFI headers (fetched once into the
    /// user's cache); else begen.yaml's `jax_min`, else the running jaxlib's.
    ///
    /// ```no_run
    /// begen::Build::new().jax_min("0.10.2").compile("mykernels");
    /// ```
    pub fn jax_min(&mut self, version: &str) -> &mut Build {
        self.settings.jax_min = Some(version.to_string());
        self
    }

    /// Parallel compiler runs (default: Cargo's `NUM_JOBS`).
    ///
    /// ```no_run
    /// begen::Build::new().jobs(4).compile("mykernels");
    /// ```
    pub fn jobs(&mut self, jobs: usize) -> &mut Build {
        self.settings.jobs = Some(jobs.max(1));
        self
    }

    /// Links a library, by `-l` name (`cublas`), as begen.yaml's `link: libs:`
    /// does: CUDA toolkit libraries are found where nvcc's toolkit is.
    ///
    /// ```no_run
    /// begen::Build::new().dir("kernels").link_lib("cublas").compile("mykernels");
    /// ```
    pub fn link_lib(&mut self, name: &str) -> &mut Build {
        self.settings.link_libs.push(name.to_string());
        self
    }

    /// Adds a directory searched for the libraries to link.
    ///
    /// ```no_run
    /// begen::Build::new().link_dir("third_party/lib").link_lib("mylib").compile("mykernels");
    /// ```
    pub fn link_dir(&mut self, dir: impl AsRef<Path>) -> &mut Build {
        self.settings.link_dirs.push(dir.as_ref().to_path_buf());
        self
    }

    /// Adds an argument passed to the linker as it is.
    ///
    /// ```no_run
    /// begen::Build::new().link_arg("-Wl,--as-needed").compile("mykernels");
    /// ```
    pub fn link_arg(&mut self, arg: &str) -> &mut Build {
        self.settings.link_args.push(arg.to_string());
        self
    }

    /// Whether to print `cargo:` lines (default true; turn off outside build.rs).
    ///
    /// ```no_run
    /// let built = begen::Build::new().out_dir("out").cargo_metadata(false).try_compile("mykernels");
    /// if let Err(e) = built {
    ///     eprintln!("{e}");
    /// }
    /// ```
    pub fn cargo_metadata(&mut self, on: bool) -> &mut Build {
        self.cargo_metadata = on;
        self.settings.cc_metadata = on;
        self.settings.host_cc.cargo_metadata(on);
        self.settings.cuda_cc.cargo_metadata(on);
        self
    }

    /// The cc configuration host C++ TUs start from, for anything the
    /// setters above do not cover (defines, compiler, opt level...).
    ///
    /// This is the one place begen's API shows a type of another crate:
    /// build scripts already configure compilers through cc, and cc (which
    /// begen runs to pick the compiler and its flags) has more options
    /// than begen could mirror. The type is [`begen::cc::Build`](crate::cc),
    /// cc as begen depends on it, so a build script needs no `cc` of its
    /// own; a new major release of cc is a new major release of begen.
    ///
    /// ```no_run
    /// let mut b = begen::Build::new();
    /// b.cc_host().define("USE_FAST_MATH", None).opt_level(3);
    /// b.compile("mykernels");
    /// ```
    pub fn cc_host(&mut self) -> &mut cc::Build {
        &mut self.settings.host_cc
    }

    /// The cc configuration nvcc TUs start from (see [`Build::cc_host`]
    /// for why it is cc's type).
    ///
    /// ```no_run
    /// let mut b = begen::Build::new();
    /// b.cc_cuda().define("BLOCK_SIZE", Some("256"));
    /// b.compile("mykernels");
    /// ```
    pub fn cc_cuda(&mut self) -> &mut cc::Build {
        &mut self.settings.cuda_cc
    }

    /// Builds, or fails the build script with one `begen error: ...`
    /// message (exit status 1, no panic backtrace).
    ///
    /// ```no_run
    /// // build.rs, in `fn main`
    /// let out = begen::Build::new().dir("kernels").compile("mykernels");
    /// assert_eq!(out.library().name(), "mykernels");
    /// ```
    pub fn compile(&mut self, name: &str) -> BuildOutput {
        match self.try_compile(name) {
            Ok(out) => out,
            Err(e) => {
                eprintln!("begen error: {e}");
                std::process::exit(1);
            }
        }
    }

    /// Builds and returns the outputs, or the error.
    ///
    /// ```no_run
    /// match begen::Build::new().dir("kernels").try_compile("mykernels") {
    ///     Ok(out) => println!("cargo:warning={} function(s)", out.library().functions().len()),
    ///     Err(e) => panic!("{e}"),
    /// }
    /// ```
    pub fn try_compile(&mut self, name: &str) -> Result<BuildOutput> {
        if !name.is_empty() {
            self.settings.name = Some(name.to_string());
        }
        let env = Env::new();
        let mut reporter = CargoReporter { metadata: self.cargo_metadata, files: Vec::new() };
        let result = self.run(&env, &mut reporter);
        if self.cargo_metadata {
            println!("cargo:rerun-if-changed={}", self.settings.root.display());
            for file in &reporter.files {
                println!("cargo:rerun-if-changed={}", file.display());
            }
            for name in env.names_read() {
                println!("cargo:rerun-if-env-changed={name}");
            }
            if let Ok(out) = &result {
                let dir = out.library_path.parent().unwrap_or(Path::new("."));
                let var = format!("BEGEN_{}_DIR", out.library.name.to_ascii_uppercase());
                println!("cargo:rustc-env={var}={}", dir.display());
            }
        }
        result
    }

    fn run(&self, env: &Env, reporter: &mut CargoReporter) -> Result<BuildOutput> {
        let mut settings = self.settings.clone();
        let out_dir = env.var("OUT_DIR").map(PathBuf::from);
        if settings.out.is_none() {
            let out = out_dir
                .clone()
                .ok_or_else(|| Error::other("OUT_DIR is not set: outside a build script, call `.out_dir(...)`"))?;
            settings.out = Some(out);
        }
        // In a build script the work files stay in Cargo's OUT_DIR, whatever
        // the out directory: `cargo clean` removes them.
        if settings.work_dir.is_none() {
            settings.work_dir = out_dir.map(|dir| dir.join(".begen"));
        }
        if let Some(p) = &self.platform {
            settings.platform = Some(
                PlatformChoice::parse(p)
                    .ok_or_else(|| Error::other(format!("platform `{p}` is not one of `cpu`, `cuda`, `auto`")))?,
            );
        }
        if let Some(names) = &self.targets {
            settings.targets =
                crate::target::parse_names(names).map_err(|e| Error::other(format!(".targets(): {e}")))?;
        }
        let built = crate::driver::build(&settings, env, reporter)?;
        if let Some(dir) = &self.python_out {
            built.copy_python_outputs(dir)?;
        }
        Ok(built)
    }
}

/// Reports as `cargo:warning=` lines and remembers the files read.
struct CargoReporter {
    metadata: bool,
    files: Vec<PathBuf>,
}

impl CargoReporter {
    fn warn(&self, text: &str) {
        for line in text.lines() {
            if self.metadata {
                println!("cargo:warning={line}");
            } else {
                eprintln!("{line}");
            }
        }
    }
}

impl Reporter for CargoReporter {
    fn diagnostic(&mut self, diagnostic: &Diagnostic, sources: &SourceMap) {
        if self.metadata {
            for line in crate::diag::render::render_cargo(diagnostic, sources) {
                println!("{line}");
            }
        } else {
            eprintln!("{}", crate::diag::render::render_text(diagnostic, sources, false));
        }
    }
    fn progress(&mut self, line: &str) {
        // Cargo shows a build script's stderr only when it fails.
        eprintln!("{line}");
    }
    fn compiler_output(&mut self, unit: &str, output: &str) {
        self.warn(&format!("{unit}:\n{output}"));
    }
    fn files_read(&mut self, paths: &[PathBuf]) {
        self.files.extend(paths.iter().cloned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_come_back_as_results() {
        let out = std::env::temp_dir().join(format!("begen-api-{}", std::process::id()));
        let err = Build::new()
            .dir("/nonexistent/begen-kernels")
            .out_dir(&out)
            .cargo_metadata(false)
            .try_compile("k")
            .unwrap_err();
        assert!(err.to_string().contains("/nonexistent/begen-kernels"), "{err}");
        let err = Build::new().platform("gpu").out_dir(&out).cargo_metadata(false).try_compile("k").unwrap_err();
        assert_eq!(err.to_string(), "platform `gpu` is not one of `cpu`, `cuda`, `auto`");
        assert!(!out.exists(), "nothing is written when the build cannot start");
    }
}
