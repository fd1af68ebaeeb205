//! Analysis entry points on whatever trace the input reads as: message matching, summary,
//! communication matrix and topology identification (with its default search budgets).
#![no_main]
use libfuzzer_sys::fuzz_target;
use tracelogic_analysis::matrix::CommMatrix;
use tracelogic_analysis::summary::summarize;
use tracelogic_analysis::topology::{identify_matrix, TopologyOptions};
use tracelogic_model::{match_messages, Selection};

/// The matrix is dense (`ranks²` entries of 16 bytes), so a tiny file declaring tens of
/// thousands of ranks asks for gigabytes; see "Resource limits" in docs/reliability.md.
const MAX_MATRIX_RANKS: u32 = 2048;

fuzz_target!(|data: &[u8]| {
    let files = tracelogic_fuzz::unpack(data);
    let Ok(trace) = tracelogic_formats::read_trace(files) else {
        return;
    };
    let matching = match_messages(&trace);
    let _ = summarize(&trace, &matching);
    if trace.num_ranks() <= MAX_MATRIX_RANKS {
        let matrix = CommMatrix::from_trace(&trace, &Selection::all());
        let _ = identify_matrix(&matrix, &TopologyOptions::default());
    }
});
