//! The build plan: everything about how a library is built that the
//! caller's settings, the environment and begen.yaml decide, resolved once
//! by `check` (caller's settings first, then the environment, then
//! begen.yaml, then begen's defaults). `build` executes it and decides
//! only what depends on probing the machine: which compilers and headers
//! are there, which GPUs, which XLA FFI API the headers declare.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::Platform;
use super::generated::TargetId;

/// The four files a build writes into OUT, named after the library: the one
/// place that spells them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Outputs {
    /// The library's name, which every target's outputs are named after.
    pub(crate) name: String,
    /// `lib<NAME>.so`.
    pub(crate) library: String,
    /// `<NAME>.py`.
    pub(crate) module: String,
    /// `<NAME>.pyi`.
    pub(crate) stub: String,
    /// `<NAME>.yaml`, the manifest.
    pub(crate) manifest: String,
    /// `<NAME>.tune.json`, the shipped tuning table: a fifth output only
    /// when begen.yaml declares `tune: table:`.
    pub(crate) tune_table: String,
}

impl Outputs {
    /// The outputs of library `name`.
    pub(crate) fn of(name: &str) -> Outputs {
        Outputs {
            name: name.to_string(),
            library: format!("lib{name}.so"),
            module: format!("{name}.py"),
            stub: format!("{name}.pyi"),
            manifest: format!("{name}.yaml"),
            tune_table: format!("{name}.tune.json"),
        }
    }

    /// All four: the library, the module, the stub, the manifest.
    pub(crate) fn all(&self) -> [&str; 4] {
        [&self.library, &self.module, &self.stub, &self.manifest]
    }
}

/// How one library is built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    /// The file names of the outputs.
    pub(crate) outputs: Outputs,
    /// Where the outputs go (OUT); `.` where nothing is built.
    pub(crate) out: PathBuf,
    /// The caller's work directory, else a per-user cache keyed by OUT.
    pub(crate) work_dir: Option<PathBuf>,
    /// Include directories in search order: the caller's, begen.yaml's
    /// (absolute), then the kernel directory. The build adds begen's
    /// support headers after them and XLA's FFI headers as system headers.
    pub(crate) includes: Vec<PathBuf>,
    /// `-ffile-prefix-map` options that make `__FILE__` relative to the
    /// kernel directory (each backend passes them its own way).
    pub(crate) prefix_maps: Vec<String>,
    /// The binding targets to build, in order (begen's default: jax).
    pub(crate) targets: Vec<TargetId>,
    /// The jax release whose jaxlib's XLA FFI headers the handlers are
    /// compiled against (the caller's `jax_min`, else begen.yaml's); none:
    /// the headers the machine has.
    pub(crate) jax_min: Option<String>,
    /// One per toolchain the library needs, the host C++ one first.
    pub(crate) backends: Vec<BackendPlan>,
    /// The program every compile runs through, where one is set.
    pub(crate) launcher: Option<Launcher>,
    /// What the link adds to the objects.
    pub(crate) link: LinkPlan,
    /// Parallel compiler runs: the caller's, else `NUM_JOBS`, else the CPUs.
    pub(crate) jobs: usize,
    /// A compile running longer is stopped: `BEGEN_COMPILE_TIMEOUT`
    /// (seconds), else 30 minutes.
    pub(crate) timeout: Duration,
    /// Every compiler warning in full, not a summary.
    pub(crate) verbose: bool,
    /// cc prints `cargo:` lines (build.rs): its detection then runs every
    /// build, never answered from the probes kept in the work directory.
    pub(crate) cc_metadata: bool,
}

impl Plan {
    /// OUT.
    pub(crate) fn out(&self) -> &Path {
        &self.out
    }
}

/// What one backend compiles with: its cc configuration, its flags and,
/// for a GPU backend, the architectures asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BackendPlan {
    /// The sources it compiles.
    pub(crate) platform: Platform,
    /// The cc configuration its translation units start from.
    pub(crate) cc: CcBase,
    /// Flags after begen's own: begen.yaml's, then the caller's.
    pub(crate) flags: Vec<String>,
    /// The architectures asked for (GPU backends); none asked: the build
    /// takes this machine's GPUs, else a built-in list.
    pub(crate) arch: Option<ArchRequest>,
}

/// A cc configuration (compiler, target, opt level, defines) as the caller
/// gave it; equal when its configuration text is.
#[derive(Debug, Clone)]
pub(crate) struct CcBase(pub(crate) cc::Build);

impl PartialEq for CcBase {
    fn eq(&self, other: &CcBase) -> bool {
        format!("{:?}", self.0) == format!("{:?}", other.0)
    }
}

impl Eq for CcBase {}

/// GPU architectures as written, and who wrote them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ArchRequest {
    pub(crate) items: Vec<String>,
    pub(crate) source: ArchSource,
}

/// Where a build's list of GPU architectures came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ArchSource {
    /// The caller's settings (`--arch`, `Build::arch`).
    Option,
    /// `BEGEN_CUDA_ARCH`.
    Env,
    /// begen.yaml's `cuda.arch`.
    Config,
    /// Found by the build: this machine's GPUs.
    LocalGpu,
    /// Found by the build: begen's list, less what the compiler lacks.
    Default,
}

impl ArchSource {
    pub(crate) fn describe(self) -> &'static str {
        match self {
            ArchSource::Option => "--arch / Build::arch",
            ArchSource::Env => "BEGEN_CUDA_ARCH",
            ArchSource::Config => "begen.yaml cuda.arch",
            ArchSource::LocalGpu => "this machine's GPUs (nvidia-smi)",
            ArchSource::Default => "begen's default list",
        }
    }
}

/// A compiler launcher (`ccache`, `sccache`) as written, and where: the
/// build finds the program and names `from` when it cannot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Launcher {
    pub(crate) program: String,
    pub(crate) from: &'static str,
}

/// What the link adds to the objects.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct LinkPlan {
    /// Libraries by `-l` name: begen.yaml's, then the caller's.
    pub(crate) libs: Vec<String>,
    /// Directories searched for them first: the caller's, then begen.yaml's
    /// (absolute).
    pub(crate) dirs: Vec<PathBuf>,
    /// Linker arguments as they are: begen.yaml's, the caller's, then what
    /// the library itself needs (`-ldl` for binary kernels).
    pub(crate) args: Vec<String>,
    /// begen.yaml's libraries, which the Python module loads before the
    /// library (a pip CUDA library is not on the loader's path).
    pub(crate) preload: Vec<String>,
}

#[cfg(test)]
impl Plan {
    /// A CPU-only plan with nothing configured (emit's tests).
    pub(crate) fn empty(name: &str) -> Plan {
        Plan {
            outputs: Outputs::of(name),
            out: PathBuf::from("."),
            work_dir: None,
            includes: Vec::new(),
            prefix_maps: Vec::new(),
            targets: super::generated::DEFAULT_TARGETS.to_vec(),
            jax_min: None,
            backends: vec![BackendPlan {
                platform: Platform::Cpu,
                cc: CcBase(cc::Build::new()),
                flags: Vec::new(),
                arch: None,
            }],
            launcher: None,
            link: LinkPlan::default(),
            jobs: 1,
            timeout: Duration::from_secs(1800),
            verbose: false,
            cc_metadata: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Outputs;

    #[test]
    fn outputs_are_named_after_the_library() {
        assert_eq!(Outputs::of("k").all(), ["libk.so", "k.py", "k.pyi", "k.yaml"]);
    }
}
