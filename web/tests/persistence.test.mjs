// Browser tests of what survives a reload and of the page's offline and keyboard polish: runs
// added to the compare view come back after a reload with their names and the same θ/ε (those of
// `tracelogic compare --json`), removing one or forgetting forgets them; the keyboard help is a
// modal dialog that keeps focus inside and gives it back; the service worker's notices (offline use
// unavailable, a new version to reload into). Same set-up as the other browser tests
// (harness.mjs): the built dist/ under a sub-path, headless Chromium, every request recorded.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { startApp, cliJson, sampleDir, drop, dist } from './harness.mjs';

/** θ from the page's data-theta: `null` when undefined, as the CLI's JSON writes it. */
const thetaOf = (t) => (t === 'null' ? null : Number(t));
/** Equal θ: both undefined, or within 1e-9. */
const sameTheta = (a, b) => (a === null || b === null ? a === b : Math.abs(a - b) < 1e-9);

const prefix = '/some/sub/path/';
let app;

before(async () => {
  app = await startApp(prefix);
});

after(async () => {
  await app?.close();
});

async function idle(page) {
  await page.waitForSelector('.app[data-state="idle"]', { timeout: 60_000 });
}

function dirFiles(dir) {
  return readdirSync(dir).sort().map((name) => ({ name, bytes: readFileSync(join(dir, name)) }));
}

/** The compare view's matrix as the page shows it: run names, and θ/ε of every pair (each cell
 * clicked in turn, its values read from the pair's table). */
async function comparison(page) {
  await page.waitForSelector('#compare-matrix', { timeout: 120_000 });
  const names = await page.$$eval('#compare-matrix thead th[data-run]', (th) => th.map((e) => e.textContent));
  const pairs = {};
  for (let i = 0; i < names.length; i++) {
    for (let j = i + 1; j < names.length; j++) {
      await page.click(`#compare-matrix td[data-first="${i}"][data-second="${j}"] button`);
      await page.waitForSelector(`#compare-verdict[data-first="${i}"][data-second="${j}"]`);
      pairs[`${i}-${j}`] = {
        theta: thetaOf(await page.getAttribute('#compare-properties tr[data-property="theta"]', 'data-theta')),
        epsilon: Number(await page.getAttribute('#compare-epsilon', 'data-epsilon')),
        similar: await page.getAttribute('#compare-verdict', 'data-similar'),
      };
    }
  }
  return { names, pairs };
}

/** What IndexedDB holds under `key` in the app's store (undefined when nothing). */
async function stored(page, key) {
  return page.evaluate((key) => new Promise((ok, fail) => {
    const open = indexedDB.open('tracelogic');
    open.onerror = () => fail(open.error);
    open.onsuccess = () => {
      const db = open.result;
      if (!db.objectStoreNames.contains('state')) { db.close(); ok(undefined); return; }
      const get = db.transaction('state').objectStore('state').get(key);
      get.onsuccess = () => { db.close(); ok(get.result === undefined ? undefined : JSON.parse(JSON.stringify(get.result))); };
      get.onerror = () => fail(get.error);
    };
  }), key);
}

test('runs added to the compare view survive a reload with their names and θ/ε (as tracelogic compare --json); removing one or forgetting forgets it', async () => {
  const lu = sampleDir('npb-lu.S.8');
  const mg = sampleDir('npb-mg.S.8');
  const cli = cliJson(['compare', lu, mg, lu]);
  const s = await app.openPage(`${app.origin}${prefix}#sample=npb-lu.S.8&view=compare`);
  const { page } = s;
  await page.waitForSelector('#compare-sample', { timeout: 60_000 });
  await idle(page);
  // Run 1 from the sample menu, run 2 dropped as files.
  await page.selectOption('#compare-sample', 'npb-mg.S.8');
  await page.waitForSelector('#compare-verdict', { timeout: 120_000 });
  await drop(page, dirFiles(lu), 'compare-dropzone');
  const before = await comparison(page);
  assert.equal(before.names.length, 3);
  for (const c of cli.pairs) {
    const shown = before.pairs[`${c.first}-${c.second}`];
    assert.ok(sameTheta(shown.theta, c.theta), `θ ${c.first}-${c.second}: ${shown.theta} vs ${c.theta}`);
    assert.ok(Math.abs(shown.epsilon - c.epsilon) < 1e-9, `ε ${c.first}-${c.second}: ${shown.epsilon} vs ${c.epsilon}`);
    assert.equal(shown.similar, String(c.similar));
  }
  await page.waitForSelector('#stored[data-compared="2"]', { timeout: 10_000 });
  assert.match(await page.textContent('#stored'), /2 compared runs/);
  const kept = await stored(page, 'compared');
  assert.ok(kept.runs.length < 20_000, `the properties of two 8-rank runs are small (${kept.runs.length} bytes)`);

  // Reload: the three runs come back, named as before, with the same values.
  await page.reload();
  await page.waitForSelector('#compare-matrix', { timeout: 120_000 });
  await idle(page);
  assert.deepEqual(await comparison(page), before);
  assert.equal(await page.getAttribute('#stored', 'data-compared'), '2');

  // Removing a run forgets it: after the next reload two runs remain, and no matrix.
  await page.click('#compare-matrix tr:nth-child(2) button.remove');
  await page.waitForSelector('#compare-matrix', { state: 'detached', timeout: 120_000 });
  await page.waitForSelector('#stored[data-compared="1"]', { timeout: 10_000 });
  await page.reload();
  await page.waitForSelector('#compare-verdict', { timeout: 120_000 });
  await idle(page);
  assert.equal(await page.locator('#compare-matrix').count(), 0, '#compare-matrix is shown');
  assert.equal(await page.getAttribute('#compare-verdict', 'data-second'), '1');
  assert.match(await page.textContent('#compare-verdict'), new RegExp(`vs ${before.names[2].replace(/^2 · /, '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
  const theta = thetaOf(await page.getAttribute('#compare-properties tr[data-property="theta"]', 'data-theta'));
  assert.ok(sameTheta(theta, before.pairs['0-2'].theta));

  // Forget: nothing kept; the comparison on screen stays until the page closes.
  await page.click('#forget');
  await page.waitForFunction(() => document.querySelector('#notice')?.textContent.includes('forgotten'));
  assert.equal(await stored(page, 'compared'), undefined);
  assert.ok(await page.isVisible('#compare-verdict'));
  // A later answer of another view does not store the runs again.
  await page.click('#nav-phases');
  await page.waitForSelector('#view-phases', { timeout: 120_000 });
  await page.waitForFunction(() => !document.querySelector('#view-phases .waiting'), null, { timeout: 120_000 });
  await page.click('#nav-compare');
  assert.equal(await stored(page, 'compared'), undefined);
  await page.reload();
  await page.waitForSelector('#compare-sample', { timeout: 60_000 });
  await idle(page);
  await page.waitForTimeout(1000);
  assert.equal(await page.locator('#compare-verdict').count(), 0, 'no run comes back after forgetting');
  // The view setting (compare, from the address) is kept again; no compared run is.
  assert.equal(await page.locator('#stored[data-compared]:not([data-compared="0"])').count(), 0);
  app.assertClean(s);
  await s.context.close();
});

test('compared runs come back only with the trace they were compared with', async () => {
  const s = await app.openPage(`${app.origin}${prefix}#sample=npb-lu.S.8&view=compare`);
  const { page } = s;
  await page.waitForSelector('#compare-sample', { timeout: 60_000 });
  await idle(page);
  await page.selectOption('#compare-sample', 'npb-lu.S.8');
  await page.waitForSelector('#compare-verdict', { timeout: 120_000 });
  await page.waitForSelector('#stored[data-compared="1"]', { timeout: 10_000 });
  // Another trace of the same size: its compare view starts empty, and the runs stay stored.
  await page.goto(`${app.origin}${prefix}#sample=npb-mg.S.8&view=compare`);
  await page.waitForSelector('#trace[data-label^="NPB MG"]', { timeout: 60_000 });
  await idle(page);
  await page.reload();
  await page.waitForSelector('#compare-sample', { timeout: 60_000 });
  await idle(page);
  await page.waitForTimeout(1000);
  assert.equal(await page.locator('#compare-verdict').count(), 0, '#compare-verdict is shown');
  assert.ok(await stored(page, 'compared'));
  await page.goto(`${app.origin}${prefix}#sample=npb-lu.S.8&view=compare`);
  await page.waitForSelector('#trace[data-label^="NPB LU"]', { timeout: 60_000 });
  await idle(page);
  await page.reload();
  await page.waitForSelector('#compare-verdict', { timeout: 120_000 });
  assert.equal(await page.getAttribute('#compare-verdict', 'data-similar'), 'true');
  app.assertClean(s);
  await s.context.close();
});

test('a trace loaded from files comes back with its compared run and the stored-state line names both', async () => {
  const mg = sampleDir('npb-mg.S.8');
  const cli = cliJson(['compare', mg, sampleDir('npb-lu.S.8')]);
  const s = await app.openPage(`${app.origin}${prefix}#sample=none`);
  const { page } = s;
  await page.setInputFiles('#pick-files', readdirSync(mg).sort().map((n) => join(mg, n)));
  await page.waitForSelector('#trace', { timeout: 60_000 });
  await idle(page);
  const label = await page.getAttribute('#trace', 'data-label');
  await page.click('#nav-compare');
  await page.selectOption('#compare-sample', 'npb-lu.S.8');
  await page.waitForSelector('#compare-verdict', { timeout: 120_000 });
  await page.waitForSelector('#stored[data-compared="1"]', { timeout: 10_000 });
  assert.match(await page.textContent('#stored'), new RegExp(`Kept in this browser for the next visit: ${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(.*\\) and 1 compared run\\.`));

  // The bare address reopens the stored files, then the comparison.
  await page.goto(`${app.origin}${prefix}`);
  await page.waitForSelector('#compare-verdict', { timeout: 120_000 });
  await idle(page);
  assert.equal(await page.getAttribute('#trace', 'data-label'), label);
  assert.match(await page.textContent('#compare-verdict'), /vs NPB LU/);
  const theta = thetaOf(await page.getAttribute('#compare-properties tr[data-property="theta"]', 'data-theta'));
  const epsilon = Number(await page.getAttribute('#compare-epsilon', 'data-epsilon'));
  assert.ok(sameTheta(theta, cli.theta), `θ ${theta} vs ${cli.theta}`);
  assert.ok(Math.abs(epsilon - cli.epsilon) < 1e-9, `ε ${epsilon} vs ${cli.epsilon}`);
  assert.equal(await page.getAttribute('#compare-verdict', 'data-similar'), String(cli.similar));
  app.assertClean(s);
  await s.context.close();
});

/** The id of the focused element, and whether it is inside the help dialog. */
async function focused(page) {
  return page.evaluate(() => ({
    id: document.activeElement?.id || document.activeElement?.tagName,
    inHelp: Boolean(document.activeElement?.closest('#help')),
  }));
}

test('the keyboard help is a modal dialog: focus moves in, Tab and Shift+Tab stay inside, Escape gives focus back', async () => {
  const s = await app.openPage(`${app.origin}${prefix}#sample=npb-mg.S.8`);
  const { page } = s;
  await page.waitForSelector('#trace', { timeout: 60_000 });
  await idle(page);

  // Opened with ? from a focused control.
  await page.focus('#nav-matrix');
  await page.keyboard.press('?');
  await page.waitForSelector('#help');
  assert.equal(await page.getAttribute('#help', 'role'), 'dialog');
  assert.equal(await page.getAttribute('#help', 'aria-modal'), 'true');
  const title = await page.getAttribute('#help', 'aria-labelledby');
  assert.equal(await page.textContent(`#${title}`), 'Keyboard shortcuts');
  assert.deepEqual(await focused(page), { id: 'help-close', inHelp: true });
  assert.equal(await page.evaluate(() => document.querySelector('main').inert), true, 'the page behind is inert');
  for (const key of ['Tab', 'Tab', 'Shift+Tab', 'Shift+Tab', 'Shift+Tab']) {
    await page.keyboard.press(key);
    assert.equal((await focused(page)).inHelp, true, `focus left the dialog after ${key}`);
  }
  // View keys do not act behind the dialog.
  await page.keyboard.press('3');
  assert.equal(await page.getAttribute('nav.views button[aria-current="page"]', 'id'), 'nav-summary');
  await page.keyboard.press('Escape');
  await page.waitForSelector('#help', { state: 'detached' });
  assert.deepEqual(await focused(page), { id: 'nav-matrix', inHelp: false });
  assert.equal(await page.evaluate(() => document.querySelector('main').inert), false);

  // Opened with the help button, closed with its Close button: focus returns to the button.
  await page.click('#help-button');
  await page.waitForSelector('#help');
  assert.deepEqual(await focused(page), { id: 'help-close', inHelp: true });
  await page.keyboard.press('Enter');
  await page.waitForSelector('#help', { state: 'detached' });
  assert.equal((await focused(page)).id, 'help-button');

  // Opened with ? while nothing had focus: Escape leaves focus on the help button.
  await page.evaluate(() => document.activeElement?.blur());
  await page.keyboard.press('?');
  await page.waitForSelector('#help');
  await page.keyboard.press('Escape');
  await page.waitForSelector('#help', { state: 'detached' });
  assert.equal((await focused(page)).id, 'help-button');
  app.assertClean(s);
  await s.context.close();
});

test('the compare view\'s controls are reachable with the keyboard', async () => {
  const s = await app.openPage(`${app.origin}${prefix}#sample=npb-lu.S.8&view=compare`);
  const { page } = s;
  await page.waitForSelector('#compare-sample', { timeout: 60_000 });
  await idle(page);
  await page.selectOption('#compare-sample', 'npb-mg.S.8');
  await page.waitForSelector('#compare-verdict', { timeout: 120_000 });
  await page.selectOption('#compare-sample', 'npb-lu.S.8');
  await page.waitForSelector('#compare-matrix', { timeout: 120_000 });
  // Tab from the file picker reaches the menu, every matrix cell, the remove buttons and "Clear".
  const reached = new Set();
  await page.focus('#compare-pick');
  for (let i = 0; i < 40; i++) {
    await page.keyboard.press('Tab');
    reached.add(await page.evaluate(() => {
      const e = document.activeElement;
      if (!e) return '';
      if (e.closest('#compare-matrix td')) return `cell ${e.closest('td').dataset.first}-${e.closest('td').dataset.second}`;
      if (e.classList.contains('remove')) return `remove ${e.getAttribute('aria-label')}`;
      return e.id;
    }));
  }
  for (const id of ['compare-sample', 'compare-clear', 'cell 0-1', 'cell 0-2', 'cell 1-2', 'cell 2-1']) {
    assert.ok(reached.has(id), `${id} is not reachable with Tab: ${[...reached].join(', ')}`);
  }
  assert.ok([...reached].filter((r) => r.startsWith('remove')).length === 2, 'both added runs can be removed');
  // A cell is chosen with Enter.
  await page.focus('#compare-matrix td[data-first="1"][data-second="2"] button');
  await page.keyboard.press('Enter');
  await page.waitForSelector('#compare-verdict[data-first="1"][data-second="2"]');
  app.assertClean(s);
  await s.context.close();
});

test('a service worker that cannot be registered gives a small notice; the app still loads traces', async () => {
  const context = await app.browser.newContext();
  // The server has no sw.js for this visitor (as a server that refuses it, or a wrong deploy).
  await context.route('**/sw.js', (route) => route.fulfill({ status: 404, body: 'not found' }));
  const s = await app.openPage(`${app.origin}${prefix}#sample=npb-mg.S.8`, { context });
  const { page } = s;
  await page.waitForSelector('#sw-status[data-kind="unavailable"]:not([hidden])', { timeout: 30_000 });
  assert.match(await page.textContent('#sw-status'), /^offline use unavailable: A bad HTTP response code \(404\)/);
  await page.waitForSelector('#trace', { timeout: 60_000 });
  await idle(page);
  await page.setInputFiles('#pick-files', readdirSync(sampleDir('npb-lu.S.8')).map((n) => join(sampleDir('npb-lu.S.8'), n)));
  await page.waitForSelector('#trace[data-label]', { timeout: 60_000 });
  await idle(page);
  assert.equal(await page.locator('#error').count(), 0, '#error is shown');
  assert.equal(await page.evaluate(() => navigator.serviceWorker.controller), null);
  // The notice goes away on request and never covers the page's controls for good.
  await page.click('#sw-dismiss');
  assert.equal(await page.isVisible('#sw-status'), false);
  s.problems = s.problems.filter((p) => !/sw\.js|ServiceWorker|bad HTTP response code \(404\)/i.test(p));
  app.assertClean(s);
  await context.close();
});

test('without service workers (a browser or window that offers none) the notice says why', async () => {
  const context = await app.browser.newContext();
  await context.addInitScript(() => { delete Navigator.prototype.serviceWorker; });
  const s = await app.openPage(`${app.origin}${prefix}#sample=npb-mg.S.8`, { context });
  const { page } = s;
  await page.waitForSelector('#sw-status:not([hidden])', { timeout: 30_000 });
  assert.match(await page.textContent('#sw-status'), /^offline use unavailable: this browser offers no service workers/);
  await page.waitForSelector('#trace', { timeout: 60_000 });
  await idle(page);
  app.assertClean(s);
  await context.close();
});

test('a new deploy is offered with a Reload button, not mixed into the running version', async () => {
  // The first visit gets an older deploy's service worker (another build version, answered by a
  // route); the browser's later update checks reach the server, which has this build's.
  const current = readFileSync(join(dist, 'sw.js'), 'utf8');
  const version = current.match(/const BUILD_VERSION = '([^']+)'/)[1];
  const older = current.replace(`const BUILD_VERSION = '${version}'`, `const BUILD_VERSION = '${version}-older'`);
  assert.notEqual(older, current);
  const context = await app.browser.newContext();
  await context.route('**/sw.js', (route) => route.fulfill({
    status: 200,
    headers: { 'content-type': 'text/javascript; charset=utf-8' },
    body: older,
  }));
  const s = await app.openPage(`${app.origin}${prefix}`, { context });
  const { page } = s;
  await page.waitForSelector('#trace', { timeout: 60_000 });
  await idle(page);
  await page.evaluate(async () => {
    await navigator.serviceWorker.ready;
    if (!navigator.serviceWorker.controller) {
      await new Promise((ok) => navigator.serviceWorker.addEventListener('controllerchange', ok, { once: true }));
    }
  });
  assert.equal(await page.isVisible('#sw-status'), false, 'the first visit says nothing');
  const cacheOf = () => page.evaluate(async () => (await caches.keys()).filter((k) => k.startsWith('tracelogic-')));
  assert.deepEqual(await cacheOf(), [`tracelogic-${version}-older`]);

  // The new deploy is found on the next check (a reload or the browser's own).
  await context.unroute('**/sw.js');
  await page.evaluate(async () => (await navigator.serviceWorker.getRegistration()).update());
  await page.waitForSelector('#sw-status[data-kind="update"]:not([hidden])', { timeout: 30_000 });
  assert.match(await page.textContent('#sw-status'), /new version of tracelogic is available/);
  // Until the user reloads, the older version's worker and cache stay in charge.
  assert.equal(await page.evaluate(async () => Boolean((await navigator.serviceWorker.getRegistration()).waiting)), true);
  assert.ok((await cacheOf()).includes(`tracelogic-${version}-older`));
  await page.click('#nav-matrix');
  await page.waitForSelector('#view-matrix');

  await Promise.all([page.waitForEvent('load', { timeout: 30_000 }), page.click('#sw-action')]);
  await page.waitForSelector('#trace', { timeout: 60_000 });
  await idle(page);
  await page.waitForFunction(async () => !(await caches.keys()).some((k) => k.endsWith('-older')));
  assert.deepEqual(await cacheOf(), [`tracelogic-${version}`]);
  assert.equal(await page.evaluate(() => navigator.serviceWorker.controller?.state), 'activated');
  assert.equal(await page.isVisible('#sw-status'), false);
  app.assertClean(s);
  await context.close();
});
