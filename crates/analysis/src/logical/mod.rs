//! The logical trace of a run (Logicalization §4.3): one rank's calls rewritten so that every
//! point-to-point peer is a direction of the identified topology (`east`, `parent`, `bit2`...),
//! with collectives unchanged and waits linked to the requests they complete; a message of a
//! rank to itself is the direction `self` ([`SELF_DIRECTION`]), and a peer outside the
//! topology an offset direction in its coordinates ([`is_offset_direction`]: `(+2,0,0)`).
//! Expanding it for any rank (a direction yields a call only where that neighbour exists) gives
//! back a physical trace that [`verify`] compares with the real one. [`Accuracy`] says how much
//! traffic fell outside the topology (kept as offsets) and how much could not be named at all
//! (dropped: none on a sound trace).
//!
//! A receive from `MPI_ANY_SOURCE` whose status the trace lacks names the sender of the
//! message the matching pairs it with ([`Sourced`]: the engine's one matching), in the logical
//! trace and in the real trace [`verify`] compares with; one nothing matched (a cancelled
//! receive) stays from any source.
//!
//! Which calls become records: point-to-point calls with at least one operation whose peer can
//! be named (a direction, `self` or an offset), completions (`MPI_Wait*`, `MPI_Test*`) of at
//! least one such operation, collectives, and `MPI_Init`/`MPI_Finalize`. Queries, probes, communicator management and completions of
//! dropped operations only are left out (counted in [`LogicalTrace::skipped_calls`]).
//!
//! Where no rank has every direction of the topology (a 4×2 grid has no rank with both a north
//! and a south neighbour), one rank of each class of ranks with the same directions is rewritten
//! and the classes are merged so that every class's expansion is its own sequence, in order
//! (`merge`); the classes and the ranks whose records make up the trace are reported.

use crate::compress::Folding;
use crate::topology::TopologyReport;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use tracelogic_graph::{Family, TopologySpec};
pub use tracelogic_model::Sourced;
use tracelogic_model::{CallIdx, CallKind, CollectiveOp, P2pDir, Rank, Trace, ANY_SOURCE, NOT_COMPLETED, NO_ROOT};

mod accuracy;
mod align;
mod canonical;
mod choice;
mod classes;
mod completion_sets;
mod declared_grid;
mod expand;
mod first_contacts;
mod memory;
mod merge;
mod offsets;
pub(crate) mod per_rank;
mod placement;
mod record;
mod rewrite;
mod roots;
mod sizes;
#[cfg(test)]
mod tests;
mod verify;

pub use accuracy::*;
use classes::*;
use completion_sets::*;
pub use expand::*;
use offsets::*;
pub use offsets::{is_offset_direction, offset_name, offset_node, OffsetRanks};
use per_rank::*;
pub use placement::*;
pub use record::*;
pub use rewrite::*;
use roots::*;
use sizes::*;
pub use verify::*;

pub use choice::{
    agreement, choose_from, choose_with_grids, ConsideredTopology, DirectionsFrom, PlacedBy, PlacementContest, Step,
    MAX_EQUIVALENTS, MAX_NEIGHBOURS, PROPAGATION_STEPS,
};
pub use classes::ContentKey;
pub(crate) use classes::FastHasher;
pub use declared_grid::{declared_grids, DeclaredGrid};
pub use first_contacts::{
    place_by_first_contacts, place_by_first_contacts_from, Agreement, ContactSource, LocalContacts, Scoring,
};

/// The direction of a message a rank sends to or receives from itself (NAS CG's diagonal
/// processes exchange with themselves, `exch_proc = me` in cg.f). It is a move in every topology
/// but exists only at the ranks that make it ([`LogicalTrace::self_ranks`]), so its operations
/// expand only there, and it never becomes an edge of the topology graph.
pub const SELF_DIRECTION: &str = "self";

/// Version tag of the JSON form of [`LogicalTrace`] and of the compressed program; bumped when
/// a field changes meaning (documented in `docs/logical.md`).
pub const SCHEMA: &str = "tracelogic-logical/1";

/// The topology a logical trace refers to, for display.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TopologyInfo {
    /// Family name (`torus`, `stencil6`, ...).
    pub family: String,
    /// Dimensions.
    pub dims: Vec<u32>,
    /// Human label (`3x3 6-point stencil`).
    pub label: String,
    /// Direction names in topology order.
    pub directions: Vec<String>,
}

/// The logical trace of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogicalTrace {
    /// [`SCHEMA`].
    pub schema: String,
    /// Where the run came from.
    pub source: String,
    /// Number of world ranks.
    pub ranks: u32,
    /// The topology.
    pub topology: TopologyInfo,
    /// The placement the directions refer to (needed to expand).
    pub placement: Placement,
    /// Ranks whose traces were rewritten (one when a maximal rank's trace alone is kept).
    pub ranks_used: Vec<Rank>,
    /// True when `ranks_used[0]` has a neighbour in every direction.
    pub maximal: bool,
    /// The records, in program order.
    pub records: Vec<Record>,
    /// Calls of the used ranks that are not records (queries, probes, communicator set-up,
    /// completions of dropped operations only).
    pub skipped_calls: u64,
    /// Traffic outside the topology.
    pub accuracy: Accuracy,
    /// True when every rank uses, per direction and send/receive, exactly the tags the logical
    /// trace records for the directions it has (tags name directions or phases, not cells or
    /// ranks), so a replay may match receives by tag.
    #[serde(default)]
    pub tags_consistent: bool,
    /// The classes of ranks (same existing directions) whose sequences were merged, one
    /// representative each: when no rank is maximal, or when a maximal rank's trace alone does
    /// not reproduce every class (NAS LU's boundary sizes); empty when one rank was rewritten.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<RankClass>,
    /// Records of the merge that some class seeing them does not execute at that point
    /// (rank-dependent behaviour); 0 when every class's expansion is its own sequence.
    #[serde(default)]
    pub merge_conflicts: u64,
    /// Which of the topologies isomorphic to the identified one names the directions, and why
    /// ([`Placement::choose`]); `None` when the placement was given rather than chosen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub directions_from: Option<DirectionsFrom>,
    /// Ranks that send or receive messages to or from themselves, where no direction of the
    /// topology leads back to them (NAS CG's diagonal processes), in rank order: the ranks at
    /// which [`SELF_DIRECTION`] exists. Empty when no rank does (then `self` is not among
    /// `topology.directions`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub self_ranks: Vec<Rank>,
    /// The offset directions (peers outside the topology, [`is_offset_direction`]), each with the
    /// ranks that use it, where alone it exists (as `self` exists at [`Self::self_ranks`] only);
    /// by name, as they follow `self` in `topology.directions`. Empty when every peer is a
    /// neighbour.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub offset_ranks: Vec<OffsetRanks>,
    /// True when every rank's own message sizes were read from its trace into the records
    /// ([`Operation::bytes_by_rank`]; the per-class sizes of the merge are then folded into
    /// them): the expansion gives each rank the sizes it sent and received. False when the
    /// ranks were given (the trace of those ranks) or some rank's operations do not line up
    /// with its expansion (then verification shows which).
    #[serde(default)]
    pub sizes_fitted: bool,
    /// Operations of the records that carry per-rank sizes ([`Operation::bytes_by_rank`]).
    #[serde(default)]
    pub rank_sized_operations: u64,
    /// Records executed by some of the ranks that have their directions only
    /// ([`LogicalCall::only_ranks`]: rank-dependent branches of the program), or of which some
    /// ranks skip an operation ([`Operation::absent_on`]).
    #[serde(default)]
    pub branches: u64,
}

impl LogicalTrace {
    /// No rank made a point-to-point call: the program is its collectives, with no direction
    /// and no topology (its placement is the ranks in their own order).
    pub fn collectives_only(&self) -> bool {
        self.directions_from
            .as_ref()
            .is_some_and(|d| d.placed_by == choice::PlacedBy::CollectivesOnly)
    }

    /// The topology its directions name, as the shells and the skeleton say it: the
    /// placement's label, or that the run has none ([`LogicalTrace::collectives_only`]).
    pub fn topology_text(&self) -> String {
        if self.collectives_only() {
            "collectives only, no point-to-point call".to_string()
        } else {
            self.placement.spec.label()
        }
    }
}

/// Classes of ranks (same directions, same logical sequence) beyond which the merge groups ranks
/// by their directions only (the merge costs O(records × classes²)).
pub const MAX_CLASSES: usize = 64;

/// Ranks with the same existing directions, merged as one sequence(merging when no
/// rank has every neighbour).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankClass {
    /// The representative whose trace was rewritten (its first member in the process-based
    /// order of [`logicalize`]).
    pub rank: Rank,
    /// Every rank of the class.
    pub ranks: Vec<Rank>,
    /// The directions the class has a neighbour in.
    pub directions: Vec<String>,
    /// Records of the logical trace taken from the representative.
    pub records: u64,
    /// Records of the logical trace this class sees but executes otherwise (other message
    /// sizes, another call, or nothing at that point): rank-dependent behaviour the merge
    /// could not keep. 0 when the class's expansion is its own sequence.
    pub conflicts: u64,
    /// False when the class disagreed with the others so much that leaving it out of the merge
    /// reproduces more operations overall; verification shows how it fares.
    #[serde(default = "yes")]
    pub merged: bool,
}

fn yes() -> bool {
    true
}

impl LogicalTrace {
    /// Records of the uncompressed logical trace (Table 1's "raw trace length").
    pub fn raw_length(&self) -> usize {
        self.records.len()
    }

    /// The records as the rank each came from executed them: directions replaced by that rank's
    /// neighbours (Table 5's physical column, record for record).
    pub fn physical_view(&self) -> Vec<LogicalCall> {
        let tables = self.expansion_tables();
        self.records
            .iter()
            .map(|r| {
                let mut c = r.call.clone();
                for o in &mut c.ops {
                    if let Partner::Direction(d) = &o.partner {
                        if let Some(&p) = tables.get(r.rank as usize).and_then(|t| t.get(d)) {
                            o.partner = Partner::Rank(p);
                        }
                    }
                }
                c
            })
            .collect()
    }

    /// Table 5: physical and logical records side by side, one pair per line.
    pub fn side_by_side(&self) -> String {
        let physical: Vec<String> = self.physical_view().iter().map(LogicalCall::text).collect();
        let width = physical.iter().map(|p| p.chars().count()).max().unwrap_or(0).max(8);
        let mut out = format!("{:<width$}   LOGICAL TRACE\n", "PHYSICAL TRACE (rank: call)");
        for (p, r) in physical.iter().zip(&self.records) {
            let origin = format!("{}: {p}", r.rank);
            out.push_str(&format!("{origin:<w$}   {}\n", r.call.text(), w = width + 4));
        }
        out
    }

    /// Readable text, one record per line (Table 5's logical column).
    pub fn text(&self) -> String {
        let mut out = format!(
            "# logical trace of {} ({} ranks, {}), from rank{} {}\n",
            self.source,
            self.ranks,
            self.topology.label,
            if self.ranks_used.len() > 1 { "s" } else { "" },
            self.ranks_used
                .iter()
                .map(|r| r.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        for r in &self.records {
            out.push_str(&r.call.text());
            out.push('\n');
        }
        out
    }
}

/// The logical trace of `trace` under `placement`: the trace of a maximal rank (or a merge of
/// several ranks covering every direction) with peers rewritten as directions. `trace` is a
/// [`Sourced`] trace, or a [`Trace`] whose wildcard receives are then named from its own
/// matching (for callers without the engine's).
pub fn logicalize<'a>(trace: impl Into<Sourced<'a>>, placement: &Placement) -> Result<LogicalTrace, String> {
    logicalize_ranks(trace, placement, None)
}

/// [`logicalize`] from the traces of the given ranks (merged in this order) instead of the
/// ranks chosen automatically.
pub fn logicalize_ranks<'a>(
    trace: impl Into<Sourced<'a>>,
    placement: &Placement,
    ranks: Option<&[Rank]>,
) -> Result<LogicalTrace, String> {
    logicalize_keyed(&trace.into(), placement, ranks, None).map(|(logical, _)| logical)
}

/// [`logicalize_ranks`] with the ranks' [`content_key`]s already computed (by the placement
/// choice), or `None` to compute them. Also returns the folding the merge chose its records
/// by, when it compared alternatives ([`crate::compress::Folding`]).
fn logicalize_keyed(
    trace: &Trace,
    placement: &Placement,
    ranks: Option<&[Rank]>,
    keys: Option<&[ContentKey]>,
) -> Result<(LogicalTrace, Option<Folding>), String> {
    let n = trace.num_ranks();
    if let Some(bad) = ranks.and_then(|rs| rs.iter().find(|&&r| r >= n)) {
        return Err(format!("rank {bad} is out of range (the trace has {n} ranks)"));
    }
    if ranks.is_some_and(|rs| rs.is_empty()) {
        return Err("no rank given to build the logical trace from".into());
    }
    if placement.node_of_rank.len() != n as usize {
        return Err(format!(
            "the placement has {} ranks but the trace has {n}",
            placement.node_of_rank.len()
        ));
    }
    if n == 0 {
        return Err("the trace has no ranks".into());
    }
    let dirs = placement.spec.directions();
    let mut tables = placement.direction_tables();
    let self_ranks = ranks_messaging_themselves(trace, &tables);
    // Every rank reaches itself in `self` (unless a direction of the topology leads back to it).
    for (r, table) in tables.iter_mut().enumerate() {
        table.entry(r as Rank).or_insert_with(|| SELF_DIRECTION.into());
    }
    // Peers no direction reaches, as offsets in the topology's coordinates (after `self`).
    let offsets = add_offset_directions(trace, placement, &mut tables);
    // Directions that exist at each rank, as bit sets over `names`: the topology's, then
    // `self` when some rank messages itself.
    let mut names: Vec<String> = dirs.iter().map(|d| d.name()).collect();
    let mut coverage: Vec<Vec<bool>> = placement
        .node_of_rank
        .iter()
        .map(|&u| dirs.iter().map(|d| placement.spec.neighbour(u, d).is_some()).collect())
        .collect();
    // Without a point-to-point operation on any rank no direction is ever used: every rank
    // has every direction it could need (else the ends of a 2-rank line were two classes, and
    // neither rank "maximal", in a program of collectives only).
    if trace.ranks.iter().all(|r| r.p2p.is_empty()) {
        coverage.iter_mut().flatten().for_each(|c| *c = true);
    }
    if !self_ranks.is_empty() {
        names.push(SELF_DIRECTION.into());
        for (r, c) in coverage.iter_mut().enumerate() {
            c.push(self_ranks.binary_search(&(r as Rank)).is_ok());
        }
    }
    for o in &offsets {
        names.push(o.direction.clone());
        for (r, c) in coverage.iter_mut().enumerate() {
            c.push(o.ranks.binary_search(&(r as Rank)).is_ok());
        }
    }
    let exists: Vec<bool> = (0..names.len()).map(|k| coverage.iter().any(|c| c[k])).collect();
    let full = |r: usize| coverage[r].iter().zip(&exists).all(|(&c, &e)| c || !e);
    // Each rank's peers as partners (`None`: outside the topology, dropped).
    let partner_of = |r: Rank| {
        let table = &tables[r as usize];
        move |peer: Rank| {
            if peer == ANY_SOURCE {
                Some(Partner::Any)
            } else {
                table.get(&peer).map(|d| Partner::Direction(d.clone()))
            }
        }
    };
    let rewrite = |r: Rank| records_of(trace, r, &partner_of(r));
    // The ranks to rewrite, each with the ranks it stands for, chosen from placement-invariant
    // facts only (see [`representative_order`]). With a maximal rank and several classes, both
    // that rank alone and the merge of every class are candidates (`alone_first`).
    // Per rank (automatic choice only): its operations as (send/receive, direction index, size).
    let mut own_ops: Vec<Vec<OpKey>> = Vec::new();
    let (groups, alone_first): (Vec<(Rank, Vec<Rank>)>, bool) = match ranks {
        Some(rs) => (
            rs.iter()
                .map(|&r| {
                    let members = (0..n)
                        .filter(|&q| q == r || (coverage[q as usize] == coverage[r as usize] && !rs.contains(&q)))
                        .collect();
                    (r, members)
                })
                .collect(),
            false,
        ),
        None => {
            let order = representative_order(trace, placement, keys);
            // Ranks with the same directions but another logical sequence (NAS LU's pintgr on
            // the ranks holding a global face, CG's and MG's classes) are classes of their own,
            // so the merge gives each its own branches; beyond `MAX_CLASSES` the classes are by
            // directions only, as before.
            let structure: Vec<u64>;
            (structure, own_ops) = each_index_counted(REWRITING, n as usize, |r| {
                let r = r as Rank;
                shape_of(trace, r, &partner_of(r), &names)
            })
            .into_iter()
            .unzip();
            let mut classes = classes_in_order(&order, &coverage, &structure);
            if classes.len() > MAX_CLASSES {
                classes = classes_in_order(&order, &coverage, &[]);
            }
            match order.iter().find(|&&r| full(r as usize)) {
                Some(&r) if classes.len() == 1 => (vec![(r, vec![r])], false),
                Some(_) => (classes, true),
                None => (classes, false),
            }
        }
    };
    let maximal = full(groups[0].0 as usize);
    let mut skipped = 0;
    let mut folding = None;
    let (mut records, used, classes, conflicts) = if groups.len() == 1 {
        let (recs, sk) = rewrite(groups[0].0);
        skipped += sk;
        (recs, vec![groups[0].0], Vec::new(), 0)
    } else {
        let mut class_traces = Vec::with_capacity(groups.len());
        let mut class_skipped = Vec::with_capacity(groups.len());
        let rewritten = each_index_counted(REWRITING, groups.len(), |g| rewrite(groups[g].0));
        for ((r, members), (recs, sk)) in groups.iter().zip(rewritten) {
            class_skipped.push(sk);
            class_traces.push(merge::ClassTrace {
                rank: *r,
                members: {
                    let mut m = members.clone();
                    m.sort_unstable();
                    m
                },
                visible: coverage[*r as usize].clone(),
                records: recs,
            });
        }
        let weights: Vec<u64> = groups.iter().map(|(_, m)| m.len() as u64).collect();
        // A maximal rank's trace alone is kept when it reproduces every class as well as the
        // merge does (NAS BT, tori): the merge is taken only when the classes execute something
        // the maximal rank's expansion does not give them (NAS LU's shorter boundary messages).
        let alone_score = alone_first.then(|| merge::score(&class_traces[0].records, &class_traces, &names, &weights));
        let merged_best = match alone_score {
            Some(s) if s >= 1.0 => None,
            _ => {
                let (merged, included, merged_folding) = merge::merge_best(&class_traces, &names, &weights);
                let better =
                    alone_score.is_none_or(|s| merge::score(&merged.records, &class_traces, &names, &weights) > s);
                better.then_some((merged, included, merged_folding))
            }
        };
        match merged_best {
            None => {
                skipped += class_skipped[0];
                let rep = groups[0].0;
                (class_traces.swap_remove(0).records, vec![rep], Vec::new(), 0)
            }
            Some((merged, included, merged_folding)) => {
                skipped += class_skipped.iter().sum::<u64>();
                folding = merged_folding;
                let classes: Vec<RankClass> = groups
                    .iter()
                    .zip(merged.contributed.iter().zip(&merged.class_conflicts))
                    .zip(included)
                    .map(|(((r, members), (&records, &conflicts)), merged)| RankClass {
                        rank: *r,
                        ranks: members.clone(),
                        directions: names
                            .iter()
                            .zip(&coverage[*r as usize])
                            .filter(|(_, &c)| c)
                            .map(|(d, _)| d.clone())
                            .collect(),
                        records,
                        conflicts,
                        merged,
                    })
                    .collect();
                let used: Vec<Rank> = match ranks {
                    Some(rs) => rs.to_vec(),
                    None => {
                        let mut by_share: Vec<&RankClass> = classes.iter().filter(|c| c.records > 0).collect();
                        by_share.sort_by_key(|c| (std::cmp::Reverse(c.records), c.rank));
                        by_share.iter().map(|c| c.rank).collect()
                    }
                };
                (merged.records, used, classes, merged.conflicts)
            }
        }
    };
    // Every rank's own message sizes (automatic choice only: given ranks mean "the trace of
    // these ranks").
    let sizes_fitted = ranks.is_none() && fit_rank_sizes(&mut records, &names, &coverage, &own_ops);
    // Every rank's own root of collectives on smaller communicators (records compare those by
    // the root's rank in the communicator).
    if ranks.is_none() {
        fit_rank_roots(trace, &mut records);
    }
    let rank_sized_operations = records
        .iter()
        .flat_map(|r| &r.call.ops)
        .filter(|o| !o.bytes_by_rank.is_empty())
        .count() as u64;
    // Records some ranks skip: as a whole (`only_ranks`) or one operation of it (`absent_on`).
    let branches = records
        .iter()
        .filter(|r| r.call.only_ranks.is_some() || r.call.ops.iter().any(|o| !o.absent_on.is_empty()))
        .count() as u64;
    let logical = LogicalTrace {
        schema: SCHEMA.into(),
        source: trace.source.clone(),
        ranks: n,
        sizes_fitted,
        rank_sized_operations,
        branches,
        topology: TopologyInfo {
            family: placement.spec.family.name().into(),
            dims: placement.spec.dims.clone(),
            label: placement.spec.label(),
            directions: names,
        },
        placement: placement.clone(),
        ranks_used: used,
        maximal,
        records,
        skipped_calls: skipped,
        accuracy: accuracy(trace, placement),
        tags_consistent: false,
        classes,
        merge_conflicts: conflicts,
        directions_from: None,
        self_ranks,
        offset_ranks: offsets,
    }
    .with_tag_check(trace, &tables);
    Ok((logical, folding))
}

/// The progress stage of rewriting the ranks' calls in directions ([`crate::progress`]).
const REWRITING: &str = "rewriting the calls in directions";

/// The logical trace of `trace` under the placement [`Placement::choose`] picks from the
/// topology report (the identified match, or an isomorphic equivalent whose directions the
/// ranks agree on better), from the given ranks when `ranks` is `Some`; the choice is recorded
/// in [`LogicalTrace::directions_from`].
pub fn logicalize_identified<'a>(
    trace: impl Into<Sourced<'a>>,
    report: &TopologyReport,
    ranks: Option<&[Rank]>,
) -> Result<LogicalTrace, String> {
    logicalize_identified_folded(trace, report, ranks).map(|(logical, _)| logical)
}

/// [`logicalize_identified`], and the folding the merge chose its records by when it compared
/// alternatives: [`Folding::program`] of the records is their [`crate::compress::compress`]
/// without folding them again.
pub fn logicalize_identified_folded<'a>(
    trace: impl Into<Sourced<'a>>,
    report: &TopologyReport,
    ranks: Option<&[Rank]>,
) -> Result<(LogicalTrace, Option<Folding>), String> {
    let sourced = trace.into();
    let trace: &Trace = &sourced;
    // Each rank's key on every core natively (a pass over its calls).
    let keys: Vec<ContentKey> = each_index_counted("reading every rank's calls", trace.ranks.len(), |r| {
        content_key(trace, r as Rank)
    });
    crate::progress::step("choosing the directions' placement", 0, 0);
    let (placement, mut choice) = match choice::choose_keyed(trace, report, &keys) {
        Ok(chosen) => chosen,
        // A run with neither point-to-point traffic nor collectives has nothing to show.
        Err(_)
            if report.identification.matched.is_none()
                && (!report.no_point_to_point || trace.ranks.iter().any(|r| !r.collectives.is_empty())) =>
        {
            rank_offsets(trace, &keys, report.no_point_to_point)?
        }
        Err(e) => return Err(e),
    };
    let contender = choice.contender.take();
    let (mut logical, mut folding) = logicalize_keyed(trace, &placement, ranks, Some(&keys))?;
    // The agreement with and without sizes preferred different placements: the shorter
    // program wins, ties keep the first (choice.rs, `PlacementContest`).
    if let Some(other) = contender {
        let (other_placement, other_choice) = *other;
        if let Ok((other_logical, other_folding)) = logicalize_keyed(trace, &other_placement, ranks, Some(&keys)) {
            let length = |l: &LogicalTrace, f: &Option<crate::compress::Folding>| {
                f.as_ref().map_or_else(
                    || crate::compress::Folding::of(&l.records).compressed_length,
                    |f| f.compressed_length,
                )
            };
            let (first, second) = (length(&logical, &folding), length(&other_logical, &other_folding));
            let kept_by_moves = second < first;
            let (first_label, second_label) = (choice.topology.clone(), other_choice.topology.clone());
            if kept_by_moves {
                (logical, folding, choice) = (other_logical, other_folding, other_choice);
            }
            let (kept, mut other, kept_length, other_length) = if kept_by_moves {
                (second_label, first_label, second, first)
            } else {
                (first_label, second_label, first, second)
            };
            // Two placements of one topology (identification's and one built from the trace)
            // share a label: the other is then named as such.
            if other == kept {
                other = format!("another placement of the {kept}");
            }
            choice.reason = format!(
                "{}; {other} agreed better counting {}, but its program has {other_length} records \
                 against {kept_length}",
                choice.reason,
                if kept_by_moves { "sizes too" } else { "directions only" }
            );
            choice.contest = Some(choice::PlacementContest {
                kept,
                kept_by_moves,
                kept_length,
                other,
                other_length,
            });
        }
    }
    logical.directions_from = Some(choice);
    Ok((logical, folding))
}

/// The placement of a run without an identified topology: rank `r` is node `r` of an
/// all-to-all of the run's ranks, whose direction `+k` leads to rank `(r + k) mod n`. Every
/// peer has a direction, so nothing is dropped, and the ranks of an SPMD program that talk to
/// the same relative partners share their records (the peers' relative encoding of ScalaTrace).
///
/// A run without point-to-point traffic (NAS FT, EP; programs that only call collectives) has
/// a logical trace of its collectives, in order, loop-compressed and expanded like any other,
/// with no direction ever used (ScalaTrace records such programs the same way). A placement is
/// still needed: the ranks in their own order on a line, whose two directions cost nothing at
/// any rank count (an all-to-all of 65,536 ranks would need 4·10⁹ directions).
/// Most ranks a rank-offset placement is built for: its direction tables hold every rank's
/// direction to every other (held-out fuzzing: 2,000 declared ranks 0.83 GB, 4,000 3.3 GB,
/// 10,000 out of memory), so past this a clear refusal beats an abort.
pub const RANK_OFFSETS_MAX_RANKS: u32 = 2048;

fn rank_offsets(
    trace: &Trace,
    keys: &[ContentKey],
    collectives_only: bool,
) -> Result<(Placement, choice::DirectionsFrom), String> {
    let n = trace.num_ranks();
    if !collectives_only && n > RANK_OFFSETS_MAX_RANKS {
        return Err(format!(
            "no topology was identified for this run, and rank offsets (every rank's direction to \
             every other) are kept for at most {RANK_OFFSETS_MAX_RANKS} ranks: their tables grow as the ranks \
             squared and this trace declares {n} (`tracelogic topology` shows why none was \
             identified)"
        ));
    }
    let family = if collectives_only {
        Family::Line
    } else {
        Family::AllToAll
    };
    let spec = TopologySpec::new(family, vec![n.max(2)])?;
    if spec.num_nodes() != n {
        return Err("the run has one rank: no logical trace across ranks".into());
    }
    let placement = Placement {
        spec,
        node_of_rank: (0..n).collect(),
    };
    let (agreed, total) = choice::agreement_keyed(trace, &placement, keys);
    let agreement = if total == 0 {
        1.0
    } else {
        agreed.moves as f64 / total as f64
    };
    let label = placement.spec.label();
    Ok((
        placement,
        choice::DirectionsFrom {
            topology: label,
            identified: "none".into(),
            agreement,
            identified_agreement: 0.0,
            considered: Vec::new(),
            reason: if collectives_only {
                "no point-to-point traffic: the program is its collectives, on the ranks in their own \
                 order (no direction is used)"
                    .into()
            } else {
                "rank offsets, as no topology was identified for this run (+k: the rank k further, \
                 modulo the ranks; the relative encoding of peers ScalaTrace uses)"
                    .into()
            },
            placed_by: if collectives_only {
                choice::PlacedBy::CollectivesOnly
            } else {
                choice::PlacedBy::RankOffsets
            },
            contest: None,
            contender: None,
        },
    ))
}

/// A (sent, direction id, tag) triple: directions as small integers (interned over the
/// logical trace's and every rank's direction names), so the set of every operation of every
/// rank hashes three words, not a name per operation.
type TagKey = (bool, u32, i32);
/// Sets of [`TagKey`]s, hashed by [`FastHasher`] (filled from every operation of every rank).
type TagSet = std::collections::HashSet<TagKey, std::hash::BuildHasherDefault<FastHasher>>;

impl LogicalTrace {
    fn with_tag_check(mut self, trace: &Trace, tables: &[HashMap<Rank, String>]) -> LogicalTrace {
        fn intern<'a>(ids: &mut HashMap<&'a str, u32>, d: &'a str) -> u32 {
            let next = ids.len() as u32;
            *ids.entry(d).or_insert(next)
        }
        let mut ids: HashMap<&str, u32> = HashMap::new();
        let logical: TagSet = self
            .records
            .iter()
            .flat_map(|r| &r.call.ops)
            .filter_map(|o| match &o.partner {
                Partner::Direction(d) => Some((o.dir == P2pDir::Send, intern(&mut ids, d.as_str()), o.tag)),
                _ => None,
            })
            .collect();
        // Per rank: its peers in a sorted list of (rank, direction id).
        let peer_tables: Vec<Vec<(Rank, u32)>> = tables
            .iter()
            .map(|t| {
                let mut table: Vec<(Rank, u32)> = t.iter().map(|(&r, d)| (r, intern(&mut ids, d.as_str()))).collect();
                table.sort_unstable();
                table
            })
            .collect();
        let neighbours = self.expansion_tables();
        // Per rank (on every core), peers looked up in the sorted list of the rank's few
        // neighbours.
        let agrees = each_index(trace.ranks.len(), |i| {
            let rt = &trace.ranks[i];
            let table = &peer_tables[rt.rank as usize];
            let p = &rt.p2p;
            let mut own = TagSet::default();
            let mut last: Option<TagKey> = None;
            for i in 0..p.len() {
                let Ok(at) = table.binary_search_by_key(&p.peer[i], |&(r, _)| r) else {
                    continue;
                };
                let key = (p.dir[i] == P2pDir::Send, table[at].1, p.tag[i]);
                if last != Some(key) {
                    own.insert(key);
                    last = Some(key);
                }
            }
            let here = &neighbours[rt.rank as usize];
            let exists: Vec<bool> = {
                let mut e = vec![false; ids.len()];
                for (d, &k) in &ids {
                    e[k as usize] = here.contains_key(*d);
                }
                e
            };
            let expected: TagSet = logical.iter().filter(|k| exists[k.1 as usize]).cloned().collect();
            own == expected
        });
        self.tags_consistent = agrees.into_iter().all(|a| a);
        self
    }
}
