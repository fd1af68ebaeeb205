//! Kinds of communication: a pattern's shape up to a renaming of ranks.
//!
//! Two communication patterns are of one *kind* when they differ only in which ranks play the
//! parts: a ping-pong between ranks 0 and 1 and one between 0 and 2, a ring in natural order and
//! one in a random order. Each rank's event string is written with its peers renamed in the
//! order the rank first meets them (`S2 R1 S1 R2` → `S#0 R#1 S#1 R#0`; `R*` and collectives
//! unchanged), and the kind is the multiset of these strings over the pattern's ranks. This is
//! an invariant of the pattern under any renaming of ranks (a renaming maps each rank's string
//! to the same local form and permutes the ranks), so two patterns that are one shape on other
//! ranks always share a kind; it is not a complete one (two different shapes whose ranks each
//! see the same local strings share it too, e.g. one ring of 6 and two rings of 3), which only
//! makes the section level coarser.
//!
//! Sections alike but for a few events ([`merge_slight`]) are one section: the kind test can
//! find a significant difference that only a small part of one side makes.

use std::collections::HashMap;
use std::fmt::Write;
use std::ops::Range;

use super::merge::{remove_boundary, BoundaryTest, Mixes};

/// One rank's event string with its peers renamed in order of first appearance.
fn local_form<'a, T: AsRef<str> + ?Sized + 'a>(events: impl IntoIterator<Item = &'a T>) -> String {
    let mut peers: HashMap<&str, usize> = HashMap::new();
    let mut out = String::new();
    for e in events {
        let e: &str = e.as_ref();
        let (dir, peer) = match e.as_bytes().first() {
            Some(b'S') | Some(b'R') if e.len() > 1 && e[1..].bytes().all(|b| b.is_ascii_digit()) => e.split_at(1),
            _ => {
                out.push_str(e);
                out.push(' ');
                continue;
            }
        };
        let n = peers.len();
        let id = *peers.entry(peer).or_insert(n);
        // Written in place (no string per event).
        let _ = write!(out, "{dir}#{id} ");
    }
    out
}

/// The kind of a pattern given by its ranks' event strings (see the module docs).
pub fn kind_key<'a, E, T>(events: impl IntoIterator<Item = E>) -> String
where
    E: IntoIterator<Item = &'a T>,
    T: AsRef<str> + ?Sized + 'a,
{
    let mut forms: Vec<String> = events.into_iter().map(|e| local_form(e)).collect();
    forms.sort();
    forms.join("| ")
}

/// Dense kind id of every pattern of `comm` (same order as `comm.patterns`), and the number of
/// kinds.
pub fn pattern_kinds(comm: &crate::patterns::CommunicationAnalysis) -> (Vec<u32>, usize) {
    let mut ids: HashMap<String, u32> = HashMap::new();
    let kinds = comm
        .patterns
        .iter()
        .map(|p| {
            let key = kind_key(p.events.values());
            let n = ids.len() as u32;
            *ids.entry(key).or_insert(n)
        })
        .collect();
    (kinds, ids.len())
}

/// Largest share of their events by which two adjacent sections may differ and still be one
/// section ([`merge_slight`]). On the corpus, samples and held-out runs the section boundaries
/// left differ by 14–100 % (NPB MG S 8 and hpcc-4 under OTF2: 14 %; set-up against loop: 50–100
/// %); those inside GROMACS's MD loop, where some halo pulses' `MPI_Sendrecv` become lone sends
/// and receives to the same peers, by 0.7–1.8 %.
pub const SAME_COMMUNICATION: f64 = 0.05;

/// The share of their events by which two event mixes differ: the total variation distance
/// of `left` and `right` (counts by coarse signature, [`super::content::Signed::coarse_counts`]),
/// 0 when either is empty.
pub fn mix_distance(left: &[u64], right: &[u64]) -> f64 {
    let (nl, nr) = (left.iter().sum::<u64>(), right.iter().sum::<u64>());
    if nl == 0 || nr == 0 {
        return 0.0;
    }
    let (nl, nr) = (nl as f64, nr as f64);
    0.5 * left
        .iter()
        .zip(right)
        .map(|(&a, &b)| (a as f64 / nl - b as f64 / nr).abs())
        .sum::<f64>()
}

/// Adjacent sections whose events by coarse signature differ by less than
/// [`SAME_COMMUNICATION`] ([`mix_distance`]) are merged, the closest pair first, and the merged
/// section's boundaries tested again on `classes` at level `alpha`. A significant difference
/// of kinds can come from a small part of one side (a loop's first stretch that also holds the
/// set-up's last exchanges, a last stretch holding the run's closing reductions); the sides are
/// still one section when nearly all their events are alike, the function that posted a
/// message aside. `bounds` are the sections' boundaries (first 0, last the number of
/// positions), a subset of `phase_bounds`; `phase_counts[k]` is phase `k`'s events by coarse
/// signature.
pub fn merge_slight<M: Mixes + ?Sized>(
    classes: &M,
    phase_bounds: &[usize],
    phase_counts: &[Vec<u64>],
    bounds: Vec<usize>,
    tests: Vec<BoundaryTest>,
    alpha: f64,
) -> (Vec<usize>, Vec<BoundaryTest>) {
    let (mut bounds, mut tests) = (bounds, tests);
    let width = phase_counts.first().map_or(0, Vec::len);
    // The events of positions `r` (whole phases) by coarse signature.
    let counts = |r: Range<usize>| {
        let mut c = vec![0u64; width];
        for (k, w) in phase_bounds.windows(2).enumerate() {
            if w[0] >= r.start && w[1] <= r.end {
                for (x, &y) in c.iter_mut().zip(&phase_counts[k]) {
                    *x += y;
                }
            }
        }
        c
    };
    while bounds.len() > 2 {
        let m = bounds.len() - 1;
        let closest = (1..m)
            .map(|j| {
                let (l, r) = (counts(bounds[j - 1]..bounds[j]), counts(bounds[j]..bounds[j + 1]));
                (j, mix_distance(&l, &r))
            })
            .filter(|&(_, d)| d < SAME_COMMUNICATION)
            .min_by(|a, b| a.1.total_cmp(&b.1));
        let Some((j, _)) = closest else { break };
        remove_boundary(classes, &mut bounds, &mut tests, j, alpha);
    }
    (bounds, tests)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    /// A ping-pong between 0 and 1 and one between 0 and 2 (started by either side) are one
    /// kind; a ring of 4 in natural order and one in another order are one kind; a ping-pong and
    /// a ring are not.
    #[test]
    fn renamed_ranks_share_a_kind() {
        let pp01 = kind_key(&[ev(&["S1", "R1"]), ev(&["R0", "S0"])]);
        let pp02 = kind_key(&[ev(&["R2", "S2"]), ev(&["S0", "R0"])]);
        assert_eq!(pp01, pp02);
        let ring = |order: [usize; 4]| {
            let mut per = vec![Vec::new(); 4];
            for k in 0..4 {
                let (r, next, prev) = (order[k], order[(k + 1) % 4], order[(k + 3) % 4]);
                per[r] = ev(&[&format!("S{next}"), &format!("R{prev}")]);
            }
            kind_key(&per)
        };
        assert_eq!(ring([0, 1, 2, 3]), ring([2, 0, 3, 1]));
        assert_ne!(ring([0, 1, 2, 3]), pp01);
        // Collectives keep their names; a different collective is another kind.
        let a = kind_key(&[ev(&["MPI_Allreduce"]), ev(&["MPI_Allreduce"])]);
        let b = kind_key(&[ev(&["MPI_Bcast"]), ev(&["MPI_Bcast"])]);
        assert_ne!(a, b);
        // Two ranks differ from three.
        assert_ne!(
            a,
            kind_key(&[ev(&["MPI_Allreduce"]), ev(&["MPI_Allreduce"]), ev(&["MPI_Allreduce"])])
        );
    }

    /// The share of events by which two mixes differ, by hand: equal proportions 0, disjoint
    /// mixes 1, `[3, 1]` against `[1, 1]` |3/4 − 1/2| = 1/4; an empty side 0.
    #[test]
    fn mix_distance_by_hand() {
        assert_eq!(mix_distance(&[2, 4], &[1, 2]), 0.0);
        assert_eq!(mix_distance(&[5, 0], &[0, 7]), 1.0);
        assert!((mix_distance(&[3, 1], &[1, 1]) - 0.25).abs() < 1e-12);
        assert_eq!(mix_distance(&[0, 0], &[1, 1]), 0.0);
    }

    /// Three phases: A (100 events of signature 0), B (97 of 0, 3 of 1: 3 % differ) and C
    /// (signature 2 only). A and B are one section, C stays apart; the boundaries are phase
    /// boundaries, the test of the boundary left is recomputed on the classes.
    #[test]
    fn sections_alike_but_for_a_few_events_are_one() {
        let phase_bounds = [0, 10, 20, 30];
        let counts = vec![vec![100, 0, 0], vec![97, 3, 0], vec![0, 0, 100]];
        let classes: Vec<u32> = (0..30).map(|i| if i < 20 { 0 } else { 1 }).collect();
        let stale = BoundaryTest {
            p: 0.5,
            strength: 0.0,
            stage: false,
        };
        let (b, t) = merge_slight(
            &classes,
            &phase_bounds,
            &counts,
            vec![0, 10, 20, 30],
            vec![stale; 2],
            0.01,
        );
        assert_eq!(b, vec![0, 20, 30]);
        assert_eq!(t.len(), 1);
        assert!(t[0].p < 0.01, "{:?}", t[0]);
    }
}
