//! Similarity does not depend on how either run placed its processes on ranks (PACPM Tables 3
//! and 4 under recorded and random placements). The judges compare NAS runs recorded with
//! ordinary and permuted placements; θ pairs each rank with the rank that plays its role in the
//! other run's graph (the best-θ isomorphism, `docs/similarity.md`), so the verdict is the same
//! under every numbering. NAS skeletons from `tracelogic_synth::generate_nas`, one time step
//! (the per-rank properties are per-step patterns repeated).

use tracelogic_analysis::similarity::{
    compare, compare_properties, run_properties, Alignment, CompareOptions, Comparison, PairedBy,
};
use tracelogic_model::renumber::random_permutation;
use tracelogic_model::Trace;
use tracelogic_synth::{generate_nas, NasBenchmark, NasClass, NasSpec, Numbering};

use NasBenchmark::{Bt, Lu, Mg, Sp};

mod similarity_support;
// The skeletons get a floating-point counter per rank equal to their modelled compute time (the
// skeleton derives compute time from the benchmark's operation counts), so that the temporal
// property enters θ as with PAPI_FP_OPS in the paper's runs.
use similarity_support::with_work_counter;
use NasClass::{A, B, C};

/// A skeleton of one time step under `numbering` (its random numbering drawn from `seed`).
fn nas(b: NasBenchmark, class: NasClass, ranks: u32, numbering: Numbering, seed: u64) -> Trace {
    let spec = NasSpec {
        iterations: Some(1),
        numbering,
        seed,
        ..NasSpec::new(b, class, ranks)
    };
    let mut t = generate_nas(&spec)
        .unwrap_or_else(|e| panic!("{b} {class} {ranks}: {e}"))
        .0;
    t.source = format!("{b}.{class}.{ranks} {numbering} {seed}");
    with_work_counter(t)
}

/// The world rank playing NAS process 0: the rank of the first `MPI_Bcast` rooted anywhere.
fn process_zero(t: &Trace) -> u32 {
    t.ranks
        .iter()
        .flat_map(|rt| rt.collectives.root.iter().copied())
        .find(|&r| r != tracelogic_model::NO_ROOT)
        .expect("a rooted collective")
}

/// The placements tried for each run: as recorded (row-major) and two random ones.
const PLACEMENTS: [(Numbering, u64); 3] = [
    (Numbering::RowMajor, 0),
    (Numbering::Random, 11),
    (Numbering::Random, 12),
];

/// Equal θ values, undefined ones included.
fn same_theta(x: f64, y: f64) -> bool {
    (x.is_nan() && y.is_nan()) || (x - y).abs() < 1e-9
}

/// θ is the mean of its parts, the pairing is a bijection, and the second run's volumes are
/// shown through it.
fn check(c: &Comparison, second: &Trace) {
    let defined: Vec<f64> = [c.theta_temporal, c.theta_volume, c.theta_spatial]
        .into_iter()
        .filter(|t| !t.is_nan())
        .collect();
    assert_eq!(defined.len() + c.left_out.len(), 3);
    if defined.is_empty() {
        assert!(c.theta.is_nan());
    } else {
        let mean = defined.iter().sum::<f64>() / defined.len() as f64;
        assert!((c.theta - mean).abs() < 1e-12, "{} vs {mean}", c.theta);
    }
    let mut paired = c.pairing.ranks.clone();
    paired.sort_unstable();
    assert_eq!(paired, (0..c.ranks).collect::<Vec<u32>>(), "a bijection of the ranks");
    let volume = run_properties(second, None).volume;
    let shown: Vec<Option<f64>> = c
        .pairing
        .ranks
        .iter()
        .map(|&j| Some(volume[j as usize] as f64))
        .collect();
    assert_eq!(c.properties[1].observed_b, shown);
    assert_eq!(
        c.alignment == "rank",
        c.pairing.ranks == (0..c.ranks).collect::<Vec<u32>>()
    );
}

#[test]
fn bt_and_sp_are_similar_under_any_placement() {
    // Table 4: BT-SP similar on 16 and 64 ranks, class B (θ 0.667, ε 1); the same for class A.
    // The paper's θ came from its conventions (BT's constant volume counted 0, the constant
    // partners 1). Without them, class A leaves no property (ε = 1 decides: similar), class B on
    // 64 ranks is similar by θ, and class B on 16 ranks is where the skeletons depart: BT's and
    // SP's volumes and work agree less (θ ≈ 0.54, docs/similarity.md), so only placement
    // independence is asserted there.
    for class in [A, B] {
        for ranks in [16u32, 64] {
            let mut thetas = Vec::new();
            for (bn, bs) in PLACEMENTS {
                for (sn, ss) in PLACEMENTS {
                    let bt = nas(Bt, class, ranks, bn, bs);
                    let sp = nas(Sp, class, ranks, sn, ss);
                    let c = compare(&bt, &sp, &CompareOptions::default()).unwrap();
                    check(&c, &sp);
                    let what = format!(
                        "{} vs {}: θ {} (temporal {}, volume {}) ε {}",
                        bt.source, sp.source, c.theta, c.theta_temporal, c.theta_volume, c.epsilon
                    );
                    println!("{what}");
                    assert!(c.classification_certain, "{what}");
                    if (class, ranks) != (B, 16) {
                        assert!(c.similar, "{what}");
                    }
                    assert_eq!(c.epsilon, 1.0, "{what}");
                    assert_eq!(c.pairing.by, PairedBy::BestIsomorphism, "{what}");
                    assert!(c.pairing.exhaustive, "{what}");
                    // Both root their broadcasts and reductions at NAS process 0, whatever world
                    // rank plays it: the search keeps the two roots paired.
                    let anchor = &c.pairing.anchor;
                    assert!(anchor.used, "{what}: {anchor:?}");
                    let (ra, rb) = (anchor.rank_a.unwrap(), anchor.rank_b.unwrap());
                    assert_eq!(ra, process_zero(&bt), "{what}");
                    assert_eq!(rb, process_zero(&sp), "{what}");
                    assert_eq!(c.pairing.ranks[ra as usize], rb, "{what}");
                    // The best pairing is at least as good as pairing equal rank numbers.
                    if class == A {
                        // Class A: BT's volume and both runs' partners are constant, and both
                        // runs' work too: no property is left for θ, ε = 1 decides.
                        assert!(c.theta.is_nan() && c.pairing.theta_chance.is_none(), "{what}");
                    } else {
                        assert!(c.theta >= c.pairing.theta_by_rank - 1e-12, "{what}: {:?}", c.pairing);
                        // Shuffled per-rank values reach less by the same maximisation.
                        let chance = c.pairing.theta_chance.expect("the chance level at 16 and 64 ranks");
                        assert!(chance < c.theta - 0.1, "{what}: chance {chance}");
                    }
                    thetas.push((what, c.theta));
                }
            }
            // Every placement of either run gives the same θ.
            for (what, theta) in &thetas {
                assert!(same_theta(*theta, thetas[0].1), "{what} against {}", thetas[0].0);
            }
        }
    }
}

#[test]
fn the_paper_pairing_of_a_randomly_placed_bt_is_not_similar_to_sp() {
    // What the best pairing fixes: pairing equal rank numbers, a random placement of BT pairs
    // processes of different roles, and θ falls below the threshold.
    for ranks in [16u32, 64] {
        let bt = nas(Bt, B, ranks, Numbering::Random, 11);
        let sp = nas(Sp, B, ranks, Numbering::RowMajor, 0);
        let by_rank = CompareOptions {
            alignment: Alignment::Rank,
            ..CompareOptions::default()
        };
        let c = compare(&bt, &sp, &by_rank).unwrap();
        assert_eq!(c.pairing.by, PairedBy::RankNumber);
        assert!(!c.similar, "{ranks}: θ {}", c.theta);
        let best = compare(&bt, &sp, &CompareOptions::default()).unwrap();
        assert!(best.similar || ranks == 16, "{ranks}: θ {}", best.theta);
        assert!(best.theta >= c.theta, "{ranks}: θ {} < {}", best.theta, c.theta);
        assert_eq!(best.pairing.theta_by_rank, c.theta, "{ranks}");
    }
}

#[test]
fn table_4_dissimilar_pairs_stay_dissimilar_under_any_placement() {
    // LU-MG, BT-LU, LU-SP, SP-MG, BT-MG: not similar on 16 and 64 ranks, class B.
    for ranks in [16u32, 64] {
        for (x, y) in [(Lu, Mg), (Bt, Lu), (Lu, Sp), (Sp, Mg), (Bt, Mg)] {
            // The common-subgraph search of SP or BT against MG runs to its budget (about 2 s
            // unoptimised): three of the nine placement pairs.
            for ((xn, xs), (yn, ys)) in [
                (PLACEMENTS[0], PLACEMENTS[0]),
                (PLACEMENTS[1], PLACEMENTS[0]),
                (PLACEMENTS[1], PLACEMENTS[2]),
            ] {
                let a = nas(x, B, ranks, xn, xs);
                let b = nas(y, B, ranks, yn, ys);
                let c = compare(&a, &b, &CompareOptions::default()).unwrap();
                check(&c, &b);
                assert!(
                    !c.similar && c.classification_certain,
                    "{} vs {}: θ {} ε {}",
                    a.source,
                    b.source,
                    c.theta,
                    c.epsilon
                );
            }
        }
    }
}

#[test]
fn table_3_same_program_other_class_under_any_placement() {
    // Table 3 (16 ranks): each program against itself at another problem size has ε = 1. θ is
    // the same under every numbering of either run, and at least the θ of the two runs as
    // recorded paired by rank numbers (the paper's reading). Classes B and C: similar for all
    // four programs (θ ≥ 0.885, the table's lowest); LU and MG for every pair of classes. The
    // class A skeletons of BT and SP (64³ points, 4 cells per axis) give every rank the same
    // work (and BT the same volume), so against B or C a property constant in one run only has
    // θ_i = 0 by convention (the paper divided by measured FLOP counts, never exactly equal).
    for b in [Bt, Lu, Sp, Mg] {
        for (x, y) in [(A, B), (B, C), (C, A)] {
            let recorded = compare(
                &nas(b, x, 16, Numbering::RowMajor, 0),
                &nas(b, y, 16, Numbering::RowMajor, 0),
                &CompareOptions::default(),
            )
            .unwrap();
            for (xn, xs) in PLACEMENTS {
                for (yn, ys) in PLACEMENTS {
                    let a = nas(b, x, 16, xn, xs);
                    let c_run = nas(b, y, 16, yn, ys);
                    let c = compare(&a, &c_run, &CompareOptions::default()).unwrap();
                    check(&c, &c_run);
                    let what = format!("{} vs {}: θ {} ε {}", a.source, c_run.source, c.theta, c.epsilon);
                    assert_eq!(c.epsilon, 1.0, "{what}");
                    assert!(
                        same_theta(c.theta, recorded.theta),
                        "{what}: recorded {}",
                        recorded.theta
                    );
                    assert!(
                        c.theta.is_nan() || c.theta >= recorded.pairing.theta_by_rank - 1e-12,
                        "{what}"
                    );
                    if (x, y) == (B, C) || matches!(b, Lu | Mg) {
                        assert!(c.similar && c.classification_certain, "{what}");
                        assert!(c.theta.is_nan() || c.theta >= 0.885, "{what}");
                    }
                }
            }
        }
    }
}

#[test]
fn a_renumbered_skeleton_against_itself_has_theta_one() {
    for (b, ranks) in [(Bt, 16u32), (Sp, 64), (Lu, 16), (Mg, 64)] {
        let t = nas(b, B, ranks, Numbering::RowMajor, 0);
        for seed in [1, 2] {
            let perm = random_permutation(ranks, seed);
            let copy = t.renumber_ranks(&perm).unwrap();
            let c = compare(&t, &copy, &CompareOptions::default()).unwrap();
            assert_eq!((c.theta, c.epsilon), (1.0, 1.0), "{} seed {seed}", t.source);
            assert_eq!(c.pairing.by, PairedBy::SameProperties, "{} seed {seed}", t.source);
            // Unrelated values reach less under the graph's symmetries: θ = 1 is evidence.
            let chance = c.pairing.theta_chance;
            assert!(
                chance.is_some_and(|x| x < 1.0) && !c.theta_at_chance,
                "{} seed {seed}: {chance:?}",
                t.source
            );
        }
    }
}

#[test]
fn the_best_pairing_is_symmetric_and_renaming_either_run_keeps_it() {
    // θ(a, b) = θ(b, a), and the pairing found for a renamed run is a pairing of the same θ.
    let bt = run_properties(&nas(Bt, A, 64, Numbering::Random, 3), None);
    let sp = run_properties(&nas(Sp, A, 64, Numbering::RowMajor, 0), None);
    let opts = CompareOptions::default();
    let ab = compare_properties(&bt, &sp, &opts).unwrap();
    let ba = compare_properties(&sp, &bt, &opts).unwrap();
    assert!(same_theta(ab.theta, ba.theta), "{} vs {}", ab.theta, ba.theta);
    assert_eq!(ab.pairing.by, PairedBy::BestIsomorphism);
    // The reported pairing maps the graph of the first run onto the second's.
    let edges_b: std::collections::BTreeSet<[u32; 2]> = sp.edges.iter().copied().collect();
    for &[u, v] in &bt.edges {
        let (x, y) = (ab.pairing.ranks[u as usize], ab.pairing.ranks[v as usize]);
        assert!(edges_b.contains(&[x.min(y), x.max(y)]), "{u}-{v} -> {x}-{y}");
    }
}

#[test]
fn a_search_out_of_steps_says_so() {
    let bt = nas(Bt, B, 64, Numbering::Random, 11);
    let sp = nas(Sp, B, 64, Numbering::RowMajor, 0);
    let tight = CompareOptions {
        max_pairing_steps: Some(50),
        ..CompareOptions::default()
    };
    let c = compare(&bt, &sp, &tight).unwrap();
    check(&c, &sp);
    assert!(!c.pairing.exhaustive);
    assert!(c.pairing.steps <= 50, "{}", c.pairing.steps);
    let full = compare(&bt, &sp, &CompareOptions::default()).unwrap();
    assert!(c.theta <= full.theta + 1e-12, "{} > {}", c.theta, full.theta);
    // Below the threshold, a cut search leaves the verdict open.
    assert_eq!(c.classification_certain, c.similar, "θ {}", c.theta);
}

/// Table 3 and 4 values with the pairing anchored on the collective roots and without (the
/// roots removed from the properties), under recorded and random placements: the figures of
/// `docs/similarity.md`.
/// `cargo test --release -p tracelogic-analysis --test similarity_placement anchored -- --ignored --nocapture`
#[test]
#[ignore = "measurement (about 30 s in release): numbers in docs/similarity.md"]
fn anchored_and_free_best_pairing_on_the_nas_tables() {
    let row = |x: NasBenchmark, xc: NasClass, y: NasBenchmark, yc: NasClass, ranks: u32| {
        let mut thetas = Vec::new();
        let mut line = String::new();
        for ((xn, xs), (yn, ys)) in [
            (PLACEMENTS[0], PLACEMENTS[0]),
            (PLACEMENTS[1], PLACEMENTS[0]),
            (PLACEMENTS[1], PLACEMENTS[2]),
        ] {
            let a = run_properties(&nas(x, xc, ranks, xn, xs), None);
            let b = run_properties(&nas(y, yc, ranks, yn, ys), None);
            let t = std::time::Instant::now();
            let c = compare_properties(&a, &b, &CompareOptions::default()).unwrap();
            let ms = t.elapsed().as_secs_f64() * 1e3;
            let free_a = tracelogic_analysis::similarity::RunProperties { roots: vec![], ..a };
            let f = compare_properties(&free_a, &b, &CompareOptions::default()).unwrap();
            let chance = |c: &Comparison| c.pairing.theta_chance.map_or("-".into(), |t| format!("{t:.3}"));
            if line.is_empty() {
                line = format!(
                    "| {x}–{y} {xc}/{yc} | {ranks} | {:.3} | {} | {:?}/{:?} |",
                    c.pairing.theta_by_rank,
                    c.pairing.anchor.summary(),
                    c.pairing.anchor.anchored_isomorphisms,
                    c.pairing.anchor.isomorphisms,
                );
            }
            line.push_str(&format!(
                " {:.3} ({}) / {:.3} ({}) {} {ms:.0} ms |",
                c.theta,
                chance(&c),
                f.theta,
                chance(&f),
                if c.similar { "similar" } else { "not" }
            ));
            thetas.push(c.theta);
        }
        println!("{line}");
    };
    println!("| pair | ranks | recorded, rank numbers | anchor | anchored/all | recorded: anchored θ (chance) / free θ (chance) | BT random 11 vs recorded | random 11 vs random 12 |");
    for ranks in [16u32, 64] {
        for (x, y) in [(Bt, Sp), (Lu, Mg), (Bt, Lu), (Lu, Sp), (Sp, Mg), (Bt, Mg)] {
            row(x, B, y, B, ranks);
        }
    }
    for b in [Bt, Lu, Sp, Mg] {
        for (x, y) in [(A, B), (B, C), (C, A)] {
            row(b, x, b, y, 16);
        }
    }
    for class in [A, C] {
        for ranks in [16u32, 64] {
            row(Bt, class, Sp, class, ranks);
        }
    }
}

/// Cost of the anchored best pairing on BT randomly placed against SP as recorded at 256 and
/// 1,024 ranks (class B, and C at 1,024), against the free search (roots removed).
/// `cargo test --release -p tracelogic-analysis --test similarity_placement bt_sp_cost -- --ignored --nocapture`
#[test]
#[ignore = "measurement (about 20 s in release): numbers in docs/similarity.md"]
fn bt_sp_cost_of_the_anchored_pairing() {
    for (class, ranks) in [(B, 256u32), (B, 1024), (C, 1024)] {
        let a = run_properties(&nas(Bt, class, ranks, Numbering::Random, 11), None);
        let b = run_properties(&nas(Sp, class, ranks, Numbering::RowMajor, 0), None);
        let mut line = format!("| BT {class} random 11 vs SP {class} | {ranks} |");
        for anchored in [true, false] {
            let a = if anchored {
                a.clone()
            } else {
                tracelogic_analysis::similarity::RunProperties {
                    roots: vec![],
                    ..a.clone()
                }
            };
            let t = std::time::Instant::now();
            let c = compare_properties(&a, &b, &CompareOptions::default()).unwrap();
            let ms = t.elapsed().as_secs_f64() * 1e3;
            assert_eq!(c.pairing.anchor.used, anchored);
            line.push_str(&format!(
                " {:.3} (rank numbers {:.3}), {} scored, {:.2} M steps, {}, {ms:.0} ms |",
                c.theta,
                c.pairing.theta_by_rank,
                c.pairing.isomorphisms_scored,
                c.pairing.steps as f64 / 1e6,
                if c.pairing.exhaustive { "exhaustive" } else { "cut" }
            ));
        }
        println!("{line}");
    }
}

/// Tables 3 and 4 on the skeletons without conventions, with the modelled work as a counter:
/// the figures of `docs/similarity.md`.
/// `cargo test --release -p tracelogic-analysis --test similarity_placement tables -- --ignored --nocapture`
#[test]
#[ignore = "measurement (a few seconds in release): numbers in docs/similarity.md"]
fn tables_3_and_4_without_conventions() {
    let f = |x: f64| {
        if x.is_nan() {
            "—".to_string()
        } else {
            format!("{x:.3}")
        }
    };
    let row = |what: String, c: &Comparison| {
        let left: Vec<&str> = c.left_out.iter().map(|l| l.property.as_str()).collect();
        println!(
            "| {what} | {} | {} | {} | {} | {:.3} | {} | {} |",
            f(c.theta_temporal),
            f(c.theta_volume),
            f(c.theta_spatial),
            f(c.theta),
            c.epsilon,
            left.join(", "),
            if c.similar { "similar" } else { "not similar" }
        );
    };
    println!("Table 4");
    for ranks in [16u32, 64] {
        for (x, y) in [(Bt, Sp), (Lu, Mg), (Bt, Lu), (Lu, Sp), (Sp, Mg), (Bt, Mg)] {
            let a = nas(x, B, ranks, Numbering::RowMajor, 0);
            let b = nas(y, B, ranks, Numbering::RowMajor, 0);
            row(
                format!("{x}-{y} {ranks}"),
                &compare(&a, &b, &CompareOptions::default()).unwrap(),
            );
        }
    }
    println!("Table 3");
    for b in [Bt, Lu, Sp, Mg] {
        for (x, y) in [(A, B), (B, C), (C, A)] {
            let p = nas(b, x, 16, Numbering::RowMajor, 0);
            let q = nas(b, y, 16, Numbering::RowMajor, 0);
            row(
                format!("{b} {x}-{y}"),
                &compare(&p, &q, &CompareOptions::default()).unwrap(),
            );
        }
    }
}
