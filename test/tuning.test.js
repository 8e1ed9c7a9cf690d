// Thresholds and calibration: tuning(), setTuning() and useProfile() change what 'auto' and
// io_uring do (the fast path's time budget and copy rate, io_uring's chunks, the block pool);
// `smartread calibrate` measures and writes a profile that SMARTREAD_PROFILE and useProfile()
// apply.
'use strict';
const { test, afterEach } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { tuning, setTuning, useProfile, smartRead, metrics, explain, engineInfo } = require('smartread');
const { checkNoFdLeak, useTempDirs, writePattern, assertSameBytes, runToEnd, skipUnlessAvailable } = require('./helpers');

checkNoFdLeak({ spawnsChildren: true });
const tempDirs = useTempDirs();
const native = engineInfo().engine === 'native';
const defaults = tuning();
const KiB = 1024;
const MiB = 1024 * KiB;
const cli = path.resolve(__dirname, '..', 'dist', 'cli.js');

afterEach(() => setTuning(defaults));

test('the defaults, and setTuning() refusing what is not a threshold or out of range', () => {
  assert.deepEqual(defaults, {
    fastPathBudgetUs: 500, copyRateMBps: 8000, uringChunk: 2 * MiB, uringInFlight: os.availableParallelism() <= 2 ? 4 : 8, uringAsyncFrom: 512 * KiB,
    // From 128 KiB where V8 scavenges for young Buffers' bytes (Node 20 and 22), else 8 MiB.
    blockPoolFrom: Number(process.versions.v8.split('.')[0]) < 13 ? 64 * KiB : 8 * MiB,
    blockPoolMaxBytes: 256 * MiB, blockPoolIdleMs: 3000,
    readManyThreads: Math.max(0, Math.min(os.availableParallelism() - 1, 3)),
  });
  for (const bad of [{ speed: 1 }, { fastPathMax: 4096 }, { fastPathBudgetUs: -1 }, { fastPathBudgetUs: 1.5 }, { copyRateMBps: 0 },
    { uringChunk: 5000 }, { uringChunk: 0 }, { uringInFlight: 0 }, { uringInFlight: 17 }, { uringAsyncFrom: '1' },
    { blockPoolFrom: -1 }, { blockPoolMaxBytes: 0.5 }, { blockPoolIdleMs: 25 * 3600 * 1000 }, { readManyThreads: 17 }]) {
    assert.throws(() => setTuning(bad), { code: 'ERR_INVALID_ARG_VALUE' }, JSON.stringify(bad));
  }
  assert.throws(() => setTuning(null), { code: 'ERR_INVALID_ARG_VALUE' });
  assert.deepEqual(tuning(), defaults, 'a refused change changes nothing');
  assert.deepEqual(setTuning({ uringInFlight: 3 }), { ...defaults, uringInFlight: 3 });
});

// The addon's own setTuning() (what setTuning() calls once it has validated): a field it cannot
// read is a TypeError, and none of the others is set (it reads them all before it sets any).
test("the addon's setTuning() with a field it cannot read throws and changes nothing", (t) => {
  if (!native) return t.skip('the native addon did not load');
  const binding = require(engineInfo().path);
  const before = binding.tuning();
  const changed = { ...before, fastPathBudgetUs: before.fastPathBudgetUs + 1, blockPoolIdleMs: 'soon' };
  assert.throws(() => binding.setTuning(changed), { name: 'TypeError', message: /setTuning\(tuning\): every field must be a number/ });
  const thrown = new Error('from a getter');
  assert.throws(() => binding.setTuning(Object.defineProperty({ ...changed }, 'uringChunk', { get() { throw thrown; } })), thrown);
  assert.deepEqual(binding.tuning(), before);
});

test("the fast path's budget decides which cached files 'auto' reads on the calling thread", async (t) => {
  if (!native) {
    t.skip('the fast path is part of the addon');
    return;
  }
  const file = writePattern(path.join(tempDirs.disk, 'four-k'), 4 * KiB);
  fs.readFileSync(file);
  metrics.reset();
  // 1 µs at 1,000 MB/s: files of up to 1,000 bytes.
  setTuning({ fastPathBudgetUs: 1, copyRateMBps: 1000 });
  assertSameBytes(await smartRead(file), fs.readFileSync(file));
  assert.notEqual(explain(file).strategy, 'fast-path');
  assert.match(explain(file).reason, /4096 bytes > the fast path's 1000 \(a copy of 1 µs at 1000 MB\/s\)/);
  assert.equal(metrics().strategies['fast-path'].reads, 0, 'past the limit: not on the fast path');
  setTuning({ fastPathBudgetUs: 4, copyRateMBps: 1024 });
  assertSameBytes(await smartRead(file), fs.readFileSync(file));
  assert.equal(metrics().strategies['fast-path'].reads, 1, 'within it: a hit');
  assert.equal(explain(file).strategy, 'fast-path');
});

test('tmpfs and the disk share the budget: a cached file is read inline up to the same size on both', async (t) => {
  if (!native) {
    t.skip('the fast path is part of the addon');
    return;
  }
  if (tempDirs.tmpfs === undefined) {
    t.skip('/dev/shm is not a tmpfs here');
    return;
  }
  const onTmpfs = writePattern(path.join(tempDirs.tmpfs, 'one-m'), 1 * MiB);
  const onDisk = writePattern(path.join(tempDirs.disk, 'one-m'), 1 * MiB);
  fs.readFileSync(onDisk);
  // Reads both; how many took the fast path, by the metrics and by explain().
  const fastPathTakers = async () => {
    metrics.reset();
    assertSameBytes(await smartRead(onTmpfs), fs.readFileSync(onTmpfs));
    assertSameBytes(await smartRead(onDisk), fs.readFileSync(onDisk));
    const explained = [onTmpfs, onDisk].filter((file) => explain(file).strategy === 'fast-path');
    return { reads: metrics().strategies['fast-path'].reads, explained };
  };
  setTuning({ fastPathBudgetUs: 100, copyRateMBps: 5000 });
  assert.deepEqual(await fastPathTakers(), { reads: 0, explained: [] }, '500,000 bytes: neither');
  setTuning({ fastPathBudgetUs: 250, copyRateMBps: 5000 });
  assert.deepEqual(await fastPathTakers(), { reads: 2, explained: [onTmpfs, onDisk] }, '1,250,000 bytes: both');
});

test('a cached file past the budget is opened at once and read in parallel chunks, on every target', async (t) => {
  if (skipUnlessAvailable(t, 'uring')) return;
  setTuning({ fastPathBudgetUs: 100, copyRateMBps: 1000, uringChunk: 64 * KiB, uringInFlight: 4 });
  for (const dir of [tempDirs.disk, tempDirs.tmpfs].filter(Boolean)) {
    // Sizes around the chunk and the in-flight window: one chunk, a short last one, more
    // chunks than are in flight at once.
    for (const size of [100 * 1000 + 1, 5 * 64 * KiB - 3, 17 * 64 * KiB]) {
      const file = writePattern(path.join(dir, `large-${size}`), size);
      fs.readFileSync(file);
      assert.equal(explain(file).strategy, 'uring-chunked', file);
      assert.match(explain(file).reason, /its path is cached: opened at once/);
      metrics.reset();
      assertSameBytes(await smartRead(file), fs.readFileSync(file));
      const m = metrics();
      assert.deepEqual([m.strategies.uring.reads, m.fastPath.hits, m.fastPath.misses], [1, 0, 1], `${file}: io_uring, after a fast-path miss`);
    }
  }
});

test("uringChunk and uringInFlight set io_uring's chunking; the bytes stay the file's", async (t) => {
  if (skipUnlessAvailable(t, 'uring')) return;
  setTuning({ uringChunk: 1 * MiB, uringInFlight: 2 });
  const chunked = writePattern(path.join(tempDirs.disk, 'chunked'), 5 * MiB + 7);
  const single = writePattern(path.join(tempDirs.disk, 'single'), 1 * MiB);
  assertSameBytes(await smartRead(chunked, { strategy: 'uring' }), fs.readFileSync(chunked));
  assertSameBytes(await smartRead(single, { strategy: 'uring' }), fs.readFileSync(single));
  const e = explain(chunked, { strategy: 'uring' });
  assert.equal(e.strategy, 'uring-chunked');
  assert.match(e.reason, /1048576-byte chunks, 2 in flight/);
  assert.equal(explain(single, { strategy: 'uring' }).strategy, 'uring');
});

test('useProfile() applies a profile from a file or an object, and refuses a bad one', () => {
  const file = path.join(tempDirs.disk, 'profile.json');
  fs.writeFileSync(file, JSON.stringify({ version: 1, tuning: { copyRateMBps: 6000, uringInFlight: 4 } }));
  assert.deepEqual(useProfile(file), { ...defaults, copyRateMBps: 6000, uringInFlight: 4 });
  assert.deepEqual(useProfile({ version: 1, tuning: { uringChunk: 4 * MiB } }), { ...defaults, copyRateMBps: 6000, uringInFlight: 4, uringChunk: 4 * MiB });
  fs.writeFileSync(path.join(tempDirs.disk, 'not-json'), '{');
  for (const bad of [path.join(tempDirs.disk, 'absent.json'), path.join(tempDirs.disk, 'not-json'), { tuning: {} },
    { version: 2, tuning: {} }, { version: 1, tuning: { uringInFlight: 99 } }]) {
    assert.throws(() => useProfile(bad), { code: 'ERR_SMARTREAD_BAD_PROFILE' }, JSON.stringify(bad));
  }
});

test('SMARTREAD_PROFILE applies a profile from the start; a bad one warns and keeps the defaults', async () => {
  const file = path.join(tempDirs.disk, 'env-profile.json');
  fs.writeFileSync(file, JSON.stringify({ version: 1, tuning: { fastPathBudgetUs: 200 } }));
  const show = "console.log(JSON.stringify(require('smartread').tuning()))";
  const good = await runToEnd(process.execPath, ['-e', show], { env: { SMARTREAD_PROFILE: file } });
  assert.equal(good.code, 0, good.stderr);
  assert.deepEqual(JSON.parse(good.stdout), { ...defaults, fastPathBudgetUs: 200 });
  const bad = await runToEnd(process.execPath, ['-e', show], { env: { SMARTREAD_PROFILE: path.join(tempDirs.disk, 'nope.json') } });
  assert.equal(bad.code, 0, bad.stderr);
  assert.deepEqual(JSON.parse(bad.stdout), defaults);
  assert.match(bad.stderr, /SMARTREAD_PROFILE|cannot read the profile/);
});

test('smartread calibrate, on a small scale, writes a profile that useProfile() accepts', async () => {
  const out = path.join(tempDirs.disk, 'calibrated.json');
  const run = await runToEnd(process.execPath, [cli, 'calibrate', '--quick', '--cold-size', String(4 * MiB), '--out', out, tempDirs.disk], { timeoutMs: 120000 });
  if (!native || !engineInfo().uring.available) {
    assert.equal(run.code, 1);
    assert.match(run.stderr, /needs the native addon|io_uring, which is unavailable/);
    return;
  }
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /warm \(cached\) reads/);
  assert.match(run.stdout, /chosen: copyRateMBps \d+/);
  const profile = JSON.parse(fs.readFileSync(out, 'utf8'));
  assert.equal(profile.version, 1);
  assert.ok(profile.warm.length >= 1);
  for (const w of profile.warm) assert.ok(w.mbPerSec > 0);
  assert.equal(profile.tuning.copyRateMBps, Math.max(1, Math.floor(Math.min(...profile.warm.map((w) => w.mbPerSec)))), 'the slowest rate measured');
  assert.ok(Array.isArray(profile.cold) && profile.cold.length === 6, 'the disk can be read cold');
  for (const c of profile.cold) assert.ok(c.mbPerSec > 0);
  assert.deepEqual(useProfile(out), profile.tuning);
  assert.deepEqual(fs.readdirSync(tempDirs.disk).filter((f) => f.startsWith('smartread-calibrate-')), [], 'its files are gone');
});
