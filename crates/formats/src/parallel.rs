//! Reading the files of one trace on several threads.
//!
//! Formats that keep one file per rank or location (DUMPI, OTF2) decode each file on its own
//! and merge the parts in file order afterwards, so the trace is the same whatever the number of
//! threads. Natively the files are shared out over [`reader_threads`] threads while the calling
//! thread reports progress and relays cancellation; in WebAssembly (no threads in the worker)
//! and with one thread they are read in order on the calling thread, with progress inside each
//! file as before.

use crate::{FormatError, Progress, ProgressSink};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

/// Threads set by [`set_reader_threads`]; 0 when not set.
static CHOSEN_THREADS: AtomicUsize = AtomicUsize::new(0);

/// Set the threads the readers use in this process (the CLI's `--threads`); 0 goes back to the
/// default of [`reader_threads`].
pub fn set_reader_threads(threads: usize) {
    CHOSEN_THREADS.store(threads, Ordering::Relaxed);
}

/// Threads the readers use: the number given to [`set_reader_threads`], else
/// `TRACELOGIC_THREADS` when it is a positive number, else the machine's available parallelism;
/// always 1 in WebAssembly.
pub fn reader_threads() -> usize {
    if cfg!(target_arch = "wasm32") {
        return 1;
    }
    let chosen = CHOSEN_THREADS.load(Ordering::Relaxed);
    if chosen > 0 {
        return chosen;
    }
    if let Some(n) = std::env::var("TRACELOGIC_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
    {
        return n;
    }
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// How often the calling thread reports progress while the workers read.
const REPORT_EVERY: Duration = Duration::from_millis(50);

/// Apply `work` to every item and return the results in item order, or the error of the first
/// item (in item order) that failed.
///
/// `work(i, item, advance)` reads item `i`; it calls `advance(bytes)` now and then with the bytes
/// of the item consumed so far, and stops with its own "cancelled" error when that returns false.
/// `sizes[i]` is item `i`'s size in bytes and `stage(i)` the progress stage shown while it is
/// read; `name(i)` names the item in the error returned when the read is cancelled between items.
///
/// With `threads > 1` (never in WebAssembly) up to `threads` scoped threads take the items in
/// turn; items after one that failed are skipped. The result does not depend on `threads`.
pub(crate) fn map_files<I, R, W>(
    items: &[I],
    sizes: &[u64],
    threads: usize,
    stage: &dyn Fn(usize) -> String,
    name: &dyn Fn(usize) -> String,
    progress: &mut dyn ProgressSink,
    work: W,
) -> Result<Vec<R>, FormatError>
where
    I: Sync,
    R: Send,
    W: Fn(usize, &I, &mut dyn FnMut(u64) -> bool) -> Result<R, FormatError> + Sync,
{
    debug_assert_eq!(items.len(), sizes.len());
    let total: u64 = sizes.iter().sum();
    let threads = threads.min(items.len());
    if threads <= 1 || cfg!(target_arch = "wasm32") {
        return map_in_order(items, sizes, total, stage, name, progress, work);
    }
    let next = AtomicUsize::new(0);
    let failed_at = AtomicUsize::new(usize::MAX);
    let cancelled = AtomicBool::new(false);
    let done = AtomicU64::new(0);
    let (finished_tx, finished_rx) = mpsc::channel::<()>();
    let mut parts: Vec<(usize, Result<R, FormatError>)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let finished = finished_tx.clone();
                let (next, failed_at, cancelled, done, work) = (&next, &failed_at, &cancelled, &done, &work);
                scope.spawn(move || {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= items.len()
                            || i > failed_at.load(Ordering::Relaxed)
                            || cancelled.load(Ordering::Relaxed)
                        {
                            break;
                        }
                        let mut seen = 0u64;
                        let mut advance = |pos: u64| {
                            done.fetch_add(pos.saturating_sub(seen), Ordering::Relaxed);
                            seen = seen.max(pos);
                            !cancelled.load(Ordering::Relaxed)
                        };
                        let result = work(i, &items[i], &mut advance);
                        done.fetch_add(sizes[i].saturating_sub(seen), Ordering::Relaxed);
                        if result.is_err() {
                            failed_at.fetch_min(i, Ordering::Relaxed);
                        }
                        mine.push((i, result));
                    }
                    // The receiver outlives every worker; a send cannot fail while it waits.
                    let _ = finished.send(());
                    mine
                })
            })
            .collect();
        drop(finished_tx);
        let mut running = threads;
        while running > 0 {
            match finished_rx.recv_timeout(REPORT_EVERY) {
                Ok(()) => running -= 1,
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
            if !cancelled.load(Ordering::Relaxed) {
                let bytes_done = done.load(Ordering::Relaxed).min(total);
                let at = next.load(Ordering::Relaxed).min(items.len().saturating_sub(1));
                let p = Progress {
                    stage: stage(at),
                    bytes_done,
                    bytes_total: total,
                };
                if !progress.report(&p) {
                    cancelled.store(true, Ordering::Relaxed);
                }
            }
        }
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .collect()
    });
    parts.sort_unstable_by_key(|p| p.0);
    let mut out = Vec::with_capacity(items.len());
    for (i, (at, result)) in parts.into_iter().enumerate() {
        if at != i {
            break;
        }
        out.push(result?);
    }
    if out.len() < items.len() {
        // Only cancellation leaves items unread without an error before them.
        return Err(FormatError::cancelled(&name(out.len())));
    }
    Ok(out)
}

/// [`map_files`] on the calling thread, item after item, with progress inside each item.
fn map_in_order<I, R, W>(
    items: &[I],
    sizes: &[u64],
    total: u64,
    stage: &dyn Fn(usize) -> String,
    name: &dyn Fn(usize) -> String,
    progress: &mut dyn ProgressSink,
    work: W,
) -> Result<Vec<R>, FormatError>
where
    W: Fn(usize, &I, &mut dyn FnMut(u64) -> bool) -> Result<R, FormatError>,
{
    let mut out = Vec::with_capacity(items.len());
    let mut before = 0u64;
    for (i, item) in items.iter().enumerate() {
        let label = stage(i);
        let start = Progress {
            stage: label.clone(),
            bytes_done: before,
            bytes_total: total,
        };
        if !progress.report(&start) {
            return Err(FormatError::cancelled(&name(i)));
        }
        let mut advance = |pos: u64| {
            progress.report(&Progress {
                stage: label.clone(),
                bytes_done: before + pos.min(sizes[i]),
                bytes_total: total,
            })
        };
        out.push(work(i, item, &mut advance)?);
        before += sizes[i];
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(threads: usize, fail: &[usize], cancel_after: Option<usize>) -> Result<Vec<u64>, FormatError> {
        let items: Vec<u64> = (0..40).collect();
        let sizes: Vec<u64> = items.iter().map(|i| 1000 + i).collect();
        let reports = std::cell::Cell::new(0usize);
        let mut sink = |_: &Progress| {
            reports.set(reports.get() + 1);
            cancel_after.is_none_or(|n| reports.get() <= n)
        };
        map_files(
            &items,
            &sizes,
            threads,
            &|i| format!("reading file {i}"),
            &|i| format!("file{i}"),
            &mut sink,
            |i, &item, advance| {
                for pos in (0..sizes[i]).step_by(100) {
                    if !advance(pos) {
                        return Err(FormatError::cancelled(&format!("file{i}")));
                    }
                    if cancel_after.is_some() {
                        std::thread::sleep(Duration::from_millis(2));
                    }
                }
                if fail.contains(&i) {
                    return Err(FormatError::new(&format!("file{i}"), "bad record"));
                }
                Ok(item * item)
            },
        )
    }

    #[test]
    fn results_come_in_item_order_whatever_the_threads() {
        let one = run(1, &[], None).unwrap();
        assert_eq!(one, (0..40u64).map(|i| i * i).collect::<Vec<_>>());
        for threads in [2, 3, 8, 64] {
            assert_eq!(run(threads, &[], None).unwrap(), one, "{threads} threads");
        }
    }

    #[test]
    fn the_first_failing_item_in_order_is_the_error() {
        for threads in [1, 2, 4, 16] {
            let e = run(threads, &[31, 7, 12], None).unwrap_err();
            assert!(e.to_string().contains("file7"), "{threads} threads: {e}");
            assert!(e.to_string().contains("bad record"), "{threads} threads: {e}");
        }
    }

    #[test]
    fn a_cancelled_read_stops_with_a_cancelled_error() {
        for threads in [1, 2, 4] {
            let e = run(threads, &[], Some(1)).unwrap_err();
            assert!(e.to_string().contains("cancel"), "{threads} threads: {e}");
        }
    }

    #[test]
    fn progress_reaches_the_total_in_order() {
        let items: Vec<u32> = (0..5).collect();
        let sizes = vec![10u64; 5];
        let mut seen = Vec::new();
        let mut sink = |p: &Progress| {
            seen.push((p.bytes_done, p.bytes_total));
            true
        };
        let out = map_files(
            &items,
            &sizes,
            1,
            &|i| format!("reading file {i}"),
            &|i| format!("file{i}"),
            &mut sink,
            |_, &item, advance| Ok(item + u32::from(advance(5))),
        )
        .unwrap();
        assert_eq!(out, vec![1, 2, 3, 4, 5]);
        assert!(seen.windows(2).all(|w| w[0].0 <= w[1].0));
        assert!(seen.iter().all(|&(_, total)| total == 50));
        assert_eq!(seen.last().unwrap().0, 45);
    }
}
