// Shared set-up of the browser tests (not a test file itself: node --test runs *.test.mjs):
// paths, the CLI whose JSON the page is checked against, a static server for dist/ under a
// sub-path (every URL of the app must be relative), Debian's headless Chromium, and pages that
// record every console error, failed request and request to another origin.

import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { execFileSync } from 'node:child_process';
import { readFileSync, existsSync, statSync } from 'node:fs';
import { join, extname, resolve, dirname, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const dist = process.env.TRACELOGIC_DIST || join(root, 'dist');
export const cli = process.env.TRACELOGIC_CLI || join(root, 'target/debug/tracelogic');
export const chromiumPath = process.env.CHROMIUM || '/usr/bin/chromium';
export const sampleDir = (id) => join(root, 'web/samples', id);
export const shots = process.env.TRACELOGIC_SCREENSHOTS && resolve(root, process.env.TRACELOGIC_SCREENSHOTS);

const types = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.md': 'text/markdown; charset=utf-8',
};

/** `tracelogic ARGS --json`, parsed. */
export function cliJson(args) {
  return JSON.parse(execFileSync(cli, [...args, '--json'], { encoding: 'utf8', maxBuffer: 64 << 20 }));
}

/** With TRACELOGIC_SCREENSHOTS=DIR, save the page as DIR/NAME.png. */
export async function screenshot(page, name, fullPage = true) {
  if (shots) await page.screenshot({ path: join(shots, `${name}.png`), fullPage });
}

/** Drop `files` ({name, bytes}) on the element `zone` (the page's drop zone by default) as a real
 * drop event with a DataTransfer, once the zone is in the page. */
export async function drop(page, files, zone = 'dropzone') {
  // The app draws its drop zone after its wasm starts: under load a test can get here first.
  await page.waitForSelector(`#${zone}`, { state: 'attached', timeout: 60_000 });
  const payload = files.map((f) => ({ name: f.name, b64: Buffer.from(f.bytes).toString('base64') }));
  await page.evaluate(({ files, zoneId }) => {
    const dt = new DataTransfer();
    for (const f of files) {
      const bin = atob(f.b64);
      const bytes = new Uint8Array(bin.length);
      for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
      dt.items.add(new File([bytes], f.name));
    }
    const zone = document.getElementById(zoneId);
    zone.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
    zone.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, { files: payload, zoneId: zone });
}

/**
 * Serve dist/ under `prefix` and start Chromium. Returns the app: its `origin`, `browser`,
 * `openPage(url, options)`, `openView(id, view, ready)`, `assertClean(page)` and `close()`.
 *
 * Hooks for tests that need them: `onServe(path)` sees every path asked of the server,
 * `delay(rel)` holds a file's answer for that many milliseconds, `ignoreFailedRequest(url)`
 * excuses requests the page itself drops, `initScript` runs in every page before its scripts.
 */
export async function startApp(prefix, { onServe, delay, ignoreFailedRequest, initScript } = {}) {
  assert.ok(existsSync(join(dist, 'index.html')), `${dist}/index.html is missing: run scripts/build-web first`);
  assert.ok(existsSync(cli), `${cli} is missing: run cargo build -p tracelogic first`);
  assert.ok(existsSync(chromiumPath), `${chromiumPath} is missing: apt-get install chromium`);
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    onServe?.(path);
    if (!path.startsWith(prefix)) {
      res.writeHead(404).end('outside the app');
      return;
    }
    const rel = path.slice(prefix.length) || 'index.html';
    const file = normalize(join(dist, rel));
    if (!file.startsWith(dist + sep) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404).end('not found');
      return;
    }
    const send = () => {
      res.writeHead(200, { 'content-type': types[extname(file)] || 'application/octet-stream' });
      res.end(readFileSync(file));
    };
    const wait = delay?.(rel) || 0;
    if (wait > 0) setTimeout(send, wait);
    else send();
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  const origin = `http://127.0.0.1:${server.address().port}`;
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ['--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  });

  /**
   * Open a page that records every problem the test must fail on, in `context` or in a new
   * browser context made with `contextOptions` (downloads, viewport, colour scheme...); `url`
   * may be left out. The context's requests (service and analysis workers) are recorded too.
   */
  async function openPage(url, { context, ...contextOptions } = {}) {
    const ctx = context || (await browser.newContext(contextOptions));
    const page = await ctx.newPage();
    if (initScript) await page.addInitScript(initScript);
    const problems = [];
    const requests = [];
    page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('requestfailed', (r) => {
      if (ignoreFailedRequest?.(r.url())) return;
      // The page starts a spare analysis worker a moment after a load; when the test reloads or
      // navigates while that worker's scripts are being fetched, the browser aborts the fetch.
      // That is the navigation, not a defect (a missing or failing file is an HTTP error or
      // another net:: error, and is still reported).
      if (r.failure()?.errorText === 'net::ERR_ABORTED' && /\/worker(_loader)?(\.js|_bg\.wasm)$/.test(new URL(r.url()).pathname)) return;
      problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`);
    });
    page.on('response', (r) => { if (r.status() >= 400) problems.push(`HTTP ${r.status()} for ${r.url()}`); });
    ctx.on('request', (r) => requests.push(r.url()));
    if (url) await page.goto(url);
    return { page, context: ctx, problems, requests };
  }

  /** No console error, failed request, or request to another origin on the page. */
  function assertClean({ problems, requests }) {
    assert.deepEqual(problems, [], 'console errors, page errors or failed requests');
    const foreign = requests.filter((u) => !u.startsWith(origin + '/') && !u.startsWith('data:') && !u.startsWith('blob:'));
    assert.deepEqual(foreign, [], 'requests to other origins');
  }

  /** Open the page on sample `id` and show `view`, waiting for `ready` inside it. */
  async function openView(id, view, ready) {
    const s = await openPage(`${origin}${prefix}#sample=${encodeURIComponent(id)}`);
    await s.page.setViewportSize({ width: 1280, height: 900 });
    await s.page.waitForSelector('#trace', { timeout: 60_000 });
    await s.page.waitForSelector('.app[data-state="idle"]', { timeout: 60_000 });
    await s.page.click(`#nav-${view}`);
    await s.page.waitForSelector(`#view-${view} ${ready}, #view-${view} .view-error`, { timeout: 120_000 });
    const failed = await s.page.$(`#view-${view} .view-error`);
    assert.equal(failed, null, failed && (await failed.textContent()));
    return s;
  }

  async function close() {
    await browser.close();
    await new Promise((ok) => server.close(ok));
  }

  return { origin, browser, openPage, openView, assertClean, close };
}

/** Put the sequential focus starting point on `start` (a click on text that takes no focus),
 * then press Tab until the focused element matches `target`. It must show a focus ring. Returns the number of presses. */
export async function tabTo(page, start, target, max = 200) {
  await page.click(start);
  for (let n = 1; n <= max; n++) {
    await page.keyboard.press('Tab');
    if (await page.evaluate((sel) => document.activeElement?.matches(sel) ?? false, target)) {
      const outline = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
      assert.notEqual(outline, 'none', `${target} shows where the focus is`);
      return n;
    }
  }
  const at = await page.evaluate(() => document.activeElement?.outerHTML.slice(0, 120));
  assert.fail(`${target} not reached with ${max} Tab presses from ${start} (focus on ${at})`);
}

/** Wait until the app is idle again (no load or analysis running). */
export async function idle(page, timeout = 120_000) {
  await page.waitForSelector('.app[data-state="idle"]', { timeout });
}

/** The summary the page shows, in the shape of the CLI's: ranks, calls, format, calls per MPI function. */
export async function shownSummary(page) {
  return {
    ranks: Number(await page.getAttribute('[data-stat="ranks"]', 'data-value')),
    calls: Number(await page.getAttribute('[data-stat="calls"]', 'data-value')),
    format: await page.getAttribute('[data-stat="format"]', 'data-value'),
    calls_by_kind: await page.$$eval('tr[data-function]', (rows) =>
      Object.fromEntries(rows.map((r) => [r.dataset.function, Number(r.dataset.calls)]))),
  };
}

/** `tracelogic summary --json PATH` reduced to what the page shows ([`shownSummary`]). */
export function expectedSummary(path) {
  const s = cliJson(['summary', path]);
  return { ranks: s.ranks, calls: s.calls, format: s.format, calls_by_kind: s.calls_by_kind };
}
