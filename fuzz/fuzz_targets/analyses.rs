//! Analysis entry points on whatever trace the input reads as: message matching, summary,
//! communication matrix and topology identification (with its default search budgets).
#![no_main]
use libfuzzer_sys::fuzz_target;
use tracelogic_analysis::matrix::CommMatrix;
use tracelogic_analysis::summary::summarize;
use tracelogic_analysis::topology::{identify_matrix, TopologyOptions};
use tracelogic_model::{match_messages, Selection};

/// The target stops at 2,048 ranks so that the per-rank analyses (topology candidates, replay
/// state) stay far below libFuzzer's 2 GB RSS limit; the matrix itself is sparse since the fifth
/// session (it used to be the `ranks²` dense form); see "Resource limits" in docs/reliability.md.
const MAX_MATRIX_RANKS: u32 = 2048;

fuzz_target!(|data: &[u8]| {
    let files = tracelogic_fuzz::unpack(data);
    let Ok(trace) = tracelogic_formats::read_trace(files) else {
        return;
    };
    let matching = match_messages(&trace);
    let _ = summarize(&trace, &matching);
    if trace.num_ranks() <= MAX_MATRIX_RANKS {
        let matrix = CommMatrix::try_from_trace(&trace, &Selection::all()).expect("the sparse matrix is built for any trace");
        let _ = identify_matrix(&matrix, &TopologyOptions::default());
    }
});
