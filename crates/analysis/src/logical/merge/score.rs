//! How well a merged program reproduces the classes' operations: the score that picks between
//! merges.

use super::*;

pub(super) fn score_key<'a>(function: &'a str, o: &'a Operation, bytes: u64) -> ScoreKey<'a> {
    let partner = match &o.partner {
        Partner::Direction(d) => std::borrow::Cow::Borrowed(d.as_str()),
        other => std::borrow::Cow::Owned(other.label()),
    };
    (function, o.dir == tracelogic_model::P2pDir::Send, partner, bytes)
}

/// Point-to-point operations of `records` as comparable keys.
pub(super) fn op_keys<'a>(records: impl Iterator<Item = &'a LogicalCall>) -> Vec<ScoreKey<'a>> {
    records
        .flat_map(|c| c.ops.iter().map(move |o| score_key(&c.function, o, o.bytes)))
        .collect()
}

/// [`op_keys`] of `records` as the class of `rank` executes them ([`restrict_call`] with its
/// class's sizes, `here` its directions, sorted), without building the calls.
pub(super) fn class_keys<'a>(
    records: &'a [Record],
    rank: Rank,
    visible: &dyn Fn(&Operation) -> bool,
    here: &[&str],
) -> Vec<ScoreKey<'a>> {
    let mut out = Vec::new();
    for r in records.iter().filter(|r| r.call.runs_on(rank)) {
        let call = &r.call;
        if !call.kind.is_p2p() {
            out.extend(call.ops.iter().map(|o| score_key(&call.function, o, o.bytes)));
            continue;
        }
        let visible = |o: &Operation| o.runs_on(rank) && visible(o);
        let count = call.ops.iter().filter(|o| visible(o)).count();
        let function: &str = match call.ops.iter().find(|o| visible(o)) {
            Some(o) if call.kind == CallKind::SendRecv && count == 1 && call.ops.len() == 2 => match o.dir {
                tracelogic_model::P2pDir::Send => "MPI_Send",
                tracelogic_model::P2pDir::Recv => "MPI_Recv",
            },
            _ => &call.function,
        };
        out.extend(
            call.ops
                .iter()
                .filter(|o| visible(o))
                .map(|o| score_key(function, o, o.class_bytes(here))),
        );
    }
    out
}

/// Reproduced operations of every class under the merged `records`, as a share weighted by the
/// ranks each class stands for.
pub(in crate::logical) fn score(records: &[Record], classes: &[ClassTrace], names: &[String], weights: &[u64]) -> f64 {
    let index: FastMap<&str, usize> = names.iter().enumerate().map(|(k, n)| (n.as_str(), k)).collect();
    // Each class's share on every core (natively), summed in class order.
    let shares = crate::logical::each_index(classes.len(), |c| {
        let class = &classes[c];
        let mut here: Vec<&str> = names
            .iter()
            .zip(&class.visible)
            .filter(|(_, &v)| v)
            .map(|(n, _)| n.as_str())
            .collect();
        here.sort_unstable();
        let visible = |o: &Operation| match &o.partner {
            Partner::Direction(d) => index.get(d.as_str()).is_some_and(|&k| class.visible[k]),
            _ => true,
        };
        let a = class_keys(records, class.rank, &visible, &here);
        let b = op_keys(class.records.iter().map(|r| &r.call));
        let longest = a.len().max(b.len());
        if longest == 0 {
            1.0
        } else {
            crate::logical::lcs_len(&a, &b) as f64 / longest as f64
        }
    });
    let (mut num, mut den) = (0.0, 0.0);
    for (c, share) in shares.into_iter().enumerate() {
        let w = weights.get(c).copied().unwrap_or(1) as f64;
        num += w * share;
        den += w;
    }
    if den == 0.0 {
        1.0
    } else {
        num / den
    }
}
