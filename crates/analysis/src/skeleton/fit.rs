//! Whether a skeleton may receive with the recorded sizes when it matches by order.
//!
//! When the run's tags cannot be replayed ([`super::receive_tags_kept`],
//! [`LogicalTrace::tags_consistent`]), the skeleton receives with `MPI_ANY_TAG`, so the k-th
//! receive a rank posts from a neighbour takes the k-th message that neighbour sends it (MPI's
//! non-overtaking rule). A program that told its messages apart by tag (Meep posts one receive
//! per field component and the neighbour sends them in another order) would then receive a
//! large message into a small receive: `MPI_ERR_TRUNCATE`. This replays that matching on the
//! program's expansion, rank by rank, and says which receives are smaller than a message they
//! would take; the skeleton posts those at the largest message they take. Matching by tag gets
//! the same check: the expansion carries the sizes the skeleton sends, and a summarised sequence
//! is sent as its mean, which can exceed what the receiving rank recorded for that message.
//! Receives the logical trace keeps from any source are those no message matched (a program
//! that cancels a receive it posted ahead; matched wildcards name their sender): the skeleton posts those from
//! `MPI_PROC_NULL`, so they complete at once and take no message meant for a later receive.
//!
//! Cost: O(ranks × calls of the expanded program), each rank's expansion walked without
//! building its calls ([`ExpansionWalk`]); above [`FIT_CHECK_LIMIT`] operations it is
//! not checked and the receives are posted at the largest size (safe, and said in the source).

use crate::compress::Program;
use crate::logical::{ExpansionWalk, FastHasher, LogicalTrace};
use tracelogic_model::Rank;

/// Maps keyed by ranks and tags, filled once per operation of every rank's expansion: hashed by
/// [`FastHasher`] (SipHash was a tenth of the check on a 16.6 M-call run).
type HashMap<K, V> = std::collections::HashMap<K, V, std::hash::BuildHasherDefault<FastHasher>>;

/// Most expanded calls (all ranks together) the check replays.
pub const FIT_CHECK_LIMIT: usize = 20_000_000;

/// A receive operation of the program: the [`crate::compress::Node::Call`] id and the
/// operation's index in that call.
pub type ReceiveOp = (u32, usize);

/// What replaying the program's matching by order says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderMatching {
    /// Matched by order, the receive operations some message would not fit in, each with the
    /// largest message it takes: the skeleton posts those (and only those) at that size.
    pub too_small_by_order: std::collections::HashMap<ReceiveOp, u64>,
    /// The same, matched by tag (each receive takes the next message of its sender with its
    /// tag): a summarised size is sent as its mean, which can exceed what the receiver recorded
    /// for that message (GROMACS: a rank's sizes listed, its neighbour's summarised).
    pub too_small_by_tag: std::collections::HashMap<ReceiveOp, u64>,
    /// Per world rank, how many of its receives from any source a message will match (none: a
    /// receive the logical trace keeps from any source is one no message matched, as hpcc's
    /// RandomAccess cancels the one it posted ahead); `Some` only when there are such receives.
    pub any_source_matched: Option<Vec<u64>>,
    /// Matched by tag instead, every receive finds a message at least as large and every
    /// message a receive: the program's tags can be replayed as they are. With receives of any
    /// tag in the program, only when matching by order would give a receive of one tag a
    /// message of another ([`OrderMatching::order_breaks_tags`]).
    pub tags_match: bool,
    /// Matched by order, some receive of a given tag would take a message sent with another
    /// tag: the program tells its messages from one sender apart by tag, and by order a
    /// receive may wait for a message that the sender only sends after something it waits for
    /// (mplrs's master posts a receive per tag for each worker; the worker's tag-6 message
    /// comes first, so by order the tag-9 receive takes it and the tag-6 receive waits for
    /// ever).
    pub order_breaks_tags: bool,
}

/// A receive posted in the expansion: its size, its tag (negative: any) and where it comes
/// from.
#[derive(Clone, Copy)]
struct Posted {
    bytes: u64,
    tag: i32,
    op: ReceiveOp,
}

/// Replays the matching by order (and by tag) on the expansion of `program` (the sizes the
/// skeleton sends: a summarised sequence's mean); `None` when the program is too large to
/// check.
pub fn receives_fit_in_order(logical: &LogicalTrace, program: &Program) -> Option<OrderMatching> {
    let ranks = logical.ranks as usize;
    if program.raw_length.saturating_mul(ranks.max(1)) > FIT_CHECK_LIMIT {
        return None;
    }
    let (calls, ids) = program.expand_with_ids(FIT_CHECK_LIMIT).ok()?;
    // Per (sender, receiver): the sizes and tags sent in order, and the receives posted in
    // order.
    let mut sent: HashMap<(Rank, Rank), Vec<(u64, i32)>> = HashMap::default();
    let mut posted: HashMap<(Rank, Rank), Vec<Posted>> = HashMap::default();
    let mut any_posted = vec![0u64; ranks];
    let mut tags_known = true;
    let tables = logical.expansion_tables();
    let walk = ExpansionWalk::of(&calls, ranks);
    let mut kept = Vec::new();
    for r in 0..ranks as Rank {
        let table = tables.get(r as usize)?;
        walk.each_operation(table, r, &mut kept, |peer, send, bytes, tag, (call, k)| {
            match (peer, send) {
                (Some(peer), true) => sent.entry((r, peer)).or_default().push((bytes, tag)),
                (Some(peer), false) => {
                    posted.entry((peer, r)).or_default().push(Posted {
                        bytes,
                        tag,
                        op: (ids[call], k),
                    });
                    tags_known &= tag >= 0;
                }
                (None, false) => any_posted[r as usize] += 1,
                (None, true) => {}
            }
        });
    }
    let mut order_breaks_tags = false;
    let mut by_order: Vec<(Posted, u64)> = Vec::new();
    let mut by_tag: Vec<(Posted, u64)> = Vec::new();
    let mut every_one_matched = true;
    for (key, receives) in &posted {
        let sends = sent.get(key).map_or(&[][..], Vec::as_slice);
        for (k, recv) in receives.iter().enumerate() {
            let send = sends.get(k).copied();
            order_breaks_tags |= send.is_some_and(|(_, t)| recv.tag >= 0 && t >= 0 && t != recv.tag);
            by_order.push((*recv, send.map_or(0, |s| s.0)));
        }
        every_one_matched &= match_by_tag(receives, sends, &mut by_tag);
    }
    // A sender's messages to a receiver that posts none.
    every_one_matched &= sent.keys().all(|key| posted.contains_key(key));
    let too_small_by_order = too_small(&by_order);
    let too_small_by_tag = too_small(&by_tag);
    // A receive the logical trace keeps from any source is one the trace's matching found no
    // message for (a matched wildcard names its sender): hpcc's RandomAccess cancels the one it
    // posted ahead. Counting messages left over instead is not enough: hpcc on 6 ranks leaves one
    // on two ranks that the named receives of another order take.
    let surplus = any_posted.iter().any(|&p| p > 0);
    // Where matching by order breaks the program's tags, receives a message does not fit by tag
    // are posted at the largest it takes, as by order (mplrs: 40 of them).
    let tags_match = (tags_known && too_small_by_tag.is_empty() || order_breaks_tags) && !surplus && every_one_matched;
    let matched = vec![0u64; ranks];
    Some(OrderMatching {
        too_small_by_order,
        too_small_by_tag,
        any_source_matched: surplus.then_some(matched),
        tags_match,
        order_breaks_tags,
    })
}

/// Matching by tag of one (sender, receiver) pair, as MPI does when every message has arrived
/// before the receives are posted: each receive, in posting order, takes the first message not
/// yet taken with its tag, a receive of any tag the first message not yet taken. Pushes each
/// receive with the size it takes (0: none) to `out`; true when every message is taken and
/// the receives that take none come after every receive of their tag that takes one. Without
/// receives of any tag this is "the k-th receive of a tag takes the k-th message of that tag".
/// O(receives + messages).
fn match_by_tag(receives: &[Posted], sends: &[(u64, i32)], out: &mut Vec<(Posted, u64)>) -> bool {
    // Per tag, the positions of its messages, in order, and how many are taken; `taken` per
    // message for receives of any tag, which take the first message left whatever its tag.
    let mut of_tag: HashMap<i32, (Vec<usize>, usize)> = HashMap::default();
    for (i, &(_, t)) in sends.iter().enumerate() {
        of_tag.entry(t).or_default().0.push(i);
    }
    let mut taken = vec![false; sends.len()];
    let mut first_left = 0usize;
    // A receive without a message is one the program left pending (mplrs posts its next
    // round's receives before it stops, and one of a tag no message carries): only after
    // every receive of its tag (or of any tag) that takes one.
    let mut unmatched_before: HashMap<i32, bool> = HashMap::default();
    let mut all = true;
    for recv in receives {
        let pick = if recv.tag >= 0 {
            of_tag.get_mut(&recv.tag).and_then(|(at, next)| {
                while *next < at.len() && taken[at[*next]] {
                    *next += 1;
                }
                at.get(*next).copied()
            })
        } else {
            while first_left < sends.len() && taken[first_left] {
                first_left += 1;
            }
            (first_left < sends.len()).then_some(first_left)
        };
        match pick {
            Some(i) => {
                taken[i] = true;
                all &= !unmatched_before.get(&recv.tag.max(-1)).copied().unwrap_or(false);
                out.push((*recv, sends[i].0));
            }
            None => {
                unmatched_before.insert(recv.tag.max(-1), true);
                out.push((*recv, 0));
            }
        }
    }
    all && taken.iter().all(|&t| t)
}

/// The receive operations that some message would not fit in, each with the largest size it
/// must be posted at to take every message (the largest of its own recorded sizes and of the
/// messages it takes), given each receive with the size of the message it takes.
fn too_small(matched: &[(Posted, u64)]) -> std::collections::HashMap<ReceiveOp, u64> {
    // Per receive operation: (some message does not fit, the largest size seen).
    let mut seen: std::collections::HashMap<ReceiveOp, (bool, u64)> = std::collections::HashMap::new();
    for (recv, send) in matched {
        let at = seen.entry(recv.op).or_default();
        at.0 |= recv.bytes < *send;
        at.1 = at.1.max(recv.bytes).max(*send);
    }
    seen.into_iter()
        .filter(|(_, (short, _))| *short)
        .map(|(op, (_, w))| (op, w))
        .collect()
}
