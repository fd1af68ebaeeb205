// Browser tests of the page defects a first-time user met: Back and Forward through the views of
// a dropped trace, the matrix and topology thresholds named in both views, the topology drawing
// inside its SVG, runs named after their folder, the logical view's counts and a run without
// point-to-point traffic, no internal words. Expectations come from the CLI on the same files.
// Same set-up as the other browser tests (harness.mjs).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp, cli, cliJson, sampleDir, drop, idle, shots } from './harness.mjs';

const prefix = '/page/defects/';
let app;

before(async () => {
  app = await startApp(prefix);
});

after(async () => {
  await app?.close();
});

const currentView = (page) => page.getAttribute('nav.views button[aria-current="page"]', 'id');

/** Open the empty page and drop the files of sample `id`; resolves once the trace is on screen. */
async function dropSample(id, options = {}) {
  const dir = sampleDir(id);
  const files = readdirSync(dir).sort().map((name) => ({ name, bytes: readFileSync(join(dir, name)) }));
  const s = await app.openPage(`${app.origin}${prefix}#sample=none`, options);
  const { page } = s;
  await page.waitForSelector('#dropzone', { timeout: 60_000 });
  await idle(page);
  await drop(page, files);
  await page.waitForSelector('#trace', { timeout: 60_000 });
  await idle(page);
  return s;
}

test('Back and Forward step through five views of a dropped trace, Summary included', async () => {
  const s = await dropSample('npb-lu.S.8');
  const { page } = s;
  assert.equal(await currentView(page), 'nav-summary');
  const visited = ['matrix', 'summary', 'topology', 'patterns'];
  for (const v of visited) {
    await page.click(`#nav-${v}`);
    await page.waitForSelector(`#view-${v}`);
    assert.equal(await currentView(page), `nav-${v}`);
  }
  // Back four times: topology, summary, matrix, summary (the entry of the load).
  for (const v of ['topology', 'summary', 'matrix', 'summary']) {
    await page.goBack();
    await page.waitForFunction((id) => document.querySelector('nav.views button[aria-current="page"]')?.id === id, `nav-${v}`, { timeout: 10_000 });
  }
  // Forward again to the end: the forward history was kept.
  for (const v of ['matrix', 'summary', 'topology', 'patterns']) {
    await page.goForward();
    await page.waitForFunction((id) => document.querySelector('nav.views button[aria-current="page"]')?.id === id, `nav-${v}`, { timeout: 10_000 });
  }
  app.assertClean(s);
  await page.close();
});

/** Generate a trace with the CLI into a fresh folder and return its files. */
function generated(args) {
  const dir = mkdtempSync(join(tmpdir(), 'tracelogic-defects-'));
  execFileSync(cli, ['generate', ...args, '--format', 'text', '--out', join(dir, 'trace.txt')]);
  return [{ name: 'trace.txt', bytes: readFileSync(join(dir, 'trace.txt')) }];
}

/** Drop `files` on the empty page and open the topology view. */
async function topologyOf(files, name) {
  const s = await app.openPage(`${app.origin}${prefix}#sample=none`);
  const { page } = s;
  await page.setViewportSize({ width: 1280, height: 1000 });
  await page.waitForSelector('#dropzone', { timeout: 60_000 });
  await idle(page);
  await drop(page, files);
  await page.waitForSelector('#trace', { timeout: 60_000 });
  await idle(page);
  await page.click('#nav-topology');
  await page.waitForSelector('#topology-graph', { timeout: 120_000 });
  if (name && shots) await (await page.$('#topology-graph')).screenshot({ path: join(shots, `${name}.png`) });
  return s;
}

/** Every edge and node of the topology drawing lies inside the SVG's viewBox. */
async function drawingInsideItsBox(page) {
  return page.evaluate(() => {
    const svg = document.querySelector('#topology-graph');
    const vb = svg.viewBox.baseVal;
    const outside = [];
    for (const el of svg.querySelectorAll('path, line, circle')) {
      const b = el.getBBox();
      if (b.x < vb.x - 0.5 || b.y < vb.y - 0.5 || b.x + b.width > vb.x + vb.width + 0.5 || b.y + b.height > vb.y + vb.height + 0.5) {
        outside.push(`${el.tagName} ${b.x.toFixed(1)},${b.y.toFixed(1)} ${b.width.toFixed(1)}x${b.height.toFixed(1)}`);
      }
    }
    return { outside, box: [vb.x, vb.y, vb.width, vb.height] };
  });
}

test('the topology drawing keeps its wrap-around arcs inside the picture (4x4 and 8x8 stencils)', async () => {
  for (const dims of ['4x4', '8x8']) {
    const s = await topologyOf(generated(['--topology', `stencil6:${dims}`, '--iterations', '2']));
    const { outside, box } = await drawingInsideItsBox(s.page);
    assert.deepEqual(outside, [], `stencil6 ${dims}: parts outside the viewBox ${box}`);
    app.assertClean(s);
    await s.page.close();
  }
});

test('hypercubes are drawn as nested squares and NAS CG as its process grid, not on a circle', async () => {
  for (const [args, name] of [
    [['--topology', 'hypercube:5', '--iterations', '2'], 'topology-hypercube-32'],
    [['--topology', 'hypercube:6', '--iterations', '2'], 'topology-hypercube-64'],
    [['--nas', 'cg', '--ranks', '32', '--iterations', '2'], 'topology-cg-32'],
    [['--nas', 'cg', '--ranks', '64', '--iterations', '2'], 'topology-cg-64'],
  ]) {
    const s = await topologyOf(generated(args), name);
    const { page } = s;
    const centres = await page.$$eval('#topology-graph g.node circle', (cs) => cs.map((c) => [+c.getAttribute('cx'), +c.getAttribute('cy')]));
    // On a circle every node is equally far from the centre; here the spread is large.
    const cx = centres.reduce((a, c) => a + c[0], 0) / centres.length;
    const cy = centres.reduce((a, c) => a + c[1], 0) / centres.length;
    const radii = centres.map(([x, y]) => Math.hypot(x - cx, y - cy));
    const spread = (Math.max(...radii) - Math.min(...radii)) / Math.max(...radii);
    assert.ok(spread > 0.3, `${name}: nodes on a circle (radius spread ${spread.toFixed(2)})`);
    // Every rank has its own place.
    const keys = new Set(centres.map(([x, y]) => `${Math.round(x)},${Math.round(y)}`));
    assert.equal(keys.size, centres.length, `${name}: ranks drawn on top of each other`);
    const { outside } = await drawingInsideItsBox(page);
    assert.deepEqual(outside, [], `${name}: parts outside the picture`);
    app.assertClean(s);
    await page.close();
  }
});

test('the Matrix and Topology views each name the other view\'s threshold', async () => {
  const id = 'npb-mg.S.8';
  const f = cliJson(['topology', sampleDir(id)]).filter;
  const s = await app.openView(id, 'topology', '#topology-label');
  const { page } = s;
  const other = await page.textContent('#topology-threshold-other');
  assert.ok(other.includes(`${f.mode} ${f.threshold_pct.toFixed(2)} %`), other);
  assert.ok(other.includes('Matrix view draws its binary matrix at 5.0 %'), other);
  await page.click('#nav-matrix');
  await page.waitForSelector('#threshold-other');
  const named = await page.textContent('#threshold-other');
  assert.ok(named.includes(`Topology view cuts the graph at its own threshold: ${f.mode} ${f.threshold_pct.toFixed(2)} %, ${f.pairs_kept} pairs`), named);
  app.assertClean(s);
  await page.close();
});

test('a 64-rank heatmap numbers its ranks, and its exported SVG has axis titles and a colour scale named after the trace', async () => {
  const files = generated(['--topology', 'torus:8x8', '--iterations', '2']);
  const s = await app.openPage(`${app.origin}${prefix}#sample=none`, { acceptDownloads: true });
  const { page } = s;
  await page.waitForSelector('#dropzone', { timeout: 60_000 });
  await idle(page);
  await drop(page, files);
  await page.waitForSelector('#trace', { timeout: 60_000 });
  await idle(page);
  await page.click('#nav-matrix');
  await page.waitForSelector('#heatmap svg[data-figure-key]');
  const labels = await page.$$eval('#heatmap .rank-label', (ts) => ts.map((t) => t.textContent));
  assert.deepEqual(labels.filter((_, i) => i % 2 === 0), ['0', '8', '16', '24', '32', '40', '48', '56']);
  const size = await page.$eval('#heatmap .rank-label', (t) => t.getBoundingClientRect().height);
  assert.ok(size >= 8, `rank labels are ${size.toFixed(1)} px high`);
  await page.click('#export-toggle');
  await page.keyboard.press('Shift');
  const [d] = await Promise.all([page.waitForEvent('download', { timeout: 60_000 }), page.click('#export-svg-matrix-heatmap')]);
  assert.equal(d.suggestedFilename(), 'trace.txt-matrix-heatmap.svg');
  const svg = readFileSync(await d.path(), 'utf8');
  assert.ok(svg.includes('>receiver →</text>') && svg.includes('>sender →</text>'), 'axis titles');
  assert.ok(svg.includes('sent (log scale)</text>'), 'colour scale title');
  assert.equal((svg.match(/<rect x="[\d.]+" y="[\d.]+" width="14"/g) || []).length, 64, 'colour scale steps');
  app.assertClean(s);
  await page.close();
});

test('a run without point-to-point traffic (NAS FT) gets the logical trace of its collectives, as the CLI', async () => {
  const s = await app.openPage(`${app.origin}${prefix}#sample=none`);
  const { page } = s;
  await page.waitForSelector('#dropzone', { timeout: 60_000 });
  await idle(page);
  const ft = generated(['--nas', 'ft', '--ranks', '8', '--iterations', '2']);
  await drop(page, ft);
  await page.waitForSelector('#trace', { timeout: 60_000 });
  await idle(page);
  await page.click('#nav-logical');
  await page.waitForSelector('#view-logical #logical-collectives-only, #view-logical .view-error', { timeout: 120_000 });
  assert.equal(await page.$('#view-logical .view-error'), null, 'no error box');
  assert.match(await page.textContent('#logical-collectives-only'), /No point-to-point traffic/);
  const file = join(mkdtempSync(join(tmpdir(), 'tracelogic-defects-')), 'trace.txt');
  writeFileSync(file, ft[0].bytes);
  const want = cliJson(['logical', file]);
  const records = await page.getAttribute('#logical-figures [data-stat="raw"]', 'data-value');
  assert.equal(Number(records), want.raw_length, 'records as the CLI counts them');
  app.assertClean(s);
  await page.close();
});

test('no internal words: the page cites papers by title, never by seed file', async () => {
  const s = await app.openView('npb-lu.S.8', 'summary', 'table');
  const { page } = s;
  for (const v of ['summary', 'matrix', 'topology', 'logical', 'patterns', 'phases', 'whatif', 'compare']) {
    await page.click(`#nav-${v}`);
    await page.waitForSelector(`#view-${v}`);
    await idle(page);
    const text = await page.textContent('body');
    assert.doesNotMatch(text, /seed \d{3}|issue \d+/i, `${v}: internal words`);
  }
  app.assertClean(s);
  await page.close();
});

test('a 64-rank event graph is drawn as one rank of each kind and its partners, every rank on demand', async () => {
  const files = generated(['--nas', 'bt', '--ranks', '64', '--class', 'W', '--iterations', '3']);
  const dir = mkdtempSync(join(tmpdir(), 'tracelogic-bt64-'));
  writeFileSync(join(dir, 'trace.txt'), files[0].bytes);
  const p = cliJson(['patterns', dir]);
  const pick = p.communication_patterns.find((c) => c.ranks.length === 64 && Object.values(c.events).some((e) => e.some((s) => /^[SR]\d+$/.test(s))));
  assert.ok(pick, 'a point-to-point pattern on all 64 ranks');
  // The kinds, counted here from the CLI's per-rank event sequences, peers relative to the rank.
  const rel = (s, r) => { const m = /^([SR])(\d+)$/.exec(s); return m ? `${m[1]}${Number(m[2]) - r}` : s; };
  const kinds = new Map();
  for (const [r, ev] of Object.entries(pick.events)) {
    const key = ev.map((s) => rel(s, Number(r))).join(' ');
    kinds.set(key, (kinds.get(key) || 0) + 1);
  }
  assert.equal(kinds.size, 9, 'BT on an 8x8 process grid: corners, edges and interior');
  const s = await app.openPage(`${app.origin}${prefix}#sample=none`);
  const { page } = s;
  await page.waitForSelector('#dropzone', { timeout: 60_000 });
  await idle(page);
  await drop(page, files);
  await page.waitForSelector('#trace', { timeout: 60_000 });
  await idle(page);
  await page.click('#nav-patterns');
  await page.waitForSelector('#patterns-table', { timeout: 120_000 });
  await page.click(`#patterns-table tr[data-pattern="${pick.id}"] button.row-select`);
  await page.waitForSelector(`#pattern-graph[data-pattern="${pick.id}"]`);
  const reduced = await page.waitForSelector('#pattern-graph-reduced');
  assert.equal(Number(await reduced.getAttribute('data-kinds')), kinds.size);
  const lines = Number(await reduced.getAttribute('data-lines'));
  assert.ok(lines >= kinds.size && lines <= 16, `${lines} lines`);
  assert.equal(Number(await page.getAttribute('#pattern-graph', 'data-ranks-drawn')), lines);
  // The ×N labels of the representatives add up to the ranks of the pattern.
  const alike = await page.$$eval('#pattern-graph .rank-labels text', (ts) => ts.map((t) => /×(\d+)$/.exec(t.textContent)?.[1]).filter(Boolean).map(Number));
  assert.deepEqual([...alike].sort((a, b) => a - b), [...kinds.values()].filter((n) => n > 1).sort((a, b) => a - b));
  await page.click('#pattern-every-rank');
  await page.waitForFunction(() => document.querySelector('#pattern-graph')?.dataset.ranksDrawn === '64');
  assert.equal(await page.$('#pattern-graph-reduced'), null);
  app.assertClean(s);
  await page.close();
});

test('one-sided calls are counted in the summary and said to be outside the matrix', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tracelogic-rma-'));
  const file = join(dir, 'rma.txt');
  writeFileSync(file, [
    '#tracelogic-text 1',
    'ranks 2',
    '0 0 10 MPI_Win_lock_all',
    '0 10 20 MPI_Put',
    '0 20 30 MPI_Accumulate',
    '0 30 40 MPI_Get_count',
    '1 0 5 MPI_Get',
    '0 40 50 MPI_Barrier coll=Barrier',
    '1 40 50 MPI_Barrier coll=Barrier',
    '',
  ].join('\n'));
  const expected = cliJson(['summary', file]);
  assert.equal(expected.one_sided_calls, 3, 'MPI_Put, MPI_Accumulate and MPI_Get (not MPI_Get_count)');
  const s = await app.openPage(`${app.origin}${prefix}#sample=none`);
  const { page } = s;
  await page.waitForSelector('#dropzone', { timeout: 60_000 });
  await idle(page);
  await drop(page, [{ name: 'rma.txt', bytes: readFileSync(file) }]);
  await page.waitForSelector('#trace', { timeout: 60_000 });
  await idle(page);
  assert.equal(await page.getAttribute('[data-stat="one-sided"]', 'data-value'), '3');
  assert.match(await page.textContent('[data-stat="one-sided"] dt'), /not in the matrix/);
  app.assertClean(s);
  await page.close();
});

test('waiting by polling is shown beside the wait states, as the CLI measures it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tracelogic-polling-'));
  const file = join(dir, 'polling.txt');
  // Rank 1 polls with MPI_Iprobe while rank 0 computes, then receives what it found.
  writeFileSync(file, [
    '#tracelogic-text 1',
    'ranks 2',
    '0 0 1us MPI_Init',
    '1 0 1us MPI_Init',
    '0 8us +100ns MPI_Send send=1 tag=0 bytes=8',
    '1 1us +500ns MPI_Iprobe',
    '1 3us +500ns MPI_Iprobe',
    '1 8.5us +500ns MPI_Iprobe',
    '1 9us +100ns MPI_Recv recv=0 tag=0 bytes=8',
    '0 11us 12us MPI_Finalize',
    '1 11us 12us MPI_Finalize',
    '',
  ].join('\n'));
  const expected = cliJson(['waits', file]);
  assert.equal(expected.polling.calls, 3, 'three probes');
  const s = await app.openPage(`${app.origin}${prefix}#sample=none`);
  const { page } = s;
  await page.waitForSelector('#dropzone', { timeout: 60_000 });
  await idle(page);
  await drop(page, [{ name: 'polling.txt', bytes: readFileSync(file) }]);
  await page.waitForSelector('#trace', { timeout: 60_000 });
  await idle(page);
  await page.click('#nav-waits');
  await page.waitForSelector('#waits-polling', { timeout: 60_000 });
  assert.equal(await page.getAttribute('#waits-polling', 'data-calls'), '3');
  assert.ok(Math.abs(Number(await page.getAttribute('#waits-polling', 'data-seconds')) - expected.polling.seconds) < 1e-12);
  app.assertClean(s);
  await page.close();
});

test('the phases come first; the segmentation tree follows in a box of its own, whatever its size', async () => {
  // Dropped as a user drops it. npb-lu.S.8's tree has 27 segments: drawn in full before the table it pushed the phases below
  // the fold (a master-worker run's tree of 145 segments put them 4,500 px down).
  const id = 'npb-lu.S.8';
  const ph = cliJson(['phases', sampleDir(id)]);
  assert.ok(ph.tree.length >= 20, `${ph.tree.length} segments`);
  const s = await dropSample(id);
  const { page } = s;
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.click('#nav-phases');
  await page.waitForSelector('#phases-table', { timeout: 120_000 });
  assert.equal(await page.getAttribute('#phases-count', 'data-value'), String(ph.phases.length));
  const top = (sel) => page.$eval(sel, (e) => e.getBoundingClientRect().top + window.scrollY);
  assert.ok((await top('#phases-table')) < (await top('#phases-tree')), 'the table before the tree');
  assert.ok((await top('#phases-timeline')) < (await top('#phases-tree')), 'the timeline before the tree');
  const box = await page.$eval('#phases-tree .tree-scroll', (e) => ({ client: e.clientHeight, scroll: e.scrollHeight }));
  assert.ok(box.client <= 24 * 16 + 16, `the tree's box is ${box.client} px high`);
  assert.ok(box.scroll > box.client, 'the tree scrolls inside its box');
  // Every segment is still there and selectable.
  assert.equal(await page.locator('#phases-tree button.tree-node').count(), ph.tree.length);
  app.assertClean(s);
  await page.close();
});
