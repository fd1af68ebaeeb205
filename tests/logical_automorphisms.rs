//! Issue 4, point 2: the logical trace does not depend on which automorphism of a symmetric
//! topology identification returned. Every placement moved by a torus shift, an axis reflection,
//! a swap of equal axes, a ring reflection or a hypercube translation and bit permutation has
//! the same canonical placement, hence the same logical trace, reproduced on every rank.

mod common;

use tracelogic_analysis::logical::{logicalize, verify, LogicalCall, Placement};
use tracelogic_synth::{Family, Numbering, Spec, Style, TopologySpec};

fn run(topology: &str, numbering: Numbering, style: Style) -> (tracelogic_model::Trace, Placement) {
    let spec = Spec {
        topology: TopologySpec::parse(topology).unwrap(),
        numbering,
        seed: 7,
        iterations: 3,
        style,
        ..Spec::default()
    };
    let (trace, placement) = common::run_with_truth(&spec);
    (trace, placement)
}

/// `p` moved by the node map `g`.
fn moved(p: &Placement, g: impl Fn(u32) -> u32) -> Placement {
    Placement {
        spec: p.spec.clone(),
        node_of_rank: p.node_of_rank.iter().map(|&u| g(u)).collect(),
    }
}

/// Cartesian automorphisms written out independently of the code under test: shift by `shift`
/// (periodic families), reflect the axes in `flip`, then swap axes 0 and 1 when `swap`.
fn cartesian<'a>(spec: &'a TopologySpec, shift: &[u32], flip: &[bool], swap: bool) -> impl Fn(u32) -> u32 + 'a {
    let shift = shift.to_vec();
    let flip = flip.to_vec();
    move |u| {
        let mut c = spec.coords(u);
        for (k, x) in c.iter_mut().enumerate() {
            let d = spec.dims[k];
            if spec.family.periodic() {
                *x = (*x + shift[k]) % d;
                if flip[k] {
                    *x = (d - *x) % d;
                }
            } else if flip[k] {
                *x = d - 1 - *x;
            }
        }
        if swap {
            c.swap(0, 1);
        }
        spec.node_at(&c).unwrap()
    }
}

fn calls(p: &Placement, trace: &tracelogic_model::Trace) -> Vec<LogicalCall> {
    let l = logicalize(trace, p).unwrap();
    let v = verify(trace, &l).unwrap();
    assert!(v.ranks_below_full.is_empty(), "{:?}", v.ranks_below_full);
    l.records.into_iter().map(|r| r.call).collect()
}

fn assert_same_canonical(trace: &tracelogic_model::Trace, base: &Placement, images: Vec<Placement>) {
    let canonical = base.canonical();
    let reference = calls(&canonical, trace);
    assert!(images.len() > 1);
    for image in images {
        assert_ne!(image.node_of_rank.len(), 0);
        let c = image.canonical();
        assert_eq!(c, canonical, "from {:?}", image.node_of_rank);
        assert_eq!(calls(&c, trace), reference);
    }
}

#[test]
fn torus_shifts_and_reflections_give_one_logical_trace() {
    let (trace, p) = run("torus:5x3", Numbering::Random, Style::Isend);
    let spec = p.spec.clone();
    let mut images = Vec::new();
    for (sx, sy) in [(0, 0), (1, 0), (3, 2), (4, 1)] {
        for flip in [[false, false], [true, false], [false, true], [true, true]] {
            images.push(moved(&p, cartesian(&spec, &[sx, sy], &flip, false)));
        }
    }
    // Shifted and reflected placements name east and west differently...
    let named: std::collections::BTreeSet<Vec<String>> = images
        .iter()
        .map(|q| {
            logicalize(&trace, q)
                .unwrap()
                .records
                .iter()
                .flat_map(|r| r.call.ops.iter().map(|o| o.partner.label()))
                .collect()
        })
        .collect();
    assert!(named.len() > 1, "the automorphisms should change the raw logical trace");
    // ...the canonical one does not depend on them.
    assert_same_canonical(&trace, &p, images);
}

#[test]
fn square_torus_axes_swap() {
    let (trace, p) = run("torus:3x3", Numbering::Random, Style::Sendrecv);
    let spec = p.spec.clone();
    let images = [false, true]
        .into_iter()
        .flat_map(|swap| [[false, false], [true, true]].map(|flip| (swap, flip)))
        .map(|(swap, flip)| moved(&p, cartesian(&spec, &[1, 2], &flip, swap)))
        .collect();
    assert_same_canonical(&trace, &p, images);
}

#[test]
fn grid_reflections() {
    let (trace, p) = run("grid:4x3", Numbering::Random, Style::Isend);
    let spec = p.spec.clone();
    let images = [[false, false], [true, false], [false, true], [true, true]]
        .into_iter()
        .map(|flip| moved(&p, cartesian(&spec, &[0, 0], &flip, false)))
        .collect();
    assert_same_canonical(&trace, &p, images);
}

#[test]
fn merged_grid_reflections() {
    // No maximal rank: the merge of rank classes must not depend on the reflection either.
    let (trace, p) = run("grid:2x4", Numbering::Random, Style::Sendrecv);
    let spec = p.spec.clone();
    let images = [[false, false], [true, false], [false, true], [true, true]]
        .into_iter()
        .map(|flip| moved(&p, cartesian(&spec, &[0, 0], &flip, false)))
        .collect();
    assert_same_canonical(&trace, &p, images);
}

#[test]
fn ring_shifts_and_reflection() {
    let (trace, p) = run("ring:7", Numbering::Random, Style::Isend);
    let n = 7;
    let images = (0..n)
        .flat_map(|s| [false, true].map(|f| (s, f)))
        .map(|(s, f)| moved(&p, move |u| if f { (n - (u + s) % n) % n } else { (u + s) % n }))
        .collect();
    assert_same_canonical(&trace, &p, images);
}

#[test]
fn hypercube_translations_and_bit_permutations() {
    let (trace, p) = run("hypercube:3", Numbering::Random, Style::Isend);
    let images = (0..8u32)
        .flat_map(|x| [[0usize, 1, 2], [2, 0, 1], [1, 0, 2]].map(|perm| (x, perm)))
        .map(|(x, perm)| {
            moved(&p, move |u| {
                let v = u ^ x;
                perm.iter()
                    .enumerate()
                    .fold(0, |acc, (i, &from)| acc | ((v >> from) & 1) << i)
            })
        })
        .collect();
    assert_same_canonical(&trace, &p, images);
}

#[test]
fn row_major_runs_keep_the_identity() {
    for t in [
        "torus:4x3",
        "grid:3x5",
        "ring:6",
        "hypercube:3",
        "stencil6:3x3",
        "grid:2x4",
    ] {
        let (_, p) = run(t, Numbering::RowMajor, Style::Isend);
        assert_eq!(p.canonical(), p, "{t}");
    }
    // Families without cheap automorphisms are left as they are.
    let (_, p) = run("binary-tree:7", Numbering::Random, Style::Isend);
    assert_eq!(p.spec.family, Family::BinaryTree);
    assert_eq!(p.canonical(), p);
}
