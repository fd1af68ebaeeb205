//! What a family's structure tells without building its graph: its prime factors under the
//! Cartesian graph product (which candidates are the same graph), its edge count and its
//! adjacency spectrum in closed form.
//!
//! Grids, tori, lines, rings, hypercubes and the 7-point stencils are Cartesian products of paths
//! and cycles. A connected graph factors uniquely into prime graphs under the Cartesian product
//! (Sabidussi 1960, Vizing 1963); paths of three or more nodes and cycles other than C4 are
//! prime (a product of two non-trivial graphs has a 4-cycle through every node, and C4 = K2□K2).
//! So two such candidates are isomorphic exactly when their multisets of prime factors agree:
//! identification proves one of them and knows the others are its equivalents.
//!
//! The spectrum of a Cartesian product is every sum of one eigenvalue per factor, and a periodic
//! stencil is a Cayley graph of the abelian group Z_d0 × Z_d1 × ...: its eigenvalues are the
//! character sums Σ_s cos(2π Σ_i s_i j_i / d_i) over its distinct neighbour offsets s. Both
//! replace a dense O(n³) eigen-decomposition for display.

use crate::families::{Family, TopologySpec};
use std::f64::consts::PI;

/// A prime factor under the Cartesian product: a path or a cycle of `nodes` nodes (the path of
/// 2 nodes, K2, stands for both the 2-extent path and the 2-extent "cycle").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PrimeFactor {
    /// The path P_n, n ≥ 2.
    Path(u32),
    /// The cycle C_n, n = 3 or n ≥ 5.
    Cycle(u32),
    /// The complete graph K_n, n ≥ 4 (K2 is `Path(2)`, K3 `Cycle(3)`): a factor of the process
    /// grid `K_P □ K_Q`. Prime: a product of two non-trivial graphs has non-adjacent nodes.
    Complete(u32),
}

impl PrimeFactor {
    fn nodes(self) -> u32 {
        match self {
            PrimeFactor::Path(n) | PrimeFactor::Cycle(n) | PrimeFactor::Complete(n) => n,
        }
    }

    fn edges(self) -> u64 {
        match self {
            PrimeFactor::Path(n) => n as u64 - 1,
            PrimeFactor::Cycle(n) => n as u64,
            PrimeFactor::Complete(n) => n as u64 * (n as u64 - 1) / 2,
        }
    }

    fn eigenvalues(self) -> impl Iterator<Item = f64> {
        let (n, cyclic, complete) = match self {
            PrimeFactor::Path(n) => (n, false, false),
            PrimeFactor::Cycle(n) => (n, true, false),
            PrimeFactor::Complete(n) => (n, false, true),
        };
        (0..n).map(move |j| {
            if complete {
                // K_n: n − 1 once, −1 the other n − 1 times.
                if j == 0 {
                    n as f64 - 1.0
                } else {
                    -1.0
                }
            } else if cyclic {
                2.0 * (2.0 * PI * j as f64 / n as f64).cos()
            } else {
                2.0 * (PI * (j + 1) as f64 / (n + 1) as f64).cos()
            }
        })
    }
}

/// The prime factors of one extent of a grid (`periodic` false) or torus: none for 1, K2 for 2,
/// K2 twice for a 4-cycle.
fn extent_factors(extent: u32, periodic: bool, out: &mut Vec<PrimeFactor>) {
    match (extent, periodic) {
        (1, _) => {}
        (2, _) => out.push(PrimeFactor::Path(2)),
        (4, true) => out.extend([PrimeFactor::Path(2), PrimeFactor::Path(2)]),
        (d, true) => out.push(PrimeFactor::Cycle(d)),
        (d, false) => out.push(PrimeFactor::Path(d)),
    }
}

impl TopologySpec {
    /// The sorted prime factors of this topology under the Cartesian product, for the families
    /// that are products of paths and cycles (grid, torus, line, ring, hypercube, 7-point
    /// stencils); `None` for the others. Two specs with equal factors are isomorphic graphs and
    /// two with different factors are not (unique prime factorisation of connected graphs).
    pub fn prime_factors(&self) -> Option<Vec<PrimeFactor>> {
        let mut out = Vec::new();
        match self.family {
            Family::Grid | Family::Line | Family::Stencil7Mesh => {
                self.dims.iter().for_each(|&d| extent_factors(d, false, &mut out))
            }
            Family::Torus | Family::Stencil7 => self.dims.iter().for_each(|&d| extent_factors(d, true, &mut out)),
            Family::Ring => extent_factors(self.dims[0], true, &mut out),
            Family::Hypercube => out.extend(std::iter::repeat_n(PrimeFactor::Path(2), self.dims[0] as usize)),
            Family::ProcessGrid => {
                for &d in &self.dims {
                    match d {
                        1 => {}
                        2 => out.push(PrimeFactor::Path(2)),
                        3 => out.push(PrimeFactor::Cycle(3)),
                        d => out.push(PrimeFactor::Complete(d)),
                    }
                }
            }
            _ => return None,
        }
        out.sort_unstable();
        Some(out)
    }

    /// Edge count in closed form for product families and trees; `None` for the others (then
    /// [`TopologySpec::edge_count`] sums the degree histogram).
    pub(crate) fn closed_form_edge_count(&self) -> Option<u64> {
        let n = self.num_nodes() as u64;
        match self.family {
            Family::BinaryTree | Family::KaryTree | Family::Star | Family::Tree | Family::BinomialTree => {
                Some(n.saturating_sub(1))
            }
            Family::AllToAll => Some(n * n.saturating_sub(1) / 2),
            Family::MasterWorker => Some(self.dims[0] as u64 * (n - self.dims[0] as u64)),
            f if f.is_cartesian() && self.prime_factors().is_none() => self.stencil_edge_count(),
            _ => {
                // In a product, each factor's edges are repeated once per node of the others.
                let factors = self.prime_factors()?;
                Some(factors.iter().map(|f| f.edges() * (n / f.nodes() as u64)).sum())
            }
        }
    }

    /// Edges of a 2D or 3D stencil without building its offsets: a mesh has Π_i (d_i − |s_i|)
    /// pairs per offset s (each edge counted from both ends), a periodic stencil |S| edge ends
    /// per node for its distinct non-zero offsets S modulo the extents.
    fn stencil_edge_count(&self) -> Option<u64> {
        let k = self.dims.len();
        if k > 3 {
            return None;
        }
        let periodic = self.family.periodic();
        let mut residues = [[0u32; 3]; 26];
        let mut distinct = 0usize;
        let mut ends = 0u64;
        for code in 0..3usize.pow(k as u32) {
            let mut o = [0i8; 3];
            let mut rest = code;
            for x in o.iter_mut().take(k) {
                *x = (rest % 3) as i8 - 1;
                rest /= 3;
            }
            if o == [0; 3] || !self.has_offset(&o[..k]) {
                continue;
            }
            if periodic {
                let mut r = [0u32; 3];
                for i in 0..k {
                    r[i] = (o[i] as i64).rem_euclid(self.dims[i] as i64) as u32;
                }
                if r != [0; 3] && !residues[..distinct].contains(&r) {
                    residues[distinct] = r;
                    distinct += 1;
                }
            } else {
                ends += (0..k)
                    .map(|i| (self.dims[i] as u64).saturating_sub(o[i].unsigned_abs() as u64))
                    .product::<u64>();
            }
        }
        Some(if periodic {
            self.num_nodes() as u64 * distinct as u64 / 2
        } else {
            ends / 2
        })
    }

    /// Whether `o` (entries −1, 0, 1) is one of this stencil's neighbour offsets (as
    /// [`TopologySpec::offsets`] lists them).
    fn has_offset(&self, o: &[i8]) -> bool {
        let nonzero = o.iter().filter(|&&x| x != 0).count();
        match self.family {
            Family::Stencil6 | Family::Stencil6Mesh => nonzero == 1 || o[0] == -o[1],
            Family::Stencil19 | Family::Stencil19Mesh => nonzero <= 2,
            Family::Stencil8 | Family::Stencil8Mesh | Family::Stencil27 | Family::Stencil27Mesh => true,
            _ => nonzero == 1,
        }
    }

    /// The adjacency eigenvalues in increasing order, computed from the structure: for product
    /// families every sum of one eigenvalue per prime factor, for periodic stencils the character
    /// sums of the Cayley graph. `None` for the other families (and above `max_nodes` nodes).
    /// Agrees with `invariants::spectrum` of [`TopologySpec::graph`] to rounding.
    pub fn closed_form_spectrum(&self, max_nodes: u32) -> Option<Vec<f64>> {
        if self.num_nodes() > max_nodes {
            return None;
        }
        let mut values = if let Some(factors) = self.prime_factors() {
            let mut values = vec![0.0f64];
            for f in factors {
                values = values
                    .iter()
                    .flat_map(|&x| f.eigenvalues().map(move |y| x + y))
                    .collect();
            }
            values
        } else if self.family.is_cartesian() && self.family.periodic() {
            self.cayley_spectrum()
        } else {
            return None;
        };
        values.sort_by(f64::total_cmp);
        Some(values)
    }

    /// Eigenvalues of a periodic Cartesian family as a Cayley graph of Z_d0 × Z_d1 × ...: one per
    /// character j, the sum over the distinct non-zero neighbour offsets s (taken modulo the
    /// extents) of cos(2π Σ_i s_i j_i / d_i).
    fn cayley_spectrum(&self) -> Vec<f64> {
        let dims = &self.dims;
        let mut offsets: Vec<Vec<u32>> = self
            .offsets()
            .iter()
            .map(|o| {
                o.iter()
                    .zip(dims)
                    .map(|(&s, &d)| (s as i64).rem_euclid(d as i64) as u32)
                    .collect()
            })
            .filter(|o: &Vec<u32>| o.iter().any(|&x| x != 0))
            .collect();
        offsets.sort_unstable();
        offsets.dedup();
        // cos is even: an offset and its opposite (both present, the set being symmetric) give
        // the same term, so each pair is one cosine counted twice; a self-opposite offset (an
        // extent of 2) counts once.
        let opposite = |o: &[u32]| -> Vec<u32> { o.iter().zip(dims).map(|(&s, &d)| (d - s) % d).collect() };
        let terms: Vec<(Vec<u32>, f64)> = offsets
            .iter()
            .filter_map(|o| {
                let back = opposite(o);
                match back.cmp(o) {
                    std::cmp::Ordering::Less => None,
                    std::cmp::Ordering::Equal => Some((o.clone(), 1.0)),
                    std::cmp::Ordering::Greater if offsets.binary_search(&back).is_ok() => Some((o.clone(), 2.0)),
                    std::cmp::Ordering::Greater => Some((o.clone(), 1.0)),
                }
            })
            .collect();
        let n = self.num_nodes() as usize;
        let mut j = vec![0u32; dims.len()];
        let mut values = Vec::with_capacity(n);
        for _ in 0..n {
            let value: f64 = terms
                .iter()
                .map(|(s, weight)| {
                    let phase: f64 = s
                        .iter()
                        .zip(&j)
                        .zip(dims)
                        .map(|((&s, &j), &d)| s as f64 * j as f64 / d as f64)
                        .sum();
                    weight * (2.0 * PI * phase).cos()
                })
                .sum();
            values.push(value);
            for (c, &d) in j.iter_mut().zip(dims) {
                *c += 1;
                if *c < d {
                    break;
                }
                *c = 0;
            }
        }
        values
    }

    /// Breadth-first level sizes from `root` without building the graph: for hypercubes C(d, k)
    /// nodes at distance k (from any node), otherwise
    /// [`TopologySpec::implicit_distance_profile`] (Cartesian families; `None` for the others).
    pub fn structural_distance_profile(&self, root: u32, expect: Option<&[u32]>) -> Option<Vec<u32>> {
        if self.family == Family::ProcessGrid && root < self.num_nodes() {
            // The rest of its row and column at distance 1, every other rank at distance 2.
            let (p, q) = (self.dims[0] - 1, self.dims[1] - 1);
            let mut profile = vec![1, p + q, p * q];
            while profile.last() == Some(&0) {
                profile.pop();
            }
            return Some(profile);
        }
        if self.family != Family::Hypercube {
            return self.implicit_distance_profile(root, expect);
        }
        if root >= self.num_nodes() {
            return None;
        }
        let d = self.dims[0] as u64;
        let mut profile = Vec::with_capacity(d as usize + 1);
        let mut c = 1u64;
        for k in 0..=d {
            profile.push(c as u32);
            c = c * (d - k) / (k + 1);
        }
        Some(profile)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::candidates;
    use crate::invariants::{spectra_agree, spectrum};
    use crate::iso::{isomorphism, IsoOptions, IsoOutcome};

    #[test]
    fn closed_form_spectra_equal_the_dense_decomposition() {
        let mut checked = 0;
        for n in [2u32, 3, 4, 6, 8, 12, 16, 18, 24, 27, 30, 32, 36, 48, 64] {
            for spec in candidates(n) {
                let Some(closed) = spec.closed_form_spectrum(512) else {
                    assert!(spec.prime_factors().is_none(), "{}", spec.label());
                    continue;
                };
                let dense = spectrum(&spec.graph()).unwrap();
                assert!(
                    spectra_agree(&closed, &dense),
                    "{}: {closed:?} vs {dense:?}",
                    spec.label()
                );
                checked += 1;
            }
        }
        assert!(checked > 150, "{checked}");
        assert_eq!(
            TopologySpec::parse("grid:30x30").unwrap().closed_form_spectrum(512),
            None
        );
    }

    #[test]
    fn stencil_offsets_by_rule_are_the_listed_offsets() {
        for s in [
            "stencil6:4x3",
            "stencil6-mesh:4x3",
            "stencil8:4x3",
            "stencil8-mesh:4x3",
            "stencil19:3x3x3",
            "stencil19-mesh:3x3x3",
            "stencil27:3x3x3",
            "stencil27-mesh:3x3x3",
            "stencil7:3x3x3",
        ] {
            let spec = TopologySpec::parse(s).unwrap();
            let k = spec.dims.len();
            let mut by_rule = Vec::new();
            for code in 0..3usize.pow(k as u32) {
                let o: Vec<i8> = (0..k).map(|i| (code / 3usize.pow(i as u32) % 3) as i8 - 1).collect();
                if o.iter().any(|&x| x != 0) && spec.has_offset(&o) {
                    by_rule.push(o);
                }
            }
            let mut listed = spec.offsets();
            by_rule.sort();
            listed.sort();
            assert_eq!(by_rule, listed, "{s}");
        }
    }

    #[test]
    fn closed_form_edge_counts_equal_the_built_graph() {
        for n in [2u32, 5, 8, 12, 16, 18, 27, 36, 64, 100] {
            for spec in candidates(n) {
                assert_eq!(spec.edge_count(), spec.graph().num_edges() as u64, "{}", spec.label());
            }
        }
    }

    #[test]
    fn equal_prime_factors_exactly_when_isomorphic() {
        // Every pair of product candidates of the same size and edge count: the factors agree
        // if and only if the isomorphism search proves them the same graph.
        let mut same = 0;
        let mut different = 0;
        for n in [4u32, 8, 9, 12, 16, 24, 32, 36, 64] {
            let products: Vec<TopologySpec> = candidates(n)
                .into_iter()
                .filter(|s| s.prime_factors().is_some())
                .collect();
            for (i, a) in products.iter().enumerate() {
                for b in &products[i + 1..] {
                    let (ga, gb) = (a.graph(), b.graph());
                    if ga.num_edges() != gb.num_edges() {
                        continue;
                    }
                    let iso = isomorphism(&ga, &gb, IsoOptions::for_nodes(n));
                    assert!(
                        !matches!(iso, IsoOutcome::GaveUp { .. }),
                        "{} / {}",
                        a.label(),
                        b.label()
                    );
                    let isomorphic = matches!(iso, IsoOutcome::Isomorphic { .. });
                    assert_eq!(
                        a.prime_factors() == b.prime_factors(),
                        isomorphic,
                        "{} / {}",
                        a.label(),
                        b.label()
                    );
                    if isomorphic {
                        same += 1;
                    } else {
                        different += 1;
                    }
                }
            }
        }
        assert!(
            same >= 20 && different >= 20,
            "{same} isomorphic pairs, {different} not"
        );
    }

    #[test]
    fn hypercube_profile_is_binomial_and_others_fall_back() {
        let cube = TopologySpec::parse("hypercube:6").unwrap();
        let g = cube.graph();
        assert_eq!(
            cube.structural_distance_profile(17, None).unwrap(),
            crate::invariants::distance_profile(&g, 17)
        );
        assert_eq!(cube.structural_distance_profile(64, None), None);
        let torus = TopologySpec::parse("torus:4x6").unwrap();
        assert_eq!(
            torus.structural_distance_profile(3, None),
            torus.implicit_distance_profile(3, None)
        );
        // The hypercube's graph is the 2×…×2 grid, node bits as coordinates.
        assert_eq!(g, TopologySpec::parse("grid:2x2x2x2x2x2").unwrap().graph());
    }
}
