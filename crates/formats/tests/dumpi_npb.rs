//! The model layer on real runs: the NPB BT, LU and MG traces recorded with libdumpi 13 under
//! Open MPI, and the two sst-macro samples. Checks structure (ranks, calls, sends, peers,
//! completions, communicators), that every send finds a receive with the same envelope, and,
//! when PyPI `pydumpi==0.1.3` is installed (required when `TRACELOGIC_REQUIRE_PY=1`), the call
//! counts and bytes sent per destination against the official `libundumpi` reader.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use tracelogic_formats::{dumpi, InputFile, NoProgress};
use tracelogic_model::{CallKind, P2pDir, Trace, ANY_SOURCE, COMM_WORLD, NOT_COMPLETED, NO_CALLPATH, NO_ROOT};

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/samples")
}

/// The files of a sample folder, named `folder/file`.
fn load(folder: &str) -> Vec<InputFile> {
    let mut files: Vec<InputFile> = std::fs::read_dir(samples().join(folder))
        .expect("sample folder")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_file())
        .map(|p| {
            let name = format!("{folder}/{}", p.file_name().expect("name").to_string_lossy());
            InputFile::new(name, std::fs::read(&p).expect("read"))
        })
        .collect();
    files.sort_by(|a, b| a.name.cmp(&b.name));
    files
}

fn read(folder: &str) -> Trace {
    dumpi::read(&load(folder), &mut NoProgress).unwrap_or_else(|e| panic!("{folder}: {e}"))
}

/// Structural invariants every DUMPI-derived trace must satisfy.
fn check_structure(t: &Trace) {
    let n = t.num_ranks();
    assert_eq!(t.format, "dumpi");
    assert_eq!(t.comms[COMM_WORLD as usize].members, (0..n).collect::<Vec<_>>());
    for rt in &t.ranks {
        let p = &rt.p2p;
        assert!(!p.is_empty(), "rank {} has point-to-point operations", rt.rank);
        for i in 0..p.len() {
            let comm = &t.comms[p.comm[i] as usize];
            if p.dir[i] == P2pDir::Send {
                assert!(p.bytes.at(i) > 0, "rank {} send {i} has positive bytes", rt.rank);
            }
            assert!(p.peer[i] < n, "rank {} op {i}: peer {} in range", rt.rank, p.peer[i]);
            assert!(comm.members.contains(&p.peer[i]) && comm.members.contains(&rt.rank));
            assert_ne!(p.complete(i), NOT_COMPLETED, "rank {} op {i} completed", rt.rank);
            assert!(p.complete(i) >= p.post[i]);
            let kind = rt.calls.kind[p.post[i] as usize];
            assert!(kind.is_p2p(), "op posted by a p2p call");
            let done = rt.calls.kind[p.complete(i) as usize];
            assert!(done == CallKind::Completion || p.complete(i) == p.post[i]);
        }
        let c = &rt.collectives;
        for i in 0..c.len() {
            assert!(c.root[i] == NO_ROOT || c.root[i] < n);
            assert_eq!(rt.calls.kind[c.call[i] as usize], CallKind::Collective);
        }
        assert!(rt.calls.enters().is_sorted(), "calls in time order");
        assert!(
            rt.calls
                .callpath
                .iter()
                .all(|&c| c == NO_CALLPATH || (c as usize) < t.callpaths.len()),
            "call paths valid"
        );
    }
    assert_eq!(t.span().0, 0, "times start at the earliest wall time");
}

/// Every send is received: per (communicator, sender, receiver, tag), as many sends as receives,
/// and the bytes sent in the k-th message fit the k-th posted receive buffer.
fn check_sends_match_receives(t: &Trace) {
    type Key = (u32, u32, u32, i32);
    let mut sends: HashMap<Key, Vec<u64>> = HashMap::new();
    let mut recvs: HashMap<Key, Vec<u64>> = HashMap::new();
    for rt in &t.ranks {
        let p = &rt.p2p;
        for i in 0..p.len() {
            match p.dir[i] {
                P2pDir::Send => sends
                    .entry((p.comm[i], rt.rank, p.peer[i], p.tag[i]))
                    .or_default()
                    .push(p.bytes.at(i)),
                P2pDir::Recv => {
                    assert_ne!(p.peer[i], ANY_SOURCE);
                    recvs
                        .entry((p.comm[i], p.peer[i], rt.rank, p.tag[i]))
                        .or_default()
                        .push(p.bytes.at(i))
                }
            }
        }
    }
    assert_eq!(sends.len(), recvs.len());
    for (k, s) in &sends {
        let r = recvs.get(k).unwrap_or_else(|| panic!("no receive for envelope {k:?}"));
        assert_eq!(s.len(), r.len(), "message count for {k:?}");
        for (a, b) in s.iter().zip(r) {
            assert!(a <= b, "{k:?}: {a} bytes sent into a {b}-byte receive");
        }
    }
}

#[test]
fn bt_reads_with_split_and_dup_communicators() {
    let t = read("npb-bt.S.9");
    assert_eq!(t.num_ranks(), 9);
    assert!(t.ranks.iter().all(|r| r.calls.len() == 3753), "3753 calls per rank");
    check_structure(&t);
    check_sends_match_receives(&t);
    // Comm_split of WORLD then two Comm_dup: three more communicators, numbered like WORLD.
    assert_eq!(t.comms.len(), 4);
    assert!(t.comms.iter().all(|c| c.members == (0..9).collect::<Vec<_>>()));
    assert!(
        t.ranks.iter().all(|r| r.p2p.comm.iter().all(|&c| c != COMM_WORLD)),
        "BT sends on derived communicators"
    );
    // The 3x3 multi-partition: each rank talks to exactly 6 others.
    for rt in &t.ranks {
        let mut peers: Vec<u32> = rt.p2p.peer.to_vec();
        peers.sort();
        peers.dedup();
        assert_eq!(peers.len(), 6, "rank {} peers {peers:?}", rt.rank);
    }
    assert!(t.warnings.is_empty(), "{:?}", t.warnings);
}

#[test]
fn lu_reads_as_a_4x2_wavefront_grid() {
    let t = read("npb-lu.S.8");
    assert_eq!(t.num_ranks(), 8);
    assert!(t.ranks.iter().all(|r| (2394..=3580).contains(&r.calls.len())));
    check_structure(&t);
    check_sends_match_receives(&t);
    // rank = row + 4 * column: neighbours differ by 1 within a column or by 4 across columns.
    for rt in &t.ranks {
        for &p in &rt.p2p.peer {
            let (a, b) = (rt.rank as i64, p as i64);
            let same_col = a / 4 == b / 4 && (a - b).abs() == 1;
            assert!(same_col || (a - b).abs() == 4, "rank {a} talks to {b}");
        }
    }
}

#[test]
fn mg_reads_with_blocking_sends_and_nonblocking_receives() {
    let t = read("npb-mg.S.8");
    assert_eq!(t.num_ranks(), 8);
    assert!(t.ranks.iter().all(|r| r.calls.len() == 1438));
    check_structure(&t);
    check_sends_match_receives(&t);
    let allreduce = t.functions.get("MPI_Allreduce").expect("MG reduces");
    assert_eq!(t.ranks[0].calls.func.iter().filter(|&&f| f == allreduce).count(), 88);
}

#[test]
fn sstmacro_samples_read() {
    let t = read("sstmacro-dumpi-testtrace");
    check_structure(&t);
    check_sends_match_receives(&t);
    // Each rank sends 1 MPI_INT to the next rank and receives from the previous one.
    for rt in &t.ranks {
        let r = rt.rank;
        let p = &rt.p2p;
        assert_eq!(p.len(), 2);
        assert_eq!(
            (p.dir[0], p.peer[0], p.tag[0], p.bytes.at(0)),
            (P2pDir::Send, (r + 1) % 4, 1337, 4)
        );
        assert_eq!(
            (p.dir[1], p.peer[1], p.tag[1], p.bytes.at(1)),
            (P2pDir::Recv, (r + 3) % 4, 1337, 4)
        );
        assert_eq!(t.call_name(r, p.complete(0)), "MPI_Wait");
    }
    let bgp = read("sstmacro-dumpi-testbgp");
    check_structure(&bgp);
    check_sends_match_receives(&bgp);
    // Comm_group + Group_incl(all 7) + Comm_create: one communicator with the world's members.
    assert_eq!(bgp.comms.len(), 2);
    assert_eq!(bgp.comms[1].members, (0..7).collect::<Vec<_>>());
    let c = &bgp.ranks[3].collectives;
    let a2a: Vec<usize> = (0..c.len())
        .filter(|&i| c.op[i] == tracelogic_model::CollectiveOp::Alltoall)
        .collect();
    assert_eq!(a2a.len(), 7);
    // 89 doubles to each of 7 members.
    assert!(a2a
        .iter()
        .all(|&i| c.comm[i] == 1 && c.bytes_sent[i] == 89 * 8 * 7 && c.bytes_recv[i] == 89 * 8 * 7));
    assert!(bgp.meta.contains(&("mesh size".into(), "4x2x2".into())));
    let coords = bgp
        .meta
        .iter()
        .find(|(k, _)| k.starts_with("mesh coordinates"))
        .expect("mesh coordinates");
    assert!(
        coords.1.starts_with("0:0,0,0 1:0,0,0 2:0,0,0 3:0,0,0 4:1,0,0"),
        "{coords:?}"
    );
}

/// Run the pydumpi reference script; `None` (with a note) when pydumpi is missing and not required.
fn reference(files: &[PathBuf]) -> Option<serde_json::Value> {
    let required = std::env::var("TRACELOGIC_REQUIRE_PY").is_ok_and(|v| v == "1");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tools/dumpi_reference.py");
    let has = Command::new("python3")
        .args(["-c", "import pydumpi"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has {
        assert!(
            !required,
            "TRACELOGIC_REQUIRE_PY=1 but python3 cannot import pydumpi (pip install pydumpi==0.1.3)"
        );
        eprintln!("note: pydumpi not installed; skipping the cross-check with the official reader");
        return None;
    }
    let out = Command::new("python3")
        .arg(script)
        .args(files)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "reference script failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).expect("reference JSON"))
}

fn cross_check(folder: &str) {
    let dir = samples().join(folder);
    let mut bins: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("folder")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "bin"))
        .collect();
    bins.sort();
    let Some(reference) = reference(&bins) else { return };
    let t = read(folder);
    let per_file = reference.as_array().expect("list");
    assert_eq!(per_file.len(), t.ranks.len());
    for (rt, expected) in t.ranks.iter().zip(per_file) {
        // Calls per MPI function.
        let mut calls: HashMap<String, u64> = HashMap::new();
        for &f in &rt.calls.func {
            *calls.entry(t.functions.name(f).to_owned()).or_default() += 1;
        }
        let want: HashMap<String, u64> = expected["calls"]
            .as_object()
            .expect("calls")
            .iter()
            .map(|(k, v)| (k.clone(), v.as_u64().expect("count")))
            .collect();
        assert_eq!(calls, want, "{folder} rank {}: calls per function", rt.rank);
        // Bytes sent per destination, with the destination as recorded (communicator-relative),
        // keyed by the communicator's members so that DUMPI handles need not be compared.
        let mut sent: HashMap<u32, u64> = HashMap::new();
        let p = &rt.p2p;
        for i in 0..p.len() {
            if p.dir[i] == P2pDir::Send {
                let local = t.comms[p.comm[i] as usize].local_rank(p.peer[i]).expect("peer in comm");
                *sent.entry(local).or_default() += p.bytes.at(i);
            }
        }
        let mut want_sent: HashMap<u32, u64> = HashMap::new();
        for (k, v) in expected["sent"].as_object().expect("sent") {
            let dest: u32 = k.split(':').nth(1).expect("comm:dest").parse().expect("dest");
            *want_sent.entry(dest).or_default() += v.as_u64().expect("bytes");
        }
        assert_eq!(sent, want_sent, "{folder} rank {}: bytes sent per destination", rt.rank);
    }
}

#[test]
fn npb_totals_match_the_official_reader() {
    for folder in ["npb-bt.S.9", "npb-lu.S.8", "npb-mg.S.8", "sstmacro-dumpi-testbgp"] {
        cross_check(folder);
    }
}
