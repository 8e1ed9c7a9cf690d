// The benchmark suite at tiny sizes: one run of `bench/index.js --peers` on a disk and a tmpfs
// directory, and on a small corpus, writes a JSON report holding every expected trial and driver
// with its figures (or the reason it was skipped), Bun's, Deno's and the C loop's among them
// (verified and timed in their own processes, cold trials included), with the comparisons
// against them worked out, a Markdown report with the same tables, and an SVG chart that is
// well-formed XML with one bar per driver ratio of the JSON. And the eviction check of the cold
// trials: a cold round starts with every file out of the page cache, and the check fails where
// pages cannot be dropped. And the tree trial's files: the same on every run, made once and
// reused, made again when damaged.
'use strict';
const { test, describe, before } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { engineInfo, pageCacheResidency } = require('smartread');
const {
  checkNoFdLeak, useTempDirs, makeTempDir, runToEnd, strategyUnavailableReason, setUpAsyncEngines, writePattern,
} = require('./helpers');
const { trialsFor, treeSpec, treeDir } = require('../bench/trials');
const { PEER_RUNTIMES } = require('../bench/peers');
const { targetHeading } = require('../bench/report');
const { MIN_SHARE_TICKS } = require('../bench/resources');

setUpAsyncEngines();
checkNoFdLeak({ spawnsChildren: true });
const tempDirs = useTempDirs();

const native = engineInfo().engine === 'native';
const uringReason = strategyUnavailableReason('uring');

const FILES = 4;
const TREE = 10;
// What the run below must report: its trials, and for each shape and cache state the drivers,
// in the bench's order. readMany auto ×256 is not among them: the trials have fewer files.
const TRIALS = ['warm-4k', 'warm-4k+consume', `warm-${FILES}x4k`, `warm-tree${TREE}`, 'cold-4k', `cold-${FILES}x4k`];
const CORPUS_TRIALS = ['warm-corpus', 'cold-corpus'];
const PEER_DRIVERS = {
  'warm file': ['Bun readFileSync', 'Bun fs.promises.readFile', 'Bun.file().bytes()', 'Bun new Buffer + copy (no read)', 'Deno.readFileSync',
    'Deno.readFile', 'C read', 'C read, every CPU', 'C io_uring'],
  'cold file': ['Bun fs.promises.readFile', 'Bun.file().bytes()', 'Deno.readFile', 'C read', 'C io_uring'],
  'warm files': ['Bun readFileSync loop', 'Bun fs.promises.readFile ×64', 'Bun.file().bytes() ×64', 'Deno.readFileSync loop',
    'Deno.readFile ×64', 'C read loop', 'C read, every CPU'],
  'cold files': ['Bun fs.promises.readFile ×64', 'Bun.file().bytes() ×64', 'Deno.readFile ×64', 'C read loop', 'C io_uring ×64'],
};
const DRIVERS = {
  'warm file': ['fs.readFileSync', 'smartReadSync', 'fs.promises.readFile', 'fs.readFile (callback)', 'smartRead auto',
    'smartRead auto, metrics counting', 'smartRead auto, metrics off', 'smartReadSync, awaited',
    'smartRead uring', 'smartRead threadpool', 'mapFile', 'smartRead mmap', 'new Buffer + copy (no read)', ...PEER_DRIVERS['warm file']],
  'cold file': ['fs.readFileSync', 'fs.promises.readFile', 'smartRead auto', 'smartRead uring', 'smartRead threadpool',
    ...PEER_DRIVERS['cold file']],
  'warm files': ['fs.readFileSync loop', 'smartReadSync loop', 'smartReadSync loop, awaited', 'fs.promises.readFile ×64', 'fs.readFile ×64 (callback)',
    'smartRead auto ×64', 'readMany auto ×64', 'readMany uring ×64', 'readMany threadpool ×64', ...PEER_DRIVERS['warm files']],
  'cold files': ['fs.readFileSync loop', 'fs.promises.readFile ×64', 'readMany auto ×64', 'readMany uring ×64',
    'readMany threadpool ×64', ...PEER_DRIVERS['cold files']],
};
const BASELINES = new Set(['fs.readFileSync', 'fs.readFileSync loop']);
const REFERENCES = new Set(['fs.promises.readFile', 'fs.promises.readFile ×64']);
const ASYNC = /promises|callback|smartRead |readMany|awaited|Bun\.file|Deno\.readFile($| )/;

/** Which peer a driver is of, by its name, or null for Node's and smartread's. */
const peerOf = (name) => /^(Bun|Deno)[ .]|^(C) /.exec(name)?.slice(1).find(Boolean) ?? null;

// A trial that consumes every byte has the drivers that only consume too: Node's after
// smartread's own, Bun's after Bun's readers.
const CONSUME_ONLY = {
  after: 'new Buffer + copy (no read)', name: 'consume only (no read)',
  peerAfter: 'Bun new Buffer + copy (no read)', peerName: 'Bun consume only (no read)',
};
const expectedDrivers = (trial) => {
  const drivers = DRIVERS[`${trial.cold ? 'cold' : 'warm'} ${trial.files === 1 ? 'file' : 'files'}`];
  if (!trial.name.endsWith('+consume') || trial.files !== 1) return drivers;
  return drivers.flatMap((name) => name === CONSUME_ONLY.after ? [name, CONSUME_ONLY.name]
    : name === CONSUME_ONLY.peerAfter ? [name, CONSUME_ONLY.peerName] : [name]);
};

// The corpus: a few files in a small tree, with a link that is not read.
const CORPUS_FILES = { 'a/empty': 0, 'b/c/deep.js': 300, 'b/readme.md': 1500, 'top.json': 5000 };

/** Why a peer's drivers may be skipped in this run (its runtime could not be set up), or null. */
let peerSkips = new Map();
let cDriverHasUring = false;

/** Why a driver may be skipped in this process, or null when it must run. */
function allowedSkip(name) {
  // The C driver's io_uring reader is built where pkg-config finds liburing.
  if (name.startsWith('C io_uring')) return peerSkips.get('C') ?? (cDriverHasUring ? null : 'the C driver was built without liburing');
  if (/uring/.test(name)) return uringReason;
  const peer = peerOf(name);
  return peer ? peerSkips.get(peer) ?? null : null;
}

/**
 * The first way `text` is not well-formed XML (one root element, tags closed in order, quoted
 * attributes, no bare '&' or '<'), or null. Enough for the chart, which uses no CDATA, comments
 * or DTD.
 */
function xmlProblem(text) {
  const entity = /&(?:amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);/g;
  const bareAmpersand = (s) => /&/.test(s.replace(entity, ''));
  const body = text.replace(/^<\?xml[^?]*\?>\s*/, '');
  const tag = /<(\/?)([A-Za-z][\w.:-]*)((?:\s+[\w.:-]+="[^"<]*")*)\s*(\/?)>/y;
  const stack = [];
  let roots = 0;
  let i = 0;
  while (i < body.length) {
    if (body[i] !== '<') {
      const end = body.indexOf('<', i) === -1 ? body.length : body.indexOf('<', i);
      const chars = body.slice(i, end);
      if (stack.length === 0 && chars.trim() !== '') return `text outside the root element at ${i}`;
      if (bareAmpersand(chars)) return `bare '&' in text at ${i}`;
      i = end;
      continue;
    }
    tag.lastIndex = i;
    const m = tag.exec(body);
    if (!m) return `malformed tag at ${i}: ${body.slice(i, i + 60)}`;
    const [whole, closing, name, attributes, selfClosing] = m;
    if (bareAmpersand(attributes)) return `bare '&' in the attributes of <${name}> at ${i}`;
    if (closing) {
      if (selfClosing || attributes) return `malformed closing tag at ${i}`;
      const open = stack.pop();
      if (open !== name) return `</${name}> at ${i} closes <${open}>`;
    } else {
      if (stack.length === 0 && ++roots > 1) return `a second root element <${name}> at ${i}`;
      if (!selfClosing) stack.push(name);
    }
    i += whole.length;
  }
  if (stack.length > 0) return `unclosed <${stack.at(-1)}>`;
  return roots === 1 ? null : 'no root element';
}

const unescapeXml = (s) => s.replace(/&(amp|lt|gt|quot|apos);/g, (_, e) => ({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" })[e]);

describe('a bench run at tiny sizes', () => {
  let outDir;
  let corpusDir;
  let run;
  let reports;
  before(async () => {
    outDir = makeTempDir(tempDirs.disk, 'results-');
    corpusDir = makeTempDir(tempDirs.disk, 'corpus-');
    for (const [file, size] of Object.entries(CORPUS_FILES)) {
      fs.mkdirSync(path.dirname(path.join(corpusDir, file)), { recursive: true });
      writePattern(path.join(corpusDir, file), size);
    }
    fs.symlinkSync(path.join(corpusDir, 'top.json'), path.join(corpusDir, 'b', 'link.json'));
    const filter = `^(${[...TRIALS, ...CORPUS_TRIALS].map((t) => t.replace(/\+/g, '\\+')).join('|')})$`;
    // --peers installs Bun and Deno into the bench's cache on first use (a few seconds), then
    // reuses them.
    run = await runToEnd(process.execPath, [
      'bench/index.js', '--full', '--peers', '--dir', tempDirs.disk, ...(tempDirs.tmpfs ? ['--dir', tempDirs.tmpfs] : []),
      '--sizes', '4k', '--files', String(FILES), '--tree', String(TREE), '--corpus', corpusDir, '--time', '1', '--rounds', '1',
      '--filter', filter, '--out', outDir,
    ], { timeoutMs: 120000 });
    const files = fs.readdirSync(outDir).sort();
    reports = { files };
    for (const [kind, ext] of [['json', '.json'], ['markdown', '.md'], ['svg', '.svg']]) {
      const file = files.find((f) => f.endsWith(ext));
      if (file) reports[kind] = { name: file, text: fs.readFileSync(path.join(outDir, file), 'utf8') };
    }
    if (reports.json) {
      peerSkips = new Map((JSON.parse(reports.json.text).peers?.runtimes ?? [])
        .filter((r) => r.available !== true).map((r) => [r.name, r.available]));
      cDriverHasUring = (JSON.parse(reports.json.text).peers?.runtimes ?? []).some((r) => r.name === 'C' && r.uring === true);
    }
  });

  test('exits with 0 and writes DATE-HOST.json, .md and .svg into --out', () => {
    assert.equal(run.timedOut, false, 'the run finished within 120 s');
    assert.equal(run.code, 0, `exit code; stderr:\n${run.stderr.slice(-3000)}`);
    assert.equal(reports.files.length, 3, `files: ${reports.files.join(', ')}`);
    const bases = new Set(reports.files.map((f) => f.replace(/\.(json|md|svg)$/, '')));
    assert.equal(bases.size, 1, `one base name: ${[...bases].join(', ')}`);
    assert.match([...bases][0], new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\d\\d-\\d\\d-\\d\\dZ-${require('node:os').hostname()}$`));
    assert.match(run.stdout, /median µs +p99 µs +ops\/s +MB\/s +vs sync +vs promises +loop max\/p99 ms +GC max ms +peak RSS MB +faults\/op/);
  });

  test('the JSON report holds every trial on every target, and every driver measured or skipped with a reason', () => {
    const doc = JSON.parse(reports.json.text);
    assert.equal(doc.format, 'smartread-bench/3');
    assert.equal(doc.machine.node, process.version);
    assert.deepEqual([doc.options.inProcess, doc.runner?.runtime, doc.runner?.version], [false, 'node', process.versions.node]);
    assert.ok(doc.machine.cpu && doc.machine.cores > 0 && doc.machine.kernel && doc.machine.hostname, 'machine described');
    // The idle loop's floor: watched for 20 rounds of 1 ms here, with the stalls it saw.
    assert.equal(doc.loopFloor.durationMs, 20);
    assert.ok(doc.loopFloor.stretches === 1 && doc.loopFloor.intervals > 0 && doc.loopFloor.maxMs >= doc.loopFloor.p99Ms, JSON.stringify(doc.loopFloor));
    assert.match(run.stdout, /loop: +an idle event loop, watched for 0.02 s before the trials, stalled up to/);
    assert.deepEqual(doc.targets.map((t) => t.dir), [tempDirs.disk, ...(tempDirs.tmpfs ? [tempDirs.tmpfs] : []), corpusDir]);
    for (const target of doc.targets) {
      const onTmpfs = target.dir === tempDirs.tmpfs;
      assert.equal(target.fsType === 'tmpfs', onTmpfs, `${target.dir}: fsType ${target.fsType}`);
      assert.ok(target.device && target.device.kind, `${target.dir}: device described`);
      assert.deepEqual(target.trials.map((t) => t.name), target.dir === corpusDir ? CORPUS_TRIALS : TRIALS, `${target.dir}: trials`);
      for (const trial of target.trials) {
        const where = `${target.dir} ${trial.name}`;
        if (trial.cold && (onTmpfs || !native)) {
          assert.match(trial.skipped, native ? /tmpfs/ : /native addon/, `${where}: skipped with the reason`);
          continue;
        }
        assert.equal(trial.skipped, undefined, `${where}: not skipped`);
        assert.deepEqual(trial.drivers.map((d) => d.name), expectedDrivers(trial), `${where}: drivers`);
        for (const d of trial.drivers) {
          const what = `${where} ${d.name}`;
          assert.equal(d.error, undefined, `${what}: no error`);
          if (d.skipped !== undefined) {
            assert.ok(allowedSkip(d.name), `${what}: skipped (${d.skipped}) though it is available here`);
            assert.match(d.skipped, /\S/, `${what}: skipped with a reason`);
            continue;
          }
          assert.equal(d.baseline, BASELINES.has(d.name), `${what}: baseline`);
          assert.equal(d.reference, REFERENCES.has(d.name), `${what}: reference`);
          assert.equal(d.peer, peerOf(d.name), `${what}: peer`);
          // Node's drivers of one file or many are timed in the runner, a process of their own.
          assert.equal(d.timedIn, d.peer ? 'peer' : trial.shape === 'random' ? 'bench' : 'runner', `${what}: timed in`);
          assert.ok(d.samples >= 1 && d.medianUs > 0 && d.p99Us >= d.medianUs && d.meanUs > 0, `${what}: latencies`);
          assert.ok(Math.abs(d.opsPerSec - 1e6 / d.meanUs) < 1e-6 * d.opsPerSec, `${what}: ops/s is 1 / mean`);
          assert.ok(Math.abs(d.mbPerSec - (trial.bytes * d.opsPerSec) / 1e6) < 1e-6 * d.mbPerSec, `${what}: MB/s`);
          assert.equal(d.percentilesUs.length, 101, `${what}: percentiles 0-100`);
          assert.ok(Math.abs(d.percentilesUs[50] - d.medianUs) <= 1e-4 * d.medianUs, `${what}: p50 is the median`);
          const base = trial.drivers.find((b) => b.baseline);
          const reference = trial.drivers.find((r) => r.reference);
          assert.ok(Math.abs(d.ratio - d.opsPerSec / base.opsPerSec) < 1e-9, `${what}: ratio to the baseline`);
          assert.ok(Math.abs(d.ratioToReference - d.opsPerSec / reference.opsPerSec) < 1e-9, `${what}: ratio to the reference`);
          assert.equal(d.rounds.length, 1, `${what}: one round`);
          assert.ok(d.resources.peakRssBytes > 0 && d.resources.operations >= d.samples, `${what}: resources`);
          assert.ok(d.resources.faultsPerOperation >= 0, `${what}: faults per operation`);
          // CPU ticks are counted over a cold run's operations (none may have been long enough
          // for a tick), with no daemon on a disk; the reader's share only over enough ticks.
          if (!trial.cold) assert.equal(d.cpu, null, `${what}: no CPU figures warm`);
          else if (d.cpu !== null) {
            assert.ok(d.cpu.ticks > 0 && d.cpu.busy >= 0 && d.cpu.busy <= 1, `${what}: ${JSON.stringify(d.cpu)}`);
            if (d.cpu.ticks < MIN_SHARE_TICKS) assert.equal(d.cpu.reader, null, `${what}: ${JSON.stringify(d.cpu)}`);
            else assert.ok(d.cpu.reader >= 0 && d.cpu.reader <= 1, `${what}: ${JSON.stringify(d.cpu)}`);
            assert.equal(d.cpu.daemon, null, `${what}: no daemon`);
          }
          if (ASYNC.test(d.name)) {
            assert.equal(d.async, true, `${what}: async`);
            assert.ok(d.loopStall && d.loopStall.maxMs >= d.loopStall.p99Ms && d.loopStall.intervals >= 0, `${what}: loop stall`);
            // Node's drivers report V8's pauses too (Bun and Deno have no 'gc' entries).
            if (d.timedIn !== 'peer') {
              assert.ok(d.loopStall.gcMaxMs >= 0 && Number.isInteger(d.loopStall.gcPauses), `${what}: GC pauses ${JSON.stringify(d.loopStall)}`);
            }
          } else if (d.name === 'C read, every CPU') {
            // The C driver's watcher thread beside its readers: no V8, so no GC figures.
            assert.ok(d.loopStall && d.loopStall.intervals >= 1, `${what}: the watcher's stalls`);
            assert.ok(d.loopStall.maxMs >= d.loopStall.p99Ms && d.loopStall.p99Ms >= 0, `${what}: the watcher's max and p99`);
            assert.equal(d.loopStall.gcMaxMs, null, `${what}: no GC pauses in C`);
          } else {
            assert.equal(d.loopStall, null, `${what}: no loop stall for a sync driver`);
          }
        }
      }
    }
  });

  test('the Markdown report has a heading and a table row for every driver of every target', () => {
    const doc = JSON.parse(reports.json.text);
    const md = reports.markdown.text;
    assert.match(md, /^# smartread bench, /);
    assert.ok(md.includes(`](${reports.svg.name})`), 'links the chart');
    const sections = md.split(/^## /m).slice(1);
    assert.equal(sections.length, doc.targets.length, 'a section per target');
    doc.targets.forEach((target, i) => {
      const section = sections[i];
      assert.ok(section.startsWith(`${targetHeading(target)}\n`), `section ${i} is ${target.dir}`);
      assert.match(section, /^\| trial \| driver \| median µs \| p99 µs \| ops\/s \| MB\/s \| vs sync \| vs promises \|/m);
      const [table, comparisons = ''] = section.split(/^Comparisons: /m);
      const rows = table.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| trial '));
      const expectedRows = target.trials.reduce((n, t) => n + (t.skipped ? 1 : t.drivers.length), 0);
      assert.equal(rows.length, expectedRows, `${target.dir}: rows`);
      for (const trial of target.trials.filter((t) => !t.skipped)) {
        for (const d of trial.drivers.filter((x) => x.ratio !== undefined)) {
          assert.ok(rows.some((r) => r.includes(`| ${d.name} |`) && r.includes(`${d.ratio.toFixed(2)}×`)), `${target.dir} ${trial.name}: a row for ${d.name}`);
        }
        // Each comparison: a row named by it, a column for the trial, the ratio in it.
        const comparisonRows = comparisons.split('\n').filter((l) => l.startsWith('| '));
        for (const c of trial.comparisons) {
          const header = comparisonRows.find((r) => r.startsWith(`| comparison (${trial.shape === 'file' ? 'one file' : 'many files'})`) && r.includes(`| ${trial.name} |`));
          assert.ok(header, `${target.dir} ${trial.name}: a column in the comparisons`);
          const column = header.split(' | ').findIndex((cell) => cell.replace(/ \|$/, '') === trial.name);
          const row = comparisonRows.find((r) => r.startsWith(`| ${c.label} |`) && r.split(' | ')[column]?.startsWith(`${c.ratio.toFixed(2)}×`));
          assert.ok(row, `${target.dir} ${trial.name}: ${c.label} ${c.ratio.toFixed(2)}×`);
        }
      }
    });
  });

  test('the corpus is a target of its own, read in place: its files and bytes counted, links left out, nothing written there', () => {
    const doc = JSON.parse(reports.json.text);
    const target = doc.targets.find((t) => t.dir === corpusDir);
    const bytes = Object.values(CORPUS_FILES).reduce((a, b) => a + b, 0);
    assert.equal(target.label, 'corpus');
    assert.deepEqual(target.corpus, { files: 4, bytes });
    for (const trial of target.trials.filter((t) => !t.skipped)) {
      assert.equal(trial.files, 4, trial.name);
      assert.equal(trial.bytes, bytes, trial.name);
    }
    assert.deepEqual(fs.readdirSync(corpusDir).sort(), ['a', 'b', 'top.json']);
    assert.match(run.stdout, new RegExp(`corpus: ${corpusDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(4 files, `));
  });

  test('Bun, Deno and the C loop ran as drivers, in their own processes, cold trials included; their versions are in the report', (t) => {
    const doc = JSON.parse(reports.json.text);
    assert.equal(doc.options.peers, true);
    assert.deepEqual(doc.peers.runtimes.map((r) => r.name), ['Bun', 'Deno', 'C']);
    assert.ok(path.isAbsolute(doc.peers.cacheDir) && doc.peers.setupMs > 0, JSON.stringify(doc.peers));
    assert.match(run.stdout, /^peers: +/m);
    const skips = [];
    for (const runtime of doc.peers.runtimes) {
      if (runtime.available !== true) {
        assert.match(run.stdout, new RegExp(`${runtime.name} skipped \\(`));
        skips.push(`${runtime.name}: ${runtime.available}`);
        continue;
      }
      const pinned = PEER_RUNTIMES.find((r) => r.name === runtime.name);
      if (pinned) {
        assert.equal(runtime.version, pinned.version, `${runtime.name}'s version`);
        assert.match(run.stdout, new RegExp(`${runtime.name} ${pinned.version.replace(/\./g, '\\.')} \\(npm `));
      } else {
        assert.match(runtime.compilerVersion, /\S/, 'the C compiler named');
      }
      // Measured in every trial that has its drivers, the cold ones on disk too.
      const measured = doc.targets.flatMap((target) => target.trials.filter((tr) => !tr.skipped)
        .filter((tr) => tr.drivers.some((d) => d.peer === runtime.name && d.medianUs > 0)).map((tr) => `${target.dir} ${tr.name}`));
      const expected = doc.targets.flatMap((target) => target.trials.filter((tr) => !tr.skipped)
        .filter((tr) => PEER_DRIVERS[`${tr.cold ? 'cold' : 'warm'} ${tr.files === 1 ? 'file' : 'files'}`].some((n) => peerOf(n) === runtime.name))
        .map((tr) => `${target.dir} ${tr.name}`));
      assert.deepEqual(measured, expected, `${runtime.name}: the trials it was measured in`);
      if (native) assert.ok(measured.some((m) => m.includes('cold-')), `${runtime.name}: a cold trial`);
    }
    if (skips.length > 0) t.skip(`not set up here: ${skips.join('; ')}`);
  });

  test('every trial has its comparisons with the peers worked out: the ratio to the best of the readers named', () => {
    const doc = JSON.parse(reports.json.text);
    const byName = (trial, name) => trial.drivers.find((d) => d.name === name && d.medianUs > 0);
    let checked = 0;
    for (const target of doc.targets) {
      for (const trial of target.trials.filter((t) => !t.skipped)) {
        for (const c of trial.comparisons) {
          const subject = byName(trial, c.subject);
          const best = byName(trial, c.best);
          assert.ok(subject && best, `${trial.name} ${c.label}: both measured`);
          assert.ok(Math.abs(c.ratio - subject.opsPerSec / best.opsPerSec) < 1e-9, `${trial.name} ${c.label}: the ratio`);
          assert.equal(c.rounds.length, 1, `${trial.name} ${c.label}: per round`);
          checked++;
        }
        // The best of Bun's async readers is the one with the most ops/s.
        const bunAsync = trial.comparisons.find((c) => c.label === 'smartRead auto ÷ Bun best async');
        if (bunAsync) {
          const candidates = ['Bun fs.promises.readFile', 'Bun.file().bytes()'].map((n) => byName(trial, n)).filter(Boolean);
          assert.equal(bunAsync.best, candidates.reduce((a, b) => (b.opsPerSec > a.opsPerSec ? b : a)).name);
        }
        const expectedLabels = [];
        if (byName(trial, 'smartReadSync') && byName(trial, 'Bun readFileSync')) expectedLabels.push('smartReadSync ÷ Bun readFileSync');
        if (byName(trial, 'consume only (no read)') && byName(trial, 'Bun readFileSync')) {
          expectedLabels.push('consume only (no read) ÷ Bun readFileSync');
          // Only the +consume trials have them, one of each runtime.
          assert.ok(trial.name.endsWith('+consume'), `${trial.name}: consume only`);
          assert.ok(byName(trial, 'Bun consume only (no read)'), `${trial.name}: Bun's consume only`);
          expectedLabels.push('consume only (no read) ÷ Bun consume only (no read)');
        }
        if (byName(trial, 'readMany auto ×64') && byName(trial, 'smartReadSync loop')) expectedLabels.push('readMany auto ×64 ÷ smartReadSync loop');
        if (byName(trial, 'readMany auto ×64') && byName(trial, 'C read loop')) expectedLabels.push('readMany auto ×64 ÷ C read loop');
        if (byName(trial, 'readMany auto ×64') && byName(trial, 'C read, every CPU')) expectedLabels.push('readMany auto ×64 ÷ C read, every CPU');
        if (byName(trial, 'smartRead auto') && byName(trial, 'C read, every CPU')) expectedLabels.push('smartRead auto ÷ C read, every CPU');
        if (byName(trial, 'smartRead auto') && byName(trial, 'C io_uring')) expectedLabels.push('smartRead auto ÷ C io_uring');
        if (byName(trial, 'C io_uring') && byName(trial, 'C read')) expectedLabels.push('C io_uring ÷ C read');
        if (byName(trial, 'smartRead auto') && byName(trial, 'smartReadSync, awaited')) {
          expectedLabels.push('smartRead auto ÷ smartReadSync, awaited', 'smartReadSync, awaited ÷ fs.readFileSync');
        }
        if (byName(trial, 'readMany auto ×64') && byName(trial, 'smartReadSync loop, awaited')) {
          expectedLabels.push('readMany auto ×64 ÷ smartReadSync loop, awaited', 'smartReadSync loop, awaited ÷ smartReadSync loop');
        }
        for (const label of expectedLabels) assert.ok(trial.comparisons.some((c) => c.label === label), `${target.dir} ${trial.name}: ${label}`);
      }
    }
    assert.ok(checked > 0, 'some comparisons');
    assert.match(run.stdout, /^Comparisons: /m);
  });

  test('the SVG chart is well-formed XML with one bar per driver ratio and a legend entry per charted driver', () => {
    const doc = JSON.parse(reports.json.text);
    const svg = reports.svg.text;
    assert.equal(xmlProblem(svg), null, 'well-formed');
    assert.match(svg, /<svg xmlns="http:\/\/www.w3.org\/2000\/svg" width="\d+" height="\d+"/);
    const attribute = (tag, name) => unescapeXml(new RegExp(` ${name}="([^"]*)"`).exec(tag)[1]);
    const bars = [...svg.matchAll(/<rect class="bar"[^>]*>/g)].map(([tag]) => ({
      target: attribute(tag, 'data-target'),
      trial: attribute(tag, 'data-trial'),
      driver: attribute(tag, 'data-driver'),
      ratio: Number(attribute(tag, 'data-ratio')),
      height: Number(attribute(tag, 'height')),
    }));
    const expected = doc.targets.flatMap((t) => t.trials.filter((tr) => !tr.skipped).flatMap((tr) => tr.drivers
      .filter((d) => !d.baseline && typeof d.ratio === 'number')
      .map((d) => ({ target: t.dir, trial: tr.name, driver: d.name, ratio: Number(d.ratio.toFixed(4)) }))));
    assert.ok(expected.length > 0, 'the run has ratios to chart');
    assert.deepEqual(bars.map(({ height, ...bar }) => bar), expected);
    assert.ok(bars.every((b) => b.height >= 1), 'every bar is visible');
    const legend = [...svg.matchAll(/<g class="legend-item">.*?<text[^>]*>([^<]*)<\/text><\/g>/g)].map((m) => unescapeXml(m[1]));
    assert.deepEqual(legend.sort(), [...new Set(expected.map((b) => b.driver))].sort());
    // A peer's bar is outlined and says whose it is.
    for (const [tag] of svg.matchAll(/<rect class="bar"[^>]*>/g)) {
      const peer = peerOf(attribute(tag, 'data-driver'));
      assert.equal(/ data-peer="/.test(tag) ? attribute(tag, 'data-peer') : null, peer, tag);
      assert.equal(/ stroke="/.test(tag), peer !== null, tag);
    }
  });
});

describe('the eviction check of cold trials', () => {
  const coldTrials = trialsFor([64 * 1024], { cold: true, manyFiles: 6, treeFiles: 8 }).filter((t) => t.cold);

  for (const trial of coldTrials) {
    test(`${trial.name}: a round starts with none of the files' pages in memory`, (t) => {
      if (!native) {
        t.skip(`eviction needs the native addon (${engineInfo().reason})`);
        return;
      }
      const target = { realpath: tempDirs.disk, fsType: 'ext4' };
      assert.equal(trial.unavailable(target), null);
      const ctx = trial.setup(tempDirs.disk, target);
      try {
        for (const file of ctx.paths) fs.readFileSync(file);
        const total = ctx.paths.reduce((n, file) => n + fs.statSync(file).size, 0);
        const cachedNow = () => ctx.paths.reduce((n, file) => n + pageCacheResidency(file).cached, 0);
        assert.equal(cachedNow(), total, 'every page cached after a read');
        trial.beforeEach(ctx, true);
        assert.equal(cachedNow(), 0, 'nothing cached at the start of a round');
        // The operations after a round's first check a sample, but still evict every file.
        for (const file of ctx.paths) fs.readFileSync(file);
        trial.beforeEach(ctx, false);
        assert.equal(cachedNow(), 0, 'nothing cached before a later operation');
      } finally {
        trial.teardown(ctx);
      }
    });
  }

  test('the check fails when pages stay in memory (tmpfs cannot drop them)', (t) => {
    if (!native) {
      t.skip(`eviction needs the native addon (${engineInfo().reason})`);
      return;
    }
    if (!tempDirs.tmpfs) {
      t.skip('no tmpfs at /dev/shm');
      return;
    }
    const trial = coldTrials.find((x) => x.files === 1);
    // The trial refuses tmpfs targets; its eviction step is called here anyway, to see it fail.
    assert.match(trial.unavailable({ realpath: tempDirs.tmpfs, fsType: 'tmpfs' }), /tmpfs/);
    const ctx = trial.setup(tempDirs.tmpfs, { realpath: tempDirs.tmpfs, fsType: 'tmpfs' });
    try {
      assert.throws(() => trial.beforeEach(ctx, true), /still cached after evictFromPageCache/);
    } finally {
      trial.teardown(ctx);
    }
  });
});

describe('the tree of the tree trials', () => {
  test('is the same files of the same sizes every time, with the size mix of a node_modules folder', () => {
    const spec = treeSpec(3000);
    assert.deepEqual(treeSpec(3000), spec, 'deterministic');
    assert.equal(new Set(spec.map((f) => f.path)).size, 3000, 'distinct paths');
    const KiB = 1024;
    const small = spec.filter((f) => f.size >= 100 && f.size <= 8 * KiB).length;
    const medium = spec.filter((f) => f.size >= 16 * KiB && f.size <= 200 * KiB).length;
    const large = spec.filter((f) => f.size >= 1024 * KiB && f.size <= 4096 * KiB).length;
    assert.equal(small + medium + large, 3000, 'every file in one of the three classes');
    assert.ok(small > 2500 && medium >= 200 && medium <= 400 && large >= 2 && large <= 10, `mix ${small}/${medium}/${large}`);
    assert.ok(spec.slice(0, 100).some((f) => f.size > 8 * KiB), 'the classes are shuffled together');
    assert.ok(spec.every((f) => f.path.startsWith('node_modules/pkg-')), 'under node_modules/pkg-*');
  });

  test('is made once per target, reused by the next run, and made again when a file is damaged', () => {
    const dir = makeTempDir(tempDirs.disk, 'tree-');
    const target = { realpath: dir, fsType: 'ext4' };
    const trial = trialsFor([4096], { treeFiles: 30 }).find((t) => t.name === 'warm-tree30');
    const spec = treeSpec(30);
    const first = trial.setup(dir, target);
    assert.deepEqual(first.paths, spec.map((f) => path.join(treeDir(target, 30), f.path)));
    assert.deepEqual(first.paths.map((file) => fs.statSync(file).size), spec.map((f) => f.size));
    assert.equal(trial.bytes, spec.reduce((n, f) => n + f.size, 0));
    // A file of our own in the tree survives a reuse, and goes when the tree is made again.
    const marker = path.join(treeDir(target, 30), 'marker');
    fs.writeFileSync(marker, '');
    trial.teardown(first);
    assert.equal(trial.setup(dir, target).paths.length, 30);
    assert.ok(fs.existsSync(marker), 'reused, not made again');
    fs.truncateSync(first.paths[7], 1);
    trial.setup(dir, target);
    assert.equal(fs.existsSync(marker), false, 'made again');
    assert.equal(fs.statSync(first.paths[7]).size, spec[7].size, 'the damaged file is whole again');
    assert.deepEqual(fs.readdirSync(dir), [path.basename(treeDir(target, 30))], 'no half-made tree left beside it');
  });
});

// bench/compare.js: how far two runs' ratios are apart, warm trials only unless --all, and an
// exit status that says whether any is over the threshold.
test('--in-process times Node\'s drivers in the bench\'s own process, and says so', async () => {
  const outDir = makeTempDir(tempDirs.disk, 'results-');
  const run = await runToEnd(process.execPath, [
    'bench/index.js', '--in-process', '--dir', tempDirs.disk, '--sizes', '4k', '--filter', '^warm-4k$', '--time', '1', '--rounds', '1', '--out', outDir,
  ], { timeoutMs: 60000 });
  assert.equal(run.code, 0, run.stderr.slice(-2000));
  const doc = JSON.parse(fs.readFileSync(path.join(outDir, fs.readdirSync(outDir).find((f) => f.endsWith('.json'))), 'utf8'));
  assert.deepEqual([doc.options.inProcess, doc.runner], [true, null]);
  const drivers = doc.targets[0].trials[0].drivers.filter((d) => d.skipped === undefined);
  assert.ok(drivers.length > 3 && drivers.every((d) => d.timedIn === 'bench' && d.samples >= 1), JSON.stringify(drivers.map((d) => [d.name, d.timedIn])));
  assert.match(run.stdout, /timing: +Node's drivers timed in the bench's own process \(--in-process\)/);
});

describe('bench/compare.js', () => {
  const { compareReports } = require('../bench/compare');
  const report = (ratios) => ({
    targets: [{
      dir: '/tmp',
      trials: [
        { name: 'warm-4k', cold: false, drivers: [
          { name: 'fs.readFileSync', baseline: true, ratio: 1 },
          { name: 'smartReadSync', ratio: ratios.warm },
          { name: 'smartRead uring', ratio: null, skipped: 'io_uring is off' },
        ] },
        { name: 'cold-4k', cold: true, drivers: [{ name: 'smartRead auto', ratio: ratios.cold }] },
      ],
    }],
  });

  test('differences are symmetric and leave out the baseline, skipped drivers and (by default) cold trials', () => {
    const pairs = compareReports(report({ warm: 1.0, cold: 3 }), report({ warm: 1.25, cold: 1 }));
    assert.equal(pairs.length, 1);
    assert.deepEqual({ ...pairs[0], difference: Number(pairs[0].difference.toFixed(6)) },
      { target: '/tmp', trial: 'warm-4k', driver: 'smartReadSync', a: 1.0, b: 1.25, difference: 0.25 });
    assert.equal(compareReports(report({ warm: 1.25, cold: 3 }), report({ warm: 1.0, cold: 1 }))[0].difference.toFixed(6), '0.250000');
    assert.equal(compareReports(report({ warm: 1, cold: 3 }), report({ warm: 1, cold: 1 }), { all: true }).length, 2);
  });

  test('exits 0 within the threshold, 1 over it, 2 on bad input', async () => {
    const dir = makeTempDir(tempDirs.disk, 'compare-');
    const write = (name, doc) => {
      const file = path.join(dir, name);
      fs.writeFileSync(file, JSON.stringify(doc));
      return file;
    };
    const a = write('a.json', report({ warm: 1.3, cold: 3 }));
    const near = write('near.json', report({ warm: 1.4, cold: 1 }));
    const far = write('far.json', report({ warm: 1.7, cold: 3 }));
    const script = path.resolve(__dirname, '../bench/compare.js');
    const within = await runToEnd(process.execPath, [script, a, near]);
    assert.equal(within.code, 0, within.stdout + within.stderr);
    assert.match(within.stdout, /1 ratios compared \(warm trials\); the largest difference: 7\.7%/);
    const over = await runToEnd(process.execPath, [script, a, far]);
    assert.equal(over.code, 1, over.stdout + over.stderr);
    assert.match(over.stdout, /1 over 20%/);
    assert.equal((await runToEnd(process.execPath, [script, a, far, '--threshold', '40'])).code, 0);
    assert.equal((await runToEnd(process.execPath, [script, a])).code, 2);
    assert.equal((await runToEnd(process.execPath, [script, a, write('empty.json', { targets: [] })])).code, 2);
  });
});

describe('the loop-stall recorder (bench/loop_stall.js)', () => {
  const { LoopStallRecorder } = require('../bench/loop_stall');
  // Holds the event loop for `ms` in promise reactions, as a reader whose promises settle at
  // once does read after read: no timer can fire meanwhile.
  async function holdInReactions(ms) {
    const end = performance.now() + ms;
    while (performance.now() < end) await null;
  }

  test('sees a loop held from the start of its stretch, which the histogram alone missed', async () => {
    const recorder = new LoopStallRecorder();
    recorder.start();
    await holdInReactions(100);
    await recorder.stop();
    assert.ok(recorder.result().maxMs >= 100, JSON.stringify(recorder.result()));
  });

  test('sees a loop held after it has turned', async () => {
    const recorder = new LoopStallRecorder();
    recorder.start();
    await new Promise((resolve) => setTimeout(resolve, 10));
    await holdInReactions(100);
    await recorder.stop();
    assert.ok(recorder.result().maxMs >= 99, JSON.stringify(recorder.result()));
  });

  test('records V8\'s pauses while it watches, and only then', async () => {
    const { setFlagsFromString } = require('node:v8');
    const { runInNewContext } = require('node:vm');
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc');
    const recorder = new LoopStallRecorder();
    gc();
    recorder.start();
    for (let i = 0; i < 3; i++) gc();
    await recorder.stop();
    const watched = recorder.result();
    assert.ok(watched.gcPauses >= 3 && watched.gcMaxMs > 0, JSON.stringify(watched));
    // Outside a stretch nothing is counted.
    gc();
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(recorder.result().gcPauses, watched.gcPauses);
  });
});

describe('the allocator settled before the first trial (bench/timing.js settleAllocator)', () => {
  test('afterwards, Buffers of 1 MiB dropped and allocated again reuse pages already faulted in', async (t) => {
    if (!process.report.getReport().header.glibcVersionRuntime) return t.skip("glibc's malloc only");
    // From V8 13 (Node 24) dead Buffers wait for a full collection, which frees more at once than
    // even a settled heap keeps: there settling saves a third of the faults at best (41-50 a
    // Buffer against 57-73 here), too close to the noise for a test.
    if (Number(process.versions.v8.split('.')[0]) >= 13) return t.skip('V8 13 and later: see the comment');
    // Rounds of 24 Buffers of 1 MiB, each written to on every page, then dropped together and
    // collected, as a loop of fs.readFileSync frees them: in a fresh process glibc gives the top
    // of its heap back after each collection, and the next round faults its pages in again. The
    // collections are the test's own (with a pause for V8 to free the memory behind them): left
    // to V8's timing, a fresh process faulted 47-90 pages a Buffer in most runs, and 14 in one.
    const script = `
      require('node:v8').setFlagsFromString('--expose-gc');
      const gc = require('node:vm').runInNewContext('gc');
      if (process.argv[1] === 'settle') require(${JSON.stringify(path.join(__dirname, '..', 'bench', 'timing.js'))}).settleAllocator(gc);
      const round = () => {
        let held = [];
        for (let k = 0; k < 24; k++) {
          const block = Buffer.allocUnsafeSlow(1024 * 1024);
          for (let i = 0; i < block.length; i += 4096) block[i] = 1;
          held.push(block);
        }
        held = null;
        gc();
        return new Promise((resolve) => setTimeout(resolve, 5));
      };
      (async () => {
        for (let i = 0; i < 5; i++) await round();
        const before = process.resourceUsage().minorPageFault;
        for (let i = 0; i < 40; i++) await round();
        console.log((process.resourceUsage().minorPageFault - before) / 960);
      })();
    `;
    const faultsPerBuffer = async (mode) => {
      const run = await runToEnd(process.execPath, ['-e', script, mode]);
      assert.equal(run.code, 0, run.stderr);
      return Number(run.stdout.trim());
    };
    // Against a fresh process in the same conditions, quiet or beside two CPU hogs: settled 0.0
    // faults a Buffer, fresh 255 on Node 20 and 13-26 on Node 22 (whose start-up already raised
    // the threshold part of the way). Once, in a run of the whole suite, a fresh process kept its
    // pages as well (0.021 faults a Buffer), leaving settling nothing to save: such a process is
    // run again, and should three in a row keep their pages, the test is skipped with the figures.
    const keptItsMemory = (faults) => faults < 4;
    const settled = await faultsPerBuffer('settle');
    const freshRuns = [];
    do freshRuns.push(await faultsPerBuffer('fresh'));
    while (keptItsMemory(freshRuns.at(-1)) && freshRuns.length < 3);
    const fresh = freshRuns.at(-1);
    if (keptItsMemory(fresh)) return t.skip(`fresh processes faulted ${freshRuns.join(', ')} pages a Buffer: glibc kept their memory, nothing for settling to save`);
    assert.ok(settled < fresh / 2, `page faults a Buffer of 1 MiB: ${settled} settled, ${freshRuns.join(', ')} in fresh processes`);
  });
});
