// Files that change while smartRead reads them, on every strategy: truncated, grown, replaced by
// rename, or deleted, 1,000 rounds of the writer each, with reads in flight all along. A result
// is only ever bytes some version of the file held (a prefix of it), or zeros where the kernel
// itself hands them out during a truncate (see read-sync-races.test.js), or, for a deleted file,
// ENOENT from open as node:fs gives it. Never a crash, never a descriptor left open.
'use strict';
const { test, describe, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { Worker } = require('node:worker_threads');
const { smartRead, readMany, engineInfo, tuning, setTuning } = require('smartread');
const {
  checkNoFdLeak, useTempDirs, patternBuffer, writePattern, withinTime, STRATEGIES, skipUnlessAvailable,
  setUpAsyncEngines, PERIOD,
} = require('./helpers');

setUpAsyncEngines();
checkNoFdLeak();
const tempDirs = useTempDirs();

const KiB = 1024;
const ROUNDS = Number(process.env.SMARTREAD_TEST_RACE_ROUNDS) || 1000;
const MAX = 600 * KiB;
// The sizes of versions 0 to 6 (version 0 is the file as the test writes it): empty, the fast path's sizes, one
// READ, and several io_uring chunks (chunks are lowered to 128 KiB below).
const SIZES = [MAX, 0, 1, 4097, 64 * KiB + 3, 200 * KiB, 300 * KiB + 1];

// Chunks of 128 KiB make the files here take io_uring's chunked path too; restored after.
let savedTuning;
before(() => {
  if (engineInfo().engine === 'native') {
    savedTuning = tuning();
    setTuning({ uringChunk: 128 * KiB });
  }
});
after(() => {
  if (savedTuning) setTuning(savedTuning);
});

// The writer, in a worker thread: counts its rounds in shared memory and stops when told.
// Version v of a replaced or recreated file is the pattern shifted by v (mod 251), so that a
// result mixing two versions is caught. In-place writers only ever write pattern(i) at offset i.
const writerSource = `
  const { workerData } = require('node:worker_threads');
  const fs = require('node:fs');
  const { patternBuffer } = require(workerData.helpers);
  const { file, mode, max, sizes, shared } = workerData;
  const state = new Int32Array(shared); // [0]: rounds done, [1]: stop
  const versions = Array.from({ length: 7 }, (_, v) => patternBuffer(max, v));
  const pattern = versions[0];
  const next = file + '.next';
  let size = fs.statSync(file).size;
  const fd = mode === 'truncate' || mode === 'grow' ? fs.openSync(file, 'r+') : -1;
  let round = 0;
  while (Atomics.load(state, 1) === 0) {
    round++;
    const r = Math.random();
    if (mode === 'truncate') {
      const to = Math.floor(r * max);
      fs.ftruncateSync(fd, to);
      const back = to + Math.floor(Math.random() * (max - to + 1));
      fs.writeSync(fd, pattern, to, back - to, to);
    } else if (mode === 'grow') {
      if (size >= max) {
        fs.ftruncateSync(fd, 0);
        size = 0;
      }
      const to = Math.min(max, size + 1 + Math.floor(r * 128 * 1024));
      fs.writeSync(fd, pattern, size, to - size, size);
      size = to;
    } else {
      const v = round % versions.length;
      if (mode === 'delete') fs.rmSync(file, { force: true });
      fs.writeFileSync(next, versions[v].subarray(0, sizes[round % sizes.length]));
      if (mode === 'delete' && round % 2 === 0) fs.rmSync(next); // stays deleted for a while
      else fs.renameSync(next, file);
    }
    Atomics.store(state, 0, round);
  }
  if (fd >= 0) fs.closeSync(fd);
`;

// The shift (0..250) of the pattern whose first byte is b: (shift * 7 + 3) % 251 === b.
function shiftOf(b) {
  return (((b - 3) * 36) % PERIOD + PERIOD) % PERIOD; // 36 is 7's inverse modulo 251
}

/**
 * Checks one result: null when it is acceptable, else what is wrong with it. `zeros`: a truncate
 * may hand out zeros.
 */
function problemWith(result, { mode, file }) {
  if (result instanceof Error) {
    if (mode === 'delete' && result.code === 'ENOENT' && result.syscall === 'open' && result.path === file &&
        result.message === `ENOENT: no such file or directory, open '${file}'`) return null;
    return `error ${result.code} ${result.syscall}: ${result.message}`;
  }
  if (!Buffer.isBuffer(result)) return `not a Buffer: ${typeof result}`;
  if (result.length > MAX) return `${result.length} bytes, the file never held more than ${MAX}`;
  if (result.length === 0) return null;
  if (mode === 'replace' || mode === 'delete') {
    // Whole versions are renamed in: a prefix of one of them, no zeros.
    const shift = shiftOf(result[0]);
    if (shift > 6) return `first byte ${result[0]} starts no version`;
    if (result.length > SIZES[shift]) return `${result.length} bytes, version ${shift} held ${SIZES[shift]}`;
    if (!result.equals(patternBuffer(result.length, shift))) return `${result.length} bytes mixing versions (first from version ${shift})`;
    return null;
  }
  const expected = patternBuffer(result.length);
  if (result.equals(expected)) return null;
  for (let i = 0; i < result.length; i++) {
    if (result[i] !== expected[i] && result[i] !== 0) return `byte ${i} is ${result[i]}, the file only ever held ${expected[i]} (or a kernel zero) there`;
  }
  return null;
}

/**
 * Reads `file` on `strategy` with `inFlight` reads going (smartRead, and every eighth a readMany
 * of two) until the writer has made ROUNDS rounds; returns counts.
 */
async function readWhileWriting({ file, mode, strategy, inFlight = 8 }) {
  const shared = new SharedArrayBuffer(8);
  const state = new Int32Array(shared);
  const writer = new Worker(writerSource, {
    eval: true,
    workerData: { file, mode, max: MAX, sizes: SIZES, shared, helpers: require.resolve('./helpers') },
  });
  const writerError = new Promise((_, reject) => writer.once('error', reject));
  const counts = { reads: 0, errors: 0, lengths: new Set(), problems: [] };
  const note = (result) => {
    counts.reads++;
    if (result instanceof Error) counts.errors++;
    else counts.lengths.add(result.length);
    const problem = problemWith(result, { mode, file });
    if (problem && counts.problems.length < 5) counts.problems.push(problem);
  };
  let n = 0;
  const lane = async () => {
    while (Atomics.load(state, 0) < ROUNDS && counts.problems.length === 0) {
      if (n++ % 8 === 7) {
        const results = await readMany([file, file], { strategy, settle: true });
        for (const r of results) note(r.status === 'fulfilled' ? r.value : r.reason);
      } else {
        note(await smartRead(file, { strategy }).catch((err) => err));
      }
    }
  };
  try {
    await withinTime(Promise.race([Promise.all(Array.from({ length: inFlight }, lane)), writerError]), 120000, `reads of a file the writer ${mode}s`);
  } finally {
    Atomics.store(state, 1, 1);
    await withinTime(new Promise((resolve) => writer.once('exit', resolve)), 30000, 'the writer ending');
  }
  return counts;
}

const modes = {
  truncate: 'truncated to a random size and written back, in place',
  grow: 'grown by appending, and truncated to 0 when full',
  replace: 'replaced by renaming another version over it',
  delete: 'deleted, and renamed back in every other round',
};

for (const { kind, dir } of tempDirs.all) {
  describe(`${kind}: a file that changes while it is read, ${ROUNDS} rounds of the writer`, () => {
    for (const [mode, what] of Object.entries(modes)) {
      for (const strategy of STRATEGIES) {
        test(`${mode} (${what}), strategy '${strategy}'`, async (t) => {
          if (skipUnlessAvailable(t, strategy)) return;
          const file = path.join(dir, `${mode}-${strategy}`);
          writePattern(file, MAX);
          const counts = await readWhileWriting({ file, mode, strategy });
          fs.rmSync(file, { force: true });
          fs.rmSync(`${file}.next`, { force: true });
          assert.deepEqual(counts.problems, [], `results the file never held (of ${counts.reads} reads)`);
          t.diagnostic(`${counts.reads} reads, ${counts.lengths.size} distinct lengths, ${counts.errors} ENOENT`);
          // Two outcomes at least: two lengths, or (when the writer deletes it) the file and its
          // absence. A delete run on the sync engine once saw one length and 3,362 ENOENTs.
          const outcomes = counts.lengths.size + (counts.errors > 0 ? 1 : 0);
          assert.ok(outcomes > 1, 'the reads saw the file change');
        });
      }
    }
  });
}
