//! What the pattern views draw: event graphs of many occurrences at once and the whole-run
//! timeline coloured by pattern, on generated traces.

use tracelogic_analysis::patterns::construct::OUTSIDE;
use tracelogic_analysis::patterns::{analyse_events, event_graph, event_graphs, rank_events, timeline, PatternOptions};
use tracelogic_model::match_messages;
use tracelogic_synth::{generate, Spec, Style, TopologySpec};

fn wavefront_run(iterations: u32) -> tracelogic_model::Trace {
    generate(&Spec {
        topology: TopologySpec::parse("grid:4x4").unwrap(),
        style: Style::Wavefront,
        iterations,
        ..Default::default()
    })
    .unwrap()
}

/// `event_graphs` gives, for every kept occurrence, the same graph as `event_graph`, and stops at
/// the per-pattern and total limits.
#[test]
fn event_graphs_match_one_by_one() {
    let trace = wavefront_run(20);
    let matching = match_messages(&trace);
    let events = rank_events(&trace, false);
    let a = analyse_events(&trace, &matching, &events, &PatternOptions::default());
    let all = event_graphs(&trace, &matching, &events, &a.communication, 64, usize::MAX);
    assert_eq!(all.len(), a.communication_patterns.len());
    assert_eq!(all[0].len(), 20, "every occurrence of the global pattern is kept");
    for (p, graphs) in all.iter().enumerate() {
        for (i, g) in graphs.iter().enumerate() {
            assert_eq!(
                Some(g),
                event_graph(&trace, &matching, &events, &a.communication, p, i).as_ref()
            );
            assert_eq!((g.pattern, g.occurrence), (p, i));
        }
    }
    // Occurrences differ in time, not in shape.
    assert!(all[0][1].events[0].time > all[0][0].events[0].time);
    assert_eq!(all[0][1].logical_width, all[0][0].logical_width);
    let few = event_graphs(&trace, &matching, &events, &a.communication, 3, usize::MAX);
    assert_eq!(few[0].len(), 3);
    let budget = event_graphs(&trace, &matching, &events, &a.communication, 64, 96 * 5 + 10);
    assert_eq!(budget[0].len(), 5, "96 events per occurrence");
}

/// The timeline has one lane per rank, each with the rank's part of every occurrence in time
/// order; a low span limit merges consecutive parts of one pattern.
#[test]
fn timeline_lanes_per_rank() {
    let trace = wavefront_run(12);
    let matching = match_messages(&trace);
    let events = rank_events(&trace, false);
    let a = analyse_events(&trace, &matching, &events, &PatternOptions::default());
    let t = timeline(&trace, &a.communication, 1024, 10_000);
    assert_eq!(t.lanes.len(), 16);
    assert_eq!(t.ranks_left_out, 0);
    assert_eq!((t.start, t.end), trace.span());
    for (r, lane) in t.lanes.iter().enumerate() {
        assert_eq!(lane.rank, r as u32);
        assert_eq!(lane.spans.len(), 12, "rank {r}: one part per occurrence");
        assert!(lane.spans.windows(2).all(|w| w[0].end <= w[1].start));
        assert!(lane
            .spans
            .iter()
            .all(|s| s.pattern == 0 && s.pattern != OUTSIDE && s.start <= s.end));
        assert!(!lane.merged);
    }
    let capped = timeline(&trace, &a.communication, 4, 5);
    assert_eq!((capped.lanes.len(), capped.ranks_left_out), (4, 12));
    assert!(capped
        .lanes
        .iter()
        .all(|l| l.merged && l.spans.len() == 1 && l.dropped == 0));
    assert_eq!(capped.lanes[0].spans[0].start, t.lanes[0].spans[0].start);
    assert_eq!(capped.lanes[0].spans[0].end, t.lanes[0].spans[11].end);
}

/// Non-blocking exchanges post every receive before the sends (`MPI_Irecv` on both sides, then
/// `MPI_Isend`): Lamport order over posted events has cycles. The graphs are still built (this
/// looped forever before), each rank's events stay in order, and every event is placed after its
/// rank's previous one.
#[test]
fn event_graphs_of_irecv_before_isend_exchanges() {
    let trace = generate(&Spec {
        topology: TopologySpec::parse("torus:4x4").unwrap(),
        style: Style::Isend,
        iterations: 6,
        ..Default::default()
    })
    .unwrap();
    let matching = match_messages(&trace);
    let events = rank_events(&trace, false);
    let a = analyse_events(&trace, &matching, &events, &PatternOptions::default());
    let graphs = event_graphs(&trace, &matching, &events, &a.communication, 64, usize::MAX);
    assert_eq!(graphs[0].len(), 6);
    for g in graphs.iter().flatten() {
        assert_eq!(g.arrows.len(), 64, "16 ranks x 4 messages");
        for w in g.events.windows(2) {
            if w[0].rank == w[1].rank {
                assert!(w[1].logical > w[0].logical);
            }
        }
        assert!(g.logical_width as usize <= g.events.len());
        // Sends follow the receives posted before them on their rank; the receives were freed.
        let forward = g
            .arrows
            .iter()
            .filter(|a| g.events[a.to].logical > g.events[a.from].logical)
            .count();
        assert!(forward < g.arrows.len());
    }
}
