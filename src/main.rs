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
static ALLOCATOR: Mimalloc = Mimalloc;

/// mimalloc as Rust's allocator. An alignment that every block of the size
/// has anyway takes mimalloc's plain entry points, whose fast path is a
/// fraction of the aligned ones' (a brainevent scan makes 88,000
/// allocations; the `mimalloc` crate sends all of them the aligned way).
struct Mimalloc;

/// The alignment of every mimalloc block of at least this many bytes.
const PLAIN_ALIGN: usize = 16;

fn plain(align: usize, size: usize) -> bool {
    align <= PLAIN_ALIGN && align <= size
}

// SAFETY: each call is passed on to the mimalloc function of the same
// contract: a block of `size` bytes aligned to `layout.align()` (the plain
// functions' blocks are when `plain` holds), or null; `mi_free` and the
// reallocs take any block mimalloc returned.
unsafe impl std::alloc::GlobalAlloc for Mimalloc {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: see the impl.
        unsafe { allocate(layout, libmimalloc_sys::mi_malloc, libmimalloc_sys::mi_malloc_aligned) }
    }

    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: see the impl.
        unsafe { allocate(layout, libmimalloc_sys::mi_zalloc, libmimalloc_sys::mi_zalloc_aligned) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, _layout: std::alloc::Layout) {
        // SAFETY: see the impl.
        unsafe { libmimalloc_sys::mi_free(ptr.cast()) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        let align = layout.align();
        // SAFETY: see the impl.
        unsafe {
            if plain(align, new_size) {
                libmimalloc_sys::mi_realloc(ptr.cast(), new_size).cast()
            } else {
                libmimalloc_sys::mi_realloc_aligned(ptr.cast(), new_size, align).cast()
            }
        }
    }
}

/// A block for `layout` from mimalloc's plain entry point when its blocks
/// have the alignment anyway, else from the aligned one.
///
/// # Safety
/// As `GlobalAlloc::alloc`: `layout` has a non-zero size.
unsafe fn allocate(
    layout: std::alloc::Layout,
    plain_fn: unsafe extern "C" fn(usize) -> *mut std::ffi::c_void,
    aligned_fn: unsafe extern "C" fn(usize, usize) -> *mut std::ffi::c_void,
) -> *mut u8 {
    let (size, align) = (layout.size(), layout.align());
    // SAFETY: both take any size and, the aligned one, a power-of-two
    // alignment, which a `Layout` has.
    unsafe { if plain(align, size) { plain_fn(size).cast() } else { aligned_fn(size, align).cast() } }
}
