// Browser test of the patterns view's event-graph navigation and run timeline: the LU
// sample's patterns, stepping through the occurrences of one pattern (label, times and graph
// change, the same as `tracelogic patterns --json` gives), zooming the graph (viewBox), real-time
// layout, and the whole-run timeline (one lane per rank, a span per rank and occurrence, click to
// select). Set-up as in app.test.mjs: the app is served from a sub-path, no request may leave the
// origin and console errors fail the test.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp, cliJson, sampleDir, screenshot } from './harness.mjs';

let app;
const openView = (...a) => app.openView(...a);
const assertClean = (s) => app.assertClean(s);

before(async () => {
  app = await startApp('/patterns/sub/path/');
});

after(async () => {
  await app?.close();
});

const graphState = (page) => page.$eval('#pattern-graph', (g) => ({
  occurrence: g.dataset.occurrence,
  layout: g.dataset.layout,
  viewBox: g.getAttribute('viewBox'),
  xs: [...g.querySelectorAll('circle.event')].map((c) => Number(c.getAttribute('cx'))),
  titles: [...g.querySelectorAll('circle.event title')].map((t) => t.textContent),
}));

test('patterns: step through the occurrences of a pattern, zoom the event graph, real-time layout', async () => {
  const id = 'npb-lu.S.8';
  const cliPatterns = cliJson(['patterns', sampleDir(id)]).communication_patterns;
  const s = await openView(id, 'patterns', '#pattern-graph');
  const { page } = s;
  const pick = cliPatterns.find((p) => p.occurrences >= 3);
  assert.ok(pick, 'LU has a pattern with at least three occurrences');
  await page.click(`#patterns-table tr[data-pattern="${pick.id}"]`);
  await page.waitForSelector(`#pattern-graph[data-pattern="${pick.id}"][data-occurrence="0"]`);
  const label = () => page.textContent('#pattern-occurrence');
  assert.equal((await label()).trim(), `occurrence 1 of ${pick.occurrences}`);
  assert.equal(await page.isDisabled('#pattern-prev'), true);
  const first = await graphState(page);
  const events = Object.values(pick.events).reduce((n, e) => n + e.length, 0);
  assert.equal(first.xs.length, events);
  assert.equal(Number(await page.getAttribute('#pattern-occurrence', 'data-start')), pick.spans[0][0]);

  // The second occurrence: label, times and the events' entry times change, the shape does not.
  await page.click('#pattern-next');
  await page.waitForSelector('#pattern-graph[data-occurrence="1"]');
  assert.equal((await label()).trim(), `occurrence 2 of ${pick.occurrences}`);
  assert.equal(Number(await page.getAttribute('#pattern-occurrence', 'data-start')), pick.spans[1][0]);
  assert.equal(Number(await page.getAttribute('#pattern-occurrence', 'data-end')), pick.spans[1][1]);
  const second = await graphState(page);
  assert.equal(second.xs.length, events);
  assert.deepEqual(second.xs, first.xs, 'logical layout: the same shape');
  assert.notDeepEqual(second.titles, first.titles, 'the tooltips carry the occurrence\'s own times');
  await page.click('#pattern-prev');
  await page.waitForSelector('#pattern-graph[data-occurrence="0"]');

  // Zoom: the buttons and the wheel change the viewBox; Fit restores it.
  await page.click('#pattern-zoom-in');
  await page.waitForFunction((vb) => document.querySelector('#pattern-graph').getAttribute('viewBox') !== vb, first.viewBox);
  const zoomed = (await graphState(page)).viewBox.split(' ').map(Number);
  const full = first.viewBox.split(' ').map(Number);
  assert.ok(Math.abs(zoomed[2] - full[2] / 2) < 0.2 && Math.abs(zoomed[3] - full[3] / 2) < 0.2, `${zoomed} vs ${full}`);
  await page.$eval('#pattern-pan-x', (e) => { e.value = '100'; e.dispatchEvent(new Event('input', { bubbles: true })); });
  await page.waitForFunction(() => Number(document.querySelector('#pattern-graph').getAttribute('viewBox').split(' ')[0]) > 0);
  // The wheel reaches the graph only where it is on screen.
  await page.locator('#pattern-graph').scrollIntoViewIfNeeded();
  const box = await page.locator('#pattern-graph').boundingBox();
  await page.mouse.move(box.x + 20, box.y + 20);
  await page.mouse.wheel(0, -100);
  await page.waitForFunction(() => Number(document.querySelector('#pattern-zoom').dataset.zoom) > 2);
  await page.click('#pattern-zoom-reset');
  await page.waitForFunction((vb) => document.querySelector('#pattern-graph').getAttribute('viewBox') === vb, first.viewBox);

  // Real time: events move to their entry times.
  await page.check('#pattern-real-time');
  await page.waitForSelector('#pattern-graph[data-layout="time"]');
  const timed = await graphState(page);
  assert.equal(timed.xs.length, events);
  assert.notDeepEqual(timed.xs, first.xs);
  await screenshot(page, 'patterns-real-time');
  assertClean(s);
  await page.close();
});

test('patterns: the run timeline has one lane per rank and a span per rank and occurrence; a click selects the pattern', async () => {
  const id = 'npb-lu.S.8';
  const p = cliJson(['patterns', sampleDir(id)]);
  const summary = cliJson(['summary', sampleDir(id)]);
  const s = await openView(id, 'patterns', '#patterns-timeline');
  const { page } = s;
  const lanes = await page.$$eval('#patterns-timeline g.timeline-lane', (els) => els.map((e) => Number(e.dataset.rank)));
  assert.equal(summary.ranks, 8);
  assert.deepEqual(lanes, [...Array(summary.ranks).keys()]);
  // Every pattern drawn is a pattern of the CLI; each rank's lane shows each pattern it takes part in.
  const drawn = await page.$$eval('#patterns-timeline rect.timeline-span', (els) => els.map((e) => [Number(e.parentElement.dataset.rank), Number(e.dataset.pattern)]));
  const byId = new Map(p.communication_patterns.map((c) => [c.id, c]));
  for (const [rank, pattern] of drawn) assert.ok(byId.get(pattern).ranks.includes(rank), `pattern ${pattern} on rank ${rank}`);
  for (const c of p.communication_patterns) {
    for (const r of c.ranks) assert.ok(drawn.some(([rank, pat]) => rank === r && pat === c.id), `pattern ${c.id} missing on rank ${r}`);
  }
  const legend = await page.$$eval('#patterns-legend li[data-pattern]', (els) => els.map((e) => Number(e.dataset.pattern)));
  assert.ok(legend.length >= 1 && legend.every((id) => byId.has(id)));
  // A click on a span of another pattern selects it in the table and the graph.
  const other = p.communication_patterns[p.communication_patterns.length - 1];
  await page.click(`#patterns-timeline rect.timeline-span[data-pattern="${other.id}"]`);
  await page.waitForSelector(`#pattern-graph[data-pattern="${other.id}"]`);
  await page.waitForSelector(`#patterns-table tr.selected[data-pattern="${other.id}"]`);
  assert.ok(await page.locator(`#patterns-timeline rect.timeline-span.selected[data-pattern="${other.id}"]`).count() >= 1);
  await screenshot(page, 'patterns-timeline');
  assertClean(s);
  await page.close();
});

test('patterns: the search form finds the selected pattern as often as tracelogic match does', async () => {
  const id = 'npb-lu.S.8';
  const pick = cliJson(['patterns', sampleDir(id)]).communication_patterns.find((p) => p.occurrences >= 3);
  const dir = mkdtempSync(join(tmpdir(), 'tracelogic-search-'));
  const file = join(dir, 'pattern.json');
  writeFileSync(file, JSON.stringify(pick.events));
  const cli = cliJson(['match', sampleDir(id), '--pattern', file, '--max-edits', '1']);
  rmSync(dir, { recursive: true, force: true });
  const s = await openView(id, 'patterns', '#pattern-search');
  const { page } = s;
  assert.equal(await page.isDisabled('#pattern-search-take'), true, 'nothing selected yet');
  await page.click(`#patterns-table tr[data-pattern="${pick.id}"]`);
  await page.waitForSelector('#pattern-search-take:not([disabled])');
  await page.click('#pattern-search-take');
  assert.deepEqual(JSON.parse(await page.inputValue('#pattern-search-text')), pick.events);
  await page.fill('#pattern-search-edits', '1');
  await page.dispatchEvent('#pattern-search-edits', 'change');
  await page.click('#pattern-search-run');
  await page.waitForSelector('#pattern-search-count');
  assert.equal(Number(await page.getAttribute('#pattern-search-count', 'data-count')), cli.matches.length);
  assert.ok(cli.matches.length >= pick.occurrences);
  const rows = await page.locator('#pattern-search-matches tbody tr').count();
  assert.equal(rows, Math.min(cli.matches.length, 50));
  // A broken pattern is an error under the form; the patterns stay on screen.
  await page.fill('#pattern-search-text', '{"0": ["S1"');
  await page.click('#pattern-search-run');
  await page.waitForSelector('#pattern-search .view-error');
  assert.match(await page.textContent('#pattern-search .view-error'), /not JSON at line 1/);
  assert.ok(await page.locator('#patterns-table').isVisible());
  assertClean(s);
  await page.close();
});
