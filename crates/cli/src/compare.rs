//! `tracelogic compare`: how similar the communication patterns of two or more runs are (seed
//! 002 PACPM): θ from the rank-transformed per-rank properties, ε from the maximum common
//! subgraph of the communication graphs, and the verdict against a threshold.

use crate::common::{emit, load_trace, print_json, select, set_stage, table, CliError, CliResult, SelectionArgs};
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;
use tracelogic_analysis::similarity::{
    compare_runs, run_properties, Alignment, CompareOptions, Comparison, PairedBy, SimilarityMatrix, DEFAULT_THRESHOLD,
};
use tracelogic_analysis::topology::Threshold;
use tracelogic_model::Selection;

fn threshold_arg(text: &str) -> Result<f64, String> {
    let v: f64 = text.trim().parse().map_err(|_| format!("`{text}` is not a number"))?;
    if !(-1.0..=1.0).contains(&v) {
        return Err(format!("threshold {v} is outside -1..1 (θ and ε are at most 1)"));
    }
    Ok(v)
}

fn filter_arg(text: &str) -> Result<Threshold, String> {
    if text.trim().eq_ignore_ascii_case("auto") {
        return Ok(Threshold::Auto);
    }
    let v: f64 = text
        .trim()
        .trim_end_matches('%')
        .parse()
        .map_err(|_| format!("`{text}` is neither `auto` nor a percentage"))?;
    if !(0.0..=100.0).contains(&v) {
        return Err(format!("filter {v} is outside 0-100 %"));
    }
    Ok(Threshold::Percent(v))
}

fn align_arg(text: &str) -> Result<Alignment, String> {
    match text.trim() {
        "auto" => Ok(Alignment::Auto),
        "rank" => Ok(Alignment::Rank),
        "graph" => Ok(Alignment::Graph),
        _ => Err(format!("`{text}`: use auto, rank or graph")),
    }
}

/// Arguments of `tracelogic compare`.
#[derive(clap::Args)]
pub struct Args {
    /// Two or more traces, each one file, folder or archive (same number of ranks).
    #[arg(num_args = 2.., required = true, value_name = "TRACE")]
    pub paths: Vec<PathBuf>,
    /// A pair is similar when θ and ε both reach this value (the paper: 0.6).
    #[arg(long, default_value_t = DEFAULT_THRESHOLD, value_parser = threshold_arg)]
    pub threshold: f64,
    /// Drop low-volume pairs from the communication graphs first: `auto` or a percentage of the
    /// largest pair, as `tracelogic topology` does (default: keep every communicating pair).
    #[arg(long, value_parser = filter_arg)]
    pub filter: Option<Threshold>,
    /// How ranks are paired for θ: `auto` (when the graphs are isomorphic, the isomorphism with
    /// the largest θ, so the placement of either run does not matter; else rank numbers),
    /// `rank` (rank numbers, the paper), or `graph` (as auto, but the common-subgraph
    /// correspondence when the graphs are not isomorphic).
    #[arg(long, default_value = "auto", value_parser = align_arg)]
    pub align: Alignment,
    /// Step budget of the common-subgraph search (default: 2 million + 256 per rank, at most 16
    /// million).
    #[arg(long)]
    pub max_steps: Option<u64>,
    /// Step budget of the search for the best-θ isomorphism (default: 20 million + 4,096 per
    /// rank); when it runs out, θ is the best pairing scored and the report says so.
    #[arg(long)]
    pub max_pairing_steps: Option<u64>,
    /// Print JSON (schema in docs/cli.md).
    #[arg(long)]
    pub json: bool,
    /// The selection is applied to every run, times measured from each run's first event.
    #[command(flatten)]
    pub selection: SelectionArgs,
}

/// A comparison's JSON with the selection applied to each run (`selections[i]` for run `i`;
/// absolute times differ between runs since each run has its own clock).
#[derive(Serialize)]
struct WithSelections<'a, T: Serialize> {
    #[serde(flatten)]
    report: &'a T,
    selections: &'a [Selection],
}

/// Run `tracelogic compare`.
pub fn run(args: Args) -> CliResult {
    let opts = CompareOptions {
        threshold: args.threshold,
        filter: args.filter,
        alignment: args.align,
        max_steps: args.max_steps,
        max_pairing_steps: args.max_pairing_steps,
    };
    let mut runs = Vec::with_capacity(args.paths.len());
    let mut selections = Vec::with_capacity(args.paths.len());
    for path in &args.paths {
        let mut trace = load_trace(std::slice::from_ref(path))?;
        trace.source = path.display().to_string();
        let (trace, selection) = select(trace, &args.selection)?;
        if trace.num_calls() == 0 && selection != Selection::all() {
            return Err(CliError::NothingFound(format!(
                "{}: the selection keeps no MPI call, so there is nothing to compare",
                trace.source
            )));
        }
        selections.push(selection);
        set_stage(format!("measuring the properties of {}", trace.source));
        runs.push(run_properties(&trace, opts.filter));
    }
    set_stage("comparing the runs");
    let result = compare_runs(&runs, &opts).map_err(CliError::Input)?;
    if args.json {
        if result.pairs.len() == 1 {
            print_json(&WithSelections {
                report: &result.pairs[0],
                selections: &selections,
            })?;
        } else {
            print_json(&WithSelections {
                report: &result,
                selections: &selections,
            })?;
        }
    } else {
        let text = if result.pairs.len() == 1 {
            pair_text(&result.pairs[0])
        } else {
            matrix_text(&result)
        };
        emit(|out| out.write_all(text.as_bytes()))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn epsilon_text(c: &Comparison) -> String {
    let g = &c.graph;
    let of = format!("{} common edges of {} + {}", g.common, g.edges_a.len(), g.edges_b.len());
    if c.epsilon_exact {
        format!("{:.3}  (exact: {of})", c.epsilon)
    } else {
        format!(
            "{:.3} to {:.3}  (search budget ran out: at least {of}, at most {})",
            c.epsilon, c.epsilon_upper, g.upper_bound
        )
    }
}

fn verdict(c: &Comparison) -> String {
    let mut why = Vec::new();
    if c.theta < c.threshold {
        why.push(format!("θ < {}", c.threshold));
    }
    if c.epsilon < c.threshold {
        why.push(format!("ε < {}", c.threshold));
    }
    let mut s = if c.similar {
        format!("similar (θ and ε ≥ {})", c.threshold)
    } else {
        format!("not similar ({})", why.join(", "))
    };
    if !c.classification_certain {
        let epsilon_open = !c.epsilon_exact && c.epsilon < c.threshold && c.epsilon_upper >= c.threshold;
        if epsilon_open {
            s.push_str("; the exact ε could reach the threshold");
        }
        if !c.pairing.exhaustive && c.theta < c.threshold {
            s.push_str("; a pairing the search did not reach could give a larger θ");
        }
    }
    s
}

/// How the ranks were paired for θ, in words.
fn pairing_text(c: &Comparison) -> String {
    let p = &c.pairing;
    match p.by {
        PairedBy::RankNumber => "by rank number".to_string(),
        PairedBy::SameProperties => "by an isomorphism of the graphs under which every rank keeps its place in \
             temporal, volume and send count (one program under two placements)"
            .to_string(),
        PairedBy::BestIsomorphism => {
            let mut s = format!(
                "by role: the isomorphism of the graphs with the largest θ ({} scored in full, {} steps; \
                 by rank number θ = {:.3})",
                p.isomorphisms_scored, p.steps, p.theta_by_rank
            );
            if let Some(chance) = p.theta_chance {
                s.push_str(&format!(
                    "; values unrelated to the roles (shuffled) reach θ ≈ {chance:.3} this way"
                ));
            }
            s.push_str(&format!("; {}", p.anchor.summary()));
            if !p.exhaustive {
                s.push_str("; the search ran out of steps, so θ is the best pairing found (a lower bound)");
            }
            s
        }
        PairedBy::CommonSubgraph => format!(
            "by the common-subgraph correspondence (by rank number θ = {:.3})",
            p.theta_by_rank
        ),
    }
}

/// The human report of one pair.
pub fn pair_text(c: &Comparison) -> String {
    let mut s = String::new();
    s.push_str(&format!("runs           {}  vs  {}  ({} ranks)\n", c.a, c.b, c.ranks));
    s.push_str(&format!(
        "work measure   {} (temporal = {})\n",
        c.work_measure.name(),
        c.properties[0].unit
    ));
    s.push_str(&format!("ranks paired   {}\n\n", pairing_text(c)));
    let rows = c
        .properties
        .iter()
        .map(|p| {
            vec![
                p.property.clone(),
                format!("{:.3}", p.theta),
                p.note.clone().unwrap_or_default(),
            ]
        })
        .collect();
    s.push_str(&table(&["property", "θ", "note"], rows, &[1]));
    s.push('\n');
    s.push_str(&format!("θ              {:.3}\n", c.theta));
    s.push_str(&format!("ε              {}\n", epsilon_text(c)));
    s.push_str(&format!("verdict        {}\n", verdict(c)));
    s
}

/// The human report of several runs: the runs, the matrix of θ / ε, the verdicts.
pub fn matrix_text(m: &SimilarityMatrix) -> String {
    let mut s = String::new();
    let rows = m
        .runs
        .iter()
        .enumerate()
        .map(|(i, r)| vec![format!("{i}"), r.clone()])
        .collect();
    s.push_str(&table(&["run", "trace"], rows, &[0]));
    s.push_str(&format!(
        "\nθ / ε (* = similar at threshold {}; ~ = ε is a lower bound)\n",
        m.threshold
    ));
    let mut header: Vec<String> = vec!["run".into()];
    header.extend((0..m.runs.len()).map(|j| j.to_string()));
    let rows = m
        .matrix
        .iter()
        .enumerate()
        .map(|(i, row)| {
            let mut cells = vec![i.to_string()];
            cells.extend(row.iter().enumerate().map(|(j, c)| {
                if i == j {
                    "-".to_string()
                } else {
                    format!(
                        "{:.3} / {}{:.3}{}",
                        c.theta,
                        if c.epsilon_exact { "" } else { "~" },
                        c.epsilon,
                        if c.similar { " *" } else { "" }
                    )
                }
            }));
            cells
        })
        .collect();
    let header_refs: Vec<&str> = header.iter().map(String::as_str).collect();
    let right: Vec<usize> = (1..=m.runs.len()).collect();
    s.push_str(&table(&header_refs, rows, &right));
    s.push('\n');
    let rows = m
        .pairs
        .iter()
        .map(|c| {
            vec![
                format!("{}-{}", c.first, c.second),
                format!("{:.3}", c.theta_temporal),
                format!("{:.3}", c.theta_volume),
                format!("{:.3}", c.theta_spatial),
                format!("{:.3}", c.theta),
                format!("{}{:.3}", if c.epsilon_exact { "" } else { "≥" }, c.epsilon),
                verdict(c),
            ]
        })
        .collect();
    s.push_str(&table(
        &["pair", "θ temporal", "θ volume", "θ spatial", "θ", "ε", "verdict"],
        rows,
        &[1, 2, 3, 4, 5],
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracelogic_analysis::similarity::{compare, run_properties};
    use tracelogic_synth::{generate, Spec, TopologySpec};

    fn run(topology: &str) -> tracelogic_model::Trace {
        let mut t = generate(&Spec {
            topology: TopologySpec::parse(topology).unwrap(),
            iterations: 2,
            ..Spec::default()
        })
        .unwrap();
        t.source = topology.into();
        t
    }

    #[test]
    fn arguments_are_checked() {
        assert_eq!(threshold_arg("0.7"), Ok(0.7));
        assert!(threshold_arg("1.5").unwrap_err().contains("outside"));
        assert!(threshold_arg("x").is_err());
        assert_eq!(filter_arg("auto"), Ok(Threshold::Auto));
        assert_eq!(filter_arg("5%"), Ok(Threshold::Percent(5.0)));
        assert!(filter_arg("500").is_err());
        assert_eq!(align_arg("graph"), Ok(Alignment::Graph));
        assert!(align_arg("best").is_err());
    }

    #[test]
    fn pair_report_names_the_values_and_the_verdict() {
        let c = compare(&run("grid:4x4"), &run("stencil6:4x4"), &CompareOptions::default()).unwrap();
        let text = pair_text(&c);
        assert!(text.contains("grid:4x4  vs  stencil6:4x4  (16 ranks)"), "{text}");
        assert!(text.contains("0.667  (exact: 24 common edges of 24 + 48)"), "{text}");
        assert!(text.contains("not similar"), "{text}");
        assert!(text.contains("compute-time"), "{text}");
        assert!(text.contains("constant in the second run only"), "{text}");
    }

    #[test]
    fn matrix_report_lists_every_pair() {
        let runs: Vec<_> = ["grid:4x4", "torus:4x4", "hypercube:4"]
            .iter()
            .map(|t| run_properties(&run(t), None))
            .collect();
        let m = compare_runs(&runs, &CompareOptions::default()).unwrap();
        let text = matrix_text(&m);
        for pair in ["0-1", "0-2", "1-2"] {
            assert!(text.contains(pair), "{text}");
        }
        // The 4x4 torus is the 4-cube.
        assert!(text.contains("/ 1.000 *"), "{text}");
    }

    #[test]
    fn pair_report_says_how_the_ranks_were_paired() {
        // One topology, two imbalances (seeds), the second run randomly numbered: the graphs are
        // isomorphic and no pairing keeps every rank's place, so the ranks are paired by role.
        let run_of = |seed: u64, numbering: tracelogic_synth::Numbering| {
            let mut t = generate(&Spec {
                topology: TopologySpec::parse("stencil6:4x4").unwrap(),
                iterations: 2,
                imbalance: 0.5,
                seed,
                numbering,
                ..Spec::default()
            })
            .unwrap();
            t.source = format!("seed {seed}");
            t
        };
        let (a, b) = (
            run_of(1, tracelogic_synth::Numbering::RowMajor),
            run_of(2, tracelogic_synth::Numbering::Random),
        );
        let c = compare(&a, &b, &CompareOptions::default()).unwrap();
        let text = pair_text(&c);
        assert!(text.contains("ranks paired   by role"), "{text}");
        assert!(
            text.contains(&format!("by rank number θ = {:.3}", c.pairing.theta_by_rank)),
            "{text}"
        );
        assert!(!text.contains("ran out of steps"), "{text}");
        let chance = c.pairing.theta_chance.expect("16 ranks: the chance level is estimated");
        assert!(text.contains(&format!("reach θ ≈ {chance:.3}")), "{text}");
        // The synthetic runs root no collective: the search is not anchored, and says why.
        let anchor = c.pairing.anchor.summary();
        assert!(
            anchor.starts_with("not anchored, all 192 isomorphisms: the first run has no single root"),
            "{anchor}"
        );
        assert!(text.contains(&anchor), "{text}");
        let cut = CompareOptions {
            max_pairing_steps: Some(1),
            threshold: 0.99,
            ..CompareOptions::default()
        };
        let c = compare(&a, &b, &cut).unwrap();
        let text = pair_text(&c);
        assert!(text.contains("the search ran out of steps"), "{text}");
        assert!(
            text.contains("a pairing the search did not reach could give a larger θ"),
            "{text}"
        );
    }
}
