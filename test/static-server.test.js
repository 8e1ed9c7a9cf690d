// examples/static-server.ts: the example server, run as a user would run it, serves a
// directory's files with serveStatic and refuses what lies outside it.
'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync, spawn } = require('node:child_process');
const path = require('node:path');
const { engineInfo } = require('smartread');
const { checkNoFdLeak, useTempDirs, writePattern, patternBuffer, stdoutLines, waitForExit } = require('./helpers');
const { SECRET, makeSite, request } = require('./serve-hosts');

checkNoFdLeak({ spawnsChildren: true });
const tempDirs = useTempDirs();
const native = engineInfo().engine === 'native';
const root = path.resolve(__dirname, '..');

test('the example server serves files, ranges and 304s, and nothing outside its root', { skip: !native && 'confined serving needs the addon' }, async () => {
  execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', path.join(root, 'tsconfig.examples.json')]);
  const site = makeSite(path.join(tempDirs.disk, 'example'));
  writePattern(path.join(site, 'big.bin'), 3 * 1024 * 1024);
  const child = spawn(process.execPath, [path.join(root, 'build/examples/static-server.js'), '--root', site, '--max-age', '60'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const http = require('node:http');
  const agent = new http.Agent({ keepAlive: true });
  const exited = waitForExit(child);
  try {
    const url = /listening on (http:\/\/\S+)/.exec(await stdoutLines(child).next())?.[1];
    assert.ok(url, 'the server said where it listens');
    const target = { url, agent };
    const home = await request(target, '/');
    assert.equal(home.body.toString(), '<p>home</p>');
    assert.equal(home.headers['cache-control'], 'public, max-age=60');
    assert.equal((await request(target, '/', { headers: { 'if-none-match': home.headers.etag } })).status, 304);
    const big = await request(target, '/big.bin');
    assert.ok(big.body.equals(patternBuffer(3 * 1024 * 1024)));
    const part = await request(target, '/big.bin', { headers: { range: 'bytes=-10' } });
    assert.ok(part.body.equals(patternBuffer(3 * 1024 * 1024).subarray(-10)));
    for (const attempt of ['/../secret.txt', '/%2e%2e/secret.txt', '/out-link']) {
      const res = await request(target, attempt);
      assert.equal(res.status, 403, attempt);
      assert.ok(!res.body.toString().includes(SECRET));
    }
  } finally {
    agent.destroy();
    child.kill('SIGTERM');
    await exited;
  }
});
