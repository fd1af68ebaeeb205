//! Generation throughput: `cargo run --release -p tracelogic-synth --example throughput`.
//! Prints calls per second for a few shapes of program (the figures quoted in docs/cli.md).

use std::time::Instant;
use tracelogic_synth::{generate, Numbering, Spec, Style, TopologySpec};

fn main() {
    let cases = [
        ("torus:128x128", Style::Isend, 3),
        ("torus:128x128", Style::Isend, 30),
        ("torus:128x128", Style::Sendrecv, 10),
        ("torus:128x128", Style::Blocking, 10),
        ("grid:128x128", Style::Wavefront, 10),
        ("stencil27:16x16x16", Style::Isend, 5),
    ];
    for (topology, style, iterations) in cases {
        let spec = Spec {
            topology: TopologySpec::parse(topology).expect("valid topology"),
            style,
            iterations,
            numbering: Numbering::Random,
            collectives: vec!["allreduce:5".parse().expect("valid collective")],
            ..Spec::default()
        };
        let start = Instant::now();
        let trace = generate(&spec).expect("valid spec");
        let secs = start.elapsed().as_secs_f64();
        let calls = trace.num_calls();
        println!(
            "{topology:>20} {style:>9} × {iterations:>2}: {calls:>9} calls in {:>7.1} ms = {:>5.1} M calls/s",
            secs * 1e3,
            calls as f64 / secs / 1e6
        );
    }
}
