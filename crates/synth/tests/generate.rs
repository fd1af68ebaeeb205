//! The generator against its promises: perfect matching, the topology's graph under the
//! permutation, numbering shares, determinism, phases, noise, collectives and a causal clock.

use std::collections::BTreeMap;
use tracelogic_graph::{Family, Graph, TopologySpec};
use tracelogic_model::{match_messages, CallKind, CollectiveOp, P2pDir, Trace, COMM_WORLD, NOT_COMPLETED};
use tracelogic_synth::{generate, generate_with_truth, Numbering, Phase, Spec, Style, Truth};

const NOISE_TAG: i32 = 32767;

fn spec(topology: &str) -> Spec {
    Spec {
        topology: TopologySpec::parse(topology).unwrap(),
        iterations: 3,
        ..Spec::default()
    }
}

/// A small instance of every family the graph crate defines (families added later are
/// picked up: the first dimension list the family accepts is used).
fn one_of_each_family() -> Vec<TopologySpec> {
    let candidates: [&[u32]; 6] = [&[4, 3], &[3, 3, 2], &[3], &[2, 7], &[7], &[3, 3, 3]];
    Family::ALL
        .iter()
        .map(|&f| {
            candidates
                .iter()
                .find_map(|d| TopologySpec::new(f, d.to_vec()).ok().filter(|t| t.num_nodes() > 1))
                .unwrap_or_else(|| panic!("no small instance of {}", f.name()))
        })
        .collect()
}

/// The undirected graph of the pattern's sends (noise left out), in world ranks.
fn send_graph(trace: &Trace) -> Graph {
    let edges = trace.ranks.iter().flat_map(|rt| {
        let p = &rt.p2p;
        (0..p.len())
            .filter(|&i| p.dir[i] == P2pDir::Send && p.tag[i] != NOISE_TAG)
            .map(move |i| (rt.rank, p.peer[i]))
    });
    Graph::from_edges(trace.num_ranks(), edges.collect::<Vec<_>>())
}

fn expected_graph(topology: &TopologySpec, truth: &Truth) -> Graph {
    topology.graph().relabel(&truth.rank_of_node())
}

fn sends(trace: &Trace) -> u64 {
    trace
        .ranks
        .iter()
        .map(|r| r.p2p.dir.iter().filter(|&&d| d == P2pDir::Send).count() as u64)
        .sum()
}

/// Calls of a rank never overlap and never run backwards.
fn assert_clock_monotonic(trace: &Trace) {
    for rt in &trace.ranks {
        let c = &rt.calls;
        for i in 0..c.len() {
            assert!(
                c.exit(i) >= c.enter(i),
                "rank {} call {i} ends before it starts",
                rt.rank
            );
            if i > 0 {
                assert!(
                    c.enter(i) >= c.exit(i - 1),
                    "rank {} call {i} overlaps the previous",
                    rt.rank
                );
            }
        }
    }
}

/// Every matched message completes on the receiver after it was sent plus the latency.
fn assert_causal(trace: &Trace, latency: u64) {
    let m = match_messages(trace);
    for msg in &m.messages {
        let s = &trace.ranks[msg.sender as usize];
        let r = &trace.ranks[msg.receiver as usize];
        let sent = s.calls.enter(s.p2p.post[msg.send_op as usize] as usize);
        let done = r.calls.exit(r.p2p.complete(msg.recv_op as usize) as usize);
        assert!(
            done >= sent + latency,
            "message {msg:?} completes at {done}, sent at {sent}"
        );
    }
}

#[test]
fn every_family_and_style_matches_perfectly_and_draws_its_graph() {
    for topology in one_of_each_family() {
        for style in [Style::Isend, Style::Sendrecv, Style::Blocking] {
            let s = Spec {
                topology: topology.clone(),
                style,
                numbering: Numbering::Random,
                seed: 11,
                iterations: 2,
                ..Spec::default()
            };
            let (trace, truth) = generate_with_truth(&s).unwrap();
            let what = format!("{} / {style}", topology.label());
            let m = match_messages(&trace);
            assert_eq!((m.unmatched_sends, m.unmatched_recvs), (0, 0), "{what}");
            assert_eq!(m.messages.len() as u64, truth.messages, "{what}");
            assert_eq!(sends(&trace), truth.messages, "{what}");
            assert_eq!(send_graph(&trace), expected_graph(&topology, &truth), "{what}");
            assert_clock_monotonic(&trace);
            assert_causal(&trace, s.clock.latency_ns);
            // Every matched pair agrees on size and tag.
            for msg in &m.messages {
                let sp = &trace.ranks[msg.sender as usize].p2p;
                let rp = &trace.ranks[msg.receiver as usize].p2p;
                assert_eq!(
                    sp.bytes.at(msg.send_op as usize),
                    rp.bytes.at(msg.recv_op as usize),
                    "{what}"
                );
                assert_eq!(sp.tag[msg.send_op as usize], rp.tag[msg.recv_op as usize], "{what}");
            }
        }
    }
}

#[test]
fn message_count_is_directed_edges_times_iterations() {
    // A 4x4 torus has 32 edges = 64 directed messages per iteration.
    let (trace, truth) = generate_with_truth(&Spec {
        iterations: 5,
        ..spec("torus:4x4")
    })
    .unwrap();
    assert_eq!(truth.messages, 64 * 5);
    assert_eq!(match_messages(&trace).messages.len(), 320);
    // Isend style: per iteration 4 Irecv + 4 Isend + 1 Waitall, plus Init and Finalize.
    assert!(trace.ranks.iter().all(|r| r.calls.len() == 5 * 9 + 2));
}

#[test]
fn nonblocking_operations_complete_in_their_waitall() {
    let trace = generate(&spec("grid:3x3")).unwrap();
    for rt in &trace.ranks {
        let (p, c) = (&rt.p2p, &rt.calls);
        for i in 0..p.len() {
            let post_kind = c.kind[p.post[i] as usize];
            assert!(matches!(post_kind, CallKind::Isend | CallKind::Irecv));
            assert_ne!(p.complete(i), NOT_COMPLETED);
            assert!(p.complete(i) > p.post[i]);
            assert_eq!(trace.call_name(rt.rank, p.complete(i)), "MPI_Waitall");
            assert_eq!(p.comm[i], COMM_WORLD);
        }
    }
}

#[test]
fn partial_numbering_moves_two_thirds_as_in_the_paper() {
    let (_, truth) = generate_with_truth(&Spec {
        numbering: Numbering::Partial(2.0 / 3.0),
        iterations: 1,
        ..spec("grid:23x23")
    })
    .unwrap();
    assert_eq!(truth.ranks, 529);
    assert_eq!(truth.moved_ranks, 353);
    let moved = truth
        .node_of_rank
        .iter()
        .enumerate()
        .filter(|&(r, &u)| r as u32 != u)
        .count();
    assert_eq!(moved, 353);
    let mut nodes = truth.node_of_rank.clone();
    nodes.sort_unstable();
    assert_eq!(nodes, (0..529).collect::<Vec<_>>());

    let (_, rm) = generate_with_truth(&spec("grid:23x23")).unwrap();
    assert_eq!(rm.moved_ranks, 0);
}

#[test]
fn same_seed_same_trace_other_seed_other_numbering() {
    let s = Spec {
        numbering: Numbering::Random,
        imbalance: 0.3,
        noise: Some("0.25:5%".parse().unwrap()),
        seed: 42,
        ..spec("stencil6:6x6")
    };
    let a = serde_json::to_string(&generate(&s).unwrap()).unwrap();
    let b = serde_json::to_string(&generate(&s).unwrap()).unwrap();
    assert_eq!(a, b);
    let (_, t1) = generate_with_truth(&s).unwrap();
    let (_, t2) = generate_with_truth(&Spec { seed: 43, ..s.clone() }).unwrap();
    assert_ne!(t1.node_of_rank, t2.node_of_rank);
}

#[test]
fn phases_run_in_order_with_their_own_topology_and_size() {
    let s = Spec {
        phases: vec![
            Phase {
                topology: Some(TopologySpec::parse("torus:4x4").unwrap()),
                bytes: Some(1000),
                iterations: Some(4),
                ..Phase::default()
            },
            Phase {
                topology: Some(TopologySpec::parse("ring:8").unwrap()),
                bytes: Some(2000),
                iterations: Some(2),
                style: Some(Style::Sendrecv),
                ..Phase::default()
            },
        ],
        numbering: Numbering::Random,
        seed: 5,
        ..Spec::default()
    };
    let (trace, truth) = generate_with_truth(&s).unwrap();
    assert_eq!(trace.num_ranks(), 16);
    assert_eq!(truth.phases.len(), 2);
    assert_eq!(truth.phases[0].messages, 64 * 4);
    assert_eq!(truth.phases[1].messages, 8 * 2 * 2);
    assert!(truth.phases[0].start_ns < truth.phases[1].start_ns);
    assert!(truth.phases[0].end_ns <= truth.phases[1].end_ns);
    let m = match_messages(&trace);
    assert_eq!((m.unmatched_sends, m.unmatched_recvs), (0, 0));

    let rank_of_node = truth.rank_of_node();
    let torus = TopologySpec::parse("torus:4x4").unwrap().graph().relabel(&rank_of_node);
    // The ring's nodes 0..8 are played by the ranks that play nodes 0..8 of the torus.
    let ring = TopologySpec::parse("ring:8").unwrap();
    let ring_edges: Vec<(u32, u32)> = ring
        .graph()
        .edges()
        .map(|(u, v)| (rank_of_node[u as usize], rank_of_node[v as usize]))
        .collect();
    let ring = Graph::from_edges(16, ring_edges);
    let mut by_size: BTreeMap<u64, Vec<(u32, u32)>> = BTreeMap::new();
    for rt in &trace.ranks {
        let p = &rt.p2p;
        for i in 0..p.len() {
            if p.dir[i] == P2pDir::Send {
                by_size.entry(p.bytes.at(i)).or_default().push((rt.rank, p.peer[i]));
                let t = rt.calls.enter(p.post[i] as usize);
                let ph = &truth.phases[if p.bytes.at(i) == 1000 { 0 } else { 1 }];
                assert!(ph.start_ns <= t && t <= ph.end_ns, "send at {t} outside its phase");
            }
        }
    }
    assert_eq!(by_size.len(), 2);
    assert_eq!(Graph::from_edges(16, by_size[&1000].clone()), torus);
    assert_eq!(Graph::from_edges(16, by_size[&2000].clone()), ring);
    // Ranks playing nodes 8..16 are idle in the ring phase: their last p2p is a torus message.
    for &r in &rank_of_node[8..] {
        assert_eq!(trace.ranks[r as usize].p2p.bytes.last(), Some(1000));
    }
}

#[test]
fn noise_links_are_low_volume_and_off_topology() {
    let s = Spec {
        noise: Some("0.25:2%".parse().unwrap()),
        numbering: Numbering::Random,
        iterations: 4,
        ..spec("torus:8x8")
    };
    let (trace, truth) = generate_with_truth(&s).unwrap();
    let links = &truth.phases[0].noise;
    assert_eq!(links.len(), 16);
    let topo = expected_graph(&s.topology, &truth);
    let mut noise_sends = 0;
    for l in links {
        assert_ne!(l.sender, l.receiver);
        assert!(!topo.has_edge(l.sender, l.receiver), "{l:?} is a topology edge");
        assert_eq!(l.bytes, 82);
    }
    for rt in &trace.ranks {
        let p = &rt.p2p;
        for i in (0..p.len()).filter(|&i| p.dir[i] == P2pDir::Send && p.tag[i] == NOISE_TAG) {
            noise_sends += 1;
            assert!(links.iter().any(|l| l.sender == rt.rank && l.receiver == p.peer[i]));
            assert_eq!(p.bytes.at(i), 82);
        }
    }
    assert_eq!(noise_sends, 16 * 4);
    let m = match_messages(&trace);
    assert_eq!((m.unmatched_sends, m.unmatched_recvs), (0, 0));
    assert_eq!(truth.messages, 256 * 4 + 16 * 4);
    // The pattern itself is untouched by the noise.
    assert_eq!(send_graph(&trace), topo);
}

#[test]
fn collectives_every_k_iterations_on_comm_world() {
    let s = Spec {
        iterations: 10,
        collectives: vec!["allreduce:5".parse().unwrap(), "bcast:10:1Ki".parse().unwrap()],
        ..spec("hypercube:3")
    };
    let trace = generate(&s).unwrap();
    for rt in &trace.ranks {
        let c = &rt.collectives;
        assert_eq!(
            c.op,
            vec![CollectiveOp::Allreduce, CollectiveOp::Allreduce, CollectiveOp::Bcast]
        );
        assert!(c.comm.iter().all(|&x| x == COMM_WORLD));
        assert_eq!(c.bytes_sent[0], 8);
        assert_eq!(c.root[2], 0);
        let (sent, recv) = if rt.rank == 0 { (1024, 0) } else { (0, 1024) };
        assert_eq!((c.bytes_sent[2], c.bytes_recv[2]), (sent, recv));
    }
    // All ranks leave a collective together, after the last one entered.
    let exits: Vec<u64> = trace
        .ranks
        .iter()
        .map(|r| r.calls.exit(r.collectives.call[0] as usize))
        .collect();
    let last_enter = trace
        .ranks
        .iter()
        .map(|r| r.calls.enter(r.collectives.call[0] as usize))
        .max();
    assert!(exits.iter().all(|&e| e == exits[0] && Some(e) > last_enter));
}

#[test]
fn wavefront_sweeps_the_grid_both_ways() {
    let s = Spec {
        style: Style::Wavefront,
        iterations: 2,
        ..spec("grid:5x4")
    };
    let (trace, truth) = generate_with_truth(&s).unwrap();
    let m = match_messages(&trace);
    assert_eq!((m.unmatched_sends, m.unmatched_recvs), (0, 0));
    assert_eq!(send_graph(&trace), expected_graph(&s.topology, &truth));
    assert_clock_monotonic(&trace);
    assert_causal(&trace, s.clock.latency_ns);
    // Node 0 opens the forward sweep without waiting; the far corner waits for it.
    let c0 = &trace.ranks[0].calls;
    assert_eq!(trace.call_name(0, 1), "MPI_Send");
    let last = &trace.ranks[19].calls;
    assert_eq!(trace.call_name(19, 1), "MPI_Recv");
    assert!(
        last.exit(1) > c0.enter(1) + 7 * s.clock.latency_ns,
        "the sweep crosses 7 hops"
    );
    // An interior rank: recv north, recv west, send south, send east, then the reverse sweep.
    let names: Vec<&str> = (1..9).map(|i| trace.call_name(6, i)).collect();
    assert_eq!(
        names,
        ["MPI_Recv", "MPI_Recv", "MPI_Send", "MPI_Send", "MPI_Recv", "MPI_Recv", "MPI_Send", "MPI_Send"]
    );
    let peers: Vec<u32> = trace.ranks[6].p2p.peer.iter().take(8).copied().collect();
    assert_eq!(peers, [1, 5, 11, 7, 11, 7, 1, 5]);

    let err = generate(&Spec {
        style: Style::Wavefront,
        ..spec("torus:4x4")
    })
    .unwrap_err();
    assert!(err.contains("2D grid"), "{err}");
}

#[test]
fn per_direction_sizes_and_imbalance() {
    let mut s = Spec {
        imbalance: 0.5,
        seed: 9,
        ..spec("grid:4x4")
    };
    s.direction_bytes.insert("east".into(), 8192);
    let (trace, truth) = generate_with_truth(&s).unwrap();
    for rt in &trace.ranks {
        let p = &rt.p2p;
        for i in (0..p.len()).filter(|&i| p.dir[i] == P2pDir::Send) {
            // Tag 0 is east, the first direction of a 2D grid.
            assert_eq!(p.bytes.at(i), if p.tag[i] == 0 { 8192 } else { 4096 });
        }
    }
    assert_eq!(truth.compute_factor.len(), 16);
    assert!(truth.compute_factor.iter().all(|&f| (1.0..1.5).contains(&f)));
    assert!(truth.compute_factor.iter().any(|&f| f > 1.25));

    s.direction_bytes.insert("up".into(), 1);
    let err = generate(&s).unwrap_err();
    assert!(err.contains("direction `up`"), "{err}");
}

#[test]
fn oversized_specs_are_refused_before_allocating() {
    let err = generate(&Spec {
        iterations: 1_000_000,
        ..spec("torus:128x128")
    })
    .unwrap_err();
    assert!(err.contains("200000000"), "{err}");
    let err = generate(&spec("all-to-all:100000")).unwrap_err();
    assert!(err.contains("limit"), "{err}");
    let err = generate(&spec("hypercube:30")).unwrap_err();
    assert!(err.contains("ranks"), "{err}");
}

#[test]
fn hostile_values_give_errors_not_overflows() {
    let mut cases: Vec<Spec> = Vec::new();
    let mut s = spec("grid:4x4");
    s.clock.bandwidth = 1e-300;
    cases.push(s);
    cases.push(Spec {
        compute_ns: u64::MAX,
        ..spec("grid:4x4")
    });
    cases.push(Spec {
        imbalance: 1e300,
        ..spec("grid:4x4")
    });
    cases.push(Spec {
        bytes: u64::MAX,
        ..spec("grid:4x4")
    });
    let mut s = spec("grid:4x4");
    s.clock.latency_ns = u64::MAX / 2;
    cases.push(s);
    cases.push(Spec {
        noise: Some(tracelogic_synth::Noise {
            fraction: 0.5,
            percent: 1e300,
        }),
        ..spec("grid:4x4")
    });
    for case in cases {
        let err = generate(&case).unwrap_err();
        assert!(err.contains("clock could pass"), "{err}");
    }
    let mut s = spec("grid:4x4");
    s.clock.bandwidth = f64::NAN;
    assert!(generate(&s).unwrap_err().contains("bandwidth"));
    let s = Spec {
        imbalance: -1.0,
        ..spec("grid:4x4")
    };
    assert!(generate(&s).unwrap_err().contains("imbalance"));
}

#[test]
fn sixteen_thousand_ranks_generate_quickly() {
    let start = std::time::Instant::now();
    let (trace, truth) = generate_with_truth(&Spec {
        numbering: Numbering::Random,
        collectives: vec!["allreduce:2".parse().unwrap()],
        ..spec("torus:128x128")
    })
    .unwrap();
    let took = start.elapsed();
    assert_eq!(trace.num_ranks(), 16384);
    assert_eq!(truth.messages, 16384 * 4 * 3);
    // 16384 × (3 × 9 + 1 + 2) calls.
    assert_eq!(trace.num_calls(), 16384 * 30);
    eprintln!("torus:128x128 × 3 iterations: {} calls in {took:?}", trace.num_calls());
}
