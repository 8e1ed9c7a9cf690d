// One timed run of one driver, the same loop in the bench's own process and in a peer's (Bun,
// Deno: peer_runner.js): a tinybench task whose operations are consumed by consume.js, preceded
// by a full GC, with the page faults and peak RSS of its timed operations and, for an async
// driver, the event loop's stalls meanwhile. index.js's header says why each part is there.
'use strict';
const { LoopStallRecorder } = require('./loop_stall');
const { ResourceRecorder } = require('./resources');
const { touchEveryPage, sumEveryWord } = require('./consume');

const MIN_SAMPLES = 8;
const WARMUP_MS = 50;
const WARMUP_ITERATIONS = 1;
// A cold operation takes 0.1–0.3 s, and evicting 2,000 files 50–100 ms more: few of them,
// but in every round.
const COLD_OPERATIONS_PER_ROUND = 3;

// glibc's malloc raises its mmap threshold to the size of the largest mapped block freed so far
// (32 MiB at most), and keeps up to twice that free at the top of its heap before giving memory
// back. A process that has freed no block larger than 1 MiB gives its heap's top back after the
// collections that free its 1 MiB Buffers, and the next ones fault their pages in again (47-90
// faults a Buffer against 1-2): fs.readFileSync of a cached 1 MiB file took 300 us and more in a
// fresh runner, 90-117 after the 16 MiB and 128 MiB trials, so a trial's baseline depended on the
// trials before it (ext4's 1 MiB ratio, timed before those, 4.11, and tmpfs's, after them, 0.66,
// in one run). Allocating and freeing one block just under the limit at the start puts every
// process of the run, for all its trials, in the state of a process that has read a large file,
// where Node's and the peers' own allocations cost least. No effect on an allocator that is not
// glibc's (Bun's mimalloc), nor on smartread's block pool, which maps its own blocks. From V8 13
// (Node 24) dead Buffers wait for a full collection, which frees more at once than the settled
// heap keeps: there Buffers of 1 MiB still fault pages in again, 41-50 a Buffer settled, 57-73
// unsettled, 30-32 after a 128 MiB trial, so the order of trials still counts a little.
const SETTLING_BLOCK_BYTES = 31 * 1024 * 1024;

/** Puts the process's allocator in the state described above; collectGarbage frees the block. */
function settleAllocator(collectGarbage) {
  if (typeof collectGarbage !== 'function') return;
  let block = new Uint8Array(SETTLING_BLOCK_BYTES);
  block[block.length - 1] = 1;
  block = null;
  collectGarbage();
}

/**
 * What one run of a driver in a trial times: { time, iterations, warmupTime, warmupIterations }
 * (tinybench's options; no warm-up when warmupIterations is 0): ≥time ms and ≥iterations
 * operations, MIN_SAMPLES over all rounds; a cold trial's `coldOperations` operations
 * (COLD_OPERATIONS_PER_ROUND unless the trial says).
 */
function runTiming({ cold, time, rounds, coldOperations = COLD_OPERATIONS_PER_ROUND }) {
  if (cold) return { time: 0, iterations: coldOperations, warmupTime: 0, warmupIterations: 0 };
  return {
    time,
    iterations: Math.ceil(MIN_SAMPLES / rounds),
    warmupTime: Math.min(WARMUP_MS, time),
    warmupIterations: WARMUP_ITERATIONS,
  };
}

/**
 * Times `operation` (one read; returns the result, or a Promise of it when isAsync) with
 * tinybench's `Bench`, as `timing` (runTiming) says. Each result is consumed, every byte when
 * consumeAll, else one per page. beforeEach(first), when given, runs before every operation,
 * outside the timed region (a cold trial's eviction; `first` for the run's first), and may
 * return a Promise. collectGarbage() runs before the timed operations. loopStall: null for a
 * sync driver, else { recordsInterval } (see loop_stall.js). cpu: with beforeEach, a recorder
 * (resources.js CpuRecorder) started after each beforeEach and stopped after the operation.
 * Returns { samples (ms), resources, loopStall }.
 */
async function timeOperations({ Bench, operation, isAsync, consumeAll, timing, beforeEach = null, collectGarbage, loopStall = null, cpu = null }) {
  const stalls = loopStall ? new LoopStallRecorder(loopStall) : null;
  const resources = new ResourceRecorder();
  let operations = 0;
  // With beforeEach (evicting files on the JS thread) the loop is watched only while an
  // operation runs; otherwise for the whole timed run.
  const perOperation = Boolean(beforeEach);
  const bench = new Bench({
    time: timing.time,
    iterations: timing.iterations,
    warmup: timing.warmupIterations > 0,
    warmupTime: timing.warmupTime,
    warmupIterations: timing.warmupIterations,
    // The GC runs before the timed operations, after the warm-up's garbage.
    setup: (task, mode) => {
      if (mode !== 'run') return;
      collectGarbage();
      operations = 0;
      resources.start();
      if (stalls && !perOperation) stalls.start();
    },
    teardown: async (task, mode) => {
      if (mode !== 'run') return;
      resources.stop(operations);
      if (stalls && !perOperation) await stalls.stop();
    },
    throws: true,
  });
  let first = true;
  const hooks = beforeEach ? {
    async beforeEach(mode) {
      const wasFirst = first;
      first = false;
      await beforeEach(wasFirst);
      if (stalls && mode === 'run') stalls.start();
      if (mode === 'run') cpu?.start();
    },
    async afterEach(mode) {
      if (mode === 'run') cpu?.stop();
      if (stalls && mode === 'run') await stalls.stop();
    },
  } : {};
  const consume = consumeAll ? sumEveryWord : touchEveryPage;
  // An async driver's result is consumed by a promise reaction, not after an await in the task:
  // V8 inlines the consumption into the async function that calls it, where its loop ran ~30%
  // slower than in a sync caller (13.5 against 17.5 us over 64 KiB, the same Buffer each time),
  // and every async driver of Node's and Deno's paid for that in the +consume trials. The task
  // stays an async function, which tinybench tells from its constructor rather than by calling
  // it once outside the timed run.
  bench.add('operation', isAsync
    ? async () => {
      operations++;
      await operation().then(consume);
    }
    : () => {
      operations++;
      consume(operation());
    }, hooks);
  await bench.run();
  return {
    samples: bench.tasks[0].result.latency.samples,
    resources: resources.result(),
    loopStall: stalls ? stalls.result() : null,
  };
}

module.exports = { timeOperations, runTiming, settleAllocator, MIN_SAMPLES, WARMUP_MS, COLD_OPERATIONS_PER_ROUND };
