// Page-cache control: evictFromPageCache drops a file's pages on a disk filesystem, and
// pageCacheResidency counts them (after a read, all of them). tmpfs pages are the file itself and
// cannot be dropped. Errors are node:fs's; without the addon, both functions throw
// ERR_SMARTREAD_STRATEGY_UNAVAILABLE.
'use strict';
const { test, describe, before } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const { evictFromPageCache, pageCacheResidency, smartRead, smartReadSync, engineInfo } = require('smartread');
const {
  checkNoFdLeak, useTempDirs, openFdCount, writePattern, patternBuffer, assertSameBytes, errorFacts, thrownBy,
  STRATEGIES, strategyUnavailableReason, setUpAsyncEngines,
} = require('./helpers');

setUpAsyncEngines();
checkNoFdLeak();
const tempDirs = useTempDirs();

const MiB = 1024 * 1024;
const native = engineInfo().engine === 'native';
const notNative = `the native addon is not in use (${engineInfo().reason})`;

describe('with the addon', () => {
  const size = 8 * MiB + 5;
  let diskFile;
  before(() => {
    diskFile = writePattern(path.join(tempDirs.disk, 'on-disk'), size);
  });

  test('a file on the disk: evicted, none of it is cached; read whole, all of it is again', async (t) => {
    if (!native) {
      t.skip(notNative);
      return;
    }
    const fdsBefore = openFdCount();
    // Freshly written pages are dirty: eviction writes them back first.
    assert.equal(evictFromPageCache(diskFile), undefined);
    assert.deepEqual(pageCacheResidency(diskFile), { size, cached: 0 });
    assertSameBytes(await smartRead(diskFile), patternBuffer(size), 'the file read after eviction');
    assert.deepEqual(pageCacheResidency(diskFile), { size, cached: size });
    assert.equal(openFdCount(), fdsBefore, 'no descriptor left open');
  });

  for (const strategy of STRATEGIES) {
    test(`strategy '${strategy}': a read after eviction brings the whole file back`, async (t) => {
      if (!native) {
        t.skip(notNative);
        return;
      }
      const reason = strategyUnavailableReason(strategy);
      if (reason !== null) {
        t.skip(`strategy '${strategy}' is not available: ${reason}`);
        return;
      }
      evictFromPageCache(diskFile);
      assert.equal(pageCacheResidency(diskFile).cached, 0);
      assertSameBytes(await smartRead(diskFile, { strategy }), patternBuffer(size), `strategy '${strategy}'`);
      // Every page, less any the kernel reclaims at once: this VM's balloon can take memory
      // back from the guest at any moment (an ASan run once found one page of 2,049 gone).
      const { cached } = pageCacheResidency(diskFile);
      assert.ok(cached > size - 8 * 4096, `strategy '${strategy}': ${cached} of ${size} bytes cached after the read`);
    });
  }

  test('a partly read file is partly cached; page-sized counts, the last page counted to the end of the file', (t) => {
    if (!native) {
      t.skip(notNative);
      return;
    }
    evictFromPageCache(diskFile);
    // Read the first byte only (readahead may bring in more, never the whole 8 MiB).
    const fd = fs.openSync(diskFile, 'r');
    try {
      fs.readSync(fd, Buffer.alloc(1), 0, 1, 0);
    } finally {
      fs.closeSync(fd);
    }
    const { cached } = pageCacheResidency(diskFile);
    assert.ok(cached > 0 && cached < size, `cached ${cached} of ${size}`);
    assert.equal(cached % 4096, 0, 'whole pages, the last one not among them');
    smartReadSync(diskFile);
    assert.equal(pageCacheResidency(diskFile).cached, size);
  });

  test('path forms: Buffer, file: URL; an empty file', (t) => {
    if (!native) {
      t.skip(notNative);
      return;
    }
    for (const form of [Buffer.from(diskFile), pathToFileURL(diskFile)]) {
      evictFromPageCache(form);
      assert.deepEqual(pageCacheResidency(form), { size, cached: 0 });
      smartReadSync(diskFile);
      assert.deepEqual(pageCacheResidency(form), { size, cached: size });
    }
    const empty = path.join(tempDirs.disk, 'empty');
    fs.writeFileSync(empty, '');
    try {
      evictFromPageCache(empty);
      assert.deepEqual(pageCacheResidency(empty), { size: 0, cached: 0 });
    } finally {
      fs.rmSync(empty);
    }
  });

  test('a Buffer path that is not UTF-8 names the same file as it does for node:fs', (t) => {
    if (!native) {
      t.skip(notNative);
      return;
    }
    const name = Buffer.concat([Buffer.from(`${tempDirs.disk}/latin1-`), Buffer.from([0xe9, 0xff])]);
    fs.writeFileSync(name, 'twelve bytes');
    try {
      evictFromPageCache(name);
      assert.deepEqual(pageCacheResidency(name), { size: 12, cached: 0 });
      smartReadSync(name);
      assert.deepEqual(pageCacheResidency(name), { size: 12, cached: 12 });
    } finally {
      fs.rmSync(name);
    }
  });

  // tmpfs keeps files only in the page cache (or swap): their pages are the file, not a cache
  // of it, and fadvise(DONTNEED) leaves them where they are.
  test('tmpfs: eviction cannot drop a tmpfs file\'s pages, so they stay cached', (t) => {
    if (!native) {
      t.skip(notNative);
      return;
    }
    if (!tempDirs.tmpfs) {
      t.skip('no tmpfs at /dev/shm');
      return;
    }
    const file = writePattern(path.join(tempDirs.tmpfs, 'in-memory'), 2 * MiB + 1);
    try {
      evictFromPageCache(file);
      assert.deepEqual(pageCacheResidency(file), { size: 2 * MiB + 1, cached: 2 * MiB + 1 });
    } finally {
      fs.rmSync(file);
    }
  });

  test('a missing path: node:fs\'s ENOENT error, syscall open, with the path', (t) => {
    if (!native) {
      t.skip(notNative);
      return;
    }
    const missing = path.join(tempDirs.disk, 'missing');
    const expected = thrownBy(() => fs.openSync(missing, 'r'), 'fs.openSync');
    for (const [name, fn] of [['evictFromPageCache', evictFromPageCache], ['pageCacheResidency', pageCacheResidency]]) {
      for (const form of [missing, Buffer.from(missing), pathToFileURL(missing)]) {
        const err = thrownBy(() => fn(form), name);
        assert.deepEqual(errorFacts(err), errorFacts(expected), `${name}(${typeof form})`);
        assert.equal(err.code, 'ENOENT');
        assert.equal(err.syscall, 'open');
        assert.equal(err.path, missing);
        assert.equal(err.message, `ENOENT: no such file or directory, open '${missing}'`);
      }
      const through = path.join(diskFile, 'x');
      assert.deepEqual(errorFacts(thrownBy(() => fn(through), name)), errorFacts(thrownBy(() => fs.openSync(through, 'r'))));
    }
  });
});

describe('arguments', () => {
  for (const [name, fn] of [['evictFromPageCache', evictFromPageCache], ['pageCacheResidency', pageCacheResidency]]) {
    test(`${name}: invalid paths throw node:fs's argument errors, on either engine`, () => {
      for (const bad of [{}, null, undefined, 1, true]) {
        const expected = thrownBy(() => fs.openSync(bad), 'fs.openSync');
        assert.deepEqual(errorFacts(thrownBy(() => fn(bad), name)), errorFacts(expected), String(bad));
      }
      const nul = thrownBy(() => fn('/tmp/x\u0000y'), name);
      assert.equal(nul.code, 'ERR_INVALID_ARG_VALUE');
    });
  }
});

describe('without the addon', () => {
  for (const [name, fn] of [['evictFromPageCache', evictFromPageCache], ['pageCacheResidency', pageCacheResidency]]) {
    test(`${name} throws ERR_SMARTREAD_STRATEGY_UNAVAILABLE`, (t) => {
      if (native) {
        t.skip('the native addon is in use');
        return;
      }
      for (const target of [__filename, path.join(tempDirs.disk, 'missing')]) {
        const err = thrownBy(() => fn(target), name);
        assert.equal(err.constructor, Error);
        assert.equal(err.code, 'ERR_SMARTREAD_STRATEGY_UNAVAILABLE');
        assert.match(err.message, /native addon/);
      }
    });
  }
});
