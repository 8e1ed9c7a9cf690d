// The cache-hit fast path of strategy 'auto': a cached regular file of up to 256 KiB is read on
// the calling thread (openat2 RESOLVE_CACHED, preadv2 RWF_NOWAIT); anything else falls through
// to io_uring or the thread pool. Whichever way a read goes, bytes and errors are node:fs's.
'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { evictFromPageCache, pageCacheResidency, smartRead, readMany, engineInfo } = require('smartread');
const {
  checkNoFdLeak, useTempDirs, writePattern, assertSameBytes, errorFacts, setUpAsyncEngines,
} = require('./helpers');

setUpAsyncEngines();
checkNoFdLeak();
const tempDirs = useTempDirs();
const native = engineInfo().engine === 'native';

const KiB = 1024;

test('cached files around the fast path limit read the same bytes as fs.promises.readFile', async () => {
  for (const { kind, dir } of tempDirs.all) {
    for (const size of [1, 4095, 4096, 4097, 64 * KiB, 256 * KiB - 1, 256 * KiB, 256 * KiB + 1]) {
      const file = writePattern(path.join(dir, `cached-${size}`), size);
      fs.readFileSync(file);
      const actual = await smartRead(file);
      assert.ok(Buffer.isBuffer(actual));
      assertSameBytes(actual, await fs.promises.readFile(file), `${kind}: ${size} bytes`);
    }
  }
});

test('a cached file is a hit on every target, tmpfs included (which refuses RWF_NOWAIT)', (t) => {
  if (!native) {
    t.skip('the fast path is part of the addon');
    return;
  }
  // The engine's own fast path, below smartRead: null means a miss.
  const { cachedRead } = require('../dist/engine.js');
  for (const { kind, dir } of tempDirs.all) {
    for (const size of [1, 4096, 256 * KiB]) {
      const file = writePattern(path.join(dir, `hit-${size}`), size);
      fs.readFileSync(file);
      const hit = cachedRead(file, fs.constants.O_RDONLY);
      assert.ok(hit !== null, `${kind}: a cached ${size}-byte file is a hit`);
      assertSameBytes(hit, fs.readFileSync(file), `${kind}: ${size} bytes`);
    }
    const large = writePattern(path.join(dir, 'past-the-limit'), 256 * KiB + 1);
    fs.readFileSync(large);
    assert.equal(cachedRead(large, fs.constants.O_RDONLY), null, `${kind}: past the limit is left to the engines`);
  }
});

test('a file evicted from the page cache (a miss) is read whole by the next engine', async (t) => {
  if (!native) {
    t.skip('page-cache control needs the addon');
    return;
  }
  for (const size of [4096, 100 * KiB]) {
    const file = writePattern(path.join(tempDirs.disk, `evicted-${size}`), size);
    evictFromPageCache(file);
    assert.equal(pageCacheResidency(file).cached, 0, 'the pages are out before the read');
    assertSameBytes(await smartRead(file), fs.readFileSync(file), `${size} bytes after eviction`);
    assert.equal(pageCacheResidency(file).cached, size, 'the read brought them back');
  }
});

test("flags that create or truncate are never taken by the fast path: 'a+' and 'w+' behave as in fs", async () => {
  const dir = tempDirs.disk;
  const created = path.join(dir, 'created-by-a-plus');
  assert.equal((await smartRead(created, { flag: 'a+' })).length, 0);
  assert.ok(fs.existsSync(created));
  const truncated = writePattern(path.join(dir, 'truncated-by-w-plus'), 1000);
  fs.readFileSync(truncated);
  assert.equal((await smartRead(truncated, { flag: 'w+' })).length, 0);
  assert.equal(fs.statSync(truncated).size, 0);
});

test('errors of cached lookups are the errors of fs.promises.readFile', async () => {
  const missing = path.join(tempDirs.disk, 'missing');
  const throughFile = path.join(writePattern(path.join(tempDirs.disk, 'plain'), 10), 'below');
  for (const target of [missing, missing, tempDirs.disk, throughFile]) {
    // Twice for the missing file: the second lookup finds its negative dentry cached.
    const ours = await smartRead(target).then(() => null, (err) => err);
    const theirs = await fs.promises.readFile(target).then(() => null, (err) => err);
    assert.ok(ours && theirs, target);
    assert.deepEqual(errorFacts(ours), errorFacts(theirs), target);
  }
});

test('hundreds of small fast-path results kept alive at once each hold their own file', async () => {
  const files = [];
  for (let i = 0; i < 300; i++) {
    const file = path.join(tempDirs.disk, `small-${i}`);
    fs.writeFileSync(file, Buffer.alloc(1 + ((i * 977) % 4096), i % 256));
    files.push(file);
  }
  const results = await readMany(files, { concurrency: 16 });
  const one = await Promise.all(files.map((f) => smartRead(f)));
  results[0].fill(0xee);
  for (let i = 0; i < files.length; i++) {
    const expected = fs.readFileSync(files[i]);
    if (i > 0) assertSameBytes(results[i], expected, `readMany ${files[i]}`);
    assertSameBytes(one[i], expected, `smartRead ${files[i]}`);
  }
});
