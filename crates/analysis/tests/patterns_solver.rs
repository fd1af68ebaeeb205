//! A solver loop nobody tuned the patterns for: OpenFOAM's icoFoam (PISO) on the lid-driven
//! cavity, 8 irregular (Voronoi) subdomains, 6 time steps (`tests/data/apps/openfoam-cavity-8`,
//! recorded from Debian's unmodified `icoFoam`). Each time step runs linear solvers until they
//! converge, so the number of solver iterations changes from solve to solve and no two time
//! steps are equal. Before, the messages and reductions joined every rank's occurrences into one
//! instance of 74 % of the events.
//!
//! Truth is the application's own account. icoFoam's log (`stdout.txt`) prints every solve with
//! its iterations ("DICPCG:  Solving for p, …, No Iterations 26"); `decomposePar`'s log says
//! which subdomains share faces (the neighbours of every halo exchange). OpenFOAM's sources say
//! what one iteration communicates: a preconditioned CG iteration (`PCG.C`) multiplies by the
//! matrix once (one exchange of interface values with every neighbour) and reduces three sums
//! (`gSumProd` twice, `gSumMag` for the residual); a `smoothSolver` iteration with the
//! symmetric Gauss–Seidel smoother exchanges interface values twice (the sweep and the
//! residual's matrix product) and reduces once (`gSumMag`).
//!
//! The default pattern must be the CG iteration on every rank, as often as the log's CG
//! iterations (summed over the pressure solves) and at most three more per time step: a pattern
//! is its events wherever they occur, and the same exchange followed by three reductions also
//! runs outside the solver loop (on this run three times per step). The smoother's iteration
//! likewise, from the velocity solves, at most one more per step. Solve by solve, the runs of
//! back-to-back occurrences are the log's solves in order. A list that swallows the run fails
//! all of it.

mod steps_support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use tracelogic_analysis::patterns::{analyse_events, rank_events, CommunicationPattern, PatternOptions};
use tracelogic_formats::fs::load_paths;
use tracelogic_formats::read_trace;
use tracelogic_model::match_messages;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/apps/openfoam-cavity-8")
}

/// Per solver (the word before `:`), the "No Iterations" of its solves in log order; and the
/// time steps ("Time = " lines).
fn log_truth(dir: &Path) -> (BTreeMap<String, Vec<usize>>, usize) {
    let log = std::fs::read_to_string(dir.join("stdout.txt")).unwrap();
    let mut iterations: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for line in log.lines() {
        let Some((solver, rest)) = line.split_once(":  Solving for ") else {
            continue;
        };
        let n: usize = rest
            .rsplit_once("No Iterations ")
            .and_then(|(_, n)| n.trim().parse().ok())
            .unwrap_or_else(|| panic!("no iteration count in {line:?}"));
        iterations.entry(solver.trim().to_string()).or_default().push(n);
    }
    let steps = log.lines().filter(|l| l.starts_with("Time = ")).count();
    (iterations, steps)
}

/// Per subdomain, the subdomains it shares faces with (`log.decomposePar`).
fn neighbours(dir: &Path) -> BTreeMap<u32, BTreeSet<u32>> {
    let log = std::fs::read_to_string(dir.join("log.decomposePar")).unwrap();
    let mut out: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
    let mut current = None;
    for line in log.lines().map(str::trim) {
        if let Some(p) = line.strip_prefix("Processor ").and_then(|p| p.parse::<u32>().ok()) {
            current = Some(p);
        }
        if let (Some(p), Some(rest)) = (current, line.strip_prefix("Number of faces shared with processor ")) {
            let q: u32 = rest.split_whitespace().next().unwrap().parse().unwrap();
            out.entry(p).or_default().insert(q);
            out.entry(q).or_default().insert(p);
        }
    }
    out
}

/// On every rank: `exchanges` receives and sends per face neighbour (and no other peer) and
/// `reductions` `MPI_Allreduce`s, nothing else.
fn is_iteration(
    p: &CommunicationPattern,
    halo: &BTreeMap<u32, BTreeSet<u32>>,
    exchanges: usize,
    reductions: usize,
) -> bool {
    p.ranks.len() == halo.len()
        && p.events.iter().all(|(r, events)| {
            let mut per_peer: BTreeMap<(char, u32), usize> = BTreeMap::new();
            let mut allreduce = 0;
            for e in events.iter() {
                if e == "MPI_Allreduce" {
                    allreduce += 1;
                    continue;
                }
                let (kind, peer) = e.split_at(1);
                let Ok(peer) = peer.parse::<u32>() else {
                    return false;
                };
                *per_peer.entry((kind.chars().next().unwrap(), peer)).or_default() += 1;
            }
            let expected: BTreeMap<(char, u32), usize> = halo[r]
                .iter()
                .flat_map(|&q| [(('R', q), exchanges), (('S', q), exchanges)])
                .collect();
            allreduce == reductions && per_peer == expected
        })
}

#[test]
fn openfoam_cavity_solver_iterations_as_often_as_the_log_says() {
    let dir = dir();
    let (iterations, steps) = log_truth(&dir);
    let (cg_solves, smooth_solves) = (&iterations["DICPCG"], &iterations["smoothSolver"]);
    let (cg, smooth): (usize, usize) = (cg_solves.iter().sum(), smooth_solves.iter().sum());
    assert_eq!((steps, cg, smooth), (6, 549, 145), "the log as recorded");
    let halo = neighbours(&dir);
    let trace = read_trace(load_paths(&[dir.join("dumpi.tar.zst")]).unwrap()).unwrap();
    assert_eq!(trace.ranks.len(), halo.len());
    let matching = match_messages(&trace);
    let events = rank_events(&trace, false);
    let a = analyse_events(&trace, &matching, &events, &PatternOptions::default());
    let list = &a.communication_patterns;

    // The default pattern is the CG iteration, once per iteration of the log.
    let first = &list[0];
    assert!(is_iteration(first, &halo, 1, 3), "{:?}", first.events);
    assert!(
        (cg..=cg + 3 * steps).contains(&first.occurrences),
        "{} occurrences, the log has {cg} CG iterations in {steps} steps",
        first.occurrences
    );
    // The smoother's iteration.
    let smoothing: Vec<&CommunicationPattern> = list.iter().filter(|p| is_iteration(p, &halo, 2, 1)).collect();
    assert_eq!(smoothing.len(), 1, "one smoother iteration pattern");
    assert!(
        (smooth..=smooth + steps).contains(&smoothing[0].occurrences),
        "{} occurrences, the log has {smooth} smoothSolver iterations",
        smoothing[0].occurrences
    );
    // Solve by solve, in time order: the runs of back-to-back instances of each pattern (no
    // other instance between them) are the log's solves. A smoother solve's run holds its
    // iterations; a CG solve's run holds as many copies as the log's iterations, read at another
    // rotation: its first copy is the solve's set-up (matrix product, normalisation factor,
    // initial residual: the same exchange and three reductions) with the first iteration's
    // opening reduction, one of the pattern's own collectives right after it, joined to it (it
    // was an instance of its own, which cut the run: one copy less).
    let runs = |id: usize| -> Vec<usize> {
        let mut runs: Vec<(usize, usize)> = Vec::new();
        for i in &a.communication.instances {
            match runs.last_mut() {
                Some((p, n)) if *p == i.pattern as usize => *n += 1,
                _ => runs.push((i.pattern as usize, 1)),
            }
        }
        runs.into_iter()
            .filter(|&(p, n)| p == id && n > 1)
            .map(|(_, n)| n)
            .collect()
    };
    let looping = |solves: &[usize], less: usize| -> Vec<usize> {
        solves.iter().filter(|&&n| n > 1 + less).map(|&n| n - less).collect()
    };
    assert_eq!(runs(0), looping(cg_solves, 0), "CG solves");
    assert_eq!(runs(smoothing[0].id), looping(smooth_solves, 0), "smoother solves");
    // Counted from the instances: the CG iterations cover most events, the occurrences follow
    // one another on every rank, and nothing seen once covers more than 1 % of the run.
    let covered = |id: usize| -> u64 {
        a.communication
            .instances
            .iter()
            .filter(|i| i.pattern as usize == id)
            .flat_map(|i| &i.parts)
            .map(|p| (p.last_event - p.first_event + 1) as u64)
            .sum()
    };
    assert_eq!(covered(0), first.events_covered);
    assert!(covered(0) * 2 > a.events, "{} of {} events", covered(0), a.events);
    for p in list.iter().filter(|p| p.occurrences == 1) {
        assert!(
            p.events_covered * 100 < a.events,
            "pattern {} covers {} events",
            p.id,
            p.events_covered
        );
    }
    for r in 0..trace.ranks.len() as u32 {
        steps_support::assert_first_pattern_parts(&a, r, first.occurrences, "openfoam-cavity-8");
    }
}
