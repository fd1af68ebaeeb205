//! A process grid declared by row and column communicators (BLACS_GRIDINIT's `MPI_Comm_split`
//! by row and by column, no `MPI_Cart_create`), as ScaLAPACK's drivers leave it in a trace:
//! traces built here with the grid's placement written out by the test (`place(row, col)`),
//! a broadcast on every row and column communicator, the point-to-point traffic of an LU
//! factorisation (row broadcasts by a ring, pivot swaps between any two ranks of a column).
//! Truth: the placement the test chose; the row-major rule BLACS documents (`Row-major`:
//! rank = row · Q + col).

use tracelogic_analysis::matrix::CommMatrix;
use tracelogic_analysis::topology::{declared, identify_matrix, TopologyOptions, TopologyReport};
use tracelogic_model::{CollectiveOp, P2pDir, Selection, Trace, NO_CALLPATH};

/// A trace of `p` x `q` ranks placed by `place(row, col)`, with row and column communicators,
/// a broadcast on each, a message to the next rank of each row (wrapping) and one between
/// every two ranks of a column; `stray` adds one message between two given ranks.
fn blacs_like(p: u32, q: u32, place: impl Fn(u32, u32) -> u32, stray: Option<(u32, u32)>) -> Trace {
    let n = p * q;
    let mut t = Trace::new("blacs", "test", n);
    let world = t.add_comm("MPI_COMM_WORLD", (0..n).collect());
    let rows: Vec<u32> = (0..p)
        .map(|r| t.add_comm(&format!("row {r}"), (0..q).map(|c| place(r, c)).collect()))
        .collect();
    let cols: Vec<u32> = (0..q)
        .map(|c| t.add_comm(&format!("col {c}"), (0..p).map(|r| place(r, c)).collect()))
        .collect();
    let mut clock = 0u64;
    let mut tick = || {
        clock += 10;
        clock
    };
    let mut message = |t: &mut Trace, a: u32, b: u32, comm: u32| {
        let s = tick();
        let c = t.push_call(a, "MPI_Send", s, s + 1, NO_CALLPATH, 0);
        t.push_p2p(a, c, c, P2pDir::Send, b, 0, comm, 64);
        let c = t.push_call(b, "MPI_Recv", s, s + 2, NO_CALLPATH, 0);
        t.push_p2p(b, c, c, P2pDir::Recv, a, 0, comm, 64);
    };
    for r in 0..p {
        for c in 0..q {
            message(&mut t, place(r, c), place(r, (c + 1) % q), world);
        }
    }
    for c in 0..q {
        for a in 0..p {
            for b in a + 1..p {
                message(&mut t, place(a, c), place(b, c), world);
            }
        }
    }
    if let Some((a, b)) = stray {
        message(&mut t, a, b, world);
    }
    let e = tick();
    for (line, &comm) in rows.iter().chain(&cols).enumerate() {
        let members = t.comms[comm as usize].members.clone();
        for &m in &members {
            let c = t.push_call(m, "MPI_Bcast", e + line as u64, e + line as u64 + 1, NO_CALLPATH, 0);
            t.push_collective(m, c, CollectiveOp::Bcast, comm, members[0], 8, 8);
        }
    }
    t
}

fn identify(trace: &Trace) -> TopologyReport {
    let m = CommMatrix::from_trace(trace, &Selection::all());
    let mut report = identify_matrix(&m, &TopologyOptions::default());
    declared::attach(trace, &mut report);
    report
}

#[test]
fn a_row_major_grid_of_row_and_column_communicators_names_the_run_with_p_q_and_coordinates() {
    for (p, q) in [(2, 3), (2, 4), (4, 2), (3, 3), (3, 4)] {
        let t = blacs_like(p, q, |r, c| r * q + c, None);
        let report = identify(&t);
        assert_eq!(
            report.communicator_grids.len(),
            1,
            "{p}x{q}: {:#?}",
            report.communicator_grids
        );
        let g = &report.communicator_grids[0];
        assert_eq!((g.rows, g.cols), (p, q), "{p}x{q}");
        for rank in 0..p * q {
            assert_eq!(g.coords[rank as usize], [rank / q, rank % q], "{p}x{q} rank {rank}");
        }
        assert!(g.row_major && g.agrees, "{p}x{q}: {}", g.summary);
        assert_eq!(g.row_communicators, p as usize);
        assert_eq!(g.col_communicators, q as usize);
        assert_eq!(
            report.name_as_declared.as_deref(),
            Some(format!("{p}x{q} process grid").as_str())
        );
    }
}

#[test]
fn a_column_major_grid_reads_as_its_row_major_transpose_and_a_scattered_one_keeps_its_placement() {
    // rank = col · P + row: its columns are consecutive ranks, so they read as rows of Q x P.
    let t = blacs_like(2, 3, |r, c| c * 2 + r, None);
    let g = &identify(&t).communicator_grids[0];
    assert_eq!((g.rows, g.cols), (3, 2));
    assert!(g.row_major);
    // A placement neither row- nor column-major: rows {4, 0, 5} and {2, 1, 3}, columns {4, 2},
    // {0, 1}, {5, 3}. Rank 0's lowest partner (1) shares its column, so the columns read as
    // rows (of 2 ranks: 3x2), numbered by their lowest rank: {0, 1}, {2, 4}, {3, 5}; the
    // other lines {0, 4, 5}, {1, 2, 3} are columns 0 and 1.
    let perm = [4, 0, 5, 2, 1, 3]; // place(r, c) = perm[r * 3 + c]
    let t = blacs_like(2, 3, |r, c| perm[(r * 3 + c) as usize], None);
    let report = identify(&t);
    let g = &report.communicator_grids[0];
    assert!(!g.row_major && !g.column_major);
    assert_eq!((g.rows, g.cols), (3, 2));
    let by_hand = [[0, 0], [0, 1], [1, 1], [2, 1], [1, 0], [2, 0]];
    assert_eq!(g.coords, by_hand);
    assert_eq!(report.name_as_declared.as_deref(), Some("3x2 process grid"));
}

/// `count` messages of 64 bytes from `a` to `b` after everything else.
fn stray_messages(t: &mut Trace, a: u32, b: u32, count: u64) {
    for i in 0..count {
        let s = 10_000 + 10 * i;
        let c = t.push_call(a, "MPI_Send", s, s + 1, NO_CALLPATH, 0);
        t.push_p2p(a, c, c, P2pDir::Send, b, 0, 0, 64);
        let c = t.push_call(b, "MPI_Recv", s, s + 2, NO_CALLPATH, 0);
        t.push_p2p(b, c, c, P2pDir::Recv, a, 0, 0, 64);
    }
}

#[test]
fn traffic_off_the_grid_is_stated_and_names_the_run_only_where_no_shape_does_and_most_bytes_are_on_it() {
    // Rank 0 (row 0, col 0) and rank 4 (row 1, col 1) share neither a row nor a column: one
    // message of 64 bytes against the grid's 9 (6 along the rows' rings, 3 in the columns).
    let t = blacs_like(2, 3, |r, c| r * 3 + c, Some((0, 4)));
    let report = identify(&t);
    let g = &report.communicator_grids[0];
    assert_eq!((g.pairs_off_grid, g.off_grid.clone()), (1, vec![[0, 4]]));
    assert!(!g.agrees);
    assert!((g.off_grid_share - 0.1).abs() < 1e-12, "{}", g.off_grid_share);
    // No shape of the library is the grid plus that pair, so the declaration names the run
    // and says what lies off it.
    assert!(report.identification.matched.is_none());
    assert_eq!(report.name_as_declared.as_deref(), Some("2x3 process grid"));
    assert_eq!(
        report.declared_note().as_deref(),
        Some(
            "declared by its row and column communicators; no shape of the library matches: 1 point-to-point \
             pair lies off the grid (10.0 % of the bytes)"
        )
    );
    // Ten more messages off it: 11 of 20 off the grid, most of the bytes; nothing names the run.
    let mut t = blacs_like(2, 3, |r, c| r * 3 + c, Some((0, 4)));
    stray_messages(&mut t, 0, 4, 10);
    let report = identify(&t);
    assert!((report.communicator_grids[0].off_grid_share - 0.55).abs() < 1e-12);
    assert_eq!(report.name_as_declared, None);
    // Rows without columns: no grid.
    let mut t = Trace::new("rows", "test", 6);
    t.add_comm("row 0", vec![0, 1, 2]);
    t.add_comm("row 1", vec![3, 4, 5]);
    assert!(identify(&t).communicator_grids.is_empty());
}

#[test]
fn two_grids_on_the_same_ranks_are_both_reported_and_neither_names_the_run() {
    // ScaLAPACK's drivers run each test on every grid of their input: 2x3, then 3x2.
    let mut t = blacs_like(2, 3, |r, c| r * 3 + c, None);
    for (name, members) in [
        ("row a", vec![0, 1]),
        ("row b", vec![2, 3]),
        ("row c", vec![4, 5]),
        ("col a", vec![0, 2, 4]),
        ("col b", vec![1, 3, 5]),
    ] {
        t.add_comm(name, members);
    }
    // A pair of the 3x2 grid's row {2, 3}, off the 2x3 grid (rows 0-2 and 3-5).
    let c = t.push_call(2, "MPI_Send", 1000, 1001, NO_CALLPATH, 0);
    t.push_p2p(2, c, c, P2pDir::Send, 3, 0, 0, 64);
    let c = t.push_call(3, "MPI_Recv", 1000, 1002, NO_CALLPATH, 0);
    t.push_p2p(3, c, c, P2pDir::Recv, 2, 0, 0, 64);
    let report = identify(&t);
    // Both grids, row-major, and not the grid that the 3x2 grid's columns {0, 2, 4}, {1, 3, 5}
    // make with the 2x3 grid's columns {0, 3}, {1, 4}, {2, 5} (every pair meets once too).
    let dims: Vec<(u32, u32, bool)> = report
        .communicator_grids
        .iter()
        .map(|g| (g.rows, g.cols, g.row_major))
        .collect();
    assert_eq!(
        dims,
        vec![(3, 2, true), (2, 3, true)],
        "{:#?}",
        report.communicator_grids
    );
    assert!(report.communicator_grids.iter().all(|g| !g.agrees));
    assert_eq!(report.name_as_declared, None);
}

/// ScaLAPACK's own test drivers recorded by tools/record/scalapack.sh (held out of the corpus:
/// docs/corpus.md "ScaLAPACK"; `SCALAPACK_HELDOUT=DIR[:DIR…]` names the run folders). Truth:
/// the driver's output `scalapack.out`, its table header (`TIME … P Q …`) and one `WALL` line
/// per test with that test's P and Q, and BLACS's `Row-major` order. Every 2-D grid the driver
/// ran must be listed with every rank at (rank / Q, rank mod Q); a run whose tests all use one
/// grid must be named by it unless pairs off it match another shape; a run through several
/// grids by none.
#[test]
#[ignore = "needs SCALAPACK_HELDOUT (held-out runs, recorded outside the repository)"]
fn scalapack_held_out_runs_are_named_by_the_drivers_grids() {
    use std::collections::BTreeSet;
    use std::path::PathBuf;
    use tracelogic_formats::{fs::load_paths, read_trace};
    let dirs = std::env::var("SCALAPACK_HELDOUT").expect("SCALAPACK_HELDOUT=DIR[:DIR…]");
    for dir in dirs.split(':').map(PathBuf::from) {
        let run = dir.display().to_string();
        let out = std::fs::read_to_string(dir.join("scalapack.out")).unwrap();
        let header: Vec<&str> = out
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .find(|f| f.first() == Some(&"TIME") && f.contains(&"P") && f.contains(&"Q"))
            .expect("the table header");
        let column = |name: &str| header.iter().position(|&h| h == name).unwrap();
        let (ip, iq) = (column("P"), column("Q"));
        let grids: BTreeSet<(u32, u32)> = out
            .lines()
            .filter(|l| l.starts_with("WALL "))
            .map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                assert!(f.contains(&"PASSED"), "{run}: {l}");
                (f[ip].parse().unwrap(), f[iq].parse().unwrap())
            })
            .collect();
        assert!(!grids.is_empty(), "{run}: no result line");
        let packed = ["dumpi.tar.zst", "trace.tar.zst"].map(|f| dir.join(f));
        let path = packed.iter().find(|p| p.exists()).expect("a packed trace").clone();
        let trace = read_trace(load_paths(&[path]).unwrap()).unwrap();
        let report = identify(&trace);
        let two_d: Vec<(u32, u32)> = grids.iter().copied().filter(|&(p, q)| p >= 2 && q >= 2).collect();
        for &(p, q) in &two_d {
            let g = report
                .communicator_grids
                .iter()
                .find(|g| (g.rows, g.cols) == (p, q))
                .unwrap_or_else(|| panic!("{run}: no {p}x{q} grid in {:#?}", report.communicator_grids));
            for rank in 0..p * q {
                assert_eq!(g.coords[rank as usize], [rank / q, rank % q], "{run}: rank {rank}");
            }
        }
        if grids.len() == 1 && two_d.len() == 1 {
            let (p, q) = two_d[0];
            let g = report
                .communicator_grids
                .iter()
                .find(|g| (g.rows, g.cols) == (p, q))
                .unwrap();
            // Named by it, unless pairs off it make the traffic another shape of the library
            // (then the match stands); Cholesky's transposes make it none.
            if g.pairs_off_grid == 0 || report.identification.matched.is_none() {
                assert_eq!(report.name_as_declared, Some(format!("{p}x{q} process grid")), "{run}");
            }
        } else {
            assert_eq!(report.name_as_declared, None, "{run}");
        }
    }
}

#[test]
fn a_grid_on_part_of_the_ranks_is_listed_and_lines_of_a_whole_grid_are_nobody_elses() {
    // Ranks 1, 3, 5, 7 of 8 as a 2x2 grid: rows {1, 3}, {5, 7}, columns {1, 5}, {3, 7}.
    let mut t = Trace::new("part", "test", 8);
    for m in [vec![1, 3], vec![5, 7], vec![1, 5], vec![3, 7]] {
        t.add_comm("line", m);
    }
    stray_messages(&mut t, 1, 3, 1); // in a row
    stray_messages(&mut t, 3, 7, 1); // in a column
    stray_messages(&mut t, 1, 7, 1); // between grid ranks, off it
    stray_messages(&mut t, 0, 5, 1); // from outside
    let report = identify(&t);
    assert!(report.communicator_grids.is_empty());
    assert_eq!(report.sub_grids.len(), 1, "{:#?}", report.sub_grids);
    let g = &report.sub_grids[0];
    assert_eq!((g.rows, g.cols, g.ranks.clone()), (2, 2, vec![1, 3, 5, 7]));
    assert_eq!(g.coords, vec![[0, 0], [0, 1], [1, 0], [1, 1]]);
    assert_eq!(
        (g.pairs_in_rows, g.pairs_in_cols, g.pairs_off_grid, g.pairs_leaving),
        (1, 1, 1, 1)
    );
    // A 3x2 grid over all 6 ranks and pairs {0, 2}, {1, 3}: with the whole grid's rows {0, 1}
    // and {2, 3} they would make a 2x2 grid on 0-3; that mix is no declaration.
    let mut t = blacs_like(3, 2, |r, c| r * 2 + c, None);
    t.add_comm("pair", vec![0, 2]);
    t.add_comm("pair", vec![1, 3]);
    let report = identify(&t);
    assert_eq!(report.communicator_grids.len(), 1);
    assert!(report.sub_grids.is_empty(), "{:#?}", report.sub_grids);
}

/// Quantum ESPRESSO on 8 ranks diagonalises with ScaLAPACK on a sub-group its output states
/// (`size of sub-group:  2*  2 procs`): the trace's communicators declare that grid on 4 of the
/// 8 ranks, and no grid over all of them.
#[test]
fn quantum_espresso_diagonalises_on_the_sub_grid_its_output_states() {
    use tracelogic_formats::{fs::load_paths, read_trace};
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/apps/qe-si-8");
    let out = std::fs::read_to_string(dir.join("pw.out")).unwrap();
    let line = out
        .lines()
        .find(|l| l.contains("size of sub-group:"))
        .expect("the sub-group line");
    let dims: Vec<u32> = line
        .split("sub-group:")
        .nth(1)
        .unwrap()
        .replace("procs)", "")
        .split('*')
        .map(|d| d.trim().parse().unwrap())
        .collect();
    assert_eq!(dims.len(), 2, "{line}");
    let trace = read_trace(load_paths(&[dir.join("dumpi.tar.zst")]).unwrap()).unwrap();
    let report = identify(&trace);
    assert!(report.communicator_grids.is_empty());
    assert_eq!(report.sub_grids.len(), 1, "{:#?}", report.sub_grids);
    let g = &report.sub_grids[0];
    assert_eq!((g.rows, g.cols), (dims[0], dims[1]));
    assert_eq!(g.ranks.len() as u32, dims[0] * dims[1]);
}

/// Thousands of small communicators (every pair of ranks 1 and 2 apart on 2,048 ranks, 4,093
/// lines, each a possible row or column of many 2x2 grids): the search stops at its budget or
/// at `sub_grid::MAX_GRIDS`, and what it lists are grids.
#[test]
fn thousands_of_line_communicators_are_searched_within_a_budget() {
    use tracelogic_analysis::topology::sub_grid;
    let n = 2048;
    let mut t = Trace::new("pairs", "test", n);
    for i in 0..n {
        for d in [1, 2] {
            if i + d < n {
                t.add_comm("pair", vec![i, i + d]);
            }
        }
    }
    let grids = sub_grid::find(&t, &[], &[]);
    assert!(!grids.is_empty() && grids.len() <= sub_grid::MAX_GRIDS);
    for g in &grids {
        // {i, i+1, i+2, i+3}: rows {i, i+1}, {i+2, i+3}, columns {i, i+2}, {i+1, i+3}.
        let i = g.ranks[0];
        assert_eq!(g.ranks, vec![i, i + 1, i + 2, i + 3], "{}", g.label);
        assert_eq!((g.rows, g.cols), (2, 2));
    }
}

/// Whether `coords` (`[row, col]` per rank) place every rank in its own cell of a `p` x `q`
/// grid, checked cell by cell.
fn is_grid(coords: &[[u32; 2]], p: u32, q: u32) -> bool {
    let mut cells = vec![false; (p * q) as usize];
    coords.len() as u32 == p * q
        && coords
            .iter()
            .all(|c| c[0] < p && c[1] < q && !std::mem::replace(&mut cells[(c[0] * q + c[1]) as usize], true))
}

/// Every pair of 90 ranks a communicator (4,005 lines of 2, any perfect matching of them a
/// family) and 2,000 random halves with their complements (each pair a family of 2 lines of
/// 45): the whole-run search stops at its budget, says so in the report and in both shells'
/// note, and what it found are grids. Before the budget a trace like this one kept the search
/// busy for many minutes (two greedy completions over every line per pair of lines through
/// rank 0, some 10^10 steps).
#[test]
fn thousands_of_overlapping_line_families_end_the_whole_grid_search_at_its_budget() {
    use rand::{seq::SliceRandom, SeedableRng};
    use tracelogic_analysis::topology::comm_grid;
    let n = 90u32;
    let mut t = Trace::new("lines", "test", n);
    for a in 0..n {
        for b in a + 1..n {
            t.add_comm("pair", vec![a, b]);
        }
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    for _ in 0..2000 {
        let mut order: Vec<u32> = (1..n).collect();
        order.shuffle(&mut rng);
        let mut half = vec![0];
        half.extend(&order[..44]);
        t.add_comm("half", half);
        t.add_comm("other half", order[44..].to_vec());
    }
    let (grids, complete) = comm_grid::search(&t, &[], comm_grid::MAX_STEPS);
    assert!(!complete, "{} grids, search finished", grids.len());
    for g in &grids {
        assert!(is_grid(&g.coords, g.rows, g.cols), "{}", g.label);
    }
    let report = identify(&t);
    assert!(report.grid_search_incomplete);
    assert!(report.grid_search_note().unwrap().contains("step budget"));
}

/// A real grid among many lines that form none (each line holds rank 0, so no two of them are
/// disjoint): found, and the search finishes; with too small a budget it says it did not.
#[test]
fn a_declared_grid_among_thousands_of_stray_lines_is_found_and_a_short_budget_is_reported() {
    use rand::{seq::SliceRandom, SeedableRng};
    use tracelogic_analysis::topology::comm_grid;
    let mut t = blacs_like(8, 8, |r, c| r * 8 + c, None);
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    for _ in 0..4000 {
        let mut others: Vec<u32> = (1..64).collect();
        others.shuffle(&mut rng);
        let mut line = vec![0];
        line.extend(&others[..7]);
        t.add_comm("stray", line);
    }
    let (grids, complete) = comm_grid::search(&t, &[], comm_grid::MAX_STEPS);
    assert!(complete);
    let expected: Vec<[u32; 2]> = (0..64).map(|r| [r / 8, r % 8]).collect();
    assert_eq!(grids.iter().map(|g| &g.coords).collect::<Vec<_>>(), vec![&expected]);
    let (_, complete) = comm_grid::search(&t, &[], 1000);
    assert!(!complete);
    assert!(!identify(&t).grid_search_incomplete);
}

/// GROMACS's PME on 18 ranks, as recorded (held-out `gromacs-18-100-auto`): a 3x6 grid of row
/// and column communicators, every pair of a row and of a column exchanging, except that the
/// three antipodal pairs of each row (ranks 0-3, 1-4, 2-5 of row 0) exchange a few bytes once.
/// Built here: heavy pairs 40 messages of 10 kB, the light ones one of 8 B, optionally one
/// light pair off the grid; rank = row · 6 + col.
fn pme_like(stray: Option<(u32, u32)>) -> Trace {
    let (p, q) = (3u32, 6u32);
    let n = p * q;
    let mut t = Trace::new("pme", "test", n);
    let world = t.add_comm("MPI_COMM_WORLD", (0..n).collect());
    let rows: Vec<u32> = (0..p)
        .map(|r| t.add_comm(&format!("row {r}"), (0..q).map(|c| r * q + c).collect()))
        .collect();
    let cols: Vec<u32> = (0..q)
        .map(|c| t.add_comm(&format!("col {c}"), (0..p).map(|r| r * q + c).collect()))
        .collect();
    let mut clock = 0u64;
    let mut exchange = |t: &mut Trace, a: u32, b: u32, times: usize, bytes: u64| {
        for _ in 0..times {
            clock += 10;
            let s = clock;
            let c = t.push_call(a, "MPI_Send", s, s + 1, NO_CALLPATH, 0);
            t.push_p2p(a, c, c, P2pDir::Send, b, 0, world, bytes);
            let c = t.push_call(b, "MPI_Recv", s, s + 2, NO_CALLPATH, 0);
            t.push_p2p(b, c, c, P2pDir::Recv, a, 0, world, bytes);
        }
    };
    for a in 0..n {
        for b in a + 1..n {
            let same_row = a / q == b / q;
            let same_col = a % q == b % q;
            if same_row && b - a == q / 2 {
                exchange(&mut t, a, b, 1, 8);
            } else if same_row || same_col {
                exchange(&mut t, a, b, 40, 10_000);
            }
        }
    }
    if let Some((a, b)) = stray {
        exchange(&mut t, a, b, 1, 8);
    }
    let e = clock + 10;
    for (line, &comm) in rows.iter().chain(&cols).enumerate() {
        let members = t.comms[comm as usize].members.clone();
        for &m in &members {
            let c = t.push_call(m, "MPI_Alltoall", e + line as u64, e + line as u64 + 1, NO_CALLPATH, 0);
            t.push_collective(m, c, CollectiveOp::Alltoall, comm, members[0], 8, 8);
        }
    }
    t
}

/// The light pairs are cut by the widest gap, and the 3x6 grid without its rows' antipodal
/// pairs is no shape of the library; every pair lies in a row or column the communicators
/// declare, so the graph of every pair is tried, and it is the 3x6 process grid: rows and
/// columns as declared. A light pair off the grid (rank 0 with rank 7, row 1 column 1) stops
/// that: nothing is named.
#[test]
fn pairs_the_filter_finds_light_are_kept_when_they_lie_on_a_declared_grid() {
    use tracelogic_analysis::topology::identify_matrix_declared;
    let t = pme_like(None);
    let m = CommMatrix::from_trace(&t, &Selection::all());
    let plain = identify_matrix(&m, &TopologyOptions::default());
    assert!(
        plain.identification.matched.is_none(),
        "{:?}",
        plain.identification.matched
    );
    assert_eq!(plain.edges.len(), 63 - 9);
    let hinted = identify_matrix_declared(&m, &TopologyOptions::default(), &|pairs| {
        declared::grid_holding(&t, pairs)
    });
    let matched = hinted.identification.matched.as_ref().expect("a match");
    assert_eq!(matched.label, "3x6 process grid (rows and columns)");
    assert_eq!(hinted.edges.len(), 3 * 15 + 6 * 3);
    let fallback = hinted.filter.fallback.as_ref().expect("a fallback cut");
    let taken = &fallback.tried[fallback.taken.expect("taken")];
    assert_eq!(taken.declared_by.as_deref(), Some("3x6 process grid"));
    assert!(fallback
        .summary()
        .contains("the 3x6 process grid the program's communicators declare"));
    // Ranks share a reported row exactly when they share a declared one (rank / 6).
    let places = &hinted.identification.mapping;
    let row_of = |r: usize| places[r].coords[0];
    for a in 0..18usize {
        for b in 0..18usize {
            assert_eq!(row_of(a) == row_of(b), a / 6 == b / 6, "ranks {a} and {b}");
        }
    }
    let stray = pme_like(Some((0, 7)));
    let m = CommMatrix::from_trace(&stray, &Selection::all());
    assert_eq!(declared::grid_holding(&stray, &[[0, 7]]), None);
    let hinted = identify_matrix_declared(&m, &TopologyOptions::default(), &|pairs| {
        declared::grid_holding(&stray, pairs)
    });
    assert!(hinted.identification.matched.is_none());
}

/// A phase is named as the whole run is: the phase of every event of the PME-like run above,
/// whose light row pairs the filter cuts, is the declared 3x6 process grid, not unidentified
/// (held-out GROMACS on 18 ranks, a 3x6 PME grid: the run was named by its declared grid and its
/// MD phases "unidentified"); with a light pair off the grid it stays unidentified.
#[test]
fn a_phase_on_a_declared_grid_is_named_as_the_run() {
    use std::collections::BTreeMap;
    use tracelogic_analysis::patterns::rank_events;
    use tracelogic_analysis::phases::describe;
    let whole = |t: &Trace| {
        let events = rank_events(t, false);
        let spans: BTreeMap<u32, Vec<(u32, u32)>> = events
            .ranks
            .iter()
            .filter(|r| !r.symbols.is_empty())
            .map(|r| (r.rank, vec![(0, r.symbols.len() as u32 - 1)]))
            .collect();
        describe::topology(t, &events, &spans).0.label
    };
    assert_eq!(whole(&pme_like(None)), "3x6 process grid (rows and columns)");
    assert_eq!(whole(&pme_like(Some((0, 7)))), "unidentified");
}
