// What the wasm benchmarks share (bench/wasm-ingest.mjs, bench/wasm-stages.mjs): Debian's
// Chromium through playwright-core, the built app served from a sub-path on 127.0.0.1, and the
// trace files a path stands for.

import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { readFileSync, readdirSync, existsSync, statSync } from 'node:fs';
import { join, extname, resolve, dirname, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
// playwright-core is installed for the browser tests under web/.
export const { chromium } = createRequire(join(root, 'web/package.json'))('playwright-core');
export const chromiumPath = process.env.CHROMIUM || '/usr/bin/chromium';
/** Chromium flags for a quiet measurement. */
export const chromiumArgs = ['--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'];
// Served from a sub-path, as in the browser tests, so every URL of the app must be relative.
export const prefix = '/bench/sub/path/';
const types = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
};

/** The command line `SCRIPT DIST REPEAT PATH...` (`args`, by default the process's), checked;
 * exits 2 with the usage otherwise. */
export function parseArgs(script, args = process.argv.slice(2)) {
  const [dist, repeatArg, ...paths] = args;
  if (!dist || !repeatArg || paths.length === 0) {
    console.error(`usage: node bench/${script} DIST REPEAT PATH...`);
    process.exit(2);
  }
  if (!existsSync(join(dist, 'index.html'))) {
    console.error(`${dist}/index.html is missing: run TRACELOGIC_DIST=${dist} scripts/build-web first`);
    process.exit(2);
  }
  return { dist, repeat: Math.max(1, Number.parseInt(repeatArg, 10) || 1), paths };
}

/** Every file under `path` (or `path` itself), with its size. */
export function filesOf(path) {
  if (statSync(path).isFile()) return [{ path, size: statSync(path).size }];
  return readdirSync(path, { recursive: true })
    .map((rel) => join(path, rel))
    .filter((p) => statSync(p).isFile())
    .map((p) => ({ path: p, size: statSync(p).size }));
}

/** Serve `dist` (relative or absolute) under `prefix` on a free port of 127.0.0.1; resolves to
 * { server, origin }. */
export async function serveApp(dist) {
  const base = resolve(dist);
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    if (!path.startsWith(prefix)) {
      res.writeHead(404).end('outside the app');
      return;
    }
    const file = normalize(join(base, path.slice(prefix.length) || 'index.html'));
    if (!file.startsWith(base + sep) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': types[extname(file)] || 'application/octet-stream' });
    res.end(readFileSync(file));
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  return { server, origin: `http://127.0.0.1:${server.address().port}` };
}

/** What goes wrong on `page` (console errors, page errors, failed or refused requests,
 * requests to anywhere but `origin`), collected into the returned list as it happens. */
export function watchPage(page, origin) {
  const problems = [];
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()}`));
  page.on('response', (r) => { if (r.status() >= 400) problems.push(`HTTP ${r.status()} for ${r.url()}`); });
  page.on('request', (r) => {
    const u = r.url();
    if (!u.startsWith(origin + '/') && !u.startsWith('data:') && !u.startsWith('blob:')) problems.push(`foreign request: ${u}`);
  });
  return problems;
}
