//! What `tracelogic match` prints.

use crate::common::{emit, print_json, seconds, table, CliError};
use serde::Serialize;
use tracelogic_engine::logical::DirectionsFrom;
use tracelogic_engine::patterns::{NeighbourClass, Orientation, PatternSearch, SearchReport};
use tracelogic_model::Rank;

/// The JSON of `tracelogic match`: the search, plus how the pattern was extrapolated.
#[derive(Serialize)]
struct MatchReport<'a> {
    #[serde(flatten)]
    search: &'a PatternSearch,
    #[serde(skip_serializing_if = "Option::is_none")]
    extrapolation: Option<Extrapolation<'a>>,
}

/// [`ExtrapolatedSearch`] without its search (printed beside it).
#[derive(Serialize)]
struct Extrapolation<'a> {
    from_topology: &'a str,
    to_topology: &'a str,
    classes: &'a [NeighbourClass],
    orientation_matches: &'a [usize],
    orientation: Option<&'a Orientation>,
    #[serde(skip_serializing_if = "Option::is_none")]
    directions_from: Option<&'a DirectionsFrom>,
}

/// Print `report` as JSON (the search, then how the pattern was extrapolated) or text.
pub fn print(report: &SearchReport, json: bool) -> Result<(), CliError> {
    let result = &report.search;
    let found = &result.search;
    let extrapolation = report.extrapolated.then(|| Extrapolation {
        from_topology: &result.from_topology,
        to_topology: &result.to_topology,
        classes: &result.classes,
        orientation_matches: &result.orientation_matches,
        orientation: result.orientation.as_ref(),
        directions_from: result.directions_from.as_ref(),
    });
    if json {
        return print_json(&MatchReport {
            search: found,
            extrapolation,
        });
    }
    let searched: Vec<Rank> = found.rank_matches.keys().copied().collect();
    let mut o = String::new();
    if let Some(x) = &extrapolation {
        o += &format!(
            "pattern for {} extrapolated to the run's {} ({} classes of ranks, {} orientations tried: {:?} occurrences)\n",
            x.from_topology,
            x.to_topology,
            x.classes.len(),
            x.orientation_matches.len(),
            x.orientation_matches
        );
        if let Some(d) = x.directions_from.filter(|d| d.worth_showing()) {
            o += &format!("{}\n", d.reason);
        }
        if let Some(or) = x.orientation {
            let map: Vec<String> = or.directions.iter().map(|(a, b)| format!("{a}->{b}")).collect();
            o += &format!("orientation kept: {}\n", map.join(", "));
        }
    }
    o += &format!(
        "{} occurrences across {} ranks with at most {} edits per rank\n",
        found.matches.len(),
        searched.len(),
        found.max_edits
    );
    let rows = found
        .matches
        .iter()
        .take(30)
        .map(|m| vec![seconds(m.start), seconds(m.end), m.edits.to_string()])
        .collect();
    o += &table(&["start s", "end s", "edits"], rows, &[0, 1, 2]);
    let rows = found
        .rank_matches
        .iter()
        .take(64)
        .map(|(r, m)| {
            let st = found.rank_stats[r];
            vec![
                r.to_string(),
                m.len().to_string(),
                st.verified.to_string(),
                st.windows.to_string(),
            ]
        })
        .collect();
    o += &table(&["rank", "windows matched", "verified", "windows"], rows, &[0, 1, 2, 3]);
    emit(|out| out.write_all(o.as_bytes()))
}
