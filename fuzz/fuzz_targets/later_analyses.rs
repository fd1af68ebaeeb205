//! The analyses after topology on whatever trace the input reads as: patterns (per rank and
//! across ranks), phases, the logical trace with its verification and loop compression when a
//! topology is identified, and similarity of the run with itself.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tracelogic_analysis::compress::compress;
use tracelogic_analysis::logical::{logicalize, verify, Placement};
use tracelogic_analysis::matrix::CommMatrix;
use tracelogic_analysis::patterns::{analyse_events, rank_events, PatternOptions};
use tracelogic_analysis::phases::{detect_phases, Outside};
use tracelogic_analysis::similarity::{compare, CompareOptions};
use tracelogic_analysis::topology::{identify_matrix, TopologyOptions};
use tracelogic_model::{match_messages, Selection};

/// As in the `analyses` target: the trace stays far below libFuzzer's RSS limit.
const MAX_MATRIX_RANKS: u32 = 2048;

fuzz_target!(|data: &[u8]| {
    let files = tracelogic_fuzz::unpack(data);
    let Ok(trace) = tracelogic_formats::read_trace(files) else {
        return;
    };
    let matching = match_messages(&trace);
    let events = rank_events(&trace, false);
    let patterns = analyse_events(&trace, &matching, &events, &PatternOptions::default());
    let _ = detect_phases(&trace, &events, &patterns.communication, 0.0, Outside::Own);
    if trace.num_ranks() > MAX_MATRIX_RANKS {
        return;
    }
    let _ = compare(&trace, &trace, &CompareOptions::default());
    let matrix = CommMatrix::try_from_trace(&trace, &Selection::all()).expect("the sparse matrix is built for any trace");
    let report = identify_matrix(&matrix, &TopologyOptions::default());
    if let Ok(placement) = Placement::from_report(&report) {
        if let Ok(logical) = logicalize(&trace, &placement) {
            let _ = verify(&trace, &logical);
            let _ = compress(&logical.records);
        }
    }
});
