//! Extrapolating patterns written for a 3x3 grid to generated runs on larger grids and tori with
//! random rank numbering (thesis §4.5, last paragraph), through the identified topology.

use std::collections::BTreeMap;
use tracelogic_analysis::logical::Placement;
use tracelogic_analysis::matrix::CommMatrix;
use tracelogic_analysis::patterns::extrapolate::{classify, extrapolate, search_extrapolated};
use tracelogic_analysis::patterns::templates::{wavefront, Corner};
use tracelogic_analysis::patterns::{rank_events, search_pattern};
use tracelogic_analysis::topology::{identify_matrix, TopologyOptions};
use tracelogic_model::{match_messages, P2pDir, Rank, Selection, Time, Trace, COMM_WORLD, NO_CALLPATH};
use tracelogic_synth::{generate_with_truth, Numbering, Spec, Style, TopologySpec};

/// Sweep3D's order of the four sweep corners (§4.8.1.1).
const CORNERS: [Corner; 4] = [
    Corner::BottomRight,
    Corner::TopLeft,
    Corner::BottomLeft,
    Corner::TopRight,
];

fn identified(trace: &Trace) -> Placement {
    let m = CommMatrix::from_trace(trace, &Selection::all());
    Placement::from_report(&identify_matrix(&m, &TopologyOptions::default())).unwrap()
}

/// A random numbering of a `columns × rows` grid from the generator (its `Truth`).
fn random_numbering(columns: u32, rows: u32, seed: u64) -> Vec<Rank> {
    let spec = Spec {
        topology: TopologySpec::parse(&format!("grid:{columns}x{rows}")).unwrap(),
        numbering: Numbering::Random,
        seed,
        iterations: 1,
        ..Default::default()
    };
    generate_with_truth(&spec).unwrap().1.rank_of_node()
}

/// Sweep3D-like run: per iteration, the sweeps from the four corners, each `repeats` times in a
/// row, with blocking sends and receives in Table 4.6's order. Returns the trace and, per
/// corner, the start time of every sweep.
fn sweep3d(columns: u32, rows: u32, rank_of_node: &[Rank], repeats: u32, iterations: u32) -> (Trace, Vec<Vec<Time>>) {
    let n = columns * rows;
    let mut t = Trace::new("generated", "sweep3d", n);
    let mut clock = 0u64;
    let mut starts = vec![Vec::new(); 4];
    for _ in 0..iterations {
        for (k, corner) in CORNERS.into_iter().enumerate() {
            let pattern = wavefront(columns, rows, corner, false, Some(rank_of_node)).unwrap();
            let (cx, cy) = match corner {
                Corner::TopLeft => (0, 0),
                Corner::TopRight => (columns - 1, 0),
                Corner::BottomLeft => (0, rows - 1),
                Corner::BottomRight => (columns - 1, rows - 1),
            };
            let mut order: Vec<u32> = (0..n).collect();
            order.sort_by_key(|&u| (u % columns).abs_diff(cx) + (u / columns).abs_diff(cy));
            for _ in 0..repeats {
                starts[k].push(clock + 10);
                for &u in &order {
                    let r = rank_of_node[u as usize];
                    for ev in &pattern[&r] {
                        clock += 10;
                        let peer: u32 = ev[1..].parse().unwrap();
                        let (name, dir) = if ev.starts_with('S') {
                            ("MPI_Send", P2pDir::Send)
                        } else {
                            ("MPI_Recv", P2pDir::Recv)
                        };
                        let c = t.push_call(r, name, clock, clock + 5, NO_CALLPATH, 0);
                        t.push_p2p(r, c, c, dir, peer, 0, COMM_WORLD, 1024);
                    }
                }
            }
        }
    }
    (t, starts)
}

/// Each corner's sweep written for 3x3 is found on 8x8 and 6x10 grids with random numbering
/// exactly once per generated sweep; with the generator's own mapping and the identity
/// orientation, at exactly the times each sweep started.
#[test]
fn sweeps_written_for_3x3_found_on_larger_grids() {
    let small = TopologySpec::parse("grid:3x3").unwrap();
    for (columns, rows, seed) in [(8u32, 8u32, 11u64), (6, 10, 12)] {
        let rank_of_node = random_numbering(columns, rows, seed);
        assert_ne!(rank_of_node, (0..columns * rows).collect::<Vec<_>>());
        let (repeats, iterations) = (5, 4);
        let (trace, starts) = sweep3d(columns, rows, &rank_of_node, repeats, iterations);
        let matching = match_messages(&trace);
        let events = rank_events(&trace, false);
        let run = identified(&trace);
        assert_eq!(run.spec.num_nodes(), columns * rows);
        let mut node_of_rank = vec![0; rank_of_node.len()];
        for (u, &r) in rank_of_node.iter().enumerate() {
            node_of_rank[r as usize] = u as u32;
        }
        let truth = Placement {
            spec: TopologySpec::parse(&format!("grid:{columns}x{rows}")).unwrap(),
            node_of_rank,
        };
        for (k, corner) in CORNERS.into_iter().enumerate() {
            let written = wavefront(3, 3, corner, false, None).unwrap();
            let classes = classify(&written, &small).unwrap();
            assert_eq!(classes.classes.len(), 9);
            let found = search_extrapolated(&trace, &matching, &events, &classes, &run, 0).unwrap();
            assert_eq!(
                found.search.matches.len(),
                (repeats * iterations) as usize,
                "{columns}x{rows} {corner:?}: {:?}",
                found.orientation_matches
            );
            assert_eq!(
                found.orientation.as_ref().unwrap().pattern.len(),
                (columns * rows) as usize
            );
            // Under the generator's mapping, the identity orientation is the sweep itself.
            let exact = &extrapolate(&classes, &truth).unwrap()[0];
            assert_eq!(
                exact.pattern,
                wavefront(columns, rows, corner, false, Some(&rank_of_node)).unwrap()
            );
            let at = search_pattern(&trace, &matching, &events, &exact.pattern, 0).unwrap();
            let times: Vec<Time> = at.matches.iter().map(|m| m.start).collect();
            assert_eq!(times, starts[k], "{columns}x{rows} {corner:?}");
        }
    }
}

/// The four sweeps in Sweep3D's order as one pattern written for 3x3: on a 6x10 grid with random
/// numbering, one sweep each per iteration, it is found once per iteration, and only the
/// orientation that maps the corners back in the same order finds them all (the mirror image
/// across the vertical axis lines up with the run shifted by two sweeps: one occurrence fewer).
#[test]
fn four_direction_sweep_found_once_per_iteration() {
    let (columns, rows, iterations) = (6u32, 10u32, 12u32);
    let rank_of_node = random_numbering(columns, rows, 5);
    let (trace, starts) = sweep3d(columns, rows, &rank_of_node, 1, iterations);
    let matching = match_messages(&trace);
    let events = rank_events(&trace, false);
    let mut written: BTreeMap<Rank, Vec<String>> = BTreeMap::new();
    for corner in CORNERS {
        for (r, ev) in wavefront(3, 3, corner, false, None).unwrap() {
            written.entry(r).or_default().extend(ev);
        }
    }
    let classes = classify(&written, &TopologySpec::parse("grid:3x3").unwrap()).unwrap();
    let found = search_extrapolated(&trace, &matching, &events, &classes, &identified(&trace), 0).unwrap();
    assert_eq!(found.search.matches.len(), iterations as usize);
    let times: Vec<Time> = found.search.matches.iter().map(|m| m.start).collect();
    assert_eq!(
        times, starts[0],
        "each occurrence starts with the iteration's first sweep"
    );
    let best: Vec<usize> = found
        .orientation_matches
        .iter()
        .copied()
        .filter(|&c| c == iterations as usize)
        .collect();
    assert_eq!(best.len(), 1, "{:?}", found.orientation_matches);
    assert!(found.orientation_matches.iter().all(|&c| c == 12 || c <= 11));
    assert_eq!(found.orientation_matches.len(), 8);
}

/// The LU-like wavefront of the generator (forward sweep receiving north then west, reverse
/// sweep) written for 3x3 is found once per iteration on an 8x8 grid with random numbering.
#[test]
fn lu_wavefront_written_for_3x3_found_on_generated_8x8() {
    let spec = Spec {
        topology: TopologySpec::parse("grid:8x8").unwrap(),
        numbering: Numbering::Random,
        seed: 3,
        style: Style::Wavefront,
        iterations: 9,
        ..Default::default()
    };
    let (trace, truth) = generate_with_truth(&spec).unwrap();
    assert!(truth.moved_ranks > 50);
    let mut written: BTreeMap<Rank, Vec<String>> = BTreeMap::new();
    for corner in [Corner::TopLeft, Corner::BottomRight] {
        for (r, ev) in wavefront(3, 3, corner, true, None).unwrap() {
            written.entry(r).or_default().extend(ev);
        }
    }
    let classes = classify(&written, &TopologySpec::parse("grid:3x3").unwrap()).unwrap();
    let matching = match_messages(&trace);
    let events = rank_events(&trace, false);
    let found = search_extrapolated(&trace, &matching, &events, &classes, &identified(&trace), 0).unwrap();
    assert_eq!(found.search.matches.len(), 9, "{:?}", found.orientation_matches);
    assert!(found.search.matches.iter().all(|m| m.edits == 0));
}

/// A nearest-neighbour exchange written for the centre of a 3x3 grid (receive from the four
/// neighbours, send to them) is found on a 5x5 torus with random numbering once per iteration:
/// every torus rank has all four directions, so every rank instantiates the centre's class.
#[test]
fn nearest_neighbour_exchange_written_for_3x3_found_on_5x5_torus() {
    let spec = Spec {
        topology: TopologySpec::parse("torus:5x5").unwrap(),
        numbering: Numbering::Random,
        seed: 9,
        style: Style::Isend,
        iterations: 14,
        ..Default::default()
    };
    let (trace, _) = generate_with_truth(&spec).unwrap();
    let grid = TopologySpec::parse("grid:3x3").unwrap();
    // The generator's isend style on the centre of 3x3: receive the messages sent east, west,
    // south and north (from ranks 3, 5, 1, 7), then send east, west, south, north.
    let centre: Vec<String> = "R3 R5 R1 R7 S5 S3 S7 S1".split(' ').map(str::to_owned).collect();
    let written = BTreeMap::from([(4, centre)]);
    let classes = classify(&written, &grid).unwrap();
    let matching = match_messages(&trace);
    let events = rank_events(&trace, false);
    let found = search_extrapolated(&trace, &matching, &events, &classes, &identified(&trace), 0).unwrap();
    let o = found.orientation.as_ref().unwrap();
    assert_eq!(o.pattern.len(), 25);
    assert_eq!(o.approximated_ranks, 0);
    assert_eq!(
        found.search.matches.len(),
        14,
        "{:?} {:?}",
        found.orientation_matches,
        o.pattern[&0]
    );
}
