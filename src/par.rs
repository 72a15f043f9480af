//! Shared helpers for speed and memory: per-file work spread over the
//! machine's cores, a fast hasher for maps keyed by short strings, and
//! handing freed memory back to the system.
//!
//! Per-file work: items are taken from a shared queue one at a time (file
//! sizes vary a lot), and each item keeps its own results, so the outcome
//! does not depend on which thread ran it. The caller's thread always works
//! through the queue itself; the process's helper threads ([`start`]) join
//! in when they are free. They are started once, each kept off the core of
//! the thread that started them, and wait for the next phase awake for a
//! moment before they sleep: on a virtual machine a new or sleeping thread
//! can take milliseconds to get a core, longer than a phase of a small scan.

use std::hash::{BuildHasherDefault, Hasher};
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::slice::IterMut;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, PoisonError};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

/// How many threads to use: one per core the process may use (finding out
/// reads cgroup files, so ask once).
pub(crate) fn threads() -> usize {
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *THREADS.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from))
}

/// Runs `work` on every item, on this thread and up to `threads - 1`
/// helpers. Each thread makes its own `state` (a parser, say) before its
/// first item. A panic in `work` reaches the caller once every thread has
/// stopped. The thread that started the helpers runs on one CPU during the
/// call (see `Pool::keep_home`): a process `work` started there would
/// inherit that one CPU.
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
    } else {
        Pool::get().run(helpers, &run);
    }
}

/// Starts the helper threads now (one per core beyond this one), so that
/// they are running by the time the first phase needs them.
pub(crate) fn start() {
    let pool = Pool::get();
    pool.grow(threads().saturating_sub(1));
}

/// How long an idle helper stays awake before it sleeps: longer than the
/// gaps between a scan's phases, short enough not to matter after the last.
const SPIN: Duration = Duration::from_micros(500);

/// The helper threads of the process, and the job they may join.
struct Pool {
    /// The latest job, and how many helpers were started.
    slot: Mutex<Slot>,
    wake: Condvar,
    /// Bumped with each job: what awake idle helpers watch.
    jobs: AtomicUsize,
}

#[derive(Default)]
struct Slot {
    job: Option<Arc<Job>>,
    helpers: usize,
    /// The thread that started the helpers, and the CPU they keep off.
    home: Option<(ThreadId, usize)>,
}

/// One `for_each` call's work, offered to the helpers.
struct Job {
    /// The caller's `run`, as a pointer without its lifetime: see
    /// [`Pool::run`] for why it outlives every call made through it.
    run: *const (dyn Fn() + Sync + 'static),
    /// Helpers that may still join: each takes one; the caller takes back
    /// the rest when it has emptied the queue.
    seats: AtomicUsize,
    /// Helpers that joined and have not finished, and a panic one met.
    busy: Mutex<(usize, Option<Box<dyn std::any::Any + Send>>)>,
    finished: Condvar,
}

// SAFETY: `run` points to a `Sync` closure, called only as described at
// `Pool::run`; the rest of a job is atomics and mutexes.
unsafe impl Send for Job {}
// SAFETY: as for `Send`.
unsafe impl Sync for Job {}

impl Pool {
    fn get() -> &'static Pool {
        static POOL: OnceLock<Pool> = OnceLock::new();
        POOL.get_or_init(|| Pool { slot: Mutex::default(), wake: Condvar::new(), jobs: AtomicUsize::new(0) })
    }

    /// Starts helpers until there are `n`. A helper that cannot be started
    /// only means less help.
    fn grow(&'static self, n: usize) {
        let mut slot = lock(&self.slot);
        let caller = cpu::current();
        if slot.helpers < n
            && slot.home.is_none()
            && let Some(cpu) = caller
        {
            slot.home = Some((std::thread::current().id(), cpu));
        }
        while slot.helpers < n {
            let started = std::thread::Builder::new().name("begen-helper".into()).spawn(move || {
                cpu::avoid(caller);
                self.help()
            });
            if started.is_err() {
                break;
            }
            slot.helpers += 1;
        }
    }

    /// Runs `run` on this thread while up to `helpers` helpers join in.
    fn run(&'static self, helpers: usize, run: &(dyn Fn() + Sync)) {
        self.grow(helpers);
        // SAFETY: only the lifetime is changed, of a pointer that is read
        // only by helpers that took a seat. A helper takes a seat only while
        // `seats` is above zero; this function sets it to zero before it
        // waits, and returns only once every helper that took a seat has
        // returned from its call. So no call through `job.run` starts or runs
        // after this function returns, while `run` is still borrowed.
        let erased =
            unsafe { std::mem::transmute::<*const (dyn Fn() + Sync + '_), *const (dyn Fn() + Sync + 'static)>(run) };
        let job = Arc::new(Job {
            run: erased,
            seats: AtomicUsize::new(helpers),
            busy: Mutex::new((0, None)),
            finished: Condvar::new(),
        });
        {
            // Bumped under the lock that a helper checks it under before it
            // sleeps, so no helper misses the wake-up.
            let mut slot = lock(&self.slot);
            slot.job = Some(job.clone());
            self.jobs.fetch_add(1, Ordering::Release);
        }
        self.wake.notify_all();
        let _kept = self.keep_home();
        let own = catch_unwind(AssertUnwindSafe(run));
        // The queue is empty: a helper that has not taken a seat yet would
        // find nothing to do, so none may take one now.
        job.seats.store(0, Ordering::SeqCst);
        let mut busy = lock(&job.busy);
        while busy.0 > 0 {
            busy = job.finished.wait(busy).unwrap_or_else(PoisonError::into_inner);
        }
        let helper_panic = busy.1.take();
        drop(busy);
        let mut slot = lock(&self.slot);
        if slot.job.as_ref().is_some_and(|j| Arc::ptr_eq(j, &job)) {
            slot.job = None;
        }
        drop(slot);
        if let Err(p) = own {
            resume_unwind(p);
        }
        if let Some(p) = helper_panic {
            resume_unwind(p);
        }
    }

    /// Keeps the thread that started the helpers on the CPU they keep off
    /// until the guard drops (a job's end). Otherwise the scheduler that
    /// packs threads (see [`cpu`]) may move it onto a helper's CPU in the
    /// middle of a job, and the two then share one CPU: that job is among
    /// the slowest. Other threads calling at once are left where they are.
    fn keep_home(&self) -> cpu::Kept {
        match lock(&self.slot).home {
            Some((thread, cpu)) if thread == std::thread::current().id() => cpu::keep_on(cpu),
            _ => cpu::Kept::default(),
        }
    }

    /// A helper's life: wait for a job, join it if a seat is free, repeat.
    fn help(&self) {
        let mut seen = 0;
        loop {
            seen = self.wait_for_job(seen);
            let Some(job) = lock(&self.slot).job.clone() else { continue };
            // The seat is taken and the busy count raised under one lock, so
            // the caller, which empties the seats before it counts the busy,
            // either waits for this helper or is never joined by it.
            {
                let mut busy = lock(&job.busy);
                if job.seats.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)).is_err() {
                    continue;
                }
                busy.0 += 1;
            }
            // SAFETY: this helper holds a seat, so the closure is alive until
            // it lowers the busy count below (see `Pool::run`).
            let run = unsafe { &*job.run };
            let outcome = catch_unwind(AssertUnwindSafe(run));
            let mut busy = lock(&job.busy);
            busy.0 -= 1;
            if let Err(p) = outcome {
                busy.1.get_or_insert(p);
            }
            job.finished.notify_all();
        }
    }

    /// Waits until a job newer than `seen` is offered, awake for [`SPIN`]
    /// before sleeping; returns the newest job's number.
    fn wait_for_job(&self, seen: usize) -> usize {
        let since = Instant::now();
        loop {
            let now = self.jobs.load(Ordering::Acquire);
            if now != seen {
                return now;
            }
            if since.elapsed() > SPIN {
                break;
            }
            // A yield, not a busy spin: should the caller come to share this
            // core, it runs at once.
            std::thread::yield_now();
        }
        let mut slot = lock(&self.slot);
        loop {
            let now = self.jobs.load(Ordering::Acquire);
            if now != seen {
                return now;
            }
            slot = self.wake.wait(slot).unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// Keeping helpers off the core of the thread that starts them. Some
/// virtual machines' schedulers pack a process's threads onto as few
/// virtual CPUs as they can (this project's CI machines boot with
/// `sched_vcpu_pack`): a new helper then waits on the caller's core, and
/// the job runs slower than with its helpers elsewhere. A helper may run
/// anywhere the process may, but on the caller's core.
#[cfg(target_os = "linux")]
mod cpu {
    /// A CPU set as glibc's `cpu_set_t` lays it out: 1,024 CPUs.
    pub(super) type Mask = [u64; 16];

    unsafe extern "C" {
        fn sched_getcpu() -> i32;
        pub(super) fn sched_getaffinity(pid: i32, size: usize, mask: *mut u64) -> i32;
        fn sched_setaffinity(pid: i32, size: usize, mask: *const u64) -> i32;
    }

    /// A thread kept on one CPU, and the CPUs it may run on again when this
    /// drops.
    #[derive(Default)]
    pub(crate) struct Kept(Option<Mask>, std::marker::PhantomData<*const ()>);

    impl Drop for Kept {
        fn drop(&mut self) {
            if let Some(mask) = &self.0 {
                // SAFETY: `mask` is a `Mask`; pid 0 is the calling thread,
                // the one that made this guard (it is not `Send`).
                unsafe { sched_setaffinity(0, std::mem::size_of::<Mask>(), mask.as_ptr()) };
            }
        }
    }

    /// Keeps the calling thread on `cpu`, when it may run there, until the
    /// guard drops.
    pub(super) fn keep_on(cpu: usize) -> Kept {
        let mut was: Mask = [0; 16];
        let size = std::mem::size_of::<Mask>();
        // SAFETY: `was` is `size` bytes; pid 0 is the calling thread.
        if unsafe { sched_getaffinity(0, size, was.as_mut_ptr()) } != 0 {
            return Kept::default();
        }
        let bit = 1u64 << (cpu % 64);
        if was.get(cpu / 64).is_none_or(|w| w & bit == 0) {
            return Kept::default();
        }
        let mut only: Mask = [0; 16];
        only[cpu / 64] = bit;
        // SAFETY: as above; `only` names a CPU the thread may use.
        match unsafe { sched_setaffinity(0, size, only.as_ptr()) } {
            0 => Kept(Some(was), std::marker::PhantomData),
            _ => Kept::default(),
        }
    }

    /// The CPU the calling thread runs on.
    pub(super) fn current() -> Option<usize> {
        // SAFETY: takes nothing, returns a number or -1.
        usize::try_from(unsafe { sched_getcpu() }).ok()
    }

    /// Lets the calling thread run on every CPU it may run on but `cpu`,
    /// when that leaves one. Failing only means the thread stays as it was.
    pub(super) fn avoid(cpu: Option<usize>) {
        let Some(cpu) = cpu else { return };
        let mut mask: Mask = [0; 16];
        let size = std::mem::size_of::<Mask>();
        // SAFETY: `mask` is `size` bytes; pid 0 is the calling thread.
        if unsafe { sched_getaffinity(0, size, mask.as_mut_ptr()) } != 0 {
            return;
        }
        let Some(word) = mask.get_mut(cpu / 64) else { return };
        *word &= !(1u64 << (cpu % 64));
        if mask.iter().all(|w| *w == 0) {
            return;
        }
        // SAFETY: as above; the mask names only CPUs the thread may use.
        unsafe { sched_setaffinity(0, size, mask.as_ptr()) };
    }
}

#[cfg(not(target_os = "linux"))]
mod cpu {
    pub(super) fn current() -> Option<usize> {
        None
    }
    pub(super) fn avoid(_: Option<usize>) {}
    #[derive(Default)]
    pub(crate) struct Kept;
    pub(super) fn keep_on(_: usize) -> Kept {
        Kept
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
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
    #[cfg(target_os = "linux")]
    #[test]
    fn a_kept_thread_runs_on_its_cpu_until_the_guard_drops() {
        use super::cpu;
        // A thread of its own: the guard changes the calling thread only.
        std::thread::spawn(|| {
            let mask = || {
                let mut m: cpu::Mask = [0; 16];
                // SAFETY: `m` is a whole mask; pid 0 is this thread.
                assert_eq!(unsafe { cpu::sched_getaffinity(0, std::mem::size_of::<cpu::Mask>(), m.as_mut_ptr()) }, 0);
                m
            };
            let before = mask();
            let here = cpu::current().unwrap();
            {
                let _kept = cpu::keep_on(here);
                let mut only: cpu::Mask = [0; 16];
                only[here / 64] = 1 << (here % 64);
                assert_eq!(mask(), only);
                assert_eq!(cpu::current(), Some(here));
            }
            assert_eq!(mask(), before);
            // A CPU the thread may not use: left as it is.
            drop(cpu::keep_on(1023));
            assert_eq!(mask(), before);
        })
        .join()
        .unwrap();
    }

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
    fn a_panic_reaches_the_caller_and_the_helpers_go_on() {
        super::start();
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
