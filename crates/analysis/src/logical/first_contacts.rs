//! Placement by first contacts and the agreement score: every rank numbers its neighbours in the
//! order its point-to-point operations first reach them; with one reference rank at the origin,
//! each assignment of those numbers to the origin's directions is propagated through the graph;
//! a placement is scored by how many operations, position by position, equal the reference rank's
//! (see [`super::choice`] for why and where the placements are compared).

use super::choice::*;
use super::ContentKey as Key;
use super::{content_key, Placement};
use crate::topology::TopologyReport;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, VecDeque};
use tracelogic_graph::{Direction, TopologySpec};
use tracelogic_model::{P2pDir, Rank, Trace, ANY_SOURCE};

/// Direction index of an operation whose peer is not a neighbour under the placement.
const OUTSIDE: u32 = u32::MAX - 1;

/// Per rank: its distinct peers in first-contact order, and for each point-to-point operation the
/// index of its peer in that list (`u32::MAX` for `MPI_ANY_SOURCE`). Computed once, so that
/// scoring a placement costs one table look-up per operation.
struct Peers {
    peers: Vec<Vec<Rank>>,
    slot: Vec<Vec<u32>>,
}

impl Peers {
    fn of(trace: &Trace) -> Peers {
        let mut peers = Vec::with_capacity(trace.ranks.len());
        let mut slots = Vec::with_capacity(trace.ranks.len());
        for rt in &trace.ranks {
            let mut list: Vec<Rank> = Vec::new();
            let mut many: HashMap<Rank, u32> = HashMap::new();
            let mut last = (u32::MAX, u32::MAX);
            let slot: Vec<u32> = rt
                .p2p
                .peer
                .iter()
                .map(|&q| {
                    if q == ANY_SOURCE {
                        return u32::MAX;
                    }
                    if last.0 == q {
                        return last.1;
                    }
                    let found = if list.len() <= 16 {
                        list.iter().position(|&x| x == q).map(|i| i as u32)
                    } else {
                        many.get(&q).copied()
                    };
                    let k = found.unwrap_or_else(|| {
                        let k = list.len() as u32;
                        list.push(q);
                        if list.len() > 16 {
                            if many.is_empty() {
                                many.extend(list.iter().enumerate().map(|(i, &x)| (x, i as u32)));
                            } else {
                                many.insert(q, k);
                            }
                        }
                        k
                    });
                    last = (q, k);
                    k
                })
                .collect();
            peers.push(list);
            slots.push(slot);
        }
        Peers { peers, slot: slots }
    }
}

/// A placement's score: [`agreement`]'s counts and all point-to-point operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Score {
    pub(super) positional: Agreement,
    pub(super) total: u64,
}

/// Operations equal, position by position, to the reference rank's ([`LocalContacts::agreed`]).
///
/// `moves` compares what a direction means, the kind (send or receive) and the direction;
/// `sized` also the bytes. Each picks its placement; where they pick different ones the logical
/// trace builds both and keeps the shorter program ([`super::choice::PlacementContest`]): sizes
/// that change with the data (LAMMPS's rigid bodies) can favour wrong names, operations only
/// some ranks make can shift the moves' count (LAMMPS `crack`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Agreement {
    /// Operations whose kind and direction agree.
    pub moves: u64,
    /// Operations whose kind, direction and bytes agree.
    pub sized: u64,
}

impl std::ops::Add for Agreement {
    type Output = Agreement;
    fn add(self, o: Agreement) -> Agreement {
        Agreement {
            moves: self.moves + o.moves,
            sized: self.sized + o.sized,
        }
    }
}

impl std::iter::Sum for Agreement {
    fn sum<I: Iterator<Item = Agreement>>(it: I) -> Agreement {
        it.fold(Agreement::default(), |a, b| a + b)
    }
}

/// What [`agreement`] needs of a placement besides the ranks' operations: the directions'
/// indices, each rank's directions, and the reference rank (the first, by content key then
/// node, among the ranks with the most directions).
pub struct Scoring {
    index: HashMap<String, u32>,
    tables: Vec<HashMap<Rank, String>>,
    coverage: Vec<Vec<bool>>,
    reference: Rank,
}

impl Scoring {
    /// The scoring of `placement` over `keys.len()` ranks; `None` when the placement is not of
    /// that many ranks or no rank has a direction to compare (the score is then 0).
    pub fn new(placement: &Placement, keys: &[Key]) -> Option<Scoring> {
        let n = keys.len();
        if placement.node_of_rank.len() != n || n == 0 {
            return None;
        }
        let names = placement.direction_names();
        let index: HashMap<String, u32> = names.iter().enumerate().map(|(i, d)| (d.clone(), i as u32)).collect();
        let coverage: Vec<Vec<bool>> = placement
            .neighbour_tables()
            .iter()
            .map(|t| {
                let mut c = vec![false; names.len()];
                for d in t.keys() {
                    c[index[d.as_str()] as usize] = true;
                }
                c
            })
            .collect();
        let count = |c: &[bool]| c.iter().filter(|&&x| x).count();
        let most = coverage.iter().map(|c| count(c)).max().unwrap_or(0);
        let reference = (0..n)
            .filter(|&r| count(&coverage[r]) == most)
            .min_by_key(|&r| (keys[r], placement.node_of_rank[r]))?;
        Some(Scoring {
            index,
            tables: placement.direction_tables(),
            coverage,
            reference: reference as Rank,
        })
    }

    /// The reference rank, whose operations every rank is compared with.
    pub fn reference(&self) -> Rank {
        self.reference
    }
}

/// The ranks' content keys, first contacts and agreement with a placement, read from the ranks
/// `ranks` of a trace (the other ranks' events may be missing, as a process of `tracelogic-mpi`
/// holds them). Over every rank of a trace it is what [`Placement::choose`] reads
/// ([`ContactSource`]); over blocks of ranks, the parts exchanged to place a whole run without
/// gathering its events.
pub struct LocalContacts<'t> {
    trace: &'t Trace,
    peers: Peers,
    ranks: std::ops::Range<Rank>,
}

impl<'t> LocalContacts<'t> {
    /// The ranks `ranks` of `trace`.
    pub fn new(trace: &'t Trace, ranks: std::ops::Range<Rank>) -> LocalContacts<'t> {
        LocalContacts {
            trace,
            peers: Peers::of(trace),
            ranks,
        }
    }

    /// The content key of each of the ranks, in rank order.
    pub fn keys(&self) -> Vec<Key> {
        self.ranks.clone().map(|r| content_key(self.trace, r)).collect()
    }

    /// Point-to-point operations of the ranks.
    pub fn total(&self) -> u64 {
        self.ranks
            .clone()
            .map(|r| self.trace.ranks[r as usize].p2p.len() as u64)
            .sum()
    }

    /// Per rank of the ranks: its neighbours in `adjacency` (every rank's, sorted) numbered by
    /// first contact, `None` when it never reaches one of them.
    pub fn first_contacts(&self, adjacency: &[Vec<Rank>], sends_only: bool) -> Vec<Option<HashMap<Rank, u32>>> {
        self.ranks
            .clone()
            .map(|r| first_contacts_of(self.trace, &self.peers, r, &adjacency[r as usize], sends_only))
            .collect()
    }

    /// Rank `r`'s operations as the score compares them (`r` one of the ranks).
    pub fn steps(&self, scoring: &Scoring, r: Rank) -> Vec<Step> {
        let r = r as usize;
        let p = &self.trace.ranks[r].p2p;
        let dirs: Vec<u32> = self.peers.peers[r]
            .iter()
            .map(|q| scoring.tables[r].get(q).map_or(OUTSIDE, |d| scoring.index[d.as_str()]))
            .collect();
        self.peers.slot[r]
            .iter()
            .enumerate()
            .filter_map(|(i, &k)| {
                let d = if k == u32::MAX { u32::MAX } else { dirs[k as usize] };
                (d != OUTSIDE).then(|| (p.dir[i] == P2pDir::Send, d, p.bytes.at(i)))
            })
            .collect()
    }

    /// Operations of the ranks equal, position by position, to the reference's `reference`
    /// ([`LocalContacts::steps`] of [`Scoring::reference`]): in kind and direction, and also in
    /// bytes ([`Agreement`]).
    pub fn agreed(&self, scoring: &Scoring, reference: &[Step]) -> Agreement {
        let within = |c: &[bool], s: &Step| s.1 == u32::MAX || c[s.1 as usize];
        let coverage = &scoring.coverage;
        let ref_cover = &coverage[scoring.reference as usize];
        // The reference restricted to each set of directions a rank has, once per set.
        let mut restricted_ref: HashMap<&[bool], [Vec<Step>; 2]> = HashMap::new();
        for r in self.ranks.clone() {
            restricted_ref.entry(&coverage[r as usize]).or_insert_with(|| {
                let kept = reference.iter().filter(|s| within(&coverage[r as usize], s));
                [
                    kept.clone().filter(|s| s.0).copied().collect(),
                    kept.filter(|s| !s.0).copied().collect(),
                ]
            });
        }
        // Each rank against it on every core natively (a pass over its operations), summed.
        let ranks: Vec<Rank> = self.ranks.clone().collect();
        crate::logical::each_index(ranks.len(), |i| {
            let r = ranks[i];
            let [sends, receives] = &restricted_ref[coverage[r as usize].as_slice()];
            let mut position = [0usize; 2];
            let mut agreed = Agreement::default();
            for s in self.steps(scoring, r).into_iter().filter(|s| within(ref_cover, s)) {
                let (theirs, at) = if s.0 {
                    (sends, &mut position[0])
                } else {
                    (receives, &mut position[1])
                };
                if let Some(t) = theirs.get(*at).filter(|t| t.1 == s.1) {
                    agreed.moves += 1;
                    agreed.sized += (t.2 == s.2) as u64;
                }
                *at += 1;
            }
            agreed
        })
        .into_iter()
        .sum()
    }

    /// [`agreement`] when the ranks are every rank of the trace.
    pub(super) fn agreement_of_all(&self, placement: &Placement, keys: &[Key]) -> (Agreement, u64) {
        let total = self.total();
        match Scoring::new(placement, keys) {
            Some(s) => (self.agreed(&s, &self.steps(&s, s.reference)), total),
            None => (Agreement::default(), total),
        }
    }
}

/// What choosing a placement reads of the ranks' operations ([`LocalContacts`] over every rank
/// of a trace; `tracelogic-mpi` exchanges each process's [`LocalContacts`] results). Every call
/// is made in the same order on every process, so an implementation may exchange inside it.
pub trait ContactSource {
    /// Ranks of the run.
    fn num_ranks(&self) -> Rank;
    /// Every rank's content key, in rank order.
    fn keys(&mut self) -> Vec<Key>;
    /// [`LocalContacts::first_contacts`] of every rank; `None` when one of them is `None`.
    fn first_contacts(&mut self, adjacency: &[Vec<Rank>], sends_only: bool) -> Option<Vec<HashMap<Rank, u32>>>;
    /// [`agreement`] of `placement` given every rank's content key.
    fn agreement(&mut self, placement: &Placement, keys: &[Key]) -> (Agreement, u64);
}

impl ContactSource for LocalContacts<'_> {
    fn num_ranks(&self) -> Rank {
        self.trace.num_ranks()
    }
    fn keys(&mut self) -> Vec<Key> {
        LocalContacts::keys(self)
    }
    fn first_contacts(&mut self, adjacency: &[Vec<Rank>], sends_only: bool) -> Option<Vec<HashMap<Rank, u32>>> {
        LocalContacts::first_contacts(self, adjacency, sends_only)
            .into_iter()
            .collect()
    }
    fn agreement(&mut self, placement: &Placement, keys: &[Key]) -> (Agreement, u64) {
        self.agreement_of_all(placement, keys)
    }
}

/// Rank `r`'s graph neighbours `adj` (sorted) numbered by first contact in its point-to-point
/// operations (only its sends when `sends_only`: a red/black code sends in one direction order on
/// every rank but receives first on one colour). `None` when some neighbour is never reached.
fn first_contacts_of(
    trace: &Trace,
    peers: &Peers,
    r: Rank,
    adj: &[Rank],
    sends_only: bool,
) -> Option<HashMap<Rank, u32>> {
    let r = r as usize;
    let list = &peers.peers[r];
    let mut order: HashMap<Rank, u32> = HashMap::with_capacity(adj.len());
    let mut seen = vec![false; list.len()];
    let dirs = &trace.ranks[r].p2p.dir;
    for (i, &k) in peers.slot[r].iter().enumerate() {
        if k == u32::MAX || seen[k as usize] || (sends_only && dirs[i] != P2pDir::Send) {
            continue;
        }
        seen[k as usize] = true;
        let q = list[k as usize];
        if adj.binary_search(&q).is_ok() {
            order.insert(q, order.len() as u32);
            if order.len() == adj.len() {
                break;
            }
        }
    }
    (order.len() == adj.len()).then_some(order)
}

/// The permutation after `a` in lexicographic order; `false` (and `a` unchanged) after the last.
fn next_permutation(a: &mut [usize]) -> bool {
    let k = a.len();
    let Some(i) = (1..k).rev().find(|&i| a[i - 1] < a[i]) else {
        return false;
    };
    let j = (i..k).rev().find(|&j| a[j] > a[i - 1]).unwrap_or(i);
    a.swap(i - 1, j);
    a[i..].reverse();
    true
}

/// A placement on `spec` under which every rank's neighbour numbered `k` (first contact) lies in
/// the same direction, found by propagating each assignment of numbers to the origin's
/// directions from `reference`; `Err` says why there is none.
pub(super) fn placement_by_contacts(
    spec: &TopologySpec,
    adjacency: &[Vec<Rank>],
    contacts: &[HashMap<Rank, u32>],
    reference: Rank,
) -> Result<Placement, String> {
    let n = adjacency.len();
    if spec.num_nodes() as usize != n {
        return Err("another number of nodes".into());
    }
    let slots: Vec<Direction> = spec.neighbours(0).into_iter().map(|(d, _)| d).collect();
    let k = slots.len();
    if adjacency[reference as usize].len() != k {
        return Err("another degree".into());
    }
    if k > MAX_NEIGHBOURS {
        return Err(format!("more than {MAX_NEIGHBOURS} neighbours per node"));
    }
    let budget = PROPAGATION_STEPS.saturating_add(4 * n as u64 * k as u64);
    let mut steps = 0u64;
    let mut node_of = vec![u32::MAX; n];
    let mut rank_at = vec![u32::MAX; n];
    let mut queue = VecDeque::new();
    let mut sigma: Vec<usize> = (0..k).collect();
    let mut first = true;
    while first || next_permutation(&mut sigma) {
        first = false;
        if steps > budget {
            return Err(format!(
                "gave up after {steps} propagation steps (bound {budget}) without a fitting assignment"
            ));
        }
        node_of.fill(u32::MAX);
        rank_at.fill(u32::MAX);
        queue.clear();
        node_of[reference as usize] = 0;
        rank_at[0] = reference;
        queue.push_back(reference);
        let mut placed = 1;
        let mut fits = true;
        'walk: while let Some(r) = queue.pop_front() {
            let u = node_of[r as usize];
            for &q in &adjacency[r as usize] {
                steps += 1;
                let Some(&label) = contacts[r as usize].get(&q) else {
                    fits = false;
                    break 'walk;
                };
                let Some(v) = slots
                    .get(label as usize)
                    .and_then(|_| spec.neighbour(u, &slots[sigma[label as usize]]))
                else {
                    fits = false;
                    break 'walk;
                };
                match (node_of[q as usize], rank_at[v as usize]) {
                    (w, _) if w == v => {}
                    (u32::MAX, u32::MAX) => {
                        node_of[q as usize] = v;
                        rank_at[v as usize] = q;
                        placed += 1;
                        queue.push_back(q);
                    }
                    _ => {
                        fits = false;
                        break 'walk;
                    }
                }
            }
        }
        if fits && placed == n {
            return Ok(Placement::new(
                spec.clone(),
                n as u32,
                node_of.iter().enumerate().map(|(r, &u)| (r as Rank, u)),
            )?
            .canonical());
        }
    }
    Err("no assignment of directions fits every rank".into())
}

/// Replace the rank → coordinates mapping of `report` (identified from `trace`'s whole
/// communication matrix) by the placement the ranks' first contacts give, when that is what the
/// logical trace uses for the identified topology itself ([`PlacedBy::FirstContacts`]): the
/// graph then has automorphisms beyond the topology's geometry (the 3x3 6-point stencil is
/// K3,3,3) and the isomorphism identification proved is not the program's layout, so its
/// coordinates would move with the rank numbering. The new mapping is checked to carry every
/// edge of `report` onto an edge of the topology before it replaces the old one, and
/// `report.placed_by` says which one is shown. Returns true when it replaced the mapping.
///
/// Costs one [`Placement::choose`]: a pass over every rank's operations.
pub fn place_by_first_contacts(trace: &Trace, report: &mut TopologyReport) -> bool {
    place_by_first_contacts_from(&mut LocalContacts::new(trace, 0..trace.num_ranks()), report)
}

/// [`place_by_first_contacts`] reading the ranks through `source` (`tracelogic-mpi`: each
/// process its ranks, the results exchanged).
pub fn place_by_first_contacts_from(source: &mut dyn ContactSource, report: &mut TopologyReport) -> bool {
    let id = &report.identification;
    let Some(matched) = &id.matched else { return false };
    let n = source.num_ranks() as usize;
    if id.mapping.len() != n || id.ranks as usize != n {
        return false;
    }
    let keys = source.keys();
    let Ok((placement, from)) = choose_from(source, report, &keys) else {
        return false;
    };
    if from.placed_by != PlacedBy::FirstContacts
        || placement.spec.family.name() != matched.family
        || placement.spec.dims != matched.dims
        || placement.node_of_rank.len() != n
    {
        return false;
    }
    let reference = placement.spec.graph();
    let mut used = vec![false; n];
    for &v in &placement.node_of_rank {
        match used.get_mut(v as usize) {
            Some(u) if !*u => *u = true,
            _ => return false,
        }
    }
    let node = &placement.node_of_rank;
    if report
        .edges
        .iter()
        .any(|&[a, b]| !reference.has_edge(node[a as usize], node[b as usize]))
    {
        return false;
    }
    report.identification.mapping = crate::topology::place_ranks(&placement.spec, node);
    report.placed_by = PlacedBy::FirstContacts;
    true
}
