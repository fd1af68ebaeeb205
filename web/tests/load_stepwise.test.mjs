// Browser tests of the whole load of an OTF2 folder decoded rank by rank as its files arrive
// (crates/web/src/worker/stepwise.rs, docs/large-traces.md "Whole loads"): the held-out NAS MG
// run (16 ranks, unpacked into a folder) picked in the page shows the CLI's summary and matrix,
// and its load log the stepwise stages; an event file cut in half fails the load with the CLI's
// own error (file and byte offset) and leaves the trace shown before. Same set-up as the other
// browser tests (harness.mjs).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { execFileSync, spawnSync } from 'node:child_process';
import { startApp, cliJson, cli, root, idle, shownSummary, expectedSummary } from './harness.mjs';
import { drawnCells, byKey } from './matrix_cells.mjs';

const prefix = '/page/stepwise/';
let app;
let scratch;
/** The NAS MG S 16 OTF2 run unpacked: a folder of plain files, as a user picks it. */
let mg;

before(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'tracelogic-stepwise-'));
  execFileSync('tar', ['--zstd', '-xf', join(root, 'tests/data/apps/otf2-npb-mg.S.16/trace.tar.zst'), '-C', scratch]);
  mg = join(scratch, 'trace');
  app = await startApp(prefix);
});

after(async () => {
  await app?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

/** A fresh page with nothing loaded. */
async function emptyPage() {
  const s = await app.openPage(`${app.origin}${prefix}#sample=none`);
  await s.page.setViewportSize({ width: 1280, height: 900 });
  await s.page.waitForSelector('#dropzone', { timeout: 60_000 });
  await idle(s.page);
  return s;
}

test('an OTF2 folder decoded as its files arrive gives the CLI summary and matrix', async () => {
  const summary = expectedSummary(mg);
  const matrix = cliJson(['matrix', mg]);
  const s = await emptyPage();
  const { page } = s;
  await page.setInputFiles('#pick-folder', mg);
  await page.waitForSelector('#trace', { timeout: 120_000 });
  await idle(page);
  assert.equal(await page.$('#error'), null, 'no error');
  assert.deepEqual(await shownSummary(page), summary);
  const stages = await page.$$eval('#load-log li', (li) => li.map((e) => e.textContent));
  for (const stage of ['reading the definitions in the worker', 'reading and decoding the ranks in the worker']) {
    assert.ok(stages.includes(stage), `${stage} in ${JSON.stringify(stages)}`);
  }
  await page.click('#nav-matrix');
  await page.waitForSelector('#heatmap svg');
  const cells = byKey(await drawnCells(page, 'heatmap'), assert);
  assert.equal(cells.size, matrix.bytes.length ** 2, 'one cell per pair of ranks');
  for (const [key, c] of cells) assert.equal(c.cell.value, matrix.bytes[c.row][c.col], `bytes ${key}`);
  app.assertClean(s);
  await s.context.close();
});

test('an event file cut in half fails the load with the CLI error; the trace shown before stays', async () => {
  const cut = join(scratch, 'cut');
  execFileSync('cp', ['-R', mg, cut]);
  const evt = join(cut, 'traces', '5.evt');
  const bytes = readFileSync(evt);
  writeFileSync(evt, bytes.subarray(0, (bytes.length >> 1) + 1));
  const run = spawnSync(cli, ['summary', cut], { encoding: 'utf8' });
  assert.notEqual(run.status, 0, 'the CLI refuses the cut trace');
  // The CLI names the file from the folder it was given, the page from the picked folder's parent.
  const message = run.stderr.trim().replace(/^.*cannot read trace:\s*/, '');
  assert.match(message, /^traces\/5\.evt at byte \d+: /, `the CLI names the file and the byte: ${message}`);
  const s = await emptyPage();
  const { page } = s;
  await page.setInputFiles('#pick-folder', mg);
  await page.waitForSelector('#trace', { timeout: 120_000 });
  await idle(page);
  const label = await page.getAttribute('#trace', 'data-label');
  await page.setInputFiles('#pick-folder', cut);
  await page.waitForSelector('#error', { timeout: 120_000 });
  await idle(page);
  const shown = await page.textContent('#error');
  assert.ok(shown.includes(message), `the page's error ${JSON.stringify(shown)} holds the CLI's ${JSON.stringify(message)}`);
  assert.equal(await page.getAttribute('#trace', 'data-label'), label, 'the trace shown before stays');
  assert.deepEqual(await shownSummary(page), expectedSummary(mg));
  app.assertClean(s);
  await s.context.close();
});
