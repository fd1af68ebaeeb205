#!/usr/bin/env node
// wasm ingest benchmark for bench/run: loads trace files into the built web app (dist/) in
// Debian's headless Chromium, the way a user picks them, and times the worker reading them,
// summarising them and building the communication matrix until the page is idle again. It also
// records the main thread's long tasks (PerformanceObserver 'longtask', tasks over 50 ms) while
// that runs, since the page must stay responsive while the worker parses.
//
// Usage: [TRACELOGIC_LOAD_WORKERS=N] node bench/wasm-ingest.mjs [--profile OUT.json] [--top N] DIST REPEAT PATH...
//   (PATH: a trace folder or one file; DIST: a build of scripts/build-web, e.g. TRACELOGIC_DIST=DIST)
// Prints one JSON object: {"runs": [{path, bytes, files, calls, ranks, workers, ms, page_ms, longest_task_ms,
// long_tasks}]}: `ms` as this script sees it (pick until its waitForSelector sees the page idle,
// which adds Playwright's polling delay, up to about 0.2 s), `page_ms` by the page's own clock
// (pick until the first frame drawn with the trace shown), both the minimum over REPEAT fresh
// pages; the long-task figures the maximum. Fails (exit 1) on a console error, a failed request,
// or a request to another origin.
//
// --profile OUT.json: after the timed loads, one more load of each PATH under Chrome's tracing
// (the V8 sampling profiler on every thread of the page, and the `tracelogic:` performance marks
// the page and the worker leave at each stage of a load). OUT.json gets, per PATH, the load's
// stages (page listing the files, worker start, reading the files into wasm memory, parse,
// matching, summary, matrix, encoding and posting the answer, the page decoding it, rendering
// until idle) with their wall and busy time and top functions, and per thread the top N (--top,
// default 15) functions by self time over the load; the same is printed on stderr. The profiled
// load is slower than the timed ones (the profiler's overhead) and is not part of `ms`. With
// TRACELOGIC_PROFILE_RAW=PREFIX the whole Chrome trace is also written to PREFIX-NAME.json (it opens
// in Chrome DevTools' Performance panel).

import { statSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { performance } from 'node:perf_hooks';
import { chromium, chromiumPath, chromiumArgs, prefix, parseArgs, filesOf, serveApp, watchPage } from './app-server.mjs';
import { TRACE_CATEGORIES, summarise, formatSummary } from './wasm-profile.mjs';

const USAGE = 'usage: node bench/wasm-ingest.mjs [--profile OUT.json] [--top N] DIST REPEAT PATH...';
const argv = process.argv.slice(2);
if (argv.includes('--help') || argv.includes('-h')) {
  console.log(USAGE);
  console.log('Times loading each PATH (a trace folder or file) into the web app built in DIST, in');
  console.log('headless Chromium, from the file pick until the page is idle; REPEAT fresh pages each,');
  console.log('minimum kept. --profile OUT.json adds one profiled load per PATH and writes the split of its');
  console.log('time by stage and thread and the top --top N (default 15) functions by self time per thread.');
  process.exit(0);
}
let profileOut = null;
let top = 15;
for (;;) {
  if (argv[0] === '--profile' && argv[1]) {
    profileOut = argv[1];
    argv.splice(0, 2);
  } else if (argv[0] === '--top' && Number.parseInt(argv[1], 10) > 0) {
    top = Number.parseInt(argv[1], 10);
    argv.splice(0, 2);
  } else if (argv[0]?.startsWith('--')) {
    console.error(`${USAGE}\nunknown or incomplete option ${argv[0]}`);
    process.exit(2);
  } else {
    break;
  }
}
const { dist, repeat, paths } = parseArgs('wasm-ingest.mjs', argv);
const { server, origin } = await serveApp(dist);
const browser = await chromium.launch({
  executablePath: chromiumPath,
  args: chromiumArgs,
});

/** One timed load of `path` in a fresh page; with `profiled`, under Chrome's tracing, and the
 * profile summary comes back as `profile`. */
async function loadOnce(path, profiled = false) {
  const page = await browser.newPage();
  const problems = watchPage(page, origin);
  await page.addInitScript(() => {
    window.__longTasks = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__longTasks.push({ start: e.startTime, ms: e.duration });
    }).observe({ type: 'longtask', buffered: true });
    // The page's own clock for the end of the load: the first frame drawn after the page went idle
    // showing the trace `__expectLabel` (a rendering step, then a task after it), free of the
    // polling delay of Playwright's waitForSelector.
    window.__drawnAt = null;
    const watch = () => {
      const app = document.querySelector('.app');
      const trace = document.querySelector('#trace');
      if (window.__drawnAt !== null || window.__waiting || !window.__expectLabel) return;
      if (app?.dataset.state !== 'idle' || trace?.dataset.label !== window.__expectLabel) return;
      window.__waiting = true;
      requestAnimationFrame(() => setTimeout(() => {
        window.__drawnAt = performance.mark('tracelogic:bench idle').startTime;
      }));
    };
    new MutationObserver(watch).observe(document, { subtree: true, childList: true, attributes: true });
  });
  // TRACELOGIC_LOAD_WORKERS=N: the pool of workers that reads a DUMPI or OTF2 load (default: the
  // page's, as many as the machine has cores; 1: the load's worker alone).
  const pool = process.env.TRACELOGIC_LOAD_WORKERS;
  await page.goto(origin + prefix + '?sample=none' + (pool ? `&load-workers=${pool}` : ''));
  await page.waitForSelector('.app[data-state="idle"]', { timeout: 120_000 });
  const folder = statSync(path).isDirectory();
  const label = basename(path);
  if (profiled) await browser.startTracing(page, { categories: TRACE_CATEGORIES });
  const startInPage = await page.evaluate((l) => {
    window.__expectLabel = l;
    return performance.mark('tracelogic:bench pick').startTime;
  }, label);
  const t0 = performance.now();
  await page.setInputFiles(folder ? '#pick-folder' : '#pick-files', path);
  await page.waitForSelector(`#trace[data-label="${label}"]`, { timeout: 600_000 });
  await page.waitForSelector('.app[data-state="idle"]', { timeout: 600_000 });
  const ms = performance.now() - t0;
  const drawnAt = await page.waitForFunction(() => window.__drawnAt, null, { timeout: 60_000 }).then((h) => h.jsonValue());
  const pageMs = drawnAt - startInPage;
  let profile;
  if (profiled) {
    const raw = await browser.stopTracing();
    if (process.env.TRACELOGIC_PROFILE_RAW) writeFileSync(`${process.env.TRACELOGIC_PROFILE_RAW}-${basename(path)}.json`, raw);
    const trace = JSON.parse(raw.toString('utf8'));
    profile = summarise(Array.isArray(trace) ? trace : trace.traceEvents, top);
  }
  const calls = Number(await page.getAttribute('[data-stat="calls"]', 'data-value'));
  const ranks = Number(await page.getAttribute('[data-stat="ranks"]', 'data-value'));
  const workers = Number(await page.getAttribute('#trace', 'data-workers'));
  const tasks = await page.evaluate((t) => window.__longTasks.filter((e) => e.start >= t), startInPage);
  const error = await page.$('.error');
  if (error) problems.push(`the page shows an error: ${await error.textContent()}`);
  await page.close();
  if (problems.length) throw new Error(`${path}: ${problems.join('; ')}`);
  return {
    ms,
    page_ms: pageMs,
    calls,
    ranks,
    workers,
    longest_task_ms: tasks.reduce((m, e) => Math.max(m, e.ms), 0),
    long_tasks: tasks.length,
    profile,
  };
}

const runs = [];
const profiles = [];
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
        page_ms: Math.min(best.page_ms, r.page_ms),
        longest_task_ms: Math.max(best.longest_task_ms, r.longest_task_ms),
        long_tasks: Math.max(best.long_tasks, r.long_tasks),
      };
    }
    delete best.profile;
    runs.push({ path, bytes: files.reduce((s, f) => s + f.size, 0), files: files.length, ...best });
    console.error(`wasm ingest ${path}: ${JSON.stringify(runs.at(-1))}`);
    if (profileOut) {
      const { profile, ms } = await loadOnce(path, true);
      profiles.push({ path, profiled_ms: ms, ...profile });
      console.error(formatSummary(path, profile));
    }
  }
  if (profileOut) writeFileSync(profileOut, JSON.stringify({ profiles }, null, 1) + '\n');
} catch (e) {
  console.error(String(e?.stack || e));
  failed = true;
} finally {
  await browser.close();
  server.close();
}
if (failed) process.exit(1);
console.log(JSON.stringify({ runs }));
