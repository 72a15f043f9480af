//! Shared helpers for speed and memory: per-file work spread over the
//! machine's cores, a fast hasher for maps keyed by short strings, and
//! handing freed memory back to the system.
//!
//! Per-file work: items are taken from a shared queue one at a time (file
//! sizes vary a lot), and each item keeps its own results, so the outcome
//! does not depend on which thread ran it. The caller's thread works
//! through the queue itself, with scoped helper threads started for the
//! call, so a helper that is slow to get a core only means less help.

use std::hash::{BuildHasherDefault, Hasher};
use std::slice::IterMut;
use std::sync::{Mutex, PoisonError};

/// How many threads to use: one per core the process may use (finding out
/// reads cgroup files, so ask once).
pub(crate) fn threads() -> usize {
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *THREADS.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from))
}

/// Runs `work` on every item, on this thread and up to `threads - 1`
/// helpers. Each thread makes its own `state` (a parser, say) before its
/// first item. A panic in `work` reaches the caller once every thread has
/// stopped.
pub(crate) fn for_each<T: Send, S>(
    items: &mut [T],
    threads: usize,
    state: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, &mut T) + Sync,
) {
    let helpers = threads.min(items.len()).saturating_sub(1);
    let queue = Mutex::new(items.iter_mut());
    let run = || {
        let mut s = None;
        while let Some(item) = next(&queue) {
            work(s.get_or_insert_with(&state), item);
        }
    };
    if helpers == 0 {
        run();
        return;
    }
    std::thread::scope(|scope| {
        for _ in 0..helpers {
            // A helper that cannot be started only means less help.
            let _ = std::thread::Builder::new().name("begen-helper".into()).spawn_scoped(scope, run);
        }
        run();
    });
}

/// Hands the memory the process has freed back to the system now, not
/// after the allocator's delay: a scan that lets go of its sources' text
/// (most of a large tree's memory) then does not keep it while checking.
pub(crate) fn release_memory() {
    #[cfg(feature = "cli")]
    // SAFETY: `mi_collect` takes no pointers; it frees what mimalloc's heaps
    // no longer use and may be called from any thread at any time.
    unsafe {
        libmimalloc_sys::mi_collect(true);
    }
}

fn next<'a, T>(queue: &Mutex<IterMut<'a, T>>) -> Option<&'a mut T> {
    queue.lock().unwrap_or_else(PoisonError::into_inner).next()
}

/// FxHash: the interner's keys are short token texts, for which SipHash's
/// DoS resistance costs more than the whole lookup.
#[derive(Default)]
pub(crate) struct FxHasher(u64);

/// Builds [`FxHasher`]s, for maps keyed by short strings.
pub(crate) type FxBuildHasher = BuildHasherDefault<FxHasher>;

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let w = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
            self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(K);
        }
        for &b in chunks.remainder() {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
        }
    }
    fn write_u8(&mut self, b: u8) {
        self.write(&[b]);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_item_once_in_place() {
        let mut items: Vec<usize> = (0..1000).collect();
        super::for_each(&mut items, 3, || 1, |one, x| *x += *one);
        assert!(items.iter().enumerate().all(|(k, x)| *x == k + 1));
        super::for_each(&mut items, 1, || 1, |one, x| *x -= *one);
        assert!(items.iter().enumerate().all(|(k, x)| *x == k));
        super::for_each(&mut Vec::<usize>::new(), 2, || (), |_, _| {});
    }

    #[test]
    fn a_panic_reaches_the_caller_and_later_calls_work() {
        for bad in [0, 700] {
            let mut items: Vec<usize> = (0..1000).collect();
            let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                super::for_each(&mut items, 4, || (), |_, x| assert_ne!(*x, bad))
            }));
            assert!(caught.is_err());
        }
        let mut items: Vec<usize> = (0..1000).collect();
        super::for_each(&mut items, 4, || (), |_, x| *x *= 2);
        assert!(items.iter().enumerate().all(|(k, x)| *x == 2 * k));
    }

    #[test]
    fn calls_nest_and_run_from_many_threads_at_once() {
        std::thread::scope(|scope| {
            for t in 0..4 {
                scope.spawn(move || {
                    let mut outer: Vec<Vec<usize>> = (0..20).map(|k| (0..k + t).collect()).collect();
                    super::for_each(
                        &mut outer,
                        3,
                        || (),
                        |_, inner| {
                            super::for_each(inner, 3, || (), |_, x| *x += 1);
                        },
                    );
                    for (k, inner) in outer.iter().enumerate() {
                        assert!(inner.iter().enumerate().all(|(j, x)| *x == j + 1), "{k}");
                    }
                });
            }
        });
    }
}
