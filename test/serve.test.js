// serveStatic conformance over real sockets, on each host (node:http, Express middleware, the
// Fastify plugin): the behaviours of send's and sirv's test suites (bodies and headers, HEAD,
// conditional requests, ranges, index files and redirects, dotfiles, precompressed siblings,
// options), and traversal attempts that must get 403/404 and no byte from outside the root.
'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { engineInfo } = require('smartread');
const { checkNoFdLeak, useTempDirs, patternBuffer } = require('./helpers');
const { SECRET, makeSite, startHost, request } = require('./serve-hosts');

checkNoFdLeak();
const tempDirs = useTempDirs();
const native = engineInfo().engine === 'native';
const site = makeSite(path.join(tempDirs.disk, 'conformance'));
const hosts = ['node:http', 'express', 'fastify'];
const httpDate = /^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/;

test('without the addon, serveStatic refuses to serve rather than check paths in JavaScript', { skip: native && 'the addon is in use' }, () => {
  const { serveStatic } = require('smartread/serve');
  assert.throws(() => serveStatic(site), { code: 'ERR_SMARTREAD_CONFINEMENT_UNAVAILABLE' });
});

// Runs `body(target)` against serveStatic(site, options) on `host`, then stops the server.
async function on(host, options, body) {
  const target = await startHost(host, site, options);
  try {
    await body(target);
  } finally {
    await target.close();
  }
}

for (const host of hosts) {
  test(`${host}: files, headers and HEAD`, { skip: !native && 'confined serving needs the addon' }, () => on(host, {}, async (t) => {
    const name = await request(t, '/name.txt');
    assert.equal(name.status, 200);
    assert.equal(name.body.toString(), 'tobi');
    assert.equal(name.headers['content-length'], '4');
    assert.equal(name.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(name.headers['accept-ranges'], 'bytes');
    assert.equal(name.headers['cache-control'], 'public, max-age=0');
    assert.match(name.headers['last-modified'], httpDate);
    assert.equal(name.headers['last-modified'], fs.statSync(path.join(site, 'name.txt')).mtime.toUTCString());
    assert.match(name.headers.etag, /^"[0-9a-f]+-[0-9a-f]+"$/);
    assert.match(name.headers.date, httpDate);

    const empty = await request(t, '/empty.txt');
    assert.equal(empty.status, 200);
    assert.equal(empty.headers['content-length'], '0');
    assert.equal(empty.body.length, 0);

    const data = await request(t, '/data.bin');
    assert.ok(data.body.equals(patternBuffer(100_000)));
    assert.equal(data.headers['content-type'], 'application/octet-stream');
    assert.equal((await request(t, '/tobi.html')).headers['content-type'], 'text/html; charset=utf-8');
    assert.equal((await request(t, '/app.js')).headers['content-type'], 'text/javascript; charset=utf-8');

    // Names are percent-decoded, and dots inside a name are only dots.
    assert.equal((await request(t, '/some%20thing.txt')).body.toString(), 'hey');
    assert.equal((await request(t, '/do..ts.txt')).body.toString(), '...');
    assert.equal((await request(t, '/percent%25.txt')).body.toString(), 'percent');
    assert.equal((await request(t, '/f%C3%BCnke.txt')).body.toString(), 'umlaut');
    assert.equal((await request(t, '/name.txt?v=3&x=%zz')).body.toString(), 'tobi');
    // `..` that stays inside the root is followed; so is a link that stays inside.
    assert.equal((await request(t, '/pets/../name.txt')).body.toString(), 'tobi');
    assert.equal((await request(t, '/in-link')).body.toString(), 'tobi');

    const head = await request(t, '/name.txt', { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.headers['content-length'], '4');
    assert.equal(head.headers.etag, name.headers.etag);
    assert.equal(head.body.length, 0);
    const headBig = await request(t, '/data.bin', { method: 'HEAD' });
    assert.equal(headBig.headers['content-length'], '100000');
    assert.equal(headBig.body.length, 0);
  }));

  test(`${host}: not found, malformed and refused names`, { skip: !native && 'confined serving needs the addon' }, () => on(host, {}, async (t) => {
    assert.equal((await request(t, '/meow')).status, 404);
    assert.equal((await request(t, '/name.txt/below')).status, 404);
    assert.equal((await request(t, '/' + 'foobar'.repeat(100))).status, 404);
    // Not a regular file: a FIFO is neither opened nor waited on.
    assert.equal((await request(t, '/fifo')).status, 404);
    // Extensions are not tried unless asked for.
    assert.equal((await request(t, '/page')).status, 404);
    assert.equal((await request(t, '/some%99thing.txt')).status, 400);
  }));

  test(`${host}: conditional requests`, { skip: !native && 'confined serving needs the addon' }, () => on(host, {}, async (t) => {
    const first = await request(t, '/name.txt');
    const { etag } = first.headers;
    const lastModified = first.headers['last-modified'];

    const same = await request(t, '/name.txt', { headers: { 'if-none-match': etag } });
    assert.equal(same.status, 304);
    assert.equal(same.body.length, 0);
    assert.equal(same.headers.etag, etag);
    assert.equal(same.headers['content-type'], undefined);
    assert.equal(same.headers['content-length'], undefined);
    // With an ETag, Last-Modified is not needed to update a cached copy (RFC 9110 15.4.5).
    assert.equal(same.headers['last-modified'], undefined);
    assert.equal(same.headers['cache-control'], 'public, max-age=0');
    assert.equal((await request(t, '/name.txt', { headers: { 'if-none-match': `"x", W/${etag}` } })).status, 304);
    assert.equal((await request(t, '/name.txt', { headers: { 'if-none-match': '*' } })).status, 304);
    assert.equal((await request(t, '/name.txt', { headers: { 'if-none-match': '"123"' } })).status, 200);
    // If-None-Match decides alone when both are sent.
    assert.equal((await request(t, '/name.txt', { headers: { 'if-none-match': '"123"', 'if-modified-since': lastModified } })).status, 200);

    assert.equal((await request(t, '/name.txt', { headers: { 'if-modified-since': lastModified } })).status, 304);
    const earlier = new Date(Date.parse(lastModified) - 60_000).toUTCString();
    const modified = await request(t, '/name.txt', { headers: { 'if-modified-since': earlier } });
    assert.equal(modified.status, 200);
    assert.equal(modified.body.toString(), 'tobi');
    assert.equal((await request(t, '/name.txt', { headers: { 'if-modified-since': 'not a date' } })).status, 200);

    assert.equal((await request(t, '/name.txt', { headers: { 'if-match': '*' } })).status, 200);
    assert.equal((await request(t, '/name.txt', { headers: { 'if-match': ` "foo", ${etag} ` } })).status, 200);
    assert.equal((await request(t, '/name.txt', { headers: { 'if-match': ' "foo", "bar" ' } })).status, 412);
    // If-Match compares strongly: a weak tag never matches.
    assert.equal((await request(t, '/name.txt', { headers: { 'if-match': `W/${etag}` } })).status, 412);
    assert.equal((await request(t, '/name.txt', { headers: { 'if-unmodified-since': lastModified } })).status, 200);
    assert.equal((await request(t, '/name.txt', { headers: { 'if-unmodified-since': earlier } })).status, 412);
    assert.equal((await request(t, '/name.txt', { headers: { 'if-unmodified-since': 'foo' } })).status, 200);
  }));

  test(`${host}: byte ranges`, { skip: !native && 'confined serving needs the addon' }, () => on(host, {}, async (t) => {
    const range = async (value, headers = {}) => request(t, '/nums.txt', { headers: { range: value, ...headers } });
    const check = async (value, status, body, contentRange) => {
      const res = await range(value);
      assert.equal(res.status, status, value);
      assert.equal(res.body.toString(), body, value);
      assert.equal(res.headers['content-range'], contentRange, value);
      if (status === 206) assert.equal(res.headers['content-length'], String(body.length), value);
    };
    await check('bytes=0-4', 206, '12345', 'bytes 0-4/9');
    await check('bytes=0-0', 206, '1', 'bytes 0-0/9');
    await check('bytes=2-5', 206, '3456', 'bytes 2-5/9');
    await check('bytes=-3', 206, '789', 'bytes 6-8/9');
    await check('bytes=3-', 206, '456789', 'bytes 3-8/9');
    await check('bytes=2-50', 206, '3456789', 'bytes 2-8/9');
    await check('bytes=1-2,3-5', 206, '23456', 'bytes 1-5/9');
    await check('bytes=1-1,3-', 200, '123456789', undefined);
    await check('items=0-4', 200, '123456789', undefined);
    await check('asdf', 200, '123456789', undefined);
    const beyond = await range('bytes=9-50');
    assert.equal(beyond.status, 416);
    assert.equal(beyond.headers['content-range'], 'bytes */9');

    const { etag, 'last-modified': lastModified } = (await request(t, '/nums.txt')).headers;
    assert.equal((await range('bytes=0-0', { 'if-range': etag })).status, 206);
    assert.equal((await range('bytes=0-0', { 'if-range': etag.replace(/"(.)/, '"0$1') })).body.toString(), '123456789');
    assert.equal((await range('bytes=0-0', { 'if-range': lastModified })).status, 206);
    const stale = new Date(Date.parse(lastModified) - 20_000).toUTCString();
    assert.equal((await range('bytes=0-0', { 'if-range': stale })).status, 200);
    assert.equal((await range('bytes=0-0', { 'if-range': 'foo' })).status, 200);

    // A range of a larger file, read from the middle.
    const part = await request(t, '/data.bin', { headers: { range: 'bytes=4090-70000' } });
    assert.equal(part.status, 206);
    assert.ok(part.body.equals(patternBuffer(100_000).subarray(4090, 70_001)));
    const emptyRange = await request(t, '/empty.txt', { headers: { range: 'bytes=0-' } });
    assert.equal(emptyRange.status, 416);
    assert.equal(emptyRange.headers['content-range'], 'bytes */0');
  }));

  test(`${host}: index files and directory redirects`, { skip: !native && 'confined serving needs the addon' }, () => on(host, {}, async (t) => {
    const home = await request(t, '/');
    assert.equal(home.status, 200);
    assert.equal(home.body.toString(), '<p>home</p>');
    assert.equal(home.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal((await request(t, '/pets/')).body.toString(), '<p>pets</p>');
    const redirect = await request(t, '/pets');
    assert.equal(redirect.status, 301);
    assert.equal(redirect.headers.location, '/pets/');
    // Never a protocol-relative location.
    const slashes = await request(t, '//pets');
    assert.equal(slashes.status, 301);
    assert.equal(slashes.headers.location, '/pets/');
    const query = await request(t, '/pets?a=1');
    assert.equal(query.headers.location, '/pets/?a=1');
    // A directory without an index file.
    assert.equal((await request(t, '/empty-dir/')).status, 404);
    assert.equal((await request(t, '/name.txt/')).status, 404);
  }));

  test(`${host}: dotfiles are not served by default, .well-known is`, { skip: !native && 'confined serving needs the addon' }, () => on(host, {}, async (t) => {
    for (const p of ['/.hidden.txt', '/.mine/name.txt', '/.mine', '/.nothere', '/pets/.hidden']) {
      const res = await request(t, p);
      assert.equal(res.status, 404, p);
      assert.ok(!res.body.toString().includes('secret dotfile'), p);
    }
    assert.equal((await request(t, '/.well-known/acme')).body.toString(), 'challenge');
  }));

  test(`${host}: traversal gets 403 or 404 and no byte from outside the root`, { skip: !native && 'confined serving needs the addon' }, () => on(host, {}, async (t) => {
    const attempts = [
      '/../secret.txt', '/../../secret.txt', '/pets/../../secret.txt', '/%2e%2e/secret.txt', '/%2E%2E/secret.txt',
      '/%2e%2e%2fsecret.txt', '/..%2fsecret.txt', '/..%2F..%2Fsecret.txt', '/pets/%2e%2e/%2e%2e/secret.txt',
      '/.%2e/secret.txt', '/%2fetc%2fpasswd', '//etc/passwd', '/%2F%2Fetc%2Fpasswd', `/${path.dirname(site).slice(1)}/secret.txt`,
      `/%2F${encodeURIComponent(path.dirname(site).slice(1))}%2Fsecret.txt`, '/out-link', '/out-dir/secret.txt', '/out-dir/',
      '/name.txt%00.html', '/%00', '/..%00/secret.txt', '/%2e%2e%00/secret.txt', '/..\\secret.txt', '/%5c..%5csecret.txt',
    ];
    for (const attempt of attempts) {
      const res = await request(t, attempt);
      assert.ok(res.status === 403 || res.status === 404, `${attempt}: status ${res.status}`);
      assert.ok(!res.body.toString('latin1').includes(SECRET), `${attempt}: served the secret`);
      assert.ok(!res.body.toString('latin1').includes('root:x:0:0'), `${attempt}: served /etc/passwd`);
    }
    // The kernel's refusals are 403: a path that climbs out, and a link that leads out.
    if (host !== 'fastify') {
      assert.equal((await request(t, '/../secret.txt')).status, 403);
      assert.equal((await request(t, '/out-link')).status, 403);
      assert.equal((await request(t, '/out-dir/secret.txt')).status, 403);
    }
  }));
}

test('node:http: 405 with Allow for other methods; Express: next() unless fallthrough is false', { skip: !native && 'confined serving needs the addon' }, async () => {
  await on('node:http', {}, async (t) => {
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const res = await request(t, '/name.txt', { method });
      assert.equal(res.status, 405);
      assert.equal(res.headers.allow, 'GET, HEAD');
    }
  });
  await on('express', {}, async (t) => {
    // Express's own 404 page: the middleware passed the request on.
    const res = await request(t, '/name.txt', { method: 'POST' });
    assert.equal(res.status, 404);
    assert.match(res.body.toString(), /Cannot POST/);
  });
  await on('express', { fallthrough: false }, async (t) => {
    const res = await request(t, '/name.txt', { method: 'POST' });
    assert.equal(res.status, 405);
    assert.equal(res.headers.allow, 'GET, HEAD');
    const missing = await request(t, '/meow');
    assert.equal(missing.status, 404);
    assert.doesNotMatch(missing.body.toString(), /Cannot GET/);
  });
});

test('options: index, extensions, dotfiles, redirect, Cache-Control, ETag, Last-Modified, ranges', { skip: !native && 'confined serving needs the addon' }, async () => {
  await on('node:http', { index: 'tobi.html', extensions: ['htm', 'html'] }, async (t) => {
    assert.equal((await request(t, '/')).body.toString(), '<p>tobi</p>');
    assert.equal((await request(t, '/pets/')).status, 404);
    assert.equal((await request(t, '/page')).body.toString(), '<p>page</p>');
    assert.equal((await request(t, '/bob')).status, 404);
    // A name with an extension is not extended.
    assert.equal((await request(t, '/page.htm')).status, 404);
  });
  await on('node:http', { index: ['default.htm', 'index.html'] }, async (t) => {
    assert.equal((await request(t, '/pets/')).body.toString(), '<p>pets</p>');
  });
  await on('node:http', { index: false, redirect: false }, async (t) => {
    assert.equal((await request(t, '/pets/')).status, 403);
    assert.equal((await request(t, '/pets')).status, 404);
  });
  await on('node:http', { dotfiles: 'deny' }, async (t) => {
    for (const p of ['/.hidden.txt', '/.mine', '/.mine/', '/.mine/name.txt', '/.nothere', '/.what/name.txt', '/pets/.hidden']) {
      assert.equal((await request(t, p)).status, 403, p);
    }
  });
  await on('node:http', { dotfiles: 'allow' }, async (t) => {
    assert.equal((await request(t, '/.hidden.txt')).body.toString(), 'secret dotfile');
    assert.equal((await request(t, '/.mine/name.txt')).body.toString(), 'in a dot directory');
    assert.equal((await request(t, '/.nothere')).status, 404);
  });
  await on('node:http', { maxAge: 3_600_000, immutable: true }, async (t) => {
    assert.equal((await request(t, '/name.txt')).headers['cache-control'], 'public, max-age=3600, immutable');
  });
  await on('node:http', { maxAge: 123_956 }, async (t) => {
    assert.equal((await request(t, '/name.txt')).headers['cache-control'], 'public, max-age=123');
  });
  await on('node:http', { maxAge: Infinity }, async (t) => {
    assert.equal((await request(t, '/name.txt')).headers['cache-control'], 'public, max-age=31536000');
  });
  await on('node:http', { cacheControl: false, etag: false, lastModified: false, acceptRanges: false }, async (t) => {
    const res = await request(t, '/nums.txt', { headers: { range: 'bytes=0-2', 'if-none-match': '*' } });
    assert.equal(res.status, 200);
    assert.equal(res.body.toString(), '123456789');
    for (const h of ['cache-control', 'etag', 'last-modified', 'accept-ranges', 'content-range']) assert.equal(res.headers[h], undefined, h);
  });
  await on('node:http', { etag: false }, async (t) => {
    const { 'last-modified': lastModified } = (await request(t, '/nums.txt')).headers;
    const same = await request(t, '/nums.txt', { headers: { 'if-modified-since': lastModified } });
    assert.equal(same.status, 304);
    assert.equal(same.headers['last-modified'], lastModified);
  });
  await on('node:http', { cacheControl: 'no-cache', etag: 'weak' }, async (t) => {
    const res = await request(t, '/nums.txt');
    assert.equal(res.headers['cache-control'], 'no-cache');
    assert.match(res.headers.etag, /^W\/"[0-9a-f]+-[0-9a-f]+"$/);
    assert.equal((await request(t, '/nums.txt', { headers: { 'if-none-match': res.headers.etag } })).status, 304);
    // A weak tag cannot validate a range (RFC 9110 13.1.5): the whole file comes back.
    assert.equal((await request(t, '/nums.txt', { headers: { range: 'bytes=0-0', 'if-range': res.headers.etag } })).status, 200);
  });
});

test('setHeaders and headers set before the handler are kept', { skip: !native && 'confined serving needs the addon' }, async () => {
  const http = require('node:http');
  const { serveStatic } = require('smartread/serve');
  const seen = [];
  const handler = serveStatic(site, {
    setHeaders(res, file, stats) {
      seen.push([file, stats.size, stats.isFile()]);
      res.setHeader('Cache-Control', 'no-cache');
      res.setHeader('X-Created', new Date(stats.ctimeMs).toUTCString());
    },
  });
  const server = http.createServer((req, res) => {
    if (req.url === '/custom-type') {
      res.setHeader('Content-Type', 'application/x-custom');
      req.url = '/name.txt';
    }
    handler(req, res);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const agent = new http.Agent({ keepAlive: true });
  const t = { url: `http://127.0.0.1:${server.address().port}`, agent };
  try {
    const res = await request(t, '/name.txt');
    assert.equal(res.headers['cache-control'], 'no-cache');
    assert.match(res.headers['x-created'], httpDate);
    assert.equal(res.headers['content-length'], '4');
    assert.deepEqual(seen, [[path.join(site, 'name.txt'), 4, true]]);
    assert.equal((await request(t, '/custom-type')).headers['content-type'], 'application/x-custom');
    // An error response carries none of them.
    const missing = await request(t, '/meow');
    assert.equal(missing.headers['cache-control'], undefined);
  } finally {
    agent.destroy();
    await new Promise((resolve) => server.close(resolve));
    handler.close();
  }
});

test('precompressed siblings by Accept-Encoding, with Vary', { skip: !native && 'confined serving needs the addon' }, async () => {
  for (const host of hosts) {
    await on(host, { precompressed: true }, async (t) => {
      const get = (p, enc) => request(t, p, { headers: enc === undefined ? {} : { 'accept-encoding': enc } });
      const br = await get('/app.js', 'gzip, deflate, br');
      assert.equal(br.body.toString(), 'brotli js', host);
      assert.equal(br.headers['content-encoding'], 'br');
      assert.equal(br.headers['content-type'], 'text/javascript; charset=utf-8');
      assert.equal(br.headers['content-length'], String('brotli js'.length));
      assert.equal(br.headers.vary, 'Accept-Encoding');
      const gz = await get('/app.js', 'gzip');
      assert.equal(gz.body.toString(), 'gzip js');
      assert.equal(gz.headers['content-encoding'], 'gzip');
      assert.notEqual(gz.headers.etag, br.headers.etag);
      assert.equal((await get('/app.js', 'br;q=0, gzip')).body.toString(), 'gzip js');
      assert.equal((await get('/app.js', '*')).body.toString(), 'brotli js');
      const plain = await get('/app.js', 'identity');
      assert.equal(plain.body.toString(), 'plain js');
      assert.equal(plain.headers['content-encoding'], undefined);
      assert.equal(plain.headers.vary, 'Accept-Encoding');
      assert.equal((await get('/app.js')).body.toString(), 'plain js');
      assert.equal((await get('/only-gz.css', 'br, gzip')).body.toString(), 'gzip css');
      assert.equal((await get('/name.txt', 'br, gzip')).body.toString(), 'tobi');
      // The sibling's own validators answer its conditional requests and ranges.
      assert.equal((await request(t, '/app.js', { headers: { 'accept-encoding': 'br', 'if-none-match': br.headers.etag } })).status, 304);
      const part = await request(t, '/app.js', { headers: { 'accept-encoding': 'br', range: 'bytes=0-5' } });
      assert.equal(part.body.toString(), 'brotli');
    });
  }
  // Off by default, as in serve-static, sirv and @fastify/static.
  await on('node:http', {}, async (t) => {
    const res = await request(t, '/app.js', { headers: { 'accept-encoding': 'br, gzip' } });
    assert.equal(res.body.toString(), 'plain js');
    assert.equal(res.headers.vary, undefined);
  });
});

test('Express: fallthrough to the next middleware, errors to the error handler, mounts', { skip: !native && 'confined serving needs the addon' }, async () => {
  const http = require('node:http');
  const express = require('express');
  const { serveStatic } = require('smartread/serve');
  const handler = serveStatic(site);
  const app = express();
  app.set('env', 'test');
  app.use('/static', handler);
  app.use(handler);
  app.use((req, res) => res.status(404).send(`next: ${req.url}`));
  app.use((err, req, res, _next) => res.status(err.status).send(`error ${err.status}`));
  const server = http.createServer(app);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const agent = new http.Agent({ keepAlive: true });
  const t = { url: `http://127.0.0.1:${server.address().port}`, agent };
  try {
    assert.equal((await request(t, '/static/name.txt')).body.toString(), 'tobi');
    assert.equal((await request(t, '/static/pets/')).body.toString(), '<p>pets</p>');
    assert.equal((await request(t, '/static/pets')).headers.location, '/static/pets/');
    assert.equal((await request(t, '/static')).headers.location, '/static/');
    assert.equal((await request(t, '/static?x=1')).headers.location, '/static/?x=1');
    assert.equal((await request(t, '/missing')).body.toString(), 'next: /missing');
    assert.equal((await request(t, '/.hidden.txt')).body.toString(), 'next: /.hidden.txt');
    assert.equal((await request(t, '/../secret.txt')).body.toString(), 'error 403');
    assert.equal((await request(t, '/%99')).body.toString(), 'error 400');
  } finally {
    agent.destroy();
    await new Promise((resolve) => server.close(resolve));
    handler.close();
  }
});

test('Fastify: prefix, the not-found handler, reply.sendFile, onSend hooks', { skip: !native && 'confined serving needs the addon' }, async () => {
  const http = require('node:http');
  const Fastify = require('fastify');
  const plugin = require('smartread/serve/fastify');
  const app = Fastify();
  app.register(plugin, { root: site, prefix: '/assets' });
  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('x-hooked', 'yes');
    return payload;
  });
  app.get('/home', (request, reply) => reply.sendFile('index.html'));
  app.get('/nope', (request, reply) => reply.sendFile('../secret.txt'));
  app.setNotFoundHandler((request, reply) => reply.code(404).send('fastify not found'));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const agent = new http.Agent({ keepAlive: true });
  const t = { url: `http://127.0.0.1:${app.server.address().port}`, agent };
  try {
    const res = await request(t, '/assets/name.txt');
    assert.equal(res.body.toString(), 'tobi');
    assert.equal(res.headers['x-hooked'], 'yes');
    assert.equal(res.headers['content-length'], '4');
    assert.equal((await request(t, '/assets/pets')).headers.location, '/assets/pets/');
    assert.equal((await request(t, '/assets/pets/')).body.toString(), '<p>pets</p>');
    assert.equal((await request(t, '/assets/missing')).body.toString(), 'fastify not found');
    assert.equal((await request(t, '/name.txt')).body.toString(), 'fastify not found');
    const home = await request(t, '/home');
    assert.equal(home.body.toString(), '<p>home</p>');
    assert.equal(home.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal((await request(t, '/home', { headers: { 'if-none-match': home.headers.etag } })).status, 304);
    const refused = await request(t, '/nope');
    assert.equal(refused.status, 403);
    assert.ok(!refused.body.toString().includes(SECRET));
  } finally {
    agent.destroy();
    await app.close();
  }
});

test('after close(), requests get 503 and the root is released', { skip: !native && 'confined serving needs the addon' }, async () => {
  const http = require('node:http');
  const { serveStatic } = require('smartread/serve');
  const handler = serveStatic(site);
  const server = http.createServer(handler);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const agent = new http.Agent({ keepAlive: true });
  const t = { url: `http://127.0.0.1:${server.address().port}`, agent };
  try {
    assert.equal((await request(t, '/name.txt')).status, 200);
    handler.close();
    handler.close();
    assert.equal((await request(t, '/name.txt')).status, 503);
  } finally {
    agent.destroy();
    await new Promise((resolve) => server.close(resolve));
  }
});

test('Fastify: setHeaders sees the reply, the file and its stats', { skip: !native && 'confined serving needs the addon' }, async () => {
  const http = require('node:http');
  const Fastify = require('fastify');
  const plugin = require('smartread/serve/fastify');
  const app = Fastify();
  const seen = [];
  app.register(plugin, {
    root: site,
    setHeaders(reply, file, stats) {
      seen.push([file, stats.size]);
      reply.header('cache-control', 'no-store');
    },
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const agent = new http.Agent({ keepAlive: true });
  const t = { url: `http://127.0.0.1:${app.server.address().port}`, agent };
  try {
    const res = await request(t, '/nums.txt');
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(res.body.toString(), '123456789');
    assert.deepEqual(seen, [[path.join(site, 'nums.txt'), 9]]);
  } finally {
    agent.destroy();
    await app.close();
  }
});

test('bad options are refused with node-style errors, before the root is opened', { skip: !native && 'confined serving needs the addon' }, () => {
  const { serveStatic } = require('smartread/serve');
  assert.throws(() => serveStatic(site, { dotfiles: 'bogus' }), { code: 'ERR_INVALID_ARG_VALUE' });
  assert.throws(() => serveStatic(site, { index: 42 }), { code: 'ERR_INVALID_ARG_VALUE' });
  assert.throws(() => serveStatic(site, { index: true }), { code: 'ERR_INVALID_ARG_VALUE' });
  assert.throws(() => serveStatic(site, { extensions: 42 }), { code: 'ERR_INVALID_ARG_VALUE' });
  assert.throws(() => serveStatic(site, { maxAge: -1 }), { code: 'ERR_INVALID_ARG_VALUE' });
  assert.throws(() => serveStatic(site, { etag: 'medium' }), { code: 'ERR_INVALID_ARG_VALUE' });
  assert.throws(() => serveStatic(site, { setHeaders: 'x' }), { code: 'ERR_INVALID_ARG_TYPE' });
  assert.throws(() => serveStatic(site, { redirect: 'yes' }), { code: 'ERR_INVALID_ARG_TYPE' });
  assert.throws(() => serveStatic(site, { cache: { maxBytes: -5 } }), { code: 'ERR_INVALID_ARG_VALUE' });
  assert.throws(() => serveStatic(site, 'x'), { code: 'ERR_INVALID_ARG_TYPE' });
  assert.throws(() => serveStatic(path.join(site, 'missing-dir')), { code: 'ENOENT' });
  assert.throws(() => serveStatic(path.join(site, 'name.txt')), { code: 'ENOTDIR' });
});
