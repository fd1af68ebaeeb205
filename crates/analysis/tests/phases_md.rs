//! Sections of GROMACS runs against what the run itself says: the MD run, from the end of the
//! set-up (its last `MPI_Scatterv`, the initial state distributed to the domains) through step
//! 0's first PME transpose (the trace's first `MPI_Alltoall`, which only the MD steps call) to
//! the last one, is one section (a short end of reductions may follow as a section of its own),
//! with or without dynamic load balancing (`-dlb yes` moves the domain boundaries at every
//! neighbour search, md.log's "DD step" lines, and some halo pulses' `MPI_Sendrecv` become lone
//! sends and receives to the same peers).

use std::path::PathBuf;
use tracelogic_analysis::patterns::{analyse_events, rank_events, PatternOptions};
use tracelogic_analysis::phases::{detect_phases, Outside};
use tracelogic_formats::fs::load_paths;
use tracelogic_formats::read_trace;
use tracelogic_model::{match_messages, Time};

/// What the run in `dir` (its DUMPI archive) says of its MD run and what the sections are: the
/// sections' start times; the earliest of the ranks' last `MPI_Scatterv` before the first
/// `MPI_Alltoall`, that first `MPI_Alltoall` and the last one (entries); the trace's span.
fn sections_and_md_run(dir: &std::path::Path) -> (Vec<Time>, (Time, Time, Time), (Time, Time)) {
    let trace = read_trace(load_paths(&[dir.join("dumpi.tar.zst")]).unwrap()).unwrap();
    let func = |name: &str| {
        trace
            .functions
            .get(name)
            .unwrap_or_else(|| panic!("{name} in the trace"))
    };
    let (alltoall, scatterv) = (func("MPI_Alltoall"), func("MPI_Scatterv"));
    // Entries of `f`, per rank.
    let entries = |f: u32| {
        trace
            .ranks
            .iter()
            .map(|r| {
                (0..r.calls.len())
                    .filter(|&i| r.calls.func.at(i) == f)
                    .map(|i| r.calls.enter.at(i))
                    .collect()
            })
            .collect::<Vec<Vec<Time>>>()
    };
    let transposes: Vec<Time> = entries(alltoall).into_iter().flatten().collect();
    let (first, last) = (*transposes.iter().min().unwrap(), *transposes.iter().max().unwrap());
    // The first rank to leave the set-up: ranks reach the MD run at different times.
    let set_up_end = entries(scatterv)
        .into_iter()
        .filter_map(|r| r.into_iter().filter(|&t| t < first).max())
        .min()
        .unwrap();
    let matching = match_messages(&trace);
    let events = rank_events(&trace, false);
    let a = analyse_events(&trace, &matching, &events, &PatternOptions::default());
    let p = detect_phases(&trace, &events, &a.communication, 0.0, Outside::Own);
    (
        p.sections.iter().map(|s| s.time.0).collect(),
        (set_up_end, first, last),
        trace.span(),
    )
}

/// Whether the MD run of `dir` is one section (see [`gromacs_heldout_md_loop_is_one_section`]),
/// printing what was found.
fn md_run_is_one_section(dir: &std::path::Path) -> bool {
    let (starts, (set_up_end, first, last), (t0, t1)) = sections_and_md_run(dir);
    let slack = (t1 - t0) / 100;
    let s = |t: Time| (t - t0) as f64 / 1e9;
    println!(
        "{}: sections at {:?} s; last MPI_Scatterv {:.6} s, MPI_Alltoall from {:.6} to {:.6} s",
        dir.display(),
        starts.iter().map(|&t| s(t)).collect::<Vec<_>>(),
        s(set_up_end),
        s(first),
        s(last)
    );
    // The section holding the first transpose, and the next one's start.
    let k = starts.partition_point(|&t| t <= first);
    let (begin, next) = (starts[k - 1], starts.get(k).copied().unwrap_or(t1));
    begin + slack >= set_up_end && next + slack >= last
}

/// The corpus run (12 ranks, 3x2x2 domains, balancing left to GROMACS: tests/data/apps).
#[test]
fn gromacs_md_loop_is_one_section() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/apps/gromacs-water-12");
    assert!(md_run_is_one_section(&dir));
}

/// Held-out GROMACS runs (`GROMACS_HELDOUT=DIR[:DIR…]`, recorded by
/// `tools/record/heldout.sh`, with and without `-dlb yes`): the section holding step 0's first
/// transpose begins no earlier than 1 % of the run before the set-up's last `MPI_Scatterv`, and
/// the next section (the run's end, if any) no earlier than 1 % of the run before the last
/// transpose: no section begins inside the MD loop.
#[test]
#[ignore = "needs GROMACS_HELDOUT (held-out runs, recorded outside the repository)"]
fn gromacs_heldout_md_loop_is_one_section() {
    let dirs = std::env::var("GROMACS_HELDOUT").expect("GROMACS_HELDOUT=DIR[:DIR…]");
    let failed: Vec<&str> = dirs
        .split(':')
        .filter(|d| !d.is_empty() && !md_run_is_one_section(&PathBuf::from(d)))
        .collect();
    assert!(failed.is_empty(), "{failed:?}");
}
