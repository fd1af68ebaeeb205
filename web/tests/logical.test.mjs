// Browser tests of the logical view's keyboard use and downloads: the per-rank reproduction rows
// are reached with Tab and selected with Enter or Space as a click selects them, and each download
// (kept in the worker, asked for when its button is pressed) is the CLI's logical trace. Same
// set-up as the other browser tests (harness.mjs): the built dist/ under a sub-path, headless
// Chromium, every request recorded.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startApp, cliJson, sampleDir, tabTo } from './harness.mjs';

const prefix = '/logical/sub/path/';
let app;

before(async () => {
  app = await startApp(prefix);
});

after(async () => {
  await app?.close();
});

test('logical view: rank rows are selected with Tab and Enter/Space; downloads come from the worker on request', async () => {
  const id = 'npb-lu.S.8';
  const l = cliJson(['logical', sampleDir(id)]);
  const ranks = l.verification.per_rank.map((r) => r.rank);
  assert.ok(ranks.length >= 3);
  const s = await app.openView(id, 'logical', '#logical-ranks');
  const { page } = s;
  const row = (r) => `#logical-ranks tr[data-rank="${r}"]`;
  assert.equal(await page.locator('#logical-ranks button.row-select').count(), ranks.length);
  const last = ranks[ranks.length - 1];
  await tabTo(page, '#logical-ranks caption', `${row(last)} button.row-select`);
  assert.equal(await page.getAttribute(`${row(last)} button.row-select`, 'aria-pressed'), 'false');
  await page.keyboard.press('Enter');
  await page.waitForSelector(`${row(last)}.selected`);
  assert.equal(await page.getAttribute(`${row(last)} button.row-select`, 'aria-pressed'), 'true');
  assert.equal(await page.locator('#logical-ranks button.row-select[aria-pressed="true"]').count(), 1);
  // Space on the selected row clears the selection, as a second click does.
  await page.keyboard.press(' ');
  await page.waitForFunction((sel) => !document.querySelector(sel).classList.contains('selected'), row(last));
  assert.equal(await page.locator('#logical-ranks button.row-select[aria-pressed="true"]').count(), 0);
  // Where the compressed length goes, as the CLI's length_breakdown counts it.
  const b = l.length_breakdown;
  const length = await page.textContent('#logical-length');
  assert.ok(
    length.includes(`${b.outside_loops} outside loops; ${b.loops.length} top-level loop`),
    length,
  );
  // The merged classes come with the answer (LU S.8 has no maximal rank).
  assert.equal(l.maximal, false);
  assert.equal(await page.locator('#logical-classes tbody tr').count(), l.classes.length);
  // Each download is asked for when pressed and is the CLI's logical trace.
  const saved = async (button) => {
    const [d] = await Promise.all([page.waitForEvent('download', { timeout: 60_000 }), page.click(button)]);
    return [d.suggestedFilename(), readFileSync(await d.path(), 'utf8')];
  };
  const [jsonName, json] = await saved('#logical-json');
  assert.equal(jsonName, `${id}-logical.json`);
  const logical = JSON.parse(json);
  assert.equal(logical.records.length, l.records.length);
  assert.deepEqual(logical.classes, l.classes);
  const [textName, text] = await saved('#logical-text');
  assert.equal(textName, `${id}-logical.txt`);
  assert.equal(text.trimEnd().split('\n').length, 1 + l.records.length);
  const [cName, skeleton] = await saved('#logical-skeleton');
  assert.equal(cName, `${id}-skeleton.c`);
  assert.ok(skeleton.includes('MPI_Init'));
  app.assertClean(s);
  await page.close();
});
