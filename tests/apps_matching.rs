//! Which receive got which message in hpcc's runs, against the tracer's own decoder: hpcc's
//! RandomAccess posts receives from `MPI_ANY_SOURCE` ahead and cancels them (`MPI_Wait` with
//! `MPI_STATUS_IGNORE`, so the trace cannot say whether a cancel came too late). The truth,
//! `expected/cancelled-receives.tsv` (`tools/record/dumpi-cancelled.sh` over `dumpi2ascii`):
//! per rank its receives and sends, and which receives an `MPI_Cancel` named. The program waited
//! for every other receive, so each got a message; the sends left over went to cancelled ones.
//! The engine's one matching (every analysis: matrix, waits, patterns, phases, replay) and the
//! logical trace's named senders must say the same.

use std::collections::HashSet;
use std::path::PathBuf;
use tracelogic_engine::{Engine, FieldWords};
use tracelogic_model::{P2pDir, Sourced, ANY_SOURCE};

fn app(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/apps")
        .join(name)
}

/// Per rank: (receives, sends, ordinals of the cancelled receives).
fn decoder_truth(name: &str) -> Vec<(usize, usize, HashSet<usize>)> {
    let text = std::fs::read_to_string(app(name).join("expected/cancelled-receives.tsv")).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let cancelled = f[3]
                .split(',')
                .filter(|s| !s.is_empty())
                .map(|s| s.parse().unwrap())
                .collect();
            (f[1].parse().unwrap(), f[2].parse().unwrap(), cancelled)
        })
        .collect()
}

/// Every receive hpcc did not cancel is matched (before the rule for unresolved receives from
/// any source, hpcc-6 left 94 of them unmatched and hpcc-4 16, their messages taken by
/// cancelled receives); the cancelled ones get only the sends left over (hpcc-6: 2, hpcc-4: 0),
/// and the logical trace leaves exactly the others as receives from any source.
#[test]
fn hpcc_receives_get_the_messages_the_decoder_says() {
    for run in ["hpcc-4", "hpcc-6"] {
        let truth = decoder_truth(run);
        let files = tracelogic_formats::fs::load_paths(&[app(run)]).unwrap();
        let engine = Engine::new(tracelogic_formats::read_trace(files).unwrap(), FieldWords::Flags);
        let trace = engine.trace();
        assert_eq!(trace.ranks.len(), truth.len(), "{run}");
        let matching = engine.matching();
        let matched: HashSet<(u32, u32)> = matching.messages.iter().map(|m| (m.receiver, m.recv_op)).collect();
        let mut to_cancelled = 0usize;
        for (rt, (receives, _, cancelled)) in trace.ranks.iter().zip(&truth) {
            let p = &rt.p2p;
            let recvs: Vec<usize> = (0..p.len()).filter(|&i| p.dir[i] == P2pDir::Recv).collect();
            assert_eq!(recvs.len(), *receives, "{run}: rank {}'s receives", rt.rank);
            for (k, &op) in recvs.iter().enumerate() {
                let got = matched.contains(&(rt.rank, op as u32));
                if cancelled.contains(&k) {
                    to_cancelled += got as usize;
                } else {
                    assert!(
                        got,
                        "{run}: rank {}'s receive {k} (not cancelled) got no message",
                        rt.rank
                    );
                }
            }
        }
        let sends: usize = truth.iter().map(|t| t.1).sum();
        let kept: usize = truth.iter().map(|t| t.0 - t.2.len()).sum();
        assert_eq!(to_cancelled, sends - kept, "{run}: messages a late cancel took");
        assert_eq!(matching.messages.len(), sends, "{run}: every send received");
        let cancels: usize = truth.iter().map(|t| t.2.len()).sum();
        let resolved = Sourced::new(trace, || matching);
        let wildcards: usize = resolved
            .ranks
            .iter()
            .map(|rt| {
                (0..rt.p2p.len())
                    .filter(|&i| rt.p2p.dir[i] == P2pDir::Recv && rt.p2p.peer[i] == ANY_SOURCE)
                    .count()
            })
            .sum();
        assert_eq!(
            wildcards,
            cancels - to_cancelled,
            "{run}: receives the logical trace cannot name"
        );
    }
}

/// A receive's bytes are what its status recorded (MPI's count of the message), a send's are
/// its count times its datatype's size. hpcc (HPL's and PTRANS's structs of doubles) and
/// Quantum ESPRESSO (Fortran vectors of `MPI_Type_match_size` types) build, use and free
/// derived datatypes that libdumpi files under one number, whose size table entry is the first
/// type's: sized from the table, 12 of hpcc-4's messages were sent as 16 × count bytes and
/// received as 1,608. Sized from the recorded constructors, every message's two ends agree.
#[test]
fn derived_datatype_sends_carry_what_their_receives_recorded() {
    for run in ["hpcc-4", "hpcc-6", "qe-si-4", "qe-si-8"] {
        let files = tracelogic_formats::fs::load_paths(&[app(run)]).unwrap();
        let engine = Engine::new(tracelogic_formats::read_trace(files).unwrap(), FieldWords::Flags);
        let trace = engine.trace();
        // Receives hpcc cancelled waited with MPI_STATUS_IGNORE: no status sized them.
        let mut cancelled: HashSet<(u32, u32)> = HashSet::new();
        if run.starts_with("hpcc") {
            for (rt, (_, _, ordinals)) in trace.ranks.iter().zip(decoder_truth(run)) {
                let p = &rt.p2p;
                let recvs = (0..p.len()).filter(|&i| p.dir[i] == P2pDir::Recv);
                for (k, op) in recvs.enumerate() {
                    if ordinals.contains(&k) {
                        cancelled.insert((rt.rank, op as u32));
                    }
                }
            }
        }
        let differ: Vec<(u32, u64, u64)> = engine
            .matching()
            .messages
            .iter()
            .filter(|m| !cancelled.contains(&(m.receiver, m.recv_op)))
            .map(|m| {
                let sent = trace.ranks[m.sender as usize].p2p.bytes.at(m.send_op as usize);
                let got = trace.ranks[m.receiver as usize].p2p.bytes.at(m.recv_op as usize);
                (m.sender, sent, got)
            })
            .filter(|(_, sent, got)| sent != got)
            .collect();
        assert!(
            differ.is_empty(),
            "{run}: {} messages differ, e.g. {:?}",
            differ.len(),
            &differ[..differ.len().min(5)]
        );
    }
}
