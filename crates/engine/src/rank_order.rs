//! The order of the ranks a timeline draws: by number, by the node each rank plays in the
//! identified topology (row-major coordinates), or by when each rank enters a phase (the late
//! ranks of a phase last: Paraver and Vampir users sort lanes this way to see who arrives
//! late). One pure function the page calls with the answers it holds and the CLI through
//! [`Engine::rank_order`], so both order alike.

use crate::phases::{Outside, PhaseOptions, PhasesReport};
use crate::topology::{TopologyOptions, TopologyReport};
use crate::{Engine, Error, Result};
use serde::{Deserialize, Serialize};
use tracelogic_model::{Rank, Selection};

/// How the ranks are ordered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "by", content = "phase")]
pub enum OrderBy {
    /// By rank number.
    #[default]
    Number,
    /// By the node each rank plays in the identified topology (row-major coordinates).
    Topology,
    /// By the time each rank enters phase `k` (its first call in the phase, `ranks[].start`
    /// of `phases --json`), earliest first.
    Phase(u32),
}

impl OrderBy {
    /// Parse `number`, `topology` or `phase:K` (the CLI's `--order`).
    pub fn parse(text: &str) -> std::result::Result<OrderBy, String> {
        match text {
            "number" => Ok(OrderBy::Number),
            "topology" => Ok(OrderBy::Topology),
            _ => match text.strip_prefix("phase:").map(str::parse::<u32>) {
                Some(Ok(k)) => Ok(OrderBy::Phase(k)),
                _ => Err(format!(
                    "`{text}` is not number, topology or phase:K (K a phase number, from 0)"
                )),
            },
        }
    }
}

/// The ranks in drawing order with the key each was sorted by.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RankOrdering {
    /// Ranks in drawing order.
    pub ranks: Vec<Rank>,
    /// Per rank of `ranks`: its topology node, or its entry time into the phase (ns since the
    /// trace's first event); `None` for ranks without one (they come last, by number).
    pub keys: Vec<Option<u64>>,
    /// What the order means, or why it fell back to rank numbers (no topology identified, no
    /// such phase).
    pub note: String,
}

/// Per rank of the trace, its node in the identified topology (`None` when nothing matched).
pub fn topology_keys(report: &TopologyReport) -> Option<Vec<Option<u64>>> {
    let id = &report.identification;
    id.matched.as_ref()?;
    let mut keys = vec![None; id.ranks as usize];
    for p in &id.mapping {
        if let Some(k) = keys.get_mut(p.rank as usize) {
            *k = Some(p.node as u64);
        }
    }
    Some(keys)
}

/// Per rank of a `ranks`-rank trace, its entry time into phase `k` of `report` (`None` for
/// ranks not in it); `None` when the report has no phase `k`.
pub fn phase_keys(report: &PhasesReport, k: u32, ranks: u32) -> Option<Vec<Option<u64>>> {
    let phase = report.analysis.phases.get(k as usize)?;
    let mut keys = vec![None; ranks as usize];
    for span in &phase.ranks {
        if let Some(key) = keys.get_mut(span.rank as usize) {
            *key = Some(span.start);
        }
    }
    Some(keys)
}

/// The ranks of `filter` (all `ranks` when empty; out-of-range ones dropped, each once) in
/// order of `keys` (`keys[rank]`; ties and ranks without a key by number, keyless last), or by
/// number when `keys` is `None`. O(r log r).
///
/// ```
/// use tracelogic_engine::rank_order::ordered_ranks;
/// let keys = vec![Some(30), None, Some(10), Some(30)];
/// assert_eq!(ordered_ranks(4, &[], Some(&keys)), vec![2, 0, 3, 1]);
/// assert_eq!(ordered_ranks(4, &[3, 1, 9, 1], None), vec![1, 3]);
/// ```
pub fn ordered_ranks(ranks: u32, filter: &[Rank], keys: Option<&[Option<u64>]>) -> Vec<Rank> {
    let mut out: Vec<Rank> = if filter.is_empty() {
        (0..ranks).collect()
    } else {
        let mut f: Vec<Rank> = filter.iter().copied().filter(|&r| r < ranks).collect();
        f.sort_unstable();
        f.dedup();
        f
    };
    if let Some(keys) = keys {
        out.sort_by_key(|&r| match keys.get(r as usize).copied().flatten() {
            Some(k) => (0, k, r),
            None => (1, 0, r),
        });
    }
    out
}

/// The ordering of `filter`'s ranks by `by`, from the keys found (or by number with a note
/// saying why when there are none).
pub fn ordering(ranks: u32, filter: &[Rank], by: OrderBy, keys: Option<Vec<Option<u64>>>) -> RankOrdering {
    let note = match (by, &keys) {
        (OrderBy::Number, _) => "by rank number".to_string(),
        (OrderBy::Topology, Some(_)) => "by the node each rank plays in the identified topology".to_string(),
        (OrderBy::Topology, None) => "by rank number: no topology was identified".to_string(),
        (OrderBy::Phase(k), Some(_)) => {
            format!("by entry into phase {k}, earliest first (ranks not in it last)")
        }
        (OrderBy::Phase(k), None) => format!("by rank number: there is no phase {k}"),
    };
    let keys = if by == OrderBy::Number { None } else { keys };
    let order = ordered_ranks(ranks, filter, keys.as_deref());
    let of = |r: Rank| keys.as_ref().and_then(|k| k.get(r as usize).copied().flatten());
    RankOrdering {
        keys: order.iter().map(|&r| of(r)).collect(),
        ranks: order,
        note,
    }
}

/// What [`Engine::rank_order`] is asked.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RankOrderRequest {
    /// The order.
    pub by: OrderBy,
    /// Only these ranks (all when empty).
    #[serde(default)]
    pub ranks: Vec<Rank>,
    /// The phases' selection and strength (as the Phases view and `tracelogic phases` with
    /// `--ranks`, `--from`, `--to`, `--strength`); the topology is the whole trace's.
    #[serde(default)]
    pub selection: Selection,
    /// The phases' strength.
    #[serde(default)]
    pub strength: f64,
}

impl Engine {
    /// The ranks of `request.ranks` in the order `request.by` asks, from the same answers the
    /// Topology view (whole trace, default options) and the Phases view (the request's
    /// selection and strength) give; times as ns since the trace's first event.
    pub fn rank_order(&self, request: &RankOrderRequest) -> Result<RankOrdering> {
        let ranks = self.trace().ranks.len() as u32;
        let keys = match request.by {
            OrderBy::Number => None,
            OrderBy::Topology => topology_keys(&self.topology(&Selection::all(), &TopologyOptions::default())?),
            OrderBy::Phase(k) => {
                let options = PhaseOptions {
                    strength: request.strength,
                    outside: Outside::Own,
                    ..PhaseOptions::default()
                };
                let report = self.phases_with(&request.selection, &options)?;
                let first = self.start();
                let keys = phase_keys(&report, k, ranks);
                if keys.is_none() {
                    return Err(Error::Input(format!(
                        "there is no phase {k}: the selection has {} phases (numbered from 0)",
                        report.analysis.phases.len()
                    )));
                }
                keys.map(|v| v.into_iter().map(|t| t.map(|t| t.saturating_sub(first))).collect())
            }
        };
        Ok(ordering(ranks, &request.ranks, request.by, keys))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::sample_engine;

    /// The lanes of each phase order follow the phases report's per-rank entry times, and the
    /// topology order follows the identified mapping's nodes; the timeline draws them so.
    #[test]
    fn the_lu_sample_orders_by_phase_entry_and_by_topology_node() {
        let engine = sample_engine("npb-lu.S.8");
        let phases = engine.phases(&Selection::all(), 0.0, Outside::Own).unwrap();
        assert!(phases.analysis.phases.len() >= 2);
        for (k, ph) in phases.analysis.phases.iter().enumerate() {
            let o = engine
                .rank_order(&RankOrderRequest {
                    by: OrderBy::Phase(k as u32),
                    ..RankOrderRequest::default()
                })
                .unwrap();
            let mut expected: Vec<(u64, Rank)> = ph.ranks.iter().map(|s| (s.start, s.rank)).collect();
            expected.sort_unstable();
            let in_phase: Vec<Rank> = expected.iter().map(|e| e.1).collect();
            assert_eq!(&o.ranks[..in_phase.len()], &in_phase[..], "phase {k}");
            assert_eq!(o.ranks.len(), 8);
            let tile = engine
                .timeline(&crate::timeline::TimelineQuery {
                    ranks: o.ranks.clone(),
                    ..crate::timeline::TimelineQuery::whole(crate::timeline::Clock::Time, 10)
                })
                .unwrap();
            let drawn: Vec<Rank> = tile.lanes.iter().map(|l| l.ranks[0]).collect();
            assert_eq!(drawn, o.ranks);
        }
        let topo = engine.topology(&Selection::all(), &TopologyOptions::default()).unwrap();
        let mut by_node: Vec<(u32, Rank)> = topo.identification.mapping.iter().map(|p| (p.node, p.rank)).collect();
        by_node.sort_unstable();
        let o = engine
            .rank_order(&RankOrderRequest {
                by: OrderBy::Topology,
                ranks: vec![7, 1, 2],
                ..RankOrderRequest::default()
            })
            .unwrap();
        let want: Vec<Rank> = by_node.iter().map(|p| p.1).filter(|r| [7, 1, 2].contains(r)).collect();
        assert_eq!(o.ranks, want);
        let bad = engine.rank_order(&RankOrderRequest {
            by: OrderBy::Phase(99),
            ..RankOrderRequest::default()
        });
        assert!(
            matches!(bad, Err(Error::Input(ref e)) if e.contains("no phase 99")),
            "{bad:?}"
        );
    }

    #[test]
    fn keyless_ranks_come_last_and_ties_go_by_number() {
        let keys = vec![Some(5), None, Some(5), Some(1), None];
        assert_eq!(ordered_ranks(5, &[], Some(&keys)), vec![3, 0, 2, 1, 4]);
        assert_eq!(ordered_ranks(5, &[4, 2, 0], Some(&keys)), vec![0, 2, 4]);
    }

    #[test]
    fn orders_parse_and_bad_ones_are_named() {
        assert_eq!(OrderBy::parse("phase:3"), Ok(OrderBy::Phase(3)));
        assert_eq!(OrderBy::parse("topology"), Ok(OrderBy::Topology));
        let e = OrderBy::parse("phase:x").unwrap_err();
        assert!(e.contains("phase:x"), "{e}");
    }

    #[test]
    fn without_keys_the_order_is_by_number_and_says_why() {
        let o = ordering(3, &[], OrderBy::Topology, None);
        assert_eq!(o.ranks, vec![0, 1, 2]);
        assert!(o.note.contains("no topology"), "{}", o.note);
    }
}
