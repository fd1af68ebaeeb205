//! Which of the isomorphic topologies names the logical trace's directions (issue: the 4×4×4
//! torus is the 6-cube). Identification proves a graph and reports every isomorphic candidate
//! (`equivalents`), the simplest as the match; but the match's directions need not be the
//! program's: on a 4×4×4 torus identified as the 6-cube, `east` flips a different bit at
//! different nodes, so no single rank's `bit` sequence is every rank's, and the logical trace
//! reproduces about three quarters of the calls.
//!
//! For each vertex-transitive equivalent (tori, periodic stencils, hypercubes, rings: at most
//! [`MAX_EQUIVALENTS`]) whose family or extents differ from the match's, a placement is built
//! from the trace itself: every rank numbers its neighbours by first contact (the order in
//! which its point-to-point operations reach them), one reference rank is put at the origin, and
//! each assignment of those numbers to the origin's neighbour directions is propagated through
//! the graph (a neighbour numbered `k` sits in direction `σ(k)` from every rank). An assignment
//! that places every rank consistently is an isomorphism under which each direction is the same
//! program move everywhere; none exists when the program's moves are not the candidate's
//! directions (a hypercube program on the 4×4 torus: flipping bit 0 twice returns, going east
//! twice does not).
//!
//! The identified match itself is placed the same way when its topology is vertex-transitive:
//! identification proves the graph by some isomorphism, and [`Placement::canonical`] only undoes
//! the geometric symmetries (shifts, reflections, swaps of equal axes). A graph with many more
//! automorphisms (the 3×3 6-point stencil is K3,3,3 with 1,296; the 3×3 8-point stencil is K9)
//! leaves identification's mapping naming one program move by different directions at different
//! ranks, depending on the rank numbering; the placement built from first contacts does not.
//!
//! Each placement (the match's, the match placed by first contacts, and the equivalents') is
//! scored by [`agreement`]: how many point-to-point operations, position by position, equal the
//! reference rank's sequence once both are restricted to the directions both ranks have. The
//! highest score names the directions; ties keep identification's mapping, then the match placed
//! by first contacts, then the earlier equivalent (simplest first), so runs whose mapping already
//! agrees fully are unchanged. The enumeration is bounded: at most [`MAX_NEIGHBOURS`] directions
//! per node and [`PROPAGATION_STEPS`] steps beyond one full walk per assignment; beyond either
//! bound identification's mapping is kept and the note says why.

use super::declared_grid::{declared_grids, placement_by_grid, DeclaredGrid};
use super::first_contacts::*;
use super::{content_key, Placement};
use crate::topology::TopologyReport;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use tracelogic_graph::{Family, TopologySpec};
use tracelogic_model::{Rank, Trace};

/// Equivalents tried besides the match (the 6-cube has six vertex-transitive ones; more are
/// listed as not tried).
pub const MAX_EQUIVALENTS: usize = 6;

/// Most distinct neighbours per node for which the assignments of first-contact numbers to
/// directions are enumerated (8! = 40,320 propagations at most, most failing within a few ranks;
/// the 3×3 8-point stencil, K9, has 8). Beyond it the identified mapping is kept.
pub const MAX_NEIGHBOURS: usize = 8;

/// Propagation steps (a rank's neighbour placed or checked) allowed per placement search besides
/// four per rank and direction: a trace whose wrong assignments all walk far before failing
/// gives up after this much work instead of trying all 8! of them.
pub const PROPAGATION_STEPS: u64 = 2_000_000;

/// One topology considered for naming the directions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConsideredTopology {
    /// Its label (`4x4x4 torus`).
    pub label: String,
    /// Share of point-to-point operations that agree with the reference rank under its
    /// placement ([`agreement`]); `None` when no placement was built.
    pub agreement: Option<f64>,
    /// The same share counting only operations whose sizes agree too ([`Agreement::sized`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agreement_with_sizes: Option<f64>,
    /// Why it has no placement (`not vertex-transitive`, `no assignment of directions fits every
    /// rank`, `beyond the bound of 6 equivalents`...), empty when it has one.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
}

/// Which isomorphic topology names the logical trace's directions, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DirectionsFrom {
    /// Label of the topology whose directions the logical trace uses.
    pub topology: String,
    /// Label of the identified match (equal to `topology` when the match was kept).
    pub identified: String,
    /// [`agreement`] share under the chosen placement.
    pub agreement: f64,
    /// [`agreement`] share under the identified match's placement.
    pub identified_agreement: f64,
    /// Every topology considered: the match first, then the equivalents in report order.
    pub considered: Vec<ConsideredTopology>,
    /// One sentence: the choice and its reason.
    pub reason: String,
    /// Where the rank → node mapping the logical trace uses comes from: identification's (the
    /// mapping `tracelogic topology` prints, made canonical) or one built from the ranks' first
    /// contacts, whose coordinates then differ from what `topology` prints.
    #[serde(default)]
    pub placed_by: PlacedBy,
    /// When the agreement with sizes and without them preferred different placements: both
    /// logical traces' lengths and which was kept (set by the logical trace, which builds both).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contest: Option<PlacementContest>,
    /// The placement the agreement without sizes preferred, when it differs from this one
    /// (`Placement::choose` returns the one with sizes first; the logical trace tries both).
    #[serde(skip)]
    pub contender: Option<Box<(Placement, DirectionsFrom)>>,
}

/// Two placements the agreement preferred by different counts ([`Agreement`]): sizes that
/// change with the data (LAMMPS `rigid`) can favour the wrong names, operations only some ranks
/// make can shift the moves' count (LAMMPS `crack`). Neither count is the program's, so the
/// logical trace is built under both and the shorter program kept: its purpose is the shortest
/// program that expands back exactly.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlacementContest {
    /// The placement kept (its label).
    pub kept: String,
    /// Whether the kept one is the agreement without sizes' choice.
    pub kept_by_moves: bool,
    /// Its compressed length (records of the folded program, nested variant loops left out).
    pub kept_length: usize,
    /// The other placement.
    pub other: String,
    /// Its compressed length.
    pub other_length: usize,
}

impl DirectionsFrom {
    /// True when the directions do not simply come from topology identification's mapping (an
    /// isomorphic equivalent names them, or the ranks' first contacts placed them) or another
    /// placement's program was built and found longer, so the reason is worth showing beside
    /// the logical trace or the pattern search.
    pub fn worth_showing(&self) -> bool {
        self.topology != self.identified || self.placed_by != PlacedBy::Identification || self.contest.is_some()
    }
}

/// Where a logical trace's placement comes from ([`DirectionsFrom::placed_by`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlacedBy {
    /// Topology identification's mapping, made canonical ([`Placement::from_report`]).
    #[default]
    Identification,
    /// Built from the trace: every rank's neighbours numbered by first contact, the same number
    /// the same direction everywhere (of the identified topology or an isomorphic equivalent).
    FirstContacts,
    /// An isomorphic equivalent that is not vertex-transitive (NAS CG, a process grid), placed
    /// by an isomorphism of the run's graph onto it, made canonical.
    Isomorphism,
    /// No topology was identified: every rank is its own node of an all-to-all of the run's
    /// ranks, and a direction is a rank offset (`+k`: the rank `k` further, modulo the ranks),
    /// the relative encoding ScalaTrace uses for the peers of SPMD programs.
    RankOffsets,
    /// The run has no point-to-point traffic (NAS FT, EP): the placement of [`RankOffsets`]
    /// (`Self::RankOffsets`), but no direction is ever used; the program is its collectives.
    CollectivesOnly,
}

impl PlacedBy {
    /// Whether the ranks were placed from the run itself (first contacts, or an isomorphism
    /// onto an equivalent) rather than by `tracelogic topology`'s mapping, so that the shells
    /// list the placement.
    pub fn replaces_mapping(self) -> bool {
        matches!(self, PlacedBy::FirstContacts | PlacedBy::Isomorphism)
    }
}

/// Point-to-point operations of the trace whose kind and direction (and whose kind, direction
/// and size: [`Agreement`]) agree, position by position among the rank's sends and among its
/// receives, with the reference rank's under `placement`, and all point-to-point operations.
///
/// Per rank, its operations inside the topology become `(send/receive, direction, bytes)`; the
/// reference is the first rank (most calls, most operations, content hash, then node) among
/// those with the most directions. Rank `r`'s sequence restricted to the directions the
/// reference has is compared with the reference's restricted to the directions `r` has, sends
/// with sends and receives with receives (a red/black code sends first on one colour and receives
/// first on the other), and each equal position counts. Operations outside the topology never
/// count. Under the placement whose directions are the program's moves every rank of a uniform
/// program agrees completely.
pub fn agreement(trace: &Trace, placement: &Placement) -> (Agreement, u64) {
    let local = LocalContacts::new(trace, 0..trace.num_ranks());
    local.agreement_of_all(placement, &local.keys())
}

/// [`agreement`] with the ranks' content keys already computed.
pub(super) fn agreement_keyed(trace: &Trace, placement: &Placement, keys: &[Key]) -> (Agreement, u64) {
    LocalContacts::new(trace, 0..trace.num_ranks()).agreement_of_all(placement, keys)
}

use super::ContentKey as Key;
/// One operation as the score compares it: send?, direction index (`u32::MAX`: any source), bytes.
pub type Step = (bool, u32, u64);

fn percent(x: f64) -> String {
    let p = x * 100.0;
    if (p - p.round()).abs() < 0.05 {
        format!("{p:.0} %")
    } else {
        format!("{p:.1} %")
    }
}

impl Placement {
    /// The placement the logical trace of `trace` uses: the identified match's
    /// ([`Placement::from_report`]) or, when an isomorphic equivalent's directions agree better
    /// with what the ranks do ([`agreement`]), that equivalent's, with the reason.
    pub fn choose(trace: &Trace, report: &TopologyReport) -> Result<(Placement, DirectionsFrom), String> {
        let keys: Vec<Key> = (0..trace.num_ranks()).map(|r| content_key(trace, r)).collect();
        choose_keyed(trace, report, &keys)
    }
}

/// [`Placement::choose`] with every rank's content key computed.
pub(super) fn choose_keyed(
    trace: &Trace,
    report: &TopologyReport,
    keys: &[Key],
) -> Result<(Placement, DirectionsFrom), String> {
    let grids = declared_grids(trace);
    choose_with_grids(
        &mut LocalContacts::new(trace, 0..trace.num_ranks()),
        report,
        keys,
        &grids,
    )
}

/// [`Placement::choose`] reading the ranks through `source` (`keys`: every rank's content key,
/// [`ContactSource::keys`]).
pub fn choose_from(
    source: &mut dyn ContactSource,
    report: &TopologyReport,
    keys: &[Key],
) -> Result<(Placement, DirectionsFrom), String> {
    choose_with_grids(source, report, keys, &[])
}

/// [`choose_from`] with the grids the program declared ([`declared_grids`]): each also places the
/// match or an equivalent of its extents ([`placement_by_grid`]), scored like the others.
pub fn choose_with_grids(
    source: &mut dyn ContactSource,
    report: &TopologyReport,
    keys: &[Key],
    grids: &[DeclaredGrid],
) -> Result<(Placement, DirectionsFrom), String> {
    let matched = Placement::from_report(report)?;
    let id = &report.identification;
    let identified = matched.spec.label();
    let n = source.num_ranks();
    let source = std::cell::RefCell::new(source);
    let score = |p: &Placement| {
        let (positional, total) = source.borrow_mut().agreement(p, keys);
        Score { positional, total }
    };
    let base = score(&matched);
    let total = base.total;
    let share = |a: u64| if total == 0 { 1.0 } else { a as f64 / total as f64 };
    let placed = |label: String, a: &Score, note: String| ConsideredTopology {
        label,
        agreement: Some(share(a.positional.moves)),
        agreement_with_sizes: Some(share(a.positional.sized)),
        note,
    };
    let unplaced = |label: String, note: String| ConsideredTopology {
        label,
        agreement: None,
        agreement_with_sizes: None,
        note,
    };
    let mut considered = vec![placed(identified.clone(), &base, String::new())];
    let others: Vec<_> = id
        .equivalents
        .iter()
        .filter(|e| !(e.family == matched.spec.family.name() && e.dims == matched.spec.dims))
        .collect();
    // Every other placement scored, in the order tried (ties keep the earlier), and whether it
    // places the match's own topology.
    let mut scored: Vec<(Score, Placement, bool, PlacedBy)> = Vec::new();
    // On two nodes every family is the one edge; its names are left as identified.
    if n <= 2 {
        for e in &others {
            considered.push(unplaced(e.label.clone(), "two nodes: the same single edge".into()));
        }
    } else if n as usize == id.ranks as usize {
        let mut adjacency: Vec<Vec<Rank>> = vec![Vec::new(); n as usize];
        for &[a, b] in &report.edges {
            if let (Some(_), Some(_)) = (adjacency.get(a as usize), adjacency.get(b as usize)) {
                adjacency[a as usize].push(b);
                adjacency[b as usize].push(a);
            }
        }
        for adj in &mut adjacency {
            adj.sort_unstable();
            adj.dedup();
        }
        // First contacts over every operation, then over sends only when that numbering fits
        // no placement (computed only then).
        let contacts = source.borrow_mut().first_contacts(&adjacency, false);
        let mut send_contacts: Option<Option<Vec<HashMap<Rank, u32>>>> = None;
        let reference = (0..n).min_by_key(|&r| (keys[r as usize], r));
        let mut by_contacts = |s: &TopologySpec| -> Result<Placement, String> {
            let (Some(c), Some(r)) = (&contacts, reference) else {
                return Err("some rank never reaches one of its neighbours by a point-to-point operation".into());
            };
            placement_by_contacts(s, &adjacency, c, r).or_else(|e| {
                let sends = send_contacts
                    .get_or_insert_with(|| source.borrow_mut().first_contacts(&adjacency, true))
                    .as_ref();
                match sends {
                    Some(sc) if sc != c => placement_by_contacts(s, &adjacency, sc, r),
                    _ => Err(e),
                }
            })
        };
        // The match itself, placed from the trace: its graph may have far more automorphisms
        // than the geometric ones `Placement::canonical` undoes (the 3×3 6-point stencil is
        // K3,3,3), and identification's mapping then names a program move by different
        // directions at different ranks.
        let own_label = format!("{identified}, placed by first contacts");
        if base.positional.sized == base.total {
            considered.push(unplaced(
                own_label,
                "not tried: identification's mapping already agrees fully".into(),
            ));
        } else if matched.spec.is_vertex_transitive() {
            match by_contacts(&matched.spec) {
                Ok(p) if p == matched => considered.push(placed(
                    own_label,
                    &base,
                    "the same placement as identification's".into(),
                )),
                Ok(p) => {
                    let a = score(&p);
                    considered.push(placed(own_label, &a, String::new()));
                    scored.push((a, p, true, PlacedBy::FirstContacts));
                }
                Err(note) => considered.push(unplaced(own_label, note)),
            }
        } else {
            considered.push(unplaced(
                own_label,
                "not vertex-transitive: identification's mapping is kept".into(),
            ));
        }
        // An equivalent that names the program's own moves without being vertex-transitive
        // (NAS CG's row and transpose partners, a P×Q process grid's rows and columns: the
        // 4-rank CG is a 4-node line, whose `east` is the row partner at one end and the
        // transpose partner in the middle) has no origin to place from first contacts; it is
        // placed by an isomorphism of the run's graph onto it, made canonical, and scored like
        // the others.
        let run = std::cell::OnceCell::new();
        let by_isomorphism = |s: &TopologySpec| -> Result<Placement, String> {
            let run =
                run.get_or_init(|| tracelogic_graph::Graph::from_edges(n, report.edges.iter().map(|&[a, b]| (a, b))));
            let outcome =
                tracelogic_graph::iso::isomorphism(run, &s.graph(), tracelogic_graph::iso::IsoOptions::for_nodes(n));
            let mapping = outcome
                .mapping()
                .ok_or_else(|| "no isomorphism found within the step budget".to_string())?;
            Ok(Placement::new(s.clone(), n, mapping.iter().enumerate().map(|(r, &u)| (r as Rank, u)))?.canonical())
        };
        let mut tried = 0;
        for e in &others {
            let spec = Family::from_name(&e.family).and_then(|f| TopologySpec::new(f, e.dims.clone()).ok());
            let outcome = match &spec {
                None => Err("a user pattern without directions".to_string()),
                Some(s) if matches!(s.family, Family::NasCg | Family::ProcessGrid) && tried < MAX_EQUIVALENTS => {
                    tried += 1;
                    by_isomorphism(s).map(|p| (p, PlacedBy::Isomorphism))
                }
                Some(s) if !s.is_vertex_transitive() => Err("not vertex-transitive".into()),
                _ if tried >= MAX_EQUIVALENTS => Err(format!("beyond the bound of {MAX_EQUIVALENTS} equivalents")),
                Some(s) => {
                    tried += 1;
                    by_contacts(s).map(|p| (p, PlacedBy::FirstContacts))
                }
            };
            match outcome {
                Ok((p, how)) => {
                    let a = score(&p);
                    considered.push(placed(e.label.clone(), &a, String::new()));
                    scored.push((a, p, false, how));
                }
                Err(note) => considered.push(unplaced(e.label.clone(), note)),
            }
        }
        // The grids the program declared, placing the match or an equivalent of their extents
        // as the program numbers its processes (not tried when the match already agrees fully).
        if base.positional.sized < base.total {
            let specs =
                std::iter::once(matched.spec.clone()).chain(others.iter().filter_map(|e| {
                    Family::from_name(&e.family).and_then(|f| TopologySpec::new(f, e.dims.clone()).ok())
                }));
            let specs: Vec<TopologySpec> = specs.collect();
            for g in grids {
                for s in specs.iter().filter(|s| s.dims == g.dims) {
                    let label = format!("{}, placed by the declared grid", s.label());
                    match placement_by_grid(s, g, &report.edges) {
                        Ok(p) => {
                            let a = score(&p);
                            considered.push(placed(label, &a, String::new()));
                            let own = s.family == matched.spec.family && s.dims == matched.spec.dims;
                            scored.push((a, p, own, PlacedBy::Isomorphism));
                        }
                        Err(note) => considered.push(unplaced(label, note)),
                    }
                }
            }
        }
    }
    // The winner with sizes (as before sizes were set apart) and without: the first placement
    // with the most agreeing operations, above identification's. When they differ the logical
    // trace builds both and keeps the shorter program (`logicalize_identified`).
    let winner = |key: &dyn Fn(&Score) -> (u64, u64)| {
        let mut best: Option<usize> = None;
        for (i, c) in scored.iter().enumerate() {
            if key(&c.0) > key(&base) && best.is_none_or(|b| key(&c.0) > key(&scored[b].0)) {
                best = Some(i);
            }
        }
        best
    };
    let with_sizes = winner(&|a: &Score| (a.positional.sized, 0));
    let moves_only = winner(&|a: &Score| (a.positional.moves, a.positional.sized));
    let result = |pick: Option<usize>, sized: bool| -> (Placement, DirectionsFrom) {
        let count = |a: &Score| if sized { a.positional.sized } else { a.positional.moves };
        let what = if sized { "directions and sizes" } else { "directions" };
        match pick.map(|i| &scored[i]) {
            Some((a, p, own, how)) => {
                let (a, p, own, how) = (*a, p.clone(), *own, *how);
                let label = p.spec.label();
                let reason = if own && how == PlacedBy::Isomorphism {
                    format!(
                        "{label} placed by the grid the program declared (identification's mapping is one of the \
                         graph's isomorphisms but not the program's: its {what} agree on {} of the \
                         point-to-point operations, the declared grid's on {})",
                        percent(share(count(&base))),
                        percent(share(count(&a)))
                    )
                } else if own {
                    format!(
                        "{label} placed by the ranks' first contacts (identification's mapping is one of the \
                         graph's isomorphisms but not the program's: its {what} agree on {} of the \
                         point-to-point operations, the placement built from the trace on {})",
                        percent(share(count(&base))),
                        percent(share(count(&a)))
                    )
                } else {
                    format!(
                        "{label} (isomorphic to the identified {identified}; its {what} agree on {} of the \
                         point-to-point operations against {})",
                        percent(share(count(&a))),
                        percent(share(count(&base)))
                    )
                };
                (
                    p,
                    DirectionsFrom {
                        topology: label,
                        identified: identified.clone(),
                        agreement: share(count(&a)),
                        identified_agreement: share(count(&base)),
                        considered: considered.clone(),
                        reason,
                        placed_by: how,
                        contest: None,
                        contender: None,
                    },
                )
            }
            None => {
                let reason = if considered.len() == 1 {
                    format!("{identified} (the identified topology; no isomorphic equivalent)")
                } else if others.is_empty() {
                    format!("{identified} (the identified topology and mapping; no placement agrees better)")
                } else {
                    format!("{identified} (the identified topology; no isomorphic equivalent's {what} agree better)")
                };
                (
                    matched.clone(),
                    DirectionsFrom {
                        topology: identified.clone(),
                        identified: identified.clone(),
                        agreement: share(count(&base)),
                        identified_agreement: share(count(&base)),
                        considered: considered.clone(),
                        reason,
                        placed_by: PlacedBy::Identification,
                        contest: None,
                        contender: None,
                    },
                )
            }
        }
    };
    // Without a contest the moves' figures are shown (what a direction means, whatever the
    // data); with one, the placement agreeing better with sizes comes first, as before.
    Ok(if with_sizes == moves_only {
        result(moves_only, false)
    } else {
        let (p, mut from) = result(with_sizes, true);
        from.contender = Some(Box::new(result(moves_only, false)));
        (p, from)
    })
}
