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
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
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
  // Back on the timeline: "Show the selection" zooms from the whole run to the selection's
  // window; the selection can be cleared from there.
  await page.click('#nav-timeline');
  await page.click('#tl-whole');
  const length = cliJson(['summary', luDir]);
  await page.waitForSelector(`#timeline-canvas[data-view-from="0"][data-view-to="${length.end_ns - length.start_ns}"]`);
  await page.click('#tl-show-selection');
  await page.waitForSelector('#timeline-canvas[data-view-from="100000000"][data-view-to="500000000"]');
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

/** Read the canvas pixel at CSS (x, y) of the plot: [r, g, b, a]. */
function pixelAt(pixels, W, x, y) {
  const i = (Math.floor(y) * W + Math.floor(x)) * 4;
  return pixels.slice(i, i + 4);
}
const hexOf = (p) => '#' + p.slice(0, 3).map((v) => v.toString(16).padStart(2, '0')).join('');
const near = (a, b) => [1, 3, 5].every((j) => Math.abs(parseInt(a.slice(j, j + 2), 16) - parseInt(b.slice(j, j + 2), 16)) <= 3);

/**
 * The page's phase colouring against `phases --json` (`phases`, with times since the epoch of
 * `origin`): on every lane of `ranks`, each column inside one of that rank's phases (from its
 * start to the next phase's start on the rank) that is drawn opaque has that phase's legend
 * colour, and consecutive phases differ. Returns { boundaries, checked, colourOf }.
 */
async function checkPhaseColours(page, d, tile, phases, origin, ranks) {
  const legend = await page.$$eval('#timeline-legend li', (items) => items.map((i) => ({ g: i.dataset.group, name: i.dataset.name, colour: i.dataset.colour })));
  const colourOf = new Map(legend.filter((l) => l.g !== 'none').map((l) => [Number(l.g), l.colour]));
  for (const l of legend.filter((l) => l.g !== 'none')) assert.equal(l.name, `phase ${l.g}`, 'named as the phases view names them');
  assert.equal(new Set(colourOf.values()).size, colourOf.size, 'phases have distinct colours');
  assert.ok([...colourOf.keys()].every((g) => g < phases.length), 'every phase drawn is one of phases --json');
  const pixels = await page.$eval('#timeline-canvas', (c) => [...c.getContext('2d').getImageData(0, 0, c.width, c.height).data]);
  const W = d.cw;
  const P = Number(d.pixels);
  const span = Number(d.tileTo) - Number(d.tileFrom);
  const col = (t) => ((t - origin - Number(d.tileFrom)) / span) * P;
  const lanes = Number(d.lanes);
  let boundaries = 0;
  let checked = 0;
  for (const rank of ranks) {
    const l = rank;
    const edges = new Set();
    for (const c of tile.calls.filter((c) => c.rank === rank)) {
      for (const t of [c.begin, c.end]) {
        const k = Math.floor(((t - tile.from) / span) * P);
        for (let j = k - 2; j <= k + 2; j++) edges.add(j);
      }
    }
    // This rank's phase starts, in time order: phase k runs from its start to the next one's.
    const starts = phases.map((p, k) => ({ k, t: p.ranks.find((r) => r.rank === rank)?.start }))
      .filter((x) => x.t !== undefined).sort((a, b) => a.t - b.t);
    const y = AXIS_H + ((l + 0.5) * (d.height - AXIS_H)) / lanes;
    const seen = [];
    for (let j = 0; j < starts.length; j++) {
      const a = Math.ceil(col(starts[j].t)) + 2;
      const b = j + 1 < starts.length ? Math.floor(col(starts[j + 1].t)) - 3 : Math.min(P - 1, Math.floor(col(phases[starts[j].k].ranks.find((r) => r.rank === rank).end)) - 3);
      let n = 0;
      for (let k = a; k <= b; k++) {
        if (edges.has(k)) continue;
        const px = pixelAt(pixels, W, LABEL_W + ((k + 0.5) * (d.width - LABEL_W)) / P, y);
        if (px[3] < 160) continue; // idle or mostly outside MPI: faint
        assert.ok(near(hexOf(px), colourOf.get(starts[j].k)), `rank ${rank} column ${k}: ${hexOf(px)} is not phase ${starts[j].k}'s ${colourOf.get(starts[j].k)}`);
        n++;
      }
      seen.push(n > 0 ? starts[j].k : null);
      checked += n;
    }
    // Consecutive phases both drawn on this lane: the colour changed at the boundary.
    for (let j = 1; j < seen.length; j++) {
      if (seen[j] !== null && seen[j - 1] !== null) {
        assert.notEqual(colourOf.get(seen[j]), colourOf.get(seen[j - 1]));
        boundaries++;
      }
    }
  }
  return { boundaries, checked, colourOf, pixels };
}

/** Switch the timeline to the phase colouring and wait for its tile. */
async function colourByPhase(page) {
  await page.uncheck('#tl-messages');
  await page.uncheck('#tl-collectives');
  await settled(page);
  await page.selectOption('#tl-colour', 'phase');
  await page.waitForSelector('#timeline-canvas[data-tile-colour="phase"]', { timeout: 120_000 });
  await page.waitForSelector('#timeline-legend[data-colour-by="phase"] li');
  await page.waitForTimeout(500);
  const d = await settled(page);
  assert.equal(d.tileColour, 'phase');
  return d;
}

test('coloured by phase, each lane changes colour at the phase starts of `phases --json`', async () => {
  const s = await app.openView('npb-lu.S.8', 'timeline', '#timeline-legend li');
  const { page } = s;
  const d = await colourByPhase(page);
  const phases = cliJson(['phases', luDir]).phases;
  const origin = cliJson(['summary', luDir]).start_ns;
  assert.ok(phases.length >= 3, `${phases.length} phases`);
  // The CLI tile of the same query lists the calls drawn on their own (their outlines are
  // left out of the colour check).
  const tile = cliTile(luDir, d, ['--colour', 'phase']);
  const lanes = Number(d.lanes);
  const { boundaries, checked, colourOf } = await checkPhaseColours(page, d, tile, phases, origin, [...Array(lanes).keys()]);
  // The phases view's colour of phase k is CSS hsl(137·k, 65%, 55%): the browser's own conversion
  // of it is the legend's colour.
  for (const [g, colour] of colourOf) {
    const css = await page.evaluate((h) => {
      const e = document.createElement('div');
      e.style.color = `hsl(${h}, 65%, 55%)`;
      document.body.append(e);
      const c = getComputedStyle(e).color;
      e.remove();
      return c.match(/\d+/g).slice(0, 3).map(Number);
    }, (g * 137) % 360);
    assert.ok(near(hexOf(css), colour), `phase ${g}: ${colour} vs the browser's ${hexOf(css)}`);
  }
  assert.ok(boundaries >= lanes, `${boundaries} phase boundaries seen on ${lanes} lanes`);
  assert.ok(checked > Number(d.pixels), `${checked} columns checked`);
  await screenshot(page, 'timeline-phases');
  app.assertClean(s);
  await page.close();
});

test('the phase colouring follows the Phases view\'s strength and the page\'s rank selection', async () => {
  const ranks = '0-3';
  const selected = [0, 1, 2, 3];
  // A strength at which the phases of ranks 0-3 differ from those at 0 (the default).
  const at = (s0) => cliJson(['phases', luDir, '--ranks', ranks, '--strength', String(s0)]).phases;
  const base = at(0);
  const strength = [1, 2, 3, 5, 8, 10].find((s0) => { const n = at(s0).length; return n >= 2 && n !== base.length; });
  assert.ok(strength !== undefined, 'a strength that changes the phases of ranks 0-3');
  const phases = at(strength);
  const origin = cliJson(['summary', luDir]).start_ns;
  const s = await app.openView('npb-lu.S.8', 'matrix', '#heatmap svg');
  const { page } = s;
  await page.fill('#sel-ranks', ranks);
  await page.click('#sel-apply');
  await page.waitForSelector('#selection-note', { timeout: 60_000 }).catch(() => {});
  await idle(page);
  await page.click('#nav-phases');
  await page.waitForSelector('#phases-strength', { timeout: 120_000 });
  await page.$eval('#phases-strength', (e, v) => {
    e.value = String(v);
    e.dispatchEvent(new Event('input', { bubbles: true }));
    e.dispatchEvent(new Event('change', { bubbles: true }));
  }, strength);
  await page.waitForFunction((n) => document.querySelector('#phases-count')?.dataset.value === String(n) && !document.querySelector('#view-phases .waiting'), phases.length, { timeout: 120_000 });
  await page.click('#nav-timeline');
  await page.waitForSelector('#timeline-legend li', { timeout: 120_000 });
  const d = await colourByPhase(page);
  const tile = cliTile(luDir, d, ['--colour', 'phase', '--select-ranks', ranks, '--strength', String(strength)]);
  assert.equal(tile.groups.length, phases.length, 'the CLI tile has the phases of the selection');
  const { boundaries, checked, colourOf, pixels } = await checkPhaseColours(page, d, tile, phases, origin, selected);
  assert.ok(boundaries >= 1, `${boundaries} phase boundaries seen`);
  assert.ok(checked > Number(d.pixels), `${checked} columns checked`);
  // Ranks outside the selection are in no phase: no column of theirs has a phase's colour.
  const lanes = Number(d.lanes);
  const P = Number(d.pixels);
  for (let l = 4; l < lanes; l++) {
    const y = AXIS_H + ((l + 0.5) * (d.height - AXIS_H)) / lanes;
    for (let k = 0; k < P; k++) {
      const px = pixelAt(pixels, d.cw, LABEL_W + ((k + 0.5) * (d.width - LABEL_W)) / P, y);
      if (px[3] < 160) continue;
      assert.ok(![...colourOf.values()].some((c) => near(hexOf(px), c)), `rank ${l} column ${k} has a phase colour ${hexOf(px)}`);
    }
  }
  app.assertClean(s);
  await page.close();
});

test('hovering a message line gives its sender, receiver, bytes, tag, times and late-sender wait', async () => {
  const s = await app.openView('npb-lu.S.8', 'timeline', '#timeline-legend li');
  const { page } = s;
  await page.uncheck('#tl-collectives');
  await settled(page);
  await page.fill('#tl-from', '305ms');
  await page.fill('#tl-to', '335ms');
  await page.click('#tl-go');
  await page.waitForSelector('#timeline-canvas[data-view-from="305000000"][data-view-to="335000000"]');
  const d = await settled(page);
  const tile = cliTile(luDir, d);
  assert.equal(tile.messages_left_out, 0);
  const lanes = Number(d.lanes);
  const pw = d.width - LABEL_W;
  const laneH = (d.height - AXIS_H) / lanes;
  const span = Number(d.tileTo) - Number(d.tileFrom);
  const line = (m) => [LABEL_W + ((m.send - tile.from) / span) * pw, AXIS_H + (m.sender + 0.5) * laneH,
    LABEL_W + ((m.recv - tile.from) / span) * pw, AXIS_H + (m.receiver + 0.5) * laneH];
  const dist = (p, [ax, ay, bx, by]) => {
    const [dx, dy] = [bx - ax, by - ay];
    const t = Math.max(0, Math.min(1, ((p[0] - ax) * dx + (p[1] - ay) * dy) / (dx * dx + dy * dy || 1)));
    return Math.hypot(p[0] - ax - t * dx, p[1] - ay - t * dy);
  };
  // A point on the line of a message with a late sender, well away from every other line,
  // inside the plot and not over the message's own sending or receiving call (there the call's
  // tooltip wins).
  const ownCall = (m, p) => tile.calls.some((c) => ((c.rank === m.sender && c.begin === m.send) || (c.rank === m.receiver && c.end === m.recv))
    && Math.floor((p[1] - AXIS_H) / laneH) === c.rank
    && LABEL_W + ((c.begin - tile.from) / span) * pw - 3 <= p[0] && p[0] <= LABEL_W + ((c.end - tile.from) / span) * pw + 3);
  let pick;
  for (const m of tile.messages.filter((m) => m.late_sender > 0)) {
    const [ax, ay, bx, by] = line(m);
    for (let f = 0.05; f < 0.96; f += 0.05) {
      const mid = [ax + f * (bx - ax), ay + f * (by - ay)];
      const clear = Math.min(Infinity, ...tile.messages.filter((o) => o !== m).map((o) => dist(mid, line(o))));
      if (clear > 5 && mid[0] > LABEL_W + 5 && mid[0] < d.width - 5 && mid[1] > AXIS_H + 2 && !ownCall(m, mid)) {
        pick = { m, mid };
        break;
      }
    }
    if (pick) break;
  }
  assert.ok(pick, 'a message with a late sender stands apart in 305–335 ms');
  const box = await page.$eval('#timeline-canvas', (c) => { const r = c.getBoundingClientRect(); return { x: r.left, y: r.top }; });
  await page.mouse.move(box.x + pick.mid[0], box.y + pick.mid[1]);
  await page.waitForSelector('#timeline-tooltip:not([hidden])[data-kind="message"]');
  const tip = await page.$eval('#timeline-tooltip', (t) => ({ ...t.dataset, text: t.innerText }));
  const m = pick.m;
  assert.equal(Number(tip.sender), m.sender);
  assert.equal(Number(tip.receiver), m.receiver);
  assert.equal(Number(tip.bytes), m.bytes);
  assert.equal(Number(tip.tag), m.tag);
  assert.equal(Number(tip.sendNs), m.time[0]);
  assert.equal(Number(tip.recvNs), m.time[1]);
  assert.equal(Number(tip.lateSenderNs), m.late_sender);
  assert.equal(Number(tip.lateReceiverNs), m.late_receiver);
  assert.match(tip.text, new RegExp(`rank ${m.sender} → rank ${m.receiver}`));
  assert.match(tip.text, /late sender: the receiver waited/);
  // Away from any line, the tooltip is a call's or a column's again.
  await page.mouse.move(box.x + LABEL_W + 2, box.y + AXIS_H + 2);
  await page.waitForFunction(() => document.getElementById('timeline-tooltip').dataset.kind !== 'message');
  app.assertClean(s);
  await page.close();
});

test('a rank filter typed while a tile is being computed is not lost', async () => {
  const s = await app.openView('npb-lu.S.8', 'timeline', '#timeline-legend li');
  const { page } = s;
  await settled(page);
  // A zoom asks for a tile (after 60 ms); the filter is typed at once and again while the
  // worker computes (the phase colouring makes the first tile slow: patterns and phases).
  await page.selectOption('#tl-colour', 'phase');
  const zoomIn = () => {
    const c = document.getElementById('timeline-canvas');
    const r = c.getBoundingClientRect();
    c.dispatchEvent(new WheelEvent('wheel', { deltaY: -240, clientX: r.left + r.width / 2, clientY: r.top + 100, bubbles: true, cancelable: true }));
  };
  await page.evaluate(zoomIn);
  await page.fill('#tl-ranks', '6,1');
  await page.press('#tl-ranks', 'Tab');
  await page.waitForTimeout(30);
  await page.fill('#tl-ranks', '5,2');
  // A tile for the first filter arrives (the view redraws) before the second is committed: the
  // text being typed must survive that redraw.
  await page.waitForSelector('#timeline-canvas[data-lane-ranks="1,6"][data-tile-colour="phase"]', { timeout: 30_000 });
  const tileFrom = await page.$eval('#timeline-canvas', (c) => c.dataset.tileFrom);
  await page.evaluate(zoomIn);
  await page.waitForFunction((from) => {
    const d = document.getElementById('timeline-canvas').dataset;
    return d.laneRanks === '1,6' && d.tileFrom !== from;
  }, tileFrom, { timeout: 30_000 });
  assert.equal(await page.$eval('#tl-ranks', (e) => e.value), '5,2');
  await page.press('#tl-ranks', 'Tab');
  await page.waitForSelector('#timeline-canvas[data-lane-ranks="2,5"][data-tile-colour="phase"]', { timeout: 30_000 }).catch(async (e) => {
    console.log(JSON.stringify(await page.$eval('#timeline-canvas', (c) => ({ ...c.dataset }))), await page.$eval('#timeline-status', (e) => e.innerText), await page.$eval('#tl-ranks', (e) => e.value), await page.$eval('#tl-colour', (e) => e.value));
    throw e;
  });
  const d = await settled(page);
  assert.equal(d.laneRanks, '2,5');
  // Nothing later replaces it with a stale tile.
  await page.waitForTimeout(1000);
  assert.equal(await page.$eval('#timeline-canvas', (c) => c.dataset.laneRanks), '2,5');
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

test('ranks in the order they enter a phase, as `timeline --order phase:K` orders them', async () => {
  const phases = cliJson(['phases', luDir]).phases;
  assert.ok(phases.length >= 2, 'LU has several phases');
  // The phase whose entry order differs most from rank order (the CLI's order is the reference).
  const orders = phases.map((_, k) => cliJson(['timeline', luDir, '--order', `phase:${k}`, '--pixels', '10']).lanes.map((l) => l.ranks[0]));
  const k = orders.findIndex((o) => o.join(',') !== [...o].sort((a, b) => a - b).join(','));
  assert.ok(k >= 0, 'some phase is entered out of rank order');
  // The reference itself: ranks by their start in `phases --json`.
  const byStart = [...phases[k].ranks].sort((a, b) => a.start - b.start || a.rank - b.rank).map((r) => r.rank);
  assert.deepEqual(orders[k].slice(0, byStart.length), byStart);
  const s = await app.openView('npb-lu.S.8', 'timeline', '#timeline-canvas');
  const { page } = s;
  await settled(page);
  assert.equal(await page.$eval('#tl-order option[value="phase"]', (o) => o.disabled), true, 'no phases yet');
  await page.click('#nav-phases');
  await page.waitForFunction((n) => document.querySelector('#phases-count')?.dataset.value === String(n) && !document.querySelector('#view-phases .waiting'), phases.length, { timeout: 120_000 });
  await page.click('#nav-timeline');
  await page.selectOption('#tl-order', `phase:${k}`);
  await page.waitForSelector(`#timeline-canvas[data-lane-ranks="${orders[k].join(',')}"]`, { timeout: 60_000 });
  app.assertClean(s);
  await page.close();
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
  // A file, or a folder of flat files (a DUMPI run) given file by file.
  const picked = statSync(large).isDirectory() ? readdirSync(large).sort().map((n) => join(large, n)) : large;
  await page.setInputFiles('#pick-files', picked);
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
