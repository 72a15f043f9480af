//! Argument parsing and dispatch; each subcommand lives in its own file.

mod build;

use clap::{Parser, Subcommand};

/// Turns C++/CUDA kernels annotated with `// @BE` into XLA FFI custom calls for JAX.
#[derive(Debug, Parser)]
#[command(name = "begen", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Write the generated sources, Python module and manifest (no compiling).
    Generate(build::GenerateArgs),
    /// Build lib<NAME>.so, <NAME>.py, <NAME>.pyi and <NAME>.yaml into OUT.
    Build(build::BuildArgs),
    /// Print the toolchain begen resolves (XLA FFI headers, compilers, CUDA).
    Doctor(build::DoctorArgs),
}

pub fn main() -> i32 {
    let cli = Cli::parse();
    match &cli.command {
        Command::Generate(args) => build::generate(args),
        Command::Build(args) => build::build(args),
        Command::Doctor(args) => build::doctor(args),
    }
}
