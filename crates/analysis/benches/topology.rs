//! Seed 000 §5.3 synthetic scalability study: ordered and unordered 2D grids and 6-point
//! stencils from 100 to 16,384 ranks, with the spectral stage and the isomorphism stage timed
//! separately, plus the whole identification. Run with `cargo bench -p tracelogic-analysis
//! --bench topology` (natively). "unordered" is the paper's partial renumbering (2/3 of the
//! ranks permuted); "random" numbers every rank at random.

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::time::Instant;
use tracelogic_analysis::topology::{identify_graph, TopologyOptions};
use tracelogic_graph::invariants::{closed_walks_within, spectrum};
use tracelogic_graph::iso::{isomorphism, IsoOptions};
use tracelogic_graph::TopologySpec;

fn numbering(n: u32, how: &str, rng: &mut StdRng) -> Vec<u32> {
    let mut p: Vec<u32> = (0..n).collect();
    match how {
        "ordered" => {}
        "unordered" => {
            let mut chosen: Vec<usize> = (0..n as usize).collect();
            chosen.shuffle(rng);
            chosen.truncate(2 * n as usize / 3);
            let mut targets = chosen.clone();
            targets.shuffle(rng);
            for (&i, &t) in chosen.iter().zip(&targets) {
                p[i] = t as u32;
            }
        }
        _ => p.shuffle(rng),
    }
    p
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn main() {
    let mut rng = StdRng::seed_from_u64(53);
    println!(
        "{:<10} {:>6} {:<9} {:>12} {:>12} {:>12} {:>10} {:>12}",
        "pattern", "ranks", "numbering", "eigen ms", "walks ms", "iso ms", "iso steps", "identify ms"
    );
    for side in [10u32, 16, 23, 32, 45, 64, 90, 128] {
        for family in ["grid", "stencil6"] {
            let spec = TopologySpec::parse(&format!("{family}:{side}x{side}")).unwrap();
            let reference = spec.graph();
            let n = reference.num_nodes();
            for how in ["ordered", "unordered", "random"] {
                let app = reference.relabel(&numbering(n, how, &mut rng));
                let t = Instant::now();
                let eig = spectrum(&app).map(|_| spectrum(&reference));
                let eigen_ms = eig.map(|_| ms(t));
                let t = Instant::now();
                let _ = (
                    closed_walks_within(&app, 200_000_000),
                    closed_walks_within(&reference, 200_000_000),
                );
                let walks_ms = ms(t);
                let t = Instant::now();
                let out = isomorphism(&app, &reference, IsoOptions::for_nodes(n));
                let iso_ms = ms(t);
                let steps = match &out {
                    tracelogic_graph::iso::IsoOutcome::Isomorphic { steps, .. } => steps.to_string(),
                    other => format!("{other:?}").chars().take(20).collect(),
                };
                let t = Instant::now();
                let rep = identify_graph(&app, &TopologyOptions::default());
                let id_ms = ms(t);
                assert!(rep.identification.matched.is_some(), "{family} {n} {how}");
                let stages: Vec<String> = rep
                    .identification
                    .stages
                    .iter()
                    .map(|s| format!("{}:{}/{:.0}ms", s.name, s.candidates, s.milliseconds))
                    .collect();
                println!(
                    "{:<10} {:>6} {:<9} {:>12} {:>12.2} {:>12.2} {:>10} {:>12.1}",
                    family,
                    n,
                    how,
                    eigen_ms.map_or("-".to_string(), |v| format!("{v:.1}")),
                    walks_ms,
                    iso_ms,
                    steps,
                    id_ms
                );
                if how == "random" {
                    println!("    stages: {}", stages.join("  "));
                }
            }
        }
    }
}
