// Files that change while smartReadSync reads them: a child process resizes the file in place, or
// replaces it by rename, while this process reads it in a loop. A result may be any state the
// file passed through, but never bytes it did not hold.
'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { smartReadSync } = require('smartread');
const { checkNoFdLeak, useTempDirs, patternBuffer, writePattern, firstDifference, stdoutLines } = require('./helpers');

checkNoFdLeak({ spawnsChildren: true });
const tempDirs = useTempDirs();

const MiB = 1 << 20;

// The writer. Every byte it ever writes at offset i is pattern(i), so every byte the file holds
// at offset i is pattern(i), whatever the timing. It prints a line for every round, and runs
// until the stop file appears.
//  - resize: picks a random size in [min, max]; shrinks with ftruncate (to a multiple of 2 MiB,
//    see below), grows by writing the pattern bytes between the old and the new size.
//  - rename: writes a complete file of the next size in `sizes` beside it, renames it over.
// ext4 keeps file data in large folios (up to 2 MiB here) and zeroes the tail of a folio that a
// truncate cuts in two; a read racing that truncate copies those zeros, fs.readFileSync as much
// as smartReadSync (measured: ~5% of reads with unaligned truncates). Truncating at 2 MiB
// boundaries removes whole folios and leaves their bytes alone.
const writerScript = `
  const fs = require('node:fs');
  const { file, stop, mode, min, max, sizes, helpers } = JSON.parse(process.argv[1]);
  const { patternBuffer } = require(helpers);
  const pattern = patternBuffer(max);
  const align = 2 << 20;
  let rounds = 0;
  if (mode === 'resize') {
    const fd = fs.openSync(file, 'r+');
    let size = fs.fstatSync(fd).size;
    console.log('ready');
    while (!fs.existsSync(stop)) {
      const target = min + Math.floor(Math.random() * (max - min + 1));
      if (target < size) {
        size = target - (target % align);
        fs.ftruncateSync(fd, size);
      }
      if (target > size) {
        fs.writeSync(fd, pattern, size, target - size, size);
        size = target;
      }
      console.log(++rounds);
    }
    fs.closeSync(fd);
  } else {
    const next = file + '.next';
    console.log('ready');
    while (!fs.existsSync(stop)) {
      fs.writeFileSync(next, pattern.subarray(0, sizes[rounds % sizes.length]));
      fs.renameSync(next, file);
      console.log(++rounds);
    }
  }
`;

// The ways a read is made: the fast path, the options path, and an fd (read from position 0).
const readers = [
  (file) => smartReadSync(file),
  (file) => smartReadSync(file, { flag: 'r' }),
  (file) => {
    const fd = fs.openSync(file, 'r');
    try {
      return smartReadSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  },
];

/**
 * Reads `file` while the writer changes it, calling check(result, i) on each result: at least
 * `reads` times, until the writer has made `rounds` rounds (how many reads fit in a round
 * depends on the sizes the writer happens to pick) and until the reads have seen `lengths`
 * distinct lengths: a machine under load can leave the writer unscheduled for a whole batch of
 * reads (once in CI, 200 reads all saw the file the test began with), and a read that never sees
 * the file change has not raced the writer. At most 100 times `reads` either way. Returns the
 * number of distinct lengths seen and of reads made.
 */
async function readWhileWriting({ file, mode, min = 0, max, sizes, reads, rounds, lengths: wanted = 1, check }) {
  const stop = `${file}.stop`;
  const options = { file, stop, mode, min, max, sizes, helpers: require.resolve('./helpers') };
  const child = spawn(process.execPath, ['-e', writerScript, JSON.stringify(options)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = stdoutLines(child);
  const writerRounds = () => lines.count() - 1;
  const lengths = new Set();
  let i = 0;
  let failure;
  try {
    assert.equal(await lines.next(), 'ready');
    while ((i < reads || writerRounds() < rounds || lengths.size < wanted) && !lines.exited() && i < reads * 100) {
      const result = readers[i % readers.length](file);
      lengths.add(result.length);
      check(result, i);
      // Lets the writer's progress lines in.
      if (++i % 8 === 0) await new Promise(setImmediate);
    }
  } catch (err) {
    failure = err;
  }
  fs.writeFileSync(stop, '');
  try {
    await lines.all();
  } catch (err) {
    failure ??= err;
  } finally {
    fs.rmSync(stop, { force: true });
  }
  if (failure) throw failure;
  assert.ok(writerRounds() >= rounds, `the writer made ${writerRounds()} rounds during ${i} reads`);
  return { lengths: lengths.size, reads: i };
}

function describeMismatch(result, expected, i, at = firstDifference(result, expected)) {
  return `read ${i}: ${result.length} bytes, byte ${at} is ${result[at]}, the file only ever held ${expected[at]} there`;
}

for (const { kind, dir } of tempDirs.all) {
  for (const { max, min, reads, rounds } of [
    { max: 8 * MiB, min: 0, reads: 400, rounds: 60 },
    // Sizes from 20 to 40 MiB: about half the reads find 32 MiB or more, which the native engine
    // fills with two threads in 8 MiB chunks.
    { max: 40 * MiB, min: 20 * MiB, reads: 40, rounds: 20 },
  ]) {
    test(`${kind}: a file resized between ${min / MiB} and ${max / MiB} MiB while it is read`, async (t) => {
      const file = writePattern(path.join(dir, `resized-${max}`), max);
      const expected = patternBuffer(max);
      let zeroFilled = 0;
      const { lengths, reads: made } = await readWhileWriting({
        file,
        mode: 'resize',
        min,
        max,
        reads,
        rounds,
        lengths: 2,
        check(result, i) {
          assert.ok(Buffer.isBuffer(result), `read ${i} is a Buffer`);
          assert.ok(result.length <= max, `read ${i}: ${result.length} bytes, the file never had more than ${max}`);
          if (result.equals(expected.subarray(0, result.length))) return;
          // Linux does not order read(2) against a concurrent truncate: a tmpfs read that meets a
          // page the truncate just removed copies the zero page instead. Zeros are therefore a
          // possible answer from the kernel; any other byte is not.
          for (let at = firstDifference(result, expected); at < result.length; at++) {
            if (result[at] !== expected[at] && result[at] !== 0) assert.fail(describeMismatch(result, expected, i, at));
          }
          zeroFilled++;
        },
      });
      fs.rmSync(file);
      t.diagnostic(`${made} reads, ${lengths} distinct lengths, ${zeroFilled} with kernel zero pages`);
      assert.ok(lengths > 1, 'the reads saw the file change');
    });
  }

  test(`${kind}: a file replaced by rename while it is read`, async (t) => {
    // Each size is a whole file; 33 MiB + 5 takes the native engine's two-thread path.
    const sizes = [0, 1, 4097, MiB + 1, 5 * MiB + 3, 33 * MiB + 5];
    const max = Math.max(...sizes);
    const file = writePattern(path.join(dir, 'renamed'), max);
    const expected = patternBuffer(max);
    const { lengths, reads } = await readWhileWriting({
      file,
      mode: 'rename',
      max,
      sizes,
      reads: 200,
      rounds: 2 * sizes.length,
      lengths: 2,
      check(result, i) {
        // A rename swaps whole files: a read sees one of them, complete.
        assert.ok(sizes.includes(result.length), `read ${i}: ${result.length} bytes is none of the sizes written`);
        if (!result.equals(expected.subarray(0, result.length))) assert.fail(describeMismatch(result, expected, i));
      },
    });
    fs.rmSync(file, { force: true });
    fs.rmSync(`${file}.next`, { force: true });
    t.diagnostic(`${reads} reads, ${lengths} distinct lengths`);
    assert.ok(lengths > 1, 'the reads saw different files');
  });
}
