//! Colour refinement (1-dimensional Weisfeiler–Leman) run jointly on several graphs, so that a
//! colour means the same thing in each of them.
//!
//! Nodes start coloured by degree; each round a node's new colour is a hash of its colour and the
//! multiset of its neighbours' colours (a sum of per-colour hashes, so no sorting). Isomorphic graphs end with the same colour histogram, and an
//! isomorphism can only map a node to a node of the same colour: refinement is both a cheap
//! invariant (candidate elimination) and the labelling that steers the matching order. Hash
//! collisions can only merge classes, which keeps the colouring invariant (never wrong, at worst
//! coarser).

use crate::Graph;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// The keys are already well-mixed 64-bit hashes: hashing them again (SipHash) only costs.
#[derive(Default)]
struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | b as u64;
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = x;
    }
}

type ColourIds = HashMap<u64, u32, BuildHasherDefault<PassThrough>>;

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

/// Keeps a neighbour's contribution apart from the node's own colour.
const NEIGHBOUR_SALT: u64 = 0x5851_F42D_4C95_7F2D;

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
/// O(rounds · Σ(n + m)).
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
    let mut ids = ColourIds::default();
    let mut colours: Vec<Vec<u32>> = initial
        .iter()
        .map(|col| {
            col.iter()
                .map(|&x| {
                    let next = ids.len() as u32;
                    *ids.entry(mix(x as u64)).or_insert(next)
                })
                .collect()
        })
        .collect();
    let mut classes = ids.len() as u32;
    let mut rounds = 0;
    let agree = |colours: &[Vec<u32>], classes: u32| {
        let hist = |col: &[u32]| {
            let mut h = vec![0u32; classes as usize];
            for &c in col {
                h[c as usize] += 1;
            }
            h
        };
        let first = hist(&colours[0]);
        colours[1..].iter().all(|col| hist(col) == first)
    };
    if colours.is_empty() || !agree(&colours, classes) {
        return Colouring {
            colours,
            classes,
            rounds,
        };
    }
    let mut mixed: Vec<u64> = Vec::new();
    let mut next: Vec<Vec<u32>> = colours.iter().map(|c| Vec::with_capacity(c.len())).collect();
    while rounds < max_rounds {
        ids.clear();
        // One hash per colour per round, not per edge end.
        mixed.clear();
        mixed.extend((0..classes as u64).map(|c| mix(c ^ NEIGHBOUR_SALT)));
        for ((g, col), out) in graphs.iter().zip(&colours).zip(next.iter_mut()) {
            out.clear();
            for u in 0..g.num_nodes() {
                // Multiset hash of the neighbours' colours: a sum is order-independent.
                let around = g
                    .neighbors(u)
                    .iter()
                    .fold(0u64, |acc, &v| acc.wrapping_add(mixed[col[v as usize] as usize]));
                let h = mix(mix(col[u as usize] as u64) ^ around);
                let fresh = ids.len() as u32;
                out.push(*ids.entry(h).or_insert(fresh));
            }
        }
        rounds += 1;
        let new_classes = ids.len() as u32;
        std::mem::swap(&mut colours, &mut next);
        let stable = new_classes == classes;
        classes = new_classes;
        if stable || !agree(&colours, classes) {
            break;
        }
    }
    Colouring {
        colours,
        classes,
        rounds,
    }
}

/// Refine one graph's colours (see [`refine_joint`]).
pub fn refine(g: &Graph, max_rounds: usize) -> Vec<u32> {
    refine_joint(&[g], max_rounds).colours.pop().unwrap_or_default()
}
