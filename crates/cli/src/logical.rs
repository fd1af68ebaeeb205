//! `tracelogic logical`: the logical trace of a run (Logicalization §4.3) — one rank's calls with peers
//! rewritten as topology directions — with its accuracy, its verification by expansion, its loop
//! compression, and the physical trace it expands to for any rank.

use crate::common::{load_trace, select, set_stage, table, CliError, CliResult, SelectionArgs};
use crate::topology::threshold_arg;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tracelogic_analysis::compress::{compress, Program};
use tracelogic_analysis::logical::{
    expand_records, logicalize_identified, physical_calls, rank_records, verify, Accuracy, DirectionsFrom,
    LogicalTrace, PhysicalCall, PlacedBy, Placement, RankClass, Record, TopologyInfo, Verification, SCHEMA,
};
use tracelogic_analysis::matrix::CommMatrix;
use tracelogic_analysis::topology::{identify_matrix, Threshold, TopologyOptions, TopologyReport};
use tracelogic_model::{Rank, Selection, Trace};

/// Arguments of `tracelogic logical`.
#[derive(clap::Args)]
pub struct Args {
    /// Trace files, folders or archives (together one trace).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Print JSON (schema in docs/logical.md).
    #[arg(long)]
    pub json: bool,
    /// Show the loop-compressed program instead of every record.
    #[arg(long)]
    pub compress: bool,
    /// Print the physical trace the logical trace expands to on this rank (its point-to-point
    /// calls in order, peers as world ranks).
    #[arg(long, value_name = "R", conflicts_with = "rank")]
    pub expand_rank: Option<Rank>,
    /// Work on this rank's own trace (peers as ranks, nothing dropped) instead of the logical
    /// trace; with --compress this is single-rank loop compression.
    #[arg(long, value_name = "R")]
    pub rank: Option<Rank>,
    /// Build the logical trace from these ranks (comma-separated, merged in order) instead of a
    /// maximal rank chosen automatically. (`--from` is the selection's start time, as in every
    /// analysis.)
    #[arg(long = "from-ranks", value_name = "R,R...", value_delimiter = ',')]
    pub from_ranks: Vec<Rank>,
    /// Filtering before topology identification: `auto` or a percentage (as `tracelogic topology`).
    #[arg(long, default_value = "auto", value_parser = threshold_arg)]
    pub threshold: Threshold,
    /// Show the physical records of the used rank(s) beside the logical ones (Table 5 style).
    #[arg(long, conflicts_with_all = ["compress", "json"])]
    pub side_by_side: bool,
    /// Write the output to this file instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub selection: SelectionArgs,
}

/// The JSON document of `tracelogic logical` (schema `tracelogic-logical/1`, docs/logical.md).
#[derive(Serialize)]
pub struct Report<'a> {
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

/// One rank's place in the topology of a logical trace.
#[derive(Serialize)]
pub struct PlacedRank {
    /// World rank.
    pub rank: Rank,
    /// The topology node it plays.
    pub node: u32,
    /// That node's coordinates (one per dimension; the node number for families without).
    pub coords: Vec<u32>,
}

/// Every rank's place under `placement`, in rank order.
fn placed_ranks(placement: &Placement) -> Vec<PlacedRank> {
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

/// Ranks listed by the text output when the placement is not identification's; beyond, the
/// JSON's `placement` and `--expand-rank` give them.
const LISTED_PLACES: usize = 64;

/// The JSON document of `--expand-rank`.
#[derive(Serialize)]
struct Expansion<'a> {
    schema: &'static str,
    rank: Rank,
    node: u32,
    coords: Vec<u32>,
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

/// Identify the topology of `trace` (the communication matrix under `threshold`).
fn identified(trace: &Trace, threshold: Threshold) -> Result<TopologyReport, CliError> {
    set_stage("identifying the topology");
    let m = CommMatrix::try_from_trace(trace, &Selection::all())
        .map_err(|e| CliError::Input(format!("{}: {e}", trace.source)))?;
    Ok(identify_matrix(
        &m,
        &TopologyOptions {
            threshold,
            ..TopologyOptions::default()
        },
    ))
}

/// Identify the topology of `trace` and place its ranks as the logical trace does: among the
/// isomorphic topologies, the one whose directions the ranks agree on (`Placement::choose`), so
/// a 4x4x4 torus identified as the 6-cube is placed as the torus.
pub fn placement(trace: &Trace, threshold: Threshold) -> Result<(Placement, DirectionsFrom), CliError> {
    let report = identified(trace, threshold)?;
    Placement::choose(trace, &report).map_err(|e| CliError::NothingFound(format!("{}: {e}", trace.source)))
}

/// Identify, place (choosing among isomorphic topologies the one whose directions the ranks
/// agree on, `Placement::choose`) and logicalize (from `from` when given).
pub fn build(trace: &Trace, threshold: Threshold, from: &[Rank]) -> Result<LogicalTrace, CliError> {
    let report = identified(trace, threshold)?;
    set_stage("building the logical trace");
    let from = (!from.is_empty()).then_some(from);
    logicalize_identified(trace, &report, from).map_err(|e| {
        if Placement::from_report(&report).is_err() {
            CliError::NothingFound(format!("{}: {e}", trace.source))
        } else {
            CliError::Input(e)
        }
    })
}

/// Write `text` to `output` or stdout.
pub fn write_out(output: Option<&Path>, text: &str) -> Result<(), CliError> {
    match output {
        Some(path) => {
            std::fs::write(path, text).map_err(|e| CliError::Input(format!("cannot write {}: {e}", path.display())))
        }
        None => crate::common::emit(|w| w.write_all(text.as_bytes())),
    }
}

fn json<T: Serialize>(value: &T) -> Result<String, CliError> {
    serde_json::to_string_pretty(value)
        .map(|s| s + "\n")
        .map_err(|e| CliError::Internal(format!("cannot encode JSON: {e}")))
}

/// Run `tracelogic logical`.
pub fn run(args: Args) -> CliResult {
    let (trace, selection) = select(load_trace(&args.paths)?, &args.selection)?;
    let out = args.output.as_deref();
    if let Some(r) = args.rank {
        let records = rank_records(&trace, r).map_err(CliError::Input)?;
        set_stage("compressing loops");
        let program = compress(&records);
        let text = if args.json {
            json(&RankReport {
                schema: SCHEMA,
                source: &trace.source,
                rank: r,
                raw_length: program.raw_length,
                compressed_length: program.compressed_length,
                ratio: program.ratio,
                program: args.compress.then_some(&program),
                records: (!args.compress).then_some(&records),
                selection: &selection,
            })?
        } else {
            let mut s = format!(
                "# trace of rank {r} of {}: {} records, {} compressed (ratio {:.1})\n",
                trace.source, program.raw_length, program.compressed_length, program.ratio
            );
            if args.compress {
                s.push_str(&program.text());
            } else {
                for rec in &records {
                    s.push_str(&rec.call.text());
                    s.push('\n');
                }
            }
            s
        };
        write_out(out, &text)?;
        return Ok(ExitCode::SUCCESS);
    }
    let logical = build(&trace, args.threshold, &args.from_ranks)?;
    if let Some(r) = args.expand_rank {
        set_stage(format!("expanding the logical trace for rank {r}"));
        let expanded = expand_records(&logical, r).map_err(CliError::Input)?;
        let calls = physical_calls(&expanded);
        let node = logical.placement.node_of_rank[r as usize];
        let text = if args.json {
            json(&Expansion {
                schema: SCHEMA,
                rank: r,
                node,
                coords: logical.placement.spec.coords(node),
                calls: &calls,
                selection: &selection,
            })?
        } else {
            let mut s = format!(
                "# rank {r} (node {node}, coordinates {:?}) as the logical trace expands it: {} point-to-point calls\n",
                logical.placement.spec.coords(node),
                calls.len()
            );
            for c in &calls {
                let peer = c.peer.map_or("any".to_string(), |p| p.to_string());
                s.push_str(&format!(
                    "{} {} {peer} {} B tag {}\n",
                    c.kind, c.direction, c.bytes, c.tag
                ));
            }
            s
        };
        write_out(out, &text)?;
        return Ok(ExitCode::SUCCESS);
    }
    set_stage("verifying the logical trace by expansion");
    let verification = verify(&trace, &logical).map_err(CliError::Input)?;
    set_stage("compressing loops");
    let program = compress(&logical.records);
    let report = Report {
        schema: SCHEMA,
        source: &logical.source,
        ranks: logical.ranks,
        topology: &logical.topology,
        directions_from: logical.directions_from.as_ref(),
        placement: placed_ranks(&logical.placement),
        ranks_used: &logical.ranks_used,
        maximal: logical.maximal,
        raw_length: program.raw_length,
        compressed_length: program.compressed_length,
        ratio: program.ratio,
        dropped_calls_fraction: logical.accuracy.dropped_calls_fraction,
        dropped_bytes_fraction: logical.accuracy.dropped_bytes_fraction,
        accuracy: &logical.accuracy,
        verification: &verification,
        skipped_calls: logical.skipped_calls,
        classes: &logical.classes,
        merge_conflicts: logical.merge_conflicts,
        self_ranks: &logical.self_ranks,
        program: args.compress.then_some(&program),
        records: (!args.compress).then_some(&logical.records),
        selection: &selection,
    };
    let text = if args.json {
        json(&report)?
    } else {
        human(&report, &logical, &program, args.side_by_side)
    };
    write_out(out, &text)?;
    Ok(ExitCode::SUCCESS)
}

fn pct(x: f64) -> String {
    format!("{:.2} %", 100.0 * x)
}

fn human(r: &Report, logical: &LogicalTrace, program: &Program, side_by_side: bool) -> String {
    let mut s = String::new();
    let used: Vec<String> = r.ranks_used.iter().map(|x| x.to_string()).collect();
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
    s.push_str(&format!(
        "From rank{} {}{}.\n",
        if used.len() > 1 { "s" } else { "" },
        used.join(", "),
        if r.maximal && !r.classes.is_empty() {
            " (a maximal rank: it has every neighbour; its trace alone does not give every class its own operations, so the classes were merged)"
        } else if r.maximal {
            " (a maximal rank: it has every neighbour)"
        } else if used.len() > 1 {
            " (no rank has every neighbour; their traces were merged)"
        } else {
            " (it lacks a neighbour in some directions: their operations are not in the logical trace)"
        }
    ));
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

#[cfg(test)]
mod tests {
    use super::*;
    use tracelogic_synth::{generate, Noise, Numbering, Spec, TopologySpec};

    /// A generated 5x3 torus run with noise, written as a native text trace in a fresh folder.
    fn trace_file(tag: &str) -> (PathBuf, PathBuf) {
        let spec = Spec {
            topology: TopologySpec::parse("torus:5x3").unwrap(),
            numbering: Numbering::Random,
            seed: 4,
            iterations: 20,
            noise: Some(Noise {
                fraction: 0.2,
                percent: 1.0,
            }),
            ..Spec::default()
        };
        let trace = generate(&spec).unwrap();
        let dir = std::env::temp_dir().join(format!("tracelogic-cli-logical-{}-{tag}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("run.txt");
        std::fs::write(&path, tracelogic_formats::text::write(&trace)).unwrap();
        (dir, path)
    }

    fn args(path: &Path, out: &Path) -> Args {
        Args {
            paths: vec![path.to_path_buf()],
            json: true,
            compress: false,
            expand_rank: None,
            rank: None,
            from_ranks: Vec::new(),
            threshold: Threshold::Auto,
            side_by_side: false,
            output: Some(out.to_path_buf()),
            selection: SelectionArgs::default(),
        }
    }

    fn read_json(path: &Path) -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
    }

    #[test]
    fn compress_json_has_the_contract_fields() {
        let (dir, path) = trace_file("compress");
        let out = dir.join("out.json");
        run(Args {
            compress: true,
            ..args(&path, &out)
        })
        .unwrap();
        let v = read_json(&out);
        for key in [
            "raw_length",
            "compressed_length",
            "ratio",
            "dropped_calls_fraction",
            "dropped_bytes_fraction",
            "ranks_used",
            "program",
        ] {
            assert!(v.get(key).is_some(), "missing {key}: {v}");
        }
        assert_eq!(v["schema"], SCHEMA);
        assert!(v["compressed_length"].as_u64().unwrap() < v["raw_length"].as_u64().unwrap());
        let dropped = v["dropped_calls_fraction"].as_f64().unwrap();
        assert!(dropped > 0.0 && dropped < 0.2, "{dropped}");
        assert!(v.get("records").is_none());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn merged_run_reports_its_classes() {
        // A 4x2 grid has no rank with both a north and a south neighbour: six classes merged.
        let spec = Spec {
            topology: TopologySpec::parse("grid:4x2").unwrap(),
            numbering: Numbering::Random,
            seed: 9,
            iterations: 6,
            style: tracelogic_synth::Style::Sendrecv,
            ..Spec::default()
        };
        let dir = std::env::temp_dir().join(format!("tracelogic-cli-logical-{}-merged", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("run.txt");
        std::fs::write(&path, tracelogic_formats::text::write(&generate(&spec).unwrap())).unwrap();
        let out = dir.join("out.json");
        run(Args {
            compress: true,
            ..args(&path, &out)
        })
        .unwrap();
        let v = read_json(&out);
        assert_eq!(v["maximal"], false);
        let classes = v["classes"].as_array().unwrap();
        assert_eq!(classes.len(), 6, "{v}");
        let members: usize = classes.iter().map(|c| c["ranks"].as_array().unwrap().len()).sum();
        assert_eq!(members, 8);
        assert_eq!(v["merge_conflicts"], 0);
        assert!(
            v["verification"]["ranks_below_full"].as_array().unwrap().is_empty(),
            "{v}"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn lu_with_a_maximal_rank_still_merges_its_boundary_classes() {
        // NAS LU class A on 16 ranks (4x4 grid): rank 5 has every neighbour, but the boundary
        // ranks' wavefront messages are shorter; the classes are merged and every rank reproduced.
        let spec = tracelogic_synth::NasSpec {
            iterations: Some(1),
            ..tracelogic_synth::NasSpec::new(tracelogic_synth::NasBenchmark::Lu, tracelogic_synth::NasClass::A, 16)
        };
        let (trace, _) = tracelogic_synth::generate_nas(&spec).unwrap();
        let dir = std::env::temp_dir().join(format!("tracelogic-cli-logical-{}-lu16", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("lu.txt");
        std::fs::write(&path, tracelogic_formats::text::write(&trace)).unwrap();
        let out = dir.join("out.json");
        run(args(&path, &out)).unwrap();
        let v = read_json(&out);
        assert_eq!(v["maximal"], true, "{v}");
        assert_eq!(v["classes"].as_array().map(Vec::len), Some(9));
        assert!(v["verification"]["ranks_below_full"].as_array().unwrap().is_empty());
        let text_out = dir.join("out.txt");
        run(Args {
            json: false,
            ..args(&path, &text_out)
        })
        .unwrap();
        let text = std::fs::read_to_string(&text_out).unwrap();
        assert!(text.contains("so the classes were merged)"), "{text}");
        assert!(text.contains("Merged 9 of 9 classes"), "{text}");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn cg_self_exchanges_are_the_self_direction_in_json_and_text() {
        // NAS CG on 16 ranks: the diagonal processes exchange with themselves (cg.f's
        // `exch_proc = me`); the logical trace maps them as `self` and drops nothing.
        let spec = tracelogic_synth::NasSpec {
            iterations: Some(1),
            ..tracelogic_synth::NasSpec::new(tracelogic_synth::NasBenchmark::Cg, tracelogic_synth::NasClass::S, 16)
        };
        let (trace, _) = tracelogic_synth::generate_nas(&spec).unwrap();
        let dir = std::env::temp_dir().join(format!("tracelogic-cli-logical-{}-cg", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("cg.txt");
        std::fs::write(&path, tracelogic_formats::text::write(&trace)).unwrap();
        let out = dir.join("out.json");
        run(Args {
            compress: true,
            ..args(&path, &out)
        })
        .unwrap();
        let v = read_json(&out);
        assert_eq!(v["dropped_calls_fraction"], 0.0, "{v}");
        assert_eq!(v["self_ranks"], serde_json::json!([0, 5, 10, 15]));
        assert_eq!(v["topology"]["directions"].as_array().unwrap().last().unwrap(), "self");
        assert!(
            v["verification"]["ranks_below_full"].as_array().unwrap().is_empty(),
            "{v}"
        );
        let text_out = dir.join("out.txt");
        run(Args {
            json: false,
            ..args(&path, &text_out)
        })
        .unwrap();
        let text = std::fs::read_to_string(&text_out).unwrap();
        assert!(text.contains("exists at ranks 0, 5, 10, 15."), "{text}");
        assert!(text.contains("MPI_Send(self, "), "{text}");
        // A diagonal rank's expansion sends to itself.
        let expand_out = dir.join("expand.json");
        run(Args {
            expand_rank: Some(5),
            ..args(&path, &expand_out)
        })
        .unwrap();
        let e = read_json(&expand_out);
        assert!(
            e["calls"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c["direction"] == "send" && c["peer"] == 5),
            "{e}"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn expand_rank_json_lists_calls_in_order() {
        let (dir, path) = trace_file("expand");
        let out = dir.join("out.json");
        run(Args {
            expand_rank: Some(7),
            ..args(&path, &out)
        })
        .unwrap();
        let v = read_json(&out);
        let calls = v["calls"].as_array().unwrap();
        // 20 iterations x 4 directions x (receive + send).
        assert_eq!(calls.len(), 160);
        for c in calls {
            assert!(c["kind"].as_str().unwrap().starts_with("MPI_I"));
            assert!(c["peer"].as_u64().unwrap() < 15);
            assert_eq!(c["bytes"], 4096);
        }
        let bad = run(Args {
            expand_rank: Some(99),
            ..args(&path, &out)
        });
        assert!(matches!(bad, Err(CliError::Input(m)) if m.contains("rank 99")));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn placement_from_first_contacts_is_reported_with_its_coordinates() {
        // A 3x3 6-point stencil is K3,3,3: identification's isomorphism is arbitrary, so the
        // logical trace places the ranks from their first contacts and says where they sit.
        let spec = Spec {
            topology: TopologySpec::parse("stencil6:3x3").unwrap(),
            numbering: Numbering::Random,
            seed: 1,
            iterations: 3,
            ..Spec::default()
        };
        let trace = generate(&spec).unwrap();
        let dir = std::env::temp_dir().join(format!("tracelogic-cli-logical-{}-k333", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("run.txt");
        std::fs::write(&path, tracelogic_formats::text::write(&trace)).unwrap();
        let out = dir.join("out.json");
        run(args(&path, &out)).unwrap();
        let v = read_json(&out);
        assert_eq!(
            v["directions_from"]["placed_by"], "first_contacts",
            "{}",
            v["directions_from"]
        );
        assert_eq!(v["verification"]["overall_share"], 1.0);
        let logical = build(&trace, Threshold::Auto, &[]).unwrap();
        let placement = v["placement"].as_array().unwrap();
        assert_eq!(placement.len(), 9);
        for (r, p) in placement.iter().enumerate() {
            let node = logical.placement.node_of_rank[r];
            assert_eq!(p["rank"], r as u64);
            assert_eq!(p["node"], node);
            assert_eq!(p["coords"], serde_json::json!(logical.placement.spec.coords(node)));
        }
        let text_out = dir.join("out.txt");
        run(Args {
            json: false,
            ..args(&path, &text_out)
        })
        .unwrap();
        let text = std::fs::read_to_string(&text_out).unwrap();
        let listed = format!(
            "rank (coordinates) 0 ({})",
            placement[0]["coords"][0].to_string() + "," + &placement[0]["coords"][1].to_string()
        );
        assert!(text.contains("placed by the ranks' first contacts"), "{text}");
        assert!(text.contains(&listed), "{listed} in {text}");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn thresholds_parse() {
        assert_eq!(threshold_arg("auto").unwrap(), Threshold::Auto);
        assert_eq!(threshold_arg("5%").unwrap(), Threshold::Percent(5.0));
        assert!(threshold_arg("200").is_err());
        assert!(threshold_arg("x").is_err());
    }
}
