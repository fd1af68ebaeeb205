//! Renumbering the world ranks of a trace: the same run under another rank placement.
//!
//! [`Trace::renumber_ranks`] renames world rank `r` to `perm[r]` everywhere a rank lives in the
//! model: the order of [`Trace::ranks`] and each [`RankTrace::rank`](crate::RankTrace::rank),
//! the peers of point-to-point operations, the roots of collectives and the members of
//! communicators. Everything else travels with its rank unchanged (calls, times, locations,
//! metric samples, spans). The wildcards [`ANY_SOURCE`] and [`NO_ROOT`] stay wildcards.
//!
//! It is a renaming, not a rerun: every communicator but `MPI_COMM_WORLD` keeps its
//! communicator-rank order (communicator rank `i` is the process it was, now under its new world
//! rank), so a message's communicator-local ranks are unchanged. `MPI_COMM_WORLD` keeps members
//! `0..n` because its communicator rank is the world rank by definition.
//!
//! Analyses must give the same answer on a renumbered trace, up to the renumbering; the
//! placement-invariance tests check that on every real sample.

use crate::{Rank, Trace, ANY_SOURCE, COMM_WORLD, NO_ROOT};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fmt;

/// Why a rank list is not a permutation of a trace's ranks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RenumberError {
    /// What is wrong, naming the offending position and rank.
    pub message: String,
}

impl fmt::Display for RenumberError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RenumberError {}

fn error(message: String) -> RenumberError {
    RenumberError { message }
}

/// Check that `perm` (`perm[old] = new`) is a permutation of `0..n`: `n` entries, each below
/// `n`, none repeated.
pub fn check_permutation(perm: &[Rank], n: u32) -> Result<(), RenumberError> {
    if perm.len() != n as usize {
        return Err(error(format!(
            "the renumbering names {} ranks but the trace has {n}",
            perm.len()
        )));
    }
    let mut seen: Vec<Option<usize>> = vec![None; n as usize];
    for (old, &new) in perm.iter().enumerate() {
        if new >= n {
            return Err(error(format!(
                "rank {old} would become {new}, which is not a rank of the trace (0-{})",
                n.saturating_sub(1)
            )));
        }
        if let Some(first) = seen[new as usize] {
            return Err(error(format!(
                "ranks {first} and {old} would both become {new}: a renumbering must be a permutation"
            )));
        }
        seen[new as usize] = Some(old);
    }
    Ok(())
}

/// The inverse of permutation `perm`: `inverse(perm)[perm[r]] == r`.
pub fn inverse(perm: &[Rank]) -> Vec<Rank> {
    let mut inv = vec![0; perm.len()];
    for (old, &new) in perm.iter().enumerate() {
        inv[new as usize] = old as Rank;
    }
    inv
}

/// The reversing permutation of `n` ranks: `r` becomes `n - 1 - r`.
pub fn reverse_permutation(n: u32) -> Vec<Rank> {
    (0..n).rev().collect()
}

/// A uniformly random permutation of `n` ranks, the same for the same `seed` (so a placement
/// experiment can be repeated).
pub fn random_permutation(n: u32, seed: u64) -> Vec<Rank> {
    let mut perm: Vec<Rank> = (0..n).collect();
    fastrand::Rng::with_seed(seed).shuffle(&mut perm);
    perm
}

/// Parse a renumbering file: one new rank per line, line `r + 1` giving rank `r`'s new number.
/// Blank lines and lines starting with `#` are skipped. Errors name the line. The result is
/// not checked against a trace yet ([`check_permutation`] does that).
pub fn parse_permutation(text: &str) -> Result<Vec<Rank>, RenumberError> {
    let mut perm = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let new = line.parse::<Rank>().map_err(|_| {
            error(format!(
                "line {}: `{}` is not a rank number (one new rank per line)",
                i + 1,
                line.chars().take(40).collect::<String>()
            ))
        })?;
        perm.push(new);
    }
    Ok(perm)
}

impl Trace {
    /// This trace with world rank `r` renamed `perm[r]` everywhere (see the
    /// [module docs](crate::renumber)); an error if `perm` is not a permutation of the ranks.
    pub fn renumber_ranks(&self, perm: &[Rank]) -> Result<Trace, RenumberError> {
        self.clone().into_renumbered(perm)
    }

    /// [`Trace::renumber_ranks`] consuming the trace, so no second copy is held.
    pub fn into_renumbered(mut self, perm: &[Rank]) -> Result<Trace, RenumberError> {
        let n = self.num_ranks();
        check_permutation(perm, n)?;
        let map = |r: Rank| if r < n { perm[r as usize] } else { r };
        let mut ranks: Vec<Option<crate::RankTrace>> = (0..n).map(|_| None).collect();
        for (old, mut rt) in std::mem::take(&mut self.ranks).into_iter().enumerate() {
            let new = perm[old];
            rt.rank = new;
            rt.p2p.peer.map_values(|p| if p != ANY_SOURCE { map(p) } else { p });
            for root in &mut rt.collectives.root {
                if *root != NO_ROOT {
                    *root = map(*root);
                }
            }
            ranks[new as usize] = Some(rt);
        }
        self.ranks = ranks
            .into_iter()
            .map(|rt| rt.expect("a checked permutation fills every rank"))
            .collect();
        for (id, comm) in self.comms.iter_mut().enumerate() {
            if id as u32 == COMM_WORLD {
                continue;
            }
            for m in &mut comm.members {
                *m = map(*m);
            }
        }
        self.comm_index = HashMap::new();
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CollectiveOp, P2pDir, NO_CALLPATH};

    /// Three ranks: 0 sends to 2 on a sub-communicator {2, 0} (in that order), 1 receives from
    /// anyone, and everyone joins a bcast rooted at 2.
    fn small() -> Trace {
        let mut t = Trace::new("test", "small", 3);
        let sub = t.add_comm("pair", vec![2, 0]);
        let c = t.push_call(0, "MPI_Send", 10, 20, NO_CALLPATH, 0);
        t.push_p2p(0, c, c, P2pDir::Send, 2, 7, sub, 64);
        let c = t.push_call(2, "MPI_Recv", 15, 25, NO_CALLPATH, 0);
        t.push_p2p(2, c, c, P2pDir::Recv, 0, 7, sub, 64);
        let c = t.push_call(1, "MPI_Recv", 30, 40, NO_CALLPATH, 0);
        t.push_p2p(1, c, c, P2pDir::Recv, ANY_SOURCE, 1, COMM_WORLD, 8);
        for r in 0..3 {
            let c = t.push_call(r, "MPI_Bcast", 50, 60 + r as u64, NO_CALLPATH, 0);
            t.push_collective(r, c, CollectiveOp::Bcast, COMM_WORLD, 2, 4, 4);
        }
        t
    }

    #[test]
    fn every_rank_reference_moves_and_wildcards_stay() {
        let t = small();
        let perm = [1, 2, 0];
        let r = t.renumber_ranks(&perm).unwrap();
        for (new, rt) in r.ranks.iter().enumerate() {
            assert_eq!(rt.rank, new as Rank);
        }
        // Old rank 0 (the sender) is now 1 and sends to old 2, now 0.
        assert_eq!(r.call_name(1, 0), "MPI_Send");
        assert_eq!(r.ranks[1].p2p.peer, vec![0]);
        assert_eq!(r.ranks[0].p2p.peer, vec![1]);
        // Old rank 1's wildcard receive is on rank 2, still a wildcard.
        assert_eq!(r.ranks[2].p2p.peer, vec![ANY_SOURCE]);
        assert!(r.ranks.iter().all(|rt| rt.collectives.root == vec![0]));
        // The bcast exit times travel with their process.
        assert_eq!(r.ranks[1].calls.exit(1), 60);
        assert_eq!(r.ranks[0].calls.exit(0), 25);
        assert_eq!(r.comms[COMM_WORLD as usize].members, vec![0, 1, 2]);
        assert_eq!(r.comms[1].members, vec![0, 1], "communicator-rank order kept");
        assert_eq!(r.comms[1].local_rank(1), t.comms[1].local_rank(0));
    }

    #[test]
    fn renumbering_back_gives_the_original() {
        let t = small();
        for perm in [vec![0, 1, 2], vec![2, 1, 0], vec![1, 0, 2], random_permutation(3, 9)] {
            let back = t
                .renumber_ranks(&perm)
                .unwrap()
                .renumber_ranks(&inverse(&perm))
                .unwrap();
            assert_eq!(
                serde_json::to_string(&back).unwrap(),
                serde_json::to_string(&t).unwrap(),
                "{perm:?}"
            );
        }
    }

    #[test]
    fn a_renumbered_trace_interns_communicators_under_their_new_members() {
        let mut r = small().renumber_ranks(&[1, 2, 0]).unwrap();
        assert_eq!(r.add_comm("pair", vec![0, 1]), 1);
        assert_eq!(
            r.add_comm("pair", vec![2, 0]),
            2,
            "the old members name a new communicator"
        );
    }

    #[test]
    fn non_permutations_are_refused_with_the_reason() {
        let t = small();
        let e = t.renumber_ranks(&[0, 1]).unwrap_err();
        assert!(e.message.contains("names 2 ranks but the trace has 3"), "{e}");
        let e = t.renumber_ranks(&[0, 3, 1]).unwrap_err();
        assert!(e.message.contains("rank 1 would become 3"), "{e}");
        let e = t.renumber_ranks(&[2, 0, 2]).unwrap_err();
        assert!(e.message.contains("ranks 0 and 2 would both become 2"), "{e}");
    }

    #[test]
    fn permutations_from_seeds_files_and_reversal() {
        for n in [0, 1, 5, 64] {
            check_permutation(&random_permutation(n, 3), n).unwrap();
            check_permutation(&reverse_permutation(n), n).unwrap();
        }
        assert_eq!(random_permutation(64, 3), random_permutation(64, 3));
        assert_ne!(random_permutation(64, 3), random_permutation(64, 4));
        assert_eq!(reverse_permutation(4), vec![3, 2, 1, 0]);
        let perm = inverse(&[2, 0, 1]);
        assert_eq!(perm, vec![1, 2, 0]);
        assert_eq!(parse_permutation("# placement\n2\n\n 0 \n1\n").unwrap(), vec![2, 0, 1]);
        let e = parse_permutation("1\n0\nthree\n").unwrap_err();
        assert!(e.message.starts_with("line 3: `three`"), "{e}");
        assert!(parse_permutation("-1\n").is_err());
    }
}
