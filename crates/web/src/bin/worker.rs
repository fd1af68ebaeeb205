//! Entry point of the analysis Web Worker (built with `wasm-bindgen --target no-modules`).

use gloo::worker::Registrable;
use tracelogic_web::worker::{AnalysisWorker, HandleCodec};

fn main() {
    AnalysisWorker::registrar().encoding::<HandleCodec>().register();
}
