// The matrix view on a trace large enough for a 128 × 128 heatmap: the canvas drawing against
// the CLI's matrix (drawn where there is traffic, blank where there is none), the tooltip,
// keyboard and click selection, high-DPI drawing, exports written from the data, and the HTML
// report's copy of the cells. The longest main-thread tasks are printed, not asserted: speed
// goals are benchmarks (docs/performance.md), and this machine's load varies.
//
// Run: TRACELOGIC_DIST=... node --test tests/responsiveness.test.mjs (see harness.mjs).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp, cli, cliJson, screenshot } from './harness.mjs';
import { drawnCells, byKey, painted, keptCells, hoverCell } from './matrix_cells.mjs';

const prefix = '/lab/tools/tracelogic/';
let app;
let tmp;
let traceDir;
/** The CLI's matrix of the generated trace, summed into the drawing's blocks. */
let expected;

/** Records the page's long tasks (PerformanceObserver 'longtask') in window.__longTasks. */
const recordLongTasks = () => {
  window.__longTasks = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__longTasks.push({ start: e.startTime, duration: e.duration });
  }).observe({ type: 'longtask', buffered: true });
};

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'tracelogic-responsive-'));
  traceDir = join(tmp, 'torus-16x16');
  // 256 ranks: the drawing groups them in 2 × 2 blocks, 128 cells a side.
  execFileSync(cli, ['generate', '--topology', 'torus:16x16', '--iterations', '3', '--format', 'dumpi', '--out', traceDir]);
  const m = cliJson(['matrix', traceDir]);
  const block = Math.ceil(m.ranks / 128);
  const side = Math.ceil(m.ranks / block);
  const bytes = new Map();
  const kept = new Set();
  m.bytes.forEach((row, r) => row.forEach((v, c) => {
    const key = `${Math.floor(r / block)},${Math.floor(c / block)}`;
    bytes.set(key, (bytes.get(key) || 0) + v);
    if (m.binary[r][c]) kept.add(key);
  }));
  expected = { ranks: m.ranks, block, side, bytes, kept, nonZero: new Set([...bytes].filter(([, v]) => v > 0).map(([k]) => k)) };
  app = await startApp(prefix, { initScript: recordLongTasks });
});

after(async () => {
  await app?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/** A page with `traceDir` opened through the folder picker. */
async function openTrace(contextOptions = {}) {
  const s = await app.openPage(`${app.origin}${prefix}?sample=none`, { viewport: { width: 1280, height: 900 }, ...contextOptions });
  await s.page.setInputFiles('#pick-folder', traceDir);
  await s.page.waitForSelector('#trace[data-label="torus-16x16"]', { timeout: 120_000 });
  await s.page.waitForSelector('.app[data-state="idle"]', { timeout: 120_000 });
  return s;
}

/** The longest task since `since` (performance.now() of the page). */
async function longestTask(page, since = 0) {
  const tasks = await page.evaluate(() => window.__longTasks);
  return Math.round(Math.max(0, ...tasks.filter((t) => t.start >= since).map((t) => t.duration)));
}

test('a 128 × 128 matrix is drawn on the canvas as the CLI computes it, with tooltip and keyboard', async () => {
  assert.equal(expected.side, 128, 'the generated trace fills a 128 × 128 drawing');
  const s = await openTrace();
  const { page } = s;
  const t0 = await page.evaluate(() => performance.now());
  await page.click('#nav-matrix');
  await page.waitForSelector('#heatmap svg[data-figure-key]');
  const drawnAt = await page.evaluate(() => performance.now());
  assert.equal(await page.getAttribute('#heatmap svg', 'data-side'), '128');
  assert.equal(await page.locator('#view-matrix rect').count() < 50, true, 'the cells are not SVG elements');

  // Every cell: the page maps its centre to it, holds the CLI's value, and drew it iff non-zero.
  const heat = byKey(await drawnCells(page, 'heatmap'), assert);
  assert.equal(heat.size, 128 * 128);
  for (const [key, c] of heat) assert.equal(c.cell.value, expected.bytes.get(key) || 0, `bytes of block ${key}`);
  assert.deepEqual(painted([...heat.values()]), expected.nonZero, 'non-blank pixels exactly where the CLI matrix is non-zero');
  assert.ok(expected.nonZero.size > 0 && expected.nonZero.size < 128 * 128, 'the test needs both drawn and blank cells');
  // The largest value is yellow, the smallest non-zero one dark violet (viridis ends).
  const values = [...heat.values()].filter((c) => c.cell.value > 0);
  const max = values.reduce((a, c) => (c.cell.value > a.cell.value ? c : a));
  const min = values.reduce((a, c) => (c.cell.value < a.cell.value ? c : a));
  if (max.cell.value !== min.cell.value) {
    assert.deepEqual(max.pixel, [253, 231, 37, 255], 'largest value drawn yellow');
    assert.deepEqual(min.pixel, [68, 1, 84, 255], 'smallest value drawn violet');
  }
  const binary = byKey(await drawnCells(page, 'binary'), assert);
  assert.deepEqual(keptCells([...binary.values()], assert), expected.kept, 'binary matrix = CLI binary, in blocks');

  // Hover a cell with traffic: the tooltip names the block's ranks and the CLI's byte count.
  const [r, c] = [...expected.nonZero].sort()[0].split(',').map(Number);
  await hoverCell(page, 'heatmap', r, c);
  await page.waitForSelector('#heatmap .tooltip');
  const tip = (await page.$$eval('#heatmap .tooltip > div', (els) => els.map((e) => e.textContent))).join('|');
  const b = expected.block;
  assert.ok(tip.includes(`Senderranks ${r * b}–${r * b + b - 1}|`), tip);
  assert.ok(tip.includes(`Receiverranks ${c * b}–${c * b + b - 1}|`), tip);
  assert.ok(tip.replace(/,/g, '').includes(`(${expected.bytes.get(`${r},${c}`)} B)`), `tooltip shows the CLI's bytes: ${tip}`);
  assert.equal(await page.getAttribute('#heatmap svg', 'data-cursor'), `${r},${c}`);
  await screenshot(page, 'matrix-large');

  // Keyboard: focus starts the cursor at 0,0; arrows move it, End goes to the last cell.
  await page.mouse.move(0, 0);
  await page.focus('#heatmap svg');
  assert.equal(await page.getAttribute('#heatmap svg', 'data-cursor'), '0,0');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  assert.equal(await page.getAttribute('#heatmap svg', 'data-cursor'), '2,1');
  const keyTip = (await page.$$eval('#heatmap .tooltip > div', (els) => els.map((e) => e.textContent))).join('|');
  assert.ok(keyTip.includes('Senderranks 4–5|') && keyTip.includes('Receiverranks 2–3|'), keyTip);
  assert.ok(keyTip.replace(/,/g, '').includes(`(${expected.bytes.get('2,1') || 0} B)`), keyTip);
  assert.equal(await page.getAttribute('#binary svg', 'data-cursor'), '2,1', 'both figures show the cursor');
  await page.keyboard.press('End');
  assert.equal(await page.getAttribute('#heatmap svg', 'data-cursor'), '127,127');
  // Enter selects the cursor's sender rank for every view: its row is outlined.
  await page.keyboard.press('Enter');
  await page.waitForSelector('#heatmap svg .focus-row');
  assert.equal(await page.getAttribute('#heatmap svg .focus-row', 'y'), '127');
  // A click selects the clicked cell's sender rank.
  await hoverCell(page, 'binary', 5, 9);
  await page.mouse.down();
  await page.mouse.up();
  await page.waitForFunction(() => document.querySelector('#heatmap svg .focus-row')?.getAttribute('y') === '5');
  await page.keyboard.press('Escape');

  console.log(`# matrix view of ${expected.ranks} ranks: drawn ${Math.round(drawnAt - t0)} ms after the click, longest main-thread task since ${await longestTask(page, t0)} ms`);
  app.assertClean(s);
  await s.context.close();
});

test('on a high-density screen the canvas has a device pixel per screen pixel', async () => {
  const s = await openTrace({ deviceScaleFactor: 2 });
  const { page } = s;
  await page.click('#nav-matrix');
  await page.waitForSelector('#heatmap svg[data-figure-key]');
  const size = await page.$eval('#heatmap canvas.cells', (c) => ({ w: c.width, h: c.height, css: c.getBoundingClientRect().width, ratio: devicePixelRatio }));
  assert.equal(size.ratio, 2);
  assert.equal(size.w, Math.round(size.css * 2), `canvas ${size.w} px for ${size.css} CSS px`);
  // Still the CLI's matrix, cell by cell.
  const heat = byKey(await drawnCells(page, 'heatmap'), assert);
  assert.deepEqual(painted([...heat.values()]), expected.nonZero);
  app.assertClean(s);
  await s.context.close();
});

test('the heatmap exports as an SVG written from the data and as a PNG', async () => {
  const s = await openTrace({ acceptDownloads: true });
  const { page } = s;
  await page.click('#nav-matrix');
  await page.waitForSelector('#heatmap svg[data-figure-key]');
  await page.click('#export-toggle');
  const save = async (selector) => {
    await page.keyboard.press('Shift');
    const [d] = await Promise.all([page.waitForEvent('download', { timeout: 60_000 }), page.click(selector)]);
    return { name: d.suggestedFilename(), bytes: readFileSync(await d.path()) };
  };
  const svg = await save('#export-svg-matrix-heatmap');
  assert.match(svg.name, /^.+-matrix-heatmap\.svg$/, 'named after the trace');
  const text = svg.bytes.toString('utf8');
  // The cells the paths paint (runs "Mx yhNv1h-Nz") are the CLI's non-zero blocks.
  const cells = new Set();
  for (const [, d] of text.matchAll(/<path style="fill: rgb\([^"]+\)" d="([^"]+)"/g)) {
    for (const [, x, y, n] of d.matchAll(/M(\d+) (\d+)h(\d+)v1h-\d+z/g)) {
      for (let i = 0; i < Number(n); i++) cells.add(`${y},${Number(x) + i}`);
    }
  }
  assert.deepEqual(cells, expected.nonZero, 'the exported SVG paints the CLI matrix');
  assert.match(text, /viewBox="0 0 128 128"/);
  assert.doesNotMatch(text, /var\(--/);
  const width = Number(/<svg[^>]*\swidth="([\d.]+)"/.exec(text)[1]);
  const png = await save('#export-png-matrix-heatmap');
  assert.deepEqual([...png.bytes.subarray(1, 4)].map((c) => String.fromCharCode(c)).join(''), 'PNG');
  assert.equal(png.bytes.readUInt32BE(16), Math.ceil(width * 2), 'PNG at twice the figure size');
  app.assertClean(s);
  await s.context.close();
});

test('the HTML report carries the matrix cells as an image (a copied canvas would be blank)', async () => {
  const s = await app.openPage(`${app.origin}${prefix}#sample=npb-mg.S.8`, { acceptDownloads: true });
  const { page } = s;
  await page.waitForSelector('#trace', { timeout: 60_000 });
  await page.waitForSelector('.app[data-state="idle"]', { timeout: 60_000 });
  await page.keyboard.press('Shift');
  const [d] = await Promise.all([page.waitForEvent('download', { timeout: 120_000 }), page.click('#export-report')]);
  const html = readFileSync(await d.path(), 'utf8');
  const matrix = html.slice(html.indexOf('id="report-matrix"'), html.indexOf('id="report-topology"'));
  const images = [...matrix.matchAll(/<image [^>]*href="data:image\/png;base64,([^"]+)"/g)];
  assert.equal(images.length, 2, 'heatmap and binary matrix');
  for (const [, b64] of images) {
    const png = Buffer.from(b64, 'base64');
    assert.equal(png.readUInt32BE(16), 8, 'one pixel per cell of the 8-rank matrix');
  }
  app.assertClean(s);
  await s.context.close();
});

test('the logical view shows the side-by-side text a page at a time and still downloads it all', async () => {
  const dir = join(tmp, 'torus-4x4');
  execFileSync(cli, ['generate', '--topology', 'torus:4x4', '--iterations', '150', '--format', 'dumpi', '--out', dir]);
  const cliText = execFileSync(cli, ['logical', dir, '--side-by-side'], { encoding: 'utf8', maxBuffer: 64 << 20 }).split('\n');
  const table = cliText.slice(cliText.findIndex((l) => l.startsWith('PHYSICAL TRACE')));
  while (table.at(-1) === '') table.pop();
  assert.ok(table.length > 1000, `the test needs more than two pages of lines: ${table.length}`);
  const cliLogical = cliJson(['logical', dir]);
  const records = cliLogical.records.length;
  // A 4x4 torus is the 4-cube: identified as the hypercube, named by the torus's moves.
  assert.equal(cliLogical.directions_from.topology, '4x4 torus');

  const s = await app.openPage(`${app.origin}${prefix}?sample=none`, { acceptDownloads: true });
  const { page } = s;
  await page.setInputFiles('#pick-folder', dir);
  await page.waitForSelector('#trace[data-label="torus-4x4"]', { timeout: 120_000 });
  await page.waitForSelector('.app[data-state="idle"]', { timeout: 120_000 });
  await page.click('#nav-logical');
  await page.waitForSelector('#logical-side-by-side', { timeout: 120_000 });
  assert.equal(await page.textContent('#logical-topology'), '4x4 torus');
  assert.equal(await page.textContent('#logical-directions-from'), `Directions from the ${cliLogical.directions_from.reason}`);
  const shown = async () => (await page.textContent('#logical-side-by-side')).replace(/\n$/, '').split('\n');
  assert.deepEqual(await shown(), table.slice(0, 500), 'the first page: the CLI\'s first 500 lines');
  await page.click('#logical-side-by-side-more');
  assert.deepEqual(await shown(), table.slice(0, 1000), 'two pages');
  while (await page.$('#logical-side-by-side-more')) await page.click('#logical-side-by-side-more');
  assert.deepEqual(await shown(), table, 'every line once the last page is shown');
  // The downloads come out of the answer when asked for.
  await page.keyboard.press('Shift');
  const [d] = await Promise.all([page.waitForEvent('download', { timeout: 60_000 }), page.click('#logical-json')]);
  assert.equal(JSON.parse(readFileSync(await d.path(), 'utf8')).records.length, records);
  app.assertClean(s);
  await s.context.close();
});
