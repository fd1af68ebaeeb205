//! Execution phases of generated multi-phase runs (tracelogic_synth), found at their boundaries.

use tracelogic_analysis::patterns::{analyse_events, rank_events, PatternOptions};
use tracelogic_analysis::phases::{detect_phases, Outside, PhaseAnalysis};
use tracelogic_model::{match_messages, Trace};
use tracelogic_synth::{generate_with_truth, CollectiveSpec, Phase, Spec, Style, TopologySpec};

/// The phases of `trace` as the CLI finds them: messages matched, patterns on every rank's
/// events, phases at strength `s0`.
fn phases_of(trace: &Trace, s0: f64) -> PhaseAnalysis {
    let matching = match_messages(trace);
    let events = rank_events(trace, false);
    let a = analyse_events(trace, &matching, &events, &PatternOptions::default());
    detect_phases(trace, &events, &a.communication, s0, Outside::Own)
}

fn phase(topology: &str, style: Style, iterations: u32) -> Phase {
    Phase {
        topology: Some(TopologySpec::parse(topology).unwrap()),
        iterations: Some(iterations),
        style: Some(style),
        ..Default::default()
    }
}

/// [`phase`] with `compute_ns` of computation between its iterations.
fn timed(topology: &str, style: Style, iterations: u32, compute_ns: u64) -> Phase {
    Phase {
        compute_ns: Some(compute_ns),
        ..phase(topology, style, iterations)
    }
}

/// Initialisation (a short ring exchange), a long solve loop (torus exchange), finalisation
/// (a wavefront): three phases at pattern positions 6 and 6 + 80, each phase's time range inside
/// the generated phase's.
#[test]
fn three_generated_phases_at_their_boundaries() {
    let spec = Spec {
        topology: TopologySpec::parse("torus:4x4").unwrap(),
        phases: vec![
            phase("ring:16", Style::Sendrecv, 6),
            phase("torus:4x4", Style::Isend, 80),
            phase("grid:4x4", Style::Wavefront, 10),
        ],
        ..Default::default()
    };
    let (trace, truth) = generate_with_truth(&spec).unwrap();
    let p = phases_of(&trace, 0.0);
    assert_eq!(p.sequence_length, 96);
    let bounds: Vec<(usize, usize)> = p.phases.iter().map(|ph| (ph.start, ph.end)).collect();
    assert_eq!(bounds, vec![(0, 6), (6, 86), (86, 96)]);
    for (ph, t) in p.phases.iter().zip(&truth.phases) {
        assert!(
            ph.extent.0 >= t.start_ns && ph.extent.1 <= t.end_ns,
            "{:?} vs {t:?}",
            ph.extent
        );
        // The phase's own interval begins where its occurrences begin.
        assert_eq!(ph.time.0, ph.extent.0);
        assert_eq!(ph.patterns.len(), 1);
        assert_eq!(ph.ranks.len(), 16);
    }
    // The intervals follow one another: each ends where the next begins.
    for w in p.phases.windows(2) {
        assert_eq!(w[0].time.1, w[1].time.0);
    }
    // The root is cut where the divergence peaks, and its strength clears the BIC threshold.
    let root = &p.tree[0];
    assert!(root.strength.unwrap() > 0.0 && root.djs > root.tau);
}

/// A collective every 10 iterations inside the solve loop is part of the loop's pattern mix, not a
/// phase of its own; a higher s0 never gives more phases.
#[test]
fn periodic_collectives_stay_inside_the_loop() {
    let spec = Spec {
        topology: TopologySpec::parse("torus:4x4").unwrap(),
        iterations: 60,
        collectives: vec!["allreduce:10".parse::<CollectiveSpec>().unwrap()],
        phases: vec![
            phase("ring:16", Style::Sendrecv, 8),
            phase("torus:4x4", Style::Isend, 60),
        ],
        ..Default::default()
    };
    let (trace, _) = generate_with_truth(&spec).unwrap();
    let (p0, p5) = (phases_of(&trace, 0.0), phases_of(&trace, 5.0));
    assert!(p5.phases.len() <= p0.phases.len());
    assert_eq!(p0.phases[0].start, 0);
    assert!(p0.phases.iter().any(|ph| ph.start == 8), "{:?}", p0.phases);
}

/// A run of fewer pattern occurrences than windows whose communication crowds into a few
/// moments (MUMPS's analysis, factorization and solve: 99 occurrences on 4 ranks, most of the
/// 100 windows empty while rank 0 computes): a ring exchange in two bursts of 10 iterations, a
/// torus exchange in two bursts, each pair of bursts 50 ms apart, the second ring burst and the
/// first torus burst in the same window. Three non-empty windows cannot be permuted into
/// significance, so the whole run was one phase; the occurrences decide (docs/phases.md,
/// step 3c): two phases, cut where the ring gives way to the torus, each inside its generated
/// stretch.
#[test]
fn few_occurrences_crowded_into_few_windows_are_cut_where_communication_changes() {
    let spec = Spec {
        topology: TopologySpec::parse("torus:4x4").unwrap(),
        phases: vec![
            timed("ring:16", Style::Sendrecv, 10, 1_000),
            timed("ring:16", Style::Sendrecv, 1, 50_000_000),
            timed("ring:16", Style::Sendrecv, 10, 1_000),
            timed("torus:4x4", Style::Isend, 10, 1_000),
            timed("torus:4x4", Style::Isend, 1, 50_000_000),
            timed("torus:4x4", Style::Isend, 10, 1_000),
        ],
        ..Default::default()
    };
    let (trace, truth) = generate_with_truth(&spec).unwrap();
    let p = phases_of(&trace, 0.0);
    assert!(p.sequence_length < 100, "{} occurrences", p.sequence_length);
    assert_eq!(
        p.phases.len(),
        2,
        "{:?}",
        p.phases.iter().map(|ph| ph.extent).collect::<Vec<_>>()
    );
    let (ring_end, torus_start) = (truth.phases[2].end_ns, truth.phases[3].start_ns);
    assert!(
        p.phases[0].extent.1 <= ring_end,
        "{:?} vs ring end {ring_end}",
        p.phases[0].extent
    );
    assert!(
        p.phases[1].extent.0 >= torus_start,
        "{:?} vs torus start {torus_start}",
        p.phases[1].extent
    );
}

/// A run of more pattern occurrences than windows whose events crowd into a few windows of the
/// same mix at both ends (held-out MUMPS on 8 ranks: 151 occurrences, the analysis's and the
/// solve's collectives in a few windows, the factorization's messages thin between them): a
/// torus exchange in a burst of 50 iterations, a ring exchange of 20 iterations apart from
/// one another, the torus burst again. A random order of the windows that puts one burst's
/// window at an end of the run divides the events as the real change does, so the windows
/// cannot be permuted into significance and the run was one phase; the occurrences decide
/// (docs/phases.md, step 3c): three phases, each inside its generated stretch.
#[test]
fn crowded_windows_of_many_occurrences_are_cut_where_communication_changes() {
    let spec = Spec {
        topology: TopologySpec::parse("torus:4x4").unwrap(),
        phases: vec![
            timed("torus:4x4", Style::Sendrecv, 50, 40_000),
            timed("ring:16", Style::Isend, 20, 5_000_000),
            timed("torus:4x4", Style::Sendrecv, 50, 40_000),
        ],
        ..Default::default()
    };
    let (trace, truth) = generate_with_truth(&spec).unwrap();
    let p = phases_of(&trace, 0.0);
    let extents: Vec<_> = p.phases.iter().map(|ph| ph.extent).collect();
    let generated: Vec<_> = truth.phases.iter().map(|t| (t.start_ns, t.end_ns)).collect();
    assert!(p.sequence_length >= 100, "{} occurrences", p.sequence_length);
    assert_eq!(p.phases.len(), 3, "{extents:?} vs generated {generated:?}");
    for (ph, t) in p.phases.iter().zip(&truth.phases) {
        assert!(
            ph.extent.0 >= t.start_ns && ph.extent.1 <= t.end_ns,
            "{extents:?} vs generated {generated:?}"
        );
    }
}

/// A master–worker run (2 masters, 8 workers, random numbering): the phase names its masters
/// (the generator's nodes 0 and 1, whatever their ranks) and measures imbalance among the
/// workers only, the masters left out and never late.
#[test]
fn a_master_worker_phase_measures_imbalance_among_its_workers() {
    let spec = Spec {
        topology: TopologySpec::parse("master-worker:2x10").unwrap(),
        numbering: tracelogic_synth::Numbering::Random,
        seed: 4,
        iterations: 30,
        compute_ns: 200_000,
        imbalance: 0.5,
        ..Spec::default()
    };
    let (trace, truth) = generate_with_truth(&spec).unwrap();
    let mut masters: Vec<u32> = (0..10u32).filter(|&r| truth.node_of_rank[r as usize] < 2).collect();
    masters.sort_unstable();
    let p = phases_of(&trace, 0.0);
    let loop_phase = p.phases.iter().max_by_key(|ph| ph.end - ph.start).unwrap();
    let t = loop_phase.topology.as_ref().expect("described");
    assert_eq!(t.label, "10-node master-worker (2 masters, 8 workers)");
    assert_eq!(t.masters, masters);
    let im = loop_phase.imbalance.as_ref().expect("measured");
    assert_eq!(im.left_out, masters);
    assert!(im.late.iter().all(|r| !masters.contains(r)), "{im:?}");
}

/// A loop whose exchanges change the MPI function that posts them and nothing else (GROMACS's
/// halo pulses: an `MPI_Sendrecv` becomes a lone `MPI_Send` and `MPI_Recv` to the same peers
/// where one side has nothing to send, more often under dynamic load balancing): a ring
/// set-up, 60 torus iterations of `MPI_Sendrecv`, 60 of blocking sends and receives to the same
/// neighbours. The phases may tell the two styles apart; the sections are the program's: the
/// set-up, then the loop as one section from its first iteration to the end.
#[test]
fn a_loop_changing_only_its_send_functions_is_one_section() {
    let spec = Spec {
        topology: TopologySpec::parse("torus:4x4").unwrap(),
        phases: vec![
            phase("ring:16", Style::Sendrecv, 8),
            phase("torus:4x4", Style::Sendrecv, 60),
            phase("torus:4x4", Style::Blocking, 60),
        ],
        ..Default::default()
    };
    let (trace, truth) = generate_with_truth(&spec).unwrap();
    let p = phases_of(&trace, 0.0);
    let sections: Vec<_> = p.sections.iter().map(|s| s.time).collect();
    let phases: Vec<_> = p.phases.iter().map(|ph| ph.extent).collect();
    assert_eq!(sections.len(), 2, "sections {sections:?}, phases {phases:?}");
    assert!(
        sections[1].0 >= truth.phases[0].end_ns && sections[1].0 <= truth.phases[1].start_ns + 1_000_000,
        "loop section {:?} vs generated loop start {}",
        sections[1],
        truth.phases[1].start_ns
    );
    assert!(p.phases.len() >= 2, "{phases:?}");
}

/// A loop whose work drifts: every step a torus exchange by `MPI_Sendrecv`, and a rebuild (the
/// same neighbours by `MPI_Isend`, as a LAMMPS step that rebuilds its neighbour lists exchanges
/// atoms and borders) every third step for the first 40 rebuilds, then every ninth for 40 more
/// (held-out LAMMPS `obstacle` rebuilds twice as often in its first 500 of 2,500 steps while
/// its box deforms). The windows' mixes differ significantly between the two stretches, but
/// both do the same things at other rates: one phase (docs/phases.md, step 3e).
#[test]
fn a_loop_changing_only_its_rates_is_one_phase() {
    let mut phases = Vec::new();
    for (steps, rebuilds) in [(2, 40), (8, 40)] {
        for _ in 0..rebuilds {
            phases.push(timed("torus:4x4", Style::Sendrecv, steps, 200_000));
            phases.push(timed("torus:4x4", Style::Isend, 1, 200_000));
        }
    }
    let spec = Spec {
        topology: TopologySpec::parse("torus:4x4").unwrap(),
        phases,
        ..Default::default()
    };
    let (trace, _) = generate_with_truth(&spec).unwrap();
    let p = phases_of(&trace, 0.0);
    let extents: Vec<_> = p.phases.iter().map(|ph| ph.extent).collect();
    // The change lies a quarter into the run; only the loop's own start and end may be cut.
    let (t0, t1) = trace.span();
    let inside = |t: u64| t > t0 + (t1 - t0) / 20 && t + (t1 - t0) / 20 < t1;
    assert!(p.phases.iter().skip(1).all(|ph| !inside(ph.time.0)), "{extents:?}");
}
