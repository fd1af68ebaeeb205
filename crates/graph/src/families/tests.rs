use super::*;

fn spec(s: &str) -> TopologySpec {
    TopologySpec::parse(s).unwrap()
}

#[test]
fn grid_and_torus_edge_counts() {
    // A×B grid: A(B−1) + B(A−1) edges; torus: 2AB when both extents exceed 2.
    assert_eq!(spec("grid:4x2").graph().num_edges(), 4 + 6);
    assert_eq!(spec("torus:4x4").graph().num_edges(), 32);
    assert_eq!(spec("torus:4x2").graph().num_edges(), 8 + 4);
    assert_eq!(spec("grid:3x3x3").graph().num_edges(), 3 * 9 * 2);
}

#[test]
fn stencil6_is_six_regular_and_matches_bt_directions() {
    let s = spec("stencil6:4x4");
    let g = s.graph();
    assert!((0..16).all(|u| g.degree(u) == 6));
    // Rank 5 = (1,1): east 6, west 4, south 9, north 1, northeast (2,0)=2, southwest (0,2)=8.
    let names: Vec<(String, u32)> = s.neighbours(5).into_iter().map(|(d, v)| (d.name(), v)).collect();
    assert_eq!(
        names,
        vec![
            ("east".into(), 6),
            ("west".into(), 4),
            ("south".into(), 9),
            ("north".into(), 1),
            ("northeast".into(), 2),
            ("southwest".into(), 8)
        ]
    );
}

#[test]
fn stencil8_mesh_corner_has_three_neighbours() {
    let s = spec("stencil8-mesh:5x5");
    assert_eq!(s.neighbours(0).len(), 3);
    assert_eq!(s.neighbours(12).len(), 8);
}

#[test]
fn hypercube_equals_2x2x2_grid_structure() {
    let h = spec("hypercube:3").graph();
    assert_eq!(h.num_edges(), 12);
    assert!((0..8).all(|u| h.degree(u) == 3));
    assert_eq!(h, spec("grid:2x2x2").graph());
}

#[test]
fn binary_tree_parent_and_children() {
    let s = spec("binary-tree:7");
    assert_eq!(s.neighbour(0, &Direction::Parent), None);
    assert_eq!(s.neighbour(2, &Direction::Child(0)), Some(5));
    assert_eq!(s.neighbour(6, &Direction::Parent), Some(2));
    assert_eq!(s.neighbour(3, &Direction::Child(0)), None);
    assert_eq!(s.coords(5), vec![2, 2]);
    assert_eq!(s.graph().num_edges(), 6);
}

#[test]
fn ring_and_all_to_all() {
    assert_eq!(spec("ring:5").graph().num_edges(), 5);
    assert_eq!(spec("all-to-all:6").graph().num_edges(), 15);
    assert_eq!(spec("ring:2").graph().num_edges(), 1);
}

#[test]
fn coordinates_round_trip() {
    let s = spec("torus:3x4x5");
    for u in 0..60 {
        assert_eq!(s.node_at(&s.coords(u)), Some(u));
    }
    assert_eq!(s.coords(1 + 3 * 2 + 12 * 4), vec![1, 2, 4]);
}

#[test]
fn static_names_are_the_names() {
    let mut named = 0;
    for k in 1..=4usize {
        for code in 0..3usize.pow(k as u32) {
            let o: Vec<i8> = (0..k).map(|i| (code / 3usize.pow(i as u32) % 3) as i8 - 1).collect();
            let d = Direction::Offset(o.clone());
            match d.static_name() {
                Some(name) => {
                    assert_eq!(name, d.name(), "{o:?}");
                    named += 1;
                }
                None => assert!(k > 3 || o.iter().all(|&x| x == 0), "{o:?}"),
            }
        }
    }
    assert_eq!(named, 2 + 8 + 26);
    assert_eq!(Direction::Offset(vec![2, 0]).static_name(), None);
    for d in [
        Direction::Parent,
        Direction::Child(0),
        Direction::Child(1),
        Direction::Transpose,
    ] {
        assert_eq!(d.static_name(), Some(d.name().as_str()));
    }
    for k in 0..40u8 {
        for d in [Direction::Bit(k), Direction::RowBit(k)] {
            match d.static_name() {
                Some(name) => assert_eq!(name, d.name()),
                None => assert!(k >= 32, "{d:?}"),
            }
        }
    }
    assert_eq!(Direction::Shift(3).static_name(), None);
}

#[test]
fn labels_name_the_extents_and_the_family() {
    for (s, label) in [
        ("grid:4x3", "4x3 grid"),
        ("torus:4x4x2", "4x4x2 torus"),
        ("stencil6:5x4", "5x4 6-point stencil"),
        ("stencil6-mesh:5x4", "5x4 6-point stencil (no wrap-around)"),
        ("stencil8:5x4", "5x4 8-point stencil"),
        ("stencil8-mesh:5x4", "5x4 8-point stencil (no wrap-around)"),
        ("hypercube:3", "3-dimensional hypercube (2x2x2 grid)"),
        ("hypercube:1", "1-dimensional hypercube"),
        ("binary-tree:15", "15-node binary tree"),
        ("all-to-all:6", "6-node all-to-all"),
        ("ring:9", "9-node ring"),
        ("line:7", "7-node line"),
        ("stencil7:4x3x2", "4x3x2 7-point stencil"),
        ("stencil7-mesh:4x3x2", "4x3x2 7-point stencil (no wrap-around)"),
        ("stencil19:4x3x3", "4x3x3 19-point stencil"),
        ("stencil19-mesh:4x3x3", "4x3x3 19-point stencil (no wrap-around)"),
        ("stencil27:3x3x3", "3x3x3 27-point stencil"),
        ("stencil27-mesh:3x3x3", "3x3x3 27-point stencil (no wrap-around)"),
        ("kary-tree:3x40", "40-node 3-ary tree"),
        ("star:9", "9-node star"),
        ("master-worker:2x8", "8-node master-worker (2 masters, 6 workers)"),
        ("butterfly:3", "3-dimensional butterfly (32 nodes)"),
        ("tree:2x4", "11-node tree (fan-out 2x4 by level)"),
        ("binomial-tree:8", "8-node binomial tree"),
        ("grid:100x10", "100x10 grid"),
        ("ring:2000000000", "2000000000-node ring"),
    ] {
        assert_eq!(spec(s).label(), label, "{s}");
    }
    for x in [0, 7, 10, 99, 1005, u32::MAX] {
        let mut out = String::from("x");
        push_decimal(&mut out, x);
        assert_eq!(out, format!("x{x}"));
    }
}

#[test]
fn parse_errors_are_plain() {
    assert!(TopologySpec::parse("grid").unwrap_err().contains("FAMILY:DIMS"));
    assert!(TopologySpec::parse("blob:4")
        .unwrap_err()
        .contains("unknown topology family"));
    assert!(TopologySpec::parse("stencil6:4x4x4").unwrap_err().contains("2D"));
    assert!(TopologySpec::parse("grid:0x3").is_err());
    assert!(TopologySpec::parse("tree:2x1").unwrap_err().contains("fan-out"));
    for bad in [
        "master-worker:1x8",
        "master-worker:4x8",
        "master-worker:8",
        "master-worker:9x3",
    ] {
        assert!(TopologySpec::parse(bad).unwrap_err().contains("2 ≤ m < n − m"), "{bad}");
    }
    assert!(TopologySpec::parse("tree:256").unwrap_err().contains("fan-out"));
    assert!(TopologySpec::parse("tree:255x255x255x255x255")
        .unwrap_err()
        .contains("too many"));
}

#[test]
fn opposite_directions() {
    let s = spec("grid:3x3");
    let east = Direction::Offset(vec![1, 0]);
    assert_eq!(s.opposite(4, &east).unwrap().name(), "west");
    let r = spec("ring:6");
    assert_eq!(r.opposite(0, &Direction::Shift(1)), Some(Direction::Shift(5)));
    let t = spec("binary-tree:7");
    assert_eq!(t.opposite(1, &Direction::Parent), Some(Direction::Child(0)));
    assert_eq!(t.opposite(2, &Direction::Parent), Some(Direction::Child(1)));
}

/// NPB DT's black hole of class W (DT/dt.c `buildBH`: comparator i reads sources 4i .. 4i+3,
/// the sink reads the comparators), numbered from the root down: root 0, comparators 1–2,
/// sources 3–10.
#[test]
fn a_tree_of_fan_outs_is_the_reduction_tree_it_names() {
    let t = spec("tree:2x4");
    assert_eq!(t.num_nodes(), 11);
    let mut expected: Vec<(u32, u32)> = vec![(0, 1), (0, 2)];
    for source in 0..8u32 {
        expected.push((1 + source / 4, 3 + source));
    }
    let g = t.graph();
    let mut edges: Vec<(u32, u32)> = g.edges().map(|(u, v)| (u.min(v), u.max(v))).collect();
    edges.sort_unstable();
    expected.sort_unstable();
    assert_eq!(edges, expected);
    assert_eq!(t.coords(0), [0, 0]);
    assert_eq!(t.coords(2), [1, 1]);
    assert_eq!(t.coords(10), [2, 7]);
    assert_eq!(t.neighbour(10, &Direction::Parent), Some(2));
    assert_eq!(t.neighbour(2, &Direction::Child(3)), Some(10));
    assert_eq!(t.neighbour(0, &Direction::Child(2)), None, "the root has 2 children");
    assert_eq!(t.neighbour(5, &Direction::Child(0)), None, "leaves have none");
    assert_eq!(t.opposite(10, &Direction::Parent), Some(Direction::Child(3)));
    assert_eq!(t.opposite(1, &Direction::Parent), Some(Direction::Child(0)));
}

/// The catalogue's tree fan-outs against a brute force that grows every sequence of fan-outs
/// level by level and counts its nodes.
#[test]
fn tree_fan_outs_are_every_level_complete_tree_of_n_nodes() {
    fn brute(n: u64, levels: &mut Vec<u32>, width: u64, nodes: u64, out: &mut Vec<Vec<u32>>) {
        if nodes == n && levels.len() >= 2 && levels.iter().any(|&b| b != levels[0]) {
            out.push(levels.clone());
        }
        for b in 2..=255u32 {
            let next = width * b as u64;
            if nodes + next > n {
                break;
            }
            levels.push(b);
            brute(n, levels, next, nodes + next, out);
            levels.pop();
        }
    }
    for n in 1..=200u32 {
        let mut expected = Vec::new();
        brute(n as u64, &mut Vec::new(), 1, 1, &mut expected);
        let mut got = crate::catalog::tree_fan_outs(n);
        expected.sort();
        got.sort();
        assert_eq!(got, expected, "{n} nodes");
    }
    assert_eq!(crate::catalog::tree_fan_outs(11), vec![vec![2, 4]]);
    assert!(
        crate::catalog::tree_fan_outs(43).contains(&vec![2, 4, 4]),
        "NPB DT BH class B"
    );
}

#[test]
fn master_worker_is_the_complete_bipartite_graph_of_masters_and_workers() {
    // Against the definition, pair by pair: an edge exactly between a master and a worker, and
    // the special-cased neighbour lists equal to the generic walk over the directions.
    for (m, n) in [(2u32, 5u32), (2, 8), (3, 11), (4, 9)] {
        let s = spec(&format!("master-worker:{m}x{n}"));
        let g = s.graph();
        assert_eq!(g.num_nodes(), n);
        assert_eq!(s.edge_count(), (m * (n - m)) as u64);
        for u in 0..n {
            for v in 0..n {
                assert_eq!(g.has_edge(u, v), (u < m) != (v < m), "{m}x{n}: {u}-{v}");
            }
            let mut walked: Vec<(Direction, u32)> = Vec::new();
            for d in s.directions() {
                if let Some(t) = s.neighbour(u, &d) {
                    if !walked.iter().any(|&(_, x)| x == t) {
                        walked.push((d, t));
                    }
                }
            }
            let mut listed = s.neighbours(u);
            listed.sort_by_key(|&(_, t)| t);
            walked.sort_by_key(|&(_, t)| t);
            assert_eq!(listed, walked, "{m}x{n}: node {u}");
        }
    }
}

/// What topology identification names `g`: the simplest candidate of its size with its edge
/// count and degrees that the isomorphism search proves the same graph (the stages of
/// `tracelogic_analysis::topology::identify_graph`, without filters and near matches).
fn identify(g: &Graph) -> Option<TopologySpec> {
    let n = g.num_nodes();
    let degrees = g.degree_histogram();
    crate::catalog::candidates(n)
        .into_iter()
        .filter(|c| c.edge_count() == g.num_edges() as u64 && c.degree_histogram() == degrees)
        .filter(|c| {
            matches!(
                crate::iso::isomorphism(g, &c.graph(), crate::iso::IsoOptions::for_nodes(n)),
                crate::iso::IsoOutcome::Isomorphic { .. }
            )
        })
        .min_by_key(crate::catalog::simplicity)
}

#[test]
fn binomial_tree_is_the_tree_of_the_binomial_broadcast() {
    for n in 2..=40u32 {
        let s = spec(&format!("binomial-tree:{n}"));
        assert_eq!(s.num_nodes(), n);
        let g = s.graph();
        assert_eq!(g.num_nodes(), n);
        assert_eq!(g.num_edges() as u32, n - 1, "{n}");
        assert_eq!(s.edge_count(), (n - 1) as u64, "{n}");
        assert_eq!(g.components().len(), 1, "{n}: connected");
        assert_eq!(s.degree_histogram(), g.degree_histogram(), "{n}");
        // The definition: the parent of i > 0 is i − 2^⌊log2 i⌋, one edge per node but the root.
        for i in 1..n {
            let mut top = 1;
            while top * 2 <= i {
                top *= 2;
            }
            assert!(g.has_edge(i, i - top), "{n}: {i}");
            assert_eq!(s.neighbour(i, &Direction::Parent), Some(i - top), "{n}: {i}");
        }
        assert_eq!(s.neighbour(0, &Direction::Parent), None);
        // Child(j) is +2^j from every rank that has the data before round j, j < ⌈log2 n⌉.
        let rounds = (n - 1).ilog2() + 1;
        assert_eq!(s.directions().len() as u32, 1 + rounds, "{n}");
        assert_eq!(n.next_power_of_two().trailing_zeros(), rounds, "{n}");
        for u in 0..n {
            for j in 0..rounds as u8 {
                let expected = (u < 1 << j && u + (1 << j) < n).then_some(u + (1 << j));
                let child = s.neighbour(u, &Direction::Child(j));
                assert_eq!(child, expected, "{n}: {u} child {j}");
                if let Some(c) = child {
                    assert_eq!(s.neighbour(c, &Direction::Parent), Some(u), "{n}: {c}");
                    assert_eq!(s.opposite(c, &Direction::Parent), Some(Direction::Child(j)), "{n}: {c}");
                    assert_eq!(s.opposite(u, &Direction::Child(j)), Some(Direction::Parent));
                }
            }
            assert_eq!(s.neighbours(u).len() as u32, g.degree(u), "{n}: {u}");
        }
        // Coordinates: [depth, position in level], depth the number of set bits.
        let mut levels: Vec<Vec<u32>> = Vec::new();
        for u in 0..n {
            let d = u.count_ones() as usize;
            levels.resize(levels.len().max(d + 1), Vec::new());
            levels[d].push(u);
        }
        for (depth, level) in levels.iter().enumerate() {
            for (pos, &u) in level.iter().enumerate() {
                assert_eq!(s.coords(u), vec![depth as u32, pos as u32], "{n}: {u}");
            }
        }
    }
    let big = spec("binomial-tree:1000003");
    assert_eq!(big.degree_histogram(), big.graph().degree_histogram());
    assert_eq!(spec("binomial-tree:8").label(), "8-node binomial tree");
    assert_eq!(spec("binomial-tree:1").num_nodes(), 1);
    assert!(TopologySpec::parse("binomial-tree:4x2").is_err());
}

/// MPQC (Massively Parallel Quantum Chemistry) gathers its timers over 8 ranks along a binomial
/// tree rooted at 0.
#[test]
fn mpqc_timer_gather_is_an_8_node_binomial_tree() {
    let mpqc = Graph::from_edges(8, [(0, 1), (0, 2), (0, 4), (1, 3), (1, 5), (2, 6), (3, 7)]);
    let b8 = spec("binomial-tree:8");
    assert_eq!(mpqc, b8.graph(), "the same graph, node for node");
    match crate::iso::isomorphism(&mpqc, &b8.graph(), crate::iso::IsoOptions::for_nodes(8)) {
        crate::iso::IsoOutcome::Isomorphic { mapping, .. } => crate::iso::verify(&mpqc, &b8.graph(), &mapping).unwrap(),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        identify(&mpqc).map(|s| s.label()).as_deref(),
        Some("8-node binomial tree")
    );
    // Rank 1 receives in round 0 and forwards in rounds 1 and 2.
    assert_eq!(b8.neighbour(1, &Direction::Parent), Some(0));
    assert_eq!(b8.neighbour(1, &Direction::Child(1)), Some(3));
    assert_eq!(b8.neighbour(1, &Direction::Child(2)), Some(5));
    assert_eq!(b8.neighbour(1, &Direction::Child(0)), None);
}

#[test]
fn binomial_tree_is_named_under_any_numbering_and_after_simpler_equals() {
    use rand::seq::SliceRandom;
    use rand::SeedableRng;
    let mut rng = rand::rngs::StdRng::seed_from_u64(16);
    let g = spec("binomial-tree:16").graph();
    for _ in 0..4 {
        let mut perm: Vec<u32> = (0..16).collect();
        perm.shuffle(&mut rng);
        let h = g.relabel(&perm);
        assert_eq!(
            identify(&h).map(|s| s.label()).as_deref(),
            Some("16-node binomial tree")
        );
    }
    // Small binomial trees are simpler families: a line up to 4 nodes, a binary tree of 5. Of 6
    // nodes it is also the 3-ary tree, named after it (one parameter against two).
    for (n, name) in [
        (2, "2-node line"),
        (3, "3-node line"),
        (4, "4-node line"),
        (5, "5-node binary tree"),
        (6, "6-node binomial tree"),
        (7, "7-node binomial tree"),
        (32, "32-node binomial tree"),
        (40, "40-node binomial tree"),
    ] {
        let got = identify(&spec(&format!("binomial-tree:{n}")).graph()).map(|s| s.label());
        assert_eq!(got.as_deref(), Some(name), "{n}");
    }
}
