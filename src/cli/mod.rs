//! Argument parsing and dispatch; each subcommand lives in its own file.

mod build;
mod scan;

use clap::{Parser, Subcommand};

/// begen: C++/CUDA kernels annotated with `// @BE` -> XLA FFI custom calls for JAX.
#[derive(Debug, Parser)]
#[command(name = "begen", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    Scan(scan::ScanArgs),
    /// Write the generated sources, Python module and manifest (no compiling).
    Generate(build::GenerateArgs),
    /// Build lib<NAME>.so, <NAME>.py, <NAME>.pyi and <NAME>.yaml into OUT.
    Build(build::BuildArgs),
    /// Print the toolchain begen resolves (XLA FFI headers, compilers, CUDA).
    Doctor(build::DoctorArgs),
}

/// Runs the CLI; returns the process exit status.
pub fn main() -> i32 {
    let cli = Cli::parse();
    match &cli.command {
        Command::Scan(args) => scan::run(args),
        Command::Generate(args) => build::generate(args),
        Command::Build(args) => build::build(args),
        Command::Doctor(args) => build::doctor(args),
    }
}
