//! The OTF2 model layer on the sample archives, and the writer: model → OTF2 → model round
//! trips, several chunks, and the official OTF2 library reading what we wrote.

#[path = "otf2_support.rs"]
mod support;

use support::{dump, load, load_dir, python_otf2_available, run_python, store, TempDir};
use tracelogic_formats::otf2::{self, Archive};
use tracelogic_formats::{InputFile, NoProgress, Progress};
use tracelogic_model::{
    CallKind, CollectiveOp, P2pDir, Rank, Trace, ANY_SOURCE, COMM_WORLD, NOT_COMPLETED, NO_CALLPATH, NO_ROOT,
};

fn read(files: &[InputFile]) -> Trace {
    otf2::read(files, &mut NoProgress).expect("archive reads")
}

fn call_names(t: &Trace, r: Rank) -> Vec<&str> {
    (0..t.ranks[r as usize].calls.len() as u32)
        .map(|i| t.call_name(r, i))
        .collect()
}

fn path_names(t: &Trace, p: u32) -> Vec<String> {
    if p == NO_CALLPATH {
        return Vec::new();
    }
    t.callpaths[p as usize]
        .iter()
        .map(|&r| t.regions.name(r).to_string())
        .collect()
}

#[test]
fn four_rank_sample_gives_the_generated_calls_and_operations() {
    // Expectations from crates/formats/tests/tools/gen_otf2_4rank.py, which wrote the sample.
    let t = read(&load("pyotf2-generated-4rank"));
    assert_eq!(t.format, "otf2");
    assert_eq!(t.num_ranks(), 4);
    assert_eq!(t.comms.len(), 1);
    assert_eq!(t.comms[0].members, vec![0, 1, 2, 3]);
    for r in 0..4u32 {
        let rt = &t.ranks[r as usize];
        let first = if r % 2 == 0 {
            ["MPI_Send", "MPI_Recv"]
        } else {
            ["MPI_Recv", "MPI_Send"]
        };
        let mut want = first.to_vec();
        want.extend(["MPI_Irecv", "MPI_Isend", "MPI_Waitall", "MPI_Allreduce", "MPI_Bcast"]);
        assert_eq!(call_names(&t, r), want, "rank {r}");
        for c in 0..rt.calls.len() {
            assert_eq!(path_names(&t, rt.calls.callpath[c]), vec!["main"], "rank {r} call {c}");
        }
        // Times: ticks are ns from the global offset 1_000_000.
        let t0 = r as u64 * 10 + 100 + 1000 * (r as u64 + 1) + 10;
        assert_eq!(
            (rt.calls.enter(0), rt.calls.exit(0)),
            (t0, t0 + if r % 2 == 0 { 50 } else { 45 })
        );
        assert_eq!(rt.span, Some((r as u64 * 10, t0 + 120 + 10 + 10 + 50 + 100 + 100)));
        let p = &rt.p2p;
        assert_eq!(p.len(), 4);
        let peer = r ^ 1;
        let (left, right) = ((r + 3) % 4, (r + 1) % 4);
        let (d0, tag0, b0, d1, tag1, b1) = if r % 2 == 0 {
            (P2pDir::Send, 42, 1024, P2pDir::Recv, 43, 2048)
        } else {
            (P2pDir::Recv, 42, 1024, P2pDir::Send, 43, 2048)
        };
        let ops: Vec<_> = (0..4)
            .map(|i| {
                (
                    p.post[i],
                    p.complete(i),
                    p.dir[i],
                    p.peer[i],
                    p.tag[i],
                    p.comm[i],
                    p.bytes.at(i),
                )
            })
            .collect();
        assert_eq!(
            ops,
            vec![
                (0, 0, d0, peer, tag0, COMM_WORLD, b0),
                (1, 1, d1, peer, tag1, COMM_WORLD, b1),
                (2, 4, P2pDir::Recv, left, 7, COMM_WORLD, 4096),
                (3, 4, P2pDir::Send, right, 7, COMM_WORLD, 4096),
            ],
            "rank {r}"
        );
        let c = &rt.collectives;
        assert_eq!(c.call, vec![5, 6]);
        assert_eq!(c.op, vec![CollectiveOp::Allreduce, CollectiveOp::Bcast]);
        assert_eq!(c.root, vec![NO_ROOT, 0]);
        let bcast = if r == 0 { (768, 0) } else { (0, 256) };
        assert_eq!((c.bytes_sent[0], c.bytes_recv[0]), (8, 8));
        assert_eq!((c.bytes_sent[1], c.bytes_recv[1]), bcast);
    }
    assert!(t.warnings.is_empty(), "{:?}", t.warnings);
}

#[test]
fn score_p_ping_pong_maps_comms_clock_and_call_paths() {
    let t = read(&load("pipit-ping-pong-otf2"));
    assert_eq!(t.num_ranks(), 2);
    // Score-P's "Process x Threads" measurement communicator is not an MPI communicator.
    assert_eq!(t.comms.len(), 1, "{:?}", t.comms);
    // Rank 1's ProgramBegin is at the global offset after clock correction: time 0.
    assert_eq!(t.ranks[1].span.unwrap().0, 0);
    assert!(t.meta.iter().any(|(k, v)| k == "creator" && v == "Score-P 7.1"));
    assert!(t
        .meta
        .iter()
        .any(|(k, v)| k == "OTF2::MPI_COMMUNICATION_COMPLETE" && v == "true"));
    for r in 0..2 {
        let names = call_names(&t, r);
        assert_eq!(names.first(), Some(&"MPI_Init"));
        assert_eq!(names.last(), Some(&"MPI_Finalize"));
        let rt = &t.ranks[r as usize];
        let sends = rt.p2p.dir.iter().filter(|&&d| d == P2pDir::Send).count();
        assert_eq!((sends, rt.p2p.len() - sends), (8, 8), "rank {r}");
        assert!(rt.p2p.peer.iter().all(|&p| p == 1 - r));
        assert!(rt.p2p.comm.iter().all(|&c| c == COMM_WORLD));
        let c0 = rt.calls.callpath[0];
        assert_eq!(path_names(&t, c0), vec!["int main(int, char**)"]);
    }
    // The first message: rank 0 → rank 1, tag 10, 16 KiB.
    let p = &t.ranks[0].p2p;
    assert_eq!(
        (p.dir[0], p.peer[0], p.tag[0], p.bytes.at(0)),
        (P2pDir::Send, 1, 10, 16384)
    );
    // Ticks → ns at 2095197216 ticks/s: the MPI_Send enter of rank 0.
    let send = p.post[0] as usize;
    let ticks = 7397467382750926u64 - 7397466976977800;
    let ns = (ticks as u128 * 1_000_000_000 + 2095197216 / 2) / 2095197216;
    assert_eq!(t.ranks[0].calls.enter(send), ns as u64);
}

#[test]
fn papi_metric_events_become_metric_samples() {
    let t = read(&load("pipit-ping-pong-otf2-papi"));
    assert_eq!(t.metrics.len(), 3, "{:?}", t.metrics.names());
    for rt in &t.ranks {
        assert_eq!(rt.metrics.len(), 3);
        let n = rt.metrics[0].time.len();
        // 84 Metric events over both ranks, 3 values each.
        assert!(n > 0 && rt.metrics.iter().all(|m| m.time.len() == n && m.value.len() == n));
    }
    assert_eq!(
        t.ranks[0].metrics.iter().map(|m| m.time.len()).sum::<usize>() / 3 + t.ranks[1].metrics[0].time.len(),
        84
    );
    // First sample of rank 0 (see the reference dump): [98850, 2191, 421].
    let first: Vec<f64> = t.ranks[0].metrics.iter().map(|m| m.value[0]).collect();
    assert_eq!(first, vec![98850.0, 2191.0, 421.0]);
}

#[test]
fn progress_is_reported_per_location_and_cancel_stops() {
    let files = load("pyotf2-generated-4rank");
    let mut stages = Vec::new();
    let mut sink = |p: &Progress| {
        stages.push(p.stage.clone());
        true
    };
    otf2::read(&files, &mut sink).unwrap();
    assert_eq!(stages.iter().filter(|s| s.starts_with("reading location")).count(), 4);
    let mut cancel = |_: &Progress| false;
    let e = otf2::read(&files, &mut cancel).unwrap_err();
    assert!(e.cancelled);
}

/// Everything the model holds that an OTF2 round trip must keep.
fn assert_same_model(a: &Trace, b: &Trace) {
    assert_eq!(a.num_ranks(), b.num_ranks());
    assert_eq!(a.comms, b.comms);
    for (x, y) in a.ranks.iter().zip(&b.ranks) {
        let r = x.rank;
        assert_eq!(call_names(a, r), call_names(b, r), "rank {r}");
        assert_eq!(x.calls.kind, y.calls.kind);
        assert_eq!(x.calls.enter, y.calls.enter, "rank {r}");
        assert_eq!(
            x.calls.exits().collect::<Vec<_>>(),
            y.calls.exits().collect::<Vec<_>>(),
            "rank {r}"
        );
        assert_eq!(x.calls.location, y.calls.location);
        for c in 0..x.calls.len() {
            assert_eq!(
                path_names(a, x.calls.callpath[c]),
                path_names(b, y.calls.callpath[c]),
                "rank {r} call {c}"
            );
        }
        let (p, q) = (&x.p2p, &y.p2p);
        assert_eq!(
            (
                &p.post,
                &p.completes().collect::<Vec<_>>(),
                &p.dir,
                &p.peer,
                &p.tag,
                &p.comm,
                &p.bytes
            ),
            (
                &q.post,
                &q.completes().collect::<Vec<_>>(),
                &q.dir,
                &q.peer,
                &q.tag,
                &q.comm,
                &q.bytes
            ),
            "rank {r}"
        );
        let (c, d) = (&x.collectives, &y.collectives);
        assert_eq!(
            (&c.call, &c.op, &c.comm, &c.root, &c.bytes_sent, &c.bytes_recv),
            (&d.call, &d.op, &d.comm, &d.root, &d.bytes_sent, &d.bytes_recv),
            "rank {r}"
        );
        assert_eq!(x.metrics.len(), y.metrics.len());
        for (m, n) in x.metrics.iter().zip(&y.metrics) {
            assert_eq!(a.metrics.name(m.metric), b.metrics.name(n.metric));
            assert_eq!((&m.time, &m.value), (&n.time, &n.value));
        }
    }
}

/// The official reader's dump of `files` (written to disk) equals ours.
fn official_dump_agrees(files: &[InputFile], name: &str) {
    if !python_otf2_available() {
        return;
    }
    let dir = TempDir::new(name);
    store(&dir.0, files);
    let out = dir.0.join("dump.txt");
    let script = support::tool("otf2_reference_dump.py");
    let anchor = files.iter().find(|f| f.name.ends_with(".otf2")).unwrap();
    run_python(&script, &[&dir.0.join(&anchor.name), &out]);
    let theirs = std::fs::read_to_string(&out).unwrap();
    let ours = dump(files);
    let theirs: Vec<&str> = theirs.lines().collect();
    for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
        assert_eq!(a, b, "line {} of the official dump of our {name} archive", i + 1);
    }
    assert_eq!(ours.len(), theirs.len());
}

#[test]
fn round_trip_of_the_samples_keeps_the_model() {
    for sample in [
        "pyotf2-generated-4rank",
        "pipit-ping-pong-otf2",
        "pipit-ping-pong-otf2-papi",
        "pyotf2-generated-multichunk",
    ] {
        let original = read(&load(sample));
        let files = otf2::write(&original, "traces");
        let again = read(&files);
        assert_same_model(&original, &again);
        assert!(again.warnings.is_empty(), "{sample}: {:?}", again.warnings);
        official_dump_agrees(&files, sample);
    }
}

/// A trace exercising what the OTF2 writer must encode: several communicators (one a split),
/// non-blocking operations completed later, a sendrecv, collectives with roots, wildcard tag,
/// never-completed sends, call paths, several threads, metrics.
fn synthetic(ranks: u32, rounds: u32) -> Trace {
    synthetic_named(ranks, rounds, "")
}

/// [`synthetic`] with `suffix` after every MPI function's name (TAU names them `MPI_Send()`).
fn synthetic_named(ranks: u32, rounds: u32, suffix: &str) -> Trace {
    let f = |name: &str| format!("{name}{suffix}");
    let mut t = Trace::new("generated", "synthetic", ranks);
    let even: Vec<Rank> = (0..ranks).filter(|r| r % 2 == 0).collect();
    let half = t.add_comm("evens", even.clone());
    let main = t.regions.intern("main");
    let solve = t.regions.intern("solve");
    let p_main = t.intern_callpath(&[main]);
    let p_solve = t.intern_callpath(&[main, solve]);
    let m = t.metrics.intern("PAPI_TOT_CYC");
    for r in 0..ranks {
        let rt = &mut t.ranks[r as usize];
        rt.locations = vec![
            tracelogic_model::Location {
                id: r as u64 * 2,
                name: "Master thread".into(),
            },
            tracelogic_model::Location {
                id: r as u64 * 2 + 1,
                name: "worker".into(),
            },
        ];
        rt.metrics.push(tracelogic_model::MetricSamples {
            metric: m,
            ..Default::default()
        });
    }
    for r in 0..ranks {
        let (right, left) = ((r + 1) % ranks, (r + ranks - 1) % ranks);
        let mut now = 1000 + r as u64;
        for i in 0..rounds {
            let path = if i % 2 == 0 { p_main } else { p_solve };
            let irecv = t.push_call(r, &f("MPI_Irecv"), now, now + 5, path, 0);
            let isend = t.push_call(r, &f("MPI_Isend"), now + 10, now + 12, path, 0);
            let wait = t.push_call(r, &f("MPI_Waitall"), now + 20, now + 40, path, 0);
            t.push_p2p(r, irecv, wait, P2pDir::Recv, left, i as i32, COMM_WORLD, 8 * i as u64);
            t.push_p2p(r, isend, wait, P2pDir::Send, right, i as i32, COMM_WORLD, 8 * i as u64);
            let sr = t.push_call(r, &f("MPI_Sendrecv"), now + 50, now + 70, path, 1);
            t.push_p2p(r, sr, sr, P2pDir::Send, left, 99, COMM_WORLD, 16);
            t.push_p2p(r, sr, sr, P2pDir::Recv, right, 99, COMM_WORLD, 16);
            let root = i % ranks;
            let b = t.push_call(r, &f("MPI_Bcast"), now + 80, now + 90, path, 0);
            t.push_collective(
                r,
                b,
                CollectiveOp::Bcast,
                COMM_WORLD,
                root,
                if r == root { 64 } else { 0 },
                64,
            );
            if r % 2 == 0 {
                let red = t.push_call(r, &f("MPI_Reduce"), now + 100, now + 110, NO_CALLPATH, 1);
                t.push_collective(r, red, CollectiveOp::Reduce, half, even[1 % even.len()], 4, 4);
                let s = t.push_call(r, &f("MPI_Send"), now + 111, now + 112, path, 0);
                let peer = even[(even.iter().position(|&e| e == r).unwrap() + 1) % even.len()];
                t.push_p2p(r, s, s, P2pDir::Send, peer, 7, half, 3);
            }
            let bar = t.push_call(r, &f("MPI_Barrier"), now + 120, now + 130, path, 0);
            t.push_collective(r, bar, CollectiveOp::Barrier, COMM_WORLD, NO_ROOT, 0, 0);
            let ms = &mut t.ranks[r as usize].metrics[0];
            ms.time.push(now + 115);
            ms.value.push(i as f64 * 1.5);
            now += 200;
        }
        // Requests completed by the other thread, both ways round.
        let isend0 = t.push_call(r, &f("MPI_Isend"), now, now + 1, p_main, 0);
        let irecv1 = t.push_call(r, &f("MPI_Irecv"), now + 2, now + 3, p_main, 1);
        let irecv0 = t.push_call(r, &f("MPI_Irecv"), now + 4, now + 5, p_main, 0);
        let isend1 = t.push_call(r, &f("MPI_Isend"), now + 6, now + 7, p_main, 1);
        let wait1 = t.push_call(r, &f("MPI_Waitall"), now + 8, now + 9, p_main, 1);
        let wait0 = t.push_call(r, &f("MPI_Waitall"), now + 10, now + 11, p_main, 0);
        t.push_p2p(r, isend0, wait1, P2pDir::Send, right, 50, COMM_WORLD, 2);
        t.push_p2p(r, irecv1, wait0, P2pDir::Recv, left, 50, COMM_WORLD, 2);
        t.push_p2p(r, irecv0, wait1, P2pDir::Recv, left, 51, COMM_WORLD, 3);
        t.push_p2p(r, isend1, wait0, P2pDir::Send, right, 51, COMM_WORLD, 3);
        now += 20;
        let lost = t.push_call(r, &f("MPI_Isend"), now, now + 1, p_main, 0);
        t.push_p2p(r, lost, NOT_COMPLETED, P2pDir::Send, right, 5, COMM_WORLD, 1);
        let fin = t.push_call(r, &f("MPI_Finalize"), now + 10, now + 20, NO_CALLPATH, 0);
        let _ = fin;
    }
    t.normalise_order();
    t
}

/// TAU names the regions of MPI functions `MPI_Send()`: read as the functions they are.
#[test]
fn mpi_regions_named_as_tau_names_them_read_as_their_functions() {
    let tau = synthetic_named(4, 6, "()");
    assert!(tau.functions.names().iter().any(|n| n == "MPI_Sendrecv()"));
    let back = read(&otf2::write(&tau, "traces"));
    assert_same_model(&synthetic(4, 6), &back);
}

#[test]
fn synthetic_trace_round_trips_through_one_and_several_chunks() {
    let t = synthetic(6, 20);
    assert!(t.ranks.iter().all(|r| r.calls.kind.contains(&CallKind::SendRecv)));
    let files = otf2::write(&t, "traces");
    assert_eq!(files.iter().filter(|f| f.name.ends_with(".evt")).count(), 12);
    let back = read(&files);
    assert_eq!(back.comms[1].name, "evens");
    assert_same_model(&t, &back);
    official_dump_agrees(&files, "synthetic");

    // Enough rounds that one location's events need several 256 KiB chunks.
    let big = synthetic(2, 6000);
    let files = otf2::write_with_chunk_size(&big, "big", 256 * 1024);
    let evt = files.iter().find(|f| f.name == "big/0.evt").unwrap();
    assert!(evt.bytes.len() > 2 * 256 * 1024, "only {} bytes", evt.bytes.len());
    let a = Archive::open(&files).unwrap();
    assert_eq!(a.anchor.chunk_size_events, 256 * 1024);
    assert_same_model(&big, &read(&files));
    if python_otf2_available() {
        let dir = TempDir::new("big");
        store(&dir.0, &files);
        let out = dir.0.join("summary.txt");
        run_python(
            &support::tool("otf2_reference_summary.py"),
            &[&dir.0.join("big.otf2"), &out],
        );
        let summary = std::fs::read_to_string(out).unwrap();
        let ours = support::count_events(&files);
        for line in summary.lines().filter(|l| l.starts_with("location ")) {
            let mut it = line.split_whitespace();
            let loc: u64 = it.nth(1).unwrap().parse().unwrap();
            let total: u64 = it.next().unwrap().trim_start_matches("total=").parse().unwrap();
            let mine: u64 = ours.iter().filter(|((l, _), _)| *l == loc).map(|(_, n)| n).sum();
            assert_eq!(mine, total, "location {loc}: {line}");
        }
    }
}

#[test]
fn wildcard_peers_and_empty_ranks_survive_a_round_trip() {
    let mut t = Trace::new("generated", "w", 3);
    let c = t.push_call(0, "MPI_Recv", 5, 9, NO_CALLPATH, 0);
    t.push_p2p(0, c, c, P2pDir::Recv, ANY_SOURCE, -1, COMM_WORLD, 4);
    let back = read(&otf2::write(&t, "w"));
    assert_same_model(&t, &back);
    assert!(back.ranks[2].calls.is_empty());
}

#[test]
fn written_archives_are_read_from_a_folder_like_any_other() {
    let t = synthetic(4, 3);
    let dir = TempDir::new("folder");
    store(&dir.0, &otf2::write(&t, "run/traces"));
    let files = load_dir(&dir.0);
    assert!(files.iter().any(|f| f.name == "run/traces/0.evt"));
    assert_same_model(&t, &read(&files));
}

#[test]
fn very_deep_call_paths_are_cut_to_the_outermost_regions() {
    let mut t = Trace::new("generated", "deep", 1);
    let path: Vec<u32> = (0..300).map(|i| t.regions.intern(&format!("f{i}"))).collect();
    let deep = t.intern_callpath(&path);
    t.push_call(0, "MPI_Barrier", 10, 20, deep, 0);
    let back = read(&otf2::write(&t, "deep"));
    let got = path_names(&back, back.ranks[0].calls.callpath[0]);
    assert_eq!(got.len(), 128);
    assert_eq!((got[0].as_str(), got[127].as_str()), ("f0", "f127"));
    assert!(
        back.warnings.iter().any(|w| w.contains("nested in more than 128")),
        "{:?}",
        back.warnings
    );
}

#[test]
fn thousands_of_communicators_keep_their_identity() {
    let mut t = Trace::new("generated", "comms", 4);
    for i in 0..3000u32 {
        let members = vec![i % 4, (i / 4) % 4];
        let members = if members[0] == members[1] {
            vec![members[0]]
        } else {
            members
        };
        let c = t.add_comm(&format!("c{i}"), members.clone());
        let call = t.push_call(0, "MPI_Send", i as u64 * 10, i as u64 * 10 + 5, NO_CALLPATH, 0);
        t.push_p2p(0, call, call, P2pDir::Send, *members.last().unwrap(), 1, c, 8);
    }
    let back = read(&otf2::write(&t, "comms"));
    assert_same_model(&t, &back);
}

#[test]
fn the_generic_entry_point_detects_and_reads_otf2_folders_and_written_archives() {
    let t = tracelogic_formats::read_trace(load("pipit-ping-pong-otf2")).unwrap();
    assert_eq!((t.format.as_str(), t.num_ranks()), ("otf2", 2));
    let written = otf2::write(&synthetic(3, 2), "run/traces");
    let back = tracelogic_formats::read_trace(written).unwrap();
    assert_same_model(&synthetic(3, 2), &back);
}
