// On a filesystem whose opens ask a server (FUSE here; NFS and SMB alike), an open waits for the
// server's answer, even with every name and page in memory. io_uring runs an OPENAT whose name
// is cached inline, on the thread that submits it: the JS thread would wait there for each one.
// So the uring engine opens such files on its workers, whether or not the fast path has read
// them before (it asks the process's mount table about a name it does not know). Seen from the
// server: the bench's fuse-latency daemon (1 ms a request, mounted by the test as root) logs
// the thread that made each open, and no open of a fresh child's may come from its JS thread.
'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { engineInfo } = require('smartread');
const { checkNoFdLeak, writePattern, runToEnd, skipUnlessAvailable } = require('./helpers');
const { useMounts } = require('./mounts');

// The mount first: its hooks run before the descriptor count's, and its helpers' after.
const mounts = useMounts(['fuse-latency']);
checkNoFdLeak({ spawnsChildren: true });

/** The opens the daemon logged for `names` (beneath the mount): [{ tid, name }]. */
function opensOf(log, names) {
  const wanted = new Set(names.map((name) => `/${name}`));
  return fs.readFileSync(log, 'utf8').split('\n').filter(Boolean)
    .map((line) => ({ tid: Number(line.slice(0, line.indexOf(' '))), name: line.slice(line.indexOf(' ') + 1) }))
    .filter((open) => wanted.has(open.name));
}

test("strategy 'uring' opens files on a server's mount on io_uring's workers, never on the JS thread", async (t) => {
  const why = engineInfo().engine !== 'native' ? 'the pure-JS engine has no io_uring' : mounts.skipReason('fuse-latency');
  if (why) return t.skip(why);
  if (skipUnlessAvailable(t, 'uring')) return;
  const mount = mounts.get('fuse-latency');
  fs.mkdirSync(path.join(mount.backingDir, 'opens'));
  const names = Array.from({ length: 40 }, (_, i) => `opens/file-${i}`);
  for (const [i, name] of names.entries()) writePattern(path.join(mount.backingDir, name), 4096 + i);
  // A fresh process: nothing read before, by the fast path or anyone. Its names are looked up
  // first (a stat each), so that io_uring would find them cached and open them inline.
  const script = `
    const fs = require('node:fs');
    const { readMany, smartRead } = require('smartread');
    const [source, mounted] = process.argv.slice(1, 3);
    const names = process.argv.slice(3);
    const paths = names.map((name) => mounted + '/' + name);
    (async () => {
      // The bytes from the daemon's source, which opens nothing through the mount.
      const expected = names.map((name) => fs.readFileSync(source + '/' + name));
      for (const file of paths) fs.statSync(file);
      const got = await readMany(paths, { strategy: 'uring' });
      got.forEach((bytes, i) => { if (!bytes.equals(expected[i])) throw new Error('wrong bytes: ' + paths[i]); });
      if (!(await smartRead(paths[0], { strategy: 'uring' })).equals(expected[0])) throw new Error('wrong bytes: smartRead');
      process.stdout.write(String(process.pid));
    })();
  `;
  const child = await runToEnd(process.execPath, ['-e', script, mount.backingDir, mount.dir, ...names], { timeoutMs: 60000 });
  assert.equal(child.code, 0, child.stderr);
  const pid = Number(child.stdout);
  const opens = opensOf(mount.opensLog, names);
  assert.ok(opens.length >= names.length + 1, `${opens.length} opens logged for ${names.length} files and one more`);
  const onJsThread = opens.filter((open) => open.tid === pid);
  assert.deepEqual(onJsThread, [], 'no open made by the JS thread');
});
