//! NAS Parallel Benchmark skeletons (`tracelogic_synth::generate_nas`, what `tracelogic generate
//! --nas` writes) against the recorded class-S samples and against the papers' tables at the
//! sizes the samples do not cover: Logicalization Table 7 (the topology identified per benchmark and
//! size), §5.2 (the logical trace maps every call except some of MG's) and PACPM Table 4 (BT
//! and SP similar, the other pairs not), each under the recorded numbering and a random one.
//! The analyses are called as the CLI calls them (`identify_matrix` on the matrix of the whole
//! run, `logicalize_identified`, `similarity::compare`).

mod common;

use std::collections::{BTreeMap, BTreeSet};
use tracelogic_analysis::logical::{logicalize_identified, LogicalTrace};
use tracelogic_analysis::matrix::CommMatrix;
use tracelogic_analysis::similarity::{compare, CompareOptions};
use tracelogic_analysis::topology::{identify_matrix, TopologyOptions, TopologyReport};
use tracelogic_model::{match_messages, Selection, Trace};
use tracelogic_synth::{generate_nas, NasBenchmark, NasClass, NasSpec, NasTruth, Numbering, TopologySpec};

use NasBenchmark::{Bt, Cg, Ep, Ft, Is, Lu, Mg, Sp};
use NasClass::{A, B, S};

fn skeleton(
    b: NasBenchmark,
    class: NasClass,
    ranks: u32,
    iterations: Option<u32>,
    numbering: Numbering,
) -> (Trace, NasTruth) {
    let spec = NasSpec {
        iterations,
        numbering,
        seed: 11,
        ..NasSpec::new(b, class, ranks)
    };
    generate_nas(&spec).unwrap_or_else(|e| panic!("{b} {class} {ranks}: {e}"))
}

fn read(name: &str) -> Trace {
    let files = tracelogic_formats::fs::load_paths(&[common::sample(name)]).expect("sample files");
    tracelogic_formats::read_trace(files).expect("sample trace")
}

/// (sender, receiver, bytes) → number of such messages in the run.
fn messages_by_pair_and_size(t: &Trace) -> BTreeMap<(u32, u32, u64), u64> {
    let m = match_messages(t);
    assert_eq!((m.unmatched_sends, m.unmatched_recvs), (0, 0), "{}", t.source);
    let mut out = BTreeMap::new();
    for msg in &m.messages {
        let bytes = t.ranks[msg.sender as usize].p2p.bytes.at(msg.send_op as usize);
        *out.entry((msg.sender, msg.receiver, bytes)).or_insert(0) += 1;
    }
    out
}

fn calls_per_rank(t: &Trace) -> Vec<usize> {
    t.ranks.iter().map(|r| r.calls.len()).collect()
}

fn identify(t: &Trace) -> TopologyReport {
    identify_matrix(
        &CommMatrix::from_trace(t, &Selection::default()),
        &TopologyOptions::default(),
    )
}

fn logical(t: &Trace, report: &TopologyReport) -> LogicalTrace {
    logicalize_identified(t, report, None).unwrap_or_else(|e| panic!("{}: {e}", t.source))
}

const NUMBERINGS: [Numbering; 2] = [Numbering::RowMajor, Numbering::Random];

#[test]
fn class_s_skeletons_reproduce_the_recorded_runs() {
    // MG and BT: every rank makes as many calls as in the recorded run, and the same number of
    // messages of the same size goes between the same two ranks.
    for (name, b, ranks) in [("npb-mg.S.8", Mg, 8), ("npb-bt.S.9", Bt, 9)] {
        let real = read(name);
        let (gen, _) = skeleton(b, S, ranks, None, Numbering::RowMajor);
        assert_eq!(calls_per_rank(&gen), calls_per_rank(&real), "{name}");
        assert_eq!(
            messages_by_pair_and_size(&gen),
            messages_by_pair_and_size(&real),
            "{name}"
        );
    }
    // LU: the same, except the few small messages of pintgr's exchange_4/5/6 (left out): every
    // (sender, receiver, size) of the skeleton occurs as often in the recording, what the
    // recording has beyond is at most 128 bytes, and each rank makes at most 9 calls more.
    let real = read("npb-lu.S.8");
    let (gen, _) = skeleton(Lu, S, 8, None, Numbering::RowMajor);
    let (r, g) = (messages_by_pair_and_size(&real), messages_by_pair_and_size(&gen));
    for (k, n) in &g {
        assert_eq!(r.get(k), Some(n), "LU {k:?}");
    }
    let extra: Vec<_> = r.iter().filter(|(k, _)| !g.contains_key(k)).collect();
    assert!(!extra.is_empty() && extra.len() <= 20, "{extra:?}");
    assert!(
        extra.iter().all(|((_, _, bytes), &n)| *bytes <= 128 && n == 1),
        "{extra:?}"
    );
    for (rc, gc) in calls_per_rank(&real).into_iter().zip(calls_per_rank(&gen)) {
        assert!(
            (0..=9).contains(&(rc as i64 - gc as i64)),
            "LU calls {rc} recorded, {gc} generated"
        );
    }
}

/// One row of Logicalization's Table 7: the skeleton, and the labels identification must report (the
/// match or one of its isomorphic equivalents; the first is the one the paper names).
struct Table7 {
    b: NasBenchmark,
    class: NasClass,
    ranks: u32,
    labels: &'static [&'static str],
}

const TABLE7: &[Table7] = &[
    // 4 ranks: Table 6's smallest size, not in Table 7; the process grids are 2x2.
    Table7 {
        b: Bt,
        class: S,
        ranks: 4,
        labels: &["2x2 6-point stencil", "4-node all-to-all"],
    },
    Table7 {
        b: Sp,
        class: S,
        ranks: 4,
        labels: &["2x2 6-point stencil", "4-node all-to-all"],
    },
    Table7 {
        b: Lu,
        class: S,
        ranks: 4,
        labels: &["2x2 grid", "4-node ring"],
    },
    Table7 {
        b: Cg,
        class: S,
        ranks: 4,
        labels: &["NAS CG 2x2", "4-node line"],
    },
    Table7 {
        b: Mg,
        class: S,
        ranks: 4,
        labels: &["2x2 torus", "4-node ring"],
    },
    Table7 {
        b: Bt,
        class: S,
        ranks: 9,
        labels: &["3x3 6-point stencil"],
    },
    Table7 {
        b: Bt,
        class: S,
        ranks: 16,
        labels: &["4x4 6-point stencil"],
    },
    Table7 {
        b: Bt,
        class: A,
        ranks: 36,
        labels: &["6x6 6-point stencil"],
    },
    Table7 {
        b: Bt,
        class: A,
        ranks: 64,
        labels: &["8x8 6-point stencil"],
    },
    Table7 {
        b: Bt,
        class: A,
        ranks: 121,
        labels: &["11x11 6-point stencil"],
    },
    Table7 {
        b: Sp,
        class: S,
        ranks: 9,
        labels: &["3x3 6-point stencil"],
    },
    Table7 {
        b: Sp,
        class: S,
        ranks: 16,
        labels: &["4x4 6-point stencil"],
    },
    Table7 {
        b: Sp,
        class: A,
        ranks: 36,
        labels: &["6x6 6-point stencil"],
    },
    Table7 {
        b: Sp,
        class: A,
        ranks: 64,
        labels: &["8x8 6-point stencil"],
    },
    Table7 {
        b: Sp,
        class: A,
        ranks: 121,
        labels: &["11x11 6-point stencil"],
    },
    Table7 {
        b: Lu,
        class: S,
        ranks: 8,
        labels: &["4x2 grid"],
    },
    Table7 {
        b: Lu,
        class: S,
        ranks: 16,
        labels: &["4x4 grid"],
    },
    Table7 {
        b: Lu,
        class: A,
        ranks: 32,
        labels: &["8x4 grid"],
    },
    Table7 {
        b: Lu,
        class: A,
        ranks: 64,
        labels: &["8x8 grid"],
    },
    Table7 {
        b: Lu,
        class: A,
        ranks: 128,
        labels: &["16x8 grid"],
    },
    Table7 {
        b: Cg,
        class: S,
        ranks: 8,
        labels: &["4x2 grid", "NAS CG 2x4"],
    },
    Table7 {
        b: Cg,
        class: S,
        ranks: 16,
        labels: &["NAS CG 4x4"],
    },
    Table7 {
        b: Cg,
        class: S,
        ranks: 32,
        labels: &["NAS CG 4x8"],
    },
    Table7 {
        b: Cg,
        class: S,
        ranks: 64,
        labels: &["NAS CG 8x8"],
    },
    Table7 {
        b: Cg,
        class: S,
        ranks: 128,
        labels: &["NAS CG 8x16"],
    },
    Table7 {
        b: Mg,
        class: S,
        ranks: 8,
        labels: &["2x2x2 grid", "4x2 torus"],
    },
    Table7 {
        b: Mg,
        class: S,
        ranks: 16,
        labels: &["2x2x2x2 grid", "4x2x2 torus", "4x4 torus"],
    },
    Table7 {
        b: Mg,
        class: S,
        ranks: 32,
        labels: &["2x2x2x2x2 grid", "4x2x2x2 torus", "4x4x2 torus"],
    },
    Table7 {
        b: Mg,
        class: S,
        ranks: 64,
        labels: &["2x2x2x2x2x2 grid", "4x2x2x2x2 torus", "4x4x2x2 torus", "4x4x4 torus"],
    },
    Table7 {
        b: Mg,
        class: A,
        ranks: 128,
        labels: &["8x2x2x2x2 torus", "8x4x2x2 torus", "8x4x4 torus"],
    },
];

/// The identification names every label of the row, and the filtered graph is the process grid
/// of the source under the numbering (so the mapping it proves is the program's, up to the
/// grid's symmetries).
fn check_table7(row: &Table7, numbering: Numbering) {
    let (trace, truth) = skeleton(row.b, row.class, row.ranks, Some(1), numbering);
    let what = format!("{} class {} on {} ranks, {numbering}", row.b, row.class, row.ranks);
    let report = identify(&trace);
    let id = &report.identification;
    let found: Vec<&str> = id.equivalents.iter().map(|e| e.label.as_str()).collect();
    assert!(id.matched.is_some(), "{what}: nothing identified");
    for label in row.labels {
        assert!(found.contains(label), "{what}: {label} not among {found:?}");
    }
    let grid = TopologySpec::parse(&truth.topology).unwrap();
    let rank_of_node: BTreeMap<u32, u32> = truth
        .node_of_rank
        .iter()
        .enumerate()
        .map(|(r, &u)| (u, r as u32))
        .collect();
    let expected: BTreeSet<(u32, u32)> = grid
        .graph()
        .edges()
        .map(|(u, v)| (rank_of_node[&u], rank_of_node[&v]))
        .map(|(a, b)| (a.min(b), a.max(b)))
        .collect();
    let kept: BTreeSet<(u32, u32)> = report.edges.iter().map(|&[a, b]| (a, b)).collect();
    assert_eq!(kept, expected, "{what}: the filtered graph is not the process grid");
}

#[test]
fn table7_topologies_under_the_recorded_and_a_random_numbering() {
    for row in TABLE7 {
        for numbering in NUMBERINGS {
            check_table7(row, numbering);
        }
    }
}

#[test]
fn table7_mg_128_class_s() {
    for numbering in NUMBERINGS {
        check_table7(
            &Table7 {
                b: Mg,
                class: S,
                ranks: 128,
                labels: &["8x4x4 torus"],
            },
            numbering,
        );
    }
}

#[test]
fn logical_traces_of_bt_sp_lu_map_every_call() {
    for row in TABLE7.iter().filter(|r| matches!(r.b, Bt | Sp | Lu) && r.ranks <= 64) {
        for numbering in NUMBERINGS {
            let (trace, _) = skeleton(row.b, row.class, row.ranks, Some(1), numbering);
            let l = logical(&trace, &identify(&trace));
            let what = format!("{} {} {numbering}", row.b, row.ranks);
            assert!(l.accuracy.calls > 0, "{what}");
            assert_eq!(l.accuracy.dropped_calls, 0, "{what}: {:?}", l.accuracy);
            if row.ranks > 4 {
                assert_eq!(l.topology.label, row.labels[0], "{what}");
            }
        }
    }
}

/// NAS CG's processes on the diagonal of a square grid exchange with themselves (`exch_proc =
/// me`, cg.f), and so does MG along an axis of one process (4 ranks: a 1x2x2 grid); the
/// logical trace counts those operations as outside the topology.
fn self_operations(t: &Trace) -> u64 {
    t.ranks
        .iter()
        .map(|r| r.p2p.peer.iter().filter(|&&p| p == r.rank).count() as u64)
        .sum()
}

#[test]
fn cg_and_mg_4_exchanges_with_themselves_are_mapped_as_self() {
    // On a square grid the diagonal exchanges with itself; when npcols = 2·nprows, both ranks
    // of each diagonal pair do. Those messages are the logical direction `self`, inside the
    // topology (Logicalization §5.2 maps every CG call).
    for (ranks, selfish) in [(16u32, 4u64), (32, 8), (64, 8)] {
        for numbering in NUMBERINGS {
            let (trace, _) = skeleton(Cg, S, ranks, Some(1), numbering);
            let l = logical(&trace, &identify(&trace));
            let ranks_with_own: BTreeSet<u32> = trace
                .ranks
                .iter()
                .filter(|r| r.p2p.peer.contains(&r.rank))
                .map(|r| r.rank)
                .collect();
            assert_eq!(ranks_with_own.len() as u64, selfish, "CG {ranks}");
            assert!(self_operations(&trace) > 0);
            assert_eq!(l.accuracy.dropped_calls, 0, "CG {ranks} {numbering}");
        }
    }
    for numbering in NUMBERINGS {
        let (trace, _) = skeleton(Mg, S, 4, Some(1), numbering);
        let l = logical(&trace, &identify(&trace));
        assert!(self_operations(&trace) > 0);
        assert_eq!(l.accuracy.dropped_calls, 0, "MG 4 {numbering}");
    }
}

#[test]
fn cg_logical_trace_maps_every_call() {
    for ranks in [16u32, 64] {
        let (trace, _) = skeleton(Cg, S, ranks, Some(1), Numbering::RowMajor);
        let l = logical(&trace, &identify(&trace));
        assert_eq!(l.accuracy.dropped_calls, 0, "CG {ranks}: {:?}", l.accuracy);
    }
}

#[test]
fn mg_keeps_the_coarse_levels_farther_exchanges_as_offsets() {
    // Logicalization §5.2: on 32 ranks 5.6 % of MG's calls (2.7 % of its bytes) fall outside the
    // topology. In the skeleton they are the exchanges of the coarsest level, where half the
    // processes along each 4-process axis hold no point and the others talk 2 apart. The
    // paper drops them; the logical trace keeps them as offsets two steps along one axis.
    for class in [S, A] {
        for numbering in NUMBERINGS {
            let (trace, truth) = skeleton(Mg, class, 32, Some(4), numbering);
            let l = logical(&trace, &identify(&trace));
            let a = &l.accuracy;
            let (calls_share, bytes_share) = (
                a.offset_calls as f64 / a.calls as f64,
                a.offset_bytes as f64 / a.bytes as f64,
            );
            let what = format!(
                "MG {class} 32 {numbering}: {:.2} % of calls, {:.3} % of bytes outside the topology, offsets {:?}",
                100.0 * calls_share,
                100.0 * bytes_share,
                l.offset_directions()
            );
            eprintln!("{what}");
            assert_eq!((a.dropped_calls, a.dropped_bytes), (0, 0), "{what}: nothing dropped");
            assert!(a.offset_calls > 0 && calls_share < 0.056, "{what}");
            assert!(bytes_share < calls_share, "{what}");
            // Each offset is two steps along one axis (a 4-process axis wraps +2 and -2 alike).
            for o in l.offset_directions() {
                let steps: Vec<&str> = o.trim_matches(|c| c == '(' || c == ')').split(',').collect();
                let moved: Vec<&&str> = steps.iter().filter(|s| **s != "0").collect();
                assert_eq!(moved, vec![&"+2"], "{what}: {o}");
            }
            // Every operation kept as an offset goes 2 processes along an axis of the 2x4x4 grid
            // (the generator's own coordinates).
            let dims = [2u32, 4, 4];
            let coords = |rank: u32| {
                let u = truth.node_of_rank[rank as usize];
                [u % 2, (u / 2) % 4, u / 8]
            };
            let names = l.placement.direction_names();
            let neighbours =
                |rank: u32| -> BTreeSet<u32> { names.iter().filter_map(|d| l.placement.neighbour(rank, d)).collect() };
            let mut far = 0;
            for rt in &trace.ranks {
                let near = neighbours(rt.rank);
                for &peer in &rt.p2p.peer {
                    if near.contains(&peer) {
                        continue;
                    }
                    let (c, d) = (coords(rt.rank), coords(peer));
                    let differing: Vec<usize> = (0..3).filter(|&k| c[k] != d[k]).collect();
                    assert_eq!(differing.len(), 1, "{what}: {} -> {peer}", rt.rank);
                    let k = differing[0];
                    assert_eq!((c[k] + dims[k] - d[k]) % dims[k], 2, "{what}: {} -> {peer}", rt.rank);
                    far += 1;
                }
            }
            assert_eq!(far, a.offset_calls, "{what}");
        }
    }
}

#[test]
fn table4_only_bt_and_sp_are_similar() {
    // PACPM Table 4 (problem size B, 16 and 64 logical processes): BT-SP similar (θ 0.667,
    // ε 1), LU-MG, BT-LU, LU-SP, SP-MG and BT-MG not.
    for ranks in [16u32, 64] {
        let run = |b: NasBenchmark, numbering: Numbering| skeleton(b, B, ranks, Some(1), numbering).0;
        let runs: BTreeMap<&str, Trace> = [("bt", Bt), ("sp", Sp), ("lu", Lu), ("mg", Mg)]
            .into_iter()
            .map(|(name, b)| (name, run(b, Numbering::RowMajor)))
            .collect();
        let opts = CompareOptions::default();
        let bt_sp = compare(&runs["bt"], &runs["sp"], &opts).unwrap();
        assert!(
            bt_sp.similar && bt_sp.classification_certain,
            "{ranks}: BT-SP {bt_sp:?}"
        );
        assert_eq!(bt_sp.epsilon, 1.0, "{ranks}");
        for (x, y) in [("lu", "mg"), ("bt", "lu"), ("lu", "sp"), ("sp", "mg"), ("bt", "mg")] {
            let c = compare(&runs[x], &runs[y], &opts).unwrap();
            assert!(
                !c.similar && c.classification_certain,
                "{ranks}: {x}-{y} θ {} ε {}",
                c.theta,
                c.epsilon
            );
        }
    }
}

#[test]
fn table4_bt_sp_similar_under_a_random_placement() {
    for ranks in [16u32, 64] {
        let bt = skeleton(Bt, B, ranks, Some(1), Numbering::Random).0;
        let sp = skeleton(Sp, B, ranks, Some(1), Numbering::RowMajor).0;
        let c = compare(&bt, &sp, &CompareOptions::default()).unwrap();
        assert!(
            c.similar,
            "{ranks}: random BT-SP θ {} ε {} ({} alignment)",
            c.theta, c.epsilon, c.alignment
        );
    }
}

#[test]
fn ft_and_ep_have_no_topology_and_is_is_a_line() {
    // Logicalization §5.1: FT and EP show no point-to-point communication, an empty matrix. IS (not in
    // the paper's tables) passes one key along the ranks at the end: a line, fully mapped.
    for ranks in [4u32, 32, 128] {
        for b in [Ft, Ep] {
            let (trace, truth) = skeleton(b, S, ranks, Some(2), Numbering::Random);
            assert_eq!(truth.messages, 0, "{b} {ranks}");
            assert!(trace.ranks.iter().all(|r| !r.collectives.is_empty()), "{b} {ranks}");
            let report = identify(&trace);
            assert!(report.no_point_to_point, "{b} {ranks}");
        }
        for numbering in NUMBERINGS {
            let (trace, _) = skeleton(Is, S, ranks, Some(2), numbering);
            let report = identify(&trace);
            let label = format!("{ranks}-node line");
            assert_eq!(
                report.identification.matched.as_ref().map(|m| m.label.as_str()),
                Some(label.as_str())
            );
            assert_eq!(
                logical(&trace, &report).accuracy.dropped_calls,
                0,
                "IS {ranks} {numbering}"
            );
        }
    }
}

#[test]
fn collectives_only_benchmarks_have_a_logical_trace_of_their_collectives() {
    // FT (all-to-all transposes and a checksum reduction) and EP (three reductions) call no
    // point-to-point function: their logical trace is their collectives in order, expanding back
    // to every rank's calls, and the iteration loop folds, so its length does not grow with the
    // iterations (ScalaTrace compresses such programs the same way).
    use tracelogic_analysis::compress::compress;
    use tracelogic_analysis::logical::verify;
    for b in [Ft, Ep] {
        for ranks in [2u32, 4, 32] {
            let mut lengths = Vec::new();
            for iterations in [3u32, 9, 27] {
                let (trace, _) = skeleton(b, S, ranks, Some(iterations), Numbering::Random);
                let l = logical(&trace, &identify(&trace));
                let what = format!("{b} {ranks} ×{iterations}");
                // No direction is used, so any rank stands for all: one trace, no classes
                // (on 2 ranks the placement's line gave each end a class of its own).
                assert!(l.maximal && l.classes.is_empty(), "{what}: {} classes", l.classes.len());
                let collectives = trace.ranks[0].collectives.len();
                let logical_collectives = l.records.iter().filter(|r| r.call.collective.is_some()).count();
                assert_eq!(
                    logical_collectives, collectives,
                    "{what}: collectives in the logical trace"
                );
                let v = verify(&trace, &l).unwrap();
                assert!(
                    v.ranks_structure_differs.is_empty(),
                    "{what}: {:?}",
                    v.ranks_structure_differs
                );
                assert!(v.ranks_bytes_differ.is_empty(), "{what}: {:?}", v.ranks_bytes_differ);
                // Nothing point-to-point was checked: every rank's collectives are, against the
                // rank whose calls the program is.
                let c = v.collectives.as_ref().expect("collectives checked");
                assert_eq!(c.calls as usize, trace.ranks[c.origin as usize].collectives.len());
                assert!(v.exact(), "{what}: {c:?}");
                assert!(c.real_bytes > 0 && c.real_bytes == c.expanded_bytes, "{what}: {c:?}");
                // Its skeleton names no topology and creates no Cartesian communicator (it
                // said `4-node line` and created one).
                let program = compress(&l.records);
                let source = tracelogic_analysis::skeleton::skeleton_c(&l, &program).unwrap();
                assert!(!source.contains("MPI_Cart_create"), "{what}");
                assert!(source.contains("collectives only, no point-to-point call"), "{what}");
                lengths.push(program.compressed_length);
            }
            if b == Ft {
                assert!(
                    lengths[2] == lengths[1] && lengths[1] <= lengths[0],
                    "{b} {ranks}: compressed lengths {lengths:?} at 3, 9, 27 iterations"
                );
            }
        }
    }
}

/// A program of collectives only whose ranks contribute differently to one `MPI_Allgatherv`
/// (NEURON's spike exchange: the rank whose cell fired sends it, the others send nothing): the
/// logical trace is one rank's calls, so its structure (operations, roots, order) holds on every
/// rank but its sizes only on that rank — the verification says so instead of "exact" with
/// nothing checked (before: `Structure: exact`, `Volume: exact, 0 bytes`, every count 0).
#[test]
fn a_collectives_only_program_is_verified_on_its_collectives() {
    use tracelogic_analysis::logical::verify;
    use tracelogic_model::{CollectiveOp, NO_CALLPATH};
    let n = 4u32;
    let mut t = Trace::new("test", "spikes", n);
    for r in 0..n {
        let mut at = 0u64;
        for step in 0..8u32 {
            let c = t.push_call(r, "MPI_Allgather", at, at + 5, NO_CALLPATH, 0);
            t.push_collective(r, c, CollectiveOp::Allgather, 0, 0, 4, 4 * u64::from(n));
            // The cell of rank `step % n` fires: it sends 12 bytes, everyone receives 12.
            let sent = if step % n == r { 12 } else { 0 };
            let c = t.push_call(r, "MPI_Allgatherv", at + 10, at + 15, NO_CALLPATH, 0);
            t.push_collective(r, c, CollectiveOp::Allgatherv, 0, 0, sent, 12);
            at += 20;
        }
    }
    let l = logical(&t, &identify(&t));
    let v = verify(&t, &l).unwrap();
    let c = v.collectives.as_ref().expect("collectives checked");
    assert_eq!(c.calls, 16);
    assert!(c.ranks_structure_differs.is_empty(), "{c:?}");
    let others: Vec<u32> = (0..n).filter(|&r| r != c.origin).collect();
    assert_eq!(c.ranks_bytes_differ, others);
    assert!(!v.exact());
    // Every rank passes 8 × 4 bytes to MPI_Allgather and 2 × 12 to MPI_Allgatherv.
    assert_eq!(c.real_bytes, u64::from(n) * (8 * 4 + 2 * 12));
    assert!(
        v.structure_text().contains("collectives exact on every rank (4)"),
        "{}",
        v.structure_text()
    );
    assert!(
        v.volume_text().contains("sizes differ from rank"),
        "{}",
        v.volume_text()
    );

    // The same program with every rank sending alike: exact.
    let mut same = Trace::new("test", "alike", n);
    for r in 0..n {
        let c = same.push_call(r, "MPI_Allreduce", 0, 5, NO_CALLPATH, 0);
        same.push_collective(r, c, CollectiveOp::Allreduce, 0, 0, 8, 8);
    }
    let l = logical(&same, &identify(&same));
    let v = verify(&same, &l).unwrap();
    assert!(v.exact() && v.collectives.is_some(), "{}", v.volume_text());
}
