//! Generated traces against topology identification (Logicalization §4.1–4.2 and the §5.3 synthetic
//! tests): the 5 % filter removes exactly the generated noise, the filtered graph is the
//! generated topology under the generated numbering, the identification lists that topology,
//! and its rank → node mapping equals the truth up to an automorphism of the topology.

use std::collections::BTreeSet;
use tracelogic_analysis::matrix::CommMatrix;
use tracelogic_analysis::topology::{identify_matrix, Threshold, TopologyOptions, TopologyReport};
use tracelogic_model::Selection;
use tracelogic_synth::{generate_with_truth, Family, Numbering, Spec, TopologySpec, Truth};

type Edges = BTreeSet<(u32, u32)>;

fn pair(a: u32, b: u32) -> (u32, u32) {
    (a.min(b), a.max(b))
}

/// Edges of `topology` with node u renamed `rename[u]`.
fn edges_of(topology: &TopologySpec, rename: impl Fn(u32) -> u32) -> Edges {
    topology
        .graph()
        .edges()
        .map(|(u, v)| pair(rename(u), rename(v)))
        .collect()
}

fn identify(topology: &str, numbering: Numbering, seed: u64, threshold: Threshold) -> (Spec, Truth, TopologyReport) {
    let spec = Spec {
        topology: TopologySpec::parse(topology).unwrap(),
        numbering,
        seed,
        iterations: 3,
        noise: Some("0.15:1%".parse().unwrap()),
        ..Spec::default()
    };
    let (trace, truth) = generate_with_truth(&spec).unwrap();
    let matrix = CommMatrix::from_trace(&trace, &Selection::default());
    let opts = TopologyOptions {
        threshold,
        ..TopologyOptions::default()
    };
    (spec, truth, identify_matrix(&matrix, &opts))
}

fn check(topology: &str, numbering: Numbering, seed: u64, threshold: Threshold) {
    let (spec, truth, report) = identify(topology, numbering, seed, threshold);
    let what = format!("{topology} {numbering} seed {seed} {threshold:?}");
    let rank_of_node = truth.rank_of_node();

    let noise: Edges = truth.phases[0]
        .noise
        .iter()
        .map(|l| pair(l.sender, l.receiver))
        .collect();
    assert!(!noise.is_empty(), "{what}: the spec asks for noise");
    let removed: Edges = report.filter.removed.iter().map(|p| pair(p.a, p.b)).collect();
    assert_eq!(removed, noise, "{what}: filtering must remove exactly the noise links");

    let kept: Edges = report.edges.iter().map(|&[a, b]| pair(a, b)).collect();
    assert_eq!(
        kept,
        edges_of(&spec.topology, |u| rank_of_node[u as usize]),
        "{what}: kept edges"
    );

    let id = &report.identification;
    let family = spec.topology.family.name();
    assert!(
        id.equivalents
            .iter()
            .any(|m| m.family == family && m.dims == spec.topology.dims),
        "{what}: identified as {:?}, equivalents {:?}",
        id.matched,
        id.equivalents.iter().map(|m| &m.label).collect::<Vec<_>>()
    );
    // The mapping names a node of the matched candidate for every rank; composed with the truth
    // it must map the candidate's edges onto the generated topology's edges.
    let matched = id.matched.as_ref().expect("a match");
    let candidate = TopologySpec::new(Family::from_name(&matched.family).unwrap(), matched.dims.clone()).unwrap();
    assert_eq!(id.mapping.len() as u32, truth.ranks, "{what}: mapping size");
    let mut node_of = vec![u32::MAX; truth.ranks as usize];
    for place in &id.mapping {
        node_of[place.rank as usize] = place.node;
    }
    let through_mapping = edges_of(&spec.topology, |u| node_of[rank_of_node[u as usize] as usize]);
    assert_eq!(
        through_mapping,
        edges_of(&candidate, |u| u),
        "{what}: the identified mapping is not the generated one up to an automorphism"
    );
}

#[test]
fn paper_synthetic_cases_are_identified_with_their_mapping() {
    // Logicalization §5.3: ordered and 2/3-renumbered grids and 6-point stencils.
    for topology in ["grid:8x8", "stencil6:8x8"] {
        check(topology, Numbering::RowMajor, 1, Threshold::Percent(5.0));
        check(topology, Numbering::Partial(2.0 / 3.0), 2, Threshold::Percent(5.0));
    }
}

#[test]
fn other_families_under_random_numbering_are_identified() {
    for (i, topology) in [
        "torus:6x4",
        "torus:4x4x3",
        "stencil8:5x5",
        "hypercube:5",
        "binary-tree:31",
        "ring:12",
        "master-worker:3x11",
    ]
    .into_iter()
    .enumerate()
    {
        check(topology, Numbering::Random, 10 + i as u64, Threshold::Percent(5.0));
    }
}

#[test]
fn automatic_threshold_removes_one_percent_noise() {
    check("stencil6:6x6", Numbering::Random, 3, Threshold::Auto);
    check("torus:8x8", Numbering::Partial(0.5), 4, Threshold::Auto);
}
