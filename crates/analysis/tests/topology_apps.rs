//! Declared topologies and process grids on the real application runs of `tests/data/apps`
//! (unmodified programs traced with SST DUMPI, docs/corpus.md), against each application's own
//! account of its layout:
//!
//! - LAMMPS (`processors ... map cart`, the default): it calls `MPI_Cart_create` with its
//!   processor grid; the log's "P by Q by R MPI processor grid" gives the extents and
//!   `procs.map` (written by LAMMPS) each world rank's grid position. Its box is periodic, and
//!   ghost atoms go to the 6 face neighbours.
//! - hpcc: HPL's P x Q process grid from `hpccinf.txt`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use tracelogic_analysis::matrix::CommMatrix;
use tracelogic_analysis::topology::{declared, identify_matrix, Threshold, TopologyOptions, TopologyReport};
use tracelogic_model::{Selection, Trace};

fn app(name: &str) -> Option<PathBuf> {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/apps")
        .join(name);
    d.is_dir().then_some(d)
}

fn read(dir: &Path) -> Trace {
    let packed = dir.join("dumpi.tar.zst");
    let path = if packed.exists() { packed } else { dir.to_path_buf() };
    let files = tracelogic_formats::fs::load_paths(&[path]).unwrap();
    tracelogic_formats::read_trace(files).unwrap()
}

fn identify(trace: &Trace) -> TopologyReport {
    let m = CommMatrix::from_trace(trace, &Selection::all());
    let mut report = identify_matrix(&m, &TopologyOptions::default());
    declared::attach(trace, &mut report);
    report
}

/// LAMMPS's grid from its log, and each world rank's 0-based position from `procs.map`
/// (columns: world, universe, original rank, then 1-based I J K).
fn lammps_truth(dir: &Path) -> (Vec<u32>, Vec<Vec<u32>>) {
    let log = std::fs::read_to_string(dir.join("log.lammps")).unwrap();
    let line = log.lines().find(|l| l.contains("MPI processor grid")).unwrap();
    let dims: Vec<u32> = line.split_whitespace().filter_map(|w| w.parse().ok()).collect();
    let n: u32 = dims.iter().product();
    let map = std::fs::read_to_string(dir.join("procs.map")).unwrap();
    let mut coords = vec![Vec::new(); n as usize];
    for l in map.lines() {
        let parts: Vec<&str> = l.split(':').collect();
        if parts.len() < 2 {
            continue;
        }
        let ids: Vec<usize> = parts[0].split_whitespace().filter_map(|w| w.parse().ok()).collect();
        let ijk: Vec<u32> = parts[1].split_whitespace().filter_map(|w| w.parse().ok()).collect();
        if ids.len() == 3 && ijk.len() == 3 {
            coords[ids[2]] = ijk.iter().map(|&x| x - 1).collect();
        }
    }
    (dims, coords)
}

#[test]
fn lammps_declares_its_processor_grid_and_the_run_is_named_by_it() {
    let mut checked = 0;
    for name in [
        "lammps-melt-8",
        "lammps-melt-12",
        "lammps-melt-12-1x3x4",
        "lammps-melt-27",
        "lammps-melt-27-reorder",
    ] {
        let Some(dir) = app(name) else { continue };
        let (dims, truth) = lammps_truth(&dir);
        let trace = read(&dir);
        assert_eq!(trace.cartesian.len(), 1, "{name}: {:?}", trace.warnings);
        let t = &trace.cartesian[0];
        assert_eq!(t.dims, dims, "{name}: the log's processor grid");
        assert_eq!(t.periods, vec![true; 3], "{name}: the periodic box");
        // Each member's coordinates (MPI's row-major rule on the Cartesian communicator) are
        // the position LAMMPS itself wrote for that world rank.
        let members = &trace.comms[t.comm as usize].members;
        for (i, &w) in members.iter().enumerate() {
            assert_eq!(t.coords[i], truth[w as usize], "{name}: world rank {w}");
        }
        let report = identify(&trace);
        let d = &report.declared[0];
        let label = format!(
            "{} torus",
            dims.iter().map(u32::to_string).collect::<Vec<_>>().join("x")
        );
        assert_eq!(d.label, label, "{name}");
        assert!(d.agrees, "{name}: {}", d.summary);
        assert_eq!(d.same_graph_as_match, Some(true), "{name}: {}", d.summary);
        assert_eq!(report.name_as_declared.as_deref(), Some(label.as_str()), "{name}");
        if dims.contains(&1) {
            assert!(
                d.notes.iter().any(|n| n.contains("has extent 1")),
                "{name}: {:?}",
                d.notes
            );
        }
        checked += 1;
    }
    if app("lammps-melt-12").is_some() {
        assert_eq!(checked, 5);
    }
}

#[test]
fn lammps_without_a_cartesian_map_declares_nothing() {
    // `processors ... map xzy`: LAMMPS places ranks itself, without MPI_Cart_create: the
    // topology is only the observed one.
    let Some(dir) = app("lammps-melt-12-xzy") else { return };
    let trace = read(&dir);
    let report = identify(&trace);
    // dumpi2ascii's counts (expected/dumpi2ascii-counts.txt) list no MPI_Cart_create here,
    // 12 in lammps-melt-12.
    let counts = std::fs::read_to_string(dir.join("expected/dumpi2ascii-counts.txt")).unwrap();
    assert!(!counts.contains("MPI_Cart_create"));
    assert!(trace.cartesian.is_empty());
    assert!(report.declared.is_empty());
    assert_eq!(report.name_as_declared, None);
}

/// HPL's process grid from `hpccinf.txt` (the `Ps`, `Qs` and `PMAP` lines).
fn hpl_grid(dir: &Path) -> (u32, u32, u32) {
    let inf = std::fs::read_to_string(dir.join("hpccinf.txt")).unwrap();
    let value = |key: &str| -> u32 {
        inf.lines()
            .find(|l| l.split_whitespace().nth(1) == Some(key))
            .and_then(|l| l.split_whitespace().next()?.parse().ok())
            .unwrap_or_else(|| panic!("hpccinf.txt has no {key} line"))
    };
    (value("Ps"), value("Qs"), value("PMAP"))
}

/// The communication matrix of hpcc's HPL section, dated by hpcc's own output
/// (expected/sections.tsv, seconds since the trace's first event; the model counts nanoseconds
/// from there).
fn hpl_section(dir: &Path, trace: &Trace) -> CommMatrix {
    let sections = std::fs::read_to_string(dir.join("expected/sections.tsv")).unwrap();
    let hpl: Vec<f64> = sections
        .lines()
        .find(|l| l.starts_with("HPL\t"))
        .unwrap()
        .split('\t')
        .skip(1)
        .take(2)
        .map(|x| x.parse().unwrap())
        .collect();
    let selection = Selection {
        from: Some((hpl[0] * 1e9) as u64),
        to: Some((hpl[1] * 1e9) as u64),
        ..Selection::all()
    };
    CommMatrix::from_trace(trace, &selection)
}

/// The pairs of HPL's `p × q` grid with row-major numbering (PMAP 0: rank = row·Q + col).
fn hpl_pairs(p: u32, q: u32) -> BTreeSet<(u32, u32)> {
    let n = p * q;
    (0..n)
        .flat_map(|a| {
            (a + 1..n)
                .filter(move |&b| a / q == b / q || a % q == b % q)
                .map(move |b| (a, b))
        })
        .collect()
}

#[test]
fn hpl_sections_of_hpcc_are_their_process_grids() {
    // Every pair kept (the row broadcasts of a 48-unknown problem are light next to the
    // column panel traffic, and the automatic cut drops them).
    let every_pair = TopologyOptions {
        threshold: Threshold::Percent(0.0),
        ..TopologyOptions::default()
    };
    // hpcc-4, HPL 2x2: the section is exactly the grid (a 4-cycle), the 2x2 process grid among
    // its equivalents.
    if let Some(dir) = app("hpcc-4") {
        let (p, q, pmap) = hpl_grid(&dir);
        assert_eq!((p, q, pmap), (2, 2, 0));
        let trace = read(&dir);
        let report = identify_matrix(&hpl_section(&dir, &trace), &every_pair);
        let observed: BTreeSet<(u32, u32)> = report.edges.iter().map(|&[a, b]| (a, b)).collect();
        assert_eq!(observed, hpl_pairs(p, q));
        let id = &report.identification;
        assert!(
            id.equivalents
                .iter()
                .any(|e| e.label == "2x2 process grid (rows and columns)"),
            "{:?}",
            id.equivalents
        );
    }
    // hpcc-6, HPL 2x3: every pair of the grid communicates, and HPL's setup exchanges over all
    // ranks add two pairs lighter than a genuine row pair (so no cut separates them): no exact
    // match, the grid's pairs all there, the other pairs under 1 % of the section's traffic.
    if let Some(dir) = app("hpcc-6") {
        let (p, q, pmap) = hpl_grid(&dir);
        assert_eq!((p, q, pmap), (2, 3, 0));
        let trace = read(&dir);
        let m = hpl_section(&dir, &trace);
        let report = identify_matrix(&m, &every_pair);
        let observed: BTreeSet<(u32, u32)> = report.edges.iter().map(|&[a, b]| (a, b)).collect();
        let grid = hpl_pairs(p, q);
        assert!(grid.is_subset(&observed));
        let (pairs, _) = tracelogic_analysis::topology::pair_volumes(&m);
        let total: u64 = pairs.iter().map(|p| p.3).sum();
        let other: u64 = pairs.iter().filter(|p| !grid.contains(&(p.0, p.1))).map(|p| p.3).sum();
        assert_eq!(observed.len() - grid.len(), 2);
        assert!((other as f64) < 0.01 * total as f64, "{other} of {total}");
    }
}

/// HPL creates its row and column communicators by `MPI_Comm_split` (no `MPI_Cart_create`):
/// they declare its P x Q grid, row-major as `PMAP 0` says (hpccinf.txt), on the whole run's
/// report. hpcc's other sections communicate off that grid, so it does not name the run.
#[test]
fn hpl_row_and_column_communicators_declare_hpccinf_s_grid() {
    for name in ["hpcc-4", "hpcc-6", "otf2-hpcc-4"] {
        let Some(dir) = app(name) else { continue };
        let (p, q, pmap) = hpl_grid(&dir);
        assert_eq!(pmap, 0, "{name}: row-major");
        let trace = read(&dir);
        let report = identify(&trace);
        let g = report
            .communicator_grids
            .iter()
            .find(|g| (g.rows, g.cols) == (p, q))
            .unwrap_or_else(|| panic!("{name}: no {p}x{q} grid in {:#?}", report.communicator_grids));
        for rank in 0..p * q {
            assert_eq!(g.coords[rank as usize], [rank / q, rank % q], "{name}: rank {rank}");
        }
        assert!(g.row_major);
        assert_eq!(report.name_as_declared, None, "{name}");
    }
}
