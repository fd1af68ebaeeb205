//! Phases of real application runs against the application's own log (tests/data/apps,
//! docs/corpus.md): HPCC marks "Begin/End of X section" in its output, dated through the file's
//! close times on DUMPI's clock (`expected/sections.tsv`); the LAMMPS run with three stages logs
//! their steps, dated the same way (`expected/stages.tsv`).

use std::path::PathBuf;
use tracelogic_analysis::patterns::{analyse_events, rank_events, PatternAnalysis, PatternOptions};
use tracelogic_analysis::phases::{detect_phases, PhaseAnalysis};
use tracelogic_formats::fs::load_paths;
use tracelogic_formats::read_trace;
use tracelogic_model::{match_messages, Time};

fn app(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/apps")
        .join(name)
}

/// `(name, begin, end)` in ns since the trace's first event, from a `.tsv` of the corpus
/// (columns: name, [kind, first step, last step,] begin_s, end_s, …).
fn dated(path: PathBuf, begin_col: usize) -> Vec<(String, Time, Time)> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("section") && !l.starts_with("stage"))
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let s = |i: usize| (f[i].parse::<f64>().unwrap() * 1e9).round() as Time;
            (f[0].to_owned(), s(begin_col), s(begin_col + 1))
        })
        .collect()
}

/// Phases and the trace's first timestamp.
fn phases(name: &str) -> (PhaseAnalysis, Time, Time) {
    phases_at(app(name))
}

/// Phases of the run in `dir` and the trace's first and last timestamps.
fn phases_at(dir: PathBuf) -> (PhaseAnalysis, Time, Time) {
    let (p, _, span) = phases_and_patterns_at(dir);
    (p, span.0, span.1)
}

/// Phases of the run in `dir`, the pattern analysis they come from, and the trace's span.
fn phases_and_patterns_at(dir: PathBuf) -> (PhaseAnalysis, PatternAnalysis, (Time, Time)) {
    let trace = read_trace(load_paths(&[dir]).unwrap()).unwrap();
    let matching = match_messages(&trace);
    let events = rank_events(&trace, false);
    let a = analyse_events(&trace, &matching, &events, &PatternOptions::default());
    let p = detect_phases(
        &trace,
        &events,
        &a.communication,
        0.0,
        tracelogic_analysis::phases::Outside::Own,
    );
    (p, a, trace.span())
}

/// Distance from `t` (since the trace start) to the nearest phase boundary.
fn nearest(p: &PhaseAnalysis, t0: Time, t: Time) -> Time {
    p.phases
        .iter()
        .flat_map(|ph| [ph.time.0, ph.time.1])
        .map(|b| b.saturating_sub(t0).abs_diff(t))
        .min()
        .unwrap()
}

fn report(name: &str, truth: &[(String, Time, Time)]) -> (PhaseAnalysis, Vec<(String, Time, Time)>, Time) {
    let (p, t0, t1) = phases(name);
    let miss: Vec<(String, Time, Time)> = truth
        .iter()
        .map(|(s, a, b)| (s.clone(), nearest(&p, t0, *a), nearest(&p, t0, *b)))
        .collect();
    if std::env::var("PHASES_DEBUG").is_ok() {
        eprintln!(
            "{name}: {} phases ({} leaves), run {} ns",
            p.phases.len(),
            p.leaves,
            t1 - t0
        );
        for ph in &p.phases {
            eprintln!("  {:>10} {:>10} {}", ph.time.0 - t0, ph.time.1 - t0, ph.summary());
        }
        for m in &miss {
            eprintln!("  {m:?}");
        }
    }
    (p, miss, t1 - t0)
}

/// The six communicating HPCC sections (the others only reduce and broadcast results).
const COMMUNICATING: [&str; 6] = [
    "MPIRandomAccess",
    "MPIRandomAccess_LCG",
    "PTRANS",
    "MPIFFT",
    "LatencyBandwidth",
    "HPL",
];

/// HPCC on 4 and 6 ranks, 16 sections each. Before the merge the thesis' tree gave 73 and 188
/// phases; now at most two per section, and of the 12 dated begins and ends of the
/// communicating sections at least 9 lie within 1 % of the run's duration of a phase boundary
/// (4 ranks: 9, 6 ranks: 11; which are missed and why: docs/phases.md). HPL, the last
/// section, is a phase of its own on both, begin and end.
#[test]
fn hpcc_phase_boundaries_at_the_sections() {
    for run in ["hpcc-4", "hpcc-6"] {
        let truth = dated(app(run).join("expected/sections.tsv"), 1);
        assert_eq!(truth.len(), 17, "16 sections and the summary");
        let (p, miss, duration) = report(run, &truth);
        assert!(
            p.phases.len() <= 32 && p.leaves > p.phases.len(),
            "{run}: {} phases",
            p.phases.len()
        );
        let tolerance = duration / 100;
        let near: usize = miss
            .iter()
            .filter(|m| COMMUNICATING.contains(&m.0.as_str()))
            .map(|m| (m.1 <= tolerance) as usize + (m.2 <= tolerance) as usize)
            .sum();
        assert!(near >= 9, "{run}: {near} of 12 boundaries within 1 %: {miss:?}");
        let hpl = miss.iter().find(|m| m.0 == "HPL").unwrap();
        assert!(hpl.1 <= tolerance && hpl.2 <= tolerance, "{run}: {hpl:?}");
    }
}

/// Where an HPCC run's communication changes, from its log (`expected/sections.tsv`) and what
/// each section calls (`expected/section-calls.tsv`, counted from the tracer's own decoder):
/// the set-up (`MPI_Bcast`/`MPI_Send`/`MPI_Recv` to rank 0) → MPIRandomAccess
/// (`MPI_Isend`/`MPI_Irecv`/`MPI_Testany`); MPIRandomAccess_LCG → PTRANS (`MPI_Sendrecv`,
/// `MPI_Comm_split`, `MPI_Allreduce`); PTRANS → DGEMM and STREAM (collectives only) → MPIFFT
/// (`MPI_Alltoall`) → Star/SingleFFT (collectives only) → LatencyBandwidth (ping-pongs and rings)
/// → HPL (`MPI_Send`/`MPI_Irecv`/`MPI_Iprobe` on the process grid). Not a change:
/// MPIRandomAccess → MPIRandomAccess_LCG (the same calls; between them only a ~1 ms burst of
/// Star/SingleRandomAccess's reductions, 0.1–0.3 % of the run). `(what, time)` in ns since the
/// trace start.
fn hpcc_changes(dir: &std::path::Path) -> Vec<(String, Time)> {
    let truth = dated(dir.join("expected/sections.tsv"), 1);
    let at = |name: &str| truth.iter().find(|t| t.0 == name).unwrap().clone();
    let mut out = Vec::new();
    for (what, name, end) in [
        ("set-up | MPIRandomAccess", "MPIRandomAccess", false),
        ("MPIRandomAccess_LCG | …", "MPIRandomAccess_LCG", true),
        ("… | PTRANS", "PTRANS", false),
        ("PTRANS | DGEMM", "PTRANS", true),
        ("STREAM | MPIFFT", "MPIFFT", false),
        ("MPIFFT | StarFFT", "MPIFFT", true),
        ("SingleFFT | LatencyBandwidth", "LatencyBandwidth", false),
        ("LatencyBandwidth | HPL", "HPL", false),
        ("HPL | end", "HPL", true),
    ] {
        let (_, b, e) = at(name);
        out.push((what.to_owned(), if end { e } else { b }));
    }
    out
}

/// Every boundary where an HPCC run's communication changes ([`hpcc_changes`]) lies within
/// 1 % of the run of a phase boundary (a change closer than that to another, or to the run's
/// start, is met by the same boundary: below the resolution asked of phases). The misses are
/// returned with their distance.
fn hpcc_changes_missed(dir: PathBuf) -> Vec<(String, Time)> {
    let changes = hpcc_changes(&dir);
    let (p, t0, t1) = phases_at(dir.clone());
    let tol = (t1 - t0) / 100;
    if std::env::var("PHASES_DEBUG").is_ok() {
        eprintln!(
            "{}: boundaries {:?}",
            dir.display(),
            p.phases.iter().map(|ph| ph.time.0 - t0).collect::<Vec<_>>()
        );
    }
    changes
        .into_iter()
        .map(|(w, t)| (w, nearest(&p, t0, t)))
        .filter(|m| m.1 > tol)
        .collect()
}

/// HPCC on 6 ranks: every change of communication (above) at a phase boundary within 1 % of
/// the run (before this change 8 of the 9: RandomAccess's begin fell inside a first phase of
/// set-up, RandomAccess and RandomAccess_LCG, whose equal-event windows were mostly the events
/// of occurrences starting in it and running on into the next sections).
#[test]
fn hpcc_phase_boundaries_where_the_communication_changes() {
    let missed = hpcc_changes_missed(app("hpcc-6"));
    assert!(missed.is_empty(), "hpcc-6: {missed:?}");
}

/// The same on hpcc-4 (not met: its set-up is one pattern occurrence, 70 events, before
/// RandomAccess, and one occurrence against 33 is never significant with the occurrences
/// exchangeable; docs/phases.md) and on held-out runs (`HPCC_HELDOUT=DIR[:DIR…]`).
#[test]
#[ignore = "not met on hpcc-4: its set-up is one occurrence (docs/phases.md); held-out runs need HPCC_HELDOUT"]
fn hpcc_phase_boundaries_where_the_communication_changes_4_ranks_and_held_out() {
    let mut dirs = vec![app("hpcc-4")];
    if let Ok(d) = std::env::var("HPCC_HELDOUT") {
        dirs.extend(d.split(':').map(PathBuf::from));
    }
    let missed: Vec<_> = dirs
        .into_iter()
        .map(|d| (d.display().to_string(), hpcc_changes_missed(d)))
        .filter(|m| !m.1.is_empty())
        .collect();
    assert!(missed.is_empty(), "{missed:#?}");
}

/// The stages of a LAMMPS run from its own log and the trace's clock: each `Loop time of L on
/// P procs for S steps` line of `log.lammps` is one stage (a minimisation or a `run`), timed by
/// LAMMPS between two `MPI_Barrier`s (its timer's barrier start and stop) and averaged over the
/// ranks. The first pair of barriers after the previous stage whose exits lie `L` apart on
/// average over the ranks (within 0.1 % of `L` and 20 µs: the log prints six digits, LAMMPS
/// reads its clock right after each barrier; rank 0 alone within 2 % dated held-out rigid-8's
/// stage from a barrier of the input's set-up 36 ms earlier) dates the stage by rank 0's exits: `(steps, begin, end)` in ns since the trace's first event.
fn lammps_stages_from_log(dir: &std::path::Path) -> Vec<(u64, Time, Time)> {
    let log = std::fs::read_to_string(dir.join("log.lammps")).unwrap();
    let loops: Vec<(f64, u64)> = log
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (l.starts_with("Loop time of ") && f.len() > 8).then(|| (f[3].parse().unwrap(), f[8].parse().unwrap()))
        })
        .collect();
    let trace = read_trace(load_paths(&[dir.to_path_buf()]).unwrap()).unwrap();
    let t0 = trace.span().0;
    let barrier = trace.functions.get("MPI_Barrier").expect("MPI_Barrier in the trace");
    // Every rank's barrier exits (LAMMPS's barriers are on MPI_COMM_WORLD: the i-th of every
    // rank is one barrier).
    let exits: Vec<Vec<Time>> = trace
        .ranks
        .iter()
        .map(|r| {
            let calls = &r.calls;
            (0..calls.len())
                .filter(|&c| calls.func[c] == barrier)
                .map(|c| calls.exit(c) - t0)
                .collect()
        })
        .collect();
    let n = exits[0].len();
    assert!(
        exits.iter().all(|e| e.len() == n),
        "{}: ranks differ in barriers",
        dir.display()
    );
    // The loop time LAMMPS prints is the mean over ranks of each rank's time between the two.
    let mean = |i: usize, j: usize| exits.iter().map(|e| e[j].saturating_sub(e[i])).sum::<Time>() / exits.len() as Time;
    let mut from = 0;
    let mut out = Vec::new();
    for (l, steps) in loops {
        let l = (l * 1e9) as Time;
        let pair = (from..n)
            .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
            .find(|&(i, j)| mean(i, j).abs_diff(l) <= l / 1000 + 20_000);
        let (i, j) = pair.unwrap_or_else(|| panic!("{}: no barriers {l} ns apart", dir.display()));
        out.push((steps, exits[0][i], exits[0][j]));
        from = j;
    }
    out
}

/// The stages dated from the log's loop times and the trace's barriers agree with the stages
/// dated by the iotimes shim (expected/stages.tsv: the flush of each stage's first thermo line
/// and of its "Loop time" line): each begins within 1 % of the run of the dated begin and ends
/// before the dated end (the statistics after the loop come first).
#[test]
fn lammps_stages_from_log_and_clock() {
    let dir = app("lammps-melt-phases-8");
    let truth = dated(dir.join("expected/stages.tsv"), 4);
    let stages = lammps_stages_from_log(&dir);
    assert_eq!(stages.iter().map(|s| s.0).collect::<Vec<_>>(), vec![20, 20, 20]);
    let (_, t0, t1) = phases("lammps-melt-phases-8");
    let tol = (t1 - t0) / 100;
    for ((_, b, e), (name, tb, te)) in stages.iter().zip(&truth) {
        assert!(
            b.abs_diff(*tb) <= tol && e <= te && e > b,
            "stage {name}: {b}-{e} against {tb}-{te}"
        );
    }
}

/// LAMMPS inputs of several stages (a minimisation, `run`s; each stage's begin and end from the
/// log's "Loop time" and the trace's clock, above): one phase per stage. Between two stages a
/// phase boundary, from 1 % of the run before the first one's end to 1 % after the next one's
/// begin; inside a stage none (farther than 1 % of the run from its ends). The stages
/// communicate alike; what tells them apart is the program's own barrier between them
/// (docs/phases.md, step 6). The first stage's begin and the last one's end are the main
/// loop's set-up and end (step 5; the set-up of a LAMMPS stage communicates like its loop and
/// is not always cut: lammps-pppm-8's first stage begins 1.25 s after its nearest boundary).
/// lammps-rigid-8 is one stage whose steps change form with the data (a swap sends only when a
/// rigid body is near): none inside it. `LAMMPS_HELDOUT=DIR[:DIR…]` adds held-out runs (each
/// with its log.lammps). A stage shorter than 1 % of the run is below the phases' resolution
/// and not asked for.
#[test]
fn lammps_stages_at_log_boundaries() {
    let mut missed = Vec::new();
    let mut runs: Vec<PathBuf> = ["lammps-melt-phases-8", "lammps-pppm-8", "lammps-rigid-8"]
        .map(app)
        .to_vec();
    if let Ok(d) = std::env::var("LAMMPS_HELDOUT") {
        runs.extend(d.split(':').map(PathBuf::from));
    }
    for dir in runs {
        let run = dir.display().to_string();
        let stages = lammps_stages_from_log(&dir);
        let (p, t0, t1) = phases_at(dir);
        let tol = (t1 - t0) / 100;
        let bounds: Vec<Time> = p.phases.iter().skip(1).map(|ph| ph.time.0.saturating_sub(t0)).collect();
        if std::env::var("PHASES_DEBUG").is_ok() {
            eprintln!("{run}: stages {stages:?}, boundaries {bounds:?}");
        }
        for w in stages.windows(2) {
            let (end, begin) = (w[0].2, w[1].1);
            // A stage lasting less than the phases' resolution (the default `--min-share`, 1 %
            // of the run) cannot be a phase of its own: held-out hugoniostat-6's last `run`
            // (0.74 s of 75 s on a loaded host; its other runs took 28–41 s).
            if w.iter().any(|s| s.2 - s.1 < tol) {
                continue;
            }
            if !bounds.iter().any(|&b| b + tol >= end && b <= begin + tol) {
                missed.push(format!(
                    "{run}: no boundary between stages ending {end} and beginning {begin} ns"
                ));
            }
        }
        for (steps, b, e) in &stages {
            if let Some(x) = bounds.iter().find(|&&x| x > b + tol && x + tol < *e) {
                missed.push(format!("{run}: stage of {steps} steps {b}-{e} ns cut at {x} ns"));
            }
        }
    }
    assert!(missed.is_empty(), "{missed:#?}");
}

/// `(name, time)` of the dated lines of a Quantum ESPRESSO run (`expected/log-times.tsv`, written
/// by tools/record/log-times.py from pw.x's output and the iotimes shim), in ns since the trace's
/// first event.
fn log_times(run: &str) -> Vec<(String, Time)> {
    let text = std::fs::read_to_string(app(run).join("expected/log-times.tsv")).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("name\t"))
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[0].to_owned(), (f[3].parse::<f64>().unwrap() * 1e9).round() as Time)
        })
        .collect()
}

/// Quantum ESPRESSO pw.x, Si SCF on 4 and 8 ranks (8 and 9 SCF iterations, pw.out). Its log dates
/// the SCF: from "iteration #  1" to "convergence has been achieved". The SCF iterations run the
/// same communication (FFTs, Davidson's reductions, ScaLAPACK's 2x2 grid) however many Davidson
/// steps each takes, so one phase must hold the SCF: it ends within 1 % of the run at the
/// convergence line and begins no later than the second iteration's line. On 4 ranks it begins
/// in the set-up (pw.x's initial wavefunctions are diagonalised the same way); on 8 ranks 79 ms
/// into the first iteration (1.9 % of the run: docs/phases.md).
#[test]
fn quantum_espresso_scf_is_one_phase() {
    for run in ["qe-si-4", "qe-si-8"] {
        let marks = log_times(run);
        let mut iterations = marks.iter().filter(|m| m.0 == "iteration").map(|m| m.1);
        let first = iterations.next().unwrap();
        let second = iterations.next().unwrap();
        let converged = marks.iter().find(|m| m.0 == "converged").unwrap().1;
        let (p, t0, t1) = phases(run);
        let duration = t1 - t0;
        let tolerance = duration / 100;
        let mid = (first + converged) / 2;
        let scf = p
            .phases
            .iter()
            .find(|ph| ph.time.0 - t0 <= mid && mid < ph.time.1 - t0)
            .expect("a phase at the SCF's midpoint");
        let (b, e) = (scf.time.0 - t0, scf.time.1 - t0);
        if std::env::var("PHASES_DEBUG").is_ok() {
            eprintln!(
                "{run}: {} phases; SCF {first}..{converged} ns, its phase {b}..{e} ns",
                p.phases.len()
            );
        }
        assert!(
            b <= second,
            "{run}: the SCF phase begins at {b} ns, after iteration 2 ({second})"
        );
        assert!(
            e.abs_diff(converged) <= tolerance,
            "{run}: the SCF phase ends at {e} ns, the log converges at {converged}"
        );
    }
}

/// Every phase is worth reporting (docs/phases.md): it holds at least `MIN_SHARE` (1 %) of the
/// run's time, from the first occurrence's start to the last one's end, or of its events (the
/// ranks' stretches in the phase) — except the run's first and last phase, which may be the set-up or end of the
/// main loop, reported below that share when significant (NPB's verification: 0.1 % of the run).
fn every_phase_worth_reporting(run: &str, p: &PhaseAnalysis) {
    let (a, b) = (p.phases[0].time.0, p.phases.last().unwrap().time.1);
    let share = tracelogic_analysis::phases::MIN_SHARE;
    let n = p.phases.len();
    let span_events = |ph: &tracelogic_analysis::phases::Phase| -> u64 {
        ph.ranks.iter().map(|r| (r.last_event - r.first_event + 1) as u64).sum()
    };
    let total: u64 = p.phases.iter().map(span_events).sum();
    for (k, ph) in p.phases.iter().enumerate().filter(|&(k, _)| k > 0 && k + 1 < n) {
        let time = (ph.time.1 - ph.time.0) as f64 / (b - a) as f64;
        let events = span_events(ph) as f64 / total as f64;
        assert!(
            time >= share || events >= share,
            "{run}: phase {k} holds {time} of the time and {events} of the events"
        );
    }
}

/// How many of the stretches the dated lines `bounds` cut `[0, end)` into last at least
/// `shortest` ns: what a phase list at that resolution can show of the log.
fn dated_stretches(bounds: &[Time], end: Time, shortest: Time) -> usize {
    let mut cuts = vec![0];
    cuts.extend(bounds.iter().copied());
    cuts.push(end);
    cuts.windows(2)
        .filter(|w| w[1].saturating_sub(w[0]) >= shortest)
        .count()
}

/// Quantum ESPRESSO after the SCF: the log dates convergence, "Forces acting on atoms",
/// "Computing stress" and the final timing line. Before phases had to be worth reporting, 8 ranks
/// gave 6 phases in the last 87 ms (some 60 µs long) and 4 ranks 4. Of the stretches those lines
/// cut the tail into (and the trace's end after the last line: `MPI_Finalize`), those lasting 1 %
/// of the run are the last on 4 ranks (92 ms of 2.56 s; the others 7.4, 0.05 and 20 ms), the
/// output after "Computing stress" (54 ms of 4.14 s) and the last on 8 ranks: the phases from
/// the convergence line on (within 1 % of the run) are at most that many, and at least one. The
/// set-up holds no phase shorter than 1 % of the run.
#[test]
fn quantum_espresso_set_up_and_tail_are_readable() {
    for run in ["qe-si-4", "qe-si-8"] {
        let marks = log_times(run);
        let at = |name: &str| marks.iter().find(|m| m.0 == name).unwrap().1;
        let (p, t0, t1) = phases(run);
        every_phase_worth_reporting(run, &p);
        let duration = t1 - t0;
        let converged = at("converged");
        let tail: Vec<Time> = ["forces", "stress", "end"].iter().map(|n| at(n) - converged).collect();
        let dated = dated_stretches(&tail, duration - converged, duration / 100);
        let after: Vec<_> = p
            .phases
            .iter()
            .filter(|ph| ph.time.0 - t0 + duration / 100 >= converged)
            .collect();
        assert!(
            !after.is_empty() && after.len() <= dated.max(1),
            "{run}: {} phases after the convergence line, {dated} dated stretches of 1 %",
            after.len()
        );
        let first = marks.iter().find(|m| m.0 == "iteration").unwrap().1;
        for ph in p.phases.iter().filter(|ph| ph.time.1 - t0 <= first) {
            assert!(
                (ph.time.1 - ph.time.0) * 100 >= duration,
                "{run}: a set-up phase of {} ns",
                ph.time.1 - ph.time.0
            );
        }
    }
}

/// HPCC and LAMMPS: every phase is worth reporting; LAMMPS's phases are no more than the dated
/// stretches of its log lasting 1 % of the run (set-up, the three stages, the pauses between them
/// and the end: 7), where there were 11 before.
#[test]
fn hpcc_and_lammps_phases_are_worth_reporting() {
    for run in ["hpcc-4", "hpcc-6"] {
        let (p, _, _) = phases(run);
        every_phase_worth_reporting(run, &p);
    }
    let truth = dated(app("lammps-melt-phases-8").join("expected/stages.tsv"), 4);
    let (p, t0, t1) = phases("lammps-melt-phases-8");
    every_phase_worth_reporting("lammps-melt-phases-8", &p);
    let bounds: Vec<Time> = truth.iter().flat_map(|t| [t.1, t.2]).collect();
    let dated = dated_stretches(&bounds, t1 - t0, (t1 - t0) / 100);
    assert!(
        p.phases.len() <= dated,
        "{} phases, {dated} dated stretches",
        p.phases.len()
    );
}

/// HPCC's sections grouped by what they communicate: the Star*/Single* sections between two
/// tests only reduce and broadcast results and MPIRandomAccess_LCG communicates as
/// MPIRandomAccess, so they cannot be told apart from their neighbours and are one group with
/// them. `(group, first section, last section)` of expected/sections.tsv.
const GROUPS: [(&str, &str, &str); 7] = [
    ("RandomAccess", "MPIRandomAccess", "SingleRandomAccess_LCG"),
    ("PTRANS", "PTRANS", "PTRANS"),
    ("DGEMM and STREAM", "StarDGEMM", "SingleSTREAM"),
    ("MPIFFT", "MPIFFT", "MPIFFT"),
    ("StarFFT and SingleFFT", "StarFFT", "SingleFFT"),
    ("LatencyBandwidth", "LatencyBandwidth", "LatencyBandwidth"),
    ("HPL", "HPL", "HPL"),
];

/// The section level of an HPCC run against its log, in ns since the trace start: for each
/// group, whether one section of its own begins and ends within `tolerance` of it, and the
/// section boundaries strictly inside LatencyBandwidth (farther than `tolerance` from its ends).
#[allow(clippy::type_complexity)]
fn hpcc_sections(run: &str) -> (Vec<(&'static str, bool)>, usize, Vec<(Time, Time)>, PhaseAnalysis, Time) {
    hpcc_sections_at(run, app(run))
}

/// [`hpcc_sections`] of the hpcc run recorded in `dir` (a trace and `expected/sections.tsv`).
#[allow(clippy::type_complexity)]
fn hpcc_sections_at(
    run: &str,
    dir: PathBuf,
) -> (Vec<(&'static str, bool)>, usize, Vec<(Time, Time)>, PhaseAnalysis, Time) {
    let truth = dated(dir.join("expected/sections.tsv"), 1);
    let at = |name: &str| truth.iter().find(|t| t.0 == name).unwrap();
    let (p, t0, t1) = phases_at(dir);
    let tolerance = (t1 - t0) / 100;
    let secs: Vec<(Time, Time)> = p.sections.iter().map(|s| (s.time.0 - t0, s.time.1 - t0)).collect();
    let mut used = vec![false; secs.len()];
    let own = GROUPS
        .iter()
        .map(|&(g, a, b)| {
            let (begin, end) = (at(a).1, at(b).2);
            let hit = (0..secs.len())
                .find(|&k| !used[k] && secs[k].0.abs_diff(begin) <= tolerance && secs[k].1.abs_diff(end) <= tolerance);
            if let Some(k) = hit {
                used[k] = true;
            }
            (g, hit.is_some())
        })
        .collect();
    let lb = at("LatencyBandwidth");
    let inside = secs
        .iter()
        .skip(1)
        .filter(|s| s.0 > lb.1 + tolerance && s.0 + tolerance < lb.2)
        .count();
    if std::env::var("PHASES_DEBUG").is_ok() {
        eprintln!("{run}: sections {secs:?}, tolerance {tolerance}: {own:?}, {inside} inside LatencyBandwidth");
        for s in &p.sections {
            eprintln!("  {:>12} {:>12} {}", s.time.0 - t0, s.time.1 - t0, s.summary());
        }
    }
    (own, inside, secs, p, tolerance)
}

/// The section level on HPCC (docs/phases.md, "Sections"): 5 and 6 sections where there are
/// 17 and 30 phases, each lasting at least 1 % of the run, each a run of whole phases.
/// LatencyBandwidth begins and ends at section boundaries (within 1 %), and is 4 resp. 3
/// sections, not 10–20 phases: its ping-pongs and its rings are different kinds of
/// communication, in different proportions over its sub-tests (what is left of the goal:
/// `hpcc_one_section_per_test_section`).
#[test]
fn hpcc_sections_are_few_and_long() {
    for (run, most_inside) in [("hpcc-4", 3), ("hpcc-6", 2)] {
        let (_, inside, secs, p, tolerance) = hpcc_sections(run);
        assert!(secs.len() <= 6, "{run}: {} sections", secs.len());
        let run_time = p.phases.last().unwrap().time.1 - p.phases[0].time.0;
        for s in &p.sections {
            assert!((s.time.1 - s.time.0) * 100 >= run_time, "{run}: {s:?}");
            assert!(
                p.phases.iter().any(|ph| ph.start == s.start),
                "{run}: not at a phase boundary"
            );
        }
        let truth = dated(app(run).join("expected/sections.tsv"), 1);
        let lb = truth.iter().find(|t| t.0 == "LatencyBandwidth").unwrap();
        let near = |t: Time| secs.iter().flat_map(|s| [s.0, s.1]).any(|b| b.abs_diff(t) <= tolerance);
        assert!(near(lb.1) && near(lb.2), "{run}: LatencyBandwidth's ends: {secs:?}");
        assert!(
            inside <= most_inside,
            "{run}: {inside} boundaries inside LatencyBandwidth"
        );
    }
}

/// The goal on HPCC, not met yet (docs/phases.md, "Still not right"): one section
/// of its own per group of test sections that communicate differently, both ends within 1 % of
/// the run, and LatencyBandwidth one section.
#[test]
#[ignore = "not met: LatencyBandwidth is 3-4 sections, the start of hpcc-4 one (docs/phases.md)"]
fn hpcc_one_section_per_test_section() {
    for run in ["hpcc-4", "hpcc-6"] {
        let (own, inside, ..) = hpcc_sections(run);
        assert!(own.iter().all(|g| g.1), "{run}: {own:?}");
        assert_eq!(inside, 0, "{run}: LatencyBandwidth is more than one section");
    }
}

/// The same goal on hpcc runs held out of the corpus (docs/phases.md, "Held out"): process grids
/// the corpus lacks (2x4 on 8 ranks, 3x3 on 9), recorded by tools/record/hpcc-otf2.sh and dated
/// by tools/record/hpcc-sections.py, kept outside the repository (their packed traces are
/// 2.5–2.7 MB). `HPCC_HELDOUT=DIR[:DIR…]` names the run folders. Not met (docs/phases.md).
#[test]
#[ignore = "needs HPCC_HELDOUT; not met: docs/phases.md, Held out"]
fn hpcc_held_out_one_section_per_test_section() {
    let dirs = std::env::var("HPCC_HELDOUT").expect("HPCC_HELDOUT=DIR[:DIR…]");
    for dir in dirs.split(':') {
        let (own, inside, ..) = hpcc_sections_at(dir, PathBuf::from(dir));
        assert!(own.iter().all(|g| g.1), "{dir}: {own:?}");
        assert_eq!(inside, 0, "{dir}: LatencyBandwidth is more than one section");
    }
}

/// A number from NPB's own report in a run's `stdout.txt` (`Time in seconds =   10.34`).
fn npb_report(run: &str, key: &str) -> f64 {
    let text = std::fs::read_to_string(app(run).join("stdout.txt")).unwrap();
    let line = text.lines().find(|l| l.trim_start().starts_with(key)).unwrap();
    line.split('=').nth(1).unwrap().trim().parse().unwrap()
}

/// NAS CG class S on 4 ranks (OTF2, held out): its log prints set-up, 15 outer iterations of
/// the same conjugate-gradient loop (plus an untimed one before) and the verification, the 15
/// timed iterations taking 10.34 s ("Time in seconds"). The loop's body was found at two
/// alignments (two patterns, alternating every outer iteration) and the segmentation cut at
/// every outer iteration: 16 phases. Now: at most the log's 4 stretches, the last ending with
/// the run, and one phase (with phases from the communication content the loop, before the verification's own phase) that
/// holds at least three quarters of the timed iterations' time
/// (the first two timed iterations are one glued pattern occurrence with the barrier before
/// them, docs/phases.md). At most as many sections as phases.
#[test]
fn nas_cg_outer_iterations_are_one_phase() {
    let run = "otf2-npb-cg.S.4";
    let (p, t0, t1) = phases(run);
    let timed = (npb_report(run, "Time in seconds") * 1e9) as Time;
    assert!((2..=4).contains(&p.phases.len()), "{} phases", p.phases.len());
    let last = p.phases.last().unwrap();
    assert!(
        t1.saturating_sub(last.time.1) <= (t1 - t0) / 100,
        "the last phase ends with the run"
    );
    let loop_time = p.phases.iter().map(|ph| ph.time.1 - ph.time.0).max().unwrap();
    assert!(
        loop_time >= timed / 4 * 3,
        "longest stretch {loop_time} ns of the timed {timed} ns"
    );
    assert!(!p.sections.is_empty() && p.sections.len() <= p.phases.len());
}

/// NAS MG class S on 16 ranks (OTF2, held out): the log's 4 iterations (V-cycles) run after a
/// set-up that, by MG's source (mg.f), broadcasts the input, runs `zran3`, one untimed
/// V-cycle and `zran3` again. The coarsest levels exchange single messages between pairs of
/// ranks; 16 of them (8 patterns of 2 ranks, 8 ms in all) start inside the one occurrence that
/// holds the four timed V-cycles and were a phase of their own (7 phases): a phase now holds
/// more than pair exchanges, and the list is at most 6 (docs/phases.md).
#[test]
fn nas_mg_coarse_exchanges_inside_the_v_cycles_are_no_phase() {
    let (p, a, _) = phases_and_patterns_at(app("otf2-npb-mg.S.16"));
    assert!(p.phases.len() <= 6, "{} phases", p.phases.len());
    for (k, ph) in p.phases.iter().enumerate() {
        let wide = ph
            .patterns
            .iter()
            .any(|(pat, _)| pat.is_none_or(|q| a.communication.patterns[q].ranks.len() > 2));
        assert!(wide, "phase {k} holds pair exchanges only: {:?}", ph.patterns);
    }
    assert!(p.sections.len() <= p.phases.len());
}

/// Each rank's first event of every phase after the first, as a share of the rank's events:
/// where in the program's own progress (its calls, not the clock) each boundary lies.
fn boundaries_in_calls(p: &PhaseAnalysis) -> Vec<Vec<f64>> {
    let total: std::collections::BTreeMap<u32, u32> =
        p.phases
            .iter()
            .flat_map(|ph| ph.ranks.iter())
            .fold(Default::default(), |mut m, r| {
                let e = m.entry(r.rank).or_insert(0);
                *e = (*e).max(r.last_event + 1);
                m
            });
    p.phases[1..]
        .iter()
        .map(|ph| {
            ph.ranks
                .iter()
                .map(|r| r.first_event as f64 / total[&r.rank] as f64)
                .collect()
        })
        .collect()
}

/// One LAMMPS program recorded by two tracers (SST DUMPI and the OTF2 tracer; the same input,
/// grid and rank map, tests/data/apps/*/command.txt): the same phases. Before, the phases came
/// from the pattern labels, which timing changes (a step is one whole-step occurrence or forty
/// single messages): DUMPI and OTF2 of the 18-rank run (held out) gave 2 and 6 phases. Truth
/// from the log: set-up, one `run` (its "Loop time"), the end-of-run statistics (reductions).
/// Checked: the same number of phases, three; every boundary at the same point of the program
/// on every rank within 1 % of the rank's calls (the OTF2 runs are 27–49 times slower, so the
/// same call falls at another share of the wall-clock time); the middle phase lasts at least
/// the log's loop time, less 2 % of the run (its two boundaries are each dated within one
/// window, 1 % of the run); the last holds mostly collectives, most of them `MPI_Allreduce`
/// (fewer point-to-point messages than collective calls: on otf2-lammps-melt-12-xzy 5 messages
/// of the last step, sent after the statistics' first reduction began on another rank).
#[test]
fn dumpi_and_otf2_recordings_of_one_lammps_program_give_the_same_phases() {
    for (dumpi, otf2) in [
        ("lammps-melt-8", "otf2-lammps-melt-8"),
        ("lammps-melt-12-xzy", "otf2-lammps-melt-12-xzy"),
    ] {
        let (a, _, _) = phases(dumpi);
        let (b, _, _) = phases(otf2);
        assert_eq!(a.phases.len(), 3, "{dumpi}: {} phases", a.phases.len());
        assert_eq!(b.phases.len(), 3, "{otf2}: {} phases", b.phases.len());
        for (run, p) in [(dumpi, &a), (otf2, &b)] {
            let log = std::fs::read_to_string(app(run).join("log.lammps")).unwrap();
            let loop_s: f64 = log
                .lines()
                .find_map(|l| l.strip_prefix("Loop time of "))
                .and_then(|l| l.split_whitespace().next())
                .unwrap()
                .parse()
                .unwrap();
            let run_phase = &p.phases[1];
            let lasts = (run_phase.time.1 - run_phase.time.0) as f64 / 1e9;
            let whole = (p.phases[2].time.1 - p.phases[0].time.0) as f64 / 1e9;
            assert!(
                lasts >= loop_s - 0.02 * whole,
                "{run}: run phase {lasts} s, loop {loop_s} s"
            );
            let stats = &p.phases[2];
            let calls: u64 = stats.collectives.iter().map(|c| c.1).sum();
            let messages = stats.topology.as_ref().map_or(0, |t| t.messages);
            assert!(messages < calls, "{run}: {}", stats.summary());
            assert_eq!(
                stats.collectives[0].0, "MPI_Allreduce",
                "{run}: {:?}",
                stats.collectives
            );
        }
        for (x, y) in boundaries_in_calls(&a).iter().zip(boundaries_in_calls(&b).iter()) {
            assert_eq!(x.len(), y.len());
            for (f, g) in x.iter().zip(y) {
                assert!((f - g).abs() <= 0.01, "{dumpi} vs {otf2}: {x:?} vs {y:?}");
            }
        }
    }
}

/// The NPB runs of the corpus (BT, SP, LU, CG on 4 to 16 ranks, DUMPI and OTF2): the log prints
/// set-up, the timed iterations ("Time in seconds") and the verification. Checked: 3 phases —
/// set-up, loop, end; on CG also the untimed first `conj_grad` before the barrier that starts
/// the timer, a stage of its own (step 6) — (CG on 8 ranks gave 2 while five of its `conj_grad` calls were one
/// chained pattern instance, docs/patterns.md *An MD loop*), the same whatever the rank count or tracer; the longest phase, before the end,
/// holds the timed iterations (lasts at least 90 % of their time: LU on 8 ranks 95 %, its last
/// steps compute the residual norms with extra reductions and join the end); the end holds the
/// verification's reductions. (Before: 3 to 6 phases for the same program, e.g. LU 6, CG 4 on 4 ranks and 1 on
/// 16.) MG is left out: its set-up holds two collectives-only `zran3` stretches of 15–25 % of
/// the run around an untimed V-cycle, real changes of communication (docs/phases.md).
#[test]
fn npb_runs_give_set_up_loop_and_end() {
    let runs = [
        "otf2-npb-bt.S.4",
        "otf2-npb-bt.S.9",
        "npb-sp.S.4",
        "npb-sp.S.16",
        "otf2-npb-lu.S.4",
        "otf2-npb-lu.S.8",
        "npb-lu.S.16",
        "npb-lu.S.16-rankfile",
        "otf2-npb-cg.S.4",
        "otf2-npb-cg.S.8",
        "npb-cg.S.16",
    ];
    for run in runs {
        let log = ["stdout.txt", "npb-output.txt"]
            .iter()
            .find_map(|f| std::fs::read_to_string(app(run).join(f)).ok())
            .unwrap();
        let timed: f64 = log
            .lines()
            .find(|l| l.trim_start().starts_with("Time in seconds"))
            .and_then(|l| l.split('=').nth(1))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let (p, t0, t1) = phases(run);
        // Stage boundaries (step 6) apart: CG's program runs one `conj_grad` untimed, then a
        // barrier, then the timed iterations, and the barrier cuts there.
        let stages = p
            .phases
            .iter()
            .filter(|ph| ph.boundary.is_some_and(|b| b.stage))
            .count();
        assert!(stages == 0 || run.contains("cg"), "{run}: {stages} stage boundaries");
        let n = p.phases.len();
        assert_eq!(
            n - stages,
            3,
            "{run}: {n} phases, {stages} of them after a stage boundary"
        );
        let dur = |k: usize| p.phases[k].time.1 - p.phases[k].time.0;
        let longest = (0..n).max_by_key(|&k| dur(k)).unwrap();
        assert_eq!(longest, n - 2, "{run}: the loop is the phase before the end");
        let _ = t1 - t0;
        assert!(
            dur(longest) as f64 >= 0.9 * timed * 1e9,
            "{run}: loop phase {} ns, timed {timed} s",
            dur(longest)
        );
        let end = p.phases.last().unwrap();
        assert!(
            end.collectives
                .iter()
                .any(|(f, _)| f == "MPI_Reduce" || f == "MPI_Allreduce"),
            "{run}: end {:?}",
            end.collectives
        );
    }
}

/// CP2K's H2O MD of 5 steps (OTF2, held out of the corpus: docs/phases.md, "Still not right";
/// `CP2K_HELDOUT=DIR[:DIR…]` names run folders of tools/record/cp2k.sh, each with
/// `trace/traces.otf2` and CP2K's log dated on the trace's clock in `expected/log-times.tsv`).
/// Against the log: the six SCF runs and the MD steps are one phase, from no later than the
/// first SCF line to between the last SCF's convergence and the "MD| Step number 5" line (each
/// within 1 % of the run; after every SCF the step's own work follows, the same calls every
/// step, then the end of MD, on 4 ranks 15,425 calls); a phase boundary lies
/// within 1 % of the run of the "MD| Step number 5" line (the timing report after it is its own
/// communication); and every phase is worth reporting — the end of MD on 4 ranks was 8 phases,
/// 5 of them under 1 % of the time and of the occurrences.
#[test]
#[ignore = "needs CP2K_HELDOUT (held-out runs, recorded outside the repository)"]
fn cp2k_held_out_md_steps_one_phase_and_phases_worth_reporting() {
    let dirs = std::env::var("CP2K_HELDOUT").expect("CP2K_HELDOUT=DIR[:DIR…]");
    for dir in dirs.split(':') {
        let dir = PathBuf::from(dir);
        let text = std::fs::read_to_string(dir.join("expected/log-times.tsv")).unwrap();
        let marks: Vec<(String, Time)> = text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.starts_with("name\t"))
            .map(|l| {
                let f: Vec<&str> = l.split('\t').collect();
                (f[0].to_owned(), (f[3].parse::<f64>().unwrap() * 1e9).round() as Time)
            })
            .collect();
        let first_scf = marks.iter().find(|m| m.0 == "scf").unwrap().1;
        let last_converged = marks.iter().rev().find(|m| m.0 == "converged").unwrap().1;
        let last_step = marks.iter().rev().find(|m| m.0 == "step").unwrap().1;
        let (p, t0, t1) = phases_at(dir.join("trace/traces.otf2"));
        let run = dir.display().to_string();
        let tolerance = (t1 - t0) / 100;
        every_phase_worth_reporting(&run, &p);
        let md = p.phases.iter().any(|ph| {
            let end = ph.time.1 - t0;
            ph.time.0 - t0 <= first_scf && end + tolerance >= last_converged && end <= last_step + tolerance
        });
        assert!(md, "{run}: no phase holds the MD steps");
        assert!(
            nearest(&p, t0, last_step) <= tolerance,
            "{run}: no boundary near the last step line"
        );
    }
}

/// The phase holding hpcc's HPL section (dated by hpcc's output, expected/sections.tsv) is
/// named by the process grid HPL declares with its row and column communicators, P x Q as
/// `hpccinf.txt` sets it (its graph is also a Q x P torus: the declaration names it), on both
/// recordings of the 4-rank run (the OTF2 one has no dated sections: HPL is the last) and on 6
/// ranks.
#[test]
fn hpl_phase_is_named_by_its_declared_process_grid() {
    for run in ["hpcc-4", "otf2-hpcc-4", "hpcc-6"] {
        let inf = std::fs::read_to_string(app(run).join("hpccinf.txt")).unwrap();
        let value = |key: &str| -> u32 {
            inf.lines()
                .find(|l| l.split_whitespace().nth(1) == Some(key))
                .and_then(|l| l.split_whitespace().next()?.parse().ok())
                .unwrap()
        };
        let (p, q) = (value("Ps"), value("Qs"));
        let (a, t0, _) = phases(run);
        // HPL is hpcc's last section; where the run has dated sections, its middle is in the phase.
        let phase = a.phases.last().unwrap();
        if let Ok(text) = std::fs::read_to_string(app(run).join("expected/sections.tsv")) {
            let hpl = text.lines().find(|l| l.starts_with("HPL\t")).unwrap();
            let f: Vec<f64> = hpl.split('\t').skip(1).take(2).map(|x| x.parse().unwrap()).collect();
            let middle = ((f[0] + f[1]) / 2.0 * 1e9) as Time;
            assert!(
                phase.time.0.saturating_sub(t0) <= middle,
                "{run}: HPL before the last phase"
            );
        }
        let label = &phase.topology.as_ref().unwrap().label;
        assert_eq!(label, &format!("{p}x{q} process grid (rows and columns)"), "{run}");
    }
}
