// AbortSignal support in smartRead and readMany: an aborted signal rejects with node:fs's
// AbortError (its reason as the cause), aborting with hundreds of reads in flight settles every
// one of them and leaves no descriptor open once the engine is idle, and a signal is let go of
// when its reads settle. Every wait is bounded: a read that never settles fails the test.
'use strict';
const { test, describe, before } = require('node:test');
const assert = require('node:assert/strict');
const { getEventListeners } = require('node:events');
const fs = require('node:fs');
const path = require('node:path');
const { smartRead, readMany, AbortError, engineInfo, evictFromPageCache, tuning, setTuning } = require('smartread');
const {
  checkNoFdLeak, useTempDirs, openFdCount, openFds, patternBuffer, writePattern, assertSameBytes, errorFacts,
  rejectionOf, withinTime, waitUntil, runToEnd, fifoWriterOnRelease, STRATEGIES, skipUnlessAvailable, setUpAsyncEngines,
} = require('./helpers');

setUpAsyncEngines();
checkNoFdLeak({ spawnsChildren: true });
const tempDirs = useTempDirs();

const MiB = 1024 * 1024;
const dir = tempDirs.tmpfs ?? tempDirs.disk;
const small = path.join(dir, 'small');
const largeSize = 4 * MiB;
const large = path.join(dir, 'large');
const largeContent = patternBuffer(largeSize);
// On the disk, so that its pages can be evicted: reads that must wait for the device are still
// in flight when the abort comes, whichever engine runs them.
const largeOnDisk = path.join(tempDirs.disk, 'large');
const fifo = path.join(dir, 'fifo');
const manyFiles = [];
before(async () => {
  const made = await runToEnd('mkfifo', [fifo]);
  assert.equal(made.code, 0, made.stderr);
  fs.writeFileSync(small, 'small file\n');
  writePattern(large, largeSize);
  writePattern(largeOnDisk, largeSize);
  for (let i = 0; i < 500; i++) manyFiles.push(writePattern(path.join(dir, `many-${i}`), 64 * 1024 + i));
});

/** An AbortError as node:fs makes it, with `reason` as its cause. */
function assertAbortError(err, reason, what) {
  assert.ok(err instanceof Error, `${what}: ${err}`);
  assert.equal(err.name, 'AbortError', `${what}: ${err}`);
  assert.equal(err.code, 'ABORT_ERR', what);
  assert.equal(err.message, 'The operation was aborted', what);
  assert.equal(err.cause, reason, `${what}: the signal's reason is the cause`);
}

/**
 * Waits (bounded) until this process holds no more than `count` descriptors: reads that an abort
 * left running close their files when they end, after the AbortError has been delivered. Fewer is
 * no leak: a descriptor from before the reads may close meanwhile (.ci/run's pure-JS suite once
 * waited 15 s at 10 against 11 before, and failed).
 */
function untilNoMoreFdsThan(count) {
  return waitUntil(() => openFdCount() <= count, 15000,
    () => `${openFdCount()} descriptors open, ${count} before the reads: ${JSON.stringify(openFds())}`);
}

/** Collects process warnings of one name while `fn` runs (and the ticks after it). */
async function warningsDuring(name, fn) {
  const seen = [];
  const onWarning = (warning) => {
    if (warning.name === name) seen.push(warning.message);
  };
  process.on('warning', onWarning);
  try {
    await fn();
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('warning', onWarning);
  }
  return seen;
}

const reasons = {
  'no reason (a DOMException)': undefined,
  'an Error': new Error('stopped by the test'),
  'a string': 'just because',
};

describe('an already-aborted signal', () => {
  for (const strategy of STRATEGIES) {
    test(`strategy '${strategy}': smartRead rejects with fs.promises.readFile's AbortError, the reason as cause`, async (t) => {
      if (skipUnlessAvailable(t, strategy)) return;
      for (const [name, reason] of Object.entries(reasons)) {
        const signal = AbortSignal.abort(reason);
        const expected = await rejectionOf(() => fs.promises.readFile(small, { signal }), 'fs.promises.readFile');
        for (const [target, options] of [[small, {}], [small, { encoding: 'utf8' }], [path.join(dir, 'missing'), {}], [large, {}]]) {
          const fdsBefore = openFdCount();
          const err = await rejectionOf(() => smartRead(target, { ...options, signal, strategy }), 'smartRead');
          assert.equal(openFdCount(), fdsBefore, 'no descriptor opened');
          assertAbortError(err, signal.reason, `${name}, ${target}`);
          assert.deepEqual(errorFacts(err), errorFacts(expected));
          assert.equal(err.constructor.name, 'AbortError');
        }
        // An fd, as fs.readFile takes it: aborted too, and left open.
        const fd = fs.openSync(small, 'r');
        try {
          assertAbortError(await rejectionOf(() => smartRead(fd, { signal, strategy }), 'smartRead(fd)'), signal.reason, `${name}, fd`);
          assert.equal(fs.readFileSync(fd, 'utf8'), 'small file\n', 'the fd is open and was not read');
        } finally {
          fs.closeSync(fd);
        }
        assert.equal(getEventListeners(signal, 'abort').length, 0);
      }
    });

    test(`strategy '${strategy}': readMany rejects with the AbortError; with settle, every path does`, async (t) => {
      if (skipUnlessAvailable(t, strategy)) return;
      const signal = AbortSignal.abort(reasons['an Error']);
      const fdsBefore = openFdCount();
      const err = await rejectionOf(() => readMany(manyFiles.slice(0, 20), { signal, strategy }), 'readMany');
      assertAbortError(err, signal.reason, 'readMany');
      const settled = await readMany(manyFiles.slice(0, 20), { signal, strategy, settle: true, concurrency: 3 });
      assert.equal(settled.length, 20);
      for (const result of settled) {
        assert.equal(result.status, 'rejected');
        assertAbortError(result.reason, signal.reason, 'readMany settle');
      }
      assert.equal(openFdCount(), fdsBefore, 'no descriptor opened');
    });
  }

  test('the AbortError is the exported class, and an instance of Error', async () => {
    const err = await rejectionOf(() => smartRead(small, { signal: AbortSignal.abort() }), 'smartRead');
    assert.ok(err instanceof AbortError);
    assert.ok(err instanceof Error);
    assert.ok(err.stack.startsWith('AbortError: The operation was aborted'), err.stack);
  });
});

// The moments after a call at which an abort still comes before the promise settles: in the
// caller's own tick, in a microtask it queues, on process.nextTick. fs.promises.readFile rejects
// at each (it looks at the signal after its open, a thread-pool round trip later), however fast
// the file would be read; smartread's fast path and io_uring's inline completions read a cached
// file before any of them.
const abortsAfterTheCall = {
  'in the same tick': (controller, reason) => controller.abort(reason),
  'in a microtask': (controller, reason) => queueMicrotask(() => controller.abort(reason)),
  'on process.nextTick': (controller, reason) => process.nextTick(() => controller.abort(reason)),
};

describe('an abort after the call, before the promise settles, rejects as in fs.promises.readFile', () => {
  const mid = path.join(dir, 'mid');
  before(() => writePattern(mid, 64 * 1024 + 3));

  for (const [when, abort] of Object.entries(abortsAfterTheCall)) {
    test(`fs.promises.readFile, aborted ${when}: the reference rejects`, async () => {
      const controller = new AbortController();
      const reading = fs.promises.readFile(small, { signal: controller.signal });
      abort(controller, reasons['an Error']);
      assertAbortError(await rejectionOf(() => reading, 'fs.promises.readFile'), reasons['an Error'], when);
    });

    for (const strategy of [...STRATEGIES, 'mmap']) {
      test(`strategy '${strategy}', aborted ${when}: smartRead, readMany and readMany settle reject, cached file or not`, async (t) => {
        if (skipUnlessAvailable(t, strategy)) return;
        const fdsBefore = openFdCount();
        for (const file of [small, mid]) {
          // Read once first: the cache-hit fast path then takes it on the calling thread.
          assertSameBytes(await smartRead(file, { strategy }), fs.readFileSync(file), `${file} before`);
          const cases = {
            smartRead: (signal) => smartRead(file, { strategy, signal }),
            'smartRead of an fd': (signal) => smartRead(fdOf(file), { strategy, signal }),
            readMany: (signal) => readMany([file], { strategy, signal }),
            'readMany of 3': (signal) => readMany([file, small, mid], { strategy, signal }),
            'readMany settle': async (signal) => {
              const [outcome] = await readMany([file], { strategy, signal, settle: true });
              assert.equal(outcome.status, 'rejected', `readMany settle: ${outcome.status}`);
              throw outcome.reason;
            },
          };
          for (const [name, read] of Object.entries(cases)) {
            const controller = new AbortController();
            const reason = new Error(`${name} stopped`);
            const reading = read(controller.signal);
            abort(controller, reason);
            assertAbortError(await rejectionOf(() => reading, name), reason, `${name} of ${path.basename(file)}, aborted ${when}`);
            assert.equal(getEventListeners(controller.signal, 'abort').length, 0, `${name}: the signal is let go of`);
          }
        }
        closeOpenedFds();
        await untilNoMoreFdsThan(fdsBefore);
      });
    }
  }

  // The fds opened by 'smartRead of an fd' above, closed by the test that opened them.
  const opened = [];
  function fdOf(file) {
    const fd = fs.openSync(file, 'r');
    opened.push(fd);
    return fd;
  }
  function closeOpenedFds() {
    while (opened.length > 0) fs.closeSync(opened.pop());
  }

  // The calling thread's engine has failed to open before a microtask's abort; an open still in
  // flight on another engine is abandoned at the abort, as every read in flight is (node:fs,
  // which cannot stop its open, would report the open's error).
  test('an open error found before the abort is the caller\'s, as in fs.promises.readFile', async (t) => {
    // The call opens at once only within the turn's share of the JS thread (past it, it waits
    // for the next turn, and the abort comes first): a share that the work before it in this
    // turn cannot have spent, as it did once under ASan.
    const before = tuning();
    t.after(() => setTuning(before));
    setTuning({ fastPathBudgetUs: 100_000 });
    const missing = path.join(dir, 'missing');
    const controller = new AbortController();
    const expected = rejectionOf(() => fs.promises.readFile(missing, { signal: controller.signal }), 'fs.promises.readFile');
    const actual = rejectionOf(() => smartRead(missing, { signal: controller.signal, strategy: 'sync' }), 'smartRead');
    queueMicrotask(() => controller.abort());
    const theirs = await expected;
    assert.equal(theirs.code, 'ENOENT');
    assert.deepEqual(errorFacts(await actual), errorFacts(theirs));
  });

  // Up to Node 24 (at least) fs.promises.readFile looks at its signal before each read, and the
  // abort wins; from Node 26 it reads a path whole first, and the read's error wins. Either way
  // smartRead's outcome is the running node:fs's. A FileHandle's readFile looks before each read
  // on every line.
  test('a read\'s error or the abort, as in fs.promises.readFile (a directory: EISDIR from read)', async () => {
    const controller = new AbortController();
    const expected = rejectionOf(() => fs.promises.readFile(dir, { signal: controller.signal }), 'fs.promises.readFile');
    const actual = rejectionOf(() => smartRead(dir, { signal: controller.signal }), 'smartRead');
    controller.abort();
    const theirs = await expected;
    if (theirs.code === 'ABORT_ERR') {
      assertAbortError(theirs, controller.signal.reason, 'node:fs');
      assertAbortError(await actual, controller.signal.reason, 'smartRead');
    } else {
      assert.equal(theirs.code, 'EISDIR', `node:fs: ${theirs}`);
      assert.deepEqual(errorFacts(await actual), errorFacts(theirs));
    }
  });

  test('a FileHandle\'s read error loses to the abort, as in filehandle.readFile', async () => {
    const handle = await fs.promises.open(dir, 'r');
    try {
      const controller = new AbortController();
      const expected = rejectionOf(() => handle.readFile({ signal: controller.signal }), 'filehandle.readFile');
      controller.abort();
      assertAbortError(await expected, controller.signal.reason, 'node:fs');
      const ours = new AbortController();
      const actual = rejectionOf(() => smartRead(handle, { signal: ours.signal }), 'smartRead');
      ours.abort();
      assertAbortError(await actual, ours.signal.reason, 'smartRead');
    } finally {
      await handle.close();
    }
  });

  // The call is kept open by a FIFO that no writer ends before the abort; the two files before it
  // are read in the call's own tick by the fast path (which the pure-JS engine does not have).
  test('readMany settle: paths read before an abort on a later turn stay read', async (t) => {
    if (engineInfo().engine !== 'native') {
      t.skip('the pure-JS engine reads nothing on the calling thread: when a file is read is the thread pool\'s');
      return;
    }
    await smartRead(small);
    await smartRead(mid);
    const controller = new AbortController();
    const writer = fifoWriterOnRelease(fifo, 'too late\n', { readerMs: 1000 });
    const reading = readMany([small, mid, fifo], { signal: controller.signal, settle: true });
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    controller.abort();
    const outcomes = await withinTime(reading, 60000, 'readMany after the abort');
    writer.release();
    await writer.done;
    assert.deepEqual(outcomes.map((o) => o.status), ['fulfilled', 'fulfilled', 'rejected']);
    assertSameBytes(outcomes[1].value, fs.readFileSync(mid), 'mid');
    assertAbortError(outcomes[2].reason, controller.signal.reason, 'the FIFO');
  });

  test('a Proxy of a signal (as Node\'s tests pass, which takes no listener) is honoured too', async () => {
    for (const when of Object.values(abortsAfterTheCall)) {
      const controller = new AbortController();
      const signal = new Proxy(controller.signal, {});
      const theirs = rejectionOf(() => fs.promises.readFile(small, { signal }), 'fs.promises.readFile');
      const ours = rejectionOf(() => smartRead(large, { signal, strategy: 'auto' }), 'smartRead');
      when(controller, reasons['a string']);
      assertAbortError(await theirs, reasons['a string'], 'node:fs, proxy');
      assertAbortError(await ours, reasons['a string'], 'smartRead, proxy');
    }
    assertSameBytes(await smartRead(large, { signal: new Proxy(new AbortController().signal, {}) }), largeContent, 'not aborted');
  });
});

describe('aborting while reads are in flight', () => {
  for (const strategy of STRATEGIES) {
    test(`strategy '${strategy}': 200 reads of a 4 MiB file, aborted on the next tick, all settle`, async (t) => {
      if (skipUnlessAvailable(t, strategy)) return;
      const fdsBefore = openFdCount();
      const controller = new AbortController();
      const reason = new Error('aborted mid-read');
      const outcomes = { fulfilled: 0, aborted: 0 };
      if (engineInfo().engine === 'native') evictFromPageCache(largeOnDisk);
      // A read of a FIFO first, which no writer ends before the reads have settled: it is still in
      // flight at the abort, whatever the speed of the disk and of this thread. Its writer comes
      // afterwards, to release a read left waiting in open(2) on a pool thread. Not for 'sync',
      // which reads on the calling thread, and would wait there for a writer that waits for it.
      const inFlight = strategy !== 'sync';
      const writer = inFlight ? fifoWriterOnRelease(fifo, 'too late\n', { readerMs: 1000 }) : null;
      const fifoRead = inFlight ? smartRead(fifo, { signal: controller.signal, strategy }).then(() => null, (err) => err) : null;
      // Each result is checked as it settles and then dropped: 200 results of 4 MiB are not kept.
      const reads = Array.from({ length: 200 }, (_, i) => smartRead(largeOnDisk, { signal: controller.signal, strategy }).then(
        (bytes) => {
          assertSameBytes(bytes, largeContent, `read ${i}`);
          outcomes.fulfilled++;
        },
        (err) => {
          assertAbortError(err, reason, `read ${i}`);
          outcomes.aborted++;
        },
      ));
      process.nextTick(() => controller.abort(reason));
      await withinTime(Promise.all(reads), 60000, 'the 200 reads settling after the abort');
      assert.equal(outcomes.fulfilled + outcomes.aborted, 200);
      t.diagnostic(`${outcomes.fulfilled} fulfilled, ${outcomes.aborted} aborted`);
      if (inFlight) {
        const fifoError = await withinTime(fifoRead, 60000, 'the FIFO read after the abort');
        writer.release();
        const { released } = await writer.done;
        assert.ok(released, 'the JS thread was free before the FIFO writer lost patience');
        assertAbortError(fifoError, reason, 'the FIFO read in flight at the abort');
      }
      assert.equal(getEventListeners(controller.signal, 'abort').length, 0);

      // The engine goes on working: new reads succeed while the aborted ones wind down, and once
      // they have, no descriptor is left open.
      const after = await withinTime(Promise.all([large, small, large, '/proc/version'].map((file) => smartRead(file, { strategy }))),
        60000, 'reads after the abort');
      assertSameBytes(after[0], largeContent, 'a read after the abort');
      assert.equal(after[1].toString(), 'small file\n');
      assertSameBytes(after[2], largeContent, 'a read after the abort');
      assertSameBytes(after[3], fs.readFileSync('/proc/version'), '/proc/version after the abort');
      await untilNoMoreFdsThan(fdsBefore);
    });

    test(`strategy '${strategy}': readMany of 500 files aborted mid-way rejects; with settle, each is read or aborted`, async (t) => {
      if (skipUnlessAvailable(t, strategy)) return;
      const fdsBefore = openFdCount();
      const expected = new Map(manyFiles.map((file) => [file, fs.readFileSync(file)]));

      const controller = new AbortController();
      const pending = readMany(manyFiles, { signal: controller.signal, strategy, concurrency: 16 });
      // Abort once one more read has completed: readMany is under way, far from done.
      await smartRead(small, { strategy });
      controller.abort('enough');
      const err = await withinTime(rejectionOf(() => pending, 'readMany'), 60000, 'readMany after the abort');
      assertAbortError(err, 'enough', 'readMany');

      const settling = new AbortController();
      let done = 0;
      const settled = readMany(manyFiles, { signal: settling.signal, strategy, concurrency: 16, settle: true });
      // Abort after some reads have completed, so that the results are a mix.
      for (const file of manyFiles.slice(0, 3)) {
        await smartRead(file, { strategy });
        done++;
      }
      settling.abort('enough');
      const results = await withinTime(settled, 60000, 'readMany (settle) after the abort');
      assert.equal(results.length, manyFiles.length);
      let fulfilled = 0;
      results.forEach((result, i) => {
        if (result.status === 'fulfilled') {
          fulfilled++;
          assertSameBytes(result.value, expected.get(manyFiles[i]), manyFiles[i]);
        } else {
          assertAbortError(result.reason, 'enough', manyFiles[i]);
        }
      });
      t.diagnostic(`settle: ${fulfilled} fulfilled, ${results.length - fulfilled} aborted (${done} reads awaited first)`);
      assert.ok(fulfilled < results.length, 'the abort stopped the rest');
      assert.equal(getEventListeners(settling.signal, 'abort').length, 0);
      assertSameBytes(await smartRead(manyFiles[0], { strategy }), expected.get(manyFiles[0]), 'a read afterwards');
      await untilNoMoreFdsThan(fdsBefore);
    });
  }
});

// An abort can only stop reads that are still in flight when JS next runs. An asynchronous engine
// must not hold the JS thread until its reads are done. Each round starts a read of a FIFO whose
// writer comes only when a callback queued with process.nextTick has run, then 200 reads of 4 MiB
// (from the disk, evicted where the addon can evict, or from the page cache): the tick must come
// while the FIFO read waits. How many of the 4 MiB reads end before the tick is not asserted: an
// engine may finish cached reads in the call that submits them, and on a slow JS thread (ASan) the
// disk can deliver all of them before JS next runs.
describe('the JS thread is free while reads are in flight', () => {
  for (const strategy of STRATEGIES.filter((s) => s !== 'sync')) {
    test(`strategy '${strategy}': process.nextTick runs while a FIFO read and 200 reads of 4 MiB are in flight`, async (t) => {
      if (skipUnlessAvailable(t, strategy)) return;
      const held = [];
      const counts = [];
      for (let round = 0; round < 2; round++) {
        for (const cold of [true, false]) {
          const name = `round ${round}, ${cold ? 'evicted' : 'cached'}`;
          if (cold && engineInfo().engine === 'native') evictFromPageCache(largeOnDisk);
          const payload = `${name}\n`;
          const writer = fifoWriterOnRelease(fifo, payload);
          let ticked = false;
          let fifoBeforeTick = false;
          let completedBeforeTick = 0;
          const fifoRead = smartRead(fifo, { strategy, encoding: 'utf8' }).then((text) => {
            fifoBeforeTick = !ticked;
            return text;
          });
          const reads = Array.from({ length: 200 }, () => smartRead(largeOnDisk, { strategy }).then((bytes) => {
            assert.equal(bytes.length, largeSize);
            if (!ticked) completedBeforeTick++;
          }));
          process.nextTick(() => {
            ticked = true;
            writer.release();
          });
          const [text] = await withinTime(Promise.all([fifoRead, ...reads]), 60000, 'the FIFO read and the 200 reads');
          const { released } = await writer.done;
          assert.equal(text, payload, `${name}: the FIFO read gives what the writer wrote`);
          if (fifoBeforeTick || !released) held.push(name);
          counts.push(`${name}: ${completedBeforeTick}`);
        }
      }
      t.diagnostic(`4 MiB reads completed before the tick: ${counts.join('; ')}`);
      assert.deepEqual(held, [], 'rounds in which the FIFO read completed before process.nextTick could run');
    });
  }
});

describe('a signal is let go of when its reads settle', () => {
  for (const strategy of STRATEGIES) {
    test(`strategy '${strategy}': 1,000 sequential reads on one long-lived signal, then concurrent and failing ones`, async (t) => {
      if (skipUnlessAvailable(t, strategy)) return;
      const controller = new AbortController();
      const { signal } = controller;
      for (let i = 0; i < 1000; i++) {
        const file = manyFiles[i % manyFiles.length];
        const bytes = await smartRead(file, { signal, strategy });
        assert.equal(bytes.length, 64 * 1024 + (i % manyFiles.length), file);
      }
      assert.equal(getEventListeners(signal, 'abort').length, 0, 'after sequential reads');

      const results = await Promise.all(manyFiles.slice(0, 100).map((file) => smartRead(file, { signal, strategy })));
      assert.equal(results.length, 100);
      assert.equal(getEventListeners(signal, 'abort').length, 0, 'after concurrent reads');

      const failures = await Promise.allSettled([path.join(dir, 'missing'), dir].map((file) => smartRead(file, { signal, strategy })));
      assert.deepEqual(failures.map((r) => r.reason?.code), ['ENOENT', 'EISDIR']);
      assert.equal(getEventListeners(signal, 'abort').length, 0, 'after failed reads');

      assert.equal((await readMany(manyFiles.slice(0, 50), { signal, strategy, concurrency: 8 })).length, 50);
      // One read at a time, failing first: no other read is left in flight by the rejection.
      await rejectionOf(() => readMany([path.join(dir, 'missing'), manyFiles[0]], { signal, strategy, concurrency: 1 }), 'readMany');
      assert.equal(getEventListeners(signal, 'abort').length, 0, 'after readMany');

      // Aborting it now touches nothing: every read has settled.
      controller.abort();
      assert.equal((await smartRead(small, { strategy })).toString(), 'small file\n');
    });
  }
});

// fs.promises.readFile checks the signal without listening on it, so any number of reads can
// share one signal quietly. Node warns (MaxListenersExceededWarning) when an AbortSignal gets
// more than 10 listeners.
describe('many reads sharing one signal cause no MaxListenersExceededWarning', () => {
  test('fs.promises.readFile: 50 concurrent reads, one signal (the reference)', async () => {
    const { signal } = new AbortController();
    const warnings = await warningsDuring('MaxListenersExceededWarning', () =>
      Promise.all(manyFiles.slice(0, 50).map((file) => fs.promises.readFile(file, { signal }))));
    assert.deepEqual(warnings, []);
  });

  test('smartRead: 50 concurrent reads, one signal', async () => {
    const { signal } = new AbortController();
    const warnings = await warningsDuring('MaxListenersExceededWarning', () =>
      Promise.all(manyFiles.slice(0, 50).map((file) => smartRead(file, { signal }))));
    assert.deepEqual(warnings, []);
  });

  test('readMany with a signal and the default concurrency (64)', async () => {
    const { signal } = new AbortController();
    const warnings = await warningsDuring('MaxListenersExceededWarning', () => readMany(manyFiles, { signal }));
    assert.deepEqual(warnings, []);
  });
});

// fs.promises.readFile checks the signal before it looks at the path or the flag.
describe('an aborted signal comes before path and flag errors, as in fs.promises.readFile', () => {
  for (const [name, args] of Object.entries({
    'an invalid path ({})': () => [{}],
    'a NUL byte in the path': () => [`${small}\u0000`],
    "an invalid flag ('zz')": () => [small, { flag: 'zz' }],
  })) {
    test(name, async () => {
      const signal = AbortSignal.abort('first');
      const [target, options] = args();
      const expected = await rejectionOf(() => fs.promises.readFile(target, { ...options, signal }), 'fs.promises.readFile');
      assert.equal(expected.name, 'AbortError');
      const actual = await rejectionOf(() => smartRead(target, { ...options, signal }), 'smartRead');
      assert.deepEqual(errorFacts(actual), errorFacts(expected));
      assert.equal(actual.cause, 'first');
    });
  }
});
