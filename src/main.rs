//! The `begen` command line: a thin front over the library's stages.

mod cli;

fn main() {
    std::process::exit(cli::main());
}
