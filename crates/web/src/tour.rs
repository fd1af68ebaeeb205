//! The workshop tour: the method step by step on the bundled samples, each step a few
//! sentences next to the real view that shows it (matrix → filtering → candidates →
//! isomorphism → logical trace → patterns → phases → what-if), with the section of the seed
//! paper it comes from.
//!
//! A step names the sample to load, the view to show and the figure to highlight (a CSS
//! selector inside that view); [`crate::views::tour::TourPanel`] shows the text and marks the
//! figure once it is drawn.

use crate::views::View;

/// One step of the tour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TourStep {
    /// Stable id (used in the page and by tests).
    pub id: &'static str,
    /// Heading of the step.
    pub title: &'static str,
    /// Bundled sample the step runs on ([`crate::samples::Sample::id`]).
    pub sample: &'static str,
    /// The view that shows the step.
    pub view: View,
    /// CSS selector of the figure the step talks about.
    pub figure: &'static str,
    /// What to look at, in a few sentences (one paragraph each).
    pub text: &'static [&'static str],
    /// Where the method is described.
    pub source: &'static str,
}

/// "Logicalization of communication traces from parallel execution".
const LOGICALIZATION: &str = "Logicalization of communication traces from parallel execution";
/// Thesis: the thesis on understanding inter-process communication traces.
const THESIS: &str = "Techniques to facilitate the understanding of inter-process communication traces";
/// Classification poster: the poster on classifying performance limiting factors.
const WHAT_IF: &str = "Trace-driven, MPI-based classification of performance limiting factors";

/// The steps, in order.
pub const STEPS: [TourStep; 8] = [
    TourStep {
        id: "matrix",
        title: "1. The communication matrix",
        sample: "npb-mg.S.8",
        view: View::Matrix,
        figure: "#heatmap svg",
        text: &[
            "Every point-to-point message of the trace is added to the cell of its sender (row) and receiver (column): the matrix records the total data transferred between each pair of ranks.",
            "This is NAS MG on 8 ranks, the example the paper uses. Most cells are empty: an SPMD code talks to a few neighbours only. The colour scale is logarithmic, so light traffic stays visible.",
        ],
        source: "Logicalization, §4.1 and Table 3",
    },
    TourStep {
        id: "filtering",
        title: "2. Filtering low-volume traffic",
        sample: "npb-mg.S.8",
        view: View::Matrix,
        figure: "#binary svg",
        text: &[
            "The full matrix becomes a binary one: 1 where a pair communicates, 0 elsewhere. Entries below a threshold (5 % of the largest by default) are dropped first, so a little side traffic does not hide the dominant pattern.",
            "Orange cells are traffic the threshold removed; the line above the figures says how much of all bytes that was. Move the slider to see the graph change.",
        ],
        source: "Logicalization, §4.1 (filtering, Table 4)",
    },
    TourStep {
        id: "candidates",
        title: "3. Eliminating candidate topologies",
        sample: "npb-mg.S.8",
        view: View::Topology,
        figure: "#topology-stages",
        text: &[
            "The binary matrix is a graph. Every topology of the reference library with as many ranks is a candidate: grids and tori of every factorisation, hypercubes, trees, stencils.",
            "Cheap invariants remove most of them: the same number of edges, then the same sorted degree sequence, then the same adjacency spectrum. The table shows how many survive each stage, and how long it took.",
        ],
        source: "Logicalization, §4.2 (invariants) and Table 7",
    },
    TourStep {
        id: "isomorphism",
        title: "4. Isomorphism: which rank is where",
        sample: "npb-mg.S.8",
        view: View::Topology,
        figure: "#topology-graph",
        text: &[
            "Equal invariants do not prove equal graphs. An isomorphism search (VF2 in the paper) settles it and returns the mapping of every rank to a node of the topology, whatever the rank numbering was.",
            "The drawing places each rank at its coordinates; the mapping table lists them with each rank's neighbours by direction. Hover a rank to see its neighbours.",
        ],
        source: "Logicalization, §4.2 (VF2 matching)",
    },
    TourStep {
        id: "logical",
        title: "5. The logical trace",
        sample: "npb-bt.S.9",
        view: View::Logical,
        figure: "#logical-program",
        text: &[
            "With the topology known, every peer rank becomes a direction (north, east, …): one rank's trace then describes what every rank does. That is the logical trace of the whole program.",
            "Loops are folded into nested repeat blocks, which compress thousands of calls into a short program; expanding it again reproduces each rank's calls (the table shows how much). The same program becomes a C skeleton.",
        ],
        source: "Logicalization, §4.3, Table 5; loop compression §2 and Table 1",
    },
    TourStep {
        id: "patterns",
        title: "6. Communication patterns",
        sample: "npb-lu.S.8",
        view: View::Patterns,
        figure: "#pattern-graph",
        text: &[
            "Each rank's sequence of sends and receives is searched for repeats (n-grams), tandem repeats are collapsed, and the repeats of all ranks that exchange messages are joined into communication patterns.",
            "The event graph draws one occurrence: ranks as lines, events in order, an arrow from each send to its receive. The table lists every pattern with how often it occurs.",
        ],
        source: "Thesis, ch. 4: §4.4 repeat detection, §4.6 tandem repeats, §4.7 pattern construction",
    },
    TourStep {
        id: "phases",
        title: "7. Execution phases",
        sample: "npb-lu.S.8",
        view: View::Phases,
        figure: "#phases-curve",
        text: &[
            "The trace becomes a sequence of pattern occurrences. A cut splits it where the two sides differ most, measured by the Jensen–Shannon divergence of their pattern frequencies; each side is cut again while the split is significant (the BIC stop rule).",
            "The curve is the divergence at every possible cut of the selected segment, the dashed line the chosen cut. The tree and the timeline show the resulting phases.",
        ],
        source: "Thesis, ch. 5, §5.2.1 phase detection",
    },
    TourStep {
        id: "whatif",
        title: "8. What if the network were different?",
        sample: "npb-mg.S.8",
        view: View::WhatIf,
        figure: "#whatif-bars",
        text: &[
            "The trace is replayed with logical clocks, once per network configuration in a single pass: each message costs α + n·β (Hockney), collectives synchronise, and computation keeps its measured time.",
            "The bars split the predicted time into compute, wait, latency and bandwidth for the network and its variations (bandwidth ÷8 … ×8, latency ×8 … ÷8). How the time moves across them classifies the run as compute, latency, bandwidth or imbalance bound.",
        ],
        source: "Classification poster, §2 and Table 1",
    },
];

/// The papers the steps cite, as `(short name, title)`: a step's `source` starts with the short name.
pub const SOURCES: [(&str, &str); 3] = [
    ("Logicalization", LOGICALIZATION),
    ("Thesis", THESIS),
    ("Classification poster", WHAT_IF),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::samples;

    #[test]
    fn every_step_runs_on_a_bundled_sample_and_an_analysis_view() {
        for s in STEPS {
            assert!(samples::find(s.sample).is_some(), "{}: no sample {}", s.id, s.sample);
            assert!(View::ALL.contains(&s.view), "{}", s.id);
            assert!(!s.text.is_empty() && s.text.iter().all(|p| p.len() > 40), "{}", s.id);
            assert!(SOURCES.iter().any(|(key, _)| s.source.starts_with(key)), "{}", s.id);
            assert!(s.figure.starts_with('#'), "{}", s.id);
        }
    }

    #[test]
    fn the_steps_follow_the_method() {
        let ids: Vec<&str> = STEPS.iter().map(|s| s.id).collect();
        assert_eq!(
            ids,
            [
                "matrix",
                "filtering",
                "candidates",
                "isomorphism",
                "logical",
                "patterns",
                "phases",
                "whatif"
            ]
        );
    }
}
