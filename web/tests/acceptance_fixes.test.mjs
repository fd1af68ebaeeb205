// Browser tests of the fixes after the seventh session's acceptance pass: shares below 1 never
// read 100.0 %, the topology of a rank selection shows its components and the ranks without
// traffic, the selection form checks ranks and times against the trace as the CLI does, phase
// times count from the trace start, several picked files take the trace's own name (header,
// logical downloads), the what-if view speaks the CLI's words, and the keyboard (digits from a
// slider, Esc cancelling a load, the skip link). Expectations come from the CLI on the same files.
// Same set-up as the other browser tests (harness.mjs).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { startApp, cliJson, sampleDir, drop, idle } from './harness.mjs';

const prefix = '/acceptance/fixes/';
const lu = 'npb-lu.S.8';
let app;
/** Milliseconds the server holds the files of the BT sample (the Esc test). */
let btDelayMs = 0;

before(async () => {
  app = await startApp(prefix, {
    delay: (rel) => (rel.startsWith('samples/npb-bt.S.9/') ? btDelayMs : 0),
    ignoreFailedRequest: (url) => url.includes('/samples/npb-bt.S.9/'),
  });
});

after(async () => {
  await app?.close();
});

/** `text::duration` of the page. */
function duration(s) {
  if (!(s > 0)) return '0 s';
  if (s >= 1) return `${s.toFixed(3)} s`;
  if (s >= 1e-3) return `${(s * 1e3).toFixed(3)} ms`;
  return `${(s * 1e6).toFixed(3)} µs`;
}

test('logical view: no share below 1 reads 100.0 %, and the figures agree with the CLI', async () => {
  const l = cliJson(['logical', sampleDir(lu)]);
  const v = l.verification;
  const below = v.per_rank.filter((p) => p.share < 1);
  const s = await app.openView(lu, 'logical', '#logical-ranks');
  const { page } = s;
  const overall = await page.textContent('[data-stat="reproduced"] dd');
  if (v.overall_share < 1) assert.notEqual(overall.trim(), '100.0 %');
  assert.ok(Math.abs(parseFloat(overall) - 100 * v.overall_share) < 0.01, `${overall} vs ${v.overall_share}`);
  assert.match(await page.textContent('#logical-ranks caption'), new RegExp(`^Per-rank reproduction \\(${below.length} below 100 %\\)`));
  for (const p of v.per_rank) {
    const cell = (await page.textContent(`#logical-ranks tr[data-rank="${p.rank}"] td:last-child`)).trim();
    if (p.share < 1) {
      assert.ok(!cell.startsWith('100.0'), `rank ${p.rank}: ${cell}`);
      assert.ok(Math.abs(parseFloat(cell) - 100 * p.share) < 0.01, `rank ${p.rank}: ${cell} vs ${p.share}`);
    } else {
      assert.equal(cell, '100.0 %');
    }
  }
  app.assertClean(s);
  await s.page.close();
});

test('a selection is checked as the CLI checks it, noted above every view, and its topology shows the component', async () => {
  const t = cliJson(['topology', sampleDir(lu), '--ranks', '0-3', '--kind', 'send']);
  assert.equal(t.components.length, 1);
  const c = t.components[0].identification;
  const s = await app.openView(lu, 'matrix', '#heatmap svg');
  const { page } = s;
  // Ranks the trace does not have are refused with the CLI's words.
  for (const ranks of ['12', '0-99']) {
    await page.fill('#sel-ranks', ranks);
    await page.click('#sel-apply');
    await page.waitForSelector('#sel-error');
    assert.match(await page.textContent('#sel-error'), /rank \d+ is not in the trace \(it has 8 ranks, 0-7\)/);
  }
  assert.equal(await page.$('#selection-note'), null, 'a refused selection is not applied');
  // A start past the end of the run is applied and noted.
  await page.fill('#sel-ranks', '');
  await page.fill('#sel-from', '5s');
  await page.click('#sel-apply');
  await page.waitForSelector('#sel-note');
  assert.match(await page.textContent('#sel-note'), /from 5 s is after the end of the run, which lasts 0\.98\d* s/);
  assert.equal(await page.$('#sel-error'), null);
  // Ranks 0-3, sends only: the topology is the component 0-3 alone, and the views say a selection is active.
  await page.fill('#sel-from', '');
  await page.fill('#sel-ranks', '0-3');
  await page.fill('#sel-kinds', 'send');
  await page.click('#sel-apply');
  await page.waitForSelector('#selection-note');
  assert.match(await page.textContent('#selection-note'), /ranks 0-3 · kind send/);
  await page.click('#nav-topology');
  await page.waitForSelector('#view-topology #topology-components .component', { timeout: 120_000 });
  assert.match(await page.textContent('#selection-note'), /ranks 0-3/);
  const line = await page.textContent('#topology-graph-line');
  assert.match(line, new RegExp(`${t.ranks} ranks, ${t.edges.length} edges, ${t.isolated_ranks.length} ranks without traffic`));
  assert.equal(t.match, null, 'the whole 8-rank graph matches nothing');
  assert.match(await page.textContent('#topology-no-mapping'), /each component's are below/);
  const component = page.locator('#topology-components .component');
  assert.equal(await component.count(), 1);
  assert.equal(await component.getAttribute('data-ranks'), '0-3');
  assert.equal(await component.getAttribute('data-label'), c.match.label);
  assert.match(await component.textContent(), /\(proved by isomorphism, mapping verified\)/);
  assert.equal(await page.locator('#topology-components .component-mapping tbody tr').count(), c.mapping.length);
  app.assertClean(s);
  await page.close();
});

test('topology: the match line says it is proved, skipped stages say why', async () => {
  const t = cliJson(['topology', sampleDir(lu)]);
  const s = await app.openView(lu, 'topology', '#topology-label');
  const { page } = s;
  assert.equal((await page.textContent('#topology-proof')).trim(), '(proved by isomorphism, mapping verified)');
  const skipped = t.stages.filter((st) => st.skipped);
  assert.equal(await page.locator('#topology-stages tr[data-skipped="true"]').count(), skipped.length);
  for (const [i, st] of skipped.entries()) {
    const row = page.locator('#topology-stages tr[data-skipped="true"]').nth(i);
    assert.equal((await row.locator('td').nth(1).textContent()).trim(), 'skipped');
    assert.ok((await row.textContent()).includes(st.skipped), st.skipped);
  }
  app.assertClean(s);
  await page.close();
});

test('phases count from the trace start, as the CLI and the patterns view do', async () => {
  const ph = cliJson(['phases', sampleDir(lu)]);
  const summary = cliJson(['summary', sampleDir(lu)]);
  const s = await app.openView(lu, 'phases', '#phases-table');
  const { page } = s;
  assert.match(await page.textContent('#phases-table caption'), /times from the trace start/);
  const from = (await page.textContent('#phases-table tr[data-phase="0"] td:nth-of-type(2)')).trim();
  assert.equal(from, duration((ph.phases[0].time[0] - summary.start_ns) * 1e-9));
  // DUMPI records no call paths: no empty Routines column, a note saying why.
  assert.ok(ph.phases.every((p) => p.routines.length === 0));
  assert.equal(await page.locator('#phases-table th', { hasText: 'Routines' }).count(), 0);
  assert.ok(await page.isVisible('#phases-no-routines'));
  app.assertClean(s);
  await page.close();
});

test('what-if speaks the CLI words: sweep names and the MPI_Init/Finalize line', async () => {
  const r = cliJson(['replay', sampleDir(lu)]);
  const s = await app.openView(lu, 'whatif', '#whatif-bars');
  const { page } = s;
  const sweeps = await page.$$eval('#whatif-bars .sweep', (els) => els.map((e) => e.textContent.trim()));
  assert.ok(sweeps.length > 0);
  for (const w of sweeps) assert.ok(['base', 'scaled', 'bandwidth', 'latency'].includes(w), w);
  const note = await page.textContent('#whatif-outside-model');
  assert.ok(note.includes('MPI_Init, MPI_Finalize'), note);
  const e = 100 * r.reference.relative_error_inside_model;
  assert.ok(note.includes(`error without it ${e >= 0 ? '+' : ''}${e.toFixed(1)} %`), note);
  app.assertClean(s);
  await page.close();
});

test('several picked files take the trace name, and the logical downloads are named after it', async () => {
  const dir = sampleDir(lu);
  const files = readdirSync(dir).sort().map((name) => ({ name, bytes: readFileSync(join(dir, name)) }));
  const source = cliJson(['summary', dir]).source;
  const s = await app.openPage(app.origin + prefix, { acceptDownloads: true });
  const { page } = s;
  await page.waitForSelector('#trace', { timeout: 60_000 });
  await idle(page);
  await drop(page, files);
  await page.waitForFunction((name) => document.querySelector('#trace')?.dataset.label === name, source, { timeout: 60_000 });
  await idle(page);
  assert.equal((await page.textContent('#trace .trace-title')).trim(), source);
  await page.click('#nav-logical');
  await page.waitForSelector('#logical-json', { timeout: 120_000 });
  const [d] = await Promise.all([page.waitForEvent('download', { timeout: 60_000 }), page.click('#logical-json')]);
  assert.equal(d.suggestedFilename(), `${source}-logical.json`);
  app.assertClean(s);
  await page.close();
});

test('keyboard: digits switch views from a slider, Esc cancels a load, the skip link reaches the view', async () => {
  const s = await app.openView(lu, 'matrix', '#heatmap svg');
  const { page } = s;
  await page.focus('#threshold');
  await page.keyboard.press('5');
  await page.waitForSelector('#view-topology');
  // The skip link is the first stop of Tab and moves focus into the view without touching the address.
  await page.reload();
  await page.waitForSelector('#view-topology #topology-label', { timeout: 120_000 });
  await idle(page);
  const hash = await page.evaluate(() => location.hash);
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement?.className), 'skip-link');
  await page.keyboard.press('Enter');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'view-content');
  assert.equal(await page.evaluate(() => location.hash), hash);
  // Esc stops a load under way; the trace shown stays.
  const label = await page.getAttribute('#trace', 'data-label');
  btDelayMs = 400;
  try {
    await page.selectOption('#sample', 'npb-bt.S.9');
    await page.waitForSelector('#progress');
    await page.keyboard.press('Escape');
    await idle(page);
  } finally {
    btDelayMs = 0;
  }
  assert.match(await page.textContent('#notice'), /cancelled/);
  assert.equal(await page.getAttribute('#trace', 'data-label'), label);
  app.assertClean(s);
  await page.close();
});
