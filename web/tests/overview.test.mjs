// Browser tests of the overview path (docs/large-traces.md): an input over the page's full-load
// limit is not refused but read one rank at a time in the worker into the Overview view, whose
// counts are `tracelogic overview --json`'s; a part picked from it (ranks and a time window) loads
// into the normal views with the counts the CLI gives for the same selection; a bad pick or a
// refused input keeps what is on screen. The limit is lowered for the tests with the page's
// `?full-load-limit=BYTES` parameter (a 1 GiB file is not needed). Same set-up as the other
// browser tests (harness.mjs).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startApp, cliJson, root, idle, shownSummary, screenshot } from './harness.mjs';

const prefix = '/page/overview/';
const otf2 = join(root, 'tests/data/samples/pyotf2-generated-4rank');
let app;

before(async () => {
  app = await startApp(prefix);
});

after(async () => {
  await app?.close();
});

/** What the Overview view shows, in the shape of `tracelogic overview --json`. */
async function shownOverview(page) {
  const stat = async (id) => page.getAttribute(`#view-overview [data-stat="${id}"]`, 'data-value');
  const num = async (id) => Number(await stat(id));
  return {
    ranks: await num('ranks'),
    calls: await num('calls'),
    format: await stat('format'),
    p2p_messages: await num('p2p_messages'),
    p2p_bytes: await num('p2p_bytes'),
    p2p_receives: await num('p2p_receives'),
    collective_ops: await num('collective_ops'),
    collective_bytes: await num('collective_bytes'),
    input_bytes: await num('input_bytes'),
    pairs: await num('pairs'),
    topology: await stat('topology'),
    functions: await page.$$eval('tr[data-overview-function]', (rows) =>
      rows.map((r) => [r.dataset.overviewFunction, Number(r.dataset.calls)])),
    bins: Number(await page.getAttribute('#view-overview', 'data-bins')),
    phases: await page.$$eval('#overview-phases tr[data-phase]', (rows) => rows.map((r) => r.dataset.phase)),
  };
}

/** `tracelogic overview --json DIR` reduced to what the view shows. */
function expectedOverview(dir) {
  const o = cliJson(['overview', dir]);
  const pairs = o.matrix.to.length;
  return {
    ranks: o.ranks,
    calls: o.calls,
    format: o.format,
    p2p_messages: o.p2p_messages,
    p2p_bytes: o.p2p_bytes,
    p2p_receives: o.p2p_receives,
    collective_ops: o.collective_ops,
    collective_bytes: o.collective_bytes,
    input_bytes: o.input_bytes,
    pairs,
    topology: o.topology.match?.label,
    functions: o.functions.map((f) => [f.name, f.calls]),
    bins: o.activity.bins,
    phases: o.phases.map((p) => p.activity),
  };
}

test('the overview read by a pool of workers, a block of ranks each, is the CLI overview, at 1, 2 and 3 workers', async () => {
  for (const dir of [otf2, join(root, 'tests/data/samples/pyotf2-generated-multichunk')]) {
    const expected = expectedOverview(dir);
    for (const workers of [1, 2, 3]) {
      const s = await app.openPage(`${app.origin}${prefix}?full-load-limit=1000&overview-workers=${workers}#sample=none`);
      const { page } = s;
      await page.waitForSelector('#dropzone', { timeout: 60_000 });
      await idle(page);
      await page.setInputFiles('#pick-folder', dir);
      await page.waitForSelector('#view-overview', { timeout: 60_000 });
      await idle(page);
      assert.equal(await page.$('#error'), null, `${dir}, ${workers} workers: no error`);
      assert.equal(Number(await page.getAttribute('#view-overview', 'data-workers')), workers);
      assert.deepEqual(await shownOverview(page), expected, `${dir}, ${workers} workers`);
      app.assertClean(s);
      await s.context.close();
    }
  }
});

test('an OTF2 folder over the full-load limit opens in the Overview view with the CLI overview counts, and a picked part loads', async () => {
  const s = await app.openPage(`${app.origin}${prefix}?full-load-limit=1000#sample=none`);
  const { page } = s;
  await page.setViewportSize({ width: 1280, height: 1000 });
  await page.waitForSelector('#dropzone', { timeout: 60_000 });
  await idle(page);
  await page.setInputFiles('#pick-folder', otf2);
  await page.waitForSelector('#view-overview', { timeout: 60_000 });
  await idle(page);
  assert.equal(await page.$('#error'), null, 'no refusal');
  assert.equal(await page.$('#trace'), null, 'no trace was loaded whole');
  const expected = expectedOverview(otf2);
  assert.deepEqual(await shownOverview(page), expected);
  assert.match(await page.textContent('#overview-why'), /over the page's limit/);
  // The strip: one column per bin, one row per rank.
  const size = await page.$eval('#overview-activity', (c) => [c.width, c.height]);
  assert.deepEqual(size, [expected.bins, expected.ranks]);
  await screenshot(page, 'overview');

  // A bad pick is refused in the view; the overview stays and no load starts.
  await page.fill('#overview-ranks', '0-7');
  await page.click('#overview-load');
  await page.waitForSelector('#overview-error');
  assert.match(await page.textContent('#overview-error'), /rank 4 is not in the trace \(it has 4 ranks, 0-3\)/);
  await page.fill('#overview-ranks', '');
  await page.click('#overview-load');
  await page.waitForFunction(() => /Name the ranks/.test(document.getElementById('overview-error')?.textContent));
  assert.equal(await page.getAttribute('.app', 'data-state'), 'idle');
  assert.ok(await page.$('#view-overview'));

  // Dragging across the strip fills the time window.
  const box = await (await page.$('#overview-activity')).boundingBox();
  await page.mouse.move(box.x + box.width * 0.1, box.y + 2);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.4, box.y + 3, { steps: 4 });
  await page.mouse.up();
  assert.match(await page.inputValue('#overview-from'), /^\d+us$/);
  assert.match(await page.inputValue('#overview-to'), /^\d+us$/);
  assert.ok(await page.$('#overview-window'), 'the window is drawn over the strip');

  // Ranks 1-2 from 1 µs to 3 µs: the part's summary is the CLI's for that selection.
  await page.fill('#overview-ranks', '1-2');
  await page.fill('#overview-from', '1us');
  await page.fill('#overview-to', '3us');
  await page.click('#overview-load');
  await page.waitForSelector('#trace', { timeout: 60_000 });
  await idle(page);
  const profile = cliJson(['profile', otf2, '--ranks', '1-2', '--from', '1us', '--to', '3us']);
  const byKind = Object.fromEntries(profile.functions.map((f) => [f.name, f.calls]));
  const shown = await shownSummary(page);
  assert.deepEqual(shown, {
    ranks: expected.ranks,
    calls: profile.functions.reduce((n, f) => n + f.calls, 0),
    format: 'otf2',
    calls_by_kind: byKind,
  });
  assert.match(await page.getAttribute('#trace', 'data-label'), /ranks 1/);

  // The overview is one click away, without reading the trace again; and back.
  await page.click('#nav-overview');
  await page.waitForSelector('#view-overview');
  assert.equal(await page.getAttribute('.app', 'data-state'), 'idle');
  assert.deepEqual(await shownOverview(page), expected);
  await page.click('#overview-back');
  await page.waitForSelector('#trace');

  // An input over the limit that cannot be streamed (DUMPI) is refused; what is shown stays.
  await page.setInputFiles('#pick-folder', join(root, 'web/samples/npb-lu.S.8'));
  await page.waitForSelector('#error', { timeout: 60_000 });
  await idle(page);
  const refusal = await page.textContent('#error');
  assert.match(refusal, /too large: \d+ bytes, limit 1000/);
  assert.match(refusal, /OTF2 folder/);
  assert.match(await page.getAttribute('#trace', 'data-label'), /ranks 1/);
  app.assertClean(s);
  await page.close();
});

test('the Overview entry of a trace loaded whole computes its overview, as the CLI does', async () => {
  const s = await app.openPage(`${app.origin}${prefix}#sample=pipit-ping-pong-otf2`);
  const { page } = s;
  await page.waitForSelector('#trace', { timeout: 60_000 });
  await idle(page);
  await page.click('#nav-overview');
  await page.waitForSelector('#view-overview', { timeout: 60_000 });
  await idle(page);
  const expected = expectedOverview(join(root, 'web/samples/pipit-ping-pong-otf2'));
  const shown = await shownOverview(page);
  // The sample's files are named by the page (sample id/file): the same bytes, so the same counts.
  assert.deepEqual(shown, expected);
  assert.match(await page.textContent('#overview-why'), /whole input/);
  // Back to the trace loaded whole, still there.
  await page.click('#overview-back');
  await page.waitForSelector('#view-summary');
  app.assertClean(s);
  await page.close();
});
