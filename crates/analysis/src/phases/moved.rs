//! Work moved to other ranks (docs/phases.md, step 3e and 3f): where some ranks run a loop on
//! one side of a boundary and (almost) nothing on the other, and other ranks the other way
//! round, the program moved its work (StarPU's stencil migrates its cells to the next rank
//! halfway). No change of rate does that, and the phases' event signatures, which number each
//! rank's peers in its own order, may not see it at all (the same roles on other ranks).

use super::rates::own_signatures;

/// A stretch's events by rank (indexed by world rank) and how often each rank repeats a pattern.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RankCounts {
    /// Events of each rank in the stretch.
    pub events: Vec<u64>,
    /// Occurrences of each (rank, communication pattern) in the stretch: those of a pattern
    /// that the rank takes part in.
    pub repeats: std::collections::BTreeMap<(u32, u32), u64>,
}

impl RankCounts {
    /// Both stretches' counts together.
    pub(super) fn absorb(&mut self, other: RankCounts) {
        for (x, y) in self.events.iter_mut().zip(other.events) {
            *x += y;
        }
        for (k, n) in other.repeats {
            *self.repeats.entry(k).or_default() += n;
        }
    }

    /// These counts less `part`'s (a stretch inside this one).
    fn without(&self, part: &RankCounts) -> RankCounts {
        let events = self
            .events
            .iter()
            .zip(&part.events)
            .map(|(x, y)| x.saturating_sub(*y))
            .collect();
        let repeats = self
            .repeats
            .iter()
            .map(|(&k, &n)| (k, n.saturating_sub(part.repeats.get(&k).copied().unwrap_or(0))))
            .filter(|x| x.1 > 0)
            .collect();
        RankCounts { events, repeats }
    }

    /// Per rank, the most occurrences of one pattern it takes part in.
    fn most_repeated(&self) -> Vec<u64> {
        let mut most = vec![0; self.events.len()];
        for (&(r, _), &n) in &self.repeats {
            if let Some(m) = most.get_mut(r as usize) {
                *m = (*m).max(n);
            }
        }
        most
    }
}

/// Occurrences of one pattern a rank takes part in, at least, for its part of a stretch to be a
/// loop of its own (the three copies that make a loop elsewhere in the pattern detection).
const REPEATED: u64 = 3;

/// Each stretch's events and repeated patterns by rank: position `p` is the instance `idx[p]`
/// of `comm`, its parts' events counted on their ranks and, unless it is outside any pattern,
/// one occurrence of its pattern on each of its ranks. `bounds` first 0, ascending, last
/// `idx.len()`; one [`RankCounts`] of `ranks` ranks per stretch.
///
/// O(parts of the positions + stretches · ranks).
pub fn rank_counts(
    comm: &crate::patterns::CommunicationAnalysis,
    idx: &[usize],
    ranks: usize,
    bounds: &[usize],
) -> Vec<RankCounts> {
    bounds
        .windows(2)
        .map(|w| {
            let mut row = RankCounts {
                events: vec![0; ranks],
                ..Default::default()
            };
            for &i in &idx[w[0]..w[1]] {
                let instance = &comm.instances[i];
                for part in &instance.parts {
                    let r = part.rank as usize;
                    if r < ranks {
                        row.events[r] += u64::from(part.last_event + 1).saturating_sub(u64::from(part.first_event));
                        if instance.pattern != crate::patterns::construct::OUTSIDE {
                            *row.repeats.entry((part.rank, instance.pattern)).or_default() += 1;
                        }
                    }
                }
            }
            row
        })
        .collect()
}

/// How much work moved to other ranks between two adjacent stretches: the smaller of the two
/// sides' shares of events on ranks of their own, a rank of its own being one whose events the
/// other side holds at less than a tenth of their rate ([`super::rates::own_share`] by rank) and that takes
/// part in at least three occurrences of one pattern on its side (a loop). Both sides need such
/// ranks: a tree's levels only drop ranks (or add them), and a pipeline's ranks pass once.
///
/// O(ranks).
///
/// ```
/// use tracelogic_analysis::phases::moved::{moved_work, RankCounts};
/// // Each rank's events, and its occurrences of pattern 0.
/// let side = |events: Vec<u64>, loops: Vec<u64>| RankCounts {
///     repeats: (0..).zip(loops).map(|(r, n)| ((r, 0), n)).collect(),
///     events,
/// };
/// // Rank 0 loops before, rank 2 after; rank 1 on both sides.
/// let before = side(vec![300, 600, 0], vec![100, 100, 0]);
/// let after = side(vec![0, 600, 300], vec![0, 100, 100]);
/// assert!((moved_work(&before, &after) - 1.0 / 3.0).abs() < 1e-12);
/// // A pipeline: ranks 0 and 1, then 2, each passing once: nothing moved.
/// let first = side(vec![2, 2, 0], vec![1, 1, 0]);
/// let then = side(vec![0, 0, 4], vec![0, 0, 1]);
/// assert_eq!(moved_work(&first, &then), 0.0);
/// ```
pub fn moved_work(a: &RankCounts, b: &RankCounts) -> f64 {
    let own = |x: &RankCounts, y: &RankCounts| {
        let total = x.events.iter().sum::<u64>();
        if total == 0 {
            return 0.0;
        }
        let (own, most) = (own_signatures(&x.events, &y.events), x.most_repeated());
        let looped: u64 = (0..x.events.len())
            .filter(|&r| own[r] && most[r] >= REPEATED)
            .map(|r| x.events[r])
            .sum();
        looped as f64 / total as f64
    };
    own(a, b).min(own(b, a))
}

/// Time windows a phase is looked at in for work moved inside it ([`split_moved`]) before the
/// boundary is placed at the occurrences around the best window boundary.
const WINDOWS: usize = 100;

/// Step 3f: each phase cut where work moved to other ranks inside it, when its event
/// signatures did not show the move (the same roles on other ranks: StarPU's stencil on 8 ranks
/// exchanges between ranks 1 and 2, then between 2 and 3). In each phase `a..e` the boundary of
/// [`WINDOWS`] equal time windows where [`moved_work`] is largest, each side lasting at least
/// `min_share` of the run (`share`, in ns), is kept when the moved work reaches `min_share`,
/// placed at the occurrence boundary within a window either side where it is largest (the
/// earliest of equals), and the two sides are looked at again. `by_rank` counts stretches
/// ([`rank_counts`]); `starts` are the positions' start times, `last_end` the run's end;
/// `test` gives a new boundary's test (for the record: the signatures need not differ).
///
/// O(phases · (parts of the phase + WINDOWS · (ranks + rank–pattern pairs))).
#[allow(clippy::too_many_arguments)] // the phase steps' common inputs, passed on as they are
pub fn split_moved(
    by_rank: impl Fn(&[usize]) -> Vec<RankCounts>,
    starts: &[tracelogic_model::Time],
    last_end: tracelogic_model::Time,
    share: tracelogic_model::Time,
    bounds: Vec<usize>,
    tests: Vec<super::merge::BoundaryTest>,
    min_share: f64,
    test: impl Fn(usize, usize, usize) -> super::merge::BoundaryTest,
) -> (Vec<usize>, Vec<super::merge::BoundaryTest>) {
    let (mut bounds, mut tests) = (bounds, tests);
    if min_share <= 0.0 || bounds.len() < 2 {
        return (bounds, tests);
    }
    let end_of = |y: usize| if y >= starts.len() { last_end } else { starts[y] };
    let mut todo: Vec<(usize, usize)> = bounds.windows(2).map(|w| (w[0], w[1])).collect();
    let mut cuts: Vec<usize> = Vec::new();
    while let Some((a, e)) = todo.pop() {
        if e < a + 2 {
            continue;
        }
        let (from, to) = (starts[a], end_of(e));
        // Candidate boundaries: the first position of each window (distinct, inside a..e).
        let mut at: Vec<usize> = (1..WINDOWS)
            .map(|k| {
                let t = from + ((to - from) as f64 * k as f64 / WINDOWS as f64) as tracelogic_model::Time;
                a + starts[a..e].partition_point(|&s| s < t)
            })
            .filter(|&c| c > a && c < e && starts[c] - from >= share && to - starts[c] >= share)
            .collect();
        at.dedup();
        let Some((k, moved)) = best(&by_rank, a, &at, e) else {
            continue;
        };
        if moved < min_share {
            continue;
        }
        // At the occurrences: every boundary between the neighbouring candidates.
        let lo = if k == 0 { a + 1 } else { at[k - 1] };
        let hi = at.get(k + 1).copied().unwrap_or(e - 1);
        let fine: Vec<usize> = (lo..=hi)
            .filter(|&c| starts[c] - from >= share && to - starts[c] >= share)
            .collect();
        let c = best(&by_rank, a, &fine, e).map_or(at[k], |(j, _)| fine[j]);
        cuts.push(c);
        todo.push((a, c));
        todo.push((c, e));
    }
    for c in cuts {
        let j = bounds.partition_point(|&b| b < c);
        if bounds.get(j) != Some(&c) {
            bounds.insert(j, c);
            tests.insert(j - 1, test(bounds[j - 1], c, bounds[j + 1]));
            // The neighbouring boundaries' sides changed: tested again.
            for k in [j - 1, j + 1] {
                if k >= 1 && k + 1 < bounds.len() {
                    tests[k - 1] = test(bounds[k - 1], bounds[k], bounds[k + 1]);
                }
            }
        }
    }
    (bounds, tests)
}

/// The candidate `cands[k]` (ascending, inside `a..e`) where [`moved_work`] between `a..c` and
/// `c..e` is largest (the earliest of equals), with its value; `None` without candidates. One
/// pass over the stretch's parts, then running sums.
fn best(by_rank: &impl Fn(&[usize]) -> Vec<RankCounts>, a: usize, cands: &[usize], e: usize) -> Option<(usize, f64)> {
    if cands.is_empty() {
        return None;
    }
    let bounds: Vec<usize> = std::iter::once(a)
        .chain(cands.iter().copied())
        .chain(std::iter::once(e))
        .collect();
    let pieces = by_rank(&bounds);
    let mut total = RankCounts {
        events: vec![0; pieces.first().map_or(0, |p| p.events.len())],
        ..Default::default()
    };
    for p in &pieces {
        total.absorb(p.clone());
    }
    let mut left = RankCounts {
        events: vec![0; total.events.len()],
        ..Default::default()
    };
    let mut out: Option<(usize, f64)> = None;
    for (k, piece) in pieces.into_iter().take(cands.len()).enumerate() {
        left.absorb(piece);
        let right = total.without(&left);
        let m = moved_work(&left, &right);
        if out.is_none_or(|(_, b)| m > b) {
            out = Some((k, m));
        }
    }
    out
}

/// The inner boundaries of `bounds` (phases of the positions `idx` of `comm`, one test each in
/// `tests`) where work moved to other ranks ([`moved_work`] of the two phases at least
/// `min_share`), with their tests: the phases' boundaries that are section boundaries too.
///
/// O(parts of the positions + phases · (ranks + rank–pattern pairs)).
pub fn moved_bounds(
    comm: &crate::patterns::CommunicationAnalysis,
    idx: &[usize],
    ranks: usize,
    bounds: &[usize],
    tests: &[super::merge::BoundaryTest],
    min_share: f64,
) -> Vec<(usize, super::merge::BoundaryTest)> {
    if min_share <= 0.0 || bounds.len() < 3 {
        return Vec::new();
    }
    let phases = rank_counts(comm, idx, ranks, bounds);
    (1..bounds.len() - 1)
        .filter(|&j| moved_work(&phases[j - 1], &phases[j]) >= min_share)
        .filter_map(|j| tests.get(j - 1).map(|&t| (bounds[j], t)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each stretch's events by rank, from its occurrences' parts.
    #[test]
    fn rank_counts_add_the_parts_of_each_stretch() {
        use crate::patterns::construct::{CommunicationAnalysis, Instance, InstancePart};
        let part = |rank: u32, first_event: u32, last_event: u32| InstancePart {
            rank,
            first_event,
            last_event,
            start: 0,
            end: 0,
        };
        let instance = |pattern: u32, parts: Vec<InstancePart>| Instance {
            pattern,
            start: 0,
            end: 0,
            parts,
            variant: 0,
        };
        let comm = CommunicationAnalysis {
            instances: vec![
                instance(0, vec![part(0, 0, 3), part(1, 0, 1)]),
                instance(7, vec![part(2, 5, 5)]),
            ],
            ..Default::default()
        };
        let row = |events: Vec<u64>, repeats: &[((u32, u32), u64)]| RankCounts {
            events,
            repeats: repeats.iter().copied().collect(),
        };
        assert_eq!(
            rank_counts(&comm, &[0, 1], 3, &[0, 1, 2]),
            vec![
                row(vec![4, 2, 0], &[((0, 0), 1), ((1, 0), 1)]),
                row(vec![0, 0, 1], &[((2, 7), 1)])
            ]
        );
        assert_eq!(
            rank_counts(&comm, &[1, 0, 1], 3, &[0, 3]),
            vec![row(vec![4, 2, 2], &[((0, 0), 1), ((1, 0), 1), ((2, 7), 2)])]
        );
    }
}
