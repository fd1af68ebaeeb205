//! Analysis entry points on whatever trace the input reads as: message matching, summary,
//! communication matrix and topology identification (with its default search budgets).
#![no_main]
use libfuzzer_sys::fuzz_target;
use tracelogic_analysis::matrix::CommMatrix;
use tracelogic_analysis::summary::summarize;
use tracelogic_analysis::topology::{identify_matrix, TopologyOptions};
use tracelogic_model::{match_messages, Selection};

/// The matrix is dense (`ranks²` entries of 16 bytes): `try_from_trace` refuses more than
/// `MAX_DENSE_RANKS` (16,384, 4 GiB), which is still above libFuzzer's 2 GB RSS limit, so the
/// target stops at 2,048 ranks (64 MiB); see "Resource limits" in docs/reliability.md.
const MAX_MATRIX_RANKS: u32 = 2048;

fuzz_target!(|data: &[u8]| {
    let files = tracelogic_fuzz::unpack(data);
    let Ok(trace) = tracelogic_formats::read_trace(files) else {
        return;
    };
    let matching = match_messages(&trace);
    let _ = summarize(&trace, &matching);
    if trace.num_ranks() <= MAX_MATRIX_RANKS {
        let matrix = CommMatrix::try_from_trace(&trace, &Selection::all()).expect("2,048 ranks fit a dense matrix");
        let _ = identify_matrix(&matrix, &TopologyOptions::default());
    }
});
