//! A molecular-dynamics loop nobody tuned the patterns for: GROMACS `gmx_mpi mdrun` on a water
//! box, 12 ranks (a 3x2x2 domain grid, PME on the same ranks), 40 MD steps
//! (`tests/data/apps/gromacs-water-12`, Debian's unmodified GROMACS 2022.5).
//!
//! Truth is the application's own account, `md.log`: `nsteps = 40` (steps 0 to 40, so 41
//! force evaluations, each with its PME FFT), `nstcalcenergy = 10` (energies reduced on steps
//! 0, 10, 20, 30, 40). Each step's PME transposes are four `MPI_Alltoall` on every rank; the
//! energy reduction is one `MPI_Allreduce`.
//!
//! `docs/patterns.md`, *An MD loop*: the first communication pattern used to be ONE occurrence
//! of 63 % of the events, 28 consecutive steps on every rank glued into one instance; one test
//! checks the facts of the trace that diagnosis rests on, the other what a user expects.

use std::path::PathBuf;
use tracelogic_analysis::patterns::{analyse_events, rank_events, Events, PatternOptions};
use tracelogic_formats::fs::load_paths;
use tracelogic_formats::read_trace;
use tracelogic_model::{match_messages, Trace};

mod steps_support;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/apps/gromacs-water-12")
}

/// The integer after `key =` in md.log's parameter list.
fn logged(key: &str) -> usize {
    let log = std::fs::read_to_string(dir().join("md.log")).unwrap();
    log.lines()
        .find_map(|l| {
            let (k, v) = l.trim().split_once('=')?;
            (k.trim() == key).then(|| v.trim().parse().ok())?
        })
        .unwrap_or_else(|| panic!("no {key} in md.log"))
}

fn load() -> (Trace, Events) {
    let trace = read_trace(load_paths(&[dir().join("dumpi.tar.zst")]).unwrap()).unwrap();
    let events = rank_events(&trace, false);
    (trace, events)
}

/// Per rank, the MD steps read off the events alone: the first event of every group of four
/// consecutive `MPI_Alltoall` (one step's transposes), and the steps followed by an
/// `MPI_Allreduce` before the next step (the final reductions after the loop count for the last
/// step, which reduces energies anyway).
fn steps(events: &Events, rank: usize) -> (Vec<usize>, Vec<usize>) {
    let names: Vec<&str> = events.ranks[rank]
        .symbols
        .iter()
        .map(|&s| events.names[s as usize].as_str())
        .collect();
    let mut groups = Vec::new();
    let mut reductions = Vec::new();
    let mut i = 0;
    while i < names.len() {
        if names[i..].starts_with(&["MPI_Alltoall"; 4]) {
            groups.push(i);
            i += 4;
            continue;
        }
        if names[i] == "MPI_Allreduce" && !groups.is_empty() && reductions.last() != Some(&(groups.len() - 1)) {
            reductions.push(groups.len() - 1);
        }
        i += 1;
    }
    (groups, reductions)
}

/// The facts the diagnosis in docs/patterns.md rests on, from the events and md.log only:
/// every rank runs nsteps + 1 FFTs; the energy reduction follows every nstcalcenergy-th step's
/// transposes; and on some ranks the steps do not all have the same number of events (the
/// point-to-point exchanges of a step change with the atoms), so the 10-step period cannot
/// repeat exactly on every rank.
#[test]
fn gromacs_steps_energy_period_and_varying_steps_in_the_trace() {
    let nsteps = logged("nsteps");
    let nstcalcenergy = logged("nstcalcenergy");
    let (_trace, events) = load();
    let mut varying = Vec::new();
    for r in 0..events.ranks.len() {
        let (groups, reductions) = steps(&events, r);
        assert_eq!(groups.len(), nsteps + 1, "rank {r}: FFTs");
        let expected: Vec<usize> = (0..=nsteps).step_by(nstcalcenergy).collect();
        assert_eq!(reductions, expected, "rank {r}: energy steps");
        // Events from one step's transposes to the next's, steps 1 to nsteps - 1 without an
        // energy reduction (step 0 follows the set-up, the last one the loop's end).
        let lengths: std::collections::BTreeSet<usize> = (1..nsteps - 1)
            .filter(|k| !reductions.contains(k))
            .map(|k| groups[k + 1] - groups[k])
            .collect();
        if lengths.len() > 1 {
            varying.push(r);
        }
    }
    // Plain steps all alike on most ranks, not on the others.
    assert!(
        !varying.is_empty() && 2 * varying.len() < events.ranks.len(),
        "{varying:?}"
    );
}

/// Steps per instance part: the MD steps (first `MPI_Alltoall` of a step's four) inside each
/// instance's part, per rank.
fn steps_per_part(a: &tracelogic_analysis::patterns::PatternAnalysis, events: &Events) -> Vec<(u32, u32, usize)> {
    let groups: Vec<Vec<usize>> = (0..events.ranks.len()).map(|r| steps(events, r).0).collect();
    let mut out = Vec::new();
    for inst in &a.communication.instances {
        for p in &inst.parts {
            let inside = groups[p.rank as usize]
                .iter()
                .filter(|&&g| g >= p.first_event as usize && g <= p.last_event as usize)
                .count();
            out.push((inst.pattern, p.rank, inside));
        }
    }
    out
}

/// An instance never spans more than one period of the loop on any rank (md.log's
/// `nstcalcenergy` steps; in fact one step), and the default pattern is the step on every rank,
/// seen at most once per step of md.log. Before chained instances were split at the loop's
/// iterations (docs/patterns.md, *An MD loop*) one instance held 28 steps on every rank.
#[test]
fn gromacs_no_instance_holds_more_than_one_energy_period() {
    let nsteps = logged("nsteps");
    let nstcalcenergy = logged("nstcalcenergy");
    let (trace, events) = load();
    let matching = match_messages(&trace);
    let a = analyse_events(&trace, &matching, &events, &PatternOptions::default());
    for (pattern, rank, inside) in steps_per_part(&a, &events) {
        assert!(
            inside <= nstcalcenergy,
            "pattern {pattern} on rank {rank}: {inside} steps in one occurrence"
        );
    }
    let first = &a.communication_patterns[0];
    assert_eq!(first.ranks.len(), trace.ranks.len(), "default pattern on every rank");
    assert!(first.occurrences <= nsteps + 1, "{} occurrences", first.occurrences);
    // Each occurrence of the default pattern holds exactly one step's transposes on each rank.
    for (pattern, rank, inside) in steps_per_part(&a, &events) {
        if pattern == 0 {
            assert_eq!(inside, 1, "rank {rank}");
        }
    }
}

/// The default pattern is the MD step (nsteps + 1 ± 2 occurrences) or the energy period
/// (nsteps / nstcalcenergy ± 1), on every rank, and no instance of any pattern holds more than
/// one energy period of steps on any rank. Today 39 of the 41 steps: a step lacking messages on
/// four ranks is folded with the others (docs/patterns.md, *An MD loop*); step 0, whose
/// exchanges run in another order, and the last step stay apart.
#[test]
fn gromacs_md_step_as_often_as_md_log_says() {
    let nsteps = logged("nsteps");
    let nstcalcenergy = logged("nstcalcenergy");
    let (trace, events) = load();
    let matching = match_messages(&trace);
    let a = analyse_events(&trace, &matching, &events, &PatternOptions::default());
    let first = &a.communication_patterns[0];
    assert_eq!(first.ranks.len(), trace.ranks.len(), "default pattern on every rank");
    let n = first.occurrences;
    let per_step = n.abs_diff(nsteps + 1) <= 2;
    let per_period = n.abs_diff(nsteps / nstcalcenergy) <= 1;
    assert!(
        per_step || per_period,
        "default pattern: {n} occurrences, md.log: {nsteps} steps"
    );
    for (pattern, rank, inside) in steps_per_part(&a, &events) {
        assert!(
            inside <= nstcalcenergy,
            "pattern {pattern} on rank {rank}: {inside} steps in one occurrence"
        );
    }
}

/// Held-out GROMACS runs (`GROMACS_HELDOUT=DIR[:DIR…]`, recorded outside the repository by
/// `tools/record/heldout.sh`, each with its `dumpi.tar.zst` and `md.log`): the default pattern
/// is the MD step on every rank, nsteps + 1 ± 2 times (md.log), and each of its occurrences
/// holds exactly one step's transposes on each rank (the four `MPI_Alltoall`, read off the
/// events). On 12/100, 12/200, 16/150, 12/200 and 8/120 with load balancing, 18/100 with
/// balancing turned on by GROMACS (docs/patterns.md, *Loop iterations that differ*).
#[test]
#[ignore = "needs GROMACS_HELDOUT (held-out runs, recorded outside the repository)"]
fn gromacs_heldout_md_step_as_often_as_md_log_says() {
    let dirs = std::env::var("GROMACS_HELDOUT").expect("GROMACS_HELDOUT=DIR[:DIR…]");
    let mut failed = Vec::new();
    for d in dirs.split(':').filter(|d| !d.is_empty()) {
        let d = PathBuf::from(d);
        let log = std::fs::read_to_string(d.join("md.log")).unwrap();
        let nsteps: usize = log
            .lines()
            .find_map(|l| {
                let (k, v) = l.trim().split_once('=')?;
                (k.trim() == "nsteps").then(|| v.trim().parse().ok())?
            })
            .expect("nsteps in md.log");
        let trace = read_trace(load_paths(&[d.join("dumpi.tar.zst")]).unwrap()).unwrap();
        let events = rank_events(&trace, false);
        let matching = match_messages(&trace);
        let a = analyse_events(&trace, &matching, &events, &PatternOptions::default());
        let first = &a.communication_patterns[0];
        let multi = steps_per_part(&a, &events)
            .into_iter()
            .filter(|&(p, _, inside)| p == 0 && inside != 1)
            .count();
        let n = first.occurrences;
        println!(
            "{}: {n} × {} ranks, md.log {} steps, {multi} parts without one step",
            d.display(),
            first.ranks.len(),
            nsteps + 1
        );
        if first.ranks.len() != trace.ranks.len() || n.abs_diff(nsteps + 1) > 2 || multi > 0 {
            failed.push(d.display().to_string());
        }
    }
    assert!(failed.is_empty(), "{failed:?}");
}

/// A generated MD loop, independent of GROMACS: a step `S` (with inner exchange loops) run in
/// periods of `k` steps, the first step of each period a variant (an extra reduction first, as
/// a neighbour-search or energy step), and the step's form changing every few periods (ranks
/// whose messages change with the atoms). Brute force from the generator: the step starts are
/// known, so every occurrence of the rank's parse must hold at most one period (`k` step
/// starts), and the plain steps must be taken as steps. Fails today (first failing plan:
/// `k = 4`, forms `1 1 1 1 1 0 0 2 2 2 2 2`, an occurrence of 7 steps): a general-form
/// occurrence reaches over several periods, as on GROMACS's held-out runs (docs/patterns.md,
/// end of *Time steps matched across ranks*).
#[test]
#[ignore = "the parse lets a general-form occurrence hold several MD periods; docs/patterns.md, Time steps matched"]
fn generated_md_loop_parse_holds_at_most_one_period() {
    use tracelogic_analysis::patterns::{detect, parse_occurrences};
    // Exchanges with two neighbours (runs of two), transposes, and a third neighbour.
    let form_a: Vec<u32> = vec![1, 2, 1, 2, 3, 4, 5, 5, 5, 5, 1, 2, 6, 7];
    let form_b: Vec<u32> = vec![1, 2, 3, 4, 5, 5, 5, 5, 1, 2, 6, 7];
    let reduction = 9;
    let form_c: Vec<u32> = vec![1, 2, 1, 2, 3, 4, 5, 5, 5, 5, 6, 7];
    // Plans of forms per period: runs of 1 to 3 periods of one form, from a fixed generator.
    let mut state = 12345u64;
    let mut next = |n: u64| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) % n
    };
    let mut plans: Vec<Vec<u8>> = Vec::new();
    for _ in 0..200 {
        let mut plan = Vec::new();
        while plan.len() < 12 {
            let f = next(3) as u8;
            for _ in 0..=next(3) {
                plan.push(f);
            }
        }
        plans.push(plan);
    }
    for k in [4usize, 10] {
        for plan in &plans {
            let plan = plan.as_slice();
            let mut seq: Vec<u32> = vec![20, 21, 22, 20, 21, 22];
            let mut steps: Vec<usize> = Vec::new();
            let mut plain: Vec<(usize, usize)> = Vec::new();
            for &f in plan {
                let form = [&form_a, &form_b, &form_c][f as usize];
                for s in 0..k {
                    steps.push(seq.len());
                    if s == 0 {
                        seq.push(reduction);
                    } else {
                        plain.push((seq.len(), seq.len() + form.len()));
                    }
                    seq.extend_from_slice(form);
                }
            }
            seq.push(23);
            let pats = detect(&seq, 24, None, &Default::default());
            let occ = parse_occurrences(seq.len(), &pats);
            for &(s, e) in &occ {
                let inside = steps.iter().filter(|&&x| x >= s as usize && x < e as usize).count();
                assert!(
                    inside <= k,
                    "k = {k}, plan {plan:?}: occurrence {s}..{e} holds {inside} steps"
                );
            }
            // Each plain step is its own occurrence or inside one of at most one period.
            let taken = plain
                .iter()
                .filter(|&&(s, e)| occ.iter().any(|&(a, b)| a as usize <= s && e <= b as usize))
                .count();
            assert_eq!(taken, plain.len(), "k = {k}, plan {plan:?}: {occ:?}");
        }
    }
}

/// A generated MD-like loop whose steps sometimes *lack* an exchange, independent of GROMACS:
/// six ranks on a ring, each step three exchanges (with the right, the left, and the rank two
/// to the right); on the steps of a fixed plan ranks 0 and 1 skip their exchange with each other
/// (so rank 0 lacks a send and a receive of its step, rank 1 likewise), as GROMACS's ranks skip
/// a neighbour with no atoms to send. Truth from the generator: the default pattern is the step
/// on every rank, once per generated step, its short form exactly as often as the plan skips,
/// and every occurrence holds one step's first event per rank. It holds without
/// `steps::fold_lacking` too (checked by switching the fold off: an earlier stage already folds
/// this simple case, not examined which); the md.log test above is the one the fold makes pass.
#[test]
fn generated_steps_lacking_an_exchange_are_steps_of_the_loop() {
    use tracelogic_analysis::patterns::analyse;
    use tracelogic_model::{P2pDir, NO_CALLPATH};
    let n = 6u32;
    let steps = 30u32;
    let skipped = [5u32, 6, 13, 20, 21, 22, 27];
    let mut t = Trace::new("text", "generated md steps", n);
    // Per rank, the event index where each step starts.
    let mut starts: Vec<Vec<u32>> = vec![Vec::new(); n as usize];
    for r in 0..n {
        let mut events = 0u32;
        for s in 0..steps {
            starts[r as usize].push(events);
            let skip = skipped.contains(&s);
            let base = s as u64 * 10_000;
            let (right, left, far, near) = ((r + 1) % n, (r + n - 1) % n, (r + 2) % n, (r + n - 2) % n);
            // (kind, peer) in order: right exchange, left exchange, far exchange.
            let ops = [
                (P2pDir::Send, right),
                (P2pDir::Recv, left),
                (P2pDir::Send, left),
                (P2pDir::Recv, right),
                (P2pDir::Send, far),
                (P2pDir::Recv, near),
            ];
            for (k, &(dir, peer)) in ops.iter().enumerate() {
                // Ranks 0 and 1 skip their messages to each other on the planned steps.
                if skip && ((r == 0 && peer == 1) || (r == 1 && peer == 0)) {
                    continue;
                }
                let at = base + 100 * k as u64 + 10 * r as u64;
                let name = if dir == P2pDir::Send { "MPI_Send" } else { "MPI_Recv" };
                let c = t.push_call(r, name, at, at + 5, NO_CALLPATH, 0);
                t.push_p2p(r, c, c, dir, peer, 0, 0, 64);
                events += 1;
            }
        }
    }
    let a = analyse(&t, &PatternOptions::default());
    let first = &a.communication_patterns[0];
    assert_eq!(
        first.ranks,
        (0..n).collect::<Vec<u32>>(),
        "default pattern on every rank"
    );
    assert_eq!(
        first.occurrences,
        steps as usize,
        "{:#?}",
        a.communication_patterns.iter().take(3).collect::<Vec<_>>()
    );
    let short = first
        .variants
        .iter()
        .find(|v| v.extra_events < 0)
        .map_or(0, |v| v.occurrences);
    assert_eq!(short, skipped.len(), "short steps");
    for inst in a.communication.instances.iter().filter(|i| i.pattern == 0) {
        for p in &inst.parts {
            let inside = starts[p.rank as usize]
                .iter()
                .filter(|&&s| s >= p.first_event && s <= p.last_event)
                .count();
            assert_eq!(inside, 1, "rank {}: {inside} step starts in one occurrence", p.rank);
        }
    }
}

/// A generated MD loop whose ranks parse at different loop levels, independent of GROMACS:
/// eight ranks on a ring, 150 steps; each step exchanges twice with the right and twice with
/// the left neighbour, once with the rank two to the right, then four `MPI_Alltoall`
/// (transposes); the first step of every 10 adds an energy `MPI_Allreduce` (md.log's
/// `nstcalcenergy`). The step's form changes with the atoms on every rank: in some periods it
/// adds a second exchange two to the right. On ranks 0 and 1 one step of every period lacks
/// their exchange with each other (a neighbour with no atoms to send), a different step each
/// period, so their periods are never exact copies. Truth from the generator, as md.log's for
/// GROMACS (`gromacs_no_instance_holds_more_than_one_energy_period`): the default pattern is on
/// every rank, occurs at most once per step, and no instance of any pattern holds more than one
/// energy period of steps on any rank. Before, the default pattern was 4 occurrences of whole
/// stretches of periods (up to 34 steps on a rank), each in its own form, as on GROMACS's
/// 16-rank run; now 110 occurrences. **Not met yet:** one step per occurrence (one still holds
/// 9 steps on one rank; docs/patterns.md, *Loop iterations that differ*, 6).
#[test]
fn generated_ranks_at_different_loop_levels_give_one_step_pattern() {
    use tracelogic_analysis::patterns::analyse;
    use tracelogic_model::P2pDir;
    let n = 8u32;
    let steps = 150u32;
    let period = 10u32;
    let mut t = Trace::new("text", "generated md loop levels", n);
    let mut starts: Vec<Vec<u32>> = vec![Vec::new(); n as usize];
    for r in 0..n {
        let mut events = 0u32;
        for s in 0..steps {
            starts[r as usize].push(events);
            let (p, in_period) = (s / period, s % period);
            // The step of this period whose exchange between ranks 0 and 1 is skipped.
            let skip = in_period == p % (period - 1) + 1;
            // Periods whose steps exchange twice with the rank two to the right.
            let more = (p * 5 + 1) % 3 == 0;
            let base = s as u64 * 10_000;
            let (right, left, far, near) = ((r + 1) % n, (r + n - 1) % n, (r + 2) % n, (r + n - 2) % n);
            let mut ops = Vec::new();
            for _ in 0..2 {
                ops.extend([(P2pDir::Send, right), (P2pDir::Recv, left)]);
            }
            for _ in 0..2 {
                ops.extend([(P2pDir::Send, left), (P2pDir::Recv, right)]);
            }
            for _ in 0..if more { 2 } else { 1 } {
                ops.extend([(P2pDir::Send, far), (P2pDir::Recv, near)]);
            }
            // Ranks 0 and 1 skip their exchange with each other on the skipped step.
            ops.retain(|&(_, peer)| !(skip && ((r == 0 && peer == 1) || (r == 1 && peer == 0))));
            events += steps_support::push_md_step(&mut t, r, base, &ops, in_period == 0);
        }
    }
    let a = analyse(&t, &PatternOptions::default());
    let first = &a.communication_patterns[0];
    let summary = steps_support::summary(&a);
    assert_eq!(
        first.ranks,
        (0..n).collect::<Vec<u32>>(),
        "default pattern on every rank"
    );
    assert!(first.occurrences <= steps as usize, "{summary:?}");
    let (pattern, rank, inside) = steps_support::most_steps_in_one_part(&a, &starts).unwrap();
    assert!(
        inside <= period as usize,
        "pattern {pattern} on rank {rank}: {inside} steps in one occurrence; {summary:?}"
    );
}

/// A generated MD loop of `steps` steps on eight ranks in a ring, independent of GROMACS, and
/// per rank the event index where each step starts. Each step exchanges with the right, the
/// left and the rank two to the right, then runs four `MPI_Alltoall` (transposes). A step
/// `search(s)` is a neighbour search: one or two more exchanges with the right and the left
/// neighbour (changing from search to search), the exchange two to the right cut to its lone
/// half (half of the ranks only send, the others only receive, a different half each search)
/// and an added `MPI_Allreduce` (GROMACS's 16-rank run does this every 40th step,
/// `gromacs_heldout_md_step_as_often_as_md_log_says`).
fn neighbour_search_loop(steps: u32, search: impl Fn(u32) -> bool) -> (Trace, Vec<Vec<u32>>) {
    use tracelogic_model::P2pDir;
    let n = 8u32;
    let mut t = Trace::new("text", "generated md neighbour search", n);
    let mut starts: Vec<Vec<u32>> = vec![Vec::new(); n as usize];
    for r in 0..n {
        let mut events = 0u32;
        for s in 0..steps {
            starts[r as usize].push(events);
            let search = search(s);
            let k = s / 20 + s % 2;
            let base = s as u64 * 10_000;
            let (right, left, far, near) = ((r + 1) % n, (r + n - 1) % n, (r + 2) % n, (r + n - 2) % n);
            let near_pairs = if search { 2 + (k % 2) } else { 1 };
            let mut ops = Vec::new();
            for _ in 0..near_pairs {
                ops.extend([(P2pDir::Send, right), (P2pDir::Recv, left)]);
                ops.extend([(P2pDir::Send, left), (P2pDir::Recv, right)]);
            }
            if !search {
                ops.extend([(P2pDir::Send, far), (P2pDir::Recv, near)]);
            } else if (r + k) % 4 < 2 {
                // Sends only; the rank two to the right, (r + 2 + k) % 4 >= 2, receives only.
                ops.push((P2pDir::Send, far));
            } else {
                ops.push((P2pDir::Recv, near));
            }
            events += steps_support::push_md_step(&mut t, r, base, &ops, search);
        }
    }
    (t, starts)
}

/// Neighbour searches every 20th step (10, 30, …, [`neighbour_search_loop`]) are steps of the
/// loop. Truth from the generator: the default pattern is on every rank, occurs once per step
/// (120 times), and every occurrence holds exactly one step start on every rank. Without
/// `patterns::between` the searches were messages and single collectives between steps (114
/// occurrences).
#[test]
fn generated_steps_that_lack_and_add_events_are_steps_of_the_loop() {
    use tracelogic_analysis::patterns::analyse;
    let steps = 120u32;
    let (t, starts) = neighbour_search_loop(steps, |s| s % 20 == 10);
    let a = analyse(&t, &PatternOptions::default());
    let first = &a.communication_patterns[0];
    let summary = steps_support::summary(&a);
    assert_eq!(
        first.ranks,
        (0..8).collect::<Vec<u32>>(),
        "default pattern on every rank"
    );
    assert_eq!(first.occurrences, steps as usize, "{summary:?}");
    for inst in a.communication.instances.iter().filter(|i| i.pattern == 0) {
        for p in &inst.parts {
            let s = &starts[p.rank as usize];
            let inside = s.partition_point(|&x| x <= p.last_event) - s.partition_point(|&x| x < p.first_event);
            assert_eq!(
                inside, 1,
                "rank {}: {inside} step starts in one occurrence; {summary:?}",
                p.rank
            );
        }
    }
}

/// Two neighbour searches back to back (steps 10 and 11, 30 and 31, …): the stretch between
/// two plain steps then holds two steps' transposes and must not become one step. Truth from
/// the generator: no occurrence of any pattern holds more than one step start on any rank.
/// Today the two searches stay apart from the step pattern (108 occurrences, the 120 steps
/// less the 12 searches): `patterns::between` does not fold such a stretch even with its
/// collective count switched off (checked by hand; which other condition refuses it was not
/// examined), so this guards the outcome, not that one rule.
#[test]
fn generated_two_searches_in_a_row_are_not_one_step() {
    use tracelogic_analysis::patterns::analyse;
    let (t, starts) = neighbour_search_loop(120, |s| s % 20 == 10 || s % 20 == 11);
    let a = analyse(&t, &PatternOptions::default());
    let summary = steps_support::summary(&a);

    let (pattern, rank, inside) = steps_support::most_steps_in_one_part(&a, &starts).unwrap();
    assert!(
        inside <= 1,
        "pattern {pattern} on rank {rank}: {inside} steps in one occurrence; {summary:?}"
    );
}

/// GROMACS with dynamic load balancing (held-out `gromacs-12-200-dlb`, docs/patterns.md *Loop
/// iterations that differ*, 8), as recorded: the steps of a regime are copies but for an
/// energy step's reduction every 10th; every 40 steps the balancer gathers and broadcasts new
/// cell boundaries, after which some pulses have nothing to send one way, so a rank loses the
/// send or the receive of its far pulse; which ones changes with each regime. Each regime's
/// step is then a loop of its own, and no form holds another. Truth from the generator: the MD
/// step is the default pattern, once per step on every rank (200 ± 5), no occurrence holding
/// two step starts. Today 20 occurrences: here each rank's parse takes an energy step and the
/// 9 after it as one unit and `fold_steps` folds those blocks as the loop's iterations, so the
/// collective cut, tried only where no loop was folded, never runs (on the recording no loop
/// is folded first and the step is found, 200 × 12 ranks).
#[test]
#[ignore = "not built: blocks of steps folded as a loop's iterations are not cut into steps (docs/patterns.md)"]
fn generated_balanced_steps_in_changing_forms_are_one_step_pattern() {
    use tracelogic_model::{CollectiveOp, P2pDir, COMM_WORLD, NO_CALLPATH};
    let (n, steps) = (8u32, 200u32);
    let mut t = Trace::new("text", "generated md load balancing", n);
    let mut starts: Vec<Vec<u32>> = vec![Vec::new(); n as usize];
    for r in 0..n {
        let mut events = 0u32;
        for s in 0..steps {
            starts[r as usize].push(events);
            let (energy, regime) = (s % 10 == 0, s / 40);
            // Regime g leaves the far pulse a -> a + 2 empty where 3 divides a + g.
            let empty = |a: u32| regime > 0 && (a + regime).is_multiple_of(3);
            let (right, left, far, near) = ((r + 1) % n, (r + n - 1) % n, (r + 2) % n, (r + n - 2) % n);
            let base = s as u64 * 10_000;
            // As recorded: the balancer's step gathers and broadcasts the new boundaries, an
            // energy step reduces, both before the step's exchanges.
            let mut collective = |name: &str, op: CollectiveOp, at: u64| {
                let c = t.push_call(r, name, at, at + 5, NO_CALLPATH, 0);
                t.push_collective(r, c, op, COMM_WORLD, 0, 8, 8);
                events += 1;
            };
            if s > 0 && s % 40 == 0 {
                collective("MPI_Gather", CollectiveOp::Gather, base + 10);
                collective("MPI_Bcast", CollectiveOp::Bcast, base + 20);
            }
            if energy {
                collective("MPI_Allreduce", CollectiveOp::Allreduce, base + 30);
            }
            let mut ops = vec![
                (P2pDir::Send, right),
                (P2pDir::Recv, left),
                (P2pDir::Send, left),
                (P2pDir::Recv, right),
            ];
            if !empty(r) {
                ops.push((P2pDir::Send, far));
            }
            if !empty(near) {
                ops.push((P2pDir::Recv, near));
            }
            events += steps_support::push_md_step(&mut t, r, base, &ops, false);
        }
    }
    steps_support::assert_one_step_per_step(&t, n, steps, &starts);
}

/// A step in a new form nearly every time (GROMACS with dynamic load balancing as recorded on
/// 12 ranks, 200 steps: rank 0 ran its step in 23 forms, and the patterns were 187 fragments
/// none covering 1 % of the events; docs/patterns.md *Loop iterations that differ*, 9). Here 12
/// ranks on a ring exchange three pulses each way per step; each pulse's message is left out
/// (nothing to send) at random with probability 1/4, rank by rank and step by step, so two
/// steps in a row are rarely alike; every step ends in four `MPI_Alltoall`, every tenth adds an
/// `MPI_Allreduce`. Truth from the generator: the MD step is the default pattern, over every
/// rank, once per step (200 ± 5), and no occurrence holds two step starts.
#[test]
fn generated_steps_in_a_new_form_nearly_every_time_are_one_step_pattern() {
    use tracelogic_model::P2pDir;
    let (n, steps) = (12u32, 200u32);
    // Whether the pulse of distance `k` sent by rank `a` towards `dir` is empty at step `s`.
    let empty = |s: u32, a: u32, k: u32, dir: u32| {
        let mut x = (s as u64) << 32 | (a as u64) << 16 | (k as u64) << 8 | dir as u64;
        x = x.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        x ^= x >> 29;
        x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        (x >> 40).is_multiple_of(4)
    };
    let mut t = Trace::new("text", "generated md steps in changing forms", n);
    let mut starts: Vec<Vec<u32>> = vec![Vec::new(); n as usize];
    for r in 0..n {
        let mut events = 0u32;
        for s in 0..steps {
            starts[r as usize].push(events);
            let mut ops = Vec::new();
            for k in 1..=3 {
                let (up, down) = ((r + k) % n, (r + n - k) % n);
                if !empty(s, r, k, 0) {
                    ops.push((P2pDir::Send, up));
                }
                if !empty(s, down, k, 0) {
                    ops.push((P2pDir::Recv, down));
                }
                if !empty(s, r, k, 1) {
                    ops.push((P2pDir::Send, down));
                }
                if !empty(s, up, k, 1) {
                    ops.push((P2pDir::Recv, up));
                }
            }
            events += steps_support::push_md_step(&mut t, r, s as u64 * 10_000, &ops, s % 10 == 0);
        }
    }
    steps_support::assert_one_step_per_step(&t, n, steps, &starts);
}

/// Steps lacking the step's collective several in a row (LAMMPS with `neigh_modify delay 5`:
/// no rebuild check, an `MPI_Allreduce`, in the four steps after each neighbour-list rebuild;
/// held-out LAMMPS crack on 8 ranks: 4,587 occurrences for 5,001 steps, 93 of them a rebuild
/// and its four quiet steps; docs/patterns.md, *Loop iterations that differ*, steps lacking
/// collectives). Here 8 ranks on a ring, 300 steps: each step checks (a reduction) then
/// exchanges with both neighbours; every 15 to 40 steps a rebuild adds an exchange of atoms,
/// and the four steps after it do not check. Truth from the generator: the step is the default
/// pattern, over every rank, once per step (300 ± 5), and no occurrence holds two step starts.
#[test]
fn generated_steps_lacking_their_reduction_after_a_rebuild_are_steps() {
    let (t, starts) = rebuild_delay_loop(false);
    steps_support::assert_one_step_per_step(&t, 8, 300, &starts);
}

/// As above with a second reduction per step (a fix's, after the exchange: LAMMPS peptide's
/// SHAKE), skipped in the first step after each rebuild only: that step lacks both reductions
/// and stands alone, the next three lack the check only (held-out LAMMPS peptide on 8 ranks:
/// 270 occurrences for 301 steps, its 26 steps lacking both a pattern of their own; 296 with
/// the single-step rule). Fails today, 289 of 300: both reductions are `MPI_Allreduce`, so
/// after a rebuild the lone step's messages and the next step's messages are two copies of the
/// body less its reductions, taken as a run, and the next step's fix reduction is left alone.
#[test]
#[ignore = "not built: a lone step lacking all collectives before steps lacking one is cut as a run (docs/patterns.md)"]
fn generated_single_steps_lacking_both_reductions_are_steps() {
    let (t, starts) = rebuild_delay_loop(true);
    steps_support::assert_one_step_per_step(&t, 8, 300, &starts);
}

/// 8 ranks on a ring, 300 steps with rebuilds 15 to 40 steps apart (module tests above); with
/// `fix`, each step ends with a second reduction, skipped in the step right after a rebuild.
/// Returns the trace and each rank's step starts.
fn rebuild_delay_loop(fix: bool) -> (Trace, Vec<Vec<u32>>) {
    use tracelogic_model::{CollectiveOp, P2pDir, COMM_WORLD, NO_CALLPATH};
    let (n, steps) = (8u32, 300u32);
    // Rebuilds as a run has them, 15 to 40 steps apart (an exact period would be one unit).
    let mut rebuilds = vec![0u32];
    let mut x = 12345u64;
    while *rebuilds.last().unwrap() < steps {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        rebuilds.push(rebuilds.last().unwrap() + 15 + ((x >> 33) % 26) as u32);
    }
    let mut t = Trace::new("text", "generated md steps with a rebuild delay", n);
    let mut starts: Vec<Vec<u32>> = vec![Vec::new(); n as usize];
    for r in 0..n {
        let mut events = 0u32;
        let (right, left) = ((r + 1) % n, (r + n - 1) % n);
        for s in 0..steps {
            starts[r as usize].push(events);
            let base = s as u64 * 10_000;
            let since = s - rebuilds.iter().copied().filter(|&b| b <= s).max().unwrap_or(0);
            let (rebuild, quiet) = (rebuilds.contains(&s), (1..=4).contains(&since));
            let reduce = |t: &mut Trace, events: &mut u32, at: u64| {
                let c = t.push_call(r, "MPI_Allreduce", at, at + 5, NO_CALLPATH, 0);
                t.push_collective(r, c, CollectiveOp::Allreduce, COMM_WORLD, 0, 4, 4);
                *events += 1;
            };
            if !quiet {
                reduce(&mut t, &mut events, base + 10);
            }
            let mut ops = Vec::new();
            if rebuild {
                ops.extend([
                    (P2pDir::Send, left),
                    (P2pDir::Recv, right),
                    (P2pDir::Send, right),
                    (P2pDir::Recv, left),
                ]);
            }
            ops.extend([
                (P2pDir::Send, right),
                (P2pDir::Recv, left),
                (P2pDir::Send, left),
                (P2pDir::Recv, right),
            ]);
            for (j, &(dir, peer)) in ops.iter().enumerate() {
                let at = base + 100 * (j as u64 + 1) + 10 * r as u64;
                let name = if dir == P2pDir::Send { "MPI_Send" } else { "MPI_Recv" };
                let c = t.push_call(r, name, at, at + 5, NO_CALLPATH, 0);
                t.push_p2p(r, c, c, dir, peer, 0, 0, 64);
            }
            events += ops.len() as u32;
            if fix && since != 1 {
                reduce(&mut t, &mut events, base + 9_000);
            }
        }
    }
    (t, starts)
}

/// Steps whose only collective comes every second or third step (LAMMPS with
/// `neigh_modify every 2`: the neighbour-list check, an `MPI_Allreduce`, every second step;
/// held-out LAMMPS `dreiding` on 4 ranks: 49 occurrences of two steps each for the log's 100).
/// Here 8 ranks on a ring, 200 steps, each step a forward and a reverse halo exchange with
/// both neighbours. Truth from the generator: the step is the default pattern, over every
/// rank, once per step (200 ± 5), and no occurrence holds two step starts.
#[test]
fn generated_steps_checked_every_few_steps_are_steps() {
    use tracelogic_model::P2pDir;
    let (n, steps) = (8u32, 200u32);
    for every in [2, 3] {
        let mut t = Trace::new("text", "generated md steps checked every few steps", n);
        let mut starts: Vec<Vec<u32>> = vec![Vec::new(); n as usize];
        for r in 0..n {
            let (right, left) = ((r + 1) % n, (r + n - 1) % n);
            let ops = [
                (P2pDir::Send, right),
                (P2pDir::Recv, left),
                (P2pDir::Send, left),
                (P2pDir::Recv, right),
                (P2pDir::Send, left),
                (P2pDir::Recv, right),
                (P2pDir::Send, right),
                (P2pDir::Recv, left),
            ];
            let mut events = 0u32;
            for s in 0..steps {
                starts[r as usize].push(events);
                let check = (s % every == every - 1) as u32;
                events += steps_support::push_step_with_reductions(&mut t, r, s as u64 * 10_000, &ops, check);
            }
        }
        steps_support::assert_one_step_per_step(&t, n, steps, &starts);
    }
}

/// The other side of the rule above: a step whose forward and reverse halo exchanges have the
/// same partners in the same order (a 1-D decomposition, LAMMPS `obstacle` on 4 ranks in a
/// line: every step `X Y X Y` and a check) is one step, not two, as its halves do not take the
/// same time: here the force computation, 6 µs, lies between them and 1 µs after. 8 ranks on
/// a ring, 200 steps, no rebuild. Truth from the generator: 200 ± 5 occurrences of the step
/// over every rank, no occurrence holding two step starts.
#[test]
fn generated_steps_with_two_like_halves_are_not_halved() {
    use tracelogic_model::{CollectiveOp, P2pDir, COMM_WORLD, NO_CALLPATH};
    let (n, steps) = (8u32, 200u32);
    let mut t = Trace::new("text", "generated md steps with two like halves", n);
    let mut starts: Vec<Vec<u32>> = vec![Vec::new(); n as usize];
    for r in 0..n {
        let (right, left) = ((r + 1) % n, (r + n - 1) % n);
        let half = [
            (P2pDir::Recv, left),
            (P2pDir::Send, right),
            (P2pDir::Recv, right),
            (P2pDir::Send, left),
        ];
        let mut events = 0u32;
        for s in 0..steps {
            starts[r as usize].push(events);
            let base = s as u64 * 10_000;
            let c = t.push_call(r, "MPI_Allreduce", base, base + 5, NO_CALLPATH, 0);
            t.push_collective(r, c, CollectiveOp::Allreduce, COMM_WORLD, 0, 4, 4);
            for (h, offset) in [(0u64, 100u64), (1, 8_000)] {
                for (j, &(dir, peer)) in half.iter().enumerate() {
                    let at = base + offset + 100 * j as u64 + 10 * r as u64 + h;
                    let name = if dir == P2pDir::Send { "MPI_Send" } else { "MPI_Recv" };
                    let c = t.push_call(r, name, at, at + 5, NO_CALLPATH, 0);
                    t.push_p2p(r, c, c, dir, peer, 0, 0, 64);
                }
            }
            events += 9;
        }
    }
    steps_support::assert_one_step_per_step(&t, n, steps, &starts);
}
