//! Rank numberings: which topology node each world rank plays.

use crate::rng::SplitMix64;
use crate::spec::Numbering;

/// `node_of_rank[r]` for `n` ranks under `numbering`, drawn from `rng`.
pub(crate) fn node_of_rank(numbering: Numbering, n: u32, rng: &mut SplitMix64) -> Vec<u32> {
    let mut nodes: Vec<u32> = (0..n).collect();
    match numbering {
        Numbering::RowMajor => {}
        Numbering::Random => rng.shuffle(&mut nodes),
        Numbering::Partial(fraction) => {
            let moved = moved_count(fraction, n);
            let mut chosen: Vec<u32> = (0..n).collect();
            rng.shuffle(&mut chosen);
            chosen.truncate(moved);
            let mut targets = chosen.clone();
            rng.shuffle(&mut targets);
            derange(&chosen, &mut targets);
            for (&rank, &node) in chosen.iter().zip(&targets) {
                nodes[rank as usize] = node;
            }
        }
    }
    nodes
}

/// How many of `n` ranks a partial renumbering of `fraction` moves: `round(fraction × n)`,
/// except that one rank cannot move alone (1 becomes 2) and fewer than two ranks never move.
pub(crate) fn moved_count(fraction: f64, n: u32) -> usize {
    if n < 2 {
        return 0;
    }
    let m = (fraction * n as f64).round().clamp(0.0, n as f64) as usize;
    if m == 1 {
        2
    } else {
        m
    }
}

/// Make `targets` (a permutation of `chosen`) leave no element where it was: every fixed point
/// is swapped with the next position, which unfixes both and fixes nothing else.
fn derange(chosen: &[u32], targets: &mut [u32]) {
    let m = targets.len();
    if m < 2 {
        return;
    }
    for i in 0..m {
        if targets[i] == chosen[i] {
            targets.swap(i, (i + 1) % m);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moved(nodes: &[u32]) -> usize {
        nodes.iter().enumerate().filter(|&(r, &u)| r as u32 != u).count()
    }

    fn is_permutation(nodes: &[u32]) -> bool {
        let mut s = nodes.to_vec();
        s.sort_unstable();
        s.iter().enumerate().all(|(i, &u)| i as u32 == u)
    }

    #[test]
    fn partial_moves_exactly_the_asked_share() {
        for seed in 0..50 {
            for n in [2u32, 3, 9, 16, 100, 529] {
                let mut rng = SplitMix64::new(seed, 0);
                let nodes = node_of_rank(Numbering::Partial(2.0 / 3.0), n, &mut rng);
                assert!(is_permutation(&nodes));
                assert_eq!(moved(&nodes), moved_count(2.0 / 3.0, n), "n={n} seed={seed}");
            }
        }
        assert_eq!(moved_count(2.0 / 3.0, 529), 353);
        assert_eq!(moved_count(0.01, 16), 0);
        assert_eq!(moved_count(0.05, 16), 2);
        assert_eq!(moved_count(1.0, 1), 0);
    }

    #[test]
    fn row_major_is_identity_and_random_is_a_permutation() {
        let mut rng = SplitMix64::new(3, 0);
        assert_eq!(node_of_rank(Numbering::RowMajor, 5, &mut rng), vec![0, 1, 2, 3, 4]);
        let r = node_of_rank(Numbering::Random, 1000, &mut rng);
        assert!(is_permutation(&r));
        assert!(moved(&r) > 900, "a random permutation of 1000 fixes about one rank");
    }
}
