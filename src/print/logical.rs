//! What `tracelogic logical` prints: the JSON documents (schema `tracelogic-logical/1`,
//! docs/logical.md) and the text.

use crate::common::{table, CliError};
use serde::Serialize;
use tracelogic_engine::documents::{self, LogicalDocument};
use tracelogic_engine::logical::{Expansion, LogicalReport, PlacedBy, RankProgram, SkeletonReport, Verification};

/// Ranks listed by the text output when the placement is not identification's; beyond, the
/// JSON's `placement` and `--expand-rank` give them.
const LISTED_PLACES: usize = 64;

fn json<T: Serialize>(value: &T) -> Result<String, CliError> {
    serde_json::to_string_pretty(value)
        .map(|s| s + "\n")
        .map_err(|e| CliError::Internal(format!("cannot encode JSON: {e}")))
}

/// `--rank R`: one rank's own trace, as JSON or text.
pub fn rank_program(p: &RankProgram, as_json: bool, compressed: bool) -> Result<String, CliError> {
    let program = &p.program;
    if as_json {
        return json(&documents::rank_program(p, compressed));
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
        return json(&documents::expansion(x));
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
    let doc = documents::logical(report, compressed);
    if as_json {
        return json(&doc);
    }
    Ok(human(&doc, report, side_by_side))
}

/// The logical trace's JSON document ([`report`] with `as_json`), written to `output` or
/// standard output as it is serialised instead of built as a string first.
pub fn report_json(report: &LogicalReport, compressed: bool, output: Option<&std::path::Path>) -> Result<(), CliError> {
    crate::common::write_json(&documents::logical(report, compressed), output)
}

fn pct(x: f64) -> String {
    format!("{:.2} %", 100.0 * x)
}

fn human(r: &LogicalDocument, report: &LogicalReport, side_by_side: bool) -> String {
    let (logical, program) = (&report.logical, &report.program);
    let mut s = String::new();
    // A run of collectives only (NAS FT, EP) has a logical trace without a direction.
    let collectives_only = r
        .directions_from
        .is_some_and(|d| d.placed_by == PlacedBy::CollectivesOnly);
    if collectives_only {
        s.push_str(&format!(
            "Logical trace of {} ({} ranks): no point-to-point traffic, so the program is its collectives (no directions).\n",
            r.source, r.ranks
        ));
    } else {
        s.push_str(&format!(
            "Logical trace of {} ({} ranks) on a {}; directions {}.\n",
            r.source,
            r.ranks,
            r.topology.label,
            r.topology.directions.join(", ")
        ));
    }
    if let Some(d) = r.directions_from.filter(|d| d.worth_showing() && !collectives_only) {
        s.push_str(&format!("Directions from the {}.\n", d.reason));
    }
    let by_isomorphism = r.directions_from.is_some_and(|d| d.placed_by == PlacedBy::Isomorphism);
    if r.directions_from.is_some_and(|d| d.placed_by.replaces_mapping()) {
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
        let how = if by_isomorphism {
            "by an isomorphism onto it"
        } else {
            "by their first contacts"
        };
        s.push_str(&format!(
            "Ranks placed {how}, not by `tracelogic topology`'s mapping: rank (coordinates) {}{more}.\n",
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
    let offsets = logical.offset_directions();
    if !offsets.is_empty() {
        s.push_str(&format!(
            "Outside the topology, kept as offsets ({}): {} point-to-point calls, {} bytes.\n",
            offsets.join(", "),
            r.accuracy.offset_calls,
            r.accuracy.offset_bytes
        ));
    }
    s.push_str(&format!(
        "Dropped (peers the logical trace cannot name): {} of point-to-point calls, {} of bytes.\n",
        pct(r.dropped_calls_fraction),
        pct(r.dropped_bytes_fraction)
    ));
    s.push_str(&format!(
        "Length: {} records, {} compressed (ratio {:.1}); {} calls were not records.\n",
        r.raw_length, r.compressed_length, r.ratio, r.skipped_calls
    ));
    s.push_str(&format!("Compressed length: {}.\n", r.length_breakdown.text()));
    let v = r.verification;
    s.push_str(&structure_and_volume(v));
    if let Some(c) = &v.collectives {
        s.push_str(&format!(
            "Verification: {} (collectives against rank {}'s, the program).\n",
            if v.exact() { "exact" } else { "not exact" },
            c.origin
        ));
    } else if v.ranks_below_full.is_empty() {
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
/// calls (function, direction, peer, order), and does it move each rank's bytes; then the
/// completion calls, counted apart (when the run has any).
pub fn structure_and_volume(v: &Verification) -> String {
    let structure = format!("Structure: {}.\n", v.structure_text());
    let volume = format!("Volume: {}.\n", v.volume_text());
    let completions = v
        .completions_text()
        .map_or_else(String::new, |t| format!("Completions: {t}.\n"));
    structure + &volume + &completions
}
