// serveStatic and files that are large or that change: streamed files (whole and ranges, on
// tmpfs and on disk) are the files' bytes; a client that stops reading holds the reads back;
// one that disconnects stops them and leaves no descriptor open; a file that changes is served
// changed, whether its bytes were cached or not.
'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { engineInfo } = require('smartread');
const { checkNoFdLeak, useTempDirs, writePattern, patternBuffer, assertSameBytes, waitUntil, runToEnd, spendTheTurnOnEachRead } = require('./helpers');
const { startHost, request } = require('./serve-hosts');

checkNoFdLeak();
const tempDirs = useTempDirs();
const native = engineInfo().engine === 'native';
const skip = !native && 'confined serving needs the addon';
const MiB = 1 << 20;

// The descriptors this process has open on files under `dir` (not `dir` itself).
function fdsUnder(dir) {
  let n = 0;
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    try {
      if (fs.readlinkSync(`/proc/self/fd/${fd}`).startsWith(dir + '/')) n++;
    } catch {
      // Closed since the listing.
    }
  }
  return n;
}

for (const { kind, dir } of tempDirs.all) {
  test(`streamed files on ${kind}: whole, ranges and HEAD are the file's bytes, on each host`, { skip }, async () => {
    const site = path.join(dir, 'stream-site');
    fs.mkdirSync(site);
    const size = 5 * MiB + 12345;
    writePattern(path.join(site, 'big.bin'), size);
    const expected = patternBuffer(size);
    for (const host of ['node:http', 'express', 'fastify']) {
      // Small chunks, so that a file of a few MiB is many reads.
      const target = await startHost(host, site, { streamChunk: 64 * 1024 });
      try {
        const whole = await request(target, '/big.bin');
        assert.equal(whole.status, 200, host);
        assert.equal(whole.headers['content-length'], String(size));
        assertSameBytes(whole.body, expected, `${host} whole`);
        for (const [start, end] of [[0, 0], [65535, 65536], [MiB - 7, 3 * MiB + 3], [size - 10, size - 1]]) {
          const part = await request(target, '/big.bin', { headers: { range: `bytes=${start}-${end}` } });
          assert.equal(part.status, 206);
          assert.equal(part.headers['content-range'], `bytes ${start}-${end}/${size}`);
          assertSameBytes(part.body, expected.subarray(start, end + 1), `${host} ${start}-${end}`);
        }
        const head = await request(target, '/big.bin', { method: 'HEAD' });
        assert.equal(head.headers['content-length'], String(size));
        assert.equal(head.body.length, 0);
      } finally {
        await target.close();
      }
    }
    // Each stream closes its descriptor once it has ended (asynchronously, after its last read).
    await waitUntil(() => fdsUnder(site) === 0, 10_000, () => `${fdsUnder(site)} descriptors still open under the site`);
  });
}

// serveStatic on node:http, with the response objects it was given.
async function serveWithResponses(site, options) {
  const { serveStatic } = require('smartread/serve');
  const handler = serveStatic(site, options);
  const responses = [];
  const server = http.createServer((req, res) => {
    responses.push(res);
    handler(req, res);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: server.address().port,
    responses,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => {
        handler.close();
        resolve();
      });
    }),
  };
}

test('a client that stops reading holds the reads back; one that disconnects stops them and leaks nothing', { skip }, async () => {
  const site = path.join(tempDirs.tmpfs ?? tempDirs.disk, 'slow-client');
  fs.mkdirSync(site);
  const size = 64 * MiB;
  writePattern(path.join(site, 'huge.bin'), size);
  const chunk = 256 * 1024;
  const served = await serveWithResponses(site, { streamChunk: chunk });
  let res;
  try {
    res = await new Promise((resolve, reject) => {
      http.get({ port: served.port, path: '/huge.bin', agent: false }, resolve).on('error', reject);
    });
    assert.equal(res.statusCode, 200);
    // Read one chunk, then stop reading: the socket's buffers fill and the response reports
    // backpressure.
    await new Promise((resolve) => res.once('data', resolve));
    res.pause();
    const serverRes = served.responses[0];
    await waitUntil(() => serverRes.writableNeedDrain, 10_000, () => 'the response never reported backpressure');
    // Give the stream several turns of the loop (and its reads time to come back) to show it
    // does not read on regardless.
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    assert.ok(serverRes.writableLength <= 4 * chunk, `${serverRes.writableLength} bytes queued in the response`);
    assert.equal(fdsUnder(site), 1, 'the file is open while it is served');

    // The client goes away: the server's response closes, the stream is destroyed, and the
    // descriptor is closed once the read in flight is back.
    res.destroy();
    await waitUntil(() => serverRes.destroyed, 10_000, () => 'the server response was not destroyed');
    await waitUntil(() => fdsUnder(site) === 0, 10_000, () => `${fdsUnder(site)} descriptors still open under the site`);
  } finally {
    res?.destroy();
    await served.close();
  }
});

test('a streamed file lets the event loop turn between its reads, however fast the client takes them', { skip }, async (t) => {
  // Each read spends the turn's share: a turn may see the reads in flight come back (two) and one
  // more started, never the rest of the file. A read of cached bytes on io_uring completes as it
  // is submitted, and without the share a client on another CPU that keeps up took 51-212
  // chunks of this file between two turns.
  spendTheTurnOnEachRead(t);
  const site = path.join(tempDirs.tmpfs ?? tempDirs.disk, 'fast-client');
  fs.mkdirSync(site);
  const size = 64 * MiB;
  writePattern(path.join(site, 'huge.bin'), size);
  fs.readFileSync(path.join(site, 'huge.bin'));
  const chunk = 128 * 1024;
  let sinceTurn = 0;
  let most = 0;
  let writes = 0;
  const { serveStatic } = require('smartread/serve');
  const handler = serveStatic(site, { streamChunk: chunk });
  const server = http.createServer((req, res) => {
    const write = res.write;
    res.write = function countedWrite(...args) {
      writes++;
      most = Math.max(most, ++sinceTurn);
      return write.apply(this, args);
    };
    handler(req, res);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  let ticking = true;
  const tick = () => setImmediate(() => {
    sinceTurn = 0;
    if (ticking) tick();
  });
  try {
    tick();
    const { code, stdout, stderr } = await runToEnd(process.execPath, ['-e', `require('node:http').get({ host: '127.0.0.1', port: ${server.address().port}, path: '/huge.bin' }, (res) => {
      let n = 0;
      res.on('data', (c) => { n += c.length; });
      res.on('end', () => console.log(n));
    });`], { timeoutMs: 60000 });
    assert.equal(code, 0, stderr);
    assert.equal(Number(stdout.trim()), size, 'the client got the whole file');
    assert.equal(writes, size / chunk);
    assert.ok(most <= 3, `${most} chunks written between two turns of the loop`);
  } finally {
    ticking = false;
    await new Promise((resolve) => server.close(resolve));
    handler.close();
  }
});

test('a file that changes is served changed: bytes kept in the cache are validated by a stat', { skip }, async (t) => {
  const site = path.join(tempDirs.disk, 'changing');
  fs.mkdirSync(site);
  const file = path.join(site, 'a.txt');
  fs.writeFileSync(file, 'version 1');
  // Files count as settled (their bytes may be kept) from 2 s after their last change: move
  // the clock on rather than wait.
  const realNow = Date.now;
  t.mock.method(Date, 'now', () => realNow() + 60_000);
  const served = await serveWithResponses(site);
  const agent = new http.Agent({ keepAlive: true });
  const target = { url: `http://127.0.0.1:${served.port}`, agent };
  try {
    const first = await request(target, '/a.txt');
    assert.equal(first.body.toString(), 'version 1');
    assert.equal((await request(target, '/a.txt')).body.toString(), 'version 1');

    // Same size, and the old mtime put back: only ctime (which no writer sets) tells.
    const { mtime, atime } = fs.statSync(file);
    fs.writeFileSync(file, 'version 2');
    fs.utimesSync(file, atime, mtime);
    const second = await request(target, '/a.txt');
    assert.equal(second.body.toString(), 'version 2');

    // Replaced by rename (a new inode), then removed.
    fs.writeFileSync(path.join(site, 'next.txt'), 'version three');
    fs.renameSync(path.join(site, 'next.txt'), file);
    const third = await request(target, '/a.txt');
    assert.equal(third.body.toString(), 'version three');
    assert.equal(third.headers['content-length'], '13');
    fs.rmSync(file);
    assert.equal((await request(target, '/a.txt')).status, 404);
    // A directory where the file was.
    fs.mkdirSync(file);
    assert.equal((await request(target, '/a.txt')).status, 301);
  } finally {
    agent.destroy();
    await served.close();
  }
});

test('a file just written is read again on each request until it settles', { skip }, async () => {
  const site = path.join(tempDirs.disk, 'racy');
  fs.mkdirSync(site);
  const file = path.join(site, 'r.txt');
  fs.writeFileSync(file, 'aaaa');
  const served = await serveWithResponses(site);
  const agent = new http.Agent({ keepAlive: true });
  const target = { url: `http://127.0.0.1:${served.port}`, agent };
  try {
    assert.equal((await request(target, '/r.txt')).body.toString(), 'aaaa');
    // Rewritten in place within the same timestamp tick as far as a stat can tell: the same
    // size, the same mtime, and a ctime that may not have moved.
    const { mtime, atime } = fs.statSync(file);
    const fd = fs.openSync(file, 'r+');
    fs.writeSync(fd, 'bbbb', 0);
    fs.closeSync(fd);
    fs.utimesSync(file, atime, mtime);
    assert.equal((await request(target, '/r.txt')).body.toString(), 'bbbb');
  } finally {
    agent.destroy();
    await served.close();
  }
});

test('cache limits: bytes beyond maxBytes are evicted, files above maxFileSize are never kept, cache: false keeps none', { skip }, async (t) => {
  const site = path.join(tempDirs.disk, 'limits');
  fs.mkdirSync(site);
  for (let i = 0; i < 20; i++) writePattern(path.join(site, `f${i}.bin`), 10_000 + i);
  const realNow = Date.now;
  t.mock.method(Date, 'now', () => realNow() + 60_000);
  const { StaticSite } = require('../dist/serve/static_site.js');
  const check = async (options, expectKept, expectMaxBytes) => {
    const site2 = new StaticSite(site, options, check);
    try {
      for (let i = 0; i < 20; i++) {
        // A promise where a stat would wait (a name fallen out of the dentry cache).
        const d = await site2.decide('GET', `/f${i}.bin`, {});
        assert.equal(d.kind, 'file');
        const body = await site2.readWhole(d.entry);
        assertSameBytes(body, patternBuffer(10_000 + i), `f${i}`);
      }
      assert.ok(site2.cache.bytes <= expectMaxBytes, `${site2.cache.bytes} bytes kept`);
      let kept = 0;
      for (let i = 0; i < 20; i++) if ((await site2.decide('GET', `/f${i}.bin`, {})).entry.body !== null) kept++;
      expectKept(kept);
    } finally {
      site2.close();
    }
  };
  await check({}, (kept) => assert.equal(kept, 20), 20 * 10_020);
  await check({ cache: { maxBytes: 50_000 } }, (kept) => assert.ok(kept >= 1 && kept <= 5, `${kept} kept`), 50_000);
  await check({ cache: { maxFileSize: 10_009 } }, (kept) => assert.equal(kept, 10), 10 * 10_010);
  await check({ cache: false }, (kept) => assert.equal(kept, 0), 0);
});

test('missing names: each taken as missing for its moment only, the oldest dropped past the limit', () => {
  const { MissingNames } = require('../dist/serve/file_cache.js');
  const ENOENT = 2;
  const ENOTDIR = 20;
  const missing = new MissingNames(3, 1000);
  missing.set('a', ENOENT, 0);
  missing.set('b/c', ENOTDIR, 10);
  assert.equal(missing.get('a', 999), ENOENT);
  assert.equal(missing.get('b/c', 500), ENOTDIR);
  assert.equal(missing.get('x', 500), undefined);
  // Past its moment a name is asked again, and forgotten.
  assert.equal(missing.get('a', 1000), undefined);
  assert.equal(missing.size, 1);
  // Found missing again: a new moment, and the newest name.
  missing.set('b/c', ENOENT, 2000);
  missing.set('d', ENOENT, 2000);
  missing.set('e', ENOENT, 2000);
  missing.set('f', ENOENT, 2000);
  assert.equal(missing.size, 3);
  assert.equal(missing.get('b/c', 2100), undefined, 'the oldest name went first');
  assert.deepEqual(['d', 'e', 'f'].map((name) => missing.get(name, 2100)), [ENOENT, ENOENT, ENOENT]);
  // Found after all.
  missing.delete('e');
  assert.equal(missing.get('e', 2100), undefined);
  missing.clear();
  assert.equal(missing.size, 0);
});

test('statAt (the addon): fstatat from a directory descriptor, as fs.statSync sees the file', { skip }, () => {
  const binding = require(engineInfo().path);
  const dir = path.join(tempDirs.disk, 'stat-at');
  fs.mkdirSync(path.join(dir, 'sub'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'sub', 'f.txt'), 'twelve bytes');
  fs.symlinkSync('sub/f.txt', path.join(dir, 'link'));
  const dirfd = fs.openSync(dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  try {
    for (const rel of ['sub/f.txt', 'link', 'sub', 'sub/../sub/f.txt']) {
      const expected = fs.statSync(path.join(dir, rel));
      const st = binding.statAt(rel, dirfd);
      assert.ok(st instanceof Float64Array, rel);
      assert.deepEqual([...st], [expected.mode, expected.size, expected.mtimeMs, expected.ino, expected.dev, expected.ctimeMs], rel);
    }
    assert.deepEqual(binding.statAt('missing', dirfd), { errno: -2, syscall: 'stat' });
    assert.deepEqual(binding.statAt('sub/f.txt/x', dirfd), { errno: -20, syscall: 'stat' });
  } finally {
    fs.closeSync(dirfd);
  }
});
