//! Stages of one loop (docs/phases.md, step 6): a loop phase that stops, synchronises every
//! rank with `MPI_Barrier` and resumes the same loop is two stages of the program.
//!
//! The segmentation cuts where the mix of what is communicated changes, so one program running
//! the same loop twice (LAMMPS's `run 1000` twice with another pair style, or seven
//! minimisations) is one phase: both stages communicate alike. What the program does between
//! them is too short to be a phase (LAMMPS: its statistics, the next input lines broadcast, the
//! next run's set-up, 0.2 % of the run) but it is marked: the ranks synchronise, which the loop
//! itself never does. A barrier outside the loop's step is how programs time a stage; it is
//! the program's own marker of a section, not a threshold on a mix.
//!
//! Rule, in the main loop (the longest phase, as step 5 takes it) and every other phase whose
//! step is the loop's ([`loop_phases`]), each lasting at least two
//! `min_share` of the run's time: its positions holding an `MPI_Barrier` (or `MPI_Ibarrier`)
//! call on any rank, grouped while less than `min_share` of the run's time apart; a cut at the
//! first position of each group beginning at least `min_share` from the phase's ends (nearer,
//! it is the phase's own edge). No cut at all when
//! - a group lasts `min_share` of the run or more and three or more of the gaps between its
//!   barriers hold steps: barriers are the loop's rhythm there (a longer pause without steps
//!   between two stages is still a pause, and one or two short stages chained are stages);
//! - the stages hold fewer than two steps each on average: barriers as frequent as the steps
//!   are the loop's own;
//! - three or more inner stages of two steps or more hold the same number of steps (within a
//!   tenth): a period of the loop (output every N steps, a solver's outer iterations) —
//!   unless every group holds a rooted collective (`MPI_Bcast`, `MPI_Reduce`, `MPI_Gather`,
//!   `MPI_Scatter`) the loop calls nowhere else: then one rank reads or writes for all between
//!   equal stages (a LAMMPS input looping over `run 100` five times broadcasts the next input
//!   lines and reduces the run's statistics for its log), where a solver's outer iterations
//!   exchange among equals (GetDP's Newton iterations: `MPI_Allgather`, `MPI_Allreduce`).
//!
//! A phase's step is its most frequent pattern among the positions that do more than read
//! input ([`step_of`]: positions holding rooted collectives only are left out): LAMMPS ELASTIC
//! broadcasts its input one line at a time between its twelve minimisations (~300 one-call
//! `MPI_Bcast` occurrences a pause, 3,646 in the phase against 588 iterations); with the
//! broadcast taken as the step, no step lay inside a minimisation and 3 of the 12 boundaries
//! were cut. (The pattern holding most events instead moved LAMMPS melt's step to a pattern of
//! several steps an occurrence, and two stage boundaries were lost.)
//!
//! A first (last) cut leaving fewer than two steps before (after) it is dropped: that barrier
//! starts (stops) the loop after its set-up (before its end), which step 5 decides.
//!
//! The same marker places the loop's begin: [`loop_begins_at_barrier`] moves it back to the
//! set-up's last barrier when what follows that barrier is the loop's own work.
//!
//! O(events of the main loop's positions) for the barrier marks, O(positions) for the rest.

use crate::patterns::construct::OUTSIDE;
use tracelogic_model::CollectiveOp;

/// The positions (of the phase sequence, whose occurrences start at `starts` and end by
/// `last_end`) at which the main loop, the longest phase of `bounds`, is cut into stages;
/// `pattern(i)` is position `i`'s pattern, `signed` its events' signatures (a barrier is a
/// collective signature of `MPI_Barrier` or `MPI_Ibarrier`). `min_share` as
/// [`super::PhaseOptions::min_share`] (> 0).
pub(super) fn stage_cuts(
    trace: &tracelogic_model::Trace,
    signed: &super::content::Signed,
    starts: &[tracelogic_model::Time],
    last_end: tracelogic_model::Time,
    pattern: impl Fn(usize) -> u32,
    bounds: &[usize],
    min_share: f64,
) -> Vec<usize> {
    let barrier = collective_signatures(trace, signed, |o| o == CollectiveOp::Barrier);
    if !barrier.contains(&true) || starts.len() < 2 || min_share <= 0.0 {
        return Vec::new();
    }
    let share = ((last_end - starts[0]) as f64 * min_share) as tracelogic_model::Time;
    let holds_barrier = |i: usize| signed.with_ids(i..i + 1).any(|(_, id)| barrier[id as usize]);
    // Rooted collectives: one rank distributes or collects (the program's input and output
    // through its root).
    let rooted = collective_signatures(trace, signed, CollectiveOp::has_root);
    let collectives = |i: usize| -> Vec<u32> {
        signed
            .with_ids(i..i + 1)
            .map(|(_, id)| id)
            .filter(|&id| rooted[id as usize])
            .collect()
    };
    let end_of = |e: usize| if e == starts.len() { last_end } else { starts[e] };
    let input_only = |i: usize| signed.with_ids(i..i + 1).all(|(_, id)| rooted[id as usize]);
    loop_phases(bounds, starts, last_end, share, &pattern, input_only)
        .into_iter()
        .flat_map(|(a, e)| {
            let step = step_of(a..e, &pattern, input_only);
            phase_stages(
                starts,
                end_of(e),
                share,
                a,
                e,
                step,
                &pattern,
                holds_barrier,
                collectives,
            )
        })
        .collect()
}

/// The phases of `bounds` cut into stages, `(first, end)` position: the main loop and every
/// other phase running the same step ([`step_of`], `input_only(i)` whether position `i` only
/// reads input), each lasting at least two
/// `share`. Where the loop's mix changed inside a stage, the stages after the change are in
/// the next phase (held-out LAMMPS `min.box`: the fifth minimisation's neighbour-list rebuilds
/// stop midway, and the next two minimisations' barriers were in that second phase). O(positions).
fn loop_phases(
    bounds: &[usize],
    starts: &[tracelogic_model::Time],
    last_end: tracelogic_model::Time,
    share: tracelogic_model::Time,
    pattern: impl Fn(usize) -> u32,
    input_only: impl Fn(usize) -> bool,
) -> Vec<(usize, usize)> {
    let end_of = |e: usize| if e == starts.len() { last_end } else { starts[e] };
    let Some(k) = main_loop(bounds, starts, last_end) else {
        return Vec::new();
    };
    let Some(step) = step_of(bounds[k]..bounds[k + 1], &pattern, &input_only) else {
        return Vec::new();
    };
    bounds
        .windows(2)
        .map(|w| (w[0], w[1]))
        .filter(|&(a, e)| {
            end_of(e).saturating_sub(starts[a]) >= 2 * share && step_of(a..e, &pattern, &input_only) == Some(step)
        })
        .collect()
}

/// The step of `positions`: their most frequent pattern (ties: the smaller id) among the
/// positions that do more than read input (`input_only(i)`: position `i` holds rooted
/// collectives only, one rank handing out or collecting for all); `None` when no such position
/// is inside a pattern. O(positions + the events `input_only` reads).
fn step_of(
    positions: std::ops::Range<usize>,
    pattern: impl Fn(usize) -> u32,
    input_only: impl Fn(usize) -> bool,
) -> Option<u32> {
    let mut counts: std::collections::BTreeMap<u32, usize> = Default::default();
    for i in positions {
        let p = pattern(i);
        if p != OUTSIDE && !input_only(i) {
            *counts.entry(p).or_default() += 1;
        }
    }
    counts
        .iter()
        .max_by_key(|(&p, &n)| (n, std::cmp::Reverse(p)))
        .map(|(&p, _)| p)
}

/// The main loop's begin moved back to the last barrier of the set-up (the run's first phase)
/// when what follows that barrier reads no input and does what the loop does (docs/phases.md,
/// step 6). Programs start timing their loop at a barrier (LAMMPS each `run`, NPB its
/// iterations): the program's own marker of where its set-up stops. The segmentation places the
/// edge where the mix changes, which can be steps into the loop: LAMMPS pouring particles sends
/// no halo message until they reach a rank's neighbours, and the first 70 ms of the run (5 %)
/// went with the set-up. "Does what the loop does": less than `min_share` of the stretch's
/// events have signatures (or role signatures) the main loop lacks; "reads no input": no rooted
/// collective (`MPI_Bcast`, `MPI_Reduce`…, one rank reading for all). The end is left as
/// steps 2–5 place it: a program's last barrier is often its very end (after the statistics
/// LAMMPS prints), not the loop's; nor where the stretch's work is on other ranks than the
/// loop's ([`super::moved::moved_work`] of `by_rank`'s counts). The boundaries next to a moved one are tested again; the
/// moved one is a stage boundary (kept whatever its test, as step 6's cuts), returned with its
/// test to be a section boundary too.
///
/// O(events of the set-up and of the main loop).
#[allow(clippy::too_many_arguments)]
pub(super) fn loop_begins_at_barrier<M: super::merge::Mixes + ?Sized>(
    trace: &tracelogic_model::Trace,
    signed: &super::content::Signed,
    classes: &M,
    starts: &[tracelogic_model::Time],
    last_end: tracelogic_model::Time,
    by_rank: impl Fn(&[usize]) -> Vec<super::moved::RankCounts>,
    bounds: Vec<usize>,
    tests: Vec<super::merge::BoundaryTest>,
    min_share: f64,
    alpha: f64,
) -> MovedBegin {
    let (mut bounds, mut tests) = (bounds, tests);
    let m = bounds.len().saturating_sub(1);
    if m < 2 || starts.is_empty() {
        return (bounds, tests, None);
    }
    if main_loop(&bounds, starts, last_end) != Some(1) {
        return (bounds, tests, None);
    }
    let (a, e) = (bounds[1], bounds[2]);
    let barrier = collective_signatures(trace, signed, |o| o == CollectiveOp::Barrier);
    let rooted = collective_signatures(trace, signed, CollectiveOp::has_root);
    let Some(b) = (0..a)
        .rev()
        .find(|&i| signed.with_ids(i..i + 1).any(|(_, id)| barrier[id as usize]))
    else {
        return (bounds, tests, None);
    };
    if b + 1 >= a || signed.with_ids(b + 1..a).any(|(_, id)| rooted[id as usize]) {
        return (bounds, tests, None);
    }
    // Less than `min_share` of the stretch's events with signatures the loop lacks (a call made
    // once, as LAMMPS's `fix pour` gathers once at its first step, is not a phase of its own).
    let loop_like = [false, true].into_iter().any(|roles| {
        let counts = if roles {
            signed.role_counts(&[b + 1, a, e])
        } else {
            signed.counts(&[b + 1, a, e])
        };
        let (stretch, main_loop) = (&counts[0], &counts[1]);
        let all: u64 = stretch.iter().sum();
        let own: u64 = stretch
            .iter()
            .zip(main_loop)
            .filter(|(_, &l)| l == 0)
            .map(|(&n, _)| n)
            .sum();
        (own as f64) < min_share * all as f64
    });
    if !loop_like {
        return (bounds, tests, None);
    }
    // Nor where the loop's work is on other ranks than the stretch's (step 3f: the same roles,
    // other ranks; StarPU's stencil on ranks 1-2 before the boundary, 2-3 after).
    if let [stretch, main_loop] = &by_rank(&[b + 1, a, e])[..] {
        if super::moved::moved_work(stretch, main_loop) >= min_share {
            return (bounds, tests, None);
        }
    }
    bounds[1] = b + 1;
    for t in 1..bounds.len().min(3) {
        if t + 1 < bounds.len() {
            tests[t - 1] = classes.test(bounds[t - 1], bounds[t], bounds[t + 1], alpha);
        }
    }
    // Placed by the program's marker, whatever its test: a stage boundary.
    tests[0].stage = true;
    let moved = (b + 1, tests[0]);
    (bounds, tests, Some(moved))
}

/// The main loop: the index of the longest phase of `bounds` in time (ties: the first), the
/// phase steps 5 and 6 work on; `None` without phases.
pub(super) fn main_loop(
    bounds: &[usize],
    starts: &[tracelogic_model::Time],
    last_end: tracelogic_model::Time,
) -> Option<usize> {
    let end_of = |e: usize| if e == starts.len() { last_end } else { starts[e] };
    (0..bounds.len().saturating_sub(1)).max_by_key(|&k| {
        let (a, e) = (bounds[k], bounds[k + 1]);
        (end_of(e).saturating_sub(starts[a]), std::cmp::Reverse(k))
    })
}

/// Per signature id of `signed`, whether it is a collective whose operation (the model's
/// reading of its function's name) is one `is` accepts.
fn collective_signatures(
    trace: &tracelogic_model::Trace,
    signed: &super::content::Signed,
    is: impl Fn(CollectiveOp) -> bool,
) -> Vec<bool> {
    signed
        .signatures()
        .iter()
        .map(|&(kind, func, _)| kind == 2 && CollectiveOp::from_name(trace.functions.name(func)).is_some_and(&is))
        .collect()
}

/// [`loop_begins_at_barrier`]'s boundaries, their tests, and the moved boundary with its test.
pub(super) type MovedBegin = (
    Vec<usize>,
    Vec<super::merge::BoundaryTest>,
    Option<(usize, super::merge::BoundaryTest)>,
);

/// [`stage_cuts`] in one phase `a..e` ending at `end_time` whose step is `step` ([`step_of`]);
/// `pattern(i)` is position `i`'s pattern, `marked(i)` whether it holds a barrier,
/// `collectives(i)` the signature ids of its other collectives.
#[allow(clippy::too_many_arguments)]
fn phase_stages(
    starts: &[tracelogic_model::Time],
    end_time: tracelogic_model::Time,
    share: tracelogic_model::Time,
    a: usize,
    e: usize,
    step: Option<u32>,
    pattern: impl Fn(usize) -> u32,
    marked: impl Fn(usize) -> bool,
    collectives: impl Fn(usize) -> Vec<u32>,
) -> Vec<usize> {
    let Some(step) = step else {
        return Vec::new();
    };
    let marks: Vec<usize> = (a..e).filter(|&i| marked(i)).collect();
    let steps_in = |x: usize, y: usize| (x..y).filter(|&i| pattern(i) == step).count();
    // Groups over every mark, the phase's edges included, so that a rhythm of barriers
    // running through a short phase is seen whole: (first position, last position). Marks
    // with no step between them are one group however far apart: one pause (LAMMPS's barrier
    // ending a `run` and the next `run`'s, 144 ms apart on a loaded host where the program
    // re-reads its input through rank 0 between them).
    let mut groups: Vec<(usize, usize)> = Vec::new();
    for &i in &marks {
        match groups.last_mut() {
            Some(g) if starts[i] - starts[g.1] < share || steps_in(g.1, i) == 0 => g.1 = i,
            _ => groups.push((i, i)),
        }
    }
    // A group lasting `min_share` or more whose barriers come back between steps again and
    // again (three or more of its gaps hold steps): barriers are the loop's rhythm. One without
    // steps is a long pause between stages (LAMMPS re-reading its input through rank 0 for the
    // next `run` of a `jump` loop on a loaded host: 144 ms, 1.1 % of the run); one whose gaps
    // with steps are one or two is short stages one after another (LAMMPS hugoniostat: a
    // minimisation of 0.10 s and a `run 1000` of 0.94 s chained within 1 % of its 98 s).
    let rhythm = |g: &(usize, usize)| {
        let inside: Vec<usize> = marks.iter().copied().filter(|&i| g.0 <= i && i <= g.1).collect();
        let gaps = inside.windows(2).filter(|w| steps_in(w[0], w[1]) > 0).count();
        starts[g.1] - starts[g.0] >= share && gaps >= 3
    };
    if groups.iter().any(rhythm) {
        return Vec::new();
    }
    let all_groups = groups.clone();
    // Groups beginning within `min_share` of the phase's ends are its own edges.
    groups.retain(|g| starts[g.0] - starts[a] >= share && end_time.saturating_sub(starts[g.0]) >= share);
    if groups.is_empty() {
        return Vec::new();
    }
    let mut cuts: Vec<usize> = groups.iter().map(|g| g.0).collect();
    // A first (last) stage of fewer than two steps is the loop's own set-up (end), which
    // step 5 has decided: its barrier is the loop's start (stop), not a stage boundary.
    while cuts.first().is_some_and(|&c| steps_in(a, c) < 2) {
        cuts.remove(0);
    }
    while cuts.last().is_some_and(|&c| steps_in(c, e) < 2) {
        cuts.pop();
    }
    if cuts.is_empty() {
        return Vec::new();
    }
    let edges: Vec<usize> = std::iter::once(a)
        .chain(cuts.iter().copied())
        .chain(std::iter::once(e))
        .collect();
    let steps: Vec<usize> = edges.windows(2).map(|w| steps_in(w[0], w[1])).collect();
    // Rarer than the steps: on average at least two steps a stage (a barrier every step or
    // two, each step longer than `min_share`, is the loop's own).
    if steps.iter().sum::<usize>() < 2 * steps.len() {
        return Vec::new();
    }
    // Whether every cut's group holds a collective that the phase's positions outside every
    // group (the loop's own) never hold: the program does something else between its stages.
    let marked_apart = || {
        let inside = |i: usize| all_groups.iter().any(|g| g.0 <= i && i <= g.1);
        let elsewhere: std::collections::BTreeSet<u32> =
            (a..e).filter(|&i| !inside(i)).flat_map(&collectives).collect();
        cuts.iter().all(|&c| {
            all_groups
                .iter()
                .find(|g| g.0 == c)
                .is_some_and(|g| (g.0..=g.1).flat_map(&collectives).any(|id| !elsewhere.contains(&id)))
        })
    };
    // Inner stages that are loops (two steps or more; a pause between two barrier groups
    // holds a step at most).
    let inner_steps: Vec<usize> = steps[1..steps.len() - 1].iter().copied().filter(|&n| n >= 2).collect();
    if inner_steps.len() >= 3 {
        let (lo, hi) = (inner_steps.iter().min().unwrap(), inner_steps.iter().max().unwrap());
        if (*hi as f64) <= 1.1 * (*lo as f64) && !marked_apart() {
            return Vec::new();
        }
    }
    cuts
}

#[cfg(test)]
mod tests {
    use super::{loop_phases, phase_stages, step_of};

    /// Positions 0..n at one time unit each; `step` the loop's pattern 0, marks pattern 9.
    fn run(n: usize, marks: &[usize], share: u64) -> Vec<usize> {
        let starts: Vec<u64> = (0..n as u64).collect();
        let pattern = |i: usize| if marks.contains(&i) { 9 } else { 0 };
        phase_stages(
            &starts,
            n as u64,
            share,
            0,
            n,
            Some(0),
            pattern,
            |i| marks.contains(&i),
            |_| vec![0],
        )
    }

    #[test]
    fn a_loop_stopped_by_barriers_is_cut_at_each_stop() {
        assert_eq!(run(1000, &[400, 401, 405], 10), vec![400]);
        // Seven stages of different lengths (LAMMPS's seven minimisations).
        assert_eq!(
            run(1000, &[100, 250, 300, 480, 700, 760], 10),
            vec![100, 250, 300, 480, 700, 760]
        );
    }

    #[test]
    fn barriers_at_the_phase_s_edges_or_as_often_as_the_steps_cut_nothing() {
        assert!(run(1000, &[3, 995], 10).is_empty());
        // A barrier every step, each step longer than the share: stages of one step.
        let starts: Vec<u64> = (0..100).map(|i| 10 * i).collect();
        assert!(phase_stages(&starts, 1000, 5, 0, 100, Some(0), |_| 0, |_| true, |_| Vec::new()).is_empty());
    }

    #[test]
    fn a_first_or_last_stage_of_fewer_than_two_steps_is_the_loop_s_set_up_or_end() {
        // Set-up occurrences (pattern 5) before the loop's starting barrier at 40.
        let pattern = |i: usize| {
            if i < 40 {
                5
            } else if i == 40 || i == 500 {
                9
            } else {
                0
            }
        };
        let starts: Vec<u64> = (0..1000).collect();
        assert_eq!(
            phase_stages(
                &starts,
                1000,
                10,
                0,
                1000,
                Some(0),
                pattern,
                |i| i == 40 || i == 500,
                |_| Vec::new()
            ),
            vec![500]
        );
    }

    #[test]
    fn a_rhythm_of_barriers_cuts_nothing() {
        // Barriers closer than the share: one long group.
        let marks: Vec<usize> = (20..980).step_by(5).collect();
        assert!(run(1000, &marks, 10).is_empty());
        // Output every 100 steps: equal inner stages.
        assert!(run(1000, &[100, 200, 300, 400, 500, 600, 700, 800, 900], 10).is_empty());
        // Barriers back between steps three times in one group longer than the share.
        assert!(run(1000, &[0, 6, 12, 18, 500, 501], 10).is_empty());
    }

    #[test]
    fn short_stages_chained_at_the_start_are_no_rhythm() {
        // Two short stages (steps 1–5 and 7–11) whose barriers chain into one group longer than
        // the share (LAMMPS hugoniostat: a minimisation and a short `run` before two long
        // ones): the stage boundary at 500 is still cut.
        assert_eq!(run(1000, &[0, 6, 12, 500, 501], 10), vec![500]);
    }

    #[test]
    fn equal_stages_apart_from_what_the_loop_calls_are_cut() {
        // Five equal stages (a LAMMPS input looping over one `run`): each pause holds the
        // barrier and a broadcast (collective 2) the steps (collective 0) never call.
        let marks = [200, 201, 400, 401, 600, 601, 800, 801];
        let starts: Vec<u64> = (0..1000).collect();
        let pattern = |i: usize| if marks.contains(&i) { 9 } else { 0 };
        let pause = |i: usize| marks.contains(&i);
        let collectives = |i: usize| if pause(i) && i % 2 == 1 { vec![2] } else { vec![0] };
        let cut = |c: &dyn Fn(usize) -> Vec<u32>| {
            phase_stages(&starts, 1000, 10, 0, 1000, Some(0), pattern, |i| marks.contains(&i), c)
        };
        assert_eq!(cut(&collectives), vec![200, 400, 600, 800]);
        // One pause without it: the barriers may be the loop's period, nothing is cut.
        let one_plain = |i: usize| {
            if pause(i) && i % 2 == 1 && i != 401 {
                vec![2]
            } else {
                vec![0]
            }
        };
        assert!(cut(&one_plain).is_empty());
        // The broadcast also among the steps: a period.
        let also_in_steps = |i: usize| {
            if (pause(i) && i % 2 == 1) || i == 500 {
                vec![2]
            } else {
                vec![0]
            }
        };
        assert!(cut(&also_in_steps).is_empty());
    }

    /// The main loop (the longest phase) and the other phases running its step are cut into
    /// stages; the set-up, a phase of another loop and a phase of the step shorter than two
    /// `share` are not.
    #[test]
    fn phases_running_the_main_loop_s_step_are_cut_too() {
        let starts: Vec<u64> = (0..1000).collect();
        // Set-up (pattern 5), the loop (0), another loop (1), the loop again, a short tail of it.
        let pattern = |i: usize| match i {
            0..100 => 5,
            100..600 => 0,
            600..800 => 1,
            _ => 0,
        };
        let bounds = [0, 100, 600, 800, 985, 1000];
        assert_eq!(
            loop_phases(&bounds, &starts, 1000, 10, pattern, |_| false),
            vec![(100, 600), (800, 985)]
        );
    }

    /// Twelve minimisations of 49 iterations (pattern 0), each after a pause between two
    /// barriers (pattern 9) in which rank 0 broadcasts 60 input lines (pattern 7, rooted
    /// collectives only): LAMMPS ELASTIC. The broadcasts are the most frequent pattern (720
    /// against 588 iterations here, 3,646 against 588 in the real run) but only read input:
    /// the iterations are the step, and each pause begins a stage.
    #[test]
    fn the_step_is_the_most_frequent_pattern_that_does_more_than_read_input() {
        let mut pattern = Vec::new();
        let mut marks = Vec::new();
        for _ in 0..12 {
            marks.push(pattern.len());
            pattern.push(9);
            pattern.extend([7; 60]);
            marks.push(pattern.len());
            pattern.push(9);
            pattern.extend([0; 49]);
        }
        let n = pattern.len();
        let starts: Vec<u64> = (0..n as u64).collect();
        let input_only = |i: usize| pattern[i] == 7;
        let step = step_of(0..n, |i| pattern[i], input_only);
        assert_eq!(step, Some(0));
        let cut = |step: Option<u32>| {
            phase_stages(
                &starts,
                n as u64,
                10,
                0,
                n,
                step,
                |i| pattern[i],
                |i| marks.contains(&i),
                |i| if pattern[i] == 7 { vec![2] } else { vec![0] },
            )
        };
        // Every pause but the first (the phase's own edge) begins a stage.
        let expected: Vec<usize> = marks.iter().copied().step_by(2).skip(1).collect();
        assert_eq!(cut(step), expected);
        // With the broadcast as the step, the minimisations read as pauses: cut elsewhere.
        assert_ne!(cut(Some(7)), expected);
        // Counting the broadcasts, they would be the step.
        assert_eq!(step_of(0..n, |i| pattern[i], |_| false), Some(7));
    }
}
