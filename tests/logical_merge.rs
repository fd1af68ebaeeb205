//! Merged logical traces on runs without a maximal rank: exact on every rank
//! of every class, and loop-compressible like a single rank's trace: the compressed length does
//! not grow with the iteration count.

mod common;

use tracelogic_analysis::compress::compress;
use tracelogic_analysis::logical::{expand_records, logicalize, physical_records, verify, Placement};
use tracelogic_model::CollectiveOp;
use tracelogic_synth::{generate_with_truth, CollectiveSpec, Numbering, Spec, Style, TopologySpec};

fn merged(topology: &str, style: Style, iterations: u32) -> (usize, usize, usize) {
    let spec = Spec {
        topology: TopologySpec::parse(topology).unwrap(),
        numbering: Numbering::Random,
        seed: 3,
        iterations,
        style,
        collectives: vec![CollectiveSpec {
            op: CollectiveOp::Allreduce,
            every: 4,
            bytes: 8,
        }],
        ..Spec::default()
    };
    let (trace, placement) = common::run_with_truth(&spec);
    let l = logicalize(&trace, &placement).unwrap();
    assert!(!l.maximal, "{topology}");
    assert_eq!(l.merge_conflicts, 0, "{topology} {style:?}: {:?}", l.classes);
    let v = verify(&trace, &l).unwrap();
    assert!(
        v.ranks_below_full.is_empty(),
        "{topology} {style:?}: {:?}",
        v.ranks_below_full
    );
    for r in 0..trace.num_ranks() {
        let own: Vec<_> = physical_records(&trace, &placement, r)
            .unwrap()
            .into_iter()
            .map(|x| x.call)
            .collect();
        assert_eq!(expand_records(&l, r).unwrap(), own, "{topology} {style:?} rank {r}");
    }
    let program = compress(&l.records);
    (program.raw_length, program.compressed_length, l.classes.len())
}

#[test]
fn compressed_length_is_constant_in_the_iteration_count() {
    for (topology, style) in [
        ("grid:4x2", Style::Isend),
        ("grid:4x2", Style::Sendrecv),
        ("grid:4x2", Style::Wavefront),
        ("grid:2x2", Style::Sendrecv),
        ("grid:2x3x2", Style::Isend),
        ("stencil8-mesh:3x2", Style::Sendrecv),
    ] {
        let (raw_short, short, classes) = merged(topology, style, 8);
        let (raw_long, long, _) = merged(topology, style, 80);
        eprintln!("{topology} {style:?}: {classes} classes, {raw_short} -> {short}, {raw_long} -> {long}");
        assert!(raw_long > raw_short);
        assert_eq!(short, long, "{topology} {style:?}");
    }
}

#[test]
fn two_by_two_sendrecv_is_the_case_that_failed() {
    // Issue 4: grid:2x2 with sendrecv reproduced rank 2 at 5/8 with the pairwise LCS merge.
    let (_, _, classes) = merged("grid:2x2", Style::Sendrecv, 5);
    assert_eq!(classes, 4, "every rank of a 2x2 grid is its own class");
}

#[test]
fn classes_that_disagree_become_branches_and_the_trace_still_folds() {
    // A 3x3x2 19-point stencil mesh placed by identification: for this run the mapping found is
    // an automorphism that does not keep direction names on every rank, so half of the classes
    // disagree with the others. Their disagreeing records become branches executed by the
    // classes that have them (`only_ranks`): every rank is reproduced, and the classes
    // advance in lockstep where they disagree, so the loop still folds.
    use tracelogic_analysis::matrix::CommMatrix;
    use tracelogic_analysis::topology::{identify_matrix, TopologyOptions};
    let spec = Spec {
        topology: TopologySpec::parse("stencil19-mesh:3x3x2").unwrap(),
        numbering: Numbering::Random,
        seed: 25,
        iterations: 6,
        style: Style::Isend,
        collectives: vec![CollectiveSpec {
            op: CollectiveOp::Allreduce,
            every: 3,
            bytes: 8,
        }],
        ..Spec::default()
    };
    let (trace, _) = generate_with_truth(&spec).unwrap();
    let m = CommMatrix::from_trace(&trace, &tracelogic_model::Selection::all());
    let placement = Placement::from_report(&identify_matrix(&m, &TopologyOptions::default())).unwrap();
    let l = logicalize(&trace, &placement).unwrap();
    assert!(!l.maximal);
    assert!(l.classes.iter().all(|c| c.merged));
    assert!(l.branches > 0);
    assert_eq!(l.merge_conflicts, 0);
    let program = compress(&l.records);
    assert!(
        program.compressed_length * 2 < program.raw_length,
        "{} -> {}",
        program.raw_length,
        program.compressed_length
    );
    let v = verify(&trace, &l).unwrap();
    assert_eq!(v.ranks_structure_differs, Vec::<u32>::new());
    assert_eq!(v.ranks_below_full, Vec::<u32>::new());
}
