// The package against the CLI: the same files read through `readTrace` and through
// `tracelogic <cmd> --json` must give the same documents (both build them with the engine's
// reports and `documents`; only timing fields, which differ run to run, are left out).
// Run by `scripts/build-js --test` (TRACELOGIC_CLI = target/debug/tracelogic).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import init, { readTrace, topology, logical } from '../index.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const sample = path.join(root, 'tests/data/samples/npb-lu.S.8');
const cli = process.env.TRACELOGIC_CLI || path.join(root, 'target/debug/tracelogic');

function cliJson(...args) {
  assert.ok(existsSync(cli), `no CLI at ${cli}: cargo build -p tracelogic`);
  return JSON.parse(execFileSync(cli, [...args, '--json', sample], { encoding: 'utf8', maxBuffer: 1 << 28 }));
}

// Fields that measure how long something took, not what was found.
const timing = /(^|_)(ms|millis|milliseconds|elapsed|duration_ms|seconds_taken)$/;
function untimed(value) {
  if (Array.isArray(value)) return value.map(untimed);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).filter(([k]) => !timing.test(k)).map(([k, v]) => [k, untimed(v)]));
  }
  return value;
}

function files(dir) {
  return readdirSync(dir).sort().map((name) => ({ name, bytes: new Uint8Array(readFileSync(path.join(dir, name))) }));
}

await init();
const trace = readTrace(files(sample));

test('summary equals the CLI summary --json', () => {
  assert.deepStrictEqual(untimed(trace.summary()), untimed(cliJson('summary')));
});

test('topology (method and free function) equals the CLI topology --json', () => {
  const expected = untimed(cliJson('topology'));
  assert.deepStrictEqual(untimed(trace.topology()), expected);
  assert.deepStrictEqual(untimed(topology(trace)), expected);
  // LU's 8 ranks run a 2-D wavefront: whatever it is identified as, both sides agree and it is named.
  assert.equal(typeof expected.ranks, 'number');
});

test('logical (plain and compressed) equals the CLI logical --json', () => {
  const doc = untimed(cliJson('logical'));
  assert.ok(doc.records.length > 0);
  assert.deepStrictEqual(untimed(logical(trace)), doc);
  assert.deepStrictEqual(untimed(trace.logical({ compress: true })), untimed(cliJson('logical', '--compress')));
});

test('matrix, patterns and phases equal the CLI --json', () => {
  assert.deepStrictEqual(trace.matrix(), cliJson('matrix'));
  assert.deepStrictEqual(
    trace.matrix({ metric: 'messages', threshold: 20 }),
    cliJson('matrix', '--metric', 'messages', '--threshold', '20'),
  );
  const patterns = untimed(trace.patterns());
  assert.deepStrictEqual(patterns, untimed(cliJson('patterns')));
  assert.ok(patterns.communication_patterns.length > 0);
  assert.deepStrictEqual(untimed(trace.phases({ strength: 0 })), untimed(cliJson('phases')));
});

test('bad input throws the engine message, naming the file', () => {
  assert.throws(() => readTrace([{ name: 'broken.otf2', bytes: new Uint8Array([1, 2, 3]) }]), (e) => {
    assert.ok(e instanceof Error);
    assert.match(e.message, /cannot read trace: .*broken\.otf2/);
    return true;
  });
  assert.throws(() => readTrace([{ name: 'x' }]), /x: `bytes` is not a Uint8Array/);
  assert.throws(() => trace.topology({ threshold: 150 }), /threshold 150 is outside 0-100 %/);
  assert.throws(() => trace.topology({ treshold: 5 }), /bad options: .*treshold/);
});
