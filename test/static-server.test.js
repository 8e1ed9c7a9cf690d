// examples/static-server.ts: both backends serve the same bytes, ranges, ETags and statuses;
// only the smartread one refuses a symbolic link that leads out of the root.
'use strict';
const { test, before } = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { engineInfo } = require('smartread');
const { checkNoFdLeak, useTempDirs, writePattern } = require('./helpers');

checkNoFdLeak();
const tempDirs = useTempDirs();
const native = engineInfo().engine === 'native';
const root = path.resolve(__dirname, '..');
let example;

before(() => {
  execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', path.join(root, 'tsconfig.examples.json')]);
  example = require(path.join(root, 'build/examples/static-server.js'));
});

// The server on an ephemeral port; `close` stops it and the backend (its root's descriptor).
async function serve(backend) {
  const server = example.createServer(backend);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = () => new Promise((resolve) => server.close(() => {
    backend.close();
    resolve();
  }));
  return { url: `http://127.0.0.1:${server.address().port}`, close };
}

function makeSite(name) {
  const base = path.join(tempDirs.disk, name);
  const site = path.join(base, 'site');
  fs.mkdirSync(path.join(site, 'sub'), { recursive: true });
  writePattern(path.join(site, 'index.html'), 300);
  writePattern(path.join(site, 'sub', 'data.bin'), 100_000);
  writePattern(path.join(base, 'secret.txt'), 50);
  fs.symlinkSync(path.join(base, 'secret.txt'), path.join(site, 'out-link'));
  fs.symlinkSync('sub/data.bin', path.join(site, 'in-link'));
  return site;
}

// One request on a connection of its own (no keep-alive), so that nothing stays open after it.
function get(url, headers = {}, method = 'GET') {
  return new Promise((resolve, reject) => {
    http.request(url, { method, headers, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const result = { status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) };
        if (res.socket.destroyed) resolve(result);
        else res.socket.once('close', () => resolve(result));
      });
    }).on('error', reject).end();
  });
}

test('parseRange: the forms of a single byte range', () => {
  assert.deepEqual(example.parseRange('bytes=0-9', 100), [0, 9]);
  assert.deepEqual(example.parseRange('bytes=90-', 100), [90, 99]);
  assert.deepEqual(example.parseRange('bytes=-5', 100), [95, 99]);
  assert.deepEqual(example.parseRange('bytes=50-500', 100), [50, 99]);
  assert.equal(example.parseRange('bytes=100-', 100), 'unsatisfiable');
  assert.equal(example.parseRange('bytes=9-3', 100), 'unsatisfiable');
  assert.equal(example.parseRange('bytes=0-1,5-6', 100), null);
  assert.equal(example.parseRange('items=0-1', 100), null);
});

for (const name of ['smartread', 'fs']) {
  test(`the ${name} backend serves files, ranges, ETags and error statuses`, async (t) => {
    if (name === 'smartread' && !native) return t.skip('the smartread backend reads confined, which needs the addon');
    const site = makeSite(name);
    const { url, close } = await serve(name === 'fs' ? example.fsBackend(site) : example.smartreadBackend(site));
    t.after(close);
    const data = fs.readFileSync(path.join(site, 'sub', 'data.bin'));

    const index = await get(`${url}/`);
    assert.equal(index.status, 200);
    assert.ok(index.body.equals(fs.readFileSync(path.join(site, 'index.html'))));
    assert.equal(index.headers['content-type'], 'text/html; charset=utf-8');
    const whole = await get(`${url}/sub/data.bin`);
    assert.ok(whole.body.equals(data));
    assert.ok((await get(`${url}/in-link`)).body.equals(data));

    const etag = whole.headers.etag;
    assert.match(etag, /^W\/"[0-9a-f]+-[0-9a-f]+"$/);
    assert.equal((await get(`${url}/sub/data.bin`, { 'if-none-match': etag })).status, 304);

    for (const [range, start, end] of [['bytes=0-0', 0, 0], ['bytes=4090-4200', 4090, 4200], ['bytes=-10', 99_990, 99_999], ['bytes=99000-', 99_000, 99_999]]) {
      const part = await get(`${url}/sub/data.bin`, { range });
      assert.equal(part.status, 206, range);
      assert.equal(part.headers['content-range'], `bytes ${start}-${end}/100000`, range);
      assert.ok(part.body.equals(data.subarray(start, end + 1)), range);
    }
    const beyond = await get(`${url}/sub/data.bin`, { range: 'bytes=100000-' });
    assert.equal(beyond.status, 416);
    assert.equal(beyond.headers['content-range'], 'bytes */100000');

    assert.equal((await get(`${url}/missing`)).status, 404);
    assert.equal((await get(`${url}/index.html/below`)).status, 404);
    assert.equal((await get(`${url}/sub`)).status, 404);
    assert.equal((await get(`${url}/..%2Fsecret.txt`)).status, 403);
    assert.equal((await get(`${url}/%E0%A4%A`)).status, 400);
    assert.equal((await get(`${url}/`, {}, 'POST')).status, 405);
    // A link that leads out: the kernel refuses it under smartread; a path check in JS cannot.
    assert.equal((await get(`${url}/out-link`)).status, name === 'smartread' ? 403 : 200);
  });
}
