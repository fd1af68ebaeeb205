// Browser tests that the page shows the fields the analyses gained, as the CLI prints them: the
// Cartesian topology LAMMPS declared (dropped from tests/data/apps/lammps-melt-12), the grid hpcc's
// HPL declares by communicators and the phase it names (tests/data/apps/hpcc-4), the patterns
// hidden by default on a NAS MG skeleton of 64 ranks, each phase's topology label, and the logical
// view's program with sizes summarised and, with Exact sizes ticked, kept (LAMMPS melt 8), and
// the logical trace's choice between two placements (LAMMPS rigid 8).
// Expectations come from the CLI on the same files (harness.mjs; scripts/test-web sets the env).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp, root, cli, cliJson, sampleDir, drop, idle } from './harness.mjs';

const prefix = '/fidelity/views/';
let app;

before(async () => {
  app = await startApp(prefix);
});

after(async () => {
  await app?.close();
});

/** Open the empty page and drop `files` ({name, bytes}); resolves once the trace is on screen. */
async function dropFiles(files) {
  const s = await app.openPage(`${app.origin}${prefix}#sample=none`);
  const { page } = s;
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.waitForSelector('#dropzone', { timeout: 60_000 });
  await idle(page);
  await drop(page, files);
  await page.waitForSelector('#trace', { timeout: 120_000 });
  await idle(page, 300_000);
  return s;
}

const filesOf = (dir, keep = () => true) =>
  readdirSync(dir).filter(keep).sort().map((name) => ({ name, bytes: readFileSync(join(dir, name)) }));

async function show(page, view, ready) {
  await page.click(`#nav-${view}`);
  await page.waitForSelector(`#view-${view} ${ready}, #view-${view} .view-error`, { timeout: 300_000 });
  const failed = await page.$(`#view-${view} .view-error`);
  assert.equal(failed, null, failed && (await failed.textContent()));
}

test('the topology headline names the torus LAMMPS declared, as the CLI does', async () => {
  const dir = join(root, 'tests/data/apps/lammps-melt-12');
  const t = cliJson(['topology', dir]);
  assert.equal(t.name_as_declared, '2x2x3 torus', 'the run declares a 2x2x3 periodic grid (log.lammps: 2 by 2 by 3 MPI processor grid)');
  const s = await dropFiles(filesOf(dir, (n) => n.startsWith('dumpi')));
  const { page } = s;
  await show(page, 'topology', '#topology-label');
  assert.equal(await page.getAttribute('#topology-label', 'data-declared'), t.name_as_declared);
  assert.equal((await page.textContent('#topology-label')).trim(), t.name_as_declared);
  assert.equal(await page.getAttribute('#topology-label', 'data-label'), t.match.label);
  assert.equal((await page.textContent('#topology-declared-name')).trim(),
    `(declared by MPI_Cart_create; identified as ${t.match.label})`);
  const declared = await page.$$eval('#topology-declared .declared-summary', (li) => li.map((l) => l.textContent.trim()));
  assert.deepEqual(declared, t.declared.map((d) => `Declared: ${d.summary}`));
  await app.assertClean(s);
});

test('the patterns view lists the shown patterns and counts the hidden ones as the CLI does', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tracelogic-fidelity-'));
  const trace = join(dir, 'mg64.txt');
  execFileSync(cli, ['generate', '--nas', 'mg', '--ranks', '64', '--format', 'text', '--out', trace]);
  const p = cliJson(['patterns', trace]);
  assert.ok(p.hidden_patterns > 0, 'NAS MG on 64 ranks has patterns covering under 1 % of the events');
  const s = await dropFiles([{ name: 'mg64.txt', bytes: readFileSync(trace) }]);
  const { page } = s;
  await show(page, 'patterns', '#patterns-count');
  assert.equal(Number(await page.getAttribute('#patterns-hidden', 'data-hidden')), p.hidden_patterns);
  // The note says what the CLI's text says (the same words, from the engine).
  const line = execFileSync(cli, ['patterns', trace]).toString().split('\n').find((l) => l.includes(' more patterns covering '));
  assert.ok((await page.textContent('#patterns-hidden')).startsWith(line.replace(' (--all shows them)', '')), line);
  assert.equal(Number(await page.getAttribute('#patterns-count', 'data-value')), p.communication_patterns.length);
  const rows = () => page.$$eval('#patterns-table tr.pattern-row', (r) => r.map((x) => Number(x.dataset.pattern)));
  assert.deepEqual(await rows(), p.communication_patterns.slice(0, p.shown_patterns).map((x) => x.id));
  // The default selection is the pattern that explains most of the run.
  assert.match(await page.textContent('#pattern-heading'), new RegExp(`^Pattern #${p.communication_patterns[0].id}:`));
  assert.match(await page.textContent('#patterns-show-all'), new RegExp(`Show all ${p.communication_patterns.length}`));
  await page.click('#patterns-show-all');
  await page.waitForFunction((n) => document.querySelectorAll('#patterns-table tr.pattern-row').length === n,
    p.communication_patterns.length, { timeout: 30_000 });
  await app.assertClean(s);
});

test('each phase names its topology as the CLI does', async () => {
  const id = 'npb-lu.S.8';
  const ph = cliJson(['phases', sampleDir(id)]);
  const s = await app.openView(id, 'phases', '#phases-table');
  const { page } = s;
  const shown = await page.$$eval('#phases-table tr.phase-row td.phase-summary', (c) => c.map((x) => x.dataset.topology));
  assert.deepEqual(shown, ph.phases.map((x) => x.topology?.label ?? ''));
  assert.ok(shown.some((l) => l !== ''), 'LU exchanges point to point');
  assert.equal(Number(await page.getAttribute('#phases-merge', 'data-leaves')), ph.leaves);
  await app.assertClean(s);
});

test('the logical view says which operations lie outside the topology and keeps them as offsets, as the CLI does', async () => {
  // NAS MG S on 16 ranks (held-out OTF2 run): 8 ranks exchange two processes apart on the
  // coarsest levels, outside the identified torus; those peers are offsets, nothing is dropped.
  const dir = join(root, 'tests/data/apps/otf2-npb-mg.S.16');
  const doc = cliJson(['logical', dir]);
  const v = doc.verification;
  assert.ok(v.operations_as_offsets > 0 && v.ranks_with_offsets.length > 0);
  assert.equal(v.operations_outside_topology, 0);
  const line = execFileSync(cli, ['logical', dir], { encoding: 'utf8' }).split('\n').find((l) => l.startsWith('Structure: '));
  const s = await dropFiles(filesOf(dir, (n) => n === 'trace.tar.zst'));
  const { page } = s;
  await show(page, 'logical', '[data-stat="structure"]');
  const stat = '#view-logical [data-stat="structure"]';
  assert.equal(Number(await page.getAttribute(stat, 'data-offsets')), v.operations_as_offsets);
  assert.equal(Number(await page.getAttribute('#view-logical [data-stat="offsets"]', 'data-value')), doc.accuracy.offset_calls);
  assert.equal((await page.textContent(`${stat} dd`)).trim(), line.slice('Structure: '.length).replace(/\.$/, ''));
  await app.assertClean(s);
});

test('a grid declared by row and column communicators is listed, and names the phase that is it, as the CLI says', async () => {
  // hpcc on 4 ranks (tests/data/apps/hpcc-4): HPL's row and column communicators declare its
  // 2x2 grid (hpccinf.txt); its last phase, HPL, is exactly that grid.
  const dir = join(root, 'tests/data/apps/hpcc-4');
  const t = cliJson(['topology', dir]);
  const ph = cliJson(['phases', dir]);
  assert.ok(t.communicator_grids.length > 0, 'HPL declares its grid by communicators');
  assert.equal(ph.phases.at(-1).topology.label, '2x2 process grid (rows and columns)');
  const s = await dropFiles(filesOf(dir, (n) => n === 'dumpi.tar.zst'));
  const { page } = s;
  await show(page, 'topology', '#topology-label');
  const declared = await page.$$eval('#topology-declared .declared-summary', (li) => li.map((l) => l.textContent.trim()));
  assert.deepEqual(declared, [...t.declared, ...t.communicator_grids].map((d) => `Declared: ${d.summary}`));
  await show(page, 'phases', '#phases-table');
  const shown = await page.$$eval('#phases-table tr.phase-row td.phase-summary', (c) => c.map((x) => x.dataset.topology));
  assert.deepEqual(shown, ph.phases.map((x) => x.topology?.label ?? ''));
  await app.assertClean(s);
});

test('the stage boundaries of a LAMMPS input of three stages are marked in the phases table and its note, as the CLI marks them', async () => {
  // lammps-melt-phases-8: a minimisation and two runs, separated by the program's barriers
  // (docs/phases.md, step 6).
  const dir = join(root, 'tests/data/apps/lammps-melt-phases-8');
  const ph = cliJson(['phases', dir]);
  const stages = ph.phases.map((p) => String(Boolean(p.boundary?.stage)));
  const n = stages.filter((x) => x === 'true').length;
  assert.ok(n >= 2, 'a stage boundary between every two stages');
  const s = await dropFiles(filesOf(dir, (x) => x === 'dumpi.tar.zst'));
  const { page } = s;
  await show(page, 'phases', '#phases-table');
  const shown = await page.$$eval('#phases-table tr.phase-row td.phase-summary', (c) => c.map((x) => x.dataset.stage));
  assert.deepEqual(shown, stages);
  const marked = await page.$$eval('#phases-table tr.phase-row td.phase-summary', (c) =>
    c.filter((x) => x.textContent.includes('new stage: every rank met at a barrier')).length);
  assert.equal(marked, n);
  assert.match(await page.textContent('#phases-merge'), new RegExp(`; ${n} stage boundaries at a barrier every rank met\\)$`));
  await app.assertClean(s);
});

test('a logical trace built under two placements says which program was shorter, as the CLI does', async () => {
  // lammps-rigid-8: whether a swap sends depends on where the rigid bodies are, so the agreement
  // with sizes prefers the 2x2x2 mesh and the agreement of moves the 3-cube; both logical traces
  // are built and the shorter kept (docs/logical.md, Scoring).
  const dir = join(root, 'tests/data/apps/lammps-rigid-8');
  const l = cliJson(['logical', dir]);
  assert.ok(l.directions_from.contest, 'the run is contested');
  assert.ok(l.directions_from.contest.kept_length <= l.directions_from.contest.other_length);
  assert.match(l.directions_from.reason, /agreed better counting .*, but its program has \d+ records against \d+$/);
  const s = await dropFiles(filesOf(dir, (n) => n === 'dumpi.tar.zst'));
  const { page } = s;
  await show(page, 'logical', '#logical-topology');
  assert.equal(await page.textContent('#logical-topology'), l.topology.label);
  assert.equal(await page.textContent('#logical-directions-from'), `Directions from the ${l.directions_from.reason}`);
  await app.assertClean(s);
});

test('a run of collectives only: the logical view checks its collectives and compare rests on them, as the CLI does', async () => {
  // Elk on 4 ranks (tests/data/apps/elk-si-4, elk-al-4): k-point broadcasts, barriers and
  // reductions, no point-to-point message. The logical view's Structure and Volume are the
  // CLI's lines (each rank's collectives against rank 0's, not "exact" with nothing checked);
  // compare against Al gives the CLI's verdict on the runs' sequences of collectives.
  const si = join(root, 'tests/data/apps/elk-si-4');
  const al = join(root, 'tests/data/apps/elk-al-4');
  const lines = execFileSync(cli, ['logical', si], { encoding: 'utf8' }).split('\n');
  const line = (k) => lines.find((l) => l.startsWith(`${k}: `)).slice(k.length + 2).replace(/\.$/, '');
  assert.match(line('Structure'), /^no point-to-point call on any rank; collectives exact/);
  const pair = cliJson(['compare', si, al]);
  assert.equal(pair.verdict_on, 'collective-mix');
  const s = await dropFiles(filesOf(si, (n) => n === 'dumpi.tar.zst'));
  const { page } = s;
  await show(page, 'logical', '[data-stat="structure"]');
  assert.equal((await page.textContent('#view-logical [data-stat="structure"] dd')).trim(), line('Structure'));
  assert.equal((await page.textContent('#view-logical [data-stat="volume"] dd')).trim(), line('Volume'));
  await show(page, 'compare', '#compare-dropzone');
  await drop(page, filesOf(al, (n) => n === 'dumpi.tar.zst'), 'compare-dropzone');
  await page.waitForSelector('#compare-verdict', { timeout: 120_000 });
  assert.equal(await page.getAttribute('#compare-verdict', 'data-similar'), String(pair.similar));
  assert.equal((await page.textContent('#compare-verdict strong')).trim(), pair.verdict);
  await app.assertClean(s);
});

test('a one-way gather beside a ring exchange is set aside and the page says so, as the CLI does', async () => {
  // A generated 4-rank ring exchange (10 messages each way per pair) plus one message of
  // 40,000 bytes from rank 2 to rank 0 just before MPI_Finalize: as heavy as a ring pair in
  // bytes, so no byte cut separates it, one way and 10x fewer messages (docs/topology.md §1).
  const dir = mkdtempSync(join(tmpdir(), 'tracelogic-one-way-'));
  const ring = join(dir, 'ring4.txt');
  execFileSync(cli, ['generate', '--topology', 'ring:4', '--format', 'text', '--out', ring]);
  const lines = readFileSync(ring, 'utf8').split('\n');
  const finalize = (r) => lines.findIndex((l) => l.startsWith(`${r} `) && l.endsWith(' MPI_Finalize'));
  const at = Number(lines[finalize(2)].split(' ')[1]);
  for (const [r, call] of [[2, `MPI_Send send=0 tag=9 bytes=40000`], [0, `MPI_Recv recv=2 tag=9 bytes=40000`]]) {
    const i = finalize(r);
    lines.splice(i, 1, `${r} ${at} ${at + 600} ${call}`, `${r} ${at + 600} ${at + 1100} MPI_Finalize`);
    const span = lines.findIndex((l) => l.startsWith(`span ${r} `));
    lines[span] = `span ${r} 0 ${at + 1100}`;
  }
  const gathered = join(dir, 'ring4-gather.txt');
  writeFileSync(gathered, lines.join('\n'));
  const t = cliJson(['topology', gathered]);
  assert.equal(t.match.label, '4-node ring');
  assert.deepEqual(t.filter.one_way.pairs.map((p) => [p.from, p.to]), [[2, 0]]);
  const s = await dropFiles([{ name: 'ring4-gather.txt', bytes: readFileSync(gathered) }]);
  const { page } = s;
  await show(page, 'topology', '#topology-label');
  assert.equal(await page.getAttribute('#topology-label', 'data-label'), t.match.label);
  assert.equal(await page.getAttribute('#topology-one-way', 'data-pairs'), '1');
  const note = (await page.textContent('#topology-one-way')).trim();
  assert.match(note, /^One-way transfers set aside: 2→0 \(40000 B in 1 message\)/);
  assert.ok(note.endsWith(`with them the graph is a ${t.filter.one_way.with_them}.`), note);
  const text = execFileSync(cli, ['topology', gathered], { encoding: 'utf8' });
  assert.ok(text.includes(note), `the CLI prints the same line:\n${text}`);
  await app.assertClean(s);
});

test('a gap that would split one exchange into separate pairs is not cut, and the page says why, as the CLI does', async () => {
  // A generated 4-rank ring whose pairs 0-1 and 2-3 send 10x the bytes of pairs 1-2 and 3-0,
  // every pair as many messages (halo faces of other areas, docs/topology.md §1): cutting at
  // the 10x gap would leave two separate pairs.
  const dir = mkdtempSync(join(tmpdir(), 'tracelogic-size-split-'));
  const ring = join(dir, 'ring4.txt');
  execFileSync(cli, ['generate', '--topology', 'ring:4', '--format', 'text', '--out', ring]);
  const heavy = (a, b) => Math.floor(a / 2) === Math.floor(b / 2);
  const lines = readFileSync(ring, 'utf8').split('\n').map((l) => {
    const m = l.match(/^(\d+) .* (?:send|recv)=(\d+) .*bytes=4096/);
    return m && heavy(Number(m[1]), Number(m[2])) ? l.replace('bytes=4096', 'bytes=40960') : l;
  });
  const faces = join(dir, 'ring4-faces.txt');
  writeFileSync(faces, lines.join('\n'));
  const t = cliJson(['topology', faces]);
  assert.equal(t.match.label, '4-node ring');
  assert.equal(t.filter.size_split.groups, 2);
  const s = await dropFiles([{ name: 'ring4-faces.txt', bytes: readFileSync(faces) }]);
  const { page } = s;
  await show(page, 'topology', '#topology-label');
  assert.equal(await page.getAttribute('#topology-label', 'data-label'), t.match.label);
  const note = (await page.textContent('#topology-size-split')).trim();
  assert.match(note, /^Not cut at the 10\.0x gap in bytes: its 2 heaviest pairs would leave the ranks in 2 separate groups/);
  const text = execFileSync(cli, ['topology', faces], { encoding: 'utf8' });
  assert.ok(text.includes(note), `the CLI prints the same line:\n${text}`);
  await app.assertClean(s);
});

test('the logical view keeps every message size when Exact sizes is ticked, as the CLI with --exact-sizes', async () => {
  // LAMMPS melt on 8 ranks (tests/data/apps/lammps-melt-8): ghost-atom exchanges whose sizes
  // change from step to step are summarised by default (`~mean [min..max, n×]`) and kept with
  // the box ticked. The page's program calls are the CLI's program lines in both cases.
  const dir = join(root, 'tests/data/apps/lammps-melt-8');
  const calls = (args) => {
    const text = execFileSync(cli, ['logical', dir, '--compress', ...args], { encoding: 'utf8' });
    return text.slice(text.indexOf('\n\n') + 2).split('\n').map((l) => l.trim())
      .filter((l) => l && l !== '[' && !l.startsWith(']^'));
  };
  const summarised = calls([]);
  const exact = calls(['--exact-sizes']);
  assert.ok(summarised.some((l) => /×\]/.test(l)), 'some sizes are summarised by default');
  assert.ok(!exact.some((l) => /×\]/.test(l)), 'none with --exact-sizes');
  const s = await dropFiles(filesOf(dir, (n) => n === 'dumpi.tar.zst'));
  const { page } = s;
  await show(page, 'logical', '#logical-program li.call');
  const shown = () => page.$$eval('#logical-program li.call code', (c) => c.map((x) => x.textContent.trim()));
  assert.deepEqual(await shown(), summarised);
  assert.equal(await page.isChecked('#logical-exact-sizes'), false);
  await page.click('#logical-exact-sizes');
  // The answer of the new request replaces the program: no call summarised any more.
  await page.waitForFunction(() => {
    const codes = [...document.querySelectorAll('#logical-program li.call code')];
    return codes.length > 0 && !codes.some((c) => /×\]/.test(c.textContent));
  }, null, { timeout: 300_000 });
  await idle(page);
  assert.equal(await page.isChecked('#logical-exact-sizes'), true);
  assert.deepEqual(await shown(), exact);
  await app.assertClean(s);
});

test('a master-worker run: the page names it, draws its masters above its workers and measures imbalance among the workers, as the CLI', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tracelogic-master-worker-'));
  const trace = join(dir, 'mw8.txt');
  execFileSync(cli, ['generate', '--topology', 'master-worker:2x8', '--numbering', 'random', '--seed', '4',
    '--iterations', '30', '--imbalance', '0.5', '--format', 'text', '--out', trace]);
  const t = cliJson(['topology', trace]);
  assert.equal(t.match.label, '8-node master-worker (2 masters, 6 workers)');
  const masters = t.mapping.filter((p) => p.node < 2).map((p) => p.rank).sort((a, b) => a - b);
  const ph = cliJson(['phases', trace]);
  const withMasters = ph.phases.filter((p) => p.imbalance && (p.imbalance.left_out ?? []).length > 0);
  assert.ok(withMasters.length > 0, 'the CLI leaves the masters out of a phase imbalance');
  assert.deepEqual(withMasters[0].imbalance.left_out, masters);
  const s = await dropFiles([{ name: 'mw8.txt', bytes: readFileSync(trace) }]);
  const { page } = s;
  await show(page, 'topology', '#topology-label');
  assert.equal(await page.getAttribute('#topology-label', 'data-label'), t.match.label);
  const cy = await page.$$eval('#view-topology g[data-rank] circle', (cs) =>
    cs.map((c) => [Number(c.parentElement.dataset.rank), Number(c.getAttribute('cy'))]));
  const workersTop = Math.min(...cy.filter(([r]) => !masters.includes(r)).map(([, y]) => y));
  for (const [r, y] of cy.filter(([r]) => masters.includes(r))) {
    assert.ok(y < workersTop, `master ${r} drawn above the workers (${y} < ${workersTop})`);
  }
  await show(page, 'phases', '#phases-table');
  const cells = await page.$$eval('#phases-table td.phase-imbalance', (tds) => tds.map((td) => td.textContent));
  assert.ok(cells.some((c) => c.includes(`among workers (masters ${masters.join(', ')} apart)`)), cells.join(' | '));
  // The whole run's load imbalance (critical path section) leaves the same masters out.
  const cp = cliJson(['critical-path', trace]);
  assert.deepEqual(cp.imbalance.left_out, masters);
  await show(page, 'waits', '#critical-path');
  assert.equal(Number(await page.getAttribute('#cp-imbalance', 'data-ratio')).toFixed(9), cp.imbalance.ratio.toFixed(9));
  assert.ok((await page.textContent('#cp-imbalance')).startsWith(`Load imbalance among workers (masters ${masters.join(', ')} apart):`));
  assert.equal(await page.textContent('#cp-relation'), cp.relation);
  await app.assertClean(s);
});
