//! The `begen` command line: a thin front over the library's stages.

mod cli;

fn main() {
    std::process::exit(cli::main());
}

// The scanner allocates many small short-lived strings and token vectors
// across threads; mimalloc's thread-local free lists cut the allocator's share
// of a scan (a quarter of the time with glibc's malloc on brainevent).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
