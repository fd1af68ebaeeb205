// The what-if in a pool of workers (`?whatif-workers=N`, crates/web/src/whatif_pool.rs): with the
// pool forced to 2 and 3 workers, the page's what-if of a bundled sample is the CLI's: every
// configuration's predicted time and breakdown, and each reference rank's end and breakdown, equal
// `tracelogic replay --json --per-rank` to the last bit (the page's exported numbers are Rust's
// shortest round-trip text, as serde_json's), the classification too; and the page's worker says
// the pool answered (`self.__tracelogicWhatIfPool`). Run as the other browser tests
// (TRACELOGIC_DIST, TRACELOGIC_CLI; harness.mjs).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, cliJson, sampleDir } from './harness.mjs';

const prefix = '/whatif/pool/';
let app;

before(async () => {
  app = await startApp(prefix);
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

for (const [id, workers] of [['npb-mg.S.8', 2], ['npb-bt.S.9', 3]]) {
  test(`what-if of ${id} in a pool of ${workers} workers equals tracelogic replay --json --per-rank`, async () => {
    const r = cliJson(['replay', '--per-rank', sampleDir(id)]);
    const s = await app.openPage(`${app.origin}${prefix}?whatif-workers=${workers}#sample=${encodeURIComponent(id)}`);
    const { page } = s;
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.waitForSelector('#trace', { timeout: 60_000 });
    await page.waitForSelector('.app[data-state="idle"]', { timeout: 60_000 });
    await page.click('#nav-whatif');
    await page.waitForSelector('#view-whatif #whatif-bars, #view-whatif .view-error', { timeout: 120_000 });
    assert.equal(await page.$('#view-whatif .view-error'), null);
    // The page's analysis worker answered from its pool.
    let pooled = 0;
    for (const w of page.workers()) pooled = Math.max(pooled, await w.evaluate(() => self.__tracelogicWhatIfPool || 0).catch(() => 0));
    assert.equal(pooled, workers, 'the what-if ran in the pool asked for');
    const classes = await page.$$eval('#whatif-classification tbody tr', (els) => els.map((e) => [e.dataset.network, e.dataset.bound]));
    assert.deepEqual(classes, r.classification.map((c) => [c.network, c.label]));
    let compared = 0;
    for (const network of r.classification.map((c) => c.network)) {
      await page.selectOption('#whatif-network', network);
      await page.waitForSelector(`#whatif-bars[data-network="${network}"]`);
      const rows = await exported(page, '#whatif-bars');
      const expected = r.configurations.filter((c) => c.network === network);
      assert.deepEqual(rows.map((x) => x.config), expected.map((c) => c.label), network);
      for (const [i, c] of expected.entries()) {
        assert.deepEqual(rows[i].values.map(Number), [c.predicted_s, ...PARTS.map((p) => c[p])], `${network} ${c.label}`);
        compared += 1;
      }
      const base = expected.find((c) => c.sweep === 'base');
      const ranks = await exported(page, '#whatif-ranks');
      assert.equal(ranks.length, base.ranks.length, `${network}: one row per rank`);
      for (const [i, rank] of base.ranks.entries()) {
        assert.deepEqual(ranks[i].values.map(Number), [rank.end_s, ...PARTS.map((p) => rank[p])], `${network} rank ${rank.rank}`);
      }
    }
    assert.equal(compared, r.configurations.length, 'every configuration compared');
    app.assertClean(s);
    await page.close();
  });
}
