// Entry script of the analysis Web Worker: loads the worker's wasm, built by
// `wasm-bindgen --target no-modules`, from the same folder as this file.
//
// If the worker dies without answering (a WebAssembly trap: most likely its 4 GiB memory ran
// out), the page would wait forever; the worker leaves a ready-made failure message for the
// request it is running in `self.__tracelogicFatal`, and this script posts it on the error.
function reportFatal() {
  const message = self.__tracelogicFatal;
  if (message) {
    self.__tracelogicFatal = null;
    self.postMessage(message);
  }
}
self.addEventListener('error', reportFatal);
self.addEventListener('unhandledrejection', reportFatal);
importScripts('./worker.js');
wasm_bindgen({ module_or_path: './worker_bg.wasm' });
