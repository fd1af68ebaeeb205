//! Messages of a rank to itself in the logical trace: the direction `self` (Logicalization §5.2 maps
//! every call of NAS CG, whose diagonal processes exchange the transposed vector segment with
//! themselves, `exch_proc = me` in cg.f). Checked on generated CG skeletons at 16 and 64 ranks
//! under the recorded and a random numbering: nothing is dropped, every rank's expansion is its
//! own trace record for record, the skeleton sends to the rank itself, and the self-pairs stay
//! out of the topology graph.
//!
//! The skeleton's MPI run needs Open MPI (`mpicc`, `mpirun`): with `TRACELOGIC_REQUIRE_MPI=1`
//! a missing MPI fails the test; otherwise it prints a note and checks the C text only.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;
use tracelogic_analysis::compress::compress;
use tracelogic_analysis::logical::{
    expand_records, logicalize, logicalize_identified, physical_records, verify, LogicalCall, LogicalTrace, Partner,
    Placement, SELF_DIRECTION,
};
use tracelogic_analysis::matrix::CommMatrix;
use tracelogic_analysis::skeleton::skeleton_c;
use tracelogic_analysis::topology::{identify_matrix, TopologyOptions, TopologyReport};
use tracelogic_formats::InputFile;
use tracelogic_model::{Selection, Trace};
use tracelogic_synth::{generate_nas, NasBenchmark, NasClass, NasSpec, NasTruth, Numbering};

fn cg(ranks: u32, iterations: u32, numbering: Numbering) -> (Trace, NasTruth) {
    let spec = NasSpec {
        iterations: Some(iterations),
        numbering,
        seed: 5,
        ..NasSpec::new(NasBenchmark::Cg, NasClass::S, ranks)
    };
    generate_nas(&spec).unwrap_or_else(|e| panic!("CG {ranks}: {e}"))
}

fn identify(trace: &Trace) -> TopologyReport {
    identify_matrix(
        &CommMatrix::from_trace(trace, &Selection::all()),
        &TopologyOptions::default(),
    )
}

/// The ranks with a point-to-point operation whose peer is themselves, read from the trace.
fn ranks_messaging_themselves(trace: &Trace) -> Vec<u32> {
    trace
        .ranks
        .iter()
        .filter(|r| r.p2p.peer.contains(&r.rank))
        .map(|r| r.rank)
        .collect()
}

/// The ranks running a process on the diagonal of CG's square `side`×`side` process grid
/// (`proc_row = me / npcols`, `proc_col = me % npcols` in cg.f).
fn diagonal_ranks(truth: &NasTruth, side: u32) -> Vec<u32> {
    (0..truth.node_of_rank.len() as u32)
        .filter(|&r| {
            let me = truth.node_of_rank[r as usize];
            me / side == me % side
        })
        .collect()
}

/// Calls with each collective reduced to its operation and communicator size: a root's
/// recorded sizes differ from the other ranks' and roots are world ranks, which the numbering
/// changes; point-to-point operations and completions are kept whole.
fn without_collective_detail(calls: Vec<LogicalCall>) -> Vec<LogicalCall> {
    calls
        .into_iter()
        .map(|mut c| {
            if let Some(col) = &mut c.collective {
                col.root = None;
                (col.bytes_sent, col.bytes_recv) = (0, 0);
            }
            c
        })
        .collect()
}

fn self_operations(l: &LogicalTrace) -> usize {
    l.records
        .iter()
        .flat_map(|r| &r.call.ops)
        .filter(|o| o.partner == Partner::Direction(SELF_DIRECTION.into()))
        .count()
}

#[test]
fn cg_self_exchanges_are_mapped_and_reproduced() {
    for (ranks, side) in [(16u32, 4u32), (64, 8)] {
        for numbering in [Numbering::RowMajor, Numbering::Random] {
            let (trace, truth) = cg(ranks, 2, numbering);
            let what = format!("CG S {ranks} {numbering}");
            let diagonal = diagonal_ranks(&truth, side);
            assert_eq!(diagonal.len() as u32, side, "{what}");
            assert_eq!(ranks_messaging_themselves(&trace), diagonal, "{what}");
            let report = identify(&trace);
            assert_eq!(
                report.identification.matched.as_ref().map(|m| m.label.as_str()),
                Some(truth.topology_label.as_str()),
                "{what}"
            );
            let l = logicalize_identified(&trace, &report, None).unwrap();
            let a = &l.accuracy;
            eprintln!(
                "{what}: {} operations, {} dropped; classes {:?}; {} self operations in {} records",
                a.calls,
                a.dropped_calls,
                l.classes
                    .iter()
                    .map(|c| (c.ranks.len(), c.directions.join("+")))
                    .collect::<Vec<_>>(),
                self_operations(&l),
                l.records.len()
            );
            assert_eq!((a.dropped_calls, a.dropped_bytes), (0, 0), "{what}");
            assert_eq!(a.dropped_calls_fraction, 0.0, "{what}");
            assert_eq!(l.self_ranks, diagonal, "{what}");
            assert_eq!(
                l.topology.directions.last().map(String::as_str),
                Some(SELF_DIRECTION),
                "{what}"
            );
            assert!(self_operations(&l) > 0, "{what}");
            // Only the diagonal lacks a transpose partner and only it has `self`: two classes,
            // merged without conflict.
            assert_eq!(l.merge_conflicts, 0, "{what}: {:?}", l.classes);
            let with_self: Vec<&[u32]> = l
                .classes
                .iter()
                .filter(|c| c.directions.iter().any(|d| d == SELF_DIRECTION))
                .map(|c| c.ranks.as_slice())
                .collect();
            assert_eq!(with_self, vec![diagonal.as_slice()], "{what}");
            let v = verify(&trace, &l).unwrap();
            assert!(v.ranks_below_full.is_empty(), "{what}: {:?}", v.ranks_below_full);
            assert_eq!(v.overall_share, 1.0, "{what}");
            for r in 0..ranks {
                let own = without_collective_detail(
                    physical_records(&trace, &l.placement, r)
                        .unwrap()
                        .into_iter()
                        .map(|x| x.call)
                        .collect(),
                );
                let expanded = without_collective_detail(expand_records(&l, r).unwrap());
                if let Some(k) = (0..expanded.len().max(own.len())).find(|&k| expanded.get(k) != own.get(k)) {
                    panic!(
                        "{what}: rank {r}'s expansion differs from its trace at record {k} of {}/{}: {:?} vs {:?}",
                        expanded.len(),
                        own.len(),
                        expanded.get(k),
                        own.get(k)
                    );
                }
                // A diagonal rank's expansion sends to itself; no other rank's does.
                let to_itself = expanded
                    .iter()
                    .flat_map(|c| &c.ops)
                    .any(|o| o.partner == Partner::Rank(r));
                assert_eq!(to_itself, diagonal.contains(&r), "{what}: rank {r}");
            }
        }
    }
}

#[test]
fn cg_logical_trace_is_the_same_under_any_numbering_up_to_direction_names() {
    // The NAS CG family has automorphisms the canonical placement does not undo (its row bits
    // may swap under another numbering: seen before `self` existed), so the traces are compared
    // up to one renaming of the directions, which must keep `self` as `self`.
    for ranks in [16u32, 64] {
        let logical_calls = |numbering| {
            let (trace, _) = cg(ranks, 2, numbering);
            let l = logicalize_identified(&trace, &identify(&trace), None).unwrap();
            without_collective_detail(l.records.into_iter().map(|r| r.call).collect())
        };
        let (a, b) = (logical_calls(Numbering::RowMajor), logical_calls(Numbering::Random));
        assert_eq!(a.len(), b.len(), "CG {ranks}");
        let mut renaming: std::collections::BTreeMap<String, String> = Default::default();
        for (k, (x, y)) in a.iter().zip(&b).enumerate() {
            let mut y = y.clone();
            for (o, p) in y.ops.iter_mut().zip(&x.ops) {
                if let (Partner::Direction(dy), Partner::Direction(dx)) = (&mut o.partner, &p.partner) {
                    let to = renaming.entry(dy.clone()).or_insert_with(|| dx.clone());
                    *dy = to.clone();
                }
            }
            assert_eq!(*x, y, "CG {ranks}: record {k} under the renaming {renaming:?}");
        }
        assert_eq!(
            renaming.get(SELF_DIRECTION).map(String::as_str),
            Some(SELF_DIRECTION),
            "CG {ranks}"
        );
        let targets: BTreeSet<&String> = renaming.values().collect();
        assert_eq!(
            targets.len(),
            renaming.len(),
            "CG {ranks}: not a renaming: {renaming:?}"
        );
    }
}

#[test]
fn cg_compressed_length_does_not_grow_with_iterations() {
    let length = |iterations| {
        let (trace, _) = cg(16, iterations, Numbering::Random);
        let l = logicalize_identified(&trace, &identify(&trace), None).unwrap();
        let program = compress(&l.records);
        let expanded = program.expand(10_000_000).unwrap();
        assert_eq!(
            expanded,
            l.records.iter().map(|r| r.call.clone()).collect::<Vec<_>>(),
            "{iterations} iterations"
        );
        program.compressed_length
    };
    assert_eq!(length(2), length(6));
}

#[test]
fn self_pairs_are_no_edge_of_the_topology() {
    let (trace, truth) = cg(16, 1, Numbering::Random);
    let matrix = CommMatrix::from_trace(&trace, &Selection::all());
    let report = identify_matrix(&matrix, &TopologyOptions::default());
    let m = report.identification.matched.as_ref().expect("NAS CG is identified");
    assert_eq!(m.label, truth.topology_label);
    let placement = Placement::from_report(&report).unwrap();
    for r in 0..16 {
        let neighbours: BTreeSet<u32> = placement
            .direction_names()
            .iter()
            .filter_map(|d| placement.neighbour(r, d))
            .collect();
        assert!(!neighbours.contains(&r), "rank {r} is its own topology neighbour");
    }
    assert!(!placement.direction_names().iter().any(|d| d == SELF_DIRECTION));
}

fn mpi_available() -> bool {
    let found = ["mpicc", "mpirun"].iter().all(|tool| {
        Command::new(tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if !found {
        if std::env::var("TRACELOGIC_REQUIRE_MPI").as_deref() == Ok("1") {
            panic!(
                "TRACELOGIC_REQUIRE_MPI=1 but mpicc/mpirun are missing (apt-get install openmpi-bin libopenmpi-dev)"
            );
        }
        eprintln!("note: skipping the MPI run of the CG skeleton: mpicc/mpirun not found");
    }
    found
}

#[test]
fn cg_skeleton_sends_to_the_rank_itself() {
    let (trace, _) = cg(16, 1, Numbering::RowMajor);
    let l = logicalize_identified(&trace, &identify(&trace), None).unwrap();
    let program = compress(&l.records);
    let source = skeleton_c(&l, &program).unwrap();
    assert!(
        source.contains("/* Directions: row-bit0, row-bit1, transpose, self */"),
        "{source}"
    );
    // The `self` column leads a diagonal node to itself and is -1 elsewhere; NTOPO counts the
    // topology's own directions (3), not `self`.
    let rows: Vec<Vec<i64>> = source
        .lines()
        .skip_while(|l| !l.starts_with("static const int neighbour"))
        .skip(1)
        .take_while(|l| l.trim_start().starts_with('{'))
        .map(|l| {
            l.trim()
                .trim_matches(|c| c == '{' || c == '}' || c == ',')
                .split(", ")
                .map(|x| x.parse().unwrap())
                .collect()
        })
        .collect();
    assert_eq!(rows.len(), 16);
    for (u, row) in rows.iter().enumerate() {
        let diagonal = u / 4 == u % 4;
        assert_eq!(row[3], if diagonal { u as i64 } else { -1 }, "node {u}: {row:?}");
    }
    assert!(source.contains("#define NTOPO 3\n"), "{source}");
    if !mpi_available() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("tracelogic-logical-self-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let c = dir.join("cg16.c");
    std::fs::write(&c, &source).unwrap();
    let exe = dir.join("cg16");
    let tracer = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tools/pmpi-tracer/tracelogic_pmpi.c");
    let out = Command::new("mpicc")
        .args(["-O1", "-Wall", "-Werror", "-o"])
        .arg(&exe)
        .arg(&c)
        .arg(tracer)
        .output()
        .expect("mpicc runs");
    assert!(out.status.success(), "mpicc: {}", String::from_utf8_lossy(&out.stderr));
    let trace_path = dir.join("cg16.trace.txt");
    let out = Command::new("timeout")
        .arg("120")
        .arg("mpirun")
        .args([
            "--oversubscribe",
            "--allow-run-as-root",
            "-np",
            "16",
            "-x",
            "TRACELOGIC_TRACE",
        ])
        .arg(&exe)
        .arg("0")
        .env("TRACELOGIC_TRACE", &trace_path)
        .env("OMPI_MCA_btl", "self,vader,tcp")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
        .output()
        .expect("mpirun runs");
    assert!(
        out.status.success(),
        "mpirun: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&trace_path).expect("the tracer wrote its file");
    let _ = std::fs::remove_dir_all(&dir);
    let replayed = tracelogic_formats::read_trace(vec![InputFile::new("cg16.trace.txt", bytes)]).unwrap();
    // The replayed run messages itself on the same ranks, and its logical trace under the
    // skeleton's placement (rank r plays node r) has the original's records.
    assert_eq!(ranks_messaging_themselves(&replayed), l.self_ranks);
    let again = logicalize(&replayed, &Placement::identity(l.placement.spec.clone())).unwrap();
    assert_eq!(again.accuracy.dropped_calls, 0);
    let shape = |t: &LogicalTrace| -> Vec<(String, Vec<(String, u64)>)> {
        t.records
            .iter()
            .map(|r| {
                let ops = r.call.ops.iter().map(|o| (o.partner.label(), o.bytes)).collect();
                (r.call.function.clone(), ops)
            })
            .collect()
    };
    assert_eq!(shape(&again), shape(&l));
    let v = verify(&replayed, &again).unwrap();
    assert!(v.ranks_below_full.is_empty(), "{v:?}");
}
