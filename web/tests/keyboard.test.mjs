// Browser tests of keyboard selection in the analysis tables: every row that a click selects (the
// topology mapping, the pattern list and the timeline's legend, the phase list, the what-if view's
// ranks) is reached with Tab, shows a focus ring, and Enter or Space selects it with the click's
// effect: the selection reaches the next view as it does after a click. Also checks that an
// analysis answers for the selection the page asked with (the matrix filters). Same set-up as the
// other browser tests (harness.mjs): the built dist/ under a sub-path, headless Chromium, every
// request recorded.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, cliJson, sampleDir, tabTo } from './harness.mjs';

const prefix = '/keys/sub/path/';
let app;

before(async () => {
  app = await startApp(prefix);
});

after(async () => {
  await app?.close();
});

test('pattern rows and the timeline legend are selected with Tab and Enter/Space; the pattern marks phases as after a click', async () => {
  const id = 'npb-mg.S.8';
  const ph = cliJson(['phases', sampleDir(id)]);
  const p = cliJson(['patterns', sampleDir(id)]);
  const withZero = ph.phases.filter((x) => x.patterns.some(([pid]) => pid === 0)).length;
  assert.ok(withZero > 0);
  const s = await app.openView(id, 'patterns', '#patterns-table');
  const { page } = s;
  const row = (pid) => `#patterns-table tr[data-pattern="${pid}"]`;
  const pattern = () => new URL(page.url()).hash.match(/pattern=(\d+)/)?.[1];
  // Every pattern, also those covering under 1 % of the events (MG S.8 shows two by default).
  if (await page.$('#patterns-show-all[aria-pressed="false"]')) {
    await page.click('#patterns-show-all');
    await page.waitForSelector('#patterns-show-all[aria-pressed="true"]');
  }
  // The last row of the list (the first is shown until something is chosen), with Enter.
  const order = await page.$$eval('#patterns-table tbody tr', (els) => els.map((e) => Number(e.dataset.pattern)));
  const last = order[order.length - 1];
  assert.ok(order.length >= 3 && last !== 0);
  await tabTo(page, '#patterns-table caption', `${row(last)} button.row-select`);
  assert.equal(await page.getAttribute(`${row(last)} button.row-select`, 'aria-pressed'), 'false');
  await page.keyboard.press('Enter');
  await page.waitForSelector(`${row(last)}.selected`);
  await page.waitForSelector(`#pattern-graph[data-pattern="${last}"]`);
  assert.equal(await page.getAttribute(`${row(last)} button.row-select`, 'aria-pressed'), 'true');
  assert.equal(await page.locator('#patterns-table button.row-select[aria-pressed="true"]').count(), 1);
  assert.equal(pattern(), String(last));
  // The legend's buttons select the pattern a timeline span stands for, one per pattern drawn.
  const legend = await page.$$eval('#patterns-legend li[data-pattern]', (els) => els.map((e) => Number(e.dataset.pattern)));
  const spans = await page.$$eval('#patterns-timeline rect.timeline-span', (els) => [...new Set(els.map((e) => Number(e.dataset.pattern)))]);
  assert.deepEqual([...legend].sort((a, b) => a - b), [...spans].sort((a, b) => a - b), 'one legend button per pattern on the timeline');
  const other = legend.find((x) => x !== 0 && x !== last);
  assert.ok(other !== undefined && p.communication_patterns.some((c) => c.id === other));
  await tabTo(page, '.pattern-timeline h3', `#patterns-legend li[data-pattern="${other}"] button`);
  await page.keyboard.press(' ');
  await page.waitForSelector(`${row(other)}.selected`);
  assert.equal(await page.getAttribute(`#patterns-legend li[data-pattern="${other}"] button`, 'aria-pressed'), 'true');
  assert.ok(await page.locator(`#patterns-timeline rect.timeline-span.selected[data-pattern="${other}"]`).count() >= 1);
  assert.equal(pattern(), String(other));
  // Pattern 0 with Space on its row; the phases view then marks the phases holding it.
  await tabTo(page, '#patterns-table caption', `${row(0)} button.row-select`);
  await page.keyboard.press(' ');
  await page.waitForSelector(`${row(0)}.selected`);
  assert.equal(pattern(), '0');
  await page.click('#nav-phases');
  await page.waitForSelector('#phases-table');
  assert.equal(await page.locator('#phases-table tr.has-pattern').count(), withZero);
  app.assertClean(s);
  await page.close();
});

test('phase rows are selected with Tab and Space/Enter: the row, its tree node and the address follow', async () => {
  const id = 'npb-mg.S.8';
  const ph = cliJson(['phases', sampleDir(id)]);
  assert.ok(ph.phases.length >= 3);
  const s = await app.openView(id, 'phases', '#phases-table');
  const { page } = s;
  for (const [i, key] of [[1, ' '], [ph.phases.length - 1, 'Enter']]) {
    const button = `#phases-table tr[data-phase="${i}"] button.row-select`;
    await tabTo(page, '#phases-table caption', button);
    await page.keyboard.press(key);
    await page.waitForSelector(`#phases-table tr.selected[data-phase="${i}"]`);
    assert.equal(await page.getAttribute(button, 'aria-pressed'), 'true');
    await page.waitForSelector(`#phases-tree button.tree-node.selected[data-segment="${ph.phases[i].node}"]`);
    await page.waitForFunction((i) => new URLSearchParams(location.hash.slice(1)).get('phase') === String(i), i);
    assert.equal(await page.locator('#phases-table tr.selected').count(), 1);
  }
  app.assertClean(s);
  await page.close();
});

test('topology and what-if rank rows are selected with Tab and Enter/Space; the rank carries between the two views', async () => {
  const id = 'npb-mg.S.8';
  const s = await app.openView(id, 'topology', '#topology-mapping');
  const { page } = s;
  const mapping = (r) => `#topology-mapping tr[data-rank="${r}"]`;
  await tabTo(page, '#topology-mapping caption', `${mapping(3)} button.row-select`);
  await page.keyboard.press('Enter');
  await page.waitForSelector(`${mapping(3)}.selected`);
  assert.equal(await page.getAttribute(`${mapping(3)} button.row-select`, 'aria-pressed'), 'true');
  await page.waitForFunction(() => new URLSearchParams(location.hash.slice(1)).get('rank') === '3');

  await page.click('#nav-whatif');
  await page.waitForSelector('#whatif-ranks', { timeout: 120_000 });
  const selectedRank = () => page.$$eval('#whatif-ranks tbody tr.selected th', (els) => els.map((e) => e.textContent));
  assert.deepEqual(await selectedRank(), ['rank 3'], 'the rank chosen in the topology view');
  const order = await page.$$eval('#whatif-ranks tbody tr th', (els) => els.map((e) => e.textContent));
  const whatif = (r) => `#whatif-ranks tbody tr:nth-child(${order.indexOf(`rank ${r}`) + 1}) button.row-select`;
  assert.ok(order.includes('rank 3') && order.includes('rank 5'), order.join(', '));
  await tabTo(page, '#whatif-ranks caption', whatif(5));
  await page.keyboard.press(' ');
  await page.waitForFunction(() => new URLSearchParams(location.hash.slice(1)).get('rank') === '5');
  assert.deepEqual(await selectedRank(), ['rank 5']);
  assert.equal(await page.getAttribute(whatif(5), 'aria-pressed'), 'true');
  assert.equal(await page.getAttribute(whatif(3), 'aria-pressed'), 'false');

  await page.click('#nav-topology');
  await page.waitForSelector(`${mapping(5)}.selected`);
  assert.equal(await page.locator('#topology-mapping tr.selected').count(), 1);
  // Enter on the selected rank clears it, as a second click does.
  await tabTo(page, '#topology-mapping caption', `${mapping(5)} button.row-select`);
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => !new URLSearchParams(location.hash.slice(1)).has('rank'));
  assert.equal(await page.locator('#topology-mapping tr.selected').count(), 0);
  app.assertClean(s);
  await page.close();
});

test('an analysis answers for the matrix selection the page asked with', async () => {
  const id = 'npb-lu.S.8';
  const whole = cliJson(['patterns', sampleDir(id)]);
  const part = cliJson(['patterns', sampleDir(id), '--ranks', '0-3']);
  const ranksOf = (p) => [...new Set(p.communication_patterns.flatMap((c) => c.ranks))].sort((a, b) => a - b);
  assert.deepEqual(ranksOf(part), [0, 1, 2, 3]);
  const s = await app.openView(id, 'patterns', '#patterns-table');
  const { page } = s;
  // Every pattern, also those covering under 1 % of the events (hidden by default).
  const showAll = async () => { if (await page.$('#patterns-show-all[aria-pressed="false"], #patterns-show-all:not([aria-pressed])')) await page.click('#patterns-show-all'); };
  await showAll();
  const shown = () => page.$$eval('#patterns-table tbody tr', (els) => els.map((e) => [Number(e.dataset.pattern), Number(e.dataset.occurrences)]));
  assert.deepEqual(new Map(await shown()), new Map(whole.communication_patterns.map((c) => [c.id, c.occurrences])));
  await page.click('#nav-matrix');
  await page.waitForSelector('#sel-ranks');
  await page.fill('#sel-ranks', '0-3');
  await page.click('#sel-apply');
  await page.click('#nav-patterns');
  // The full list stays chosen while the user moves between views and changes the selection.
  await page.waitForSelector('#patterns-show-all[aria-pressed="true"]', { timeout: 120_000 });
  await page.waitForFunction((n) => document.querySelector('#patterns-count')?.dataset.value === String(n) && !document.querySelector('#view-patterns .waiting'), part.communication_patterns.length, { timeout: 120_000 });
  assert.deepEqual(new Map(await shown()), new Map(part.communication_patterns.map((c) => [c.id, c.occurrences])));
  app.assertClean(s);
  await page.close();
});

test('what-if of a point-to-point selection shows the dropped collectives as not replayed, as tracelogic replay --kind p2p', async () => {
  const id = 'npb-mg.S.8';
  const r = cliJson(['replay', sampleDir(id), '--kind', 'p2p']);
  const whole = cliJson(['replay', sampleDir(id)]);
  assert.ok(r.configurations.every((c) => c.not_replayed_s > 0), 'MG spends time in collectives');
  assert.notDeepEqual(r.classification.map((c) => c.label), whole.classification.map((c) => c.label));
  const s = await app.openView(id, 'whatif', '#whatif-classification');
  const { page } = s;
  const labels = () => page.$$eval('#whatif-classification tbody tr', (els) => els.map((e) => [e.dataset.network, e.dataset.bound]));
  assert.deepEqual(await labels(), whole.classification.map((c) => [c.network, c.label]));
  assert.equal(await page.locator('#whatif-bars .segment.not-replayed').count(), 0);
  await page.click('#nav-matrix');
  await page.waitForSelector('#sel-kinds');
  await page.fill('#sel-kinds', 'p2p');
  await page.click('#sel-apply');
  await page.click('#nav-whatif');
  const expected = r.classification.map((c) => [c.network, c.label]);
  await page.waitForFunction(
    (want) => JSON.stringify([...document.querySelectorAll('#whatif-classification tbody tr')].map((e) => [e.dataset.network, e.dataset.bound])) === want,
    JSON.stringify(expected),
    { timeout: 120_000 },
  );
  const first = r.classification[0].network;
  const configs = r.configurations.filter((c) => c.network === first);
  assert.equal(await page.locator('#whatif-bars .segment.not-replayed').count(), configs.length);
  assert.equal(await page.locator('.bar-legend .key.not-replayed').count(), 1);
  const title = await page.getAttribute('#whatif-bars tbody tr:first-child .segment.not-replayed', 'title');
  assert.match(title, /^not replayed: /);
  app.assertClean(s);
  await page.close();
});
