//! The row/column process grid of dense linear algebra (HPL, ScaLAPACK, SUMMA: each rank
//! talks to its whole row and its whole column) through the whole path: generated traces →
//! matrix → identification, under row-major and random numberings, with stray traffic; the
//! reported rows and columns checked against the generator's own record of which rank plays
//! which node (up to the grid's symmetries: permuting rows, permuting columns, and the
//! transpose); no false positives on the other families; rows-only phases named.

use std::collections::BTreeSet;
use tracelogic_analysis::matrix::CommMatrix;
use tracelogic_analysis::topology::{identify_graph, identify_matrix, TopologyOptions, TopologyReport};
use tracelogic_graph::families::CliqueLayout;
use tracelogic_graph::Graph;
use tracelogic_model::Selection;
use tracelogic_synth::{generate_with_truth, Noise, Numbering, Spec, TopologySpec};

fn identify(topology: &str, numbering: Numbering, noise: Option<Noise>, seed: u64) -> (TopologyReport, Vec<u32>) {
    let spec = Spec {
        topology: TopologySpec::parse(topology).unwrap(),
        numbering,
        seed,
        iterations: 2,
        noise,
        ..Spec::default()
    };
    let (trace, truth) = generate_with_truth(&spec).unwrap();
    let m = CommMatrix::from_trace(&trace, &Selection::all());
    (
        identify_matrix(&m, &TopologyOptions::default()),
        truth.node_of_rank.clone(),
    )
}

/// The reported row and column of every rank against the true ones (`node = row·Q + col`):
/// two ranks share a reported row exactly when they share a true row (or, transposed, a true
/// column), and likewise for columns. Returns whether the report transposed the grid.
fn check_rows_and_columns(report: &TopologyReport, node_of_rank: &[u32], p: u32, q: u32) -> bool {
    let m = report.identification.matched.as_ref().expect("a match");
    assert_eq!(m.family, "process-grid", "{}", m.label);
    let places = &report.identification.mapping;
    let found = |r: usize| (places[r].coords[0], places[r].coords[1]);
    let truth = |r: usize| (node_of_rank[r] / q, node_of_rank[r] % q);
    assert!(places.iter().enumerate().all(|(i, pl)| pl.rank == i as u32));
    let n = places.len();
    // Transposed: rank 0 shares its reported row with a rank of its true column.
    let transposed = (1..n).any(|b| truth(b).1 == truth(0).1 && found(b).0 == found(0).0);
    assert_eq!(m.dims, if transposed { vec![q, p] } else { vec![p, q] });
    for a in 0..n {
        for b in 0..n {
            let (ta, tb) = (truth(a), truth(b));
            let (same_row, same_col) = if transposed {
                (ta.1 == tb.1, ta.0 == tb.0)
            } else {
                (ta.0 == tb.0, ta.1 == tb.1)
            };
            assert_eq!(found(a).0 == found(b).0, same_row, "{}: rows of {a} and {b}", m.label);
            assert_eq!(
                found(a).1 == found(b).1,
                same_col,
                "{}: columns of {a} and {b}",
                m.label
            );
        }
    }
    // Every rank's neighbours are its whole row and column.
    for (r, pl) in places.iter().enumerate() {
        let named: BTreeSet<u32> = pl.neighbours.iter().map(|nb| nb.rank).collect();
        let expected: BTreeSet<u32> = (0..n)
            .filter(|&s| s != r && (found(s).0 == found(r).0 || found(s).1 == found(r).1))
            .map(|s| s as u32)
            .collect();
        assert_eq!(named, expected, "rank {r}");
    }
    transposed
}

#[test]
fn process_grids_are_identified_with_their_rows_and_columns() {
    for (p, q) in [(2, 4), (4, 2), (4, 4), (2, 8), (3, 5), (4, 6), (8, 8), (5, 7)] {
        let topology = format!("process-grid:{p}x{q}");
        // Row-major (rank = row·Q + col, as HPL's default mapping): recovered exactly.
        let (report, node_of_rank) = identify(&topology, Numbering::RowMajor, None, 1);
        let m = report.identification.matched.as_ref().unwrap();
        assert_eq!(m.label, format!("{p}x{q} process grid (rows and columns)"));
        assert!(!check_rows_and_columns(&report, &node_of_rank, p, q));
        for pl in &report.identification.mapping {
            assert_eq!(pl.coords, vec![pl.rank / q, pl.rank % q]);
        }
        // The only family this graph is (the rook's graph K_P □ K_Q, P or Q ≥ 4).
        let eq: Vec<&str> = report
            .identification
            .equivalents
            .iter()
            .map(|e| e.label.as_str())
            .collect();
        assert_eq!(eq, vec![m.label.as_str()]);
        for (i, numbering) in [Numbering::Random, Numbering::Partial(2.0 / 3.0), Numbering::Random]
            .into_iter()
            .enumerate()
        {
            let (report, node_of_rank) = identify(&topology, numbering, None, 10 + i as u64);
            check_rows_and_columns(&report, &node_of_rank, p, q);
        }
    }
}

#[test]
fn stray_traffic_below_the_grid_is_filtered_out() {
    // Noise at 2 % of the message size from a tenth of the ranks (well below the automatic
    // threshold's 5x gap).
    for (p, q) in [(4, 4), (2, 8), (4, 6)] {
        let noise = Noise {
            fraction: 0.1,
            percent: 2.0,
        };
        let (report, node_of_rank) = identify(&format!("process-grid:{p}x{q}"), Numbering::Random, Some(noise), 3);
        check_rows_and_columns(&report, &node_of_rank, p, q);
    }
}

#[test]
fn small_process_grids_are_tori_with_the_grid_among_the_equivalents() {
    // K3 = C3 and K2 = a periodic extent of 2: the 3x3 and 3x2 process grids are those tori.
    for (topology, name, grid) in [
        ("process-grid:3x3", "3x3 torus", "3x3 process grid (rows and columns)"),
        ("process-grid:3x2", "3x2 torus", "3x2 process grid (rows and columns)"),
        ("process-grid:2x2", "4-node ring", "2x2 process grid (rows and columns)"),
    ] {
        let (report, _) = identify(topology, Numbering::Random, None, 4);
        let id = &report.identification;
        assert_eq!(id.matched.as_ref().unwrap().label, name);
        assert!(
            id.equivalents.iter().any(|e| e.label == grid),
            "{topology}: {:?}",
            id.equivalents
        );
    }
}

#[test]
fn other_families_are_not_process_grids() {
    // Every family of the same sizes, generated and identified: no process grid among the
    // equivalents (the Shrikhande graph, the 4x4 6-point stencil, is strongly regular with the
    // same parameters as the 4x4 grid of rows and columns).
    for topology in [
        "stencil6:4x4",
        "torus:4x4",
        "hypercube:4",
        "hypercube:3",
        "torus:4x2",
        "grid:4x2",
        "stencil8:4x4",
        "stencil8:4x2",
        "all-to-all:8",
        "nas-cg:4x4",
        "torus:6x4",
        "stencil6:6x4",
        "butterfly:2",
        "kary-tree:3x16",
    ] {
        let (report, _) = identify(topology, Numbering::Random, None, 6);
        let id = &report.identification;
        assert!(id.matched.is_some(), "{topology}");
        assert!(
            id.equivalents.iter().all(|e| e.family != "process-grid"),
            "{topology}: {:?}",
            id.equivalents
        );
    }
}

/// Rank pairs of a `p × q` grid (row-major) in the same row, or in the same column.
fn lines(p: u32, q: u32, rows: bool) -> Graph {
    let n = p * q;
    Graph::from_edges(
        n,
        (0..n).flat_map(|u| {
            (u + 1..n)
                .filter(move |&v| if rows { u / q == v / q } else { u % q == v % q })
                .map(move |v| (u, v))
        }),
    )
}

#[test]
fn a_phase_of_rows_only_or_columns_only_is_named() {
    let report = identify_graph(&lines(2, 4, true), &TopologyOptions::default());
    assert!(report.identification.matched.is_none());
    let c = report.cliques.as_ref().expect("named cliques");
    assert_eq!(c.label, "rows of a 2x4 process grid");
    assert_eq!((c.count, c.size, c.layout), (2, 4, CliqueLayout::Rows));
    // Each row is also identified on its own, as before.
    assert_eq!(report.components.len(), 2);
    assert!(report
        .components
        .iter()
        .all(|c| c.identification.matched.as_ref().unwrap().label == "4-node all-to-all"));

    let report = identify_graph(&lines(4, 3, false), &TopologyOptions::default());
    assert_eq!(report.cliques.unwrap().label, "columns of a 4x3 process grid");

    // Renumbered: still named, as rows or columns.
    let perm: Vec<u32> = (0..12).map(|u| (u * 5) % 12).collect();
    let report = identify_graph(&lines(3, 4, true).relabel(&perm), &TopologyOptions::default());
    let c = report.cliques.unwrap();
    assert_eq!(c.layout, CliqueLayout::Unordered);
    assert!(c.label.starts_with("3 disjoint 4-rank all-to-alls"), "{}", c.label);

    // A whole grid, or any graph that is not equal disjoint cliques, names none.
    assert!(identify_graph(&lines(3, 4, true), &TopologyOptions::default())
        .cliques
        .is_some());
    let whole = TopologySpec::parse("process-grid:3x4").unwrap().graph();
    assert!(identify_graph(&whole, &TopologyOptions::default()).cliques.is_none());
    let two_rings = Graph::from_edges(8, [(0, 1), (1, 2), (2, 3), (3, 0), (4, 5), (5, 6), (6, 7), (7, 4)]);
    assert!(identify_graph(&two_rings, &TopologyOptions::default())
        .cliques
        .is_none());
}

#[test]
#[ignore = "timing; run with --release --ignored --nocapture"]
fn cost_of_identifying_large_process_grids() {
    use rand::seq::SliceRandom;
    use rand::SeedableRng;
    let mut rng = rand::rngs::StdRng::seed_from_u64(1);
    for (p, q) in [(16, 16), (8, 32), (32, 32), (64, 64), (16, 128)] {
        let g = TopologySpec::new(tracelogic_graph::Family::ProcessGrid, vec![p, q])
            .unwrap()
            .graph();
        let mut perm: Vec<u32> = (0..p * q).collect();
        perm.shuffle(&mut rng);
        let g = g.relabel(&perm);
        let t = std::time::Instant::now();
        let report = identify_graph(&g, &TopologyOptions::default());
        let id = &report.identification;
        eprintln!(
            "{p}x{q} ({} ranks, {} edges): {:?} in {:.1} ms (gave up: {:?})",
            p * q,
            g.num_edges(),
            id.matched.as_ref().map(|m| &m.label),
            t.elapsed().as_secs_f64() * 1e3,
            id.gave_up
        );
    }
}
