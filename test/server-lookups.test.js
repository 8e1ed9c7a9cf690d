// Reads of an open file on a server's mount whose cached attributes have lapsed, as on NFS after
// acregmin or on FUSE after attr_timeout: every read the kernel runs inline may ask the server
// there, so none may be run on the JS thread. The bench's fuse-latency daemon (1 ms a request,
// mounted by the test as root, here with names and attributes kept for 0 ms) logs the thread
// that made each lookup, stat, open and read.
'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { engineInfo } = require('smartread');
const { checkNoFdLeak, writePattern, runToEnd, skipUnlessAvailable } = require('./helpers');
const { useMounts, requestsLogged } = require('./mounts');

// The mount first: the descriptor count waits for it, and its helpers' after hooks run after.
const mounts = useMounts(['fuse-latency'], { fuseLatencyCacheMs: 0 });
checkNoFdLeak({ spawnsChildren: true, after: mounts.ready });

test("openReader's positional reads of a file on a server's mount are made on io_uring's workers, never on the JS thread", async (t) => {
  const why = engineInfo().engine !== 'native' ? 'the pure-JS engine has no io_uring' : mounts.skipReason('fuse-latency');
  if (why) return t.skip(why);
  if (skipUnlessAvailable(t, 'uring')) return;
  const mount = mounts.get('fuse-latency');
  fs.mkdirSync(path.join(mount.backingDir, 'reader'));
  writePattern(path.join(mount.backingDir, 'reader', 'data.bin'), 256 * 1024);
  // Reads of 4 KiB, under the size from which every read goes to the workers anyway.
  const child = await runToEnd(process.execPath, ['-e', `
    const fs = require('node:fs');
    const { openReader } = require('smartread');
    const [source, mounted] = process.argv.slice(1, 3);
    const expected = fs.readFileSync(source);
    (async () => {
      const reader = await openReader(mounted, { strategy: 'uring' });
      for (const position of [0, 100000, 4096, 250000, 17]) {
        const bytes = await reader.read(position, 4096);
        if (!bytes.equals(expected.subarray(position, position + 4096))) throw new Error('wrong bytes at ' + position);
      }
      await reader.close();
      process.stdout.write(String(process.pid));
    })().catch((err) => { console.error(err); process.exit(1); });
  `, path.join(mount.backingDir, 'reader', 'data.bin'), path.join(mount.dir, 'reader', 'data.bin')], { timeoutMs: 60000 });
  assert.equal(child.code, 0, child.stderr);
  const pid = Number(child.stdout);
  const mine = requestsLogged(mount.opensLog).filter((request) => request.name === '/reader/data.bin');
  assert.ok(mine.filter((request) => request.op === 'read').length >= 1, 'the reads reached the daemon');
  assert.deepEqual(mine.filter((request) => request.tid === pid), [], 'no read or stat made by the JS thread');
});
