//! What the parts-versus-serial tests share: every bundled trace, and a trace as one process
//! of the MPI mode holds it, and a JSON report without its timings. Each test file uses part of
//! it.
#![allow(dead_code)]

use std::ops::Range;
use std::path::{Path, PathBuf};
use tracelogic_formats::distributed::take_columns;
use tracelogic_model::{Rank, Trace};

/// The folders of `tests/data/<group>` (`samples`, `apps`), in name order.
pub fn folders(group: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data")
        .join(group);
    let mut found: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    found.sort();
    found
}

/// Every folder of tests/data/samples and tests/data/apps, in name order.
pub fn traces() -> Vec<PathBuf> {
    let mut v = folders("samples");
    v.extend(folders("apps"));
    v
}

/// `trace` as the process of `block` holds it: the other ranks without columns.
pub fn partial(trace: &Trace, block: &Range<Rank>) -> Trace {
    let mut t = trace.clone();
    for rt in &mut t.ranks {
        if !block.contains(&rt.rank) {
            take_columns(rt);
        }
    }
    t
}

/// `v` without the timing fields of a topology report (its `timings` and the `milliseconds` of
/// its stages): they differ between two runs of the same analysis.
pub fn strip_timings(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(m) => {
            m.remove("milliseconds");
            m.remove("timings");
            m.values_mut().for_each(strip_timings);
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(strip_timings),
        _ => {}
    }
}
