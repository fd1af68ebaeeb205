//! Logical traces of generated runs (every family, random numbering, low-volume noise), the ring
//! example of Logicalization §1, round trips through expansion and loop compression.

use tracelogic_analysis::compress::compress;
use tracelogic_analysis::logical::{
    expand_records, logicalize, logicalize_ranks, maximal_ranks, physical_calls, physical_records, verify, LogicalCall,
    Partner, Placement, SELF_DIRECTION,
};
use tracelogic_analysis::matrix::CommMatrix;
use tracelogic_analysis::topology::{identify_matrix, TopologyOptions};
use tracelogic_model::{CollectiveOp, P2pDir, Selection, Trace, NO_CALLPATH};
use tracelogic_synth::{generate_with_truth, CollectiveSpec, Noise, Numbering, Spec, Style, TopologySpec};

fn identified(trace: &Trace) -> Placement {
    let m = CommMatrix::from_trace(trace, &Selection::all());
    let report = identify_matrix(&m, &TopologyOptions::default());
    Placement::from_report(&report).unwrap_or_else(|e| panic!("{}: {e}", trace.source))
}

fn calls_only(recs: &[tracelogic_analysis::logical::Record]) -> Vec<LogicalCall> {
    recs.iter().map(|r| r.call.clone()).collect()
}

/// Logicalization §1: four ranks in a ring, each `snd(right) rcv(left)` four times.
fn ring_trace(n: u32, iterations: u32) -> Trace {
    let mut t = Trace::new("text", "ring", n);
    for r in 0..n {
        let mut clock = 0;
        for _ in 0..iterations {
            let c = t.push_call(r, "MPI_Send", clock, clock + 10, NO_CALLPATH, 0);
            t.push_p2p(r, c, c, P2pDir::Send, (r + 1) % n, 0, 0, 1000);
            let c = t.push_call(r, "MPI_Recv", clock + 20, clock + 30, NO_CALLPATH, 0);
            t.push_p2p(r, c, c, P2pDir::Recv, (r + n - 1) % n, 0, 0, 1000);
            clock += 100;
        }
    }
    t
}

#[test]
fn ring_example_of_seed_000() {
    let trace = ring_trace(4, 4);
    // The paper's ring: rank r is node r of a 4-node ring (P_R = +1, P_L = +3).
    let placement = Placement::identity(TopologySpec::parse("ring:4").unwrap());
    let logical = logicalize(&trace, &placement).unwrap();
    assert_eq!(logical.ranks_used, vec![0]);
    assert!(logical.maximal);
    assert_eq!(logical.raw_length(), 8);
    let first: Vec<(P2pDir, Partner)> = logical.records[..2]
        .iter()
        .map(|r| (r.call.ops[0].dir, r.call.ops[0].partner.clone()))
        .collect();
    assert_eq!(
        first,
        vec![
            (P2pDir::Send, Partner::Direction("+1".into())),
            (P2pDir::Recv, Partner::Direction("+3".into())),
        ]
    );
    // Table 5 for the ring: the physical column names P1 and P3, the logical one +1 and +3.
    let physical = logical.physical_view();
    assert_eq!(physical[0].ops[0].partner, Partner::Rank(1));
    assert_eq!(physical[1].ops[0].partner, Partner::Rank(3));
    let table5 = logical.side_by_side();
    assert!(
        table5.lines().nth(1).unwrap().contains("MPI_Send(P1, 1000 B, tag 0)"),
        "{table5}"
    );
    assert!(
        table5.lines().nth(1).unwrap().ends_with("MPI_Send(+1, 1000 B, tag 0)"),
        "{table5}"
    );
    // Every rank's expansion is its own trace.
    let v = verify(&trace, &logical).unwrap();
    assert!(v.ranks_below_full.is_empty(), "{v:?}");
    // [snd(PR) rcv(PL)]^4
    let program = compress(&logical.records);
    assert_eq!(program.compressed_length, 3, "{}", program.text());
    assert_eq!(program.depth, 1);
    let text = program.text();
    assert!(
        text.starts_with("[\n  MPI_Send(+1, 1000 B, tag 0)\n  MPI_Recv(+3, 1000 B, tag 0)\n]^4"),
        "{text}"
    );
    assert_eq!(program.expand(1000).unwrap(), calls_only(&logical.records));
    // The single-rank compression of Process 0 is the paper's `[snd(P1) rcv(P3)]^4`.
    let p0 = compress(&tracelogic_analysis::logical::rank_records(&trace, 0).unwrap());
    assert!(
        p0.text()
            .contains("MPI_Send(P1, 1000 B, tag 0)\n  MPI_Recv(P3, 1000 B, tag 0)\n]^4"),
        "{}",
        p0.text()
    );
}

#[test]
fn ring_identified_from_the_matrix() {
    // A 7-rank ring has no other equivalent topology, so identification gives the ring itself.
    let trace = ring_trace(7, 3);
    let placement = identified(&trace);
    let logical = logicalize(&trace, &placement).unwrap();
    assert_eq!(logical.topology.family, "ring");
    let v = verify(&trace, &logical).unwrap();
    assert!(v.ranks_below_full.is_empty(), "{v:?}");
    assert_eq!(v.overall_share, 1.0);
    assert!(logical.tags_consistent);
}

fn spec(topology: &str, style: Style, noise: bool, iterations: u32, seed: u64) -> Spec {
    Spec {
        topology: TopologySpec::parse(topology).unwrap(),
        numbering: Numbering::Random,
        seed,
        iterations,
        style,
        noise: noise.then_some(Noise {
            fraction: 0.3,
            percent: 1.0,
        }),
        collectives: vec![CollectiveSpec {
            op: CollectiveOp::Allreduce,
            every: 3,
            bytes: 8,
        }],
        ..Spec::default()
    }
}

/// Everything a generated run must satisfy: the operations kept as offsets are the noise that
/// was generated, nothing is dropped, every rank is reproduced exactly (its noise included),
/// every maximal rank round-trips exactly, and the
/// compressed program expands to the logical trace.
///
/// `canonical`: the topology's automorphisms all preserve direction names (grids and tori with
/// extents above 2, 2D stencils, rings, lines...). Otherwise (trees swap children, all-to-all
/// relabels shifts, meshes with extent-2 dimensions rotate) identification proves the graph but
/// cannot know which neighbour the program calls `left`; all ranks are then verified against the
/// generator's own placement, while accuracy and maximal-rank round trips use the identified one.
fn check_generated(spec: &Spec, canonical: bool) {
    let (trace, truth) = generate_with_truth(spec).unwrap();
    let label = format!("{} {}", spec.topology.label(), spec.style);
    let placement = identified(&trace);
    let logical = logicalize(&trace, &placement).unwrap();
    let truth_placement = Placement::new(
        truth.spec.topology.clone(),
        truth.ranks,
        truth.node_of_rank.iter().enumerate().map(|(r, &u)| (r as u32, u)),
    )
    .unwrap();
    let verified = if canonical {
        logical.clone()
    } else {
        logicalize(&trace, &truth_placement).unwrap()
    };

    let noise_msgs: u64 = truth
        .phases
        .iter()
        .map(|p| p.noise.len() as u64 * p.iterations as u64)
        .sum();
    let noise_bytes: u64 = truth
        .phases
        .iter()
        .map(|p| p.noise.iter().map(|l| l.bytes).sum::<u64>() * p.iterations as u64)
        .sum();
    // The generator's noise goes to ranks that are no neighbours: kept as offsets, not dropped.
    let acc = &logical.accuracy;
    assert_eq!(
        (acc.dropped_calls, acc.dropped_bytes),
        (0, 0),
        "{label}: nothing dropped"
    );
    assert_eq!(
        acc.offset_calls,
        2 * noise_msgs,
        "{label}: operations as offsets = noise sends + receives"
    );
    assert_eq!(acc.offset_bytes, 2 * noise_bytes, "{label}");
    for link in truth.phases.iter().flat_map(|p| &p.noise) {
        assert!(acc.per_rank[link.sender as usize].offset_calls > 0, "{label}");
        assert!(acc.per_rank[link.receiver as usize].offset_calls > 0, "{label}");
    }

    let v = verify(&trace, &verified).unwrap();
    assert!(v.ranks_outside_topology.is_empty(), "{label}");
    for r in &v.per_rank {
        assert_eq!(r.share, 1.0, "{label}: rank {} {r:?}", r.rank);
        let noisy = acc.per_rank[r.rank as usize].offset_calls > 0;
        assert_eq!(r.offset_calls > 0, noisy, "{label}: rank {}", r.rank);
    }

    let maximal = maximal_ranks(&placement);
    assert!(!maximal.is_empty() || !logical.maximal, "{label}");
    for &r in &maximal {
        let own = logicalize_ranks(&trace, &placement, Some(&[r])).unwrap();
        let expanded = expand_records(&own, r).unwrap();
        let original = physical_records(&trace, &placement, r).unwrap();
        assert_eq!(expanded, calls_only(&original), "{label}: maximal rank {r}");
    }

    let program = compress(&logical.records);
    assert_eq!(
        program.expand(10_000_000).unwrap(),
        calls_only(&logical.records),
        "{label}: compressed program expands to the logical trace"
    );
    assert!(
        program.compressed_length < logical.raw_length(),
        "{label}\n{}",
        program.text()
    );
}

#[test]
fn every_family_with_random_numbering_and_noise() {
    // (topology, automorphisms preserve direction names)
    let families = [
        ("grid:4x3", true),
        ("torus:5x3", true),
        ("stencil6:4x4", true),
        ("stencil6-mesh:4x3", true),
        ("stencil8:4x4", true),
        ("stencil8-mesh:4x3", true),
        ("hypercube:3", true),
        ("binary-tree:10", false),
        ("all-to-all:5", false),
        ("ring:7", true),
        ("line:6", true),
        ("stencil7:3x3x3", true),
        ("stencil7-mesh:3x2x2", false),
        ("stencil19:3x3x3", true),
        ("stencil19-mesh:3x3x2", false),
        ("stencil27:3x3x3", false),
        ("stencil27-mesh:3x2x2", false),
        ("kary-tree:3x13", false),
        ("star:7", true),
        ("butterfly:2", false),
    ];
    for (i, (f, canonical)) in families.iter().enumerate() {
        let noise = !f.starts_with("all-to-all") && !f.starts_with("stencil27:");
        check_generated(&spec(f, Style::Isend, noise, 6, 11 + i as u64), *canonical);
    }
}

#[test]
fn other_exchange_styles() {
    check_generated(&spec("torus:4x3", Style::Sendrecv, true, 5, 3), true);
    check_generated(&spec("grid:4x3", Style::Sendrecv, true, 5, 4), true);
    check_generated(&spec("grid:5x4", Style::Wavefront, false, 4, 5), true);
}

#[test]
fn blocking_style_round_trips_on_maximal_ranks() {
    // Blocking exchanges follow a parity-dependent global order, so other ranks may differ in
    // order; every maximal rank still round-trips exactly.
    let (trace, _) = generate_with_truth(&spec("torus:4x4", Style::Blocking, false, 3, 9)).unwrap();
    let placement = identified(&trace);
    for r in maximal_ranks(&placement) {
        let own = logicalize_ranks(&trace, &placement, Some(&[r])).unwrap();
        assert_eq!(
            expand_records(&own, r).unwrap(),
            calls_only(&physical_records(&trace, &placement, r).unwrap())
        );
    }
}

#[test]
fn no_maximal_rank_merges_ranks() {
    // A 4x2 grid: no rank has both a north and a south neighbour (NAS LU on 8 ranks).
    let (trace, _) = generate_with_truth(&spec("grid:4x2", Style::Wavefront, false, 4, 21)).unwrap();
    let placement = identified(&trace);
    assert!(maximal_ranks(&placement).is_empty());
    let logical = logicalize(&trace, &placement).unwrap();
    assert!(!logical.maximal);
    assert_eq!(logical.ranks_used.len(), 2, "{:?}", logical.ranks_used);
    let used: std::collections::BTreeSet<&str> = logical
        .records
        .iter()
        .flat_map(|r| &r.call.ops)
        .filter_map(|o| match &o.partner {
            Partner::Direction(d) => Some(d.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(used.len(), 4, "every direction appears: {used:?}");
    let v = verify(&trace, &logical).unwrap();
    assert!(v.ranks_below_full.is_empty(), "{v:?}");
}

#[test]
fn expansion_lists_world_ranks_in_order() {
    let (trace, truth) = generate_with_truth(&spec("torus:4x3", Style::Isend, false, 2, 8)).unwrap();
    let placement = identified(&trace);
    let logical = logicalize(&trace, &placement).unwrap();
    let r = 5;
    let calls = physical_calls(&expand_records(&logical, r).unwrap());
    let real: Vec<_> = (0..trace.ranks[r as usize].p2p.len())
        .map(|i| {
            let p = &trace.ranks[r as usize].p2p;
            (trace.call_name(r, p.post[i]).to_owned(), Some(p.peer[i]), p.bytes.at(i))
        })
        .collect();
    let got: Vec<_> = calls.iter().map(|c| (c.kind.clone(), c.peer, c.bytes)).collect();
    assert_eq!(got, real);
    // Peers are the rank's true neighbours.
    let rank_of_node = truth.rank_of_node();
    let node = truth.node_of_rank[r as usize];
    let neighbours: Vec<u32> = truth
        .spec
        .topology
        .neighbours(node)
        .iter()
        .map(|&(_, v)| rank_of_node[v as usize])
        .collect();
    assert!(calls.iter().all(|c| neighbours.contains(&c.peer.unwrap())));
}

#[test]
fn out_of_range_rank_is_an_error() {
    let trace = ring_trace(4, 1);
    let placement = Placement::identity(TopologySpec::parse("ring:4").unwrap());
    let logical = logicalize(&trace, &placement).unwrap();
    assert!(expand_records(&logical, 4)
        .unwrap_err()
        .contains("rank 4 is out of range"));
    assert!(logicalize_ranks(&trace, &placement, Some(&[9])).is_err());
    let wrong = Placement::identity(TopologySpec::parse("ring:5").unwrap());
    assert!(logicalize(&trace, &wrong).is_err());
}

/// The ring of [`ring_trace`] where rank 0 also exchanges 64 B with itself every iteration
/// (`MPI_Irecv` from itself, `MPI_Send` to itself, `MPI_Wait`), as NAS CG's diagonal does.
fn ring_with_self_exchange(n: u32, iterations: u32) -> Trace {
    let mut t = ring_trace(n, iterations);
    let mut clock = 100 * iterations as u64;
    for _ in 0..iterations {
        let post = t.push_call(0, "MPI_Irecv", clock, clock + 5, NO_CALLPATH, 0);
        let send = t.push_call(0, "MPI_Send", clock + 10, clock + 15, NO_CALLPATH, 0);
        let wait = t.push_call(0, "MPI_Wait", clock + 20, clock + 25, NO_CALLPATH, 0);
        t.push_p2p(0, post, wait, P2pDir::Recv, 0, 7, 0, 64);
        t.push_p2p(0, send, send, P2pDir::Send, 0, 7, 0, 64);
        clock += 100;
    }
    t
}

#[test]
fn a_message_to_itself_is_the_self_direction() {
    let trace = ring_with_self_exchange(4, 3);
    let placement = Placement::identity(TopologySpec::parse("ring:4").unwrap());
    let logical = logicalize(&trace, &placement).unwrap();
    // Nothing falls outside the topology: a message to oneself is a move in every topology.
    assert_eq!(logical.accuracy.dropped_calls, 0, "{:?}", logical.accuracy);
    assert_eq!(logical.accuracy.calls, 4 * 3 * 2 + 3 * 2);
    assert_eq!(logical.self_ranks, vec![0]);
    assert_eq!(logical.topology.directions, vec!["+1", "+3", SELF_DIRECTION]);
    // Rank 0 has every direction any rank has, `self` included.
    assert_eq!((logical.ranks_used.as_slice(), logical.maximal), (&[0][..], true));
    let text = logical.text();
    assert!(
        text.contains("MPI_Irecv(self, 64 B, tag 7)\nMPI_Send(self, 64 B, tag 7)\nMPI_Wait(-2)"),
        "{text}"
    );
    // Table 5's physical column names the rank itself.
    let table5 = logical.side_by_side();
    assert!(table5.contains("0: MPI_Send(P0, 64 B, tag 7)"), "{table5}");
    // Rank 0's expansion sends to itself; the others lack the direction, and their waits go
    // with the operations they complete.
    for r in 0..4 {
        let expanded = expand_records(&logical, r).unwrap();
        let own = calls_only(&physical_records(&trace, &placement, r).unwrap());
        assert_eq!(expanded, own, "rank {r}");
        let to_itself = physical_calls(&expanded).iter().filter(|c| c.peer == Some(r)).count();
        assert_eq!(to_itself, if r == 0 { 6 } else { 0 }, "rank {r}");
        let waits = expanded.iter().filter(|c| c.function == "MPI_Wait").count();
        assert_eq!(waits, if r == 0 { 3 } else { 0 }, "rank {r}");
    }
    let v = verify(&trace, &logical).unwrap();
    assert!(v.ranks_below_full.is_empty(), "{v:?}");
    assert_eq!(v.per_rank[0].real_in_topology, 4 * 3 * 2 / 4 + 6);
    // The JSON names the ranks where `self` exists and reads back; a run without such messages
    // keeps its JSON as it was (no `self_ranks`, no `self` direction).
    let json = serde_json::to_value(&logical).unwrap();
    assert_eq!(json["self_ranks"], serde_json::json!([0]));
    let back: tracelogic_analysis::logical::LogicalTrace = serde_json::from_value(json).unwrap();
    assert_eq!(back, logical);
    let plain = logicalize(&ring_trace(4, 3), &placement).unwrap();
    let json = serde_json::to_value(&plain).unwrap();
    assert!(json.get("self_ranks").is_none(), "{json}");
    assert_eq!(plain.topology.directions, vec!["+1", "+3"]);
}

#[test]
fn a_self_exchange_on_a_rank_without_every_neighbour_is_merged() {
    // On a 3-node line only the middle rank has both neighbours; the end rank 2 also messages
    // itself, so no rank has every direction and the classes are merged, each exact.
    let mut t = Trace::new("text", "line-with-self", 3);
    let mut clock = 0;
    for _ in 0..4 {
        for r in 0..3u32 {
            for peer in [r.wrapping_sub(1), r + 1].into_iter().filter(|&p| p < 3) {
                let c = t.push_call(r, "MPI_Sendrecv", clock, clock + 10, NO_CALLPATH, 0);
                t.push_p2p(r, c, c, P2pDir::Send, peer, 1, 0, 256);
                t.push_p2p(r, c, c, P2pDir::Recv, peer, 1, 0, 256);
            }
        }
        let c = t.push_call(2, "MPI_Sendrecv", clock + 20, clock + 30, NO_CALLPATH, 0);
        t.push_p2p(2, c, c, P2pDir::Send, 2, 2, 0, 32);
        t.push_p2p(2, c, c, P2pDir::Recv, 2, 2, 0, 32);
        clock += 100;
    }
    let placement = Placement::identity(TopologySpec::parse("line:3").unwrap());
    let logical = logicalize(&t, &placement).unwrap();
    assert_eq!(logical.accuracy.dropped_calls, 0);
    assert_eq!(logical.self_ranks, vec![2]);
    assert!(!logical.maximal);
    assert_eq!(logical.merge_conflicts, 0, "{:?}", logical.classes);
    let with_self: Vec<&[u32]> = logical
        .classes
        .iter()
        .filter(|c| c.directions.iter().any(|d| d == SELF_DIRECTION))
        .map(|c| c.ranks.as_slice())
        .collect();
    assert_eq!(with_self, vec![&[2][..]]);
    for r in 0..3 {
        let own = calls_only(&physical_records(&t, &placement, r).unwrap());
        assert_eq!(expand_records(&logical, r).unwrap(), own, "rank {r}");
    }
    assert!(verify(&t, &logical).unwrap().ranks_below_full.is_empty());
}
