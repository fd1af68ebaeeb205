//! The JSON documents of `tracelogic logical --json` (schema `tracelogic-logical/1`,
//! docs/logical.md), `--rank R --json` and `--expand-rank R --json`, and of the packages'
//! `logical()`.

use crate::logical::{
    Accuracy, DirectionsFrom, Expansion, LogicalReport, OffsetRanks, PhysicalCall, PlacedRank, Program, RankClass,
    RankProgram, Record, TopologyInfo, Verification, SCHEMA,
};
use serde::Serialize;
use tracelogic_model::{Rank, Selection};

/// The document of `report`: the compressed program with `compressed`, else every record.
pub fn logical(report: &LogicalReport, compressed: bool) -> LogicalDocument<'_> {
    let logical = &report.logical;
    let program = &report.program;
    LogicalDocument {
        schema: SCHEMA,
        source: &logical.source,
        ranks: logical.ranks,
        topology: &logical.topology,
        directions_from: logical.directions_from.as_ref(),
        placement: report.placement(),
        ranks_used: &logical.ranks_used,
        maximal: logical.maximal,
        raw_length: program.raw_length,
        compressed_length: program.compressed_length,
        ratio: program.ratio,
        length_breakdown: program.breakdown(&logical.offset_directions()),
        dropped_calls_fraction: logical.accuracy.dropped_calls_fraction,
        dropped_bytes_fraction: logical.accuracy.dropped_bytes_fraction,
        accuracy: &logical.accuracy,
        verification: &report.verification,
        skipped_calls: logical.skipped_calls,
        classes: &logical.classes,
        merge_conflicts: logical.merge_conflicts,
        self_ranks: &logical.self_ranks,
        offset_ranks: &logical.offset_ranks,
        program: compressed.then_some(program),
        records: (!compressed).then_some(&logical.records),
        selection: &report.selection,
    }
}

/// The document of one rank's own trace (`--rank R`): its program with `compressed`, else its
/// records.
pub fn rank_program(p: &RankProgram, compressed: bool) -> RankDocument<'_> {
    let program = &p.program;
    RankDocument {
        schema: SCHEMA,
        source: &p.source,
        rank: p.rank,
        raw_length: program.raw_length,
        compressed_length: program.compressed_length,
        ratio: program.ratio,
        program: compressed.then_some(program),
        records: (!compressed).then_some(&p.records),
        selection: &p.selection,
    }
}

/// The document of one rank's physical calls as the logical trace expands them
/// (`--expand-rank R`).
pub fn expansion(x: &Expansion) -> ExpansionDocument<'_> {
    ExpansionDocument {
        schema: SCHEMA,
        rank: x.rank,
        node: x.node,
        coords: &x.coords,
        calls: &x.calls,
        selection: &x.selection,
    }
}

/// The JSON document of `tracelogic logical` (schema `tracelogic-logical/1`, docs/logical.md).
#[derive(Serialize)]
pub struct LogicalDocument<'a> {
    /// Schema version.
    pub schema: &'static str,
    /// Where the trace came from.
    pub source: &'a str,
    /// World ranks.
    pub ranks: u32,
    /// The topology whose directions the logical trace uses.
    pub topology: &'a TopologyInfo,
    /// Why that topology names the directions: the identified match or an isomorphic
    /// equivalent the ranks agree on better (`Placement::choose`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub directions_from: Option<&'a DirectionsFrom>,
    /// Where each rank sits in `topology` (the placement the directions and the expansion use;
    /// `directions_from.placed_by` says whether it is `tracelogic topology`'s mapping), in rank
    /// order.
    pub placement: Vec<PlacedRank>,
    /// Ranks whose traces were rewritten.
    pub ranks_used: &'a [Rank],
    /// True when one rank had every direction.
    pub maximal: bool,
    /// Records of the uncompressed logical trace.
    pub raw_length: usize,
    /// Records plus loop headers of the compressed program.
    pub compressed_length: usize,
    /// `raw_length / compressed_length`.
    pub ratio: f64,
    /// Where the compressed length goes: records outside loops, top-level loops, records of
    /// some ranks only, records with offset directions.
    pub length_breakdown: tracelogic_analysis::compress::LengthBreakdown,
    /// Share of point-to-point operations outside the topology.
    pub dropped_calls_fraction: f64,
    /// Share of point-to-point bytes outside the topology.
    pub dropped_bytes_fraction: f64,
    /// Accuracy per rank.
    pub accuracy: &'a Accuracy,
    /// Verification by expansion.
    pub verification: &'a Verification,
    /// Calls of the used ranks that are not records.
    pub skipped_calls: u64,
    /// Without a maximal rank: the classes of ranks (same existing directions) merged, with the
    /// records each gave and the records it sees but executes otherwise.
    #[serde(skip_serializing_if = "<[RankClass]>::is_empty")]
    pub classes: &'a [RankClass],
    /// Records of the merge some class executes otherwise (0 when every class is exact).
    pub merge_conflicts: u64,
    /// Ranks that message themselves: where the direction `self` exists (absent when none does).
    #[serde(skip_serializing_if = "<[Rank]>::is_empty")]
    pub self_ranks: &'a [Rank],
    /// Offset directions (peers outside the topology) and the ranks where each exists (absent
    /// when every peer is a neighbour).
    #[serde(skip_serializing_if = "<[OffsetRanks]>::is_empty")]
    pub offset_ranks: &'a [OffsetRanks],
    /// The compressed program (with --compress).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub program: Option<&'a Program>,
    /// Every record (without --compress).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub records: Option<&'a [Record]>,
    /// The selection the trace was restricted to (times absolute, in the trace's clock).
    pub selection: &'a Selection,
}

/// The JSON document of `--expand-rank`.
#[derive(Serialize)]
pub struct ExpansionDocument<'a> {
    pub schema: &'static str,
    pub rank: Rank,
    pub node: u32,
    pub coords: &'a [u32],
    pub calls: &'a [PhysicalCall],
    pub selection: &'a Selection,
}

/// The JSON document of `--rank R` (one rank's own trace).
#[derive(Serialize)]
pub struct RankDocument<'a> {
    pub schema: &'static str,
    pub source: &'a str,
    pub rank: Rank,
    pub raw_length: usize,
    pub compressed_length: usize,
    pub ratio: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub program: Option<&'a Program>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub records: Option<&'a [Record]>,
    pub selection: &'a Selection,
}
