// Browser tests of the Profile and Waits views: a bundled sample dropped on the page, the
// profile table, computation per rank and size histograms against `tracelogic profile --json`,
// the wait states, top pairs and waiting matrix against `tracelogic waits --json`, and the
// critical path with the load imbalance against `tracelogic critical-path --json`, on the whole
// trace and on a selection made in the matrix view. Same set-up as the other browser tests
// (harness.mjs). With TRACELOGIC_SCREENSHOTS=DIR the two views are saved as DIR/profile.png and
// DIR/waits.png.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { startApp, cliJson, sampleDir, drop, idle, screenshot } from './harness.mjs';

const prefix = '/perf/views/';
let app;

before(async () => {
  app = await startApp(prefix);
});

after(async () => {
  await app?.close();
});

/** Open the empty page and drop the files of sample `id`; resolves once the trace is on screen. */
async function dropSample(id) {
  const dir = sampleDir(id);
  const files = readdirSync(dir).sort().map((name) => ({ name, bytes: readFileSync(join(dir, name)) }));
  const s = await app.openPage(`${app.origin}${prefix}#sample=none`);
  await s.page.setViewportSize({ width: 1280, height: 900 });
  await s.page.waitForSelector('#dropzone', { timeout: 60_000 });
  await idle(s.page);
  await drop(s.page, files);
  await s.page.waitForSelector('#trace', { timeout: 60_000 });
  await idle(s.page);
  return s;
}

/** Show `view` and wait for `ready` in it (or fail on its error box). */
async function show(page, view, ready) {
  await page.click(`#nav-${view}`);
  await page.waitForSelector(`#view-${view} ${ready}, #view-${view} .view-error`, { timeout: 120_000 });
  await idle(page);
  const failed = await page.$(`#view-${view} .view-error`);
  assert.equal(failed, null, failed && (await failed.textContent()));
}

/** Rows of `selector` as their data attributes. */
const rows = (page, selector) => page.$$eval(selector, (rs) => rs.map((r) => ({ ...r.dataset })));

const near = (a, b, what) => assert.ok(Math.abs(Number(a) - Number(b)) <= 1e-12 + 1e-9 * Math.abs(Number(b)), `${what}: page ${a}, CLI ${b}`);

async function checkProfile(page, p, what) {
  const shown = await rows(page, '#profile-table tbody tr');
  assert.equal(shown.length, p.functions.length, `${what}: one row per function`);
  // Sorted by total time, as the CLI lists them.
  assert.deepEqual(shown.map((r) => r.function), p.functions.map((f) => f.name), `${what}: order by total`);
  for (const [i, f] of p.functions.entries()) {
    assert.equal(Number(shown[i].calls), f.calls, `${what} ${f.name} calls`);
    near(shown[i].total, f.total_s, `${what} ${f.name} total`);
    near(shown[i].min, f.min_rank_s, `${what} ${f.name} min`);
    near(shown[i].mean, f.mean_rank_s, `${what} ${f.name} mean`);
    near(shown[i].max, f.max_rank_s, `${what} ${f.name} max`);
  }
  const compute = await rows(page, '#profile-compute tbody tr');
  assert.equal(compute.length, p.compute_s.length);
  compute.forEach((r, i) => near(r.compute, p.compute_s[i], `${what} compute of rank ${i}`));
  const bins = await rows(page, '#profile-sizes-p2p tbody tr');
  assert.deepEqual(bins.map((b) => [Number(b.lo), Number(b.count), Number(b.bytes)]),
    p.message_sizes.p2p.map((b) => [b.lo_bytes, b.count, b.bytes]), `${what}: point-to-point sizes`);
  if (p.bytes_over_time.p2p_bytes.some((b) => b > 0)) {
    assert.equal(Number(await page.getAttribute('#profile-bytes', 'data-bins')), p.bytes_over_time.p2p_bytes.length);
  }
}

async function checkWaits(page, w, cp, what) {
  const totals = await rows(page, '#waits-totals tbody tr');
  for (const t of totals) near(t.seconds, w[t.state], `${what} ${t.state}`);
  assert.equal(totals.length, 6);
  const functions = await rows(page, '#waits-functions tbody tr');
  assert.deepEqual(functions.map((f) => f.function), w.by_function.map((f) => f.name), `${what}: functions`);
  const pairs = await rows(page, '#waits-pairs tbody tr');
  const top = w.by_pair.filter((p) => p.late_sender_s > 0).sort((a, b) => b.late_sender_s - a.late_sender_s || a.sender - b.sender || a.receiver - b.receiver).slice(0, 20);
  assert.deepEqual(pairs.map((p) => [Number(p.sender), Number(p.receiver)]), top.map((p) => [p.sender, p.receiver]), `${what}: top pairs`);
  pairs.forEach((p, i) => near(p.seconds, top[i].late_sender_s, `${what} pair ${i}`));
  // The waiting matrix: one cell per pair, its late-sender plus late-receiver seconds.
  const cells = await page.$$eval('#waits-matrix td[data-sender]', (cs) => cs.map((c) => [Number(c.dataset.sender), Number(c.dataset.receiver), Number(c.dataset.seconds)]).filter((c) => c[2] > 0));
  assert.equal(cells.length, w.by_pair.length, `${what}: waiting matrix cells`);
  for (const [s, r, v] of cells) {
    const p = w.by_pair.find((q) => q.sender === s && q.receiver === r);
    near(v, p.late_sender_s + p.late_receiver_s, `${what} cell ${s}→${r}`);
  }

  // The critical path.
  near(await page.getAttribute('#critical-path', 'data-length'), cp.length_s, `${what} path length`);
  assert.equal(Number(await page.getAttribute('#critical-path', 'data-segments')), cp.segments.length, `${what} segments`);
  near(await page.getAttribute('#critical-path', 'data-compute-share'), cp.compute_share, `${what} computation share`);
  const fns = await rows(page, '#cp-functions tbody tr');
  assert.deepEqual(fns.slice(1).map((f) => f.name), cp.by_function.map((f) => f.name), `${what}: functions on the path`);
  fns.slice(1).forEach((f, i) => near(f.share, cp.by_function[i].share, `${what} share of ${f.name}`));
  const ranks = await rows(page, '#cp-ranks tbody tr');
  const onPath = cp.by_rank.filter((r) => r.share > 0).sort((a, b) => b.share - a.share || a.rank - b.rank).slice(0, 20);
  assert.deepEqual(ranks.map((r) => Number(r.rank)), onPath.map((r) => r.rank), `${what}: ranks on the path`);
  ranks.forEach((r, i) => {
    near(r.share, onPath[i].share, `${what} share of rank ${r.rank}`);
    if (onPath[i].gain_s === null) assert.equal(r.gain, 'null');
    else near(r.gain, onPath[i].gain_s, `${what} gain of rank ${r.rank}`);
  });
  near(await page.getAttribute('#cp-imbalance', 'data-ratio'), cp.imbalance.ratio, `${what} max/mean`);
  const late = cp.imbalance.late_ranks.length ? cp.imbalance.late_ranks.join(', ') : 'none';
  assert.equal(await page.getAttribute('#cp-imbalance', 'data-late'), late, `${what} late ranks`);
  assert.equal(await page.textContent('#cp-relation'), cp.relation, `${what}: the relation line`);
}

test('profile and waits views of a dropped NPB LU equal the CLI, whole and on a selection; columns sort', async () => {
  const dir = sampleDir('npb-lu.S.8');
  const s = await dropSample('npb-lu.S.8');
  const { page } = s;
  await show(page, 'profile', '#profile-table');
  await checkProfile(page, cliJson(['profile', dir]), 'LU');
  await screenshot(page, 'profile');
  // Sorting by calls, then again for the reverse order.
  await page.click('#profile-sort-calls');
  const byCalls = (await rows(page, '#profile-table tbody tr')).map((r) => Number(r.calls));
  assert.deepEqual(byCalls, [...byCalls].sort((a, b) => b - a));
  assert.equal(await page.$eval('#profile-sort-calls', (b) => b.parentElement.getAttribute('aria-sort')), 'descending');
  assert.equal(await page.$eval('#profile-sort-total', (b) => b.parentElement.getAttribute('aria-sort')), null);
  await page.click('#profile-sort-calls');
  const reversed = (await rows(page, '#profile-table tbody tr')).map((r) => Number(r.calls));
  assert.deepEqual(reversed, [...byCalls].reverse());

  await show(page, 'waits', '#critical-path');
  await checkWaits(page, cliJson(['waits', dir]), cliJson(['critical-path', dir]), 'LU');
  await screenshot(page, 'waits');
  // The what-if classification, on request, as the CLI's --what-if relates it.
  await page.click('#cp-ask-whatif');
  await page.waitForSelector('#cp-whatif', { timeout: 120_000 });
  const withWhatIf = cliJson(['critical-path', dir, '--what-if']);
  assert.equal(await page.getAttribute('#cp-whatif', 'data-label'), withWhatIf.what_if.label);
  assert.equal(await page.textContent('#cp-relation'), withWhatIf.relation);

  // A selection made in the matrix view: ranks 0-3 up to 600 ms.
  await show(page, 'matrix', '#heatmap svg');
  await page.fill('#sel-ranks', '0-3');
  await page.fill('#sel-to', '600ms');
  await page.click('#sel-apply');
  await idle(page);
  const flags = ['--ranks', '0-3', '--to', '600ms'];
  const selected = cliJson(['waits', dir, ...flags]);
  await show(page, 'waits', '#critical-path');
  const total = selected.late_sender_s + selected.late_receiver_s + selected.wait_nxn_s + selected.wait_barrier_s + selected.late_broadcast_s + selected.early_reduce_s;
  await page.waitForFunction((t) => Math.abs(Number(document.querySelector('#view-waits')?.dataset.total) - t) < 1e-9,
    total, { timeout: 120_000 });
  await checkWaits(page, selected, cliJson(['critical-path', dir, ...flags]), 'LU ranks 0-3 to 600 ms');
  await show(page, 'profile', '#profile-table');
  await checkProfile(page, cliJson(['profile', dir, ...flags]), 'LU ranks 0-3 to 600 ms');

  // A window cut at 10 ms, through messages and collectives: the wait states and the critical
  // path of what it keeps, pairs as recorded (this used to be refused as a dependency cycle).
  await show(page, 'matrix', '#heatmap svg');
  await page.fill('#sel-ranks', '0-3');
  await page.fill('#sel-to', '');
  await page.fill('#sel-from', '10ms');
  await page.click('#sel-apply');
  await idle(page);
  const cut = ['--ranks', '0-3', '--from', '10ms'];
  const cutWaits = cliJson(['waits', dir, ...cut]);
  const cutPath = cliJson(['critical-path', dir, ...cut]);
  assert.ok(cutPath.length_s > 0);
  await show(page, 'waits', '#critical-path');
  const cutTotal = cutWaits.late_sender_s + cutWaits.late_receiver_s + cutWaits.wait_nxn_s + cutWaits.wait_barrier_s + cutWaits.late_broadcast_s + cutWaits.early_reduce_s;
  await page.waitForFunction((t) => Math.abs(Number(document.querySelector('#view-waits')?.dataset.total) - t) < 1e-9,
    cutTotal, { timeout: 120_000 });
  await page.waitForSelector('#critical-path[data-length]', { timeout: 120_000 });
  await checkWaits(page, cutWaits, cutPath, 'LU ranks 0-3 from 10 ms');
  app.assertClean(s);
  await page.close();
});

test('profile and waits of the bundled MG and BT samples equal the CLI', async () => {
  for (const id of ['npb-mg.S.8', 'npb-bt.S.9']) {
    const dir = sampleDir(id);
    const s = await app.openView(id, 'profile', '#profile-table');
    await idle(s.page);
    await checkProfile(s.page, cliJson(['profile', dir]), id);
    await show(s.page, 'waits', '#critical-path');
    await checkWaits(s.page, cliJson(['waits', dir]), cliJson(['critical-path', dir]), id);
    app.assertClean(s);
    await s.page.close();
  }
});
