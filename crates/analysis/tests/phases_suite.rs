//! Phases of a benchmark suite: test sections run one after another, each with its own
//! communication (as HPCC runs RandomAccess, PTRANS, STREAM, FFT, latency/bandwidth, HPL).
//!
//! The suite is assembled from independently generated runs (tracelogic_synth, one program per
//! section with its own topology, exchange style, length, collectives, noise and imbalance),
//! concatenated in time on the same ranks, each section opened by a parameter `MPI_Bcast` and
//! closed by a result `MPI_Reduce` (as HPCC's tests do), plus sections of collectives only
//! (STREAM-like). The section boundaries are therefore known; the phases must be the sections:
//! same number, each boundary within 1 % of the run's duration, and each phase's topology the
//! one the identification gives the section's run on its own.

use tracelogic_analysis::matrix::CommMatrix;
use tracelogic_analysis::patterns::{analyse_events, rank_events, PatternOptions};
use tracelogic_analysis::phases::{describe, detect_phases, Outside, PhaseAnalysis};
use tracelogic_analysis::topology::{identify_matrix, TopologyOptions};
use tracelogic_model::{match_messages, CollectiveOp, Selection, Time, Trace, COMM_WORLD, NOT_COMPLETED};
use tracelogic_synth::{generate, CollectiveSpec, Numbering, Spec, Style, TopologySpec};

/// One section of the suite.
enum Section {
    /// A generated run.
    Run(Box<Spec>),
    /// `n` rounds of compute then `MPI_Allreduce` (no point-to-point).
    Collectives(u32),
}

fn run(topology: &str, style: Style, iterations: u32, seed: u64) -> Section {
    Section::Run(Box::new(Spec {
        topology: TopologySpec::parse(topology).unwrap(),
        style,
        iterations,
        seed,
        numbering: Numbering::Random,
        ..Default::default()
    }))
}

/// Append `from` to `into` (same number of ranks) with its times shifted by `shift`.
fn append(into: &mut Trace, from: &Trace, shift: Time) {
    for (r, rt) in from.ranks.iter().enumerate() {
        let r = r as u32;
        let base = into.ranks[r as usize].calls.len() as u32;
        for c in 0..rt.calls.len() {
            into.push_call(
                r,
                from.functions.name(rt.calls.func[c]),
                rt.calls.enter(c) + shift,
                rt.calls.exit(c) + shift,
                tracelogic_model::NO_CALLPATH,
                0,
            );
        }
        let p = &rt.p2p;
        for i in 0..p.len() {
            let comm = &from.comms[p.comm[i] as usize];
            let comm = into.add_comm(&comm.name, comm.members.clone());
            let complete = if p.complete(i) == NOT_COMPLETED {
                NOT_COMPLETED
            } else {
                p.complete(i) + base
            };
            into.push_p2p(
                r,
                p.post[i] + base,
                complete,
                p.dir[i],
                p.peer[i],
                p.tag[i],
                comm,
                p.bytes.at(i),
            );
        }
        let k = &rt.collectives;
        for i in 0..k.len() {
            let comm = &from.comms[k.comm[i] as usize];
            let comm = into.add_comm(&comm.name, comm.members.clone());
            into.push_collective(
                r,
                k.call[i] + base,
                k.op[i],
                comm,
                k.root[i],
                k.bytes_sent[i],
                k.bytes_recv[i],
            );
        }
    }
}

/// Every rank calls the collective `op` at `at` (entry) for `dur` ns.
fn collective_at(t: &mut Trace, op: CollectiveOp, name: &str, at: Time, dur: Time) {
    for r in 0..t.num_ranks() {
        let c = t.push_call(r, name, at + 37 * r as u64, at + dur, tracelogic_model::NO_CALLPATH, 0);
        t.push_collective(r, c, op, COMM_WORLD, 0, 8, 8);
    }
}

/// The suite trace and each section's `(start, end)` time.
fn suite(ranks: u32, sections: &[Section]) -> (Trace, Vec<(Time, Time)>) {
    let mut t = Trace::new("generated", "suite", ranks);
    let mut now: Time = 1_000;
    let mut bounds = Vec::new();
    for s in sections {
        let start = now;
        collective_at(&mut t, CollectiveOp::Bcast, "MPI_Bcast", now, 3_000);
        now += 10_000;
        match s {
            Section::Run(spec) => {
                let part = generate(spec).unwrap();
                assert_eq!(part.num_ranks(), ranks);
                let (a, b) = part.span();
                append(&mut t, &part, now - a);
                now += b - a + 10_000;
            }
            Section::Collectives(n) => {
                for _ in 0..*n {
                    now += 40_000;
                    collective_at(&mut t, CollectiveOp::Allreduce, "MPI_Allreduce", now, 4_000);
                    now += 5_000;
                }
                now += 10_000;
            }
        }
        collective_at(&mut t, CollectiveOp::Reduce, "MPI_Reduce", now, 3_000);
        now += 3_000;
        bounds.push((start, now));
        now += 20_000;
    }
    (t, bounds)
}

fn phases(t: &Trace) -> PhaseAnalysis {
    let matching = match_messages(t);
    let events = rank_events(t, false);
    let a = analyse_events(t, &matching, &events, &PatternOptions::default());
    detect_phases(t, &events, &a.communication, 0.0, Outside::Own)
}

/// The label the identification gives a section's run on its own.
fn own_label(spec: &Spec) -> String {
    let part = generate(spec).unwrap();
    let m = CommMatrix::from_trace(&part, &Selection::default());
    describe::label(&identify_matrix(&m, &TopologyOptions::default())).0
}

fn check(ranks: u32, sections: Vec<Section>) {
    let (trace, bounds) = suite(ranks, &sections);
    let p = phases(&trace);
    let (t0, t1) = trace.span();
    let tolerance = (t1 - t0) / 100;
    let got: Vec<(Time, Time)> = p.phases.iter().map(|ph| ph.time).collect();
    if std::env::var("PHASES_DEBUG").is_ok() {
        eprintln!("{} leaves of the thesis' tree", p.leaves);
        for ph in &p.phases {
            eprintln!(
                "{:?} {:?} {:?} {} {:?}",
                (ph.start, ph.end),
                ph.time,
                ph.boundary,
                ph.summary(),
                &p.sequence[ph.start..ph.end]
            );
        }
    }
    assert_eq!(
        p.phases.len(),
        sections.len(),
        "phases {got:?}\nsections {bounds:?}\n{} leaves",
        p.leaves
    );
    // The top level (docs/phases.md, "Sections") is the same list: each generated section's
    // kind of communication differs from its neighbours' and it lasts more than 1 % of the run.
    let top: Vec<(Time, Time)> = p.sections.iter().map(|s| s.time).collect();
    assert_eq!(top.len(), sections.len(), "sections {top:?}\ngenerated {bounds:?}");
    for (k, (&(c, d), &(a, b))) in top.iter().zip(&bounds).enumerate() {
        assert!(
            c.abs_diff(a) <= tolerance && d.abs_diff(b) <= tolerance,
            "section {k}: {:?} vs generated {:?}",
            (c, d),
            (a, b)
        );
    }
    for (k, (ph, &(a, b))) in p.phases.iter().zip(&bounds).enumerate() {
        assert!(
            ph.time.0.abs_diff(a) <= tolerance && ph.time.1.abs_diff(b) <= tolerance,
            "section {k}: phase {:?} vs section {:?} (tolerance {tolerance} ns)",
            ph.time,
            (a, b)
        );
        // A section is named by its own communication graph: the identification's label of
        // the generated section alone, like the phase.
        let sec = &p.sections[k];
        match &sections[k] {
            Section::Run(spec) => {
                let label = &ph.topology.as_ref().unwrap().label;
                let own = own_label(spec);
                assert_eq!(label, &own, "section {k}");
                assert_eq!(&sec.topology.as_ref().unwrap().label, &own, "section {k}");
                assert!(sec.summary().starts_with(&own), "{}", sec.summary());
            }
            Section::Collectives(n) => {
                assert_eq!(ph.topology.as_ref().unwrap().ranks, 0, "section {k}");
                assert!(
                    ph.summary().starts_with("collectives: MPI_Allreduce"),
                    "{}",
                    ph.summary()
                );
                let allreduce = ph.collectives.iter().find(|c| c.0 == "MPI_Allreduce").unwrap();
                assert_eq!(allreduce.1, *n as u64, "section {k}");
                assert_eq!(sec.topology.as_ref().unwrap().ranks, 0, "section {k}");
                assert!(
                    sec.summary().starts_with("collectives: MPI_Allreduce"),
                    "{}",
                    sec.summary()
                );
            }
        }
    }
}

/// HPCC-like: all-to-all (RandomAccess), 2x4 grid (PTRANS), collectives only (STREAM),
/// hypercube (FFT), ring (latency/bandwidth), torus (HPL), of different lengths.
#[test]
fn hpcc_like_suite_one_phase_per_section() {
    check(
        8,
        vec![
            run("all-to-all:8", Style::Isend, 30, 1),
            run("grid:2x4", Style::Sendrecv, 12, 2),
            Section::Collectives(10),
            run("hypercube:3", Style::Isend, 25, 3),
            run("ring:8", Style::Blocking, 60, 4),
            run("torus:2x4", Style::Isend, 40, 5),
        ],
    );
}

/// The same kind of suite on 16 ranks with imbalance and periodic collectives inside the
/// sections, and two sections of one topology separated by a collectives-only one.
#[test]
fn imbalanced_suite_one_phase_per_section() {
    let with = |topology: &str, style, iterations, seed, every: u32| {
        Section::Run(Box::new(Spec {
            topology: TopologySpec::parse(topology).unwrap(),
            style,
            iterations,
            seed,
            numbering: Numbering::Random,
            imbalance: 0.5,
            collectives: (every > 0)
                .then_some(CollectiveSpec {
                    op: CollectiveOp::Allreduce,
                    every,
                    bytes: 8,
                })
                .into_iter()
                .collect(),
            ..Default::default()
        }))
    };
    check(
        16,
        vec![
            with("torus:4x4", Style::Isend, 50, 11, 0),
            Section::Collectives(6),
            with("torus:4x4", Style::Isend, 20, 12, 0),
            with("all-to-all:16", Style::Isend, 8, 13, 0),
            with("grid:4x4", Style::Wavefront, 15, 14, 0),
            with("ring:16", Style::Sendrecv, 40, 15, 0),
        ],
    );
}
