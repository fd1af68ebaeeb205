//! Wait states against values computed by hand: programs with planted delays run under the
//! clock model of `tracelogic_synth::delays` (a late sender, a late receiver of an Ssend, a
//! late rank before an all-reduce, a delayed broadcast root, an early reduce root, a late rank
//! before a barrier, a slow link), and the SST/macro DUMPI test trace whose timestamps are read
//! off its dumpi2ascii dump (`expected/`).

mod common;

use tracelogic_analysis::waits::{polling, wait_states, WaitReport, Waits};
use tracelogic_model::{Selection, Trace};
use tracelogic_synth::delays::{late_rank, run, Op, Program};

fn waits(trace: &Trace) -> WaitReport {
    wait_states(trace, &Selection::all())
}

fn program(ranks: Vec<Vec<Op>>) -> Program {
    Program {
        ranks,
        overhead_ns: 10,
        latency_ns: 50,
        slow_links: vec![],
    }
}

/// Asserts `got` equals `want` (seconds) to the nanosecond.
fn eq(got: f64, want_ns: u64, what: &str) {
    assert!(
        (got - want_ns as f64 * 1e-9).abs() < 0.5e-9,
        "{what}: {got} s, want {want_ns} ns"
    );
}

fn only(w: &Waits, field: &str, want_ns: u64) {
    let all = [
        ("late_sender", w.late_sender_s),
        ("late_receiver", w.late_receiver_s),
        ("wait_nxn", w.wait_nxn_s),
        ("wait_barrier", w.wait_barrier_s),
        ("late_broadcast", w.late_broadcast_s),
        ("early_reduce", w.early_reduce_s),
    ];
    for (name, v) in all {
        eq(v, if name == field { want_ns } else { 0 }, name);
    }
}

#[test]
fn late_sender() {
    // Both ranks leave MPI_Init at 10. Rank 0 computes 1000 and sends at 1010; rank 1 waits in
    // MPI_Recv from 10: 1000 ns of late sender, blamed on the pair 0 -> 1.
    let t = run(&program(vec![
        vec![Op::Compute(1000), Op::Send { to: 1, bytes: 8 }],
        vec![Op::Recv { from: 0, bytes: 8 }],
    ]))
    .unwrap();
    let w = waits(&t);
    only(&w.totals, "late_sender", 1000);
    only(&w.by_rank[1].waits, "late_sender", 1000);
    only(&w.by_rank[0].waits, "none", 0);
    assert_eq!(w.by_function.len(), 1);
    assert_eq!(w.by_function[0].name, "MPI_Recv");
    assert_eq!(w.by_pair.len(), 1);
    assert_eq!((w.by_pair[0].sender, w.by_pair[0].receiver), (0, 1));
    eq(w.by_pair[0].late_sender_s, 1000, "pair");
    assert_eq!(w.waiting_rows(2)[0][1], w.by_pair[0].late_sender_s);
    assert_eq!(w.clock_violations, 0);
}

#[test]
fn late_receiver_of_an_ssend() {
    // Rank 0 enters MPI_Ssend at 10; rank 1 computes 2000 and posts its receive at 2010: the
    // synchronous send waits 2000 ns. An eager MPI_Send in the same situation waits for nothing.
    let t = run(&program(vec![
        vec![Op::Ssend { to: 1, bytes: 8 }],
        vec![Op::Compute(2000), Op::Recv { from: 0, bytes: 8 }],
    ]))
    .unwrap();
    let w = waits(&t);
    only(&w.totals, "late_receiver", 2000);
    only(&w.by_rank[0].waits, "late_receiver", 2000);
    assert_eq!(w.by_function[0].name, "MPI_Ssend");
    // The waiting matrix: the sender 0 waited 2000 ns for the receiver 1.
    assert_eq!(w.by_pair.len(), 1);
    assert_eq!((w.by_pair[0].sender, w.by_pair[0].receiver), (0, 1));
    eq(w.by_pair[0].late_receiver_s, 2000, "pair");
    assert_eq!(w.by_pair[0].late_sender_s, 0.0);
    assert_eq!(w.waiting_rows(2)[0][1], w.by_pair[0].late_receiver_s);

    let eager = run(&program(vec![
        vec![Op::Send { to: 1, bytes: 8 }],
        vec![Op::Compute(2000), Op::Recv { from: 0, bytes: 8 }],
    ]))
    .unwrap();
    only(&waits(&eager).totals, "none", 0);
}

#[test]
fn late_rank_before_an_allreduce() {
    // 4 ranks, 3 iterations of compute + MPI_Allreduce; rank 2 computes 5000 ns longer. Every
    // iteration the 3 others wait 5000 ns: 45000 ns of wait at N x N, none on rank 2.
    let t = run(&late_rank(4, 3, 10_000, 2, 5_000)).unwrap();
    let w = waits(&t);
    only(&w.totals, "wait_nxn", 45_000);
    only(&w.by_rank[2].waits, "none", 0);
    for r in [0, 1, 3] {
        only(&w.by_rank[r].waits, "wait_nxn", 15_000);
    }
    assert_eq!(w.by_function.len(), 1);
    assert_eq!(w.by_function[0].name, "MPI_Allreduce");
}

#[test]
fn delayed_broadcast_root() {
    // The root computes 3000 ns before MPI_Bcast; the 3 others entered at 10 and wait 3000 each.
    let mut ranks = vec![vec![Op::Compute(3000), Op::Bcast { root: 0, bytes: 64 }]];
    ranks.extend((1..4).map(|_| vec![Op::Bcast { root: 0, bytes: 64 }]));
    let w = waits(&run(&program(ranks)).unwrap());
    only(&w.totals, "late_broadcast", 9000);
    only(&w.by_rank[0].waits, "none", 0);
}

#[test]
fn early_reduce_root() {
    // The root enters MPI_Reduce at 10; ranks 1, 2, 3 compute 1000, 2000, 3000 first. Scalasca's
    // early reduce counts the time until the first sender enters: 1000 ns, on the root only.
    let mut ranks = vec![vec![Op::Reduce { root: 0, bytes: 8 }]];
    ranks.extend((1..4).map(|r| vec![Op::Compute(1000 * r), Op::Reduce { root: 0, bytes: 8 }]));
    let w = waits(&run(&program(ranks)).unwrap());
    only(&w.totals, "early_reduce", 1000);
    only(&w.by_rank[0].waits, "early_reduce", 1000);
    assert_eq!(w.by_function[0].name, "MPI_Reduce");
}

#[test]
fn late_rank_before_a_barrier() {
    // Rank 1 computes 700 ns longer than the 4 others before MPI_Barrier: 4 x 700 ns.
    let ranks = (0..5)
        .map(|r| vec![Op::Compute(100 + if r == 1 { 700 } else { 0 }), Op::Barrier])
        .collect();
    let w = waits(&run(&program(ranks)).unwrap());
    only(&w.totals, "wait_barrier", 2800);
    only(&w.by_rank[1].waits, "none", 0);
}

#[test]
fn a_slow_link_is_no_wait_state() {
    // A ring of sends then receives; the link 0 -> 1 takes 4000 ns longer. Every send is
    // entered before its receive, so no receive waits for a late sender: the slow transfer is
    // communication time, not a wait state.
    let mut p = program(
        (0..4u32)
            .map(|r| {
                vec![
                    Op::Send {
                        to: (r + 1) % 4,
                        bytes: 8,
                    },
                    Op::Recv {
                        from: (r + 3) % 4,
                        bytes: 8,
                    },
                ]
            })
            .collect(),
    );
    p.slow_links = vec![(0, 1, 4000)];
    let t = run(&p).unwrap();
    // Rank 1's receive lasts latency + 4000 + overhead after the send (entered at 10).
    let c = &t.ranks[1].calls;
    assert_eq!(c.exit(2), 10 + 50 + 4000 + 10);
    only(&waits(&t).totals, "none", 0);
}

#[test]
fn waits_of_several_receives_count_the_latest_sender_once() {
    // Built by hand: rank 2 waits in one MPI_Waitall for two receives whose sends enter at 300
    // (rank 0) and 500 (rank 1); the Waitall runs [100, 600): 400 ns, blamed on rank 1.
    use tracelogic_model::{P2pDir, NO_CALLPATH};
    let mut t = Trace::new("test", "waitall", 3);
    let s0 = t.push_call(0, "MPI_Send", 300, 310, NO_CALLPATH, 0);
    t.push_p2p(0, s0, s0, P2pDir::Send, 2, 0, 0, 8);
    let s1 = t.push_call(1, "MPI_Send", 500, 510, NO_CALLPATH, 0);
    t.push_p2p(1, s1, s1, P2pDir::Send, 2, 0, 0, 8);
    let a = t.push_call(2, "MPI_Irecv", 0, 5, NO_CALLPATH, 0);
    let b = t.push_call(2, "MPI_Irecv", 5, 10, NO_CALLPATH, 0);
    let w = t.push_call(2, "MPI_Waitall", 100, 600, NO_CALLPATH, 0);
    t.push_p2p(2, a, w, P2pDir::Recv, 0, 0, 0, 8);
    t.push_p2p(2, b, w, P2pDir::Recv, 1, 0, 0, 8);
    let r = waits(&t);
    only(&r.totals, "late_sender", 400);
    assert_eq!(r.by_pair.len(), 1);
    assert_eq!((r.by_pair[0].sender, r.by_pair[0].receiver), (1, 2));
    assert_eq!(r.by_function[0].name, "MPI_Waitall");
}

#[test]
fn sstmacro_test_trace_by_hand() {
    // tests/data/samples/sstmacro-dumpi-testtrace/expected/testtrace-000N.dumpi2ascii.txt, times
    // in µs after 1296777956.73 s:
    //   MPI_Barrier enters: r0 7712, r1 9594, r2 8133, r3 8376 (exits 9659..9744), so
    //     r0 waits 1882, r2 1461, r3 1218 for r1: 4561 µs.
    //   Ring Isend r -> r+1, then MPI_Recv from r-1: r0 enters its Recv at 9699, r3's Isend at
    //     9754: 55 µs; r2 at 9700 for r1's Isend at 9744: 44 µs; r1, r3 receive sends posted
    //     before. The Isends' MPI_Wait all start after their receive was posted: no late
    //     receiver.
    //   MPI_Allreduce enters: r0 9909, r1 9810, r2 9908, r3 9817: 0 + 99 + 1 + 92 = 192 µs.
    let t = common::sample("sstmacro-dumpi-testtrace");
    let w = waits(&t);
    let us = 1000;
    eq(w.totals.wait_barrier_s, 4561 * us, "barrier");
    eq(w.totals.late_sender_s, 99 * us, "late sender");
    eq(w.totals.wait_nxn_s, 192 * us, "n x n");
    for f in [
        w.totals.late_receiver_s,
        w.totals.late_broadcast_s,
        w.totals.early_reduce_s,
    ] {
        eq(f, 0, "others");
    }
    let barrier = [1882, 0, 1461, 1218];
    let nxn = [0, 99, 1, 92];
    let ls = [55, 0, 44, 0];
    for r in 0..4 {
        eq(w.by_rank[r].waits.wait_barrier_s, barrier[r] * us, "barrier by rank");
        eq(w.by_rank[r].waits.wait_nxn_s, nxn[r] * us, "nxn by rank");
        eq(w.by_rank[r].waits.late_sender_s, ls[r] * us, "late sender by rank");
    }
    let pairs: Vec<(u32, u32, f64)> = w
        .by_pair
        .iter()
        .map(|p| (p.sender, p.receiver, p.late_sender_s))
        .collect();
    assert_eq!(pairs.len(), 2);
    assert_eq!((pairs[0].0, pairs[0].1), (1, 2));
    eq(pairs[0].2, 44 * us, "1 -> 2");
    assert_eq!((pairs[1].0, pairs[1].1), (3, 0));
    eq(pairs[1].2, 55 * us, "3 -> 0");
    // JSON: the totals' fields at the top level, per rank, per function, per pair.
    let json = serde_json::to_value(&w).unwrap();
    for k in [
        "late_sender_s",
        "late_receiver_s",
        "wait_nxn_s",
        "wait_barrier_s",
        "late_broadcast_s",
        "early_reduce_s",
        "by_rank",
        "by_function",
        "by_pair",
    ] {
        assert!(json.get(k).is_some(), "{k} missing in {json}");
    }
    assert!(json["by_rank"][0].get("rank").is_some() && json["by_rank"][0].get("wait_nxn_s").is_some());
    let back: WaitReport = serde_json::from_value(json).unwrap();
    assert_eq!(back, w);
}

#[test]
fn selection_of_a_time_window() {
    // The late-rank program cut to its first iteration (times before the second allreduce).
    let t = run(&late_rank(4, 3, 10_000, 2, 5_000)).unwrap();
    let first_exit = t.ranks[0].calls.exit(1);
    let sel = Selection {
        to: Some(first_exit),
        ..Selection::default()
    };
    only(&wait_states(&t, &sel).totals, "wait_nxn", 15_000);
}

#[test]
fn renumbering_the_ranks_permutes_the_waits() {
    let t = common::sample("sstmacro-dumpi-testtrace");
    let perm = [2u32, 3, 0, 1];
    let a = waits(&t);
    let b = waits(&t.renumber_ranks(&perm).unwrap());
    assert_eq!(a.totals, b.totals);
    for r in &a.by_rank {
        assert_eq!(r.waits, b.by_rank[perm[r.rank as usize] as usize].waits);
    }
    let mut pairs: Vec<(u32, u32, f64)> = a
        .by_pair
        .iter()
        .map(|p| (perm[p.sender as usize], perm[p.receiver as usize], p.late_sender_s))
        .collect();
    pairs.sort_by_key(|p| (p.0, p.1));
    let got: Vec<(u32, u32, f64)> = b
        .by_pair
        .iter()
        .map(|p| (p.sender, p.receiver, p.late_sender_s))
        .collect();
    assert_eq!(got, pairs);
}

#[test]
fn empty_trace() {
    let w = waits(&Trace::new("test", "empty", 0));
    assert_eq!(w, WaitReport::default());
    let t = Trace::new("test", "no calls", 3);
    let w = waits(&t);
    assert_eq!(w.by_rank.len(), 3);
    assert_eq!(w.totals.total_s(), 0.0);
    let p = tracelogic_analysis::profile::profile(&t, &Selection::all(), &Default::default());
    assert!(p.functions.is_empty() && p.compute_s == vec![0.0; 3]);
    let i = tracelogic_analysis::imbalance::imbalance(&t, &Selection::all());
    assert!(i.by_rank.is_empty() && i.ratio == 0.0 && i.late_ranks.is_empty());
}

fn text_trace(text: &str) -> Trace {
    tracelogic_formats::read_trace(vec![tracelogic_formats::InputFile::new("poll.txt", text)]).unwrap()
}

#[test]
fn waiting_by_polling_is_measured_apart_from_the_wait_states() {
    // RayPlatform's loop: rank 1 asks MPI_Iprobe every 2 us from 1 us on while rank 0 computes,
    // and receives at 9 us what its last probe found. The receive never blocks (the send began
    // at 8 us): no late sender, no wait state at all. The polling is the four probes' 4 x 500 ns
    // and rank 0's first MPI_Test (300 ns), which finds its Isend unfinished; its second test
    // completes the Isend (not polling).
    let t = text_trace(
        "#tracelogic-text 1\nranks 2\n\
         0 0 1us MPI_Init\n1 0 1us MPI_Init\n\
         0 8us +100ns MPI_Isend send=1 tag=0 bytes=8 req=1\n\
         0 9us +300ns MPI_Test\n\
         0 10us +200ns MPI_Test wait=1\n\
         1 1us +500ns MPI_Iprobe\n1 3us +500ns MPI_Iprobe\n1 5us +500ns MPI_Iprobe\n1 8.5us +500ns MPI_Iprobe\n\
         1 9us +100ns MPI_Recv recv=0 tag=0 bytes=8\n\
         0 11us 12us MPI_Finalize\n1 11us 12us MPI_Finalize\n",
    );
    only(&waits(&t).totals, "none", 0);
    let p = polling(&t);
    assert_eq!(p.calls, 5);
    eq(p.seconds, 2300, "polling");
    assert_eq!(p.by_rank.len(), 2);
    eq(p.by_rank[0], 300, "rank 0");
    eq(p.by_rank[1], 2000, "rank 1");

    // A test on a rank with a non-blocking collective may complete that collective (the model
    // records no such completion): not counted; the probe still is.
    let t = text_trace(
        "#tracelogic-text 1\nranks 1\n\
         0 0 1us MPI_Iallreduce coll=Allreduce bytes=8\n\
         0 2us +400ns MPI_Test\n\
         0 3us +50ns MPI_Iprobe\n",
    );
    let p = polling(&t);
    assert_eq!(p.calls, 1);
    eq(p.seconds, 50, "probe only");
    assert_eq!(polling(&Trace::new("test", "no calls", 2)).by_rank, vec![0.0; 2]);

    // ABySS's loop: a receive posted at 1 us, asked with MPI_Request_get_status (which never
    // completes the request) until it has arrived, then completed by MPI_Test. The three asks
    // (3 x 400 ns) are polling; the test that completed the receive is not.
    let t = text_trace(
        "#tracelogic-text 1\nranks 2\n\
         0 8us +100ns MPI_Send send=1 tag=0 bytes=8\n\
         1 1us +100ns MPI_Irecv recv=0 tag=0 bytes=8 req=1\n\
         1 3us +400ns MPI_Request_get_status\n1 5us +400ns MPI_Request_get_status\n\
         1 8.5us +400ns MPI_Request_get_status\n1 9us +100ns MPI_Test wait=1\n",
    );
    only(&waits(&t).totals, "none", 0);
    let p = polling(&t);
    assert_eq!(p.calls, 3);
    eq(p.seconds, 1200, "MPI_Request_get_status");
    eq(p.by_rank[1], 1200, "rank 1");

    // MPI_Test_cancelled reads a status and tests no request: not polling.
    let t = text_trace("#tracelogic-text 1\nranks 1\n0 0 +700ns MPI_Test_cancelled\n0 1us +50ns MPI_Iprobe\n");
    let p = polling(&t);
    assert_eq!(p.calls, 1);
    eq(p.seconds, 50, "probe only");
}

#[test]
fn a_blocking_probe_waits_for_a_late_sender() {
    // Rank 1 probes for rank 0's message from 1 us; rank 0 sends at 8 us, the probe returns at
    // 8.5 us, and the receive (after sizing its buffer) returns at once: the 7 us in MPI_Probe
    // are a late sender, on the probe. Then a probe returns at once (finding an earlier
    // message, say) and the receive after it waits 400 ns for a send at 9.5 us: the receive
    // keeps its own wait.
    let t = text_trace(
        "#tracelogic-text 1\nranks 2\n0 0 1us MPI_Init\n1 0 1us MPI_Init\n\
         0 8us +100ns MPI_Send send=1 tag=0 bytes=8\n\
         1 1us 8.5us MPI_Probe\n1 8.6us +100ns MPI_Get_count\n\
         1 8.8us +100ns MPI_Recv recv=0 tag=0 bytes=8\n\
         0 9.5us +100ns MPI_Send send=1 tag=0 bytes=8\n\
         1 9us +50ns MPI_Probe\n1 9.1us 9.7us MPI_Recv recv=0 tag=0 bytes=8\n",
    );
    let w = waits(&t);
    only(&w.totals, "late_sender", 7400);
    let in_fn = |name: &str| {
        w.by_function
            .iter()
            .find(|f| f.name == name)
            .map(|f| f.waits.late_sender_s)
    };
    eq(in_fn("MPI_Probe").unwrap_or(0.0), 7000, "in MPI_Probe");
    eq(in_fn("MPI_Recv").unwrap_or(0.0), 400, "in MPI_Recv");
    assert_eq!(w.by_pair.len(), 1);
    eq(w.by_pair[0].late_sender_s, 7400, "pair 0 -> 1");
}
