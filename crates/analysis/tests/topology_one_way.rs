//! One-way transfers beside a two-way exchange (docs/topology.md §1, "One-way transfers"):
//! the matrices of held-out PETSc and MUMPS runs (recorded 1 Dec 2026 with
//! `tools/record/petsc.sh` and `tools/record/mumps.sh`, `--otf2`: Debian's PETSc 3.18.5 and
//! MUMPS 5.5.1, unmodified, on Open MPI; the runs stay outside the repository). Truth: PETSc's
//! own `-dm_view` ("Processor [r] M 64 N 64 m 2 n 2": the DMDA's process grid). Rank 0 gathers
//! every rank's viewed vectors (32,792 bytes in 10–11 messages, 8 bytes back), which on four
//! ranks adds a diagonal to the 2x2 grid: the graph was named `2x2 6-point stencil`.

use tracelogic_analysis::matrix::CommMatrix;
use tracelogic_analysis::topology::{identify_matrix, Threshold, TopologyOptions, TopologyReport};
use tracelogic_formats::fs::load_paths;
use tracelogic_formats::read_trace;

fn matrix(bytes: [[u64; 4]; 4], messages: [[u64; 4]; 4]) -> CommMatrix {
    CommMatrix::from_dense(4, bytes.as_flattened(), messages.as_flattened()).unwrap()
}

/// snes ex5 on 4 ranks, `-dm_view`: m 2 n 2 (the 2x2 grid, and the viewer's gather 3 → 0).
fn ex5_2x2() -> CommMatrix {
    matrix(
        [
            [0, 57872, 57872, 8],
            [90656, 0, 0, 57864],
            [90656, 0, 0, 57864],
            [32792, 57864, 57864, 0],
        ],
        [[0, 232, 231, 2], [239, 0, 1, 229], [239, 0, 0, 230], [11, 229, 229, 0]],
    )
}

fn auto() -> TopologyOptions {
    TopologyOptions {
        threshold: Threshold::Auto,
        ..TopologyOptions::default()
    }
}

fn label(r: &TopologyReport) -> Option<&str> {
    r.identification.matched.as_ref().map(|m| m.label.as_str())
}

/// The pairs set aside as (from, to).
fn set_aside(r: &TopologyReport) -> Vec<(u32, u32)> {
    r.filter
        .one_way
        .as_ref()
        .map_or_else(Vec::new, |w| w.pairs.iter().map(|p| (p.from, p.to)).collect())
}

fn edges(r: &TopologyReport) -> Vec<[u32; 2]> {
    let mut e = r.edges.clone();
    e.sort();
    e
}

#[test]
fn a_2x2_grid_with_its_gather_to_rank_0_is_the_grid_not_a_6_point_stencil() {
    let m = ex5_2x2();
    let r = identify_matrix(&m, &auto());
    // The 2x2 grid's four pairs: on 4 ranks a cycle, whose simplest name is the ring.
    assert_eq!(edges(&r), vec![[0, 1], [0, 2], [1, 3], [2, 3]]);
    assert_eq!(label(&r), Some("4-node ring"));
    assert_eq!(set_aside(&r), vec![(3, 0)]);
    let w = r.filter.one_way.as_ref().unwrap();
    assert_eq!(w.with_them, "2x2 6-point stencil (no wrap-around)");
    assert!(
        w.message_gap >= 2.0 && (w.message_gap - 229.0 / 11.0).abs() < 1e-9,
        "{}",
        w.message_gap
    );
    assert!(r.filter.removed.iter().any(|p| (p.a, p.b) == (0, 3)));
    assert_eq!(r.filter.pairs_kept, 4);
    assert!(w.summary().contains("3→0 (32792 B in 11 messages)"), "{}", w.summary());
}

#[test]
fn a_forced_4x1_grid_with_its_gathers_is_a_line() {
    // snes ex5 on 4 ranks with -da_processors_x 4 -da_processors_y 1 (-dm_view: m 4 n 1).
    let m = matrix(
        [
            [0, 121360, 8, 8],
            [154144, 0, 121352, 0],
            [32792, 121352, 0, 121352],
            [32792, 0, 121352, 0],
        ],
        [[0, 243, 2, 2], [250, 0, 241, 0], [10, 240, 0, 241], [11, 0, 240, 0]],
    );
    let r = identify_matrix(&m, &auto());
    assert_eq!(edges(&r), vec![[0, 1], [1, 2], [2, 3]]);
    assert_eq!(label(&r), Some("4-node line"));
    assert_eq!(set_aside(&r), vec![(2, 0), (3, 0)]);
}

#[test]
fn a_multigrid_run_on_a_2x2_grid_keeps_its_grid_under_coarse_level_traffic_to_rank_0() {
    // ksp ex29 (geometric multigrid, 6 levels, every level on the 2x2 grid) on 4 ranks: rank 3
    // sends 204,256 bytes to rank 0 and gets 11,180 back (18x less), in ~1,000 messages each
    // way against ~4,230 on the grid's pairs; 1-2 carries 4,992 bytes and is cut by bytes.
    let m = matrix(
        [
            [6640, 425832, 425832, 11180],
            [620516, 6032, 2496, 390856],
            [620516, 2496, 6032, 390856],
            [204256, 390012, 390012, 5520],
        ],
        [
            [36, 4235, 4234, 941],
            [4297, 36, 160, 4222],
            [4297, 159, 36, 4223],
            [1005, 4237, 4237, 36],
        ],
    );
    let r = identify_matrix(&m, &auto());
    assert_eq!(edges(&r), vec![[0, 1], [0, 2], [1, 3], [2, 3]]);
    assert_eq!(label(&r), Some("4-node ring"));
    assert_eq!(set_aside(&r), vec![(3, 0)]);
    let removed: Vec<(u32, u32)> = r.filter.removed.iter().map(|p| (p.a, p.b)).collect();
    assert_eq!(removed, vec![(0, 3), (1, 2)], "heaviest first");
}

#[test]
fn pairs_that_send_both_ways_are_never_set_aside() {
    // MUMPS dsimpletest on 4 ranks: the elimination tree's contribution blocks go both ways on
    // every kept pair (the lightest direction 1/5 of the other), so nothing is set aside,
    // whatever the match.
    let m = matrix(
        [
            [0, 1529992, 154384, 700224],
            [1154024, 0, 1494372, 12],
            [30568, 832540, 0, 1288552],
            [1013056, 8, 878428, 0],
        ],
        [[0, 32, 8, 9], [19, 0, 9, 3], [5, 6, 0, 8], [9, 2, 6, 0]],
    );
    let r = identify_matrix(&m, &auto());
    assert_eq!(r.filter.one_way, None);
    assert_eq!(edges(&r).len(), 5);
}

#[test]
fn one_way_pairs_an_explanation_needs_are_kept() {
    // Quantum ESPRESSO pw.x on 4 ranks (tests/data/apps/qe-si-4): every pair talks, rank 3
    // sends to rank 0 one way only (136 messages against at least 417 on the others). Without
    // that pair the graph would be a diamond (a 6-point stencil), less simple than the
    // all-to-all it is with it, so the pair stays.
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/apps/qe-si-4");
    let trace = read_trace(load_paths(&[dir]).unwrap()).unwrap();
    let m = CommMatrix::from_trace(&trace, &Default::default());
    assert_eq!(m.value(tracelogic_analysis::matrix::Metric::Messages, 0, 3), 0);
    assert!(m.value(tracelogic_analysis::matrix::Metric::Messages, 3, 0) > 0);
    let r = identify_matrix(&m, &auto());
    assert_eq!(label(&r), Some("4-node all-to-all"));
    assert_eq!(r.filter.one_way, None);
}

#[test]
fn a_fixed_threshold_sets_nothing_aside() {
    let m = ex5_2x2();
    let r = identify_matrix(
        &m,
        &TopologyOptions {
            threshold: Threshold::Percent(5.0),
            ..TopologyOptions::default()
        },
    );
    assert_eq!(r.filter.one_way, None);
    assert_eq!(label(&r), Some("2x2 6-point stencil (no wrap-around)"));
}
