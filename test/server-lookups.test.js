// serveStatic, openReader and whole-file reads on a server's mount whose cached names and
// attributes have lapsed, as on NFS after acregmin or on FUSE after attr_timeout: every lookup,
// stat and read the kernel runs for them may then ask the server. The handler decides each
// request from stats (the file, its index, its extensions, its precompressed siblings, and the
// check that a cached entry is still the file); streamed files and openReader's are read with
// positional reads, and a whole file past its first READs in more READs; none of these may wait
// for the server on the JS thread. The bench's fuse-latency daemon (1 ms a request, mounted by
// the test as root, here with names and attributes kept for 0 ms) logs the thread that made
// each lookup, stat, open and read; a fresh child makes the requests, and none of its requests
// to the daemon may come from its JS thread, besides the open of a root when a handler or a
// reader is made.
'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { checkNoFdLeak, writePattern, runToEnd, skipUnlessAvailable, assertSameBytes } = require('./helpers');
const { useMounts, requestsLogged } = require('./mounts');

// The mount first: the descriptor count waits for it, and its helpers' after hooks run after.
const mounts = useMounts(['fuse-latency'], { fuseLatencyCacheMs: 0 });
checkNoFdLeak({ spawnsChildren: true, after: mounts.ready });

/**
 * Runs `body` (statements, `await` allowed; `args` in process.argv from index 1) in a fresh
 * Node, with `env` added to this one's, which must end well. Returns its pid (the ID of its JS
 * thread, which the daemon logs for each request that thread made) and what `body` returned.
 */
async function jsThreadOfChild(body, args, env = {}) {
  const script = `(async () => {${body}})().then((result) => process.stdout.write(JSON.stringify({ pid: process.pid, result })), (err) => { console.error(err); process.exit(1); });`;
  const child = await runToEnd(process.execPath, ['-e', script, ...args], { timeoutMs: 60000, env });
  assert.equal(child.code, 0, child.stderr);
  return JSON.parse(child.stdout);
}

// Served from a child: the files, what each request must answer, and a node:http server and a
// Fastify one over the same root.
const serving = `
  const fs = require('node:fs');
  const http = require('node:http');
  const { serveStatic } = require('smartread/serve');
  const [source, mounted, framework] = process.argv.slice(1, 4);
  const expected = (name) => fs.readFileSync(source + '/' + name);
  const options = { streamFrom: 128 * 1024, precompressed: ['gzip'], extensions: ['html'] };
  const get = (port, url, headers = {}) => new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: url, headers }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    }).on('error', reject);
  });
  const expect = (what, got, status, body) => {
    if (got.status !== status) throw new Error(what + ': status ' + got.status + ', not ' + status);
    if (body !== undefined && !got.body.equals(body)) throw new Error(what + ': wrong bytes');
  };
  let port;
  let stop;
  if (framework === 'fastify') {
    const app = require('fastify')();
    app.register(require('smartread/serve/fastify'), { root: mounted, ...options });
    await app.listen({ port: 0, host: '127.0.0.1' });
    port = app.server.address().port;
    stop = () => app.close();
  } else {
    const handler = serveStatic(mounted, options);
    const server = http.createServer(handler);
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = server.address().port;
    stop = () => { server.close(); handler.close(); };
  }
  // Twice: first looked up, then confirmed against the entries the first round left.
  for (let round = 0; round < 2; round++) {
    expect('small', await get(port, '/small.txt'), 200, expected('small.txt'));
    expect('read whole in parts', await get(port, '/medium.bin'), 200, expected('medium.bin'));
    expect('streamed', await get(port, '/large.bin'), 200, expected('large.bin'));
    expect('range', await get(port, '/large.bin', { range: 'bytes=150000-199999' }), 206, expected('large.bin').subarray(150000, 200000));
    expect('extension', await get(port, '/page'), 200, expected('page.html'));
    expect('index', await get(port, '/docs/'), 200, expected('docs/index.html'));
    expect('precompressed', await get(port, '/styles.css', { 'accept-encoding': 'gzip' }), 200, expected('styles.css.gz'));
    expect('no sibling', await get(port, '/small.txt', { 'accept-encoding': 'gzip' }), 200, expected('small.txt'));
    expect('missing', await get(port, '/missing.txt'), 404);
    expect('out of the root', await get(port, '/escape/hostname'), 403);
    const etag = (await get(port, '/small.txt')).headers.etag;
    expect('not modified', await get(port, '/small.txt', { 'if-none-match': etag }), 304);
    expect('directory', await get(port, '/docs'), 301);
  }
  await stop();
`;

/** The files beneath `dir` in the mount's source; their names beneath the mount. */
function writeSite(mount, dir) {
  const source = path.join(mount.backingDir, dir);
  fs.mkdirSync(path.join(source, 'docs'), { recursive: true });
  writePattern(path.join(source, 'small.txt'), 1500);
  // Read whole, in more than one READ; and streamed, from streamFrom up.
  writePattern(path.join(source, 'medium.bin'), 40 * 1024 + 3);
  writePattern(path.join(source, 'large.bin'), 200 * 1024 + 7);
  fs.writeFileSync(path.join(source, 'page.html'), '<p>page</p>\n');
  fs.writeFileSync(path.join(source, 'docs', 'index.html'), '<p>docs</p>\n');
  fs.writeFileSync(path.join(source, 'styles.css'), 'body { color: red }\n');
  writePattern(path.join(source, 'styles.css.gz'), 300);
  fs.symlinkSync('/etc', path.join(source, 'escape'));
  return ['small.txt', 'medium.bin', 'large.bin', 'page', 'page.html', 'docs', 'docs/index.html', 'styles.css', 'styles.css.gz', 'small.txt.gz', 'missing.txt', 'escape']
    .map((name) => `/${dir}/${name}`);
}

for (const framework of ['node:http', 'fastify']) {
  test(`serveStatic (${framework}) on a server's mount whose attributes have lapsed asks it nothing on the JS thread`, async (t) => {
    const mount = mounts.forTest(t, 'fuse-latency', { needs: 'confinement' });
    if (mount === null) return;
    const dir = framework === 'fastify' ? 'fastify' : 'http';
    const names = writeSite(mount, dir);
    const { pid } = await jsThreadOfChild(serving, [path.join(mount.backingDir, dir), path.join(mount.dir, dir), framework]);
    const mine = requestsLogged(mount.opensLog).filter((request) => request.name === `/${dir}` || request.name.startsWith(`/${dir}/`));
    // Every name was asked of the daemon (nothing is kept for a moment): the lookups were made.
    const asked = new Set(mine.filter((request) => request.op === 'stat').map((request) => request.name));
    assert.deepEqual(names.filter((name) => !asked.has(name)), [], 'every name looked up through the mount');
    // serveStatic() opens its root at once, as fs.openSync would; nothing after that.
    const onJsThread = mine.filter((request) => request.tid === pid && request.name !== `/${dir}`);
    assert.deepEqual(onJsThread, [], 'no lookup, stat or open made by the JS thread');
  });
}

test("serveStatic on a server's mount that keeps no missing names asks it for a missing one once a second, and serves a file made meanwhile", async (t) => {
  const mount = mounts.forTest(t, 'fuse-latency', { needs: 'confinement' });
  if (mount === null) return;
  const source = path.join(mount.backingDir, 'missing');
  fs.mkdirSync(source);
  writePattern(path.join(source, 'plain.txt'), 2000);
  writePattern(path.join(source, 'later.txt'), 3000);
  const { pid, result: spanMs } = await jsThreadOfChild(`
    const fs = require('node:fs');
    const http = require('node:http');
    const { serveStatic } = require('smartread/serve');
    const [source, mounted] = process.argv.slice(1, 3);
    const handler = serveStatic(mounted, { precompressed: ['br', 'gzip'], extensions: ['html'] });
    const server = http.createServer(handler);
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const get = (url) => new Promise((resolve, reject) => {
      http.get({ host: '127.0.0.1', port: server.address().port, path: url, headers: { 'accept-encoding': 'br, gzip' } }, (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode, coding: res.headers['content-encoding'], body: Buffer.concat(chunks) }));
      }).on('error', reject);
    });
    const expect = (what, got, status, body, coding) => {
      if (got.status !== status) throw new Error(what + ': status ' + got.status + ', not ' + status);
      if (body !== undefined && !got.body.equals(body)) throw new Error(what + ': wrong bytes');
      if (got.coding !== coding) throw new Error(what + ': content-encoding ' + got.coding + ', not ' + coding);
    };
    const start = performance.now();
    for (let i = 0; i < 10; i++) {
      expect('no sibling', await get('/plain.txt'), 200, fs.readFileSync(source + '/plain.txt'), undefined);
      expect('no file, no extension', await get('/nothing'), 404, undefined, undefined);
    }
    const spanMs = performance.now() - start;
    // A sibling made after the handler found it missing is served once the moment has passed.
    expect('before the sibling', await get('/later.txt'), 200, fs.readFileSync(source + '/later.txt'), undefined);
    fs.writeFileSync(source + '/later.txt.gz', 'made later');
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect('the sibling made later', await get('/later.txt'), 200, Buffer.from('made later'), 'gzip');
    server.close();
    handler.close();
    return spanMs;
  `, [source, path.join(mount.dir, 'missing')]);
  const mine = requestsLogged(mount.opensLog).filter((request) => request.name.startsWith('/missing/'));
  // Each missing name is asked of the daemon once, and again only once a second has passed.
  const most = 1 + Math.floor(spanMs / 1000);
  for (const name of ['plain.txt.br', 'plain.txt.gz', 'nothing', 'nothing.html']) {
    const asked = mine.filter((request) => request.op === 'stat' && request.name === `/missing/${name}`).length;
    assert.ok(asked >= 1 && asked <= most, `${name} asked of the daemon ${asked} times in ${spanMs.toFixed(0)} ms of 10 requests`);
  }
  assert.deepEqual(mine.filter((request) => request.tid === pid), [], 'no lookup made by the JS thread');
});

test("serveStatic on a server's mount that keeps names for no time checks a cached file there once a second, and a file gone meanwhile is a 404", async (t) => {
  const mount = mounts.forTest(t, 'fuse-latency', { needs: 'confinement' });
  if (mount === null) return;
  const source = path.join(mount.backingDir, 'held');
  fs.mkdirSync(source);
  // Two small files whose bytes the handler keeps (once their ctime is 100 ms old), and one it
  // reads on every request.
  writePattern(path.join(source, 'once.txt'), 500);
  writePattern(path.join(source, 'often.txt'), 600);
  writePattern(path.join(source, 'gone.bin'), 5000);
  await new Promise((resolve) => setTimeout(resolve, 200));
  const { pid, result: spanMs } = await jsThreadOfChild(`
    const fs = require('node:fs');
    const http = require('node:http');
    const { serveStatic } = require('smartread/serve');
    const [source, mounted] = process.argv.slice(1, 3);
    const handler = serveStatic(mounted, { cache: { maxFileSize: 1000 } });
    const server = http.createServer(handler);
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const get = (url) => new Promise((resolve, reject) => {
      http.get({ host: '127.0.0.1', port: server.address().port, path: url }, (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks) }));
      }).on('error', reject);
    });
    const expect = (what, got, status, name) => {
      if (got.status !== status) throw new Error(what + ': status ' + got.status + ', not ' + status);
      if (name !== undefined && !got.body.equals(fs.readFileSync(source + '/' + name))) throw new Error(what + ': wrong bytes');
    };
    expect('once', await get('/once.txt'), 200, 'once.txt');
    const start = performance.now();
    for (let i = 0; i < 10; i++) expect('often', await get('/often.txt'), 200, 'often.txt');
    const spanMs = performance.now() - start;
    // Gone on the server while the handler holds its entry: the read finds it gone, and the
    // check made again asks the server.
    expect('before it went', await get('/gone.bin'), 200, 'gone.bin');
    fs.unlinkSync(source + '/gone.bin');
    expect('gone', await get('/gone.bin'), 404);
    server.close();
    handler.close();
    return spanMs;
  `, [source, path.join(mount.dir, 'held')]);
  const asked = (name) => requestsLogged(mount.opensLog).filter((request) => request.op === 'stat' && request.name === `/held/${name}`).length;
  const once = asked('once.txt');
  assert.ok(once >= 1, 'once.txt was asked of the daemon');
  const most = once * (1 + Math.floor(spanMs / 1000));
  assert.ok(asked('often.txt') <= most, `10 requests for often.txt asked the daemon ${asked('often.txt')} times, one request for once.txt ${once}, in ${spanMs.toFixed(0)} ms`);
  assert.deepEqual(requestsLogged(mount.opensLog).filter((request) => request.tid === pid && request.name.startsWith('/held/')), [], 'nothing asked by the JS thread');
});

test("serveStatic on a server's mount: decisions that need one name at the same time share its lookup, and reads of one file share a read", async (t) => {
  const mount = mounts.forTest(t, 'fuse-latency', { needs: 'confinement' });
  if (mount === null) return;
  const source = path.join(mount.backingDir, 'burst');
  fs.mkdirSync(source);
  for (const name of ['alone.txt', 'wanted.txt']) writePattern(path.join(source, name), 3000);
  const { StaticSite } = require('../dist/serve/static_site.js');
  const site = new StaticSite(path.join(mount.dir, 'burst'), {}, test);
  try {
    // Made in one turn, so that every one waits for the daemon with the first. One alone, as the
    // measure of what one asks of the daemon; then 16 together.
    const decideAll = (url, count) => Promise.all(Array.from({ length: count }, () => site.decide('GET', url, {})));
    const [alone] = await decideAll('/alone.txt', 1);
    const wanted = await decideAll('/wanted.txt', 16);
    const [goneAlone] = await decideAll('/gone-alone.txt', 1);
    const gone = await decideAll('/gone.txt', 16);
    for (const d of [alone, ...wanted]) assert.equal(d.kind, 'file');
    for (const d of [goneAlone, ...gone]) assert.deepEqual([d.kind, d.status], ['error', 404]);
    assert.ok(wanted.every((d) => d.entry === wanted[0].entry), 'one entry for the file');
    assertSameBytes(await site.readWhole(alone.entry), fs.readFileSync(path.join(source, 'alone.txt')), 'alone.txt');
    const expected = fs.readFileSync(path.join(source, 'wanted.txt'));
    const bodies = await Promise.all(wanted.map((d) => site.readWhole(d.entry)));
    for (const body of bodies) assertSameBytes(body, expected, 'wanted.txt');
  } finally {
    site.close();
  }
  const asked = (op, name) => requestsLogged(mount.opensLog).filter((request) => request.op === op && request.name === `/burst/${name}`).length;
  for (const [op, name, alone] of [['stat', 'wanted.txt', 'alone.txt'], ['stat', 'gone.txt', 'gone-alone.txt'], ['open', 'wanted.txt', 'alone.txt'], ['read', 'wanted.txt', 'alone.txt']]) {
    assert.ok(asked(op, alone) >= 1, `${alone}: ${op} asked of the daemon`);
    assert.equal(asked(op, name), asked(op, alone), `${op} asked of the daemon for ${name} by 16 at once, and for ${alone} by one`);
  }
});

test("openReader's positional reads of a file on a server's mount are made on io_uring's workers, never on the JS thread", async (t) => {
  const mount = mounts.forTest(t, 'fuse-latency', { needs: 'io_uring' });
  if (mount === null) return;
  if (skipUnlessAvailable(t, 'uring')) return;
  fs.mkdirSync(path.join(mount.backingDir, 'reader'));
  writePattern(path.join(mount.backingDir, 'reader', 'data.bin'), 256 * 1024);
  // Reads of 4 KiB, under the size from which every read goes to the workers anyway.
  const { pid } = await jsThreadOfChild(`
    const fs = require('node:fs');
    const { openReader } = require('smartread');
    const [source, mounted] = process.argv.slice(1, 3);
    const expected = fs.readFileSync(source);
    const reader = await openReader(mounted, { strategy: 'uring' });
    for (const position of [0, 100000, 4096, 250000, 17]) {
      const bytes = await reader.read(position, 4096);
      if (!bytes.equals(expected.subarray(position, position + 4096))) throw new Error('wrong bytes at ' + position);
    }
    await reader.close();
  `, [path.join(mount.backingDir, 'reader', 'data.bin'), path.join(mount.dir, 'reader', 'data.bin')]);
  const mine = requestsLogged(mount.opensLog).filter((request) => request.name === '/reader/data.bin');
  assert.ok(mine.filter((request) => request.op === 'read').length >= 1, 'the reads reached the daemon');
  assert.deepEqual(mine.filter((request) => request.tid === pid), [], 'no read or stat made by the JS thread');
});

test("whole-file reads on a server's mount whose names have lapsed read nothing there on the JS thread, with 'auto', 'uring' and beneath a root", async (t) => {
  const mount = mounts.forTest(t, 'fuse-latency', { needs: 'io_uring' });
  if (mount === null) return;
  if (skipUnlessAvailable(t, 'uring')) return;
  fs.mkdirSync(path.join(mount.backingDir, 'whole'));
  // Past the first READs (68 KiB) and under the size from which chunks go to the workers anyway
  // (512 KiB); and past it, in chunks.
  const sizes = [300 * 1024 + 5, 3 * 1024 * 1024 + 11];
  const names = sizes.map((size, i) => `file-${i}.bin`);
  for (const [i, name] of names.entries()) writePattern(path.join(mount.backingDir, 'whole', name), sizes[i]);
  const { pid } = await jsThreadOfChild(`
    const fs = require('node:fs');
    const { smartRead, createReader } = require('smartread');
    const [source, mounted, ...names] = process.argv.slice(1);
    for (const name of names) {
      const expected = fs.readFileSync(source + '/' + name);
      const check = (bytes, how) => { if (!bytes.equals(expected)) throw new Error('wrong bytes: ' + name + ', ' + how); };
      check(await smartRead(mounted + '/' + name, { strategy: 'uring' }), 'uring');
      check(await smartRead(mounted + '/' + name), 'auto');
      const reader = createReader({ root: mounted });
      check(await reader.smartRead(name), 'confined');
      reader.close();
    }
  `, [path.join(mount.backingDir, 'whole'), path.join(mount.dir, 'whole'), ...names]);
  const mine = requestsLogged(mount.opensLog).filter((request) => names.some((name) => request.name === `/whole/${name}`));
  assert.ok(mine.filter((request) => request.op === 'read').length >= names.length * 3, 'every read reached the daemon');
  assert.deepEqual(mine.filter((request) => request.tid === pid), [], 'no read, stat or open of the files made by the JS thread');
});

// What serveStatic and confined readers ask where a lookup or an open may wait is made by
// io_uring's workers, as many at a time as are asked (libuv's pool has 4 threads, shared with
// every fs call), and on libuv's pool where io_uring is turned off; never on the JS thread. The
// decisions of 32 names made at once, half of them missing, then the opens of the 16 files (as a
// streamed response and readRange make them); each thread's name is read from /proc while the
// child still runs (io-wq's workers are named iou-wrk-PID, and stay a few seconds once idle).
for (const ring of [true, false]) {
  test(`serveStatic's lookups and opens on a server's mount are made ${ring ? "by io_uring's workers, more than libuv's pool has threads" : 'on libuv\'s pool with io_uring turned off'}`, async (t) => {
    const mount = mounts.forTest(t, 'fuse-latency', { needs: 'confinement' });
    if (mount === null) return;
    if (ring && skipUnlessAvailable(t, 'uring')) return;
    const dir = ring ? 'ring' : 'pool';
    fs.mkdirSync(path.join(mount.backingDir, dir));
    const files = Array.from({ length: 16 }, (_, i) => `file-${i}.txt`);
    for (const name of files) writePattern(path.join(mount.backingDir, dir, name), 700);
    const names = [...files, ...files.map((name) => `${name}.missing`)];
    const { pid, result } = await jsThreadOfChild(`
      const fs = require('node:fs');
      const [staticSite, mounted, ...names] = process.argv.slice(1);
      const { StaticSite } = require(staticSite);
      const site = new StaticSite(mounted, {}, () => {});
      const decisions = await Promise.all(names.map((name) => site.decide('GET', '/' + name, {})));
      const fds = await Promise.all(names.slice(0, 16).map((name) => site.root.openAsync(name, () => {})));
      const opened = fds.map((fd) => Number.isInteger(fd) && fd >= 0);
      await Promise.all(fds.map((fd) => new Promise((resolve) => fs.close(fd, resolve))));
      const threads = {};
      for (const tid of fs.readdirSync('/proc/self/task')) {
        try {
          threads[tid] = fs.readFileSync('/proc/self/task/' + tid + '/comm', 'utf8').trim();
        } catch {}
      }
      site.close();
      return { kinds: decisions.map((d) => d.kind === 'file' ? 'file' : d.status), opened, threads };
    `, [path.join(__dirname, '..', 'dist', 'serve', 'static_site.js'), path.join(mount.dir, dir), ...names], ring ? {} : { SMARTREAD_IO_URING: '0' });
    assert.deepEqual(result.kinds, [...files.map(() => 'file'), ...files.map(() => 404)]);
    assert.deepEqual(result.opened, files.map(() => true), 'each file opened');
    const logged = requestsLogged(mount.opensLog);
    const stats = logged.filter((request) => request.op === 'stat' && names.some((name) => request.name === `/${dir}/${name}`));
    const opens = logged.filter((request) => request.op === 'open' && files.some((name) => request.name === `/${dir}/${name}`));
    assert.deepEqual(names.filter((name) => !stats.some((request) => request.name === `/${dir}/${name}`)), [], 'every name asked of the daemon');
    assert.equal(opens.length, files.length, 'every file opened through the daemon');
    for (const [what, requests] of [['lookups', stats], ['opens', opens]]) {
      assert.deepEqual(requests.filter((request) => request.tid === pid), [], `no ${what} made by the JS thread`);
      const threadNames = requests.map((request) => result.threads[request.tid] ?? 'ended');
      const byWorkers = threadNames.filter((name) => name.startsWith('iou-wrk-'));
      if (ring) {
        assert.equal(byWorkers.length, requests.length, `${what} by io_uring's workers (threads: ${[...new Set(threadNames)].join(', ')})`);
        const threads = new Set(requests.map((request) => request.tid)).size;
        assert.ok(threads > 4, `${requests.length} ${what} at once made by ${threads} workers`);
      } else {
        assert.deepEqual(byWorkers, [], `no ${what} by io_uring's workers`);
      }
    }
  });
}

// Lookups in flight when their environment goes: a worker terminated while its handler's 32
// lookups wait for the daemon, 20 times over, leaves no descriptor open in the process (each
// confined lookup holds an O_PATH descriptor between its OPENAT2 and its STATX); and a process
// that exits with lookups in flight ends as it was asked to.
test("serveStatic's lookups in flight on a server's mount: workers terminated and a process that exits leave nothing behind", async (t) => {
  const mount = mounts.forTest(t, 'fuse-latency', { needs: 'confinement' });
  if (mount === null) return;
  fs.mkdirSync(path.join(mount.backingDir, 'gone'));
  const names = Array.from({ length: 32 }, (_, i) => `file-${i}.txt`);
  for (const name of names.slice(0, 16)) writePattern(path.join(mount.backingDir, 'gone', name), 300);
  const staticSite = path.join(__dirname, '..', 'dist', 'serve', 'static_site.js');
  const mounted = path.join(mount.dir, 'gone');
  const asking = `
    const site = new StaticSite(mounted, {}, () => {});
    for (const name of names) Promise.resolve(site.decide('GET', '/' + name, {})).catch(() => {});
  `;
  const { result } = await jsThreadOfChild(`
    const fs = require('node:fs');
    const { Worker } = require('node:worker_threads');
    const [staticSite, mounted, ...names] = process.argv.slice(1);
    const fds = () => fs.readdirSync('/proc/self/fd').length;
    // What a process keeps once it has run a worker, counted after a first one that asked nothing.
    const first = new Worker('', { eval: true });
    await new Promise((resolve) => first.once('exit', resolve));
    const before = fds();
    for (let round = 0; round < 20; round++) {
      const worker = new Worker(\`
        const { parentPort, workerData: { staticSite, mounted, names } } = require('node:worker_threads');
        const { StaticSite } = require(staticSite);
        ${asking}
        parentPort.postMessage('asked');
      \`, { eval: true, workerData: { staticSite, mounted, names } });
      await new Promise((resolve, reject) => { worker.once('message', resolve); worker.once('error', reject); });
      await worker.terminate();
    }
    // A terminated worker's own descriptors (its loop's) may close a moment after terminate().
    for (let waited = 0; fds() !== before && waited < 5000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
    return { before, after: fds(), open: fs.readdirSync('/proc/self/fd').map((fd) => { try { return fs.readlinkSync('/proc/self/fd/' + fd); } catch { return '?'; } }) };
  `, [staticSite, mounted, ...names]);
  assert.equal(result.after, result.before, `descriptors after 20 terminated workers: ${JSON.stringify(result.open)}`);
  const exiting = await runToEnd(process.execPath, ['-e', `
    const [staticSite, mounted, ...names] = process.argv.slice(1);
    const { StaticSite } = require(staticSite);
    ${asking}
    setImmediate(() => process.exit(7));
  `, staticSite, mounted, ...names], { timeoutMs: 60000 });
  assert.deepEqual([exiting.code, exiting.signal ?? null, exiting.stderr], [7, null, '']);
});
