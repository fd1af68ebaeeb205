//! Logicalization §5.3 synthetic scalability study: ordered and unordered 2D grids and 6-point
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

    // Near misses (not in the paper): one edge removed, one added, two edges swapped keeping
    // every degree (the look-alike that makes plain VF2 explode), randomly numbered.
    println!();
    println!(
        "{:<28} {:>6} {:>12} {:>10} {:>10}",
        "near miss", "ranks", "identify ms", "match", "near"
    );
    for s in ["torus:64x64", "stencil6:64x64", "torus:128x128", "stencil6:128x128"] {
        let reference = TopologySpec::parse(s).unwrap().graph();
        let n = reference.num_nodes();
        let mut edges: Vec<(u32, u32)> = reference.edges().collect();
        let m = edges.len();
        let variants: Vec<(&str, Vec<(u32, u32)>)> = {
            let mut removed = edges.clone();
            removed.remove(m / 3);
            let mut added = edges.clone();
            added.push((0, n / 2 + 7));
            let (a, b) = (edges[m / 5], edges[m / 2]);
            edges[m / 5] = (a.0, b.1);
            edges[m / 2] = (b.0, a.1);
            vec![
                ("one removed", removed),
                ("one added", added),
                ("degree-preserving swap", edges.clone()),
            ]
        };
        for (what, e) in variants {
            let g = tracelogic_graph::Graph::from_edges(n, e).relabel(&numbering(n, "random", &mut rng));
            let t = Instant::now();
            let rep = identify_graph(&g, &TopologyOptions::default());
            let id_ms = ms(t);
            let near = rep
                .identification
                .near_matches
                .first()
                .map_or("-".to_string(), |nm| format!("{} ({})", nm.topology.label, nm.distance));
            println!(
                "{:<28} {:>6} {:>12.1} {:>10} {}",
                format!("{s} {what}"),
                n,
                id_ms,
                rep.identification.matched.is_some(),
                near
            );
        }
    }

    // Other families at scale, randomly numbered: whole identification.
    println!();
    println!("{:<26} {:>6} {:>12}  match", "family", "ranks", "identify ms");
    for s in [
        "hypercube:14",
        "binary-tree:16383",
        "kary-tree:4x16384",
        "star:16384",
        "butterfly:10",
        "torus:32x32x16",
        "stencil27:32x32x16",
        "stencil8:128x128",
        "all-to-all:1000",
    ] {
        let reference = TopologySpec::parse(s).unwrap().graph();
        let n = reference.num_nodes();
        let g = reference.relabel(&numbering(n, "random", &mut rng));
        let t = Instant::now();
        let rep = identify_graph(&g, &TopologyOptions::default());
        let id_ms = ms(t);
        let label = rep
            .identification
            .matched
            .as_ref()
            .map_or("none".to_string(), |m| m.label.clone());
        println!("{s:<26} {n:>6} {id_ms:>12.1}  {label}");
        let stages: Vec<String> = rep
            .identification
            .stages
            .iter()
            .map(|s| format!("{}:{}/{:.0}ms", s.name, s.candidates, s.milliseconds))
            .collect();
        println!(
            "    stages: {}; gave up: {:?}",
            stages.join("  "),
            rep.identification.gave_up
        );
    }
}
