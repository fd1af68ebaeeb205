#!/usr/bin/env node
// wasm ingest benchmark for bench/run: loads trace files into the built web app (dist/) in
// Debian's headless Chromium, the way a user picks them, and times the worker reading them,
// summarising them and building the communication matrix until the page is idle again. It also
// records the main thread's long tasks (PerformanceObserver 'longtask', tasks over 50 ms) while
// that runs, since the page must stay responsive while the worker parses.
//
// Usage: node bench/wasm-ingest.mjs DIST REPEAT PATH...   (PATH: a trace folder or one file)
// Prints one JSON object: {"runs": [{path, bytes, files, calls, ranks, ms, longest_task_ms,
// long_tasks}]}: `ms` the minimum over REPEAT fresh pages, the long-task figures the maximum. Fails (exit
// 1) on a console error, a failed request, or a request to another origin.

import { statSync } from 'node:fs';
import { basename } from 'node:path';
import { performance } from 'node:perf_hooks';
import { chromium, chromiumPath, chromiumArgs, prefix, parseArgs, filesOf, serveApp, watchPage } from './app-server.mjs';

const { dist, repeat, paths } = parseArgs('wasm-ingest.mjs');
const { server, origin } = await serveApp(dist);
const browser = await chromium.launch({
  executablePath: chromiumPath,
  args: chromiumArgs,
});

/** One timed load of `path` in a fresh page. */
async function loadOnce(path) {
  const page = await browser.newPage();
  const problems = watchPage(page, origin);
  await page.addInitScript(() => {
    window.__longTasks = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__longTasks.push({ start: e.startTime, ms: e.duration });
    }).observe({ type: 'longtask', buffered: true });
  });
  await page.goto(origin + prefix + '?sample=none');
  await page.waitForSelector('.app[data-state="idle"]', { timeout: 120_000 });
  const folder = statSync(path).isDirectory();
  const label = basename(path);
  const startInPage = await page.evaluate(() => performance.now());
  const t0 = performance.now();
  await page.setInputFiles(folder ? '#pick-folder' : '#pick-files', path);
  await page.waitForSelector(`#trace[data-label="${label}"]`, { timeout: 600_000 });
  await page.waitForSelector('.app[data-state="idle"]', { timeout: 600_000 });
  const ms = performance.now() - t0;
  const calls = Number(await page.getAttribute('[data-stat="calls"]', 'data-value'));
  const ranks = Number(await page.getAttribute('[data-stat="ranks"]', 'data-value'));
  const tasks = await page.evaluate((t) => window.__longTasks.filter((e) => e.start >= t), startInPage);
  const error = await page.$('.error');
  if (error) problems.push(`the page shows an error: ${await error.textContent()}`);
  await page.close();
  if (problems.length) throw new Error(`${path}: ${problems.join('; ')}`);
  return {
    ms,
    calls,
    ranks,
    longest_task_ms: tasks.reduce((m, e) => Math.max(m, e.ms), 0),
    long_tasks: tasks.length,
  };
}

const runs = [];
let failed = false;
try {
  for (const path of paths) {
    const files = filesOf(path);
    let best = null;
    for (let i = 0; i < repeat; i++) {
      const r = await loadOnce(path);
      // The fastest load, but the worst main-thread stall seen in any of them.
      best = best === null ? r : {
        ...r,
        ms: Math.min(best.ms, r.ms),
        longest_task_ms: Math.max(best.longest_task_ms, r.longest_task_ms),
        long_tasks: Math.max(best.long_tasks, r.long_tasks),
      };
    }
    runs.push({ path, bytes: files.reduce((s, f) => s + f.size, 0), files: files.length, ...best });
    console.error(`wasm ingest ${path}: ${JSON.stringify(runs.at(-1))}`);
  }
} catch (e) {
  console.error(String(e?.stack || e));
  failed = true;
} finally {
  await browser.close();
  server.close();
}
if (failed) process.exit(1);
console.log(JSON.stringify({ runs }));
