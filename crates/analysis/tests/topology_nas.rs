//! Topology identification on the real NAS Parallel Benchmark traces in
//! tests/data/samples (Logicalization Table 7): BT on 9 ranks is a 3x3 6-point stencil, LU on 8 a
//! 4x2 grid, MG on 8 a 3-cube (= 2x2x2 grid = 4x2 torus), under the recorded numbering and
//! with the ranks randomly renumbered.

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::path::PathBuf;
use tracelogic_analysis::matrix::{CommMatrix, Entry};
use tracelogic_analysis::topology::{identify_matrix, Threshold, TopologyOptions, TopologyReport};
use tracelogic_model::Selection;

fn sample(name: &str) -> CommMatrix {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/samples")
        .join(name);
    let files = tracelogic_formats::fs::load_paths(&[dir]).expect("sample files");
    let trace = tracelogic_formats::read_trace(files).expect("sample trace");
    CommMatrix::from_trace(&trace, &Selection::default())
}

/// The same run with rank r renamed perm[r].
fn renumber(m: &CommMatrix, perm: &[u32]) -> CommMatrix {
    let renamed = m.entries().map(|e| Entry {
        from: perm[e.from as usize],
        to: perm[e.to as usize],
        ..e
    });
    CommMatrix::from_entries(m.ranks(), renamed).unwrap()
}

fn check(name: &str, expect_match: &str, expect_equivalents: &[&str]) {
    let m = sample(name);
    let mut rng = StdRng::seed_from_u64(31);
    let mut perm: Vec<u32> = (0..m.ranks()).collect();
    for round in 0..4 {
        let mm = renumber(&m, &perm);
        for threshold in [Threshold::Auto, Threshold::Percent(5.0)] {
            let rep: TopologyReport = identify_matrix(
                &mm,
                &TopologyOptions {
                    threshold,
                    ..TopologyOptions::default()
                },
            );
            let id = &rep.identification;
            let what = format!("{name} round {round} {threshold:?}");
            assert_eq!(
                id.matched.as_ref().map(|x| x.label.as_str()),
                Some(expect_match),
                "{what}"
            );
            let eq: Vec<&str> = id.equivalents.iter().map(|e| e.label.as_str()).collect();
            for e in expect_equivalents {
                assert!(eq.contains(e), "{what}: {eq:?}");
            }
            // The mapping is a bijection and every communicating pair are neighbours in it.
            let mut nodes: Vec<u32> = id.mapping.iter().map(|p| p.node).collect();
            nodes.sort_unstable();
            assert_eq!(nodes, (0..m.ranks()).collect::<Vec<_>>());
            for &[a, b] in &rep.edges {
                let pa = id.mapping.iter().find(|p| p.rank == a).unwrap();
                assert!(pa.neighbours.iter().any(|nb| nb.rank == b), "{what}: {a}-{b}");
            }
        }
        perm.shuffle(&mut rng);
    }
}

#[test]
fn bt_9_is_a_3x3_six_point_stencil() {
    check("npb-bt.S.9", "3x3 6-point stencil", &[]);
}

#[test]
fn lu_8_is_a_4x2_grid() {
    check("npb-lu.S.8", "4x2 grid", &[]);
}

#[test]
fn mg_8_is_a_3_cube_equal_to_the_2x2x2_grid() {
    check(
        "npb-mg.S.8",
        "3-dimensional hypercube (2x2x2 grid)",
        &["2x2x2 grid", "4x2 torus", "2x2x2 torus"],
    );
}

#[test]
fn lu_recorded_numbering_is_row_plus_four_times_column() {
    // SOURCES.md: LU's 4x2 process grid has rank = row + 4·column.
    let rep = identify_matrix(&sample("npb-lu.S.8"), &TopologyOptions::default());
    let id = &rep.identification;
    let spec = id.matched.as_ref().unwrap();
    assert_eq!((spec.family.as_str(), spec.dims.clone()), ("grid", vec![4, 2]));
    for p in &id.mapping {
        // Up to the grid's symmetries (mirror in either axis).
        let (x, y) = (p.rank % 4, p.rank / 4);
        let ok = [(x, y), (3 - x, y), (x, 1 - y), (3 - x, 1 - y)].contains(&(p.coords[0], p.coords[1]));
        assert!(ok, "rank {} at {:?}", p.rank, p.coords);
    }
}
