// FileHandles (node:fs/promises open()'s), which fs.promises.readFile reads: smartRead and
// readMany read one from its current position and leave it open, with fs.promises.readFile's
// bytes and errors on every strategy; readInto reads one as FileHandle.read does; the drop-in
// serves fs.promises.readFile(fileHandle).
'use strict';
const { test, describe, before } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { smartRead, readMany, readInto, readIntoSync, metrics, register, unregister, engineInfo } = require('smartread');
const {
  checkNoFdLeak, useTempDirs, writePattern, assertSameBytes, errorFacts, rejectionOf, thrownBy, STRATEGIES,
  skipUnlessAvailable, setUpAsyncEngines,
} = require('./helpers');

setUpAsyncEngines();
checkNoFdLeak();
const tempDirs = useTempDirs();

const dir = tempDirs.tmpfs ?? tempDirs.disk;
const sizes = [0, 1, 4096, 64 * 1024 + 1, 9 * 1024 * 1024 + 7];
const files = {};
before(() => {
  for (const size of sizes) files[size] = writePattern(path.join(dir, `file-${size}`), size);
});

/** Opens `file` twice, moves both handles `skip` bytes on, and hands them to `fn`. */
async function withTwoHandles(file, skip, fn) {
  const ours = await fs.promises.open(file, 'r');
  const theirs = await fs.promises.open(file, 'r');
  try {
    if (skip > 0) {
      await ours.read(Buffer.alloc(skip), 0, skip, null);
      await theirs.read(Buffer.alloc(skip), 0, skip, null);
    }
    await fn(ours, theirs);
  } finally {
    await ours.close();
    await theirs.close();
  }
}

describe('smartRead(fileHandle) is fs.promises.readFile(fileHandle)', () => {
  for (const strategy of [...STRATEGIES, 'mmap']) {
    test(`strategy '${strategy}': from the handle's position, to the end, the handle left open`, async (t) => {
      if (skipUnlessAvailable(t, strategy)) return;
      for (const size of sizes) {
        for (const skip of [0, Math.min(size, 3), size]) {
          await withTwoHandles(files[size], skip, async (ours, theirs) => {
            const what = `${size} bytes from ${skip}`;
            const expected = await fs.promises.readFile(theirs);
            const actual = await smartRead(ours, { strategy });
            assertSameBytes(actual, expected, what);
            // Both handles are at the end now: a second read gives nothing, and the handle is open.
            assertSameBytes(await smartRead(ours, { strategy }), await fs.promises.readFile(theirs), `${what}, again`);
            assert.ok(fs.fstatSync(ours.fd).isFile(), `${what}: the handle is still open`);
          });
        }
      }
      await withTwoHandles(files[4096], 10, async (ours, theirs) => {
        assert.equal(await smartRead(ours, { strategy, encoding: 'hex' }), await fs.promises.readFile(theirs, { encoding: 'hex' }));
      });
    });
  }

  test("a closed handle, a directory's handle: fs.promises.readFile's errors", async () => {
    const closed = await fs.promises.open(files[4096], 'r');
    await closed.close();
    const theirs = await rejectionOf(() => fs.promises.readFile(closed), 'fs.promises.readFile');
    assert.equal(theirs.code, 'ERR_OUT_OF_RANGE');
    assert.deepEqual(errorFacts(await rejectionOf(() => smartRead(closed), 'smartRead')), errorFacts(theirs));
    const directory = await fs.promises.open(dir, 'r');
    try {
      const expected = await rejectionOf(() => fs.promises.readFile(directory), 'fs.promises.readFile');
      assert.equal(expected.code, 'EISDIR');
      for (const strategy of STRATEGIES) {
        if (skipUnlessAvailable({ skip() {} }, strategy)) continue;
        assert.deepEqual(errorFacts(await rejectionOf(() => smartRead(directory, { strategy }), strategy)), errorFacts(expected), strategy);
      }
    } finally {
      await directory.close();
    }
  });

  test('an abort after the call rejects, and the handle stays open', async () => {
    await withTwoHandles(files[4096], 0, async (ours, theirs) => {
      const theirController = new AbortController();
      const ourController = new AbortController();
      const expected = rejectionOf(() => fs.promises.readFile(theirs, { signal: theirController.signal }), 'fs.promises.readFile');
      const actual = rejectionOf(() => smartRead(ours, { signal: ourController.signal }), 'smartRead');
      process.nextTick(() => {
        theirController.abort();
        ourController.abort();
      });
      assert.deepEqual(errorFacts(await actual), errorFacts(await expected));
      assert.ok(fs.fstatSync(ours.fd).isFile());
    });
  });

  test('readMany takes handles among paths and fds', async () => {
    await withTwoHandles(files[64 * 1024 + 1], 5, async (ours, theirs) => {
      const fd = fs.openSync(files[1], 'r');
      try {
        const [a, b, c] = await readMany([ours, files[4096], fd]);
        assertSameBytes(a, await fs.promises.readFile(theirs), 'the handle');
        assertSameBytes(b, fs.readFileSync(files[4096]), 'the path');
        assertSameBytes(c, fs.readFileSync(files[1]), 'the fd');
      } finally {
        fs.closeSync(fd);
      }
    });
  });
});

describe('readInto(fileHandle) reads as FileHandle.read', () => {
  test('at a position, and at the handle\'s own position', async () => {
    await withTwoHandles(files[64 * 1024 + 1], 100, async (ours, theirs) => {
      const expected = Buffer.alloc(1000);
      const actual = Buffer.alloc(1000);
      const { bytesRead } = await theirs.read(expected, 0, 1000, 5000);
      assert.equal((await readInto(ours, actual, 0, 1000, 5000)).bytesRead, bytesRead);
      assertSameBytes(actual, expected, 'at 5000');
      await theirs.read(expected, 0, 1000, null);
      assert.equal(readIntoSync(ours, actual, 0, 1000, null), 1000);
      assertSameBytes(actual, expected, "at the handle's position");
    });
  });

  test('neither a path nor an fd nor a handle: fs.readSync\'s ERR_INVALID_ARG_TYPE, naming the fd', async () => {
    const theirs = errorFacts(thrownBy(() => fs.readSync({ fd: 3 }, Buffer.alloc(1))));
    assert.deepEqual(errorFacts(thrownBy(() => readIntoSync({ fd: 3 }, Buffer.alloc(1)))), theirs);
    assert.deepEqual(errorFacts(await rejectionOf(() => readInto({ fd: 3 }, Buffer.alloc(1)))), theirs);
  });
});

test('the drop-in serves fs.promises.readFile(fileHandle) and its signal', async (t) => {
  if (engineInfo().engine !== 'native') {
    t.skip('register leaves node:fs alone without the addon');
    return;
  }
  const file = files[64 * 1024 + 1];
  const handle = await fs.promises.open(file, 'r');
  register();
  t.after(async () => {
    unregister();
    await handle.close();
  });
  await handle.read(Buffer.alloc(7), 0, 7, null);
  const expected = fs.readFileSync(file).subarray(7).toString('latin1');
  metrics.reset();
  assert.equal(await fs.promises.readFile(handle, 'latin1'), expected);
  assertSameBytes(await fs.promises.readFile(handle, { signal: new AbortController().signal }), Buffer.alloc(0), 'at the end');
  const served = Object.values(metrics().strategies).reduce((sum, m) => sum + m.reads, 0);
  assert.equal(served, 2, "both reads of the handle were smartread's");
  assert.ok(fs.fstatSync(handle.fd).isFile(), 'the handle is still open');
});
