// On a filesystem whose opens ask a server (FUSE here; NFS and SMB alike), an open waits for the
// server's answer, even with every name and page in memory. io_uring runs an OPENAT whose name
// is cached inline, on the thread that submits it: the JS thread would wait there for each one.
// So the uring engine opens such files on its workers, whether or not the fast path has read
// them before (it asks the process's mount table about a name it does not know, and about every
// name beneath a reader's root); and the fast
// path knows such a mount from the table before it opens anything there (a first read of it
// used to open its file, and statfs(2) the mount, on the JS thread). Seen from the server: the
// bench's fuse-latency daemon (1 ms a request, mounted by the test as root) logs the thread that
// made each open and statfs, and none of a fresh child's may come from its JS thread.
'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { engineInfo } = require('smartread');
const { checkNoFdLeak, writePattern, runToEnd, skipUnlessAvailable } = require('./helpers');
const { useMounts, requestsLogged } = require('./mounts');

// The mount first: the descriptor count waits for it, and its helpers' after hooks run after.
const mounts = useMounts(['fuse-latency']);
checkNoFdLeak({ spawnsChildren: true, after: mounts.ready });

/** The opens the daemon logged for `names` (beneath the mount). */
function opensOf(log, names) {
  const wanted = new Set(names.map((name) => `/${name}`));
  return requestsLogged(log).filter((request) => request.op === 'open' && wanted.has(request.name));
}

/** At least `minimum` opens of `names` reached the daemon, and none came from the JS thread `pid`. */
function assertOpenedOffJsThread(mount, names, pid, minimum = names.length) {
  const opens = opensOf(mount.opensLog, names);
  assert.ok(opens.length >= minimum, `${opens.length} opens logged for ${names.length} files, ${minimum} at least`);
  assert.deepEqual(opens.filter((open) => open.tid === pid), [], 'no open made by the JS thread');
}

/**
 * Writes `count` files of about 4 KiB beneath `dir` in the mount's source, then reads them
 * through the mount in a fresh process (nothing read before, by the fast path or anyone), its
 * names looked up first (a stat each, so that they are cached, as after any use: io_uring would
 * open them inline). `reads` is the script's body, with `paths`, `expected` (the bytes, from the
 * daemon's source, which opens nothing through the mount) and `check(bytes, i)` in scope.
 * Returns { names (beneath the mount), pid (the child's, its JS thread's ID) }.
 */
async function readInFreshChild(mount, dir, count, reads) {
  fs.mkdirSync(path.join(mount.backingDir, dir));
  const names = Array.from({ length: count }, (_, i) => `${dir}/file-${i}`);
  for (const [i, name] of names.entries()) writePattern(path.join(mount.backingDir, name), 4096 + i);
  const script = `
    const fs = require('node:fs');
    const { readMany, smartRead } = require('smartread');
    const [source, mounted] = process.argv.slice(1, 3);
    const paths = process.argv.slice(3).map((name) => mounted + '/' + name);
    const expected = process.argv.slice(3).map((name) => fs.readFileSync(source + '/' + name));
    const check = (bytes, i) => { if (!bytes.equals(expected[i])) throw new Error('wrong bytes: ' + paths[i]); };
    (async () => {
      for (const file of paths) fs.statSync(file);
      ${reads}
      process.stdout.write(String(process.pid));
    })();
  `;
  const child = await runToEnd(process.execPath, ['-e', script, mount.backingDir, mount.dir, ...names], { timeoutMs: 60000 });
  assert.equal(child.code, 0, child.stderr);
  return { names, pid: Number(child.stdout) };
}

test("strategy 'uring' opens files on a server's mount on io_uring's workers, never on the JS thread", async (t) => {
  const mount = mounts.forTest(t, 'fuse-latency', { needs: 'io_uring' });
  if (mount === null) return;
  if (skipUnlessAvailable(t, 'uring')) return;
  const { names, pid } = await readInFreshChild(mount, 'opens', 40, `
    (await readMany(paths, { strategy: 'uring' })).forEach(check);
    check(await smartRead(paths[0], { strategy: 'uring' }), 0);
  `);
  assertOpenedOffJsThread(mount, names, pid, names.length + 1);
});

test("'auto' reads files on a server's mount for the first time without an open or a statfs on the JS thread", async (t) => {
  const mount = mounts.forTest(t, 'fuse-latency', { needs: 'fast path' });
  if (mount === null) return;
  // smartRead of half of them one after another, readMany of the rest.
  const { names, pid } = await readInFreshChild(mount, 'first', 20, `
    for (let i = 0; i < 10; i++) check(await smartRead(paths[i]), i);
    (await readMany(paths.slice(10))).forEach((bytes, i) => check(bytes, 10 + i));
  `);
  assert.ok(opensOf(mount.opensLog, names).length >= names.length, 'every file opened through the mount');
  // The child's own fs.statSync of each name logs stats from its JS thread: opens and statfs only.
  const onJsThread = requestsLogged(mount.opensLog).filter((request) => request.tid === pid && (request.op === 'open' || request.op === 'statfs'));
  assert.deepEqual(onJsThread, [], 'no open or statfs made by the JS thread');
});

test("reads confined beneath a root on a server's mount open nothing there on the JS thread, with 'auto' and 'uring'", async (t) => {
  const mount = mounts.forTest(t, 'fuse-latency', { needs: 'confinement' });
  if (mount === null) return;
  // Where io_uring is refused, the last ten go to the engine auto chooses, as the others do.
  const forced = engineInfo().uring?.available ? 'uring' : 'auto';
  // createReader's root is the mount: the reads name files beneath it, relative to its descriptor.
  const { names, pid } = await readInFreshChild(mount, 'confined', 30, `
    const reader = require('smartread').createReader({ root: mounted });
    const relative = paths.map((file) => file.slice(mounted.length + 1));
    for (let i = 0; i < 10; i++) check(await reader.smartRead(relative[i]), i);
    (await reader.readMany(relative.slice(10, 20))).forEach((bytes, i) => check(bytes, 10 + i));
    for (let i = 20; i < 30; i++) check(await reader.smartRead(relative[i], { strategy: '${forced}' }), i);
    reader.close();
  `);
  assertOpenedOffJsThread(mount, names, pid);
});

test("serveStatic's streamed files and a reader's readRange on a server's mount are opened off the JS thread", async (t) => {
  const mount = mounts.forTest(t, 'fuse-latency', { needs: 'confinement' });
  if (mount === null) return;
  // Every file is streamed (streamFrom 1 KiB), fetched over a real socket from the same child.
  const { names, pid } = await readInFreshChild(mount, 'streamed', 20, `
    const http = require('node:http');
    const { serveStatic } = require('smartread/serve');
    const handler = serveStatic(mounted, { streamFrom: 1024 });
    const server = http.createServer(handler);
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const get = (url, headers = {}) => new Promise((resolve, reject) => {
      http.get({ host: '127.0.0.1', port: server.address().port, path: url, headers }, (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks) }));
      }).on('error', reject);
    });
    const relative = paths.map((file) => file.slice(mounted.length + 1));
    for (let i = 0; i < 10; i++) {
      const whole = await get('/' + relative[i]);
      if (whole.status !== 200) throw new Error(relative[i] + ': status ' + whole.status);
      check(whole.body, i);
      const part = await get('/' + relative[i], { range: 'bytes=100-1099' });
      if (part.status !== 206 || !part.body.equals(expected[i].subarray(100, 1100))) throw new Error(relative[i] + ': range ' + part.status);
    }
    server.close();
    handler.close();
    const reader = require('smartread').createReader({ root: mounted });
    for (let i = 10; i < 20; i++) {
      const slice = await reader.readRange(relative[i], 1000, 2000);
      if (!slice.equals(expected[i].subarray(1000, 3000))) throw new Error('wrong range: ' + relative[i]);
    }
    reader.close();
  `);
  assertOpenedOffJsThread(mount, names, pid);
});
