#!/usr/bin/env node
// The web page's overview of a large OTF2 folder (docs/large-traces.md, "In the web page"): picks
// the folder in Debian's headless Chromium, times the pick until the Overview view is on screen,
// and reads the worker's WebAssembly memory after it (wasm memory only grows: the peak of the
// pass) and the page's JS heap. With RANKS (e.g. 0-3) it then loads that part and times it too.
//
// Usage: [TRACELOGIC_FULL_LOAD_LIMIT=BYTES] [TRACELOGIC_OVERVIEW_WORKERS=N] node bench/web-overview.mjs DIST FOLDER [RANKS [FROM TO]]
//   (DIST: a build of scripts/build-web, e.g. TRACELOGIC_DIST=DIST scripts/build-web)
// Prints one JSON object: {bytes, ranks, calls, overview_ms, worker_wasm_bytes, page_heap_bytes,
// part_ms, part_calls, part_worker_wasm_bytes}.

import { performance } from 'node:perf_hooks';
import { chromium, chromiumPath, chromiumArgs, prefix, serveApp, watchPage } from './app-server.mjs';

const [dist, folder, ranks, from, to] = process.argv.slice(2);
if (!dist || !folder) {
  console.error('usage: node bench/web-overview.mjs DIST FOLDER [RANKS [FROM TO]]');
  process.exit(2);
}
const { server, origin } = await serveApp(dist);
const browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs });
const page = await browser.newPage();
const problems = watchPage(page, origin);
// The analysis worker's wasm memory, as the worker records it (self.__tracelogicMemoryBytes).
const workers = [];
page.on('worker', (w) => workers.push(w));
const wasmBytes = async () => {
  let most = 0;
  for (const w of workers) {
    try { most = Math.max(most, (await w.evaluate(() => self.__tracelogicMemoryBytes || 0))); } catch { /* ended */ }
  }
  return most;
};
// TRACELOGIC_FULL_LOAD_LIMIT=BYTES lowers the page's limit (a small folder then takes this path too).
// TRACELOGIC_OVERVIEW_WORKERS=N sets the pool of workers that read the ranks (default: the cores).
const limit = process.env.TRACELOGIC_FULL_LOAD_LIMIT;
const pool = process.env.TRACELOGIC_OVERVIEW_WORKERS;
const query = [limit && `full-load-limit=${limit}`, pool && `overview-workers=${pool}`].filter(Boolean).join('&');
await page.goto(`${origin}${prefix}${query ? `?${query}` : ''}#sample=none`);
await page.waitForSelector('.app[data-state="idle"]', { timeout: 120_000 });
const out = {};
let t = performance.now();
await page.setInputFiles('#pick-folder', folder);
await page.waitForSelector('#view-overview', { timeout: 3_600_000 });
await page.waitForSelector('.app[data-state="idle"]', { timeout: 600_000 });
out.overview_ms = Math.round(performance.now() - t);
const stat = (id) => page.getAttribute(`#view-overview [data-stat="${id}"]`, 'data-value');
out.bytes = Number(await stat('input_bytes'));
out.ranks = Number(await stat('ranks'));
out.calls = Number(await stat('calls'));
out.worker_wasm_bytes = Number(await page.getAttribute('#view-overview', 'data-worker-memory'));
out.page_heap_bytes = await page.evaluate(() => performance.memory?.usedJSHeapSize ?? 0);
if (ranks) {
  await page.fill('#overview-ranks', ranks);
  if (from) await page.fill('#overview-from', from);
  if (to) await page.fill('#overview-to', to);
  t = performance.now();
  await page.click('#overview-load');
  await page.waitForSelector('#trace, #error', { timeout: 600_000 });
  await page.waitForSelector('.app[data-state="idle"]', { timeout: 600_000 });
  out.part_ms = Math.round(performance.now() - t);
  out.part_error = (await page.$('#error')) ? await page.textContent('#error') : undefined;
  out.part_calls = Number(await page.getAttribute('[data-stat="calls"]', 'data-value'));
  out.part_worker_wasm_bytes = await wasmBytes();
}
console.log(JSON.stringify(out));
await browser.close();
server.close();
if (problems.length) {
  console.error(problems.join('\n'));
  process.exit(1);
}
