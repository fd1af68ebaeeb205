// Service worker of the tracelogic web app: after the first visit the app opens offline.
//
// scripts/build-web replaces BUILD_VERSION with a hash of the built files and PRECACHE with their
// list, so every deploy gets its own cache and the old one is deleted when the new worker takes
// over. Only this origin's own files are ever cached or answered: the app makes no request to
// another origin, and requests to one pass through untouched.
//
// Versions never mix: a new deploy's worker installs its cache beside the old one and then waits
// while a page of the old version is open (that page keeps being answered from the old cache).
// The page (boot.js) offers "Reload", which posts 'skip-waiting'; only then does the new worker
// take over, delete the old cache, and the page reloads onto the new version. The first install,
// with no worker before it, takes over at once.
const BUILD_VERSION = '__TRACELOGIC_BUILD_VERSION__';
const PRECACHE = ['./', 'index.html' /*__TRACELOGIC_PRECACHE__*/];
const CACHE = `tracelogic-${BUILD_VERSION}`;
// A copy that no build versioned (Trunk copies this file as it is) caches nothing, so a rebuild is
// never hidden behind old files.
const VERSIONED = !BUILD_VERSION.startsWith('__');

self.addEventListener('install', (event) => {
  if (!VERSIONED) {
    self.skipWaiting();
    return;
  }
  event.waitUntil(
    caches.open(CACHE)
      .then((cache) => cache.addAll(PRECACHE.map((p) => new Request(p, { cache: 'reload' }))))
      .then(() => (self.registration.active ? undefined : self.skipWaiting())),
  );
});

// The page's "Reload" on a new version: take over now (see above).
self.addEventListener('message', (event) => {
  if (event.data && event.data.type === 'skip-waiting') self.skipWaiting();
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches.keys()
      .then((keys) => Promise.all(keys.filter((k) => k.startsWith('tracelogic-') && k !== CACHE).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

// Cache first for the app's own files (they only change with a new deploy, which brings a new
// cache); anything else of this origin (a sample not precached) is fetched and kept for the
// next offline visit. The page's address fragment never reaches the server, and a query string
// (?sample=...) names the same page.
self.addEventListener('fetch', (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (!VERSIONED || request.method !== 'GET' || url.origin !== self.location.origin) return;
  event.respondWith((async () => {
    const cache = await caches.open(CACHE);
    const navigation = request.mode === 'navigate';
    const hit = await cache.match(request, { ignoreSearch: navigation });
    if (hit) return hit;
    try {
      const response = await fetch(request);
      if (response.ok && response.type === 'basic') await cache.put(request, response.clone());
      return response;
    } catch (error) {
      if (navigation) {
        const page = await cache.match('./');
        if (page) return page;
      }
      throw error;
    }
  })());
});
