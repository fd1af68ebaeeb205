//! The critical path against values computed by hand (programs with planted delays under the
//! clock model of `tracelogic_synth::delays`, and the SST/macro DUMPI test trace read off its
//! dumpi2ascii dump), and its gains against a brute force: for every rank, petgraph's
//! topological order and a longest path over the whole graph with that rank's computation on
//! the path set to 0.

mod common;

use petgraph::graph::{DiGraph, NodeIndex};
use tracelogic_analysis::critical_path::{critical_path, critical_path_matched, CriticalPath, HappensBefore};
use tracelogic_analysis::summary::summarize;
use tracelogic_model::{match_messages, Selection, Trace};
use tracelogic_synth::delays::{late_rank, run, Op, Program};

fn eq(got: f64, want_ns: u64, what: &str) {
    assert!(
        (got - want_ns as f64 * 1e-9).abs() < 0.5e-9,
        "{what}: {got} s, want {want_ns} ns"
    );
}

fn share(got: f64, num: u64, den: u64, what: &str) {
    assert!(
        (got - num as f64 / den as f64).abs() < 1e-12,
        "{what}: {got}, want {num}/{den}"
    );
}

/// Longest path from the source (node 0) to the sink (node 1) by brute force: the graph's
/// edges in a petgraph DiGraph, on-path computation of `zero` set to 0, toposort, relaxation.
fn brute_length(g: &HappensBefore, zero: Option<u32>) -> u64 {
    let mut pg: DiGraph<(), u64> = DiGraph::new();
    let nodes: Vec<NodeIndex> = (0..g.node_count()).map(|_| pg.add_node(())).collect();
    for (e, on_path) in g.edges() {
        let w = if on_path && e.compute_of.is_some() && e.compute_of == zero {
            0
        } else {
            e.weight_ns
        };
        pg.add_edge(nodes[e.from as usize], nodes[e.to as usize], w);
    }
    let order = petgraph::algo::toposort(&pg, None).expect("a DAG");
    let mut dist: Vec<Option<u64>> = vec![None; pg.node_count()];
    dist[0] = Some(0);
    for v in order {
        let Some(d) = dist[v.index()] else { continue };
        for e in pg.edges(v) {
            use petgraph::visit::EdgeRef;
            let t = e.target().index();
            let nd = d + *e.weight();
            if dist[t].is_none_or(|x| x < nd) {
                dist[t] = Some(nd);
            }
        }
    }
    dist[1].expect("the sink is reached")
}

/// Checks length and every rank's gain against the brute force, and that the shares add up.
fn check_against_brute_force(trace: &Trace, what: &str) -> CriticalPath {
    let matching = match_messages(trace);
    let g = HappensBefore::build(trace, &matching).unwrap();
    let cp = critical_path_matched(trace, &matching).unwrap();
    let full = brute_length(&g, None);
    assert_eq!(g.length_ns(), full, "{what}: length");
    eq(cp.length_s, full, what);
    for r in &cp.by_rank {
        let without = brute_length(&g, Some(r.rank));
        let gain = r
            .gain_s
            .unwrap_or_else(|| panic!("{what}: no gain for rank {}", r.rank));
        eq(gain, full - without, &format!("{what}: gain of rank {}", r.rank));
    }
    let total: f64 = cp.by_rank.iter().map(|r| r.share).sum();
    assert!((total - 1.0).abs() < 1e-9, "{what}: shares add to {total}");
    // Segments are contiguous and cover the path.
    let mut t = 0.0;
    for s in &cp.segments {
        assert!((s.start_s - t).abs() < 1e-12, "{what}: gap before {s:?}");
        assert!(s.end_s > s.start_s);
        t = s.end_s;
    }
    assert!((t - cp.length_s).abs() < 1e-12, "{what}: the segments end at {t}");
    cp
}

#[test]
fn late_rank_is_on_the_path_and_its_computation_is_the_gain() {
    // 4 ranks, 3 iterations of 10000 ns of compute (rank 2: 15000) + MPI_Allreduce, overhead
    // 1000: MPI_Init [0, 1000), allreduces entered by rank 2 at 16000, 32000, 48000 and left
    // 1000 later by all, MPI_Finalize [49000, 50000). The path: rank 2's MPI_Init and its three
    // computations and first two allreduces (48000 ns), then the last allreduce and
    // MPI_Finalize on rank 0 (the lowest rank ending last). Without rank 2's computation on the
    // path, the others' 10000 ns set the pace: 3 x 5000 ns shorter.
    let t = run(&late_rank(4, 3, 10_000, 2, 5_000)).unwrap();
    let cp = check_against_brute_force(&t, "late rank");
    eq(cp.length_s, 50_000, "length");
    share(cp.by_rank[2].share, 48_000, 50_000, "rank 2");
    share(cp.by_rank[0].share, 2_000, 50_000, "rank 0");
    eq(cp.by_rank[2].gain_s.unwrap(), 15_000, "gain of rank 2");
    for r in [0, 1, 3] {
        eq(cp.by_rank[r].gain_s.unwrap(), 0, "gain of the others");
    }
    let f: Vec<(&str, f64)> = cp.by_function.iter().map(|f| (f.name.as_str(), f.share)).collect();
    assert_eq!(f.len(), 3);
    assert_eq!(f[0].0, "MPI_Allreduce");
    share(f[0].1, 3_000, 50_000, "allreduce");
    let kinds: Vec<(u32, &str, u64, u64)> = cp
        .segments
        .iter()
        .map(|s| {
            (
                s.rank,
                s.kind.as_str(),
                (s.start_s * 1e9).round() as u64,
                (s.end_s * 1e9).round() as u64,
            )
        })
        .collect();
    assert_eq!(
        kinds,
        vec![
            (2, "MPI_Init", 0, 1000),
            (2, "compute", 1000, 16000),
            (2, "MPI_Allreduce", 16000, 17000),
            (2, "compute", 17000, 32000),
            (2, "MPI_Allreduce", 32000, 33000),
            (2, "compute", 33000, 48000),
            (0, "MPI_Allreduce", 48000, 49000),
            (0, "MPI_Finalize", 49000, 50000),
        ]
    );
}

#[test]
fn late_receiver_of_an_ssend_puts_the_receiver_on_the_path() {
    // Overhead 10: rank 0's MPI_Ssend [10, 2020) waits for rank 1, which computes 2000 ns
    // and posts its receive at 2010; both finalize [2020, 2030). The path: rank 1's MPI_Init
    // and computation (2010 ns), the Ssend's last 10 ns and MPI_Finalize on rank 0.
    let p = Program {
        ranks: vec![
            vec![Op::Ssend { to: 1, bytes: 8 }],
            vec![Op::Compute(2000), Op::Recv { from: 0, bytes: 8 }],
        ],
        overhead_ns: 10,
        latency_ns: 50,
        slow_links: vec![],
    };
    let cp = check_against_brute_force(&run(&p).unwrap(), "ssend");
    eq(cp.length_s, 2030, "length");
    share(cp.by_rank[1].share, 2010, 2030, "rank 1");
    eq(cp.by_rank[1].gain_s.unwrap(), 2000, "gain of rank 1");
    assert!(cp.by_function.iter().any(|f| f.name == "MPI_Ssend"));
}

#[test]
fn a_slow_link_shows_as_the_receive_on_the_path() {
    // A ring of MPI_Send then MPI_Recv, the link 0 -> 1 4000 ns slower (latency 50, overhead
    // 10): rank 1's MPI_Recv [20, 4070) is the path's bulk; no computation is on it.
    let mut p = Program {
        ranks: (0..4u32)
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
        overhead_ns: 10,
        latency_ns: 50,
        slow_links: vec![(0, 1, 4000)],
    };
    let cp = check_against_brute_force(&run(&p).unwrap(), "slow link");
    eq(cp.length_s, 4080, "length");
    assert_eq!(cp.by_function[0].name, "MPI_Recv");
    share(cp.by_function[0].share, 4050, 4080, "MPI_Recv");
    assert!(cp.by_rank.iter().all(|r| r.gain_s == Some(0.0)));
    share(cp.by_rank[1].share, 4070, 4080, "rank 1");
    // Without the slow link the path is no longer in MPI_Recv for long.
    p.slow_links.clear();
    let fast = critical_path(&run(&p).unwrap(), &Selection::all()).unwrap();
    eq(fast.length_s, 80, "no slow link");
}

#[test]
fn sstmacro_test_trace_by_hand() {
    // tests/data/samples/sstmacro-dumpi-testtrace/expected, times in µs after
    // 1296777956.73 s (trace start: rank 0's MPI_Init at 7669; end: rank 3's MPI_Finalize exit
    // at 13226, i.e. .743226). Backwards from the end: rank 3's MPI_Finalize [10007, 13226)
    // and the computation before it (7), its MPI_Allreduce after the last arrival, rank 0 at
    // 9909 (91); rank 0's computation (15), MPI_Wait [9888, 9894) (6), computation (8), and
    // its MPI_Recv after rank 3's Isend entered at 9754 (126); rank 3's computation (10) and
    // MPI_Barrier after the last arrival, rank 1 at 9594 (150); rank 1's computation (5),
    // MPI_Comm_size (1), computation (5), MPI_Comm_rank (3), computation (17), MPI_Init (2)
    // and its late start (9561 - 7669 = 1892). Length 5557 µs; rank 1 1925, rank 3 3477,
    // rank 0 155, rank 2 0.
    let t = common::sample("sstmacro-dumpi-testtrace");
    let cp = check_against_brute_force(&t, "testtrace");
    let us = 1000;
    eq(cp.length_s, 5557 * us, "length");
    for (r, on) in [(0, 155), (1, 1925), (2, 0), (3, 3477)] {
        share(cp.by_rank[r].share, on, 5557, &format!("rank {r}"));
    }
    let want = [
        ("MPI_Finalize", 3219),
        ("MPI_Barrier", 150),
        ("MPI_Recv", 126),
        ("MPI_Allreduce", 91),
        ("MPI_Wait", 6),
        ("MPI_Comm_rank", 3),
        ("MPI_Init", 2),
        ("MPI_Comm_size", 1),
    ];
    assert_eq!(cp.by_function.len(), want.len(), "{:?}", cp.by_function);
    for (f, (name, on)) in cp.by_function.iter().zip(want) {
        assert_eq!(f.name, name);
        share(f.share, on, 5557, name);
    }
    let json = serde_json::to_value(&cp).unwrap();
    for k in ["length_s", "by_rank", "by_function", "segments"] {
        assert!(json.get(k).is_some(), "{k}");
    }
    for k in ["rank", "share", "gain_s"] {
        assert!(json["by_rank"][0].get(k).is_some(), "{k}");
    }
    for k in ["rank", "start_s", "end_s", "kind"] {
        assert!(json["segments"][0].get(k).is_some(), "{k}");
    }
    assert_eq!(serde_json::from_value::<CriticalPath>(json).unwrap(), cp);
}

#[test]
fn gains_equal_the_brute_force_on_real_samples() {
    for name in [
        "sstmacro-dumpi-testbgp",
        "npb-lu.S.8",
        "npb-mg.S.8",
        "pipit-ping-pong-otf2",
    ] {
        let t = common::sample(name);
        let cp = check_against_brute_force(&t, name);
        assert!(cp.length_s > 0.0, "{name}");
    }
}

#[test]
fn gains_equal_the_brute_force_on_mixed_programs() {
    // Deterministic pseudo-random programs: rounds of compute, ring exchanges (eager and
    // synchronous), broadcasts, reduces and barriers, with one slow link.
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = |m: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % m
    };
    let (mut ran, mut gained) = (0, 0);
    for case in 0..20 {
        let n = 2 + (case % 5) as u32;
        let mut ranks: Vec<Vec<Op>> = vec![Vec::new(); n as usize];
        for _ in 0..6 {
            for ops in ranks.iter_mut() {
                ops.push(Op::Compute(100 + next(5000)));
            }
            match next(5) {
                0 | 1 => {
                    let sync = next(2) == 0;
                    for r in 0..n {
                        let to = (r + 1) % n;
                        let from = (r + n - 1) % n;
                        // Even ranks send first, odd ranks receive first: no deadlock with Ssend.
                        let send = if sync {
                            Op::Ssend { to, bytes: 64 }
                        } else {
                            Op::Send { to, bytes: 64 }
                        };
                        let recv = Op::Recv { from, bytes: 64 };
                        let ops = &mut ranks[r as usize];
                        if r % 2 == 0 {
                            ops.extend([send, recv]);
                        } else {
                            ops.extend([recv, send]);
                        }
                    }
                }
                2 => {
                    let root = next(n as u64) as u32;
                    ranks.iter_mut().for_each(|o| o.push(Op::Bcast { root, bytes: 8 }));
                }
                3 => {
                    let root = next(n as u64) as u32;
                    ranks.iter_mut().for_each(|o| o.push(Op::Reduce { root, bytes: 8 }));
                }
                _ => ranks.iter_mut().for_each(|o| o.push(Op::Barrier)),
            }
        }
        let p = Program {
            ranks,
            overhead_ns: 1 + next(50),
            latency_ns: next(500),
            slow_links: vec![(0, 1 % n, next(3000))],
        };
        let Ok(t) = run(&p) else { continue }; // an odd ring of Ssends may deadlock
        let cp = check_against_brute_force(&t, &format!("case {case}"));
        ran += 1;
        gained += cp.by_rank.iter().filter(|r| r.gain_s.is_some_and(|g| g > 0.0)).count();
    }
    assert!(ran >= 15 && gained >= 15, "{ran} programs ran, {gained} ranks gained");
}

#[test]
fn dependencies_against_program_order_are_an_error() {
    // Both ranks receive before they send (a deadlock in a real run): each receive depends on
    // a send that comes after the other's receive. A cycle, reported, not a panic.
    use tracelogic_model::{P2pDir, NO_CALLPATH};
    let mut t = Trace::new("test", "cycle", 2);
    for r in 0..2u32 {
        let a = t.push_call(r, "MPI_Recv", 0, 10, NO_CALLPATH, 0);
        t.push_p2p(r, a, a, P2pDir::Recv, 1 - r, 0, 0, 8);
        let b = t.push_call(r, "MPI_Send", 20, 30, NO_CALLPATH, 0);
        t.push_p2p(r, b, b, P2pDir::Send, 1 - r, 0, 0, 8);
    }
    let err = critical_path(&t, &Selection::all()).unwrap_err();
    assert!(err.contains("cycle"), "{err}");
}

/// Rank 0's calls come from two threads; rank 1 has one. `overlap`: as DUMPI records PT-Scotch's
/// `dgord` (MPI_THREAD_MULTIPLE), thread 1's send enters while thread 0's receive waits, and
/// the two ranks' receives wait for each other's sends — read as one sequence per rank, a false
/// cycle. Else the threads take turns (thread 0 sends, then thread 1 receives) and rank 1
/// receives then replies: one program order, 50 ns long.
fn two_threads_on_rank_0(overlap: bool) -> Trace {
    use tracelogic_model::{Location, P2pDir, NO_CALLPATH};
    let mut t = Trace::new("test", "threads", 2);
    t.ranks[0].locations = (0..2)
        .map(|id| Location {
            id,
            name: format!("thread {id}"),
        })
        .collect();
    let call = |t: &mut Trace, r: u32, f: &str, at: (u64, u64), thread: u16, dir: P2pDir, tag: i32| {
        let c = t.push_call(r, f, at.0, at.1, NO_CALLPATH, thread);
        t.push_p2p(r, c, c, dir, 1 - r, tag, 0, 8);
    };
    if overlap {
        call(&mut t, 0, "MPI_Recv", (0, 100), 0, P2pDir::Recv, 0);
        call(&mut t, 0, "MPI_Send", (10, 20), 1, P2pDir::Send, 1);
        call(&mut t, 1, "MPI_Recv", (0, 25), 0, P2pDir::Recv, 1);
        call(&mut t, 1, "MPI_Send", (30, 35), 0, P2pDir::Send, 0);
    } else {
        call(&mut t, 0, "MPI_Send", (0, 10), 0, P2pDir::Send, 1);
        call(&mut t, 0, "MPI_Recv", (20, 50), 1, P2pDir::Recv, 0);
        call(&mut t, 1, "MPI_Recv", (0, 15), 0, P2pDir::Recv, 1);
        call(&mut t, 1, "MPI_Send", (25, 30), 0, P2pDir::Send, 0);
    }
    t
}

#[test]
fn calls_of_concurrent_threads_are_named_not_a_cycle() {
    let err = critical_path(&two_threads_on_rank_0(true), &Selection::all()).unwrap_err();
    assert!(
        err.contains("rank 0") && err.contains("2 threads") && err.contains("1 of its 2 calls"),
        "{err}"
    );
    // The summary says so.
    let named = |t: &Trace| {
        summarize(t, &match_messages(t))
            .threads
            .is_some_and(|w| w.contains("2 threads at once"))
    };
    assert!(named(&two_threads_on_rank_0(true)));
    // Threads taking turns are one program order: the path as for one thread, nothing said.
    let t = two_threads_on_rank_0(false);
    eq(critical_path(&t, &Selection::all()).unwrap().length_s, 50, "length");
    assert!(!named(&t));
}

/// StarPU (held-out `stencil5`): its progress thread communicates while the application
/// thread asks `MPI_Comm_rank` and `MPI_Comm_size`, overlapping the progress thread's calls.
/// Local questions reorder nothing: the turns trace above with such calls from thread 1 during
/// thread 0's send and receive is still one program order (nothing said, the same path); a
/// send from thread 1 during the receive is not.
#[test]
fn local_questions_from_another_thread_keep_one_program_order() {
    use tracelogic_model::{P2pDir, NO_CALLPATH};
    let named = |t: &Trace| summarize(t, &match_messages(t)).threads;
    let mut t = two_threads_on_rank_0(false);
    t.push_call(0, "MPI_Comm_rank", 2, 4, NO_CALLPATH, 1);
    t.push_call(0, "MPI_Comm_size", 30, 31, NO_CALLPATH, 0);
    t.push_call(0, "PMPI_Wtime", 40, 41, NO_CALLPATH, 0);
    assert_eq!(named(&t), None);
    eq(critical_path(&t, &Selection::all()).unwrap().length_s, 50, "length");
    let c = t.push_call(0, "MPI_Send", 42, 44, NO_CALLPATH, 0);
    t.push_p2p(0, c, c, P2pDir::Send, 1, 9, 0, 8);
    assert!(
        named(&t).is_some_and(|w| w.contains("2 threads at once")),
        "{:?}",
        named(&t)
    );
}

#[test]
fn empty_traces_and_ranks_without_calls() {
    let cp = critical_path(&Trace::new("test", "empty", 0), &Selection::all()).unwrap();
    assert_eq!(cp.length_s, 0.0);
    assert!(cp.segments.is_empty() && cp.by_rank.is_empty());
    // Rank 1 records nothing.
    let mut t = Trace::new("test", "idle rank", 2);
    t.push_call(0, "MPI_Init", 0, 10, tracelogic_model::NO_CALLPATH, 0);
    let cp = critical_path(&t, &Selection::all()).unwrap();
    eq(cp.length_s, 10, "length");
    assert_eq!(cp.by_rank[1].share, 0.0);
    assert_eq!(cp.by_rank[1].gain_s, Some(0.0));
}

#[test]
fn renumbering_the_ranks_permutes_the_path() {
    let t = run(&late_rank(4, 3, 10_000, 2, 5_000)).unwrap();
    let perm = [3u32, 0, 1, 2]; // old rank r becomes perm[r]
    let renumbered = t.renumber_ranks(&perm).unwrap();
    let a = critical_path(&t, &Selection::all()).unwrap();
    let b = critical_path(&renumbered, &Selection::all()).unwrap();
    assert_eq!(a.length_s, b.length_s);
    // Gains do not depend on the numbering; shares do only where equal-length paths tie (the
    // last 2 µs after the final allreduce, which every rank ends together: the lowest rank).
    for r in &a.by_rank {
        let s = &b.by_rank[perm[r.rank as usize] as usize];
        assert_eq!(r.gain_s, s.gain_s, "rank {}", r.rank);
    }
    assert_eq!(a.by_rank[2].share, b.by_rank[perm[2] as usize].share);
    assert!((b.by_rank[0].share - 0.04).abs() < 1e-12); // old rank 1, now the lowest
}

/// A ping-pong whose first message crosses the start of the window (times in ns):
/// rank 0: Send m1 [100, 110], Recv r1 [200, 260], Send m2 [300, 310], Recv r2 [400, 460];
/// rank 1: Recv m1 [150, 160], Send r1 [250, 255], Recv m2 [350, 360], Send r2 [450, 455];
/// both ranks span [100, 500].
fn ping_pong_across_the_window() -> Trace {
    use tracelogic_model::{P2pDir, NO_CALLPATH};
    let mut t = Trace::new("test", "ping-pong", 2);
    let ops: [&[(&str, u64, u64, P2pDir)]; 2] = [
        &[
            ("MPI_Send", 100, 110, P2pDir::Send),
            ("MPI_Recv", 200, 260, P2pDir::Recv),
            ("MPI_Send", 300, 310, P2pDir::Send),
            ("MPI_Recv", 400, 460, P2pDir::Recv),
        ],
        &[
            ("MPI_Recv", 150, 160, P2pDir::Recv),
            ("MPI_Send", 250, 255, P2pDir::Send),
            ("MPI_Recv", 350, 360, P2pDir::Recv),
            ("MPI_Send", 450, 455, P2pDir::Send),
        ],
    ];
    for (r, list) in ops.iter().enumerate() {
        let r = r as u32;
        for &(f, a, b, dir) in list.iter() {
            let c = t.push_call(r, f, a, b, NO_CALLPATH, 0);
            t.push_p2p(r, c, c, dir, 1 - r, 0, 0, 8);
        }
        t.ranks[r as usize].extend_span(100, 500);
    }
    t
}

/// Regression: a time window that cuts a message (its send entered before `from`, its receive
/// after) used to be matched again on what was left, pairing the receive of m1 with the send of
/// m2 — a receive depending on a send after its own rank's reply: "the trace's dependencies form
/// a cycle". The window keeps the recorded pairs instead; the path is read off the timestamps
/// by hand: from the window's start (120) rank 1 computes to 150, receives m1 (unmatched in the
/// window: no wait) to 160, computes to 250, sends r1 to 255, computes to 350, receives m2 to
/// 360, computes to 450 and sends r2, which rank 0's receive waited for: its active part 450–460
/// and the computation to the end at 500. 380 ns, 330 on rank 1 and 50 on rank 0.
#[test]
fn a_window_cutting_a_message_keeps_the_recorded_pairs() {
    let t = ping_pong_across_the_window();
    let whole = critical_path(&t, &Selection::all()).unwrap();
    eq(whole.length_s, 400, "whole run");
    let window = Selection {
        from: Some(120),
        ..Selection::default()
    };
    // The old way (matching the window again) pairs Recv m1 with Send m2: a cycle.
    let restricted = t.restrict(&window);
    let err = critical_path_matched(&restricted, &match_messages(&restricted)).unwrap_err();
    assert!(err.contains("cycle"), "{err}");
    let cp = critical_path(&t, &window).unwrap();
    eq(cp.length_s, 380, "window");
    share(cp.by_rank[0].share, 50, 380, "rank 0");
    share(cp.by_rank[1].share, 330, 380, "rank 1");
    let segments: Vec<(u32, u64, u64, &str)> = cp
        .segments
        .iter()
        .map(|s| {
            (
                s.rank,
                (s.start_s * 1e9).round() as u64,
                (s.end_s * 1e9).round() as u64,
                s.kind.as_str(),
            )
        })
        .collect();
    assert_eq!(
        segments,
        [
            (1, 0, 30, "compute"),
            (1, 30, 40, "MPI_Recv"),
            (1, 40, 130, "compute"),
            (1, 130, 135, "MPI_Send"),
            (1, 135, 230, "compute"),
            (1, 230, 240, "MPI_Recv"),
            (1, 240, 330, "compute"),
            (0, 330, 340, "MPI_Recv"),
            (0, 340, 380, "compute"),
        ]
    );
    // The wait states of the window: rank 0 waited 50 ns for r1 (200 → 250) and 50 ns for r2
    // (400 → 450); Recv m1 has no sender in the window, so no wait and no clock violation.
    let w = tracelogic_analysis::waits::wait_states(&t, &window);
    eq(w.totals.late_sender_s, 100, "late sender");
    assert_eq!(w.clock_violations, 0);
    // And the gains still equal the brute force on the projected pairing.
    let matching = t.restrict_matching(&match_messages(&t), &window);
    let g = HappensBefore::build(&restricted, &matching).unwrap();
    assert_eq!(brute_length(&g, None), 380);
}

/// Regression: a broadcast whose root entered before the window keeps only non-root members in
/// it; the instance needs nobody and used to be never reached (the ranks waiting for it stuck:
/// "cycle"). It is ready from the start: rank 1's broadcast waits for nothing.
#[test]
fn a_collective_whose_root_the_window_cut_off_waits_for_nothing() {
    use tracelogic_model::{CollectiveOp, NO_CALLPATH};
    let mut t = Trace::new("test", "bcast", 2);
    let a = t.push_call(0, "MPI_Bcast", 100, 110, NO_CALLPATH, 0);
    t.push_collective(0, a, CollectiveOp::Bcast, 0, 0, 8, 0);
    let b = t.push_call(1, "MPI_Bcast", 130, 140, NO_CALLPATH, 0);
    t.push_collective(1, b, CollectiveOp::Bcast, 0, 0, 0, 8);
    for r in 0..2 {
        t.ranks[r].extend_span(100, 200);
    }
    let window = Selection {
        from: Some(120),
        ..Selection::default()
    };
    let cp = critical_path(&t, &window).unwrap();
    // 120 → 200 on rank 1: computation 10, the broadcast 10 (no wait), computation 60.
    eq(cp.length_s, 80, "window");
    share(cp.by_rank[1].share, 1, 1, "rank 1");
    share(cp.by_function[0].share, 10, 80, "MPI_Bcast");
}

/// On the recorded samples (consistent clocks: the whole run's path is the run's length) every
/// window now has a path, and it is the window's own length: the restricted trace's span,
/// measured from its timestamps.
#[test]
fn windows_of_the_samples_have_a_path_as_long_as_the_window() {
    for name in ["npb-lu.S.8", "npb-mg.S.8", "npb-bt.S.9", "sstmacro-dumpi-testbgp"] {
        let t = common::sample(name);
        let (start, end) = t.span();
        for (from, to) in [(1, 0), (10, 0), (50, 0), (100, 0), (20, 70), (0, 50)] {
            let window = Selection {
                from: (from > 0).then(|| start + (end - start) * from / 100),
                to: (to > 0).then(|| start + (end - start) * to / 100),
                ..Selection::default()
            };
            let what = format!("{name} {from}%–{to}%");
            let cp = critical_path(&t, &window).unwrap_or_else(|e| panic!("{what}: {e}"));
            let (a, b) = t.restrict(&window).span();
            eq(cp.length_s, b - a, &what);
            let w = tracelogic_analysis::waits::wait_states(&t, &window);
            assert_eq!(w.clock_violations, 0, "{what}");
        }
    }
}

/// Longest path from the source by plain relaxation (Bellman–Ford's order-free O(V·E) sweep,
/// no topological order): every edge relaxed until nothing changes, at most V rounds.
fn relaxed_length(g: &HappensBefore, zero: Option<u32>) -> u64 {
    let edges: Vec<(usize, usize, u64)> = g
        .edges()
        .into_iter()
        .map(|(e, on_path)| {
            let removed = on_path && e.compute_of.is_some() && e.compute_of == zero;
            (e.from as usize, e.to as usize, if removed { 0 } else { e.weight_ns })
        })
        .collect();
    let mut dist: Vec<Option<u64>> = vec![None; g.node_count()];
    dist[0] = Some(0);
    for _ in 0..g.node_count() {
        let mut changed = false;
        for &(a, b, w) in &edges {
            if let Some(d) = dist[a] {
                if dist[b].is_none_or(|x| x < d + w) {
                    dist[b] = Some(d + w);
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    dist[1].expect("the sink is reached")
}

/// A random program of rounds of computation, eager or synchronous ring exchanges,
/// broadcasts, reduces, all-reduces and barriers, with a slow link.
fn random_program(seed: u64, n: u32, rounds: usize) -> Program {
    let mut seed = seed | 1;
    let mut next = |m: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % m
    };
    let mut ranks: Vec<Vec<Op>> = vec![Vec::new(); n as usize];
    for _ in 0..rounds {
        for ops in ranks.iter_mut() {
            ops.push(Op::Compute(next(4000)));
        }
        match next(6) {
            0 | 1 => {
                let sync = next(2) == 0;
                for r in 0..n {
                    let (to, from) = ((r + 1) % n, (r + n - 1) % n);
                    let send = if sync {
                        Op::Ssend { to, bytes: 64 }
                    } else {
                        Op::Send { to, bytes: 64 }
                    };
                    let recv = Op::Recv { from, bytes: 64 };
                    let ops = &mut ranks[r as usize];
                    if r % 2 == 0 {
                        ops.extend([send, recv]);
                    } else {
                        ops.extend([recv, send]);
                    }
                }
            }
            2 => {
                let root = next(n as u64) as u32;
                ranks.iter_mut().for_each(|o| o.push(Op::Bcast { root, bytes: 8 }));
            }
            3 => {
                let root = next(n as u64) as u32;
                ranks.iter_mut().for_each(|o| o.push(Op::Reduce { root, bytes: 8 }));
            }
            4 => ranks.iter_mut().for_each(|o| o.push(Op::Allreduce { bytes: 8 })),
            _ => ranks.iter_mut().for_each(|o| o.push(Op::Barrier)),
        }
    }
    Program {
        ranks,
        overhead_ns: next(40),
        latency_ns: next(400),
        slow_links: vec![(0, 1 % n, next(3000))],
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
    /// The fast length and every rank's gain equal the order-free relaxation's on small random
    /// traces, also with one rank's clock shifted (a skew: the longest path is then no longer
    /// the timestamps, and a shift that contradicts a dependency may make a cycle, refused).
    #[test]
    fn length_and_gains_equal_a_plain_relaxation(
        seed in proptest::prelude::any::<u64>(),
        n in 2u32..6,
        rounds in 1usize..8,
        skewed in 0u32..6,
        skew in 0u64..3000,
    ) {
        let Ok(mut t) = run(&random_program(seed, n, rounds)) else { return Ok(()) };
        if let Some(rt) = t.ranks.get_mut(skewed as usize) {
            rt.calls.enter.wrapping_add_all(skew);
            rt.span = rt.span.map(|(a, b)| (a + skew, b + skew));
        }
        let matching = match_messages(&t);
        let Ok(g) = HappensBefore::build(&t, &matching) else { return Ok(()) };
        let cp = critical_path_matched(&t, &matching).unwrap();
        let full = relaxed_length(&g, None);
        proptest::prop_assert_eq!(g.length_ns(), full);
        for r in &cp.by_rank {
            let without = relaxed_length(&g, Some(r.rank));
            let gain = r.gain_s.expect("every gain within the budget");
            proptest::prop_assert!(
                (gain - (full - without) as f64 * 1e-9).abs() < 0.5e-9,
                "rank {}: gain {} s, relaxation {} ns", r.rank, gain, full - without
            );
        }
    }
}

fn text_trace(text: &str) -> Trace {
    tracelogic_formats::read_trace(vec![tracelogic_formats::InputFile::new("poll.txt", text)]).unwrap()
}

/// The path's segments as (rank, start ns, end ns, kind), rounded to the ns.
fn segments(cp: &CriticalPath) -> Vec<(u32, u64, u64, String)> {
    cp.segments
        .iter()
        .map(|s| {
            let ns = |t: f64| (t * 1e9).round() as u64;
            (s.rank, ns(s.start_s), ns(s.end_s), s.kind.clone())
        })
        .collect()
}

#[test]
fn a_rank_waiting_by_polling_waits_for_the_sender() {
    // Rank 1 asks from 1 us on (RayPlatform's loop; or tests of a posted receive) while rank 0
    // computes until 8 us and then sends; the ask at 8.5-9 us finds the message. Rank 1 was
    // waiting for rank 0 all along: the path runs through rank 0's computation to its send,
    // then the ask that found it (8-9 us: from the send on), the receive, rank 1's own work
    // and its end. Without the polling rule the path stayed on rank 1 (its asks and the gaps
    // between them as computation).
    let head = "#tracelogic-text 1\nranks 2\n0 0 1us MPI_Init\n1 0 1us MPI_Init\n\
                0 8us +100ns MPI_Isend send=1 tag=0 bytes=8 req=1\n0 9us +300ns MPI_Test\n\
                0 10us +200ns MPI_Test wait=1\n0 11us 12us MPI_Finalize\n";
    let end = "1 9us +100ns MPI_Recv recv=0 tag=0 bytes=8\n1 20us 21us MPI_Finalize\n";
    // (with MPI_Get_count sizing the buffer between the probe and the receive, as Ray does)
    let probes = "1 1us +500ns MPI_Iprobe\n1 3us +500ns MPI_Iprobe\n1 5us +500ns MPI_Iprobe\n\
                  1 8.5us +400ns MPI_Iprobe\n1 8.9us +100ns MPI_Get_count\n";
    let t = text_trace(&format!("{head}{probes}{end}"));
    let cp = check_against_brute_force(&t, "probes");
    let s = |r: u32, a: u64, b: u64, k: &str| (r, a, b, k.to_owned());
    assert_eq!(
        segments(&cp),
        vec![
            s(0, 0, 1000, "MPI_Init"),
            s(0, 1000, 8000, "compute"),
            s(1, 8000, 8900, "MPI_Iprobe"),
            s(1, 8900, 9000, "MPI_Get_count"),
            s(1, 9000, 9100, "MPI_Recv"),
            s(1, 9100, 20000, "compute"),
            s(1, 20000, 21000, "MPI_Finalize"),
        ]
    );
    share(cp.by_rank[0].share, 8, 21, "rank 0");
    // Removing rank 0's 7 us before its send lets rank 1 find the message at 2 us.
    eq(cp.by_rank[0].gain_s.unwrap(), 7000, "gain of rank 0");

    // The same with tests of a receive posted at 1 us: the test that completes it ends the run.
    let tests = "1 1us +100ns MPI_Irecv recv=0 tag=0 bytes=8 req=1\n1 3us +500ns MPI_Test\n\
                 1 5us +500ns MPI_Test\n1 8.5us +500ns MPI_Test wait=1\n";
    let end = "1 20us 21us MPI_Finalize\n";
    let cp = check_against_brute_force(&text_trace(&format!("{head}{tests}{end}")), "tests");
    assert_eq!(
        segments(&cp)[1..3],
        [s(0, 1000, 8000, "compute"), s(1, 8000, 9000, "MPI_Test")]
    );

    // ABySS's loop: MPI_Request_get_status asks about the posted receive (completing nothing)
    // until it has arrived; the MPI_Test that then completes it ends the run.
    let asks = "1 1us +100ns MPI_Irecv recv=0 tag=0 bytes=8 req=1\n1 3us +500ns MPI_Request_get_status\n\
                1 5us +500ns MPI_Request_get_status\n1 8.5us +300ns MPI_Request_get_status\n\
                1 8.8us +200ns MPI_Test wait=1\n";
    let cp = check_against_brute_force(&text_trace(&format!("{head}{asks}{end}")), "get_status");
    assert_eq!(
        segments(&cp)[1..3],
        [s(0, 1000, 8000, "compute"), s(1, 8000, 9000, "MPI_Test")]
    );
    // Removing rank 0's computation lets its send come at 1 us, before rank 1's first ask at
    // 3 us: rank 1 then finds the message in that ask, 5 us earlier.
    eq(cp.by_rank[0].gain_s.unwrap(), 5000, "gain of rank 0 (get_status)");

    // A blocking MPI_Probe waits for the message itself: the path reaches rank 0's send from it.
    let probe = "1 1us 8.5us MPI_Probe\n";
    let end = "1 9us +100ns MPI_Recv recv=0 tag=0 bytes=8\n1 20us 21us MPI_Finalize\n";
    let cp = check_against_brute_force(&text_trace(&format!("{head}{probe}{end}")), "blocking probe");
    assert_eq!(
        segments(&cp)[1..3],
        [s(0, 1000, 8000, "compute"), s(1, 8000, 8500, "MPI_Probe")]
    );

    // A probe that left before the send was entered cannot have found it: no dependency, the
    // path stays on rank 1 (its probes' 2 us and gaps are its own).
    let early = "1 1us +500ns MPI_Iprobe\n1 3us +500ns MPI_Iprobe\n";
    let cp = check_against_brute_force(&text_trace(&format!("{head}{early}{end}")), "early probe");
    assert_eq!(cp.by_rank[0].share, 0.0);
}
