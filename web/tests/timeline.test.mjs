// The timeline view in headless Chromium, checked against the CLI on the same files:
// `tracelogic timeline --json` (the tile the worker computes: every lane's dominant function per
// column), `tracelogic query --json` (a single call's exact times), `tracelogic topology --json`
// (rank order by topology node) and `tracelogic matrix --json` (the matrix of the window chosen
// on the timeline). With TRACELOGIC_TIMELINE_LARGE=PATH (a trace file or archive, e.g. the tar
// of `generate --nas lu --ranks 128 --class C --iterations 110 --format otf2`) it also measures
// pan and zoom frame times on it (printed, not asserted).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp, root, cli, cliJson, idle, screenshot } from './harness.mjs';
import { drawnCells, byKey, waitForCells } from './matrix_cells.mjs';

const luDir = join(root, 'web/samples/npb-lu.S.8');
const prefix = '/timeline/';
// Geometry of the view (crates/web/src/views/timeline.rs): rank labels and time axis, CSS px.
const LABEL_W = 72;
const AXIS_H = 30;

let app;
before(async () => {
  app = await startApp(prefix);
});
after(async () => {
  await app?.close();
});

/** Wait until the tile drawn is the one of the window shown (the worker has answered). */
async function settled(page, clock = 'time') {
  await page.waitForFunction((clock) => {
    const c = document.getElementById('timeline-canvas');
    return c && c.dataset.tileClock === clock && c.dataset.tileFrom === c.dataset.viewFrom
      && c.dataset.tileTo === c.dataset.viewTo && c.dataset.pixels;
  }, clock, { timeout: 120_000 });
  return page.$eval('#timeline-canvas', (c) => ({ ...c.dataset, width: c.getBoundingClientRect().width, height: c.getBoundingClientRect().height, cw: c.width }));
}

/** The CLI's tile for the page's query. */
function cliTile(path, d, extra = []) {
  return cliJson(['timeline', path, '--from', `${d.tileFrom}ns`, '--to', `${d.tileTo}ns`,
    '--pixels', d.pixels, '--rows', d.rows, '--limit', '20000', ...extra]);
}

test('every rank has a lane whose colours are the CLI tile\'s dominant functions', async () => {
  const s = await app.openView('npb-lu.S.8', 'timeline', '#timeline-legend li');
  const { page } = s;
  assert.equal(await page.evaluate(() => devicePixelRatio), 1);
  await page.uncheck('#tl-messages');
  await page.uncheck('#tl-collectives');
  await settled(page);
  // A late resize (the legend appearing) asks for another tile: take the last one.
  await page.waitForTimeout(500);
  const d = await settled(page);
  const summary = cliJson(['summary', luDir]);
  assert.equal(Number(d.lanes), summary.ranks, 'one lane per rank');
  assert.equal(d.laneRanks, [...Array(summary.ranks).keys()].join(','));
  const tile = cliTile(luDir, d);
  assert.equal(tile.pixels, Number(d.pixels));
  // The legend names exactly the functions of the CLI tile, each with its colour.
  const legend = await page.$$eval('#timeline-legend li', (items) => items.map((i) => ({ f: Number(i.dataset.func), name: i.dataset.name, colour: i.dataset.colour })));
  const used = new Set([...tile.func.filter((f) => f !== 4294967295), ...tile.calls.map((c) => c.func)]);
  assert.deepEqual(legend.map((l) => l.f).sort((a, b) => a - b), [...used].sort((a, b) => a - b));
  for (const l of legend) assert.equal(l.name, tile.functions[l.f]);
  assert.equal(new Set(legend.map((l) => l.colour)).size, legend.length, 'functions have distinct colours');
  // Every column busy throughout (drawn opaque) shows its CLI function's colour at the lane's
  // centre, except next to the outline of a call drawn on its own.
  const colourOf = new Map(legend.map((l) => [l.f, l.colour]));
  const pixels = await page.$eval('#timeline-canvas', (c) => [...c.getContext('2d').getImageData(0, 0, c.width, c.height).data]);
  const W = d.cw;
  const P = tile.pixels;
  const lanes = tile.lanes.length;
  const span = tile.to - tile.from;
  let checked = 0;
  for (let l = 0; l < lanes; l++) {
    const rank = tile.lanes[l].ranks[0];
    const edges = new Set();
    for (const c of tile.calls.filter((c) => c.rank === rank)) {
      for (const t of [c.begin, c.end]) {
        const k = Math.floor(((t - tile.from) / span) * P);
        for (let j = k - 2; j <= k + 2; j++) edges.add(j);
      }
    }
    const y = Math.floor(AXIS_H + ((l + 0.5) * (d.height - AXIS_H)) / lanes);
    for (let k = 0; k < P; k++) {
      const cell = l * P + k;
      if (tile.busy[cell] < 0.9974 || edges.has(k)) continue;
      const x = Math.floor(LABEL_W + ((k + 0.5) * (d.width - LABEL_W)) / P);
      const i = (y * W + x) * 4;
      const hex = '#' + pixels.slice(i, i + 3).map((v) => v.toString(16).padStart(2, '0')).join('');
      assert.equal(hex, colourOf.get(tile.func[cell]), `lane ${l} column ${k}: ${tile.functions[tile.func[cell]]}`);
      assert.equal(pixels[i + 3], 255);
      checked++;
    }
  }
  assert.ok(checked > P, `checked ${checked} opaque columns`);
  await screenshot(page, 'timeline-lu');
  app.assertClean(s);
  await page.close();
});

test('zoomed to one call, the tooltip gives its exact times; the window becomes the page selection', async () => {
  const s = await app.openView('npb-lu.S.8', 'timeline', '#timeline-legend li');
  const { page } = s;
  await settled(page);
  const rank = 3;
  const q = cliJson(['query', luDir, '--ranks', String(rank), '--limit', '400']);
  const call = q.calls.find((c, i) => i > 100 && c.exit_ns - c.enter_ns >= 2000);
  assert.ok(call, 'a call of at least 2 µs on rank 3');
  const dur = call.exit_ns - call.enter_ns;
  const from = call.enter_ns - dur;
  const to = call.exit_ns + dur;
  await page.fill('#tl-from', `${from}ns`);
  await page.fill('#tl-to', `${to}ns`);
  await page.click('#tl-go');
  await page.waitForSelector(`#timeline-canvas[data-tile-from="${from}"][data-tile-to="${to}"]`, { timeout: 60_000 });
  const d = await settled(page);
  assert.equal(Number(d.resolution), 0, 'a window of three calls is aggregated exactly');
  const box = await page.$eval('#timeline-canvas', (c) => { const r = c.getBoundingClientRect(); return { x: r.left, y: r.top }; });
  const mid = (call.enter_ns + call.exit_ns) / 2;
  const x = box.x + LABEL_W + ((mid - from) / (to - from)) * (d.width - LABEL_W);
  const y = box.y + AXIS_H + ((rank + 0.5) * (d.height - AXIS_H)) / Number(d.lanes);
  await page.mouse.move(x, y);
  await page.waitForSelector('#timeline-tooltip:not([hidden])[data-call]');
  const tip = await page.$eval('#timeline-tooltip', (t) => ({ ...t.dataset, text: t.innerText }));
  assert.equal(Number(tip.rank), rank);
  assert.equal(Number(tip.call), call.call);
  assert.equal(tip.function, call.function);
  assert.equal(Number(tip.enterNs), call.enter_ns);
  assert.equal(Number(tip.exitNs), call.exit_ns);
  assert.match(tip.text, new RegExp(`${call.enter_ns} ns`));

  // A window of the run → the page's selection → the matrix of that window (the CLI's).
  await page.fill('#tl-from', '100ms');
  await page.fill('#tl-to', '500ms');
  await page.click('#tl-go');
  await page.waitForSelector('#timeline-canvas[data-view-from="100000000"][data-view-to="500000000"]');
  await page.click('#tl-use-window');
  await page.waitForSelector('#selection-note');
  const expected = cliJson(['matrix', luDir, '--from', '100ms', '--to', '500ms']);
  const whole = cliJson(['matrix', luDir]);
  const sum = (rows) => rows.flat().reduce((a, b) => a + b, 0);
  assert.ok(sum(expected.bytes) < sum(whole.bytes), 'the window keeps part of the traffic');
  await page.click('#nav-matrix');
  await waitForCells(page, 'heatmap', (cells) => cells.reduce((a, c) => a + (c.cell?.value ?? 0), 0) === sum(expected.bytes));
  const cells = byKey(await drawnCells(page, 'heatmap'), assert);
  for (const [key, c] of cells) assert.equal(c.cell.value, expected.bytes[c.row][c.col], key);
  // Back on the timeline, the selection can be cleared from there.
  await page.click('#nav-timeline');
  await page.click('#tl-clear-window');
  await page.waitForSelector('#selection-note', { state: 'detached' });
  app.assertClean(s);
  await page.close();
});

test('logical steps, a rank filter and the topology order', async () => {
  const s = await app.openView('npb-lu.S.8', 'timeline', '#timeline-legend li');
  const { page } = s;
  await settled(page);
  await page.selectOption('#tl-clock', 'logical');
  const d = await settled(page, 'logical');
  const tile = cliTile(luDir, d, ['--logical']);
  assert.equal(Number(d.lanes), 8);
  assert.equal(tile.extent, Number(d.tileTo), 'the whole run in steps is the CLI\'s largest step');
  // Lanes of ranks 2 and 5 only.
  await page.selectOption('#tl-clock', 'time');
  await settled(page);
  await page.fill('#tl-ranks', '5,2');
  await page.press('#tl-ranks', 'Tab');
  await page.waitForSelector('#timeline-canvas[data-lane-ranks="2,5"]', { timeout: 60_000 });
  await page.fill('#tl-ranks', '');
  await page.press('#tl-ranks', 'Tab');
  await page.waitForSelector('#timeline-canvas[data-lanes="8"]');
  app.assertClean(s);
  await page.close();
});

test('ranks in the order of their node in the identified topology', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tl-'));
  try {
    // A torus whose ranks play randomly chosen nodes, so that node order is not rank order.
    const file = join(dir, 'torus.txt');
    execFileSync(cli, ['generate', '--topology', 'torus:4x4', '--numbering', 'random', '--seed', '3', '--format', 'text', '--out', file]);
    const topo = cliJson(['topology', file]);
    const byNode = [...topo.mapping].sort((a, b) => a.node - b.node || a.rank - b.rank).map((p) => p.rank);
    assert.notDeepEqual(byNode, [...byNode].sort((a, b) => a - b), 'node order differs from rank order');
    const s = await app.openPage(`${app.origin}${prefix}#sample=none`);
    const { page } = s;
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.waitForSelector('#dropzone');
    await page.setInputFiles('#pick-files', file);
    await page.waitForSelector('#trace', { timeout: 60_000 });
    await idle(page);
    await page.click('#nav-timeline');
    await settled(page);
    assert.equal(await page.$eval('#tl-order option[value="topology"]', (o) => o.disabled), true, 'no topology yet');
    await page.click('#nav-topology');
    await idle(page);
    await page.click('#nav-timeline');
    await page.selectOption('#tl-order', 'topology');
    await page.waitForSelector(`#timeline-canvas[data-lane-ranks="${byNode.join(',')}"]`, { timeout: 60_000 });
    app.assertClean(s);
    await page.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('1,024 ranks: every rank is drawn, lanes shorter than a pixel row merge ranks', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tl-'));
  try {
    const file = join(dir, 'ring1024.txt');
    execFileSync(cli, ['generate', '--topology', 'ring:1024', '--iterations', '3', '--format', 'text', '--out', file]);
    const s = await app.openPage(`${app.origin}${prefix}#sample=none`);
    const { page } = s;
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.waitForSelector('#dropzone');
    await page.setInputFiles('#pick-files', file);
    await page.waitForSelector('#trace', { timeout: 60_000 });
    await idle(page);
    await page.click('#nav-timeline');
    const d = await settled(page);
    const rows = Number(d.rows);
    assert.ok(rows < 1024, `${rows} pixel rows for 1,024 ranks`);
    assert.equal(Number(d.ranksDrawn), 1024, 'every rank is in a lane');
    assert.ok(Number(d.lanes) <= rows, 'no lane is shorter than a pixel row');
    const tile = cliTile(file, d);
    assert.equal(tile.lanes.length, Number(d.lanes));
    assert.deepEqual(tile.lanes.map((l) => l.ranks[0]).join(','), d.laneRanks);
    app.assertClean(s);
    await page.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

const large = process.env.TRACELOGIC_TIMELINE_LARGE;
test('measure: pan and zoom frame times on a large trace', { skip: !large && 'set TRACELOGIC_TIMELINE_LARGE=PATH to measure' }, async () => {
  const s = await app.openPage(`${app.origin}${prefix}#sample=none`);
  const { page } = s;
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.waitForSelector('#dropzone');
  const t0 = Date.now();
  await page.setInputFiles('#pick-files', large);
  await page.waitForSelector('#trace', { timeout: 3_600_000 });
  await idle(page, 3_600_000);
  const loadMs = Date.now() - t0;
  const t1 = Date.now();
  await page.click('#nav-timeline');
  const first = await settled(page);
  const firstTileMs = Date.now() - t1;
  // 60 frames of wheel zoom in then out around the middle, then 60 frames of drag pan, one event a
  // frame; the interval between animation frames is the frame time the user sees.
  const frames = await page.evaluate(async () => {
    const c = document.getElementById('timeline-canvas');
    const r = c.getBoundingClientRect();
    const frame = () => new Promise((ok) => requestAnimationFrame(ok));
    const out = { zoom: [], pan: [], draw: [] };
    let last = await frame();
    for (let i = 0; i < 60; i++) {
      c.dispatchEvent(new WheelEvent('wheel', { deltaY: i < 30 ? -120 : 120, clientX: r.left + r.width / 2, clientY: r.top + 200, bubbles: true, cancelable: true }));
      const now = await frame();
      out.zoom.push(now - last);
      out.draw.push(Number(c.dataset.drawMs));
      last = now;
    }
    c.dispatchEvent(new MouseEvent('mousedown', { clientX: r.left + 600, clientY: r.top + 200, bubbles: true }));
    for (let i = 0; i < 60; i++) {
      c.dispatchEvent(new MouseEvent('mousemove', { clientX: r.left + 600 - 5 * (i < 30 ? i : 60 - i), clientY: r.top + 200, bubbles: true }));
      const now = await frame();
      out.pan.push(now - last);
      out.draw.push(Number(c.dataset.drawMs));
      last = now;
    }
    c.dispatchEvent(new MouseEvent('mouseup', { clientX: r.left + 600, clientY: r.top + 200, bubbles: true }));
    return out;
  });
  // Zoom to a tenth of the run and wait for its tile: the worker's answer time.
  const t2 = Date.now();
  await page.fill('#tl-from', `${Math.floor(Number(first.tileTo) * 0.45)}ns`);
  await page.fill('#tl-to', `${Math.floor(Number(first.tileTo) * 0.55)}ns`);
  await page.click('#tl-go');
  const tenth = await settled(page);
  const tenthTileMs = Date.now() - t2;
  const t3 = Date.now();
  await page.selectOption('#tl-clock', 'logical');
  await settled(page, 'logical');
  const logicalTileMs = Date.now() - t3;
  // Back to time: the whole run again, the index already built (what a query costs).
  const t4 = Date.now();
  await page.selectOption('#tl-clock', 'time');
  await settled(page);
  const wholeAgainMs = Date.now() - t4;
  const stats = (v) => {
    const a = [...v].sort((x, y) => x - y);
    return { median: a[Math.floor(a.length / 2)], p95: a[Math.floor(a.length * 0.95)], max: a[a.length - 1] };
  };
  console.log(JSON.stringify({
    path: large, load_ms: loadMs, lanes: Number(first.lanes), first_tile_ms: firstTileMs,
    first_resolution: Number(first.resolution), tenth_tile_ms: tenthTileMs, tenth_resolution: Number(tenth.resolution),
    logical_first_tile_ms: logicalTileMs, whole_again_ms: wholeAgainMs, zoom_frame_ms: stats(frames.zoom), pan_frame_ms: stats(frames.pan), draw_ms: stats(frames.draw),
  }));
  await page.close();
});
