// The profile of one load in the web app, from a Chrome trace (CDP `Tracing`, category
// `disabled-by-default-v8.cpu_profiler` for the sampling profiles of every thread of the page's
// renderer, `blink.user_timing` for the `tracelogic:` marks the page and the worker leave):
// time per stage of the load and the functions that took it, per thread. Used by
// `bench/wasm-ingest.mjs --profile`.

/** Categories to record: the sampling profiler of every thread, user-timing marks, thread names. */
export const TRACE_CATEGORIES = ['disabled-by-default-v8.cpu_profiler', 'blink.user_timing', '__metadata'];

/** A function's name without Rust's symbol hash (`::h0123…`) and crate disambiguators (`[0123…]`). */
export function cleanName(name) {
  return (name || '(anonymous)').replace(/::h[0-9a-f]{16}/g, '').replace(/\[[0-9a-f]{16}\]/g, '');
}

/** Where a sampled frame's code lives: `wasm` (the app's or worker's Rust), `js`, or `native`
 * (V8's own entries such as `(program)`, `(garbage collector)`, or browser built-ins). */
function codeKind(frame) {
  const url = frame.url || '';
  if (url.endsWith('.wasm')) return 'wasm';
  if (url) return 'js';
  return 'native';
}

/**
 * The CPU samples of every profiled thread in `events` (a trace's `traceEvents`): for each
 * thread `{ name, tid, samples: [{ ts, node }] , nodes: Map(id → { frame, parent }) }`, with
 * `ts` in the trace clock (µs), the clock of the marks.
 */
export function threadProfiles(events) {
  const names = new Map();
  for (const e of events) {
    if (e.ph === 'M' && e.name === 'thread_name') names.set(`${e.pid}:${e.tid}`, e.args.name);
  }
  const profiles = new Map();
  for (const e of events) {
    if (e.name === 'Profile') {
      profiles.set(`${e.pid}:${e.id}`, {
        tid: e.tid,
        name: names.get(`${e.pid}:${e.tid}`) || `thread ${e.tid}`,
        start: e.args.data.startTime,
        nodes: new Map(),
        samples: [],
        deltas: [],
        sampleIds: [],
      });
    }
  }
  for (const e of events) {
    if (e.name !== 'ProfileChunk') continue;
    const p = profiles.get(`${e.pid}:${e.id}`);
    if (!p) continue;
    const data = e.args.data;
    for (const n of data.cpuProfile?.nodes || []) p.nodes.set(n.id, { frame: n.callFrame, parent: n.parent });
    p.sampleIds.push(...(data.cpuProfile?.samples || []));
    p.deltas.push(...(data.timeDeltas || []));
  }
  const threads = [];
  for (const p of profiles.values()) {
    let ts = p.start;
    const samples = [];
    for (let i = 0; i < p.sampleIds.length; i++) {
      ts += p.deltas[i] || 0;
      samples.push({ ts, node: p.sampleIds[i] });
    }
    // Each sample stands for the time until the next one (the last one for the median gap).
    const gaps = samples.slice(1).map((s, i) => s.ts - samples[i].ts).sort((a, b) => a - b);
    const typical = gaps.length ? gaps[gaps.length >> 1] : 0;
    for (let i = 0; i < samples.length; i++) {
      samples[i].us = i + 1 < samples.length ? samples[i + 1].ts - samples[i].ts : typical;
    }
    threads.push({ name: p.name, tid: p.tid, nodes: p.nodes, samples });
  }
  return threads;
}

/** The `tracelogic:` marks in `events`, in time order: `{ name, ts, tid }` (name without the prefix). */
export function marks(events) {
  return events
    .filter((e) => e.cat?.includes('blink.user_timing') && e.name?.startsWith('tracelogic:') && e.ph !== 'e')
    .map((e) => ({ name: e.name.slice('tracelogic:'.length), ts: e.ts, tid: e.tid }))
    .sort((a, b) => a.ts - b.ts);
}

/** Self time per function of `thread`'s samples within [from, to) µs, largest first, idle left out. */
export function selfTimes(thread, from = -Infinity, to = Infinity) {
  const by = new Map();
  let busy = 0;
  for (const s of thread.samples) {
    if (s.ts < from || s.ts >= to) continue;
    const frame = thread.nodes.get(s.node)?.frame || {};
    const name = cleanName(frame.functionName);
    if (name === '(idle)') continue;
    busy += s.us;
    const key = `${name}\u0000${codeKind(frame)}`;
    by.set(key, (by.get(key) || 0) + s.us);
  }
  const functions = [...by.entries()]
    .map(([key, us]) => {
      const [name, kind] = key.split('\u0000');
      return { function: name, code: kind, self_ms: us / 1000 };
    })
    .sort((a, b) => b.self_ms - a.self_ms);
  return { busy_ms: busy / 1000, functions };
}

/**
 * The stages of a load, from the marks: each `{ stage, thread, from, to }` (µs) where `thread`
 * is the tid doing the work. `pick` and `idle` are the bench's own marks around the load.
 */
export function loadStages(all) {
  const find = (pred, after = -Infinity) => all.find((m) => m.ts >= after && pred(m.name));
  const pick = find((n) => n === 'bench pick');
  const idle = find((n) => n === 'bench idle', pick?.ts);
  const listed = find((n) => n === 'page listed the files', pick?.ts);
  const received = find((n) => n === 'worker received a request', listed?.ts);
  if (!pick || !idle || !listed || !received) return [];
  const worker = received.tid;
  const page = pick.tid;
  const inWorker = all.filter((m) => m.tid === worker && m.ts >= received.ts && m.ts <= idle.ts);
  const reading = (n) => n.startsWith('reading ') && n.endsWith(' in the worker');
  const afterRead = inWorker.find((m) => !reading(m.name) && m.name !== 'worker received a request');
  const at = (name) => inWorker.find((m) => m.name === name);
  const matching = at('matching messages');
  const summarising = at('summarising');
  const matrix = at('building the matrix');
  const answering = at('worker answering');
  const answered = at('worker answered');
  // The page may take the answer before the worker's own mark after posting it.
  const got = find((n) => n === 'page received the trace', answering?.ts ?? received.ts);
  const points = [
    ['page: list the picked files', page, pick, listed],
    ['worker: start (spawn, load and compile the wasm)', worker, listed, received],
    ['worker: read the files (File to bytes in wasm memory, unpacking; an OTF2 folder decoded rank by rank as they arrive)', worker, received, afterRead],
    ['worker: parse', worker, afterRead, matching],
    ['worker: match messages', worker, matching, summarising],
    ['worker: summary', worker, summarising, matrix],
    ['worker: matrix', worker, matrix, answering],
    ['worker: encode and post the answer', worker, answering, answered],
    ['page: receive and decode the answer', page, answering, got],
    ['page: render and draw until idle', page, got, idle],
  ];
  return points
    .filter(([, , a, b]) => a && b && b.ts >= a.ts)
    .map(([stage, tid, a, b]) => ({ stage, thread: tid, from: a.ts, to: b.ts }));
}

/**
 * The profile summary of one load: total time between the bench's marks, each stage with its
 * wall time, the busy time of its thread and that thread's top functions in it, and per thread
 * the top `top` functions by self time over the whole load.
 */
export function summarise(events, top = 15) {
  const threads = threadProfiles(events);
  const all = marks(events);
  const stages = loadStages(all);
  const byTid = new Map(threads.map((t) => [t.tid, t]));
  const pick = all.find((m) => m.name === 'bench pick');
  const idle = all.find((m) => m.name === 'bench idle');
  const from = pick?.ts ?? -Infinity;
  const to = idle?.ts ?? Infinity;
  const label = (t) => (t.name === 'CrRendererMain' ? 'page (main thread)' : t.name === 'DedicatedWorker thread'
    ? `worker (tid ${t.tid})` : `${t.name} (tid ${t.tid})`);
  return {
    load_ms: pick && idle ? (idle.ts - pick.ts) / 1000 : null,
    stages: stages.map((s) => {
      const thread = byTid.get(s.thread);
      const own = thread ? selfTimes(thread, s.from, s.to) : { busy_ms: 0, functions: [] };
      return {
        stage: s.stage,
        ms: (s.to - s.from) / 1000,
        thread: thread ? label(thread) : `tid ${s.thread}`,
        busy_ms: own.busy_ms,
        top: own.functions.slice(0, 5),
      };
    }),
    threads: threads
      .map((t) => {
        const own = selfTimes(t, from, to);
        return { thread: label(t), busy_ms: own.busy_ms, top: own.functions.slice(0, top) };
      })
      .filter((t) => t.busy_ms >= 1)
      .sort((a, b) => b.busy_ms - a.busy_ms),
  };
}

/** `summary` (from [`summarise`]) as lines of text for a terminal. */
export function formatSummary(path, summary) {
  const f = (ms) => ms.toFixed(1).padStart(8);
  const lines = [`profile of ${path}: ${summary.load_ms?.toFixed(0)} ms from the pick until idle (under the profiler)`];
  lines.push('  stage                                                         wall ms  busy ms  thread');
  for (const s of summary.stages) {
    lines.push(`  ${s.stage.padEnd(60)} ${f(s.ms)} ${f(s.busy_ms)}  ${s.thread}`);
    for (const fn of s.top.slice(0, 3)) lines.push(`      ${f(fn.self_ms)}  ${fn.function.slice(0, 100)} [${fn.code}]`);
  }
  for (const t of summary.threads) {
    lines.push(`  ${t.thread}: ${t.busy_ms.toFixed(0)} ms busy; top functions by self time:`);
    for (const fn of t.top) lines.push(`    ${f(fn.self_ms)}  ${fn.function.slice(0, 110)} [${fn.code}]`);
  }
  return lines.join('\n');
}
