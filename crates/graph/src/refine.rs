//! Colour refinement (1-dimensional Weisfeiler–Leman) run jointly on several graphs, so that a
//! colour means the same thing in each of them.
//!
//! Nodes start coloured by degree; each round a node keeps its colour class only with the nodes
//! of its class that have the same multiset of neighbour colours. Isomorphic graphs end with the
//! same colour histogram, and an isomorphism can only map a node to a node of the same colour:
//! refinement is both a cheap invariant (candidate elimination) and the labelling that steers the
//! matching order. The rounds run as partition refinement on the disjoint union of the graphs
//! (only the neighbours of the cells that split are looked at, see [`refine_from`]); neighbour
//! multisets are compared by a sum of per-cell 64-bit hashes, whose collisions can only merge
//! classes, which keeps the colouring invariant (never wrong, at worst coarser).

use crate::Graph;
use std::cmp::Reverse;
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
///
/// Each round is one round of colour refinement (two nodes keep the same colour when they had
/// the same colour and the same multiset of neighbour colours), computed by partition
/// refinement on the disjoint union of the graphs: only the cells that split in the previous
/// round are splitters, and of the fragments of each split cell the largest is skipped (a
/// node's count of neighbours in it follows from its counts in the old cell and the other
/// fragments), so a round costs the edges around the small fragments, not the whole graph —
/// O(Σ m log n) over all rounds instead of O(rounds · Σ(n + m)). Colours are numbered by first
/// appearance (graph 0's nodes in order, then graph 1's, ...).
pub fn refine_from(graphs: &[&Graph], initial: &[Vec<u32>], max_rounds: usize) -> Colouring {
    let mut p = Partition::new(graphs, initial);
    let mut rounds = 0;
    if graphs.is_empty() || !p.balanced(0..p.cells.len()) {
        return p.colouring(rounds);
    }
    // The first round splits by the counts in every initial cell (nodes of one initial cell
    // need not have the same degree, so no fragment can be skipped).
    let mut splitters: Vec<u32> = (0..p.cells.len() as u32).collect();
    while rounds < max_rounds {
        let first_new = p.cells.len();
        let changed = p.round(graphs, &splitters);
        rounds += 1;
        if changed.is_empty() {
            break;
        }
        // A balanced cell stays balanced when its new fragments are: only those are counted.
        if !p.balanced(first_new..p.cells.len()) {
            break;
        }
        // Next round's splitters: every fragment of each cell that split, but its largest.
        splitters.clear();
        for &old in &changed {
            let mut fragments: Vec<u32> = vec![old];
            fragments.extend(p.children_of(old));
            let largest = fragments
                .iter()
                .copied()
                .max_by_key(|&c| (p.cells[c as usize].len, Reverse(c)))
                .expect("a split cell has fragments");
            splitters.extend(fragments.into_iter().filter(|&c| c != largest));
        }
    }
    p.colouring(rounds)
}

/// One cell of the partition: a contiguous range of `Partition::elems`.
#[derive(Clone, Copy)]
struct Cell {
    start: u32,
    len: u32,
}

/// The partition of the disjoint union of the graphs (node `u` of graph `g` is
/// `base[g] + u`), as a permutation of the nodes grouped by cell.
struct Partition {
    base: Vec<u32>,
    elems: Vec<u32>,
    pos: Vec<u32>,
    cell_of: Vec<u32>,
    cells: Vec<Cell>,
    /// Cells split from each cell in the current round.
    children: Vec<Vec<u32>>,
    /// The cells that split in the last round (their `children` are cleared before the next).
    last_changed: Vec<u32>,
    /// Per node: whether it has a neighbour in a splitter this round, and the multiset hash of
    /// those neighbours' cells (both reset after each round).
    seen: Vec<bool>,
    sig: Vec<u64>,
}

impl Partition {
    fn new(graphs: &[&Graph], initial: &[Vec<u32>]) -> Partition {
        let mut base = Vec::with_capacity(graphs.len() + 1);
        let mut total = 0u32;
        for col in initial.iter().take(graphs.len()) {
            base.push(total);
            total += col.len() as u32;
        }
        base.push(total);
        // Cells numbered by first appearance of their initial value (a table when the values
        // are small, as degrees and colours are).
        let values = || initial.iter().take(graphs.len()).flatten().copied();
        let max = values().max().unwrap_or(0) as usize;
        let mut cell_of = Vec::with_capacity(total as usize);
        let mut k = 0u32;
        if max <= 4 * total as usize + 64 {
            let mut ids = vec![u32::MAX; max + 1];
            for x in values() {
                if ids[x as usize] == u32::MAX {
                    ids[x as usize] = k;
                    k += 1;
                }
                cell_of.push(ids[x as usize]);
            }
        } else {
            let mut ids: HashMap<u32, u32> = HashMap::new();
            for x in values() {
                let next = ids.len() as u32;
                cell_of.push(*ids.entry(x).or_insert(next));
            }
            k = ids.len() as u32;
        }
        let k = k as usize;
        let mut sizes = vec![0u32; k];
        for &c in &cell_of {
            sizes[c as usize] += 1;
        }
        let mut cells = Vec::with_capacity(k);
        let mut start = 0;
        for &len in &sizes {
            cells.push(Cell { start, len });
            start += len;
        }
        let mut fill: Vec<u32> = cells.iter().map(|c| c.start).collect();
        let mut elems = vec![0u32; total as usize];
        let mut pos = vec![0u32; total as usize];
        for (x, &c) in cell_of.iter().enumerate() {
            elems[fill[c as usize] as usize] = x as u32;
            pos[x] = fill[c as usize];
            fill[c as usize] += 1;
        }
        Partition {
            base,
            elems,
            pos,
            cell_of,
            children: vec![Vec::new(); k],
            cells,
            last_changed: Vec::new(),
            seen: vec![false; total as usize],
            sig: vec![0; total as usize],
        }
    }

    fn graph_of(&self, x: u32) -> usize {
        self.base.partition_point(|&b| b <= x) - 1
    }

    /// True if every given cell has as many nodes in each graph.
    fn balanced(&self, cells: impl Iterator<Item = usize>) -> bool {
        let graphs = self.base.len() - 1;
        if graphs <= 1 {
            return true;
        }
        let mut per = vec![0u32; graphs];
        cells.into_iter().all(|c| {
            let cell = self.cells[c];
            if !(cell.len as usize).is_multiple_of(graphs) {
                return false;
            }
            per.iter_mut().for_each(|p| *p = 0);
            for &x in &self.elems[cell.start as usize..(cell.start + cell.len) as usize] {
                per[self.graph_of(x)] += 1;
            }
            per.iter().all(|&p| p == per[0])
        })
    }

    fn children_of(&self, c: u32) -> impl Iterator<Item = u32> + '_ {
        self.children[c as usize].iter().copied()
    }

    /// One refinement round against `splitters`: each node is given the multiset hash of its
    /// neighbours' splitter cells, and each cell holding such nodes splits by that hash (the
    /// nodes without a neighbour in a splitter stay in the cell, or the first group does when
    /// every node has one). Returns the cells that split; their new fragments are appended to
    /// `cells` and listed in `children`.
    fn round(&mut self, graphs: &[&Graph], splitters: &[u32]) -> Vec<u32> {
        for c in std::mem::take(&mut self.last_changed) {
            self.children[c as usize].clear();
        }
        let mut touched: Vec<u32> = Vec::new();
        for &s in splitters {
            let cell = self.cells[s as usize];
            let salt = mix(s as u64 ^ NEIGHBOUR_SALT);
            for i in cell.start..cell.start + cell.len {
                let x = self.elems[i as usize];
                let gi = self.graph_of(x);
                let b = self.base[gi];
                for &v in graphs[gi].neighbors(x - b) {
                    let y = (v + b) as usize;
                    if !self.seen[y] {
                        self.seen[y] = true;
                        touched.push(y as u32);
                    }
                    self.sig[y] = self.sig[y].wrapping_add(salt);
                }
            }
        }
        touched.sort_unstable_by_key(|&y| (self.cell_of[y as usize], self.sig[y as usize], y));
        let mut changed = Vec::new();
        let mut i = 0;
        while i < touched.len() {
            let c = self.cell_of[touched[i] as usize];
            let mut j = i;
            while j < touched.len() && self.cell_of[touched[j] as usize] == c {
                j += 1;
            }
            if self.split(c, &touched[i..j]) {
                changed.push(c);
            }
            i = j;
        }
        for &y in &touched {
            self.seen[y as usize] = false;
            self.sig[y as usize] = 0;
        }
        self.last_changed = changed.clone();
        changed
    }

    /// Split cell `c` by the signatures of its `touched` members (sorted by signature).
    fn split(&mut self, c: u32, touched: &[u32]) -> bool {
        let cell = self.cells[c as usize];
        let untouched = cell.len - touched.len() as u32;
        let sig = |y: u32| self.sig[y as usize];
        if untouched == 0 && sig(touched[0]) == sig(touched[touched.len() - 1]) {
            return false;
        }
        // Touched members to the end of the cell's range, in signature order.
        let mut end = cell.start + cell.len;
        for &y in touched {
            end -= 1;
            let (py, other) = (self.pos[y as usize], self.elems[end as usize]);
            self.elems.swap(py as usize, end as usize);
            self.pos[other as usize] = py;
            self.pos[y as usize] = end;
        }
        for (k, &y) in touched.iter().enumerate() {
            let at = cell.start + untouched + k as u32;
            self.elems[at as usize] = y;
            self.pos[y as usize] = at;
        }
        // The cell keeps its untouched members (or the first group); each other group is new.
        let mut k = 0;
        let mut keep_first = untouched == 0;
        if !keep_first {
            self.cells[c as usize].len = untouched;
        }
        while k < touched.len() {
            let mut l = k;
            while l < touched.len() && sig(touched[l]) == sig(touched[k]) {
                l += 1;
            }
            let start = cell.start + untouched + k as u32;
            let len = (l - k) as u32;
            if keep_first {
                self.cells[c as usize] = Cell { start, len };
                keep_first = false;
            } else {
                let id = self.cells.len() as u32;
                self.cells.push(Cell { start, len });
                self.children.push(Vec::new());
                self.children[c as usize].push(id);
                for &y in &touched[k..l] {
                    self.cell_of[y as usize] = id;
                }
            }
            k = l;
        }
        true
    }

    fn colouring(&self, rounds: usize) -> Colouring {
        let mut ids = vec![u32::MAX; self.cells.len()];
        let mut next = 0u32;
        let colours = (0..self.base.len() - 1)
            .map(|g| {
                (self.base[g]..self.base[g + 1])
                    .map(|x| {
                        let c = &mut ids[self.cell_of[x as usize] as usize];
                        if *c == u32::MAX {
                            *c = next;
                            next += 1;
                        }
                        *c
                    })
                    .collect()
            })
            .collect();
        Colouring {
            colours,
            classes: next,
            rounds,
        }
    }
}

/// Refine one graph's colours (see [`refine_joint`]).
pub fn refine(g: &Graph, max_rounds: usize) -> Vec<u32> {
    refine_joint(&[g], max_rounds).colours.pop().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::TopologySpec;
    use rand::rngs::StdRng;
    use rand::seq::SliceRandom;
    use rand::{Rng, SeedableRng};
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

    /// The previous implementation: every node re-hashed every round.
    fn refine_by_rehashing(graphs: &[&Graph], initial: &[Vec<u32>], max_rounds: usize) -> Colouring {
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

    fn random_graph(rng: &mut StdRng, n: u32, m: usize) -> Graph {
        Graph::from_edges(
            n,
            (0..m)
                .map(|_| (rng.gen_range(0..n), rng.gen_range(0..n)))
                .collect::<Vec<_>>(),
        )
    }

    fn shuffled(rng: &mut StdRng, g: &Graph) -> Graph {
        let mut perm: Vec<u32> = (0..g.num_nodes()).collect();
        perm.shuffle(rng);
        g.relabel(&perm)
    }

    fn same(graphs: &[&Graph], initial: &[Vec<u32>], rounds: usize) {
        let new = refine_from(graphs, initial, rounds);
        let old = refine_by_rehashing(graphs, initial, rounds);
        assert_eq!(new, old, "{} nodes, {rounds} rounds", graphs[0].num_nodes());
    }

    #[test]
    fn partition_refinement_equals_rehashing_every_node() {
        let mut rng = StdRng::seed_from_u64(10);
        let mut compared = 0;
        for trial in 0..300 {
            let n = rng.gen_range(1..80);
            let m = rng.gen_range(0..3 * n as usize);
            let a = random_graph(&mut rng, n, m);
            // Isomorphic pairs (histograms agree to the end), unrelated pairs of the same size
            // (they usually part), single graphs and triples.
            let b = if trial % 3 == 0 {
                random_graph(&mut rng, n, m)
            } else {
                shuffled(&mut rng, &a)
            };
            let c = shuffled(&mut rng, &a);
            let rounds = [1, 2, 3, 32, 200][trial % 5];
            let degrees = |g: &Graph| (0..n).map(|u| g.degree(u) * 2).collect::<Vec<u32>>();
            same(&[&a, &b], &[degrees(&a), degrees(&b)], rounds);
            same(&[&a], &[degrees(&a)], rounds);
            same(&[&a, &c, &b], &[degrees(&a), degrees(&c), degrees(&b)], rounds);
            // Arbitrary initial colours, some large (no table).
            let colours = |rng: &mut StdRng| {
                (0..n)
                    .map(|_| [0, 1, 7, 1 << 30][rng.gen_range(0..4)])
                    .collect::<Vec<u32>>()
            };
            let (ca, cb) = (colours(&mut rng), colours(&mut rng));
            same(&[&a, &b], &[ca.clone(), ca.clone()], rounds);
            same(&[&a, &b], &[ca, cb], rounds);
            compared += 1;
        }
        assert_eq!(compared, 300);
    }

    #[test]
    fn partition_refinement_equals_rehashing_on_topologies() {
        let mut rng = StdRng::seed_from_u64(11);
        for spec in [
            "grid:23x17",
            "torus:6x5x4",
            "stencil6:9x7",
            "stencil8-mesh:8x6",
            "binary-tree:200",
            "hypercube:6",
        ] {
            let g = TopologySpec::parse(spec).unwrap().graph();
            let h = shuffled(&mut rng, &g);
            let degrees = |g: &Graph| (0..g.num_nodes()).map(|u| g.degree(u) * 2).collect::<Vec<u32>>();
            for rounds in [1, 5, 32, 64] {
                same(&[&g, &h], &[degrees(&g), degrees(&h)], rounds);
            }
            // Individualised, as the isomorphism search refines.
            let mut marked = [degrees(&g), degrees(&h)];
            marked[0][3] += 1;
            marked[1][(h.num_nodes() / 2) as usize] += 1;
            same(&[&g, &h], &marked, 64);
        }
    }
}
