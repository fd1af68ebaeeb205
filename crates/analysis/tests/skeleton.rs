//! The MPI skeleton generated from a compressed logical trace compiles with `mpicc` and, run on
//! a few ranks with the PMPI tracer of tools/pmpi-tracer linked in, produces a trace whose logical
//! trace equals the one it was generated from.
//!
//! Needs Open MPI (`mpicc`, `mpirun`): with `TRACELOGIC_REQUIRE_MPI=1` (CI) a missing MPI fails
//! the test; otherwise the test prints a note and passes.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use tracelogic_analysis::compress::compress;
use tracelogic_analysis::logical::{logicalize, LogicalCall, LogicalTrace, Partner, Placement};
use tracelogic_analysis::matrix::CommMatrix;
use tracelogic_analysis::skeleton::{receive_tags_kept, skeleton_c, skeleton_check};
use tracelogic_analysis::topology::{identify_matrix, TopologyOptions};
use tracelogic_formats::InputFile;
use tracelogic_model::{CallKind, CollectiveOp, P2pDir, Selection, Trace, ANY_TAG};
use tracelogic_synth::{generate_with_truth, CollectiveSpec, Noise, Numbering, Spec, Style, TopologySpec};

fn mpi_available() -> bool {
    let found = Command::new("mpicc")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
        && Command::new("mpirun")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
    if !found {
        if std::env::var("TRACELOGIC_REQUIRE_MPI").as_deref() == Ok("1") {
            panic!(
                "TRACELOGIC_REQUIRE_MPI=1 but mpicc/mpirun are missing (apt-get install openmpi-bin libopenmpi-dev)"
            );
        }
        eprintln!("note: skipping the MPI skeleton test: mpicc/mpirun not found");
    }
    found
}

fn tracer() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tools/pmpi-tracer/tracelogic_pmpi.c")
}

fn logical_of(trace: &Trace) -> LogicalTrace {
    let m = CommMatrix::from_trace(trace, &Selection::all());
    let placement = Placement::from_report(&identify_matrix(&m, &TopologyOptions::default())).unwrap();
    logicalize(trace, &placement).unwrap()
}

fn calls(l: &LogicalTrace) -> Vec<LogicalCall> {
    l.records.iter().map(|r| r.call.clone()).collect()
}

fn compile(dir: &Path, name: &str, source: &str) -> PathBuf {
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, source).unwrap();
    let exe = dir.join(name);
    let out = Command::new("mpicc")
        .args(["-O1", "-Wall", "-Werror", "-o"])
        .arg(&exe)
        .arg(&c)
        .arg(tracer())
        .output()
        .expect("mpicc runs");
    assert!(
        out.status.success(),
        "mpicc failed on {}:\n{}",
        c.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

/// Run `exe` on `ranks` ranks with the tracer writing to a file; read the trace back.
fn run_traced(exe: &Path, ranks: u32, dir: &Path) -> Trace {
    let trace_path = dir.join(format!("{}.trace.txt", exe.file_name().unwrap().to_string_lossy()));
    let out = Command::new("timeout")
        .arg("120")
        .arg("mpirun")
        .args(["--oversubscribe", "--allow-run-as-root", "-np"])
        .arg(ranks.to_string())
        .args(["-x", "TRACELOGIC_TRACE"])
        .arg(exe)
        .arg("0")
        .env("TRACELOGIC_TRACE", &trace_path)
        .env("OMPI_MCA_btl", "self,vader,tcp")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
        .output()
        .expect("mpirun runs");
    assert!(
        out.status.success(),
        "mpirun failed ({:?}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&trace_path).expect("the tracer wrote its file");
    tracelogic_formats::read_trace(vec![InputFile::new("skeleton.trace.txt", bytes)]).expect("the tracer's trace reads")
}

fn check(spec: &Spec, name: &str) {
    let (trace, _) = generate_with_truth(spec).unwrap();
    let logical = logical_of(&trace);
    let program = compress(&logical.records);
    let source = skeleton_c(&logical, &program).unwrap();
    assert!(source.contains(if spec.topology.family.is_cartesian() {
        "MPI_Cart_create"
    } else {
        "MPI_Comm_dup(MPI_COMM_WORLD, &topo)"
    }));
    if !mpi_available() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("tracelogic-skeleton-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let exe = compile(&dir, name, &source);
    let replayed = run_traced(&exe, trace.num_ranks(), &dir);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(replayed.num_ranks(), trace.num_ranks());
    // Rank r of the skeleton plays node r of the topology the logical trace refers to.
    let again = logicalize(&replayed, &Placement::identity(logical.placement.spec.clone())).unwrap();
    assert_eq!(again.accuracy.dropped_calls, 0);
    // Roots are world ranks; the skeleton's rank of a root is the root's node. A rooted
    // collective's sizes depend on whether the rank is the root, so they are compared as the
    // larger of sent and received. Receive tags are `any` where the skeleton cannot keep them.
    let keep_tags = logical.tags_consistent && receive_tags_kept(&logical.placement.spec);
    let normal = |l: &LogicalTrace, roots: Option<&[u32]>| -> Vec<LogicalCall> {
        calls(l)
            .into_iter()
            .map(|mut c| {
                if let Some(col) = &mut c.collective {
                    col.root = col.root.map(|r| roots.map_or(r, |m| m[r as usize]));
                    let b = col.bytes_sent.max(col.bytes_recv);
                    (col.bytes_sent, col.bytes_recv) = (b, b);
                }
                // Branches and per-rank sizes name world ranks too (the noise, kept as offsets,
                // makes the noisy ranks branches of their own).
                let node = |r: &u32| roots.map_or(*r, |m| m[*r as usize]);
                let sorted = |rs: &[u32]| {
                    let mut v: Vec<u32> = rs.iter().map(node).collect();
                    v.sort_unstable();
                    v
                };
                c.only_ranks = c.only_ranks.as_deref().map(sorted);
                for o in &mut c.ops {
                    if o.dir == P2pDir::Recv && !keep_tags {
                        o.tag = ANY_TAG;
                    }
                    for e in &mut o.bytes_by_rank {
                        e.ranks = sorted(&e.ranks);
                    }
                }
                c
            })
            .collect()
    };
    let expected = normal(&logical, Some(&logical.placement.node_of_rank));
    assert_eq!(
        normal(&again, None),
        expected,
        "{name}: the skeleton's logical trace differs"
    );
    // Identification of the skeleton's own run finds the same topology.
    let m = CommMatrix::from_trace(&replayed, &Selection::all());
    let report = identify_matrix(&m, &TopologyOptions::default());
    assert_eq!(report.identification.matched.unwrap().family, logical.topology.family);
    // And its trace is the expansion of the logical trace on every rank.
    let v = tracelogic_analysis::logical::verify(&replayed, &again).unwrap();
    assert!(v.ranks_below_full.is_empty(), "{name}: {v:?}");
}

#[test]
fn torus_skeleton_reproduces_its_logical_trace() {
    let spec = Spec {
        topology: TopologySpec::parse("torus:3x3").unwrap(),
        numbering: Numbering::Random,
        seed: 17,
        iterations: 12,
        bytes: 2048,
        compute_ns: 2_000,
        noise: Some(Noise {
            fraction: 0.3,
            percent: 1.0,
        }),
        collectives: vec![
            CollectiveSpec {
                op: CollectiveOp::Allreduce,
                every: 4,
                bytes: 16,
            },
            CollectiveSpec {
                op: CollectiveOp::Bcast,
                every: 6,
                bytes: 64,
            },
        ],
        ..Spec::default()
    };
    check(&spec, "torus3x3");
}

#[test]
fn grid_sendrecv_skeleton_reproduces_its_logical_trace() {
    // A mesh: border ranks replay MPI_Send/MPI_Recv where one side of a Sendrecv is missing.
    let spec = Spec {
        topology: TopologySpec::parse("grid:3x2").unwrap(),
        numbering: Numbering::Random,
        seed: 3,
        iterations: 5,
        style: Style::Sendrecv,
        ..Spec::default()
    };
    check(&spec, "grid3x2");
}

#[test]
fn tree_skeleton_uses_a_graph_communicator() {
    let spec = Spec {
        topology: TopologySpec::parse("binary-tree:7").unwrap(),
        numbering: Numbering::RowMajor,
        iterations: 4,
        ..Spec::default()
    };
    check(&spec, "tree7");
}

#[test]
fn tree_skeleton_sends_to_peers_outside_the_tree_at_their_node_offsets() {
    // The generator's noise goes to ranks that are no neighbours in the tree: the logical
    // trace keeps those peers as `node+k` offsets (trees have no coordinates to offset), and
    // the skeleton must send to the node k further, where the original rank sent.
    let spec = Spec {
        topology: TopologySpec::parse("binary-tree:7").unwrap(),
        numbering: Numbering::RowMajor,
        seed: 5,
        iterations: 6,
        noise: Some(Noise {
            fraction: 0.5,
            percent: 1.0,
        }),
        ..Spec::default()
    };
    let (trace, _) = generate_with_truth(&spec).unwrap();
    let logical = logical_of(&trace);
    assert!(
        logical.topology.directions.iter().any(|d| d.starts_with("node+")),
        "{:?}",
        logical.topology.directions
    );
    check(&spec, "tree7noise");
}

#[test]
fn the_check_fails_exactly_where_the_skeleton_does_and_says_the_same() {
    // `skeleton_check` (the page's logical view) skips the replay of the receives' matching;
    // whether a skeleton is written, and the error when not, are `skeleton_c`'s.
    let mut cases: Vec<(String, LogicalTrace)> = ["npb-bt.S.9", "npb-lu.S.8", "npb-mg.S.8"]
        .iter()
        .map(|name| (name.to_string(), logical_of(&common::sample(name))))
        .collect();
    let spec = Spec {
        topology: TopologySpec::parse("binary-tree:7").unwrap(),
        seed: 5,
        iterations: 6,
        noise: Some(Noise {
            fraction: 0.5,
            percent: 1.0,
        }),
        ..Spec::default()
    };
    cases.push(("tree7noise".into(), logical_of(&generate_with_truth(&spec).unwrap().0)));
    // Programs no skeleton can replay: a peer named by its world rank, a direction the
    // topology lacks.
    let lu = cases[1].1.clone();
    let op_at = |l: &LogicalTrace| {
        l.records
            .iter()
            .rposition(|r| {
                matches!(
                    r.call.kind,
                    CallKind::Send | CallKind::Isend | CallKind::Recv | CallKind::Irecv
                ) && matches!(r.call.ops.first().map(|o| &o.partner), Some(Partner::Direction(_)))
            })
            .unwrap()
    };
    let mut by_rank = lu.clone();
    let at = op_at(&by_rank);
    by_rank.records[at].call.ops[0].partner = Partner::Rank(3);
    cases.push(("lu with a world rank".into(), by_rank));
    let mut elsewhere = lu;
    let at = op_at(&elsewhere);
    elsewhere.records[at].call.ops[0].partner = Partner::Direction("nowhere".into());
    cases.push(("lu with an unknown direction".into(), elsewhere));
    let mut failed = 0;
    for (name, logical) in &cases {
        let program = compress(&logical.records);
        let written = skeleton_c(logical, &program);
        assert_eq!(
            skeleton_check(logical, &program),
            written.as_ref().map(|_| ()).map_err(Clone::clone),
            "{name}"
        );
        failed += written.is_err() as usize;
    }
    assert_eq!(failed, 2, "the two programs a skeleton cannot replay fail");
}

/// A master–worker program that tells one worker's messages apart by tag, as mplrs does: per
/// round the master posts a receive for the worker's result (tag 9) and one for its "ready"
/// (tag 6), waits for "ready", sends a job, then waits for the result; the worker sends
/// "ready" first, and takes its job with `MPI_ANY_TAG`. A program with receives of any tag was
/// replayed by order (`MPI_ANY_TAG` everywhere): the result receive took "ready" and the ready
/// receive waited for the result, which the worker sends only after its job: the skeleton hung.
const TAGGED_MASTER_WORKER: &str = r#"
#include <mpi.h>
#include <string.h>
int main(int argc, char **argv) {
    int me, n; char buf[3][64]; memset(buf, 0, sizeof buf);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me); MPI_Comm_size(MPI_COMM_WORLD, &n);
    for (int round = 0; round < 5; round++) {
        if (me == 0) {
            for (int w = 1; w < n; w++) {
                MPI_Request rq[2];
                MPI_Irecv(buf[0], 64, MPI_BYTE, w, 9, MPI_COMM_WORLD, &rq[0]);
                MPI_Irecv(buf[1], 4, MPI_BYTE, w, 6, MPI_COMM_WORLD, &rq[1]);
                MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
                MPI_Send(buf[2], 16, MPI_BYTE, w, 1, MPI_COMM_WORLD);
                MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
            }
        } else {
            MPI_Send(buf[1], 4, MPI_BYTE, 0, 6, MPI_COMM_WORLD);
            MPI_Recv(buf[2], 16, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf[0], 64, MPI_BYTE, 0, 9, MPI_COMM_WORLD);
        }
    }
    MPI_Finalize();
    return 0;
}
"#;

#[test]
fn a_program_that_matches_by_tag_is_replayed_by_tag() {
    if !mpi_available() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("tracelogic-skeleton-{}-tagged", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let original = run_traced(&compile(&dir, "tagged", TAGGED_MASTER_WORKER), 4, &dir);
    let mut logical = logical_of(&original);
    assert_eq!(logical.topology.family, "star");
    // The PMPI tracer records the tag a wildcard receive matched; SST DUMPI, as mplrs's trace
    // has it, the wildcard: the worker's job receive (tag 1) is one of any tag.
    let mut wildcards = 0;
    for r in &mut logical.records {
        for o in &mut r.call.ops {
            if o.dir == P2pDir::Recv && o.tag == 1 {
                o.tag = ANY_TAG;
                wildcards += 1;
            }
        }
    }
    assert_eq!(wildcards, 5 * 3, "one job receive per round on each worker");
    let program = compress(&logical.records);
    let m = tracelogic_analysis::skeleton::receives_fit_in_order(&logical, &program).expect("checked");
    assert!(m.order_breaks_tags && m.tags_match, "{m:?}");
    let source = skeleton_c(&logical, &program).unwrap();
    // The master's receives keep their tags; each worker's receive of any tag stays one.
    assert_eq!(source.matches("MPI_ANY_TAG, topo").count(), 3, "{source}");
    let replayed = run_traced(&compile(&dir, "tagged-skeleton", &source), 4, &dir);
    let _ = std::fs::remove_dir_all(&dir);
    // The skeleton ran to the end and made the original's calls on every rank.
    let again = logicalize(&replayed, &Placement::identity(logical.placement.spec.clone())).unwrap();
    let v = tracelogic_analysis::logical::verify(&replayed, &again).unwrap();
    assert!(v.ranks_below_full.is_empty(), "{v:?}");
    for r in 0..4 {
        let count = |t: &Trace, dir: P2pDir| t.ranks[r].p2p.dir.iter().filter(|&&d| d == dir).count();
        let bytes = |t: &Trace| {
            (0..t.ranks[r].p2p.len())
                .map(|i| t.ranks[r].p2p.bytes.at(i))
                .sum::<u64>()
        };
        assert_eq!(
            count(&replayed, P2pDir::Send),
            count(&original, P2pDir::Send),
            "rank {r}"
        );
        assert_eq!(
            count(&replayed, P2pDir::Recv),
            count(&original, P2pDir::Recv),
            "rank {r}"
        );
        assert_eq!(bytes(&replayed), bytes(&original), "rank {r}");
    }
}
