// Browser tests of the web platform: files read in the worker, the size limit, the trace and
// settings kept across a reload (IndexedDB) and forgotten on request, the navigation state in the
// address fragment, keyboard navigation with back/forward, and offline use after the first visit
// (service worker). Same set-up as app.test.mjs: the built dist/ served from a sub-path on
// 127.0.0.1, Debian's headless Chromium, every request recorded, console errors fail the test.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, statSync, mkdtempSync, rmSync, openSync, closeSync, ftruncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp, root, cliJson, sampleDir } from './harness.mjs';

const mgDir = join(root, 'web/samples/npb-mg.S.8');
const prefix = '/some/sub/path/';

let app;
let origin;
let scratch;
/** Paths the server answered, in order (to see what an offline reload still asks for). */
const served = [];

function mgPaths() {
  return readdirSync(mgDir).sort().map((n) => join(mgDir, n));
}

async function idle(page) {
  await page.waitForSelector('.app[data-state="idle"]', { timeout: 60_000 });
}

/** Counts, on the page's own thread, every call that reads a Blob's or File's bytes. */
function countPageReads() {
  window.__pageReads = 0;
  const wrap = (proto, name) => {
    const original = proto[name];
    proto[name] = function (...args) {
      window.__pageReads += 1;
      return original.apply(this, args);
    };
  };
  for (const name of ['arrayBuffer', 'text', 'stream', 'bytes']) if (Blob.prototype[name]) wrap(Blob.prototype, name);
  for (const name of ['readAsArrayBuffer', 'readAsText', 'readAsBinaryString', 'readAsDataURL']) wrap(FileReader.prototype, name);
}

/** A page in a fresh context that records what the test must fail on (and counts page reads). */
const openPage = (url) => app.openPage(url);
const assertClean = (s) => app.assertClean(s);

async function close(s) {
  await s.context.close();
}

async function currentView(page) {
  return page.getAttribute('nav.views button[aria-current="page"]', 'id');
}

/** The current view once it is `expected` (or after 10 s): the page renders a key's view a frame later. */
async function viewAfter(page, expected) {
  const now = (id) => document.querySelector('nav.views button[aria-current="page"]')?.id === id;
  await page.waitForFunction(now, expected, { timeout: 10_000 }).catch(() => {});
  return currentView(page);
}

before(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'tracelogic-platform-'));
  app = await startApp(prefix, { onServe: (path) => served.push(path), initScript: countPageReads });
  origin = app.origin;
});

after(async () => {
  await app?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

test('picked files are read in the worker: the page reads no byte, the stages say so, the CLI agrees', async () => {
  const expected = cliJson(['summary', mgDir]);
  const s = await openPage(`${origin}${prefix}#sample=none`);
  const { page } = s;
  await page.setInputFiles('#pick-files', mgPaths());
  await page.waitForSelector('#trace', { timeout: 60_000 });
  await idle(page);
  assert.equal(await page.getAttribute('[data-stat="ranks"]', 'data-value'), String(expected.ranks));
  assert.equal(await page.getAttribute('[data-stat="calls"]', 'data-value'), String(expected.calls));
  assert.equal(await page.getAttribute('#load-log', 'data-read-in'), 'worker');
  const stages = await page.$$eval('#load-log li', (li) => li.map((e) => e.textContent));
  for (const path of mgPaths()) {
    const name = path.split('/').pop();
    assert.ok(stages.includes(`reading ${name} in the worker`), `stage for ${name} in ${JSON.stringify(stages)}`);
  }
  assert.equal(await page.evaluate(() => window.__pageReads), 0, 'the page thread read file content');
  assertClean(s);
  await close(s);
});

test('a trace over the limit is refused as too large, naming both numbers; the shown trace stays', async () => {
  const s = await openPage(`${origin}${prefix}#sample=npb-mg.S.8`);
  const { page } = s;
  await page.waitForSelector('#trace', { timeout: 60_000 });
  await idle(page);
  const label = await page.getAttribute('#trace', 'data-label');
  // A sparse file: its size is all that is looked at before refusing it.
  const big = join(scratch, 'huge-trace.bin');
  const size = 1700 * 1024 * 1024;
  const fd = openSync(big, 'w');
  ftruncateSync(fd, size);
  closeSync(fd);
  await page.setInputFiles('#pick-files', big);
  await page.waitForSelector('#error', { timeout: 60_000 });
  await idle(page);
  const message = await page.textContent('#error');
  assert.match(message, new RegExp(`huge-trace\\.bin: too large: ${size} bytes, limit \\d+`));
  assert.doesNotMatch(message, /invalid|format/i);
  assert.equal(await page.getAttribute('#trace', 'data-label'), label, 'the previous trace is still shown');
  assertClean(s);
  await close(s);
});

test('a loaded trace and its view survive a reload; "Forget stored traces" clears them', async () => {
  const s = await openPage(`${origin}${prefix}#sample=none`);
  const { page } = s;
  await page.setInputFiles('#pick-files', mgPaths());
  await page.waitForSelector('#trace', { timeout: 60_000 });
  await idle(page);
  const label = await page.getAttribute('#trace', 'data-label');
  const calls = await page.getAttribute('[data-stat="calls"]', 'data-value');
  await page.waitForSelector('#stored', { timeout: 10_000 });
  assert.match(await page.textContent('#stored'), new RegExp(`Kept in this browser.*${label}`));
  assert.doesNotMatch(page.url(), /sample=/, 'picked files are not a sample');
  await page.click('#nav-matrix');
  await page.locator('#threshold').fill('20');
  await page.waitForFunction(() => location.hash.includes('threshold=20'));
  assert.match(page.url(), /view=matrix/);

  // Reload the bare address: the stored trace and settings come back from IndexedDB.
  await page.goto(`${origin}${prefix}`);
  await page.waitForSelector('#trace', { timeout: 60_000 });
  await idle(page);
  assert.equal(await page.getAttribute('#trace', 'data-label'), label);
  assert.equal(await page.getAttribute('#load-log', 'data-read-in'), 'worker');
  assert.equal(await currentView(page), 'nav-matrix');
  assert.equal(await page.inputValue('#threshold'), '20');
  await page.click('#nav-summary');
  assert.equal(await page.getAttribute('[data-stat="calls"]', 'data-value'), calls);

  await page.click('#forget');
  await page.waitForFunction(() => document.querySelector('#notice')?.textContent.includes('forgotten'));
  assert.equal(await page.$('#stored'), null);
  assert.equal(await page.getAttribute('#trace', 'data-label'), label, 'forgetting keeps the trace on screen');
  await page.goto(`${origin}${prefix}`);
  await page.waitForSelector('#trace', { timeout: 60_000 });
  await idle(page);
  assert.match(await page.textContent('#trace h2'), /NPB LU/, 'after forgetting, the default sample opens');
  assert.equal(await page.$('#stored'), null);
  assert.equal(await currentView(page), 'nav-summary');
  assertClean(s);
  await close(s);
});

test('a fragment address opens its sample, view and threshold', async () => {
  const expected = cliJson(['matrix', mgDir, '--threshold', '30']);
  const s = await openPage(`${origin}${prefix}#sample=npb-mg.S.8&view=matrix&threshold=30`);
  const { page } = s;
  await page.waitForSelector('#view-matrix', { timeout: 60_000 });
  await idle(page);
  assert.match(await page.textContent('#trace h2'), /NPB MG/);
  assert.equal(await currentView(page), 'nav-matrix');
  assert.equal(await page.inputValue('#threshold'), '30');
  assert.equal(await page.getAttribute('#threshold-effect', 'data-removed'), String(expected.removed_entries));
  const s2 = await openPage(`${origin}${prefix}#sample=npb-mg.S.8&view=phases`);
  await s2.page.waitForSelector('#view-phases', { timeout: 60_000 });
  assert.equal(await currentView(s2.page), 'nav-phases');
  assertClean(s);
  assertClean(s2);
  await close(s);
  await close(s2);
});

test('keys 1-8 and the arrows switch views, back and forward follow, ? shows the help', async () => {
  const s = await openPage(`${origin}${prefix}#sample=npb-mg.S.8`);
  const { page } = s;
  await page.waitForSelector('#trace', { timeout: 60_000 });
  await idle(page);
  assert.equal(await viewAfter(page, 'nav-summary'), 'nav-summary');
  await page.keyboard.press('2');
  assert.equal(await viewAfter(page, 'nav-matrix'), 'nav-matrix');
  assert.match(page.url(), /#sample=npb-mg\.S\.8&view=matrix$/);
  await page.keyboard.press('ArrowRight');
  assert.equal(await viewAfter(page, 'nav-profile'), 'nav-profile');
  await page.keyboard.press('5');
  assert.equal(await viewAfter(page, 'nav-topology'), 'nav-topology');
  await page.keyboard.press('8');
  assert.equal(await viewAfter(page, 'nav-phases'), 'nav-phases');
  await page.keyboard.press('ArrowLeft');
  assert.equal(await viewAfter(page, 'nav-patterns'), 'nav-patterns');
  await page.goBack();
  await page.waitForFunction(() => location.hash.includes('view=phases'));
  assert.equal(await viewAfter(page, 'nav-phases'), 'nav-phases');
  await page.goBack();
  await page.waitForFunction(() => location.hash.includes('view=topology'));
  assert.equal(await viewAfter(page, 'nav-topology'), 'nav-topology');
  await page.goForward();
  await page.waitForFunction(() => location.hash.includes('view=phases'));
  assert.equal(await viewAfter(page, 'nav-phases'), 'nav-phases');
  // Typing in a field is not navigation.
  await page.keyboard.press('1');
  assert.equal(await currentView(page), 'nav-summary');
  await page.click('#nav-matrix');
  await page.focus('#sel-ranks');
  await page.keyboard.type('3');
  assert.equal(await currentView(page), 'nav-matrix');
  await page.locator('#sel-ranks').blur();
  await page.keyboard.press('?');
  await page.waitForSelector('#help');
  const help = await page.textContent('#help');
  for (const title of ['Summary', 'Matrix', 'Topology', 'Logical trace', 'Patterns', 'Phases', 'What-if', 'Compare']) {
    assert.ok(help.includes(title), `help lists ${title}`);
  }
  await page.keyboard.press('Escape');
  assert.equal(await page.$('#help'), null);
  assertClean(s);
  await close(s);
});

test('after the first visit the app opens offline (service worker), with no request of its own elsewhere', async () => {
  const s = await openPage(`${origin}${prefix}`);
  const { page, context } = s;
  await page.waitForSelector('#trace', { timeout: 60_000 });
  await idle(page);
  await page.evaluate(async () => {
    await navigator.serviceWorker.ready;
    if (!navigator.serviceWorker.controller) {
      await new Promise((ok) => navigator.serviceWorker.addEventListener('controllerchange', ok, { once: true }));
    }
  });
  await context.setOffline(true);
  const before = served.length;
  await page.reload();
  await page.waitForSelector('#trace', { timeout: 60_000 });
  await idle(page);
  assert.match(await page.textContent('#trace h2'), /NPB LU/);
  assert.equal(await page.$('#error'), null);
  assert.deepEqual(served.slice(before), [], 'nothing reached the server while offline');
  const csp = await page.getAttribute('meta[http-equiv="Content-Security-Policy"]', 'content');
  assert.match(csp, /default-src 'self'/);
  assert.doesNotMatch(csp, /'unsafe-eval'|https?:/);
  assertClean(s);
  await close(s);
});

test('a worker that dies (as on running out of memory or a panic) is replaced: the trace stays on screen and the views keep answering', async () => {
  const s = await openPage(`${origin}${prefix}#sample=npb-mg.S.8`);
  const { page } = s;
  await page.waitForSelector('#trace', { timeout: 60_000 });
  await idle(page);
  const label = await page.getAttribute('#trace', 'data-label');
  const workers = page.workers();
  assert.equal(workers.length, 1, 'one analysis worker holds the trace');
  const expected = cliJson(['patterns', sampleDir('npb-mg.S.8')]);
  // An uncaught error in the worker, as a WebAssembly trap on exhausted memory raises.
  await workers[0].evaluate(() => setTimeout(() => { throw new Error('simulated trap'); }, 0));
  await page.waitForSelector('#error', { timeout: 10_000 });
  const error = await page.textContent('#error');
  assert.match(error, /analysis worker stopped: it most likely ran out of memory/);
  assert.match(error, /A new worker is reading the trace again/);
  assert.equal(await page.getAttribute('#trace', 'data-label'), label);
  // A request made while the new worker reads the trace waits for it, then is answered.
  await page.click('#nav-patterns');
  await page.waitForSelector('#patterns-table', { timeout: 120_000 });
  await page.waitForFunction((n) => document.querySelector('#patterns-count')?.dataset.value === String(n), expected.communication_patterns.length, { timeout: 120_000 });
  assert.equal(await page.getAttribute('#trace', 'data-label'), label);
  s.problems = s.problems.filter((p) => !p.includes('simulated trap'));
  assertClean(s);
  await close(s);
});

// Measurement, not a check: TRACELOGIC_LARGE_TRACE=DIR opens every file of DIR (e.g. a
// `tracelogic generate --format dumpi` folder) through the file picker, then runs every
// analysis view (TRACELOGIC_MEASURE_VIEWS=matrix,topology,... picks them), and prints the times and the longest main-thread task (PerformanceObserver
// 'longtask'). Run it against an optimised build (scripts/build-web without --dev).
const large = process.env.TRACELOGIC_LARGE_TRACE;
test('measure: open and analyse a large trace set', { skip: !large && 'set TRACELOGIC_LARGE_TRACE=DIR to measure' }, async () => {
  const paths = readdirSync(large).sort().map((n) => join(large, n));
  const bytes = paths.reduce((sum, p) => sum + statSync(p).size, 0);
  const context = await app.browser.newContext();
  const page = await context.newPage();
  await page.addInitScript(() => {
    window.__longTasks = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__longTasks.push([e.startTime, e.duration]);
    }).observe({ type: 'longtask', buffered: true });
  });
  const problems = [];
  page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()); });
  page.on('pageerror', (e) => problems.push(e.message));
  await page.goto(`${origin}${prefix}#sample=none`);
  await page.waitForSelector('#dropzone');
  const marks = [['start', await page.evaluate(() => performance.now())]];
  const t0 = Date.now();
  await page.setInputFiles('#pick-files', paths);
  await page.waitForSelector('.app[data-state="loading"]', { timeout: 60_000 });
  await page.waitForSelector('.app[data-state="idle"]', { timeout: 3_600_000 });
  const openMs = Date.now() - t0;
  marks.push(['open', await page.evaluate(() => performance.now())]);
  const error = await page.$('#error') ? await page.textContent('#error') : null;
  const times = { open: openMs };
  if (!error) {
    const views = (process.env.TRACELOGIC_MEASURE_VIEWS || 'matrix,topology,logical,patterns,phases,whatif').split(',');
    for (const view of views) {
      const t = Date.now();
      console.error(`measure: ${view} after ${t - t0} ms`);
      await page.click(`#nav-${view}`);
      await page.waitForSelector(`#view-${view}`, { timeout: 3_600_000 });
      await page.waitForFunction(() => !document.querySelector('main .waiting'), null, { timeout: 3_600_000, polling: 200 });
      times[view] = Date.now() - t;
      marks.push([view, await page.evaluate(() => performance.now())]);
    }
  }
  // The longest main-thread task overall, and within each step (page start-up, open, each view).
  const tasks = await page.evaluate(() => window.__longTasks);
  const longest = Math.round(Math.max(0, ...tasks.map(([, d]) => d)));
  const perStep = {};
  for (const [start, duration] of tasks) {
    const step = (marks.find(([, at]) => start < at) || ['after'])[0];
    perStep[step] = Math.max(perStep[step] || 0, Math.round(duration));
  }
  console.log(JSON.stringify({ dir: large, files: paths.length, bytes, error, times_ms: times, longest_main_thread_task_ms: longest, longest_task_ms_by_step: perStep, long_tasks: tasks.length, problems }));
  await context.close();
});
