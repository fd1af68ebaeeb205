// End-to-end test of the built web app (dist/) in Debian's headless Chromium.
//
// The expected numbers come from the CLI (`tracelogic summary --json`, `tracelogic matrix --json`)
// run on the same files, so the page and the CLI must agree. Run with scripts/test-web, which
// builds dist/ and the CLI first; TRACELOGIC_DIST and TRACELOGIC_CLI override the paths.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp, root, cli, cliJson, drop, screenshot } from './harness.mjs';
import { drawnCells, byKey, painted, keptCells, hoverCell, waitForCells } from './matrix_cells.mjs';

const luDir = join(root, 'web/samples/npb-lu.S.8');
// The app is served from a sub-path to prove every URL in it is relative.
const prefix = '/some/sub/path/';

let app;
let origin;
/** Milliseconds the server waits before answering for files of the BT sample (cancel test). */
let btDelayMs = 0;

before(async () => {
  app = await startApp(prefix, {
    delay: (rel) => (rel.startsWith('samples/npb-bt.S.9/') ? btDelayMs : 0),
    // Requests the page itself drops (a cancelled sample fetch) are not failures of the site.
    ignoreFailedRequest: (url) => url.includes('/samples/npb-bt.S.9/'),
  });
  origin = app.origin;
});

after(async () => {
  await app?.close();
});

const openPage = (url) => app.openPage(url);
const assertClean = (s) => app.assertClean(s);

function luFiles() {
  return readdirSync(luDir)
    .sort()
    .map((name) => ({ name, bytes: readFileSync(join(luDir, name)) }));
}

/** Index set "row,col" of the non-zero entries of a matrix given as rows. */
function nonZero(rows) {
  const out = new Set();
  rows.forEach((row, r) => row.forEach((v, c) => { if (v > 0) out.add(`${r},${c}`); }));
  return out;
}

/** "row,col" of the binary matrix's cells drawn in the kept colour. */
async function keptSet(page) {
  return keptCells(await drawnCells(page, 'binary'), assert);
}

/** The heatmap's cells as the page maps them, checked against `rows` (the CLI's matrix): every
 * value, and a drawn (non-blank) pixel exactly where the value is not zero. */
async function assertHeatmap(page, rows, what) {
  const cells = byKey(await drawnCells(page, 'heatmap'), assert);
  assert.equal(cells.size, rows.length * rows.length, `${what}: one cell per pair of ranks`);
  for (const [key, c] of cells) assert.equal(c.cell.value, rows[c.row][c.col], `${what} ${key}`);
  assert.deepEqual(painted([...cells.values()]), nonZero(rows), `${what}: drawn cells = non-zero CLI entries`);
}

const cellSum = (cells) => cells.reduce((a, c) => a + (c.cell?.value ?? 0), 0);

async function idle(page) {
  await page.waitForSelector('.app[data-state="idle"]', { timeout: 60_000 });
}

test('opens on the NPB LU sample with no trace given', async () => {
  const expected = cliJson(['summary', luDir]);
  const s = await openPage(origin + prefix);
  const { page } = s;
  await page.waitForSelector('#trace', { timeout: 60_000 });
  await idle(page);
  assert.match(await page.textContent('#trace h2'), /NPB LU/);
  assert.equal(await page.getAttribute('[data-stat="ranks"]', 'data-value'), String(expected.ranks));
  assert.equal(await page.getAttribute('[data-stat="calls"]', 'data-value'), String(expected.calls));
  assert.match(page.url(), /#sample=npb-lu\.S\.8$/);
  assertClean(s);
  await page.close();
});

test('a dropped DUMPI trace gives the CLI summary and matrix; the threshold changes the binary view', async () => {
  const summary = cliJson(['summary', luDir]);
  const m5 = cliJson(['matrix', luDir, '--threshold', '5']);
  assert.equal(summary.ranks, 8, 'the LU sample has 8 ranks');

  const s = await openPage(origin + prefix + '?sample=none');
  const { page } = s;
  await drop(page, luFiles());
  // Several dropped files are named after the trace (its reader's name), not counted.
  await page.waitForSelector(`#trace[data-label="${summary.source}"]`, { timeout: 60_000 });
  await idle(page);
  assert.equal(await page.getAttribute('[data-stat="ranks"]', 'data-value'), String(summary.ranks));
  assert.equal(await page.getAttribute('[data-stat="calls"]', 'data-value'), String(summary.calls));
  assert.equal(await page.getAttribute('[data-stat="format"]', 'data-value'), summary.format);
  const byFunction = await page.$$eval('tr[data-function]', (rows) =>
    Object.fromEntries(rows.map((r) => [r.dataset.function, Number(r.dataset.calls)])));
  assert.deepEqual(byFunction, summary.calls_by_kind);

  await page.click('#nav-matrix');
  await page.waitForSelector('#heatmap svg');
  assert.equal(await page.getAttribute('#heatmap svg', 'data-side'), '8');
  await assertHeatmap(page, m5.bytes, 'bytes');
  assert.deepEqual(await keptSet(page), nonZero(m5.binary), 'binary at 5 %');

  // Hover a non-zero cell: the tooltip names sender, receiver and value.
  const [r0, c0] = [...nonZero(m5.bytes)][0].split(',').map(Number);
  await hoverCell(page, 'heatmap', r0, c0);
  const tip = (await page.$$eval('#heatmap .tooltip > div', (els) => els.map((e) => e.textContent))).join('|');
  assert.ok(tip.includes(`Senderrank ${r0}|`), tip);
  assert.ok(tip.includes(`Receiverrank ${c0}|`), tip);
  assert.ok(tip.replace(/,/g, '').includes(`${m5.bytes[r0][c0]} B`), `tooltip shows ${m5.bytes[r0][c0]} B: ${tip}`);

  // Find a threshold whose binary matrix differs from the one at 5 %, move the slider there.
  let moved = null;
  for (const t of [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]) {
    const m = cliJson(['matrix', luDir, '--threshold', String(t)]);
    if (JSON.stringify(m.binary) !== JSON.stringify(m5.binary)) { moved = { t, m }; break; }
  }
  assert.ok(moved, 'some threshold changes the LU binary matrix');
  await page.locator('#threshold').fill(String(moved.t));
  await page.waitForFunction(
    (t) => document.querySelector('#binary figcaption')?.textContent.includes(`${t.toFixed(1)} %`),
    moved.t,
  );
  assert.deepEqual(await keptSet(page), nonZero(moved.m.binary), `binary at ${moved.t} %`);
  assert.equal(await page.getAttribute('#threshold-effect', 'data-removed'), String(moved.m.removed_entries));

  // Messages instead of bytes.
  const mm = cliJson(['matrix', luDir, '--metric', 'messages', '--threshold', String(moved.t)]);
  await page.check('input[name="metric"][value="messages"]');
  await page.waitForFunction(() => document.querySelector('#heatmap figcaption')?.textContent.startsWith('messages'));
  await assertHeatmap(page, mm.messages, 'messages');
  assert.deepEqual(await keptSet(page), nonZero(mm.binary), 'binary on messages');
  assertClean(s);
  await page.close();
});

test('the matrix selection filters (ranks, kinds, time window) give the CLI matrix of the same selection', async () => {
  const flags = ['--ranks', '0-3', '--kind', 'send', '--from', '10ms', '--to', '600ms'];
  const expected = cliJson(['matrix', luDir, ...flags]);
  const full = cliJson(['matrix', luDir]);
  const sum = (rows) => rows.flat().reduce((a, b) => a + b, 0);
  assert.ok(sum(expected.bytes) > 0 && sum(expected.bytes) < sum(full.bytes), 'the selection keeps part of the traffic');

  const s = await openPage(origin + prefix + '?sample=npb-lu.S.8');
  const { page } = s;
  await page.waitForSelector('#trace', { timeout: 60_000 });
  await idle(page);
  await page.click('#nav-matrix');
  await page.waitForSelector('#heatmap svg');
  await page.fill('#sel-ranks', '0-3');
  await page.fill('#sel-kinds', 'send');
  await page.fill('#sel-from', '10ms');
  await page.fill('#sel-to', '600ms');
  await page.click('#sel-apply');
  await waitForCells(page, 'heatmap', (cells) => cellSum(cells) === sum(expected.bytes));
  await assertHeatmap(page, expected.bytes, 'selected bytes');

  // A malformed field is reported in the page and the matrix stays as it was.
  await page.fill('#sel-ranks', 'three');
  await page.click('#sel-apply');
  await page.waitForSelector('#sel-error');
  assert.match(await page.textContent('#sel-error'), /ranks/);
  // Clear returns to the whole trace.
  await page.click('#sel-clear');
  await waitForCells(page, 'heatmap', (cells) => cellSum(cells) === sum(full.bytes));
  assertClean(s);
  await page.close();
});

test('a truncated file shows an error naming it and keeps the loaded trace', async () => {
  const s = await openPage(origin + prefix);
  const { page } = s;
  await page.waitForSelector('#trace', { timeout: 60_000 });
  await idle(page);
  const label = await page.getAttribute('#trace', 'data-label');
  const files = luFiles();
  const victim = files.find((f) => f.name.endsWith('-0003.bin'));
  victim.bytes = victim.bytes.subarray(0, Math.floor(victim.bytes.length / 2));
  await drop(page, files);
  await page.waitForSelector('#error', { timeout: 60_000 });
  await idle(page);
  const message = await page.textContent('#error');
  assert.ok(message.includes(victim.name), `the error names ${victim.name}: ${message}`);
  assert.equal(await page.getAttribute('#trace', 'data-label'), label, 'the previous trace is still shown');
  assert.ok(await page.isVisible('[data-stat="calls"]'));
  // The kept trace's worker still answers.
  await page.click('#nav-matrix');
  await page.locator('#threshold').fill('50');
  await page.waitForFunction(() => document.querySelector('#binary figcaption')?.textContent.includes('50.0 %'));
  assertClean(s);
  await page.close();
});

test('cancel stops a load and keeps the trace shown', async () => {
  const s = await openPage(origin + prefix);
  const { page } = s;
  await page.waitForSelector('#trace', { timeout: 60_000 });
  await idle(page);
  const label = await page.getAttribute('#trace', 'data-label');
  btDelayMs = 400;
  try {
    await page.selectOption('#sample', 'npb-bt.S.9');
    await page.waitForSelector('#progress');
    await page.click('#cancel');
    await idle(page);
  } finally {
    btDelayMs = 0;
  }
  assert.match(await page.textContent('#notice'), /cancelled/);
  assert.equal(await page.getAttribute('#trace', 'data-label'), label);
  assert.equal(await page.$('#error'), null);
  assertClean(s);
  await page.close();
});

test('every bundled sample opens from the address and matches the CLI', async () => {
  const samples = readdirSync(join(root, 'web/samples'), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
  assert.ok(samples.length >= 6, `samples: ${samples}`);
  for (const id of samples) {
    const expected = cliJson(['summary', join(root, 'web/samples', id)]);
    const s = await openPage(`${origin}${prefix}#sample=${encodeURIComponent(id)}`);
    const { page } = s;
    await page.waitForSelector('#trace, #error', { timeout: 60_000 });
    await idle(page);
    const error = await page.$('#error');
    assert.equal(error, null, `${id}: ${error && (await error.textContent())}`);
    assert.equal(await page.getAttribute('[data-stat="ranks"]', 'data-value'), String(expected.ranks), id);
    assert.equal(await page.getAttribute('[data-stat="calls"]', 'data-value'), String(expected.calls), id);
    assert.equal(await page.getAttribute('[data-stat="format"]', 'data-value'), expected.format, id);
    await page.click('#nav-matrix');
    const drawn = byKey(await drawnCells(page, 'heatmap'), assert);
    assert.equal(drawn.size, expected.ranks * expected.ranks, id);
    assertClean(s);
    await page.close();
  }
});

test('a picked folder (with sub-folders) and a picked archive load', async () => {
  const otf2 = join(root, 'web/samples/pipit-ping-pong-otf2');
  const expected = cliJson(['summary', otf2]);
  const s = await openPage(origin + prefix + '?sample=none');
  const { page } = s;
  await page.setInputFiles('#pick-folder', otf2);
  await page.waitForSelector('#trace[data-label="pipit-ping-pong-otf2"]', { timeout: 60_000 });
  await idle(page);
  assert.equal(await page.getAttribute('[data-stat="calls"]', 'data-value'), String(expected.calls));

  const tmp = mkdtempSync(join(tmpdir(), 'tracelogic-web-'));
  try {
    const archive = join(tmp, 'npb-mg.tar.gz');
    execFileSync('tar', ['-czf', archive, '-C', join(root, 'web/samples'), 'npb-mg.S.8']);
    const mg = cliJson(['summary', archive]);
    await page.setInputFiles('#pick-files', archive);
    await page.waitForSelector('#trace[data-label="npb-mg.tar.gz"]', { timeout: 60_000 });
    await idle(page);
    assert.equal(await page.getAttribute('[data-stat="ranks"]', 'data-value'), String(mg.ranks));
    assert.equal(await page.getAttribute('[data-stat="calls"]', 'data-value'), String(mg.calls));
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  assertClean(s);
  await page.close();
});

test('a 320-rank trace is drawn in blocks of ranks whose sums match the CLI matrix', async () => {
  const tmp = mkdtempSync(join(tmpdir(), 'tracelogic-web-'));
  try {
    const dir = join(tmp, 'torus-16x20');
    execFileSync(cli, ['generate', '--topology', 'torus:16x20', '--iterations', '2', '--format', 'dumpi', '--out', dir]);
    const m = cliJson(['matrix', dir]);
    const n = m.ranks;
    const block = Math.ceil(n / 128);
    const side = Math.ceil(n / block);
    assert.ok(block > 1, 'the test needs more ranks than the drawing has cells');
    const expected = new Map();
    m.bytes.forEach((row, r) => row.forEach((v, c) => {
      const key = `${Math.floor(r / block)},${Math.floor(c / block)}`;
      expected.set(key, (expected.get(key) || 0) + v);
    }));

    const s = await openPage(origin + prefix + '?sample=none');
    const { page } = s;
    await page.setInputFiles('#pick-folder', dir);
    await page.waitForSelector('#trace[data-label="torus-16x20"]', { timeout: 120_000 });
    await idle(page);
    assert.equal(await page.getAttribute('[data-stat="ranks"]', 'data-value'), String(n));
    await page.click('#nav-matrix');
    assert.equal(await page.getAttribute('#heatmap svg', 'data-side'), String(side));
    const cells = byKey(await drawnCells(page, 'heatmap'), assert);
    assert.equal(cells.size, side * side);
    for (const [key, c] of cells) assert.equal(c.cell.value, expected.get(key) || 0, `block ${key}`);
    for (const [key, c] of cells) assert.equal(c.pixel[3] > 0, c.cell.value > 0, `block ${key} drawn iff it has traffic`);
    const [lo, hi] = cells.get(`${side - 1},0`).cell.senders;
    assert.deepEqual([lo, hi], [(side - 1) * block, n - 1], 'the last block ends at the last rank');
    assert.match(await page.textContent('#view-matrix .note'), new RegExp(`${n} ranks: each cell sums a block of ${block} × ${block} ranks`));
    assertClean(s);
    await page.close();
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

// ---- Analysis views: each computed in the worker, checked against the CLI's JSON ----

const sampleDir = (id) => join(root, 'web/samples', id);

/** Open bundled sample `id`, switch to `view` and wait for `ready` inside it. */
async function openView(id, view, ready) {
  const s = await openPage(`${origin}${prefix}#sample=${encodeURIComponent(id)}`);
  await s.page.setViewportSize({ width: 1280, height: 900 });
  await s.page.waitForSelector('#trace', { timeout: 60_000 });
  await idle(s.page);
  await s.page.click(`#nav-${view}`);
  await s.page.waitForSelector(`#view-${view} ${ready}, #view-${view} .view-error`, { timeout: 120_000 });
  const failed = await s.page.$(`#view-${view} .view-error`);
  assert.equal(failed, null, failed && (await failed.textContent()));
  return s;
}

/** Move a range input to `value` as a user releasing the slider there would. */
async function setRange(page, selector, value) {
  await page.$eval(selector, (e, v) => {
    e.value = String(v);
    e.dispatchEvent(new Event('input', { bubbles: true }));
    e.dispatchEvent(new Event('change', { bubbles: true }));
  }, value);
}

test('topology view: label, mapping, drawing and stages equal tracelogic topology --json; the threshold override refilters', async () => {
  const id = 'npb-lu.S.8';
  const t = cliJson(['topology', sampleDir(id)]);
  const s = await openView(id, 'topology', '#topology-label');
  const { page } = s;
  assert.equal(await page.getAttribute('#topology-label', 'data-label'), t.match.label);
  assert.equal(await page.locator('#topology-mapping tbody tr').count(), t.mapping.length);
  assert.equal(await page.locator('#topology-graph g.node').count(), t.ranks);
  const labels = await page.$$eval('#topology-graph g.node text', (els) => els.map((e) => Number(e.textContent)));
  assert.deepEqual(labels.sort((a, b) => a - b), [...Array(t.ranks).keys()]);
  assert.equal(await page.locator('#topology-graph .edge').count(), t.edges.length);
  assert.equal(await page.locator('#topology-stages tbody tr').count(), t.stages.length);
  assert.ok(await page.isVisible('#topology-spectrum'));
  // Hovering a rank highlights exactly its neighbours.
  await page.hover('#topology-graph g.node[data-rank="0"]');
  const hot = await page.$$eval('#topology-graph g.node.neighbour', (els) => els.map((e) => Number(e.dataset.rank)).sort((a, b) => a - b));
  const expected = t.mapping.find((p) => p.rank === 0).neighbours.map((n) => n.rank).sort((a, b) => a - b);
  assert.deepEqual(hot, expected);
  await screenshot(page, 'topology');
  // Threshold override.
  const t60 = cliJson(['topology', sampleDir(id), '--threshold', '60']);
  await page.fill('#topology-threshold', '60');
  await page.click('#topology-filter button[type="submit"]');
  await page.waitForFunction(
    (n) => document.querySelector('#topology-filter [data-stat="removed"]')?.dataset.value === String(n),
    t60.filter.removed.length,
  );
  const label60 = t60.match ? t60.match.label : 'no exact match';
  assert.equal(await page.getAttribute('#topology-label', 'data-label'), label60);
  if (!t60.match) assert.equal(await page.locator('#topology-near tbody tr').count(), t60.near_matches.length);
  assertClean(s);
  await page.close();
});

test('logical view: figures and per-rank reproduction equal tracelogic logical --json; downloads are local blobs', async () => {
  const id = 'npb-bt.S.9';
  const l = cliJson(['logical', sampleDir(id)]);
  const s = await openView(id, 'logical', '#logical-figures');
  const { page } = s;
  assert.equal(await page.textContent('#logical-topology'), l.topology.label);
  assert.equal(await page.getAttribute('[data-stat="raw"]', 'data-value'), String(l.raw_length));
  assert.equal(await page.getAttribute('[data-stat="compressed"]', 'data-value'), String(l.compressed_length));
  assert.equal(await page.locator('#logical-ranks tbody tr').count(), l.verification.per_rank.length);
  assert.equal(await page.locator('#logical-ranks tbody tr.below').count(), l.verification.ranks_below_full.length);
  assert.ok((await page.locator('#logical-program details').count()) >= 1, 'the program has foldable loops');
  assert.ok((await page.textContent('#logical-side-by-side')).length > 0);
  for (const [button, check] of [['#logical-json', (t) => JSON.parse(t).records.length === l.records.length], ['#logical-skeleton', (t) => t.includes('MPI_Init')]]) {
    const [download] = await Promise.all([page.waitForEvent('download'), page.click(button)]);
    const path = await download.path();
    assert.ok(check(readFileSync(path, 'utf8')), `${button} content`);
  }
  await screenshot(page, 'logical');
  assertClean(s);
  await page.close();
});

test('patterns view: the patterns and their occurrences equal tracelogic patterns --json; sorting and the event graph', async () => {
  const id = 'npb-lu.S.8';
  const p = cliJson(['patterns', sampleDir(id)]);
  const s = await openView(id, 'patterns', '#patterns-table');
  const { page } = s;
  // Patterns covering under 1 % of the events are hidden by default (their count is shown);
  // the list is ordered by events covered. Show them all, ordered by occurrences.
  if (await page.$('#patterns-show-all')) await page.click('#patterns-show-all');
  if (await page.$('#sort-occurrences')) await page.click('#sort-occurrences');
  const rows = await page.$$eval('#patterns-table tbody tr', (els) => els.map((e) => [Number(e.dataset.pattern), Number(e.dataset.occurrences)]));
  assert.deepEqual(new Map(rows), new Map(p.communication_patterns.map((c) => [c.id, c.occurrences])));
  const occ = rows.map((r) => r[1]);
  assert.deepEqual(occ, [...occ].sort((a, b) => b - a), 'sorted by occurrences');
  await page.click('#sort-ranks');
  const ranks = await page.$$eval('#patterns-table tbody tr td:nth-child(4)', (els) => els.map((e) => Number(e.textContent)));
  assert.deepEqual(ranks, [...ranks].sort((a, b) => b - a), 'sorted by ranks');
  const pick = p.communication_patterns[p.communication_patterns.length - 1];
  await page.click(`#patterns-table tr[data-pattern="${pick.id}"]`);
  await page.waitForSelector(`#pattern-graph[data-pattern="${pick.id}"]`);
  const events = Object.values(pick.events).reduce((n, e) => n + e.length, 0);
  assert.equal(await page.locator('#pattern-graph circle.event').count(), events);
  assert.equal(await page.locator('#pattern-graph g.rank-line').count(), Object.keys(pick.events).length);
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#patterns-json')]);
  assert.equal(JSON.parse(readFileSync(await download.path(), 'utf8')).patterns.length, p.communication_patterns.length);
  await page.click(`#patterns-table tr[data-pattern="${p.communication_patterns[0].id}"]`);
  await screenshot(page, 'patterns');
  assertClean(s);
  await page.close();
});

test('phases view: phases equal tracelogic phases --json; tree nodes switch the curve; s0 re-segments', async () => {
  const id = 'npb-lu.S.8';
  const ph = cliJson(['phases', sampleDir(id)]);
  assert.ok(ph.phases.length >= 1);
  const s = await openView(id, 'phases', '#phases-count');
  const { page } = s;
  assert.equal(await page.getAttribute('#phases-count', 'data-value'), String(ph.phases.length));
  assert.equal(await page.locator('#phases-table tbody tr').count(), ph.phases.length);
  assert.equal(await page.getAttribute('#phases-cut', 'data-cut'), String(ph.tree[0].cut));
  assert.equal(await page.locator('#phases-tree button.tree-node').count(), ph.tree.length);
  assert.ok((await page.locator('#phases-timeline rect.phase-span').count()) >= ph.phases.length);
  const child = ph.tree[0].children[0];
  await page.click(`#phases-tree button[data-segment="${child}"]`);
  await page.waitForSelector(`#phases-curve[data-segment="${child}"]`);
  await screenshot(page, 'phases');
  const coarse = cliJson(['phases', sampleDir(id), '--strength', '10']);
  await setRange(page, '#phases-strength', 10);
  await page.waitForFunction((n) => document.querySelector('#phases-count')?.dataset.value === String(n) && !document.querySelector('#view-phases .waiting'), coarse.phases.length);
  assertClean(s);
  await page.close();
});

test('what-if view: presets, classifications and predicted times equal tracelogic replay --json; a custom network is added', async () => {
  const id = 'npb-mg.S.8';
  const r = cliJson(['replay', sampleDir(id)]);
  const s = await openView(id, 'whatif', '#whatif-classification');
  const { page } = s;
  const classes = await page.$$eval('#whatif-classification tbody tr', (els) => els.map((e) => [e.dataset.network, e.dataset.bound]));
  assert.deepEqual(classes, r.classification.map((c) => [c.network, c.label]));
  // The NPB samples waited inside MPI (oversubscribed): the prediction's shortfall is explained.
  const reference = await page.textContent('#whatif-reference');
  assert.ok(reference.includes(r.reference.network) && reference.includes('spent the rest inside MPI'), reference);
  const first = r.classification[0].network;
  const configs = r.configurations.filter((c) => c.network === first).map((c) => c.label);
  assert.deepEqual(await page.$$eval('#whatif-bars tbody tr', (els) => els.map((e) => e.dataset.config)), configs);
  assert.equal(await page.locator('#whatif-bars .segment').count(), 4 * configs.length);
  assert.ok((await page.locator('#whatif-ranks tbody tr').count()) >= 1, 'per-rank imbalance');
  await screenshot(page, 'whatif');
  await setRange(page, '#whatif-latency', 20);
  await page.waitForSelector('#whatif-classification tr[data-network="custom"]', { timeout: 60_000 });
  assert.equal(await page.getAttribute('#whatif-bars', 'data-network'), 'custom');
  assertClean(s);
  await page.close();
});

test('compare view: θ, ε and the verdict against a bundled sample equal tracelogic compare --json', async () => {
  const c = cliJson(['compare', sampleDir('npb-lu.S.8'), sampleDir('npb-mg.S.8')]);
  const s = await openView('npb-lu.S.8', 'compare', '#compare-sample');
  const { page } = s;
  await page.selectOption('#compare-sample', 'npb-mg.S.8');
  await page.waitForSelector('#compare-verdict, #view-compare .view-error', { timeout: 120_000 });
  assert.equal(await page.$('#view-compare .view-error'), null);
  assert.equal(await page.getAttribute('#compare-verdict', 'data-similar'), String(c.similar));
  const thetaText = await page.getAttribute('#compare-properties tr[data-property="theta"]', 'data-theta');
  // θ is null when no property orders the ranks in both runs (docs/similarity.md).
  if (c.theta === null) assert.equal(thetaText, 'null');
  else assert.ok(Math.abs(Number(thetaText) - c.theta) < 1e-9, `θ ${thetaText} vs ${c.theta}`);
  // How alike the two runs sequence their operations, a condition of a similar verdict.
  const mix = Number(await page.getAttribute('#compare-operations', 'data-mix'));
  assert.ok(Math.abs(mix - c.operation_mix_similarity) < 1e-9, `operations ${mix} vs ${c.operation_mix_similarity}`);
  assert.equal(await page.getAttribute('#compare-operations', 'data-differs'), String(c.operation_mix_differs));
  const eps = Number(await page.getAttribute('#compare-epsilon', 'data-epsilon'));
  assert.ok(Math.abs(eps - c.epsilon) < 1e-9, `ε ${eps} vs ${c.epsilon}`);
  assert.equal(await page.getAttribute('#compare-epsilon', 'data-exact'), String(c.epsilon_exact));
  for (const p of c.properties) {
    const v = await page.getAttribute(`#compare-properties tr[data-property="${p.property}"]`, 'data-theta');
    if (p.theta === null) assert.equal(v, 'null', `θ ${p.property}`);
    else assert.ok(Math.abs(Number(v) - p.theta) < 1e-9, `θ ${p.property}`);
  }
  if (c.theta !== null) assert.ok(await page.isVisible('#compare-scatter circle.pair'));
  await screenshot(page, 'compare');
  assertClean(s);
  await page.close();
});

test('a failing analysis shows its error in the view and keeps the trace loaded', async () => {
  const s = await openView('npb-lu.S.8', 'compare', '#compare-pick');
  const { page } = s;
  await page.setInputFiles('#compare-pick', { name: 'junk.bin', mimeType: 'application/octet-stream', buffer: Buffer.from('definitely not a trace\n') });
  await page.waitForSelector('#view-compare .view-error', { timeout: 60_000 });
  assert.match(await page.textContent('#view-compare .view-error'), /junk/);
  assert.match(await page.getAttribute('#trace', 'data-label'), /NPB LU/);
  // The worker still holds the trace: another analysis answers.
  await page.click('#nav-topology');
  await page.waitForSelector('#topology-label', { timeout: 60_000 });
  assert.equal(await page.$('#error'), null);
  assertClean(s);
  await page.close();
});

test('loading another trace while an analysis view is shown recomputes it for the new trace; the pattern selection marks phases', async () => {
  const mg = cliJson(['topology', sampleDir('npb-mg.S.8')]);
  const s = await openView('npb-lu.S.8', 'topology', '#topology-label');
  const { page } = s;
  await page.selectOption('#sample', 'npb-mg.S.8');
  await page.waitForSelector(`#topology-label[data-label="${mg.match.label}"]`, { timeout: 60_000 });
  await idle(page);
  const ph = cliJson(['phases', sampleDir('npb-mg.S.8')]);
  const withZero = ph.phases.filter((p) => p.patterns.some(([id]) => id === 0)).length;
  await page.click('#nav-patterns');
  await page.click('#patterns-table tr[data-pattern="0"]');
  await page.click('#nav-phases');
  await page.waitForSelector('#phases-table');
  assert.equal(await page.locator('#phases-table tr.has-pattern').count(), withZero);
  assertClean(s);
  await page.close();
});

test('compare view: a trace dropped on its drop zone is compared like the CLI does; a run of another size is refused in the view', async () => {
  const dirFiles = (dir) => readdirSync(dir).sort().map((name) => ({ name, bytes: readFileSync(join(dir, name)) }));
  const mg = sampleDir('npb-mg.S.8');
  const c = cliJson(['compare', sampleDir('npb-lu.S.8'), mg]);
  const s = await openView('npb-lu.S.8', 'compare', '#compare-dropzone');
  const { page } = s;
  // BT has 9 ranks, LU 8: the CLI refuses the pair, and so does the view.
  await drop(page, dirFiles(sampleDir('npb-bt.S.9')), 'compare-dropzone');
  await page.waitForSelector('#view-compare .view-error', { timeout: 120_000 });
  assert.match(await page.textContent('#view-compare .view-error'), /same number of ranks/);
  await drop(page, dirFiles(mg), 'compare-dropzone');
  await page.waitForSelector('#compare-verdict', { timeout: 120_000 });
  assert.equal(await page.getAttribute('#compare-verdict', 'data-similar'), String(c.similar));
  const eps = Number(await page.getAttribute('#compare-epsilon', 'data-epsilon'));
  assert.ok(Math.abs(eps - c.epsilon) < 1e-9, `ε ${eps} vs ${c.epsilon}`);
  const thetaText = await page.getAttribute('#compare-properties tr[data-property="theta"]', 'data-theta');
  // θ is null when no property orders the ranks in both runs (docs/similarity.md).
  if (c.theta === null) assert.equal(thetaText, 'null');
  else assert.ok(Math.abs(Number(thetaText) - c.theta) < 1e-9, `θ ${thetaText} vs ${c.theta}`);
  assert.match(await page.getAttribute('#trace', 'data-label'), /NPB LU/, 'the loaded trace stays');
  assertClean(s);
  await page.close();
});
