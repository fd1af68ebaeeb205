//! The logical trace of a run (Logicalization §4.3): one rank's calls with peers rewritten as
//! topology directions, its accuracy, its verification by expansion, its loop compression, the
//! physical trace it expands to on any rank, and the C skeleton generated from it
//! (Logicalization §2).

use crate::{Engine, Error, Result, Scope};
use serde::{Deserialize, Serialize};
use std::cell::OnceCell;
use tracelogic_analysis::compress::{compress_with, Folding};
pub use tracelogic_analysis::compress::{CompressOptions, Program};
use tracelogic_analysis::logical::{
    expand_records, logicalize_identified, logicalize_identified_folded, physical_calls, rank_records, verify, Sourced,
};
pub use tracelogic_analysis::logical::{
    ranks_text, Accuracy, DirectionsFrom, LogicalTrace, OffsetRanks, PhysicalCall, PlacedBy, Placement, RankClass,
    Record, TopologyInfo, Verification, SCHEMA,
};
use tracelogic_analysis::progress;
use tracelogic_analysis::skeleton::{skeleton_c, skeleton_check};
use tracelogic_analysis::topology::Threshold;
use tracelogic_model::{Rank, Selection};

/// One rank's place in the topology of a logical trace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlacedRank {
    /// World rank.
    pub rank: Rank,
    /// The topology node it plays.
    pub node: u32,
    /// That node's coordinates (one per dimension; the node number for families without).
    pub coords: Vec<u32>,
}

/// The logical trace of a selection, verified and compressed (`tracelogic logical`, the page's
/// logical view).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogicalReport {
    /// The logical trace (its records, classes, accuracy, placement).
    pub logical: LogicalTrace,
    /// Verification by expansion.
    pub verification: Verification,
    /// The loop-compressed program.
    pub program: Program,
    /// The selection the trace was restricted to (times absolute, in the trace's clock).
    pub selection: Selection,
    /// The C skeleton, generated on first use.
    #[serde(skip)]
    skeleton: OnceCell<std::result::Result<String, String>>,
}

/// What the page's logical view shows of a [`LogicalReport`]: figures, the program, the
/// side-by-side text and the merged classes. The logical trace itself (tens of MB on a large
/// run) stays with the worker for the view's downloads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogicalView {
    /// The topology the trace is expressed in.
    pub topology: TopologyInfo,
    /// Ranks the logical trace was taken from.
    pub ranks_used: Vec<u32>,
    /// Whether a single rank had every neighbour.
    pub maximal: bool,
    /// Dropped calls and bytes, per rank.
    pub accuracy: Accuracy,
    /// How much of every rank's calls the expansion reproduces.
    pub verification: Verification,
    /// The loop-compressed program.
    pub program: Program,
    /// Physical and logical calls side by side (Table 5).
    pub side_by_side: String,
    /// Without a maximal rank: the classes of ranks merged (empty otherwise).
    pub classes: Vec<RankClass>,
    /// Records some class sees but executes otherwise (rank-dependent behaviour).
    pub merge_conflicts: u64,
    /// Why there is no C skeleton (`None`: it can be downloaded).
    pub no_skeleton: Option<String>,
    /// Which isomorphic topology names the directions, and why (`None` before the choice ran).
    pub directions_from: Option<DirectionsFrom>,
    /// Ranks that message themselves, where the direction `self` exists (NAS CG's diagonal).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub self_ranks: Vec<u32>,
    /// Where the trace was taken from and why ([`LogicalReport::origin`]).
    #[serde(default)]
    pub origin: String,
    /// Where the compressed length goes (records outside loops, per loop, of some ranks only,
    /// with offset directions).
    #[serde(default)]
    pub length_breakdown: tracelogic_analysis::compress::LengthBreakdown,
}

impl LogicalReport {
    /// Every rank's place in the topology, in rank order.
    pub fn placement(&self) -> Vec<PlacedRank> {
        let placement = &self.logical.placement;
        placement
            .node_of_rank
            .iter()
            .enumerate()
            .map(|(r, &node)| PlacedRank {
                rank: r as Rank,
                node,
                coords: placement.spec.coords(node),
            })
            .collect()
    }

    /// True when the ranks were placed from their first contacts rather than by
    /// `tracelogic topology`'s mapping.
    pub fn placed_by_first_contacts(&self) -> bool {
        self.logical
            .directions_from
            .as_ref()
            .is_some_and(|d| d.placed_by.replaces_mapping())
    }

    /// Which ranks the trace was taken from and why: `From rank 5 (a maximal rank: …).`,
    /// including the note that says the classes were merged.
    pub fn origin(&self) -> String {
        let l = &self.logical;
        let used: Vec<String> = l.ranks_used.iter().map(|x| x.to_string()).collect();
        let collectives_only = l
            .directions_from
            .as_ref()
            .is_some_and(|d| d.placed_by == PlacedBy::CollectivesOnly);
        format!(
            "From rank{} {}{}.",
            if used.len() > 1 { "s" } else { "" },
            used.join(", "),
            if collectives_only && l.classes.is_empty() {
                " (no rank sends a point-to-point message, so one rank's trace stands for all)"
            } else if l.maximal && !l.classes.is_empty() {
                " (a maximal rank: it has every neighbour; its trace alone does not give every class its own operations, so the classes were merged)"
            } else if l.maximal {
                " (a maximal rank: it has every neighbour)"
            } else if used.len() > 1 {
                " (no rank has every neighbour; their traces were merged)"
            } else {
                " (it lacks a neighbour in some directions: their operations are not in the logical trace)"
            }
        )
    }

    /// The C skeleton (`tracelogic skeleton`), or why there is none.
    pub fn skeleton(&self) -> std::result::Result<&str, &str> {
        match self.skeleton.get_or_init(|| skeleton_c(&self.logical, &self.program)) {
            Ok(s) => Ok(s),
            Err(e) => Err(e),
        }
    }

    /// Why there is no C skeleton (`None`: [`LogicalReport::skeleton`] writes one), without
    /// writing it when it was not written yet: its replay of the receives' matching costs
    /// ranks × calls (on a 16.6 M-call run, two thirds of the page's logical view when the view
    /// wrote it), so the page writes the skeleton when it is downloaded.
    pub fn no_skeleton(&self) -> Option<String> {
        match self.skeleton.get() {
            Some(written) => written.as_ref().err().cloned(),
            None => skeleton_check(&self.logical, &self.program).err(),
        }
    }

    /// The logical trace as JSON, as the page's download writes it.
    pub fn json(&self) -> std::result::Result<String, String> {
        serde_json::to_string_pretty(&self.logical).map_err(|e| format!("cannot encode the logical trace: {e}"))
    }

    /// The logical trace as text, one record per line.
    pub fn text(&self) -> String {
        self.logical.text()
    }

    /// What the page's logical view shows.
    pub fn view(&self) -> LogicalView {
        let l = &self.logical;
        LogicalView {
            topology: l.topology.clone(),
            ranks_used: l.ranks_used.clone(),
            maximal: l.maximal,
            accuracy: l.accuracy.clone(),
            verification: self.verification.clone(),
            program: self.program.clone(),
            side_by_side: l.side_by_side(),
            classes: l.classes.clone(),
            merge_conflicts: l.merge_conflicts,
            no_skeleton: self.no_skeleton(),
            directions_from: l.directions_from.clone(),
            self_ranks: l.self_ranks.clone(),
            origin: self.origin(),
            length_breakdown: self.program.breakdown(&l.offset_directions()),
        }
    }
}

/// The physical trace the logical trace expands to on one rank (`logical --expand-rank`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Expansion {
    /// Schema of the logical-trace documents.
    pub schema: String,
    /// The rank.
    pub rank: Rank,
    /// The topology node it plays.
    pub node: u32,
    /// That node's coordinates.
    pub coords: Vec<u32>,
    /// Its point-to-point calls in order, peers as world ranks.
    pub calls: Vec<PhysicalCall>,
    /// The selection applied.
    pub selection: Selection,
}

/// One rank's own trace, loop-compressed (`logical --rank`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankProgram {
    /// Where the trace came from.
    pub source: String,
    /// The rank.
    pub rank: Rank,
    /// Its records (peers as ranks, nothing dropped).
    pub records: Vec<Record>,
    /// Their loop-compressed program.
    pub program: Program,
    /// The selection applied.
    pub selection: Selection,
}

/// A C skeleton written from the compressed logical trace (`tracelogic skeleton`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkeletonReport {
    /// The C source.
    pub source: String,
    /// Ranks to run it on.
    pub ranks: u32,
    /// The topology of its directions.
    pub topology: String,
    /// Records of the logical trace.
    pub raw_length: usize,
    /// Records plus loop headers once compressed.
    pub compressed_length: usize,
    /// The ranks were placed from their first contacts (not `topology`'s mapping).
    pub placed_by_first_contacts: bool,
}

/// The verification and the loop compression of `logical` (through the merge's `folding` when
/// there is one: the records are not folded again), independent of each other: natively the
/// (serial) compression runs beside the verification, which uses every core by rank; on wasm
/// one after the other.
fn verify_and_compress(
    trace: &Sourced<'_>,
    logical: &LogicalTrace,
    folding: Option<&Folding>,
    options: &CompressOptions,
) -> (
    std::result::Result<tracelogic_analysis::logical::Verification, String>,
    Program,
) {
    #[cfg(not(target_arch = "wasm32"))]
    {
        std::thread::scope(|s| {
            let program = s.spawn(|| compress_folded(&logical.records, folding, options));
            let verification = verify(trace, logical);
            progress::step(FOLDING, 0, 0);
            let program = program.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
            (verification, program)
        })
    }
    #[cfg(target_arch = "wasm32")]
    {
        let verification = verify(trace, logical);
        progress::step(FOLDING, 0, 0);
        (verification, compress_folded(&logical.records, folding, options))
    }
}

/// The progress stage of the loop compression ([`progress`]).
const FOLDING: &str = "folding the loops";

/// [`compress_with`] of `records`, through `folding` when given.
fn compress_folded(records: &[Record], folding: Option<&Folding>, options: &CompressOptions) -> Program {
    match folding {
        Some(f) => f.program_with(records, options),
        None => compress_with(records, options),
    }
}

impl Engine {
    /// The logical trace of `scope` on its identified topology (filtered at `threshold`), from
    /// the ranks `from` when given, else from a maximal rank chosen automatically.
    fn logical_trace(&self, scope: &Scope<'_>, threshold: Threshold, from: &[Rank]) -> Result<LogicalTrace> {
        self.logical_trace_folded(scope, &scope.sourced(), threshold, from, false)
            .map(|(l, _)| l)
    }

    /// [`Engine::logical_trace`] of `sourced` (`scope`'s trace, its wildcard receives named by
    /// its matching: [`Scope::sourced`]), with the merge's folding when `folding` asks for it.
    fn logical_trace_folded(
        &self,
        scope: &Scope<'_>,
        sourced: &Sourced<'_>,
        threshold: Threshold,
        from: &[Rank],
        folding: bool,
    ) -> Result<(LogicalTrace, Option<Folding>)> {
        let report = self.identified(scope, threshold);
        let trace = scope.trace();
        let asked = (!from.is_empty()).then_some(from);
        let made = if folding {
            logicalize_identified_folded(sourced, &report, asked)
        } else {
            logicalize_identified(sourced, &report, asked).map(|l| (l, None))
        };
        made.map_err(|e| {
            if Placement::from_report(&report).is_err() {
                Error::NothingFound(format!("{}: {e}", trace.source))
            } else {
                Error::Input(e)
            }
        })
    }

    /// The logical trace of `selection`, verified by expansion and loop-compressed
    /// (`tracelogic logical`, the page's logical view). `threshold` filters the matrix before
    /// identification; `from` names the ranks to build it from (empty: automatic).
    pub fn logical(&self, selection: &Selection, threshold: Threshold, from: &[Rank]) -> Result<LogicalReport> {
        self.logical_with(selection, threshold, from, &CompressOptions::default())
    }

    /// [`Engine::logical`], compressed with `options` (`exact_sizes`: every message size kept,
    /// `tracelogic logical --exact-sizes`, the page's "exact sizes").
    pub fn logical_with(
        &self,
        selection: &Selection,
        threshold: Threshold,
        from: &[Rank],
        options: &CompressOptions,
    ) -> Result<LogicalReport> {
        let scope = self.scope(selection)?;
        let sourced = scope.sourced();
        let (logical, folding) = self.logical_trace_folded(&scope, &sourced, threshold, from, true)?;
        let (verification, program) = verify_and_compress(&sourced, &logical, folding.as_ref(), options);
        let verification = verification.map_err(Error::Input)?;
        Ok(LogicalReport {
            logical,
            verification,
            program,
            selection: scope.selection,
            skeleton: OnceCell::new(),
        })
    }

    /// The physical calls the logical trace of `selection` expands to on `rank`.
    pub fn expansion(
        &self,
        selection: &Selection,
        threshold: Threshold,
        from: &[Rank],
        rank: Rank,
    ) -> Result<Expansion> {
        let scope = self.scope(selection)?;
        let logical = self.logical_trace(&scope, threshold, from)?;
        let expanded = expand_records(&logical, rank).map_err(Error::Input)?;
        let node = logical.placement.node_of_rank[rank as usize];
        Ok(Expansion {
            schema: SCHEMA.to_owned(),
            rank,
            node,
            coords: logical.placement.spec.coords(node),
            calls: physical_calls(&expanded),
            selection: scope.selection,
        })
    }

    /// The own trace of `rank` in `selection` (peers as ranks, nothing dropped), loop-compressed.
    pub fn rank_program(&self, selection: &Selection, rank: Rank) -> Result<RankProgram> {
        self.rank_program_with(selection, rank, &CompressOptions::default())
    }

    /// [`Engine::rank_program`] compressed with `options`.
    pub fn rank_program_with(
        &self,
        selection: &Selection,
        rank: Rank,
        options: &CompressOptions,
    ) -> Result<RankProgram> {
        let scope = self.scope(selection)?;
        let records = rank_records(scope.trace(), rank).map_err(Error::Input)?;
        let program = compress_with(&records, options);
        Ok(RankProgram {
            source: scope.trace().source.clone(),
            rank,
            records,
            program,
            selection: scope.selection,
        })
    }

    /// The MPI performance skeleton in C of `selection` (`tracelogic skeleton`).
    pub fn skeleton(&self, selection: &Selection, threshold: Threshold, from: &[Rank]) -> Result<SkeletonReport> {
        self.skeleton_with(selection, threshold, from, &CompressOptions::default())
    }

    /// [`Engine::skeleton`] of the program compressed with `options` (`tracelogic skeleton
    /// --exact-sizes`).
    pub fn skeleton_with(
        &self,
        selection: &Selection,
        threshold: Threshold,
        from: &[Rank],
        options: &CompressOptions,
    ) -> Result<SkeletonReport> {
        let scope = self.scope(selection)?;
        let (logical, folding) = self.logical_trace_folded(&scope, &scope.sourced(), threshold, from, true)?;
        let program = compress_folded(&logical.records, folding.as_ref(), options);
        let source = skeleton_c(&logical, &program).map_err(Error::Input)?;
        Ok(SkeletonReport {
            source,
            ranks: logical.ranks,
            topology: if logical.collectives_only() {
                logical.topology_text()
            } else {
                logical.topology.label.clone()
            },
            raw_length: program.raw_length,
            compressed_length: program.compressed_length,
            placed_by_first_contacts: logical
                .directions_from
                .as_ref()
                .is_some_and(|d| d.placed_by.replaces_mapping()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{progress, FOLDING};
    use crate::testing::{sample_engine, sample_trace};
    use crate::{Engine, FieldWords};
    use tracelogic_analysis::topology::Threshold;
    use tracelogic_model::Selection;

    fn engine(trace: tracelogic_model::Trace) -> Engine {
        Engine::new(trace, FieldWords::Labels)
    }

    #[test]
    fn a_logical_trace_reports_its_stages_in_order_while_watched() {
        let e = sample_engine("npb-lu.S.8");
        let seen = std::rc::Rc::new(std::cell::RefCell::new(Vec::<progress::Step>::new()));
        let sink = seen.clone();
        let r = progress::watch(
            move |s: &progress::Step| sink.borrow_mut().push(*s),
            || e.logical(&Selection::all(), Threshold::Auto, &[]),
        );
        assert!(r.is_ok());
        let seen = seen.borrow();
        assert!(seen.iter().all(|s| s.done <= s.total || s.total == 0), "{seen:?}");
        let mut stages: Vec<&str> = seen.iter().map(|s| s.stage).collect();
        stages.dedup();
        let at = |stage: &str| {
            stages
                .iter()
                .position(|&s| s == stage)
                .unwrap_or_else(|| panic!("{stage} not in {stages:?}"))
        };
        assert!(at("reading every rank's calls") < at("choosing the directions' placement"));
        assert!(at("choosing the directions' placement") < at("rewriting the calls in directions"));
        assert!(at("rewriting the calls in directions") < at("verifying by expansion"));
        assert!(at("verifying by expansion") < at(FOLDING));
        assert_eq!(progress::latest(), None);
    }

    #[test]
    fn bt_logical_trace_has_verification_skeleton_and_downloads() {
        let e = sample_engine("npb-bt.S.9");
        let r = e.logical(&Selection::all(), Threshold::Auto, &[]).unwrap();
        assert_eq!(r.verification.per_rank.len(), 9);
        assert!(r.program.compressed_length < r.program.raw_length);
        let view = r.view();
        assert_eq!(view.no_skeleton, None);
        assert!(!view.side_by_side.is_empty());
        assert!(r.skeleton().unwrap().contains("MPI_Init"));
        let json: serde_json::Value = serde_json::from_str(&r.json().unwrap()).unwrap();
        assert_eq!(json["records"].as_array().unwrap().len(), r.program.raw_length);
        let text = r.text();
        assert!(text.starts_with("# logical trace of "));
        assert_eq!(text.lines().count(), 1 + r.program.raw_length);
        assert_eq!(r.placement().len(), 9);
    }

    #[test]
    fn a_torus_of_fours_uses_the_torus_directions() {
        // A 4x4 torus is the 4-cube: identified as the hypercube, named by the torus's moves.
        let spec = tracelogic_synth::Spec {
            topology: tracelogic_synth::TopologySpec::parse("torus:4x4").unwrap(),
            iterations: 4,
            ..tracelogic_synth::Spec::default()
        };
        let e = engine(tracelogic_synth::generate(&spec).unwrap());
        let r = e.logical(&Selection::all(), Threshold::Auto, &[]).unwrap();
        let from = r.logical.directions_from.clone().expect("the choice says why");
        assert_eq!(from.identified, "4-dimensional hypercube (2x2x2x2 grid)");
        assert_eq!(from.topology, "4x4 torus");
        assert_eq!(r.verification.overall_share, 1.0);
    }

    #[test]
    fn a_merged_run_says_its_classes_were_merged() {
        // NAS LU class A on 16 ranks (4x4 grid): rank 5 has every neighbour, but the boundary
        // ranks' wavefront messages are shorter; the classes are merged.
        let spec = tracelogic_synth::NasSpec {
            iterations: Some(1),
            ..tracelogic_synth::NasSpec::new(tracelogic_synth::NasBenchmark::Lu, tracelogic_synth::NasClass::A, 16)
        };
        let (trace, _) = tracelogic_synth::generate_nas(&spec).unwrap();
        let r = engine(trace).logical(&Selection::all(), Threshold::Auto, &[]).unwrap();
        assert!(r.logical.maximal);
        assert_eq!(r.logical.classes.len(), 9);
        assert!(r.origin().ends_with("so the classes were merged)."), "{}", r.origin());
        assert_eq!(r.view().origin, r.origin());
    }

    #[test]
    fn a_selection_gets_its_own_logical_trace_and_expansion() {
        let e = sample_engine("npb-lu.S.8");
        let (start, end) = e.trace().span();
        let low = Selection {
            to: Some((end - start) / 2),
            ..Selection::default()
        };
        let whole = e.logical(&Selection::all(), Threshold::Auto, &[]).unwrap();
        let part = e.logical(&low, Threshold::Auto, &[]).unwrap();
        assert_ne!(part.program.raw_length, whole.program.raw_length);
        assert_eq!(part.selection.to, Some(start + (end - start) / 2));
        let x = e.expansion(&Selection::all(), Threshold::Auto, &[], 3).unwrap();
        // The expansion of rank 3 has as many point-to-point calls as verification counted.
        let v = whole.verification.per_rank.iter().find(|p| p.rank == 3).unwrap();
        assert_eq!(x.calls.len() as u64, v.expanded_calls);
        assert!(e.expansion(&Selection::all(), Threshold::Auto, &[], 99).is_err());
        let own = e.rank_program(&Selection::all(), 3).unwrap();
        assert_eq!(own.program.raw_length, own.records.len());
    }

    #[test]
    fn the_skeleton_of_bt_names_its_topology() {
        let e = engine(sample_trace("npb-bt.S.9"));
        let s = e.skeleton(&Selection::all(), Threshold::Auto, &[]).unwrap();
        assert!(s.source.contains("MPI_Init"));
        assert_eq!(s.ranks, 9);
        assert!(s.compressed_length < s.raw_length);
    }
}
