//! A pattern's occurrences over time, one lane per rank.

use super::*;

/// One stretch of a rank's time inside an occurrence of a communication pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimelineSpan {
    /// Entry time of the rank's first event in the occurrence (ns).
    pub start: Time,
    /// Exit time of its last event.
    pub end: Time,
    /// Communication pattern id.
    pub pattern: u32,
}

/// One rank's lane of the whole-run timeline.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimelineLane {
    /// World rank.
    pub rank: Rank,
    /// Its parts of pattern occurrences, in time order.
    pub spans: Vec<TimelineSpan>,
    /// True when consecutive spans of one pattern were merged to stay under the span limit.
    pub merged: bool,
    /// Spans left out after merging (the lane is cut at the limit).
    pub dropped: usize,
}

/// The whole run as lanes of pattern occurrences (the overview "coloured by pattern").
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PatternTimeline {
    /// Earliest timestamp of the trace.
    pub start: Time,
    /// Latest timestamp.
    pub end: Time,
    /// One lane per rank, in rank order (the first `max_lanes`).
    pub lanes: Vec<TimelineLane>,
    /// Ranks beyond `max_lanes`, not drawn.
    pub ranks_left_out: usize,
}

/// Lanes of the first `max_lanes` ranks with their parts of every pattern occurrence; a lane with
/// more than `max_spans` parts has consecutive parts of the same pattern merged, then is cut.
pub fn timeline(
    trace: &Trace,
    analysis: &CommunicationAnalysis,
    max_lanes: usize,
    max_spans: usize,
) -> PatternTimeline {
    let (start, end) = trace.span();
    let shown = trace.ranks.len().min(max_lanes);
    let mut lanes: Vec<TimelineLane> = (0..shown)
        .map(|r| TimelineLane {
            rank: r as Rank,
            ..Default::default()
        })
        .collect();
    for inst in &analysis.instances {
        if inst.pattern == OUTSIDE {
            continue;
        }
        for part in &inst.parts {
            if let Some(lane) = lanes.get_mut(part.rank as usize) {
                lane.spans.push(TimelineSpan {
                    start: part.start,
                    end: part.end,
                    pattern: inst.pattern,
                });
            }
        }
    }
    for lane in &mut lanes {
        lane.spans.sort_by_key(|s| (s.start, s.end));
        if lane.spans.len() > max_spans {
            lane.merged = true;
            let mut merged: Vec<TimelineSpan> = Vec::new();
            for s in lane.spans.drain(..) {
                match merged.last_mut() {
                    Some(m) if m.pattern == s.pattern => m.end = m.end.max(s.end),
                    _ => merged.push(s),
                }
            }
            lane.dropped = merged.len().saturating_sub(max_spans);
            merged.truncate(max_spans);
            lane.spans = merged;
        }
    }
    PatternTimeline {
        start,
        end,
        lanes,
        ranks_left_out: trace.ranks.len() - shown,
    }
}
