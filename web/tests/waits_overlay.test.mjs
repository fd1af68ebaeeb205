// The measured waiting in the page, checked against the CLI on the same files: the Matrix view's
// "Waiting (s)" metric against `tracelogic matrix --metric waiting --json`, and the timeline's
// critical-path overlay against `tracelogic critical-path --json` (its segments, and where the
// longest MPI call on the path is drawn).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startApp, root, cliJson } from './harness.mjs';
import { drawnCells, byKey, painted } from './matrix_cells.mjs';

const luDir = join(root, 'web/samples/npb-lu.S.8');
const prefix = '/waits-overlay/';
// Geometry of the timeline view (crates/web/src/views/timeline.rs), CSS px.
const LABEL_W = 72;
const AXIS_H = 30;

let app;
before(async () => {
  app = await startApp(prefix);
});
after(async () => {
  await app?.close();
});

test('the matrix metric "Waiting (s)" colours the heatmap by the CLI\'s waiting matrix', async () => {
  const m = cliJson(['matrix', luDir, '--metric', 'waiting']);
  const s = await app.openView('npb-lu.S.8', 'matrix', '#heatmap svg');
  const { page } = s;
  await page.check('input[name="metric"][value="waiting"]');
  await page.waitForFunction(() => document.querySelector('#heatmap figcaption')?.textContent.startsWith('seconds waited'), null, { timeout: 60_000 });
  const cells = byKey(await drawnCells(page, 'heatmap'), assert);
  assert.equal(cells.size, m.ranks * m.ranks);
  for (const [key, c] of cells) {
    const expected = Math.round(m.waiting[c.row][c.col] * 1e9);
    assert.ok(Math.abs(c.cell.value - expected) <= 1000, `${key}: ${c.cell.value} ns, CLI ${expected} ns`);
  }
  const nonZero = new Set();
  m.waiting.forEach((row, r) => row.forEach((v, c) => { if (v > 0) nonZero.add(`${r},${c}`); }));
  assert.deepEqual(painted([...cells.values()]), nonZero, 'drawn cells = pairs that waited');
  assert.match(page.url(), /metric=waiting/);
  app.assertClean(s);
  await page.close();
});

test('the timeline overlays the CLI\'s critical path on the rank lanes', async () => {
  const cp = cliJson(['critical-path', luDir]);
  const s = await app.openView('npb-lu.S.8', 'timeline', '#timeline-legend li');
  const { page } = s;
  await page.uncheck('#tl-messages');
  await page.uncheck('#tl-collectives');
  await page.check('#tl-path');
  await page.waitForSelector('#timeline-canvas[data-path-bars]', { timeout: 120_000 });
  await page.waitForTimeout(500);
  const d = await page.$eval('#timeline-canvas', (c) => ({ ...c.dataset, width: c.getBoundingClientRect().width, height: c.getBoundingClientRect().height, cw: c.width }));
  assert.equal(Number(d.pathSegments), cp.segments.length, 'every segment of the path');
  assert.ok(Number(d.pathBars) > 0 && Number(d.pathLinks) > 0, `${d.pathBars} bars, ${d.pathLinks} links`);
  const links = cp.segments.filter((x, i) => i > 0 && x.rank !== cp.segments[i - 1].rank).length;
  assert.ok(Number(d.pathLinks) <= links, `${d.pathLinks} links drawn of ${links} rank changes`);
  assert.match(await page.textContent('#tl-path-status'), /Critical path of the whole run/);
  // The longest MPI call on the path is drawn in the path's colour at its lane's centre.
  const longest = cp.segments.filter((x) => x.kind !== 'compute').sort((a, b) => (b.end_s - b.start_s) - (a.end_s - a.start_s))[0];
  const [from, to] = [Number(d.viewFrom), Number(d.viewTo)];
  const t = ((longest.start_s + longest.end_s) / 2) * 1e9;
  const x = Math.floor(LABEL_W + ((t - from) / (to - from)) * (d.width - LABEL_W));
  const lanes = Number(d.lanes);
  const y = Math.floor(AXIS_H + ((longest.rank + 0.5) * (d.height - AXIS_H)) / lanes);
  const px = await page.$eval('#timeline-canvas', (c, [x, y]) => [...c.getContext('2d').getImageData(x, y, 1, 1).data], [x, y]);
  assert.ok(px[0] > 150 && px[1] < 90 && px[2] < 110, `pixel at ${x},${y} is the path's red: ${px}`);
  // Switched off, the overlay goes.
  await page.uncheck('#tl-path');
  await page.waitForFunction(() => !document.getElementById('timeline-canvas').dataset.pathBars);
  app.assertClean(s);
  await page.close();
});
