// readInto and readIntoSync: the bytes of paths and fds at positions across page boundaries, on
// tmpfs and the disk, into Buffers, TypedArrays and DataViews; an fd's own position; and every
// argument error and read error compared with node:fs's fs.readSync and fs.read.
'use strict';
const { test, describe, before } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { readInto, readIntoSync } = require('smartread');
const {
  checkNoFdLeak, useTempDirs, writePattern, patternBuffer, assertSameBytes, errorFacts, thrownBy,
  rejectionOf, setUpAsyncEngines,
} = require('./helpers');

setUpAsyncEngines();
checkNoFdLeak();
const tempDirs = useTempDirs();

const PAGE = 4096;
const SIZE = 5 * PAGE + 17;

const bytesOf = (view) => Buffer.from(view.buffer, view.byteOffset, view.byteLength);

for (const { kind, dir } of tempDirs.all) {
  describe(`on ${kind}`, () => {
    let file;
    before(() => {
      file = writePattern(path.join(dir, 'data'), SIZE);
    });

    const ranges = [
      // [position, offset, length]
      [0, 0, 1], [0, 0, PAGE], [PAGE - 1, 0, 2], [PAGE, 3, PAGE], [PAGE + 1, 0, 3 * PAGE],
      [2 * PAGE - 5, 7, PAGE + 10], [SIZE - 1, 0, 1], [SIZE - 10, 0, 100], [SIZE, 0, 10], [SIZE + 5, 0, 10],
    ];

    for (const sync of [true, false]) {
      const name = sync ? 'readIntoSync' : 'readInto';
      const call = async (...args) => (sync ? readIntoSync(...args) : (await readInto(...args)).bytesRead);

      test(`${name} of a path and of an fd: the file's bytes at each position, the count as fs.readSync`, async () => {
        const fd = fs.openSync(file, 'r');
        try {
          for (const [position, offset, length] of ranges) {
            const expectedCount = Math.max(0, Math.min(length, SIZE - position));
            const expected = patternBuffer(expectedCount, position);
            for (const target of [file, fd]) {
              const buffer = Buffer.alloc(offset + length + 3, 0xaa);
              const n = await call(target, buffer, offset, length, position);
              assert.equal(n, expectedCount, `count at ${position} (${typeof target})`);
              assertSameBytes(buffer.subarray(offset, offset + n), expected, `bytes at ${position}`);
              assert.ok(buffer.subarray(0, offset).every((b) => b === 0xaa), 'nothing before offset is touched');
              assert.ok(buffer.subarray(offset + n).every((b) => b === 0xaa), 'nothing after the count is touched');
            }
            const theirs = Buffer.alloc(offset + length + 3, 0xaa);
            assert.equal(fs.readSync(fd, theirs, offset, length, position), expectedCount);
          }
        } finally {
          fs.closeSync(fd);
        }
      });

      test(`${name} into TypedArrays and DataViews, with an options object`, async () => {
        const u16 = new Uint16Array(100);
        assert.equal(await call(file, u16, { position: PAGE - 3 }), 200);
        assertSameBytes(bytesOf(u16), patternBuffer(200, PAGE - 3), 'Uint16Array');
        const backing = new ArrayBuffer(300);
        const view = new DataView(backing, 10, 200);
        assert.equal(await call(file, view, { offset: 4, length: 100, position: 7 }), 100);
        assertSameBytes(Buffer.from(backing, 14, 100), patternBuffer(100, 7), 'DataView');
        const f64 = new Float64Array(8);
        assert.equal(await call(file, f64), 64);
        assertSameBytes(bytesOf(f64), patternBuffer(64), 'Float64Array from position 0 of a path');
      });
    }
  });
}

test('an fd without a position reads at its own position and advances it, as fs.readSync', async () => {
  const file = writePattern(path.join(tempDirs.disk, 'seq'), 3 * PAGE);
  const fd = fs.openSync(file, 'r');
  try {
    const a = Buffer.alloc(PAGE + 5);
    assert.equal(readIntoSync(fd, a), PAGE + 5);
    assertSameBytes(a, patternBuffer(PAGE + 5), 'first read');
    const b = Buffer.alloc(10);
    assert.equal((await readInto(fd, b, 0, 10, null)).bytesRead, 10);
    assertSameBytes(b, patternBuffer(10, PAGE + 5), 'second read, null position');
    assert.equal(readIntoSync(fd, b, 0, 10, -1), 10);
    assertSameBytes(b, patternBuffer(10, PAGE + 15), 'third read, position -1');
    assert.equal(readIntoSync(fd, b, 0, 10, 0), 10, 'an explicit position does not move it');
    assert.equal(readIntoSync(fd, b, 0, 10, null), 10);
    assertSameBytes(b, patternBuffer(10, PAGE + 25), 'fourth read');
    assert.equal(readIntoSync(fd, b, 0, 10, 10n), 10, 'a bigint position');
    assertSameBytes(b, patternBuffer(10, 10), 'bigint position');
  } finally {
    fs.closeSync(fd);
  }
});

test('the async result is { bytesRead, buffer }, the same buffer, as FileHandle.read', async () => {
  const file = writePattern(path.join(tempDirs.disk, 'shape'), 100);
  const buffer = Buffer.alloc(10);
  const result = await readInto(file, buffer);
  assert.deepEqual(Object.keys(result), ['bytesRead', 'buffer']);
  assert.equal(result.buffer, buffer);
  const empty = await readInto(file, buffer, 0, 0, 0);
  assert.deepEqual(empty, { bytesRead: 0, buffer });
});

describe("errors are node:fs's", () => {
  let file;
  let fd;
  before(() => {
    file = writePattern(path.join(tempDirs.disk, 'errors'), 100);
  });

  // Arguments after the fd, each compared with fs.readSync(fd, ...) and fs.read's validation.
  const argumentCases = [
    ['not a buffer', ['x', 0, 1, 0]],
    ['an empty buffer', [Buffer.alloc(0), 0, 1, 0]],
    ['a negative offset', [Buffer.alloc(4), -1, 1, 0]],
    ['a fractional offset', [Buffer.alloc(4), 1.5, 1, 0]],
    ['a string offset', [Buffer.alloc(4), '1', 1, 0]],
    ['a length past the buffer', [Buffer.alloc(4), 0, 9, 0]],
    ['offset + length past the buffer', [Buffer.alloc(4), 2, 3, 0]],
    ['a negative length', [Buffer.alloc(4), 0, -1, 0]],
    ['an offset past the buffer', [Buffer.alloc(4), 5, 1, 0]],
    ['a huge offset', [Buffer.alloc(4), 2 ** 40, 1, 0]],
    ['a string position', [Buffer.alloc(4), 0, 1, 'x']],
    ['a fractional position', [Buffer.alloc(4), 0, 1, 1.5]],
    ['a position below -1', [Buffer.alloc(4), 0, 1, -2]],
    ['a bigint position past int64', [Buffer.alloc(4), 0, 1, 2n ** 63n]],
    ['options that are an array', [Buffer.alloc(4), []]],
    ['options that are a string', [Buffer.alloc(4), 'x']],
    ['options with a bad offset', [Buffer.alloc(4), { offset: -3 }]],
  ];

  for (const [what, args] of argumentCases) {
    test(`${what}: readIntoSync throws and readInto rejects with fs.readSync's error`, async () => {
      fd = fs.openSync(file, 'r');
      try {
        const theirs = errorFacts(thrownBy(() => fs.readSync(fd, ...args), 'fs.readSync'));
        assert.deepEqual(errorFacts(thrownBy(() => readIntoSync(fd, ...args), 'readIntoSync')), theirs);
        assert.deepEqual(errorFacts(thrownBy(() => readIntoSync(file, ...args), 'readIntoSync of a path')), theirs);
        assert.deepEqual(errorFacts(await rejectionOf(() => readInto(fd, ...args), 'readInto')), theirs);
      } finally {
        fs.closeSync(fd);
      }
    });
  }

  // node:fs's range for a bigint position changed in Node 22 (nodejs/node#42835: -1n up to
  // int64's max less the length, where it was all of int64); either way the outcome is the
  // running node:fs's: the same error, or the same count from a fresh fd.
  test('bigint positions at the edges of the range: the outcome of fs.readSync', async () => {
    const outcomeOf = async (fn) => {
      try {
        return { bytesRead: await fn() };
      } catch (err) {
        return errorFacts(err);
      }
    };
    const withFreshFd = (fn) => async () => {
      const fresh = fs.openSync(file, 'r');
      try {
        return await fn(fresh);
      } finally {
        fs.closeSync(fresh);
      }
    };
    for (const args of [
      [Buffer.alloc(4), 0, 1, -2n],
      [Buffer.alloc(4), 0, 1, -1n],
      [Buffer.alloc(4), 0, 1, -(2n ** 63n)],
    ]) {
      const what = args.map(String).join(', ');
      const theirs = await outcomeOf(withFreshFd((f) => fs.readSync(f, ...args)));
      assert.deepEqual(await outcomeOf(withFreshFd((f) => readIntoSync(f, ...args))), theirs, `readIntoSync(fd, ${what})`);
      assert.deepEqual(await outcomeOf(withFreshFd(async (f) => (await readInto(f, ...args)).bytesRead)), theirs, `readInto(fd, ${what})`);
    }
  });

  // Past 2^53 a number cannot name every byte: 2^53 + 1 as a number is 2^53. A sparse file on
  // tmpfs (whose files may reach 2^63 - 1 bytes) holds different bytes at 2^53 and 2^53 + 1.
  test('bigint positions past 2^53 read the bytes at exactly that offset, from a path and an fd', async (t) => {
    if (tempDirs.tmpfs === undefined) {
      t.skip('/dev/shm is not a tmpfs here: no filesystem here holds a file that large');
      return;
    }
    const sparse = path.join(tempDirs.tmpfs, 'past-2-53');
    // fs.writeSync takes positions up to Number.MAX_SAFE_INTEGER (2^53 - 1): the bytes start
    // there and run past 2^53.
    const start = 2n ** 53n - 1n;
    const content = patternBuffer(64, 7);
    const fd = fs.openSync(sparse, 'w+');
    try {
      assert.equal(fs.writeSync(fd, content, 0, content.length, Number(start)), content.length);
      for (const past of [1n, 2n, 5n, 63n]) {
        const at = start + past;
        const expected = content.subarray(Number(past), Number(past) + 8);
        const theirs = Buffer.alloc(8);
        const count = fs.readSync(fd, theirs, 0, 8, at);
        assertSameBytes(theirs.subarray(0, count), expected, `fs.readSync at 2^53 + ${past - 1n}`);
        for (const target of [sparse, fd]) {
          const what = `${typeof target === 'number' ? 'an fd' : 'a path'} at 2^53 + ${past - 1n}`;
          const mine = Buffer.alloc(8);
          assert.equal(readIntoSync(target, mine, 0, 8, at), count, `readIntoSync, ${what}`);
          assertSameBytes(mine.subarray(0, count), expected, `readIntoSync, ${what}`);
          const async = Buffer.alloc(8);
          assert.equal((await readInto(target, async, 0, 8, at)).bytesRead, count, `readInto, ${what}`);
          assertSameBytes(async.subarray(0, count), expected, `readInto, ${what}`);
        }
      }
    } finally {
      fs.closeSync(fd);
      fs.rmSync(sparse);
    }
  });

  test("bad fds: fs.readSync's ERR_INVALID_ARG_TYPE / ERR_OUT_OF_RANGE", async () => {
    for (const bad of [1.5, -1, 2 ** 31]) {
      const theirs = errorFacts(thrownBy(() => fs.readSync(bad, Buffer.alloc(1))));
      assert.deepEqual(errorFacts(thrownBy(() => readIntoSync(bad, Buffer.alloc(1)))), theirs, String(bad));
      assert.deepEqual(errorFacts(await rejectionOf(() => readInto(bad, Buffer.alloc(1)))), theirs, String(bad));
    }
  });

  // From Node 22 fs.readSync checks the fd in C++ and words a bigint otherwise than fs.read does
  // ("type bigint (5)" against "(5n)"): each reader is held to its own counterpart.
  test("neither a path nor an fd: fs.readSync's and fs.read's ERR_INVALID_ARG_TYPE, naming the fd", async () => {
    for (const bad of [null, undefined, {}, 5n, true, Symbol('s'), () => {}]) {
      const sync = errorFacts(thrownBy(() => fs.readSync(bad, Buffer.alloc(1))));
      const async = errorFacts(thrownBy(() => fs.read(bad, Buffer.alloc(1), 0, 1, null, () => {})));
      for (const theirs of [sync, async]) {
        assert.match(theirs.message, /^The "fd" argument must be of type number/, String(bad));
      }
      assert.deepEqual(errorFacts(thrownBy(() => readIntoSync(bad, Buffer.alloc(1)))), sync, String(bad));
      assert.deepEqual(errorFacts(await rejectionOf(() => readInto(bad, Buffer.alloc(1)))), async, String(bad));
    }
  });

  test("bad paths: node:fs's ERR_INVALID_ARG_VALUE", async () => {
    for (const bad of ['a\u0000b', Buffer.from('a\u0000b')]) {
      const theirs = errorFacts(thrownBy(() => fs.openSync(bad)));
      assert.deepEqual(errorFacts(thrownBy(() => readIntoSync(bad, Buffer.alloc(1)))), theirs, String(bad));
      assert.deepEqual(errorFacts(await rejectionOf(() => readInto(bad, Buffer.alloc(1)))), theirs, String(bad));
    }
  });

  test("a missing path: fs.openSync's ENOENT, naming it", async () => {
    const missing = path.join(tempDirs.disk, 'missing');
    const theirs = errorFacts(thrownBy(() => fs.openSync(missing, 'r')));
    assert.deepEqual(errorFacts(thrownBy(() => readIntoSync(missing, Buffer.alloc(1)))), theirs);
    assert.deepEqual(errorFacts(await rejectionOf(() => readInto(missing, Buffer.alloc(1)))), theirs);
  });

  test("a directory and a closed fd: fs.readSync's EISDIR and EBADF", async () => {
    const dirFd = fs.openSync(tempDirs.disk, 'r');
    try {
      const theirs = errorFacts(thrownBy(() => fs.readSync(dirFd, Buffer.alloc(4), 0, 4, 0)));
      assert.equal(theirs.code, 'EISDIR');
      assert.deepEqual(errorFacts(thrownBy(() => readIntoSync(dirFd, Buffer.alloc(4), 0, 4, 0))), theirs);
      assert.deepEqual(errorFacts(await rejectionOf(() => readInto(dirFd, Buffer.alloc(4), 0, 4, 0))), theirs);
      assert.deepEqual(errorFacts(thrownBy(() => readIntoSync(tempDirs.disk, Buffer.alloc(4)))), theirs, 'a directory by path');
    } finally {
      fs.closeSync(dirFd);
    }
    const closed = fs.openSync(file, 'r');
    fs.closeSync(closed);
    const theirs = errorFacts(thrownBy(() => fs.readSync(closed, Buffer.alloc(4))));
    assert.equal(theirs.code, 'EBADF');
    assert.deepEqual(errorFacts(thrownBy(() => readIntoSync(closed, Buffer.alloc(4)))), theirs);
    assert.deepEqual(errorFacts(await rejectionOf(() => readInto(closed, Buffer.alloc(4)))), theirs);
  });
});
