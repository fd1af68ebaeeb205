//! Logical traces of the real NAS Parallel Benchmark runs in shared/data/samples (seed 000 §4.3,
//! §5.2, Table 1): BT on 9 ranks (3x3 6-point stencil), LU on 8 (4x2 grid, no maximal rank), MG
//! on 8 (3-cube). Figures are printed for the report (`--nocapture`).

use std::path::PathBuf;
use tracelogic_analysis::compress::compress;
use tracelogic_analysis::logical::{logicalize, rank_records, verify, LogicalTrace, Placement, Verification};
use tracelogic_analysis::matrix::CommMatrix;
use tracelogic_analysis::topology::{identify_matrix, TopologyOptions};
use tracelogic_model::{Selection, Trace};

fn sample(name: &str) -> Trace {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/samples")
        .join(name);
    let files = tracelogic_formats::fs::load_paths(&[dir]).expect("sample files");
    tracelogic_formats::read_trace(files).expect("sample trace")
}

fn logical(trace: &Trace) -> (LogicalTrace, Verification) {
    let m = CommMatrix::from_trace(trace, &Selection::all());
    let report = identify_matrix(&m, &TopologyOptions::default());
    let placement = Placement::from_report(&report).unwrap();
    let l = logicalize(trace, &placement).unwrap();
    let v = verify(trace, &l).unwrap();
    let program = compress(&l.records);
    assert_eq!(
        program.expand(10_000_000).unwrap(),
        l.records.iter().map(|r| r.call.clone()).collect::<Vec<_>>()
    );
    let single = compress(&rank_records(trace, l.ranks_used[0]).unwrap());
    eprintln!(
        "{}: {} ({}), ranks used {:?}, maximal {}, dropped {:.2}% of calls / {:.2}% of bytes, logical raw {} -> compressed {} (ratio {:.1}, depth {}), rank {} alone {} -> {}, reproduced overall {:.1}%, per rank {:?}",
        trace.source,
        l.topology.label,
        l.topology.family,
        l.ranks_used,
        l.maximal,
        100.0 * l.accuracy.dropped_calls_fraction,
        100.0 * l.accuracy.dropped_bytes_fraction,
        program.raw_length,
        program.compressed_length,
        program.ratio,
        program.depth,
        l.ranks_used[0],
        single.raw_length,
        single.compressed_length,
        100.0 * v.overall_share,
        v.per_rank.iter().map(|p| format!("{}:{:.1}%", p.rank, 100.0 * p.share)).collect::<Vec<_>>()
    );
    (l, v)
}

#[test]
fn bt_9_is_a_stencil_with_a_maximal_rank() {
    let (l, v) = logical(&sample("npb-bt.S.9"));
    assert_eq!(l.topology.family, "stencil6");
    assert!(l.maximal);
    assert_eq!(l.ranks_used.len(), 1);
    assert_eq!(l.accuracy.dropped_calls, 0);
    assert_eq!(v.overall_share, 1.0);
    // BT tags its messages by cell, so tags differ from rank to rank.
    assert!(!l.tags_consistent);
}

#[test]
fn lu_8_merges_ranks() {
    let (l, v) = logical(&sample("npb-lu.S.8"));
    assert_eq!(l.topology.family, "grid");
    assert!(!l.maximal);
    assert!(l.ranks_used.len() >= 2);
    let dirs: std::collections::BTreeSet<String> = l
        .records
        .iter()
        .flat_map(|r| &r.call.ops)
        .map(|o| o.partner.label())
        .collect();
    assert!(
        ["east", "west", "north", "south"].iter().all(|d| dirs.contains(*d)),
        "{dirs:?}"
    );
    assert!(v.overall_share > 0.0);
}

#[test]
fn mg_8_is_a_cube() {
    let (l, v) = logical(&sample("npb-mg.S.8"));
    assert_eq!(l.topology.family, "hypercube");
    assert!(l.maximal);
    assert!(v.overall_share > 0.0);
}
