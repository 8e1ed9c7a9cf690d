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
const { engineInfo } = require('smartread');
const { checkNoFdLeak, writePattern, runToEnd, skipUnlessAvailable } = require('./helpers');
const { useMounts, requestsLogged } = require('./mounts');

// The mount first: the descriptor count waits for it, and its helpers' after hooks run after.
const mounts = useMounts(['fuse-latency'], { fuseLatencyCacheMs: 0 });
checkNoFdLeak({ spawnsChildren: true, after: mounts.ready });

/**
 * Runs `body` (statements, `await` allowed; `args` in process.argv from index 1) in a fresh
 * Node, which must end well. Returns its pid (the ID of its JS thread, which the daemon logs
 * for each request that thread made) and what `body` returned.
 */
async function jsThreadOfChild(body, args) {
  const script = `(async () => {${body}})().then((result) => process.stdout.write(JSON.stringify({ pid: process.pid, result })), (err) => { console.error(err); process.exit(1); });`;
  const child = await runToEnd(process.execPath, ['-e', script, ...args], { timeoutMs: 60000 });
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
    const why = engineInfo().engine !== 'native' ? 'the pure-JS engine has no confinement' : mounts.skipReason('fuse-latency');
    if (why) return t.skip(why);
    const mount = mounts.get('fuse-latency');
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
  const why = engineInfo().engine !== 'native' ? 'the pure-JS engine has no confinement' : mounts.skipReason('fuse-latency');
  if (why) return t.skip(why);
  const mount = mounts.get('fuse-latency');
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

test("serveStatic on a server's mount asks it once for a name a burst of requests needs at the same time", async (t) => {
  const why = engineInfo().engine !== 'native' ? 'the pure-JS engine has no confinement' : mounts.skipReason('fuse-latency');
  if (why) return t.skip(why);
  const mount = mounts.get('fuse-latency');
  const source = path.join(mount.backingDir, 'burst');
  fs.mkdirSync(source);
  for (const name of ['alone.txt', 'wanted.txt']) writePattern(path.join(source, name), 1000);
  // HEAD: the decision's lookups only, no reads. One request for a name, as the measure of what
  // one asks of the daemon; then 16 at once for another, for a file and for a missing name.
  const { pid, result: spanMs } = await jsThreadOfChild(`
    const http = require('node:http');
    const { serveStatic } = require('smartread/serve');
    const handler = serveStatic(process.argv[1]);
    const server = http.createServer(handler);
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
    const head = (url) => new Promise((resolve, reject) => {
      http.request({ host: '127.0.0.1', port: server.address().port, path: url, method: 'HEAD', agent }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
      }).on('error', reject).end();
    });
    const expect = (what, statuses, status) => {
      for (const got of statuses) if (got !== status) throw new Error(what + ': status ' + got + ', not ' + status);
    };
    expect('one request', [await head('/alone.txt')], 200);
    expect('one request', [await head('/gone-alone.txt')], 404);
    const start = performance.now();
    const burst = (url) => Promise.all(Array.from({ length: 16 }, () => head(url)));
    const [found, gone] = await Promise.all([burst('/wanted.txt'), burst('/gone.txt')]);
    const spanMs = performance.now() - start;
    expect('burst', found, 200);
    expect('burst', gone, 404);
    agent.destroy();
    server.close();
    handler.close();
    return spanMs;
  `, [path.join(mount.dir, 'burst')]);
  const stats = (name) => requestsLogged(mount.opensLog).filter((request) => request.op === 'stat' && request.name === `/burst/${name}`);
  // A burst longer than the moment the handler holds a file's attributes may ask again.
  const rounds = 1 + Math.floor(spanMs / 1000);
  for (const [name, alone] of [['wanted.txt', 'alone.txt'], ['gone.txt', 'gone-alone.txt']]) {
    const once = stats(alone).length;
    assert.ok(once >= 1, `${alone} was asked of the daemon`);
    const asked = stats(name).length;
    assert.ok(asked <= once * rounds, `16 requests at once for ${name} asked the daemon ${asked} times, one request ${once} times, in ${spanMs.toFixed(0)} ms`);
  }
  assert.deepEqual(requestsLogged(mount.opensLog).filter((request) => request.tid === pid && request.name.startsWith('/burst/')), [], 'no lookup made by the JS thread');
});

test("openReader's positional reads of a file on a server's mount are made on io_uring's workers, never on the JS thread", async (t) => {
  const why = engineInfo().engine !== 'native' ? 'the pure-JS engine has no io_uring' : mounts.skipReason('fuse-latency');
  if (why) return t.skip(why);
  if (skipUnlessAvailable(t, 'uring')) return;
  const mount = mounts.get('fuse-latency');
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
  const why = engineInfo().engine !== 'native' ? 'the pure-JS engine has no io_uring' : mounts.skipReason('fuse-latency');
  if (why) return t.skip(why);
  if (skipUnlessAvailable(t, 'uring')) return;
  const mount = mounts.get('fuse-latency');
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
