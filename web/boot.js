// Starts the page: loads the app's wasm (built by `wasm-bindgen --target web`) next to this file,
// and registers the service worker that lets the app open offline after the first visit.
import init from './app.js';

init({ module_or_path: new URL('./app_bg.wasm', import.meta.url) });

if ('serviceWorker' in navigator && (location.protocol === 'https:' || location.protocol === 'http:')) {
  // Scope: this folder, so the app works from any sub-path. A failure (a server that refuses
  // service workers, a private window) only means no offline copy.
  navigator.serviceWorker.register(new URL('./sw.js', import.meta.url), { scope: './' }).catch(() => {});
}
