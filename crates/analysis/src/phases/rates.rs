//! A change of rate is not a phase (docs/phases.md, step 3e).
//!
//! The windows' test finds every significant change of the event mix, and a loop whose work
//! drifts changes its mix without changing what it does: a LAMMPS run whose box is deformed
//! rebuilds its neighbour lists twice as often in its first 500 of 2,500 steps, so its steps'
//! border and atom exchanges are more frequent there, but every kind of event occurs on both
//! sides. A phase boundary is kept only where one side does something the other does not:
//! at least `min_share` of one side's events have signatures the other side holds at less
//! than a tenth of their rate ([`own_share`]). A tenth, not zero: a boundary placed at the
//! occurrences can leave a few events of the new activity on the old side.
//!
//! The sides are compared by signature and by role signature (a rank's peers numbered in the
//! order its part of each occurrence meets them): a rebalancing gives ranks new partners in
//! the same roles. They are also compared by rank: where some ranks run a loop on one side and
//! (almost) nothing on the other, and other ranks the other way round, the work moved to other
//! ranks, which no rate change does (StarPU's stencil migrates its cells to the next rank
//! halfway: ranks 1–3 exchange before, ranks 0, 2, 3 after, in the same roles). One pass of a
//! pipeline or a tree (NPB DT's graph, a gather's levels) moves along ranks too, but no rank
//! repeats its part: [`moved_work`]. A boundary where only one side does something of
//! its own then moves to where that ends or begins ([`place_at_changes`]).
//!
//! Stages of one loop that communicate alike (LAMMPS's `minimize` then `run`) are cut by step
//! 6 where the program stops at a barrier between them, not by this rule.

use super::merge::{remove_boundary, BoundaryTest, Mixes};
use super::moved::{moved_work, RankCounts};

/// Share of `a`'s events whose signature `b` holds at less than a tenth of `a`'s rate (counts by
/// signature id, same ids on both sides); 0 when `a` is empty.
///
/// O(number of signatures).
///
/// ```
/// use tracelogic_analysis::phases::rates::own_share;
/// // Same signatures at other rates: nothing of its own.
/// assert_eq!(own_share(&[90, 10], &[50, 50]), 0.0);
/// // A signature 5 % of `a`'s events, absent from `b`.
/// assert!((own_share(&[95, 5], &[100, 0]) - 0.05).abs() < 1e-12);
/// ```
pub fn own_share(a: &[u64], b: &[u64]) -> f64 {
    let na = a.iter().sum::<u64>();
    if na == 0 {
        return 0.0;
    }
    let own: u64 = a.iter().zip(own_signatures(a, b)).filter(|x| x.1).map(|x| *x.0).sum();
    own as f64 / na as f64
}

/// How much two adjacent stretches differ in what they do: the larger of their
/// [`own_share`]s.
pub fn difference(a: &[u64], b: &[u64]) -> f64 {
    own_share(a, b).max(own_share(b, a))
}

/// Each phase's events counted three ways, for [`merge_rate_changes`]: one row per phase.
#[derive(Debug, Clone, Default)]
pub struct SideCounts {
    /// By signature id ([`super::content::Signed::counts`]).
    pub signatures: Vec<Vec<u64>>,
    /// By role signature ([`super::content::Signed::role_counts`]).
    pub roles: Vec<Vec<u64>>,
    /// By rank ([`super::moved::rank_counts`]; empty: not compared by rank).
    pub ranks: Vec<RankCounts>,
}

/// Boundaries between phases that differ only in rates removed: while some inner boundary's
/// sides differ by less than `min_share` ([`difference`] of the phases' events by signature or
/// by role signature, whichever is smaller) and no work moved between ranks ([`moved_work`]
/// below `min_share`), the one of smallest difference is
/// removed and the merged phase's boundaries tested again on `classes` at `alpha`. `bounds`
/// first 0, last the number of positions; one test per inner boundary; one row of `sides` per
/// phase.
///
/// O(b² · s) for b boundaries and s signatures and ranks, plus the tests of the merged phases.
pub fn merge_rate_changes<M: Mixes + ?Sized>(
    classes: &M,
    sides: SideCounts,
    bounds: Vec<usize>,
    tests: Vec<BoundaryTest>,
    min_share: f64,
    alpha: f64,
) -> (Vec<usize>, Vec<BoundaryTest>) {
    let (mut bounds, mut tests) = (bounds, tests);
    let SideCounts {
        signatures: mut counts,
        mut roles,
        ranks: mut by_rank,
    } = sides;
    if min_share <= 0.0 {
        return (bounds, tests);
    }
    let add = |c: &mut Vec<Vec<u64>>, j: usize| {
        let right = c.remove(j);
        for (x, y) in c[j - 1].iter_mut().zip(right) {
            *x += y;
        }
    };
    while bounds.len() > 2 {
        let closest = (1..bounds.len() - 1)
            .map(|j| {
                let same_work = difference(&counts[j - 1], &counts[j]).min(difference(&roles[j - 1], &roles[j]));
                let moved = by_rank.get(j).map_or(0.0, |r| moved_work(&by_rank[j - 1], r));
                (j, same_work.max(moved))
            })
            .filter(|&(_, d)| d < min_share)
            .min_by(|a, b| a.1.total_cmp(&b.1));
        let Some((j, _)) = closest else { break };
        add(&mut counts, j);
        add(&mut roles, j);
        if by_rank.len() > j {
            let right = by_rank.remove(j);
            by_rank[j - 1].absorb(right);
        }
        remove_boundary(classes, &mut bounds, &mut tests, j, alpha);
    }
    (bounds, tests)
}

/// The signatures of `a` that `b` holds at less than a tenth of their rate in `a` (as
/// [`own_share`] counts them).
pub(super) fn own_signatures(a: &[u64], b: &[u64]) -> Vec<bool> {
    let (na, nb) = (a.iter().sum::<u64>() as f64, b.iter().sum::<u64>() as f64);
    a.iter()
        .zip(b)
        .map(|(&x, &y)| x > 0 && (y as f64) < 0.1 * x as f64 * nb / na.max(1.0))
        .collect()
}

/// Each boundary where only one side does something of its own moved to where that ends (the
/// left side's) or begins (the right side's): the other side continues what they share, so the
/// stretch between belongs with it. A set-up too short for a window of its own lies in a phase
/// with the loop's first steps, cut where those steps first change their mix (a rebalancing's
/// new partners); its end is the set-up's last event of its own. Sides compared by signature and
/// by role signature ([`merge_rate_changes`]); the boundaries next to a moved one tested again.
/// A boundary where work moved to other ranks stays ([`moved_work`] of `ranks`' counts, a
/// stretch's [`RankCounts`] for its bounds).
pub fn place_at_changes<M: Mixes + ?Sized>(
    classes: &M,
    signed: &super::content::Signed,
    ranks: impl Fn(&[usize]) -> Vec<RankCounts>,
    bounds: Vec<usize>,
    tests: Vec<BoundaryTest>,
    min_share: f64,
    alpha: f64,
) -> (Vec<usize>, Vec<BoundaryTest>) {
    let (mut bounds, mut tests) = (bounds, tests);
    if min_share <= 0.0 {
        return (bounds, tests);
    }
    for j in 1..bounds.len().saturating_sub(1) {
        let (a, c, e) = (bounds[j - 1], bounds[j], bounds[j + 1]);
        // Where the work moved to other ranks, the move is the change, whatever else one side
        // does of its own (the run's closing reductions after a moved loop).
        if let [l, r] = &ranks(&[a, c, e])[..] {
            if moved_work(l, r) >= min_share {
                continue;
            }
        }
        let mut moved = None;
        for roles in [false, true] {
            let counts = if roles {
                signed.role_counts(&[a, c, e])
            } else {
                signed.counts(&[a, c, e])
            };
            let (l, r) = (&counts[0], &counts[1]);
            let (own_l, own_r) = (own_share(l, r), own_share(r, l));
            let holds = |p: usize, own: &[bool]| signed.ids_at(p, roles).iter().any(|&id| own[id as usize]);
            if own_r < min_share && own_l >= min_share {
                let own = own_signatures(l, r);
                moved = (a..c).rev().find(|&p| holds(p, &own)).map(|p| p + 1);
            } else if own_l < min_share && own_r >= min_share {
                let own = own_signatures(r, l);
                moved = (c..e).find(|&p| holds(p, &own));
            }
            if moved.is_some() {
                break;
            }
        }
        if let Some(m) = moved.filter(|&m| m != c && m > a && m < e) {
            bounds[j] = m;
            for k in [j - 1, j, j + 1] {
                if k >= 1 && k + 1 < bounds.len() {
                    tests[k - 1] = classes.test(bounds[k - 1], bounds[k], bounds[k + 1], alpha);
                }
            }
        }
    }
    (bounds, tests)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same counts by signature and by role, no counts by rank.
    fn alike(counts: &[Vec<u64>]) -> SideCounts {
        SideCounts {
            signatures: counts.to_vec(),
            roles: counts.to_vec(),
            ranks: Vec::new(),
        }
    }

    /// Three phases: A and B hold the same two signatures at other rates (a loop's rebuild
    /// steps twice as frequent in A), C a third signature. A and B become one phase; the
    /// boundary before C stays, tested again on the merged phase.
    #[test]
    fn phases_differing_in_rates_only_are_one() {
        // Positions: 10 of A (class 0 and 1 alternating 4:1), 10 of B (9:1), 10 of C (class 2).
        let classes: Vec<u32> = (0..30)
            .map(|i| match i {
                0..=19 => u32::from(i % 5 == 0),
                _ => 2,
            })
            .collect();
        let counts = vec![vec![80, 20, 0], vec![90, 10, 0], vec![0, 0, 100]];
        let stale = BoundaryTest {
            p: 0.5,
            strength: 0.0,
            stage: false,
        };
        let (b, t) = merge_rate_changes(
            &classes,
            alike(&counts),
            vec![0, 10, 20, 30],
            vec![stale; 2],
            0.01,
            0.01,
        );
        assert_eq!(b, vec![0, 20, 30]);
        assert!(t[0].p < 0.01, "{:?}", t[0]);
    }

    /// A side doing something the other never does, in 2 % of its events, keeps its boundary;
    /// with `min_share` 0 (every significant change) nothing is merged.
    #[test]
    fn a_new_activity_keeps_its_boundary() {
        let classes: Vec<u32> = (0..20).map(|i| u32::from(i >= 10)).collect();
        let counts = vec![vec![100, 0], vec![98, 2]];
        let t = BoundaryTest {
            p: 0.001,
            strength: 1.0,
            stage: false,
        };
        let (b, _) = merge_rate_changes(&classes, alike(&counts), vec![0, 10, 20], vec![t], 0.01, 0.01);
        assert_eq!(b, vec![0, 10, 20]);
        let same = vec![vec![100, 5], vec![90, 10]];
        let (b, _) = merge_rate_changes(&classes, alike(&same), vec![0, 10, 20], vec![t], 0.01, 0.01);
        assert_eq!(b, vec![0, 20]);
        let (b, _) = merge_rate_changes(&classes, alike(&same), vec![0, 10, 20], vec![t], 0.0, 0.01);
        assert_eq!(b, vec![0, 10, 20]);
    }

    /// The same work in the same roles moved to other ranks (StarPU's stencil after its
    /// migration: ranks 1, 2, 3 loop before, 0, 2, 3 after) keeps its boundary; the same ranks
    /// at other rates (a rebalancing among the same ranks), or ranks that only drop out (a
    /// tree's levels) or pass once (a pipeline), do not.
    #[test]
    fn work_moved_to_other_ranks_keeps_its_boundary() {
        let classes: Vec<u32> = (0..20).map(|i| u32::from(i >= 10)).collect();
        let t = BoundaryTest {
            p: 0.001,
            strength: 1.0,
            stage: false,
        };
        let work = vec![vec![600, 600], vec![600, 600]];
        let side = |events: Vec<u64>, loops: Vec<u64>| RankCounts {
            repeats: (0..).zip(loops).map(|(r, n)| ((r, 0), n)).collect(),
            events,
        };
        let merged = |ranks: Vec<RankCounts>| {
            let sides = SideCounts { ranks, ..alike(&work) };
            merge_rate_changes(&classes, sides, vec![0, 10, 20], vec![t], 0.01, 0.01).0
        };
        let moved = vec![
            side(vec![2, 600, 1200, 600], vec![1, 100, 100, 100]),
            side(vec![600, 4, 600, 1200], vec![100, 2, 100, 100]),
        ];
        assert_eq!(merged(moved), vec![0, 10, 20]);
        let rebalanced = vec![
            side(vec![500, 700, 1200, 600], vec![100; 4]),
            side(vec![700, 500, 600, 1200], vec![100; 4]),
        ];
        assert_eq!(merged(rebalanced), vec![0, 20]);
        let levels = vec![
            side(vec![50, 50, 50, 50], vec![10; 4]),
            side(vec![100, 0, 100, 0], vec![10, 0, 10, 0]),
        ];
        assert_eq!(merged(levels), vec![0, 20]);
        let pipeline = vec![
            side(vec![2, 2, 0, 0], vec![1, 1, 0, 0]),
            side(vec![0, 0, 2, 2], vec![0, 0, 1, 1]),
        ];
        assert_eq!(merged(pipeline), vec![0, 20]);
    }
}
