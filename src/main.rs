//! The `begen` command line: a thin front over the library's stages
//! (`begen::cli`, inside the library so that the command line needs no
//! public API beyond what build scripts use).

use std::io::Write;

fn main() {
    let status = begen::cli::main();
    // A report cut short by a closed pipe has nowhere to go: the status stands.
    let _ = std::io::stdout().flush();
    // SAFETY: `_exit` takes a plain int and ends the process. Everything the
    // command wrote is flushed (stderr is unbuffered), no thread is left,
    // and no temporary file waits for an exit handler. Skipped: mimalloc's
    // clean-up at exit, which hands every page it holds back to the system
    // one `madvise` at a time (about 80 calls after a scan of brainevent),
    // work the kernel does at once when the process ends.
    unsafe { _exit(status) }
}

unsafe extern "C" {
    /// POSIX `_exit`: ends the process without running exit handlers.
    fn _exit(status: i32) -> !;
}

// The scanner allocates many small short-lived strings and token vectors
// across threads; mimalloc's thread-local free lists cut the allocator's share
// of a scan (a quarter of the time with glibc's malloc on brainevent).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
