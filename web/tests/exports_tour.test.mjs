// Browser tests of the exports (CSV / SVG / PNG of every view), the self-contained HTML report
// and the workshop tour, on the built web app (dist/) in Debian's headless Chromium.
//
// Run with scripts/test-web, or:
//   TRACELOGIC_DIST=... TRACELOGIC_CLI=... CHROMIUM=/usr/bin/chromium node --test tests/exports_tour.test.mjs
// TRACELOGIC_SCREENSHOTS=docs/screenshots also saves the summary, matrix (light and dark), tour
// and report screenshots.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp, cli, shots, screenshot } from './harness.mjs';

// The app is served from a sub-path to prove every URL in it is relative.
const prefix = '/some/sub/path/';
let app;
let origin;

before(async () => {
  app = await startApp(prefix);
  origin = app.origin;
});

after(async () => {
  await app?.close();
});

/** Open a page (in its own context, so downloads and storage are its own) that records every
 * problem the test must fail on. */
function openPage(url, { width = 1280, height = 900, colorScheme = 'light' } = {}) {
  return app.openPage(url, { acceptDownloads: true, viewport: { width, height }, colorScheme });
}

const assertClean = (s) => app.assertClean(s);

async function idle(page) {
  await page.waitForSelector('.app[data-state="idle"]', { timeout: 60_000 });
}

/** Click `selector` and return the downloaded file's suggested name and bytes. */
async function download(page, selector) {
  try {
    // Chromium lets a tab start one download per user interaction and blocks the rest for good
    // once a test goes faster than that; clicks alone did not always count, a key press does.
    await page.keyboard.press('Shift');
    const [d] = await Promise.all([page.waitForEvent('download', { timeout: 60_000 }), page.click(selector)]);
    return { name: d.suggestedFilename(), bytes: readFileSync(await d.path()) };
  } catch (e) {
    const status = await page.$eval('#export-status', (el) => el.textContent).catch(() => 'no status');
    throw new Error(`${selector}: ${e.message} (export status: ${status})`);
  }
}

/** Fields of one CSV line (RFC 4180 quoting). */
function csvFields(line) {
  const out = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') { field += '"'; i++; }
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') { out.push(field); field = ''; }
    else field += c;
  }
  out.push(field);
  return out;
}

/** Width and height of a PNG from its IHDR chunk, after checking the signature. */
function pngSize(bytes) {
  assert.deepEqual([...bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'PNG signature');
  assert.equal(bytes.subarray(12, 16).toString('latin1'), 'IHDR');
  return [bytes.readUInt32BE(16), bytes.readUInt32BE(20)];
}

/** The views, what each must offer for export at least, and what shows it is drawn. */
const views = [
  { id: 'summary', ready: 'table.calls-by-function', tables: 3, figures: 0 },
  { id: 'matrix', ready: '#heatmap svg', tables: 0, figures: 2 },
  { id: 'topology', ready: '#topology-graph', tables: 2, figures: 2 },
  { id: 'logical', ready: '#logical-ranks', tables: 1, figures: 0 },
  { id: 'patterns', ready: '#pattern-graph', tables: 1, figures: 1 },
  { id: 'phases', ready: '#phases-curve', tables: 1, figures: 2 },
  { id: 'whatif', ready: '#whatif-chart', tables: 3, figures: 1 },
];

/** Open the export menu of the view shown and download every item in every format it offers
 * (or the items in `slice` of the list: `[from, to)`). */
async function exportAll(page, view, slice = [0, Infinity]) {
  await page.click('#export-toggle');
  await page.waitForSelector('#export-list');
  const items = await page.$$eval('#export-list li', (els) => els.map((e) => ({ name: e.dataset.exportItem, kind: e.dataset.kind })));
  // Every file is named after the trace: the sample's id, then the item.
  const filePrefix = await page.getAttribute('#exports', 'data-file-prefix');
  assert.ok(filePrefix && filePrefix.length > 0, `${view.id}: exports carry the trace name`);
  const tables = items.filter((i) => i.kind === 'table');
  const figures = items.filter((i) => i.kind === 'figure');
  assert.ok(tables.length >= view.tables, `${view.id}: ${tables.length} tables offered, expected ≥ ${view.tables}`);
  assert.ok(figures.length >= view.figures, `${view.id}: ${figures.length} figures offered, expected ≥ ${view.figures}`);
  assert.equal(new Set(items.map((i) => i.name)).size, items.length, `${view.id}: export names are unique`);
  const domTables = await page.$$eval(`#view-${view.id} table`, (els) => els.map((t) => ({
    head: [...(t.tHead?.rows[t.tHead.rows.length - 1]?.cells ?? [])].map((c) => c.dataset.export ?? c.textContent.trim().replace(/\s+/g, ' ')),
    rows: [...t.tBodies].reduce((n, b) => n + b.rows.length, 0),
  })));
  assert.equal(tables.length, domTables.length, `${view.id}: every table is offered`);
  const inSlice = (item) => { const i = items.indexOf(item); return i >= slice[0] && i < slice[1]; };
  for (const [i, item] of tables.entries()) {
    if (!inSlice(item)) continue;
    const { name, bytes } = await download(page, `#export-csv-${item.name}`);
    assert.equal(name, `${filePrefix}-${item.name}.csv`);
    const lines = bytes.toString('utf8').split('\r\n');
    assert.equal(lines.pop(), '', 'the file ends with a line break');
    const header = csvFields(lines[0]);
    const want = domTables[i].head.length ? domTables[i].head.flatMap((h) => h.split('\t')) : null;
    if (want) assert.deepEqual(header, want, `${view.id} ${item.name}: CSV header = the table's header`);
    assert.ok(header.length >= 1 && header.every((h, j) => h !== '' || j === 0), `${item.name} header: ${lines[0]}`);
    assert.equal(lines.length - 1, domTables[i].rows, `${view.id} ${item.name}: one line per row`);
    for (const line of lines) assert.equal(csvFields(line).length, header.length, `${item.name}: ${line}`);
  }
  for (const item of figures) {
    if (!inSlice(item)) continue;
    const svg = await download(page, `#export-svg-${item.name}`);
    assert.equal(svg.name, `${filePrefix}-${item.name}.svg`);
    const text = svg.bytes.toString('utf8');
    assert.match(text, /^<\?xml version="1.0" encoding="UTF-8"\?>\n<svg\b/, `${item.name}: an SVG document`);
    assert.match(text, /<svg[^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/, `${item.name}: SVG namespace`);
    const width = Number(/<svg[^>]*\swidth="([\d.]+)"/.exec(text)?.[1]);
    const height = Number(/<svg[^>]*\sheight="([\d.]+)"/.exec(text)?.[1]);
    assert.ok(width > 10 && height > 10, `${item.name}: pixel size ${width}×${height}`);
    assert.match(text, /style="[^"]*fill: rgb/, `${item.name}: computed colours inlined`);
    assert.doesNotMatch(text, /var\(--/, `${item.name}: no page CSS variable left`);
    // The file parses as XML and draws in a page with no stylesheet.
    const parsed = await page.evaluate((t) => {
      const doc = new DOMParser().parseFromString(t, 'image/svg+xml');
      return doc.querySelector('parsererror') ? 'error' : doc.documentElement.localName;
    }, text);
    assert.equal(parsed, 'svg', `${item.name}: well-formed SVG`);
    const png = await download(page, `#export-png-${item.name}`);
    assert.equal(png.name, `${filePrefix}-${item.name}.png`);
    const [pw, ph] = pngSize(png.bytes);
    assert.equal(pw, Math.ceil(width * 2), `${item.name}: PNG width is twice the SVG's`);
    assert.equal(ph, Math.ceil(height * 2), `${item.name}: PNG height is twice the SVG's`);
  }
  // Escape closes the list (focus is on the last export button).
  await page.keyboard.press('Escape');
  await page.waitForSelector('#export-list', { state: 'detached' });
  return items.length;
}

/** Open sample `id` on a fresh page in view `view`, waiting for `ready` inside it. */
async function openSample(id, view, ready) {
  const s = await openPage(`${origin}${prefix}#sample=${encodeURIComponent(id)}`);
  await s.page.waitForSelector('#trace', { timeout: 60_000 });
  await idle(s.page);
  await s.page.click(`#nav-${view}`);
  if (ready) await s.page.waitForSelector(`#view-${view} ${ready}`, { timeout: 120_000 });
  return s;
}

for (const view of views) {
  test(`the ${view.id} view exports its tables as CSV and its figures as SVG and PNG`, async () => {
    const s = await openSample('npb-lu.S.8', view.id, view.ready);
    const { page } = s;
    if (view.id === 'summary') await screenshot(page, 'summary');
    if (view.id === 'matrix') await screenshot(page, 'matrix');
    assert.ok((await exportAll(page, view)) >= view.tables + view.figures);
    if (view.id === 'logical') {
      // The logical view's own downloads still work.
      const json = await download(page, '#logical-json');
      assert.ok(JSON.parse(json.bytes.toString('utf8')).records.length > 0);
      const text = await download(page, '#logical-text');
      assert.ok(text.bytes.length > 0);
    }
    assertClean(s);
    await s.context.close();
  });
}

test('the compare view exports its tables and figures once a second trace is compared', async () => {
  // The compare view has many figures: a few per tab, as in the other views (Chromium stops a
  // tab's downloads that come too fast one after the other).
  for (let from = 0, count = Infinity; from < count; from += 4) {
    const s = await openSample('npb-lu.S.8', 'compare', '#compare-sample');
    const { page } = s;
    await page.selectOption('#compare-sample', 'npb-mg.S.8');
    await page.waitForSelector('#view-compare #compare-properties', { timeout: 120_000 });
    count = await exportAll(page, { id: 'compare', tables: 1, figures: 1 }, [from, from + 4]);
    assert.ok(count >= 2);
    assertClean(s);
    await s.context.close();
  }
});

test('a figure exported in the dark theme keeps its dark colours', async () => {
  const s = await openPage(`${origin}${prefix}#sample=npb-mg.S.8`, { colorScheme: 'dark' });
  const { page } = s;
  await page.waitForSelector('#trace', { timeout: 60_000 });
  await idle(page);
  await page.click('#nav-matrix');
  await page.waitForSelector('#binary svg');
  await screenshot(page, 'matrix-dark');
  await page.click('#export-toggle');
  const text = (await download(page, '#export-svg-matrix-binary')).bytes.toString('utf8');
  const background = /<rect [^>]*fill="(rgb\([^"]+\))"/.exec(text)?.[1];
  const [r, g, b] = background.match(/\d+/g).map(Number);
  assert.ok(r + g + b < 200, `dark background ${background}`);
  assertClean(s);
  await s.context.close();
});

/** A generated 3×3 grid trace in the text format whose names are HTML: a region, a
 * communicator, a warning and the source. */
function hostileTrace(dir) {
  const plain = join(dir, 'plain.txt');
  execFileSync(cli, ['generate', '--topology', 'grid:3x3', '--iterations', '4', '--style', 'blocking', '--format', 'text', '--out', plain]);
  const lines = readFileSync(plain, 'utf8').split('\n').map((l) => {
    if (l.startsWith('source ')) return 'source "<img src=x onerror=alert(4)>"';
    if (/^\d+\s/.test(l)) return `${l} cp=0`;
    if (l.startsWith('comm 0 ')) {
      return [l, 'comm 1 "<script>alert(2)</script>" 0-8', 'warning "<script>alert(3)</script> & more"',
        'region 0 "<script>alert(1)</script>"', 'region 1 "main & <b>loop</b>"', 'callpath 0 1 0'].join('\n');
    }
    return l;
  });
  const name = '<b onmouseover=alert(5)>grid<i>.txt';
  return { name, bytes: Buffer.from(lines.join('\n')) };
}

test('the HTML report has every section, no script, escaped names, and opens offline with no request', async () => {
  const tmp = mkdtempSync(join(tmpdir(), 'tracelogic-report-'));
  try {
    const file = hostileTrace(tmp);
    const expected = JSON.parse(execFileSync(cli, ['summary', '--json', (writeFileSync(join(tmp, 'h.txt'), file.bytes), join(tmp, 'h.txt'))], { encoding: 'utf8' }));
    assert.ok(expected.communicators.some((c) => c.name.includes('<script>')), 'the CLI reads the hostile communicator name');
    const s = await openPage(`${origin}${prefix}?sample=none`);
    const { page } = s;
    await page.setInputFiles('#pick-files', { name: file.name, mimeType: 'text/plain', buffer: file.bytes });
    await page.waitForSelector('#trace', { timeout: 60_000 });
    await idle(page);
    assert.equal(await page.getAttribute('[data-stat="calls"]', 'data-value'), String(expected.calls));
    assert.equal(await page.$('#view-summary script'), null, 'no script element from a name in the page');
    // The report computes every analysis it has not seen yet, then downloads.
    const report = await download(page, '#export-report');
    assert.match(report.name, /-report\.html$/);
    assert.doesNotMatch(report.name, /[<>]/, 'file name from the label is made safe');
    const html = report.bytes.toString('utf8');
    for (const id of ['summary', 'matrix', 'topology', 'logical', 'patterns', 'phases', 'whatif']) {
      assert.match(html, new RegExp(`<section [^>]*\\bid="report-${id}"`), `section ${id}`);
      assert.match(html, new RegExp(`href="#report-${id}"`), `contents link to ${id}`);
    }
    assert.doesNotMatch(html, /<script/i, 'no script element');
    assert.doesNotMatch(html, /<(img|b|i)\b/i, 'no element from a name');
    assert.doesNotMatch(html, /<[^>]*\son[a-z]+\s*=/i, 'no event handler attribute');
    assert.match(html, /&lt;script&gt;alert\(2\)&lt;\/script&gt;/, 'the communicator name is shown escaped');
    assert.match(html, /&lt;script&gt;alert\(3\)&lt;\/script&gt; &amp; more/, 'the warning is shown escaped');
    assert.match(html, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/, 'the routine (region) name is shown escaped');
    assert.match(html, /&lt;img src=x onerror=alert\(4\)&gt;/, 'the source is shown escaped');
    assert.match(html, /<style>[\s\S]*prefers-color-scheme: dark[\s\S]*<\/style>/, 'the CSS with both themes is inlined');
    assert.match(html, /default-src 'none'/, 'a policy forbids requests');
    assert.doesNotMatch(html, /<(link|iframe|object|embed)\b/i, 'nothing to fetch');
    assertClean(s);
    await s.context.close();

    // Opened on its own, offline: every section and figure shows, and nothing is requested.
    const offline = await openPage(null);
    await offline.context.setOffline(true);
    await offline.page.setContent(html, { waitUntil: 'load' });
    for (const id of ['summary', 'matrix', 'topology', 'logical', 'patterns', 'phases', 'whatif']) {
      assert.ok(await offline.page.isVisible(`#report-${id}`), `section ${id} is shown`);
    }
    assert.ok((await offline.page.locator('svg').count()) >= 6, 'the figures are inlined');
    assert.ok(await offline.page.isVisible('#report-matrix svg rect'), 'the matrix is drawn');
    assert.equal(await offline.page.locator('script').count(), 0);
    assert.deepEqual(offline.requests, [], 'the report requests nothing');
    assert.deepEqual(offline.problems, []);
    await offline.context.close();
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

/** The figure the tour marked for `step`: its box, the view it is in and how many elements
 * carry the mark. A view may draw its figure anew once more (an analysis asked again after the
 * load); the tour then marks the new element, so look until one is marked and visible. */
async function markedFigure(page, step) {
  for (let attempt = 0; attempt < 40; attempt++) {
    const found = await page.evaluate((id) => {
      const marked = [...document.querySelectorAll(`[data-tour-highlight="${id}"]`)];
      const e = marked[0];
      if (!e) return null;
      const r = e.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) return null;
      return { box: { x: r.x, y: r.y, width: r.width, height: r.height }, inside: e.closest('[id^="view-"]')?.id, count: marked.length };
    }, step);
    if (found) return found;
    await page.waitForTimeout(250);
  }
  throw new Error(`${step}: no figure marked and visible within 10 s`);
}

test('screenshot of the report of the LU sample', { skip: !shots && 'TRACELOGIC_SCREENSHOTS is not set' }, async () => {
  const s = await openSample('npb-lu.S.8', 'summary', 'table.calls-by-function');
  const html = (await download(s.page, '#export-report')).bytes.toString('utf8');
  await s.context.close();
  const view = await openPage(null);
  await view.page.setContent(html, { waitUntil: 'load' });
  await screenshot(view.page, 'report', false);
  await view.context.close();
});

test('the tour starts from the start page and walks every step to the end with its figure shown', async () => {
  const s = await openPage(`${origin}${prefix}?sample=none`, { width: 1280, height: 720 });
  const { page } = s;
  await page.click('#take-tour');
  const steps = ['matrix', 'filtering', 'candidates', 'isomorphism', 'logical', 'patterns', 'phases', 'whatif'];
  const viewOf = { matrix: 'matrix', filtering: 'matrix', candidates: 'topology', isomorphism: 'topology', logical: 'logical', patterns: 'patterns', phases: 'phases', whatif: 'whatif' };
  for (const [i, step] of steps.entries()) {
    await page.waitForSelector(`#tour[data-step="${step}"][data-figure-shown="true"]`, { timeout: 120_000 });
    assert.match(await page.textContent('#tour .tour-progress'), new RegExp(`step ${i + 1} of ${steps.length}`));
    assert.match(await page.textContent('#tour .tour-source'), /(Logicalization of communication|Techniques to facilitate|Trace-driven, MPI-based).*(§|ch\. )\d/, `${step} cites its paper by title and section`);
    assert.equal(await page.getAttribute(`#nav-${viewOf[step]}`, 'aria-current'), 'page', `${step} shows its view`);
    const { box, inside, count } = await markedFigure(page, step);
    assert.equal(count, 1, `${step}: one figure is marked`);
    assert.ok(box.width > 50 && box.height > 30, `${step}: the figure is drawn (${box.width}×${box.height})`);
    assert.equal(inside, `view-${viewOf[step]}`, `${step}: the figure is in the view`);
    const tourBox = await page.locator('#tour').boundingBox();
    assert.ok(box.x + Math.min(box.width, 200) <= tourBox.x + 1, `${step}: the figure is beside the tour text, not under it`);
    if (step === 'isomorphism') await screenshot(page, 'tour', false);
    if (i === 1) {
      await page.click('#tour-prev');
      await page.waitForSelector('#tour[data-step="matrix"][data-figure-shown="true"]');
      await page.click('#tour-next');
      await page.waitForSelector('#tour[data-step="filtering"][data-figure-shown="true"]');
    }
    await page.click('#tour-next');
  }
  await page.waitForSelector('#tour', { state: 'detached' });
  assert.equal(await page.locator('[data-tour-highlight]').count(), 0, 'the mark is removed at the end');
  assertClean(s);
  await s.context.close();
});
