//! The topology a program declares (MPI_Cart_create) against the one observed: generated
//! traffic of a known topology, a declaration added by hand (what MPI_Cart_create records),
//! written to DUMPI or OTF2 and read back, then identified and compared.
//!
//! Independent references: MPI's row-major numbering (MPI 4.0 §8.5: the last dimension varies
//! fastest), written out here from its definition; the generator's own record of which rank
//! plays which node; and neighbour pairs counted by hand.

use std::collections::BTreeSet;
use tracelogic_analysis::matrix::CommMatrix;
use tracelogic_analysis::topology::{declared, identify_matrix, TopologyOptions, TopologyReport};
use tracelogic_formats::read_trace;
use tracelogic_model::{CartTopology, Selection, Trace, NO_CALLPATH};
use tracelogic_synth::{generate_with_truth, Numbering, Spec, TopologySpec};

/// A generated trace of `topology` (the generator numbers nodes with dimension 0 fastest, so
/// `torus:3x2x2` is MPI's `dims = (2, 2, 3)` with its last dimension of extent 3 fastest).
fn generated(topology: &str, numbering: Numbering) -> (Trace, Vec<u32>) {
    let spec = Spec {
        topology: TopologySpec::parse(topology).unwrap(),
        numbering,
        seed: 5,
        iterations: 2,
        ..Spec::default()
    };
    let (trace, truth) = generate_with_truth(&spec).unwrap();
    (trace, truth.rank_of_node())
}

/// What `MPI_Cart_create(MPI_COMM_WORLD, dims, periods, reorder = 0)` leaves in a trace: one
/// call per rank (after its other calls) and a new communicator over every rank.
fn declare(trace: &mut Trace, dims: &[i64], periods: &[bool]) -> u32 {
    let n = trace.num_ranks();
    let comm = trace.add_comm("cart", (0..n).collect());
    for r in 0..n {
        let end = trace.ranks[r as usize].calls.last_exit().unwrap_or(0);
        trace.push_call(r, "MPI_Cart_create", end + 10, end + 20, NO_CALLPATH, 0);
    }
    trace
        .add_cartesian(CartTopology::row_major(comm, dims, periods, n as usize).unwrap())
        .unwrap();
    comm
}

fn through_dumpi(trace: &Trace) -> Trace {
    read_trace(tracelogic_formats::dumpi::write(trace, "declared")).unwrap()
}

fn through_otf2(trace: &Trace) -> Trace {
    read_trace(tracelogic_formats::otf2::write(trace, "declared")).unwrap()
}

fn identify(trace: &Trace) -> TopologyReport {
    let m = CommMatrix::from_trace(trace, &Selection::all());
    let mut report = identify_matrix(&m, &TopologyOptions::default());
    declared::attach(trace, &mut report);
    report
}

/// The declared grid's neighbour pairs in world ranks, from MPI's definition: rank
/// `((c0·d1 + c1)·d2 + c2)...`, neighbours one step apart in one dimension, wrapping where
/// periodic.
fn mpi_neighbour_pairs(dims: &[u32], periods: &[bool]) -> BTreeSet<(u32, u32)> {
    let n: u32 = dims.iter().product();
    let coords = |mut r: u32| {
        let mut c = vec![0; dims.len()];
        for k in (0..dims.len()).rev() {
            c[k] = r % dims[k];
            r /= dims[k];
        }
        c
    };
    let rank = |c: &[u32]| c.iter().zip(dims).fold(0, |acc, (&x, &d)| acc * d + x);
    let mut out = BTreeSet::new();
    for r in 0..n {
        for k in 0..dims.len() {
            let mut c = coords(r);
            if c[k] + 1 < dims[k] {
                c[k] += 1;
            } else if periods[k] {
                c[k] = 0;
            } else {
                continue;
            }
            let s = rank(&c);
            if s != r {
                out.insert((r.min(s), r.max(s)));
            }
        }
    }
    out
}

fn observed(report: &TopologyReport) -> BTreeSet<(u32, u32)> {
    report.edges.iter().map(|&[a, b]| (a, b)).collect()
}

#[test]
fn a_declared_2x2x3_torus_read_from_dumpi_is_named_by_its_declared_extents() {
    let (mut trace, _) = generated("torus:3x2x2", Numbering::RowMajor);
    let comm = declare(&mut trace, &[2, 2, 3], &[true, true, true]);
    let back = through_dumpi(&trace);
    // The reader records the declaration as written: extents, periods, row-major coordinates.
    assert_eq!(back.cartesian.len(), 1, "{:?}", back.warnings);
    let t = &back.cartesian[0];
    assert_eq!(back.comms[t.comm as usize].members, trace.comms[comm as usize].members);
    assert_eq!((&t.dims, &t.periods), (&vec![2, 2, 3], &vec![true, true, true]));
    assert_eq!(t.coords, trace.cartesian[0].coords);
    assert!(!t.coords_recorded);
    assert_eq!(t.coords[7], vec![1, 0, 1], "rank 7 = (1·2 + 0)·3 + 1");

    let report = identify(&back);
    // Identification's simplest name for this graph: C4 □ C3 (a periodic extent of 2 is one
    // edge, and K2 □ K2 = C4).
    assert_eq!(report.identification.matched.as_ref().unwrap().label, "4x3 torus");
    assert_eq!(observed(&report), mpi_neighbour_pairs(&[2, 2, 3], &[true; 3]));
    let d = &report.declared[0];
    assert_eq!(d.label, "2x2x3 torus");
    assert!(d.agrees, "{}", d.summary);
    // 6 pairs along each extent-2 dimension, 12 along the periodic extent 3: 24.
    assert_eq!(
        (d.declared_pairs, d.used_pairs, d.unused_count, d.undeclared_count),
        (24, 24, 0, 0)
    );
    assert_eq!(d.same_graph_as_match, Some(true));
    assert!(d.notes.is_empty(), "{:?}", d.notes);
    assert_eq!(report.name_as_declared.as_deref(), Some("2x2x3 torus"));
    assert!(
        d.summary.contains("the same graph as the identified 4x3 torus"),
        "{}",
        d.summary
    );
}

#[test]
fn declared_periodic_without_wrap_around_traffic_is_reported() {
    // The program declares a 2x2x3 torus but exchanges as a grid (no wrap-around).
    let (mut trace, _) = generated("grid:3x2x2", Numbering::RowMajor);
    declare(&mut trace, &[2, 2, 3], &[true, true, true]);
    let report = identify(&through_dumpi(&trace));
    let d = &report.declared[0];
    assert!(!d.agrees);
    // The wrap-around pairs of the extent-3 dimension: (c0, c1, 0)–(c0, c1, 2), 4 of them.
    let expected: BTreeSet<(u32, u32)> = mpi_neighbour_pairs(&[2, 2, 3], &[true; 3])
        .difference(&mpi_neighbour_pairs(&[2, 2, 3], &[true, true, false]))
        .copied()
        .collect();
    assert_eq!(expected.len(), 4);
    let unused: BTreeSet<(u32, u32)> = d.unused.iter().map(|&[a, b]| (a, b)).collect();
    assert_eq!(unused, expected);
    assert_eq!(d.undeclared_count, 0);
    assert_eq!(
        d.notes,
        vec!["declared periodic in dimension 2 (extent 3) but none of its 4 wrap-around pairs communicates"]
    );
    assert_eq!(report.name_as_declared, None);
    assert!(
        d.summary.contains("4 of its 24 neighbour pairs carry no traffic"),
        "{}",
        d.summary
    );
}

/// As above, but the wrap-around pairs exchange one 8-byte message each (LAMMPS's atom counts
/// across the non-periodic boundary of a grid it declares periodic, held-out `deposit`): they
/// communicate, too little to be edges; the filter removes them as noise, and the comparison
/// says so instead of "carry no traffic".
#[test]
fn declared_wrap_around_pairs_with_filtered_traffic_are_reported_as_such() {
    let (mut trace, _) = generated("grid:3x2x2", Numbering::RowMajor);
    let wraps: BTreeSet<(u32, u32)> = mpi_neighbour_pairs(&[2, 2, 3], &[true; 3])
        .difference(&mpi_neighbour_pairs(&[2, 2, 3], &[true, true, false]))
        .copied()
        .collect();
    for &(a, b) in &wraps {
        let t = trace.ranks[a as usize]
            .calls
            .last_exit()
            .unwrap_or(0)
            .max(trace.ranks[b as usize].calls.last_exit().unwrap_or(0))
            + 10;
        let s = trace.push_call(a, "MPI_Send", t, t + 5, NO_CALLPATH, 0);
        trace.push_p2p(a, s, s, tracelogic_model::P2pDir::Send, b, 0, 0, 8);
        let r = trace.push_call(b, "MPI_Recv", t, t + 8, NO_CALLPATH, 0);
        trace.push_p2p(b, r, r, tracelogic_model::P2pDir::Recv, a, 0, 0, 8);
    }
    declare(&mut trace, &[2, 2, 3], &[true, true, true]);
    let report = identify(&through_dumpi(&trace));
    assert_eq!(report.filter.removed.len(), 4, "{:?}", report.filter.removed);
    let d = &report.declared[0];
    assert_eq!(d.notes.len(), 1, "{:?}", d.notes);
    assert!(
        d.notes[0].starts_with(
            "declared periodic in dimension 2 (extent 3): 4 of its 4 wrap-around pairs communicate, too little to be edges"
        ),
        "{:?}",
        d.notes
    );
    assert!(
        d.summary
            .contains("4 of its 24 neighbour pairs carry only traffic filtered as noise"),
        "{}",
        d.summary
    );
}

#[test]
fn a_declared_dimension_of_extent_1_is_noted() {
    // MPI_Dims_create can hand out extents of 1; the grid is then the 3x4 torus.
    let (mut trace, _) = generated("torus:4x3", Numbering::RowMajor);
    declare(&mut trace, &[1, 3, 4], &[true, true, true]);
    let report = identify(&through_dumpi(&trace));
    let d = &report.declared[0];
    assert!(d.agrees, "{}", d.summary);
    assert_eq!(d.label, "1x3x4 torus");
    assert_eq!(d.notes, vec!["dimension 0 has extent 1: no neighbours along it"]);
    assert_eq!(report.name_as_declared.as_deref(), Some("1x3x4 torus"));
}

#[test]
fn a_renumbered_run_differs_from_its_row_major_declaration_by_the_expected_pairs() {
    // Ranks placed at random while the declaration says row-major (reorder = 0).
    let (mut trace, rank_of_node) = generated("torus:3x2x2", Numbering::Random);
    declare(&mut trace, &[2, 2, 3], &[true, true, true]);
    let report = identify(&trace);
    let truth: BTreeSet<(u32, u32)> = TopologySpec::parse("torus:3x2x2")
        .unwrap()
        .graph()
        .relabel(&rank_of_node)
        .edges()
        .collect();
    let declared_pairs = mpi_neighbour_pairs(&[2, 2, 3], &[true; 3]);
    let d = &report.declared[0];
    assert_eq!(d.unused_count, declared_pairs.difference(&truth).count());
    assert_eq!(d.undeclared_count, truth.difference(&declared_pairs).count());
    assert!(d.unused_count > 0 && !d.agrees);
    assert_eq!(d.same_graph_as_match, Some(true), "the same graph, placed differently");
    assert_eq!(report.name_as_declared, None);
}

#[test]
fn otf2_keeps_recorded_coordinates_and_the_comparison_uses_them() {
    let (mut trace, _) = generated("torus:3x2x2", Numbering::RowMajor);
    declare(&mut trace, &[2, 2, 3], &[true, true, true]);
    // Recorded coordinates that swap ranks 0 and 1: under them the traffic is no longer the
    // declared grid's (with MPI's rule it would be).
    let t = &mut trace.cartesian[0];
    t.coords.swap(0, 1);
    t.coords_recorded = true;
    let back = through_otf2(&trace);
    assert_eq!(back.cartesian.len(), 1, "{:?}", back.warnings);
    assert_eq!(back.cartesian[0].coords, trace.cartesian[0].coords);
    assert!(back.cartesian[0].coords_recorded);
    let d = &identify(&back).declared[0];
    assert!(
        !d.agrees && d.unused_count > 0 && d.unused_count == d.undeclared_count,
        "{}",
        d.summary
    );

    // Without recorded coordinates the OTF2 reader applies the row-major rule.
    let (mut trace, _) = generated("torus:3x2x2", Numbering::RowMajor);
    declare(&mut trace, &[2, 2, 3], &[true, false, true]);
    let back = through_otf2(&trace);
    assert_eq!(back.cartesian, trace.cartesian);
    let d = &identify(&back).declared[0];
    assert_eq!(d.label, "2x2x3 grid (periodic in dimensions 0, 2)");
    assert!(d.agrees, "a periodic extent of 2 adds no pair: {}", d.summary);
}

#[test]
fn declarations_that_do_not_fit_their_communicator_become_warnings() {
    // 5x3 = 15 places for a communicator of 12 ranks, and a negative extent.
    for dims in [vec![5u32, 3], vec![u32::MAX, 2]] {
        let (mut trace, _) = generated("torus:3x2x2", Numbering::RowMajor);
        declare(&mut trace, &[2, 2, 3], &[true, true, true]);
        trace.cartesian[0].dims = dims.clone();
        trace.cartesian[0].periods = vec![false, false];
        for back in [through_dumpi(&trace), through_otf2(&trace)] {
            assert!(back.cartesian.is_empty(), "{dims:?}");
            assert!(
                back.warnings
                    .iter()
                    .any(|w| w.contains("declared topology is left out")),
                "{dims:?}: {:?}",
                back.warnings
            );
            assert!(identify(&back).declared.is_empty());
        }
    }
}

#[test]
fn a_declared_grid_over_part_of_the_ranks_is_not_the_name_of_the_run() {
    // A 2x3 grid declared over the first 6 of 12 ranks of a 4x3 torus.
    let (mut trace, _) = generated("torus:4x3", Numbering::RowMajor);
    let comm = trace.add_comm("cart", (0..6).collect());
    trace
        .add_cartesian(CartTopology::row_major(comm, &[2, 3], &[false, false], 6).unwrap())
        .unwrap();
    let report = identify(&trace);
    let d = &report.declared[0];
    assert!(d.outside_pairs > 0);
    assert_eq!(d.same_graph_as_match, None);
    assert_eq!(report.name_as_declared, None);
    // A trace without declarations gets none.
    let (plain, _) = generated("torus:4x3", Numbering::RowMajor);
    assert!(identify(&plain).declared.is_empty());
}

#[test]
fn the_declaration_follows_the_ranks_when_they_are_renumbered() {
    // Renumbering world ranks renames the communicator's members, and the traffic with them:
    // the declaration still agrees, and its pairs are the renamed ones.
    let (mut trace, _) = generated("torus:3x2x2", Numbering::RowMajor);
    declare(&mut trace, &[2, 2, 3], &[true, true, true]);
    let perm = tracelogic_model::renumber::random_permutation(12, 9);
    let renamed = trace.renumber_ranks(&perm).unwrap();
    let report = identify(&renamed);
    let d = &report.declared[0];
    assert!(d.agrees, "{}", d.summary);
    let expected: BTreeSet<(u32, u32)> = mpi_neighbour_pairs(&[2, 2, 3], &[true; 3])
        .into_iter()
        .map(|(a, b)| {
            let (x, y) = (perm[a as usize], perm[b as usize]);
            (x.min(y), x.max(y))
        })
        .collect();
    assert_eq!(observed(&report), expected);
    assert_eq!(report.name_as_declared.as_deref(), Some("2x2x3 torus"));
}

/// A program that declares the same grid again and again (CP2K builds a new 2-D grid
/// communicator for every distributed matrix: 954 identical ones in a 4-rank run) gets one
/// comparison for it, with the other communicators counted, and a different grid on the same
/// ranks keeps its own line.
#[test]
fn the_same_grid_declared_many_times_is_compared_once_and_counted() {
    let (mut trace, _) = generated("torus:3x2x2", Numbering::RowMajor);
    let first = declare(&mut trace, &[2, 2, 3], &[true, true, true]);
    let again: Vec<u32> = (0..3)
        .map(|_| declare(&mut trace, &[2, 2, 3], &[true, true, true]))
        .collect();
    let other = declare(&mut trace, &[12], &[true]);
    // Compared in memory: the test DUMPI writer keeps one declaration per trace.
    assert_eq!(trace.cartesian.len(), 5);
    let report = identify(&trace);
    assert_eq!(report.declared.len(), 2, "{:#?}", report.declared);
    let d = &report.declared[0];
    assert_eq!(d.comm, first);
    assert_eq!((d.repeats, d.repeated_in.clone()), (3, again));
    // The comparison is the one a single declaration gets (the test above).
    assert!(d.agrees, "{}", d.summary);
    assert_eq!((d.declared_pairs, d.used_pairs), (24, 24));
    assert!(
        d.summary
            .contains("(and 3 more communicators declaring the same grid on the same ranks) declares a 2x2x3 torus"),
        "{}",
        d.summary
    );
    let o = &report.declared[1];
    assert_eq!((o.comm, o.repeats, o.label.as_str()), (other, 0, "12-node ring"));
    assert!(!o.agrees);
    assert!(!o.summary.contains("more communicator"), "{}", o.summary);
    assert_eq!(report.name_as_declared.as_deref(), Some("2x2x3 torus"));
}

/// A process grid whose rows and columns talk by collectives on communicators of their own
/// (ScaLAPACK's BLACS grid in CP2K; `MPI_Cart_sub` or `MPI_Comm_split`), beside a ring that
/// carries all the point-to-point traffic: the comparison finds each dimension's line
/// communicators and their traffic, whatever their names. Expected counts are the ones pushed
/// here: rows (dimension 1, extent 4) broadcast 3 times, columns (dimension 0, extent 2) twice.
#[test]
fn a_process_grid_talking_on_row_and_column_communicators_is_reported_per_dimension() {
    use tracelogic_model::CollectiveOp;
    let (mut trace, _) = generated("ring:8", Numbering::RowMajor);
    let grid = declare(&mut trace, &[2, 4], &[false, false]);
    // Row-major 2x4: rows {0..3}, {4..7}; columns {c, c + 4}.
    let rows: Vec<Vec<u32>> = vec![(0..4).collect(), (4..8).collect()];
    let cols: Vec<Vec<u32>> = (0..4).map(|c| vec![c, c + 4]).collect();
    let bcast = |trace: &mut Trace, name: &str, members: &[u32], times: u32, bytes: u64| {
        let comm = trace.add_comm(name, members.to_vec());
        for _ in 0..times {
            for &r in members {
                let end = trace.ranks[r as usize].calls.last_exit().unwrap_or(0);
                let call = trace.push_call(r, "MPI_Bcast", end + 10, end + 20, NO_CALLPATH, 0);
                trace.push_collective(r, call, CollectiveOp::Bcast, comm, members[0], bytes, bytes);
            }
        }
    };
    for (i, row) in rows.iter().enumerate() {
        bcast(&mut trace, &format!("row {i}"), row, 3, 100);
    }
    for (i, col) in cols.iter().enumerate() {
        bcast(&mut trace, &format!("column {i}"), col, 2, 10);
    }
    // Of the right size but not a line of the grid: not counted.
    bcast(&mut trace, "diagonal", &[0, 5], 5, 1000);
    for trace in [trace.clone(), through_otf2(&trace)] {
        let report = identify(&trace);
        let d = report
            .declared
            .iter()
            .find(|d| d.comm == grid)
            .expect("the declared grid");
        assert_eq!(d.dims, [2, 4]);
        assert_eq!(d.lines.len(), 2, "{:#?}", d.lines);
        let (col, row) = (&d.lines[0], &d.lines[1]);
        assert_eq!(
            (
                col.dim,
                col.extent,
                col.lines,
                col.lines_with_communicator,
                col.communicators
            ),
            (0, 2, 4, 4, 4)
        );
        assert_eq!(
            (col.collective_calls, col.collective_bytes),
            (4 * 2 * 2, 4 * 2 * 2 * 10)
        );
        assert_eq!(
            (
                row.dim,
                row.extent,
                row.lines,
                row.lines_with_communicator,
                row.communicators
            ),
            (1, 4, 2, 2, 2)
        );
        assert_eq!(
            (row.collective_calls, row.collective_bytes),
            (2 * 4 * 3, 2 * 4 * 3 * 100)
        );
        assert_eq!(col.p2p_messages + row.p2p_messages, 0);
        // The ring's traffic runs along rows and wraps between them, so columns have no
        // point-to-point neighbours talking: the note says so, and names the collectives.
        assert!(
            d.summary
                .contains("no point-to-point traffic between neighbours along dimension 0 (extent 2)"),
            "{}",
            d.summary
        );
        assert!(
            d.summary
                .contains("dimension 0 (extent 2): 4 of its 4 lines have communicators"),
            "{}",
            d.summary
        );
        assert!(
            d.summary.contains("carrying 24 collective calls (2400 bytes)"),
            "{}",
            d.summary
        );
    }
}
