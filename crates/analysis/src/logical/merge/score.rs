//! How well a merged program reproduces the classes' operations: the score that picks between
//! merges.

use super::*;
use std::borrow::Cow;

/// Function names and partner labels ([`Partner::label`]) as small integers, so that an
/// operation's [`ScoreKey`] is four words compared and hashed as such (the keys held both
/// names as strings: comparing and hashing them was a third of the score on a 16.6 M-call
/// run). Two keys are equal exactly when their names are.
#[derive(Clone, Default)]
pub(super) struct ScoreNames<'a> {
    functions: FastMap<&'a str, u32>,
    partners: FastMap<Cow<'a, str>, u32>,
}

impl<'a> ScoreNames<'a> {
    fn function(&mut self, f: &'a str) -> u32 {
        let next = self.functions.len() as u32;
        *self.functions.entry(f).or_insert(next)
    }

    fn partner(&mut self, p: &'a Partner) -> u32 {
        let label = match p {
            Partner::Direction(d) => Cow::Borrowed(d.as_str()),
            other => Cow::Owned(other.label()),
        };
        let next = self.partners.len() as u32;
        *self.partners.entry(label).or_insert(next)
    }
}

/// The names of a sequence of records, numbered once for every class the score compares with
/// it: per record its function's id, per operation (in order) its partner's.
pub(super) struct NamedRecords<'a> {
    pub records: &'a [Record],
    function: Vec<u32>,
    partner: Vec<u32>,
    /// Ids of `MPI_Send` and `MPI_Recv` (a `MPI_Sendrecv` a class runs one half of).
    send: u32,
    recv: u32,
}

impl<'a> NamedRecords<'a> {
    pub fn of(records: &'a [Record], names: &mut ScoreNames<'a>) -> NamedRecords<'a> {
        let (send, recv) = (names.function("MPI_Send"), names.function("MPI_Recv"));
        let function = records.iter().map(|r| names.function(&r.call.function)).collect();
        let partner = records
            .iter()
            .flat_map(|r| &r.call.ops)
            .map(|o| names.partner(&o.partner))
            .collect();
        NamedRecords {
            records,
            function,
            partner,
            send,
            recv,
        }
    }
}

/// Point-to-point operations of `records` as comparable keys (names numbered in `names`).
pub(super) fn op_keys<'a>(records: impl Iterator<Item = &'a LogicalCall>, names: &mut ScoreNames<'a>) -> Vec<ScoreKey> {
    let mut out = Vec::new();
    for c in records {
        let f = names.function(&c.function);
        for o in &c.ops {
            out.push((
                f,
                o.dir == tracelogic_model::P2pDir::Send,
                names.partner(&o.partner),
                o.bytes,
            ));
        }
    }
    out
}

/// [`op_keys`] of `named`'s records as the class of `rank` executes them ([`restrict_call`]
/// with its class's sizes, `here` its directions, sorted), without building the calls.
/// `visible` says whether the class has an operation's direction (given its number among
/// every operation of the records, and the operation).
pub(super) fn class_keys(
    named: &NamedRecords<'_>,
    rank: Rank,
    visible: &dyn Fn(usize, &Operation) -> bool,
    here: &[&str],
) -> Vec<ScoreKey> {
    let mut out = Vec::with_capacity(named.partner.len());
    let mut first = 0usize;
    for (at, r) in named.records.iter().enumerate() {
        let call = &r.call;
        let ops = first;
        first += call.ops.len();
        if !call.runs_on(rank) {
            continue;
        }
        let key = |f: u32, k: usize, o: &Operation, bytes: u64| {
            (
                f,
                o.dir == tracelogic_model::P2pDir::Send,
                named.partner[ops + k],
                bytes,
            )
        };
        if !call.kind.is_p2p() {
            out.extend(
                call.ops
                    .iter()
                    .enumerate()
                    .map(|(k, o)| key(named.function[at], k, o, o.bytes)),
            );
            continue;
        }
        let visible = |(k, o): &(usize, &Operation)| o.runs_on(rank) && visible(ops + k, o);
        let count = call.ops.iter().enumerate().filter(visible).count();
        let function = match call.ops.iter().enumerate().find(visible).map(|(_, o)| o) {
            Some(o) if call.kind == CallKind::SendRecv && count == 1 && call.ops.len() == 2 => match o.dir {
                tracelogic_model::P2pDir::Send => named.send,
                tracelogic_model::P2pDir::Recv => named.recv,
            },
            _ => named.function[at],
        };
        out.extend(
            call.ops
                .iter()
                .enumerate()
                .filter(visible)
                .map(|(k, o)| key(function, k, o, o.class_bytes(here))),
        );
    }
    out
}

/// Reproduced operations of every class under the merged `records`, as a share weighted by the
/// ranks each class stands for.
pub(in crate::logical) fn score(records: &[Record], classes: &[ClassTrace], names: &[String], weights: &[u64]) -> f64 {
    let index: FastMap<&str, usize> = names.iter().enumerate().map(|(k, n)| (n.as_str(), k)).collect();
    let mut ids = ScoreNames::default();
    let named = NamedRecords::of(records, &mut ids);
    // Per operation of `records`: its direction's index (looked up once, not once per class).
    const NOT_A_DIRECTION: usize = usize::MAX;
    let direction: Vec<Option<usize>> = records
        .iter()
        .flat_map(|r| &r.call.ops)
        .map(|o| match &o.partner {
            Partner::Direction(d) => index.get(d.as_str()).copied(),
            _ => Some(NOT_A_DIRECTION),
        })
        .collect();
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
        let visible = |g: usize, _: &Operation| match direction[g] {
            Some(NOT_A_DIRECTION) => true,
            Some(k) => class.visible[k],
            None => false,
        };
        let a = class_keys(&named, class.rank, &visible, &here);
        let b = op_keys(class.records.iter().map(|r| &r.call), &mut ids.clone());
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
