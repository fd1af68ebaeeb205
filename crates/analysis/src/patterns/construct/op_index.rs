//! Where each rank's operations sit among its events ([`OpIndex`], found once per analysis and
//! shared by its stages) and the disjoint sets the constructions join segments with.

use super::super::{EventRef, Events, RankEvents};
use tracelogic_model::{Time, Trace};

/// Disjoint sets over `0..n`, each named by its smallest member (so that the order of the
/// unions does not change the names); path halving. Shared with `chains.rs`.
pub(crate) struct UnionFind(pub(crate) Vec<u32>);

impl UnionFind {
    pub(crate) fn find(&mut self, mut x: u32) -> u32 {
        while self.0[x as usize] != x {
            let p = self.0[x as usize];
            self.0[x as usize] = self.0[p as usize];
            x = p;
        }
        x
    }
    pub(crate) fn union(&mut self, a: u32, b: u32) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
            self.0[hi as usize] = lo;
        }
    }
}

/// Event index of every point-to-point operation and collective of a rank.
pub(crate) fn op_events(events: &RankEvents, p2p: usize, coll: usize) -> (Vec<u32>, Vec<u32>) {
    let (mut p, mut c) = (vec![u32::MAX; p2p], vec![u32::MAX; coll]);
    for (i, e) in events.events.iter().enumerate() {
        match *e {
            EventRef::P2p(o) => p[o as usize] = i as u32,
            EventRef::Collective(o) => c[o as usize] = i as u32,
        }
    }
    (p, c)
}

/// Where every rank's operations sit among its events ([`op_events`] of each rank, by the
/// index in [`Events::ranks`]), and whether its events' calls are in time order: found once
/// per analysis (on every core natively) and shared by its stages — the alignment, every
/// construction, the chain and iteration splits — instead of each finding them again (16.6 M
/// events of LU C 128 walked about eight times).
pub(crate) struct OpIndex {
    ranks: Vec<(Vec<u32>, Vec<u32>)>,
    /// Per rank: the entry and the exit times of its events' calls never decrease along its
    /// events (a run of events then enters with its first call and exits with its last).
    ordered: Vec<bool>,
}

impl OpIndex {
    /// The index of every rank of `events`.
    pub(crate) fn of(trace: &Trace, events: &Events) -> OpIndex {
        let per_rank = crate::logical::per_rank::each_index(events.ranks.len(), |r| {
            let re = &events.ranks[r];
            let rt = &trace.ranks[re.rank as usize];
            let calls = &rt.calls;
            let ordered = re.calls.windows(2).all(|w| {
                let (a, b) = (w[0] as usize, w[1] as usize);
                calls.enter(a) <= calls.enter(b) && calls.exit(a) <= calls.exit(b)
            });
            (op_events(re, rt.p2p.len(), rt.collectives.len()), ordered)
        });
        let (ranks, ordered) = per_rank.into_iter().unzip();
        OpIndex { ranks, ordered }
    }

    /// Earliest entry and latest exit of the calls of rank `r`'s events `i0..i1` (not empty).
    pub(super) fn span(&self, trace: &Trace, events: &Events, r: usize, i0: usize, i1: usize) -> (Time, Time) {
        let re = &events.ranks[r];
        let calls = &trace.ranks[re.rank as usize].calls;
        let mine = &re.calls[i0..i1];
        match (self.ordered[r], mine.first(), mine.last()) {
            (true, Some(&a), Some(&b)) => (calls.enter(a as usize), calls.exit(b as usize)),
            _ => {
                let (mut t0, mut t1) = (Time::MAX, Time::MIN);
                for &call in mine {
                    t0 = t0.min(calls.enter(call as usize));
                    t1 = t1.max(calls.exit(call as usize));
                }
                (t0, t1)
            }
        }
    }

    /// Event of each point-to-point operation of rank `r` (`u32::MAX`: none).
    pub(crate) fn p2p(&self, r: usize) -> &[u32] {
        &self.ranks[r].0
    }

    /// Event of each collective of rank `r` (`u32::MAX`: none).
    pub(crate) fn collectives(&self, r: usize) -> &[u32] {
        &self.ranks[r].1
    }
}
