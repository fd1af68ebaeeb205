//! The rank pairing behind θ: which rank of the second run stands beside each rank of the first.

use super::rank_transform;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use tracelogic_graph::iso::{
    best_isomorphism, best_isomorphism_anchored, isomorphism, verify, IsoOptions, NodeFeature,
};
use tracelogic_graph::Graph;

/// Default step budget of the best-pairing search on `n` ranks: [`PAIRING_STEPS_BASE`] plus
/// [`PAIRING_STEPS_PER_RANK`] per rank: 20–25 million steps a second natively, so at most
/// about 1 s at 1,024 ranks and 2 s at 4,096 (measured in `docs/similarity.md`); BT against SP
/// at 1,024 ranks needs 9–15 million.
pub fn pairing_steps_for(n: u32) -> u64 {
    PAIRING_STEPS_BASE + PAIRING_STEPS_PER_RANK * u64::from(n)
}

/// Fixed part of [`pairing_steps_for`].
pub const PAIRING_STEPS_BASE: u64 = 20_000_000;
/// Per-rank part of [`pairing_steps_for`].
pub const PAIRING_STEPS_PER_RANK: u64 = 4_096;

/// How the ranks of the second run were chosen to stand beside the ranks of the first in θ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PairedBy {
    /// Rank `j` with rank `j`, Definition 4 as the paper applies it (`--align rank`, or graphs
    /// that are not isomorphic under `auto`).
    RankNumber,
    /// An isomorphism of the graphs under which every rank keeps its position in temporal,
    /// volume and send count: the runs are one program under two placements, θ = 1.
    SameProperties,
    /// The isomorphism of the graphs with the largest θ: each rank is paired with the rank that
    /// plays its role in the other run's graph, the roles chosen to agree best.
    BestIsomorphism,
    /// The correspondence of the common-subgraph search (`--align graph`, graphs not
    /// isomorphic).
    CommonSubgraph,
}

/// The rank pairing behind θ, and how it was found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pairing {
    /// How the pairing was chosen.
    pub by: PairedBy,
    /// `ranks[j]`: the rank of the second run paired with rank `j` of the first.
    pub ranks: Vec<u32>,
    /// θ with rank `j` paired with rank `j` (the paper's reading), to set beside `θ` (not a
    /// number, `null`, when θ is undefined).
    #[serde(with = "super::theta::nan_as_null")]
    pub theta_by_rank: f64,
    /// Isomorphisms of the graphs scored in full by the best-pairing search (0 when none ran;
    /// the others were proven no better by its bound).
    pub isomorphisms_scored: u64,
    /// Steps of that search.
    pub steps: u64,
    /// False when the best-pairing search ran out of steps: `θ` is then the best of the
    /// pairings it scored, a lower bound on the best over all isomorphisms. True otherwise.
    pub exhaustive: bool,
    /// With a best-isomorphism or same-properties pairing on at most [`CHANCE_MAX_RANKS`] ranks:
    /// the mean best θ over [`CHANCE_SHUFFLES`] shuffles of the second run's per-rank values,
    /// i.e. what the best-isomorphism maximisation reaches with values unrelated to the ranks' roles (on the properties left in
    /// θ; see `docs/similarity.md`). `None` otherwise, when no property that a pairing changes is
    /// left in θ, or when a shuffle's search ran out of steps. An estimate: it moves by
    /// about 0.01 with the placement, θ does not. With an anchored pairing the shuffles are
    /// searched under the same anchor.
    pub theta_chance: Option<f64>,
    /// The roles the runs name themselves (the roots of their rooted collectives) and whether
    /// the best-pairing search was restricted to the isomorphisms pairing them.
    #[serde(default)]
    pub anchor: PairingAnchor,
    /// The roles were read from the runs' graphs after `topology`'s first cut (their own graphs
    /// are not isomorphic, the cut ones are: light set-up pairs that differ between the runs);
    /// ε is still that of the runs' own graphs.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub on_cut_graphs: bool,
}

/// The anchor of a best-isomorphism pairing: each run's root of its rooted collectives
/// ([`super::collective_root`]). When both runs have one and some isomorphism of the graphs maps one
/// onto the other, only those isomorphisms are scored, which leaves far fewer pairings for
/// chance agreement to pick from (12 of 192 on a 4x4 periodic 6-point stencil).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PairingAnchor {
    /// The first run's collective root (`None`: no rooted collective, or no single rank roots
    /// most of them).
    pub rank_a: Option<u32>,
    /// The second run's collective root.
    pub rank_b: Option<u32>,
    /// True when the best-pairing search scored only isomorphisms mapping `rank_a` to `rank_b`.
    pub used: bool,
    /// Why the anchor was not used (`None` when it was, or when no best-pairing search ran).
    pub unused_because: Option<String>,
    /// Isomorphisms of the graphs (automorphisms of the first run's graph), when a best-pairing
    /// search ran on at most [`ANCHOR_COUNT_MAX_RANKS`] ranks and counting them finished within
    /// [`ANCHOR_COUNT_STEPS`].
    pub isomorphisms: Option<u64>,
    /// Of those, the ones mapping the anchor onto the anchor (the stabiliser of `rank_a`), counted
    /// likewise when the anchor was used.
    pub anchored_isomorphisms: Option<u64>,
}

impl PairingAnchor {
    /// One phrase for the CLI and the web: the roots paired and how many isomorphisms pair
    /// them (`anchored on the collective roots, rank 0 with rank 5: 12 of 192 isomorphisms`),
    /// or why the search was not anchored.
    pub fn summary(&self) -> String {
        match (self.used, self.rank_a, self.rank_b) {
            (true, Some(ra), Some(rb)) => {
                let counts = match (self.anchored_isomorphisms, self.isomorphisms) {
                    (Some(k), Some(all)) => format!(": {k} of {all} isomorphisms"),
                    _ => String::new(),
                };
                format!("anchored on the collective roots, rank {ra} with rank {rb}{counts}")
            }
            _ => {
                let over = self
                    .isomorphisms
                    .map(|all| format!(", all {all} isomorphisms"))
                    .unwrap_or_default();
                match &self.unused_because {
                    Some(why) => format!("not anchored{over}: {why}"),
                    None => format!("not anchored{over}"),
                }
            }
        }
    }
}

/// Largest rank count for which [`PairingAnchor::isomorphisms`] is counted: enumerating a group
/// costs about `|Aut| · n · degree` steps (the 16x16 6-point stencil, 3,072 automorphisms, 117 ms).
pub const ANCHOR_COUNT_MAX_RANKS: u32 = 256;
/// Step budget of each count in [`PairingAnchor`].
pub const ANCHOR_COUNT_STEPS: u64 = 4_000_000;

/// Shuffles averaged in [`Pairing::theta_chance`].
pub const CHANCE_SHUFFLES: u64 = 8;
/// Largest rank count for which [`Pairing::theta_chance`] is estimated: beyond, unrelated values
/// stay well below the threshold (0.40–0.43 on 16x16 stencils) and the shuffled searches, which
/// prune less than the real one, cost the most (0.7 s at 256 ranks against 28 ms).
pub const CHANCE_MAX_RANKS: u32 = 128;

/// One property's per-rank values in run a and in run b.
pub(super) type PropertyPair = (Vec<f64>, Vec<f64>);

/// A label per rank of both runs: the same label for ranks with the same rank (descending, ties
/// averaged, within their own run) in every one of the given properties, so the labels survive a
/// change of problem size that keeps the order. `properties` holds pairs (run a's vector, run
/// b's vector).
pub(super) fn joint_labels(properties: &[PropertyPair], n: usize) -> (Vec<u32>, Vec<u32>) {
    let key = |pick: &dyn Fn(&PropertyPair) -> &Vec<f64>| -> Vec<Vec<u64>> {
        let ranked: Vec<Vec<f64>> = properties.iter().map(|p| rank_transform(pick(p))).collect();
        // Ranks are multiples of ½: doubled they are exact integers.
        (0..n)
            .map(|j| ranked.iter().map(|r| (2.0 * r[j]) as u64).collect())
            .collect()
    };
    let (ka, kb) = (key(&|p| &p.0), key(&|p| &p.1));
    let mut distinct: Vec<&Vec<u64>> = ka.iter().chain(&kb).collect();
    distinct.sort_unstable();
    distinct.dedup();
    let label = |k: &[Vec<u64>]| -> Vec<u32> {
        k.iter()
            .map(|x| distinct.binary_search(&x).unwrap_or(0) as u32)
            .collect()
    };
    (label(&ka), label(&kb))
}

/// The isomorphism of `ga` onto `gb` that keeps labels when every rank of `a` has its own label:
/// the labels alone then decide the pairing, which is kept if it is an isomorphism.
pub(super) fn forced_by_labels(ga: &Graph, gb: &Graph, la: &[u32], lb: &[u32]) -> Option<Vec<u32>> {
    let mut by_label: HashMap<u32, u32> = HashMap::with_capacity(lb.len());
    for (v, &l) in lb.iter().enumerate() {
        if by_label.insert(l, v as u32).is_some() {
            return None;
        }
    }
    let mapping: Vec<u32> = la.iter().map(|l| by_label.remove(l)).collect::<Option<_>>()?;
    verify(ga, gb, &mapping).ok()?;
    Some(mapping)
}

/// An isomorphism of `ga` onto `gb` under which every rank keeps its label (its ranks in temporal,
/// volume and send count): the identity when it is one, else the labels alone when every rank
/// has its own, else the labelled isomorphism search. A run against any renumbering of itself
/// pairs each process with itself, or with one indistinguishable from it in graph and
/// properties.
pub(super) fn same_properties_pairing(ga: &Graph, gb: &Graph, la: &[u32], lb: &[u32]) -> Option<Vec<u32>> {
    if ga == gb && la == lb {
        return Some((0..ga.num_nodes()).collect());
    }
    forced_by_labels(ga, gb, la, lb).or_else(|| label_preserving_isomorphism(ga, gb, la, lb))
}

/// The feature of one property for [`best_isomorphism`]: each run's ranked vector centred and
/// scaled to unit length, so that the score of a pairing is that property's `θ_i` (Pearson's
/// coefficient, whose denominator does not depend on the pairing). `None` when either vector is
/// constant: `θ_i` is then fixed by convention whatever the pairing.
pub(super) fn correlation_feature(ranked_a: &[f64], ranked_b: &[f64]) -> Option<NodeFeature> {
    let unit = |ranked: &[f64]| -> Option<Vec<f64>> {
        let mean = ranked.iter().sum::<f64>() / ranked.len() as f64;
        let centred: Vec<f64> = ranked.iter().map(|r| r - mean).collect();
        let norm = centred.iter().map(|x| x * x).sum::<f64>().sqrt();
        (norm > 0.0).then(|| centred.iter().map(|x| x / norm).collect())
    };
    Some((unit(ranked_a)?, unit(ranked_b)?))
}

/// The best-θ isomorphism and what its search did.
pub(super) struct BestPairing {
    pub(super) ranks: Vec<u32>,
    pub(super) scored: u64,
    pub(super) steps: u64,
    pub(super) exhaustive: bool,
}

/// Among the isomorphisms of `ga` onto `gb` that map each `anchors[i].0` onto `anchors[i].1`,
/// the one that maximises θ (the sum of the temporal and volume `θ_i`; spatial is the same
/// under every isomorphism), starting from the known ones in `seeds`. When the budget runs out
/// first, an isomorphism keeping every rank's volume and send-count ranks (if there is one and
/// it keeps the anchors) is tried too, and the better is kept.
pub(super) fn best_theta_pairing(
    ga: &Graph,
    gb: &Graph,
    features: &[NodeFeature],
    seeds: &[&[u32]],
    volume_sends: &(Vec<u32>, Vec<u32>),
    anchors: &[(u32, u32)],
    max_steps: u64,
) -> Option<BestPairing> {
    let found = if anchors.is_empty() {
        best_isomorphism(ga, gb, features, seeds, max_steps)?
    } else {
        best_isomorphism_anchored(ga, gb, features, seeds, anchors, max_steps)?
    };
    let mut best = BestPairing {
        ranks: found.mapping,
        scored: found.scored,
        steps: found.steps,
        exhaustive: found.exhaustive,
    };
    if !best.exhaustive {
        let score = |m: &[u32]| -> f64 {
            features
                .iter()
                .map(|(a, b)| a.iter().zip(m).map(|(x, &j)| x * b[j as usize]).sum::<f64>())
                .sum()
        };
        if let Some(m) = same_properties_pairing(ga, gb, &volume_sends.0, &volume_sends.1) {
            let keeps = anchors.iter().all(|&(u, v)| m[u as usize] == v);
            if keeps && score(&m) > score(&best.ranks) {
                best.ranks = m;
            }
        }
    }
    Some(best)
}

/// The mean, over [`CHANCE_SHUFFLES`] fixed shuffles of the second run's feature values, of the
/// best score over the isomorphisms of `ga` onto `gb` (those keeping `anchors` when given);
/// `None` when a search runs out of its share of `max_steps`.
pub(super) fn chance_score(
    ga: &Graph,
    gb: &Graph,
    features: &[NodeFeature],
    seeds: &[&[u32]],
    anchors: &[(u32, u32)],
    max_steps: u64,
) -> Option<f64> {
    let n = ga.num_nodes();
    let mut total = 0.0;
    for k in 0..CHANCE_SHUFFLES {
        let shuffle = tracelogic_model::renumber::random_permutation(n, k + 1);
        let shuffled: Vec<NodeFeature> = features
            .iter()
            .map(|(fa, fb)| (fa.clone(), shuffle.iter().map(|&j| fb[j as usize]).collect()))
            .collect();
        let steps = max_steps / CHANCE_SHUFFLES;
        let best = if anchors.is_empty() {
            best_isomorphism(ga, gb, &shuffled, seeds, steps)?
        } else {
            best_isomorphism_anchored(ga, gb, &shuffled, seeds, anchors, steps)?
        };
        if !best.exhaustive {
            return None;
        }
        total += best.score;
    }
    Some(total / CHANCE_SHUFFLES as f64)
}

/// Among the isomorphisms of `ga` onto `gb`, one that maps every rank to a rank of the same
/// label, if the isomorphism engine finds one: each label `l` becomes a pendant path of `l + 1`
/// extra nodes, and an isomorphism of the decorated graphs that maps ranks to ranks and is an
/// isomorphism of the plain graphs is returned. `None` when the labels cannot be kept, when
/// the decoration would exceed 2^16 extra nodes, or when the search gives up.
pub(super) fn label_preserving_isomorphism(ga: &Graph, gb: &Graph, la: &[u32], lb: &[u32]) -> Option<Vec<u32>> {
    let n = ga.num_nodes();
    let extra: u64 = la.iter().map(|&l| l as u64 + 1).sum();
    if extra > 1 << 16 {
        return None;
    }
    let decorate = |g: &Graph, labels: &[u32]| {
        let mut edges: Vec<(u32, u32)> = g.edges().collect();
        let mut next = n;
        for (u, &l) in labels.iter().enumerate() {
            let mut prev = u as u32;
            for _ in 0..=l {
                edges.push((prev, next));
                prev = next;
                next += 1;
            }
        }
        Graph::from_edges(next, edges)
    };
    let (da, db) = (decorate(ga, la), decorate(gb, lb));
    let found = isomorphism(&da, &db, IsoOptions::for_nodes(da.num_nodes()));
    let mapping: Vec<u32> = found.mapping()?[..n as usize].to_vec();
    if mapping.iter().any(|&v| v >= n) || verify(ga, gb, &mapping).is_err() {
        return None;
    }
    Some(mapping)
}
