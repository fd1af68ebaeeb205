//! Generated traces (tracelogic_synth) of every family through the whole path: trace →
//! communication matrix → topology, under row-major, 2/3-renumbered and random numbering. The
//! generator's own record of which rank plays which node checks the reported mapping up to an
//! automorphism: the reported node of each rank must have, as neighbours, the reported nodes
//! of that rank's neighbours.

use tracelogic_analysis::matrix::CommMatrix;
use tracelogic_analysis::topology::{identify_matrix, TopologyOptions};
use tracelogic_model::Selection;
use tracelogic_synth::{generate_with_truth, Numbering, Spec, TopologySpec};

#[test]
fn generated_traces_of_every_family_are_identified_with_consistent_mappings() {
    let families = [
        "grid:4x3",
        "torus:4x4",
        "torus:3x3x2",
        "stencil6:4x3",
        "stencil8:4x4",
        "stencil19-mesh:3x3x2",
        "stencil27:3x3x3",
        "hypercube:3",
        "binary-tree:10",
        "kary-tree:3x13",
        "star:7",
        "ring:9",
        "line:6",
        "all-to-all:5",
        "butterfly:2",
    ];
    for (i, family) in families.iter().enumerate() {
        for numbering in [Numbering::RowMajor, Numbering::Partial(2.0 / 3.0), Numbering::Random] {
            let topology = TopologySpec::parse(family).unwrap();
            let spec = Spec {
                topology: topology.clone(),
                numbering,
                seed: 100 + i as u64,
                iterations: 2,
                ..Spec::default()
            };
            let (trace, truth) = generate_with_truth(&spec).unwrap();
            let matrix = CommMatrix::from_trace(&trace, &Selection::default());
            let rep = identify_matrix(&matrix, &TopologyOptions::default());
            let what = format!("{family} {numbering:?}");
            let id = &rep.identification;
            assert!(
                id.equivalents.iter().any(|e| e.label == topology.label()),
                "{what}: equivalents {:?}",
                id.equivalents
            );
            // The filtered graph is the generated topology under the generated numbering.
            let rank_of_node = truth.rank_of_node();
            let mut expected: Vec<[u32; 2]> = topology
                .graph()
                .edges()
                .map(|(u, v)| {
                    let (a, b) = (rank_of_node[u as usize], rank_of_node[v as usize]);
                    [a.min(b), a.max(b)]
                })
                .collect();
            expected.sort_unstable();
            assert_eq!(rep.edges, expected, "{what}");
            // Every rank's reported neighbours are exactly its communication partners.
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
    }
}
