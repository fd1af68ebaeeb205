// Browser test of the page's waiting view: while the analysis worker computes a view's first
// answer, the view says where the worker is (the engine's progress steps, the words of the CLI's
// stage line) and counts seconds; `?progress-after=0` counts from the start, as
// TRACELOGIC_PROGRESS_AFTER_MS=0 does for the CLI. Same set-up as the other browser tests
// (harness.mjs); the trace is dropped on the page as a user drops it.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startApp, drop, idle, sampleDir } from './harness.mjs';

const prefix = '/progress/sub/path/';
let app;

before(async () => {
  app = await startApp(prefix);
});

after(async () => {
  await app?.close();
});

// The logical trace's steps, in the order the engine reports them (docs/cli.md).
const STAGES = [
  "reading every rank's calls",
  "choosing the directions' placement",
  'rewriting the calls in directions',
  "merging the classes' sequences",
  'comparing candidate merges by their loops',
  'verifying by expansion',
  'folding the loops',
];

test('a waiting view says where the worker is and counts seconds from the start with ?progress-after=0', async () => {
  const s = await app.openPage(`${app.origin}${prefix}?progress-after=0&sample=none`);
  const { page } = s;
  // The LU sample's DUMPI files, dropped as a user drops them.
  const dir = sampleDir('npb-lu.S.8');
  await drop(page, readdirSync(dir).sort().map((name) => ({ name, bytes: readFileSync(join(dir, name)) })));
  await page.waitForSelector('#trace', { timeout: 60_000 });
  await idle(page);
  // Every state the waiting paragraph goes through, recorded as it changes.
  await page.evaluate(() => {
    window.__waiting = [];
    const seen = () => {
      for (const p of document.querySelectorAll('#view-logical .computing')) {
        const state = { text: p.textContent, seconds: p.dataset.seconds, working: p.dataset.working ?? null };
        const last = window.__waiting[window.__waiting.length - 1];
        if (!last || last.text !== state.text) window.__waiting.push(state);
      }
    };
    new MutationObserver(seen).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
  });
  await page.click('#nav-logical');
  await page.waitForSelector('#view-logical #logical-ranks, #view-logical .view-error', { timeout: 120_000 });
  assert.equal(await page.$('#view-logical .view-error'), null);
  const waiting = await page.evaluate(() => window.__waiting);
  assert.ok(waiting.length > 0, 'the view was seen waiting');
  // Counted from the start: "… 0 s" on the first state already.
  assert.match(waiting[0].text, /^Computing in the analysis worker(: .+)?… 0 s$/, JSON.stringify(waiting));
  assert.equal(waiting[0].seconds, '0');
  // Where the worker is: the engine's own stage names, in their order, with whole percents.
  const working = waiting.filter((w) => w.working !== null);
  assert.ok(working.length > 0, `no progress step shown: ${JSON.stringify(waiting)}`);
  let at = -1;
  for (const w of working) {
    const m = w.working.match(/^(.+?)(, (\d+) %)?$/);
    const stage = STAGES.indexOf(m[1]);
    assert.ok(stage >= 0, `unknown stage ${w.working}`);
    assert.ok(stage >= at, `stages out of order: ${JSON.stringify(working)}`);
    at = stage;
    if (m[3] !== undefined) assert.ok(Number(m[3]) >= 0 && Number(m[3]) <= 100, w.working);
    assert.ok(w.text.startsWith(`Computing in the analysis worker: ${w.working}…`), w.text);
  }
  // Counted stages are reported to their end (the worker runs every step on its one thread).
  assert.ok(working.some((w) => w.working === 'verifying by expansion, 100 %'), JSON.stringify(working));
  // Gone once the answer is shown.
  assert.equal(await page.locator('#view-logical .computing').count(), 0);
  app.assertClean(s);
  await page.close();
});
