//! The NAS CG family against a literal transcription of NPB 3.4 cg.f (`setup_submatrix_info`:
//! `proc_row`, `proc_col`, `exch_proc`, the `reduce_exch_proc` loop) and setparams.c (the
//! process grid), its degree histogram against the built graph, and its proof under random
//! numbering from 4 to 1,024 ranks.

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::collections::BTreeSet;
use tracelogic_graph::catalog::{candidates, simplicity};
use tracelogic_graph::families::nas_cg_grid;
use tracelogic_graph::iso::{isomorphism, verify, IsoOptions, IsoOutcome};
use tracelogic_graph::{Direction, Family, Graph, TopologySpec};

/// setparams.c: `num_proc_cols = num_proc_rows = ilog2(nprocs)/2; if (cols+rows != ilog2)
/// cols += 1;` then both become powers of two.
fn npb_grid(nprocs: u32) -> (u32, u32) {
    let l = nprocs.trailing_zeros();
    let (mut cols, rows) = (l / 2, l / 2);
    if cols + rows != l {
        cols += 1;
    }
    (1 << rows, 1 << cols)
}

/// The partners cg.f gives rank `me`, written as the Fortran does it (integer division and
/// `mod`, the `div_factor` halving loop); self-exchanges carry no message and are left out.
fn npb_partners(me: u32, nprows: u32, npcols: u32) -> Vec<u32> {
    let proc_row = me / npcols;
    let proc_col = me - proc_row * npcols;
    let exch_proc = if npcols == nprows {
        (me % nprows) * nprows + me / nprows
    } else {
        2 * ((me / 2 % nprows) * nprows + me / 2 / nprows) + me % 2
    };
    let mut l2npcols = 0;
    let mut i = npcols / 2;
    while i > 0 {
        l2npcols += 1;
        i /= 2;
    }
    let mut out = Vec::new();
    let mut div_factor = npcols;
    for _ in 0..l2npcols {
        let j = (proc_col + div_factor / 2) % div_factor + proc_col / div_factor * div_factor;
        out.push(proc_row * npcols + j);
        div_factor /= 2;
    }
    // The transpose exchange happens only `if (l2npcols .ne. 0)`.
    if l2npcols != 0 {
        out.push(exch_proc);
    }
    out.retain(|&p| p != me);
    out
}

fn npb_graph(nprocs: u32) -> Graph {
    let (rows, cols) = npb_grid(nprocs);
    Graph::from_edges(
        nprocs,
        (0..nprocs).flat_map(|me| npb_partners(me, rows, cols).into_iter().map(move |p| (me, p))),
    )
}

fn cg(n: u32) -> TopologySpec {
    TopologySpec::new(Family::NasCg, nas_cg_grid(n).unwrap().to_vec()).unwrap()
}

#[test]
fn the_grid_is_npb_s() {
    for l in 0..=20 {
        let n = 1u32 << l;
        let (rows, cols) = npb_grid(n);
        assert_eq!(nas_cg_grid(n), Some([rows, cols]), "{n} ranks");
    }
    assert_eq!(nas_cg_grid(16), Some([4, 4]));
    assert_eq!(nas_cg_grid(32), Some([4, 8]));
    assert_eq!(nas_cg_grid(12), None);
}

#[test]
fn the_graph_is_the_exchanges_of_cg_f() {
    for l in 1..=12 {
        let n = 1u32 << l;
        let spec = cg(n);
        let ours: BTreeSet<(u32, u32)> = spec.graph().edges().collect();
        let npb: BTreeSet<(u32, u32)> = npb_graph(n).edges().collect();
        assert_eq!(ours, npb, "{n} ranks");
        // The exchange is symmetric: every partner names the rank back.
        let (rows, cols) = npb_grid(n);
        for me in 0..n {
            for p in npb_partners(me, rows, cols) {
                assert!(npb_partners(p, rows, cols).contains(&me), "{n}: {me} -> {p} not mutual");
            }
        }
    }
}

#[test]
fn hand_checked_partners() {
    // 16 ranks, 4x4: rank 1 = (row 0, col 1): row partners 0 (bit 0) and 3 (bit 1), transpose 4.
    let s = cg(16);
    let names: Vec<(String, u32)> = s.neighbours(1).into_iter().map(|(d, v)| (d.name(), v)).collect();
    assert_eq!(
        names,
        vec![("row-bit0".into(), 0), ("row-bit1".into(), 3), ("transpose".into(), 4)]
    );
    assert_eq!(s.coords(6), vec![1, 2]);
    assert_eq!(s.label(), "NAS CG 4x4");
    // Diagonal ranks are their own transpose partner: no such edge.
    assert_eq!(s.neighbour(5, &Direction::Transpose), None);
    assert_eq!(s.neighbours(5).len(), 2);
    // 8 ranks, 2x4: pairs (2h, 2h+1) transposed on a 2x2 grid: 2 <-> 4, 3 <-> 5, 0/1 and 6/7 alone.
    let s = cg(8);
    assert_eq!(s.dims, vec![2, 4]);
    assert_eq!(s.neighbour(2, &Direction::Transpose), Some(4));
    assert_eq!(s.neighbour(5, &Direction::Transpose), Some(3));
    assert_eq!(s.neighbour(0, &Direction::Transpose), None);
    assert_eq!(s.neighbour(7, &Direction::Transpose), None);
    assert_eq!(s.graph().num_edges(), 8 + 2);
    // The opposite of each CG direction is itself.
    assert_eq!(s.opposite(2, &Direction::RowBit(1)), Some(Direction::RowBit(1)));
    assert_eq!(s.opposite(2, &Direction::Transpose), Some(Direction::Transpose));
}

#[test]
fn dimensions_are_checked_and_the_shorthand_is_npb_s_grid() {
    assert_eq!(TopologySpec::parse("nas-cg:4x8").unwrap().dims, vec![4, 8]);
    assert_eq!(TopologySpec::parse("nas-cg:5").unwrap().dims, vec![4, 8]);
    assert_eq!(TopologySpec::parse("nas-cg:5").unwrap().num_nodes(), 32);
    for bad in ["nas-cg:4x2", "nas-cg:3x3", "nas-cg:4x16", "nas-cg:2x2x2", "nas-cg:31"] {
        let e = TopologySpec::parse(bad).unwrap_err();
        assert!(e.contains("nas-cg"), "{bad}: {e}");
    }
}

#[test]
fn degree_histogram_matches_the_built_graph() {
    for l in 0..=14 {
        let s = cg(1 << l);
        let g = s.graph();
        assert_eq!(s.degree_histogram(), g.degree_histogram(), "{}", s.label());
        assert_eq!(s.edge_count(), g.num_edges() as u64, "{}", s.label());
    }
}

#[test]
fn listed_for_powers_of_two_only_and_named_after_simpler_families() {
    for n in [2u32, 4, 8, 64, 1024] {
        assert!(candidates(n).contains(&cg(n)), "{n}");
    }
    for n in [6u32, 12, 100] {
        assert!(candidates(n).iter().all(|c| c.family != Family::NasCg), "{n}");
    }
    // CG on 4 ranks is a 4-node line (0-1 and 2-3 in rows, 1-2 transposed): the line is simpler.
    let line = TopologySpec::parse("line:4").unwrap();
    assert!(matches!(
        isomorphism(&cg(4).graph(), &line.graph(), IsoOptions::for_nodes(4)),
        IsoOutcome::Isomorphic { .. }
    ));
    assert!(simplicity(&line) < simplicity(&cg(4)));
    for other in candidates(64) {
        if other.family != Family::NasCg {
            assert!(simplicity(&other) < simplicity(&cg(64)), "{}", other.label());
        }
    }
}

#[test]
fn proved_under_random_numbering_from_4_to_1024_ranks() {
    let mut rng = StdRng::seed_from_u64(2024);
    for l in 2..=10 {
        let n = 1u32 << l;
        let g = cg(n).graph();
        for _ in 0..3 {
            let mut perm: Vec<u32> = (0..n).collect();
            perm.shuffle(&mut rng);
            let h = g.relabel(&perm);
            match isomorphism(&h, &g, IsoOptions::for_nodes(n)) {
                IsoOutcome::Isomorphic { mapping, .. } => verify(&h, &g, &mapping).unwrap(),
                other => panic!("{n} ranks: {other:?}"),
            }
        }
    }
}

#[test]
fn hypercube_rows_hand_over_to_individualisation_within_the_default_budget() {
    // Randomly numbered CG of 4,096 ranks (rows are 6-cubes) and a 448-node butterfly: the
    // plain ordered search alone gave up on both with the old budget split.
    let mut rng = StdRng::seed_from_u64(4096);
    for spec in [cg(4096), TopologySpec::parse("butterfly:6").unwrap()] {
        let g = spec.graph();
        let mut perm: Vec<u32> = (0..g.num_nodes()).collect();
        perm.shuffle(&mut rng);
        let h = g.relabel(&perm);
        match isomorphism(&h, &g, IsoOptions::for_nodes(g.num_nodes())) {
            IsoOutcome::Isomorphic { mapping, .. } => verify(&h, &g, &mapping).unwrap(),
            other => panic!("{}: {other:?}", spec.label()),
        }
    }
}
