//! Cost of the graph similarity ε (maximum common edge subgraph) as the rank count grows, for
//! the three situations the search meets: isomorphic runs numbered differently (the
//! isomorphism engine), one graph inside the other (a heuristic reaches the degree-sequence
//! bound), and unrelated graphs (branch and bound until the budget, then a lower bound). Plus a
//! whole `compare` of two synthetic traces. Run with `cargo bench -p tracelogic-analysis
//! --bench similarity` (natively).

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::time::Instant;
use tracelogic_analysis::similarity::{compare, CompareOptions};
use tracelogic_graph::mcs::{maximum_common_edge_subgraph, McsOptions};
use tracelogic_graph::{Graph, TopologySpec};
use tracelogic_synth::{generate, Numbering, Spec};

fn graph(spec: &str) -> Graph {
    TopologySpec::parse(spec).unwrap().graph()
}

fn shuffled(g: &Graph, rng: &mut StdRng) -> Graph {
    let mut perm: Vec<u32> = (0..g.num_nodes()).collect();
    perm.shuffle(rng);
    g.relabel(&perm)
}

fn row(label: &str, g: &Graph, h: &Graph) {
    let t = Instant::now();
    let r = maximum_common_edge_subgraph(g, h, McsOptions::for_nodes(g.num_nodes()));
    let ms = t.elapsed().as_secs_f64() * 1e3;
    println!(
        "{label:<34} {:>6} {:>9} {:>7.3} {:>7.3} {:>6} {:>16} {:>9.1}",
        g.num_nodes(),
        r.common_edges,
        r.epsilon(),
        r.epsilon_upper(),
        r.exact,
        format!("{:?}", r.method),
        ms
    );
}

fn main() {
    let mut rng = StdRng::seed_from_u64(7);
    println!(
        "{:<34} {:>6} {:>9} {:>7} {:>7} {:>6} {:>16} {:>9}",
        "pair", "ranks", "common", "ε", "ε max", "exact", "method", "ms"
    );
    for side in [4u32, 8, 16, 32, 64, 128] {
        let g = graph(&format!("stencil6:{side}x{side}"));
        row(
            &format!("stencil6 {side}x{side} vs renumbered"),
            &g,
            &shuffled(&g, &mut rng),
        );
    }
    for side in [4u32, 8, 16, 32, 64, 128] {
        let g = graph(&format!("grid:{side}x{side}"));
        let h = shuffled(&graph(&format!("stencil6:{side}x{side}")), &mut rng);
        row(&format!("grid vs stencil6 {side}x{side} (renumb.)"), &g, &h);
    }
    for (a, b) in [
        ("grid:4x4", "hypercube:4"),
        ("ring:16", "binary-tree:16"),
        ("grid:8x8", "torus:4x4x4"),
        ("grid:8x8", "hypercube:6"),
        ("stencil8:8x8", "torus:4x4x4"),
        ("grid:32x32", "torus:8x8x16"),
        ("ring:4096", "binary-tree:4096"),
        ("grid:128x128", "torus:16x32x32"),
    ] {
        row(&format!("{a} vs {b}"), &graph(a), &shuffled(&graph(b), &mut rng));
    }
    println!();
    for side in [8u32, 16, 32] {
        let spec = |topology: String, numbering| Spec {
            topology: TopologySpec::parse(&topology).unwrap(),
            numbering,
            iterations: 10,
            imbalance: 0.3,
            ..Spec::default()
        };
        let lu = generate(&spec(format!("grid:{side}x{side}"), Numbering::RowMajor)).unwrap();
        let bt = generate(&spec(format!("stencil6:{side}x{side}"), Numbering::Random)).unwrap();
        let t = Instant::now();
        let c = compare(&lu, &bt, &CompareOptions::default()).unwrap();
        println!(
            "compare grid vs stencil6 {side}x{side} traces ({} calls): θ = {:.3}, ε = {:.3} (exact {}), {:.1} ms",
            lu.num_calls() + bt.num_calls(),
            c.theta,
            c.epsilon,
            c.epsilon_exact,
            t.elapsed().as_secs_f64() * 1e3
        );
    }
}
