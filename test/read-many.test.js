// readMany: results in input order at every concurrency and on every strategy, the first error
// naming its file, settle mode's statuses and node:fs-style reasons, argument validation as
// rejections, encodings applied to every result, and no descriptor left open.
'use strict';
const { test, describe, before } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const { createHook } = require('node:async_hooks');
const v8 = require('node:v8');
const vm = require('node:vm');
const { readMany, smartRead, tuning, setTuning, metrics } = require('smartread');
const {
  checkNoFdLeak, useTempDirs, openFdCount, openFds, patternBuffer, assertSameBytes, errorFacts, rejectionOf, waitUntil,
  STRATEGIES, skipUnlessAvailable, setUpAsyncEngines, countLoopTurns, skipWithoutOpenat2, syscallCounts, syscallTrace,
} = require('./helpers');

setUpAsyncEngines();
checkNoFdLeak();
const tempDirs = useTempDirs();

const dir = tempDirs.tmpfs ?? tempDirs.disk;
const missing = path.join(tempDirs.disk, 'missing');

v8.setFlagsFromString('--expose-gc');
const collectGarbage = vm.runInNewContext('gc');

/** File i's 4 KiB: pattern bytes from offset i, with i itself at both ends, so no two are alike. */
function contentOf(i) {
  const bytes = patternBuffer(4096, i);
  bytes.writeUInt32LE(i, 0);
  bytes.writeUInt32LE(i, 4092);
  return bytes;
}

const fileCount = 2000;
const files = [];
before(() => {
  for (let i = 0; i < fileCount; i++) {
    const file = path.join(dir, `file-${i}`);
    fs.writeFileSync(file, contentOf(i));
    files.push(file);
  }
});

/** False, with t skipped (`why`), where the addon is not in use; else the tuning is put back after t. */
function addonWithTuningRestored(t, why) {
  const { native } = require('../dist/engine/engine.js');
  if (native === null) {
    t.skip(why);
    return false;
  }
  const before = tuning();
  t.after(() => setTuning(before));
  return true;
}

/** Fresh FIFOs named `prefix`-0.. in the disk directory. */
function makeFifos(prefix, count) {
  const fifos = Array.from({ length: count }, (_, i) => path.join(tempDirs.disk, `${prefix}-${i}`));
  for (const fifo of fifos) {
    fs.rmSync(fifo, { force: true });
    require('node:child_process').execFileSync('mkfifo', [fifo]);
  }
  return fifos;
}

/**
 * A writer of the FIFO opened without blocking, or -1 (ENXIO) while it has no reader: a reader
 * has it open, or waits in open(2) for a writer, once this gives a descriptor, which also lets
 * that reader go on.
 */
function writerOf(fifo) {
  try {
    return fs.openSync(fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
  } catch (err) {
    if (err.code === 'ENXIO') return -1;
    throw err;
  }
}

/** Asserts results[i] holds file i's bytes for every i. */
function assertInOrder(results, indexes, what) {
  assert.ok(Array.isArray(results), `${what}: an array`);
  assert.equal(results.length, indexes.length, `${what}: one result per path`);
  for (let k = 0; k < indexes.length; k++) {
    assert.ok(Buffer.isBuffer(results[k]), `${what}: result ${k} is a Buffer`);
    assertSameBytes(results[k], contentOf(indexes[k]), `${what}: result ${k}`);
  }
}

const all = Array.from({ length: fileCount }, (_, i) => i);

for (const strategy of STRATEGIES) {
  describe(`strategy '${strategy}'`, () => {
    for (const concurrency of [1, 7, 64, 256]) {
      test(`2,000 files of 4 KiB, concurrency ${concurrency}: results in input order`, async (t) => {
        if (skipUnlessAvailable(t, strategy)) return;
        const fdsBefore = openFdCount();
        assertInOrder(await readMany(files, { strategy, concurrency }), all, 'in order');
        // Reversed and shuffled input: the order is the input's, not the files'.
        const shuffled = all.map((i) => (i * 1237) % fileCount).reverse();
        assertInOrder(await readMany(shuffled.map((i) => files[i]), { strategy, concurrency }), shuffled, 'shuffled');
        assert.equal(openFdCount(), fdsBefore, `descriptors: ${JSON.stringify(openFds())}`);
      });
    }

    test('the default concurrency, paths of every form, an fd and the same file twice', async (t) => {
      if (skipUnlessAvailable(t, strategy)) return;
      const fd = fs.openSync(files[3], 'r');
      try {
        const paths = [files[0], Buffer.from(files[1]), pathToFileURL(files[2]), fd, files[0], new Uint8Array(Buffer.from(files[4]))];
        assertInOrder(await readMany(paths, { strategy }), [0, 1, 2, 3, 0, 4], 'mixed forms');
      } finally {
        fs.closeSync(fd);
      }
      // Any iterable: a Set and a generator.
      assertInOrder(await readMany(new Set(files.slice(10, 20)), { strategy }), all.slice(10, 20), 'a Set');
      function* some() { yield files[5]; yield files[6]; }
      assertInOrder(await readMany(some(), { strategy }), [5, 6], 'a generator');
    });

    test('an encoding applies to every result', async (t) => {
      if (skipUnlessAvailable(t, strategy)) return;
      const some = files.slice(0, 50);
      for (const encoding of ['utf8', 'latin1', 'hex', 'base64', 'utf16le']) {
        for (const options of [{ encoding, strategy }, { encoding, strategy, concurrency: 3 }]) {
          const results = await readMany(some, options);
          assert.equal(results.length, some.length);
          for (let i = 0; i < some.length; i++) {
            assert.equal(typeof results[i], 'string');
            assert.ok(results[i] === contentOf(i).toString(encoding), `${encoding}: result ${i}`);
          }
        }
      }
      // An encoding given as a string, on the default strategy.
      if (strategy === 'auto') {
        const results = await readMany(some, 'hex');
        for (let i = 0; i < some.length; i++) assert.ok(results[i] === contentOf(i).toString('hex'));
      }
    });

    test('the first error rejects the whole call, node:fs-style, naming the failing path', async (t) => {
      if (skipUnlessAvailable(t, strategy)) return;
      const fdsAtStart = openFdCount();
      const expected = await rejectionOf(() => fs.promises.readFile(missing), 'fs.promises.readFile');
      for (const concurrency of [1, 7, 64]) {
        const paths = [...files.slice(0, 100), missing, ...files.slice(100, 200)];
        const err = await rejectionOf(() => readMany(paths, { strategy, concurrency }), 'readMany');
        assert.deepEqual(errorFacts(err), errorFacts(expected));
        assert.equal(err.path, missing);
        // Reads already in flight in other lanes finish after the rejection and close their files.
        // Counted against the test's start, not this round's: a read of the round before that
        // waited for its turn (turn_clock.ts) may open its file after that round's count came
        // back, and still be open as this round starts (a Node 24 CI run; twice in about 440 runs
        // here beside a busy suite: file-93 was open at this round's first count, then closed).
        await waitUntil(() => openFdCount() === fdsAtStart, 10000,
          () => `descriptors after the reads in flight ended: ${JSON.stringify(openFds())}`);
      }
      // With one read at a time, the first failing path in input order is the one reported.
      const directory = tempDirs.disk;
      const err = await rejectionOf(() => readMany([files[0], `${missing}-1`, directory, `${missing}-2`], { strategy, concurrency: 1 }), 'readMany');
      assert.equal(err.code, 'ENOENT');
      assert.equal(err.path, `${missing}-1`);
      assert.equal(err.message, `ENOENT: no such file or directory, open '${missing}-1'`);
      // An invalid path in the list rejects with node:fs's argument error. One read at a time, so
      // that no read of files[0] is still on its way to open(2) when the call has rejected.
      const invalid = await rejectionOf(() => readMany([files[0], {}], { strategy, concurrency: 1 }), 'readMany');
      assert.deepEqual(errorFacts(invalid), errorFacts(await rejectionOf(() => fs.promises.readFile({}))));
      await waitUntil(() => openFdCount() === fdsAtStart, 10000,
        () => `descriptors after the reads in flight ended: ${JSON.stringify(openFds())}`);
    });

    test('settle: one { status, value | reason } per path, in order, with node:fs-style reasons', async (t) => {
      if (skipUnlessAvailable(t, strategy)) return;
      const directory = tempDirs.disk;
      const plan = [];
      for (let i = 0; i < 300; i++) {
        if (i % 7 === 3) plan.push({ path: `${missing}-${i}` });
        else if (i % 50 === 11) plan.push({ path: directory });
        else if (i === 299) plan.push({ path: `${files[0]}\u0000` });
        else plan.push({ path: files[i], index: i });
      }
      for (const concurrency of [1, 64]) {
        const fdsBefore = openFdCount();
        const results = await readMany(plan.map((p) => p.path), { strategy, concurrency, settle: true });
        assert.equal(results.length, plan.length);
        for (let k = 0; k < plan.length; k++) {
          const { path: target, index } = plan[k];
          if (index !== undefined) {
            assert.deepEqual(Object.keys(results[k]), ['status', 'value']);
            assert.equal(results[k].status, 'fulfilled', `result ${k}`);
            assertSameBytes(results[k].value, contentOf(index), `result ${k}`);
          } else {
            assert.deepEqual(Object.keys(results[k]), ['status', 'reason']);
            assert.equal(results[k].status, 'rejected', `result ${k}`);
            const expected = await rejectionOf(() => fs.promises.readFile(target), 'fs.promises.readFile');
            assert.deepEqual(errorFacts(results[k].reason), errorFacts(expected), `result ${k}`);
            assert.equal(results[k].reason.constructor, expected.constructor);
          }
        }
        assert.equal(openFdCount(), fdsBefore, `descriptors: ${JSON.stringify(openFds())}`);
      }
      // All good, all bad, and with an encoding.
      const good = await readMany(files.slice(0, 5), { strategy, settle: true, encoding: 'hex' });
      assert.deepEqual(good, all.slice(0, 5).map((i) => ({ status: 'fulfilled', value: contentOf(i).toString('hex') })));
      const bad = await readMany([missing, missing], { strategy, settle: true });
      assert.deepEqual(bad.map((r) => [r.status, r.reason.code, r.reason.path]), [['rejected', 'ENOENT', missing], ['rejected', 'ENOENT', missing]]);
    });

    test('an empty list resolves to []', async (t) => {
      if (skipUnlessAvailable(t, strategy)) return;
      assert.deepEqual(await readMany([], { strategy }), []);
      assert.deepEqual(await readMany([], { strategy, settle: true }), []);
      assert.deepEqual(await readMany(new Set(), { strategy, concurrency: 1 }), []);
    });
  });
}

describe('invalid arguments reject (never throw)', () => {
  for (const [name, paths] of Object.entries({
    undefined, null: null, 'a number': 5, 'a string (one path)': '/proc/version', 'an object': {},
  })) {
    test(`paths: ${name}: TypeError ERR_INVALID_ARG_TYPE`, async () => {
      const err = await rejectionOf(() => readMany(paths), 'readMany');
      assert.ok(err instanceof TypeError, String(err));
      assert.equal(err.code, 'ERR_INVALID_ARG_TYPE');
      assert.match(err.message, /^The "paths" argument must be an iterable of paths\. Received /);
    });
  }

  for (const concurrency of [0, -1, 1.5, 'x', NaN, Infinity, '4', true]) {
    test(`concurrency ${String(typeof concurrency === 'string' ? `'${concurrency}'` : concurrency)}: TypeError ERR_INVALID_ARG_VALUE`, async () => {
      for (const list of [files.slice(0, 3), []]) {
        const err = await rejectionOf(() => readMany(list, { concurrency }), 'readMany');
        assert.ok(err instanceof TypeError, String(err));
        assert.equal(err.code, 'ERR_INVALID_ARG_VALUE');
        assert.match(err.message, /^The property 'options\.concurrency' must be an integer >= 1\. Received /);
      }
    });
  }

  test("options that smartRead refuses: the same errors ('bogus' encoding, bad strategy, signal, options type)", async () => {
    for (const options of ['bogus', { encoding: 'bogus' }, { strategy: 'fast' }, { signal: 'x' }, 5]) {
      const expected = await rejectionOf(() => smartRead(files[0], options), 'smartRead');
      const actual = await rejectionOf(() => readMany(files.slice(0, 2), options), 'readMany');
      assert.deepEqual(errorFacts(actual), errorFacts(expected), JSON.stringify(options));
    }
  });

  // A Buffer is a path, not a list: iterated, it would be bytes taken for fds.
  test('paths: a Buffer (one path, iterable as bytes): TypeError ERR_INVALID_ARG_TYPE, as for a string', async () => {
    const err = await rejectionOf(() => readMany(Buffer.from(files[0])), 'readMany');
    assert.ok(err instanceof TypeError, String(err));
    assert.equal(err.code, 'ERR_INVALID_ARG_TYPE');
  });

  test('concurrency undefined or null means the default', async () => {
    for (const concurrency of [undefined, null]) {
      assertInOrder(await readMany(files.slice(0, 3), { concurrency }), [0, 1, 2], `concurrency ${concurrency}`);
    }
  });

  test('concurrency 1 and concurrency larger than the list are fine', async () => {
    assertInOrder(await readMany(files.slice(0, 3), { concurrency: 1 }), [0, 1, 2], 'concurrency 1');
    assertInOrder(await readMany(files.slice(0, 3), { concurrency: 10000 }), [0, 1, 2], 'concurrency 10000');
  });
});

describe("'auto': runs of the list read on pool threads beside the JS thread", () => {
  // A list of every kind, twice over: small files on tmpfs and disk, files at and past what a run
  // on a pool thread takes (4 MiB, past the fast path's budget too), a directory, missing names,
  // /proc files (no size), Buffer paths, and the same file several times.
  function mixedPlan() {
    const plan = [];
    const sizes = [1, 4096, 100 * 1024, 256 * 1024 + 1, 4 * 1024 * 1024, 4 * 1024 * 1024 + 1];
    const sized = [];
    for (const { kind, dir: where } of tempDirs.all) {
      for (const size of sizes) {
        const file = path.join(where, `mixed-${size}`);
        fs.writeFileSync(file, patternBuffer(size, size));
        sized.push(file);
      }
      sized.push(path.join(where, `mixed-empty-${kind}`));
      fs.writeFileSync(sized.at(-1), '');
    }
    for (let i = 0; i < 600; i++) {
      if (i % 97 === 5) plan.push(tempDirs.disk);
      else if (i % 89 === 7) plan.push(`${missing}-${i}`);
      else if (i % 83 === 9) plan.push('/proc/self/status');
      else if (i % 79 === 11) plan.push(Buffer.from(files[i]));
      else if (i % 13 === 0) plan.push(sized[i % sized.length]);
      else plan.push(files[i % 500]);
    }
    return plan;
  }

  // Counts the runs that went to pool threads while fn runs (each is an async resource of its
  // own type).
  async function poolRuns(fn) {
    let runs = 0;
    const hook = createHook({
      init(id, type) {
        if (type === 'smartread:cachedReadRun') runs++;
      },
    }).enable();
    try {
      await fn();
    } finally {
      hook.disable();
    }
    return runs;
  }

  // The list read once (its sizes known after), then again with runs on pool threads: the bytes
  // of each file (expectedOf(i)), and no descriptor left open. The second call's results.
  async function readWarmInRuns(kind, list, expectedOf) {
    await readMany(list);
    const fdsBefore = openFdCount();
    let results;
    assert.ok(await poolRuns(async () => {
      results = await readMany(list);
    }) > 0, `${kind}: runs went to pool threads`);
    list.forEach((file, i) => assertSameBytes(results[i], expectedOf(i), `${kind}: ${i}`));
    assert.equal(openFdCount(), fdsBefore, `${kind}: descriptors: ${JSON.stringify(openFds())}`);
    return results;
  }

  test('every result is what fs.promises.readFile gives, bytes and errors, on every pass', async (t) => {
    if (!addonWithTuningRestored(t, 'runs on pool threads are part of the addon')) return;
    const plan = mixedPlan();
    // Two threads whatever the machine's cores; 0 leaves the JS thread alone.
    setTuning({ readManyThreads: 2 });
    const runs = await poolRuns(async () => {
      for (let pass = 0; pass < 3; pass++) {
        const fdsBefore = openFdCount();
        const results = await readMany(plan, { settle: true });
        for (let k = 0; k < plan.length; k++) {
          const target = plan[k];
          if (typeof target === 'string' && target.startsWith('/proc/')) {
            assert.equal(results[k].status, 'fulfilled', `${pass}/${k}: ${target}`);
            continue;
          }
          let expected;
          try {
            expected = { status: 'fulfilled', value: await fs.promises.readFile(target) };
          } catch (err) {
            expected = { status: 'rejected', reason: err };
          }
          assert.equal(results[k].status, expected.status, `${pass}/${k}: ${target}`);
          if (expected.status === 'fulfilled') assertSameBytes(results[k].value, expected.value, `${pass}/${k}: ${target}`);
          else assert.deepEqual(errorFacts(results[k].reason), errorFacts(expected.reason), `${pass}/${k}: ${target}`);
        }
        assert.equal(openFdCount(), fdsBefore, `descriptors: ${JSON.stringify(openFds())}`);
      }
    });
    assert.ok(runs > 0, 'runs went to pool threads');
    setTuning({ readManyThreads: 0 });
    let alone;
    assert.equal(await poolRuns(async () => {
      alone = await readMany(plan, { settle: true });
    }), 0, 'readManyThreads 0: none');
    assert.equal(alone.length, plan.length);
  });

  test('the call\'s encoding and root apply to every hit of a run, on the JS thread and on pool threads', async (t) => {
    if (!addonWithTuningRestored(t, 'runs on pool threads are part of the addon') || skipWithoutOpenat2(t)) return;
    setTuning({ readManyThreads: 2 });
    const some = files.slice(0, 600);
    const names = some.map((file) => path.basename(file));
    for (const [what, list, options] of [
      ['hex', some, { encoding: 'hex' }],
      ['latin1 beneath a root', names, { encoding: 'latin1', root: dir }],
      ['Buffers beneath a root', names, { root: dir }],
    ]) {
      let results;
      assert.ok(await poolRuns(async () => {
        results = await readMany(list, options);
      }) > 0, `${what}: runs went to pool threads`);
      for (let i = 0; i < some.length; i++) {
        const expected = options.encoding ? contentOf(i).toString(options.encoding) : contentOf(i);
        if (options.encoding) assert.ok(results[i] === expected, `${what}: result ${i}`);
        else assertSameBytes(results[i], expected, `${what}: result ${i}`);
      }
    }
  });

  test('a file that changes between passes is read as it is now', async () => {
    const list = files.slice(0, 400).map((file, i) => path.join(path.dirname(file), `changing-${i}`));
    list.forEach((file, i) => fs.writeFileSync(file, contentOf(i)));
    assert.deepEqual((await readMany(list)).map((b) => b.length), list.map(() => 4096));
    // Shrunk, grown, replaced by a directory, removed.
    fs.writeFileSync(list[150], 'short');
    fs.writeFileSync(list[250], Buffer.concat([contentOf(250), contentOf(251)]));
    fs.rmSync(list[300]);
    fs.mkdirSync(list[300]);
    fs.rmSync(list[350]);
    const results = await readMany(list, { settle: true });
    assert.equal(results[150].value.toString(), 'short');
    assertSameBytes(results[250].value, Buffer.concat([contentOf(250), contentOf(251)]));
    assert.equal(results[300].reason.code, 'EISDIR');
    assert.equal(results[350].reason.code, 'ENOENT');
    assertSameBytes(results[399].value, contentOf(399));
    fs.rmdirSync(list[300]);
  });

  test('runs longer than their slab holds leave the rest to the JS thread, on disk and tmpfs', async (t) => {
    if (!addonWithTuningRestored(t, 'runs on pool threads are part of the addon')) return;
    setTuning({ readManyThreads: 1 });
    // 96 KiB each, and a run takes up to 256: its slab holds 21 of them while their sizes are
    // not known (2 MiB), 85 once they are (8 MiB, the most).
    for (const { kind, dir: where } of tempDirs.all) {
      const list = [];
      for (let i = 0; i < 600; i++) {
        list.push(path.join(where, `slab-${i}`));
        fs.writeFileSync(list[i], patternBuffer(96 * 1024, i));
      }
      await readWarmInRuns(kind, list, (i) => patternBuffer(96 * 1024, i));
    }
  });

  test('runs take files of more than 256 KiB too: their results share the run\'s block', async (t) => {
    // A run reads with openat2 (RESOLVE_CACHED); without it every file is left to the lanes.
    if (!addonWithTuningRestored(t, 'runs on pool threads are part of the addon') || skipWithoutOpenat2(t)) return;
    setTuning({ readManyThreads: 1 });
    // 130 files (runs from the start are for more than 128 paths), every fourth of 300 KiB, the
    // rest of 4 KiB: a run of 65 of them, their sizes known from the first call, reads its 16 of
    // 300 KiB into a slab of 8 MiB beside the others, lent as the Buffer their results share.
    // (Runs took files of at most 256 KiB: each of 300 KiB was read on the JS thread into a
    // Buffer of its own.)
    const sizeOf = (i) => (i % 4 === 0 ? 300 * 1024 : 4096);
    for (const { kind, dir: where } of tempDirs.all) {
      const list = Array.from({ length: 130 }, (_, i) => path.join(where, `large-in-run-${i}`));
      list.forEach((file, i) => fs.writeFileSync(file, patternBuffer(sizeOf(i), i)));
      const results = await readWarmInRuns(kind, list, (i) => patternBuffer(sizeOf(i), i));
      const holders = new Map();
      for (const r of results) holders.set(r.buffer, (holders.get(r.buffer) ?? 0) + 1);
      const large = results.filter((r, i) => sizeOf(i) > 256 * 1024);
      assert.ok(large.some((r) => holders.get(r.buffer) > 1), `${kind}: none of the ${large.length} results of 300 KiB shares its ArrayBuffer`);
      for (const file of list) fs.rmSync(file);
    }
  });

  test('a list too short for runs from its start hands half of what is left to one when enough work is left', async (t) => {
    // A run is handed out once the fast path has spent a turn's share on hits (openat2).
    if (!addonWithTuningRestored(t, 'runs on pool threads are part of the addon') || skipWithoutOpenat2(t)) return;
    // A turn's share of 25 µs: spent after a few files of 200 KiB, with most of the list left,
    // far more than kHandOffMinMs of work on any machine (tens of µs a file).
    setTuning({ readManyThreads: 1, fastPathBudgetUs: 50 });
    const sizeOf = (i) => (i % 16 === 15 ? 4 * 1024 * 1024 + 4096 : 200 * 1024);
    for (const { kind, dir: where } of tempDirs.all) {
      // 101 paths (runs from the start are for more than 128): files of 200 KiB, some of 4 MiB
      // and 4 KiB (more than a run takes: left to the lanes), a missing one.
      const list = Array.from({ length: 100 }, (_, i) => path.join(where, `handoff-${i}`));
      list.forEach((file, i) => fs.writeFileSync(file, patternBuffer(sizeOf(i), i)));
      const withMissing = [...list.slice(0, 50), `${missing}-handoff`, ...list.slice(50)];
      const expected = (k) => (k < 50 ? k : k - 1);
      await readMany(list);
      const fdsBefore = openFdCount();
      let results;
      assert.ok(await poolRuns(async () => {
        results = await readMany(withMissing, { settle: true });
      }) > 0, `${kind}: a run went to a pool thread`);
      const check = (what) => withMissing.forEach((file, k) => {
        if (k === 50) {
          assert.equal(results[k].reason.code, 'ENOENT', `${what} ${kind}: ${k}`);
          return;
        }
        assertSameBytes(results[k].value, patternBuffer(sizeOf(expected(k)), expected(k)), `${what} ${kind}: ${k}`);
      });
      check('read:');
      assert.equal(openFdCount(), fdsBefore, `${kind}: descriptors: ${JSON.stringify(openFds())}`);
      // A run's results share the block it read them into: not handed out again while they
      // live, whatever is read and collected meanwhile.
      for (let i = 0; i < 3; i++) {
        collectGarbage();
        await new Promise(setImmediate);
        await readMany(list.slice().reverse());
      }
      check('kept:');
      // Not with a concurrency of 1.
      assert.equal(await poolRuns(() => readMany(list, { concurrency: 1 })), 0, `${kind}: concurrency 1`);
    }
    const onDisk = Array.from({ length: 100 }, (_, i) => path.join(tempDirs.disk, `handoff-${i}`));
    // Every run on the JS thread as long as a turn's share allows: after the first (16 files),
    // 7 left are never handed off (kHandOffMin), 84 of 200 KiB are (whether less work than
    // kHandOffMinMs is left depends on the machine's pace: the bench shows that rule).
    setTuning({ fastPathBudgetUs: 1_000_000 });
    assert.equal(await poolRuns(() => readMany(onDisk.slice(0, 23))), 0, 'seven files left: none');
    assert.ok(await poolRuns(() => readMany(onDisk)) > 0, '84 files of 200 KiB left: one');
    setTuning({ readManyThreads: 0, fastPathBudgetUs: 50 });
    assert.equal(await poolRuns(() => readMany(onDisk)), 0, 'readManyThreads 0: none');
  });

  test('a run shared with the JS thread: each file is read by one side, its results given once', async (t) => {
    if (!addonWithTuningRestored(t, 'runs on pool threads are part of the addon') || skipWithoutOpenat2(t)) return;
    const { native } = require('../dist/engine/engine.js');
    const list = files.slice(0, 40);
    await readMany(list);
    // Claimed here at once: the pool thread, woken meanwhile or after, reads those it claims
    // first.
    const [settled, run] = native.cachedReadRun(list, 0, 40, fs.constants.O_RDONLY);
    const claimed = [];
    for (let k; (k = native.cachedRunClaim(run)) >= 0;) claimed.push(k);
    // Whatever the pool thread claimed first is settled here once it is read (1 ms at most).
    let results;
    await waitUntil(() => (results = native.cachedRunSettle(run, 1000)) !== undefined, 10000, () => 'the run settled here');
    const [slab, marks] = results;
    const readThere = [];
    for (let k = 0; k < 40; k++) {
      if (marks[2 * k] === -6) continue;
      readThere.push(k);
      assertSameBytes(slab.subarray(marks[2 * k + 1], marks[2 * k + 1] + marks[2 * k]), contentOf(k), `read there: ${k}`);
    }
    // Every file once: claimed here, or read there, each side's in order from one counter.
    assert.deepEqual([...readThere, ...claimed].sort((a, b) => a - b), Array.from({ length: 40 }, (_, k) => k));
    assert.ok(claimed.every((k, i) => i === 0 || k > claimed[i - 1]), `claimed in order: ${claimed}`);
    assert.equal(await settled, undefined, 'the promise gives nothing once the results were given here');
    assert.equal(native.cachedRunClaim(run), -1);
    assert.equal(native.cachedRunSettle(run, 0), undefined, 'given once');
    // Settled before its files were all claimed: those nobody had claimed are left (-4), for
    // the lanes' own read, and the pool thread reads none of them after.
    const [early, cut] = native.cachedReadRun(list, 0, 40, fs.constants.O_RDONLY);
    let cutResults;
    await waitUntil(() => (cutResults = native.cachedRunSettle(cut, 1000)) !== undefined, 10000, () => 'the run settled here');
    for (let k = 0; k < 40; k++) {
      const size = cutResults[1][2 * k];
      if (size === -4) continue;
      assertSameBytes(cutResults[0].subarray(cutResults[1][2 * k + 1], cutResults[1][2 * k + 1] + size), contentOf(k), `cut: ${k}`);
    }
    assert.equal(await early, undefined);
    assert.equal(native.cachedRunClaim(cut), -1, 'no claims after the run settled');
    // A run not helped with settles through its promise, and then no longer here.
    const [alone, other] = native.cachedReadRun(list, 0, 8, fs.constants.O_RDONLY);
    const [otherSlab, otherMarks] = await alone;
    for (let k = 0; k < 8; k++) assertSameBytes(otherSlab.subarray(otherMarks[2 * k + 1], otherMarks[2 * k + 1] + otherMarks[2 * k]), contentOf(k), `${k}`);
    assert.equal(native.cachedRunClaim(other), -1);
    assert.equal(native.cachedRunSettle(other, 0), undefined);
    // Anything else for a run, another handle of the addon's too: a TypeError, not a crash.
    const mapped = native.mapFile(files[0], fs.constants.O_RDONLY, 0, -1, 0, false);
    for (const bad of [undefined, {}, 1, Buffer.alloc(8), mapped.mapping]) {
      assert.throws(() => native.cachedRunClaim(bad), { name: 'TypeError', message: 'not a run of cachedReadRun' });
      assert.throws(() => native.cachedRunSettle(bad, 0), { name: 'TypeError' });
    }
    // ...and unmap takes a run's handle, or anything else, for no mapping: false, nothing unmapped.
    const [done, handle] = native.cachedReadRun(list, 0, 8, fs.constants.O_RDONLY);
    for (const bad of [undefined, {}, 1, handle]) assert.equal(native.unmap(bad, mapped.buffer), false);
    assertSameBytes(mapped.buffer, fs.readFileSync(files[0]), 'the mapping still reads');
    assert.equal(native.unmap(mapped.mapping, mapped.buffer), true);
    assert.equal(mapped.buffer.length, 0, 'detached once unmapped');
    await done;
  });

  test('a run handed off while every pool thread is busy is read by the lanes: the call does not wait for a thread', async (t) => {
    if (!addonWithTuningRestored(t, 'runs on pool threads are part of the addon') || skipWithoutOpenat2(t)) return;
    setTuning({ readManyThreads: 1, fastPathBudgetUs: 1_000_000 });
    // 100 files of 200 KiB, among them one missing, one too large for a run (4 MiB and 4 KiB), a
    // directory and a Buffer path, all in the half that is handed off (16-57: half of the 84
    // left after the first run, far more than kHandOffMinMs of work on any machine).
    const list = Array.from({ length: 100 }, (_, i) => path.join(tempDirs.disk, `busy-${i}`));
    const sizeOf = (i) => (i === 20 ? 4 * 1024 * 1024 + 4096 : 200 * 1024);
    list.forEach((file, i) => fs.writeFileSync(file, patternBuffer(sizeOf(i), i)));
    const plan = list.map((file, i) => (i === 18 ? `${missing}-busy` : i === 22 ? tempDirs.disk : i === 24 ? Buffer.from(file) : file));
    const expected = await Promise.allSettled(plan.map((p) => fs.promises.readFile(p)));
    // Read once while the pool is free: the files' sizes are known after, and so is the form
    // of node:fs's read errors (EISDIR), which readMany learns once a process on a pool thread.
    await readMany(plan, { settle: true });
    // Every thread of libuv's pool waits to read a FIFO of its own, whose writer (writerOf)
    // writes nothing until the end.
    const threads = Number(process.env.UV_THREADPOOL_SIZE) || 4;
    const fifos = makeFifos('busy-fifo', threads);
    let waiting = threads;
    const blocked = fifos.map((fifo) => fs.promises.readFile(fifo).finally(() => waiting--));
    const writers = fifos.map(() => -1);
    let results;
    try {
      await waitUntil(() => {
        fifos.forEach((fifo, i) => {
          if (writers[i] < 0) writers[i] = writerOf(fifo);
        });
        return writers.every((fd) => fd >= 0);
      }, 10000, () => `readers of the FIFOs: ${writers.map((fd) => fd >= 0)}`);
      // A call that waited for a pool thread would wait for the writers, closed below: it is
      // given ten seconds to settle without one.
      const runs = poolRuns(async () => {
        results = await readMany(plan, { settle: true });
      });
      await waitUntil(() => results !== undefined, 10000, () => 'readMany settled while every pool thread waited');
      assert.ok(await runs > 0, 'a run was handed off');
      assert.equal(waiting, threads, 'every pool thread still waited');
      // None of the files read is left open (counted by name: Node may open descriptors of its
      // own meanwhile, as Node 24's libuv did an io_uring of its loop here).
      const leftOpen = Object.values(openFds()).filter((target) => /\/busy-\d+$/.test(String(target)));
      assert.deepEqual(leftOpen, [], 'no descriptor of the files read');
    } finally {
      for (const fd of writers) if (fd >= 0) fs.closeSync(fd);
      await Promise.all(blocked);
      for (const fifo of fifos) fs.rmSync(fifo, { force: true });
    }
    results.forEach((result, k) => {
      assert.equal(result.status, expected[k].status, `${k}`);
      if (result.status === 'fulfilled') assertSameBytes(result.value, expected[k].value, `${k}`);
      else assert.deepEqual(errorFacts(result.reason), errorFacts(expected[k].reason), `${k}`);
    });
  });

  test('a concurrency of 1 reads on the JS thread alone', async (t) => {
    if (!addonWithTuningRestored(t, 'runs on pool threads are part of the addon')) return;
    setTuning({ readManyThreads: 1 });
    const list = files.slice(0, 500);
    let results;
    assert.equal(await poolRuns(async () => {
      results = await readMany(list, { concurrency: 1 });
    }), 0);
    list.forEach((file, i) => assertSameBytes(results[i], fs.readFileSync(file), `${i}`));
    assert.ok(await poolRuns(() => readMany(list, { concurrency: 2 })) > 0, 'concurrency 2: runs on pool threads');
  });
});

describe("'auto': short lists, and lanes started as reads wait", () => {
  // The pages of a Buffer from the pool are in place; a new one's faulted in as the run's results
  // were copied into it (64 cached files of 4 KiB on overlay: 16-58 faults a call, against 0.1-0.3).
  test("a run's small results share one Buffer, a block of the pool where they come to blockPoolFrom together", async (t) => {
    // Without openat2 (qemu-user) there is no fast path, and no run: each file is the engines'.
    if (!addonWithTuningRestored(t, 'the pool is part of the addon') || skipWithoutOpenat2(t)) return;
    // Every run on the JS thread (a run on a pool thread has a slab of its own), and none cut
    // short by the fast path's share of a turn, whatever the machine's pace.
    setTuning({ readManyThreads: 0, fastPathBudgetUs: 1_000_000 });
    const list = files.slice(0, 64);
    await readMany(list);
    metrics.reset();
    const results = await readMany(list);
    assertInOrder(results, list.map((_, i) => i), '64 cached files');
    // Runs of 16, then of the 48 left: each run's results are views of one Buffer.
    assert.ok(new Set(results.map((r) => r.buffer)).size <= 2, 'two runs, two Buffers at most');
    const { hits, misses } = metrics().blockPool;
    // The first run alone holds 16 x 4 KiB: 64 KiB, the pool's threshold on Node 20 and 22.
    if (tuning().blockPoolFrom <= 16 * 4096) {
      assert.ok(hits + misses >= 1, `the runs' Buffers came from the pool: ${JSON.stringify(metrics().blockPool)}`);
    } else {
      assert.equal(hits + misses, 0, `below blockPoolFrom (${tuning().blockPoolFrom}), Node's allocator: ${JSON.stringify(metrics().blockPool)}`);
    }
  });

  test('a list of up to 8 paths gives what a longer one gives: bytes, encodings, errors in order, settle', async () => {
    assertInOrder(await readMany(files.slice(0, 1)), [0], 'one path');
    assertInOrder(await readMany([files[0], Buffer.from(files[1]), files[2]]), [0, 1, 2], 'a Buffer path among them');
    const hex = await readMany(files.slice(0, 8), 'hex');
    hex.forEach((text, i) => assert.ok(text === contentOf(i).toString('hex'), `hex ${i}`));
    // The first error in input order, after hits before it; node:fs's errors, node:fs's order.
    const expected = await rejectionOf(() => fs.promises.readFile(missing));
    for (const paths of [[missing, files[0]], [files[0], missing, files[1]], [files[0], files[1], `${missing}\u0000`]]) {
      const err = await rejectionOf(() => readMany(paths), 'readMany');
      const reference = await rejectionOf(() => Promise.all(paths.map((p) => fs.promises.readFile(p))));
      assert.deepEqual(errorFacts(err), errorFacts(reference), JSON.stringify(paths));
    }
    assert.deepEqual(errorFacts(await rejectionOf(() => readMany([files[0]], { encoding: 'buffer' }))),
      errorFacts(await rejectionOf(() => fs.promises.readFile(files[0], { encoding: 'buffer' }))));
    const settled = await readMany([files[0], missing, tempDirs.disk, files[3]], { settle: true });
    assert.deepEqual(settled.map((s) => s.status), ['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    assertSameBytes(settled[0].value, contentOf(0));
    assertSameBytes(settled[3].value, contentOf(3));
    assert.deepEqual(errorFacts(settled[1].reason), errorFacts(expected));
    assert.deepEqual(errorFacts(settled[2].reason), errorFacts(await rejectionOf(() => fs.promises.readFile(tempDirs.disk))));
    const aborted = AbortSignal.abort();
    assert.equal((await rejectionOf(() => readMany(files.slice(0, 2), { signal: aborted }))).name, 'AbortError');
  });

  test('reads that wait have `concurrency` of them in flight: FIFOs opened by readers three at a time', async () => {
    const fifos = makeFifos('lanes-fifo', 4);
    // A writer (writerOf) shows which reads are in flight, and lets each one go on.
    const pending = readMany(fifos, { concurrency: 3 });
    const writers = [-1, -1, -1, -1];
    await waitUntil(() => {
      for (let i = 0; i < 3; i++) if (writers[i] < 0) writers[i] = writerOf(fifos[i]);
      return writers.slice(0, 3).every((fd) => fd >= 0);
    }, 10000, () => `readers of the first three FIFOs: ${writers.slice(0, 3).map((fd) => fd >= 0)}`);
    // Three in flight, as asked: the fourth waits for one of them to end.
    assert.equal(writerOf(fifos[3]), -1, 'the fourth FIFO has no reader yet');
    fs.writeSync(writers[2], 'two');
    fs.closeSync(writers[2]);
    await waitUntil(() => (writers[3] = writerOf(fifos[3])) >= 0, 10000, () => 'a reader of the fourth FIFO');
    fs.writeSync(writers[3], 'three');
    for (const [i, text] of [[0, 'zero'], [1, 'one']]) fs.writeSync(writers[i], text);
    for (const i of [0, 1, 3]) fs.closeSync(writers[i]);
    assert.deepEqual((await pending).map(String), ['zero', 'one', 'two', 'three']);
    for (const fifo of fifos) fs.rmSync(fifo);
  });
});

describe("'auto': the fast path's share of a turn of the event loop", () => {
  test('calls awaited back to back share one turn: the loop turns between them once the budget is spent', async (t) => {
    if (!addonWithTuningRestored(t, 'the fast path is part of the addon')) return;
    // A budget of 1 µs at a copy rate that lets ten 4 KiB files into one run (a call's first
    // run takes up to 16): any run spends the turn's share (half the budget), and each call
    // reads its list in that one run.
    setTuning({ fastPathBudgetUs: 1, copyRateMBps: 1_000_000, readManyThreads: 0 });
    const list = files.slice(0, 10);
    await readMany(list);
    const calls = 50;
    const counting = countLoopTurns();
    let turns;
    try {
      for (let i = 0; i < calls; i++) {
        const results = await readMany(list);
        list.forEach((file, k) => assertSameBytes(results[k], contentOf(k), `${i}/${k}`));
      }
    } finally {
      turns = counting.stop();
    }
    // Each call after the first finds the turn's share spent by the one before and waits for
    // the next turn; with a clock of its own, each read its one run at once and none waited.
    assert.ok(turns >= calls - 1, `the loop turned ${turns} times in ${calls} calls`);
  });
});

describe("'uring': the reads of a turn go to the kernel together", () => {
  // Calls of readMany with strategy 'uring' over the names given, in a child: argv[1] of them.
  const script = `
      const fs = require('node:fs');
      const { readMany } = require('smartread');
      const [calls, ...names] = [Number(process.argv[1]), ...process.argv.slice(2)];
      const expected = names.map((name) => fs.readFileSync(name));
      (async () => {
        for (let i = 0; i < calls; i++) {
          const got = await readMany(names, { strategy: 'uring' });
          got.forEach((bytes, k) => { if (!bytes.equals(expected[k])) throw new Error('wrong bytes in call ' + i); });
        }
      })();
    `;
  const calls = 5;
  // Filled by the file's before().
  const firstFiles = () => files.slice(0, 400);

  test('reads started as the turn line hands the turn on are submitted in one io_uring_enter, not one each', async (t) => {
    if (skipUnlessAvailable(t, 'uring')) return;
    // Cached files on io_uring complete as they are submitted, which spends the turn's share in
    // a few submissions (strace stops each one); the lanes then wait in the line, and each woken
    // lane started its read in a promise reaction queued behind the submission of the one before.
    const list = firstFiles();
    const counted = await syscallCounts(t, ['io_uring_enter'], script, [String(calls), ...list]);
    if (!counted) return;
    const startUp = await syscallCounts(t, ['io_uring_enter'], script, ['0', ...list]);
    const enters = counted.io_uring_enter - startUp.io_uring_enter;
    // Without the wait, about two a read in any build (each read's open and reads, then its
    // close, each in a submission of its own: 3,971-4,348 for these 2,000, unsanitized and under
    // ASan). With it, about one for every four reads here (up to 17 reads a submission), and up
    // to one for every two under ASan (1,161 on one CI host): a slower read spends the turn's
    // share after fewer of them, and each turn adds enters of its own (its closes). So the bound
    // is the test's claim, fewer than one a read, not this host's figure.
    assert.ok(enters < calls * list.length, `${enters} io_uring_enter calls for ${calls * list.length} reads\n${counted.output}`);
  });

  test('a turn of the loop woken by completions already taken does not enter the kernel for nothing', async (t) => {
    // The ring needs Linux 5.19 (its sparse file table), where the kernel also says when
    // completion work waits (IORING_SETUP_TASKRUN_FLAG).
    if (skipUnlessAvailable(t, 'uring')) return;
    // Cached files on the disk complete as their reads are submitted (tmpfs hands its reads to
    // io_uring's workers, whose completions are work that waits for this thread), and each
    // completion posted signals the ring's eventfd all the same: the loop then turns for
    // completions taken already. Each such turn entered the kernel with nothing to submit, to
    // run completion work that was not there (109-117 such enters of about 530 here, 321 of 963
    // under ASan, for these 2,000 reads); where the kernel says whether any waits, a turn enters
    // only then (none here).
    const onDisk = path.join(tempDirs.disk, 'turns-for-nothing');
    fs.mkdirSync(onDisk);
    t.after(() => fs.rmSync(onDisk, { recursive: true, force: true }));
    const list = firstFiles().map((file, i) => {
      const copy = path.join(onDisk, path.basename(file));
      fs.writeFileSync(copy, contentOf(i));
      return copy;
    });
    const enters = await syscallTrace(t, ['io_uring_enter'], script, [String(calls), ...list]);
    if (!enters) return;
    const empty = enters.filter((line) => /^io_uring_enter\(\d+, 0,/.test(line));
    assert.ok(enters.length > 0, 'the child made no io_uring_enter at all');
    assert.ok(empty.length < (calls * list.length) / 100,
      `${empty.length} of ${enters.length} io_uring_enter calls submitted nothing, for ${calls * list.length} reads:\n${empty.slice(0, 5).join('\n')}`);
  });
});

describe('a call that rejects', () => {
  test('its reads still waiting for their turn do not start: no file is opened for a result no one gets', async (t) => {
    if (!metrics().enabled) return t.skip('reads are not counted (SMARTREAD_METRICS=0)');
    // The sync engine reads as a read starts, so the reads counted (under 'js' on the JS engine)
    // are the reads made.
    const made = () => Object.values(metrics().strategies).reduce((sum, { reads, errors }) => sum + reads + errors, 0);
    const list = [missing, ...files.slice(0, 200)];
    const before = made();
    // The turn's share spent (turn_clock.ts) before the call: each of its 64 lanes then waits in
    // line with one read, and the line wakes them one at a time from the next turn on. The first
    // woken reads the missing file, and the call rejects as soon as that read has settled.
    const starting = smartRead(files[0], { strategy: 'sync' });
    const spentAt = performance.now() + (2 * tuning().fastPathBudgetUs) / 1000;
    while (performance.now() < spentAt);
    const err = await rejectionOf(() => readMany(list, { strategy: 'sync' }), 'readMany');
    assert.equal(err.path, missing);
    assertSameBytes(await starting, contentOf(0));
    // Turns enough for the line to have woken every lane that waited.
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    // smartRead's, the missing file's, and the few the line woke while that error made its way
    // to the call (4-6 here): the other lanes gave their reads up, where each made its read.
    const reads = made() - before;
    assert.ok(reads < 16, `${reads} reads made for a call of 64 lanes that rejected at its first`);
  });
});

test('a cached file too large for the fast path is read as smartRead reads one, in a short list and a long one', async (t) => {
  if (!addonWithTuningRestored(t, 'the fast path is part of the addon') || skipWithoutOpenat2(t)) return;
  // Past what the fast path copies within its budget, as metrics.test.js makes one: the engine
  // opens it at once and reads its chunks in parallel, where a miss's read would first open it
  // on io_uring and size it there (a read of one cached 8 MiB file: 0.64-0.67 ms a call that
  // way, 0.53-0.58 this way, as smartRead's 0.44-0.48).
  const size = tuning().fastPathBudgetUs * tuning().copyRateMBps + 1;
  const large = path.join(dir, 'too-large-for-the-fast-path');
  fs.writeFileSync(large, patternBuffer(size, 7));
  t.after(() => fs.rmSync(large, { force: true }));
  const expected = fs.readFileSync(large);
  // Short: read file by file before any lane; long: the lanes' runs (under 2 x 64, so no run
  // goes to a pool thread, whose files too large for it the lanes read as smartRead does).
  for (const list of [[files[0], large, files[1]], [...files.slice(0, 10), large, ...files.slice(10, 30)]]) {
    metrics.reset();
    // A turn of its own, so that the fast path's share of it is whole: the short list is then
    // read file by file as the call starts.
    await new Promise(setImmediate);
    const results = await readMany(list);
    const at = list.indexOf(large);
    assertSameBytes(results[at], expected, `${list.length} paths: the large file`);
    for (let i = 0; i < list.length; i++) {
      if (i !== at) assertSameBytes(results[i], fs.readFileSync(list[i]), `${list.length} paths: path ${i}`);
    }
    assert.equal(metrics().fastPath.tooLarge, 1, `${list.length} paths: read as a cached file too large for the fast path`);
  }
});
