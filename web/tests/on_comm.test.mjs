// The selection's "On communicators" choice (the CLI's --on-comm) in the built web app (dist/), in
// Debian's headless Chromium. NPB BT (web/samples/npb-bt.S.9) sends on two duplicates of a split
// of MPI_COMM_WORLD; the expected numbers come from the CLI on the same files
// (`tracelogic summary --json`, `tracelogic matrix --on-comm ID --json`).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startApp, root, cliJson } from './harness.mjs';
import { byKey, waitForCells } from './matrix_cells.mjs';

const btDir = join(root, 'web/samples/npb-bt.S.9');
const prefix = '/on/comm/';

let app;
before(async () => {
  app = await startApp(prefix);
});
after(async () => {
  await app?.close();
});

test('ticking a communicator gives the CLI matrix of the calls made on it', async () => {
  const summary = cliJson(['summary', btDir]);
  const busy = summary.communicators
    .map((c, id) => ({ ...c, id }))
    .filter((c) => c.p2p_bytes > 0);
  assert.ok(busy.length >= 2, 'BT sends on more than one communicator');
  const one = busy[busy.length - 1];
  const expected = cliJson(['matrix', btDir, '--on-comm', String(one.id)]);
  const sum = (rows) => rows.flat().reduce((a, b) => a + b, 0);
  assert.equal(sum(expected.bytes), one.p2p_bytes, "the matrix of the calls on it holds the summary's bytes for it");

  const s = await app.openPage(app.origin + prefix + '?sample=npb-bt.S.9');
  const { page } = s;
  await page.waitForSelector('#trace', { timeout: 60_000 });
  await page.waitForSelector('.app[data-state="idle"]', { timeout: 60_000 });
  // The summary lists each communicator's point-to-point traffic.
  const rows = await page.$$eval('table.communicators tbody tr', (trs) =>
    trs.map((tr) => [...tr.querySelectorAll('td[data-export]')].map((td) => Number(td.dataset.export))));
  assert.deepEqual(rows, summary.communicators.map((c) => [c.p2p_sends, c.p2p_bytes]));

  await page.click('#nav-matrix');
  await page.waitForSelector('#heatmap svg');
  const labels = await page.$$eval('#sel-on-comms label.on-comm', (ls) => ls.map((l) => l.textContent.trim()));
  assert.equal(labels.length, summary.communicators.length, 'one choice per communicator');
  summary.communicators.forEach((c, i) => assert.ok(labels[i].startsWith(`${i}: ${c.name}`), labels[i]));
  await page.click('#sel-on-comms summary');
  await page.check(`#sel-on-comms input[value="${one.id}"]`);
  await page.click('#sel-apply');
  const want = sum(expected.bytes);
  const cells = byKey(
    await waitForCells(page, 'heatmap', (cs) => cs.reduce((t, c) => t + (c.cell?.value ?? 0), 0) === want),
    assert,
  );
  assert.equal(cells.size, expected.bytes.length ** 2, 'one cell per pair of ranks');
  for (const [key, c] of cells) assert.equal(c.cell.value, expected.bytes[c.row][c.col], `cell ${key}`);
  app.assertClean(s);
  await page.close();
});
