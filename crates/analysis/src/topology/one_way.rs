//! One-way transfers beside a two-way exchange (docs/topology.md §1, "One-way transfers").
//!
//! A neighbour exchange is symmetric: each pair of neighbours sends both ways, about as much
//! each way. A program's gather of results to rank 0 by point-to-point messages is not: its
//! pairs carry traffic one way (at most a short handshake back) and few messages. On four
//! ranks such a pair is a diagonal of the 2x2 grid, and the grid plus that diagonal is a
//! `2x2 6-point stencil` — isomorphic, so the match is proved, and wrong about the program
//! (PETSc's `-dm_view` on a 2x2 DMDA, held out). Where the byte cut's graph matches, the
//! message counts were never asked (§1's count cuts are only tried when nothing matched).
//!
//! The rule: among the pairs of a matched graph, set aside those that are one-way — the
//! lighter direction carries at most 1/[`ONE_WAY_RATIO`] of the heavier one's bytes — when
//! every one of them carries at least [`FALLBACK_MIN_GAP`] times fewer messages than every
//! two-way pair, every rank keeps an edge, the graph stays as connected, and the two-way
//! pairs alone match a topology **simpler** than the first match (the catalogue's order,
//! `tracelogic_graph::catalog::simplicity`). The last condition keeps an explanation that
//! needs the one-way pairs (Quantum ESPRESSO on 4 ranks: every pair talks, one of them one
//! way, `4-node all-to-all`; without that pair the diamond would be a 6-point stencil).
//!
//! Cost: O(pairs) to classify, one identification of the smaller graph when the rule applies.

use super::cuts::FALLBACK_MIN_GAP;
use super::report::TopologyMatch;
use crate::matrix::{CommMatrix, Metric};
use serde::{Deserialize, Serialize};
use tracelogic_graph::catalog::simplicity;
use tracelogic_graph::{Family, Graph, TopologySpec};

/// A pair is one-way when its lighter direction carries at most 1/`ONE_WAY_RATIO` of the
/// bytes of its heavier one. Halo pairs send each other the same faces (ratio near 1); a
/// gather answers at most a handshake (PETSc's viewer: 8 bytes against 32,792).
pub const ONE_WAY_RATIO: u64 = 10;

/// One pair set aside: traffic in its heavy direction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OneWayPair {
    /// Sender of the heavy direction.
    pub from: u32,
    /// Receiver of the heavy direction.
    pub to: u32,
    /// Bytes `from` → `to`.
    pub bytes: u64,
    /// Messages `from` → `to`.
    pub messages: u64,
    /// Bytes the other way (a handshake, or 0).
    pub bytes_back: u64,
}

/// The one-way pairs set aside from a matched graph, and what that graph matched with them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OneWaySetAside {
    /// The pairs set aside, heaviest first.
    pub pairs: Vec<OneWayPair>,
    /// Messages of the lightest two-way pair (its heavier direction) over those of the
    /// heaviest pair set aside.
    pub message_gap: f64,
    /// The match of the graph with them (less simple than the one reported).
    pub with_them: String,
}

impl OneWaySetAside {
    /// One sentence for people; the CLI and the page print it under the filter's figures.
    pub fn summary(&self) -> String {
        let list: Vec<String> = self
            .pairs
            .iter()
            .take(6)
            .map(|p| {
                let s = if p.messages == 1 { "" } else { "s" };
                format!("{}→{} ({} B in {} message{s})", p.from, p.to, p.bytes, p.messages)
            })
            .collect();
        let more = self.pairs.len().saturating_sub(6);
        format!(
            "One-way transfers set aside: {}{} carr{} traffic one way only, {:.1}x fewer messages than every \
             two-way pair (a gather or a one-time transfer, not a neighbour exchange); with them the graph is a {}.",
            list.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            },
            if self.pairs.len() == 1 { "ies" } else { "y" },
            self.message_gap,
            self.with_them,
        )
    }
}

/// How simple a match's name is ([`simplicity`]); `None` for user patterns.
pub(super) fn match_simplicity(m: &TopologyMatch) -> Option<(usize, usize)> {
    let family = Family::from_name(&m.family)?;
    Some(simplicity(&TopologySpec {
        family,
        dims: m.dims.clone(),
    }))
}

/// The two-way graph of `g` and the pairs set aside, when the rule's conditions on the
/// traffic hold (the caller identifies the two-way graph and compares simplicity).
pub(super) fn two_way_part(m: &CommMatrix, g: &Graph) -> Option<(Graph, Vec<OneWayPair>, f64)> {
    let mut one_way = Vec::new();
    let mut two_way = Vec::new();
    for (a, b) in g.edges() {
        let (ab, ba) = (m.value(Metric::Bytes, a, b), m.value(Metric::Bytes, b, a));
        let (heavy, light) = (ab.max(ba), ab.min(ba));
        let (from, to) = if ab >= ba { (a, b) } else { (b, a) };
        if heavy > 0 && light.saturating_mul(ONE_WAY_RATIO) <= heavy {
            one_way.push(OneWayPair {
                from,
                to,
                bytes: heavy,
                messages: m.value(Metric::Messages, from, to),
                bytes_back: light,
            });
        } else {
            two_way.push((a, b));
        }
    }
    if one_way.is_empty() || two_way.is_empty() {
        return None;
    }
    let lightest_two_way = two_way
        .iter()
        .map(|&(a, b)| m.value(Metric::Messages, a, b).max(m.value(Metric::Messages, b, a)))
        .min()?;
    let heaviest_one_way = one_way.iter().map(|p| p.messages).max()?.max(1);
    let gap = lightest_two_way as f64 / heaviest_one_way as f64;
    if gap < FALLBACK_MIN_GAP {
        return None;
    }
    let kept = Graph::from_edges(g.num_nodes(), two_way.iter().copied());
    let touched = |h: &Graph| (0..h.num_nodes()).filter(|&u| h.degree(u) > 0).count();
    let components = |h: &Graph| h.components().iter().filter(|c| c.len() > 1).count();
    if touched(&kept) != touched(g) || components(&kept) != components(g) {
        return None;
    }
    one_way.sort_by(|x, y| y.bytes.cmp(&x.bytes).then((x.from, x.to).cmp(&(y.from, y.to))));
    Some((kept, one_way, gap))
}
