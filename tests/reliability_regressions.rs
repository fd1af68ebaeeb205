//! Every fuzzer crasher of the analysis targets (`fuzz/fuzz_targets/analyses.rs`,
//! `later_analyses.rs`, `replay.rs`), kept in `tests/data/analysis-regressions/`, run again
//! through the same pipeline as the target: whatever the input reads as, every analysis must
//! return (a result or an error), never panic. Reader crashers live in
//! `crates/formats/tests/data/regressions/` (see docs/reliability.md).

use std::path::Path;
use tracelogic_analysis::compress::compress;
use tracelogic_analysis::logical::{logicalize, verify, Placement};
use tracelogic_analysis::matrix::CommMatrix;
use tracelogic_analysis::patterns::{analyse_events, rank_events, PatternOptions};
use tracelogic_analysis::phases::{detect_phases, Outside};
use tracelogic_analysis::similarity::{compare, CompareOptions};
use tracelogic_analysis::summary::summarize;
use tracelogic_analysis::topology::{identify_matrix, TopologyOptions};
use tracelogic_formats::pack::unpack;
use tracelogic_model::{match_messages, Selection};

/// The union of the analysis fuzz targets' pipelines.
fn analyse_everything(data: &[u8]) {
    let Ok(trace) = tracelogic_formats::read_trace(unpack(data)) else {
        return;
    };
    let matching = match_messages(&trace);
    let _ = summarize(&trace, &matching);
    let events = rank_events(&trace, false);
    let patterns = analyse_events(&trace, &matching, &events, &PatternOptions::default());
    let _ = detect_phases(&trace, &events, &patterns.communication, 0.0, Outside::Own);
    let _ = compare(&trace, &trace, &CompareOptions::default());
    let Ok(matrix) = CommMatrix::try_from_trace(&trace, &Selection::all()) else {
        return;
    };
    let report = identify_matrix(&matrix, &TopologyOptions::default());
    if let Ok(placement) = Placement::from_report(&report) {
        if let Ok(logical) = logicalize(&trace, &placement) {
            let _ = verify(&trace, &logical);
            let _ = compress(&logical.records);
        }
    }
}

#[test]
fn every_analysis_crasher_now_runs_to_the_end() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/analysis-regressions");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        let outcome = std::panic::catch_unwind(|| analyse_everything(&data));
        assert!(outcome.is_ok(), "{} panicked", path.display());
        seen += 1;
    }
    assert!(seen > 0, "no regression inputs in {}", dir.display());
}
