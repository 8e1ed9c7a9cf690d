// metrics(): what served each read (the fast path or an engine), bytes, errors by code, fast
// path hits and misses, latencies while enabled; the Prometheus text, a prom-client registry,
// and the diagnostics channel 'smartread:read'.
'use strict';
const { test, beforeEach } = require('node:test');
const assert = require('node:assert/strict');
const diagnosticsChannel = require('node:diagnostics_channel');
const fs = require('node:fs');
const path = require('node:path');
const { metrics, smartRead, smartReadSync, readMany, engineInfo, tuning } = require('smartread');
const { checkNoFdLeak, useTempDirs, writePattern, setUpAsyncEngines } = require('./helpers');

setUpAsyncEngines();
checkNoFdLeak();
const tempDirs = useTempDirs();
const info = engineInfo();
const native = info.engine === 'native';
// What serves the reads that miss the fast path (or all reads, on the JS engine).
const engineServing = native ? (info.uring.available ? 'uring' : 'threadpool') : 'js';

beforeEach(() => {
  metrics.reset();
  metrics.enableLatency(false);
});

function cachedFile(name, size) {
  const file = writePattern(path.join(tempDirs.disk, name), size);
  fs.readFileSync(file);
  return file;
}

test('cached reads under auto are fast-path hits (an engine on the JS fallback), with their bytes', async () => {
  const file = cachedFile('cached-3000', 3000);
  for (let i = 0; i < 3; i++) await smartRead(file);
  const m = metrics();
  if (native) {
    assert.deepEqual(m.fastPath, { hits: 3, misses: 0, tooLarge: 0, judged: noJudgements });
    assert.equal(m.strategies['fast-path'].reads, 3);
    assert.equal(m.strategies['fast-path'].bytes, 9000);
  } else {
    assert.deepEqual(m.fastPath, { hits: 0, misses: 0, tooLarge: 0, judged: noJudgements });
    assert.equal(m.strategies.js.reads, 3);
    assert.equal(m.strategies.js.bytes, 9000);
  }
  const total = Object.values(m.strategies).reduce((sum, s) => sum + s.reads, 0);
  assert.equal(total, 3, 'each read counted once');
});

// The misses here are files past the fast path's limit, which it always declines. An evicted file
// is no sure miss: the RWF_NOWAIT read starts readahead, and on a fast disk the pages can be in by
// the time it looks (Linux 6.18 on a virtio disk: a fifth of such reads, more under load).
// Judgements are made only where the filesystem refuses RWF_NOWAIT (overlayfs, FUSE): none here.
const noJudgements = { firstRead: 0, recentRead: 0, resident: 0, notResident: 0, cooling: 0, misjudged: 0 };
const pastFastPath = () => tuning().fastPathBudgetUs * tuning().copyRateMBps + 1;

test('a file past the fast path\'s limit misses it and is served by the engine', async () => {
  const size = pastFastPath();
  const file = cachedFile('past-the-limit', size);
  await smartRead(file);
  const m = metrics();
  if (native) {
    assert.deepEqual(m.fastPath, { hits: 0, misses: 1, tooLarge: 1, judged: noJudgements });
    assert.equal(m.strategies[engineServing].reads, 1);
    assert.equal(m.strategies[engineServing].bytes, size);
  } else {
    assert.deepEqual(m.fastPath, { hits: 0, misses: 0, tooLarge: 0, judged: noJudgements });
    assert.equal(m.strategies.js.reads, 1);
    assert.equal(m.strategies.js.bytes, size);
  }
});

test('forced strategies and smartReadSync are counted under their own names', async () => {
  const file = cachedFile('forced', 100);
  await smartRead(file, { strategy: 'sync' });
  await smartRead(file, { strategy: 'threadpool' });
  smartReadSync(file);
  smartReadSync(file, 'latin1');
  const m = metrics();
  if (native) {
    assert.equal(m.strategies.sync.reads, 3);
    assert.equal(m.strategies.threadpool.reads, 1);
  } else {
    assert.equal(m.strategies.js.reads, 4);
  }
  assert.equal(m.fastPath.hits + m.fastPath.misses, 0, 'forced strategies skip the fast path');
});

test('errors are counted by code and by what served them; argument errors are not reads', async () => {
  const missing = path.join(tempDirs.disk, 'missing');
  await assert.rejects(smartRead(missing), { code: 'ENOENT' });
  assert.throws(() => smartReadSync(missing), { code: 'ENOENT' });
  await assert.rejects(smartRead(tempDirs.disk), { code: 'EISDIR' });
  await assert.rejects(smartRead({}), { code: 'ERR_INVALID_ARG_TYPE' });
  assert.throws(() => smartReadSync(missing, { encoding: 'nope' }), { code: 'ERR_INVALID_ARG_VALUE' });
  const m = metrics();
  assert.deepEqual(m.errorsByCode, { ENOENT: 2, EISDIR: 1 });
  const errors = Object.values(m.strategies).reduce((sum, s) => sum + s.errors, 0);
  assert.equal(errors, 3);
});

test('readMany counts every file once: hits from its batched fast path, the rest by the engine', async () => {
  const files = Array.from({ length: 100 }, (_, i) => cachedFile(`many-${i}`, 1 + i * 37));
  const bytes = files.reduce((sum, f) => sum + fs.statSync(f).size, 0);
  const large = cachedFile('many-large', pastFastPath());
  const results = await readMany([...files, large, path.join(tempDirs.disk, 'many-missing')], { settle: true });
  assert.equal(results.filter((r) => r.status === 'fulfilled').length, 101);
  const m = metrics();
  if (native) {
    assert.equal(m.fastPath.hits, 100);
    // After a run with no hit, readMany skips the fast path for a stretch: the last path may
    // go to the engine untried.
    assert.ok(m.fastPath.misses >= 1 && m.fastPath.misses <= 2, `misses: ${m.fastPath.misses}`);
    assert.equal(m.strategies['fast-path'].reads, 100);
    assert.equal(m.strategies['fast-path'].bytes, bytes);
    assert.equal(m.strategies[engineServing].reads, 2);
    assert.equal(m.strategies[engineServing].bytes, pastFastPath());
  } else {
    assert.equal(m.strategies.js.reads, 102);
    assert.equal(m.strategies.js.bytes, bytes + pastFastPath());
  }
  assert.deepEqual(m.errorsByCode, { ENOENT: 1 });
});

test('latencies are recorded only while enabled, into cumulative buckets', async () => {
  const file = cachedFile('timed', 4096);
  await smartRead(file);
  const served = native ? 'fast-path' : 'js';
  assert.equal(metrics().strategies[served].latency.count, 0, 'not timed while disabled');
  metrics.enableLatency();
  for (let i = 0; i < 5; i++) await smartRead(file);
  const { latency } = metrics().strategies[served];
  assert.equal(latency.count, 5);
  assert.ok(latency.sumSeconds > 0 && latency.sumSeconds < 60);
  const counts = latency.buckets.map((b) => b.count);
  assert.deepEqual(counts, [...counts].sort((a, b) => a - b), 'cumulative');
  assert.equal(latency.buckets.at(-1).le, Infinity);
  assert.equal(counts.at(-1), 5);
});

// A small parser of the Prometheus text format: families with their type, samples with labels.
function parsePrometheus(text) {
  const samples = new Map();
  const types = new Map();
  assert.ok(text.endsWith('\n'));
  for (const line of text.trimEnd().split('\n')) {
    if (line === '') continue;
    let m = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.+)$/.exec(line);
    if (m) {
      if (m[1] === 'TYPE') types.set(m[2], m[3]);
      continue;
    }
    m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*",?)*)\})? (\S+)$/.exec(line);
    assert.ok(m, `a sample line: ${JSON.stringify(line)}`);
    const value = Number(m[3] === '+Inf' ? Infinity : m[3]);
    assert.ok(!Number.isNaN(value), line);
    samples.set(`${m[1]}{${m[2] ?? ''}}`, value);
  }
  return { samples, types };
}

test('metrics.prometheus() is valid Prometheus text that says what metrics() says', async () => {
  metrics.enableLatency();
  const file = cachedFile('prom', 1234);
  await smartRead(file);
  await smartRead(path.join(tempDirs.disk, 'nope')).catch(() => {});
  const { samples, types } = parsePrometheus(metrics.prometheus());
  assert.equal(types.get('smartread_reads_total'), 'counter');
  assert.equal(types.get('smartread_read_duration_seconds'), 'histogram');
  const served = native ? 'fast-path' : 'js';
  assert.equal(samples.get(`smartread_reads_total{strategy="${served}"}`), metrics().strategies[served].reads);
  assert.equal(samples.get(`smartread_read_bytes_total{strategy="${served}"}`), 1234);
  assert.equal(samples.get('smartread_read_errors_total{code="ENOENT"}'), 1);
  // On the JS engine the failed read is served by the same engine, and timed too.
  const timed = native ? 1 : 2;
  assert.equal(metrics().strategies[served].latency.count, timed);
  assert.equal(samples.get(`smartread_read_duration_seconds_bucket{strategy="${served}",le="+Inf"}`), timed);
  assert.equal(samples.get(`smartread_read_duration_seconds_count{strategy="${served}"}`), timed);
  if (native) assert.equal(samples.get('smartread_fast_path_total{outcome="hit"}'), 1);
  assert.equal(types.get('smartread_fast_path_too_large_total'), 'counter');
  assert.equal(samples.get('smartread_fast_path_too_large_total{}'), metrics().fastPath.tooLarge);
});

test('registerPromClient serves the same metrics from a prom-client registry', async () => {
  const { Registry } = require('prom-client');
  const registry = new Registry();
  metrics.registerPromClient(registry);
  const file = cachedFile('prom-client', 777);
  await smartRead(file);
  await smartRead(file);
  const { samples } = parsePrometheus(await registry.metrics());
  const served = native ? 'fast-path' : 'js';
  assert.equal(samples.get(`smartread_reads_total{strategy="${served}"}`), 2);
  assert.equal(samples.get(`smartread_read_bytes_total{strategy="${served}"}`), 1554);
  assert.equal(samples.get(`smartread_read_duration_seconds_count{strategy="${served}"}`), 2, 'registering turns latencies on');
  assert.equal(samples.get('smartread_fast_path_too_large_total{}'), 0, 'a family without labels');
});

test("every read is published on the diagnostics channel 'smartread:read' while someone subscribes", async () => {
  const file = cachedFile('published', 321);
  const seen = [];
  const onMessage = (message) => seen.push(message);
  diagnosticsChannel.subscribe('smartread:read', onMessage);
  try {
    await smartRead(file);
    await smartRead(path.join(tempDirs.disk, 'gone')).catch(() => {});
    smartReadSync(file);
  } finally {
    diagnosticsChannel.unsubscribe('smartread:read', onMessage);
  }
  await smartRead(file);
  assert.equal(seen.length, 3, 'nothing after unsubscribing');
  assert.equal(seen[0].path, file);
  assert.equal(seen[0].strategy, native ? 'fast-path' : 'js');
  assert.equal(seen[0].bytes, 321);
  assert.ok(seen[0].seconds >= 0);
  assert.equal(seen[0].error, undefined);
  assert.equal(seen[1].error.code, 'ENOENT');
  assert.equal(seen[2].strategy, native ? 'sync' : 'js');
});

test('metrics.enable(false) stops the counting; the channel still publishes', async () => {
  const file = cachedFile('uncounted', 50);
  const seen = [];
  const onMessage = (message) => seen.push(message);
  metrics.enable(false);
  diagnosticsChannel.subscribe('smartread:read', onMessage);
  try {
    await smartRead(file);
    smartReadSync(file);
  } finally {
    diagnosticsChannel.unsubscribe('smartread:read', onMessage);
    metrics.enable();
  }
  const m = metrics();
  assert.equal(Object.values(m.strategies).reduce((sum, s) => sum + s.reads, 0), 0);
  assert.deepEqual(m.fastPath, { hits: 0, misses: 0, tooLarge: 0, judged: noJudgements });
  assert.equal(seen.length, 2);
  await smartRead(file);
  assert.equal(Object.values(metrics().strategies).reduce((sum, s) => sum + s.reads, 0), 1, 'counting again');
});
