use super::*;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

/// The previous matching order: every root sorted up front, tuple keys in the heap.
fn matching_order_sorting_every_root(g: &Graph, colours: &[u32], rarity: &[u32]) -> Vec<u32> {
    let n = g.num_nodes() as usize;
    let mut roots: Vec<u32> = (0..n as u32).collect();
    roots.sort_by_key(|&u| (rarity[colours[u as usize] as usize], Reverse(g.degree(u)), u));
    let mut conn = vec![0u32; n];
    let mut level_of = vec![u32::MAX; n];
    let mut placed = vec![false; n];
    let mut order = Vec::with_capacity(n);
    let mut level_id = 0u32;
    for &root in &roots {
        if level_of[root as usize] != u32::MAX {
            continue;
        }
        level_of[root as usize] = level_id;
        let mut level = vec![root];
        while !level.is_empty() {
            let key = |u: u32, conn: &[u32]| {
                (
                    conn[u as usize],
                    g.degree(u),
                    Reverse(rarity[colours[u as usize] as usize]),
                    Reverse(u),
                )
            };
            let mut heap: BinaryHeap<_> = level.iter().map(|&u| key(u, &conn)).collect();
            let mut next = Vec::new();
            while let Some((c, _, _, Reverse(u))) = heap.pop() {
                if placed[u as usize] || c != conn[u as usize] {
                    continue;
                }
                placed[u as usize] = true;
                order.push(u);
                for &v in g.neighbors(u) {
                    conn[v as usize] += 1;
                    if level_of[v as usize] == u32::MAX {
                        level_of[v as usize] = level_id + 1;
                        next.push(v);
                    } else if level_of[v as usize] == level_id && !placed[v as usize] {
                        heap.push(key(v, &conn));
                    }
                }
            }
            level_id += 1;
            level = next;
        }
        level_id += 1;
    }
    order
}

#[test]
fn matching_order_equals_sorting_every_root() {
    // Sparse random graphs have many components (isolated nodes included), so the roots
    // after the first are exercised; few colours give ties on rarity and degree.
    let mut rng = StdRng::seed_from_u64(21);
    for trial in 0..300 {
        let n = rng.gen_range(0..120u32);
        let m = if n == 0 { 0 } else { rng.gen_range(0..2 * n as usize) };
        let edges: Vec<(u32, u32)> = (0..m).map(|_| (rng.gen_range(0..n), rng.gen_range(0..n))).collect();
        let g = Graph::from_edges(n, edges);
        let classes = 1 + trial % 4;
        let colours: Vec<u32> = (0..n).map(|_| rng.gen_range(0..classes)).collect();
        let mut rarity = vec![0u32; classes as usize];
        for &c in &colours {
            rarity[c as usize] += 1;
        }
        let order = matching_order(&g, &colours, &rarity);
        assert_eq!(
            order,
            matching_order_sorting_every_root(&g, &colours, &rarity),
            "trial {trial}"
        );
        let mut seen = order.clone();
        seen.sort_unstable();
        assert_eq!(seen, (0..n).collect::<Vec<_>>(), "trial {trial}: not a permutation");
    }
}

fn cycle(n: u32) -> Graph {
    Graph::from_edges(n, (0..n).map(|u| (u, (u + 1) % n)))
}

#[test]
fn automorphism_counts_of_known_groups() {
    let k333 = Graph::from_edges(
        9,
        (0..9u32).flat_map(|u| (u + 1..9).filter(move |v| v % 3 != u % 3).map(move |v| (u, v))),
    );
    let q4 = Graph::from_edges(16, (0..16u32).flat_map(|u| (0..4).map(move |b| (u, u ^ (1 << b)))));
    let petersen = Graph::from_edges(
        10,
        (0..5u32).flat_map(|i| [(i, (i + 1) % 5), (i, i + 5), (5 + i, 5 + (i + 2) % 5)]),
    );
    let star = Graph::from_edges(6, (1..6u32).map(|v| (0, v)));
    let k5 = Graph::from_edges(5, (0..5u32).flat_map(|u| (u + 1..5).map(move |v| (u, v))));
    let path = Graph::from_edges(7, (0..6u32).map(|u| (u, u + 1)));
    for (name, g, expected) in [
        ("C12", cycle(12), 24),
        ("K3,3,3", k333, 6 * 6 * 6 * 6),
        ("Q4", q4, 16 * 24),
        ("Petersen", petersen, 120),
        ("K1,5", star, 120),
        ("K5", k5, 120),
        ("P7", path, 2),
    ] {
        assert_eq!(count_automorphisms(&g, 10_000_000), (expected, true), "{name}");
    }
    // A budget too small to finish says so.
    let (found, complete) = count_automorphisms(&cycle(12), 30);
    assert!(!complete && found < 24, "{found}");
}

#[test]
fn best_isomorphism_is_the_maximum_over_all_permutations() {
    fn permutations(n: usize) -> Vec<Vec<u32>> {
        if n == 0 {
            return vec![Vec::new()];
        }
        let mut out = Vec::new();
        for p in permutations(n - 1) {
            for i in 0..n {
                let mut q = p.clone();
                q.insert(i, (n - 1) as u32);
                out.push(q);
            }
        }
        out
    }
    let mut rng = StdRng::seed_from_u64(7);
    for trial in 0..120 {
        let n = rng.gen_range(1..=7u32);
        let m = rng.gen_range(0..=(n * (n - 1) / 2) as usize);
        let g1 = Graph::from_edges(n, (0..m).map(|_| (rng.gen_range(0..n), rng.gen_range(0..n))));
        let mut shuffle: Vec<u32> = (0..n).collect();
        for i in (1..n as usize).rev() {
            shuffle.swap(i, rng.gen_range(0..=i));
        }
        let g2 = g1.relabel(&shuffle);
        let features: Vec<NodeFeature> = (0..1 + trial % 3)
            .map(|_| {
                let mut f = || (0..n).map(|_| rng.gen_range(-2..=2) as f64).collect::<Vec<f64>>();
                (f(), f())
            })
            .collect();
        let score = |m: &[u32]| -> f64 {
            features
                .iter()
                .map(|(a, b)| (0..n as usize).map(|u| a[u] * b[m[u] as usize]).sum::<f64>())
                .sum()
        };
        let all = permutations(n as usize);
        let isos: Vec<&Vec<u32>> = all.iter().filter(|p| verify(&g1, &g2, p).is_ok()).collect();
        let max = isos.iter().map(|p| score(p)).fold(f64::NEG_INFINITY, f64::max);
        let found = best_isomorphism(&g1, &g2, &features, &[], 1_000_000).expect("isomorphic");
        assert!(found.exhaustive, "trial {trial}");
        verify(&g1, &g2, &found.mapping).unwrap();
        assert_eq!(found.score, score(&found.mapping), "trial {trial}");
        assert!(
            (found.score - max).abs() < 1e-9,
            "trial {trial}: {} vs {max}",
            found.score
        );
        // Without pruning every isomorphism is visited.
        let (count, complete) = count_automorphisms(&g1, 1_000_000);
        assert_eq!((count, complete), (isos.len() as u64, true), "trial {trial}");
        // A seed that is no isomorphism is ignored; a graph that is not isomorphic gives None.
        let identity: Vec<u32> = (0..n).collect();
        let seeded = best_isomorphism(&g1, &g2, &features, &[&identity], 1_000_000).unwrap();
        assert!((seeded.score - max).abs() < 1e-9, "trial {trial}");
    }
    let path = Graph::from_edges(4, [(0, 1), (1, 2), (2, 3)]);
    let star = Graph::from_edges(4, [(0, 1), (0, 2), (0, 3)]);
    assert_eq!(best_isomorphism(&path, &star, &[], &[], 1_000), None);
}

#[test]
fn anchored_best_isomorphism_is_the_maximum_over_the_permutations_keeping_the_anchor() {
    let mut rng = StdRng::seed_from_u64(17);
    let mut restricted = 0;
    for trial in 0..150 {
        let n = rng.gen_range(2..=7u32);
        let m = rng.gen_range(0..=(n * (n - 1) / 2) as usize);
        let g1 = Graph::from_edges(n, (0..m).map(|_| (rng.gen_range(0..n), rng.gen_range(0..n))));
        let mut shuffle: Vec<u32> = (0..n).collect();
        for i in (1..n as usize).rev() {
            shuffle.swap(i, rng.gen_range(0..=i));
        }
        let g2 = g1.relabel(&shuffle);
        let features: Vec<NodeFeature> = (0..2)
            .map(|_| {
                let mut f = || (0..n).map(|_| rng.gen_range(-3..=3) as f64).collect::<Vec<f64>>();
                (f(), f())
            })
            .collect();
        let score = |m: &[u32]| -> f64 {
            features
                .iter()
                .map(|(a, b)| (0..n as usize).map(|u| a[u] * b[m[u] as usize]).sum::<f64>())
                .sum()
        };
        // Any pair of nodes as the anchor: mapped to each other or not at all.
        let anchor = (rng.gen_range(0..n), rng.gen_range(0..n));
        let mut all = vec![Vec::new()];
        for k in 0..n {
            all = all
                .into_iter()
                .flat_map(|p: Vec<u32>| {
                    (0..=p.len()).map(move |i| {
                        let mut q = p.clone();
                        q.insert(i, k);
                        q
                    })
                })
                .collect();
        }
        let keeping: Vec<&Vec<u32>> = all
            .iter()
            .filter(|p| p[anchor.0 as usize] == anchor.1 && verify(&g1, &g2, p).is_ok())
            .collect();
        let found = best_isomorphism_anchored(&g1, &g2, &features, &[], &[anchor], 1_000_000);
        let Some(found) = found else {
            assert!(
                keeping.is_empty(),
                "trial {trial}: {} isomorphisms keep {anchor:?}",
                keeping.len()
            );
            continue;
        };
        restricted += 1;
        assert!(found.exhaustive, "trial {trial}");
        assert_eq!(found.mapping[anchor.0 as usize], anchor.1, "trial {trial}");
        verify(&g1, &g2, &found.mapping).unwrap();
        let max = keeping.iter().map(|p| score(p)).fold(f64::NEG_INFINITY, f64::max);
        assert!(
            (found.score - max).abs() < 1e-9,
            "trial {trial}: {} vs {max}",
            found.score
        );
        // The stabiliser of a node has as many elements as isomorphisms keep that node's image.
        let image_of_anchor = anchor.0;
        let fixing = all
            .iter()
            .filter(|p| p[image_of_anchor as usize] == image_of_anchor && verify(&g1, &g1, p).is_ok())
            .count();
        assert_eq!(
            count_automorphisms_fixing(&g1, &[image_of_anchor], 1_000_000),
            (fixing as u64, true),
            "trial {trial}"
        );
        // A seed that moves the anchor is ignored even when it scores more.
        if let Some(moving) = all
            .iter()
            .find(|p| p[anchor.0 as usize] != anchor.1 && verify(&g1, &g2, p).is_ok())
        {
            let seeded = best_isomorphism_anchored(&g1, &g2, &features, &[moving], &[anchor], 1_000_000).unwrap();
            assert_eq!(seeded.mapping[anchor.0 as usize], anchor.1, "trial {trial}");
        }
    }
    assert!(
        restricted > 30,
        "only {restricted} trials had an isomorphism keeping the anchor"
    );
    let g = cycle(5);
    assert_eq!(
        best_isomorphism_anchored(&g, &g, &[], &[], &[(0, 5)], 1_000),
        None,
        "out of range"
    );
    assert_eq!(
        best_isomorphism_anchored(&g, &g, &[], &[], &[(0, 1), (2, 1)], 1_000),
        None,
        "one node anchored twice"
    );
}

#[test]
fn stabilisers_of_known_groups() {
    // 4x4 periodic 6-point stencil: neighbours (±1, 0), (0, ±1), ±(1, 1).
    let stencil = Graph::from_edges(
        16,
        (0..16u32).flat_map(|r| {
            let (x, y) = (r % 4, r / 4);
            let at = |dx: u32, dy: u32| ((y + dy) % 4) * 4 + (x + dx) % 4;
            [(r, at(1, 0)), (r, at(0, 1)), (r, at(1, 1))]
        }),
    );
    let q4 = Graph::from_edges(16, (0..16u32).flat_map(|u| (0..4).map(move |b| (u, u ^ (1 << b)))));
    let star = Graph::from_edges(6, (1..6u32).map(|v| (0, v)));
    let path = Graph::from_edges(7, (0..6u32).map(|u| (u, u + 1)));
    assert_eq!(count_automorphisms(&stencil, 10_000_000), (192, true));
    for (name, g, fixed, expected) in [
        ("4x4 6-point stencil, one node", &stencil, vec![5u32], 12),
        ("C12, one node", &cycle(12), vec![3], 2),
        ("C12, two adjacent nodes", &cycle(12), vec![3, 4], 1),
        ("Q4, one node", &q4, vec![0], 24),
        ("K1,5, the centre", &star, vec![0], 120),
        ("K1,5, a leaf", &star, vec![2], 24),
        ("P7, the middle", &path, vec![3], 2),
        ("P7, an end", &path, vec![0], 1),
        ("nothing fixed", &cycle(12), vec![], 24),
    ] {
        assert_eq!(
            count_automorphisms_fixing(g, &fixed, 10_000_000),
            (expected, true),
            "{name}"
        );
    }
}

/// The 4x4 rook's graph K4□K4 and the Shrikhande graph: both strongly regular (16, 6, 2, 2),
/// so colour refinement never tells them apart, nor any individualisation of one node.
fn rook_and_shrikhande() -> (Graph, Graph) {
    let rook = Graph::from_edges(
        16,
        (0..16u32).flat_map(|u| {
            (u + 1..16)
                .filter(move |v| v / 4 == u / 4 || v % 4 == u % 4)
                .map(move |v| (u, v))
        }),
    );
    let at = |x: u32, y: u32| x % 4 + 4 * (y % 4);
    let shrikhande = Graph::from_edges(
        16,
        (0..16u32).flat_map(|u| {
            let (x, y) = (u % 4, u / 4);
            [
                (at(x, y), at(x + 1, y)),
                (at(x, y), at(x, y + 1)),
                (at(x, y), at(x + 1, y + 1)),
            ]
        }),
    );
    (rook, shrikhande)
}

fn disjoint_union(parts: &[&Graph]) -> Graph {
    let mut edges = Vec::new();
    let mut base = 0;
    for p in parts {
        edges.extend(p.edges().map(|(u, v)| (u + base, v + base)));
        base += p.num_nodes();
    }
    Graph::from_edges(base, edges)
}

#[test]
fn individualisation_is_not_bounded_by_the_call_stack() {
    // 64 rook graphs and 64 Shrikhande graphs against the same with one rook graph swapped
    // for a Shrikhande graph, randomly numbered: not isomorphic, and every individualisation
    // keeps the colour histograms equal, so the search goes hundreds of levels deep before
    // its budget runs out. It runs on a thread with a 64 KiB stack (a recursion per level
    // needs more), and says it gave up or refuted, never overflows.
    let (rook, shrikhande) = rook_and_shrikhande();
    let a: Vec<&Graph> = (0..128).map(|i| if i % 2 == 0 { &rook } else { &shrikhande }).collect();
    let mut b = a.clone();
    b[0] = &shrikhande;
    let (g1, g2) = (disjoint_union(&a), disjoint_union(&b));
    let mut rng = StdRng::seed_from_u64(7);
    let mut perm: Vec<u32> = (0..g2.num_nodes()).collect();
    perm.shuffle(&mut rng);
    let g2 = g2.relabel(&perm);
    let worker = std::thread::Builder::new()
        .stack_size(64 * 1024)
        .spawn(move || {
            let colouring = refine_joint(&[&g1, &g2], 32);
            let mut budget = Budget {
                left: 32_000_000,
                used: 0,
                deepest: 0,
            };
            let found = matches!(individualise(&g1, &g2, colouring, 64, &mut budget), Search::Found(..));
            let whole = isomorphism(&g1, &g2, IsoOptions::for_nodes(g1.num_nodes()));
            (found, budget.deepest, whole)
        })
        .unwrap();
    let (found, deepest, whole) = worker.join().expect("no stack overflow");
    assert!(!found);
    assert!(deepest >= 150, "only {deepest} levels: the case no longer tests depth");
    assert!(whole.mapping().is_none(), "{whole:?}");
    // The same search on isomorphic inputs still finds (and verifies) a mapping.
    let (g1, g3) = (disjoint_union(&a), disjoint_union(&a).relabel(&perm));
    assert!(isomorphism(&g1, &g3, IsoOptions::for_nodes(g1.num_nodes()))
        .mapping()
        .is_some());
    assert!(matches!(
        isomorphism(&rook, &shrikhande, IsoOptions::for_nodes(16)),
        IsoOutcome::NotIsomorphic { .. }
    ));
}
