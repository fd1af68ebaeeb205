//! Similarity of runs (PACPM §3.2): θ from rank-transformed per-rank properties, ε
//! from the maximum common edge subgraph, the (θ, ε) verdict, on synthetic runs of known
//! topologies, hand-computed vectors, the paper's worked values and the real NAS samples.

use std::path::PathBuf;
use tracelogic_analysis::similarity::{
    communication_correlation, compare, compare_runs, metric_correlation, rank_transform, run_properties, Alignment,
    CompareOptions, Comparison, VerdictBasis, WorkMeasure,
};
use tracelogic_analysis::topology::Threshold;
use tracelogic_graph::mcs::McsMethod;
use tracelogic_model::Trace;
use tracelogic_synth::{generate, Numbering, Spec, TopologySpec};

/// A synthetic run with a floating-point counter equal to its modelled compute time.
fn run(topology: &str, numbering: Numbering, seed: u64) -> Trace {
    with_work_counter(run_raw(topology, numbering, seed))
}

/// A synthetic run as generated (no hardware counter: work is compute time).
fn run_raw(topology: &str, numbering: Numbering, seed: u64) -> Trace {
    let spec = Spec {
        topology: TopologySpec::parse(topology).unwrap(),
        numbering,
        seed,
        iterations: 3,
        imbalance: 0.5,
        ..Spec::default()
    };
    generate(&spec).unwrap()
}

fn sample(name: &str) -> Trace {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/samples")
        .join(name);
    let files = tracelogic_formats::fs::load_paths(&[dir]).expect("sample files");
    let mut t = tracelogic_formats::read_trace(files).expect("sample trace");
    t.source = name.into();
    t
}

/// The same run with world rank r renamed perm[r] (peers, roots and communicator members too).
fn renumber(t: &Trace, perm: &[u32]) -> Trace {
    t.renumber_ranks(perm).expect("a permutation of the trace's ranks")
}

fn opts() -> CompareOptions {
    CompareOptions::default()
}

fn check_contract(c: &Comparison) {
    assert!((0.0..=1.0).contains(&c.epsilon), "ε = {}", c.epsilon);
    assert!(c.epsilon <= c.epsilon_upper + 1e-12);
    // θ is the mean of the θ_i that are defined; a θ_i is undefined exactly when its property
    // is left out, with a reason; θ undefined leaves the verdict to ε.
    let thetas = [c.theta_temporal, c.theta_volume, c.theta_spatial];
    for (name, t) in ["temporal", "volume", "spatial"].into_iter().zip(thetas) {
        let left = c.left_out.iter().find(|l| l.property == name);
        assert_eq!(t.is_nan(), left.is_some(), "{name}: θ_i {t}, left out {left:?}");
        assert!(left.is_none_or(|l| !l.reason.is_empty()));
        assert!(t.is_nan() || (-1.0..=1.0).contains(&t), "{name}: {t}");
    }
    let defined: Vec<f64> = thetas.into_iter().filter(|t| !t.is_nan()).collect();
    if defined.is_empty() {
        assert!(c.theta.is_nan());
        assert_eq!(c.verdict_on, VerdictBasis::EpsilonAlone);
        assert_eq!(c.similar, c.epsilon >= c.threshold);
    } else {
        let mean = defined.iter().sum::<f64>() / defined.len() as f64;
        assert!((c.theta - mean).abs() < 1e-12);
        assert_eq!(c.verdict_on, VerdictBasis::ThetaAndEpsilon);
        assert_eq!(c.similar, c.theta >= c.threshold && c.epsilon >= c.threshold);
    }
    let g = &c.graph;
    assert_eq!(g.common_edges.len(), g.common);
    let expected = 2.0 * g.common as f64 / (g.edges_a.len() + g.edges_b.len()).max(1) as f64;
    if !g.edges_a.is_empty() || !g.edges_b.is_empty() {
        assert!((c.epsilon - expected).abs() < 1e-12);
    }
    // Every common edge is an edge of both graphs under the mapping.
    for &[u, v] in &g.common_edges {
        let (a, b) = (g.mapping[u as usize], g.mapping[v as usize]);
        assert!(g.edges_a.contains(&[u, v]));
        assert!(g.edges_b.contains(&[a.min(b), a.max(b)]), "{u}-{v} -> {a}-{b}");
    }
    let json = serde_json::to_value(c).unwrap();
    for key in [
        "theta",
        "theta_temporal",
        "theta_volume",
        "theta_spatial",
        "epsilon",
        "epsilon_exact",
        "similar",
        "threshold",
        "work_measure",
    ] {
        assert!(json.get(key).is_some(), "missing {key}");
    }
    assert!(json["epsilon_exact"].is_boolean() && json["similar"].is_boolean());
    assert_eq!(json["theta"].is_null(), c.theta.is_nan(), "an undefined θ is null");
    // The report survives a JSON round trip (the web worker sends it as JSON), NaN as null.
    let back: Comparison = serde_json::from_value(json).unwrap();
    assert!(back.theta.to_bits() == c.theta.to_bits() || (back.theta.is_nan() && c.theta.is_nan()));
    assert_eq!(back.left_out, c.left_out);
}

/// The same run with a hardware counter of floating-point operations per rank equal to its
/// compute time: for the synthesiser's runs, whose compute time is the modelled work, so that
/// the temporal property enters θ as it would with PAPI_FP_OPS in a real trace.
fn with_work_counter(mut t: Trace) -> Trace {
    let id = t.metrics.intern("PAPI_FP_OPS");
    for rt in &mut t.ranks {
        let c = &rt.calls;
        let mut gaps = 0u64;
        for i in 1..c.enter.len() {
            gaps += c.enter[i].saturating_sub(c.exit[i - 1]);
        }
        let end = c.exit.last().copied().unwrap_or(0);
        rt.metrics.push(tracelogic_model::MetricSamples {
            metric: id,
            time: vec![end],
            value: vec![gaps as f64],
        });
    }
    t
}

#[test]
fn a_run_against_itself_is_identical() {
    let t = run("grid:4x4", Numbering::RowMajor, 1);
    let c = compare(&t, &t, &opts()).unwrap();
    check_contract(&c);
    assert_eq!(
        (c.theta_temporal, c.theta_volume, c.theta_spatial, c.theta),
        (1.0, 1.0, 1.0, 1.0)
    );
    assert_eq!((c.epsilon, c.epsilon_exact, c.similar), (1.0, true, true));
    assert_eq!(c.graph.method, McsMethod::Identical);
    assert_eq!(c.alignment, "rank");
    assert_eq!(c.work_measure, WorkMeasure::FpOps);
    assert!(c.left_out.is_empty());
    // Without a counter the same run's temporal property is measured in time: left out.
    let raw = run_raw("grid:4x4", Numbering::RowMajor, 1);
    let c = compare(&raw, &raw, &opts()).unwrap();
    check_contract(&c);
    assert_eq!(c.work_measure, WorkMeasure::ComputeTime);
    assert!(c.theta_temporal.is_nan());
    assert!(c.left_out[0].reason.contains("compute time"), "{:?}", c.left_out);
    assert_eq!((c.theta, c.similar), (1.0, true));
}

/// θ_i of property `i` (0 temporal, 1 volume, 2 spatial) is 1, or the property is constant in
/// both runs and left out.
fn one_or_constant_in_both(c: &Comparison, i: usize) -> bool {
    let p = &c.properties[i];
    p.theta == 1.0 || (p.theta.is_nan() && p.note.as_deref().is_some_and(|n| n.starts_with("both runs: constant")))
}

#[test]
fn a_renumbered_copy_has_theta_one_for_spatial_and_volume_and_epsilon_one() {
    for topology in ["grid:4x4", "stencil6:4x4", "binary-tree:15", "grid:4x2x2"] {
        let t = run(topology, Numbering::RowMajor, 5);
        let n = t.num_ranks();
        let perm: Vec<u32> = (0..n).map(|r| (r * 7 + 3) % n).collect();
        let copy = renumber(&t, &perm);
        let c = compare(&t, &copy, &opts()).unwrap();
        check_contract(&c);
        assert_eq!((c.epsilon, c.epsilon_exact), (1.0, true), "{topology}");
        assert_eq!(c.graph.method, McsMethod::Isomorphism, "{topology}");
        assert!(
            one_or_constant_in_both(&c, 1) && one_or_constant_in_both(&c, 2),
            "{topology}: {:?}",
            c.left_out
        );
        assert_eq!(c.alignment, "graph");
        // By rank numbers the same pair looks unrelated in space (except for regular graphs).
        let by_rank = compare(
            &t,
            &copy,
            &CompareOptions {
                alignment: Alignment::Rank,
                ..opts()
            },
        )
        .unwrap();
        assert_eq!(by_rank.alignment, "rank");
        if topology == "grid:4x4" {
            assert!(by_rank.theta_spatial < 1.0, "{topology}: {}", by_rank.theta_spatial);
        }
        // A random numbering generated by the synthesiser is recognised too.
        let random = run(topology, Numbering::Random, 5);
        let c = compare(&t, &random, &opts()).unwrap();
        assert_eq!(c.epsilon, 1.0, "{topology}");
        assert!(
            one_or_constant_in_both(&c, 1) && one_or_constant_in_both(&c, 2),
            "{topology}"
        );
    }
}

#[test]
fn grid_against_six_point_stencil_torus_is_two_thirds_exactly() {
    // PACPM Table 4: LU (a 4x4 grid) against BT (a 4x4 periodic 6-point stencil) on 16 ranks:
    // ε = 2·24 / (24 + 48) = 0.667. BT's spatial and volume properties are constant: the paper
    // counts θ_spatial = 0 by convention; here they are left out of θ, which is the temporal
    // property alone (the two runs' independent imbalances, paired by rank number).
    let lu = run("grid:4x4", Numbering::RowMajor, 2);
    let bt = run("stencil6:4x4", Numbering::RowMajor, 3);
    for (x, y) in [(&lu, &bt), (&bt, &lu)] {
        let c = compare(x, y, &opts()).unwrap();
        check_contract(&c);
        assert_eq!(
            (c.graph.common, c.graph.edges_a.len() + c.graph.edges_b.len()),
            (24, 72)
        );
        assert_eq!(c.epsilon, 2.0 * 24.0 / 72.0);
        assert!(c.epsilon_exact);
        assert!(c.theta_spatial.is_nan() && c.theta_volume.is_nan());
        let note = c.properties[2].note.as_deref().unwrap();
        assert!(note.contains("constant (every rank 6)"), "{note}");
        let constant_run = if c.graph.edges_a.len() == 48 {
            "first run"
        } else {
            "second run"
        };
        assert!(note.starts_with(constant_run), "{note}");
        assert_eq!(c.theta, c.theta_temporal);
        assert!(!c.similar, "θ = {}", c.theta);
    }
    // Renumbering either run does not change ε: the common subgraph is over all correspondences.
    let perm: Vec<u32> = (0..16).map(|r| (r * 7 + 2) % 16).collect();
    let c = compare(&renumber(&lu, &perm), &bt, &opts()).unwrap();
    assert_eq!((c.graph.common, c.epsilon_exact), (24, true));
}

#[test]
fn grid_against_six_point_stencil_torus_on_64_ranks_is_0_737() {
    // PACPM Table 4, 64 ranks: BT-LU and LU-SP ε = 0.737 = 2·112 / (112 + 192), the 8x8 grid
    // inside the 8x8 periodic 6-point stencil; BT-SP ε = 1.
    let lu = run("grid:8x8", Numbering::RowMajor, 2);
    let bt = run("stencil6:8x8", Numbering::Random, 3);
    let c = compare(&lu, &bt, &opts()).unwrap();
    check_contract(&c);
    assert_eq!(
        (c.graph.common, c.graph.edges_a.len(), c.graph.edges_b.len()),
        (112, 112, 192)
    );
    assert!(c.epsilon_exact);
    assert_eq!(format!("{:.3}", c.epsilon), "0.737");
    let sp = run("stencil6:8x8", Numbering::RowMajor, 4);
    let c = compare(&bt, &sp, &opts()).unwrap();
    assert_eq!((c.epsilon, c.epsilon_exact), (1.0, true));
    assert!(one_or_constant_in_both(&c, 2));
}

#[test]
fn epsilon_is_symmetric_and_within_bounds() {
    let topologies = [
        "grid:4x4",
        "torus:4x4",
        "stencil6:4x4",
        "stencil8:4x4",
        "hypercube:4",
        "ring:16",
        "binary-tree:16",
        "star:16",
        "grid:8x2",
    ];
    let runs: Vec<Trace> = topologies
        .iter()
        .enumerate()
        .map(|(i, t)| run(t, Numbering::Random, i as u64))
        .collect();
    // A smaller budget than the default keeps the test quick; some pairs then end as bounds,
    // which must be symmetric too.
    let budget = CompareOptions {
        max_steps: Some(300_000),
        ..opts()
    };
    for i in 0..runs.len() {
        for j in i + 1..runs.len() {
            let ab = compare(&runs[i], &runs[j], &budget).unwrap();
            let ba = compare(&runs[j], &runs[i], &budget).unwrap();
            check_contract(&ab);
            check_contract(&ba);
            let what = format!("{} vs {}", topologies[i], topologies[j]);
            println!(
                "{what}: ε = {:.3} (exact {}, upper {:.3}, {:?}, {} steps), θ = {:.3}",
                ab.epsilon, ab.epsilon_exact, ab.epsilon_upper, ab.graph.method, ab.graph.steps, ab.theta
            );
            assert_eq!(ab.epsilon, ba.epsilon, "{what}");
            assert_eq!(ab.epsilon_exact, ba.epsilon_exact, "{what}");
            assert_eq!(ab.theta, ba.theta, "{what}");
            // A 4x4 torus is the 4-cube; every other pair differs.
            let same = topologies[i] == "torus:4x4" && topologies[j] == "hypercube:4";
            assert_eq!(ab.epsilon == 1.0, same, "{what}");
        }
    }
}

#[test]
fn rank_transform_as_in_figure_3_with_averaged_ties() {
    assert_eq!(rank_transform(&[12, 3, 5, 28]), vec![2.0, 4.0, 3.0, 1.0]);
    // Figure 3(b): 100 → 1, 95 → 2, 70 → 3, 60 → 4 (the text's "⟨2, 4, 3, 1⟩" contradicts its
    // own figure).
    assert_eq!(rank_transform(&[100.0, 60.0, 70.0, 95.0]), vec![1.0, 4.0, 3.0, 2.0]);
    assert_eq!(rank_transform(&[5, 5, 1, 9, 5]), vec![3.0, 3.0, 5.0, 1.0, 3.0]);
    assert_eq!(rank_transform(&[7.0, 7.0]), vec![1.5, 1.5]);
    assert_eq!(rank_transform(&[f64::INFINITY, 3.0]), vec![1.0, 2.0]);
    assert!(rank_transform::<u32>(&[]).is_empty());
}

#[test]
fn metric_correlation_by_hand() {
    // r = ⟨2,4,3,1⟩, s = ⟨1,4,3,2⟩: deviations from 2.5 are (−.5, 1.5, .5, −1.5) and
    // (−1.5, 1.5, .5, −.5); Σ products = 4, Σ squares = 5 each → θ = 4/5.
    let r = rank_transform(&[12, 3, 5, 28]);
    let s = rank_transform(&[100, 60, 70, 95]);
    assert!((metric_correlation(&r, &s) - 0.8).abs() < 1e-12);
    // Equation 7 written out with sums gives the same.
    let n = 4.0;
    let (sr, ss): (f64, f64) = (r.iter().sum(), s.iter().sum());
    let srs: f64 = r.iter().zip(&s).map(|(a, b)| a * b).sum();
    let (srr, sss): (f64, f64) = (r.iter().map(|a| a * a).sum(), s.iter().map(|b| b * b).sum());
    let eq7 = (n * srs - sr * ss) / ((n * srr - sr * sr).sqrt() * (n * sss - ss * ss).sqrt());
    assert!((metric_correlation(&r, &s) - eq7).abs() < 1e-12);
    // Reversed order: −1; the same order: 1.
    assert_eq!(metric_correlation(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]), -1.0);
    assert_eq!(metric_correlation(&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0]), 1.0);
    // With a tie: r = ⟨1, 2.5, 2.5, 4⟩ (values 9, 5, 5, 1), s = ⟨1, 2, 3, 4⟩:
    // deviations (−1.5, 0, 0, 1.5) and (−1.5, −.5, .5, 1.5): 4.5 / √(4.5 · 5) = 0.9487.
    let r = rank_transform(&[9, 5, 5, 1]);
    let s = rank_transform(&[40, 30, 20, 10]);
    assert!((metric_correlation(&r, &s) - 4.5 / (4.5f64 * 5.0).sqrt()).abs() < 1e-12);
    // A constant vector has no order: undefined, whatever the other (no convention).
    assert!(metric_correlation(&[2.0, 2.0, 2.0], &[2.0, 2.0, 2.0]).is_nan());
    assert!(metric_correlation(&[2.0, 2.0, 2.0], &[1.0, 2.0, 3.0]).is_nan());
    assert!(metric_correlation(&[3.0, 1.0, 2.0], &[2.0, 2.0, 2.0]).is_nan());
}

#[test]
fn theta_is_the_mean_as_in_tables_3_and_4() {
    // (θ_temporal, θ_volume, θ_spatial) → θ as printed, to three decimals.
    let rows = [
        ([0.000, -0.475, 0.000], -0.158), // LU-MG, 16 ranks
        ([0.072, 0.000, 0.000], 0.024),   // BT-LU, 64
        ([0.000, 0.163, 0.000], 0.054),   // LU-SP, 16
        ([0.072, -0.308, 0.000], -0.079), // LU-SP, 64
        ([1.000, 0.000, 1.000], 0.667),   // BT-SP, 16 and 64
        ([1.000, 0.822, 1.000], 0.941),   // SP A-B (Table 3)
        ([1.000, 0.682, 1.000], 0.894),   // SP B-C
        ([1.000, 0.655, 1.000], 0.885),   // SP C-A
        ([0.992, 0.998, 1.000], 0.997),   // LU A-B
        ([0.000, -0.102, 0.000], -0.034), // SP-MG, 16: the extracted table lost the sign
    ];
    for (thetas, printed) in rows {
        let theta = communication_correlation(&thetas);
        assert!((theta - printed).abs() < 0.0005 + 1e-9, "{thetas:?}: {theta}");
    }
    // Properties left out (not a number) are not part of the mean; none defined: undefined.
    assert_eq!(communication_correlation(&[f64::NAN, 0.5, f64::NAN]), 0.5);
    assert_eq!(communication_correlation(&[0.2, f64::NAN, 0.6]), 0.4);
    assert!(communication_correlation(&[f64::NAN; 3]).is_nan());
}

#[test]
fn volume_and_temporal_follow_the_rank_order() {
    // Volume: on a 4x4 grid a rank sends one message per neighbour, so volume ranks follow the
    // degree; doubling all sizes (another problem size) keeps θ_volume = 1.
    let small = run("grid:4x4", Numbering::RowMajor, 7);
    let mut big_spec = Spec {
        topology: TopologySpec::parse("grid:4x4").unwrap(),
        seed: 7,
        iterations: 3,
        imbalance: 0.5,
        ..Spec::default()
    };
    big_spec.bytes *= 2;
    big_spec.compute_ns *= 3;
    let big = with_work_counter(generate(&big_spec).unwrap());
    let c = compare(&small, &big, &opts()).unwrap();
    assert_eq!((c.theta_volume, c.theta_spatial, c.epsilon), (1.0, 1.0, 1.0));
    let volumes = &c.properties[1];
    for (a, b) in volumes.observed_a.iter().zip(&volumes.observed_b) {
        assert_eq!(a.unwrap() * 2.0, b.unwrap());
    }
    // Temporal: sends per second of compute; the same imbalance seed gives the same order.
    assert!(c.theta_temporal > 0.9, "{}", c.theta_temporal);
    let props = run_properties(&small, None);
    assert_eq!(props.sends.iter().sum::<u64>(), 3 * 48);
    assert_eq!(props.spatial[0], 2);
    assert_eq!(props.spatial[5], 4);
}

#[test]
fn different_rank_counts_are_refused_plainly() {
    let a = run("grid:4x4", Numbering::RowMajor, 0);
    let b = run("grid:3x3", Numbering::RowMajor, 0);
    let e = compare(&a, &b, &opts()).unwrap_err();
    assert!(
        e.contains("16 ranks") && e.contains("9 ranks") && e.contains("same number of ranks"),
        "{e}"
    );
    let props = [run_properties(&a, None), run_properties(&b, None)];
    assert!(compare_runs(&props, &opts())
        .unwrap_err()
        .contains("same number of ranks"));
    assert!(compare_runs(&props[..1], &opts()).is_err());
}

#[test]
fn several_runs_give_a_symmetric_matrix() {
    let runs: Vec<_> = ["grid:4x4", "stencil6:4x4", "torus:4x4"]
        .iter()
        .map(|t| run_properties(&run(t, Numbering::RowMajor, 9), None))
        .collect();
    let m = compare_runs(&runs, &opts()).unwrap();
    assert_eq!(m.pairs.len(), 3);
    assert_eq!(m.matrix.len(), 3);
    for i in 0..3 {
        assert!(m.matrix[i][i].similar && m.matrix[i][i].epsilon == 1.0);
        for j in 0..3 {
            let (x, y) = (m.matrix[i][j], m.matrix[j][i]);
            assert_eq!(x.theta.to_bits(), y.theta.to_bits());
            assert_eq!(
                (x.epsilon, x.epsilon_exact, x.similar),
                (y.epsilon, y.epsilon_exact, y.similar)
            );
        }
    }
    let pair = m.pairs.iter().find(|p| (p.first, p.second) == (0, 1)).unwrap();
    assert_eq!(m.matrix[0][1].epsilon, pair.epsilon);
    assert_eq!(pair.epsilon, 2.0 / 3.0);
    // The 4x4 torus (32 edges) is a subgraph of the stencil (48): ε = 64/80.
    assert_eq!(m.matrix[1][2].epsilon, 0.8);
    assert!(m.matrix[1][2].epsilon_exact);
    let json = serde_json::to_value(&m).unwrap();
    assert!(json["pairs"].is_array() && json["matrix"].is_array());
}

#[test]
fn filter_drops_noise_pairs_from_the_graph() {
    let spec = Spec {
        topology: TopologySpec::parse("ring:8").unwrap(),
        iterations: 20,
        noise: Some(tracelogic_synth::Noise {
            fraction: 0.5,
            percent: 1.0,
        }),
        ..Spec::default()
    };
    let noisy = generate(&spec).unwrap();
    let clean = run("ring:8", Numbering::RowMajor, 0);
    let raw = compare(&noisy, &clean, &opts()).unwrap();
    assert!(raw.graph.edges_a.len() > 8);
    assert!(raw.epsilon < 1.0);
    let filtered = compare(
        &noisy,
        &clean,
        &CompareOptions {
            filter: Some(Threshold::Auto),
            ..opts()
        },
    )
    .unwrap();
    assert_eq!(filtered.graph.edges_a.len(), 8);
    assert_eq!(filtered.epsilon, 1.0);
}

#[test]
fn nas_samples_against_each_other() {
    let lu = sample("npb-lu.S.8");
    let mg = sample("npb-mg.S.8");
    let bt = sample("npb-bt.S.9");
    let e = compare(&lu, &bt, &opts()).unwrap_err();
    assert!(e.contains("8 ranks") && e.contains("9 ranks"), "{e}");
    for t in [&lu, &mg, &bt] {
        let c = compare(t, t, &opts()).unwrap();
        check_contract(&c);
        // MG's and BT's volume and partners are the same on every rank (3-cube, 3x3 torus with
        // equal cells), and time is no measure of work: nothing is left for θ, ε alone decides.
        let theta_ok = if t.source == "npb-lu.S.8" {
            c.theta == 1.0
        } else {
            c.theta.is_nan() && c.verdict_on == VerdictBasis::EpsilonAlone
        };
        assert!(
            theta_ok && c.epsilon == 1.0 && c.similar,
            "{}: θ = {}",
            t.source,
            c.theta
        );
    }
    let c = compare(&lu, &mg, &opts()).unwrap();
    check_contract(&c);
    println!(
        "LU.S.8 vs MG.S.8: θ = {:.3} (temporal {:.3}, volume {:.3}, spatial {:.3}), ε = {:.3} \
         (exact {}, {} of {} + {} edges, {:?}), similar {}, work {}",
        c.theta,
        c.theta_temporal,
        c.theta_volume,
        c.theta_spatial,
        c.epsilon,
        c.epsilon_exact,
        c.graph.common,
        c.graph.edges_a.len(),
        c.graph.edges_b.len(),
        c.graph.method,
        c.similar,
        c.work_measure.name()
    );
    // LU is a 4x2 grid (10 edges), MG a 3-cube (12 edges) that contains it: ε = 20/22.
    assert_eq!((c.graph.edges_a.len(), c.graph.edges_b.len()), (10, 12));
    assert_eq!((c.graph.common, c.epsilon_exact), (10, true));
    assert_eq!(c.work_measure, WorkMeasure::ComputeTime);
    // A renumbered LU is recognised as LU.
    let perm = [3, 7, 0, 5, 1, 6, 2, 4];
    let c = compare(&lu, &renumber(&lu, &perm), &opts()).unwrap();
    assert_eq!((c.epsilon, c.theta_spatial, c.theta_volume), (1.0, 1.0, 1.0));
    // LU against MG: MG leaves no property with an order (constant volume and partners), so the
    // verdict rests on ε = 20/22 alone — the graph of LU fits inside MG's.
    let c = compare(&lu, &mg, &opts()).unwrap();
    assert_eq!(c.verdict_on, VerdictBasis::EpsilonAlone);
    assert_eq!(c.left_out.len(), 3);
}

#[test]
fn counters_are_the_work_measure_when_both_runs_have_them() {
    let papi = sample("pipit-ping-pong-otf2-papi");
    let plain = sample("pipit-ping-pong-otf2");
    let names = papi.metrics.names().to_vec();
    let c = compare(&papi, &papi, &opts()).unwrap();
    let expected = if names.iter().any(|m| m == "PAPI_FP_OPS") {
        WorkMeasure::FpOps
    } else if names.iter().any(|m| m == "PAPI_TOT_INS") {
        WorkMeasure::TotIns
    } else {
        WorkMeasure::ComputeTime
    };
    println!("ping-pong PAPI metrics: {names:?} -> {}", c.work_measure.name());
    assert_eq!(c.work_measure, expected);
    let props = run_properties(&papi, None);
    assert_eq!(props.work[0].measure, expected);
    assert!(props.work[0].work.iter().all(|&w| w > 0.0), "{:?}", props.work);
    // Against a run without counters both fall back to compute time.
    let c = compare(&papi, &plain, &opts()).unwrap();
    assert_eq!(c.work_measure, WorkMeasure::ComputeTime);
    assert_eq!(c.epsilon, 1.0);
}

#[test]
fn floating_point_counter_is_preferred_and_divides_the_sends() {
    let mut with_flops = run_raw("ring:4", Numbering::RowMajor, 1);
    let fp = with_flops.metrics.intern("PAPI_FP_OPS");
    let ins = with_flops.metrics.intern("PAPI_TOT_INS");
    for (r, rt) in with_flops.ranks.iter_mut().enumerate() {
        // Accumulated counters: the last sample is the rank's work.
        for (metric, scale) in [(fp, 1.0), (ins, 3.0)] {
            rt.metrics.push(tracelogic_model::MetricSamples {
                metric,
                time: vec![0, 10, 20],
                value: vec![0.0, 1e9, scale * 2e9 * (r + 1) as f64],
            });
        }
    }
    let c = compare(&with_flops, &with_flops, &opts()).unwrap();
    assert_eq!(c.work_measure, WorkMeasure::FpOps);
    let sends = run_properties(&with_flops, None).sends;
    let temporal = &c.properties[0];
    for (r, value) in temporal.observed_a.iter().enumerate() {
        let expected = sends[r] as f64 * 1e9 / (2e9 * (r + 1) as f64);
        assert!(
            (value.unwrap() - expected).abs() < 1e-9,
            "rank {r}: {value:?} vs {expected}"
        );
    }
    // More work per send on higher ranks: the rate ranks fall with the rank number.
    assert_eq!(temporal.ranked_a, vec![1.0, 2.0, 3.0, 4.0]);
    // Without the floating-point counter on one side, instructions are the common measure.
    let mut ins_only = with_flops.clone();
    for rt in &mut ins_only.ranks {
        rt.metrics.retain(|m| m.metric == ins);
    }
    assert_eq!(
        compare(&with_flops, &ins_only, &opts()).unwrap().work_measure,
        WorkMeasure::TotIns
    );
}

/// A run whose ranks send one 64-byte message each way along every edge.
fn trace_of_edges(n: u32, edges: impl IntoIterator<Item = (u32, u32)>) -> Trace {
    let mut t = Trace::new("test", "edges", n);
    for (a, b) in edges {
        for (from, to) in [(a, b), (b, a)] {
            let at = t.ranks[from as usize].calls.len() as u64 * 10;
            let c = t.push_call(from, "MPI_Send", at, at + 1, tracelogic_model::NO_CALLPATH, 0);
            t.push_p2p(from, c, c, tracelogic_model::P2pDir::Send, to, 0, 0, 64);
        }
    }
    t
}

#[test]
fn large_runs_end_within_the_budget() {
    let n = 30_000u32;
    let perm: Vec<u32> = (0..n).map(|r| ((r as u64 * 7919 + 13) % n as u64) as u32).collect();
    let ring = trace_of_edges(n, (0..n).map(|r| (perm[r as usize], perm[((r + 1) % n) as usize])));
    let path = trace_of_edges(n, (0..n - 1).map(|r| (r, r + 1)));
    let star = trace_of_edges(n, (1..n).map(|r| (0, r)));
    let small = CompareOptions {
        max_steps: Some(200_000),
        ..opts()
    };
    let t = std::time::Instant::now();
    // The path fits inside the (renumbered) ring: exact.
    let c = compare(&path, &ring, &small).unwrap();
    assert_eq!((c.graph.common, c.epsilon_exact), (n as usize - 1, true));
    // A star against a ring: the budget ends the search with a bound.
    let c = compare(&star, &ring, &small).unwrap();
    check_contract(&c);
    assert!(c.graph.common >= 2 && c.graph.common <= c.graph.upper_bound);
    assert!(c.graph.steps <= 200_000 + 2 * n as u64, "{}", c.graph.steps);
    assert!(t.elapsed().as_secs() < 120, "{:?}", t.elapsed());
}

/// A renumbering that maps the graph onto itself as numbered (a grid turned half a turn, BT
/// reversed) pairs the ranks by the automorphism that keeps every property, not by rank numbers:
/// θ is 1 for temporal too, where rank numbers pair different processes.
#[test]
fn an_automorphic_renumbering_has_theta_one_for_every_property() {
    for topology in ["grid:4x4", "grid:4x2"] {
        let t = run(topology, Numbering::RowMajor, 5);
        let n = t.num_ranks();
        let reversed: Vec<u32> = (0..n).rev().collect();
        let copy = renumber(&t, &reversed);
        let c = compare(&t, &copy, &opts()).unwrap();
        check_contract(&c);
        assert_eq!(c.graph.method, McsMethod::Identical, "{topology}");
        assert_eq!(
            (c.theta_temporal, c.theta_volume, c.theta_spatial, c.epsilon),
            (1.0, 1.0, 1.0, 1.0),
            "{topology}"
        );
        let by_rank = compare(
            &t,
            &copy,
            &CompareOptions {
                alignment: Alignment::Rank,
                ..opts()
            },
        )
        .unwrap();
        assert!(by_rank.theta_temporal < 1.0, "{topology}: {}", by_rank.theta_temporal);
        assert_eq!(c.alignment, "graph");
    }
    let bt = sample("npb-bt.S.9");
    let n = bt.num_ranks();
    for perm in [
        (0..n).rev().collect::<Vec<u32>>(),
        (0..n).map(|r| (r * 4 + 1) % n).collect(),
    ] {
        let c = compare(&bt, &renumber(&bt, &perm), &opts()).unwrap();
        check_contract(&c);
        // Nothing but the graph distinguishes BT's ranks (see nas_samples_against_each_other).
        assert!(c.theta.is_nan(), "npb-bt.S.9 {perm:?}");
        assert_eq!((c.epsilon, c.similar), (1.0, true), "npb-bt.S.9 {perm:?}");
    }
}

/// Periodic 2-D lattice edges on `w`x`h` ranks: the 4-point torus, or with `diagonal` the
/// 6-point stencil (neighbours (±1, 0), (0, ±1), ±(1, 1)).
fn lattice(w: u32, h: u32, diagonal: bool) -> Vec<[u32; 2]> {
    let mut edges: Vec<[u32; 2]> = (0..w * h)
        .flat_map(|r| {
            let (x, y) = (r % w, r / w);
            let at = move |dx: u32, dy: u32| ((y + dy) % h) * w + (x + dx) % w;
            let mut e = vec![[r, at(1, 0)], [r, at(0, 1)]];
            if diagonal {
                e.push([r, at(1, 1)]);
            }
            e
        })
        .map(|[a, b]| [a.min(b), a.max(b)])
        .collect();
    edges.sort_unstable();
    edges.dedup();
    edges
}

/// A run on `edges` whose per-rank volume and compute time are independent random numbers,
/// with `root` the root of its one broadcast (none: no rooted collective).
fn random_run(
    name: &str,
    n: u32,
    edges: &[[u32; 2]],
    root: Option<u32>,
    rng: &mut impl rand::Rng,
) -> tracelogic_analysis::similarity::RunProperties {
    let mut spatial = vec![0u32; n as usize];
    for &[a, b] in edges {
        spatial[a as usize] += 1;
        spatial[b as usize] += 1;
    }
    let mut roots = vec![0u64; n as usize];
    if let Some(r) = root {
        roots[r as usize] = 1;
    }
    tracelogic_analysis::similarity::RunProperties {
        source: name.into(),
        ranks: n,
        sends: spatial.iter().map(|&d| u64::from(d)).collect(),
        volume: (0..n).map(|_| rng.gen_range(1..1_000_000u64)).collect(),
        spatial,
        work: vec![tracelogic_analysis::similarity::RankWork {
            measure: WorkMeasure::ComputeTime,
            work: (0..n).map(|_| rng.gen_range(1.0..1e9)).collect(),
        }],
        edges: edges.to_vec(),
        filtered_pairs: 0,
        roots,
        parts: None,
    }
}

#[test]
fn the_collective_root_anchors_the_pairing() {
    use rand::SeedableRng;
    use tracelogic_analysis::similarity::{collective_root, compare_properties, PairedBy};
    assert_eq!(collective_root(&[0, 3, 1, 0]), Some(1));
    assert_eq!(collective_root(&[2, 0, 2]), None, "two ranks root most");
    assert_eq!(collective_root(&[0, 0]), None, "no rooted collective");
    assert_eq!(collective_root(&[]), None);
    let mut rng = rand::rngs::StdRng::seed_from_u64(3);
    let stencil = lattice(4, 4, true);
    for (ra, rb) in [(Some(5), Some(10)), (Some(0), None), (None, None)] {
        let a = random_run("a", 16, &stencil, ra, &mut rng);
        let b = random_run("b", 16, &stencil, rb, &mut rng);
        let c = compare_properties(&a, &b, &opts()).unwrap();
        check_contract(&c);
        assert_eq!(c.pairing.by, PairedBy::BestIsomorphism);
        let anchor = &c.pairing.anchor;
        assert_eq!((anchor.rank_a, anchor.rank_b), (ra, rb));
        assert_eq!(anchor.isomorphisms, Some(192), "the 4x4 6-point stencil's group");
        // Without roots the same search runs over all 192 isomorphisms.
        let free = compare_properties(
            &tracelogic_analysis::similarity::RunProperties {
                roots: vec![],
                ..a.clone()
            },
            &b,
            &opts(),
        )
        .unwrap();
        if let (Some(ra), Some(rb)) = (ra, rb) {
            assert!(anchor.used && anchor.unused_because.is_none(), "{anchor:?}");
            assert_eq!(c.pairing.ranks[ra as usize], rb, "the roots are paired");
            assert_eq!(anchor.anchored_isomorphisms, Some(12), "the stabiliser of a node");
            // Fewer pairings to choose from: never more agreement than the free maximum.
            assert!(c.theta <= free.theta + 1e-12, "{} > {}", c.theta, free.theta);
            let json = serde_json::to_value(&c).unwrap();
            assert_eq!(json["pairing"]["anchor"]["rank_a"], 5);
            assert_eq!(json["pairing"]["anchor"]["anchored_isomorphisms"], 12);
        } else {
            assert!(!anchor.used && anchor.anchored_isomorphisms.is_none(), "{anchor:?}");
            let why = anchor.unused_because.as_deref().unwrap();
            assert!(why.contains("no single root"), "{why}");
            assert!(ra.is_some() || why.contains("first run"), "{why}");
            assert_eq!(c.theta, free.theta);
        }
    }
    // Roots in different roles (a grid's corner against its centre): no isomorphism keeps them,
    // the free maximum is kept and the reason given.
    let grid: Vec<[u32; 2]> = (0..9u32)
        .flat_map(|r| {
            let right = (r % 3 < 2).then_some([r, r + 1]);
            let down = (r < 6).then_some([r, r + 3]);
            right.into_iter().chain(down)
        })
        .collect();
    let a = random_run("corner", 9, &grid, Some(0), &mut rng);
    let b = random_run("centre", 9, &grid, Some(4), &mut rng);
    let c = compare_properties(&a, &b, &opts()).unwrap();
    assert!(!c.pairing.anchor.used);
    let why = c.pairing.anchor.unused_because.as_deref().unwrap();
    assert!(why.contains("mapping rank 0 onto rank 4"), "{why}");
}

#[test]
fn the_root_of_rooted_collectives_is_read_from_the_trace() {
    use tracelogic_model::{CollectiveOp, NO_CALLPATH, NO_ROOT};
    let mut t = trace_of_edges(4, [(0, 1), (1, 2), (2, 3)]);
    for r in 0..4u32 {
        for (i, (op, root)) in [
            (CollectiveOp::Bcast, 2),
            (CollectiveOp::Reduce, 2),
            (CollectiveOp::Gather, 1),
            (CollectiveOp::Allreduce, NO_ROOT),
        ]
        .into_iter()
        .enumerate()
        {
            let at = 1000 + 10 * i as u64;
            let c = t.push_call(r, "MPI_Bcast", at, at + 1, NO_CALLPATH, 0);
            t.push_collective(r, c, op, 0, root, 8, 8);
        }
    }
    let p = run_properties(&t, None);
    assert_eq!(p.roots, vec![0, 1, 2, 0]);
    assert_eq!(tracelogic_analysis::similarity::collective_root(&p.roots), Some(2));
    // The root follows its process through a renumbering.
    let q = run_properties(&renumber(&t, &[3, 0, 1, 2]), None);
    assert_eq!(tracelogic_analysis::similarity::collective_root(&q.roots), Some(1));
}

/// The chance-agreement experiment of `docs/similarity.md`: two runs on the same regular graph
/// whose per-rank volume and work are independent random numbers, 40 pairs per graph; the best
/// pairing's θ over all isomorphisms against the best over those pairing the two runs' collective
/// roots (each run's root drawn at random). Prints mean, max and how many reach the threshold.
/// `cargo test --release -p tracelogic-analysis --test similarity chance_agreement -- --ignored --nocapture`
#[test]
#[ignore = "measurement (about 10 s in release): numbers in docs/similarity.md"]
fn chance_agreement_of_unrelated_values_with_and_without_the_root_anchor() {
    use rand::{Rng, SeedableRng};
    use tracelogic_analysis::similarity::{compare_properties, PairedBy};
    let graphs = [
        ("4x4 torus", 4u32, 4u32, false),
        ("4x4 6-point stencil", 4, 4, true),
        ("8x8 torus", 8, 8, false),
        ("8x8 6-point stencil", 8, 8, true),
    ];
    let mut rng = rand::rngs::StdRng::seed_from_u64(2026);
    println!("| graph | isomorphisms (anchored) | free: mean, max, ≥ 0.6 | anchored: mean, max, ≥ 0.6 | chance level free / anchored |");
    for (name, w, h, diagonal) in graphs {
        let n = w * h;
        let edges = lattice(w, h, diagonal);
        let (mut free, mut anchored, mut chance) = (Vec::new(), Vec::new(), (0.0, 0.0, 0usize));
        let mut counts = (None, None);
        for _ in 0..40 {
            let (ra, rb) = (rng.gen_range(0..n), rng.gen_range(0..n));
            let a = random_run("a", n, &edges, Some(ra), &mut rng);
            let b = random_run("b", n, &edges, Some(rb), &mut rng);
            let c = compare_properties(&a, &b, &opts()).unwrap();
            assert_eq!(c.pairing.by, PairedBy::BestIsomorphism);
            assert!(
                c.pairing.anchor.used && c.pairing.exhaustive,
                "{name}: {:?}",
                c.pairing.anchor
            );
            let unanchored = tracelogic_analysis::similarity::RunProperties { roots: vec![], ..a };
            let f = compare_properties(&unanchored, &b, &opts()).unwrap();
            assert!(f.pairing.exhaustive && !f.pairing.anchor.used);
            assert!(
                c.theta <= f.theta + 1e-12,
                "{name}: anchored {} > free {}",
                c.theta,
                f.theta
            );
            counts = (c.pairing.anchor.isomorphisms, c.pairing.anchor.anchored_isomorphisms);
            if let (Some(x), Some(y)) = (f.pairing.theta_chance, c.pairing.theta_chance) {
                chance = (chance.0 + x, chance.1 + y, chance.2 + 1);
            }
            free.push(f.theta);
            anchored.push(c.theta);
        }
        let stats = |v: &[f64]| {
            let mean = v.iter().sum::<f64>() / v.len() as f64;
            let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let similar = v.iter().filter(|&&t| t >= 0.6).count();
            format!("{mean:.3}, {max:.3}, {similar}/{}", v.len())
        };
        println!(
            "| {name} | {:?} ({:?}) | {} | {} | {:.3} / {:.3} |",
            counts.0,
            counts.1,
            stats(&free),
            stats(&anchored),
            chance.0 / chance.2.max(1) as f64,
            chance.1 / chance.2.max(1) as f64
        );
    }
}

/// Cost of the anchored best-pairing search at 256–4,096 ranks: random per-rank values on
/// tori and 6-point stencils, each run with a random collective root, against the same runs
/// without roots (the free search over all isomorphisms). Figures of `docs/similarity.md`.
/// `cargo test --release -p tracelogic-analysis --test similarity anchored_search_cost -- --ignored --nocapture`
#[test]
#[ignore = "measurement (about a minute in release): numbers in docs/similarity.md"]
fn anchored_search_cost_at_256_to_4096_ranks() {
    use rand::{Rng, SeedableRng};
    use tracelogic_analysis::similarity::compare_properties;
    let mut rng = rand::rngs::StdRng::seed_from_u64(4096);
    println!("| graph | ranks | anchored: θ, scored, steps, exhaustive, ms | free: θ, scored, steps, exhaustive, ms |");
    for (name, w, h, diagonal) in [
        ("16x16 torus", 16u32, 16u32, false),
        ("16x16 6-point stencil", 16, 16, true),
        ("32x32 torus", 32, 32, false),
        ("32x32 6-point stencil", 32, 32, true),
        ("64x64 torus", 64, 64, false),
        ("64x64 6-point stencil", 64, 64, true),
    ] {
        let n = w * h;
        let edges = lattice(w, h, diagonal);
        let (ra, rb) = (rng.gen_range(0..n), rng.gen_range(0..n));
        let a = random_run("a", n, &edges, Some(ra), &mut rng);
        let b = random_run("b", n, &edges, Some(rb), &mut rng);
        let timed = |a: &tracelogic_analysis::similarity::RunProperties| {
            let t = std::time::Instant::now();
            let c = compare_properties(a, &b, &opts()).unwrap();
            let ms = t.elapsed().as_secs_f64() * 1e3;
            let p = &c.pairing;
            (
                c.pairing.anchor.used,
                format!(
                    "{:.3}, {}, {:.2} M, {}, {ms:.0}",
                    c.theta,
                    p.isomorphisms_scored,
                    p.steps as f64 / 1e6,
                    if p.exhaustive { "yes" } else { "no" }
                ),
            )
        };
        let (used, anchored) = timed(&a);
        assert!(used, "{name}");
        let (_, free) = timed(&tracelogic_analysis::similarity::RunProperties {
            roots: vec![],
            ..a.clone()
        });
        println!("| {name} | {n} | {anchored} | {free} |");
    }
}

#[test]
fn chi_square_tail_and_friedman_against_tables() {
    use tracelogic_analysis::similarity::{chi_square_survival, friedman};
    // Upper 1 % and 5 % points of χ² (standard tables): df 1: 6.635, 3.841; df 7: 18.475;
    // df 11: 24.725; df 15: 30.578; df 63: 92.010.
    for (x, df, p) in [
        (6.635, 1.0, 0.01),
        (3.841, 1.0, 0.05),
        (18.475, 7.0, 0.01),
        (24.725, 11.0, 0.01),
        (30.578, 15.0, 0.01),
        (92.010, 63.0, 0.01),
    ] {
        let got = chi_square_survival(x, df);
        assert!((got - p).abs() < 2e-4, "χ²({df}) ≥ {x}: {got}");
    }
    // Friedman by hand: 3 ranks, 4 parts, the same order every time: rank sums 4, 8, 12,
    // Q = 12/(4·3·4)·(16 + 64 + 144) − 3·4·4 = 8, W = 1, p = e^(−4) (χ² with 2 df).
    let same: Vec<Vec<f64>> = vec![
        vec![3.0, 5.0, 4.0, 9.0],
        vec![2.0, 4.0, 3.0, 8.0],
        vec![1.0, 3.0, 2.0, 7.0],
    ];
    let (p, w) = friedman(&same).unwrap();
    assert!(
        (w - 1.0).abs() < 1e-12 && (p - (-4.0f64).exp()).abs() < 1e-12,
        "p {p} W {w}"
    );
    // Orders that cancel out (a Latin square): rank sums equal, W = 0, p = 1.
    let latin: Vec<Vec<f64>> = vec![vec![1.0, 2.0, 3.0], vec![2.0, 3.0, 1.0], vec![3.0, 1.0, 2.0]];
    let (p, w) = friedman(&latin).unwrap();
    assert!(w.abs() < 1e-12 && (p - 1.0).abs() < 1e-12, "p {p} W {w}");
    // Parts where every rank is equal carry no order.
    assert_eq!(friedman(&[vec![1.0, 1.0], vec![1.0, 1.0]]), None);
}
