//! Property: a topology from `tracelogic_graph::families`, with its nodes handed to ranks in a
//! random order, is identified by `tracelogic_analysis::topology`, and the rank → node mapping
//! the identification reports is a verified isomorphism onto the matched candidate (which may
//! be an equivalent family, e.g. a 4×4 torus found as a 4-cube).

use proptest::prelude::*;
use tracelogic_analysis::topology::{identify_graph, TopologyOptions, TopologyReport};
use tracelogic_graph::iso::verify;
use tracelogic_graph::{Family, Graph, TopologySpec};

/// Small instances of every family (at most 64 nodes, so a debug build identifies one in
/// milliseconds).
fn topology() -> impl Strategy<Value = TopologySpec> {
    let spec = |family: Family, dims: Vec<u32>| TopologySpec::new(family, dims).expect("valid dimensions");
    prop_oneof![
        (2u32..=6, 2u32..=6).prop_map(move |(a, b)| spec(Family::Grid, vec![a, b])),
        (3u32..=6, 3u32..=6).prop_map(move |(a, b)| spec(Family::Torus, vec![a, b])),
        (2u32..=4, 2u32..=3, 2u32..=3).prop_map(move |(a, b, c)| spec(Family::Grid, vec![a, b, c])),
        (3u32..=4, 3u32..=4, 3u32..=4).prop_map(move |(a, b, c)| spec(Family::Torus, vec![a, b, c])),
        (3u32..=40).prop_map(move |n| spec(Family::Ring, vec![n])),
        (2u32..=40).prop_map(move |n| spec(Family::Line, vec![n])),
        (2u32..=5).prop_map(move |d| spec(Family::Hypercube, vec![d])),
        (4u32..=40).prop_map(move |n| spec(Family::BinaryTree, vec![n])),
        // n ≥ k + 2: a k-ary tree of k + 1 nodes or fewer is a star (listed as one).
        (3u32..=4, 6u32..=30).prop_map(move |(k, n)| spec(Family::KaryTree, vec![k, n])),
        (3u32..=30).prop_map(move |n| spec(Family::Star, vec![n])),
        (3u32..=8).prop_map(move |n| spec(Family::AllToAll, vec![n])),
        (4u32..=6, 4u32..=6).prop_map(move |(a, b)| spec(Family::Stencil6, vec![a, b])),
        (3u32..=6, 3u32..=6).prop_map(move |(a, b)| spec(Family::Stencil8Mesh, vec![a, b])),
        (4u32..=5, 4u32..=5).prop_map(move |(a, b)| spec(Family::Stencil8, vec![a, b])),
        (2u32..=3).prop_map(move |d| spec(Family::Butterfly, vec![d])),
    ]
}

/// A topology and a random permutation of its nodes (`perm[node]` = the rank playing it).
fn numbered_topology() -> impl Strategy<Value = (TopologySpec, Vec<u32>)> {
    topology().prop_flat_map(|t| {
        let n = t.num_nodes();
        (Just(t), Just((0..n).collect::<Vec<u32>>()).prop_shuffle())
    })
}

/// The matched candidate's graph and the reported rank → node mapping, checked as an isomorphism.
fn check_mapping(ranks: &Graph, report: &TopologyReport) -> Result<String, TestCaseError> {
    let id = &report.identification;
    let matched = id
        .matched
        .as_ref()
        .ok_or_else(|| TestCaseError::fail(format!("no match; gave up on {:?}", id.gave_up)))?;
    let family = Family::from_name(&matched.family)
        .ok_or_else(|| TestCaseError::fail(format!("matched family `{}` is not a built-in family", matched.family)))?;
    let candidate = TopologySpec::new(family, matched.dims.clone()).map_err(TestCaseError::fail)?;
    prop_assert_eq!(id.mapping.len(), ranks.num_nodes() as usize, "one place per rank");
    let mut mapping = vec![u32::MAX; ranks.num_nodes() as usize];
    for place in &id.mapping {
        mapping[place.rank as usize] = place.node;
        prop_assert_eq!(
            &place.coords,
            &candidate.coords(place.node),
            "coordinates of rank {}",
            place.rank
        );
        for neighbour in &place.neighbours {
            prop_assert!(
                ranks.has_edge(place.rank, neighbour.rank),
                "rank {} lists {} ({}) as a neighbour without an edge",
                place.rank,
                neighbour.rank,
                neighbour.direction
            );
        }
    }
    verify(ranks, &candidate.graph(), &mapping).map_err(TestCaseError::fail)?;
    Ok(candidate.label())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn random_numbering_is_identified_with_a_verified_mapping((topology, perm) in numbered_topology()) {
        let ranks = topology.graph().relabel(&perm);
        let report = identify_graph(&ranks, &TopologyOptions::default());
        let matched = check_mapping(&ranks, &report)?;
        // Cartesian candidates are listed with their extents in one order (a 2x6 grid as 6x2).
        let sorted = |dims: &[u32]| { let mut d = dims.to_vec(); d.sort_unstable(); d };
        let generated = (topology.family.name(), sorted(&topology.dims));
        let equivalents: Vec<(&str, Vec<u32>)> =
            report.identification.equivalents.iter().map(|m| (m.family.as_str(), sorted(&m.dims))).collect();
        prop_assert!(
            equivalents.contains(&generated),
            "{} identified as {matched}; equivalents {equivalents:?} miss the generated topology",
            topology.label()
        );
    }
}
