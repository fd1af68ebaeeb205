//! Similarity of runs (seed 002 §3.2, issue 7): θ from rank-transformed per-rank properties, ε
//! from the maximum common edge subgraph, the (θ, ε) verdict, on synthetic runs of known
//! topologies, hand-computed vectors, the paper's worked values and the real NAS samples.

use std::path::PathBuf;
use tracelogic_analysis::similarity::{
    communication_correlation, compare, compare_runs, metric_correlation, rank_transform, run_properties, Alignment,
    CompareOptions, Comparison, WorkMeasure,
};
use tracelogic_analysis::topology::Threshold;
use tracelogic_graph::mcs::McsMethod;
use tracelogic_model::Trace;
use tracelogic_synth::{generate, Numbering, Spec, TopologySpec};

fn run(topology: &str, numbering: Numbering, seed: u64) -> Trace {
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
        .join("../../../shared/data/samples")
        .join(name);
    let files = tracelogic_formats::fs::load_paths(&[dir]).expect("sample files");
    let mut t = tracelogic_formats::read_trace(files).expect("sample trace");
    t.source = name.into();
    t
}

/// The same run with world rank r renamed perm[r] (peers and communicator members too).
fn renumber(t: &Trace, perm: &[u32]) -> Trace {
    let n = t.num_ranks();
    let mut out = t.clone();
    for (r, rt) in t.ranks.iter().enumerate() {
        let mut moved = rt.clone();
        moved.rank = perm[r];
        for p in &mut moved.p2p.peer {
            if *p < n {
                *p = perm[*p as usize];
            }
        }
        for root in &mut moved.collectives.root {
            if *root < n {
                *root = perm[*root as usize];
            }
        }
        out.ranks[perm[r] as usize] = moved;
    }
    for c in &mut out.comms {
        for m in &mut c.members {
            *m = perm[*m as usize];
        }
    }
    out
}

fn opts() -> CompareOptions {
    CompareOptions::default()
}

fn check_contract(c: &Comparison) {
    assert!((0.0..=1.0).contains(&c.epsilon), "ε = {}", c.epsilon);
    assert!(c.epsilon <= c.epsilon_upper + 1e-12);
    assert!((-1.0..=1.0).contains(&c.theta));
    let mean = (c.theta_temporal + c.theta_volume + c.theta_spatial) / 3.0;
    assert!((c.theta - mean).abs() < 1e-12);
    assert_eq!(c.similar, c.theta >= c.threshold && c.epsilon >= c.threshold);
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
    assert_eq!(c.work_measure, WorkMeasure::ComputeTime);
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
        assert_eq!((c.theta_spatial, c.theta_volume), (1.0, 1.0), "{topology}");
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
        assert_eq!(
            (c.epsilon, c.theta_spatial, c.theta_volume),
            (1.0, 1.0, 1.0),
            "{topology}"
        );
    }
}

#[test]
fn grid_against_six_point_stencil_torus_is_two_thirds_exactly() {
    // Seed 002 Table 4: LU (a 4x4 grid) against BT (a 4x4 periodic 6-point stencil) on 16 ranks:
    // ε = 2·24 / (24 + 48) = 0.667, θ_spatial = 0 (BT's spatial property is constant).
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
        assert_eq!(c.theta_spatial, 0.0);
        assert!(c.properties[2].note.as_deref().unwrap().contains("constant"));
        assert!(!c.similar);
    }
    // Renumbering either run does not change ε: the common subgraph is over all correspondences.
    let perm: Vec<u32> = (0..16).map(|r| (r * 7 + 2) % 16).collect();
    let c = compare(&renumber(&lu, &perm), &bt, &opts()).unwrap();
    assert_eq!((c.graph.common, c.epsilon_exact), (24, true));
}

#[test]
fn grid_against_six_point_stencil_torus_on_64_ranks_is_0_737() {
    // Seed 002 Table 4, 64 ranks: BT-LU and LU-SP ε = 0.737 = 2·112 / (112 + 192), the 8x8 grid
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
    assert_eq!((c.epsilon, c.epsilon_exact, c.theta_spatial), (1.0, true, 1.0));
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
    // Constant vectors: both → 1, one → 0 (Table 4: BT–SP spatial 1.000, BT–LU spatial 0.000).
    assert_eq!(metric_correlation(&[2.0, 2.0, 2.0], &[2.0, 2.0, 2.0]), 1.0);
    assert_eq!(metric_correlation(&[2.0, 2.0, 2.0], &[1.0, 2.0, 3.0]), 0.0);
    assert_eq!(metric_correlation(&[3.0, 1.0, 2.0], &[2.0, 2.0, 2.0]), 0.0);
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
    let big = generate(&big_spec).unwrap();
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
            assert_eq!(m.matrix[i][j], m.matrix[j][i]);
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
        assert_eq!((c.theta, c.epsilon, c.similar), (1.0, 1.0, true), "{}", t.source);
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
    let mut with_flops = run("ring:4", Numbering::RowMajor, 1);
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
