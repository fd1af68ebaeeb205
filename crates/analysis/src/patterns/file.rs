//! The pattern file a user writes for an approximate search (`tracelogic match --pattern`, the
//! web's pattern-search form): a JSON object of rank → event symbols, optionally under `events`
//! beside a `topology` (`"grid:3x3"`) the pattern was written for, which makes the search
//! extrapolate it to the run's topology (docs/patterns.md).

use std::collections::BTreeMap;
use tracelogic_graph::TopologySpec;
use tracelogic_model::Rank;

/// A parsed pattern file.
#[derive(Debug, Clone, PartialEq)]
pub struct PatternFile {
    /// Per rank of the pattern, its event symbols (`S3`, `R1`, `Allreduce`).
    pub events: BTreeMap<Rank, Vec<String>>,
    /// The small topology the pattern was written for, if it names one.
    pub topology: Option<TopologySpec>,
}

/// Parses the text of a pattern file. Errors say where (JSON line and column) or which rank is
/// wrong; the caller adds the file's name.
///
/// ```
/// use tracelogic_analysis::patterns::file::parse_pattern_file;
/// let p = parse_pattern_file(r#"{"topology": "grid:3x3", "events": {"4": ["S5", "R3"]}}"#).unwrap();
/// assert_eq!(p.events[&4], vec!["S5", "R3"]);
/// assert_eq!(p.topology.unwrap().dims, vec![3, 3]);
/// ```
pub fn parse_pattern_file(text: &str) -> Result<PatternFile, String> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("not JSON at line {}, column {}: {e}", e.line(), e.column()))?;
    let topology = match value.get("topology") {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::String(t)) => Some(TopologySpec::parse(t).map_err(|e| format!("\"topology\": {e}"))?),
        Some(_) => return Err("\"topology\" must be a string like \"grid:3x3\"".to_owned()),
    };
    let obj = value.get("events").unwrap_or(&value);
    let map = obj
        .as_object()
        .ok_or_else(|| "expected an object of rank -> list of events".to_owned())?;
    let mut events = BTreeMap::new();
    for (k, v) in map {
        if k == "topology" {
            continue;
        }
        let rank: Rank = k.parse().map_err(|_| format!("`{k}` is not a rank number"))?;
        let list = v
            .as_array()
            .ok_or_else(|| format!("rank {k}: expected a list of event symbols"))?;
        let symbols = list
            .iter()
            .map(|s| {
                s.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| format!("rank {k}: events must be strings like \"S3\""))
            })
            .collect::<Result<Vec<_>, _>>()?;
        events.insert(rank, symbols);
    }
    if events.is_empty() {
        return Err("the pattern names no rank".to_owned());
    }
    Ok(PatternFile { events, topology })
}

impl PatternFile {
    /// The first send or receive symbol (`S99`, `R12:t3`) whose peer is not a rank of a run of
    /// `ranks` ranks, as a message naming the pattern rank and the symbol: such an event can
    /// never match, so a search for it would report zero occurrences for a reason the user
    /// cannot see. Only patterns without a `topology` name run ranks (an extrapolated pattern's
    /// peers are ranks of its small topology, checked by the extrapolation).
    pub fn peer_outside(&self, ranks: u32) -> Option<String> {
        for (rank, symbols) in &self.events {
            for symbol in symbols {
                let Some(rest) = symbol.strip_prefix('S').or_else(|| symbol.strip_prefix('R')) else {
                    continue;
                };
                let digits = rest.split(':').next().unwrap_or("");
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    continue;
                }
                if digits.parse::<u64>().map_or(true, |peer| peer >= u64::from(ranks)) {
                    return Some(format!(
                        "pattern rank {rank}: `{symbol}` names rank {digits}, the trace has {ranks} ranks (0-{})",
                        ranks.saturating_sub(1)
                    ));
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peers_outside_the_run_are_named() {
        let p = parse_pattern_file(r#"{"0": ["S1", "Allreduce", "R7:t3:b8"], "1": ["Scatter", "R*", "S99"]}"#).unwrap();
        assert_eq!(p.peer_outside(100), None);
        let e = p.peer_outside(8).expect("S99 is outside 8 ranks");
        assert!(
            e.contains("pattern rank 1") && e.contains("`S99`") && e.contains("0-7"),
            "{e}"
        );
        let e = p.peer_outside(7).expect("R7 is outside 7 ranks");
        assert!(e.contains("pattern rank 0") && e.contains("`R7:t3:b8`"), "{e}");
        let huge = parse_pattern_file(r#"{"0": ["S99999999999999999999999"]}"#).unwrap();
        assert!(huge.peer_outside(u32::MAX).is_some());
    }

    #[test]
    fn plain_and_nested_forms_and_errors() {
        let p = parse_pattern_file(r#"{"0": ["S1", "R1"], "1": ["R0", "S0"]}"#).unwrap();
        assert_eq!(p.events.len(), 2);
        assert!(p.topology.is_none());
        let e = parse_pattern_file("{\"0\": [\"S1\"],\n \"x\": []}").unwrap_err();
        assert!(e.contains("`x` is not a rank number"), "{e}");
        let e = parse_pattern_file("{\"0\": [\"S1\"").unwrap_err();
        assert!(e.starts_with("not JSON at line 1"), "{e}");
        assert!(parse_pattern_file(r#"{"0": [1]}"#)
            .unwrap_err()
            .contains("rank 0: events must be strings"));
        assert!(parse_pattern_file(r#"{"topology": 3, "0": ["S1"]}"#)
            .unwrap_err()
            .contains("must be a string"));
        assert_eq!(parse_pattern_file("{}").unwrap_err(), "the pattern names no rank");
    }
}
