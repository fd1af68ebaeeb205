//! The §5.3 scalability study in WebAssembly (node or a browser through
//! wasm-bindgen-test-runner): randomly numbered 2D grids and 6-point stencils identified with a
//! verified mapping, with the isomorphism and the whole identification timed. Run with
//! `CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner cargo test --release
//! --target wasm32-unknown-unknown -p tracelogic-analysis --test topology_wasm -- --nocapture`.
#![cfg(target_arch = "wasm32")]

use tracelogic_analysis::topology::{identify_graph, TopologyOptions};
use tracelogic_graph::iso::{isomorphism, verify, IsoOptions};
use tracelogic_graph::TopologySpec;
use wasm_bindgen_test::{console_log, wasm_bindgen_test};
use web_time::Instant;

/// A fixed pseudo-random permutation (xorshift Fisher–Yates; no OS entropy in wasm).
fn permutation(n: u32, mut seed: u64) -> Vec<u32> {
    let mut p: Vec<u32> = (0..n).collect();
    for i in (1..n as usize).rev() {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        p.swap(i, (seed % (i as u64 + 1)) as usize);
    }
    p
}

#[wasm_bindgen_test]
fn random_grids_and_stencils_are_identified_in_wasm() {
    for side in [10u32, 32, 64, 128] {
        for family in ["grid", "stencil6"] {
            let spec = TopologySpec::parse(&format!("{family}:{side}x{side}")).unwrap();
            let reference = spec.graph();
            let n = reference.num_nodes();
            let app = reference.relabel(&permutation(n, 0x9E37_79B9 + n as u64));
            let t = Instant::now();
            let out = isomorphism(&app, &reference, IsoOptions::for_nodes(n));
            let iso_ms = t.elapsed().as_secs_f64() * 1e3;
            verify(&app, &reference, out.mapping().expect("isomorphic")).unwrap();
            let t = Instant::now();
            let rep = identify_graph(&app, &TopologyOptions::default());
            let id_ms = t.elapsed().as_secs_f64() * 1e3;
            assert!(rep.identification.equivalents.iter().any(|e| e.label == spec.label()));
            console_log!("wasm {family} {n} random: isomorphism {iso_ms:.1} ms, identification {id_ms:.1} ms");
        }
    }
}
