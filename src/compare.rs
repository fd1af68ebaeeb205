//! `tracelogic compare`: how similar the communication patterns of two or more runs are (seed
//! 002 PACPM): θ from the rank-transformed per-rank properties, ε from the maximum common
//! subgraph of the communication graphs, and the verdict against a threshold.

use crate::common::{load_trace, narrowed, working, CliResult, SelectionArgs};
use std::path::PathBuf;
use std::process::ExitCode;
use tracelogic_engine::compare::{compare, Alignment, CompareOptions, DEFAULT_THRESHOLD};
use tracelogic_engine::topology::Threshold;
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
    /// Drop low-volume pairs from the communication graphs first: `auto` (the widest gap in
    /// pair volumes, `tracelogic topology`'s first cut; not its fallback cuts) or a percentage
    /// of the largest pair (default: keep every communicating pair; when every pair
    /// communicates in both runs, they are compared after the `auto` cut).
    #[arg(long, value_parser = filter_arg)]
    pub filter: Option<Threshold>,
    /// How ranks are paired for θ: `auto` (when the graphs are isomorphic, or without `--filter`
    /// the graphs after `topology`'s first cut are, the isomorphism with the largest θ, so the
    /// placement of either run does not matter; else rank numbers),
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
        let engine = narrowed(trace, &args.selection)?;
        runs.push(working(
            format!("measuring the properties of {}", path.display()),
            || engine.run_properties(&Selection::all(), opts.filter, None),
        )?);
        selections.push(engine.absolute(&Selection::all())?);
    }
    let result = working("comparing the runs", || compare(&runs, &opts))?;
    crate::print::compare::print(&result, &selections, args.json)?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::print::compare::{matrix_text, pair_text};
    use tracelogic_engine::compare::{Comparison, RunProperties};
    use tracelogic_engine::{Engine, FieldWords};
    use tracelogic_synth::{generate, Spec, TopologySpec};

    fn run_properties(trace: &tracelogic_model::Trace, filter: Option<Threshold>) -> RunProperties {
        let engine = Engine::new(trace.clone(), FieldWords::Flags);
        engine.run_properties(&Selection::all(), filter, None).unwrap()
    }

    /// The pair of two runs, as `tracelogic compare A B` compares them.
    fn pair(a: &tracelogic_model::Trace, b: &tracelogic_model::Trace, opts: &CompareOptions) -> Comparison {
        let runs = [run_properties(a, opts.filter), run_properties(b, opts.filter)];
        compare(&runs, opts).unwrap().pairs.remove(0)
    }

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
        let c = pair(&run("grid:4x4"), &run("stencil6:4x4"), &CompareOptions::default());
        let text = pair_text(&c);
        assert!(text.contains("grid:4x4  vs  stencil6:4x4  (16 ranks)"), "{text}");
        assert!(text.contains("0.667  (exact: 24 common edges of 24 + 48)"), "{text}");
        assert!(
            text.contains(&format!("verdict        {}", tracelogic_engine::compare::verdict(&c))),
            "{text}"
        );
        assert!(text.contains("compute-time"), "{text}");
        // The stencil's ranks all send the same volume to the same number of peers.
        assert!(text.contains("second run: constant"), "{text}");
        assert!(!text.contains("NaN"), "an undefined θ reads n/a: {text}");
    }

    #[test]
    fn matrix_report_lists_every_pair() {
        let runs: Vec<_> = ["grid:4x4", "torus:4x4", "hypercube:4"]
            .iter()
            .map(|t| run_properties(&run(t), None))
            .collect();
        let m = compare(&runs, &CompareOptions::default()).unwrap();
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
        let c = pair(&a, &b, &CompareOptions::default());
        let text = pair_text(&c);
        assert!(text.contains("ranks paired   by role"), "{text}");
        assert!(
            text.contains(&format!(
                "by rank number θ = {}",
                tracelogic_engine::compare::theta_text(c.pairing.theta_by_rank)
            )),
            "{text}"
        );
        assert!(!text.contains("ran out of steps"), "{text}");
        if let Some(chance) = c.pairing.theta_chance {
            assert!(text.contains(&format!("reach θ ≈ {chance:.3}")), "{text}");
        }
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
        let c = pair(&a, &b, &cut);
        let text = pair_text(&c);
        // The search for the best pairing runs only when θ is defined.
        assert_eq!(
            text.contains("the search ran out of steps"),
            !c.theta.is_nan(),
            "{text}"
        );
        // Only a defined θ below the threshold leaves the verdict open to a better pairing.
        assert_eq!(
            text.contains("a pairing the search did not reach could give a larger θ"),
            !c.theta.is_nan() && c.theta < c.threshold,
            "{text}"
        );
    }
}
