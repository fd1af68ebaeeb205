//! How similar the communication of two or more runs is (PACPM): θ from the rank-transformed
//! per-rank properties, ε from the maximum common subgraph of the communication graphs, and the
//! verdict against a threshold.

use crate::{Engine, Error, Result};
use serde::{Deserialize, Serialize};
use tracelogic_analysis::similarity::{compare_runs, run_properties};
pub use tracelogic_analysis::similarity::{
    Alignment, CompareOptions, Comparison, PairedBy, PropertyComparison, RunProperties, SimilarityMatrix, VerdictBasis,
    DEFAULT_THRESHOLD,
};
use tracelogic_analysis::topology::Threshold;
use tracelogic_formats::{read_trace, InputFile};
use tracelogic_model::Selection;

impl Engine {
    /// The properties the comparison reads of `selection` (per-rank work, volume, sends,
    /// spatial pattern, the communication graph, filtered at `filter` when given), named
    /// `label` when given. A selection that keeps no call is refused: there is nothing to
    /// compare.
    pub fn run_properties(
        &self,
        selection: &Selection,
        filter: Option<Threshold>,
        label: Option<&str>,
    ) -> Result<RunProperties> {
        let scope = self.scope(selection)?;
        let trace = scope.trace();
        if trace.num_calls() == 0 && scope.selection != Selection::all() {
            return Err(Error::NothingFound(format!(
                "{}: the selection keeps no MPI call, so there is nothing to compare",
                label.unwrap_or(&trace.source)
            )));
        }
        let mut run = run_properties(trace, filter);
        if let Some(label) = label {
            run.source = label.to_owned();
        }
        Ok(run)
    }
}

/// Every pair of `runs` compared (`tracelogic compare A B C…`).
pub fn compare(runs: &[RunProperties], options: &CompareOptions) -> Result<SimilarityMatrix> {
    compare_runs(runs, options).map_err(Error::Input)
}

/// The loaded trace (run 0) against the runs added so far (the page's compare view).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunsReport {
    /// The runs compared with the loaded trace (runs 1.. of `matrix`), in the order added;
    /// `source` is the label the user gave.
    pub others: Vec<RunProperties>,
    /// Every pair among the loaded trace and `others`; `None` while there is no other run.
    pub matrix: Option<SimilarityMatrix>,
    /// Why the last run offered was not added (unreadable, another number of ranks); the
    /// comparison of the runs before it stays.
    pub refused: Option<String>,
    /// The properties of every run of `matrix` (the loaded trace first), empty without one.
    #[serde(default)]
    pub runs: Vec<RunProperties>,
}

impl Engine {
    /// Read `files` as a further run named `label` and compare the whole held trace with it. A
    /// run that cannot be read or has another number of ranks is refused (named in
    /// [`RunsReport::refused`]).
    pub fn compare_with_files(&self, label: &str, files: Vec<InputFile>) -> RunsReport {
        let other = match read_trace(files) {
            Ok(t) => t,
            Err(e) => return self.compare_with_runs(Vec::new(), Some(format!("cannot read {label}: {e}"))),
        };
        let mut added = run_properties(&other, None);
        // "17 files" names no run: the trace's own name does (a DUMPI prefix, an OTF2 anchor).
        added.source = crate::trace_name(label, &other.source);
        if added.ranks != self.trace().num_ranks() {
            let refused = format!(
                "cannot compare with {label} ({} ranks): runs must have the same number of ranks as the loaded trace ({})",
                added.ranks,
                self.trace().num_ranks()
            );
            return self.compare_with_runs(Vec::new(), Some(refused));
        }
        self.compare_with_runs(vec![added], None)
    }

    /// Compare the whole held trace with `others` (each pair). Runs that do not hold together
    /// or have another rank count than the held trace are dropped and named in `refused`.
    pub fn compare_with_runs(&self, mut others: Vec<RunProperties>, mut refused: Option<String>) -> RunsReport {
        let n = self.trace().num_ranks();
        if let Some(e) = others.iter().find_map(|r| consistent(r).err()) {
            refused.get_or_insert(e);
            others.retain(|r| consistent(r).is_ok());
        }
        if let Some(odd) = others.iter().find(|r| r.ranks != n) {
            refused.get_or_insert_with(|| format!("{} has {} ranks, the loaded trace {n}", odd.source, odd.ranks));
            others.retain(|r| r.ranks == n);
        }
        if others.is_empty() {
            return RunsReport {
                others,
                matrix: None,
                refused,
                runs: Vec::new(),
            };
        }
        let mut runs = Vec::with_capacity(others.len() + 1);
        runs.push(run_properties(self.trace(), None));
        runs.extend(others.iter().cloned());
        let (matrix, refused) = match compare_runs(&runs, &CompareOptions::default()) {
            Ok(m) => (Some(m), refused),
            Err(e) => (None, Some(e)),
        };
        RunsReport {
            others,
            matrix,
            refused,
            runs,
        }
    }
}

/// A run's properties as the comparison indexes them: one value per rank in every vector and
/// edges between existing ranks (runs come back from the page, which may have stored them).
fn consistent(run: &RunProperties) -> std::result::Result<(), String> {
    let n = run.ranks as usize;
    let lengths = [run.sends.len(), run.volume.len(), run.spatial.len()];
    if lengths.iter().any(|&l| l != n) || run.work.iter().any(|w| w.work.len() != n) {
        return Err(format!(
            "{}: its properties do not have one value per rank ({n} ranks)",
            run.source
        ));
    }
    if let Some([a, b]) = run
        .edges
        .iter()
        .find(|&&[a, b]| a >= run.ranks || b >= run.ranks || a == b)
    {
        return Err(format!(
            "{}: edge {a}-{b} is not between two of its {n} ranks",
            run.source
        ));
    }
    Ok(())
}

/// ε in words: exact, or the range the search budget left.
pub fn epsilon_text(c: &Comparison) -> String {
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

/// The verdict in words, with what failed and what the searches left open: the report's own
/// [`Comparison::verdict`] (computed by the analysis, so every shell shows the same words).
pub fn verdict(c: &Comparison) -> String {
    c.verdict.clone()
}

/// θ for a table: three decimals, or `n/a` when undefined.
pub fn theta_text(theta: f64) -> String {
    if theta.is_nan() {
        "n/a".into()
    } else {
        format!("{theta:.3}")
    }
}

/// How the ranks were paired for θ, in words (the CLI's `ranks paired` line, the page's pairing
/// row): by rank number, as one program under two placements, by role (the best-θ isomorphism,
/// with the paper's rank-number θ and the chance level beside it, and a warning when its search
/// was cut), or by the common-subgraph correspondence.
pub fn pairing_text(c: &Comparison) -> String {
    let p = &c.pairing;
    let text = pairing_words(c);
    if p.on_cut_graphs {
        format!(
            "{text}; roles read from the graphs after `topology`'s first cut (the runs' own graphs differ in light \
             pairs and are not isomorphic)"
        )
    } else {
        text
    }
}

fn pairing_words(c: &Comparison) -> String {
    let p = &c.pairing;
    match p.by {
        PairedBy::RankNumber => "by rank number".to_string(),
        PairedBy::SameProperties => "by an isomorphism of the graphs under which every rank keeps its place in \
             temporal, volume and send count (one program under two placements)"
            .to_string(),
        PairedBy::BestIsomorphism => {
            let mut s = format!(
                "by role: the isomorphism of the graphs with the largest θ ({}: {} scored in full, {} steps; \
                 by rank number θ = {})",
                if p.exhaustive {
                    "proven best"
                } else {
                    "best found before the step budget ran out"
                },
                p.isomorphisms_scored,
                p.steps,
                theta_text(p.theta_by_rank)
            );
            if let Some(chance) = p.theta_chance {
                s.push_str(&format!(
                    "; shuffled values reach θ ≈ {chance:.3} this way (values unrelated to the roles)"
                ));
            }
            s.push_str(&format!("; {}", p.anchor.summary()));
            if !p.exhaustive {
                s.push_str("; the search ran out of steps, so θ is the best pairing found (a lower bound)");
            }
            s
        }
        PairedBy::CommonSubgraph => format!(
            "by the common-subgraph correspondence (by rank number θ = {})",
            theta_text(p.theta_by_rank)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{sample_engine, sample_files};
    use tracelogic_synth::{generate, Spec, TopologySpec};

    fn run(topology: &str) -> RunProperties {
        let spec = Spec {
            topology: TopologySpec::parse(topology).unwrap(),
            iterations: 2,
            ..Spec::default()
        };
        let e = Engine::new(generate(&spec).unwrap(), crate::FieldWords::Flags);
        e.run_properties(&Selection::all(), None, Some(topology)).unwrap()
    }

    #[test]
    fn a_torus_of_fours_is_the_4_cube_and_a_grid_is_not_a_stencil() {
        let m = compare(
            &[
                run("grid:4x4"),
                run("torus:4x4"),
                run("hypercube:4"),
                run("stencil6:4x4"),
            ],
            &CompareOptions::default(),
        )
        .unwrap();
        let pair = |a: usize, b: usize| m.pairs.iter().find(|c| c.first == a && c.second == b).unwrap();
        assert!(pair(1, 2).epsilon_exact && (pair(1, 2).epsilon - 1.0).abs() < 1e-12);
        // The grid's 24 edges are all in the 6-point stencil's 48: ε = 2·24/(24+48).
        let g = pair(0, 3);
        assert!((g.epsilon - 2.0 * 24.0 / 72.0).abs() < 1e-9, "{}", g.epsilon);
        assert_eq!(epsilon_text(g), "0.667  (exact: 24 common edges of 24 + 48)");
        // The words follow the flag, and say when θ is undefined.
        let words = verdict(g);
        assert_eq!(words.starts_with("similar"), g.similar, "{words}");
        assert_eq!(words.contains("θ undefined"), g.theta.is_nan(), "{words}");
        assert_eq!(theta_text(f64::NAN), "n/a");
        assert_eq!(theta_text(0.25), "0.250");
    }

    #[test]
    fn compare_with_itself_is_similar_and_bad_input_names_the_file() {
        let e = sample_engine("npb-lu.S.8");
        let r = e.compare_with_files("LU again", sample_files("npb-lu.S.8"));
        let m = r.matrix.as_ref().unwrap();
        let c = &m.pairs[0];
        assert!(c.similar);
        assert!((c.theta - 1.0).abs() < 1e-9 && (c.epsilon - 1.0).abs() < 1e-9);
        assert_eq!(r.others[0].source, "LU again");
        assert_eq!(r.runs.len(), 2);
        let refused = e.compare_with_files("junk", vec![InputFile::new("junk.bin", vec![0xff; 17])]);
        assert!(refused.refused.as_deref().unwrap().contains("junk"), "{refused:?}");
        assert!(refused.others.is_empty() && refused.matrix.is_none());
        let bt = e.compare_with_files("BT", sample_files("npb-bt.S.9"));
        assert!(bt.refused.as_deref().unwrap().contains("same number of ranks"));
    }

    #[test]
    fn runs_that_do_not_hold_together_are_refused() {
        let e = sample_engine("npb-lu.S.8");
        let again = e.compare_with_files("LU again", sample_files("npb-lu.S.8"));
        let mut broken = again.others[0].clone();
        broken.edges.push([2, 99]);
        let mut short = again.others[0].clone();
        short.volume.pop();
        for (bad, what) in [(broken, "edge 2-99"), (short, "one value per rank")] {
            let r = e.compare_with_runs(vec![bad, again.others[0].clone()], None);
            assert!(r.refused.as_deref().unwrap().contains(what), "{:?}", r.refused);
            assert_eq!(r.others.len(), 1, "the run that holds together stays");
        }
        let cleared = e.compare_with_runs(Vec::new(), None);
        assert!(cleared.matrix.is_none() && cleared.refused.is_none());
    }

    /// θ undefined (MG's volume and partners are constant, time is no work measure) against
    /// the same run on another 3-regular graph (the Wagner graph: the 8-cycle with its long
    /// diagonals, not a cube), ε < 1: not similar, and the words give the reason the verdict
    /// rests on (ε < 1, not the threshold, which applies only beside θ).
    #[test]
    fn the_verdict_on_epsilon_alone_names_its_reason() {
        let e = sample_engine("npb-mg.S.8");
        let mut wagner = e.compare_with_files("MG", sample_files("npb-mg.S.8")).others[0].clone();
        let mut edges: Vec<[u32; 2]> = (0..8u32)
            .flat_map(|i| [[i, (i + 1) % 8], [i, (i + 4) % 8]])
            .map(|[a, b]| [a.min(b), a.max(b)])
            .collect();
        edges.sort_unstable();
        edges.dedup();
        (wagner.edges, wagner.spatial, wagner.source) = (edges, vec![3; 8], "Wagner".into());
        let r = e.compare_with_runs(vec![wagner], None);
        let c = &r.matrix.as_ref().unwrap().pairs[0];
        assert!(c.theta.is_nan() && c.epsilon < 1.0 && c.epsilon >= c.threshold, "{c:?}");
        assert!(!c.similar);
        assert_eq!(
            verdict(c),
            "not similar on ε alone (ε < 1; θ undefined: every property is left out)"
        );
    }
}
