// A name the fast path read before on tmpfs is read again without fstat, as on a disk, though
// tmpfs refuses RWF_NOWAIT (its pages are memory): the read is timed instead, and one slower
// than memory is looked at with fstat. Here the name comes to name a file on a FUSE mount whose
// every request waits 1 ms (the bench's fuse-latency daemon, mounted by the test as root): the
// read that finds that out waits once and has the file's bytes, and from the next read the name
// is looked at afresh, as a name never read is, and goes to the engines.
'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { smartRead, metrics, engineInfo } = require('smartread');
const { checkNoFdLeak, useTempDirs, writePattern, assertSameBytes, setUpAsyncEngines } = require('./helpers');
const { useMounts } = require('./mounts');

setUpAsyncEngines();
// The mount first: the descriptor count waits for it, and its helpers' after hooks run after.
const mounts = useMounts(['fuse-latency']);
checkNoFdLeak({ spawnsChildren: true, after: mounts.ready });
const tempDirs = useTempDirs();

test('a name read before on tmpfs that now names a file behind a slow FUSE mount is read once, then looked at afresh', async (t) => {
  const why = engineInfo().engine !== 'native' ? 'the pure-JS engine has no fast path'
    : !tempDirs.tmpfs ? 'no tmpfs at /dev/shm' : mounts.skipReason('fuse-latency');
  if (why) return t.skip(why);
  const name = writePattern(path.join(tempDirs.tmpfs, 'moves-away'), 4096);
  for (let round = 0; round < 2; round++) assertSameBytes(await smartRead(name), fs.readFileSync(name), `round ${round}`);
  metrics.reset();
  await smartRead(name);
  assert.equal(metrics().fastPath.hits, 1, 'read on the calling thread, as before');

  // The same size, other bytes, behind 1 ms a request.
  const mount = mounts.get('fuse-latency');
  fs.writeFileSync(path.join(mount.backingDir, 'moved'), Buffer.alloc(4096, 0x5a));
  fs.rmSync(name);
  fs.symlinkSync(path.join(mount.dir, 'moved'), name);
  const expected = Buffer.alloc(4096, 0x5a);
  // Its name looked up through the mount (a stat), as after any use of the file: an open with
  // RESOLVE_CACHED would refuse an uncached name before it came to the read. It also refuses to
  // follow a symlink whose access time is due an update (relatime: an access time not after its
  // change, as when the stat came in the same clock tick as the symlink): the symlink is given
  // an access time after its change, as any symlink followed a while after it was made has.
  fs.statSync(name);
  const now = Date.now() / 1000;
  fs.lutimesSync(name, now + 3600, now - 3600);

  metrics.reset();
  assertSameBytes(await smartRead(name), expected, 'the read that finds the name elsewhere');
  assert.equal(metrics().fastPath.hits, 1, 'read as before, on the calling thread: the one read that waits');
  metrics.reset();
  assertSameBytes(await smartRead(name), expected, 'the next read');
  const { hits, misses } = metrics().fastPath;
  assert.deepEqual({ hits, misses }, { hits: 0, misses: 1 }, 'looked at afresh: a first read on FUSE, for the engines');
  fs.rmSync(name);
});
