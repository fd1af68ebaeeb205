// Browser test of "Save trace as…" in the summary view, on the built web app (dist/) in Debian's
// headless Chromium: the worker writes the loaded trace in another format (optionally with its
// ranks renumbered), the page downloads it, and loading that file gives the same summary (and
// the same as `tracelogic summary` / `tracelogic convert` on the command line).
//
// Run with scripts/test-web, or:
//   TRACELOGIC_DIST=... TRACELOGIC_CLI=... CHROMIUM=/usr/bin/chromium node --test tests/convert.test.mjs

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp, cli, cliJson, sampleDir } from './harness.mjs';

const prefix = '/some/sub/path/';
let app;

before(async () => {
  app = await startApp(prefix);
});

after(async () => {
  await app?.close();
});

const stats = ['format', 'ranks', 'calls', 'p2p-messages', 'p2p-bytes', 'collective-bytes', 'communicators', 'unmatched'];

/** The summary figures the page shows, by `data-stat`. */
async function shownStats(page) {
  return page.$$eval('[data-stat]', (els) => Object.fromEntries(els.map((e) => [e.dataset.stat, e.dataset.value])));
}

/** Calls per rank as the summary view lists them. */
async function callsPerRank(page) {
  return page.$$eval('table.calls-per-rank tbody td', (tds) => tds.map((td) => Number(td.dataset.export)));
}

async function idle(page) {
  await page.waitForSelector('.app[data-state="idle"]', { timeout: 60_000 });
}

/** Choose format and renumbering, press "Save trace as…" and return the downloaded file. */
async function save(page, format, renumber = 'keep', seed = '1') {
  await page.selectOption('#save-format', format);
  await page.selectOption('#save-renumber', renumber);
  await page.fill('#save-seed', seed);
  await page.keyboard.press('Shift');
  const [d] = await Promise.all([
    page.waitForEvent('download', { timeout: 120_000 }),
    page.click('#save-trace-button'),
  ]);
  await page.waitForSelector('#save-status[data-file]', { timeout: 60_000 });
  return { name: d.suggestedFilename(), path: await d.path() };
}

/** Load `path` through the file picker and wait for its summary. */
async function load(page, path, label) {
  await page.setInputFiles('#pick-files', path);
  await page.waitForSelector(`#trace[data-label="${label}"]`, { timeout: 60_000 });
  await idle(page);
  await page.waitForSelector('[data-stat="calls"]');
}

test('saving as text, then loading that file, gives the same summary', async () => {
  const s = await app.openPage(`${app.origin}${prefix}#sample=npb-mg.S.8`, { acceptDownloads: true });
  const { page } = s;
  await page.waitForSelector('#trace', { timeout: 60_000 });
  await idle(page);
  const before = await shownStats(page);
  const perRank = await callsPerRank(page);
  const tmp = mkdtempSync(join(tmpdir(), 'tracelogic-convert-'));
  try {
    const text = await save(page, 'text');
    assert.match(text.name, /\.txt$/);
    const copy = join(tmp, text.name);
    execFileSync('cp', [text.path, copy]);
    // The CLI reads the page's file as the same trace as the sample.
    const cliSummary = cliJson(['summary', copy]);
    const sample = cliJson(['summary', sampleDir('npb-mg.S.8')]);
    for (const k of ['ranks', 'calls', 'calls_per_rank', 'p2p_bytes', 'p2p_messages', 'matched_messages']) {
      assert.deepEqual(cliSummary[k], sample[k], k);
    }
    assert.equal(cliSummary.format, 'text');

    await load(page, copy, text.name);
    const after = await shownStats(page);
    for (const k of stats.filter((k) => k !== 'format')) assert.equal(after[k], before[k], k);
    assert.equal(after.format, 'text');
    assert.deepEqual(await callsPerRank(page), perRank);

    // Renumbered: each rank's calls move to its new number, as `tracelogic convert` does it.
    const reversed = await save(page, 'text', 'reverse');
    const rev = join(tmp, `reversed-${reversed.name}`);
    execFileSync('cp', [reversed.path, rev]);
    await load(page, rev, `reversed-${reversed.name}`);
    assert.deepEqual(await callsPerRank(page), [...perRank].reverse());
    const viaCli = join(tmp, 'cli-reversed.txt');
    execFileSync(cli, ['convert', copy, '--format', 'text', '--out', viaCli, '--renumber', 'reverse']);
    assert.deepEqual(cliJson(['summary', viaCli]).calls_per_rank, cliJson(['summary', rev]).calls_per_rank);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  app.assertClean(s);
  await page.close();
});

test('DUMPI and OTF2 saves are tar archives that load back with the same figures', async () => {
  const s = await app.openPage(`${app.origin}${prefix}#sample=npb-lu.S.8`, { acceptDownloads: true });
  const { page } = s;
  await page.waitForSelector('#trace', { timeout: 60_000 });
  await idle(page);
  const before = await shownStats(page);
  const tmp = mkdtempSync(join(tmpdir(), 'tracelogic-convert-'));
  try {
    for (const format of ['dumpi', 'otf2']) {
      const file = await save(page, format, 'random', '7');
      assert.match(file.name, new RegExp(`-${format}\\.tar$`));
      const copy = join(tmp, file.name);
      execFileSync('cp', [file.path, copy]);
      const members = execFileSync('tar', ['-tf', copy], { encoding: 'utf8' }).trim().split('\n');
      assert.ok(members.length > 1, `${format}: ${members}`);
      const fromCli = cliJson(['summary', copy]);
      assert.equal(fromCli.p2p_messages, Number(before['p2p-messages']), `${format}: tracelogic summary of the saved file`);
      await load(page, copy, file.name);
      const after = await shownStats(page);
      assert.equal(after.format, format);
      for (const k of ['ranks', 'calls', 'p2p-messages', 'p2p-bytes', 'unmatched']) assert.equal(after[k], before[k], `${format} ${k}`);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  app.assertClean(s);
  await page.close();
});
