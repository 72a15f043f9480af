//! The `begen` command line: a thin front over the library's stages
//! (`begen::cli`, inside the library so that the command line needs no
//! public API beyond what build scripts use).

fn main() {
    std::process::exit(begen::cli::main());
}

// The scanner allocates many small short-lived strings and token vectors
// across threads; mimalloc's thread-local free lists cut the allocator's share
// of a scan (a quarter of the time with glibc's malloc on brainevent).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
