// Thresholds and calibration: tuning(), setTuning() and useProfile() change what 'auto' and
// io_uring do (the fast path's size limit, io_uring's chunks); `smartread calibrate` measures
// and writes a profile that SMARTREAD_PROFILE and useProfile() apply.
'use strict';
const { test, afterEach } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
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
  assert.deepEqual(defaults, { fastPathMax: 256 * KiB, fastPathMaxInMemory: 2 * MiB, uringChunk: 2 * MiB, uringInFlight: 8, uringAsyncFrom: 512 * KiB });
  for (const bad of [{ speed: 1 }, { fastPathMax: -1 }, { fastPathMax: 1.5 }, { fastPathMaxInMemory: 64 * MiB + 1 }, { uringChunk: 5000 }, { uringChunk: 0 },
    { uringInFlight: 0 }, { uringInFlight: 17 }, { uringAsyncFrom: '1' }]) {
    assert.throws(() => setTuning(bad), { code: 'ERR_INVALID_ARG_VALUE' }, JSON.stringify(bad));
  }
  assert.throws(() => setTuning(null), { code: 'ERR_INVALID_ARG_VALUE' });
  assert.deepEqual(tuning(), defaults, 'a refused change changes nothing');
  assert.deepEqual(setTuning({ uringInFlight: 3 }), { ...defaults, uringInFlight: 3 });
});

test("fastPathMax decides which cached files 'auto' reads on the calling thread", async (t) => {
  if (!native) {
    t.skip('the fast path is part of the addon');
    return;
  }
  const file = writePattern(path.join(tempDirs.disk, 'four-k'), 4 * KiB);
  fs.readFileSync(file);
  metrics.reset();
  setTuning({ fastPathMax: 1 * KiB });
  assertSameBytes(await smartRead(file), fs.readFileSync(file));
  assert.notEqual(explain(file).strategy, 'fast-path');
  assert.equal(metrics().strategies['fast-path'].reads, 0, 'past the limit: not on the fast path');
  setTuning({ fastPathMax: 4 * KiB });
  assertSameBytes(await smartRead(file), fs.readFileSync(file));
  assert.equal(metrics().strategies['fast-path'].reads, 1, 'within it: a hit');
  assert.equal(explain(file).strategy, 'fast-path');
});

test("fastPathMaxInMemory is tmpfs's own limit; the disk keeps fastPathMax", async (t) => {
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
  // Reads both; which of them took the fast path, by the metrics and by explain().
  const fastPathTakers = async () => {
    metrics.reset();
    assertSameBytes(await smartRead(onTmpfs), fs.readFileSync(onTmpfs));
    assertSameBytes(await smartRead(onDisk), fs.readFileSync(onDisk));
    const explained = [onTmpfs, onDisk].filter((file) => explain(file).strategy === 'fast-path');
    return { reads: metrics().strategies['fast-path'].reads, explained };
  };
  assert.deepEqual(await fastPathTakers(), { reads: 1, explained: [onTmpfs] }, 'the tmpfs file only');
  setTuning({ fastPathMaxInMemory: 512 * KiB, fastPathMax: 2 * MiB });
  assert.deepEqual(await fastPathTakers(), { reads: 1, explained: [onDisk] }, 'the disk file only');
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
  fs.writeFileSync(file, JSON.stringify({ version: 1, tuning: { fastPathMax: 64 * KiB, uringInFlight: 4 } }));
  assert.deepEqual(useProfile(file), { ...defaults, fastPathMax: 64 * KiB, uringInFlight: 4 });
  assert.deepEqual(useProfile({ version: 1, tuning: { uringChunk: 4 * MiB } }), { ...defaults, fastPathMax: 64 * KiB, uringInFlight: 4, uringChunk: 4 * MiB });
  fs.writeFileSync(path.join(tempDirs.disk, 'not-json'), '{');
  for (const bad of [path.join(tempDirs.disk, 'absent.json'), path.join(tempDirs.disk, 'not-json'), { tuning: {} },
    { version: 2, tuning: {} }, { version: 1, tuning: { uringInFlight: 99 } }]) {
    assert.throws(() => useProfile(bad), { code: 'ERR_SMARTREAD_BAD_PROFILE' }, JSON.stringify(bad));
  }
});

test('SMARTREAD_PROFILE applies a profile from the start; a bad one warns and keeps the defaults', async () => {
  const file = path.join(tempDirs.disk, 'env-profile.json');
  fs.writeFileSync(file, JSON.stringify({ version: 1, tuning: { fastPathMax: 8 * KiB } }));
  const show = "console.log(JSON.stringify(require('smartread').tuning()))";
  const good = await runToEnd(process.execPath, ['-e', show], { env: { SMARTREAD_PROFILE: file } });
  assert.equal(good.code, 0, good.stderr);
  assert.deepEqual(JSON.parse(good.stdout), { ...defaults, fastPathMax: 8 * KiB });
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
  assert.match(run.stdout, /chosen: fastPathMax \d+/);
  const profile = JSON.parse(fs.readFileSync(out, 'utf8'));
  assert.equal(profile.version, 1);
  assert.ok(profile.warm.length >= 1);
  assert.ok(Array.isArray(profile.cold) && profile.cold.length === 6, 'the disk can be read cold');
  for (const c of profile.cold) assert.ok(c.mbPerSec > 0);
  assert.deepEqual(useProfile(out), profile.tuning);
  assert.deepEqual(fs.readdirSync(tempDirs.disk).filter((f) => f.startsWith('smartread-calibrate-')), [], 'its files are gone');
});
