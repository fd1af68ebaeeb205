//! The what-if on the real NPB runs (BT, LU, MG; libdumpi 13 under Open MPI): the replay is
//! complete (no worked-around dependency), the breakdown adds up, computation does not depend
//! on the network, predictions move the right way across the scaled set and the sweeps, and the
//! faster the network the less the run depends on it.

mod common;

use common::sample;
use tracelogic_analysis::replay::{what_if, Network, Sweep, WhatIf, WhatIfOptions, SEED_SCALES};
use tracelogic_model::{match_messages, Trace};

fn report(trace: &Trace) -> WhatIf {
    let options = WhatIfOptions::new(Network::presets(), SEED_SCALES.to_vec());
    what_if(trace, &match_messages(trace), &options).unwrap()
}

fn check(name: &str) {
    let trace = sample(name);
    let matching = match_messages(&trace);
    let r = report(&trace);
    assert!(r.warnings.is_empty(), "{name}: {:?}", r.warnings);
    assert_eq!(r.calls, trace.num_calls());
    assert_eq!(r.messages, matching.messages.len() as u64);
    assert!(r.messages > 0);
    let compute = r.configurations[0].breakdown.compute_s;
    assert!(compute > 0.0);
    for c in &r.configurations {
        let b = &c.breakdown;
        assert!(
            (b.total_s() - c.predicted_s).abs() <= 1e-9 * c.predicted_s,
            "{name} {}",
            c.configuration.label
        );
        assert!(
            (b.compute_s - compute).abs() <= 1e-9 * compute,
            "{name}: compute depends on the network"
        );
        assert!(b.wait_s >= 0.0 && b.latency_term_s >= 0.0 && b.bandwidth_term_s >= 0.0);
    }
    for net in Network::presets() {
        for sweep in [Sweep::Scaled, Sweep::BandwidthOnly, Sweep::LatencyOnly] {
            let mut series: Vec<(f64, f64)> = r
                .configurations
                .iter()
                .filter(|c| {
                    c.configuration.network == net.name
                        && (c.configuration.sweep == sweep || c.configuration.sweep == Sweep::Base)
                })
                .map(|c| (c.configuration.scale, c.predicted_s))
                .collect();
            series.sort_by(|a, b| a.0.total_cmp(&b.0));
            assert_eq!(series.len(), SEED_SCALES.len());
            for w in series.windows(2) {
                assert!(
                    w[1].1 <= w[0].1,
                    "{name} {} {sweep:?}: faster network predicted slower",
                    net.name
                );
            }
        }
    }
    let spread: Vec<f64> = r.classification.iter().map(|c| c.spread).collect();
    assert_eq!(spread.len(), 3);
    assert!(spread[0] > spread[1] && spread[1] > spread[2], "{name}: {spread:?}");
    let shown: Vec<String> = r
        .classification
        .iter()
        .map(|c| format!("{} {}", c.network, c.label))
        .collect();
    println!("{name}: {}", shown.join(", "));
}

#[test]
fn npb_bt_replays_completely() {
    check("npb-bt.S.9");
}

#[test]
fn npb_lu_replays_completely() {
    check("npb-lu.S.8");
}

#[test]
fn npb_mg_replays_completely() {
    check("npb-mg.S.8");
}
