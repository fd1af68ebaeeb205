//! Extrapolating a pattern written for a small topology to the run's topology (thesis §4.5, last
//! paragraph).
//!
//! A user writes a pattern for a small grid (rank `r` plays node `r`, row-major): per rank a list
//! of events whose peers are ranks of that grid. Each peer is turned into a logical direction of
//! the small grid (`east`, `north`...), and each small-grid rank is classified by which
//! directions exist at its node (interior, edge, corner...): its *class*. For every rank of the
//! run, the class with the same set of directions is instantiated, mapping each direction back to
//! a world rank through the run's [`Placement`] (the topology identification's mapping). Where no
//! small-grid rank has exactly the run rank's directions, the smallest class that has all of them
//! is used and its events along the missing directions are dropped (a torus pattern on a grid:
//! "a direction yields an event only where that neighbour exists", as in logical traces).
//!
//! **Orientation.** The identification recovers the run's grid only up to its symmetries: with a
//! random rank numbering nothing tells which corner is the "top left". The small grid's
//! directions are therefore mapped to the run's directions under every signed permutation of the
//! axes (8 in 2D, 48 in 3D), and [`search_extrapolated`] keeps the orientation under which the
//! pattern occurs most often. Distinct orientations that give the same run pattern are tried once.
//!
//! Supported: Cartesian families (grids, tori, lines, 2D/3D stencils) with the same number of
//! dimensions on both sides. Trees, rings, hypercubes and butterflies are refused with a message.

use super::{search_pattern, Events, PatternSearch};
use crate::logical::{DirectionsFrom, Placement};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use tracelogic_graph::{Direction, TopologySpec};
use tracelogic_model::{Matching, Rank, Trace};

/// Most orientations tried (3D has 48; more dimensions are refused).
const MAX_DIMENSIONS: usize = 3;
/// Largest run a pattern is extrapolated to, in ranks (the pattern holds every rank's events).
pub const MAX_RUN_RANKS: u32 = 1 << 20;

/// One event of a small-grid pattern with its peer as a direction.
#[derive(Debug, Clone, PartialEq, Eq)]
enum EventTemplate {
    /// A symbol without a peer (collective, `R*`), kept as written.
    Literal(String),
    /// A send (`S`) or receive (`R`) along a direction, with the rest of the symbol (envelope).
    Peer {
        kind: char,
        direction: Direction,
        rest: String,
    },
}

/// A class of small-grid ranks: the directions that exist at the node, and its events.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NeighbourClass {
    /// Direction names that exist at the node (in the small grid's direction order).
    pub directions: Vec<String>,
    /// The small-grid rank the class was taken from.
    pub source_rank: Rank,
    /// Its events with peers written as directions, e.g. `R:west`, `S:south`, `MPI_Allreduce`.
    pub events: Vec<String>,
    #[serde(skip)]
    set: BTreeSet<Direction>,
    #[serde(skip)]
    templates: Vec<EventTemplate>,
}

/// A pattern written for a small topology, with its ranks classified (the input of
/// [`extrapolate`], reusable for several runs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SmallPattern {
    /// The small topology the pattern was written for.
    pub topology: String,
    /// One class per distinct set of directions among the small topology's nodes.
    pub classes: Vec<NeighbourClass>,
    #[serde(skip)]
    spec: Option<TopologySpec>,
}

/// The pattern for the run under one orientation of the small grid's axes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Orientation {
    /// Small-grid direction name → the run's direction name it is mapped to.
    pub directions: BTreeMap<String, String>,
    /// The pattern for the run: world rank → event symbols.
    pub pattern: BTreeMap<Rank, Vec<String>>,
    /// Run ranks whose exact class was missing in the small grid and took a larger one (events
    /// along the directions they lack dropped).
    pub approximated_ranks: usize,
}

/// Which run pattern [`search_extrapolated`] chose, and how the others fared.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExtrapolatedSearch {
    /// The small topology the pattern was written for.
    pub from_topology: String,
    /// The run's topology it was extrapolated to.
    pub to_topology: String,
    /// The classes of the small pattern.
    pub classes: Vec<NeighbourClass>,
    /// Occurrences found under each distinct orientation, in the order tried (identity first).
    pub orientation_matches: Vec<usize>,
    /// The chosen orientation (most occurrences; ties: fewest edits, then the first tried).
    pub orientation: Option<Orientation>,
    /// The search with the chosen orientation's pattern.
    pub search: PatternSearch,
    /// Which of the isomorphic topologies placed the run (set by callers that place it with
    /// `Placement::choose`, as the logical trace does: a 4x4x4 torus identified as the 6-cube is
    /// extrapolated to as the torus).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub directions_from: Option<DirectionsFrom>,
}

/// Split `S12:t3:b8` into (`S`, 12, `:t3:b8`); `None` for symbols without a numeric peer.
fn split_peer(symbol: &str) -> Option<(char, Rank, &str)> {
    let kind = symbol.chars().next().filter(|c| *c == 'S' || *c == 'R')?;
    let body = &symbol[1..];
    let digits = body.len() - body.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 {
        return None;
    }
    let peer = body[..digits].parse().ok()?;
    Some((kind, peer, &body[digits..]))
}

/// Classify the ranks of a pattern written for `topology` (rank `r` is node `r`). Ranks of the
/// small topology missing from `pattern` take part with no events. Fails on a peer that is not a
/// neighbour, a rank outside the topology, a non-Cartesian topology, or two ranks with the same
/// directions but different events (the run could not tell which to use).
pub fn classify(pattern: &BTreeMap<Rank, Vec<String>>, topology: &TopologySpec) -> Result<SmallPattern, String> {
    let label = format!("{}:{}", topology.family.name(), dims_text(&topology.dims));
    if !topology.family.is_cartesian() {
        return Err(format!(
            "pattern topology {label}: extrapolation needs a Cartesian topology (grid, torus, line, stencil)"
        ));
    }
    if topology.dims.len() > MAX_DIMENSIONS {
        return Err(format!(
            "pattern topology {label}: at most {MAX_DIMENSIONS} dimensions are extrapolated"
        ));
    }
    let n = topology.num_nodes();
    if let Some((&r, _)) = pattern.range(n..).next() {
        return Err(format!("pattern rank {r} is outside {label} ({n} ranks)"));
    }
    let dirs = topology.directions();
    let mut classes: Vec<NeighbourClass> = Vec::new();
    for node in 0..n {
        let present: Vec<&Direction> = dirs.iter().filter(|d| topology.neighbour(node, d).is_some()).collect();
        let set: BTreeSet<Direction> = present.iter().map(|d| (*d).clone()).collect();
        let peers: Vec<(Direction, u32)> = topology.neighbours(node);
        let written = pattern.get(&node).map(Vec::as_slice).unwrap_or(&[]);
        let mut templates = Vec::with_capacity(written.len());
        for (i, sym) in written.iter().enumerate() {
            templates.push(match split_peer(sym) {
                Some((kind, peer, rest)) => {
                    let direction = peers
                        .iter()
                        .find(|(_, v)| *v == peer)
                        .map(|(d, _)| d.clone())
                        .ok_or_else(|| {
                            format!("pattern rank {node}, event {i} `{sym}`: rank {peer} is not a neighbour of rank {node} on {label}")
                        })?;
                    EventTemplate::Peer {
                        kind,
                        direction,
                        rest: rest.to_owned(),
                    }
                }
                None => EventTemplate::Literal(sym.clone()),
            });
        }
        match classes.iter().find(|c| c.set == set) {
            Some(c) if c.templates != templates => {
                return Err(format!(
                    "pattern ranks {} and {node} have the same neighbours ({}) on {label} but different events, so a run rank with those neighbours is ambiguous",
                    c.source_rank,
                    c.directions.join(", ")
                ));
            }
            Some(_) => {}
            None => classes.push(NeighbourClass {
                directions: present.iter().map(|d| d.name()).collect(),
                source_rank: node,
                events: templates.iter().map(template_text).collect(),
                set,
                templates,
            }),
        }
    }
    if classes.iter().all(|c| c.templates.is_empty()) {
        return Err("the pattern has no events".into());
    }
    Ok(SmallPattern {
        topology: label,
        classes,
        spec: Some(topology.clone()),
    })
}

fn dims_text(dims: &[u32]) -> String {
    dims.iter().map(u32::to_string).collect::<Vec<_>>().join("x")
}

fn template_text(t: &EventTemplate) -> String {
    match t {
        EventTemplate::Literal(s) => s.clone(),
        EventTemplate::Peer { kind, direction, rest } => format!("{kind}:{}{rest}", direction.name()),
    }
}

/// Signed permutations of `k` axes: `(perm, sign)` with axis `i` going to `perm[i]`, multiplied
/// by `sign[i]`. The identity comes first.
fn signed_permutations(k: usize) -> Vec<(Vec<usize>, Vec<i8>)> {
    fn perms(k: usize) -> Vec<Vec<usize>> {
        if k == 0 {
            return vec![Vec::new()];
        }
        let mut out = Vec::new();
        for p in perms(k - 1) {
            for pos in 0..k {
                let mut q = p.clone();
                q.insert(pos, k - 1);
                out.push(q);
            }
        }
        out.sort();
        out
    }
    let mut out = Vec::new();
    for p in perms(k) {
        for bits in 0..(1u32 << k) {
            let sign = (0..k).map(|i| if bits >> i & 1 == 1 { -1 } else { 1 }).collect();
            out.push((p.clone(), sign));
        }
    }
    out
}

fn orient(d: &Direction, perm: &[usize], sign: &[i8]) -> Direction {
    match d {
        Direction::Offset(o) => {
            let mut out = vec![0i8; o.len()];
            for (i, &x) in o.iter().enumerate() {
                out[perm[i]] = x * sign[i];
            }
            Direction::Offset(out)
        }
        other => other.clone(),
    }
}

/// The pattern for the run placed by `run`, under every orientation of the small grid's axes
/// that maps its directions onto the run's (identity first, duplicates removed). Fails when the
/// dimensions differ, the run's topology is not Cartesian, or a run rank has directions no class
/// covers.
pub fn extrapolate(small: &SmallPattern, run: &Placement) -> Result<Vec<Orientation>, String> {
    let spec = small
        .spec
        .as_ref()
        .ok_or("the small pattern lost its topology (classify it again)")?;
    let to = &run.spec;
    let to_label = to.label();
    if !to.family.is_cartesian() {
        return Err(format!(
            "the run's topology is a {to_label}; extrapolation needs a Cartesian one (grid, torus, line, stencil)"
        ));
    }
    if to.dims.len() != spec.dims.len() {
        return Err(format!(
            "the pattern's topology {} has {} dimensions, the run's {to_label} {}",
            small.topology,
            spec.dims.len(),
            to.dims.len()
        ));
    }
    let ranks = run.node_of_rank.len() as u32;
    if ranks > MAX_RUN_RANKS {
        return Err(format!(
            "the run has {ranks} ranks; at most {MAX_RUN_RANKS} are extrapolated"
        ));
    }
    let run_dirs = to.directions();
    let run_set: BTreeSet<Direction> = run_dirs.iter().cloned().collect();
    let rank_of_node = run.rank_of_node();
    // Per run rank: the directions that exist at its node.
    let present: Vec<BTreeSet<Direction>> = run
        .node_of_rank
        .iter()
        .map(|&u| {
            run_dirs
                .iter()
                .filter(|d| to.neighbour(u, d).is_some())
                .cloned()
                .collect()
        })
        .collect();
    let small_dirs = spec.directions();
    let mut out: Vec<Orientation> = Vec::new();
    let mut first_error = None;
    for (perm, sign) in signed_permutations(spec.dims.len()) {
        let map: BTreeMap<Direction, Direction> = small_dirs
            .iter()
            .map(|d| (d.clone(), orient(d, &perm, &sign)))
            .collect();
        if map.values().any(|d| !run_set.contains(d)) {
            continue;
        }
        let oriented: Vec<BTreeSet<Direction>> = small
            .classes
            .iter()
            .map(|c| c.set.iter().map(|d| map[d].clone()).collect())
            .collect();
        let mut pattern = BTreeMap::new();
        let mut approximated = 0usize;
        let mut failed = None;
        for (r, have) in present.iter().enumerate() {
            let class = match oriented.iter().position(|s| s == have) {
                Some(c) => c,
                None => {
                    let c = oriented
                        .iter()
                        .enumerate()
                        .filter(|(_, s)| s.is_superset(have))
                        .min_by_key(|(_, s)| s.len())
                        .map(|(c, _)| c);
                    match c {
                        Some(c) => {
                            approximated += 1;
                            c
                        }
                        None => {
                            let names: Vec<String> = have.iter().map(Direction::name).collect();
                            failed = Some(format!(
                                "rank {r} of the run has neighbours ({}) on the {to_label}; no rank of the pattern's {} has them",
                                names.join(", "),
                                small.topology
                            ));
                            break;
                        }
                    }
                }
            };
            let u = run.node_of_rank[r];
            let events: Vec<String> = small.classes[class]
                .templates
                .iter()
                .filter_map(|t| match t {
                    EventTemplate::Literal(s) => Some(s.clone()),
                    EventTemplate::Peer { kind, direction, rest } => {
                        let v = to.neighbour(u, &map[direction])?;
                        Some(format!("{kind}{}{rest}", rank_of_node[v as usize]))
                    }
                })
                .collect();
            if !events.is_empty() {
                pattern.insert(r as Rank, events);
            }
        }
        if let Some(e) = failed {
            first_error.get_or_insert(e);
            continue;
        }
        if pattern.is_empty() || out.iter().any(|o| o.pattern == pattern) {
            continue;
        }
        out.push(Orientation {
            directions: map.iter().map(|(a, b)| (a.name(), b.name())).collect(),
            pattern,
            approximated_ranks: approximated,
        });
    }
    if out.is_empty() {
        return Err(first_error.unwrap_or_else(|| {
            format!(
                "the directions of {} cannot be mapped onto the run's {to_label}",
                small.topology
            )
        }));
    }
    Ok(out)
}

/// Search every orientation of the extrapolated pattern ([`extrapolate`]) and keep the one with
/// the most occurrences (ties: fewest edits, then the first tried).
pub fn search_extrapolated(
    trace: &Trace,
    matching: &Matching,
    events: &Events,
    small: &SmallPattern,
    run: &Placement,
    max_edits: u32,
) -> Result<ExtrapolatedSearch, String> {
    let orientations = extrapolate(small, run)?;
    let mut counts = Vec::with_capacity(orientations.len());
    let mut best: Option<(usize, PatternSearch)> = None;
    for (i, o) in orientations.iter().enumerate() {
        let found = search_pattern(trace, matching, events, &o.pattern, max_edits)?;
        counts.push(found.matches.len());
        let edits = |s: &PatternSearch| s.matches.iter().map(|m| m.edits as u64).sum::<u64>();
        let better = match &best {
            None => true,
            Some((_, b)) => {
                found.matches.len() > b.matches.len()
                    || (found.matches.len() == b.matches.len() && edits(&found) < edits(b))
            }
        };
        if better {
            best = Some((i, found));
        }
    }
    let (i, search) = best.expect("extrapolate returns at least one orientation");
    Ok(ExtrapolatedSearch {
        from_topology: small.topology.clone(),
        to_topology: run.spec.label(),
        classes: small.classes.clone(),
        orientation_matches: counts,
        orientation: orientations.into_iter().nth(i),
        search,
        directions_from: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(entries: &[(Rank, &str)]) -> BTreeMap<Rank, Vec<String>> {
        entries
            .iter()
            .map(|(r, e)| (*r, e.split_whitespace().map(str::to_owned).collect()))
            .collect()
    }

    #[test]
    fn classes_of_a_3x3_grid() {
        let grid = TopologySpec::parse("grid:3x3").unwrap();
        // Nearest-neighbour exchange: every rank sends to all its neighbours.
        let mut pattern = BTreeMap::new();
        for r in 0..9u32 {
            let ev: Vec<String> = grid.neighbours(r).iter().map(|(_, v)| format!("S{v}")).collect();
            pattern.insert(r, ev);
        }
        let small = classify(&pattern, &grid).unwrap();
        assert_eq!(
            small.classes.len(),
            9,
            "on 3x3 every rank has its own set of neighbours"
        );
        let interior = small.classes.iter().find(|c| c.source_rank == 4).unwrap();
        assert_eq!(interior.directions.len(), 4);
        assert_eq!(interior.events, vec!["S:east", "S:west", "S:south", "S:north"]);
        // On 4x4 the two middle ranks of the top row share a class; different events are refused.
        let g4 = TopologySpec::parse("grid:4x4").unwrap();
        let e = classify(&p(&[(1, "S2"), (2, "S1")]), &g4).unwrap_err();
        assert!(e.contains("ranks 1 and 2 have the same neighbours"), "{e}");
        assert!(classify(&p(&[(1, "S2"), (2, "S3")]), &g4).is_ok());
        let e = classify(&p(&[(0, "S8")]), &grid).unwrap_err();
        assert!(e.contains("rank 8 is not a neighbour of rank 0"), "{e}");
        let e = classify(&p(&[(9, "S8")]), &grid).unwrap_err();
        assert!(e.contains("outside grid:3x3"), "{e}");
        let ring = TopologySpec::parse("ring:4").unwrap();
        assert!(classify(&p(&[(0, "S1")]), &ring).unwrap_err().contains("Cartesian"));
        // Envelopes and collectives survive.
        let small = classify(&p(&[(4, "S5:t3:b8 MPI_Barrier R*")]), &grid).unwrap();
        let c = small.classes.iter().find(|c| c.source_rank == 4).unwrap();
        assert_eq!(c.events, vec!["S:east:t3:b8", "MPI_Barrier", "R*"]);
    }

    #[test]
    fn identity_orientation_on_a_row_major_grid() {
        // East sends on 3x3, row-major 5x4 run: every rank but the last column sends east.
        let mut pattern = BTreeMap::new();
        for r in 0..9u32 {
            if r % 3 != 2 {
                pattern.insert(r, vec![format!("S{}", r + 1)]);
            }
        }
        let small = classify(&pattern, &TopologySpec::parse("grid:3x3").unwrap()).unwrap();
        let run = Placement::identity(TopologySpec::parse("grid:5x4").unwrap());
        let all = extrapolate(&small, &run).unwrap();
        assert_eq!(all[0].directions["east"], "east");
        assert_eq!(all[0].pattern.len(), 16);
        assert_eq!(all[0].pattern[&0], vec!["S1"]);
        assert!(!all[0].pattern.contains_key(&4));
        assert_eq!(all[0].approximated_ranks, 0);
        // The mirrored orientation sends west instead.
        let west = all.iter().find(|o| o.directions["east"] == "west").unwrap();
        assert_eq!(west.pattern[&4], vec!["S3"]);
        // 3D runs are refused for a 2D pattern.
        let cube = Placement::identity(TopologySpec::parse("grid:2x2x2").unwrap());
        assert!(extrapolate(&small, &cube).unwrap_err().contains("dimensions"));
    }

    #[test]
    fn torus_pattern_on_a_grid_drops_missing_directions() {
        let torus = TopologySpec::parse("torus:3x3").unwrap();
        let mut pattern = BTreeMap::new();
        for r in 0..9u32 {
            pattern.insert(r, torus.neighbours(r).iter().map(|(_, v)| format!("R{v}")).collect());
        }
        let small = classify(&pattern, &torus).unwrap();
        assert_eq!(small.classes.len(), 1);
        let run = Placement::identity(TopologySpec::parse("grid:4x4").unwrap());
        let all = extrapolate(&small, &run).unwrap();
        assert_eq!(all[0].approximated_ranks, 12, "the 12 border ranks lack a direction");
        assert_eq!(all[0].pattern[&0], vec!["R1", "R4"]);
        assert_eq!(all[0].pattern[&5].len(), 4);
        // Every torus rank has all four directions: a 3x3 grid pattern fits through its centre.
        let grid = TopologySpec::parse("grid:3x3").unwrap();
        let small = classify(&BTreeMap::from([(4, vec!["S5".to_owned(), "R3".to_owned()])]), &grid).unwrap();
        let run = Placement::identity(TopologySpec::parse("torus:5x5").unwrap());
        let all = extrapolate(&small, &run).unwrap();
        assert_eq!(all[0].pattern.len(), 25);
        assert_eq!(all[0].pattern[&4], vec!["S0", "R3"]);
        // A 2x2 grid pattern has no interior class: a 3x3 grid's centre is not covered.
        let small = classify(
            &BTreeMap::from([(0, vec!["S1".to_owned()])]),
            &TopologySpec::parse("grid:2x2").unwrap(),
        )
        .unwrap();
        let e = extrapolate(&small, &Placement::identity(TopologySpec::parse("grid:3x3").unwrap())).unwrap_err();
        assert!(e.contains("no rank of the pattern's grid:2x2 has them"), "{e}");
    }

    #[test]
    fn orientations_of_two_and_three_axes() {
        assert_eq!(signed_permutations(2).len(), 8);
        assert_eq!(signed_permutations(3).len(), 48);
        assert_eq!(signed_permutations(2)[0], (vec![0, 1], vec![1, 1]));
        assert_eq!(split_peer("S12:t3"), Some(('S', 12, ":t3")));
        assert_eq!(split_peer("R*"), None);
        assert_eq!(split_peer("MPI_Send"), None);
    }
}
