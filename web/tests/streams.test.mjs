// Compressed inputs in the browser: the worker unpacks a dropped or picked .tar.zst / .tar.gz as a
// stream over the `File` (FileReaderSync slices on demand) and must give the same summary as
// `tracelogic summary --json` on the same archive; a truncated archive shows an error naming it and
// keeps the trace already loaded. The worker leaves its WebAssembly memory size in
// `self.__tracelogicMemoryBytes`, read here from the worker itself.
//
// Measurement (skipped unless set): TRACELOGIC_STREAM_MEASURE=A,B,... opens each file (e.g. a large
// generated trace set packed as .tar.gz and .tar.zst, or a folder) through the picker and prints the
// time to open it and the worker's memory size afterwards. Run it against an optimised build.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync, readdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, basename } from 'node:path';
import { startApp, root, drop, idle, shownSummary, expectedSummary } from './harness.mjs';

const prefix = '/tools/tracelogic/';
const fixtures = join(root, 'crates/formats/tests/data');
const tarZst = join(fixtures, 'zstd/lulesh-paraver.tar.zst');
const tarGz = join(fixtures, 'archives/lulesh-paraver.tar.gz');

let app;

before(async () => {
  app = await startApp(prefix);
});

after(async () => {
  await app?.close();
});

/** The largest WebAssembly memory any of the page's workers reports (the analysis worker's). */
async function workerMemory(page) {
  let bytes = 0;
  for (const worker of page.workers()) {
    const b = await worker.evaluate(() => self.__tracelogicMemoryBytes || 0).catch(() => 0);
    bytes = Math.max(bytes, b);
  }
  return bytes;
}

test('a dropped .tar.zst and .tar.gz give the summary of tracelogic summary --json', async () => {
  const s = await app.openPage(`${app.origin}${prefix}?sample=none`);
  const { page } = s;
  await page.waitForSelector('#dropzone');
  for (const archive of [tarZst, tarGz]) {
    const name = basename(archive);
    const expected = expectedSummary(archive);
    assert.equal(expected.format, 'paraver');
    assert.ok(expected.calls > 0);
    await drop(page, [{ name, bytes: readFileSync(archive) }]);
    await page.waitForSelector(`#trace[data-label="${name}"]`, { timeout: 60_000 });
    await idle(page);
    assert.equal(await page.$('#error'), null, 'no error shown');
    assert.deepEqual(await shownSummary(page), expected, name);
    const memory = await workerMemory(page);
    assert.ok(memory > 0, 'the worker reports its memory size');
  }
  app.assertClean(s);
  await page.close();
});

test('a picked .tar.zst streams from disk; a truncated one names the archive and keeps the trace', async () => {
  const tmp = mkdtempSync(join(tmpdir(), 'tracelogic-streams-'));
  try {
    const s = await app.openPage(`${app.origin}${prefix}?sample=none`);
    const { page } = s;
    await page.waitForSelector('#dropzone');
    await page.setInputFiles('#pick-files', tarZst);
    await page.waitForSelector('#trace[data-label="lulesh-paraver.tar.zst"]', { timeout: 60_000 });
    await idle(page);
    const expected = expectedSummary(tarZst);
    assert.deepEqual(await shownSummary(page), expected);

    const bytes = readFileSync(tarZst);
    const cut = join(tmp, 'cut.tar.zst');
    writeFileSync(cut, bytes.subarray(0, Math.floor(bytes.length * 0.6)));
    await page.setInputFiles('#pick-files', cut);
    await page.waitForSelector('#error', { timeout: 60_000 });
    const message = await page.textContent('#error');
    assert.match(message, /cut\.tar\.zst/, message);
    assert.match(message, /cannot unpack member/, message);
    await idle(page);
    // The trace loaded before is still shown.
    assert.deepEqual(await shownSummary(page), expected);
    app.assertClean(s);
    await page.close();
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

/** A ustar header block for a regular file `name` of `size` bytes. */
function tarHeader(name, size) {
  const h = Buffer.alloc(512);
  h.write(name, 0);
  h.write('0000644\0', 100);
  h.write('0000000\0', 108);
  h.write('0000000\0', 116);
  h.write(size.toString(8).padStart(11, '0') + '\0', 124);
  h.write('00000000000\0', 136);
  h.write('        ', 148);
  h.write('0', 156);
  h.write('ustar\0', 257);
  h.write('00', 263);
  let sum = 0;
  for (const b of h) sum += b;
  h.write(sum.toString(8).padStart(6, '0') + '\0 ', 148);
  return h;
}

/** A zstd frame holding `bytes` in one raw block, then a skippable frame of `pad` bytes. */
function zstdRaw(bytes, pad) {
  const block = Buffer.alloc(3);
  block.writeUIntLE(1 | (bytes.length << 3), 0, 3);
  const skip = Buffer.alloc(8 + pad);
  skip.writeUInt32LE(0x184d2a50, 0);
  skip.writeUInt32LE(pad, 4);
  return Buffer.concat([Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x38]), block, bytes, skip]);
}

test('an archive that would unpack past the 1 GiB limit is refused as too large before it is read', async () => {
  // 6 MiB of zstd (so the 200× ratio allows more than 1 GiB) whose tar lists a 1.5 GB member.
  const bytes = zstdRaw(tarHeader('big/rank0.bin', 1_500_000_000), 6 << 20);
  const s = await app.openPage(`${app.origin}${prefix}?sample=none`);
  const { page } = s;
  await page.waitForSelector('#dropzone');
  await drop(page, [{ name: 'big.tar.zst', bytes }]);
  await page.waitForSelector('#error', { timeout: 60_000 });
  const message = await page.textContent('#error');
  assert.match(message, /big\.tar\.zst: too large: 1073741825 bytes or more once unpacked, limit 1073741824/, message);
  app.assertClean(s);
  await page.close();
});

const measure = process.env.TRACELOGIC_STREAM_MEASURE;
test('measure: open large compressed inputs', { skip: !measure && 'set TRACELOGIC_STREAM_MEASURE=PATH,PATH to measure' }, async () => {
  for (const path of measure.split(',')) {
    const isDir = statSync(path).isDirectory();
    const files = isDir ? readdirSync(path).sort().map((n) => join(path, n)) : [path];
    const bytes = files.reduce((sum, p) => sum + statSync(p).size, 0);
    const context = await app.browser.newContext();
    const page = await context.newPage();
    const problems = [];
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(`${app.origin}${prefix}#sample=none`);
    await page.waitForSelector('#dropzone');
    const t0 = Date.now();
    await page.setInputFiles('#pick-files', files);
    await page.waitForSelector('.app[data-state="loading"]', { timeout: 60_000 });
    await idle(page, 3_600_000);
    const openMs = Date.now() - t0;
    const error = (await page.$('#error')) ? await page.textContent('#error') : null;
    const summary = error ? null : await shownSummary(page);
    const memory = await workerMemory(page);
    console.log(JSON.stringify({ path, files: files.length, bytes, open_ms: openMs, worker_wasm_memory_bytes: memory, ranks: summary?.ranks, calls: summary?.calls, error, problems }));
    await context.close();
  }
});
