//! Argument parsing and dispatch; each subcommand lives in its own file.

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
}

/// Runs the CLI; returns the process exit status.
pub fn main() -> i32 {
    let cli = Cli::parse();
    match cli.command {
        Command::Scan(args) => scan::run(&args),
    }
}
