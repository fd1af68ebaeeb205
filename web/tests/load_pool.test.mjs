// Browser tests of whole loads read by a pool of workers (crates/web/src/load_pool.rs,
// docs/large-traces.md "Every core in the page"): a DUMPI and an OTF2 folder picked with
// `?load-workers=N` are read by N helper workers, a block of ranks each, and merged in the load's
// worker; the summary, the matrix and the logical trace the page then shows are the CLI's
// (`summary`, `matrix`, `logical --json`) at 1, 2 and 3 workers. A helper's error names the file
// and leaves the trace shown before in place. Same set-up as the other browser tests (harness.mjs).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readFileSync, mkdtempSync, readdirSync, copyFileSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { startApp, cliJson, root, idle, shownSummary, expectedSummary } from './harness.mjs';
import { drawnCells, byKey } from './matrix_cells.mjs';

const prefix = '/page/pool/';
const dumpi = join(root, 'tests/data/samples/npb-lu.S.8');
const otf2 = join(root, 'tests/data/samples/pyotf2-generated-multichunk');
let app;

before(async () => {
  app = await startApp(prefix);
});

after(async () => {
  await app?.close();
});

/** Open the empty page with `workers` load workers and pick the folder `dir`. */
async function load(dir, workers) {
  const s = await app.openPage(`${app.origin}${prefix}?load-workers=${workers}#sample=none`);
  await s.page.setViewportSize({ width: 1280, height: 900 });
  await s.page.waitForSelector('#dropzone', { timeout: 60_000 });
  await idle(s.page);
  await s.page.setInputFiles('#pick-folder', dir);
  await s.page.waitForSelector('#trace', { timeout: 120_000 });
  await idle(s.page);
  return s;
}

test('a DUMPI and an OTF2 trace loaded by 1, 2 and 3 workers give the CLI summary, matrix and logical trace', async () => {
  for (const dir of [dumpi, otf2]) {
    const summary = expectedSummary(dir);
    const matrix = cliJson(['matrix', dir]);
    const logical = cliJson(['logical', dir]);
    for (const workers of [1, 2, 3]) {
      const what = `${dir}, ${workers} workers`;
      const s = await load(dir, workers);
      const { page } = s;
      assert.equal(await page.$('#error'), null, `${what}: no error`);
      assert.equal(await page.getAttribute('#trace', 'data-workers'), String(workers), what);
      assert.deepEqual(await shownSummary(page), summary, `${what}: summary`);

      await page.click('#nav-matrix');
      await page.waitForSelector('#heatmap svg');
      const cells = byKey(await drawnCells(page, 'heatmap'), assert);
      assert.equal(cells.size, matrix.bytes.length ** 2, `${what}: one cell per pair of ranks`);
      for (const [key, c] of cells) assert.equal(c.cell.value, matrix.bytes[c.row][c.col], `${what}: bytes ${key}`);

      await page.click('#nav-logical');
      await page.waitForSelector('#view-logical #logical-ranks, #view-logical .view-error', { timeout: 120_000 });
      assert.equal(await page.$('#view-logical .view-error'), null, `${what}: logical view`);
      const [download] = await Promise.all([
        page.waitForEvent('download', { timeout: 60_000 }),
        page.click('#logical-json'),
      ]);
      const shown = JSON.parse(readFileSync(await download.path(), 'utf8'));
      assert.deepEqual(shown.records, logical.records, `${what}: logical records`);
      assert.deepEqual(shown.classes, logical.classes, `${what}: logical classes`);
      app.assertClean(s);
      await s.context.close();
    }
  }
});

test('a rank file that does not parse fails the pooled load with its name; the trace shown before stays', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tracelogic-pool-'));
  for (const f of readdirSync(dumpi)) copyFileSync(join(dumpi, f), join(dir, f));
  const five = readdirSync(dir).find((f) => f.endsWith('-0005.bin'));
  const bytes = readFileSync(join(dir, five));
  writeFileSync(join(dir, five), bytes.subarray(0, bytes.length >> 1));
  try {
    const s = await load(otf2, 2);
    const { page } = s;
    const label = await page.getAttribute('#trace', 'data-label');
    await page.setInputFiles('#pick-folder', dir);
    await page.waitForSelector('#error', { timeout: 120_000 });
    await idle(page);
    assert.match(await page.textContent('#error'), new RegExp(five.replace(/\./g, '\\.')));
    assert.equal(await page.getAttribute('#trace', 'data-label'), label, 'the OTF2 trace is still shown');
    assert.deepEqual(await shownSummary(page), expectedSummary(otf2));
    app.assertClean(s);
    await s.context.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
