//! Colour refinement (1-dimensional Weisfeiler–Leman) run jointly on several graphs, so that a
//! colour means the same thing in each of them.
//!
//! Nodes start coloured by degree; each round a node's new colour is a hash of its colour and the
//! sorted colours of its neighbours. Isomorphic graphs end with the same colour histogram, and an
//! isomorphism can only map a node to a node of the same colour: refinement is both a cheap
//! invariant (candidate elimination) and the labelling that steers the matching order. Hash
//! collisions can only merge classes, which keeps the colouring invariant (never wrong, at worst
//! coarser).

use crate::Graph;
use std::collections::HashMap;

/// Colours per graph after joint refinement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Colouring {
    /// `colours[g][u]`: colour of node `u` of graph `g`; the same id means the same colour in
    /// every graph.
    pub colours: Vec<Vec<u32>>,
    /// Number of distinct colours over all graphs.
    pub classes: u32,
    /// Rounds run (stops early once the partition no longer splits).
    pub rounds: usize,
}

impl Colouring {
    /// How many nodes of graph `g` have each colour (indexed by colour).
    pub fn histogram(&self, g: usize) -> Vec<u32> {
        let mut h = vec![0u32; self.classes as usize];
        for &c in &self.colours[g] {
            h[c as usize] += 1;
        }
        h
    }

    /// True if every graph has the same number of nodes of each colour (a necessary condition
    /// for them to be isomorphic).
    pub fn histograms_agree(&self) -> bool {
        (1..self.colours.len()).all(|g| self.histogram(g) == self.histogram(0))
    }
}

fn mix(mut x: u64) -> u64 {
    // splitmix64 finaliser: a fixed, well-spread hash so colours are reproducible.
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Refine the colours of `graphs` together for at most `max_rounds` rounds; stops early when a
/// round splits no class or when the graphs' colour histograms start to differ (they can then not
/// be isomorphic, which [`Colouring::histograms_agree`] reports).
///
/// O(rounds · Σ(n + m log Δ)).
pub fn refine_joint(graphs: &[&Graph], max_rounds: usize) -> Colouring {
    refine_joint_individualised(graphs, &[], max_rounds)
}

/// [`refine_joint`] with node `marked[g]` of graph `g` given a colour of its own before
/// refining (individualisation): an isomorphism mapping each marked node to the other graph's
/// marked node must preserve the resulting colours. This is what propagates one choice of the
/// search to the whole graph.
pub fn refine_joint_individualised(graphs: &[&Graph], marked: &[u32], max_rounds: usize) -> Colouring {
    let initial: Vec<Vec<u32>> = graphs
        .iter()
        .enumerate()
        .map(|(gi, g)| {
            (0..g.num_nodes())
                .map(|u| g.degree(u) * 2 + u32::from(marked.get(gi) == Some(&u)))
                .collect()
        })
        .collect();
    refine_from(graphs, &initial, max_rounds)
}

/// Refine jointly from given initial colours (equal values mean equal colours across graphs).
pub fn refine_from(graphs: &[&Graph], initial: &[Vec<u32>], max_rounds: usize) -> Colouring {
    let mut ids: HashMap<u64, u32> = HashMap::new();
    let mut colours: Vec<Vec<u32>> = initial
        .iter()
        .map(|col| {
            col.iter()
                .map(|&x| {
                    let next = ids.len() as u32;
                    *ids.entry(x as u64).or_insert(next)
                })
                .collect()
        })
        .collect();
    let mut classes = ids.len() as u32;
    let mut rounds = 0;
    let mut scratch: Vec<u32> = Vec::new();
    let mut c = Colouring {
        colours: colours.clone(),
        classes,
        rounds,
    };
    if !c.histograms_agree() {
        return c;
    }
    while rounds < max_rounds {
        ids.clear();
        let mut next: Vec<Vec<u32>> = Vec::with_capacity(graphs.len());
        for (g, col) in graphs.iter().zip(&colours) {
            let mut out = Vec::with_capacity(col.len());
            for u in 0..g.num_nodes() {
                scratch.clear();
                scratch.extend(g.neighbors(u).iter().map(|&v| col[v as usize]));
                scratch.sort_unstable();
                let mut h = mix(col[u as usize] as u64);
                for &x in &scratch {
                    h = mix(h ^ x as u64);
                }
                let fresh = ids.len() as u32;
                out.push(*ids.entry(h).or_insert(fresh));
            }
            next.push(out);
        }
        rounds += 1;
        let new_classes = ids.len() as u32;
        colours = next;
        let stable = new_classes == classes;
        classes = new_classes;
        c = Colouring {
            colours: colours.clone(),
            classes,
            rounds,
        };
        if stable || !c.histograms_agree() {
            break;
        }
    }
    c
}

/// Refine one graph's colours (see [`refine_joint`]).
pub fn refine(g: &Graph, max_rounds: usize) -> Vec<u32> {
    refine_joint(&[g], max_rounds).colours.pop().unwrap_or_default()
}
