//! What `tracelogic logical` prints: the JSON documents (schema `tracelogic-logical/1`,
//! docs/logical.md) and the text.

use crate::common::{table, CliError};
use serde::Serialize;
use tracelogic_engine::logical::{
    Accuracy, DirectionsFrom, Expansion, LogicalReport, PhysicalCall, PlacedBy, PlacedRank, Program, RankClass,
    RankProgram, Record, SkeletonReport, TopologyInfo, Verification, SCHEMA,
};
use tracelogic_model::{Rank, Selection};

/// The JSON document of `tracelogic logical` (schema `tracelogic-logical/1`, docs/logical.md).
#[derive(Serialize)]
pub struct Document<'a> {
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
    /// The compressed program (with --compress).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub program: Option<&'a Program>,
    /// Every record (without --compress).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub records: Option<&'a [Record]>,
    /// The selection the trace was restricted to (times absolute, in the trace's clock).
    pub selection: &'a Selection,
}

/// Ranks listed by the text output when the placement is not identification's; beyond, the
/// JSON's `placement` and `--expand-rank` give them.
const LISTED_PLACES: usize = 64;

/// The JSON document of `--expand-rank`.
#[derive(Serialize)]
struct ExpansionDocument<'a> {
    schema: &'static str,
    rank: Rank,
    node: u32,
    coords: &'a [u32],
    calls: &'a [PhysicalCall],
    selection: &'a Selection,
}

/// The JSON document of `--rank R` (one rank's own trace).
#[derive(Serialize)]
struct RankReport<'a> {
    schema: &'static str,
    source: &'a str,
    rank: Rank,
    raw_length: usize,
    compressed_length: usize,
    ratio: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    program: Option<&'a Program>,
    #[serde(skip_serializing_if = "Option::is_none")]
    records: Option<&'a [Record]>,
    selection: &'a Selection,
}

fn json<T: Serialize>(value: &T) -> Result<String, CliError> {
    serde_json::to_string_pretty(value)
        .map(|s| s + "\n")
        .map_err(|e| CliError::Internal(format!("cannot encode JSON: {e}")))
}

/// `--rank R`: one rank's own trace, as JSON or text.
pub fn rank_program(p: &RankProgram, as_json: bool, compressed: bool) -> Result<String, CliError> {
    let program = &p.program;
    if as_json {
        return json(&RankReport {
            schema: SCHEMA,
            source: &p.source,
            rank: p.rank,
            raw_length: program.raw_length,
            compressed_length: program.compressed_length,
            ratio: program.ratio,
            program: compressed.then_some(program),
            records: (!compressed).then_some(&p.records),
            selection: &p.selection,
        });
    }
    let mut s = format!(
        "# trace of rank {} of {}: {} records, {} compressed (ratio {:.1})\n",
        p.rank, p.source, program.raw_length, program.compressed_length, program.ratio
    );
    if compressed {
        s.push_str(&program.text());
    } else {
        for rec in &p.records {
            s.push_str(&rec.call.text());
            s.push('\n');
        }
    }
    Ok(s)
}

/// `--expand-rank R`: the physical calls of one rank, as JSON or text.
pub fn expansion(x: &Expansion, as_json: bool) -> Result<String, CliError> {
    if as_json {
        return json(&ExpansionDocument {
            schema: SCHEMA,
            rank: x.rank,
            node: x.node,
            coords: &x.coords,
            calls: &x.calls,
            selection: &x.selection,
        });
    }
    let mut s = format!(
        "# rank {} (node {}, coordinates {:?}) as the logical trace expands it: {} point-to-point calls\n",
        x.rank,
        x.node,
        x.coords,
        x.calls.len()
    );
    for c in &x.calls {
        let peer = c.peer.map_or("any".to_string(), |p| p.to_string());
        s.push_str(&format!(
            "{} {} {peer} {} B tag {}\n",
            c.kind, c.direction, c.bytes, c.tag
        ));
    }
    Ok(s)
}

/// The logical trace: its JSON document (`program` with `compressed`, else `records`) or its
/// text (the compressed program, the records, or the records beside the physical calls).
pub fn report(report: &LogicalReport, as_json: bool, compressed: bool, side_by_side: bool) -> Result<String, CliError> {
    let logical = &report.logical;
    let program = &report.program;
    let placement = report.placement();
    let doc = Document {
        schema: SCHEMA,
        source: &logical.source,
        ranks: logical.ranks,
        topology: &logical.topology,
        directions_from: logical.directions_from.as_ref(),
        placement,
        ranks_used: &logical.ranks_used,
        maximal: logical.maximal,
        raw_length: program.raw_length,
        compressed_length: program.compressed_length,
        ratio: program.ratio,
        dropped_calls_fraction: logical.accuracy.dropped_calls_fraction,
        dropped_bytes_fraction: logical.accuracy.dropped_bytes_fraction,
        accuracy: &logical.accuracy,
        verification: &report.verification,
        skipped_calls: logical.skipped_calls,
        classes: &logical.classes,
        merge_conflicts: logical.merge_conflicts,
        self_ranks: &logical.self_ranks,
        program: compressed.then_some(program),
        records: (!compressed).then_some(&logical.records),
        selection: &report.selection,
    };
    if as_json {
        return json(&doc);
    }
    Ok(human(&doc, report, side_by_side))
}

fn pct(x: f64) -> String {
    format!("{:.2} %", 100.0 * x)
}

fn human(r: &Document, report: &LogicalReport, side_by_side: bool) -> String {
    let (logical, program) = (&report.logical, &report.program);
    let mut s = String::new();
    s.push_str(&format!(
        "Logical trace of {} ({} ranks) on a {}; directions {}.\n",
        r.source,
        r.ranks,
        r.topology.label,
        r.topology.directions.join(", ")
    ));
    if let Some(d) = r.directions_from.filter(|d| d.worth_showing()) {
        s.push_str(&format!("Directions from the {}.\n", d.reason));
    }
    if r.directions_from
        .is_some_and(|d| d.placed_by == PlacedBy::FirstContacts)
    {
        let places: Vec<String> = r
            .placement
            .iter()
            .take(LISTED_PLACES)
            .map(|p| {
                let c: Vec<String> = p.coords.iter().map(u32::to_string).collect();
                format!("{} ({})", p.rank, c.join(","))
            })
            .collect();
        let more = if r.placement.len() > LISTED_PLACES {
            format!(", … {} more in --json `placement`", r.placement.len() - LISTED_PLACES)
        } else {
            String::new()
        };
        s.push_str(&format!(
            "Ranks placed by their first contacts, not by `tracelogic topology`'s mapping: rank (coordinates) {}{more}.\n",
            places.join(" ")
        ));
    }
    s.push_str(&report.origin());
    s.push('\n');
    if !r.classes.is_empty() {
        s.push_str(&format!(
            "Merged {} of {} classes of ranks (same neighbours), {} record{} not executed as such by every class that sees {}:\n",
            r.classes.iter().filter(|c| c.merged).count(),
            r.classes.len(),
            r.merge_conflicts,
            if r.merge_conflicts == 1 { "" } else { "s" },
            if r.merge_conflicts == 1 { "it" } else { "them" }
        ));
        let rows: Vec<Vec<String>> = r
            .classes
            .iter()
            .map(|c| {
                vec![
                    c.ranks.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(" "),
                    c.directions.join(" "),
                    c.records.to_string(),
                    if c.merged {
                        c.conflicts.to_string()
                    } else {
                        "left out".into()
                    },
                ]
            })
            .collect();
        s.push_str(&table(
            &["ranks", "directions", "records given", "conflicts"],
            rows,
            &[2, 3],
        ));
    }
    if !r.self_ranks.is_empty() {
        let ranks: Vec<String> = r.self_ranks.iter().map(|x| x.to_string()).collect();
        s.push_str(&format!(
            "Direction `self` (a rank's messages to itself) exists at rank{} {}.\n",
            if ranks.len() > 1 { "s" } else { "" },
            ranks.join(", ")
        ));
    }
    s.push_str(&format!(
        "Outside the topology (dropped): {} of point-to-point calls, {} of bytes.\n",
        pct(r.dropped_calls_fraction),
        pct(r.dropped_bytes_fraction)
    ));
    s.push_str(&format!(
        "Length: {} records, {} compressed (ratio {:.1}); {} calls were not records.\n",
        r.raw_length, r.compressed_length, r.ratio, r.skipped_calls
    ));
    let v = r.verification;
    s.push_str(&structure_and_volume(v));
    if v.ranks_below_full.is_empty() {
        s.push_str("Verification: the expansion reproduces every rank's point-to-point calls exactly.\n");
    } else {
        s.push_str(&format!(
            "Verification: {} of point-to-point calls reproduced overall; ranks below 100 %:\n",
            pct(v.overall_share)
        ));
        let rows: Vec<Vec<String>> = v
            .per_rank
            .iter()
            .filter(|p| p.share < 1.0)
            .map(|p| {
                let a = &r.accuracy.per_rank[p.rank as usize];
                vec![
                    p.rank.to_string(),
                    p.real_calls.to_string(),
                    p.expanded_calls.to_string(),
                    p.reproduced.to_string(),
                    pct(p.share),
                    pct(p.share_in_topology),
                    a.dropped_calls.to_string(),
                ]
            })
            .collect();
        s.push_str(&table(
            &[
                "rank",
                "real",
                "expanded",
                "reproduced",
                "share",
                "in topology",
                "dropped",
            ],
            rows,
            &[0, 1, 2, 3, 4, 5, 6],
        ));
    }
    s.push('\n');
    if r.program.is_some() {
        s.push_str(&program.text());
    } else if side_by_side {
        s.push_str(&logical.side_by_side());
    } else {
        for rec in &logical.records {
            s.push_str(&rec.call.text());
            s.push('\n');
        }
    }
    s
}

/// What `tracelogic skeleton` says on stderr once it wrote `output`: what it holds and how to
/// build and run it.
pub fn skeleton_note(s: &SkeletonReport, output: &std::path::Path) -> String {
    let placed = if s.placed_by_first_contacts {
        ", ranks placed by their first contacts as `tracelogic logical` shows, not by `topology`'s mapping"
    } else {
        ""
    };
    format!(
        "wrote {} ({} ranks, {}{placed}, {} records compressed to {}); build with `mpicc -O2 -o skeleton {}` and run with `mpirun -np {} ./skeleton [compute-scale]`",
        output.display(),
        s.ranks,
        s.topology,
        s.raw_length,
        s.compressed_length,
        output.display(),
        s.ranks
    )
}

/// The verification's two questions, each in one line: does the expansion make each rank's
/// calls (function, direction, peer, order), and does it move each rank's bytes.
pub fn structure_and_volume(v: &Verification) -> String {
    let ranks = v.per_rank.len();
    let structure = if v.ranks_structure_differs.is_empty() {
        format!("Structure: exact on every rank ({ranks}): calls, peers and order as recorded.\n")
    } else {
        format!(
            "Structure: {} of operations in order; differs on {} of {ranks} ranks ({}).\n",
            pct(v.structure_share),
            v.ranks_structure_differs.len(),
            tracelogic_engine::logical::ranks_text(&v.ranks_structure_differs)
        )
    };
    let volume = if v.ranks_bytes_differ.is_empty() && v.ranks_volume_off.is_empty() && v.volume_error == 0.0 {
        format!("Volume: exact, {} bytes, every size on every rank.\n", v.real_bytes)
    } else {
        format!(
            "Volume: {} bytes expanded for {} recorded (error {:.3} %, largest per rank {:.3} %); sizes differ on {} ranks, volume off by more than 1 % on {}.\n",
            v.expanded_bytes,
            v.real_bytes,
            100.0 * v.volume_error,
            100.0 * v.max_volume_error,
            v.ranks_bytes_differ.len(),
            v.ranks_volume_off.len()
        )
    };
    structure + &volume
}
