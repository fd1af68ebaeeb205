// The page fits the window and loads many small files as one read.
//
// Layout: on the LU sample, every view at 1280 × 720 and at a 720-px-wide viewport (a 1440-px
// screen at 200 % zoom) is no wider than the viewport (the tabs and the selection form wrap, the
// event graph shrinks to its column); the pattern heading lists ranks as ranges; zooming the event
// graph keeps its rank labels at their size and on screen.
//
// Loading: many rank files are read end to end as one Blob (crate::input::read_blobs); a file
// changed on disk after the pick still fails with an error that names it.
//
// Run: TRACELOGIC_DIST=... node --test tests/layout.test.mjs (see harness.mjs).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp, cli, cliJson, sampleDir, idle, shownSummary, expectedSummary, screenshot } from './harness.mjs';

const prefix = '/layout/';
const views = ['summary', 'matrix', 'topology', 'logical', 'patterns', 'phases', 'whatif', 'compare'];
let app;
let scratch;

before(async () => {
  app = await startApp(prefix);
  scratch = mkdtempSync(join(tmpdir(), 'tracelogic-layout-'));
});

after(async () => {
  await app?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

/** The document's width and the elements that reach past the viewport's right edge. */
const overflow = (page) => page.evaluate(() => {
  const width = document.documentElement.clientWidth;
  const wide = [...document.querySelectorAll('body *')]
    .filter((e) => e.getClientRects().length > 0 && e.getBoundingClientRect().right > width + 1)
    .filter((e) => !e.closest('.visually-hidden'))
    .slice(0, 8)
    .map((e) => `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ''} right ${Math.round(e.getBoundingClientRect().right)}`);
  return { width, scrollWidth: document.documentElement.scrollWidth, wide };
});

for (const [width, height] of [[1280, 720], [720, 900]]) {
  test(`every view of the LU sample fits a ${width}-px-wide window`, async () => {
    const s = await app.openPage(`${app.origin}${prefix}#sample=npb-lu.S.8`, { viewport: { width, height } });
    const { page } = s;
    await page.waitForSelector('#trace', { timeout: 60_000 });
    await idle(page);
    for (const view of views) {
      const tab = page.locator(`#nav-${view}`);
      assert.ok(await tab.isVisible(), `the ${view} tab is on screen`);
      const box = await tab.boundingBox();
      assert.ok(box.x >= 0 && box.x + box.width <= width, `the ${view} tab lies inside the window (${box.x}+${box.width})`);
      await tab.click();
      await page.waitForSelector(`#view-${view}`, { timeout: 120_000 });
      await page.waitForFunction((v) => !document.querySelector(`#view-${v} .waiting`), view, { timeout: 120_000 });
      if (view === 'patterns') await page.waitForSelector('#pattern-graph');
      const o = await overflow(page);
      assert.ok(o.scrollWidth <= o.width, `${view} at ${width} px: the page is ${o.scrollWidth} px wide: ${o.wide.join(', ')}`);
      await screenshot(page, `layout-${width}-${view}`, false);
    }
    app.assertClean(s);
    await page.close();
  });
}

test('the pattern heading lists ranks as ranges; zoomed rank labels keep their size and stay in view', async () => {
  const id = 'npb-lu.S.8';
  const patterns = cliJson(['patterns', sampleDir(id)]).communication_patterns;
  const s = await app.openPage(`${app.origin}${prefix}#sample=${id}`, { viewport: { width: 1280, height: 900 } });
  const { page } = s;
  await page.waitForSelector('#trace', { timeout: 60_000 });
  await idle(page);
  await page.click('#nav-patterns');
  await page.waitForSelector('#pattern-graph', { timeout: 120_000 });
  const pick = patterns.find((p) => p.ranks.length >= 3);
  assert.ok(pick, 'LU has a pattern on three ranks or more');
  await page.click(`#patterns-table tr[data-pattern="${pick.id}"]`);
  await page.waitForSelector(`#pattern-graph[data-pattern="${pick.id}"]`);
  // The CLI's ranks written as ranges of consecutive ranks.
  const ranges = [];
  for (const r of [...pick.ranks].sort((a, b) => a - b)) {
    const last = ranges[ranges.length - 1];
    if (last && last[1] + 1 === r) last[1] = r;
    else ranges.push([r, r]);
  }
  const expected = ranges.map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`)).join(', ');
  assert.equal((await page.textContent('#pattern-heading')).trim(),
    `Pattern #${pick.id}: ${pick.occurrences} occurrences on ranks ${expected}`);

  const graph = page.locator('#pattern-graph');
  const labels = async () => {
    const g = await graph.boundingBox();
    const ls = await page.$$eval('#pattern-graph text.tick', (ts) => ts.map((t) => {
      const b = t.getBoundingClientRect();
      return { rank: t.dataset.rank, top: b.top, bottom: b.bottom, left: b.left, right: b.right, height: b.height };
    }));
    return { g, ls };
  };
  const fit = await labels();
  assert.equal(fit.ls.length, Object.keys(pick.events).length, 'a label per rank of the occurrence');
  const height = Math.max(...fit.ls.map((l) => l.height));
  for (let i = 0; i < 2; i++) await page.click('#pattern-zoom-in');
  await page.waitForFunction(() => document.querySelector('#pattern-zoom').dataset.zoom === '4');
  await page.$eval('#pattern-pan-y', (e) => { e.value = '100'; e.dispatchEvent(new Event('input', { bubbles: true })); });
  await page.waitForFunction(() => Number(document.querySelector('#pattern-graph').getAttribute('viewBox').split(' ')[1]) > 0);
  const zoomed = await labels();
  assert.ok(zoomed.ls.length >= 1, 'some rank is labelled at 400 %');
  const inside = zoomed.ls.filter((l) => l.bottom > zoomed.g.y && l.top < zoomed.g.y + zoomed.g.height);
  assert.ok(inside.length >= 1, 'a label lies inside the drawing');
  for (const l of inside) {
    assert.ok(l.height <= height * 1.3, `rank ${l.rank}'s label is ${l.height} px tall at 400 % (${height} px at 100 %)`);
    assert.ok(l.left >= zoomed.g.x - 1, `rank ${l.rank}'s label stays at the drawing's left edge`);
  }
  app.assertClean(s);
  await page.close();
});

test('many rank files load as the CLI reads them; a file changed after the pick is named in the error', async () => {
  const dir = join(scratch, 'torus-many');
  execFileSync(cli, ['generate', '--topology', 'torus:8x8x4', '--iterations', '4', '--format', 'dumpi', '--out', dir], { stdio: 'ignore' });
  const names = readdirSync(dir).sort();
  assert.ok(names.length > 256, `${names.length} files`);
  const expected = expectedSummary(dir);
  const s = await app.openPage(`${app.origin}${prefix}?sample=none`, { viewport: { width: 1280, height: 900 } });
  const { page } = s;
  await idle(page);
  await page.setInputFiles('#pick-folder', dir);
  await page.waitForSelector('#trace[data-label="torus-many"]', { timeout: 120_000 });
  await idle(page);
  assert.equal(await page.$('#error'), null);
  assert.deepEqual(await shownSummary(page), expected);

  // Hold the picker's change event, change one rank file on disk, then let the page read: the
  // browser refuses the changed file, and the error says which.
  await page.evaluate(() => {
    window.__held = null;
    window.addEventListener('change', (e) => {
      if (e.target.id === 'pick-folder' && !window.__release) {
        e.stopImmediatePropagation();
        window.__held = true;
      }
    }, { capture: true });
  });
  await page.setInputFiles('#pick-folder', dir);
  await page.waitForFunction(() => window.__held);
  const changed = names[Math.floor(names.length / 2)];
  appendFileSync(join(dir, changed), Buffer.alloc(16));
  await page.evaluate(() => {
    window.__release = true;
    document.getElementById('pick-folder').dispatchEvent(new Event('change', { bubbles: true }));
  });
  await page.waitForSelector('#error', { timeout: 120_000 });
  const error = (await page.textContent('#error')).replace(/\s+/g, ' ');
  assert.ok(error.includes(`torus-many/${changed}`), `the error names ${changed}: ${error}`);
  assert.doesNotMatch(error, new RegExp(names.filter((n) => n !== changed).map((n) => n.replace('.', '\\.')).slice(0, 50).join('|')),
    'no other file is blamed');
  await idle(page);
  // The trace shown before stays.
  assert.deepEqual(await shownSummary(page), expected);
  await page.close();
});
