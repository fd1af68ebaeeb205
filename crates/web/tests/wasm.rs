//! In-browser tests: the worker's core on wasm32 (32-bit `usize`, no threads, no file system),
//! run in headless Chromium by `scripts/test-web` through wasm-bindgen-test-runner.
#![cfg(target_arch = "wasm32")]

use tracelogic_web::protocol::{MatrixRequest, WireFile};
use tracelogic_web::session::Session;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

macro_rules! lu_file {
    ($name:literal) => {
        WireFile {
            name: concat!("npb-lu.S.8/", $name).to_owned(),
            bytes: include_bytes!(concat!("../../../web/samples/npb-lu.S.8/", $name)).to_vec(),
        }
    };
}

fn lu() -> Vec<WireFile> {
    vec![
        lu_file!("dumpi-2026.11.22.08.59.38.meta"),
        lu_file!("dumpi-2026.11.22.08.59.38-0000.bin"),
        lu_file!("dumpi-2026.11.22.08.59.38-0001.bin"),
        lu_file!("dumpi-2026.11.22.08.59.38-0002.bin"),
        lu_file!("dumpi-2026.11.22.08.59.38-0003.bin"),
        lu_file!("dumpi-2026.11.22.08.59.38-0004.bin"),
        lu_file!("dumpi-2026.11.22.08.59.38-0005.bin"),
        lu_file!("dumpi-2026.11.22.08.59.38-0006.bin"),
        lu_file!("dumpi-2026.11.22.08.59.38-0007.bin"),
    ]
}

#[wasm_bindgen_test]
fn lu_loads_in_the_browser() {
    let mut stages = Vec::new();
    let loaded = Session::load("LU", lu(), &MatrixRequest::default(), &mut |p| {
        stages.push(p.stage);
        true
    })
    .unwrap_or_else(|f| panic!("{}", f.message));
    let s = &loaded.trace.summary;
    assert_eq!(s.ranks, 8);
    assert_eq!(s.calls, s.calls_per_rank.iter().sum::<u64>());
    assert_eq!(s.calls, loaded.session.trace().num_calls());
    assert_eq!(loaded.matrix.grid.values.iter().sum::<u64>(), s.p2p_bytes);
    assert!(stages.iter().any(|st| st == "matching messages"));
}

#[wasm_bindgen_test]
fn truncated_input_fails_cleanly_in_the_browser() {
    let mut files = lu();
    files[4].bytes.truncate(1000);
    let failure = Session::load("LU", files, &MatrixRequest::default(), &mut |_| true).unwrap_err();
    assert!(failure.message.contains("-0003.bin"), "{}", failure.message);
}
