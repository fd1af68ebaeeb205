//! Writer round trips: model → `dumpi::write` → `dumpi::read` gives the same calls,
//! point-to-point operations, collectives and communicators, for every DUMPI sample and for a
//! hand-built model whose communicators no call created. When PyPI `pydumpi==0.1.3` is
//! installed (required under `TRACELOGIC_REQUIRE_PY=1`) the official reader reads the written
//! files too and must count the same calls and bytes sent.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use tracelogic_formats::{dumpi, InputFile, NoProgress};
use tracelogic_model::{CollectiveOp, P2pDir, Trace, ANY_SOURCE, ANY_TAG, NOT_COMPLETED, NO_CALLPATH, NO_ROOT};

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/samples")
}

fn load(folder: &str) -> Vec<InputFile> {
    std::fs::read_dir(samples().join(folder))
        .expect("sample folder")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_file())
        .map(|p| {
            InputFile::new(
                p.file_name().expect("name").to_string_lossy(),
                std::fs::read(&p).expect("read"),
            )
        })
        .collect()
}

/// Assert that two traces have the same calls, operations and communicator memberships.
fn assert_same(a: &Trace, b: &Trace, what: &str) {
    assert_eq!(a.num_ranks(), b.num_ranks(), "{what}: ranks");
    let members = |t: &Trace, c: u32| t.comms[c as usize].members.clone();
    for (ra, rb) in a.ranks.iter().zip(&b.ranks) {
        let r = ra.rank;
        let names = |t: &Trace, rt: &tracelogic_model::RankTrace| -> Vec<String> {
            rt.calls.func.iter().map(|&f| t.functions.name(f).to_owned()).collect()
        };
        assert_eq!(names(a, ra), names(b, rb), "{what} rank {r}: call names");
        assert_eq!(ra.calls.kind, rb.calls.kind, "{what} rank {r}: kinds");
        assert_eq!(ra.calls.enter, rb.calls.enter, "{what} rank {r}: enter times");
        assert_eq!(
            ra.calls.exits().collect::<Vec<_>>(),
            rb.calls.exits().collect::<Vec<_>>(),
            "{what} rank {r}: exit times"
        );
        let paths = |t: &Trace, rt: &tracelogic_model::RankTrace| -> Vec<Vec<String>> {
            rt.calls
                .callpath
                .iter()
                .map(|&c| {
                    if c == NO_CALLPATH {
                        vec![]
                    } else {
                        t.callpaths[c as usize]
                            .iter()
                            .map(|&x| t.regions.name(x).to_owned())
                            .collect()
                    }
                })
                .collect()
        };
        assert_eq!(paths(a, ra), paths(b, rb), "{what} rank {r}: call paths");
        let (p, q) = (&ra.p2p, &rb.p2p);
        assert_eq!(p.post, q.post, "{what} rank {r}: p2p posts");
        assert_eq!(
            p.completes().collect::<Vec<_>>(),
            q.completes().collect::<Vec<_>>(),
            "{what} rank {r}: p2p completions"
        );
        assert_eq!(p.dir, q.dir, "{what} rank {r}: p2p directions");
        assert_eq!(p.peer, q.peer, "{what} rank {r}: p2p peers");
        assert_eq!(p.tag, q.tag, "{what} rank {r}: p2p tags");
        assert_eq!(p.bytes, q.bytes, "{what} rank {r}: p2p bytes");
        for i in 0..p.len() {
            assert_eq!(
                members(a, p.comm[i]),
                members(b, q.comm[i]),
                "{what} rank {r} op {i}: communicator"
            );
        }
        let (c, d) = (&ra.collectives, &rb.collectives);
        assert_eq!(c.call, d.call, "{what} rank {r}: collective calls");
        assert_eq!(c.op, d.op, "{what} rank {r}: collective ops");
        assert_eq!(c.root, d.root, "{what} rank {r}: roots");
        assert_eq!(c.bytes_sent, d.bytes_sent, "{what} rank {r}: collective bytes sent");
        assert_eq!(c.bytes_recv, d.bytes_recv, "{what} rank {r}: collective bytes received");
        for i in 0..c.len() {
            assert_eq!(
                members(a, c.comm[i]),
                members(b, d.comm[i]),
                "{what} rank {r} coll {i}: communicator"
            );
        }
    }
    let mut ca: Vec<_> = a.comms.iter().map(|c| c.members.clone()).collect();
    let mut cb: Vec<_> = b.comms.iter().map(|c| c.members.clone()).collect();
    ca.sort();
    cb.sort();
    assert_eq!(ca, cb, "{what}: communicators");
}

fn round_trip(t: &Trace, prefix: &str) -> (Vec<InputFile>, Trace) {
    let files = dumpi::write(t, prefix);
    let back = dumpi::read(&files, &mut NoProgress).unwrap_or_else(|e| panic!("written trace reads: {e}"));
    (files, back)
}

#[test]
fn every_sample_round_trips() {
    for folder in [
        "sstmacro-dumpi-testtrace",
        "sstmacro-dumpi-testbgp",
        "npb-bt.S.9",
        "npb-lu.S.8",
        "npb-mg.S.8",
    ] {
        let t = dumpi::read(&load(folder), &mut NoProgress).expect("sample reads");
        let (files, back) = round_trip(&t, "out/rt");
        assert_eq!(files.len(), t.ranks.len() + 1);
        assert_eq!(files[0].name, "out/rt.meta");
        assert_eq!(files[1].name, "out/rt-0000.bin");
        assert_same(&t, &back, folder);
        assert!(back.warnings.is_empty(), "{folder}: {:?}", back.warnings);
    }
}

/// A model built by hand: a split communicator no call creates, a wildcard receive, a
/// non-blocking send never completed, collectives with roots, threads and call paths.
fn hand_model() -> Trace {
    let mut t = Trace::new("generated", "hand", 4);
    let evens = t.add_comm("evens", vec![2, 0]);
    let main = t.regions.intern("main");
    let solve = t.regions.intern("solve");
    let cp_main = t.intern_callpath(&[main]);
    let cp_solve = t.intern_callpath(&[main, solve]);
    for r in 0..4u32 {
        let base = 1_000 * r as u64;
        t.ranks[r as usize].locations.push(tracelogic_model::Location {
            id: 0,
            name: "thread 0".into(),
        });
        t.push_call(r, "MPI_Init", base, base + 10, cp_main, 0);
        let s = t.push_call(r, "MPI_Isend", base + 20, base + 30, cp_solve, 0);
        let w = t.push_call(r, "MPI_Waitall", base + 40, base + 50, cp_solve, 0);
        t.push_p2p(r, s, w, P2pDir::Send, (r + 1) % 4, 5, 0, 100 + r as u64);
        let rv = t.push_call(r, "MPI_Recv", base + 60, base + 70, cp_main, 0);
        let peer = if r == 2 { ANY_SOURCE } else { (r + 3) % 4 };
        t.push_p2p(r, rv, rv, P2pDir::Recv, peer, if r == 2 { ANY_TAG } else { 5 }, 0, 1000);
        let a = t.push_call(r, "MPI_Allgather", base + 80, base + 90, NO_CALLPATH, 0);
        t.push_collective(r, a, CollectiveOp::Allgather, 0, NO_ROOT, 8, 32);
        if r % 2 == 0 {
            let b = t.push_call(r, "MPI_Bcast", base + 100, base + 110, NO_CALLPATH, 0);
            let (sent, recv) = if r == 2 { (64, 0) } else { (0, 64) };
            t.push_collective(r, b, CollectiveOp::Bcast, evens, 2, sent, recv);
            let i = t.push_call(r, "MPI_Isend", base + 120, base + 130, NO_CALLPATH, 0);
            t.push_p2p(r, i, NOT_COMPLETED, P2pDir::Send, 2 - r, 9, evens, 7);
        }
        t.push_call(r, "MPI_Finalize", base + 200, base + 210, NO_CALLPATH, 0);
    }
    t
}

#[test]
fn hand_built_model_round_trips_with_synthetic_communicator_creation() {
    let t = hand_model();
    let (_, back) = round_trip(&t, "hand");
    // The communicator had no creating call: every rank starts with one MPI_Comm_split.
    for rt in &back.ranks {
        assert_eq!(back.call_name(rt.rank, 0), "MPI_Comm_split");
    }
    // Without those calls the trace is the original (indices shift by one).
    let mut stripped = back.clone();
    for rt in &mut stripped.ranks {
        let c = &mut rt.calls;
        c.enter.remove(0);
        c.duration = c.duration.iter().skip(1).collect();
        c.func.remove(0);
        c.kind.remove(0);
        c.callpath.remove(0);
        c.location.remove(0);
        rt.p2p.renumber_calls(|x| x - 1);
        rt.collectives.call.iter_mut().for_each(|x| *x -= 1);
    }
    assert_same(&t, &stripped, "hand model");
    assert_eq!(stripped.ranks[2].p2p.peer[1], ANY_SOURCE);
}

/// Run the pydumpi reference script over written files; `None` when pydumpi is missing.
fn reference(paths: &[PathBuf]) -> Option<serde_json::Value> {
    let required = std::env::var("TRACELOGIC_REQUIRE_PY").is_ok_and(|v| v == "1");
    let has = Command::new("python3")
        .args(["-c", "import pydumpi"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has {
        assert!(
            !required,
            "TRACELOGIC_REQUIRE_PY=1 but python3 cannot import pydumpi (pip install pydumpi==0.1.3)"
        );
        eprintln!("note: pydumpi not installed; the official reader does not check the written files");
        return None;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tools/dumpi_reference.py");
    let out = Command::new("python3")
        .arg(script)
        .args(paths)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "reference script failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).expect("reference JSON"))
}

#[test]
fn official_reader_reads_written_files() {
    let dir = std::env::temp_dir().join(format!("tracelogic-dumpi-rt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    for (name, t) in [
        (
            "bt",
            dumpi::read(&load("npb-bt.S.9"), &mut NoProgress).expect("BT reads"),
        ),
        ("hand", hand_model()),
    ] {
        let files = dumpi::write(&t, name);
        let mut bins = Vec::new();
        for f in &files {
            let p = dir.join(&f.name);
            std::fs::write(&p, &f.bytes).expect("write");
            if f.name.ends_with(".bin") {
                bins.push(p);
            }
        }
        let Some(reference) = reference(&bins) else { break };
        let back = dumpi::read(&files, &mut NoProgress).expect("reads");
        for (rt, expected) in back.ranks.iter().zip(reference.as_array().expect("list")) {
            let mut calls: HashMap<String, u64> = HashMap::new();
            for &f in &rt.calls.func {
                *calls.entry(back.functions.name(f).to_owned()).or_default() += 1;
            }
            let want: HashMap<String, u64> = expected["calls"]
                .as_object()
                .expect("calls")
                .iter()
                .map(|(k, v)| (k.clone(), v.as_u64().expect("n")))
                .collect();
            assert_eq!(calls, want, "{name} rank {}: calls per function", rt.rank);
            let sent: u64 = (0..rt.p2p.len())
                .filter(|&i| rt.p2p.dir[i] == P2pDir::Send)
                .map(|i| rt.p2p.bytes.at(i))
                .sum();
            let want_sent: u64 = expected["sent"]
                .as_object()
                .expect("sent")
                .values()
                .map(|v| v.as_u64().expect("b"))
                .sum();
            assert_eq!(sent, want_sent, "{name} rank {}: bytes sent", rt.rank);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn times_beyond_the_16_bit_seconds_range_survive() {
    // DUMPI stores seconds in 16 bits above a bias: they wrap every 18.2 hours. The reader
    // unwraps jumps back; consecutive calls must be less than 9.1 hours apart.
    let mut t = Trace::new("generated", "long", 1);
    let s = 1_000_000_000u64;
    for (k, sec) in [0u64, 30_000, 60_000, 90_000, 120_000, 150_000, 180_000]
        .into_iter()
        .enumerate()
    {
        t.push_call(0, "MPI_Barrier", sec * s + k as u64, sec * s + 5 * s, NO_CALLPATH, 0);
        t.push_collective(0, k as u32, CollectiveOp::Barrier, 0, NO_ROOT, 0, 0);
    }
    let (_, back) = round_trip(&t, "long");
    assert_eq!(back.ranks[0].calls.enter, t.ranks[0].calls.enter);
    assert_eq!(back.ranks[0].calls.duration, t.ranks[0].calls.duration);
}

#[test]
fn every_dumpi_call_is_written_and_read_back_by_both_readers() {
    // One call of every function DUMPI has a record for, with neutral arguments: our reader
    // must read the same sequence back, and libundumpi (whose parser has a routine per call)
    // must see the same calls, which checks the field layout of every call id.
    use tracelogic_formats::dumpi::spec::CALLS;
    let names: Vec<String> = CALLS
        .iter()
        .filter(|c| c.id < 290)
        .map(|c| match c.name.strip_prefix("DUMPIO_") {
            Some(io) => format!("MPIO_{io}"),
            None => format!("MPI_{}", c.name),
        })
        .collect();
    let mut t = Trace::new("generated", "all", 1);
    for (i, n) in names.iter().enumerate() {
        t.push_call(0, n, 10 * i as u64, 10 * i as u64 + 5, NO_CALLPATH, 0);
    }
    let (files, back) = round_trip(&t, "all");
    let read: Vec<&str> = back.ranks[0]
        .calls
        .func
        .iter()
        .map(|&f| back.functions.name(f))
        .collect();
    assert_eq!(read, names);
    assert_eq!(names.len(), 289, "ids 0-289 except 128 (Pcontrol)");

    let dir = std::env::temp_dir().join(format!("tracelogic-dumpi-all-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let bin = dir.join(&files[1].name);
    std::fs::write(&bin, &files[1].bytes).expect("write");
    let reference = reference(&[bin]);
    let _ = std::fs::remove_dir_all(&dir);
    let Some(reference) = reference else { return };
    // pydumpi names its callbacks after the function (`on_type_create_hvector`, `on_iotest`).
    let norm = |n: &str| {
        n.to_ascii_lowercase()
            .replacen("mpio_", "io", 1)
            .replacen("mpi_", "", 1)
            .replace('_', "")
    };
    let mut want: Vec<(String, u64)> = reference[0]["calls"]
        .as_object()
        .expect("calls")
        .iter()
        .map(|(k, v)| (norm(k), v.as_u64().expect("n")))
        .collect();
    want.sort();
    let mut got: Vec<(String, u64)> = names.iter().map(|n| (norm(n), 1)).collect();
    got.sort();
    let only_ours: Vec<_> = got.iter().filter(|x| !want.contains(x)).collect();
    let only_theirs: Vec<_> = want.iter().filter(|x| !got.contains(x)).collect();
    assert!(
        only_ours.is_empty() && only_theirs.is_empty(),
        "ours only {only_ours:?}, libundumpi only {only_theirs:?}"
    );
}

#[test]
fn split_with_a_rank_left_out_round_trips_without_extra_calls() {
    // MPI_Comm_split on 4 ranks: colours give [0, 1] and [2]; rank 3 passes MPI_UNDEFINED.
    let mut t = Trace::new("generated", "split", 4);
    let pair = t.add_comm("pair", vec![0, 1]);
    let alone = t.add_comm("alone", vec![2]);
    for r in 0..4u32 {
        t.push_call(r, "MPI_Comm_split", 0, 10, NO_CALLPATH, 0);
    }
    let s = t.push_call(0, "MPI_Send", 20, 30, NO_CALLPATH, 0);
    t.push_p2p(0, s, s, P2pDir::Send, 1, 3, pair, 40);
    let rv = t.push_call(1, "MPI_Recv", 20, 30, NO_CALLPATH, 0);
    t.push_p2p(1, rv, rv, P2pDir::Recv, 0, 3, pair, 40);
    let b = t.push_call(2, "MPI_Barrier", 20, 30, NO_CALLPATH, 0);
    t.push_collective(2, b, CollectiveOp::Barrier, alone, NO_ROOT, 0, 0);
    let (_, back) = round_trip(&t, "split");
    assert_same(&t, &back, "split with MPI_UNDEFINED");
    assert!(back.warnings.is_empty(), "{:?}", back.warnings);
}

/// libdumpi names rank files with `%04d`: a run of more than 10,000 ranks has `-0000.bin` …
/// `-9999.bin` beside `-10000.bin`. Such a trace is read whole (it was refused as missing a
/// rank file, named `-NNNN.bin`).
#[test]
fn more_than_ten_thousand_ranks_are_found_under_libdumpi_s_names() {
    let text = "#tracelogic-text 1\nranks 10001\n\
        0 0 1us MPI_Init\n10000 0 1us MPI_Init\n\
        0 2us 3us MPI_Send peer=10000 tag=7 bytes=1024\n\
        10000 2us 3us MPI_Recv peer=0 tag=7 bytes=1024\n";
    let t = tracelogic_formats::text::read(&[InputFile::new("pp.txt", text)], &mut NoProgress).unwrap();
    let files = dumpi::write(&t, "pp");
    assert!(
        files.iter().any(|f| f.name == "pp-10000.bin"),
        "libdumpi's name for rank 10000"
    );
    assert!(files.iter().any(|f| f.name == "pp-0000.bin"));
    let back = dumpi::read(&files, &mut NoProgress).expect("every rank file found");
    assert_eq!(back.ranks.len(), 10_001);
    assert_eq!(back.ranks[10_000].p2p.peer, vec![0]);
    assert_eq!(back.ranks[0].p2p.peer, vec![10_000]);
}
