//! Similarity of real-like runs: one program whose per-step compute time and message sizes vary
//! from step to step (as in any real run, where two runs never agree exactly), under several rank
//! placements, against itself and against unrelated programs on the same graph.

use tracelogic_analysis::similarity::{compare, Alignment, CompareOptions, Comparison, VerdictBasis};
use tracelogic_model::{CollectiveOp, P2pDir, Trace, NO_CALLPATH};

/// A small deterministic generator (SplitMix64) so the runs do not depend on another crate's
/// random streams.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// A standard normal draw (Box-Muller).
    fn normal(&mut self) -> f64 {
        let u = self.unit().max(1e-300);
        let v = self.unit();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

/// How the processes of a 3D decomposition are placed on world ranks.
#[derive(Clone, Copy, Debug)]
enum Placement {
    /// x fastest, then y, then z (the default Cartesian order).
    Xyz,
    /// x fastest, then z, then y (LAMMPS `map xzy`).
    Xzy,
    /// A random permutation (seeded).
    Random(u64),
}

/// A halo-exchange program on a periodic `dims` grid: `load[v]` is the work of subdomain `v`
/// relative to the mean (the program's own imbalance, the same in every run), and every step
/// each rank computes `load · (1 + noise · N(0,1))` and sends each neighbour a message of
/// `load · (1 + noise · N(0,1))` times the base size, then all ranks take part in an
/// `MPI_Allreduce`, and every 5 steps process (0,0,0) broadcasts.
struct Program {
    dims: [u32; 3],
    load: Vec<f64>,
    /// Whether process (0,0,0) broadcasts every 5 steps (the root that anchors the pairing).
    bcast: bool,
}

impl Program {
    /// Subdomain loads `1 + spread · u`, `u` uniform in [0, 1) from `seed`.
    fn new(dims: [u32; 3], spread: f64, seed: u64) -> Program {
        let n = dims.iter().product::<u32>() as usize;
        let mut rng = Rng(seed);
        Program {
            dims,
            load: (0..n).map(|_| 1.0 + spread * rng.unit()).collect(),
            bcast: true,
        }
    }

    fn n(&self) -> u32 {
        self.dims.iter().product()
    }

    fn coords(&self, v: u32) -> [u32; 3] {
        let [x, y, _] = self.dims;
        [v % x, (v / x) % y, v / (x * y)]
    }

    fn node(&self, c: [u32; 3]) -> u32 {
        let [x, y, _] = self.dims;
        c[0] + x * (c[1] + y * c[2])
    }

    /// The distinct periodic neighbours of node `v`.
    fn neighbours(&self, v: u32) -> Vec<u32> {
        let c = self.coords(v);
        let mut out = Vec::new();
        for d in 0..3 {
            for step in [1, self.dims[d] - 1] {
                let mut e = c;
                e[d] = (c[d] + step) % self.dims[d];
                let u = self.node(e);
                if u != v && !out.contains(&u) {
                    out.push(u);
                }
            }
        }
        out
    }

    /// `rank_of[v]`: the world rank playing node `v`.
    fn placement(&self, p: Placement) -> Vec<u32> {
        let n = self.n();
        let [x, y, z] = self.dims;
        match p {
            Placement::Xyz => (0..n).collect(),
            Placement::Xzy => (0..n)
                .map(|v| {
                    let [a, b, c] = self.coords(v);
                    a + x * (c + z * b)
                })
                .collect(),
            Placement::Random(seed) => {
                let _ = y;
                tracelogic_model::renumber::random_permutation(n, seed)
            }
        }
    }

    /// One run of `steps` steps with step-to-step variation `noise` (relative standard
    /// deviation of compute time and message size), placed by `placement`, noise from `seed`.
    fn run(&self, name: &str, placement: Placement, steps: u32, noise: f64, seed: u64) -> Trace {
        let n = self.n();
        let rank_of = self.placement(placement);
        let mut t = Trace::new("synthetic", name, n);
        let world = t.add_comm("MPI_COMM_WORLD", (0..n).collect());
        let mut rng = Rng(seed ^ 0x5eed);
        let root = rank_of[0];
        let mut clock = vec![0u64; n as usize];
        for step in 0..steps {
            for v in 0..n {
                let r = rank_of[v as usize];
                let load = self.load[v as usize];
                let compute = (1.0e6 * load * (1.0 + noise * rng.normal()).max(0.05)) as u64;
                let mut now = clock[r as usize] + compute;
                for u in self.neighbours(v) {
                    let peer = rank_of[u as usize];
                    let bytes = (8192.0 * load * (1.0 + noise * rng.normal()).max(0.05)) as u64;
                    let call = t.push_call(r, "MPI_Sendrecv", now, now + 2_000, NO_CALLPATH, 0);
                    t.push_p2p(r, call, call, P2pDir::Send, peer, 0, world, bytes);
                    t.push_p2p(r, call, call, P2pDir::Recv, peer, 0, world, 8192);
                    now += 2_000;
                }
                let call = t.push_call(r, "MPI_Allreduce", now, now + 5_000, NO_CALLPATH, 0);
                t.push_collective(r, call, CollectiveOp::Allreduce, world, 0, 8, 8);
                now += 5_000;
                if step % 5 == 0 && self.bcast {
                    let call = t.push_call(r, "MPI_Bcast", now, now + 3_000, NO_CALLPATH, 0);
                    t.push_collective(r, call, CollectiveOp::Bcast, world, root, 64, 64);
                    now += 3_000;
                }
                clock[r as usize] = now;
            }
        }
        t
    }
}

fn show(c: &Comparison) -> String {
    format!(
        "θ = {:.3} (temporal {:.3}, volume {:.3}, spatial {:.3}), ε = {:.3}, similar {}, paired by {:?}, \
         scored {}, steps {}, exhaustive {}, by rank θ {:.3}, chance {:?}, {}",
        c.theta,
        c.theta_temporal,
        c.theta_volume,
        c.theta_spatial,
        c.epsilon,
        c.similar,
        c.pairing.by,
        c.pairing.isomorphisms_scored,
        c.pairing.steps,
        c.pairing.exhaustive,
        c.pairing.theta_by_rank,
        c.pairing.theta_chance,
        c.pairing.anchor.summary()
    )
}

#[test]
#[ignore = "measurement"]
fn measure_same_program_under_placements() {
    for dims in [[2, 2, 2], [4, 2, 2], [4, 4, 2], [4, 4, 4], [3, 3, 3], [4, 3, 2]] {
        let p = Program::new(dims, 0.1, 1);
        let other = Program::new(dims, 0.1, 2);
        let a = p.run("a", Placement::Xyz, 50, 0.1, 10);
        for (label, b) in [
            ("xzy", p.run("b", Placement::Xzy, 50, 0.1, 11)),
            ("random", p.run("b", Placement::Random(7), 50, 0.1, 12)),
            ("other program", other.run("c", Placement::Xyz, 50, 0.1, 13)),
        ] {
            let t0 = std::time::Instant::now();
            let c = compare(&a, &b, &CompareOptions::default()).unwrap();
            println!("{dims:?} {label}: {} [{:?}] {:?}", show(&c), t0.elapsed(), c.left_out);
        }
    }
}

fn app(name: &str) -> Trace {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/apps")
        .join(name);
    // Larger runs are packed as one archive beside their ground truth.
    let packed = dir.join("dumpi.tar.zst");
    let input = if packed.exists() { packed } else { dir };
    let files = tracelogic_formats::fs::load_paths(&[input]).expect("app files");
    let mut t = tracelogic_formats::read_trace(files).expect("app trace");
    t.source = name.into();
    t
}

#[test]
#[ignore = "measurement"]
fn measure_lammps() {
    let a = app("lammps-melt-12");
    for other in ["lammps-melt-12-xzy", "lammps-melt-12-1x3x4"] {
        let b = app(other);
        let c = compare(&a, &b, &CompareOptions::default()).unwrap();
        println!(
            "{other}: {}\n pairing {:?}\n left out {:#?}",
            show(&c),
            c.pairing.ranks,
            c.left_out
        );
    }
}

fn sample(name: &str) -> Trace {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/samples")
        .join(name);
    let files = tracelogic_formats::fs::load_paths(&[dir]).expect("sample files");
    let mut t = tracelogic_formats::read_trace(files).expect("sample trace");
    t.source = name.into();
    t
}

#[test]
#[ignore = "measurement"]
fn measure_unrelated_real() {
    let lammps = app("lammps-melt-8");
    for other in ["npb-lu.S.8", "npb-mg.S.8"] {
        let c = compare(&lammps, &sample(other), &CompareOptions::default()).unwrap();
        println!("lammps-8 vs {other}: {} {:?}", show(&c), c.left_out);
    }
    use tracelogic_synth::{generate_nas, NasBenchmark, NasClass, NasSpec, Numbering};
    for (bn, sn) in [
        (Numbering::RowMajor, Numbering::RowMajor),
        (Numbering::Random, Numbering::RowMajor),
    ] {
        let bt = generate_nas(&NasSpec {
            numbering: bn,
            seed: 7,
            ..NasSpec::new(NasBenchmark::Bt, NasClass::S, 16)
        })
        .unwrap()
        .0;
        let sp = generate_nas(&NasSpec {
            numbering: sn,
            seed: 8,
            ..NasSpec::new(NasBenchmark::Sp, NasClass::S, 16)
        })
        .unwrap()
        .0;
        let c = compare(&bt, &sp, &CompareOptions::default()).unwrap();
        println!("BT-SP S 16: {} {:?}", show(&c), c.left_out);
    }
}

/// LAMMPS's own map of the trace's ranks (original, MPI_COMM_WORLD) to grid indices I J K.
fn grid_of_ranks(name: &str) -> std::collections::BTreeMap<u32, [u32; 3]> {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/apps")
        .join(name)
        .join("procs.map");
    let text = std::fs::read_to_string(path).expect("procs.map");
    text.lines()
        .filter_map(|l| {
            let mut fields = l.split(':');
            let ids: Vec<u32> = fields
                .next()?
                .split_whitespace()
                .map(|x| x.parse().ok())
                .collect::<Option<_>>()?;
            let ijk: Vec<u32> = fields
                .next()?
                .split_whitespace()
                .map(|x| x.parse().ok())
                .collect::<Option<_>>()?;
            (ids.len() == 3 && ijk.len() == 3).then(|| (ids[2], [ijk[0], ijk[1], ijk[2]]))
        })
        .collect()
}

#[test]
fn lammps_under_another_rank_placement_is_similar_and_paired_by_role() {
    // The same LAMMPS input and 2x2x3 grid, once with the default rank map, once with `map xzy`;
    // and the 27-rank 3x3x3 grid with world ranks permuted by `-reorder`: one program, so similar, with each rank
    // paired with the rank LAMMPS put on the same sub-domain (its own procs.map). Work is compute
    // time on a shared 2-core machine: left out. Partners: 4 everywhere, left out. Volume: the
    // ghost atoms of each sub-domain, the same in every run.
    for (first, other) in [
        ("lammps-melt-12", "lammps-melt-12-xzy"),
        ("lammps-melt-27", "lammps-melt-27-reorder"),
    ] {
        let (a, grid_a) = (app(first), grid_of_ranks(first));
        let b = app(other);
        let grid_b = grid_of_ranks(other);
        let c = compare(&a, &b, &CompareOptions::default()).unwrap();
        let what = format!("{other}: {}", show(&c));
        assert!(c.similar, "{what}");
        assert_eq!(c.verdict_on, VerdictBasis::ThetaAndEpsilon, "{what}");
        assert!(c.theta >= 0.9, "{what}");
        assert_eq!(c.epsilon, 1.0, "{what}");
        let left: Vec<&str> = c.left_out.iter().map(|l| l.property.as_str()).collect();
        assert_eq!(left, ["temporal", "spatial"], "{what}");
        // Which isomorphism the pairing is: the sub-domain correspondence, unless another one
        // keeps every volume in place as well (then θ is the same and either is a proof).
        assert!(c.pairing.exhaustive, "{what}");
        let truth: Vec<u32> = (0..a.num_ranks())
            .map(|r| {
                let at = grid_a[&r];
                *grid_b.iter().find(|(_, g)| **g == at).expect("the same grid").0
            })
            .collect();
        if c.pairing.ranks != truth {
            let va = &c.properties[1].observed_a;
            let vb = tracelogic_analysis::similarity::run_properties(&b, None).volume;
            let kept = (0..truth.len()).all(|r| va[r] == Some(vb[truth[r] as usize] as f64));
            assert!(
                kept && c.theta == 1.0,
                "{what}: paired {:?}, LAMMPS's map {truth:?}",
                c.pairing.ranks
            );
        }
        // By rank number the same pair is not similar: the placement changed the roles.
        let by_rank = compare(
            &a,
            &b,
            &CompareOptions {
                alignment: Alignment::Rank,
                ..CompareOptions::default()
            },
        )
        .unwrap();
        assert!(!by_rank.similar, "{other}: by rank θ {}", by_rank.theta);
    }
}

#[test]
fn unrelated_real_programs_are_not_similar() {
    // LAMMPS on 8 ranks (2x2x2 torus, a 3-cube) against NAS LU class S on 8 ranks (4x2 grid):
    // ε = 20/22 (the grid fits in the cube), but their volumes order the ranks unrelatedly.
    let c = compare(&app("lammps-melt-8"), &sample("npb-lu.S.8"), &CompareOptions::default()).unwrap();
    assert_eq!(c.verdict_on, VerdictBasis::ThetaAndEpsilon, "{}", show(&c));
    assert!(c.epsilon >= 0.6 && c.theta < 0.6 && !c.similar, "{}", show(&c));
    assert!(c.classification_certain);
}

#[test]
fn bt_and_sp_class_s_on_16_ranks_are_similar_without_conventions() {
    // PACPM Table 4 finds BT and SP similar. Class S on 16 ranks: 12³ points on 4 cells per axis,
    // so every BT rank sends the same bytes; both graphs are the same 6-regular stencil. The
    // paper's convention made θ_volume = 0 and θ_spatial = 1; here both are left out, work is
    // compute time (left out), θ is undefined and ε = 1 decides: similar, under any placement.
    use tracelogic_synth::{generate_nas, NasBenchmark, NasClass, NasSpec, Numbering};
    for (bn, sn) in [
        (Numbering::RowMajor, Numbering::RowMajor),
        (Numbering::Random, Numbering::RowMajor),
        (Numbering::Random, Numbering::Random),
    ] {
        let nas = |b, numbering, seed| {
            generate_nas(&NasSpec {
                numbering,
                seed,
                ..NasSpec::new(b, NasClass::S, 16)
            })
            .unwrap()
            .0
        };
        let bt = nas(NasBenchmark::Bt, bn, 7);
        let sp = nas(NasBenchmark::Sp, sn, 8);
        let c = compare(&bt, &sp, &CompareOptions::default()).unwrap();
        let what = format!("{bn} vs {sn}: {}", show(&c));
        assert!(c.similar && c.classification_certain, "{what}");
        assert!(c.theta.is_nan() && c.verdict_on == VerdictBasis::EpsilonAlone, "{what}");
        assert_eq!(c.epsilon, 1.0, "{what}");
        let volume = c
            .left_out
            .iter()
            .find(|l| l.property == "volume")
            .expect("volume left out");
        assert!(volume.reason.starts_with("first run: constant"), "{what}");
        let spatial = c
            .left_out
            .iter()
            .find(|l| l.property == "spatial")
            .expect("spatial left out");
        assert!(
            spatial.reason.starts_with("both runs: constant (every rank 6)"),
            "{what}"
        );
    }
}

#[test]
fn a_halo_exchange_with_step_noise_is_similar_to_itself_under_any_placement() {
    // One program (fixed sub-domain loads, ±10 % spread) on 3D tori, each step's compute and
    // message sizes varying by 10 % (a different draw in every run), placed in x-y-z order, in
    // x-z-y order (LAMMPS `map xzy`) and at random: similar, θ well above the threshold. Another
    // program (other sub-domain loads) on the same torus: not similar. Work is compute time
    // (left out); partners are constant (left out); volume follows the loads.
    for dims in [[4, 4, 4], [4, 4, 2], [4, 3, 2], [3, 3, 3]] {
        let p = Program::new(dims, 0.1, 1);
        let a = p.run("a", Placement::Xyz, 50, 0.1, 10);
        for (label, placement, seed) in [("xzy", Placement::Xzy, 11), ("random", Placement::Random(7), 12)] {
            let b = p.run("b", placement, 50, 0.1, seed);
            let c = compare(&a, &b, &CompareOptions::default()).unwrap();
            let what = format!("{dims:?} {label}: {}", show(&c));
            assert!(c.similar && c.theta >= 0.8, "{what}");
            assert!(c.pairing.exhaustive, "{what}");
        }
    }
    // Equal sub-domains (no imbalance): the ranks' volumes differ only by step-to-step variation,
    // which orders them differently in every part of the run. The volume is left out by the
    // test of rank-order evidence (its order would be a coin toss between two runs), θ is
    // undefined, and ε = 1 decides: similar.
    for dims in [[4, 4, 4], [4, 3, 2]] {
        let p = Program::new(dims, 0.0, 1);
        let a = p.run("a", Placement::Xyz, 50, 0.1, 10);
        let b = p.run("b", Placement::Random(7), 50, 0.1, 11);
        let c = compare(&a, &b, &CompareOptions::default()).unwrap();
        let what = format!("{dims:?} equal loads: {} {:?}", show(&c), c.left_out);
        let volume = c.left_out.iter().find(|l| l.property == "volume");
        assert!(volume.is_some_and(|l| l.reason.contains("Friedman")), "{what}");
        assert!(c.theta.is_nan() && c.similar, "{what}");
    }
    for dims in [[4, 4, 4], [4, 4, 2], [4, 3, 2]] {
        let a = Program::new(dims, 0.1, 1).run("a", Placement::Xyz, 50, 0.1, 10);
        let other = Program::new(dims, 0.1, 2).run("c", Placement::Xyz, 50, 0.1, 13);
        let c = compare(&a, &other, &CompareOptions::default()).unwrap();
        assert!(!c.similar && c.classification_certain, "{dims:?}: {}", show(&c));
    }
}

#[test]
#[ignore = "measurement"]
fn measure_sp_mg() {
    use tracelogic_analysis::similarity::{friedman, run_properties};
    use tracelogic_synth::{generate_nas, NasBenchmark, NasClass, NasSpec};
    for iterations in [Some(1), None] {
        let nas = |b| {
            generate_nas(&NasSpec {
                iterations,
                ..NasSpec::new(b, NasClass::B, 16)
            })
            .unwrap()
            .0
        };
        let (sp, mg) = (nas(NasBenchmark::Sp), nas(NasBenchmark::Mg));
        let c = compare(&sp, &mg, &CompareOptions::default()).unwrap();
        println!("{iterations:?}: {} {:#?}", show(&c), c.left_out);
        let p = run_properties(&mg, None);
        let parts = p.parts.unwrap();
        println!("mg sends {:?}", p.sends);
        for r in 0..4 {
            println!("mg rank {r} volume parts {:?}", parts.volume[r]);
        }
        let v: Vec<Vec<f64>> = parts
            .volume
            .iter()
            .map(|v| v.iter().map(|&x| x as f64).collect())
            .collect();
        println!("friedman {:?}", friedman(&v));
    }
}

#[test]
#[ignore = "measurement"]
fn measure_unanchored_tori() {
    for dims in [
        [2, 2, 2],
        [4, 2, 2],
        [4, 4, 2],
        [3, 3, 3],
        [4, 4, 4],
        [4, 3, 2],
        [6, 4, 2],
        [8, 4, 2],
    ] {
        let mut p = Program::new(dims, 0.1, 1);
        p.bcast = false;
        let mut other = Program::new(dims, 0.1, 2);
        other.bcast = false;
        let a = p.run("a", Placement::Xyz, 50, 0.1, 10);
        for (label, b) in [
            ("random", p.run("b", Placement::Random(7), 50, 0.1, 12)),
            ("other program", other.run("c", Placement::Xyz, 50, 0.1, 13)),
        ] {
            let t0 = std::time::Instant::now();
            let c = compare(&a, &b, &CompareOptions::default()).unwrap();
            println!("{dims:?} {label}: {} [{:?}]", show(&c), t0.elapsed());
        }
    }
}

#[test]
#[ignore = "measurement"]
fn measure_bt_sp_compute_time() {
    use tracelogic_synth::{generate_nas, NasBenchmark, NasClass, NasSpec};
    for ranks in [16, 64] {
        let nas = |b| {
            generate_nas(&NasSpec {
                iterations: Some(1),
                ..NasSpec::new(b, NasClass::B, ranks)
            })
            .unwrap()
            .0
        };
        let c = compare(
            &nas(NasBenchmark::Bt),
            &nas(NasBenchmark::Sp),
            &CompareOptions::default(),
        )
        .unwrap();
        println!("BT-SP B {ranks} compute time: {}", show(&c));
    }
}

#[test]
fn real_nas_runs_same_program_similar_different_programs_not() {
    // NAS LU class S on 16 ranks, once as Open MPI placed it and once under a rankfile that
    // moves ranks between cores: one program. LU, SP and CG (class S, 16 ranks): three programs.
    let lu = app("npb-lu.S.16");
    let c = compare(&lu, &app("npb-lu.S.16-rankfile"), &CompareOptions::default()).unwrap();
    assert!(
        c.similar && c.theta >= 0.9,
        "LU vs LU-rankfile: {} {:?}",
        show(&c),
        c.left_out
    );
    let (sp, cg) = (app("npb-sp.S.16"), app("npb-cg.S.16"));
    for (x, y) in [(&lu, &sp), (&lu, &cg), (&sp, &cg)] {
        let c = compare(x, y, &CompareOptions::default()).unwrap();
        let what = format!("{} vs {}: {} {:?}", x.source, y.source, show(&c), c.left_out);
        assert!(!c.similar && c.classification_certain, "{what}");
    }
}
