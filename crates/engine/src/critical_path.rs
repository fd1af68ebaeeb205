//! The critical path of a selection through its happens-before graph (`docs/waits.md`), with
//! the load imbalance of the computation and, on request, the what-if classification, so that
//! the three answers to "what bounds this run" sit side by side: a run the replay calls
//! imbalance-bound shows its late ranks' computation on the path.

use crate::replay::{Network, ReplayRequest};
use crate::{Engine, Error, Result};
use serde::{Deserialize, Serialize};
use tracelogic_analysis::critical_path::critical_path_paired;
pub use tracelogic_analysis::critical_path::{CriticalPath, FunctionOnPath, RankOnPath, Segment};
use tracelogic_analysis::imbalance::{imbalance_among, masters_of};
pub use tracelogic_analysis::imbalance::{ImbalanceReport, RankCompute};
pub use tracelogic_analysis::replay::Classification;
use tracelogic_analysis::topology::Threshold;
use tracelogic_model::{Rank, Selection};

/// A rank's computation on the critical path.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ComputeOnPath {
    /// World rank.
    pub rank: Rank,
    /// Seconds of the path spent in this rank's computation.
    pub compute_s: f64,
    /// Over the path's length.
    pub share: f64,
}

/// The critical path of a selection and what it says together with the load imbalance
/// (`tracelogic critical-path`, the waits view's critical-path section).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CriticalPathReport {
    /// `length_s`, `by_rank`, `by_function`, `segments` at the top level of the JSON.
    #[serde(flatten)]
    pub path: CriticalPath,
    /// Share of the path spent computing (the rest is in MPI functions).
    pub compute_share: f64,
    /// Computation on the path per rank that has some, by decreasing time.
    pub compute_by_rank: Vec<ComputeOnPath>,
    /// Load imbalance of the computation over the selection's ranks and time window.
    pub imbalance: ImbalanceReport,
    /// The what-if classification on the recording network (the first preset), when asked.
    pub what_if: Option<Classification>,
    /// One line relating the path, the imbalance and the classification.
    pub relation: String,
    /// Where the trace came from.
    pub source: String,
    /// The selection applied (times absolute).
    pub selection: Selection,
}

fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

fn rank_list(ranks: &[Rank]) -> String {
    ranks.iter().map(|r| r.to_string()).collect::<Vec<_>>().join(", ")
}

/// The line relating the critical path to the load imbalance and the classification.
pub fn relation(
    path: &CriticalPath,
    compute_by_rank: &[ComputeOnPath],
    compute_share: f64,
    imbalance: &ImbalanceReport,
    what_if: Option<&Classification>,
) -> String {
    if path.length_s <= 0.0 {
        return "the critical path is empty (no MPI call in the selection)".into();
    }
    let on_path = |r: Rank| compute_by_rank.iter().find(|c| c.rank == r).map_or(0.0, |c| c.share);
    let mut line = format!(
        "computation is {} of the critical path; load imbalance max/mean {:.2} ({:+.1}%)",
        pct(compute_share),
        imbalance.ratio,
        imbalance.imbalance_pct
    );
    if let Some(note) = imbalance.left_out_note() {
        line += &format!(" {note}");
    }
    if imbalance.late_ranks.is_empty() {
        line += &format!(", no late rank; rank {} computes most", imbalance.max_rank);
        if let Some(top) = compute_by_rank.first() {
            line += &format!(
                ", rank {} has most computation on the path ({})",
                top.rank,
                pct(top.share)
            );
        }
    } else {
        let late: f64 = imbalance.late_ranks.iter().map(|&r| on_path(r)).sum();
        let s = if imbalance.late_ranks.len() == 1 { "" } else { "s" };
        line += &format!(
            ", late rank{s} {}: {} of the path is their computation",
            rank_list(&imbalance.late_ranks),
            pct(late)
        );
    }
    if let Some(c) = what_if {
        line += &format!("; what-if on {}: {}", c.network, c.label);
        use tracelogic_analysis::replay::Bound;
        let imbalance_bound = matches!(c.bound, Bound::Imbalance | Bound::ImbalanceSensitive);
        let late_on_path = imbalance.late_ranks.iter().any(|&r| on_path(r) > 0.0);
        if imbalance_bound && late_on_path {
            line += " (imbalance-bound: the late ranks' computation is on the path)";
        } else if imbalance_bound && !imbalance.late_ranks.is_empty() {
            line += " (imbalance-bound, yet the late ranks' computation is not on the path)";
        } else if imbalance_bound {
            line += " (waiting without a late rank: the imbalance moves between ranks)";
        } else if matches!(c.bound, Bound::Compute) {
            line += " (the path is mostly computation the network cannot shorten)";
        }
    }
    line
}

impl Engine {
    /// The critical path of the part of the trace `selection` keeps, the load imbalance of its
    /// ranks and time window (computed on the whole trace: computation is what lies between any
    /// two calls, whatever the kind filter), and with `what_if` the classification of the
    /// what-if replay on the first preset network.
    pub fn critical_path(&self, selection: &Selection, what_if: bool) -> Result<CriticalPathReport> {
        let scope = self.scope(selection)?;
        let (matching, sequence) = scope.pairing();
        let path = critical_path_paired(scope.trace(), matching, sequence)
            .map_err(|e| Error::Input(format!("{}: {e}", scope.trace().source)))?;
        // The masters of a star or master–worker run are not compared (their computation is
        // their role); the topology of the same selection says which ranks they are.
        let masters = masters_of(&self.identified(&scope, Threshold::Auto));
        let imbalance = imbalance_among(self.trace(), &scope.selection, &masters);
        let mut compute = vec![0.0f64; scope.trace().ranks.len()];
        for s in path.segments.iter().filter(|s| s.kind == "compute") {
            if let Some(c) = compute.get_mut(s.rank as usize) {
                *c += s.end_s - s.start_s;
            }
        }
        let total: f64 = compute.iter().sum();
        let length = path.length_s;
        let share = |x: f64| if length > 0.0 { x / length } else { 0.0 };
        let mut compute_by_rank: Vec<ComputeOnPath> = compute
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0.0)
            .map(|(r, &c)| ComputeOnPath {
                rank: r as Rank,
                compute_s: c,
                share: share(c),
            })
            .collect();
        compute_by_rank.sort_by(|a, b| b.compute_s.total_cmp(&a.compute_s).then(a.rank.cmp(&b.rank)));
        let classification = if what_if {
            let request = ReplayRequest {
                networks: Network::presets().into_iter().take(1).collect(),
                per_rank: false,
                ..ReplayRequest::default()
            };
            self.replay(selection, &request)?
                .report
                .classification
                .into_iter()
                .next()
        } else {
            None
        };
        let compute_share = share(total);
        let relation = relation(
            &path,
            &compute_by_rank,
            compute_share,
            &imbalance,
            classification.as_ref(),
        );
        Ok(CriticalPathReport {
            path,
            compute_share,
            compute_by_rank,
            imbalance,
            what_if: classification,
            relation,
            source: scope.trace().source.clone(),
            selection: scope.selection,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::sample_engine;
    use crate::{Engine, FieldWords};
    use tracelogic_analysis::critical_path::critical_path;
    use tracelogic_analysis::imbalance::imbalance;
    use tracelogic_model::{Rank, Selection, Trace, NO_CALLPATH};

    #[test]
    fn the_path_is_the_analysis_of_the_same_selection() {
        let engine = sample_engine("npb-lu.S.8");
        let whole = engine.critical_path(&Selection::all(), false).unwrap();
        assert_eq!(whole.path, critical_path(engine.trace(), &Selection::all()).unwrap());
        assert_eq!(whole.imbalance, imbalance(engine.trace(), &Selection::all()));
        assert_eq!(whole.what_if, None);
        // The segments' computation adds up to the computation share.
        let segs: f64 = whole
            .path
            .segments
            .iter()
            .filter(|s| s.kind == "compute")
            .map(|s| s.end_s - s.start_s)
            .sum();
        assert!((segs / whole.path.length_s - whole.compute_share).abs() < 1e-9);
        let functions: f64 = whole.path.by_function.iter().map(|f| f.share).sum();
        assert!(
            (functions + whole.compute_share - 1.0).abs() < 1e-6,
            "{functions} {}",
            whole.compute_share
        );

        let (start, end) = engine.trace().span();
        let part = Selection {
            ranks: Some(vec![0, 1, 2, 3]),
            from: Some((end - start) / 4),
            ..Selection::default()
        };
        let selected = engine.critical_path(&part, false).unwrap();
        let absolute = engine.absolute(&part).unwrap();
        assert_eq!(selected.path, critical_path(engine.trace(), &absolute).unwrap());
        assert_eq!(selected.imbalance, imbalance(engine.trace(), &absolute));
        assert!(selected.path.segments.iter().all(|s| s.rank < 4));
        assert!(selected.path.length_s < whole.path.length_s);
        assert_eq!(selected.imbalance.by_rank.len(), 4);
    }

    /// A generated master–worker run (2 masters, 8 workers under a random numbering; one worker
    /// in two computes 1.5 times as long): the load imbalance leaves out the masters the
    /// generator placed (its truth, not the identification), compares the workers as the
    /// plain imbalance's per-rank computation gives them, and says so in both lines.
    #[test]
    fn a_master_worker_run_compares_its_workers() {
        use tracelogic_synth::{generate_with_truth, Numbering, Spec, TopologySpec};
        let spec = Spec {
            topology: TopologySpec::parse("master-worker:2x10").unwrap(),
            numbering: Numbering::Random,
            seed: 4,
            iterations: 30,
            compute_ns: 200_000,
            imbalance: 0.5,
            ..Spec::default()
        };
        let (trace, truth) = generate_with_truth(&spec).unwrap();
        let masters: Vec<Rank> = (0..10).filter(|&r| truth.node_of_rank[r as usize] < 2).collect();
        let all = imbalance(&trace, &Selection::all());
        let engine = Engine::new(trace, FieldWords::Flags);
        let r = engine.critical_path(&Selection::all(), false).unwrap();
        assert_eq!(r.imbalance.left_out, masters);
        assert_eq!(
            r.imbalance.by_rank, all.by_rank,
            "every rank's computation still listed"
        );
        let workers: Vec<f64> = all
            .by_rank
            .iter()
            .filter(|c| !masters.contains(&c.rank))
            .map(|c| c.compute_s)
            .collect();
        let max = workers.iter().copied().fold(0.0, f64::max);
        let mean = workers.iter().sum::<f64>() / workers.len() as f64;
        assert!(
            (r.imbalance.ratio - max / mean).abs() < 1e-6,
            "{} {}",
            r.imbalance.ratio,
            max / mean
        );
        assert!(!masters.contains(&r.imbalance.max_rank));
        let note = format!("among workers (masters {}, {} apart)", masters[0], masters[1]);
        assert_eq!(r.imbalance.left_out_note().as_deref(), Some(note.as_str()));
        assert!(r.relation.contains(&note), "{}", r.relation);
    }

    /// Four ranks compute 10 ms, rank 2 computes 40 ms, then all meet in an `MPI_Allreduce`
    /// (5 ms after the last one arrives): the run is bound by rank 2's computation.
    fn late_rank() -> Trace {
        const MS: u64 = 1_000_000;
        let mut t = Trace::new("generated", "late-rank", 4);
        for r in 0..4 {
            t.push_call(r, "MPI_Init", 0, MS, NO_CALLPATH, 0);
            let work = if r == 2 { 40 } else { 10 };
            let c = t.push_call(r, "MPI_Allreduce", (1 + work) * MS, 46 * MS, NO_CALLPATH, 0);
            t.push_collective(
                r,
                c,
                tracelogic_model::CollectiveOp::Allreduce,
                0,
                tracelogic_model::NO_ROOT,
                8,
                8,
            );
            t.push_call(r, "MPI_Finalize", 46 * MS, 47 * MS, NO_CALLPATH, 0);
        }
        t
    }

    #[test]
    fn a_late_rank_is_on_the_path_and_named_in_the_relation() {
        let engine = Engine::new(late_rank(), FieldWords::Flags);
        let r = engine.critical_path(&Selection::all(), true).unwrap();
        // By hand: 1 ms init + 40 ms rank 2's computation + 5 ms allreduce + 1 ms finalize.
        assert!((r.path.length_s - 0.047).abs() < 1e-9, "{}", r.path.length_s);
        assert_eq!(r.compute_by_rank[0].rank, 2);
        assert!((r.compute_by_rank[0].compute_s - 0.040).abs() < 1e-9);
        // max/mean = 40 / ((3·10 + 40) / 4) = 40 / 17.5.
        assert!((r.imbalance.ratio - 40.0 / 17.5).abs() < 1e-9);
        assert_eq!(r.imbalance.late_ranks, vec![2]);
        assert!(r.relation.contains("late rank 2"), "{}", r.relation);
        assert!(r.relation.contains("85.1% of the path"), "{}", r.relation);
        let c = r.what_if.as_ref().unwrap();
        assert!(
            r.relation.contains(&format!("what-if on {}: {}", c.network, c.label)),
            "{}",
            r.relation
        );
    }
}
