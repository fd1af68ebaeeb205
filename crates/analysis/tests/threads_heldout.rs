//! Held-out PT-Scotch (docs/corpus.md, "PT-Scotch, LIGGGHTS"), recorded outside the repository
//! by `tools/record/scotch.sh`: `dgord` calls MPI from 2 threads per rank at once unless
//! `SCOTCH_PTHREAD_NUMBER=1`; DUMPI records each call's thread. `APPS_HELDOUT=DIR` names the
//! folder holding `scotch-8` (one thread, the script's default) and `scotch-8-threads`
//! (`--threads 2`).

#![cfg(not(target_arch = "wasm32"))]

use std::path::Path;
use tracelogic_analysis::critical_path::critical_path;
use tracelogic_analysis::summary::summarize;
use tracelogic_formats::{fs::load_paths, read_trace};
use tracelogic_model::{match_messages, Selection, Trace};

fn run(name: &str) -> Trace {
    let root = std::env::var("APPS_HELDOUT").expect("APPS_HELDOUT=DIR");
    let packed = Path::new(&root).join(name).join("dumpi.tar.zst");
    read_trace(load_paths(&[packed]).unwrap()).unwrap()
}

/// The threaded run: the summary warns and the critical path names the threads (it was a false
/// cycle); the one-thread run of the same program is neither warned of nor refused.
#[test]
#[ignore = "needs APPS_HELDOUT (held-out runs, recorded outside the repository)"]
fn pt_scotch_threads_are_named() {
    let t = run("scotch-8-threads");
    let s = summarize(&t, &match_messages(&t));
    assert!(
        s.threads.as_ref().is_some_and(|w| w.contains("2 threads at once")),
        "{:?}",
        s.threads
    );
    let err = critical_path(&t, &Selection::all()).unwrap_err();
    assert!(err.contains("2 threads at once"), "{err}");
    let t = run("scotch-8");
    assert!(summarize(&t, &match_messages(&t)).threads.is_none());
    assert!(critical_path(&t, &Selection::all()).is_ok());
}
