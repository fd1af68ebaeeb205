//! Cross-check against the synthetic generator (`tracelogic-synth`), an independent
//! implementation of the same eager Hockney clock: with zero call overhead, replaying a
//! generated trace under the generator's own latency and bandwidth must give back the run time
//! the generator recorded, for every exchange style, with imbalance and collectives.

use tracelogic_analysis::replay::{replay, Configuration, Network};
use tracelogic_model::{match_messages, CollectiveOp};
use tracelogic_synth::{generate, Clock, CollectiveSpec, Spec, Style, TopologySpec};

fn spec(topology: &str, style: Style) -> Spec {
    Spec {
        topology: TopologySpec::parse(topology).unwrap(),
        iterations: 12,
        bytes: 3000,
        compute_ns: 40_000,
        imbalance: 0.5,
        seed: 7,
        style,
        collectives: vec![
            CollectiveSpec {
                op: CollectiveOp::Allreduce,
                every: 3,
                bytes: 64,
            },
            CollectiveSpec {
                op: CollectiveOp::Bcast,
                every: 4,
                bytes: 4096,
            },
            CollectiveSpec {
                op: CollectiveOp::Barrier,
                every: 6,
                bytes: 0,
            },
        ],
        clock: Clock {
            overhead_ns: 0,
            latency_ns: 3_000,
            bandwidth: 0.5,
        },
        ..Spec::default()
    }
}

#[test]
fn replay_reproduces_the_generator_clock() {
    for (topology, style) in [
        ("torus:4x4", Style::Isend),
        ("torus:4x4", Style::Sendrecv),
        ("grid:3x5", Style::Blocking),
        ("hypercube:4", Style::Sendrecv),
        ("grid:4x3", Style::Wavefront),
        ("ring:7", Style::Isend),
    ] {
        let s = spec(topology, style);
        let trace = generate(&s).unwrap();
        let matching = match_messages(&trace);
        let net = Network {
            name: "generator".into(),
            latency_s: s.clock.latency_ns as f64 * 1e-9,
            bandwidth_bytes_per_s: s.clock.bandwidth * 1e9,
        };
        let r = replay(&trace, &matching, &[Configuration::base(&net)], None, false).unwrap();
        assert!(r.warnings.is_empty(), "{topology} {style}: {:?}", r.warnings);
        let predicted = r.configurations[0].predicted_s;
        println!(
            "{topology} {style}: {} calls, predicted {predicted:.9} s, generated {:.9} s",
            trace.num_calls(),
            r.measured_s
        );
        // The generator rounds transfers up to whole nanoseconds; these sizes divide evenly, so
        // only floating-point rounding separates the two clocks.
        let slack = 1e-12 * r.measured_s;
        assert!(
            (predicted - r.measured_s).abs() <= slack,
            "{topology} {style}: predicted {predicted} s, generated {} s",
            r.measured_s
        );
    }
}
