// The worker's reading of picked files (crate::input::read_blobs, crate::worker::read_handles)
// and the load profile of bench/wasm-ingest.mjs --profile (bench/wasm-profile.mjs).
//
// Plain files are read whole with Blob.arrayBuffer(), several 8 MiB slices at once, so a set of
// many files and a file of several slices must give the summary of `tracelogic summary --json`;
// a file whose name does not say archive but whose bytes are one is unpacked from memory. The
// page keeps a spare worker for the next load. The profile summary is checked on a made-up
// Chrome trace whose stages and samples are known.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp, root, cli, drop, idle, shownSummary, expectedSummary } from './harness.mjs';
import { summarise, cleanName } from '../../bench/wasm-profile.mjs';

const prefix = '/tools/tracelogic/';
let app;
let scratch;

before(async () => {
  app = await startApp(prefix);
  scratch = mkdtempSync(join(tmpdir(), 'tracelogic-ingest-'));
});

after(async () => {
  await app?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

function generate(args, out) {
  execFileSync(cli, ['generate', ...args, '--out', out], { stdio: 'ignore' });
  return out;
}

test('64 DUMPI rank files and a text trace of several 8 MiB slices load as the CLI reads them', async () => {
  const dumpi = generate(['--topology', 'torus:4x4x4', '--iterations', '20', '--format', 'dumpi'], join(scratch, 'dumpi-torus'));
  const text = generate(['--topology', 'torus:4x4x4', '--iterations', '400', '--format', 'text'], join(scratch, 'torus.txt'));
  assert.ok(readdirSync(dumpi).length >= 64, 'one DUMPI file per rank');
  assert.ok(statSync(text).size > 2 * 8 * 1024 * 1024, `the text trace spans several slices (${statSync(text).size} bytes)`);
  const s = await app.openPage(`${app.origin}${prefix}?sample=none`);
  const { page } = s;
  await idle(page);
  for (const [path, picker, label] of [[dumpi, '#pick-folder', 'dumpi-torus'], [text, '#pick-files', 'torus.txt']]) {
    const expected = expectedSummary(path);
    await page.setInputFiles(picker, path);
    await page.waitForSelector(`#trace[data-label="${label}"]`, { timeout: 120_000 });
    await idle(page);
    assert.equal(await page.$('#error'), null, `no error for ${label}`);
    assert.deepEqual(await shownSummary(page), expected, label);
    if (label === 'dumpi-torus') {
      const stages = await page.$$eval('#load-log li', (li) => li.map((e) => e.textContent));
      for (const name of readdirSync(dumpi)) {
        assert.ok(stages.includes(`reading dumpi-torus/${name} in the worker`), `a stage for ${name}`);
      }
    }
  }
  app.assertClean(s);
  await page.close();
});

test('an archive whose name does not say so is still unpacked (read whole, then unpacked in memory)', async () => {
  const archive = join(root, 'crates/formats/tests/data/archives/lulesh-paraver.tar.gz');
  const expected = expectedSummary(archive);
  const s = await app.openPage(`${app.origin}${prefix}?sample=none`);
  const { page } = s;
  await idle(page);
  await drop(page, [{ name: 'lulesh-run.data', bytes: readFileSync(archive) }]);
  await page.waitForSelector('#trace[data-label="lulesh-run.data"]', { timeout: 60_000 });
  await idle(page);
  assert.equal(await page.$('#error'), null);
  assert.deepEqual(await shownSummary(page), expected);
  app.assertClean(s);
  await page.close();
});

test('a spare worker, started before the pick, takes each load', async () => {
  const s = await app.openPage(`${app.origin}${prefix}?sample=none`);
  const { page } = s;
  await idle(page);
  // Each worker's clock origin is when it started; only a worker that loaded records its memory.
  const workers = () => Promise.all(page.workers().map((w) => w.evaluate(() => ({
    origin: performance.timeOrigin,
    memory: self.__tracelogicMemoryBytes || 0,
  })).catch(() => null)));
  let previousPick = 0;
  for (const id of ['npb-mg.S.8', 'npb-lu.S.8']) {
    const dir = join(root, 'web/samples', id);
    let spare = false;
    for (let i = 0; i < 100 && !spare; i++) {
      spare = (await workers()).some((w) => w && w.memory === 0);
      if (!spare) await new Promise((ok) => setTimeout(ok, 100));
    }
    assert.ok(spare, `a spare worker is there before ${id} is picked`);
    const pick = await page.evaluate(() => performance.timeOrigin + performance.now());
    await page.setInputFiles('#pick-folder', dir);
    await page.waitForSelector(`#trace[data-label="${id}"]`, { timeout: 60_000 });
    await idle(page);
    assert.deepEqual(await shownSummary(page), expectedSummary(dir), id);
    const loaded = (await workers()).filter((w) => w && w.memory > 0);
    assert.ok(loaded.some((w) => w.origin < pick && w.origin > previousPick),
      `${id} was read by a worker started before the pick: ${JSON.stringify({ pick, previousPick, loaded })}`);
    previousPick = pick;
  }
  app.assertClean(s);
  await page.close();
});

/** A Chrome trace of one profiled load: marks at the given times (ms) on the page (tid 1) and the
 * worker (tid 2), and 1 ms samples of the functions given per time span. */
function madeUpTrace() {
  const us = (ms) => ms * 1000;
  const events = [
    { ph: 'M', name: 'thread_name', pid: 9, tid: 1, args: { name: 'CrRendererMain' } },
    { ph: 'M', name: 'thread_name', pid: 9, tid: 2, args: { name: 'DedicatedWorker thread' } },
  ];
  const mark = (tid, ms, name) => events.push({ ph: 'R', cat: 'blink.user_timing', name: `tracelogic:${name}`, pid: 9, tid, ts: us(ms) });
  mark(1, 0, 'bench pick');
  mark(1, 10, 'page listed the files');
  mark(2, 30, 'worker received a request');
  mark(2, 30, 'reading run/a.bin in the worker');
  mark(2, 60, 'reading run/b.bin in the worker');
  mark(2, 100, 'reading rank 0');
  mark(2, 250, 'done');
  mark(2, 250, 'matching messages');
  mark(2, 300, 'summarising');
  mark(2, 310, 'building the matrix');
  mark(2, 330, 'worker answering');
  mark(1, 332, 'page received the trace');
  mark(2, 334, 'worker answered');
  mark(1, 400, 'bench idle');
  // Each thread: a profile whose samples are 1 ms apart over [from, to) in each span.
  const profile = (tid, spans) => {
    const nodes = [{ id: 1, callFrame: { functionName: '(root)', url: '' } }];
    const samples = [];
    const deltas = [];
    let last = 0;
    for (const [from, to, fn, url] of spans) {
      let node = nodes.find((n) => n.callFrame.functionName === fn);
      if (!node) {
        node = { id: nodes.length + 1, parent: 1, callFrame: { functionName: fn, url } };
        nodes.push(node);
      }
      for (let t = from; t < to; t++) {
        samples.push(node.id);
        deltas.push(us(t) - last);
        last = us(t);
      }
    }
    events.push({ ph: 'P', name: 'Profile', pid: 9, tid, id: `0x${tid}`, args: { data: { startTime: 0 } } });
    events.push({ ph: 'P', name: 'ProfileChunk', pid: 9, tid, id: `0x${tid}`, args: { data: { cpuProfile: { nodes, samples }, timeDeltas: deltas } } });
  };
  profile(1, [[0, 10, 'list', 'app.js'], [10, 332, '(idle)', ''], [332, 340, 'decode::h0123456789abcdef', 'app_bg.wasm'], [340, 400, '(program)', '']]);
  profile(2, [[30, 70, 'readAsArrayBuffer', 'worker.js'], [70, 100, 'copy', 'worker.js'],
    [100, 250, 'tracelogic_formats::dumpi::read[0123456789abcdef]::h0123456789abcdef', 'worker_bg.wasm'],
    [250, 300, 'sort', 'worker_bg.wasm'], [300, 310, 'summarize', 'worker_bg.wasm'], [310, 330, 'from_trace', 'worker_bg.wasm'],
    [330, 334, 'encode', 'worker_bg.wasm'], [334, 401, '(idle)', '']]);
  return events;
}

test('the load profile is split at the marks, with each stage\'s busy time and functions', () => {
  const summary = summarise(madeUpTrace(), 5);
  assert.equal(summary.load_ms, 400);
  const stage = (prefix) => summary.stages.find((s) => s.stage.startsWith(prefix));
  const expected = {
    'page: list': [10, 'page (main thread)', 'list'],
    'worker: start': [20, 'worker (tid 2)', null],
    'worker: read': [70, 'worker (tid 2)', 'readAsArrayBuffer'],
    'worker: parse': [150, 'worker (tid 2)', 'tracelogic_formats::dumpi::read'],
    'worker: match': [50, 'worker (tid 2)', 'sort'],
    'worker: summary': [10, 'worker (tid 2)', 'summarize'],
    'worker: matrix': [20, 'worker (tid 2)', 'from_trace'],
    'worker: encode': [4, 'worker (tid 2)', 'encode'],
    'page: receive': [2, 'page (main thread)', null],
    'page: render': [68, 'page (main thread)', '(program)'],
  };
  for (const [prefix, [ms, thread, top]] of Object.entries(expected)) {
    const s = stage(prefix);
    assert.ok(s, `stage ${prefix} in ${JSON.stringify(summary.stages.map((x) => x.stage))}`);
    assert.equal(s.ms, ms, prefix);
    assert.equal(s.thread, thread, prefix);
    if (top) assert.equal(s.top[0].function, top, prefix);
  }
  // The read stage: 40 ms in the read, 30 in the copy; nothing idle counts as busy.
  assert.deepEqual(stage('worker: read').top.map((f) => [f.function, f.self_ms]), [['readAsArrayBuffer', 40], ['copy', 30]]);
  assert.equal(stage('worker: start').busy_ms, 0);
  const worker = summary.threads.find((t) => t.thread === 'worker (tid 2)');
  assert.equal(worker.busy_ms, 304, 'from the first worker sample at 30 ms to the last busy one at 333 ms');
  assert.equal(worker.top[0].function, 'tracelogic_formats::dumpi::read');
  assert.equal(worker.top[0].code, 'wasm');
  assert.equal(cleanName('a[0123456789abcdef]::b::h0123456789abcdef'), 'a::b');
});
