// Starts the page: loads the app's wasm (built by `wasm-bindgen --target web`) next to this file,
// and registers the service worker that lets the app open offline after the first visit.
//
// What the service worker does is told in a small notice, `#sw-status` (outside the app, which
// never waits for it): "offline use unavailable: <reason>" when it cannot be registered (the app
// works normally, just not offline), and "a new version is available" with a Reload button when a
// new deploy's worker is waiting (sw.js), so versions never mix silently.
import init from './app.js';

const started = init({ module_or_path: new URL('./app_bg.wasm', import.meta.url) });

/** The notice, added to the page once the app is in (mounting the app empties the body). */
async function statusElement() {
  await started.catch(() => {});
  let status = document.getElementById('sw-status');
  if (!status) {
    status = document.createElement('div');
    status.id = 'sw-status';
    status.className = 'sw-status';
    status.setAttribute('role', 'status');
    status.setAttribute('aria-live', 'polite');
    status.hidden = true;
    document.body.append(status);
  }
  return status;
}

/** Show `text` in the notice, with a button `action` ({ label, run }) when given. */
async function notify(kind, text, action) {
  const status = await statusElement();
  status.replaceChildren();
  status.dataset.kind = kind;
  const p = document.createElement('p');
  p.textContent = text;
  status.append(p);
  if (action) {
    const button = document.createElement('button');
    button.type = 'button';
    button.id = 'sw-action';
    button.textContent = action.label;
    button.addEventListener('click', action.run);
    status.append(button);
  }
  const close = document.createElement('button');
  close.type = 'button';
  close.className = 'secondary';
  close.id = 'sw-dismiss';
  close.setAttribute('aria-label', 'Dismiss this notice');
  close.textContent = '×';
  close.addEventListener('click', () => { status.hidden = true; });
  status.append(close);
  status.hidden = false;
}

const unavailable = (reason) => notify('unavailable', `offline use unavailable: ${reason}`);

/** A registration error's message without Chromium's preamble naming the scope and script. */
function reasonOf(error) {
  const message = (error && error.message) || String(error);
  const end = message.lastIndexOf('): ');
  return message.startsWith('Failed to register') && end > 0 ? message.slice(end + 3) : message;
}

function whyNoServiceWorker() {
  if (location.protocol === 'file:') return 'the page was opened from a file; serve the folder over HTTP(S) (docs/deployment.md)';
  if (!window.isSecureContext) return 'service workers need HTTPS (or localhost); this page came over plain HTTP';
  return 'this browser offers no service workers (a private window may disable them)';
}

if (!('serviceWorker' in navigator)) {
  unavailable(whyNoServiceWorker());
} else {
  // Reload only once the user asked for the new version and it took over.
  let reloadOnChange = false;
  navigator.serviceWorker.addEventListener('controllerchange', () => {
    if (reloadOnChange) {
      reloadOnChange = false;
      location.reload();
    }
  });
  const offer = (worker) => notify('update', 'A new version of tracelogic is available.', {
    label: 'Reload',
    run: () => {
      reloadOnChange = true;
      worker.postMessage({ type: 'skip-waiting' });
    },
  });
  // Scope: this folder, so the app works from any sub-path.
  navigator.serviceWorker.register(new URL('./sw.js', import.meta.url), { scope: './' })
    .then((registration) => {
      // A worker waiting while this page runs under an older one is a new version.
      if (registration.waiting && navigator.serviceWorker.controller) offer(registration.waiting);
      registration.addEventListener('updatefound', () => {
        const worker = registration.installing;
        worker?.addEventListener('statechange', () => {
          if (worker.state === 'installed' && navigator.serviceWorker.controller) offer(worker);
        });
      });
    })
    .catch((error) => unavailable(reasonOf(error)));
}
