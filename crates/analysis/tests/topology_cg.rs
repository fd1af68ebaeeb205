//! NAS CG as a built-in family, end to end: generated CG-like traces (row partners of the
//! recursive-doubling reduction plus the transpose partner, cg.f) from 4 to 1,024 ranks under
//! row-major, 2/3-renumbered and random numbering go through the communication matrix to the
//! topology, which must name NAS CG (or the simpler family it equals) with a mapping whose
//! every reported neighbour is a communication partner; one edge more or less must not match.

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::collections::BTreeMap;
use tracelogic_analysis::matrix::CommMatrix;
use tracelogic_analysis::topology::{identify_graph, identify_matrix, TopologyOptions, TopologyReport};
use tracelogic_graph::families::nas_cg_grid;
use tracelogic_graph::{Family, Graph};
use tracelogic_model::Selection;
use tracelogic_synth::{generate_with_truth, CollectiveSpec, Noise, Numbering, Spec, TopologySpec};

fn cg(n: u32) -> TopologySpec {
    TopologySpec::new(Family::NasCg, nas_cg_grid(n).unwrap().to_vec()).unwrap()
}

/// The mapping is consistent with the run: each rank's reported neighbours are exactly its
/// partners, and every edge joins two ranks whose reported nodes are adjacent in the family.
fn assert_mapping_consistent(rep: &TopologyReport, what: &str) {
    let id = &rep.identification;
    let m = id.matched.as_ref().unwrap_or_else(|| panic!("{what}: no match"));
    let spec = TopologySpec::new(Family::from_name(&m.family).unwrap(), m.dims.clone()).unwrap();
    let reference = spec.graph();
    let node: BTreeMap<u32, u32> = id.mapping.iter().map(|p| (p.rank, p.node)).collect();
    assert_eq!(node.len() as u32, id.ranks, "{what}: every rank placed once");
    for &[a, b] in &rep.edges {
        assert!(
            reference.has_edge(node[&a], node[&b]),
            "{what}: edge {a}-{b} not in {}",
            m.label
        );
    }
    for p in &id.mapping {
        let mut got: Vec<u32> = p.neighbours.iter().map(|n| n.rank).collect();
        got.sort_unstable();
        let mut want: Vec<u32> = rep
            .edges
            .iter()
            .filter_map(|&[a, b]| (a == p.rank).then_some(b).or((b == p.rank).then_some(a)))
            .collect();
        want.sort_unstable();
        assert_eq!(got, want, "{what}: rank {}", p.rank);
    }
}

fn cg_spec(n: u32, numbering: Numbering, seed: u64) -> Spec {
    let [rows, cols] = nas_cg_grid(n).unwrap();
    // As in cg.f: with npcols = 2·nprows a rank sends half its rows to the transpose partner.
    let mut direction_bytes = BTreeMap::new();
    if cols != rows {
        direction_bytes.insert("transpose".to_string(), 2048);
    }
    Spec {
        topology: cg(n),
        numbering,
        seed,
        iterations: 2,
        bytes: 4096,
        direction_bytes,
        collectives: vec!["allreduce:1".parse::<CollectiveSpec>().unwrap()],
        ..Spec::default()
    }
}

#[test]
fn generated_cg_traces_from_4_to_1024_ranks_are_named_nas_cg() {
    for l in 2..=10u32 {
        let n = 1 << l;
        let numberings: &[Numbering] = if l <= 6 {
            &[Numbering::RowMajor, Numbering::Partial(2.0 / 3.0), Numbering::Random]
        } else {
            &[Numbering::Random]
        };
        for (i, &numbering) in numberings.iter().enumerate() {
            let what = format!("CG {n} ranks {numbering:?}");
            let (trace, truth) = generate_with_truth(&cg_spec(n, numbering, 7 * l as u64 + i as u64)).unwrap();
            let rep = identify_matrix(
                &CommMatrix::from_trace(&trace, &Selection::default()),
                &TopologyOptions::default(),
            );
            // The filtered graph is CG's under the generated numbering.
            let rank_of_node = truth.rank_of_node();
            let mut expected: Vec<[u32; 2]> = cg(n)
                .graph()
                .edges()
                .map(|(u, v)| {
                    let (a, b) = (rank_of_node[u as usize], rank_of_node[v as usize]);
                    [a.min(b), a.max(b)]
                })
                .collect();
            expected.sort_unstable();
            assert_eq!(rep.edges, expected, "{what}");
            let id = &rep.identification;
            let label = id.matched.as_ref().map(|m| m.label.clone());
            // Small CG runs are simpler families, named as such with CG among the equivalents:
            // 4 ranks (0-1 and 2-3 in rows, 1-2 transposed) are a line; 8 ranks (two 4-cycles
            // joined by 2-4 and 3-5) are a 4x2 grid, a ladder.
            let simpler = match n {
                4 => Some("4-node line"),
                8 => Some("4x2 grid"),
                _ => None,
            };
            if let Some(simpler) = simpler {
                assert_eq!(label.as_deref(), Some(simpler), "{what}");
                assert!(id.equivalents.iter().any(|e| e.label == cg(n).label()), "{what}");
            } else {
                assert_eq!(label, Some(cg(n).label()), "{what}: equivalents {:?}", id.equivalents);
                let m = id.matched.as_ref().unwrap();
                assert_eq!((m.family.as_str(), m.dims.clone()), ("nas-cg", cg(n).dims), "{what}");
            }
            assert_mapping_consistent(&rep, &what);
        }
    }
}

#[test]
fn diagonal_ranks_have_no_transpose_neighbour_in_the_mapping() {
    let (trace, _) = generate_with_truth(&cg_spec(64, Numbering::Random, 3)).unwrap();
    let rep = identify_matrix(
        &CommMatrix::from_trace(&trace, &Selection::default()),
        &TopologyOptions::default(),
    );
    let id = &rep.identification;
    assert_eq!(id.matched.as_ref().unwrap().label, "NAS CG 8x8");
    for p in &id.mapping {
        let transposes = p.neighbours.iter().filter(|n| n.direction == "transpose").count();
        let on_diagonal = p.coords[0] == p.coords[1];
        assert_eq!(
            transposes,
            usize::from(!on_diagonal),
            "rank {} at {:?}",
            p.rank,
            p.coords
        );
        let row_bits: Vec<&str> = p
            .neighbours
            .iter()
            .filter(|n| n.direction.starts_with("row-bit"))
            .map(|n| n.direction.as_ref())
            .collect();
        assert_eq!(row_bits, ["row-bit0", "row-bit1", "row-bit2"], "rank {}", p.rank);
    }
}

#[test]
fn stray_traffic_is_filtered_before_cg_is_named() {
    let spec = Spec {
        noise: Some("0.1:2%".parse::<Noise>().unwrap()),
        ..cg_spec(256, Numbering::Random, 11)
    };
    let (trace, _) = generate_with_truth(&spec).unwrap();
    let rep = identify_matrix(
        &CommMatrix::from_trace(&trace, &Selection::default()),
        &TopologyOptions::default(),
    );
    assert!(!rep.filter.removed.is_empty(), "the noise pairs are removed");
    assert_eq!(rep.identification.matched.unwrap().label, "NAS CG 16x16");
}

#[test]
fn one_edge_more_or_less_is_a_near_match_not_a_match() {
    let mut rng = StdRng::seed_from_u64(5);
    for n in [32u32, 128] {
        let g = cg(n).graph();
        let mut perm: Vec<u32> = (0..n).collect();
        perm.shuffle(&mut rng);
        let h = g.relabel(&perm);
        let mut edges: Vec<(u32, u32)> = h.edges().collect();
        let removed = Graph::from_edges(n, edges[1..].to_vec());
        let (u, v) = (0..n)
            .flat_map(|u| (u + 1..n).map(move |v| (u, v)))
            .find(|&(u, v)| !h.has_edge(u, v))
            .unwrap();
        edges.push((u, v));
        let added = Graph::from_edges(n, edges);
        for (what, graph) in [("one edge removed", removed), ("one edge added", added)] {
            let rep = identify_graph(&graph, &TopologyOptions::default());
            let id = &rep.identification;
            assert!(id.matched.is_none(), "{n} {what}: matched {:?}", id.matched);
            let near = id
                .near_matches
                .first()
                .unwrap_or_else(|| panic!("{n} {what}: no near match"));
            assert_eq!(near.topology.label, cg(n).label(), "{n} {what}");
            assert_eq!(near.distance, 1, "{n} {what}");
        }
    }
}
