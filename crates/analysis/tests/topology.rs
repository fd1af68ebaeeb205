//! Topology identification on generated communication matrices: every family at several
//! sizes under row-major, 2/3-renumbered and random numbering, near misses, filtering, the
//! no-point-to-point and disconnected cases, user patterns.

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use std::collections::BTreeSet;
use tracelogic_analysis::matrix::{CommMatrix, Entry};
use tracelogic_analysis::topology::{
    identify_graph, identify_matrix, CustomPattern, Identification, Threshold, TopologyOptions, TopologyReport,
};
use tracelogic_graph::{Family, Graph, TopologySpec};

/// A matrix where every edge of `g` carries `volume(u, v)` bytes each way, after renaming node
/// `u` to rank `perm[u]`.
fn matrix(g: &Graph, perm: &[u32], volume: impl Fn(u32, u32) -> u64) -> CommMatrix {
    let n = g.num_nodes() as usize;
    let mut bytes = vec![0u64; n * n];
    let mut messages = vec![0u64; n * n];
    for (u, v) in g.edges() {
        let (a, b) = (perm[u as usize] as usize, perm[v as usize] as usize);
        let vol = volume(a as u32, b as u32);
        bytes[a * n + b] += vol;
        bytes[b * n + a] += vol;
        messages[a * n + b] += 1;
        messages[b * n + a] += 1;
    }
    CommMatrix::from_dense(n as u32, &bytes, &messages).unwrap()
}

/// Row-major, the paper's partial renumbering (2/3 of the ranks permuted among themselves),
/// and a fully random numbering.
fn numberings(n: u32, rng: &mut StdRng) -> Vec<(&'static str, Vec<u32>)> {
    let identity: Vec<u32> = (0..n).collect();
    let mut partial = identity.clone();
    let mut chosen: Vec<usize> = (0..n as usize).collect();
    chosen.shuffle(rng);
    chosen.truncate(2 * n as usize / 3);
    let mut targets = chosen.clone();
    targets.shuffle(rng);
    for (&i, &t) in chosen.iter().zip(&targets) {
        partial[i] = t as u32;
    }
    let mut random = identity.clone();
    random.shuffle(rng);
    vec![("row-major", identity), ("two-thirds", partial), ("random", random)]
}

/// Independent check of a reported mapping: rebuild the matched topology from its family and
/// dimensions and check that ranks map one-to-one onto its nodes with the same edges, and that
/// the reported coordinates and neighbours agree with the topology.
fn check_mapping(g_ranks: &Graph, id: &Identification) {
    let m = id.matched.as_ref().expect("a match");
    let spec = TopologySpec::new(Family::from_name(&m.family).unwrap(), m.dims.clone()).unwrap();
    let t = spec.graph();
    let n = g_ranks.num_nodes() as usize;
    assert_eq!(id.mapping.len(), n);
    let mut node_of = vec![u32::MAX; n];
    let mut seen = BTreeSet::new();
    for p in &id.mapping {
        assert!(seen.insert(p.node), "node {} used twice", p.node);
        node_of[p.rank as usize] = p.node;
        assert_eq!(p.coords, spec.coords(p.node));
        let ranks: BTreeSet<u32> = p.neighbours.iter().map(|x| x.rank).collect();
        let actual: BTreeSet<u32> = g_ranks.neighbors(p.rank).iter().copied().collect();
        assert_eq!(ranks, actual, "neighbours of rank {}", p.rank);
    }
    assert_eq!(t.num_edges(), g_ranks.num_edges());
    for (a, b) in g_ranks.edges() {
        assert!(t.has_edge(node_of[a as usize], node_of[b as usize]), "edge {a}-{b}");
    }
}

fn labels(id: &Identification) -> Vec<String> {
    id.equivalents.iter().map(|e| e.label.clone()).collect()
}

fn identify(g: &Graph, perm: &[u32]) -> (TopologyReport, Graph) {
    let m = matrix(g, perm, |_, _| 1000);
    let rep = identify_matrix(&m, &TopologyOptions::default());
    (rep, g.relabel(perm))
}

#[test]
fn every_family_at_several_sizes_and_numberings_is_identified_with_a_verified_mapping() {
    let specs = [
        "grid:4x3",
        "grid:6x5",
        "grid:4x3x2",
        "torus:5x4",
        "torus:7x3",
        "torus:3x3x3",
        "stencil6:3x3",
        "stencil6:6x5",
        "stencil6:8x4",
        "stencil6-mesh:5x4",
        "stencil8:5x5",
        "stencil8-mesh:6x4",
        "stencil19:3x3x3",
        "stencil19-mesh:4x3x3",
        "stencil27:4x3x3",
        "stencil27-mesh:3x3x2",
        "hypercube:3",
        "hypercube:5",
        "binary-tree:15",
        "binary-tree:22",
        "kary-tree:3x13",
        "kary-tree:4x30",
        "star:10",
        "all-to-all:6",
        "ring:11",
        "ring:40",
        "line:9",
        "butterfly:2",
        "butterfly:3",
    ];
    let mut rng = StdRng::seed_from_u64(2024);
    for s in specs {
        let spec = TopologySpec::parse(s).unwrap();
        let g = spec.graph();
        for (how, perm) in numberings(g.num_nodes(), &mut rng) {
            let (rep, gr) = identify(&g, &perm);
            let id = &rep.identification;
            assert!(id.matched.is_some(), "{s} {how}: no match; stages {:?}", id.stages);
            assert!(
                labels(id).contains(&spec.label()),
                "{s} {how}: equivalents {:?}",
                labels(id)
            );
            check_mapping(&gr, id);
            assert!(rep.components.is_empty());
        }
    }
}

#[test]
fn equivalent_families_are_listed_and_the_simplest_is_named() {
    // MG on 16 ranks: 2x2x2x2 grid = 4x2x2 torus = 4x4 torus = 4-cube.
    let g = TopologySpec::parse("grid:2x2x2x2").unwrap().graph();
    let (rep, _) = identify(&g, &(0..16).collect::<Vec<_>>());
    let eq = labels(&rep.identification);
    for l in [
        "2x2x2x2 grid",
        "4x2x2 torus",
        "4x4 torus",
        "4-dimensional hypercube (2x2x2x2 grid)",
    ] {
        assert!(eq.contains(&l.to_string()), "{eq:?}");
    }
    assert_eq!(rep.identification.matched.as_ref().unwrap().family, "hypercube");
    assert_eq!(rep.identification.matched.as_ref().unwrap().dims, vec![4]);
    // A 2x2 torus is a 4-ring: the ring is named.
    let g = TopologySpec::parse("torus:2x2").unwrap().graph();
    let (rep, _) = identify(&g, &[0, 1, 2, 3]);
    assert_eq!(rep.identification.matched.unwrap().label, "4-node ring");
}

#[test]
fn stages_narrow_the_candidates_like_table_7() {
    let g = TopologySpec::parse("stencil6:4x4").unwrap().graph();
    let (rep, _) = identify(&g, &(0..16).collect::<Vec<_>>());
    let names: Vec<&str> = rep.identification.stages.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "generated",
            "nodes and edges",
            "degree sequence",
            "colour refinement",
            "distance profile",
            "spectrum",
            "isomorphism"
        ]
    );
    let counts: Vec<usize> = rep.identification.stages.iter().map(|s| s.candidates).collect();
    assert!(counts.windows(2).all(|w| w[0] >= w[1]), "{counts:?}");
    assert!(counts[0] > 20 && counts[6] >= 1, "{counts:?}");
    // 16 nodes, 48 edges, 6-regular: only the periodic 6-point stencil and what equals it remain.
    assert!(rep.identification.stages[1]
        .survivors
        .contains(&"4x4 6-point stencil".to_string()));
    assert!(rep.identification.spectrum.as_ref().unwrap().len() == 16);
    assert_eq!(rep.identification.spectrum, rep.identification.candidate_spectrum);
}

#[test]
fn one_edge_removed_or_added_gives_no_match_but_a_near_match_naming_the_edge() {
    let mut rng = StdRng::seed_from_u64(77);
    for s in ["torus:6x5", "stencil6:5x4", "grid:6x4"] {
        let g = TopologySpec::parse(s).unwrap().graph();
        let n = g.num_nodes();
        let mut edges: Vec<(u32, u32)> = g.edges().collect();
        let removed = edges.remove(rng.gen_range(0..edges.len()));
        let perm: Vec<u32> = {
            let mut p: Vec<u32> = (0..n).collect();
            p.shuffle(&mut rng);
            p
        };
        let less = Graph::from_edges(n, edges.clone());
        let (rep, _) = identify(&less, &perm);
        let id = &rep.identification;
        assert!(id.matched.is_none(), "{s} minus an edge matched {:?}", id.matched);
        let near = id.near_matches.first().unwrap_or_else(|| panic!("{s}: no near match"));
        assert_eq!(near.topology.label, TopologySpec::parse(s).unwrap().label());
        assert_eq!(near.distance, 1);
        let (a, b) = (perm[removed.0 as usize], perm[removed.1 as usize]);
        assert_eq!((near.missing_edges[0].a, near.missing_edges[0].b), (a.min(b), a.max(b)));

        // One extra edge between two non-adjacent nodes.
        let extra = loop {
            let (u, v) = (rng.gen_range(0..n), rng.gen_range(0..n));
            if u != v && !g.has_edge(u, v) {
                break (u, v);
            }
        };
        let more = Graph::from_edges(n, g.edges().chain([extra]));
        let (rep, _) = identify(&more, &perm);
        let id = &rep.identification;
        assert!(id.matched.is_none(), "{s} plus an edge matched {:?}", id.matched);
        let near = &id.near_matches[0];
        assert_eq!(near.distance, 1, "{s}: {near:?}");
        let (a, b) = (perm[extra.0 as usize], perm[extra.1 as usize]);
        assert_eq!((near.extra_edges[0].a, near.extra_edges[0].b), (a.min(b), a.max(b)));
        assert!(near.extra_edges[0].share > 0.0);
    }
}

#[test]
fn automatic_threshold_drops_stray_edges_that_a_fixed_five_percent_keeps() {
    // A 2x2x2 hypercube (MG on 8 ranks) with main volumes spread 85..100 and stray pairs at 2-7%.
    let g = TopologySpec::parse("hypercube:3").unwrap().graph();
    let perm: Vec<u32> = (0..8).collect();
    let main = matrix(&g, &perm, |a, b| 850 + 10 * ((a + b) as u64 % 16));
    // Largest pair: 2 x 1000 bytes; stray pairs at 7%, 4% and 2% of it.
    let stray = [(0u32, 7u32, 140u64), (1, 6, 80), (2, 5, 40)];
    let stray_entries = stray.iter().flat_map(|&(a, b, v)| {
        [(a, b), (b, a)].map(|(from, to)| Entry {
            from,
            to,
            bytes: v / 2,
            messages: 0,
        })
    });
    let m = CommMatrix::from_entries(8, main.entries().chain(stray_entries)).unwrap();
    let auto = identify_matrix(&m, &TopologyOptions::default());
    assert_eq!(auto.filter.mode, "auto");
    assert_eq!(auto.filter.pairs_before, 15);
    assert_eq!(auto.filter.pairs_kept, 12);
    assert_eq!(auto.filter.removed.len(), 3);
    assert_eq!((auto.filter.removed[0].a, auto.filter.removed[0].b), (0, 7));
    assert!(auto.filter.removed_share > 0.0 && auto.filter.removed_share < 0.1);
    assert!(auto.filter.gap_ratio.unwrap() > 10.0);
    assert_eq!(auto.identification.matched.as_ref().unwrap().family, "hypercube");

    let fixed = identify_matrix(
        &m,
        &TopologyOptions {
            threshold: Threshold::Percent(5.0),
            ..TopologyOptions::default()
        },
    );
    assert_eq!(fixed.filter.pairs_kept, 13, "5% keeps the 7% stray pair");
    assert!(fixed.identification.matched.is_none());
}

#[test]
fn uniform_volumes_are_not_cut() {
    let g = TopologySpec::parse("torus:4x4").unwrap().graph();
    let m = matrix(&g, &(0..16).collect::<Vec<_>>(), |a, b| 1000 + (a * b) as u64 % 300);
    let rep = identify_matrix(&m, &TopologyOptions::default());
    assert_eq!(rep.filter.pairs_kept, 32);
    assert!(rep.filter.gap_ratio.is_none());
    assert!(rep.identification.matched.is_some());
}

#[test]
fn no_point_to_point_traffic_is_reported_as_such() {
    let m = CommMatrix::from_dense(4, &[0; 16], &[0; 16]).unwrap();
    let rep = identify_matrix(&m, &TopologyOptions::default());
    assert!(rep.no_point_to_point);
    assert!(rep.identification.matched.is_none() && rep.identification.stages.is_empty());
}

#[test]
fn disconnected_graph_is_analysed_per_component() {
    // Two 3x3 tori side by side (ranks 0..9 and 9..18) and one silent rank 18.
    let t = TopologySpec::parse("torus:3x3").unwrap().graph();
    let edges = t.edges().chain(t.edges().map(|(u, v)| (u + 9, v + 9)));
    let g = Graph::from_edges(19, edges);
    let (rep, _) = identify(&g, &(0..19).collect::<Vec<_>>());
    assert!(rep.identification.matched.is_none());
    assert_eq!(rep.isolated_ranks, vec![18]);
    assert_eq!(rep.components.len(), 2);
    for (c, first) in rep.components.iter().zip([0u32, 9]) {
        assert_eq!(c.ranks, (first..first + 9).collect::<Vec<_>>());
        let m = c.identification.matched.as_ref().unwrap();
        assert_eq!(m.label, "3x3 torus");
        assert!(c
            .identification
            .mapping
            .iter()
            .all(|p| (first..first + 9).contains(&p.rank)));
    }
}

#[test]
fn user_pattern_from_a_saved_graph_matches_a_renumbered_run() {
    // A pattern no family covers: a 4x4 torus plus the two long diagonals of every row.
    let t = TopologySpec::parse("torus:4x4").unwrap().graph();
    let extra = (0..4).map(|r| (4 * r, 4 * r + 2));
    let pattern = Graph::from_edges(16, t.edges().chain(extra));
    let opts = TopologyOptions {
        library: vec![CustomPattern {
            name: "cg16".into(),
            graph: pattern.clone(),
        }],
        ..TopologyOptions::default()
    };
    let mut perm: Vec<u32> = (0..16).collect();
    perm.shuffle(&mut StdRng::seed_from_u64(4));
    let rep = identify_graph(&pattern.relabel(&perm), &opts);
    let m = rep.identification.matched.as_ref().unwrap();
    assert_eq!(m.family, "custom");
    assert!(m.label.contains("cg16"));
    let node_of: Vec<u32> = {
        let mut v = vec![0; 16];
        for p in &rep.identification.mapping {
            v[p.rank as usize] = p.node;
        }
        v
    };
    for (a, b) in pattern.relabel(&perm).edges() {
        assert!(pattern.has_edge(node_of[a as usize], node_of[b as usize]));
    }
    // Without the pattern, nothing matches.
    let rep = identify_graph(&pattern.relabel(&perm), &TopologyOptions::default());
    assert!(rep.identification.matched.is_none());
}

#[test]
fn directions_name_the_neighbours_for_the_logical_trace() {
    let g = TopologySpec::parse("stencil6:4x4").unwrap().graph();
    let (rep, _) = identify(&g, &(0..16).collect::<Vec<_>>());
    let id = &rep.identification;
    let spec = TopologySpec::new(
        Family::from_name(&id.matched.as_ref().unwrap().family).unwrap(),
        id.matched.as_ref().unwrap().dims.clone(),
    )
    .unwrap();
    let mut names: Vec<String> = id.mapping[5]
        .neighbours
        .iter()
        .map(|n| n.direction.to_string())
        .collect();
    names.sort();
    assert_eq!(names, ["east", "north", "northeast", "south", "southwest", "west"]);
    // The named neighbour really is there in the topology.
    let p = &id.mapping[5];
    for nb in &p.neighbours {
        let node = id.mapping[nb.rank as usize].node;
        assert!(spec.graph().has_edge(p.node, node));
    }
}

#[test]
fn report_serialises_with_the_documented_fields() {
    let g = TopologySpec::parse("grid:4x2").unwrap().graph();
    let (rep, _) = identify(&g, &(0..8).collect::<Vec<_>>());
    let v = serde_json::to_value(&rep).unwrap();
    for key in [
        "match",
        "equivalents",
        "stages",
        "mapping",
        "filter",
        "edges",
        "components",
    ] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    assert_eq!(v["match"]["family"], "grid");
    assert_eq!(v["match"]["dims"], serde_json::json!([4, 2]));
    assert_eq!(v["match"]["label"], "4x2 grid");
    assert!(v["stages"][0]["milliseconds"].is_number());
    assert_eq!(v["mapping"][5]["coords"], serde_json::json!([1, 1]));
}

/// Logicalization Table 4: the 16-process MG matrix (KB/s, ×100 here), whose 0.46 entries are stray
/// traffic the paper filters out. Row P11's OCR'd "8" in column 8 is 0 in the paper's binary
/// matrix and is read as 0.
const MG16: [[u32; 16]; 16] = [
    [0, 8709, 8909, 0, 9119, 0, 0, 0, 0, 0, 0, 0, 9119, 0, 0, 0],
    [8709, 0, 0, 8909, 0, 9119, 0, 0, 0, 0, 0, 0, 0, 9119, 0, 0],
    [8909, 0, 0, 8709, 0, 0, 9119, 0, 0, 0, 0, 0, 0, 0, 9119, 0],
    [0, 8909, 8709, 0, 0, 0, 0, 9119, 0, 0, 0, 0, 0, 0, 0, 9119],
    [9121, 0, 0, 0, 0, 8709, 8910, 0, 9123, 0, 0, 0, 46, 0, 0, 0],
    [0, 9121, 0, 0, 8709, 0, 0, 8910, 0, 9123, 0, 0, 0, 46, 0, 0],
    [0, 0, 9121, 0, 8910, 0, 0, 8709, 0, 0, 9123, 0, 0, 0, 46, 0],
    [0, 0, 0, 9121, 0, 8910, 8709, 0, 0, 0, 0, 9123, 0, 0, 0, 46],
    [0, 0, 0, 0, 9119, 0, 0, 0, 0, 8709, 8909, 0, 9119, 0, 0, 0],
    [0, 0, 0, 0, 0, 9119, 0, 0, 8709, 0, 0, 8909, 0, 9119, 0, 0],
    [0, 0, 0, 0, 0, 0, 9119, 0, 8909, 0, 0, 8709, 0, 0, 9119, 0],
    [0, 0, 0, 0, 0, 0, 0, 9119, 0, 8909, 8709, 0, 0, 0, 0, 9119],
    [9123, 0, 0, 0, 46, 0, 0, 0, 9121, 0, 0, 0, 0, 8710, 8910, 0],
    [0, 9123, 0, 0, 0, 46, 0, 0, 0, 9121, 0, 0, 8709, 0, 0, 8910],
    [0, 0, 9123, 0, 0, 0, 46, 0, 0, 0, 9121, 0, 8910, 0, 0, 8709],
    [0, 0, 0, 9123, 0, 0, 0, 46, 0, 0, 0, 9121, 0, 8910, 8710, 0],
];

#[test]
fn paper_mg16_matrix_is_filtered_to_the_4_cube_and_its_equivalents() {
    let bytes: Vec<u64> = MG16.iter().flatten().map(|&v| v as u64).collect();
    let messages: Vec<u64> = bytes.iter().map(|&b| u64::from(b > 0)).collect();
    let m = CommMatrix::from_dense(16, &bytes, &messages).unwrap();
    for threshold in [Threshold::Auto, Threshold::Percent(5.0)] {
        let rep = identify_matrix(
            &m,
            &TopologyOptions {
                threshold,
                ..TopologyOptions::default()
            },
        );
        // The four 0.46 pairs (4-12, 5-13, 6-14, 7-15) go; the paper's binary matrix remains.
        let removed: Vec<(u32, u32)> = rep.filter.removed.iter().map(|p| (p.a, p.b)).collect();
        assert_eq!(removed, vec![(4, 12), (5, 13), (6, 14), (7, 15)], "{threshold:?}");
        assert!(rep.filter.removed_share < 0.01);
        let id = &rep.identification;
        assert_eq!(
            id.matched.as_ref().unwrap().label,
            "4-dimensional hypercube (2x2x2x2 grid)"
        );
        let eq = labels(id);
        for l in ["4x4 torus", "4x2x2 torus", "2x2x2x2 grid"] {
            assert!(eq.contains(&l.to_string()), "{eq:?}");
        }
        let g = Graph::from_edges(16, rep.edges.iter().map(|&[a, b]| (a, b)));
        check_mapping(&g, id);
    }
}

#[test]
fn the_report_json_reads_back_unchanged() {
    // The JSON `tracelogic topology --json` prints must be readable by other tools (and the web
    // app): one `ranks` field, and a round trip that loses nothing.
    let g = TopologySpec::parse("stencil6:4x4").unwrap().graph();
    let perm: Vec<u32> = (0..16).rev().collect();
    let (report, _) = identify(&g, &perm);
    let json = serde_json::to_string(&report).unwrap();
    assert_eq!(json.matches("\"ranks\":16").count(), 1, "{json}");
    let back: TopologyReport = serde_json::from_str(&json).unwrap();
    // (serde_json parses floats to within one ulp, so stage timings may differ in the last digit.)
    assert_eq!(
        (&back.edges, &back.filter, &back.components),
        (&report.edges, &report.filter, &report.components)
    );
    assert_eq!(back.identification.equivalents, report.identification.equivalents);
    assert_eq!(back.identification.matched, report.identification.matched);
    assert_eq!(back.identification.mapping, report.identification.mapping);
}

/// MPQC 2.3 gathers its per-node timers at the end of a run along MPI's binomial tree: on 8
/// ranks the edges 0-1, 0-2, 0-4, 1-3, 1-5, 2-6, 3-7 (held-out `mpqc-8`, read from its DUMPI
/// trace with `dumpi2ascii`). The identification names it so, under any rank numbering, and maps
/// every edge onto the tree's.
#[test]
fn mpqc_timer_gather_is_an_8_node_binomial_tree() {
    let edges = [(0, 1), (0, 2), (0, 4), (1, 3), (1, 5), (2, 6), (3, 7)];
    let tree = Graph::from_edges(8, edges.iter().copied());
    let spec = TopologySpec::parse("binomial-tree:8").unwrap();
    for seed in 0..4 {
        let mut perm: Vec<u32> = (0..8).collect();
        perm.shuffle(&mut StdRng::seed_from_u64(seed));
        let g = tree.relabel(&perm);
        let rep = identify_graph(&g, &TopologyOptions::default());
        let m = rep.identification.matched.as_ref().expect("a match");
        assert_eq!(m.label, "8-node binomial tree");
        let mut node_of = [0u32; 8];
        for p in &rep.identification.mapping {
            node_of[p.rank as usize] = p.node;
        }
        for (a, b) in g.edges() {
            assert!(spec.graph().has_edge(node_of[a as usize], node_of[b as usize]));
        }
    }
}
