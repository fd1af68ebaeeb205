//! How many bytes of heap the event model holds: per table, what its rows use (length ×
//! element size) and what its columns have allocated (capacity × element size).
//!
//! The event tables ([`Calls`], [`P2p`], [`Collectives`], [`MetricSamples`]) are what grows
//! with a trace; everything else (names, call paths, communicators, locations, metadata) is
//! counted together under [`HeapBytes::other`], strings at their capacity.

use crate::{Calls, Collectives, MetricSamples, P2p, RankTrace, Trace};
use serde::{Deserialize, Serialize};

/// Bytes of one or more columns: in use and allocated.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bytes {
    /// Length × element size.
    pub used: u64,
    /// Capacity × element size.
    pub allocated: u64,
}

impl Bytes {
    /// The bytes of one vector.
    pub fn of<T>(v: &Vec<T>) -> Bytes {
        let size = std::mem::size_of::<T>() as u64;
        Bytes {
            used: v.len() as u64 * size,
            allocated: v.capacity() as u64 * size,
        }
    }
}

impl std::ops::Add for Bytes {
    type Output = Bytes;
    fn add(self, o: Bytes) -> Bytes {
        Bytes {
            used: self.used + o.used,
            allocated: self.allocated + o.allocated,
        }
    }
}

impl std::ops::AddAssign for Bytes {
    fn add_assign(&mut self, o: Bytes) {
        *self = *self + o;
    }
}

impl std::iter::Sum for Bytes {
    fn sum<I: Iterator<Item = Bytes>>(iter: I) -> Bytes {
        iter.fold(Bytes::default(), |a, b| a + b)
    }
}

/// Heap bytes of a trace's event model, by table ([`Trace::heap_bytes`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeapBytes {
    /// The [`Calls`] columns of every rank.
    pub calls: Bytes,
    /// The [`P2p`] columns of every rank.
    pub p2p: Bytes,
    /// The [`Collectives`] columns of every rank.
    pub collectives: Bytes,
    /// Metric samples of every rank.
    pub metrics: Bytes,
    /// The rest: the rank list, locations, names, call paths, communicators, metadata,
    /// warnings, Cartesian topologies.
    pub other: Bytes,
}

impl HeapBytes {
    /// All tables together.
    pub fn total(&self) -> Bytes {
        self.calls + self.p2p + self.collectives + self.metrics + self.other
    }
}

fn string(s: &String) -> Bytes {
    Bytes {
        used: s.len() as u64,
        allocated: s.capacity() as u64,
    }
}

fn strings(v: &Vec<String>) -> Bytes {
    Bytes::of(v) + v.iter().map(string).sum()
}

impl Calls {
    /// Heap bytes of the columns.
    pub fn heap_bytes(&self) -> Bytes {
        self.func.heap_bytes()
            + Bytes::of(&self.kind)
            + self.enter.heap_bytes()
            + self.duration.heap_bytes()
            + self.callpath.heap_bytes()
            + Bytes::of(self.location.stored())
    }
}

impl P2p {
    /// Heap bytes of the columns.
    pub fn heap_bytes(&self) -> Bytes {
        Bytes::of(&self.post)
            + self.complete.heap_bytes()
            + Bytes::of(&self.dir)
            + self.peer.heap_bytes()
            + self.tag.heap_bytes()
            + Bytes::of(self.comm.stored())
            + self.bytes.heap_bytes()
    }
}

impl Collectives {
    /// Heap bytes of the columns.
    pub fn heap_bytes(&self) -> Bytes {
        Bytes::of(&self.call)
            + Bytes::of(&self.op)
            + Bytes::of(self.comm.stored())
            + Bytes::of(&self.root)
            + Bytes::of(&self.bytes_sent)
            + Bytes::of(&self.bytes_recv)
    }
}

impl MetricSamples {
    /// Heap bytes of the columns.
    pub fn heap_bytes(&self) -> Bytes {
        Bytes::of(&self.time) + Bytes::of(&self.value)
    }
}

impl RankTrace {
    /// Heap bytes of the rank's tables (the locations and the metric list count as `other`).
    pub fn heap_bytes(&self) -> HeapBytes {
        let locations = Bytes::of(&self.locations) + self.locations.iter().map(|l| string(&l.name)).sum();
        HeapBytes {
            calls: self.calls.heap_bytes(),
            p2p: self.p2p.heap_bytes(),
            collectives: self.collectives.heap_bytes(),
            metrics: self.metrics.iter().map(MetricSamples::heap_bytes).sum(),
            other: locations + Bytes::of(&self.metrics),
        }
    }

    /// Give back every column's unused capacity (a reader that reserved by an estimate, or
    /// grew its columns by doubling, calls this once the rank is built).
    pub fn shrink_to_fit(&mut self) {
        let c = &mut self.calls;
        c.func.shrink_to_fit();
        c.kind.shrink_to_fit();
        c.enter.shrink_to_fit();
        c.duration.shrink_to_fit();
        c.callpath.shrink_to_fit();
        c.location.shrink_to_fit();
        let p = &mut self.p2p;
        p.post.shrink_to_fit();
        p.complete.shrink_to_fit();
        p.dir.shrink_to_fit();
        p.peer.shrink_to_fit();
        p.tag.shrink_to_fit();
        p.comm.shrink_to_fit();
        p.bytes.shrink_to_fit();
        let k = &mut self.collectives;
        k.call.shrink_to_fit();
        k.op.shrink_to_fit();
        k.comm.shrink_to_fit();
        k.root.shrink_to_fit();
        k.bytes_sent.shrink_to_fit();
        k.bytes_recv.shrink_to_fit();
        for m in &mut self.metrics {
            m.time.shrink_to_fit();
            m.value.shrink_to_fit();
        }
        self.metrics.shrink_to_fit();
        self.locations.shrink_to_fit();
    }
}

impl Trace {
    /// Heap bytes the trace holds, by table, in use and allocated. The hash indexes the
    /// builders keep (names, call paths, communicators) are not counted.
    pub fn heap_bytes(&self) -> HeapBytes {
        let mut h: HeapBytes = self
            .ranks
            .iter()
            .map(RankTrace::heap_bytes)
            .fold(HeapBytes::default(), |a, b| HeapBytes {
                calls: a.calls + b.calls,
                p2p: a.p2p + b.p2p,
                collectives: a.collectives + b.collectives,
                metrics: a.metrics + b.metrics,
                other: a.other + b.other,
            });
        let names =
            strings(self.functions.names_vec()) + strings(self.regions.names_vec()) + strings(self.metrics.names_vec());
        let callpaths = Bytes::of(&self.callpaths) + self.callpaths.iter().map(Bytes::of).sum();
        let comms = Bytes::of(&self.comms) + self.comms.iter().map(|c| string(&c.name) + Bytes::of(&c.members)).sum();
        let meta = Bytes::of(&self.meta) + self.meta.iter().map(|(k, v)| string(k) + string(v)).sum();
        h.other += Bytes::of(&self.ranks)
            + string(&self.format)
            + string(&self.source)
            + names
            + callpaths
            + comms
            + meta
            + strings(&self.warnings)
            + Bytes::of(&self.cartesian)
            + self
                .cartesian
                .iter()
                .map(|t| {
                    Bytes::of(&t.dims)
                        + Bytes::of(&t.periods)
                        + Bytes::of(&t.coords)
                        + t.coords.iter().map(Bytes::of).sum()
                })
                .sum();
        h
    }

    /// Give back the unused capacity of every rank's columns ([`RankTrace::shrink_to_fit`]).
    pub fn shrink_to_fit(&mut self) {
        self.ranks.iter_mut().for_each(RankTrace::shrink_to_fit);
    }
}
