//! The graph engine against generated family members: invariants, refinement, isomorphism
//! (with petgraph's VF2 as an oracle on small graphs), alignment and the edge-list format.

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use tracelogic_graph::catalog::{candidates, factorisations};
use tracelogic_graph::invariants::{closed_walks, spectra_agree, spectrum};
use tracelogic_graph::iso::{isomorphism, verify, IsoOptions, IsoOutcome};
use tracelogic_graph::near::align;
use tracelogic_graph::{edgelist, Graph, TopologySpec};

fn spec(s: &str) -> TopologySpec {
    TopologySpec::parse(s).unwrap()
}

fn random_perm(n: u32, rng: &mut StdRng) -> Vec<u32> {
    let mut p: Vec<u32> = (0..n).collect();
    p.shuffle(rng);
    p
}

fn to_petgraph(g: &Graph) -> petgraph::graph::UnGraph<(), ()> {
    let mut pg = petgraph::graph::UnGraph::new_undirected();
    let nodes: Vec<_> = (0..g.num_nodes()).map(|_| pg.add_node(())).collect();
    for (u, v) in g.edges() {
        pg.add_edge(nodes[u as usize], nodes[v as usize], ());
    }
    pg
}

const SAMPLES: &[&str] = &[
    "grid:4x2",
    "grid:5x3",
    "grid:3x3x2",
    "torus:4x4",
    "torus:5x3",
    "torus:2x2x2x2",
    "torus:4x2",
    "stencil6:3x3",
    "stencil6:6x4",
    "stencil6-mesh:5x4",
    "stencil8:4x4",
    "stencil8-mesh:4x3",
    "stencil7:3x3x2",
    "stencil19:3x3x3",
    "stencil19-mesh:4x3x2",
    "stencil27:3x3x3",
    "stencil27-mesh:3x3x2",
    "hypercube:4",
    "binary-tree:12",
    "kary-tree:3x20",
    "star:9",
    "master-worker:2x8",
    "master-worker:3x11",
    "all-to-all:7",
    "ring:9",
    "line:7",
    "butterfly:3",
    "tree:2x4",
    "tree:3x2x2",
    "binomial-tree:13",
    "binomial-tree:32",
];

#[test]
fn degree_histograms_from_structure_match_built_graphs() {
    for s in SAMPLES.iter().copied().chain([
        "grid:2x2x3x5",
        "torus:2x7",
        "kary-tree:4x1",
        "kary-tree:5x6",
        "tree:2x4x4",
        "tree:4x2",
    ]) {
        let t = spec(s);
        let g = t.graph();
        assert_eq!(t.degree_histogram(), g.degree_histogram(), "{s}");
        assert_eq!(t.edge_count(), g.num_edges() as u64, "{s}");
        assert_eq!(g.num_nodes(), t.num_nodes(), "{s}");
    }
}

#[test]
fn every_candidate_histogram_matches_its_graph() {
    for n in [6u32, 8, 11, 12, 16, 24, 27, 30, 43, 64] {
        for t in candidates(n) {
            let g = t.graph();
            assert_eq!(t.degree_histogram(), g.degree_histogram(), "{}", t.label());
        }
    }
}

#[test]
fn factorisations_of_16_and_12() {
    let f16 = factorisations(16);
    assert_eq!(
        f16,
        vec![vec![16], vec![8, 2], vec![4, 4], vec![4, 2, 2], vec![2, 2, 2, 2]]
    );
    assert_eq!(factorisations(12).len(), 4); // 12, 6x2, 4x3, 3x2x2
    assert!(factorisations(1).is_empty());
}

#[test]
fn isomorphism_finds_verified_mapping_under_any_numbering() {
    let mut rng = StdRng::seed_from_u64(7);
    for s in SAMPLES {
        let g = spec(s).graph();
        let perm = random_perm(g.num_nodes(), &mut rng);
        let h = g.relabel(&perm);
        match isomorphism(&h, &g, IsoOptions::for_nodes(g.num_nodes())) {
            IsoOutcome::Isomorphic { mapping, .. } => verify(&h, &g, &mapping).unwrap(),
            other => panic!("{s}: {other:?}"),
        }
    }
}

#[test]
fn agrees_with_petgraph_vf2_on_small_pairs() {
    // All pairs of same-sized candidates for a few sizes, plus one-edge perturbations.
    let mut rng = StdRng::seed_from_u64(11);
    let mut checked = 0;
    for n in [8u32, 9, 12, 16] {
        let graphs: Vec<Graph> = candidates(n).iter().map(|t| t.graph()).collect();
        for a in &graphs {
            let a = a.relabel(&random_perm(n, &mut rng));
            for b in &graphs {
                let ours = isomorphism(&a, b, IsoOptions::for_nodes(n));
                let theirs = petgraph::algo::is_isomorphic(&to_petgraph(&a), &to_petgraph(b));
                assert!(!matches!(ours, IsoOutcome::GaveUp { .. }));
                assert_eq!(ours.mapping().is_some(), theirs);
                checked += 1;
            }
        }
    }
    assert!(checked > 100);
}

#[test]
fn degree_preserving_swap_is_not_isomorphic_and_does_not_hang() {
    // The look-alike that makes plain VF2 explode: swap two edges of a torus keeping degrees.
    let g = spec("torus:32x32").graph();
    let mut edges: Vec<(u32, u32)> = g.edges().collect();
    let (a, b) = (edges[0], edges[700]);
    assert!(!g.has_edge(a.0, b.1) && !g.has_edge(b.0, a.1));
    edges[0] = (a.0, b.1);
    edges[700] = (b.0, a.1);
    let h = Graph::from_edges(1024, edges);
    assert_eq!(h.degree_histogram(), g.degree_histogram());
    let out = isomorphism(&h, &g, IsoOptions::for_nodes(1024));
    assert!(matches!(out, IsoOutcome::NotIsomorphic { .. }), "{out:?}");
}

#[test]
fn degree_colours_alone_prove_grids_and_refute_a_look_alike() {
    // Identification tries the ordered search under the degree colours alone (no refinement)
    // when one candidate is left: grids whose extents have many factorisations, any numbering.
    use tracelogic_graph::iso::isomorphism_coloured;
    use tracelogic_graph::refine::refine_joint;
    let mut rng = StdRng::seed_from_u64(31);
    for s in [
        "grid:90x90",
        "grid:72x72",
        "grid:4050x2",
        "grid:2700x3",
        "grid:180x45",
        "grid:20x20x20",
    ] {
        let g = spec(s).graph();
        let n = g.num_nodes();
        let h = g.relabel(&random_perm(n, &mut rng));
        let by_degree = refine_joint(&[&h, &g], 0);
        assert_eq!(by_degree.rounds, 0);
        let m = g.num_edges() as u64;
        let budget = IsoOptions {
            max_steps: 4 * (n as u64 + 2 * m) + 1_000,
            ..IsoOptions::for_nodes(n)
        };
        match isomorphism_coloured(&h, &g, Some(&by_degree), budget) {
            IsoOutcome::Isomorphic { mapping, steps } => {
                verify(&h, &g, &mapping).unwrap();
                assert!(steps <= n as u64 + 2 * m, "{s}: {steps} steps");
            }
            other => panic!("{s}: {other:?}"),
        }
    }
    // Two edges of a grid swapped, degrees kept: never proved, whatever the colouring.
    let g = spec("grid:30x20").graph();
    let mut edges: Vec<(u32, u32)> = g.edges().collect();
    let (a, b) = (edges[100], edges[700]);
    assert!(!g.has_edge(a.0, b.1) && !g.has_edge(b.0, a.1));
    edges[100] = (a.0, b.1);
    edges[700] = (b.0, a.1);
    let h = Graph::from_edges(600, edges);
    assert_eq!(h.degree_histogram(), g.degree_histogram());
    let by_degree = refine_joint(&[&h, &g], 0);
    let out = isomorphism_coloured(&h, &g, Some(&by_degree), IsoOptions::for_nodes(600));
    assert!(matches!(out, IsoOutcome::NotIsomorphic { .. }), "{out:?}");
}

#[test]
fn a_tiny_budget_gives_up_instead_of_searching() {
    let g = spec("stencil6:16x16").graph();
    let h = g.relabel(&random_perm(256, &mut StdRng::seed_from_u64(3)));
    let out = isomorphism(
        &h,
        &g,
        IsoOptions {
            max_steps: 10,
            refine_rounds: 4,
        },
    );
    assert_eq!(out, IsoOutcome::GaveUp { steps: 10 });
}

#[test]
fn large_random_torus_and_stencil_are_proved() {
    let mut rng = StdRng::seed_from_u64(5);
    for s in ["torus:64x64", "stencil6:64x32", "grid:50x40"] {
        let g = spec(s).graph();
        let h = g.relabel(&random_perm(g.num_nodes(), &mut rng));
        let out = isomorphism(&h, &g, IsoOptions::for_nodes(g.num_nodes()));
        verify(&h, &g, out.mapping().unwrap_or_else(|| panic!("{s}: {out:?}"))).unwrap();
    }
}

#[test]
fn closed_walks_match_spectral_moments() {
    for s in ["torus:4x4", "stencil6:3x3", "binary-tree:10", "grid:3x3x2"] {
        let g = spec(s).graph();
        let w = closed_walks(&g, 3, u64::MAX).unwrap();
        let ev = spectrum(&g).unwrap();
        for (k, &c) in w.counts.iter().enumerate() {
            let moment: f64 = ev.iter().map(|l| l.powi(k as i32 + 1)).sum();
            assert!(
                (moment - c as f64).abs() < 1e-6 * moment.abs().max(1.0),
                "{s} k={}",
                k + 1
            );
        }
        // tr(A²) = 2m; walks are invariant under renumbering.
        assert_eq!(w.counts[1], 2 * g.num_edges() as u64);
        let h = g.relabel(&random_perm(g.num_nodes(), &mut StdRng::seed_from_u64(1)));
        assert_eq!(closed_walks(&h, 3, u64::MAX).unwrap(), w);
        assert!(spectra_agree(&spectrum(&h).unwrap(), &ev));
    }
}

#[test]
fn alignment_reports_the_missing_and_extra_edges() {
    let mut rng = StdRng::seed_from_u64(9);
    let g = spec("torus:6x6").graph();
    let perm = random_perm(36, &mut rng);
    let mut edges: Vec<(u32, u32)> = g.edges().collect();
    let removed = edges.remove(rng.gen_range(0..edges.len()));
    let h = Graph::from_edges(36, edges.iter().map(|&(u, v)| (perm[u as usize], perm[v as usize])));
    assert!(isomorphism(&h, &g, IsoOptions::for_nodes(36)).mapping().is_none());
    let a = align(&h, &g, 0, 3, 200_000).unwrap();
    assert_eq!(a.distance(), 1, "{a:?}");
    assert!(a.extra.is_empty());
    let (x, y) = (perm[removed.0 as usize], perm[removed.1 as usize]);
    assert_eq!(a.missing, vec![(x.min(y), x.max(y))]);
}

#[test]
fn edge_list_round_trip_and_errors() {
    let g = spec("stencil6:3x3").graph();
    let text = edgelist::write(&g, Some("BT 9"));
    assert_eq!(edgelist::parse(&text, "bt.txt").unwrap(), g);
    let e = edgelist::parse("3 2\n0 1\n1 5\n", "x.txt").unwrap_err();
    assert!(e.contains("x.txt") && e.contains("line 3"), "{e}");
    let e = edgelist::parse("3 2\n0 1\n", "x.txt").unwrap_err();
    assert!(e.contains("only 1"), "{e}");
    let e = edgelist::parse("4 4000000000\n0 1\n", "x.txt").unwrap_err();
    assert!(e.contains("announces"), "{e}");
    let e = edgelist::parse("4\n", "x.txt").unwrap_err();
    assert!(e.contains("line 1"), "{e}");
    let e = edgelist::parse("", "x.txt").unwrap_err();
    assert!(e.contains("empty"), "{e}");
}

#[test]
fn fast_cartesian_builder_equals_the_direction_definition() {
    for s in SAMPLES
        .iter()
        .copied()
        .chain(["torus:2x3", "stencil8:2x2", "stencil27:2x2x2", "torus:1x5"])
    {
        let t = spec(s);
        let by_directions = Graph::from_edges(
            t.num_nodes(),
            (0..t.num_nodes())
                .flat_map(|u| t.neighbours(u).into_iter().map(move |(_, v)| (u, v)))
                .collect::<Vec<_>>(),
        );
        assert_eq!(t.graph(), by_directions, "{s}");
    }
}

#[test]
fn hubs_and_many_components_cost_linear_steps() {
    // A star's leaves all hang off one hub, and isolated nodes are all roots of their own
    // component: both must be matched in about one step per node, not one per (node, hub edge).
    let mut rng = StdRng::seed_from_u64(21);
    for s in ["star:3000", "kary-tree:200x3000", "binary-tree:4095"] {
        let g = spec(s).graph();
        let n = g.num_nodes();
        let h = g.relabel(&random_perm(n, &mut rng));
        match isomorphism(&h, &g, IsoOptions::for_nodes(n)) {
            IsoOutcome::Isomorphic { steps, .. } => assert!(steps < 20 * n as u64, "{s}: {steps} steps"),
            other => panic!("{s}: {other:?}"),
        }
    }
    let g = Graph::from_edges(3000, [(0, 1)]);
    let h = g.relabel(&random_perm(3000, &mut rng));
    match isomorphism(&h, &g, IsoOptions::for_nodes(3000)) {
        IsoOutcome::Isomorphic { steps, .. } => assert!(steps < 10_000, "{steps} steps"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn butterflies_need_individualisation_and_refinement_and_get_it() {
    // The plain ordered search stalls on randomly numbered butterflies (a wrong straight/cross
    // choice is only refuted far away); the individualisation–refinement fallback proves them.
    let mut rng = StdRng::seed_from_u64(5);
    for s in ["butterfly:5", "butterfly:6"] {
        let g = spec(s).graph();
        let h = g.relabel(&random_perm(g.num_nodes(), &mut rng));
        let out = isomorphism(&h, &g, IsoOptions::for_nodes(g.num_nodes()));
        verify(&h, &g, out.mapping().unwrap_or_else(|| panic!("{s}: {out:?}"))).unwrap();
    }
}

#[test]
fn star_neighbours_fast_path_agrees_with_directions() {
    let t = spec("star:7");
    for u in 0..7 {
        let slow: Vec<(tracelogic_graph::Direction, u32)> = t
            .directions()
            .into_iter()
            .filter_map(|d| t.neighbour(u, &d).map(|v| (d, v)))
            .collect();
        assert_eq!(t.neighbours(u), slow, "node {u}");
    }
}

#[test]
fn components_are_sorted_node_lists_largest_first() {
    let mut rng = StdRng::seed_from_u64(41);
    // Connected, randomly numbered: one component of every node in order.
    let g = spec("grid:7x5").graph();
    let g = g.relabel(&random_perm(35, &mut rng));
    assert_eq!(g.components(), vec![(0..35).collect::<Vec<u32>>()]);
    // Two rings and an isolated node, interleaved numbers.
    let h = Graph::from_edges(8, [(0, 2), (2, 4), (4, 0), (1, 3), (3, 5), (5, 7), (7, 1)]);
    assert_eq!(h.components(), vec![vec![1, 3, 5, 7], vec![0, 2, 4], vec![6]]);
    assert!(Graph::from_edges(0, []).components().is_empty());
}
