// The block pool's memory bound (npm run test:stress): 1,000 back-to-back smartReads of a
// cached 128 MiB file hold RSS under 3 × 128 MiB plus the pool's bound above where it started,
// every result byte-checked by a sample, and once the reads end the pool drains to nothing within
// its idle time (blockPoolIdleMs).
'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { smartRead, metrics, tuning, engineInfo } = require('smartread');
const { useTempDirs, writePattern, patternBuffer, waitUntil, setUpAsyncEngines } = require('../helpers');

setUpAsyncEngines();
const tempDirs = useTempDirs();

const READS = Number(process.env.SMARTREAD_STRESS_POOL_READS) || 1000;
const MiB = 1024 * 1024;
const SIZE = 128 * MiB;

test(`${READS} back-to-back smartReads of 128 MiB: RSS bounded by the pool, which then drains`, { timeout: 10 * 60 * 1000 }, async (t) => {
  if (engineInfo().engine !== 'native') {
    t.skip('the pool is part of the addon');
    return;
  }
  const file = writePattern(path.join(tempDirs.tmpfs ?? tempDirs.disk, 'big'), SIZE);
  // Bytes at a few offsets, checked in every result (a whole compare per read would double the run).
  const probes = [0, 4095, SIZE / 2 + 17, SIZE - 1].map((offset) => [offset, patternBuffer(1, offset)[0]]);
  const { blockPoolMaxBytes, blockPoolIdleMs } = tuning();
  global.gc();
  const baseline = process.memoryUsage.rss();
  let peak = baseline;
  for (let i = 0; i < READS; i++) {
    const result = await smartRead(file);
    assert.equal(result.length, SIZE);
    for (const [offset, byte] of probes) assert.equal(result[offset], byte, `read ${i}, byte ${offset}`);
    peak = Math.max(peak, process.memoryUsage.rss());
  }
  const limit = 3 * SIZE + blockPoolMaxBytes;
  t.diagnostic(`RSS: ${(baseline / MiB).toFixed(0)} MiB before, peak ${(peak / MiB).toFixed(0)} MiB; `
    + `limit ${(limit / MiB).toFixed(0)} MiB above the start; pool ${JSON.stringify(metrics().blockPool)}`);
  assert.ok(peak - baseline < limit, `RSS grew by ${((peak - baseline) / MiB).toFixed(0)} MiB`);
  assert.ok(metrics().blockPool.hits >= READS / 2, 'the reads recycled their blocks');
  // The last result is garbage now; once it is collected, every block is idle, then released.
  global.gc();
  await new Promise(setImmediate);
  global.gc();
  const drainedBy = Date.now() + blockPoolIdleMs + 5000;
  await waitUntil(() => metrics().blockPool.idleBytes === 0 && metrics().blockPool.lentBytes === 0,
    drainedBy - Date.now(), () => `the pool after the reads: ${JSON.stringify(metrics().blockPool)}`);
  // Released blocks are unmapped by a thread of their own: their pages go back to the system.
  await waitUntil(() => process.memoryUsage.rss() < baseline + 64 * MiB, 5000,
    () => `RSS once drained: ${(process.memoryUsage.rss() / MiB).toFixed(0)} MiB, ${(baseline / MiB).toFixed(0)} MiB before the reads`);
  assert.equal(metrics().blockPool.processBytes, 0);
});
