//! The `begen` command line: argument parsing and dispatch; each
//! subcommand lives in its own file. Inside the library (doc-hidden, behind
//! the `cli` feature) so it may use the stages directly without widening the
//! public API; `src/main.rs` only calls [`main`].

mod build;
mod install;
mod new;
mod scan;
mod tune;

/// Like `eprintln!`, but a closed stderr (`begen scan DIR 2>&1 >/dev/null |
/// head -1`) is not a panic: what cannot be shown is dropped.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}
pub(crate) use say;

/// Like `println!`, with a closed stdout dropped the same way.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}
pub(crate) use out;

use clap::{Parser, Subcommand};

/// begen: C++/CUDA kernels annotated with `// @BE` -> XLA FFI custom calls for JAX.
#[derive(Debug, Parser)]
#[command(name = "begen", version, about, long_about = None, after_help = GUIDE)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The short course printed under `begen --help`.
const GUIDE: &str = "\
An annotated kernel (kernels/scale.cu):
  #include <cuda_runtime.h>
  #include \"brainevent/common.h\"
  // @BE scale
  void scale(const BE::Tensor x, BE::Tensor out, float alpha, int64_t stream);
const tensors are inputs (arg), non-const tensors outputs (ret), scalars
attributes (attr.alpha:float32), `int64_t stream` the CUDA stream.

Typical use:
  begen new mykernels                        # a kernel package: pip wheel . builds it
  begen scan kernels                         # what begen sees, with diagnostics
  begen scan kernels --format json           # the same, for tools
  begen build kernels --out out --name ops   # out/libops.so, ops.py, ops.pyi, ops.yaml
  begen doctor                               # which compilers and headers it uses
  begen tune out --shapes shapes.yaml        # time tuned kernels' candidates here
Then, in Python:
  import sys; sys.path.insert(0, \"out\"); import ops
  y = ops.scale(x, alpha=2.0, out=jax.ShapeDtypeStruct(x.shape, x.dtype))

From Cargo, in build.rs:  begen::Build::new().dir(\"kernels\").compile(\"ops\");
Run `begen help <command>` for each command's options and examples.";

#[derive(Debug, Subcommand)]
enum Command {
    Scan(scan::ScanArgs),
    /// Write the generated sources, Python module and manifest (no compiling).
    Generate(build::GenerateArgs),
    /// Build lib<NAME>.so, <NAME>.py, <NAME>.pyi and <NAME>.yaml into OUT.
    Build(build::BuildArgs),
    /// Print the toolchain begen resolves (XLA FFI headers, compilers, CUDA).
    Doctor(build::DoctorArgs),
    /// Create a kernel package: pyproject.toml with begen's build hook, a CPU kernel with its gradient, a test.
    New(new::NewArgs),
    /// Time a built library's tuned kernels' candidates here; keep the fastest per device and shape.
    Tune(tune::TuneArgs),
}

/// Runs the CLI; returns the process exit status.
pub fn main() -> i32 {
    let cli = Cli::parse();
    match &cli.command {
        Command::Scan(args) => scan::run(args),
        Command::Generate(args) => build::generate(args),
        Command::Build(args) => build::build(args),
        Command::Doctor(args) => build::doctor(args),
        Command::New(args) => new::run(args),
        Command::Tune(args) => tune::run(args),
    }
}
