#!/usr/bin/env node
// wasm stage benchmark for bench/run's scaling section: opens a trace in the built web app
// (dist/) in Debian's headless Chromium through the app's folder/file picker, then clicks
// through the analysis views (matrix, topology, logical, patterns, phases, what-if) and times
// each from the click until the view is drawn (its element is there and no "Computing…" note is
// left), as the measure mode of web/tests/platform.test.mjs does.
//
// Usage: node bench/wasm-stages.mjs DIST REPEAT PATH...   (PATH: a trace folder or one file)
// Prints one JSON object: {"runs": [{path, bytes, files, calls, ranks, open_ms, open_cpu_ms, views:
// {name: ms}, wasm_memory_bytes, renderer_peak_rss_kb, longest_task_ms}]}. Times are the minimum over
// REPEAT fresh browsers; the memory and long-task figures the maximum. `open_cpu_ms` is the user +
// system CPU time all of the browser's processes spent from the pick until idle (10 ms ticks): on
// a machine others load, the figure to compare with the CLI's user + system time. A fresh browser per load
// makes the renderer's peak resident memory (VmHWM, the page and its worker) that of this trace.
// Fails (exit 1) on a console error, a failed request, a request to another origin, or an
// error shown by the page.
//
// TRACELOGIC_PROFILE_VIEWS=OUT.json: the views of the last repeat are clicked under Chrome's tracing
// (the sampling profiler of every thread, and the `tracelogic:` marks): OUT.json gets, per view, its
// wall time under the profiler, each thread's busy time and top functions by self time, and the
// worker's marks in between (the same is printed on stderr).

import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { performance } from 'node:perf_hooks';
import { TRACE_CATEGORIES, threadProfiles, marks, selfTimes } from './wasm-profile.mjs';
import { chromium, chromiumPath, chromiumArgs, prefix, parseArgs, filesOf, serveApp, watchPage } from './app-server.mjs';

const { dist, repeat, paths } = parseArgs('wasm-stages.mjs');
// TRACELOGIC_MEASURE_VIEWS=a,b: the views clicked (default every analysis view; empty: the open alone).
const VIEWS = (process.env.TRACELOGIC_MEASURE_VIEWS ?? 'matrix,topology,logical,patterns,phases,whatif').split(',').filter(Boolean);
const LIMIT_MS = 1_800_000;
const PROFILE_OUT = process.env.TRACELOGIC_PROFILE_VIEWS;

/** Per view of a traced run: wall ms, each thread's busy ms and top functions, and the marks. */
function viewProfiles(events) {
  const threads = threadProfiles(events);
  const all = marks(events);
  const out = [];
  for (const view of VIEWS) {
    const from = all.find((m) => m.name === `bench view ${view}`);
    const to = all.find((m) => m.name === `bench view ${view} drawn` && m.ts >= (from?.ts ?? 0));
    if (!from || !to) continue;
    const label = (t) => (t.name === 'CrRendererMain' ? 'page' : `${t.name} ${t.tid}`);
    out.push({
      view,
      ms: (to.ts - from.ts) / 1000,
      threads: threads
        .map((t) => ({ thread: label(t), ...selfTimes(t, from.ts, to.ts) }))
        .filter((t) => t.busy_ms >= 1)
        .map((t) => ({ thread: t.thread, busy_ms: t.busy_ms, top: t.functions.slice(0, 12) })),
      marks: all
        .filter((m) => m.ts >= from.ts && m.ts <= to.ts)
        .map((m) => ({ name: m.name, ms: (m.ts - from.ts) / 1000, tid: m.tid })),
    });
  }
  return out;
}

/** Process ids descending from this node process, with their command lines. */
function descendants() {
  const parent = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // The command name may hold spaces and parentheses: the fields after its last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parent.set(Number(name), ppid);
    } catch {
      // The process ended while /proc was listed.
    }
  }
  const mine = [];
  for (const pid of parent.keys()) {
    for (let p = parent.get(pid), hops = 0; p && hops < 64; p = parent.get(p), hops++) {
      if (p === process.pid) {
        mine.push(pid);
        break;
      }
    }
  }
  return mine;
}

/** CPU time (user + system, ms) spent so far by the Chromium processes started by us and still
 * running: the renderer with the page and its workers, the browser process reading the files,
 * the GPU and utility processes. */
function browserCpuMs() {
  const tick = 10; // USER_HZ is 100 on Linux: /proc/PID/stat counts in 10 ms ticks.
  let ticks = 0;
  for (const pid of descendants()) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // Gone already.
    }
  }
  return ticks * tick;
}

/** The largest peak resident memory (VmHWM, KiB) of Chromium's renderer processes started by us. */
function rendererPeakKb() {
  let peak = 0;
  for (const pid of descendants()) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--type=renderer')) continue;
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (m) peak = Math.max(peak, Number(m[1]));
    } catch {
      // Gone already.
    }
  }
  return peak;
}

const { server, origin } = await serveApp(dist);

/** One timed open of `path` and of every view, in a fresh browser. */
async function measureOnce(path, profiled = false) {
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    args: chromiumArgs,
  });
  try {
    const page = await browser.newPage();
    const problems = watchPage(page, origin);
    await page.addInitScript(() => {
      window.__longTasks = [];
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) window.__longTasks.push(e.duration);
      }).observe({ type: 'longtask', buffered: true });
    });
    // TRACELOGIC_WHATIF_WORKERS=N: the what-if's pool of workers (default: the page's, its worker alone).
    const whatif = process.env.TRACELOGIC_WHATIF_WORKERS;
    await page.goto(origin + prefix + '?sample=none' + (whatif ? `&whatif-workers=${whatif}` : ''));
    await page.waitForSelector('.app[data-state="idle"]', { timeout: 120_000 });
    const folder = statSync(path).isDirectory();
    const cpu0 = browserCpuMs();
    const t0 = performance.now();
    await page.setInputFiles(folder ? '#pick-folder' : '#pick-files', path);
    await page.waitForSelector(`#trace[data-label="${basename(path)}"]`, { timeout: LIMIT_MS });
    await page.waitForSelector('.app[data-state="idle"]', { timeout: LIMIT_MS });
    const openMs = performance.now() - t0;
    const openCpuMs = browserCpuMs() - cpu0;
    const shown = await page.$('.error, #error');
    if (shown) throw new Error(`${path}: the page shows an error after opening: ${await shown.textContent()}`);
    const calls = Number(await page.getAttribute('[data-stat="calls"]', 'data-value'));
    const ranks = Number(await page.getAttribute('[data-stat="ranks"]', 'data-value'));
    // The page may also hold a spare worker for the next load: the largest memory is the trace's.
    let wasmMemory = 0;
    for (const worker of page.workers()) {
      wasmMemory = Math.max(wasmMemory, await worker.evaluate(() => self.__tracelogicMemoryBytes || 0).catch(() => 0));
    }
    const views = {};
    if (profiled) await browser.startTracing(page, { categories: TRACE_CATEGORIES });
    for (const view of VIEWS) {
      if (profiled) await page.evaluate((v) => performance.mark(`tracelogic:bench view ${v}`), view);
      const t = performance.now();
      await page.click(`#nav-${view}`);
      await page.waitForSelector(`#view-${view}`, { timeout: LIMIT_MS });
      // Two animation frames, so that a request sent on the click has put up its note.
      await page.evaluate(() => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok))));
      await page.waitForFunction((id) => document.querySelector(`#view-${id}`) && !document.querySelector('main .waiting'),
        view, { timeout: LIMIT_MS, polling: 50 });
      views[view] = performance.now() - t;
      if (profiled) await page.evaluate((v) => performance.mark(`tracelogic:bench view ${v} drawn`), view);
      const err = await page.$('#error');
      if (err) throw new Error(`${path}: the ${view} view shows an error: ${await err.textContent()}`);
    }
    let profile;
    if (profiled) {
      const trace = JSON.parse((await browser.stopTracing()).toString('utf8'));
      profile = viewProfiles(Array.isArray(trace) ? trace : trace.traceEvents);
    }
    const longest = await page.evaluate(() => Math.max(0, ...window.__longTasks));
    const peak = rendererPeakKb();
    if (problems.length) throw new Error(`${path}: ${problems.join('; ')}`);
    return { open_ms: openMs, open_cpu_ms: openCpuMs, views, calls, ranks, wasm_memory_bytes: wasmMemory, renderer_peak_rss_kb: peak,
      longest_task_ms: longest, profile };
  } finally {
    await browser.close();
  }
}

const runs = [];
let failed = false;
try {
  for (const path of paths) {
    const files = filesOf(path);
    let best = null;
    for (let i = 0; i < repeat; i++) {
      const r = await measureOnce(path, Boolean(PROFILE_OUT) && i === repeat - 1);
      if (r.profile) {
        writeFileSync(PROFILE_OUT, JSON.stringify({ path, views: r.profile }, null, 1) + '\n');
        for (const v of r.profile) {
          console.error(`profile of ${v.view}: ${v.ms.toFixed(0)} ms under the profiler`);
          for (const m of v.marks) console.error(`  mark ${m.ms.toFixed(0).padStart(7)} ms  ${m.name} (tid ${m.tid})`);
          for (const t of v.threads) {
            console.error(`  ${t.thread}: ${t.busy_ms.toFixed(0)} ms busy`);
            for (const f of t.top) console.error(`    ${f.self_ms.toFixed(0).padStart(7)}  ${f.function.slice(0, 110)} [${f.code}]`);
          }
        }
      }
      delete r.profile;
      best = best === null ? r : {
        ...r,
        open_ms: Math.min(best.open_ms, r.open_ms),
        open_cpu_ms: Math.min(best.open_cpu_ms, r.open_cpu_ms),
        views: Object.fromEntries(VIEWS.map((v) => [v, Math.min(best.views[v], r.views[v])])),
        wasm_memory_bytes: Math.max(best.wasm_memory_bytes, r.wasm_memory_bytes),
        renderer_peak_rss_kb: Math.max(best.renderer_peak_rss_kb, r.renderer_peak_rss_kb),
        longest_task_ms: Math.max(best.longest_task_ms, r.longest_task_ms),
      };
    }
    runs.push({ path, bytes: files.reduce((s, f) => s + f.size, 0), files: files.length, ...best });
    console.error(`wasm stages ${path}: ${JSON.stringify(runs.at(-1))}`);
  }
} catch (e) {
  console.error(String(e?.stack || e));
  failed = true;
} finally {
  server.close();
}
if (failed) process.exit(1);
console.log(JSON.stringify({ runs }));
