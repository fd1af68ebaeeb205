//! Logical traces of the real NAS runs in tests/data/samples (Logicalization §4.3,
//! §5.2, Table 1): BT on 9 ranks (3×3 6-point stencil, a maximal rank), MG on 8 (3-cube, every
//! rank maximal) and LU on 8 (4×2 grid: no rank has both a north and a south neighbour, so six
//! classes of ranks are merged). Figures are printed for docs/logical.md (`--nocapture`).
//!
//! LU's exchange_1 sends the points `jst..jend` of a plane, and a rank on the global boundary
//! leaves its boundary point out (`jst = 2` without a north neighbour, `jend = ny - 1` without a
//! south one, in LU's naming). Class S puts 3 points on each of the 4 ranks along that axis: 3 × 5
//! doubles = 120 B from a rank with both neighbours, 2 × 5 × 8 = 80 B from the ranks at the
//! ends. The merge keeps those sizes per class, so every corner is reproduced exactly. What stays
//! rank-dependent is pintgr's surface integral: only the ranks holding a global face exchange its
//! boundary values, which the border ranks with both east and west neighbours see but skip.

use std::path::PathBuf;
use tracelogic_analysis::compress::compress;
use tracelogic_analysis::logical::{
    logicalize, logicalize_ranks, verify, LogicalTrace, Partner, Placement, Verification,
};
use tracelogic_analysis::matrix::CommMatrix;
use tracelogic_analysis::skeleton::skeleton_c;
use tracelogic_analysis::topology::{identify_matrix, TopologyOptions};
use tracelogic_model::{CollectiveOp, Selection, Trace};

mod common;

fn samples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/samples")
}

fn sample(name: &str) -> Trace {
    let files = tracelogic_formats::fs::load_paths(&[samples().join(name)]).expect("sample files");
    tracelogic_formats::read_trace(files).expect("sample trace")
}

fn logical(trace: &Trace) -> (LogicalTrace, Verification) {
    let m = CommMatrix::from_trace(trace, &Selection::all());
    let placement = Placement::from_report(&identify_matrix(&m, &TopologyOptions::default())).unwrap();
    let l = logicalize(trace, &placement).unwrap();
    let v = verify(trace, &l).unwrap();
    let program = compress(&l.records);
    assert_eq!(
        program.expand(10_000_000).unwrap(),
        l.records.iter().map(|r| r.call.clone()).collect::<Vec<_>>(),
        "loop compression must be lossless"
    );
    eprintln!(
        "{}: {}, ranks used {:?}, classes {:?}, maximal {}, dropped {} of {} calls / {} of {} bytes, raw {} -> compressed {} (ratio {:.1}), merge conflicts {}, reproduced overall {:.2}%, per rank {:?}",
        trace.source,
        l.topology.label,
        l.ranks_used,
        l.classes
            .iter()
            .map(|c| format!("{:?} {:?} records {} conflicts {}", c.ranks, c.directions, c.records, c.conflicts))
            .collect::<Vec<_>>(),
        l.maximal,
        l.accuracy.dropped_calls,
        l.accuracy.calls,
        l.accuracy.dropped_bytes,
        l.accuracy.bytes,
        program.raw_length,
        program.compressed_length,
        program.ratio,
        l.merge_conflicts,
        100.0 * v.overall_share,
        v.per_rank
            .iter()
            .map(|p| format!("{}: {}/{} ({:.2}%)", p.rank, p.reproduced, p.real_calls.max(p.expanded_calls), 100.0 * p.share))
            .collect::<Vec<_>>()
    );
    (l, v)
}

#[test]
fn bt_is_reproduced_on_every_rank() {
    let (l, v) = logical(&sample("npb-bt.S.9"));
    assert_eq!(l.topology.family, "stencil6");
    assert!(l.maximal && l.classes.is_empty());
    assert_eq!(l.accuracy.dropped_calls, 0);
    assert!(v.ranks_below_full.is_empty(), "{:?}", v.ranks_below_full);
    assert!(compress(&l.records).ratio > 10.0);
    // BT tags its messages by cell, so tags differ from rank to rank.
    assert!(!l.tags_consistent);
}

#[test]
fn mg_is_reproduced_on_every_rank() {
    let (l, v) = logical(&sample("npb-mg.S.8"));
    assert_eq!(l.topology.family, "hypercube");
    assert!(l.maximal);
    assert!(v.ranks_below_full.is_empty(), "{:?}", v.ranks_below_full);
}

/// The broadcasts of BT and MG show the root's message size whichever rank the logical trace is
/// built from, in records, in the compressed program's text and in both JSON forms (a rank that is
/// not the root sends 0 bytes and receives the message; showing its bytes sent printed
/// `MPI_Bcast(0 B, root 0)` and made the program depend on the placement).
#[test]
fn broadcast_sizes_are_the_roots_on_every_rank() {
    for name in ["npb-bt.S.9", "npb-mg.S.8"] {
        let trace = sample(name);
        // What the root sent, broadcast by broadcast, as the trace records it.
        let roots: Vec<(u32, u64)> = trace
            .ranks
            .iter()
            .flat_map(|rt| {
                let c = &rt.collectives;
                (0..c.len())
                    .filter(move |&k| c.op[k] == CollectiveOp::Bcast && c.root[k] == rt.rank)
                    .map(move |k| (rt.rank, c.bytes_sent[k]))
            })
            .collect();
        let expected: Vec<u64> = roots.iter().map(|&(_, b)| b).collect();
        assert!(
            !expected.is_empty() && expected.iter().all(|&b| b > 0),
            "{name}: {roots:?}"
        );
        let m = CommMatrix::from_trace(&trace, &Selection::all());
        let placement = Placement::from_report(&identify_matrix(&m, &TopologyOptions::default())).unwrap();
        let mut shown: Option<Vec<String>> = None;
        for r in 0..trace.num_ranks() {
            let l = logicalize_ranks(&trace, &placement, Some(&[r])).unwrap();
            let bcasts: Vec<_> = l
                .records
                .iter()
                .filter_map(|x| x.call.collective.as_ref())
                .filter(|c| c.op == CollectiveOp::Bcast)
                .collect();
            let sizes: Vec<u64> = bcasts.iter().map(|c| c.size()).collect();
            assert_eq!(sizes, expected, "{name} from rank {r}");
            for c in &bcasts {
                let json = serde_json::to_value(c).unwrap();
                assert_eq!(json["size"], c.size(), "{name} from rank {r}: {json}");
            }
            let texts: Vec<String> = l
                .records
                .iter()
                .map(|x| x.call.text())
                .filter(|t| t.starts_with("MPI_Bcast"))
                .collect();
            let wanted: Vec<String> = expected.iter().map(|b| format!("MPI_Bcast({b} B, root ")).collect();
            for (t, w) in texts.iter().zip(&wanted) {
                assert!(t.starts_with(w), "{name} from rank {r}: {t} (expected {w}…)");
            }
            // The compressed program: its broadcast lines are the same from every rank, and the
            // JSON's size sequences expand to the root's sizes.
            let program = compress(&l.records);
            let lines: Vec<String> = program
                .text()
                .lines()
                .filter(|x| x.contains("MPI_Bcast"))
                .map(|x| x.trim().to_owned())
                .collect();
            assert!(
                lines.iter().all(|x| !x.contains("(0 B")),
                "{name} from rank {r}: {lines:?}"
            );
            // The skeleton's comment on each broadcast is the same text (C comment characters
            // left out).
            let c_source = skeleton_c(&l, &program).unwrap();
            for line in &lines {
                let comment: String = line
                    .trim_start_matches(['[', ' '])
                    .chars()
                    .filter(|c| !matches!(c, '*' | '/'))
                    .collect();
                assert!(
                    c_source.contains(&format!("/* {comment} */")),
                    "{name} from rank {r}: skeleton comment {comment}"
                );
            }
            match &shown {
                None => shown = Some(lines),
                Some(first) => assert_eq!(&lines, first, "{name}: compressed broadcasts from rank {r}"),
            }
            let json = serde_json::to_value(&program).unwrap();
            let mut from_json = Vec::new();
            collect_bcast_sizes(&json["nodes"], &mut Default::default(), &mut from_json);
            assert_eq!(from_json, expected, "{name} from rank {r}: program JSON");
        }
    }
}

/// The broadcast sizes a program's JSON nodes give (`collective_size`), in execution order: each
/// node's `k`-th visit takes the `k`-th value of its sequences (as `Program::expand` does).
fn collect_bcast_sizes(
    nodes: &serde_json::Value,
    visits: &mut std::collections::HashMap<u64, u64>,
    out: &mut Vec<u64>,
) {
    for node in nodes.as_array().unwrap() {
        let visit = visits.entry(node["id"].as_u64().unwrap()).or_insert(0);
        let k = *visit;
        *visit += 1;
        if node["node"] == "loop" {
            for _ in 0..value_at(&node["count"], k) {
                collect_bcast_sizes(&node["body"], visits, out);
            }
        } else if node["shape"]["function"] == "MPI_Bcast" {
            out.push(value_at(&node["collective_size"], k));
        }
    }
}

/// The `i`-th value of a JSON `Values` sequence (constant, range, cycle, runs or list).
fn value_at(v: &serde_json::Value, i: u64) -> u64 {
    match v["form"].as_str().unwrap_or_else(|| panic!("no size sequence: {v}")) {
        "constant" => v["value"].as_u64().unwrap(),
        "range" => (v["first"].as_i64().unwrap() + v["step"].as_i64().unwrap() * i as i64) as u64,
        "cycle" => value_at(&v["unit"], i % v["period"].as_u64().unwrap()),
        "list" => v["values"][i as usize].as_u64().unwrap(),
        "runs" => {
            let ends = v["ends"].as_array().unwrap();
            let k = ends.iter().position(|e| e.as_u64().unwrap() > i).unwrap();
            v["values"][k].as_u64().unwrap()
        }
        other => panic!("unknown form {other}"),
    }
}

/// Ranks of LU's 4×2 grid with both an east and a west neighbour (the ends of the 4-rank axis
/// are the corners).
fn lu_inner(l: &LogicalTrace, rank: u32) -> bool {
    ["east", "west"]
        .iter()
        .all(|d| l.placement.neighbour(rank, d).is_some())
}

#[test]
fn lu_merges_six_classes_and_keeps_boundary_sizes() {
    let (l, v) = logical(&sample("npb-lu.S.8"));
    assert_eq!(
        (l.topology.family.as_str(), l.topology.dims.as_slice()),
        ("grid", &[4, 2][..])
    );
    assert!(!l.maximal);
    assert_eq!(l.classes.len(), 6, "four corners and two kinds of border ranks");
    assert!(
        l.classes.iter().all(|c| c.merged),
        "every class takes part: {:?}",
        l.classes
    );
    assert_eq!(l.accuracy.dropped_calls, 0);
    // Every direction appears in the one merged program.
    for d in ["east", "west", "north", "south"] {
        assert!(
            l.records
                .iter()
                .flat_map(|r| &r.call.ops)
                .any(|o| o.partner == Partner::Direction(d.into())),
            "{d} missing"
        );
    }
    // The boundary ranks' shorter exchange_1 messages (NPB's jst/jend: 2 points of 5 doubles
    // instead of 3 on a rank without an east or west neighbour) are kept as per-rank sizes.
    assert!(l.sizes_fitted);
    let by_rank: Vec<_> = l
        .records
        .iter()
        .flat_map(|r| &r.call.ops)
        .filter(|o| !o.bytes_by_rank.is_empty())
        .collect();
    assert!(!by_rank.is_empty());
    for o in &by_rank {
        assert_eq!(o.bytes, 3 * 5 * 8, "{o:?}");
        for e in &o.bytes_by_rank {
            assert_eq!(e.bytes, 2 * 5 * 8, "{o:?}");
            assert!(e.ranks.iter().all(|&r| !lu_inner(&l, r)), "{o:?}");
        }
    }
    // pintgr's surface exchange runs only on the ranks holding a global face (the corners of
    // the 4x2 grid): a branch of the program, which the border ranks skip.
    let branches: Vec<_> = l.records.iter().filter_map(|r| r.call.only_ranks.as_ref()).collect();
    assert!(!branches.is_empty());
    for only in &branches {
        assert!(only.iter().all(|&r| !lu_inner(&l, r)), "{only:?}");
    }
    // Every rank: structure and bytes exact.
    assert_eq!(v.ranks_structure_differs, Vec::<u32>::new());
    assert_eq!(v.ranks_bytes_differ, Vec::<u32>::new());
    assert_eq!(v.ranks_below_full, Vec::<u32>::new(), "{:?}", v.per_rank);
    assert_eq!(v.real_bytes, v.expanded_bytes);
    assert_eq!(l.merge_conflicts, 0);
}

#[test]
fn lu_skeleton_replays_branches_and_per_rank_sizes() {
    let (l, _) = logical(&sample("npb-lu.S.8"));
    let program = compress(&l.records);
    let Some(replayed) = common::replay_skeleton("lu", &skeleton_c(&l, &program).unwrap(), 8) else {
        return;
    };
    let (again, v) = logical(&replayed);
    assert!(v.ranks_below_full.is_empty(), "{:?}", v.per_rank);
    assert_eq!(again.merge_conflicts, 0);
    // The skeleton follows the program, branches and per-rank sizes included: every rank of
    // the replay (rank u plays node u) sends and receives what the recorded rank on node u did,
    // peer for peer (as nodes), size for size, in order. That is the recorded run's structure
    // and volume, independently of the logical trace.
    let recorded = sample("npb-lu.S.8");
    let node = |r: u32| l.placement.node_of_rank[r as usize];
    for w in 0..8u32 {
        let u = node(w);
        let ops = common::p2p_as_nodes;
        let original = ops(&recorded, w, &node);
        let replay = ops(&replayed, u, &|q| q);
        assert_eq!(original.len(), replay.len(), "rank {w} (node {u})");
        assert_eq!(original, replay, "rank {w} (node {u})");
    }
    for corner in (0..8).filter(|&r| !lu_inner(&l, r)) {
        assert!(
            sizes_of(&replayed, node(corner)).contains(&80),
            "corner {corner} sends its 80 B messages"
        );
    }
}

fn sizes_of(t: &Trace, rank: u32) -> Vec<u64> {
    t.ranks[rank as usize].p2p.bytes.to_vec()
}
