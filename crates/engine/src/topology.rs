//! The communication topology of a run, of a matrix or of a plain graph (Logicalization §4.2),
//! proved by isomorphism with a rank → coordinates mapping.

use crate::{Engine, Error, Result, Scope};
use serde::{Deserialize, Serialize};
use std::rc::Rc;
use tracelogic_analysis::logical::{place_by_first_contacts, DirectionsFrom, Placement};
use tracelogic_analysis::matrix::CommMatrix;
use tracelogic_analysis::topology::declared::grid_holding;
pub use tracelogic_analysis::topology::tracelogic_graph::{edgelist, Family, Graph, TopologySpec};
use tracelogic_analysis::topology::{identify_graph, identify_matrix, identify_matrix_declared};
pub use tracelogic_analysis::topology::{
    Component, CustomPattern, Identification, PairTraffic, RankPlace, SpectrumDisplay, Stage, Threshold,
    TopologyOptions, TopologyReport,
};
use tracelogic_model::{Selection, Trace};

/// What a kept identification was computed for: the selection (absolute) and the threshold.
pub(crate) type IdentifiedKey = (Selection, Threshold);

/// Whether an identification found a topology, with the sentence both shells show when not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    /// A topology matched (the whole graph, or every component of it), or the program declared
    /// the one the run is named by (`TopologyReport::name_as_declared`).
    pub found: bool,
    /// Why there is none, when there is none.
    pub why_not: Option<String>,
}

/// Whether `report` found a topology, and why not.
pub fn verdict(report: &TopologyReport) -> Verdict {
    let found = report.identification.matched.is_some()
        || (!report.components.is_empty() && report.components.iter().all(|c| c.identification.matched.is_some()))
        || report.name_as_declared.is_some();
    let why_not = if found {
        None
    } else if report.no_point_to_point {
        Some("the run has no point-to-point traffic (collectives only), so it has no topology to identify".into())
    } else {
        Some(format!(
            "no topology of the library matches the communication graph ({} ranks, {} edges){}",
            report.identification.ranks,
            report.edges.len(),
            if report.edges.is_empty() {
                ": it has no edge"
            } else {
                "; see the survivors of each stage above, or add the shape with --library"
            }
        ))
    };
    Verdict { found, why_not }
}

/// The filtered communication graph of `report` as an edge-list file (what `--library` and the
/// page's reference library read back).
pub fn graph_edge_list(report: &TopologyReport) -> String {
    let edges: Vec<(u32, u32)> = report.edges.iter().map(|&[a, b]| (a, b)).collect();
    let g = Graph::from_edges(report.identification.ranks, edges);
    let comment = format!(
        "tracelogic communication graph ({} ranks, {} edges)",
        g.num_nodes(),
        g.num_edges()
    );
    edgelist::write(&g, Some(&comment))
}

/// Identify a plain graph (no filtering).
pub fn of_graph(graph: &Graph, options: &TopologyOptions) -> TopologyReport {
    identify_graph(graph, options)
}

/// Identify the communication matrix of `trace` (or of a selection of it), knowing the process
/// grids its communicators declare: when no cut of the automatic filter names the graph, the
/// graph of every pair is tried if such a grid holds it
/// ([`tracelogic_analysis::topology::identify_matrix_declared`]). The serial CLI, the page and the
/// MPI-parallel mode's rank 0 (whose trace holds every process's definitions) all identify so.
pub fn of_trace_matrix(trace: &Trace, matrix: &CommMatrix, options: &TopologyOptions) -> TopologyReport {
    identify_matrix_declared(matrix, options, &|pairs| grid_holding(trace, pairs))
}

/// Identify a communication matrix read from a file (no trace, so no placement).
pub fn of_matrix(matrix: &CommMatrix, options: &TopologyOptions) -> TopologyReport {
    identify_matrix(matrix, options)
}

impl Engine {
    /// The topology of the traffic among the ranks `selection` keeps (the matrix of
    /// [`Engine::matrix`]), identified with `options` (`tracelogic topology`, the page's topology
    /// view). On the whole run, when the proved isomorphism need not be the program's layout, the
    /// ranks are placed from their first contacts as the logical trace places them
    /// ([`place_by_first_contacts`]; `placed_by` says so): the whole run's operations are what
    /// first contacts are read from.
    pub fn topology(&self, selection: &Selection, options: &TopologyOptions) -> Result<TopologyReport> {
        let absolute = self.absolute(selection)?;
        let matrix = CommMatrix::from_trace(self.trace(), &absolute);
        let mut report = of_trace_matrix(self.trace(), &matrix, options);
        if absolute == Selection::all() {
            place_by_first_contacts(self.trace(), &mut report);
            // What the program declared (MPI_Cart_create) against what it did: the run is
            // named by its declared extents when they agree with the whole observed graph.
            tracelogic_analysis::topology::declared::attach(self.trace(), &mut report);
        }
        Ok(report)
    }

    /// The identification the logical trace and the pattern extrapolation start from: the whole
    /// matrix of the scope's trace at `threshold`, computed once per selection and threshold.
    pub(crate) fn identified(&self, scope: &Scope<'_>, threshold: Threshold) -> Rc<TopologyReport> {
        let key = (scope.selection.clone(), threshold);
        if let Some((k, report)) = &*self.kept.identified.borrow() {
            if *k == key {
                return report.clone();
            }
        }
        let matrix = CommMatrix::from_trace(scope.trace(), &Selection::all());
        let report = Rc::new(of_trace_matrix(
            scope.trace(),
            &matrix,
            &TopologyOptions {
                threshold,
                ..TopologyOptions::default()
            },
        ));
        *self.kept.identified.borrow_mut() = Some((key, report.clone()));
        report
    }

    /// Where each rank of the selection sits in its identified topology, as the logical trace
    /// places it: among the isomorphic topologies, the one whose directions the ranks agree on
    /// (`Placement::choose`), so a 4x4x4 torus identified as the 6-cube is placed as the torus.
    /// Where the agreement with and without sizes prefer different placements (4 of the 95
    /// corpus and held-out runs) this is the first, the one with sizes; the logical trace builds
    /// both and may keep the other (`DirectionsFrom::contest`, docs/logical.md "Scoring").
    pub fn placement(&self, selection: &Selection, threshold: Threshold) -> Result<(Placement, DirectionsFrom)> {
        let scope = self.scope(selection)?;
        self.placement_of(&scope, threshold)
    }

    pub(crate) fn placement_of(&self, scope: &Scope<'_>, threshold: Threshold) -> Result<(Placement, DirectionsFrom)> {
        let report = self.identified(scope, threshold);
        Placement::choose(scope.trace(), &report)
            .map_err(|e| Error::NothingFound(format!("{}: {e}", scope.trace().source)))
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::{sample_engine, sample_trace};
    use crate::{Engine, FieldWords};
    use tracelogic_analysis::logical::PlacedBy;
    use tracelogic_analysis::topology::{Threshold, TopologyOptions};
    use tracelogic_model::Selection;

    #[test]
    fn lu_is_a_4x2_grid_and_the_threshold_is_followed() {
        let engine = sample_engine("npb-lu.S.8");
        let auto = engine.topology(&Selection::all(), &TopologyOptions::default()).unwrap();
        assert_eq!(auto.identification.matched.as_ref().unwrap().label, "4x2 grid");
        let mut ranks: Vec<u32> = auto.identification.mapping.iter().map(|p| p.rank).collect();
        ranks.sort_unstable();
        assert_eq!(ranks, (0..8).collect::<Vec<_>>());
        assert!(super::verdict(&auto).found);
        let fixed = engine
            .topology(
                &Selection::all(),
                &TopologyOptions {
                    threshold: Threshold::Percent(60.0),
                    ..TopologyOptions::default()
                },
            )
            .unwrap();
        assert_eq!(fixed.filter.mode, "fixed");
        assert!(fixed.filter.pairs_kept < auto.filter.pairs_kept);
        assert_eq!(
            fixed.filter.pairs_kept + fixed.filter.removed.len(),
            fixed.filter.pairs_before
        );
    }

    /// The topology of a rank selection is that of the traffic among those ranks: no edge leaves
    /// them (before, the CLI and the page computed it two different ways).
    #[test]
    fn the_topology_of_a_rank_selection_is_that_of_the_traffic_among_those_ranks() {
        let engine = sample_engine("npb-lu.S.8");
        let low = Selection {
            ranks: Some(vec![0, 1, 2, 3]),
            ..Selection::default()
        };
        let r = engine.topology(&low, &TopologyOptions::default()).unwrap();
        assert!(!r.edges.is_empty());
        assert!(r.edges.iter().all(|e| e[0] < 4 && e[1] < 4), "{:?}", r.edges);
        // LU's 4x2 grid: ranks 0-3 are one row of four, a path of 3 edges.
        assert_eq!(r.edges, vec![[0, 1], [1, 2], [2, 3]]);
    }

    #[test]
    fn a_renumbered_bt_is_placed_from_first_contacts() {
        let bt = sample_trace("npb-bt.S.9");
        let renumbered = bt
            .renumber_ranks(&tracelogic_model::renumber::random_permutation(9, 7))
            .unwrap();
        let engine = Engine::new(renumbered, FieldWords::Labels);
        let r = engine.topology(&Selection::all(), &TopologyOptions::default()).unwrap();
        assert_eq!(r.placed_by, PlacedBy::FirstContacts);
        let plain = super::of_matrix(
            &tracelogic_analysis::matrix::CommMatrix::from_trace(engine.trace(), &Selection::all()),
            &TopologyOptions::default(),
        );
        assert_eq!(plain.placed_by, PlacedBy::Identification);
        assert_ne!(r.identification.mapping, plain.identification.mapping);
        assert_eq!(r.identification.matched, plain.identification.matched);
    }

    #[test]
    fn a_run_of_collectives_only_says_why_it_has_no_topology() {
        use tracelogic_model::{CollectiveOp, Trace, COMM_WORLD, NO_CALLPATH};
        let mut t = Trace::new("generated", "allreduce", 4);
        for r in 0..4 {
            let c = t.push_call(r, "MPI_Allreduce", 10, 20, NO_CALLPATH, 0);
            t.push_collective(r, c, CollectiveOp::Allreduce, COMM_WORLD, 0, 8, 8);
        }
        let engine = Engine::new(t, FieldWords::Flags);
        let r = engine.topology(&Selection::all(), &TopologyOptions::default()).unwrap();
        assert!(r.no_point_to_point);
        let v = super::verdict(&r);
        assert!(!v.found);
        assert_eq!(
            v.why_not.as_deref(),
            Some("the run has no point-to-point traffic (collectives only), so it has no topology to identify")
        );
        // The saved graph of LU reads back as the graph identified: 8 ranks, 10 edges of a 4x2 grid.
        let lu = sample_engine("npb-lu.S.8")
            .topology(&Selection::all(), &TopologyOptions::default())
            .unwrap();
        let text = super::graph_edge_list(&lu);
        assert!(
            text.starts_with("# tracelogic communication graph (8 ranks, 10 edges)"),
            "{text}"
        );
        let back = super::edgelist::parse(&text, "lu.txt").unwrap();
        assert_eq!((back.num_nodes(), back.num_edges()), (8, 10));
    }
}
