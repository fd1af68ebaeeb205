//! Helpers shared by the similarity tests: synthetic and sample runs, renumbering, and the
//! contract every comparison must keep.

#![allow(dead_code)]

use std::path::PathBuf;
use tracelogic_analysis::similarity::{CompareOptions, Comparison, VerdictBasis};
use tracelogic_model::Trace;
use tracelogic_synth::{generate, Numbering, Spec, TopologySpec};

/// A synthetic run with a floating-point counter equal to its modelled compute time.
pub fn run(topology: &str, numbering: Numbering, seed: u64) -> Trace {
    with_work_counter(run_raw(topology, numbering, seed))
}

/// A synthetic run as generated (no hardware counter: work is compute time).
pub fn run_raw(topology: &str, numbering: Numbering, seed: u64) -> Trace {
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

pub fn sample(name: &str) -> Trace {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/samples")
        .join(name);
    let files = tracelogic_formats::fs::load_paths(&[dir]).expect("sample files");
    let mut t = tracelogic_formats::read_trace(files).expect("sample trace");
    t.source = name.into();
    t
}

/// The same run with world rank r renamed perm[r] (peers, roots and communicator members too).
pub fn renumber(t: &Trace, perm: &[u32]) -> Trace {
    t.renumber_ranks(perm).expect("a permutation of the trace's ranks")
}

pub fn opts() -> CompareOptions {
    CompareOptions::default()
}

pub fn check_contract(c: &Comparison) {
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
    if let (true, Some(m)) = (defined.is_empty(), c.collective_mix_similarity) {
        // Collectives only in both runs: the verdict rests on their sequences of collectives.
        assert!(c.theta.is_nan() && c.graphs_empty);
        assert_eq!(c.verdict_on, VerdictBasis::CollectiveMix);
        assert!((0.0..=1.0).contains(&m));
        assert_eq!(c.similar, m >= c.threshold);
    } else if defined.is_empty() {
        assert!(c.theta.is_nan());
        assert_eq!(c.verdict_on, VerdictBasis::EpsilonAlone);
        assert_eq!(
            c.similar,
            c.epsilon == 1.0,
            "θ undefined: similar only on isomorphic graphs"
        );
    } else {
        let mean = defined.iter().sum::<f64>() / defined.len() as f64;
        assert!((c.theta - mean).abs() < 1e-12);
        assert_eq!(c.verdict_on, VerdictBasis::ThetaAndEpsilon);
        assert_eq!(c.similar, c.theta >= c.threshold && c.epsilon >= c.threshold);
    }
    // A contrasted property is left out of θ (never counted 0); the words carry every open question.
    for (name, t) in ["temporal", "volume", "spatial"].into_iter().zip(thetas) {
        assert!(!c.contrasted.iter().any(|p| p == name) || t.is_nan(), "{name}: θ_i {t}");
    }
    assert_eq!(
        c.uncertain_because.is_empty(),
        c.classification_certain,
        "{}",
        c.verdict
    );
    assert_eq!(c.verdict.starts_with("similar"), c.similar, "{}", c.verdict);
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
pub fn with_work_counter(mut t: Trace) -> Trace {
    let id = t.metrics.intern("PAPI_FP_OPS");
    for rt in &mut t.ranks {
        let c = &rt.calls;
        let mut gaps = 0u64;
        for i in 1..c.enter.len() {
            gaps += c.enter(i).saturating_sub(c.exit(i - 1));
        }
        let end = c.last_exit().unwrap_or(0);
        rt.metrics.push(tracelogic_model::MetricSamples {
            metric: id,
            time: vec![end],
            value: vec![gaps as f64],
        });
    }
    t
}
