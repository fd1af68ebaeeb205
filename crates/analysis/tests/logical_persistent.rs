//! Persistent requests in the logical trace: `MPI_Send_init`/`MPI_Recv_init` post nothing, each
//! `MPI_Startall` posts the requests' operations again (the DUMPI and OTF2 readers record them so,
//! as Score-P does), and the `MPI_Waitall` after it completes them. PETSc's vector scatters
//! (PetscSF) exchange every halo this way: its traces' logical trace expanded to 30 of 930
//! point-to-point operations per rank, the starts and their waits were dropped. Checked on a
//! hand-built ring exchange: every rank's expansion gives back the operations the test posted,
//! in order, and the verification says so.

use tracelogic_analysis::logical::{expand_records, logicalize, physical_calls, verify, Placement};
use tracelogic_model::Trace;
use tracelogic_synth::persistent::Posted;
use tracelogic_synth::TopologySpec;

const RANKS: u32 = 4;
const STEPS: u64 = 6;

/// The ring of `tracelogic_synth::persistent`: per step each rank starts its two persistent
/// receives (one `MPI_Startall`), then its two persistent sends (another), then waits for all
/// four.
fn persistent_ring() -> (Trace, Vec<Vec<Posted>>) {
    tracelogic_synth::persistent::persistent_ring(RANKS, STEPS)
}

#[test]
fn persistent_starts_expand_to_every_operation_on_every_rank() {
    let (trace, posted) = persistent_ring();
    let placement = Placement::identity(TopologySpec::parse("ring:4").unwrap());
    let logical = logicalize(&trace, &placement).unwrap();
    for r in 0..RANKS {
        let expanded: Vec<Posted> = physical_calls(&expand_records(&logical, r).unwrap())
            .iter()
            .map(|c| (c.direction == "send", c.peer.expect("a neighbour"), c.bytes))
            .collect();
        assert_eq!(expanded, posted[r as usize], "rank {r}");
    }
    let v = verify(&trace, &logical).unwrap();
    assert!(v.ranks_structure_differs.is_empty(), "{v:?}");
    assert!(v.ranks_bytes_differ.is_empty(), "{v:?}");
    assert_eq!(v.overall_share, 1.0);
    // The waits stay: one completion record per step on every rank.
    let waits = logical
        .records
        .iter()
        .filter(|r| r.call.function == "MPI_Waitall")
        .count();
    assert_eq!(waits as u64, STEPS);
}

// The skeleton of this ring (a start posting several operations) is built and run under Open
// MPI by `tests/skeleton_apps.rs::persistent_starts_of_several_requests_replay_every_operation`.

/// PETSc's tutorials ex5 and ex29 recorded by tools/record/petsc.sh (held out of the corpus:
/// docs/corpus.md "PETSc"; `PETSC_HELDOUT=DIR[:DIR…]` names the run folders, each with its packed
/// trace and `expected/*per-rank.txt`, the tracer's own decoder's sends, bytes and receives per
/// rank, persistent starts included). Every rank's expansion of the logical trace is exact and
/// gives the decoder's counts.
#[test]
#[ignore = "needs PETSC_HELDOUT (held-out runs, recorded outside the repository)"]
fn petsc_held_out_expands_to_the_decoders_counts_on_every_rank() {
    use std::path::PathBuf;
    use tracelogic_analysis::logical::logicalize_identified;
    use tracelogic_analysis::matrix::CommMatrix;
    use tracelogic_analysis::topology::{identify_matrix, TopologyOptions};
    use tracelogic_formats::{fs::load_paths, read_trace};
    use tracelogic_model::Selection;
    let dirs = std::env::var("PETSC_HELDOUT").expect("PETSC_HELDOUT=DIR[:DIR…]");
    for dir in dirs.split(':').map(PathBuf::from) {
        let packed = ["dumpi.tar.zst", "trace.tar.zst"].map(|f| dir.join(f));
        let path = packed.iter().find(|p| p.exists()).expect("a packed trace").clone();
        let truth_file = std::fs::read_dir(dir.join("expected"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.to_string_lossy().ends_with("per-rank.txt"))
            .expect("expected/*per-rank.txt");
        // Bytes -1: the decoder could not size a send's datatype (a derived type), not compared.
        let truth: Vec<(i64, i64, i64)> = std::fs::read_to_string(truth_file)
            .unwrap()
            .lines()
            .map(|l| {
                let f: Vec<i64> = l.split_whitespace().map(|x| x.parse().unwrap()).collect();
                (f[1], f[2], f[3])
            })
            .collect();
        let trace = read_trace(load_paths(&[path]).unwrap()).unwrap();
        let report = identify_matrix(
            &CommMatrix::from_trace(&trace, &Selection::all()),
            &TopologyOptions::default(),
        );
        let logical = logicalize_identified(&trace, &report, None).unwrap();
        let v = verify(&trace, &logical).unwrap();
        let run = dir.display();
        assert!(
            v.ranks_structure_differs.is_empty(),
            "{run}: {:?}",
            v.ranks_structure_differs
        );
        assert!(v.ranks_bytes_differ.is_empty(), "{run}: {:?}", v.ranks_bytes_differ);
        for (r, want) in truth.iter().enumerate() {
            let calls = physical_calls(&expand_records(&logical, r as u32).unwrap());
            let sends = calls.iter().filter(|c| c.direction == "send");
            let got = (
                sends.clone().count() as i64,
                if want.1 < 0 {
                    -1
                } else {
                    sends.map(|c| c.bytes).sum::<u64>() as i64
                },
                calls.iter().filter(|c| c.direction != "send").count() as i64,
            );
            assert_eq!(&got, want, "{run}: rank {r} (sends, bytes, receives)");
        }
    }
}
