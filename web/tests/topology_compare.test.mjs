// End-to-end test of the topology reference library and the compare view's plots, in Debian's
// headless Chromium against the built site (TRACELOGIC_DIST) served from a sub-path.
//
// Expected values come from the CLI on the same files: `tracelogic topology --library FILE` on the
// edge list the page downloads (so a pattern saved in the page works in the CLI), and
// `tracelogic compare A B [C] --json` for the property vectors, the graphs and the matrix.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp, cliJson, sampleDir, screenshot, drop } from './harness.mjs';

let app;
const openView = (...a) => app.openView(...a);
const assertClean = (s) => app.assertClean(s);

/** `tracelogic topology` exits 1 when nothing matches; its JSON is still the answer. */
function topologyJson(args) {
  try {
    return cliJson(['topology', ...args]);
  } catch (e) {
    if (e.status === 1 && e.stdout) return JSON.parse(e.stdout);
    throw e;
  }
}

function dirFiles(dir) {
  return readdirSync(dir).sort().map((name) => ({ name, bytes: readFileSync(join(dir, name)) }));
}

async function idle(page) {
  await page.waitForSelector('.app[data-state="idle"]', { timeout: 60_000 });
}

/** Load the bundled sample `id` from the page's menu and wait until it is the trace shown. */
async function loadSample(page, id, title) {
  await page.selectOption('#sample', id);
  await page.waitForSelector(`#trace[data-label="${title}"]`, { timeout: 120_000 });
  await idle(page);
}

/** Wait until the topology view shows the identification `label` and nothing is pending. */
async function topologyShows(page, label) {
  await page.waitForSelector(`#topology-label[data-label="${label}"]`, { timeout: 120_000 });
  await page.waitForFunction(() => !document.querySelector('#view-topology .waiting'), null, { timeout: 120_000 });
}

async function equivalents(page) {
  return (await page.$('#topology-equivalents')) ? page.textContent('#topology-equivalents') : '';
}

before(async () => {
  app = await startApp('/some/sub/path/');
});

after(async () => {
  await app?.close();
});

test('topology: a run saved as a reference pattern in two clicks is a custom candidate of later traces, downloads as a --library file and survives other loads', async () => {
  const tmp = mkdtempSync(join(tmpdir(), 'tracelogic-library-'));
  try {
    const mgTitle = 'NPB MG class S, 8 ranks (DUMPI)';
    const luTitle = 'NPB LU class S, 8 ranks (DUMPI)';
    const mg = topologyJson([sampleDir('npb-mg.S.8')]);
    const lu = topologyJson([sampleDir('npb-lu.S.8')]);
    const s = await openView('npb-mg.S.8', 'topology', '#topology-label');
    const { page } = s;
    await topologyShows(page, mg.match.label);
    assert.match(await page.textContent('#topology-library'), /No reference pattern yet/);

    // Click 1 opens the name field with the trace's label; click 2 saves.
    await page.click('#topology-save');
    assert.equal(await page.inputValue('#topology-save-name'), mgTitle);
    await page.click('#topology-save-confirm');
    const row = `#topology-library-list tr[data-pattern="${mgTitle}"]`;
    await page.waitForSelector(`${row}[data-matches="true"]`, { timeout: 120_000 });
    await topologyShows(page, mg.match.label);
    assert.match(await equivalents(page), new RegExp(`custom pattern ${mgTitle.replace(/[()]/g, '\\$&')} \\(8 nodes\\)`));
    assert.equal(await page.textContent(`${row} td:nth-of-type(2)`), String(mg.edges.length));

    // The download is the edge list of the filtered graph, and the CLI reads it as a library.
    const [download] = await Promise.all([page.waitForEvent('download'), page.click(`${row} button.download`)]);
    const saved = join(tmp, download.suggestedFilename());
    await download.saveAs(saved);
    assert.match(download.suggestedFilename(), /\.txt$/);
    const text = readFileSync(saved, 'utf8');
    const lines = text.split('\n').filter((l) => l.trim() && !l.startsWith('#'));
    assert.equal(lines[0], `8 ${mg.edges.length}`);
    assert.deepEqual(lines.slice(1).map((l) => l.split(' ').map(Number)), mg.edges);
    const viaCli = topologyJson([sampleDir('npb-mg.S.8'), '--library', saved]);
    assert.ok(viaCli.equivalents.some((e) => e.family === 'custom'), JSON.stringify(viaCli.equivalents));
    assert.equal(viaCli.equivalents.length, mg.equivalents.length + 1);

    // Another trace: the library stays, the pattern does not match LU; then MG again matches.
    await loadSample(page, 'npb-lu.S.8', luTitle);
    await topologyShows(page, lu.match.label);
    await page.waitForSelector(`${row}[data-matches="false"]`, { timeout: 60_000 });
    const luWith = topologyJson([sampleDir('npb-lu.S.8'), '--library', saved]);
    assert.equal(luWith.match.label, lu.match.label);
    assert.ok(!(await equivalents(page)).includes('custom pattern'));
    await loadSample(page, 'npb-mg.S.8', mgTitle);
    await topologyShows(page, mg.match.label);
    await page.waitForSelector(`${row}[data-matches="true"]`, { timeout: 120_000 });
    assert.match(await equivalents(page), /custom pattern/);
    await screenshot(page, 'topology-library');

    // Delete, then load the downloaded file back as a library file (named after the file).
    await page.click(`${row} button.delete`);
    await page.waitForSelector('#topology-library-list', { state: 'detached', timeout: 60_000 });
    await topologyShows(page, mg.match.label);
    assert.ok(!(await equivalents(page)).includes('custom pattern'));
    await page.setInputFiles('#topology-library-file', saved);
    const stem = download.suggestedFilename().replace(/\.txt$/, '');
    await page.waitForSelector(`#topology-library-list tr[data-pattern="${stem}"][data-matches="true"]`, { timeout: 120_000 });

    // A broken file names itself and the line; the library is unchanged.
    await page.setInputFiles('#topology-library-file', { name: 'broken.txt', mimeType: 'text/plain', buffer: Buffer.from('3 2\n0 1\n1 7\n') });
    await page.waitForSelector('#topology-library-error', { timeout: 60_000 });
    assert.match(await page.textContent('#topology-library-error'), /broken\.txt: line 3/);
    assert.equal(await page.locator('#topology-library-list tbody tr').count(), 1);
    assertClean(s);
    await page.close();
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

/** The two runs' per-rank values drawn in the ranked plot of `property`, by series. */
async function rankedSeries(page, property) {
  return page.$$eval(`#compare-ranked-${property} g.series`, (gs) =>
    gs.map((g) => [...g.querySelectorAll('rect')].map((r) => Number(r.dataset.value))));
}

/** `[a, b]` edge keys drawn in `svg` with class `kind` (`common`, `only-a`, `only-b`). */
async function edges(page, svg, kind) {
  return page.$$eval(`#${svg} .edge.${kind}`, (els) => els.map((e) => e.dataset.edge).sort());
}

const key = ([a, b]) => `${a}-${b}`;

test('compare: ranked property vectors side by side, both graphs with the common subgraph, and the matrix of three runs equal tracelogic compare --json', async () => {
  const lu = sampleDir('npb-lu.S.8');
  const mg = sampleDir('npb-mg.S.8');
  const pair = cliJson(['compare', lu, mg]);
  const s = await openView('npb-lu.S.8', 'compare', '#compare-sample');
  const { page } = s;
  await page.selectOption('#compare-sample', 'npb-mg.S.8');
  await page.waitForSelector('#compare-verdict', { timeout: 120_000 });
  assert.equal(await page.$('#view-compare .view-error'), null);
  assert.equal(await page.getAttribute('#compare-verdict', 'data-similar'), String(pair.similar));
  // The reasons beside each property are the CLI's (left out, or no agreement: LU's grid orders
  // its ranks, MG gives every rank the same volume and partners).
  for (const p of pair.properties) {
    const note = await page.textContent(`#compare-properties tr[data-property="${p.property}"] td.small`);
    assert.equal(note.trim(), p.note ?? '', p.property);
  }

  // One figure per property: observed and ranked, two series each, one bar per rank.
  for (const p of pair.properties) {
    assert.equal(await page.locator(`#compare-observed-${p.property} g.series`).count(), 2, p.property);
    assert.deepEqual(await rankedSeries(page, p.property), [p.ranked_a, p.ranked_b], p.property);
    assert.match(await page.textContent(`#compare-plots-${p.property} figcaption`), /■ NPB LU.*■ NPB MG/);
  }

  // Graphs: every edge of each run drawn once; the common subgraph is the CLI's, |E_S| edges in both.
  const g = pair.graph;
  const commonA = await edges(page, 'compare-graph-a', 'common');
  assert.deepEqual(commonA, g.common_edges.map(key).sort());
  assert.equal(commonA.length, g.common);
  assert.deepEqual([...commonA, ...(await edges(page, 'compare-graph-a', 'only-a'))].sort(), g.edges_a.map(key).sort());
  const commonB = await edges(page, 'compare-graph-b', 'common');
  assert.equal(commonB.length, g.common);
  const image = g.common_edges.map(([u, v]) => [g.mapping[u], g.mapping[v]].sort((x, y) => x - y)).map(key).sort();
  assert.deepEqual(commonB, image, 'B draws the images of the common edges under the correspondence');
  assert.deepEqual([...commonB, ...(await edges(page, 'compare-graph-b', 'only-b'))].sort(), g.edges_b.map(key).sort());
  assert.equal(await page.locator('#compare-graph-a g.node').count(), pair.ranks);
  assert.equal(await page.locator('#compare-scatter circle.pair').count(), 1);
  assert.equal(await page.$('#compare-matrix'), null, 'no matrix for two runs');
  await screenshot(page, 'compare-plots');

  // A run of another size is refused in the view; the comparison shown stays.
  await drop(page, dirFiles(sampleDir('npb-bt.S.9')), 'compare-dropzone');
  await page.waitForSelector('#view-compare .view-error', { timeout: 120_000 });
  assert.match(await page.textContent('#view-compare .view-error'), /same number of ranks/);
  assert.ok(await page.isVisible('#compare-verdict'));

  // A third run: the similarity matrix, as `tracelogic compare LU MG LU`.
  const three = cliJson(['compare', lu, mg, lu]);
  await page.selectOption('#compare-sample', 'npb-lu.S.8');
  await page.waitForSelector('#compare-matrix', { timeout: 120_000 });
  assert.equal(await page.$('#view-compare .view-error'), null, 'the refusal is gone once a run is added');
  for (let i = 0; i < 3; i++) {
    for (let j = 0; j < 3; j++) {
      if (i === j) continue;
      const cell = `#compare-matrix td[data-first="${i}"][data-second="${j}"]`;
      assert.equal(await page.getAttribute(cell, 'data-similar'), String(three.matrix[i][j].similar), `${i},${j}`);
    }
  }
  assert.equal(await page.locator('#compare-scatter circle.pair').count(), three.pairs.length);
  assert.equal(await page.getAttribute('#compare-verdict', 'data-second'), '2', 'the latest run is shown');
  await screenshot(page, 'compare-three-runs');
  assert.equal(await page.getAttribute('#compare-verdict', 'data-similar'), 'true');
  await page.click('#compare-matrix td[data-first="1"][data-second="0"] button');
  await page.waitForSelector('#compare-verdict[data-second="1"]');
  assert.equal(await page.getAttribute('#compare-verdict', 'data-similar'), String(pair.similar));
  const eps = Number(await page.getAttribute('#compare-epsilon', 'data-epsilon'));
  assert.ok(Math.abs(eps - pair.epsilon) < 1e-9);

  // Removing the third run gives the pair back; clearing empties the view.
  await page.click('#compare-matrix tr:nth-child(3) button.remove');
  await page.waitForSelector('#compare-matrix', { state: 'detached', timeout: 120_000 });
  assert.equal(await page.getAttribute('#compare-verdict', 'data-second'), '1');
  await page.click('#compare-clear');
  await page.waitForSelector('#compare-verdict', { state: 'detached', timeout: 120_000 });
  assertClean(s);
  await page.close();
});
