// prefetch(): readahead of files about to be read, so that a later smartRead finds them cached.
'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { prefetch, evictFromPageCache, pageCacheResidency, engineInfo, smartRead } = require('smartread');
const {
  checkNoFdLeak, useTempDirs, writePattern, errorFacts, rejectionOf, waitUntil, runToEnd, assertSameBytes, hasFifos,
} = require('./helpers');

checkNoFdLeak();
const tempDirs = useTempDirs();
const native = engineInfo().engine === 'native';

test('evicted files are back in the page cache after prefetch', async (t) => {
  if (!native) {
    t.skip('page-cache control needs the addon (the JS engine reads the files through instead)');
    return;
  }
  const files = [1, 4096, 300 * 1024, 5 * 1024 * 1024].map((size) => writePattern(path.join(tempDirs.disk, `p-${size}`), size));
  for (const file of files) evictFromPageCache(file);
  for (const file of files) assert.equal(pageCacheResidency(file).cached, 0, `${file} is out before`);
  const result = await prefetch(files);
  assert.deepEqual(result, { started: files.length, failed: [] });
  // Readahead runs after the call returns: wait for it, without asserting how long it takes.
  for (const file of files) {
    const { size } = fs.statSync(file);
    await waitUntil(() => pageCacheResidency(file).cached === size, 20000, () => `${file}: ${JSON.stringify(pageCacheResidency(file))}`);
  }
  for (const file of files) assertSameBytes(await smartRead(file), fs.readFileSync(file), file);
});

test('what cannot be prefetched is reported with node:fs errors; other kinds are skipped', async () => {
  const good = writePattern(path.join(tempDirs.disk, 'good'), 1000);
  const missing = path.join(tempDirs.disk, 'missing');
  const throughFile = path.join(good, 'below');
  const fifo = path.join(tempDirs.disk, 'fifo');
  if (hasFifos) assert.equal((await runToEnd('mkfifo', [fifo])).code, 0);
  // A FIFO with no writer must not hold the pool thread: it is opened nonblocking and skipped.
  const result = await prefetch([good, missing, tempDirs.disk, throughFile, ...(hasFifos ? [fifo] : []), Buffer.from(good), new URL(`file://${good}`)]);
  assert.equal(result.started, 3);
  assert.deepEqual(result.failed.map((f) => f.path), [missing, throughFile]);
  for (const { path: p, error } of result.failed) {
    const expected = await rejectionOf(() => fs.promises.open(p), 'fs.promises.open');
    assert.deepEqual(errorFacts(error), errorFacts(expected), p);
  }
});

test('failures are listed in the order the paths were given, whichever ends first', async (t) => {
  if (!fs.existsSync('/proc/self/mem')) return t.skip('no /proc/self/mem here');
  // /proc/self/mem opens and is a regular file, and its first read fails (EIO: nothing is mapped
  // at 0): the JS engine's read-through ends with that error after the missing file's open has
  // failed; the addon's readahead may start it.
  const missing = path.join(tempDirs.disk, 'missing-after-mem');
  const list = ['/proc/self/mem', missing, path.join(tempDirs.disk, 'missing-last')];
  const result = await prefetch(list);
  const order = result.failed.map((f) => list.indexOf(f.path));
  assert.deepEqual(order, [...order].sort((a, b) => a - b), JSON.stringify(result.failed.map((f) => f.path)));
  assert.ok(order.includes(1) && order.includes(2), 'the missing files failed');
  if (!native) assert.deepEqual(order, [0, 1, 2]);
});

test('bad arguments reject as readMany does', async () => {
  for (const bad of ['/a/path', Buffer.from('/a/path'), 42, null, undefined]) {
    const err = await rejectionOf(() => prefetch(bad), 'prefetch');
    assert.equal(err.code, 'ERR_INVALID_ARG_TYPE', String(bad));
  }
  const err = await rejectionOf(() => prefetch(['/ok', {}]), 'prefetch');
  assert.deepEqual(errorFacts(err), errorFacts(await rejectionOf(() => fs.promises.readFile({}), 'readFile')));
  const nul = await rejectionOf(() => prefetch(['/x\u0000y']), 'prefetch');
  assert.equal(nul.code, 'ERR_INVALID_ARG_VALUE');
  assert.deepEqual(await prefetch([]), { started: 0, failed: [] });
});
