//! `tracelogic logical`: the logical trace of a run (Logicalization §4.3) — one rank's calls with peers
//! rewritten as topology directions — with its accuracy, its verification by expansion, its loop
//! compression, and the physical trace it expands to for any rank.

use crate::common::{load_trace, narrowed, working, CliError, CliResult, SelectionArgs};
use crate::print;
use crate::topology::threshold_arg;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tracelogic_engine::logical::CompressOptions;
use tracelogic_engine::topology::Threshold;
use tracelogic_model::{Rank, Selection};

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
    /// Keep every message size in the compressed program (runs or lists of any length) instead
    /// of summarising sizes the data choose (more than 16 distinct sizes, or an exact form of
    /// more than 1024 numbers) by a histogram or statistics.
    #[arg(long)]
    pub exact_sizes: bool,
    /// Show the physical records of the used rank(s) beside the logical ones (Table 5 style).
    #[arg(long, conflicts_with_all = ["compress", "json"])]
    pub side_by_side: bool,
    /// Write the output to this file instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub selection: SelectionArgs,
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

/// Run `tracelogic logical`.
pub fn run(args: Args) -> CliResult {
    let engine = narrowed(load_trace(&args.paths)?, &args.selection)?;
    let all = Selection::all();
    let out = args.output.as_deref();
    let options = CompressOptions {
        exact_sizes: args.exact_sizes,
    };
    let text = if let Some(r) = args.rank {
        let program = working("compressing loops", || engine.rank_program_with(&all, r, &options))?;
        print::logical::rank_program(&program, args.json, args.compress)?
    } else if let Some(r) = args.expand_rank {
        let expansion = working(format!("expanding the logical trace for rank {r}"), || {
            engine.expansion(&all, args.threshold, &args.from_ranks, r)
        })?;
        print::logical::expansion(&expansion, args.json)?
    } else {
        let report = working("building, verifying and compressing the logical trace", || {
            engine.logical_with(&all, args.threshold, &args.from_ranks, &options)
        })?;
        if args.json {
            // Written as it is serialised: the document of a 16.6 M-call run is 146 MB of text,
            // built into a string first it took as long again in fresh pages.
            print::logical::report_json(&report, args.compress, out)?;
            // The process ends here: freeing every record one by one (a tenth of a million on
            // a 16.6 M-call run, each with its size tables) is left to the operating system.
            std::mem::forget(report);
            return Ok(ExitCode::SUCCESS);
        }
        print::logical::report(&report, args.json, args.compress, args.side_by_side)?
    };
    write_out(out, &text)?;
    Ok(ExitCode::SUCCESS)
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
            exact_sizes: false,
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
            "length_breakdown",
            "dropped_calls_fraction",
            "dropped_bytes_fraction",
            "ranks_used",
            "program",
        ] {
            assert!(v.get(key).is_some(), "missing {key}: {v}");
        }
        assert_eq!(v["schema"], tracelogic_engine::logical::SCHEMA);
        assert!(v["compressed_length"].as_u64().unwrap() < v["raw_length"].as_u64().unwrap());
        // The generated noise goes to ranks that are no neighbours: kept as offsets, nothing dropped.
        assert_eq!(v["dropped_calls_fraction"].as_f64(), Some(0.0));
        let outside = v["accuracy"]["offset_calls"].as_f64().unwrap() / v["accuracy"]["calls"].as_f64().unwrap();
        assert!(outside > 0.0 && outside < 0.2, "{outside}");
        assert!(v.get("records").is_none());
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// `--exact-sizes`: sizes the data choose (20 distinct ones, scrambled) are kept in the
    /// program instead of being summarised.
    #[test]
    fn exact_sizes_keep_every_size_in_the_program() {
        use tracelogic_synth::pair::{scrambled_sizes, sendrecv_pair};
        let t = sendrecv_pair(&scrambled_sizes(200, 20, 0x9e37_79b9_7f4a_7c15));
        let dir = std::env::temp_dir().join(format!("tracelogic-cli-logical-{}-exact", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("run.txt");
        std::fs::write(&path, tracelogic_formats::text::write(&t)).unwrap();
        let out = dir.join("out.json");
        let program = |exact_sizes: bool| {
            run(Args {
                compress: true,
                exact_sizes,
                ..args(&path, &out)
            })
            .unwrap();
            read_json(&out)["program"].to_string()
        };
        assert!(program(false).contains(r#""form":"stats""#));
        let exact = program(true);
        assert!(
            !exact.contains(r#""form":"stats""#) && exact.contains(r#""form":"list""#),
            "{exact}"
        );
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
        let engine = tracelogic_engine::Engine::new(trace, tracelogic_engine::FieldWords::Flags);
        let logical = engine.logical(&Selection::all(), Threshold::Auto, &[]).unwrap().logical;
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
