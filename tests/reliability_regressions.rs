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
use tracelogic_formats::InputFile;
use tracelogic_model::{match_messages, Selection};

/// The file set encoded in a fuzz input (a *pack*: per file its name, NUL, little-endian `u32`
/// length, bytes), as `fuzz/src/lib.rs` unpacks it.
fn unpack(data: &[u8]) -> Vec<InputFile> {
    let mut files = Vec::new();
    let mut rest = data;
    while !rest.is_empty() && files.len() < 64 {
        let Some(nul) = rest.iter().position(|&b| b == 0) else {
            files.push(InputFile::new("input", rest.to_vec()));
            break;
        };
        let name = String::from_utf8_lossy(&rest[..nul]).into_owned();
        rest = &rest[nul + 1..];
        let mut len_bytes = [0u8; 4];
        let take = rest.len().min(4);
        len_bytes[..take].copy_from_slice(&rest[..take]);
        rest = &rest[take..];
        let len = (u32::from_le_bytes(len_bytes) as usize).min(rest.len());
        files.push(InputFile::new(name, rest[..len].to_vec()));
        rest = &rest[len..];
    }
    files
}

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
