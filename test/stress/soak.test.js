// Load and soak (npm run test:stress): SMARTREAD_STRESS_READS reads (default 400,000; the full
// million by hand) of files of 0 B to 1 MiB, mostly small, on every strategy and readMany, 256
// in flight. Every byte is checked; after a warm-up, RSS may grow by less than 20 MB, the bytes
// malloc has handed out by less than 4 MB and the JS heap by less than 1 MB, and the descriptor
// count must not move. Figures go to the test's diagnostics and, with
// SMARTREAD_STRESS_REPORT=FILE, to FILE as JSON.
'use strict';
const { test, before } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { smartRead, readMany, engineInfo } = require('smartread');
const { native } = require('../../dist/engine/engine.js');
const { useTempDirs, writePattern, patternBuffer, openFdCount, withinTime, setUpAsyncEngines } = require('../helpers');

setUpAsyncEngines();
const tempDirs = useTempDirs();

const READS = Number(process.env.SMARTREAD_STRESS_READS) || 400000;
const IN_FLIGHT = 256;
const KiB = 1024;
const MiB = 1024 * KiB;
const RSS_LIMIT = 20 * MiB;
const MALLOC_LIMIT = 4 * MiB;
const HEAP_LIMIT = 1 * MiB;

function prng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

// 300 files, half on tmpfs and half on disk: ~70% up to 4 KiB, ~20% up to 64 KiB, ~8% up to
// 256 KiB, ~2% up to 1 MiB.
const files = [];
const expected = [];
before(() => {
  const r = prng(1);
  for (let i = 0; i < 300; i++) {
    const x = r();
    const size = x < 0.7 ? Math.floor(r() * 4097)
      : x < 0.9 ? 4097 + Math.floor(r() * 60 * KiB)
        : x < 0.98 ? 64 * KiB + Math.floor(r() * 192 * KiB)
          : 256 * KiB + Math.floor(r() * 768 * KiB);
    const { dir } = tempDirs.all[i % tempDirs.all.length];
    files.push(writePattern(path.join(dir, `soak-${i}`), size));
    expected.push(patternBuffer(size));
  }
});

// After full collections (run with --expose-gc), so that what is measured is what is still held:
// RSS, the bytes malloc has handed out and not had back (null off glibc), and the JS heap in use.
function memory() {
  global.gc?.();
  global.gc?.();
  const { rss, heapUsed } = process.memoryUsage();
  return { rss, malloc: native?.mallocInUse() ?? null, heap: heapUsed };
}
const mb = (bytes) => Number((bytes / MiB).toFixed(1));
// The mean of the two samples ending the warm-up (40% and 50%) against the mean of the last two
// taken under load (80% and 90%; the last, at 100%, may come after the reads in flight are done):
// a sample alone moves (the reads in flight at that instant, the allocator).
const smoothedGrowth = (samples) => Number((((samples[7] + samples[8]) - (samples[3] + samples[4])) / 2).toFixed(2));

test(`${READS} reads of mixed sizes on every strategy and readMany, ${IN_FLIGHT} in flight`, { timeout: 30 * 60 * 1000 }, async (t) => {
  const uring = engineInfo().uring.available;
  const strategies = ['auto', 'sync', 'threadpool', ...(uring ? ['uring'] : []), 'readMany'];
  const r = prng(2);
  // RSS climbs for the first ~150,000 reads (allocator arenas, V8's spaces) and then moves by a
  // few MB around a plateau; the bytes malloc has handed out step up once by ~1.5 MB, just past
  // the warm-up's end in runs of 400,000 and of 2 million reads alike; the JS heap is flat. The first half is the warm-up.
  const warmUp = Math.floor(READS / 2);
  let started = 0;
  let done = 0;
  let wrong = 0;
  const byStrategy = Object.fromEntries(strategies.map((s) => [s, 0]));
  let afterWarmUp;
  let fdsAfterWarmUp;
  let maxFds = 0;
  const check = (k, bytes) => {
    if (!bytes.equals(expected[k])) wrong++;
    done++;
  };
  // Memory every tenth of the run, to tell a plateau from a leak (which grows all along).
  const sampleEvery = Math.floor(READS / 10);
  let nextSample = sampleEvery;
  const samples = [];
  const t0 = performance.now();
  let warmedAt;
  const lane = async () => {
    while (started < READS && wrong === 0) {
      // readMany reads 8 files a call: picked an eighth as often, it reads as many as the others.
      const x = r() * (strategies.length - 7 / 8);
      const strategy = x >= strategies.length - 1 ? 'readMany' : strategies[Math.floor(x)];
      if (strategy === 'readMany') {
        const ks = Array.from({ length: 8 }, () => Math.floor(r() * files.length));
        started += ks.length;
        byStrategy.readMany += ks.length;
        const results = await readMany(ks.map((k) => files[k]), { concurrency: 8 });
        results.forEach((bytes, j) => check(ks[j], bytes));
      } else {
        const k = Math.floor(r() * files.length);
        started++;
        byStrategy[strategy]++;
        check(k, await smartRead(files[k], { strategy }));
      }
      if (afterWarmUp === undefined && done >= warmUp) {
        afterWarmUp = memory();
        fdsAfterWarmUp = openFdCount();
        warmedAt = performance.now();
      }
      if (done % 4096 === 0) maxFds = Math.max(maxFds, openFdCount());
      if (done >= nextSample) {
        nextSample += sampleEvery;
        samples.push(memory());
      }
    }
  };
  await withinTime(Promise.all(Array.from({ length: IN_FLIGHT }, lane)), 30 * 60 * 1000, 'the soak');
  const seconds = (performance.now() - t0) / 1000;
  const after = memory();
  const fdsAfter = openFdCount();
  // The last tenth's sample, if the lane that crossed it had already ended.
  while (samples.length < 10) samples.push(after);
  const rssSamplesMB = samples.map((m) => mb(m.rss));
  const mallocSamplesMB = after.malloc === null ? null : samples.map((m) => mb(m.malloc));
  const heapSamplesMB = samples.map((m) => mb(m.heap));
  const figures = {
    reads: done,
    byStrategy,
    inFlight: IN_FLIGHT,
    seconds: Number(seconds.toFixed(1)),
    readsPerSecond: Math.round(done / seconds),
    warmUpReads: warmUp,
    rssAfterWarmUpMB: mb(afterWarmUp.rss),
    rssAfterMB: mb(after.rss),
    rssGrowthMB: mb(after.rss - afterWarmUp.rss),
    rssSamplesMB,
    rssGrowthSmoothedMB: smoothedGrowth(rssSamplesMB),
    mallocSamplesMB,
    mallocGrowthSmoothedMB: mallocSamplesMB && smoothedGrowth(mallocSamplesMB),
    heapSamplesMB,
    heapGrowthSmoothedMB: smoothedGrowth(heapSamplesMB),
    fdsAfterWarmUp,
    fdsAfter,
    fdsMaxSampled: maxFds,
    wrong,
    heapUsedMB: mb(after.heap),
    externalMB: Number((process.memoryUsage().external / MiB).toFixed(1)),
    mallocArenaMax: process.env.MALLOC_ARENA_MAX ?? null,
    gcExposed: typeof global.gc === 'function',
    engine: engineInfo().engine,
    uring,
    node: process.version,
    secondsAfterWarmUp: Number(((performance.now() - warmedAt) / 1000).toFixed(1)),
  };
  t.diagnostic(JSON.stringify(figures));
  if (process.env.SMARTREAD_STRESS_REPORT) fs.writeFileSync(process.env.SMARTREAD_STRESS_REPORT, `${JSON.stringify(figures, null, 2)}\n`);
  assert.equal(wrong, 0, 'every result has its file\'s bytes');
  assert.equal(done, started);
  assert.ok(done >= READS);
  assert.equal(fdsAfter, fdsAfterWarmUp, 'descriptors after the soak');
  // RSS counts memory freed but kept by the allocator and V8 as well as memory still held; the
  // bytes malloc has handed out (native objects, Buffers' memory) and the JS heap, after a GC,
  // count only what is held, and see a leak of a few bytes a read that RSS's moves hide. (The
  // line of calls waiting for a turn kept a slot for every call that ever waited in it while it
  // never emptied, 8 bytes a read: the heap grew by 1.6 MB between the warm-up's end and 90%
  // here, and RSS by up to 21 MB with it.)
  if (mallocSamplesMB) {
    assert.ok(figures.mallocGrowthSmoothedMB < MALLOC_LIMIT / MiB, `malloc's bytes in use grew by ${figures.mallocGrowthSmoothedMB} MB after the warm-up (${mallocSamplesMB.join(', ')} MB)`);
  } else {
    t.diagnostic('malloc\'s bytes in use cannot be asked here (not glibc 2.33 or later): RSS and the JS heap only');
  }
  assert.ok(figures.heapGrowthSmoothedMB < HEAP_LIMIT / MiB, `the JS heap grew by ${figures.heapGrowthSmoothedMB} MB after the warm-up (${heapSamplesMB.join(', ')} MB)`);
  assert.ok(figures.rssGrowthSmoothedMB < RSS_LIMIT / MiB, `RSS grew by ${figures.rssGrowthSmoothedMB} MB after the warm-up (${rssSamplesMB.join(', ')} MB)`);
});
