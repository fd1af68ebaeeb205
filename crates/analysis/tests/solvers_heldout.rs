//! Held-out solvers nobody tuned tracelogic for (docs/corpus.md, "MUMPS, MPB, NetPIPE"), recorded
//! outside the repository by `tools/record/mumps.sh` and `tools/record/mpb.sh`, checked against
//! the programs' own output. `SOLVERS_HELDOUT=DIR` names the folder holding the runs `mpb-4`,
//! `mpb-8`, `mumps-4` and `mumps-8` (DUMPI) and `mpb-4-otf2`, `mumps-4-otf2`, `mumps-8-otf2` (OTF2).

#![cfg(not(target_arch = "wasm32"))]

use std::path::{Path, PathBuf};
use tracelogic_analysis::patterns::{analyse_events, rank_events, PatternOptions};
use tracelogic_analysis::phases::{detect_phases, Outside};
use tracelogic_formats::{fs::load_paths, read_trace};
use tracelogic_model::{match_messages, Trace};

fn run(name: &str) -> (PathBuf, Trace) {
    let root = std::env::var("SOLVERS_HELDOUT").expect("SOLVERS_HELDOUT=DIR");
    let dir = Path::new(&root).join(name);
    let packed = ["dumpi.tar.zst", "trace.tar.zst"]
        .iter()
        .map(|f| dir.join(f))
        .find(|p| p.exists())
        .expect("a packed trace");
    let trace = read_trace(load_paths(&[packed]).unwrap()).unwrap();
    (dir, trace)
}

/// MPB solves each k-point with a block conjugate-gradient eigensolver, every iteration the same
/// FFT transposes (all-to-all `MPI_Sendrecv`) and dot products (`MPI_Allreduce`); it prints the
/// iterations per k-point ("Finished solving for bands ... after N iterations", summed in
/// `expected/kpoints.tsv`). One communication pattern on every rank occurs exactly that often.
#[test]
#[ignore = "needs SOLVERS_HELDOUT (held-out runs, recorded outside the repository)"]
fn mpb_eigensolver_iterations_are_one_pattern() {
    for name in ["mpb-4", "mpb-8", "mpb-4-otf2"] {
        let (dir, trace) = run(name);
        let kpoints = std::fs::read_to_string(dir.join("expected/kpoints.tsv")).unwrap();
        let iterations: usize = kpoints
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| l.split('\t').nth(1).unwrap().parse::<usize>().unwrap())
            .sum();
        assert!(iterations > 100, "{name}: {iterations}");
        let matching = match_messages(&trace);
        let events = rank_events(&trace, false);
        let a = analyse_events(&trace, &matching, &events, &PatternOptions::default());
        let n = trace.ranks.len();
        assert!(
            a.communication
                .patterns
                .iter()
                .any(|p| p.ranks.len() == n && p.occurrences == iterations),
            "{name}: no pattern on {n} ranks with {iterations} occurrences: {:?}",
            a.communication
                .patterns
                .iter()
                .take(4)
                .map(|p| (p.occurrences, p.ranks.len()))
                .collect::<Vec<_>>()
        );
    }
}

/// MUMPS logs its analysis, factorization and solve; the analysis communicates by broadcasts and
/// reductions from rank 0, the factorization sends contribution blocks up the elimination tree.
/// The phases cut where the factorization begins ("****** FACTORIZATION STEP", dated on the
/// trace's clock in `expected/log-times.tsv`), within two of the default 100 windows (2 % of the
/// run: step 4 moves a boundary within a window either side), on the DUMPI runs and their OTF2
/// twins; on 8 ranks also where the solve begins ("****** SOLVE & CHECK STEP"). The DUMPI run on
/// 8 ranks was one phase until step 3c covered every run whose windows find no cut.
#[test]
#[ignore = "needs SOLVERS_HELDOUT (held-out runs, recorded outside the repository)"]
fn mumps_phases_cut_where_the_logged_steps_begin() {
    for (name, steps) in [
        ("mumps-4", &["factorization"][..]),
        ("mumps-4-otf2", &["factorization"][..]),
        ("mumps-8", &["factorization", "solve"][..]),
        ("mumps-8-otf2", &["factorization", "solve"][..]),
    ] {
        let (dir, trace) = run(name);
        let times = std::fs::read_to_string(dir.join("expected/log-times.tsv")).unwrap();
        let matching = match_messages(&trace);
        let events = rank_events(&trace, false);
        let a = analyse_events(&trace, &matching, &events, &PatternOptions::default());
        let p = detect_phases(&trace, &events, &a.communication, 0.0, Outside::Own);
        let (first, last) = (p.phases[0].time.0, p.phases.last().unwrap().time.1);
        let run_s = (last - first) as f64 / 1e9;
        for step in steps {
            let banner_s: f64 = times
                .lines()
                .find(|l| l.starts_with(&format!("{step}\t")))
                .and_then(|l| l.split('\t').nth(3))
                .expect("the step's banner, dated")
                .parse()
                .unwrap();
            let nearest = p.phases[1..]
                .iter()
                .map(|ph| (ph.time.0 as f64 / 1e9 - banner_s).abs())
                .fold(f64::INFINITY, f64::min);
            assert!(
                nearest <= 0.02 * run_s,
                "{name}: nearest boundary {nearest:.4} s from the {step} banner at {banner_s:.4} s ({} phases, run {run_s:.3} s)",
                p.phases.len()
            );
        }
    }
}
