//! Where a long analysis is, for a person waiting on it: a stage and, where the work can be
//! counted, how much of it is done ("merging the classes' sequences, 41 %").
//!
//! Analyses call [`step`] at coarse points (a class rewritten, a thousand merge steps, a rank
//! verified, a network replayed). Nothing is recorded unless a shell [`watch`]es, so an
//! unwatched step costs one atomic load. Two ways out, one per shell:
//! - the CLI's stage line reads [`latest`] from its ticker thread (steps may come from any
//!   thread an analysis spreads its work over);
//! - the page's worker, a single thread busy with the analysis, passes a sink to [`watch`]
//!   that posts each step worth showing to the page.
//!
//! Steps are observations only: an analysis is cancelled by ending its process or worker.
//!
//! ```
//! use tracelogic_analysis::progress::{self, Step};
//! use std::{cell::RefCell, rc::Rc};
//! let seen = Rc::new(RefCell::new(Vec::new()));
//! let sink = seen.clone();
//! let sum = progress::watch(move |s: &Step| sink.borrow_mut().push(s.text()), || {
//!     (0..4u64).map(|k| { progress::step("adding", k + 1, 4); k }).sum::<u64>()
//! });
//! assert_eq!(sum, 6);
//! assert_eq!(seen.borrow().last().map(String::as_str), Some("adding, 100 %"));
//! assert!(progress::latest().is_none(), "nothing is left once the watch ends");
//! ```

use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// One report: what the analysis is doing and how far it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// What is being done, in a user's words ("verifying by expansion").
    pub stage: &'static str,
    /// Units done (ranks, records, networks); 0 with `total` 0 when the stage is not counted.
    pub done: u64,
    /// Units in all; 0 when not counted.
    pub total: u64,
}

impl Step {
    /// Whole percent done, when the stage is counted.
    pub fn percent(&self) -> Option<u64> {
        percent_of(self.done, self.total)
    }

    /// "verifying by expansion, 41 %", or the stage alone when it is not counted.
    pub fn text(&self) -> String {
        describe(self.stage, self.done, self.total)
    }
}

/// A step's words ([`Step::text`]) from its parts, for a shell that received them apart (the
/// page, from its worker).
pub fn describe(stage: &str, done: u64, total: u64) -> String {
    match percent_of(done, total) {
        Some(p) => format!("{stage}, {p} %"),
        None => stage.to_owned(),
    }
}

/// Whole percent of `done` in `total` (capped at 100), when `total` counts something.
fn percent_of(done: u64, total: u64) -> Option<u64> {
    (total > 0).then(|| (done.min(total) * 100) / total)
}

/// How many [`watch`]es are running (any thread).
static WATCHERS: AtomicUsize = AtomicUsize::new(0);
/// The latest step of any thread, while watched.
static LATEST: Mutex<Option<Step>> = Mutex::new(None);

type Sink = Box<dyn FnMut(&Step)>;

thread_local! {
    /// The sink of the [`watch`] running on this thread, if any.
    static SINK: RefCell<Option<Sink>> = const { RefCell::new(None) };
}

/// Report that the running analysis is at `stage`, `done` of `total` units (both 0 when the
/// stage is not counted). Cheap when nobody watches.
pub fn step(stage: &'static str, done: u64, total: u64) {
    if !watched() {
        return;
    }
    let s = Step { stage, done, total };
    *LATEST.lock().unwrap_or_else(|e| e.into_inner()) = Some(s);
    // A step from inside the sink itself (it never should) is dropped, not a double borrow.
    SINK.with(|sink| {
        if let Ok(mut sink) = sink.try_borrow_mut() {
            if let Some(f) = sink.as_mut() {
                f(&s);
            }
        }
    });
}

/// Whether some [`watch`] runs (an analysis may skip the bookkeeping of its steps otherwise).
pub fn watched() -> bool {
    WATCHERS.load(Ordering::Relaxed) > 0
}

/// The latest step reported while some [`watch`] runs, from any thread.
pub fn latest() -> Option<Step> {
    *LATEST.lock().unwrap_or_else(|e| e.into_inner())
}

/// Run `work` with its steps recorded for [`latest`] and given to `sink` (steps of this
/// thread only; steps of other threads reach [`latest`] alone). The previous sink of this
/// thread is restored afterwards, also when `work` panics.
pub fn watch<T>(sink: impl FnMut(&Step) + 'static, work: impl FnOnce() -> T) -> T {
    struct Restore(Option<Sink>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            SINK.with(|s| *s.borrow_mut() = previous);
            if WATCHERS.fetch_sub(1, Ordering::Relaxed) == 1 {
                *LATEST.lock().unwrap_or_else(|e| e.into_inner()) = None;
            }
        }
    }
    WATCHERS.fetch_add(1, Ordering::Relaxed);
    let previous = SINK.with(|s| s.borrow_mut().replace(Box::new(sink)));
    let _restore = Restore(previous);
    work()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::rc::Rc;

    #[test]
    fn steps_reach_the_sink_only_while_watched_even_after_a_panic() {
        step("before", 1, 2);
        let seen = Rc::new(RefCell::new(Vec::new()));
        let s2 = seen.clone();
        watch(
            move |s: &Step| s2.borrow_mut().push(*s),
            || {
                step("counting", 1, 3);
                assert_eq!(latest().map(|s| s.text()), Some("counting, 33 %".into()));
                step("naming", 0, 0);
            },
        );
        step("after", 1, 2);
        let stages: Vec<&str> = seen.borrow().iter().map(|s| s.stage).collect();
        assert_eq!(stages, ["counting", "naming"]);
        assert_eq!(latest(), None);

        // A panicking analysis leaves no sink behind. (One test: the watch count is global.)
        let hits = Rc::new(RefCell::new(0));
        let h2 = hits.clone();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            watch(move |_: &Step| *h2.borrow_mut() += 1, || panic!("boom"))
        }));
        assert!(r.is_err());
        step("after the panic", 1, 1);
        assert_eq!(*hits.borrow(), 0);
        assert_eq!(latest(), None);
    }

    #[test]
    fn percent_is_whole_and_capped() {
        let s = |done, total| Step {
            stage: "x",
            done,
            total,
        };
        assert_eq!(s(0, 0).percent(), None);
        assert_eq!(s(1, 3).percent(), Some(33));
        assert_eq!(s(5, 4).percent(), Some(100));
        assert_eq!(s(2, 3).text(), "x, 66 %");
    }
}
