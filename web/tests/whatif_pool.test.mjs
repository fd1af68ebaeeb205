// The what-if in a pool of workers (`?whatif-workers=N`, crates/web/src/whatif_pool.rs): with the
// pool forced to 2 and 3 workers, the pool's waiting view shows the replay's progress and then
// the helpers finishing (as the page's worker posts them: a stage the page renders and replaces
// within one frame, MG's only replay step, may never reach the DOM, so the DOM is only asked to
// show stages the worker posted); the page's what-if of a bundled sample is, to the last bit, the
// one the page's worker computes alone (every configuration's predicted time and breakdown, each
// reference rank's end and breakdown, as the page exports them: Rust's shortest round-trip text),
// and equals `tracelogic replay --json --per-rank` (classification exactly; numbers within 1e-14
// relative: wasm and the native build differ in the last bit of some terms, with or without the
// pool); and the page's worker says the pool answered (`self.__tracelogicWhatIfPool`). Run as the
// other browser tests (TRACELOGIC_DIST, TRACELOGIC_CLI; harness.mjs).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, cliJson, sampleDir } from './harness.mjs';

const prefix = '/whatif/pool/';
let app;

/** Record, in page order, the text of every message an analysis worker posts to the page
 * (bincode bytes, or an envelope whose `m` holds them: the stages are UTF-8 inside). */
function recordWorkerMessages() {
  window.__posted = [];
  const text = new TextDecoder('utf-8');
  const Native = window.Worker;
  window.Worker = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (e) => {
        const bytes = e.data instanceof Uint8Array ? e.data : e.data?.m;
        if (bytes instanceof Uint8Array) window.__posted.push(text.decode(bytes));
      });
    }
  };
}

before(async () => {
  app = await startApp(prefix, { initScript: recordWorkerMessages });
});

after(async () => {
  await app?.close();
});

const PARTS = ['compute_s', 'wait_s', 'latency_term_s', 'bandwidth_term_s', 'not_replayed_s'];

/** Rows of the bars table `selector`: the row's key attribute and its exported numbers. */
const exported = (page, selector) =>
  page.$$eval(`${selector} tbody tr`, (rows) =>
    rows.map((r) => ({
      config: r.dataset.config,
      values: [...r.querySelectorAll('[data-export]')].flatMap((c) => c.dataset.export.split('\t')),
    })),
  );

/** The what-if of sample `id` with `workers` workers: the pool that answered, the classification,
 * and per network the bars' and the reference ranks' exported rows. */
async function whatIf(id, workers, networks) {
  const s = await app.openPage(`${app.origin}${prefix}?whatif-workers=${workers}&progress-after=0#sample=${encodeURIComponent(id)}`);
  const { page } = s;
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.waitForSelector('#trace', { timeout: 60_000 });
  await page.waitForSelector('.app[data-state="idle"]', { timeout: 60_000 });
  // The worker's progress steps the waiting view shows, recorded as they change.
  await page.evaluate(() => {
    window.__working = [];
    const seen = () => {
      for (const p of document.querySelectorAll('#view-whatif .computing')) {
        const w = p.dataset.working;
        if (w !== undefined && window.__working[window.__working.length - 1] !== w) window.__working.push(w);
      }
    };
    new MutationObserver(seen).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
  });
  await page.click('#nav-whatif');
  await page.waitForSelector('#view-whatif #whatif-bars, #view-whatif .view-error', { timeout: 120_000 });
  assert.equal(await page.$('#view-whatif .view-error'), null);
  const working = await page.evaluate(() => window.__working);
  const posted = await page.evaluate(() => window.__posted);
  let pooled = 0;
  for (const w of page.workers()) pooled = Math.max(pooled, await w.evaluate(() => self.__tracelogicWhatIfPool || 0).catch(() => 0));
  const classes = await page.$$eval('#whatif-classification tbody tr', (els) => els.map((e) => [e.dataset.network, e.dataset.bound]));
  const shown = {};
  for (const network of networks) {
    await page.selectOption('#whatif-network', network);
    await page.waitForSelector(`#whatif-bars[data-network="${network}"]`);
    shown[network] = { bars: await exported(page, '#whatif-bars'), ranks: await exported(page, '#whatif-ranks') };
  }
  app.assertClean(s);
  await page.close();
  return { pooled, classes, shown, working, posted };
}

const near = (a, b) => Math.abs(a - b) <= 1e-14 * Math.abs(b) + 1e-300;

for (const [id, workers] of [['npb-mg.S.8', 2], ['npb-bt.S.9', 3]]) {
  test(`what-if of ${id} in a pool of ${workers} workers: the one worker's bit for bit, and tracelogic replay --json --per-rank's`, async () => {
    const r = cliJson(['replay', '--per-rank', sampleDir(id)]);
    const networks = r.classification.map((c) => c.network);
    const pool = await whatIf(id, workers, networks);
    assert.equal(pool.pooled, workers, 'the what-if ran in the pool asked for');
    // The pool says where it is, as the one worker does: the replay's traversal, then the helpers;
    // the waiting view shows nothing else.
    const replaying = 'replaying the calls on the model networks';
    const finishing = `the what-if's ${workers} workers finishing their shares`;
    const first = (needle) => pool.posted.findIndex((m) => m.includes(needle));
    assert.ok(first(replaying) >= 0, 'the pool posts the replay\'s progress');
    assert.ok(first(finishing) > first(replaying), 'then the helpers finishing');
    assert.ok(pool.working.length > 0, 'the waiting view shows where the what-if is');
    for (const w of pool.working) assert.ok(w.startsWith(replaying) || w === finishing, JSON.stringify(pool.working));
    const alone = await whatIf(id, 1, networks);
    assert.equal(alone.pooled, 0, 'one worker: no pool');
    assert.deepEqual(pool.shown, alone.shown, 'the pool gives the one worker\'s numbers, bit for bit');
    assert.deepEqual(pool.classes, r.classification.map((c) => [c.network, c.label]));
    let compared = 0;
    for (const network of networks) {
      const { bars, ranks } = pool.shown[network];
      const expected = r.configurations.filter((c) => c.network === network);
      assert.deepEqual(bars.map((x) => x.config), expected.map((c) => c.label), network);
      for (const [i, c] of expected.entries()) {
        const want = [c.predicted_s, ...PARTS.map((p) => c[p])];
        bars[i].values.map(Number).forEach((v, j) => assert.ok(near(v, want[j]), `${network} ${c.label} [${j}]: page ${v}, CLI ${want[j]}`));
        compared += 1;
      }
      const base = expected.find((c) => c.sweep === 'base');
      assert.equal(ranks.length, base.ranks.length, `${network}: one row per rank`);
      for (const [i, rank] of base.ranks.entries()) {
        const want = [rank.end_s, ...PARTS.map((p) => rank[p])];
        ranks[i].values.map(Number).forEach((v, j) => assert.ok(near(v, want[j]), `${network} rank ${rank.rank} [${j}]: page ${v}, CLI ${want[j]}`));
      }
    }
    assert.equal(compared, r.configurations.length, 'every configuration compared');
  });
}
