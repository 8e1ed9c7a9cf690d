// openReader: many positional reads of one open file on each strategy, 64 in flight, on tmpfs and
// the disk; reads after close and close with reads in flight; node:fs's errors; forced
// strategies that are unavailable; a worker reading through its own ring while the main thread
// reads; a process exiting with reads in flight. io_uring cases are skipped, with the reason,
// where io_uring is unavailable (and on the pure-JS engine).
'use strict';
const { test, describe, before } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { Worker } = require('node:worker_threads');
const { once } = require('node:events');
const { openReader, Reader, engineInfo } = require('smartread');
const {
  checkNoFdLeak, useTempDirs, writePattern, patternBuffer, assertSameBytes, errorFacts, rejectionOf,
  isOpenFd, runToEnd, withinTime, strategyUnavailableReason, setUpAsyncEngines, countLoopTurns,
  spendTheTurnOnEachRead, exitTestNodeFlags,
} = require('./helpers');

setUpAsyncEngines();
checkNoFdLeak({ spawnsChildren: true });
const tempDirs = useTempDirs();

const KiB = 1024;
const MiB = 1024 * KiB;
const SIZE = 4 * MiB + 123;
const info = engineInfo();
const native = info.engine === 'native';
const STRATEGIES = ['auto', 'uring', 'threadpool'];
// What serves a reader's reads for each strategy, here.
const servedBy = (strategy) => (!native ? 'js' : strategy === 'threadpool' || !info.uring.available ? 'threadpool' : 'uring');

function skipUnlessUsable(t, strategy) {
  if (strategy !== 'uring') return false;
  const reason = strategyUnavailableReason('uring');
  if (reason === null) return false;
  t.skip(`strategy 'uring' is not available: ${reason}`);
  return true;
}

// Offsets spread over the file, at and across page boundaries, with some past its end.
function positions(count, size) {
  return Array.from({ length: count }, (_, i) => {
    const page = (i * 7919) % Math.ceil(size / 4096);
    return page * 4096 + [0, 1, 4095, 4093][i % 4];
  });
}

for (const { kind, dir } of tempDirs.all) {
  describe(`on ${kind}`, () => {
    let file;
    before(() => {
      file = writePattern(path.join(dir, 'data'), SIZE);
    });

    for (const strategy of STRATEGIES) {
      test(`strategy '${strategy}': 64 reads in flight, read() and readInto(), give the file's bytes`, async (t) => {
        if (skipUnlessUsable(t, strategy)) return;
        const reader = await openReader(file, { strategy });
        assert.ok(reader instanceof Reader);
        assert.equal(reader.size, SIZE);
        assert.equal(reader.strategy, servedBy(strategy));
        const expected = patternBuffer(SIZE);
        const at = positions(64, SIZE);
        const got = await Promise.all(at.map((p) => reader.read(p, 4096)));
        got.forEach((buffer, i) => assertSameBytes(buffer, expected.subarray(at[i], at[i] + 4096), `read at ${at[i]}`));
        const target = Buffer.alloc(64 * 4096 + 8, 0xaa);
        const counts = await Promise.all(at.map((p, i) => reader.readInto(target, p, i * 4096 + 3, 4096)));
        counts.forEach((n, i) => {
          assert.equal(n, 4096);
          assertSameBytes(target.subarray(i * 4096 + 3, i * 4096 + 3 + n), expected.subarray(at[i], at[i] + n), `readInto at ${at[i]}`);
        });
        assert.equal(target[0], 0xaa);
        // The end of the file: a short count, then nothing.
        assert.equal((await reader.read(SIZE - 10, 4096)).length, 10);
        assert.equal((await reader.read(SIZE + 100, 4096)).length, 0);
        assert.equal(await reader.readInto(new Uint32Array(4), SIZE - 4), 4);
        assert.equal((await reader.read(0, 0)).length, 0);
        // A large read in one go.
        assertSameBytes(await reader.read(5, 3 * MiB), expected.subarray(5, 5 + 3 * MiB), 'a 3 MiB read');
        await reader.close();
      });
    }
  });
}

// io_uring reads cached pages of a file on the disk as they are submitted, in a microtask:
// reads awaited one after another did not let the loop turn at all until the last. They share
// the fast path's turn clock: with a budget of 1 µs, every read after the first of a turn waits
// for the next.
test("strategy 'uring': reads awaited back to back let the event loop turn", async (t) => {
  if (skipUnlessUsable(t, 'uring') || !native) return;
  spendTheTurnOnEachRead(t);
  const file = writePattern(path.join(tempDirs.disk, 'back-to-back'), 64 * KiB);
  const expected = fs.readFileSync(file);
  const reader = await openReader(file, { strategy: 'uring' });
  t.after(() => reader.close());
  const reads = 100;
  const counting = countLoopTurns();
  let turns;
  try {
    for (let i = 0; i < reads; i++) {
      const at = (i * 4096) % (60 * KiB);
      assertSameBytes(await reader.read(at, 4096), expected.subarray(at, at + 4096), `read at ${at}`);
    }
  } finally {
    turns = counting.stop();
  }
  assert.ok(turns >= reads - 1, `the loop turned ${turns} times in ${reads} reads`);
});

describe('closing', () => {
  let file;
  before(() => {
    file = writePattern(path.join(tempDirs.disk, 'closing'), SIZE);
  });

  for (const strategy of STRATEGIES) {
    test(`strategy '${strategy}': reads in flight at close() complete; later ones reject; the fd is closed`, async (t) => {
      if (skipUnlessUsable(t, strategy)) return;
      const reader = await openReader(file, { strategy });
      const fds = fs.readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return fs.readlinkSync(`/proc/self/fd/${fd}`) === file;
        } catch {
          return false;
        }
      });
      assert.equal(fds.length, 1, 'the reader holds one fd');
      const at = positions(64, SIZE);
      const inFlight = at.map((p) => reader.read(p, 4096));
      const closing = reader.close();
      assert.equal(reader.close(), closing, 'close() again: the same promise');
      const late = await rejectionOf(() => reader.read(0, 10), 'a read after close');
      assert.equal(late.code, 'ERR_SMARTREAD_READER_CLOSED');
      assert.match(late.message, /closed/);
      const lateInto = await rejectionOf(() => reader.readInto(Buffer.alloc(4), 0), 'readInto after close');
      assert.equal(lateInto.code, 'ERR_SMARTREAD_READER_CLOSED');
      const results = await withinTime(Promise.all(inFlight), 10000, 'reads in flight at close');
      const expected = patternBuffer(SIZE);
      results.forEach((buffer, i) => assertSameBytes(buffer, expected.subarray(at[i], at[i] + 4096), `read at ${at[i]}`));
      await withinTime(closing, 10000, 'close()');
      assert.equal(isOpenFd(Number(fds[0])) && fs.readlinkSync(`/proc/self/fd/${fds[0]}`) === file, false, 'the fd is closed');
      await reader[Symbol.asyncDispose]();
    });
  }

  test('more readers than the ring has fixed-file slots, one after another and 50 at once: all read, nothing leaks', async () => {
    const expected = patternBuffer(SIZE);
    for (let i = 0; i < 1100; i++) {
      const reader = await openReader(file);
      if (i % 100 === 0) assertSameBytes(await reader.read(i, 100), expected.subarray(i, i + 100), `reader ${i}`);
      await reader.close();
    }
    const readers = await Promise.all(Array.from({ length: 50 }, () => openReader(file)));
    const got = await Promise.all(readers.map((r, i) => r.read(i * 4096, 4096)));
    got.forEach((buffer, i) => assertSameBytes(buffer, expected.subarray(i * 4096, (i + 1) * 4096), `reader ${i}`));
    await Promise.all(readers.map((r) => r.close()));
  });
});

describe("errors are node:fs's", () => {
  test("a missing file: fs.promises.open's ENOENT", async () => {
    const missing = path.join(tempDirs.disk, 'missing');
    const theirs = errorFacts(await rejectionOf(() => fs.promises.open(missing, 'r')));
    assert.deepEqual(errorFacts(await rejectionOf(() => openReader(missing))), theirs);
  });

  test("a directory: reads reject with FileHandle.read's EISDIR", async () => {
    for (const strategy of STRATEGIES) {
      if (strategy === 'uring' && strategyUnavailableReason('uring') !== null) continue;
      const reader = await openReader(tempDirs.disk, { strategy });
      const handle = await fs.promises.open(tempDirs.disk, 'r');
      const theirs = errorFacts(await rejectionOf(() => handle.read(Buffer.alloc(10), 0, 10, 0)));
      await handle.close();
      assert.deepEqual(errorFacts(await rejectionOf(() => reader.read(0, 10))), theirs, strategy);
      await reader.close();
    }
  });

  test('bad arguments: ERR_INVALID_ARG_TYPE, ERR_OUT_OF_RANGE, ERR_INVALID_ARG_VALUE; bad paths as node:fs', async () => {
    const file = writePattern(path.join(tempDirs.disk, 'args'), 100);
    for (const bad of [null, 5, 'a\u0000b']) {
      const theirs = errorFacts(await rejectionOf(() => fs.promises.open(bad, 'r')));
      assert.deepEqual(errorFacts(await rejectionOf(() => openReader(bad))), theirs);
    }
    const strategyErr = await rejectionOf(() => openReader(file, { strategy: 'sync' }));
    assert.equal(strategyErr.code, 'ERR_INVALID_ARG_VALUE');
    assert.equal((await rejectionOf(() => openReader(file, { random: 'yes' }))).code, 'ERR_INVALID_ARG_TYPE');
    const reader = await openReader(file, { random: false });
    try {
      assert.equal((await rejectionOf(() => reader.read(-1, 10))).message,
        'The value of "position" is out of range. It must be >= 0 && <= 9007199254740991. Received -1');
      assert.equal((await rejectionOf(() => reader.read(0, '10'))).code, 'ERR_INVALID_ARG_TYPE');
      assert.equal((await rejectionOf(() => reader.readInto('x', 0))).message,
        'The "buffer" argument must be an instance of Buffer, TypedArray, or DataView. Received type string (\'x\')');
      assert.equal((await rejectionOf(() => reader.readInto(Buffer.alloc(4), 0, 2, 3))).message,
        'The value of "length" is out of range. It must be <= 2. Received 3');
      assertSameBytes(await reader.read(0, 100), patternBuffer(100), 'random: false reads the same');
    } finally {
      await reader.close();
    }
  });

  test("forcing 'uring' where it is unavailable rejects with ERR_SMARTREAD_STRATEGY_UNAVAILABLE", async (t) => {
    const file = writePattern(path.join(tempDirs.disk, 'forced'), 100);
    if (strategyUnavailableReason('uring') !== null) {
      const err = await rejectionOf(() => openReader(file, { strategy: 'uring' }));
      assert.equal(err.code, 'ERR_SMARTREAD_STRATEGY_UNAVAILABLE');
      return;
    }
    const source = `
      const { openReader } = require('smartread');
      openReader(process.argv[1], { strategy: 'uring' }).then(() => console.log('opened'), (err) => console.log(err.code));
      openReader(process.argv[1]).then((r) => r.read(0, 5).then((b) => console.log(r.strategy, b.length)).then(() => r.close()));
    `;
    const result = await runToEnd(process.execPath, ['-e', source, file], { env: { SMARTREAD_IO_URING: '0' } });
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(result.stdout.trim().split('\n').sort(), ['ERR_SMARTREAD_STRATEGY_UNAVAILABLE', 'threadpool 5']);
  });
});

test('a worker reads through its own reader while the main thread reads through another', async () => {
  const file = writePattern(path.join(tempDirs.disk, 'shared'), SIZE);
  const source = `
    const { parentPort, workerData } = require('node:worker_threads');
    const fs = require('node:fs');
    const { openReader } = require('smartread');
    (async () => {
      const expected = fs.readFileSync(workerData.file);
      const reader = await openReader(workerData.file);
      let bad = 0;
      for (let round = 0; round < 20; round++) {
        const at = Array.from({ length: 32 }, (_, i) => ((round * 32 + i) * 12289) % (expected.length - 4096));
        const got = await Promise.all(at.map((p) => reader.read(p, 4096)));
        got.forEach((b, i) => { if (!b.equals(expected.subarray(at[i], at[i] + 4096))) bad++; });
      }
      await reader.close();
      parentPort.postMessage({ bad, strategy: reader.strategy });
    })();
  `;
  const worker = new Worker(source, { eval: true, workerData: { file } });
  const message = once(worker, 'message');
  // Listened for now: the worker exits right after it posts, maybe before the reads below end.
  const exited = once(worker, 'exit');
  const reader = await openReader(file);
  const expected = patternBuffer(SIZE);
  let bad = 0;
  for (let round = 0; round < 20; round++) {
    const at = Array.from({ length: 32 }, (_, i) => ((round * 32 + i) * 4099) % (SIZE - 4096));
    const got = await Promise.all(at.map((p) => reader.read(p, 4096)));
    got.forEach((b, i) => { if (!b.equals(expected.subarray(at[i], at[i] + 4096))) bad++; });
  }
  await reader.close();
  const [fromWorker] = await withinTime(message, 20000, 'the worker');
  await withinTime(exited, 20000, 'the worker\'s exit');
  assert.equal(bad, 0, 'main thread mismatches');
  assert.deepEqual(fromWorker, { bad: 0, strategy: reader.strategy });
});

test('a process that exits with reads in flight on a reader ends cleanly', async () => {
  const file = writePattern(path.join(tempDirs.disk, 'exit'), SIZE);
  for (const strategy of ['auto', 'threadpool']) {
    const source = `
      const { openReader } = require('smartread');
      openReader(process.argv[1], { strategy: '${strategy}' }).then((r) => {
        for (let i = 0; i < 64; i++) r.read(i * 4096, 4096);
        console.log('started');
        process.exit(0);
      });
    `;
    // Without V8's background tasks: Node's exit can otherwise hang by itself (see helpers.js).
    const result = await runToEnd(process.execPath, [...exitTestNodeFlags, '-e', source, file]);
    assert.deepEqual({ code: result.code, signal: result.signal, out: result.stdout.trim() },
      { code: 0, signal: null, out: 'started' }, `${strategy}: ${result.stderr}`);
  }
});

test('workers terminated while their readers have reads in flight (in a child process): no crash, no fd left', async () => {
  const file = writePattern(path.join(tempDirs.disk, 'terminate'), SIZE);
  const source = `
    const { Worker } = require('node:worker_threads');
    const fs = require('node:fs');
    const { engineInfo } = require('smartread');
    const worker = \`
      const { parentPort, workerData } = require('node:worker_threads');
      const { openReader } = require('smartread');
      openReader(workerData).then(async (r) => {
        parentPort.postMessage('reading');
        for (;;) await Promise.all(Array.from({ length: 32 }, (_, i) => r.read(i * 4096, 4096)));
      });
    \`;
    (async () => {
      engineInfo();
      // The first worker opens what Node keeps for the rest of the process: not counted.
      const first = new Worker('', { eval: true });
      await new Promise((resolve) => first.once('exit', resolve));
      const count = () => fs.readdirSync('/proc/self/fd').length;
      const before = count();
      for (let i = 0; i < 20; i++) {
        const w = new Worker(worker, { eval: true, workerData: process.argv[1] });
        await new Promise((resolve) => w.once('message', resolve));
        await new Promise((resolve) => setTimeout(resolve, i % 5));
        await w.terminate();
      }
      console.log(JSON.stringify({ before, after: count() }));
    })();
  `;
  const result = await runToEnd(process.execPath, ['-e', source, file], { timeoutMs: 60000 });
  assert.deepEqual({ code: result.code, signal: result.signal }, { code: 0, signal: null }, result.stderr);
  const { before, after } = JSON.parse(result.stdout);
  assert.equal(after, before, 'descriptors after the terminations');
});
