//! Distance profiles computed from coordinates (no graph built) against breadth-first search
//! on the built graph, and the early stop candidate elimination relies on.

use tracelogic_graph::catalog::candidates;
use tracelogic_graph::invariants::distance_profile;
use tracelogic_graph::TopologySpec;

#[test]
fn implicit_profiles_equal_bfs_on_the_built_graph() {
    let mut checked = 0;
    for n in [2u32, 6, 12, 16, 27, 30, 36, 64, 90] {
        for spec in candidates(n) {
            let Some(_) = spec.implicit_distance_profile(0, None) else {
                assert!(!spec.family.is_cartesian(), "{}", spec.label());
                continue;
            };
            let g = spec.graph();
            for root in [0, n / 3, n - 1] {
                assert_eq!(
                    spec.implicit_distance_profile(root, None).unwrap(),
                    distance_profile(&g, root),
                    "{} from {root}",
                    spec.label()
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 300, "{checked}");
}

#[test]
fn stops_at_the_first_level_that_differs() {
    // Two 6-point stencils of 1,024 ranks agree on their first levels and part later.
    let square = TopologySpec::parse("stencil6:32x32").unwrap();
    let long = TopologySpec::parse("stencil6:128x8").unwrap();
    let full_square = square.implicit_distance_profile(0, None).unwrap();
    let full_long = long.implicit_distance_profile(0, None).unwrap();
    assert_ne!(full_square, full_long);
    let cut = long.implicit_distance_profile(0, Some(&full_square)).unwrap();
    let first_difference = full_long.iter().zip(&full_square).position(|(a, b)| a != b).unwrap();
    assert_eq!(cut.len(), first_difference + 1);
    assert_eq!(cut[..], full_long[..cut.len()]);
    assert!(cut.len() < full_long.len());
    // The same profile runs to the end.
    assert_eq!(
        square.implicit_distance_profile(5, Some(&full_square)).unwrap(),
        full_square
    );
    assert_eq!(
        TopologySpec::parse("hypercube:3")
            .unwrap()
            .implicit_distance_profile(0, None),
        None
    );
}
