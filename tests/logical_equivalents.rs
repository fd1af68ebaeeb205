//! The logical trace names its directions after the isomorphic topology the ranks agree on: a
//! 4×4 torus is a 4-cube and a 4×4×4 torus a 6-cube (C4 = K2□K2), and identification reports
//! the hypercube (the simplest), but a torus program's `east` flips a different bit at different
//! nodes. `Placement::choose` builds a placement for each vertex-transitive equivalent from the
//! trace and keeps the one whose directions every rank's sequence agrees with; a genuine
//! hypercube program keeps the hypercube.

mod common;

use tracelogic_analysis::compress::compress;
use tracelogic_analysis::logical::{agreement, logicalize_identified, verify, LogicalTrace, PlacedBy, Placement};
use tracelogic_analysis::matrix::CommMatrix;
use tracelogic_analysis::topology::{identify_matrix, TopologyOptions};
use tracelogic_model::{Selection, Trace};
use tracelogic_synth::{Numbering, Spec, Style, TopologySpec};

fn run(topology: &str, numbering: Numbering, style: Style, seed: u64) -> (Trace, Placement) {
    let spec = Spec {
        topology: TopologySpec::parse(topology).unwrap(),
        numbering,
        seed,
        iterations: 4,
        style,
        ..Spec::default()
    };
    let (trace, placement) = common::run_with_truth(&spec);
    (trace, placement)
}

fn logical_of(trace: &Trace) -> LogicalTrace {
    let m = CommMatrix::from_trace(trace, &Selection::all());
    let report = identify_matrix(&m, &TopologyOptions::default());
    logicalize_identified(trace, &report, None).unwrap_or_else(|e| panic!("{}: {e}", trace.source))
}

const NUMBERINGS: [Numbering; 2] = [Numbering::RowMajor, Numbering::Random];

#[test]
fn torus_programs_take_the_torus_directions() {
    // (generated topology, what identification reports as the match, the families whose
    // directions are the program's)
    let cases = [
        ("torus:4x4", "4-dimensional hypercube (2x2x2x2 grid)", &["torus"][..]),
        (
            "torus:4x4x2",
            "5-dimensional hypercube (2x2x2x2x2 grid)",
            &["torus"][..],
        ),
        (
            "torus:4x4x4",
            "6-dimensional hypercube (2x2x2x2x2x2 grid)",
            &["torus", "stencil7"][..],
        ),
        (
            "stencil7:4x4x4",
            "6-dimensional hypercube (2x2x2x2x2x2 grid)",
            &["torus", "stencil7"][..],
        ),
    ];
    for (topology, identified, families) in cases {
        for numbering in NUMBERINGS {
            for style in [Style::Isend, Style::Sendrecv] {
                let what = format!("{topology} {numbering:?} {style:?}");
                let (trace, truth) = run(topology, numbering, style, 3);
                let logical = logical_of(&trace);
                let from = logical.directions_from.as_ref().expect("a chosen placement says why");
                assert_eq!(from.identified, identified, "{what}");
                assert!(
                    families.contains(&logical.topology.family.as_str()),
                    "{what}: directions from {} ({})",
                    logical.topology.label,
                    from.reason
                );
                assert_eq!(from.topology, logical.topology.label, "{what}");
                assert_eq!(logical.placement.spec.dims, truth.spec.dims, "{what}");
                assert_eq!(from.agreement, 1.0, "{what}: {}", from.reason);
                assert!(from.identified_agreement < 1.0, "{what}: {}", from.reason);
                assert!(
                    from.reason.contains("isomorphic to the identified"),
                    "{what}: {}",
                    from.reason
                );
                let v = verify(&trace, &logical).unwrap();
                assert_eq!(
                    v.overall_share, 1.0,
                    "{what}: ranks below full {:?}",
                    v.ranks_below_full
                );
                assert!(logical.accuracy.dropped_calls == 0, "{what}");
            }
        }
    }
}

#[test]
fn hypercube_programs_keep_the_hypercube() {
    for topology in ["hypercube:4", "hypercube:5", "hypercube:6"] {
        for numbering in NUMBERINGS {
            let what = format!("{topology} {numbering:?}");
            let (trace, _) = run(topology, numbering, Style::Isend, 5);
            let logical = logical_of(&trace);
            let from = logical.directions_from.as_ref().unwrap();
            assert_eq!(logical.topology.family, "hypercube", "{what}: {}", from.reason);
            assert_eq!(from.topology, from.identified, "{what}");
            assert_eq!(from.agreement, 1.0, "{what}");
            // The tori of 4s among the equivalents were tried and found no fitting placement:
            // going east twice does not return, flipping a bit twice does.
            let tori: Vec<_> = from.considered.iter().filter(|c| c.label.contains("4x4")).collect();
            assert!(!tori.is_empty(), "{what}: {:?}", from.considered);
            assert!(
                tori.iter().all(|c| c.agreement.is_none_or(|a| a < 1.0)),
                "{what}: {:?}",
                from.considered
            );
            assert_eq!(verify(&trace, &logical).unwrap().overall_share, 1.0, "{what}");
        }
    }
}

#[test]
fn grids_without_equivalents_keep_the_match() {
    let (trace, _) = run("grid:4x3", Numbering::Random, Style::Isend, 2);
    let logical = logical_of(&trace);
    let from = logical.directions_from.as_ref().unwrap();
    assert_eq!(from.topology, from.identified);
    assert_eq!(logical.topology.label, from.identified);
}

#[test]
fn agreement_is_full_under_the_programs_own_directions_only() {
    let (trace, truth) = run("torus:4x4x4", Numbering::Random, Style::Isend, 11);
    let (agreed, total) = agreement(&trace, &truth);
    assert_eq!((agreed.moves, agreed.sized), (total, total));
    assert!(total > 0);
    // The same ranks placed on the 6-cube by the Gray code of each torus axis (0 1 3 2): the
    // graph is the same, but east flips bit 0 at even x and bit 1 at odd x.
    let gray = [0u32, 1, 3, 2];
    let cube = Placement::new(
        TopologySpec::parse("hypercube:6").unwrap(),
        64,
        truth.node_of_rank.iter().enumerate().map(|(r, &u)| {
            let c = truth.spec.coords(u);
            (
                r as u32,
                gray[c[0] as usize] | gray[c[1] as usize] << 2 | gray[c[2] as usize] << 4,
            )
        }),
    )
    .unwrap();
    let (agreed_cube, total_cube) = agreement(&trace, &cube);
    assert_eq!(total_cube, total);
    assert!(agreed_cube.moves < total, "{agreed_cube:?} of {total}");
}

#[test]
fn the_choice_does_not_depend_on_the_numbering() {
    let reference = logical_of(&run("torus:4x4x4", Numbering::RowMajor, Style::Isend, 1).0);
    let shape = |l: &LogicalTrace| {
        let p = compress(&l.records);
        (l.topology.label.clone(), l.records.len(), p.compressed_length)
    };
    for seed in 20..24 {
        let logical = logical_of(&run("torus:4x4x4", Numbering::Random, Style::Isend, seed).0);
        assert_eq!(shape(&logical), shape(&reference), "seed {seed}");
        assert_eq!(
            logical.directions_from.as_ref().map(|d| &d.topology),
            reference.directions_from.as_ref().map(|d| &d.topology),
            "seed {seed}"
        );
    }
}

#[test]
fn two_node_runs_keep_the_identified_names() {
    let (trace, _) = run("line:2", Numbering::RowMajor, Style::Isend, 1);
    let logical = logical_of(&trace);
    let from = logical.directions_from.as_ref().unwrap();
    assert_eq!(from.topology, from.identified, "{}", from.reason);
    assert!(from.considered.len() > 1, "{:?}", from.considered);
    assert!(from.considered[1..].iter().all(|c| c.agreement.is_none()));
    assert_eq!(verify(&trace, &logical).unwrap().overall_share, 1.0);
}

#[test]
fn red_black_tori_take_the_torus_directions_by_their_send_order() {
    // The blocking style sends first on one colour and receives first on the other: the first
    // contacts differ between colours, the order of the sends does not.
    for numbering in NUMBERINGS {
        let (trace, _) = run("torus:4x4x4", numbering, Style::Blocking, 9);
        let logical = logical_of(&trace);
        let from = logical.directions_from.as_ref().unwrap();
        assert_eq!(logical.topology.label, "4x4x4 torus", "{numbering:?}: {}", from.reason);
        assert_eq!(from.agreement, 1.0, "{numbering:?}");
        let m = CommMatrix::from_trace(&trace, &Selection::all());
        let matched = Placement::from_report(&identify_matrix(&m, &TopologyOptions::default())).unwrap();
        let on_match = tracelogic_analysis::logical::logicalize(&trace, &matched).unwrap();
        // Both are exact (the colours' orders are branches: `only_ranks`), but on the 6-cube
        // every rank names the torus moves by other bits, so far more ranks become classes of
        // their own and the program folds worse.
        assert_eq!(verify(&trace, &logical).unwrap().overall_share, 1.0);
        assert_eq!(verify(&trace, &on_match).unwrap().overall_share, 1.0);
        let (torus, cube) = (
            tracelogic_analysis::compress::compress(&logical.records).compressed_length,
            tracelogic_analysis::compress::compress(&on_match.records).compressed_length,
        );
        assert!(torus < cube, "{numbering:?}: torus {torus}, cube {cube}");
    }
}

#[test]
fn runs_whose_mapping_agrees_keep_identifications_placement() {
    // Tori, stencils and grids of extents above 4 have only geometric automorphisms: the
    // canonical placement already agrees fully, so the first-contact search is not even run and
    // the logical trace uses exactly identification's (canonical) mapping.
    for topology in ["torus:6x6", "stencil6:6x6", "grid:4x3", "torus:5x3x2"] {
        for numbering in NUMBERINGS {
            let what = format!("{topology} {numbering:?}");
            let (trace, _) = run(topology, numbering, Style::Isend, 7);
            let logical = logical_of(&trace);
            let from = logical.directions_from.as_ref().unwrap();
            assert_eq!(from.placed_by, PlacedBy::Identification, "{what}: {}", from.reason);
            assert_eq!(from.agreement, 1.0, "{what}");
            let m = CommMatrix::from_trace(&trace, &Selection::all());
            let matched = Placement::from_report(&identify_matrix(&m, &TopologyOptions::default())).unwrap();
            assert_eq!(logical.placement, matched, "{what}");
            assert_eq!(verify(&trace, &logical).unwrap().overall_share, 1.0, "{what}");
        }
    }
}

#[test]
fn placement_choose_places_complete_multipartite_stencils_by_first_contacts() {
    // What `match` extrapolation and the web views call: the same placement as the logical
    // trace, built from the trace when identification's isomorphism of K3,3,3 is not the
    // program's.
    let mut rebuilt = 0;
    for seed in 1..=4 {
        let (trace, _) = run("stencil6:3x3", Numbering::Random, Style::Isend, seed);
        let m = CommMatrix::from_trace(&trace, &Selection::all());
        let report = identify_matrix(&m, &TopologyOptions::default());
        let (placement, from) = Placement::choose(&trace, &report).unwrap();
        assert_eq!(from.agreement, 1.0, "seed {seed}: {}", from.reason);
        let (agreed, total) = agreement(&trace, &placement);
        assert_eq!((agreed.moves, agreed.sized), (total, total), "seed {seed}");
        if from.identified_agreement < 1.0 {
            rebuilt += 1;
            assert_eq!(from.placed_by, PlacedBy::FirstContacts, "seed {seed}");
            assert!(
                from.considered
                    .iter()
                    .any(|c| c.label.ends_with("placed by first contacts") && c.agreement == Some(1.0)),
                "seed {seed}: {:?}",
                from.considered
            );
        }
        assert_eq!(logical_of(&trace).placement, placement, "seed {seed}");
    }
    assert!(rebuilt > 0, "no seed needed the placement built from first contacts");
}
