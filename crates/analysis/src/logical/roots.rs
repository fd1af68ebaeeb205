//! Each rank's own world root of collectives on communicators smaller than the run: records
//! compare such a root by its rank in the communicator ([`Collective::root_in_comm`]), so one
//! record stands for ranks of different communicators (GROMACS gathers on every pair of ranks to
//! the pair's first rank), and [`Collective::root_by_rank`] gives every rank back its own.

#[allow(unused_imports)]
use super::*;

/// World roots of `rank`'s collectives, in call order (one per call, as the records have).
fn own_roots(trace: &Trace, rank: Rank) -> Vec<Option<Rank>> {
    let col = &trace.ranks[rank as usize].collectives;
    let mut at: Vec<(CallIdx, Option<Rank>)> = col
        .call
        .iter()
        .zip(&col.root)
        .map(|(&c, &r)| (c, (r != NO_ROOT).then_some(r)))
        .collect();
    // The last collective naming a call, as `records_of` keeps it.
    at.reverse();
    at.sort_by_key(|&(c, _)| c);
    at.dedup_by_key(|&mut (c, _)| c);
    at.into_iter().map(|(_, r)| r).collect()
}

/// Fills [`Collective::root_by_rank`] of `records` from every rank's own collectives, lined up
/// in order with the records the rank executes; a rank whose count differs is left out (its
/// expansion keeps `root`). Runs only when some record has a root in a smaller communicator.
pub(super) fn fit_rank_roots(trace: &Trace, records: &mut [Record]) {
    let rooted: Vec<usize> = records
        .iter()
        .enumerate()
        .filter(|(_, r)| r.call.collective.is_some())
        .map(|(i, _)| i)
        .collect();
    if !rooted.iter().any(|&i| {
        records[i]
            .call
            .collective
            .as_ref()
            .is_some_and(|c| c.root_in_comm.is_some())
    }) {
        return;
    }
    for rank in 0..trace.num_ranks() {
        let mine: Vec<usize> = rooted
            .iter()
            .copied()
            .filter(|&i| records[i].call.runs_on(rank))
            .collect();
        let own = own_roots(trace, rank);
        if own.len() != mine.len() {
            continue;
        }
        for (&i, root) in mine.iter().zip(own) {
            let Some(c) = records[i].call.collective.as_mut() else {
                continue;
            };
            let (Some(root), true) = (root, c.root_in_comm.is_some()) else {
                continue;
            };
            if Some(root) == c.root {
                continue;
            }
            match c.root_by_rank.iter_mut().find(|e| e.root == root) {
                Some(e) => e.ranks.push(rank),
                None => c.root_by_rank.push(RankRoot {
                    root,
                    ranks: vec![rank],
                }),
            }
        }
    }
    for &i in &rooted {
        if let Some(c) = records[i].call.collective.as_mut() {
            c.root_by_rank.sort_by_key(|e| e.root);
        }
    }
}
