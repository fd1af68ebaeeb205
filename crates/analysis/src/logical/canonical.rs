//! One placement per run, whatever automorphism topology identification happened to return
//!: a torus can be shifted and reflected, a grid reflected, equal axes swapped, a
//! hypercube translated and its bits permuted, and each choice names the directions differently
//! (the program's east becomes west). Among these cheap automorphisms the placement whose
//! `node_of_rank` is lexicographically smallest is kept: rank 0 sits at the origin where the
//! topology allows it, then rank 1 as close to it as possible (east of rank 0 for a row-major
//! run), and so on. The minimum over a group orbit does not depend on the starting point, so
//! the logical trace does not depend on identification's choice.

use super::Placement;
use tracelogic_graph::Family;

/// Hypercubes with more dimensions only get the translation (k! bit permutations).
const MAX_PERMUTED_BITS: u32 = 7;

/// Permutations of `0..k` (Heap's algorithm), `k` small.
fn permutations(k: usize) -> Vec<Vec<usize>> {
    fn heap(n: usize, a: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if n <= 1 {
            out.push(a.clone());
            return;
        }
        for i in 0..n - 1 {
            heap(n - 1, a, out);
            if n & 1 == 0 {
                a.swap(i, n - 1);
            } else {
                a.swap(0, n - 1);
            }
        }
        heap(n - 1, a, out);
    }
    let mut out = Vec::new();
    heap(k, &mut (0..k).collect(), &mut out);
    out
}

/// Node maps fixing the origin (periodic) or the box (meshes) that carry the family's direction
/// set onto itself: axis permutations among equal extents times axis reflections.
fn cartesian_maps(p: &Placement) -> Vec<Box<dyn Fn(u32) -> u32 + '_>> {
    let spec = &p.spec;
    let k = spec.dims.len();
    let offsets: Vec<Vec<i8>> = spec.offsets();
    let periodic = spec.family.periodic();
    let mut maps: Vec<Box<dyn Fn(u32) -> u32 + '_>> = Vec::new();
    for perm in permutations(k) {
        if (0..k).any(|i| spec.dims[perm[i]] != spec.dims[i]) {
            continue;
        }
        for mask in 0u32..(1 << k) {
            let flip = move |i: usize| mask >> i & 1 == 1;
            let preserved = offsets.iter().all(|o| {
                let image: Vec<i8> = (0..k).map(|i| if flip(i) { -o[perm[i]] } else { o[perm[i]] }).collect();
                offsets.contains(&image)
            });
            if !preserved {
                continue;
            }
            let perm = perm.clone();
            maps.push(Box::new(move |u| {
                let c = spec.coords(u);
                let image: Vec<u32> = (0..k)
                    .map(|i| {
                        let (x, d) = (c[perm[i]], spec.dims[i]);
                        match (flip(i), periodic) {
                            (false, _) => x,
                            (true, true) => (d - x) % d,
                            (true, false) => d - 1 - x,
                        }
                    })
                    .collect();
                spec.node_at(&image).unwrap_or(u)
            }));
        }
    }
    maps
}

impl Placement {
    /// The same run placed by the automorphism of the topology (torus shifts, axis reflections
    /// and swaps of equal axes where the direction set allows them, ring shifts and reflection,
    /// hypercube translations and bit permutations) that makes `node_of_rank` lexicographically
    /// smallest; other families are returned unchanged. Directions then name the same program
    /// moves whatever mapping identification returned.
    pub fn canonical(&self) -> Placement {
        let spec = &self.spec;
        let n = spec.num_nodes();
        let Some(&u0) = self.node_of_rank.first() else {
            return self.clone();
        };
        // Translation taking rank 0 to the origin, where the family has translations.
        let translate: Box<dyn Fn(u32) -> u32> = match spec.family {
            f if f.is_cartesian() && f.periodic() => {
                let c0 = spec.coords(u0);
                Box::new(move |u| {
                    let c = spec.coords(u);
                    let image: Vec<u32> = c
                        .iter()
                        .zip(&c0)
                        .zip(&spec.dims)
                        .map(|((&x, &x0), &d)| (x + d - x0) % d)
                        .collect();
                    spec.node_at(&image).unwrap_or(u)
                })
            }
            Family::Ring => Box::new(move |u| (u + n - u0) % n),
            Family::Hypercube => Box::new(move |u| u ^ u0),
            _ => Box::new(|u| u),
        };
        let maps: Vec<Box<dyn Fn(u32) -> u32 + '_>> = match spec.family {
            f if f.is_cartesian() => cartesian_maps(self),
            Family::Ring => vec![Box::new(|u| u), Box::new(move |u| (n - u) % n)],
            Family::Hypercube if spec.dims[0] <= MAX_PERMUTED_BITS => permutations(spec.dims[0] as usize)
                .into_iter()
                .map(|perm| -> Box<dyn Fn(u32) -> u32> {
                    Box::new(move |u| {
                        perm.iter()
                            .enumerate()
                            .fold(0, |acc, (i, &from)| acc | ((u >> from) & 1) << i)
                    })
                })
                .collect(),
            Family::Hypercube => vec![Box::new(|u| u)],
            _ => return self.clone(),
        };
        let mut best = self.node_of_rank.clone();
        for g in &maps {
            let image: Vec<u32> = self.node_of_rank.iter().map(|&u| g(translate(u))).collect();
            if image < best {
                best = image;
            }
        }
        Placement {
            spec: spec.clone(),
            node_of_rank: best,
        }
    }
}
