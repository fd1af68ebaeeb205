// Starts the page: loads the app's wasm (built by `wasm-bindgen --target web`) next to this file.
import init from './app.js';

init({ module_or_path: new URL('./app_bg.wasm', import.meta.url) });
