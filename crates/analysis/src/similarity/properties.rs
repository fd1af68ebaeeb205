//! Per-run properties (PACPM Definitions 1–3) and the communication graph, read from a trace.

use crate::topology::{first_auto_cut, Threshold};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use tracelogic_model::{CallKind, CollectiveOp, P2pDir, Trace};

/// What stands for `work_j` in the temporal property (Definition 1), best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum WorkMeasure {
    /// Floating-point operations (the paper's FLOP count), from the `PAPI_FP_OPS` counter.
    #[serde(rename = "PAPI_FP_OPS")]
    FpOps,
    /// Instructions, from the `PAPI_TOT_INS` counter.
    #[serde(rename = "PAPI_TOT_INS")]
    TotIns,
    /// Time spent outside MPI between a rank's first and last MPI call.
    #[serde(rename = "compute-time")]
    ComputeTime,
}

impl WorkMeasure {
    /// Every measure, in order of preference.
    pub const ALL: [WorkMeasure; 3] = [WorkMeasure::FpOps, WorkMeasure::TotIns, WorkMeasure::ComputeTime];

    /// The name used in output (`PAPI_FP_OPS`, `PAPI_TOT_INS`, `compute-time`).
    pub fn name(self) -> &'static str {
        match self {
            WorkMeasure::FpOps => "PAPI_FP_OPS",
            WorkMeasure::TotIns => "PAPI_TOT_INS",
            WorkMeasure::ComputeTime => "compute-time",
        }
    }

    /// Unit of the temporal property under this measure.
    pub fn temporal_unit(self) -> &'static str {
        match self {
            WorkMeasure::FpOps => "sends per 10^9 floating-point operations",
            WorkMeasure::TotIns => "sends per 10^9 instructions",
            WorkMeasure::ComputeTime => "sends per second of compute",
        }
    }

    /// Work units per displayed unit (10^9 events, or 10^9 ns = 1 s).
    pub(super) fn scale(self) -> f64 {
        1e9
    }
}

/// Per-rank work under one measure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankWork {
    /// The measure.
    pub measure: WorkMeasure,
    /// Work of each rank (counter events, or nanoseconds of compute).
    pub work: Vec<f64>,
}

/// The per-rank properties and the communication graph of one run: everything a comparison
/// needs, computed once per run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunProperties {
    /// Where the run came from (the trace's source).
    pub source: String,
    /// Number of ranks.
    pub ranks: u32,
    /// Point-to-point messages sent by each rank (`|sends_j|`).
    pub sends: Vec<u64>,
    /// Bytes sent by each rank (the volume property, Definition 2).
    pub volume: Vec<u64>,
    /// Distinct partners of each rank, sending or receiving (the spatial property, Definition 3);
    /// the rank's degree in [`RunProperties::edges`].
    pub spatial: Vec<u32>,
    /// Work per rank under every measure this run offers, best first.
    pub work: Vec<RankWork>,
    /// The communication graph: pairs `[a, b]`, `a < b`, that exchange messages (after the
    /// optional filter).
    pub edges: Vec<[u32; 2]>,
    /// Communicating pairs the filter removed.
    pub filtered_pairs: usize,
    /// Rooted collective operations (`MPI_Bcast`, `MPI_Reduce`, `MPI_Gather(v)`,
    /// `MPI_Scatter(v)` and their non-blocking forms) each rank was the root of, from its own
    /// records: the role a run names by itself, whatever its numbering ([`collective_root`]).
    #[serde(default)]
    pub roots: Vec<u64>,
    /// The run cut into [`PARTS`] parts at its collectives, for the test of whether a property's
    /// rank order is consistent over the run ([`RunParts`]). `None` when the run has too few
    /// collectives over all ranks, or for properties computed before parts existed (then only
    /// constancy is tested).
    #[serde(default)]
    pub parts: Option<RunParts>,
    /// When no filter was asked for, the graph filtered by `tracelogic topology`'s first cut
    /// ([`first_auto_cut`]) if that cut drops a pair: a complete graph tells nothing apart, so
    /// two complete runs are compared on these (`Comparison::complete_graphs_filtered`), and
    /// the pairing reads roles from them when the runs' own graphs are not isomorphic
    /// (`Pairing::on_cut_graphs`).
    #[serde(default)]
    pub auto_graph: Option<FilteredGraph>,
    /// How the run sequences its collective operations: each rank's consecutive pairs of
    /// collectives (`Reduce>Bcast`; `^>Barrier` for a rank's first), counted over all ranks.
    /// What a run without point-to-point messages is compared on
    /// (`Comparison::collective_mix_similarity`): pairs, not single operations, tell a loop of
    /// reductions each followed by a broadcast (ExaML) from runs of broadcasts (Elk).
    #[serde(default)]
    pub collective_mix: BTreeMap<String, u64>,
    /// How the run sequences all its communication operations: each rank's consecutive pairs
    /// of operations (`Isend>Irecv`, `Irecv>Completion`, `Completion>Allreduce`: point-to-point
    /// calls by kind, collectives by operation, a run of completions or probes as one, since how
    /// often a rank polls depends on timing), counted over all ranks. What settles a verdict θ
    /// and ε cannot (`Comparison::operation_mix_similarity`).
    #[serde(default)]
    pub operation_mix: BTreeMap<String, u64>,
}

/// A run's communication graph after a filter ([`RunProperties::auto_graph`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FilteredGraph {
    /// The pairs kept, `[a, b]` with `a < b`, sorted.
    pub edges: Vec<[u32; 2]>,
    /// Each rank's degree in `edges`.
    pub spatial: Vec<u32>,
    /// Communicating pairs the filter removed.
    pub filtered_pairs: usize,
}

impl RunProperties {
    /// The run with its graph replaced by `g` (and no further filtered graph).
    pub fn with_graph(&self, g: &FilteredGraph) -> RunProperties {
        RunProperties {
            edges: g.edges.clone(),
            spatial: g.spatial.clone(),
            filtered_pairs: g.filtered_pairs,
            auto_graph: None,
            ..self.clone()
        }
    }

    /// Every pair of its ranks is an edge (at least three ranks).
    pub fn graph_complete(&self) -> bool {
        let n = u64::from(self.ranks);
        n >= 3 && self.edges.len() as u64 == n * (n - 1) / 2
    }
}

/// Parts each rank's run is cut into for [`RunParts`].
pub const PARTS: usize = 8;

/// Each rank's run cut into [`PARTS`] parts at its collective operations over all ranks: part `k`
/// runs from collective number `k·C/PARTS` to the next part's first, `C` the number of such
/// collectives, which every rank calls in the same order, so part `k` holds the same steps of
/// every rank (equal windows of time would not: ranks drift, and a window's share of a step is
/// timing noise; equal shares of each rank's sends would not when ranks send different numbers
/// of messages). A send counts in the part of its posting call, compute time in the part of the
/// call it precedes. Why: two runs of one program never agree exactly, and a property whose rank
/// order is the same in every part reflects the program, while one whose order reshuffles from
/// part to part reflects step-to-step variation only (see [`super::rank_order_evidence`]).
/// Runs with fewer than `2·PARTS` such collectives have no parts.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RunParts {
    /// `sends[r][k]`: point-to-point sends of rank `r` in part `k`.
    pub sends: Vec<Vec<u64>>,
    /// `volume[r][k]`: bytes of those sends.
    pub volume: Vec<Vec<u64>>,
    /// `work[r][k]`: nanoseconds outside MPI in part `k` (the gaps before its calls).
    pub work: Vec<Vec<f64>>,
}

/// The root of a run's rooted collectives: the rank that was root of strictly more of them
/// than any other (`roots` as in [`RunProperties::roots`]); `None` when no rank was root, or
/// when several share the largest count. Why: a program roots its broadcasts and reductions at
/// one process (NAS: process 0) whatever world rank plays it, so it names that process
/// independently of the placement, and it is not a property θ measures.
pub fn collective_root(roots: &[u64]) -> Option<u32> {
    let max = *roots.iter().max()?;
    let mut at = roots
        .iter()
        .enumerate()
        .filter(|&(_, &c)| c == max)
        .map(|(r, _)| r as u32);
    let first = at.next()?;
    (max > 0 && at.next().is_none()).then_some(first)
}

/// Work per rank from a counter: accumulated counters (never decreasing) count from the start
/// of measurement, so the last value; anything else holds per-interval values, so the sum.
/// `None` unless every rank has a sample of the counter.
fn counter_work(trace: &Trace, name: &str) -> Option<Vec<f64>> {
    let id = trace
        .metrics
        .names()
        .iter()
        .position(|m| m.eq_ignore_ascii_case(name))? as u32;
    trace
        .ranks
        .iter()
        .map(|rt| {
            let series: Vec<&[f64]> = rt
                .metrics
                .iter()
                .filter(|s| s.metric == id && !s.value.is_empty())
                .map(|s| s.value.as_slice())
                .collect();
            if series.is_empty() {
                return None;
            }
            Some(
                series
                    .iter()
                    .map(|v| {
                        if v.windows(2).all(|w| w[0] <= w[1]) {
                            v[v.len() - 1]
                        } else {
                            v.iter().sum()
                        }
                    })
                    .filter(|x| x.is_finite())
                    .sum(),
            )
        })
        .collect()
}

/// [`RunParts`] of `trace`.
fn run_parts(trace: &Trace) -> Option<RunParts> {
    let n = trace.num_ranks() as usize;
    // The calls of each rank's collectives over all ranks: every rank makes the same sequence.
    let whole = |c: u32| trace.comms.get(c as usize).is_some_and(|comm| comm.members.len() == n);
    let marks: Vec<Vec<u32>> = trace
        .ranks
        .iter()
        .map(|rt| {
            let co = &rt.collectives;
            (0..co.len())
                .filter(|&i| whole(co.comm[i]))
                .map(|i| co.call[i])
                .collect()
        })
        .collect();
    let count = marks.first().map_or(0, Vec::len);
    if count < 2 * PARTS || marks.iter().any(|m| m.len() != count) {
        return None;
    }
    let mut parts = RunParts::default();
    for (rt, marks) in trace.ranks.iter().zip(&marks) {
        // Part k starts at collective number k·count/PARTS.
        let starts: Vec<u32> = (1..PARTS).map(|k| marks[k * count / PARTS]).collect();
        let part_of = |call: u32| starts.partition_point(|&b| b <= call);
        let (p, c) = (&rt.p2p, &rt.calls);
        let (mut sends, mut volume) = (vec![0u64; PARTS], vec![0u64; PARTS]);
        for i in (0..p.len()).filter(|&i| p.dir[i] == P2pDir::Send) {
            let k = part_of(p.post[i]);
            sends[k] += 1;
            volume[k] = volume[k].saturating_add(p.bytes.at(i));
        }
        let mut calls: Vec<(u64, u64, u32)> = (0..c.enter.len()).map(|i| (c.enter(i), c.exit(i), i as u32)).collect();
        if calls.windows(2).any(|w| w[0].0 > w[1].0) {
            calls.sort_unstable();
        }
        let mut work = vec![0.0; PARTS];
        let mut reach: Option<u64> = None;
        for (enter, exit, i) in calls {
            if let Some(r) = reach {
                work[part_of(i)] += enter.saturating_sub(r) as f64;
            }
            reach = Some(reach.map_or(exit, |r| r.max(exit)));
        }
        parts.sends.push(sends);
        parts.volume.push(volume);
        parts.work.push(work);
    }
    Some(parts)
}

/// Nanoseconds outside MPI between each rank's first call entry and last call exit: the gaps
/// of the union of its call intervals (threads' calls may overlap).
fn compute_time(trace: &Trace) -> Vec<f64> {
    trace
        .ranks
        .iter()
        .map(|rt| {
            let c = &rt.calls;
            let mut intervals: Vec<(u64, u64)> = c.enters().zip(c.exits()).collect();
            if intervals.windows(2).any(|w| w[0].0 > w[1].0) {
                intervals.sort_unstable();
            }
            let mut gaps = 0u64;
            let mut reach: Option<u64> = None;
            for (enter, exit) in intervals {
                if let Some(r) = reach {
                    gaps += enter.saturating_sub(r);
                }
                reach = Some(reach.map_or(exit, |r| r.max(exit)));
            }
            gaps as f64
        })
        .collect()
}

/// Directed traffic `from → to` as recorded: sends by `from`, receives by `to`.
#[derive(Default, Clone, Copy)]
struct Directed {
    sent_bytes: u64,
    sent_messages: u64,
    received_bytes: u64,
    received_messages: u64,
}

/// The per-rank properties and communication graph of `trace`. `filter` drops low-volume pairs
/// from the graph (and so from the spatial property) with the rule of `tracelogic topology`.
pub fn run_properties(trace: &Trace, filter: Option<Threshold>) -> RunProperties {
    let n = trace.num_ranks();
    let mut sends = vec![0u64; n as usize];
    let mut volume = vec![0u64; n as usize];
    let mut directed: HashMap<(u32, u32), Directed> = HashMap::new();
    for rt in &trace.ranks {
        let r = rt.rank;
        let p = &rt.p2p;
        for i in 0..p.len() {
            let peer = p.peer[i];
            match p.dir[i] {
                P2pDir::Send => {
                    sends[r as usize] += 1;
                    volume[r as usize] = volume[r as usize].saturating_add(p.bytes.at(i));
                    if peer < n && peer != r {
                        let d = directed.entry((r, peer)).or_default();
                        d.sent_bytes = d.sent_bytes.saturating_add(p.bytes.at(i));
                        d.sent_messages += 1;
                    }
                }
                P2pDir::Recv => {
                    if peer < n && peer != r {
                        let d = directed.entry((peer, r)).or_default();
                        d.received_bytes = d.received_bytes.saturating_add(p.bytes.at(i));
                        d.received_messages += 1;
                    }
                }
            }
        }
    }
    // A direction's traffic is what its sender recorded, or its receiver when the sender
    // recorded nothing.
    let by_bytes = directed.values().any(|d| d.sent_bytes > 0 || d.received_bytes > 0);
    let weight = |d: &Directed| match (by_bytes, d.sent_messages > 0) {
        (true, true) => d.sent_bytes,
        (true, false) => d.received_bytes,
        (false, true) => d.sent_messages,
        (false, false) => d.received_messages,
    };
    // Per pair: its weight and its messages (larger direction each), as `topology` weighs them.
    let mut by_pair: HashMap<(u32, u32), (u64, u64)> = HashMap::new();
    for (&(from, to), d) in &directed {
        let w = by_pair.entry((from.min(to), from.max(to))).or_insert((0, 0));
        w.0 = w.0.max(weight(d));
        w.1 = w.1.max(d.sent_messages.max(d.received_messages));
    }
    let mut pairs: Vec<((u32, u32), u64)> = by_pair.iter().map(|(&k, &(w, _))| (k, w)).collect();
    pairs.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
    // Pairs `topology`'s first cut keeps (the widest volume gap that does not split one exchange
    // by message size); `None` when it finds none.
    let auto_keep = || {
        let volumes: Vec<u64> = pairs.iter().map(|p| p.1).collect();
        let endpoints: Vec<(u32, u32)> = pairs.iter().map(|p| p.0).collect();
        let messages: Vec<u64> = pairs.iter().map(|p| by_pair[&p.0].1).collect();
        let messages = by_bytes.then_some(messages.as_slice());
        first_auto_cut(&volumes, &endpoints, messages, n)
            .0
            .map(|(keep, _)| keep)
    };
    let keep = match filter {
        None => pairs.len(),
        Some(Threshold::Percent(pct)) => {
            let max = pairs.first().map_or(0, |p| p.1) as f64;
            pairs.iter().take_while(|p| p.1 as f64 * 100.0 >= pct * max).count()
        }
        Some(Threshold::Auto) => auto_keep().unwrap_or(pairs.len()),
    };
    let graph_of = |keep: usize| {
        let mut edges: Vec<[u32; 2]> = pairs[..keep].iter().map(|&((a, b), _)| [a, b]).collect();
        edges.sort_unstable();
        let mut spatial = vec![0u32; n as usize];
        for &[a, b] in &edges {
            spatial[a as usize] += 1;
            spatial[b as usize] += 1;
        }
        FilteredGraph {
            edges,
            spatial,
            filtered_pairs: pairs.len() - keep,
        }
    };
    let FilteredGraph { edges, spatial, .. } = graph_of(keep);
    // Kept whenever the cut drops a pair: two complete runs are compared on it, and the pairing
    // reads roles from it when the runs' own graphs are not isomorphic.
    let auto_graph = if filter.is_none() {
        auto_keep().filter(|&k| k < pairs.len()).map(graph_of)
    } else {
        None
    };
    let mut work = Vec::new();
    for measure in WorkMeasure::ALL {
        let w = match measure {
            WorkMeasure::FpOps | WorkMeasure::TotIns => counter_work(trace, measure.name()),
            WorkMeasure::ComputeTime => Some(compute_time(trace)),
        };
        if let Some(work_per_rank) = w {
            work.push(RankWork {
                measure,
                work: work_per_rank,
            });
        }
    }
    RunProperties {
        source: trace.source.clone(),
        ranks: n,
        sends,
        volume,
        spatial,
        work,
        edges,
        filtered_pairs: pairs.len() - keep,
        roots: collective_roots(trace),
        parts: run_parts(trace),
        auto_graph,
        collective_mix: collective_mix(trace),
        operation_mix: operation_mix(trace),
    }
}

/// Consecutive pairs of communication operations over all ranks
/// ([`RunProperties::operation_mix`]). O(calls): counted in a table indexed by the two
/// operations' small ids, not hashed per call (16.6 M calls on NAS LU C 128).
fn operation_mix(trace: &Trace) -> BTreeMap<String, u64> {
    // Ids: a point-to-point kind by its place in `CallKind`, a collective after them, and the
    // start of a rank's sequence (`^`) last.
    const KINDS: usize = CallKind::Other as usize + 1;
    const IDS: usize = KINDS + CollectiveOp::Other as usize + 1;
    let id = |op: Operation| match op {
        Operation::PointToPoint(k) => k as usize,
        Operation::Collective(c) => KINDS + c as usize,
    };
    let mut names: Vec<Option<Operation>> = vec![None; IDS];
    let mut counts = vec![0u64; (IDS + 1) * IDS];
    for rt in &trace.ranks {
        let mut before = IDS;
        let mut collectives = rt.collectives.call.iter().zip(&rt.collectives.op).peekable();
        for (i, &kind) in rt.calls.kind.iter().enumerate() {
            let op = match kind {
                CallKind::Collective => {
                    while collectives.next_if(|&(&c, _)| (c as usize) < i).is_some() {}
                    match collectives.next_if(|&(&c, _)| c as usize == i) {
                        Some((_, &op)) => Operation::Collective(op),
                        None => continue,
                    }
                }
                CallKind::Send
                | CallKind::Isend
                | CallKind::Recv
                | CallKind::Irecv
                | CallKind::SendRecv
                | CallKind::Completion
                | CallKind::Probe => Operation::PointToPoint(kind),
                _ => continue,
            };
            let this = id(op);
            let polls = matches!(op, Operation::PointToPoint(CallKind::Completion | CallKind::Probe));
            if polls && before == this {
                continue;
            }
            names[this] = Some(op);
            counts[before * IDS + this] += 1;
            before = this;
        }
    }
    let name = |i: usize| match names.get(i).copied().flatten() {
        Some(Operation::PointToPoint(k)) => format!("{k:?}"),
        Some(Operation::Collective(c)) => format!("{c:?}"),
        None => "^".to_string(),
    };
    counts
        .iter()
        .enumerate()
        .filter(|(_, &n)| n > 0)
        .map(|(k, &n)| (format!("{}>{}", name(k / IDS), name(k % IDS)), n))
        .collect()
}

/// A communication operation as [`operation_mix`] names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Operation {
    PointToPoint(CallKind),
    Collective(CollectiveOp),
}

/// Consecutive pairs of collective operations over all ranks ([`RunProperties::collective_mix`]).
/// O(collectives).
fn collective_mix(trace: &Trace) -> BTreeMap<String, u64> {
    let mut counts: HashMap<(Option<CollectiveOp>, CollectiveOp), u64> = HashMap::new();
    for rt in &trace.ranks {
        let mut before = None;
        for &op in &rt.collectives.op {
            *counts.entry((before, op)).or_insert(0) += 1;
            before = Some(op);
        }
    }
    counts
        .into_iter()
        .map(|((a, b), n)| {
            (
                format!("{}>{b:?}", a.map_or_else(|| "^".to_string(), |a| format!("{a:?}"))),
                n,
            )
        })
        .collect()
}

/// Per rank, the rooted collective operations it recorded itself as the root of (one count per
/// operation, whatever the other members recorded).
fn collective_roots(trace: &Trace) -> Vec<u64> {
    trace
        .ranks
        .iter()
        .map(|rt| {
            let c = &rt.collectives;
            c.op.iter()
                .zip(&c.root)
                .filter(|&(&op, &root)| op.has_root() && root == rt.rank)
                .count() as u64
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::similarity::{compare_properties, CompareOptions};
    use tracelogic_model::NO_CALLPATH;

    /// A run with these edges and nothing else (properties from the edges alone).
    fn run_of(source: &str, ranks: u32, edges: Vec<[u32; 2]>) -> RunProperties {
        let mut spatial = vec![0u32; ranks as usize];
        for &[a, b] in &edges {
            spatial[a as usize] += 1;
            spatial[b as usize] += 1;
        }
        RunProperties {
            source: source.into(),
            ranks,
            sends: spatial.iter().map(|&d| u64::from(d)).collect(),
            volume: spatial.iter().map(|&d| 100 * u64::from(d)).collect(),
            spatial,
            work: Vec::new(),
            edges,
            filtered_pairs: 0,
            roots: Vec::new(),
            parts: None,
            auto_graph: None,
            collective_mix: Default::default(),
            operation_mix: Default::default(),
        }
    }

    #[test]
    fn highlighted_common_edges_are_the_common_subgraph_in_both_graphs() {
        // A 3x3 grid (12 edges) against a 3x3 torus (18 edges) numbered in another order: the
        // grid fits inside the torus, so |E_S| = 12 and ε = 24/30 exactly.
        let grid: Vec<[u32; 2]> = (0..9u32)
            .flat_map(|r| {
                let right = (r % 3 < 2).then_some([r, r + 1]);
                let down = (r < 6).then_some([r, r + 3]);
                right.into_iter().chain(down)
            })
            .collect();
        let perm = [4u32, 7, 1, 8, 0, 5, 2, 6, 3];
        let mut torus: Vec<[u32; 2]> = (0..9u32)
            .flat_map(|r| {
                let (x, y) = (r % 3, r / 3);
                [[r, y * 3 + (x + 1) % 3], [r, ((y + 1) % 3) * 3 + x]]
            })
            .map(|[a, b]| {
                let (a, b) = (perm[a as usize], perm[b as usize]);
                [a.min(b), a.max(b)]
            })
            .collect();
        torus.sort_unstable();
        let (a, b) = (run_of("grid", 9, grid.clone()), run_of("torus", 9, torus.clone()));
        for (first, second) in [(&a, &b), (&b, &a)] {
            let c = compare_properties(first, second, &CompareOptions::default()).unwrap();
            let g = &c.graph;
            assert!(c.epsilon_exact);
            assert_eq!(g.common, 12);
            assert!((c.epsilon - 0.8).abs() < 1e-12);
            assert_eq!(g.common_edges.len(), g.common, "one highlighted edge per common edge");
            let mut images = Vec::new();
            for &[u, v] in &g.common_edges {
                assert!(
                    first.edges.contains(&[u, v]),
                    "{u}-{v} is not an edge of {}",
                    first.source
                );
                let (x, y) = (g.mapping[u as usize], g.mapping[v as usize]);
                let image = [x.min(y), x.max(y)];
                assert!(
                    second.edges.contains(&image),
                    "{u}-{v} -> {x}-{y} is not an edge of {}",
                    second.source
                );
                images.push(image);
            }
            images.sort_unstable();
            images.dedup();
            assert_eq!(
                images.len(),
                g.common,
                "the correspondence is one-to-one on the common edges"
            );
            let mut mapped = g.mapping.clone();
            mapped.sort_unstable();
            assert_eq!(
                mapped,
                (0..9).collect::<Vec<u32>>(),
                "the correspondence is a bijection of the ranks"
            );
        }
    }

    #[test]
    fn compute_time_is_the_gaps_between_calls_of_all_threads() {
        let mut t = Trace::new("test", "t", 1);
        t.push_call(0, "MPI_Init", 0, 10, NO_CALLPATH, 0);
        t.push_call(0, "MPI_Send", 50, 60, NO_CALLPATH, 0);
        // A second thread's call overlapping the first gap.
        t.push_call(0, "MPI_Recv", 20, 30, NO_CALLPATH, 1);
        t.push_call(0, "MPI_Finalize", 100, 120, NO_CALLPATH, 0);
        assert_eq!(compute_time(&t), vec![(20 - 10 + 50 - 30 + 100 - 60) as f64]);
    }

    #[test]
    fn counters_accumulated_or_per_interval() {
        let mut t = Trace::new("test", "t", 2);
        let id = t.metrics.intern("papi_fp_ops");
        t.ranks[0].metrics.push(tracelogic_model::MetricSamples {
            metric: id,
            time: vec![1, 2, 3],
            value: vec![5.0, 7.0, 12.0],
        });
        assert_eq!(counter_work(&t, "PAPI_FP_OPS"), None, "rank 1 has no sample");
        t.ranks[1].metrics.push(tracelogic_model::MetricSamples {
            metric: id,
            time: vec![1, 2, 3],
            value: vec![4.0, 1.0, 3.0],
        });
        assert_eq!(counter_work(&t, "PAPI_FP_OPS"), Some(vec![12.0, 8.0]));
        assert_eq!(counter_work(&t, "PAPI_TOT_INS"), None);
    }
}
