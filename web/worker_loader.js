// Entry script of the analysis Web Worker: loads the worker's wasm, built by
// `wasm-bindgen --target no-modules`, from the same folder as this file.
importScripts('./worker.js');
wasm_bindgen({ module_or_path: './worker_bg.wasm' });
