//! `tracelogic compare` on real application runs of `tests/data/apps` whose relation is known from
//! how they were recorded (docs/corpus.md): the same program (same input, isomorphic process grid)
//! under another rank placement must be judged similar; different programs (NAS LU, SP, CG, each
//! at 16 ranks) must not.

mod common;
use common::{code, json, run, stderr};

use std::path::{Path, PathBuf};

fn trace(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/apps").join(name);
    assert!(d.is_dir(), "{} is missing (part of the repository)", d.display());
    ["dumpi.tar.zst", "trace.tar.zst"]
        .iter()
        .map(|f| d.join(f))
        .find(|p| p.exists())
        .unwrap_or(d)
}

fn verdict(a: &str, b: &str) -> bool {
    let o = run(&[&"compare", &trace(a), &trace(b), &"--json"]);
    assert_eq!(code(&o), 0, "compare {a} {b}: {}", stderr(&o));
    let v = json(&o);
    v["similar"].as_bool().expect("a verdict")
}

/// LAMMPS's rank map `xzy` and a world-rank permutation (`-reorder custom`) change where ranks
/// sit, not the program: similar. A forced 1x3x4 processor grid is another domain decomposition
/// (sub-domains of another shape, so each direction carries other volumes), even though its
/// 4x3 torus is isomorphic to the default 2x2x3 one: the graphs agree (ε = 1) but the per-rank
/// volumes do not order the ranks alike, so it is not required to be similar (docs/similarity.md).
#[test]
fn lammps_under_other_rank_placements_is_similar() {
    assert!(verdict("lammps-melt-12", "lammps-melt-12-xzy"));
    assert!(verdict("lammps-melt-27", "lammps-melt-27-reorder"));
}

/// On one host an Open MPI rankfile moves ranks between cores; the program is the same.
#[test]
fn nas_lu_under_a_rankfile_is_similar() {
    assert!(verdict("npb-lu.S.16", "npb-lu.S.16-rankfile"));
}

#[test]
fn different_nas_benchmarks_are_not_similar() {
    for (a, b) in [
        ("npb-lu.S.16", "npb-sp.S.16"),
        ("npb-lu.S.16", "npb-cg.S.16"),
        ("npb-sp.S.16", "npb-cg.S.16"),
    ] {
        assert!(!verdict(a, b), "{a} vs {b}");
    }
}

/// Quantum ESPRESSO (FFTs by `MPI_Alltoall`, a ScaLAPACK 2x2 grid) is another program than
/// hpcc on 4 ranks and than LAMMPS on 8: not similar.
#[test]
fn quantum_espresso_is_not_another_program() {
    assert!(!verdict("qe-si-4", "hpcc-4"));
    assert!(!verdict("qe-si-8", "lammps-melt-8"));
}

/// Held-out runs (docs/corpus.md "Held-out check"): NAS BT and SP at class S on 4 ranks,
/// recorded by two tracers (OTF2 and SST DUMPI), are similar, as PACPM's Table 4 finds BT and SP;
/// LU on the same 4 ranks is another program.
#[test]
fn held_out_bt_and_sp_are_similar_and_lu_is_not() {
    assert!(verdict("otf2-npb-bt.S.4", "npb-sp.S.4"));
    assert!(!verdict("otf2-npb-lu.S.4", "npb-sp.S.4"));
    assert!(!verdict("otf2-npb-lu.S.4", "otf2-npb-bt.S.4"));
}
