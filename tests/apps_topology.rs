//! The topology `tracelogic topology` identifies on the real application runs of `tests/data/apps`
//! (unmodified programs traced with SST DUMPI, docs/corpus.md), checked against each application's
//! own account of its layout:
//!
//! - LAMMPS: the log's "P by Q by R MPI processor grid" and the rank → grid map LAMMPS writes
//!   itself (`procs.map`, from `processors ... file`); ghost exchange goes to the 6 face
//!   neighbours of each sub-domain of the periodic box (a torus);
//! - NAS LU, SP, CG: the partner formulas of the benchmark's source (quoted in each README).
//!
//! For every run: the filtered traffic graph is the application's graph, the neighbours the
//! identified mapping claims are exactly those, and the coordinates it gives agree with the
//! family's adjacency. Where the identified dimensions equal the application's, the coordinates
//! must be the application's up to a symmetry of the grid or torus (axis permutation, reflection,
//! and on a torus rotation).

mod common;
use common::{code, json, run, stderr};

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

type Edges = BTreeSet<(u32, u32)>;

fn app_dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/apps").join(name);
    assert!(d.is_dir(), "{} is missing (part of the repository)", d.display());
    d
}

/// The trace of a run: the packed `dumpi.tar.zst` or `trace.tar.zst` (OTF2) if there is one, else
/// the folder itself.
fn trace_of(dir: &Path) -> PathBuf {
    ["dumpi.tar.zst", "trace.tar.zst"]
        .iter()
        .map(|f| dir.join(f))
        .find(|p| p.exists())
        .unwrap_or_else(|| dir.to_path_buf())
}

fn edge(a: u32, b: u32) -> (u32, u32) {
    (a.min(b), a.max(b))
}

/// The application's layout: per world rank its grid coordinates, the grid's dimensions, whether
/// it wraps around, and the communication graph.
struct Truth {
    dims: Vec<usize>,
    coords: Vec<Vec<usize>>,
    periodic: bool,
    edges: Edges,
}

/// Face neighbours (±1 along each dimension, wrapping if `periodic`) of every rank.
fn grid_edges(dims: &[usize], coords: &[Vec<usize>], periodic: bool) -> Edges {
    let rank_at = |c: &[usize]| coords.iter().position(|x| x == c).map(|r| r as u32);
    let mut edges = Edges::new();
    for (r, c) in coords.iter().enumerate() {
        for (axis, &d) in dims.iter().enumerate() {
            if d < 2 {
                continue;
            }
            for step in [1, d - 1] {
                let mut n = c.clone();
                if !periodic && (step == 1 && c[axis] + 1 == d || step == d - 1 && c[axis] == 0) {
                    continue;
                }
                n[axis] = (c[axis] + step) % d;
                let other = rank_at(&n).expect("every grid position has a rank");
                if other != r as u32 {
                    edges.insert(edge(r as u32, other));
                }
            }
        }
    }
    edges
}

/// LAMMPS: the grid from `log.lammps` and each MPI_COMM_WORLD rank's position from `procs.map`
/// (columns: world, universe, original rank, then 1-based I J K; the trace's ranks are the
/// original ones).
fn lammps_truth(dir: &Path) -> Truth {
    let log = std::fs::read_to_string(dir.join("log.lammps")).unwrap();
    let line = log
        .lines()
        .find(|l| l.contains("MPI processor grid"))
        .expect("LAMMPS logs its processor grid");
    let dims: Vec<usize> = line.split_whitespace().filter_map(|w| w.parse().ok()).collect();
    assert_eq!(dims.len(), 3, "{line}");
    let n: usize = dims.iter().product();
    let coords = common::apps::lammps_procs_map(dir, n);
    let edges = grid_edges(&dims, &coords, true);
    Truth {
        dims,
        coords,
        periodic: true,
        edges,
    }
}

/// NAS LU (LU/proc_grid.f, LU/neighbors.f): 16 ranks on a 4×4 grid, rank id at row id mod 4,
/// column id div 4, no wrap-around.
fn lu_truth() -> Truth {
    let dims = vec![4, 4];
    let coords: Vec<Vec<usize>> = (0..16).map(|id| vec![id % 4, id / 4]).collect();
    let edges = grid_edges(&dims, &coords, false);
    Truth {
        dims,
        coords,
        periodic: false,
        edges,
    }
}

/// NAS SP (SP/make_set.f), 16 ranks: rank n = i + 4j talks to its successor and predecessor in
/// three directions, (i+1, j), (i, j+1) and (i-1, j+1), all mod 4.
fn sp_edges() -> Edges {
    let mut edges = Edges::new();
    for n in 0..16u32 {
        let (i, j) = (n % 4, n / 4);
        for (a, b) in [((i + 1) % 4, j), (i, (j + 1) % 4), ((i + 3) % 4, (j + 1) % 4)] {
            edges.insert(edge(n, a + 4 * b));
        }
    }
    edges
}

/// NAS CG (CG/cg.f, setup_submatrix_info), 16 ranks on a 4×4 process grid: the row reductions
/// exchange with proc_col XOR 2 and XOR 1 in the same row, the transpose with
/// (n mod 4)·4 + n div 4.
fn cg_edges() -> Edges {
    let mut edges = Edges::new();
    for n in 0..16u32 {
        let (row, col) = (n / 4, n % 4);
        for partner in [row * 4 + (col ^ 2), row * 4 + (col ^ 1), (n % 4) * 4 + n / 4] {
            if partner != n {
                edges.insert(edge(n, partner));
            }
        }
    }
    edges
}

fn identify(trace: &Path) -> Value {
    let o = run(&[&"topology", &trace, &"--json"]);
    assert_eq!(code(&o), 0, "topology {}: {}", trace.display(), stderr(&o));
    json(&o)
}

fn pairs(v: &Value) -> Edges {
    v.as_array()
        .expect("an array of pairs")
        .iter()
        .map(|e| edge(e[0].as_u64().unwrap() as u32, e[1].as_u64().unwrap() as u32))
        .collect()
}

/// The graph the identified mapping claims: every rank joined to the neighbours it lists.
fn claimed_edges(v: &Value) -> Edges {
    let mut edges = Edges::new();
    for m in v["mapping"].as_array().expect("a mapping") {
        let r = m["rank"].as_u64().unwrap() as u32;
        for n in m["neighbours"].as_array().unwrap() {
            let o = n["rank"].as_u64().unwrap() as u32;
            if o != r {
                edges.insert(edge(r, o));
            }
        }
    }
    edges
}

fn coords_of(v: &Value) -> Vec<Vec<usize>> {
    let mapping = v["mapping"].as_array().expect("a mapping");
    let mut coords = vec![Vec::new(); mapping.len()];
    for m in mapping {
        let r = m["rank"].as_u64().unwrap() as usize;
        coords[r] = m["coords"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap() as usize)
            .collect();
    }
    coords
}

fn dims_of(m: &Value) -> Vec<usize> {
    m["dims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap() as usize)
        .collect()
}

/// Whether two positions of a family's layout are neighbours, computed here from the family's
/// definition (None for families this test does not know).
fn adjacent(family: &str, dims: &[usize], a: &[usize], b: &[usize]) -> Option<bool> {
    let differing: Vec<usize> = (0..a.len()).filter(|&i| a[i] != b[i]).collect();
    Some(match family {
        "hypercube" => differing.len() == 1,
        "torus" => {
            differing.len() == 1 && {
                let (i, d) = (differing[0], dims[differing[0]]);
                (a[i] + 1) % d == b[i] || (b[i] + 1) % d == a[i]
            }
        }
        "grid" => differing.len() == 1 && a[differing[0]].abs_diff(b[differing[0]]) == 1,
        _ => return None,
    })
}

/// All axis permutations of `k` axes.
fn permutations(k: usize) -> Vec<Vec<usize>> {
    if k == 0 {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for p in permutations(k - 1) {
        for at in 0..=p.len() {
            let mut q = p.clone();
            q.insert(at, k - 1);
            out.push(q);
        }
    }
    out
}

/// Whether `got` is `want` moved by a symmetry of the grid (axis permutation between axes of equal
/// length, reflection per axis, and on a torus rotation per axis). Axes of length 1 are dropped.
fn same_up_to_symmetry(
    want: &[Vec<usize>],
    want_dims: &[usize],
    got: &[Vec<usize>],
    got_dims: &[usize],
    periodic: bool,
) -> bool {
    let keep = |dims: &[usize]| -> Vec<usize> { (0..dims.len()).filter(|&i| dims[i] > 1).collect() };
    let (wa, ga) = (keep(want_dims), keep(got_dims));
    if wa.len() != ga.len() {
        return false;
    }
    'perm: for p in permutations(wa.len()) {
        // Axis k of `got` (ga[k]) is axis p[k] of `want` (wa[p[k]]).
        for k in 0..ga.len() {
            if got_dims[ga[k]] != want_dims[wa[p[k]]] {
                continue 'perm;
            }
        }
        for k in 0..ga.len() {
            let d = got_dims[ga[k]];
            let (gi, wi) = (ga[k], wa[p[k]]);
            let maps = |sign: bool, shift: usize| -> bool {
                want.iter().zip(got).all(|(w, g)| {
                    let x = if sign { w[wi] } else { d - 1 - w[wi] };
                    let x = if periodic { (x + shift) % d } else { x };
                    x == g[gi]
                })
            };
            let shifts = if periodic { d } else { 1 };
            if !(0..shifts).any(|s| maps(true, s) || maps(false, s)) {
                continue 'perm;
            }
        }
        return true;
    }
    false
}

/// The common checks: the traffic graph, the claimed neighbours and the coordinates.
fn check_graph(name: &str, v: &Value, ranks: usize, truth: &Edges) {
    assert_eq!(v["ranks"].as_u64(), Some(ranks as u64), "{name}: ranks");
    assert_eq!(
        &pairs(&v["edges"]),
        truth,
        "{name}: the filtered traffic graph is not the application's"
    );
    assert!(!v["match"].is_null(), "{name}: no topology identified");
    assert_eq!(
        &claimed_edges(v),
        truth,
        "{name}: the identified mapping ({}) claims other neighbours",
        v["match"]["label"]
    );
    let family = v["match"]["family"].as_str().unwrap();
    let dims = dims_of(&v["match"]);
    let coords = coords_of(v);
    assert_eq!(coords.len(), ranks, "{name}: every rank is placed");
    if adjacent(family, &dims, &coords[0], &coords[0]).is_some() {
        for a in 0..ranks {
            for b in a + 1..ranks {
                let adj = adjacent(family, &dims, &coords[a], &coords[b]).unwrap();
                assert_eq!(
                    adj,
                    truth.contains(&(a as u32, b as u32)),
                    "{name}: ranks {a} {:?} and {b} {:?} in the {} disagree with the application",
                    coords[a],
                    coords[b],
                    v["match"]["label"]
                );
            }
        }
    }
}

fn sorted_without_ones(dims: &[usize]) -> Vec<usize> {
    let mut d: Vec<usize> = dims.iter().copied().filter(|&x| x > 1).collect();
    d.sort_unstable();
    d
}

fn check_lammps(name: &str) {
    let dir = app_dir(name);
    let truth = lammps_truth(&dir);
    let ranks = truth.coords.len();
    let v = identify(&trace_of(&dir));
    check_graph(name, &v, ranks, &truth.edges);
    // The log's grid is the identified torus or one of its equivalents (dimensions up to order;
    // a dimension of 1 carries no neighbours, one of 2 is the same with or without wrap-around).
    let want = sorted_without_ones(&truth.dims);
    let candidates: Vec<&Value> = std::iter::once(&v["match"])
        .chain(v["equivalents"].as_array().unwrap())
        .collect();
    assert!(
        candidates
            .iter()
            .any(|m| m["family"] == "torus" && sorted_without_ones(&dims_of(m)) == want),
        "{name}: the log's {:?} torus is neither the match nor an equivalent: {:?}",
        truth.dims,
        candidates
            .iter()
            .map(|m| m["label"].as_str().unwrap())
            .collect::<Vec<_>>()
    );
    if v["match"]["family"] == "torus" && sorted_without_ones(&dims_of(&v["match"])) == want {
        assert!(
            same_up_to_symmetry(
                &truth.coords,
                &truth.dims,
                &coords_of(&v),
                &dims_of(&v["match"]),
                truth.periodic
            ),
            "{name}: the identified coordinates are not LAMMPS's procs.map up to a torus symmetry"
        );
    }
}

#[test]
fn lammps_8_ranks_default_grid() {
    check_lammps("lammps-melt-8");
}

#[test]
fn lammps_12_ranks_default_grid() {
    check_lammps("lammps-melt-12");
}

#[test]
fn lammps_12_ranks_rank_map_xzy() {
    check_lammps("lammps-melt-12-xzy");
}

#[test]
fn lammps_12_ranks_forced_1x3x4_grid() {
    check_lammps("lammps-melt-12-1x3x4");
}

#[test]
fn lammps_8_ranks_rigid_bodies_data_dependent_halo() {
    check_lammps("lammps-rigid-8");
}

#[test]
fn lammps_27_ranks_3x3x3_torus() {
    check_lammps("lammps-melt-27");
}

#[test]
fn lammps_27_ranks_3x3x3_torus_permuted_by_reorder() {
    check_lammps("lammps-melt-27-reorder");
}

/// The three-stage run also moves atoms once by `displace_atoms random`, which LAMMPS's irregular
/// communication sends to non-neighbours: a few small messages the filtering must drop.
#[test]
fn lammps_8_ranks_three_stages_with_irregular_atom_moves() {
    check_lammps("lammps-melt-phases-8");
}

fn check_lu(name: &str) {
    let truth = lu_truth();
    let v = identify(&trace_of(&app_dir(name)));
    check_graph(name, &v, 16, &truth.edges);
    assert_eq!(v["match"]["family"], "grid", "{name}: {}", v["match"]["label"]);
    assert_eq!(sorted_without_ones(&dims_of(&v["match"])), [4, 4]);
    assert!(
        same_up_to_symmetry(
            &truth.coords,
            &truth.dims,
            &coords_of(&v),
            &dims_of(&v["match"]),
            truth.periodic
        ),
        "{name}: the identified coordinates are not LU's (row id mod 4, column id div 4) up to a grid symmetry"
    );
}

#[test]
fn npb_lu_16_ranks_is_its_4x4_process_grid() {
    check_lu("npb-lu.S.16");
}

#[test]
fn npb_lu_16_ranks_under_a_rankfile_placement_is_the_same_grid() {
    check_lu("npb-lu.S.16-rankfile");
}

#[test]
fn npb_sp_16_ranks_is_its_multipartition_partners() {
    let v = identify(&trace_of(&app_dir("npb-sp.S.16")));
    check_graph("npb-sp.S.16", &v, 16, &sp_edges());
}

#[test]
fn npb_cg_16_ranks_is_its_reduction_and_transpose_partners() {
    let v = identify(&trace_of(&app_dir("npb-cg.S.16")));
    check_graph("npb-cg.S.16", &v, 16, &cg_edges());
}

/// Held-out NAS runs on 4 ranks (docs/corpus.md "Held-out check"), against their
/// sources' partners: CG (CG/cg.f) on a 2x2 process grid exchanges with proc_col XOR 1 in its
/// row and with the transpose partner (n mod 2)·2 + n div 2 (0 and 3 with themselves): the line
/// 0-1-2-3; LU (LU/proc_grid.f, neighbors.f) on a 2x2 grid without wrap-around, north/south
/// id ∓ 1, west/east id ∓ 2; BT and SP (make_set.f) put 2x2 cells on every rank, whose six
/// partners are the three other ranks: every pair.
#[test]
fn held_out_nas_4_ranks_are_their_sources_partners() {
    let mut cg = Edges::new();
    let mut lu = Edges::new();
    let mut all = Edges::new();
    for n in 0..4u32 {
        for partner in [(n / 2) * 2 + ((n % 2) ^ 1), (n % 2) * 2 + n / 2] {
            if partner != n {
                cg.insert(edge(n, partner));
            }
        }
        let (row, col) = (n % 2, n / 2);
        lu.insert(edge(n, (row ^ 1) + 2 * col));
        lu.insert(edge(n, row + 2 * (col ^ 1)));
        for m in n + 1..4 {
            all.insert(edge(n, m));
        }
    }
    for (name, truth) in [
        ("otf2-npb-cg.S.4", &cg),
        ("otf2-npb-lu.S.4", &lu),
        ("otf2-npb-bt.S.4", &all),
        ("npb-sp.S.4", &all),
    ] {
        let v = identify(&trace_of(&app_dir(name)));
        check_graph(name, &v, 4, truth);
    }
}

/// The checks themselves: a 3×4 torus read back through a rotation and an axis swap is the same
/// up to symmetry; a transposition of two ranks is not.
#[test]
fn symmetry_check_accepts_rotations_and_rejects_swapped_ranks() {
    let dims = [3, 4];
    let want: Vec<Vec<usize>> = (0..12).map(|r| vec![r % 3, r / 3]).collect();
    let moved: Vec<Vec<usize>> = want.iter().map(|c| vec![(c[1] + 1) % 4, (3 - 1 - c[0])]).collect();
    assert!(same_up_to_symmetry(&want, &dims, &moved, &[4, 3], true));
    assert!(
        !same_up_to_symmetry(&want, &dims, &moved, &[4, 3], false),
        "a rotation is no grid symmetry"
    );
    let mut swapped = moved.clone();
    swapped.swap(0, 5);
    assert!(!same_up_to_symmetry(&want, &dims, &swapped, &[4, 3], true));
    // 4 rings of 3 and 3 rings of 4: 24 edges; without wrap-around 4·2 + 3·3 = 17.
    assert_eq!(grid_edges(&dims, &want, true).len(), 24);
    assert_eq!(grid_edges(&dims, &want, false).len(), 17);
    // A dimension of 2 joins each pair once, one of 1 joins nothing: 2x1x3 torus = 3 + 2·3 = 9.
    let small: Vec<Vec<usize>> = (0..6).map(|r| vec![r % 2, 0, r / 2]).collect();
    assert_eq!(grid_edges(&[2, 1, 3], &small, true).len(), 9);
}

/// NPB DT (DT/dt.c: `buildBH`, `buildSH`; graph node i runs on rank i). Class W's black hole
/// gathers 8 sources (ranks 0–7) through comparators 8 + i reading sources 4i .. 4i+3 into the
/// sink, rank 10: a tree of fan-out 2 then 4, rooted at the sink. Class S's shuffle: comparator
/// 4 + i reads sources (i & !1) and (i & !1) + 1, sink 8 + i reads comparators 4 + (i & !2) and
/// 4 + (i & !2) + 2: a 2-dimensional butterfly. The sinks' checksums to rank 0 (8 bytes each) are
/// filtered out as light traffic.
#[test]
fn npb_dt_graphs_are_the_benchmarks_tree_and_butterfly() {
    let mut bh = Edges::new();
    for s in 0..8u32 {
        bh.insert(edge(s, 8 + s / 4));
    }
    bh.insert(edge(8, 10));
    bh.insert(edge(9, 10));
    let v = identify(&trace_of(&app_dir("npb-dt.W.BH.11")));
    check_graph("npb-dt.W.BH.11", &v, 11, &bh);
    assert_eq!(v["match"]["family"], "tree", "{}", v["match"]["label"]);
    assert_eq!(dims_of(&v["match"]), [2, 4]);
    let coords = coords_of(&v);
    assert_eq!(coords[10], [0, 0], "the sink is the root");
    for r in [8, 9] {
        assert_eq!(coords[r][0], 1, "comparator {r} is at depth 1");
    }
    for (r, c) in coords.iter().enumerate().take(8) {
        assert_eq!(c[0], 2, "source {r} is a leaf");
    }

    let mut sh = Edges::new();
    for i in 0..4u32 {
        for k in [0, 1] {
            sh.insert(edge((i & !1) + k, 4 + i));
            sh.insert(edge(4 + (i & !2) + 2 * k, 8 + i));
        }
    }
    let v = identify(&trace_of(&app_dir("npb-dt.S.SH.12")));
    check_graph("npb-dt.S.SH.12", &v, 12, &sh);
    assert_eq!(v["match"]["family"], "butterfly", "{}", v["match"]["label"]);
    assert_eq!(dims_of(&v["match"]), [2]);
}
