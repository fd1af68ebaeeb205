// The `tracelogic` package: wasm-bindgen's `--target web` module (pkg/, built by
// scripts/build-js) with an `init` that also works under Node. In a browser `init()` fetches
// pkg/tracelogic_bg.wasm next to the module; under Node, where fetch cannot read file: URLs,
// it reads those bytes from disk. `init(source)` passes any source wasm-bindgen takes (a URL,
// a Response, bytes, a WebAssembly.Module) straight through.
import wasmInit, { initSync } from './pkg/tracelogic.js';

export { readTrace, topology, logical, Trace } from './pkg/tracelogic.js';
export { initSync };

const wasmUrl = new URL('./pkg/tracelogic_bg.wasm', import.meta.url);

export default async function init(source) {
  if (source === undefined && typeof process !== 'undefined' && process.versions?.node && wasmUrl.protocol === 'file:') {
    const { readFile } = await import('node:fs/promises');
    source = await readFile(wasmUrl);
  }
  return wasmInit(source === undefined ? undefined : { module_or_path: source });
}
