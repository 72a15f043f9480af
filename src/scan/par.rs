//! Per-file work spread over the machine's cores. Items are taken from a
//! shared queue one at a time (file sizes vary a lot), and each item keeps
//! its own results, so the outcome does not depend on which thread ran it.

use std::slice::IterMut;
use std::sync::{Mutex, PoisonError};

/// Runs `work` on every item, on up to `available_parallelism` threads.
/// Each thread makes its own `state` (a parser, say) before its first item.
pub(crate) fn for_each<T: Send, S>(
    items: &mut [T],
    state: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, &mut T) + Sync,
) {
    let threads = std::thread::available_parallelism().map_or(1, usize::from).min(items.len());
    let queue = Mutex::new(items.iter_mut());
    let run = || {
        let mut s = None;
        while let Some(item) = next(&queue) {
            work(s.get_or_insert_with(&state), item);
        }
    };
    std::thread::scope(|scope| {
        for _ in 1..threads {
            scope.spawn(run);
        }
        run();
    });
}

fn next<'a, T>(queue: &Mutex<IterMut<'a, T>>) -> Option<&'a mut T> {
    queue.lock().unwrap_or_else(PoisonError::into_inner).next()
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_item_once_in_place() {
        let mut items: Vec<usize> = (0..1000).collect();
        super::for_each(&mut items, || 1, |one, x| *x += *one);
        assert!(items.iter().enumerate().all(|(k, x)| *x == k + 1));
        super::for_each(&mut Vec::<usize>::new(), || (), |_, _| {});
    }
}
