use super::*;
use crate::TopologySpec;

fn spec(s: &str) -> Graph {
    TopologySpec::parse(s).unwrap().graph()
}

/// Brute force over all permutations (small n only).
fn brute_force(g: &Graph, h: &Graph) -> usize {
    fn rec(g: &Graph, h: &Graph, perm: &mut Vec<u32>, used: &mut Vec<bool>, best: &mut usize) {
        let n = g.num_nodes() as usize;
        if perm.len() == n {
            *best = (*best).max(common_edge_count(g, h, perm));
            return;
        }
        for v in 0..n {
            if !used[v] {
                used[v] = true;
                perm.push(v as u32);
                rec(g, h, perm, used, best);
                perm.pop();
                used[v] = false;
            }
        }
    }
    let mut best = 0;
    rec(
        g,
        h,
        &mut Vec::new(),
        &mut vec![false; g.num_nodes() as usize],
        &mut best,
    );
    best
}

#[test]
fn paired_min_pairs_sorted_sequences() {
    // Degrees 3,1 against 2,2: pairs (3,2)+(1,2) = 2+1.
    assert_eq!(paired_min(&[0, 1, 0, 1], &[0, 0, 2]), 3);
    assert_eq!(paired_min(&[2], &[0, 0, 2]), 0);
    assert_eq!(paired_min(&[], &[]), 0);
    // 4x4 grid (4 of degree 2, 8 of 3, 4 of 4) against the 6-regular stencil: 48 / 2 = 24.
    assert_eq!(degree_sequence_bound(&spec("grid:4x4"), &spec("stencil6:4x4")), 24);
}

#[test]
fn grid_against_stencil_torus_is_two_thirds_exactly() {
    let (grid, stencil) = (spec("grid:4x4"), spec("stencil6:4x4"));
    let r = maximum_common_edge_subgraph(&grid, &stencil, McsOptions::for_nodes(16));
    assert_eq!((r.common_edges, r.upper_bound, r.exact), (24, 24, true));
    assert_eq!(common_edge_count(&grid, &stencil, &r.mapping), 24);
    assert!((r.epsilon() - 2.0 / 3.0).abs() < 1e-12);
}

#[test]
fn isomorphic_graphs_keep_every_edge_through_the_isomorphism_engine() {
    let g = spec("torus:4x4");
    let perm: Vec<u32> = (0..16).map(|i| (i * 7 + 3) % 16).collect();
    let h = g.relabel(&perm);
    let r = maximum_common_edge_subgraph(&g, &h, McsOptions::for_nodes(16));
    assert_eq!(r.method, McsMethod::Isomorphism);
    assert_eq!((r.common_edges, r.exact, r.epsilon()), (32, true, 1.0));
    assert_eq!(common_edge_count(&g, &h, &r.mapping), 32);
    let same = maximum_common_edge_subgraph(&g, &g, McsOptions::for_nodes(16));
    assert_eq!((same.method, same.mapping), (McsMethod::Identical, (0..16).collect()));
}

#[test]
fn branch_and_bound_matches_brute_force_on_small_graphs() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    for trial in 0..60 {
        let n = rng.gen_range(2..=7u32);
        let mut random_graph = |p: f64| {
            let edges: Vec<(u32, u32)> = (0..n)
                .flat_map(|u| (u + 1..n).map(move |v| (u, v)))
                .filter(|_| rng.gen_bool(p))
                .collect();
            Graph::from_edges(n, edges)
        };
        let g = random_graph(0.4);
        let h = random_graph(0.6);
        let r = maximum_common_edge_subgraph(&g, &h, McsOptions::for_nodes(n));
        assert!(r.exact, "trial {trial}");
        assert_eq!(r.common_edges, brute_force(&g, &h), "trial {trial}: {g:?} {h:?}");
        assert_eq!(common_edge_count(&g, &h, &r.mapping), r.common_edges);
        let back = maximum_common_edge_subgraph(&h, &g, McsOptions::for_nodes(n));
        assert_eq!(back.common_edges, r.common_edges);
    }
}

#[test]
fn branch_and_bound_alone_finds_the_maximum() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    for trial in 0..80 {
        let n = rng.gen_range(1..=7u32);
        let p = [0.3, 0.5, 0.7][trial % 3];
        let mut random_graph = |p: f64| {
            let edges: Vec<(u32, u32)> = (0..n)
                .flat_map(|u| (u + 1..n).map(move |v| (u, v)))
                .filter(|_| rng.gen_bool(p))
                .collect();
            Graph::from_edges(n, edges)
        };
        let (g, h) = (random_graph(p), random_graph(1.0 - p));
        // Start from nothing, so the exhaustive search alone must find and prove the maximum.
        let mut state = Search::new(&g, &h, u64::MAX);
        let (mut best, mut best_common) = ((0..n).collect::<Vec<u32>>(), 0usize);
        assert!(state.branch_and_bound(&mut best, &mut best_common, 0, false, u64::MAX));
        let expected = brute_force(&g, &h);
        assert_eq!(best_common, expected, "trial {trial}: {g:?} {h:?}");
        assert_eq!(common_edge_count(&g, &h, &best), expected);
    }
}

#[test]
fn budget_gives_a_lower_bound_with_an_upper_bound() {
    // A 64-ring against two 32-rings: every node has degree 2, so the degree bound is 64, but
    // at most 31 + 31 edges survive. The embedding search proves quickly that the whole ring
    // does not fit (bound 63); proving 62 is beyond the budget.
    let ring = spec("ring:64");
    let halves = Graph::from_edges(64, (0..64u32).map(|u| (u, if u % 32 == 31 { u - 31 } else { u + 1 })));
    for steps in [1_000, 200_000] {
        let r = maximum_common_edge_subgraph(&ring, &halves, McsOptions { max_steps: steps });
        assert!(!r.exact);
        assert_eq!(r.method, McsMethod::BoundedSearch);
        assert_eq!(r.upper_bound, if steps == 1_000 { 64 } else { 63 });
        assert!(r.common_edges <= 62, "{}", r.common_edges);
        assert_eq!(common_edge_count(&ring, &halves, &r.mapping), r.common_edges);
        assert!(r.steps <= steps + 64 * 3, "{} steps", r.steps);
        assert!(r.epsilon() <= r.epsilon_upper());
    }
    // Small enough to prove: an 8-ring against two 4-rings keeps 3 + 3 edges, not the bound's 8.
    let small = maximum_common_edge_subgraph(
        &spec("ring:8"),
        &Graph::from_edges(8, (0..8u32).map(|u| (u, if u % 4 == 3 { u - 3 } else { u + 1 }))),
        McsOptions::for_nodes(8),
    );
    assert_eq!(
        (small.common_edges, small.upper_bound, small.method),
        (6, 6, McsMethod::BranchAndBound)
    );
    // The greedy and swaps find the best arrangement (two 31-edge paths).
    let r = maximum_common_edge_subgraph(&ring, &halves, McsOptions { max_steps: 200_000 });
    assert_eq!(r.common_edges, 62);
}

#[test]
fn different_node_counts_and_empty_graphs() {
    let path = Graph::from_edges(3, [(0, 1), (1, 2)]);
    let tri = Graph::from_edges(4, [(0, 1), (1, 2), (0, 2)]);
    let r = maximum_common_edge_subgraph(&path, &tri, McsOptions::for_nodes(4));
    assert_eq!((r.common_edges, r.exact, r.mapping.len()), (2, true, 3));
    let back = maximum_common_edge_subgraph(&tri, &path, McsOptions::for_nodes(4));
    assert_eq!(back.common_edges, 2);
    assert_eq!(back.mapping.iter().filter(|&&v| v == NONE).count(), 1);
    let empty = Graph::from_edges(3, []);
    let e = maximum_common_edge_subgraph(&empty, &empty, McsOptions::for_nodes(3));
    assert_eq!((e.common_edges, e.epsilon(), e.exact), (0, 1.0, true));
    let e = maximum_common_edge_subgraph(&empty, &path, McsOptions::for_nodes(3));
    assert_eq!((e.common_edges, e.epsilon(), e.exact), (0, 0.0, true));
}
