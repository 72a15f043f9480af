//! `begen generate`, `begen build` and `begen doctor`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::Error;
use crate::driver::{Env, PlatformChoice, Settings, StderrReporter};

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum PlatformArg {
    Cpu,
    Cuda,
    Auto,
}

impl From<PlatformArg> for PlatformChoice {
    fn from(p: PlatformArg) -> PlatformChoice {
        match p {
            PlatformArg::Cpu => PlatformChoice::Cpu,
            PlatformArg::Cuda => PlatformChoice::Cuda,
            PlatformArg::Auto => PlatformChoice::Auto,
        }
    }
}

/// Arguments shared by `generate` and `build`.
#[derive(Debug, Args)]
pub(crate) struct CommonArgs {
    /// The kernel directory (scanned recursively).
    pub(crate) dir: PathBuf,
    /// The configuration to read instead of DIR/begen.yaml, e.g. two
    /// builds of one kernel directory; its paths stay relative to DIR.
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// Output directory.
    #[arg(long, value_name = "OUT")]
    pub(crate) out: PathBuf,
    /// Library name [default: begen.yaml's `name`, else DIR's name].
    #[arg(long)]
    pub(crate) name: Option<String>,
    /// The FFI target prefix: each kernel registers as PREFIX.<function>;
    /// two libraries loaded in one process need different prefixes, e.g.
    /// their import paths (mypkg._kernels) [default: begen.yaml's `prefix`,
    /// else the library name].
    #[arg(long)]
    pub(crate) prefix: Option<String>,
    /// Which kernels to build: cpu skips CUDA sources (with a warning each),
    /// cuda requires nvcc, auto requires nvcc only when there are CUDA
    /// sources [default: begen.yaml's `platform`, else auto].
    #[arg(long, value_enum)]
    pub(crate) platform: Option<PlatformArg>,
    /// The oldest jax release the library must load on, e.g. 0.10.2: its
    /// handlers are compiled against that jaxlib's XLA FFI headers (fetched
    /// once into the user's cache) [default: begen.yaml's `jax_min`, else
    /// the running jaxlib's].
    #[arg(long, value_name = "VERSION")]
    pub(crate) jax_min: Option<String>,
}

/// `begen generate DIR --out OUT`.
#[derive(Debug, Args)]
pub(crate) struct GenerateArgs {
    #[command(flatten)]
    pub(crate) common: CommonArgs,
    /// Where the work files go (the toolchain probes' answers, the lock),
    /// as WORK_DIR/NAME, as for `build`; never OUT [default: a per-user
    /// cache keyed by OUT, $XDG_CACHE_HOME/begen/work/..., else
    /// ~/.cache/begen/work/...].
    #[arg(long, value_name = "WORK_DIR")]
    pub(crate) work_dir: Option<PathBuf>,
}

/// `begen build DIR --out OUT`.
#[derive(Debug, Args)]
pub(crate) struct BuildArgs {
    #[command(flatten)]
    pub(crate) common: CommonArgs,
    /// The bindings to build, comma-separated: jax (lib<NAME>.so, <NAME>.py)
    /// and torch (lib<NAME>_torch.so, <NAME>_torch.py: PyTorch ops through
    /// torch's stable ABI; needs a Python with torch, BEGEN_TORCH_PYTHON,
    /// else BEGEN_PYTHON), alone or together [default: jax].
    #[arg(long = "target", value_name = "TARGETS", value_delimiter = ',')]
    pub(crate) targets: Vec<String>,
    /// CUDA architectures, e.g. sm_90 or 8.0,9.0 [default: BEGEN_CUDA_ARCH,
    /// begen.yaml, this machine's GPUs, then a built-in list].
    #[arg(long, value_delimiter = ',')]
    pub(crate) arch: Vec<String>,
    /// Extra include directory (searched first; repeatable).
    #[arg(short = 'I', long = "include", value_name = "DIR")]
    pub(crate) include: Vec<PathBuf>,
    /// Where the work files go (objects, generated sources, the lock), as
    /// WORK_DIR/NAME; never OUT [default: a per-user cache keyed by OUT,
    /// $XDG_CACHE_HOME/begen/work/..., else ~/.cache/begen/work/...].
    #[arg(long, value_name = "WORK_DIR")]
    pub(crate) work_dir: Option<PathBuf>,
    /// Parallel compiler runs [default: the number of CPUs].
    #[arg(short, long)]
    pub(crate) jobs: Option<usize>,
    /// No progress lines.
    #[arg(short, long)]
    pub(crate) quiet: bool,
    /// Every compiler warning in full [default: a count per source and the
    /// first few; all of them in the work directory's warnings.log].
    #[arg(short, long)]
    pub(crate) verbose: bool,
}

/// `begen doctor`.
#[derive(Debug, Args)]
pub(crate) struct DoctorArgs {
    /// CUDA architectures to resolve, as for `build`.
    #[arg(long, value_delimiter = ',')]
    pub(crate) arch: Vec<String>,
    /// The oldest jax release a build is to load on, as for `build`.
    #[arg(long, value_name = "VERSION")]
    pub(crate) jax_min: Option<String>,
}

fn settings(common: &CommonArgs) -> Result<Settings, i32> {
    if !common.dir.is_dir() {
        super::say!("error: {}: not a directory", common.dir.display());
        return Err(2);
    }
    let mut settings = Settings::new(&common.dir);
    settings.config = config_file(common.config.as_ref())?;
    settings.out = Some(common.out.clone());
    settings.name = common.name.clone();
    settings.prefix = common.prefix.clone();
    settings.platform = common.platform.map(Into::into);
    settings.jax_min = common.jax_min.clone();
    Ok(settings)
}

/// `--config FILE`, which must be a file (a usage error otherwise, as a
/// DIR that is not a directory is).
pub(crate) fn config_file(config: Option<&PathBuf>) -> Result<Option<PathBuf>, i32> {
    match config {
        Some(c) if !c.is_file() => {
            let why = if c.exists() { "not a regular file" } else { "no such file" };
            super::say!("error: {}: {why} (--config)", c.display());
            Err(2)
        }
        c => Ok(c.cloned()),
    }
}

/// Says why a run stopped (error diagnostics were printed already).
fn fail(e: &Error) -> i32 {
    super::say!("error: {e}");
    1
}

pub(crate) fn generate(args: &GenerateArgs) -> i32 {
    let mut opts = match settings(&args.common) {
        Ok(o) => o,
        Err(code) => return code,
    };
    opts.work_dir = args.work_dir.clone();
    match crate::driver::generate(&opts, &Env::new(), &mut StderrReporter::default()) {
        Ok(generated) => {
            for file in &generated.files {
                super::out!("{}", file.display());
            }
            0
        }
        Err(e) => fail(&e),
    }
}

pub(crate) fn build(args: &BuildArgs) -> i32 {
    let mut opts = match settings(&args.common) {
        Ok(o) => o,
        Err(code) => return code,
    };
    opts.arch = args.arch.clone();
    opts.includes = args.include.clone();
    opts.jobs = args.jobs;
    opts.work_dir = args.work_dir.clone();
    opts.verbose = args.verbose;
    match crate::target::parse_names(&args.targets) {
        Ok(ids) => opts.targets = ids,
        Err(e) => {
            super::say!("error: --target: {e}");
            return 2;
        }
    }
    let mut reporter = StderrReporter { quiet: args.quiet };
    match crate::driver::build(&opts, &Env::new(), &mut reporter) {
        Ok(out) => {
            if !args.quiet {
                super::say!(
                    "built {} ({} kernels; {} TUs compiled, {} up to date)",
                    out.library_path.display(),
                    out.library.functions.len(),
                    out.compiled,
                    out.up_to_date
                );
            }
            0
        }
        Err(e) => fail(&e),
    }
}

pub(crate) fn doctor(args: &DoctorArgs) -> i32 {
    let env = Env::new();
    let mut opts = Settings::new(".");
    opts.arch = args.arch.clone();
    opts.jax_min = args.jax_min.clone();
    let lines = crate::driver::doctor(&opts, &env);
    let mut ok = true;
    super::out!("begen {}", env!("CARGO_PKG_VERSION"));
    match std::env::current_exe() {
        Ok(exe) => {
            super::out!("{:<22} {}", "installed at:", exe.display());
            super::out!("{:<22} {}", "installed by:", super::install::origin(&exe));
        }
        Err(e) => super::out!("{:<22} unknown: {e}", "installed at:"),
    }
    for line in &lines {
        match &line.found {
            Ok(found) => super::out!("{:<22} {found}", format!("{}:", line.what)),
            Err(why) => {
                ok &= !line.required;
                let tag = if line.required { "MISSING" } else { "not found" };
                super::out!("{:<22} {tag}: {why}", format!("{}:", line.what));
            }
        }
    }
    super::out!("{:<22} {}", "environment read:", env.names_read().join(", "));
    if ok { 0 } else { 1 }
}
