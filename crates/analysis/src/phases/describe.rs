//! What a phase does: the topology of its point-to-point graph (identified as the whole run's
//! is, `crate::topology`), its collectives, and the load imbalance of its computation.

use crate::matrix::{CommMatrix, Entry};
use crate::patterns::{EventRef, Events};
use crate::topology::comm_grid::CommunicatorGrid;
use crate::topology::{identify_matrix_declared, SpectrumDisplay, TopologyOptions, TopologyReport};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use tracelogic_model::{P2pDir, Rank, Time, Trace};

/// The communication graph of one phase, named.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseTopology {
    /// What the topology identification names the phase's point-to-point graph: its match
    /// (`4x4 torus`, `8-node all-to-all`), the matches of its components (`4 × 2-node line`),
    /// `unidentified`, or `no point-to-point` (collectives only).
    pub label: String,
    /// Family of the match (`grid`, `torus`, `all-to-all`, …), when the whole graph matched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub family: Option<String>,
    /// Ranks that send or receive point-to-point messages in the phase.
    pub ranks: u32,
    /// Communicating pairs (edges of the graph, before the identification's filtering).
    pub pairs: usize,
    /// Point-to-point messages sent in the phase.
    pub messages: u64,
    /// Their bytes.
    pub bytes: u64,
    /// When the match is a star or a master–worker topology, the ranks of its centres (the
    /// masters): they hand out work and wait, so the phase's imbalance is measured among the
    /// workers. Empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub masters: Vec<Rank>,
    /// The ranks of the graph [`PhaseTopology::label`] names (the pairs the identification kept,
    /// as the label does), as inclusive ranges `[first, last]`, when they are not every rank of
    /// the run: a phase's work on some ranks only, or moved between ranks (StarPU's stencil on
    /// ranks 1-3, then on 0, 2-3). Empty when they are every rank, or fewer than two.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub over: Vec<[Rank; 2]>,
}

impl PhaseTopology {
    /// `over ranks 1-3`, `over ranks 0, 2-3`; `None` when every rank communicates
    /// ([`PhaseTopology::over`] empty).
    ///
    /// ```
    /// use tracelogic_analysis::phases::PhaseTopology;
    /// let t = PhaseTopology { over: vec![[0, 0], [2, 3]], ..PhaseTopology::default() };
    /// assert_eq!(t.over_ranks().as_deref(), Some("over ranks 0, 2-3"));
    /// ```
    pub fn over_ranks(&self) -> Option<String> {
        (!self.over.is_empty()).then(|| format!("over ranks {}", tracelogic_model::query::rank_runs_text(&self.over)))
    }
}

/// Load imbalance of the computation in a phase: per rank, the time of its span in the phase
/// not spent inside MPI calls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Imbalance {
    /// Largest compute time over the mean (1 = balanced).
    pub max_over_mean: f64,
    /// Mean compute time per rank (ns).
    pub mean: Time,
    /// Largest compute time (ns).
    pub max: Time,
    /// Ranks computing at least 5 % longer than the mean, slowest first (at most 8): they reach
    /// the phase's communication last.
    pub late: Vec<Rank>,
    /// Ranks left out of the comparison: the masters of a star or master–worker phase
    /// ([`PhaseTopology::masters`]), whose compute time is a role, not imbalance.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<Rank>,
}

/// Identification options for a phase: no near matches, no display spectrum (a phase report
/// names the graph; the topology view explains it).
fn options() -> TopologyOptions {
    TopologyOptions {
        near_matches: 0,
        spectrum: SpectrumDisplay::Never,
        ..TopologyOptions::default()
    }
}

/// Name a topology report.
pub fn label(r: &TopologyReport) -> (String, Option<String>) {
    if r.no_point_to_point {
        return ("no point-to-point".into(), None);
    }
    if let Some(m) = &r.identification.matched {
        return (m.label.clone(), Some(m.family.clone()));
    }
    if !r.components.is_empty() {
        let mut groups: BTreeMap<String, usize> = BTreeMap::new();
        for c in &r.components {
            let l = c.identification.matched.as_ref().map_or_else(
                || format!("unidentified {}-rank graph", c.ranks.len()),
                |m| m.label.clone(),
            );
            *groups.entry(l).or_default() += 1;
        }
        let mut parts: Vec<(String, usize)> = groups.into_iter().collect();
        parts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let text: Vec<String> = parts
            .into_iter()
            .map(|(l, n)| if n == 1 { l } else { format!("{n} × {l}") })
            .collect();
        return (text.join(" + "), None);
    }
    ("unidentified".into(), None)
}

/// The point-to-point graph of the events `spans` (per rank, inclusive event ranges), its
/// topology, and the collectives in them by MPI function name with counts.
pub fn topology(
    trace: &Trace,
    events: &Events,
    spans: &BTreeMap<Rank, Vec<(u32, u32)>>,
) -> (PhaseTopology, Vec<(String, u64)>) {
    let grids = crate::topology::comm_grid::find(trace, &[]);
    Traffic::of(trace, events, spans).describe(&grids, trace.ranks.len() as u32)
}

/// The process grid of `grids` whose graph (every pair in one row or one column) is exactly
/// `edges` (world ranks, each pair once): the program declared the phase's graph by its row and
/// column communicators, so the phase is named by that declaration, as the whole run is
/// (`TopologyReport::name_as_declared`), rather than by an equivalent shape (a 2x3 process grid
/// is also a 3x2 torus).
fn declared_grid<'g>(grids: &'g [CommunicatorGrid], edges: &[[u32; 2]]) -> Option<&'g CommunicatorGrid> {
    grids.iter().find(|g| {
        let (p, q) = (g.rows as usize, g.cols as usize);
        let grid_edges = p * q * (q - 1) / 2 + q * p * (p - 1) / 2;
        edges.len() == grid_edges
            && edges.iter().all(|&[a, b]| {
                let (ca, cb) = (g.coords.get(a as usize), g.coords.get(b as usize));
                matches!((ca, cb), (Some(x), Some(y)) if a != b && (x[0] == y[0]) != (x[1] == y[1]))
            })
    })
}

/// The one grid of `grids` holding every one of `pairs` (world ranks,
/// [`CommunicatorGrid::holds`]): the hint [`identify_matrix_declared`] asks for, as
/// `topology::declared::grid_holding` answers it for the whole run. `None` when no grid or
/// more than one does.
fn grid_holding<'g>(grids: &'g [CommunicatorGrid], pairs: &[[u32; 2]]) -> Option<&'g CommunicatorGrid> {
    let mut holding = grids.iter().filter(|g| g.holds(pairs));
    match (holding.next(), holding.next()) {
        (Some(g), None) => Some(g),
        _ => None,
    }
}

/// The point-to-point sends and collectives of some events, counted: what [`topology`] names.
/// The counts of stretches sharing no event add up ([`Traffic::add`]), so a section's traffic
/// is its phases' summed, not its events counted again.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Traffic {
    /// (sender, receiver) -> (messages, bytes).
    pairs: BTreeMap<(Rank, Rank), (u64, u64)>,
    /// Per rank, its collective calls by MPI function name.
    collectives: BTreeMap<Rank, BTreeMap<String, u64>>,
}

impl Traffic {
    /// The traffic of the events `spans` (per rank, inclusive event ranges; overlapping ranges
    /// count each event once).
    pub fn of(trace: &Trace, events: &Events, spans: &BTreeMap<Rank, Vec<(u32, u32)>>) -> Traffic {
        let mut pairs: BTreeMap<(Rank, Rank), (u64, u64)> = BTreeMap::new();
        let mut collectives: BTreeMap<Rank, BTreeMap<String, u64>> = BTreeMap::new();
        // One rank's sends (messages, bytes) by peer, counted densely and moved into `pairs`
        // after the rank (one map entry per pair, not per message), and its collectives by
        // function.
        let mut to_peer: Vec<(u64, u64)> = vec![(0, 0); trace.num_ranks() as usize];
        let mut peers: Vec<Rank> = Vec::new();
        let mut by_function: BTreeMap<u32, u64> = BTreeMap::new();
        for (&r, ranges) in spans {
            let (re, rt) = (&events.ranks[r as usize], &trace.ranks[r as usize]);
            // Occurrences of a phase may overlap on a rank (a rank's part of one occurrence can
            // reach into the next): each event counts once.
            for (a, b) in union_of(ranges) {
                for ev in a..=b {
                    match re.events.get(ev as usize) {
                        Some(&EventRef::P2p(o)) => {
                            let o = o as usize;
                            let peer = rt.p2p.peer[o];
                            if rt.p2p.dir[o] == P2pDir::Send && peer < trace.num_ranks() && peer != r {
                                let e = &mut to_peer[peer as usize];
                                if e.0 == 0 {
                                    peers.push(peer);
                                }
                                e.0 += 1;
                                e.1 = e.1.saturating_add(rt.p2p.bytes.at(o));
                            }
                        }
                        Some(&EventRef::Collective(_)) => {
                            *by_function
                                .entry(rt.calls.func[re.calls[ev as usize] as usize])
                                .or_default() += 1;
                        }
                        None => {}
                    }
                }
            }
            for peer in peers.drain(..) {
                pairs.insert((r, peer), std::mem::take(&mut to_peer[peer as usize]));
            }
            if !by_function.is_empty() {
                let mine = collectives.entry(r).or_default();
                for (f, n) in std::mem::take(&mut by_function) {
                    *mine.entry(trace.functions.name(f).to_owned()).or_default() += n;
                }
            }
        }
        Traffic { pairs, collectives }
    }

    /// Add the traffic of events `self` does not hold.
    pub fn add(&mut self, other: &Traffic) {
        for (&pair, &(m, b)) in &other.pairs {
            let e = self.pairs.entry(pair).or_default();
            e.0 += m;
            e.1 = e.1.saturating_add(b);
        }
        for (&r, calls) in &other.collectives {
            let mine = self.collectives.entry(r).or_default();
            for (name, &n) in calls {
                *mine.entry(name.clone()).or_default() += n;
            }
        }
    }

    /// The graph's topology, and the collectives by MPI function name, each counted as the
    /// largest count on any rank (a collective on all ranks counts once, not once per rank).
    /// `grids`: the process grids the trace's row and column communicators declare
    /// ([`crate::topology::comm_grid::find`]), by which a phase whose graph is one is named;
    /// `world`: the run's number of ranks (fewer communicating: [`PhaseTopology::over`]).
    pub fn describe(&self, grids: &[CommunicatorGrid], world: u32) -> (PhaseTopology, Vec<(String, u64)>) {
        let pairs = &self.pairs;
        let mut collectives: BTreeMap<String, u64> = BTreeMap::new();
        for calls in self.collectives.values() {
            for (name, &n) in calls {
                let e = collectives.entry(name.clone()).or_default();
                *e = (*e).max(n);
            }
        }
        // Ranks of the graph, renumbered densely so that ranks idle in the phase are not isolated
        // nodes of its graph.
        let mut local: BTreeMap<Rank, u32> = BTreeMap::new();
        for &(a, b) in pairs.keys() {
            for r in [a, b] {
                let n = local.len() as u32;
                local.entry(r).or_insert(n);
            }
        }
        let messages = pairs.values().map(|v| v.0).sum();
        let bytes = pairs.values().fold(0u64, |s, v| s.saturating_add(v.1));
        let undirected: std::collections::BTreeSet<(Rank, Rank)> =
            pairs.keys().map(|&(a, b)| (a.min(b), a.max(b))).collect();
        let mut masters: Vec<Rank> = Vec::new();
        // The ranks of the graph the label names (after the identification's filtering).
        let mut named: std::collections::BTreeSet<Rank> = local.keys().copied().collect();
        let (label, family) = if local.len() < 2 {
            ("no point-to-point".to_owned(), None)
        } else {
            let entries = pairs.iter().map(|(&(a, b), &(m, by))| Entry {
                from: local[&a],
                to: local[&b],
                bytes: by,
                messages: m,
            });
            let world: Vec<Rank> = {
                let mut w = vec![0; local.len()];
                for (&r, &l) in &local {
                    w[l as usize] = r;
                }
                w
            };
            match CommMatrix::from_entries(local.len() as u32, entries) {
                Ok(m) => {
                    // As the whole run is identified (`identify_matrix_declared`): when no cut
                    // of the filter names the graph, every pair is tried if one declared grid
                    // holds them all.
                    let grid_of = |pairs: &[[u32; 2]]| {
                        let world_pairs: Vec<[u32; 2]> = pairs
                            .iter()
                            .map(|&[a, b]| [world[a as usize], world[b as usize]])
                            .collect();
                        grid_holding(grids, &world_pairs).map(|g| g.label.clone())
                    };
                    let report = identify_matrix_declared(&m, &options(), &grid_of);
                    let edges: Vec<[u32; 2]> = report
                        .edges
                        .iter()
                        .map(|&[a, b]| [world[a as usize], world[b as usize]])
                        .collect();
                    masters = crate::imbalance::hub_ranks(&report, &world);
                    if !edges.is_empty() {
                        named = edges.iter().flatten().copied().collect();
                    }
                    match declared_grid(grids, &edges) {
                        Some(g) => {
                            // The catalogue's words for the declared P x Q (`2x3 process grid
                            // (rows and columns)`), as a phase identified as one reads.
                            let spec = tracelogic_graph::TopologySpec::new(
                                tracelogic_graph::Family::ProcessGrid,
                                vec![g.rows, g.cols],
                            );
                            let label = spec.map_or_else(|_| g.label.clone(), |s| s.label());
                            (label, Some(tracelogic_graph::Family::ProcessGrid.name().to_owned()))
                        }
                        None => label(&report),
                    }
                }
                Err(_) => ("unidentified".to_owned(), None),
            }
        };
        let mut coll: Vec<(String, u64)> = collectives.into_iter().collect();
        coll.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        (
            PhaseTopology {
                label,
                family,
                ranks: local.len() as u32,
                pairs: undirected.len(),
                messages,
                bytes,
                masters,
                over: if named.len() >= 2 && (named.len() as u32) < world {
                    tracelogic_model::query::rank_runs(named)
                } else {
                    Vec::new()
                },
            },
            coll,
        )
    }
}

impl Imbalance {
    /// What the CLI and the page add when masters were left out: `among workers (masters 0, 1
    /// apart)`; `None` when every rank was compared.
    pub fn left_out_note(&self) -> Option<String> {
        crate::imbalance::left_out_note(&self.left_out)
    }
}

/// Compute time per rank over `spans` (per rank: inclusive event ranges): each rank's time from
/// its first to its last call in the phase minus the time inside MPI calls in between.
/// Ranks in `left_out` (a phase's masters) are not compared.
pub fn imbalance(
    trace: &Trace,
    events: &Events,
    spans: &BTreeMap<Rank, Vec<(u32, u32)>>,
    left_out: &[Rank],
) -> Option<Imbalance> {
    let mut compute: Vec<(Rank, Time)> = Vec::new();
    for (&r, ranges) in spans.iter().filter(|(r, _)| !left_out.contains(r)) {
        let (re, calls) = (&events.ranks[r as usize], &trace.ranks[r as usize].calls);
        let first = ranges.iter().map(|x| x.0).min()?;
        let last = ranges.iter().map(|x| x.1).max()?;
        let (c0, c1) = (re.calls[first as usize] as usize, re.calls[last as usize] as usize);
        let span = calls.exit(c1).saturating_sub(calls.enter(c0));
        let in_mpi: Time = (c0..=c1).map(|c| calls.exit(c).saturating_sub(calls.enter(c))).sum();
        compute.push((r, span.saturating_sub(in_mpi)));
    }
    if compute.len() < 2 {
        return None;
    }
    let total: u128 = compute.iter().map(|c| c.1 as u128).sum();
    let mean = (total / compute.len() as u128) as Time;
    let max = compute.iter().map(|c| c.1).max().unwrap_or(0);
    if mean == 0 {
        return None;
    }
    compute.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let late = compute
        .iter()
        .take_while(|c| c.1 as f64 >= mean as f64 * 1.05)
        .take(8)
        .map(|c| c.0)
        .collect();
    Some(Imbalance {
        max_over_mean: max as f64 / mean as f64,
        mean,
        max,
        late,
        left_out: left_out.iter().copied().filter(|r| spans.contains_key(r)).collect(),
    })
}

/// The inclusive ranges `ranges` cover, as disjoint ranges in order. O(n log n).
fn union_of(ranges: &[(u32, u32)]) -> Vec<(u32, u32)> {
    let mut sorted = ranges.to_vec();
    sorted.sort_unstable();
    let mut out: Vec<(u32, u32)> = Vec::with_capacity(sorted.len());
    for (a, b) in sorted {
        match out.last_mut() {
            Some(last) if a <= last.1.saturating_add(1) => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

#[cfg(test)]
mod union_tests {
    use super::union_of;

    /// Against a brute-force membership count: every event in some range is in exactly one
    /// range of the union, and no other event is.
    #[test]
    fn overlapping_ranges_cover_each_event_once() {
        let cases: [&[(u32, u32)]; 4] = [
            &[(30, 472), (74, 468)],
            &[(5, 9), (0, 3), (4, 4), (20, 25), (22, 30)],
            &[(7, 7)],
            &[],
        ];
        for ranges in cases {
            let union = union_of(ranges);
            for w in union.windows(2) {
                assert!(w[0].1 + 1 < w[1].0, "{union:?} not disjoint and apart");
            }
            for ev in 0..500u32 {
                let inside = ranges.iter().any(|&(a, b)| a <= ev && ev <= b);
                let times = union.iter().filter(|&&(a, b)| a <= ev && ev <= b).count();
                assert_eq!(times, usize::from(inside), "event {ev} in {ranges:?}");
            }
        }
    }
}
