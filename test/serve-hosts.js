// What the serveStatic tests share: the fixture site, serveStatic on each host (node:http,
// Express middleware, the Fastify plugin) on an ephemeral port, and a raw HTTP client that
// sends the path exactly as given (no normalisation of `..` or `//`).
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { writePattern } = require('./helpers');

/** Text no response may ever contain: it lives outside every served root. */
const SECRET = 'TOP-SECRET-f1c2b3a4-outside-the-root';

/**
 * The site the conformance tests serve, under `base` (the root is base/site; base/outside holds
 * what must never be served, reachable only by traversal or links).
 */
function makeSite(base) {
  const site = path.join(base, 'site');
  const outside = path.join(base, 'outside');
  const write = (rel, content) => {
    fs.mkdirSync(path.dirname(path.join(site, rel)), { recursive: true });
    fs.writeFileSync(path.join(site, rel), content);
  };
  fs.mkdirSync(outside, { recursive: true });
  fs.writeFileSync(path.join(base, 'secret.txt'), SECRET);
  fs.writeFileSync(path.join(outside, 'secret.txt'), SECRET);
  write('name.txt', 'tobi');
  write('nums.txt', '123456789');
  write('empty.txt', '');
  write('some thing.txt', 'hey');
  write('do..ts.txt', '...');
  write('percent%.txt', 'percent');
  write('fünke.txt', 'umlaut');
  write('index.html', '<p>home</p>');
  write('tobi.html', '<p>tobi</p>');
  write('page.html', '<p>page</p>');
  write('noext', 'no extension');
  write('pets/index.html', '<p>pets</p>');
  write('pets/tobi.txt', 'ferret');
  write('empty-dir/.keep', '');
  write('.hidden.txt', 'secret dotfile');
  write('.mine/name.txt', 'in a dot directory');
  write('.well-known/acme', 'challenge');
  write('app.js', 'plain js');
  write('app.js.br', 'brotli js');
  write('app.js.gz', 'gzip js');
  write('only-gz.css', 'plain css');
  write('only-gz.css.gz', 'gzip css');
  writePattern(path.join(site, 'data.bin'), 100_000);
  fs.symlinkSync(path.join(base, 'secret.txt'), path.join(site, 'out-link'));
  fs.symlinkSync('../outside', path.join(site, 'out-dir'));
  fs.symlinkSync('name.txt', path.join(site, 'in-link'));
  execFileSync('mkfifo', [path.join(site, 'fifo')]);
  return site;
}

/** Starts serveStatic(site, options) on `host`; resolves to { url, close, handler? }. */
async function startHost(host, site, options = {}) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  let server;
  let stop;
  if (host === 'node:http') {
    const { serveStatic } = require('smartread/serve');
    const handler = serveStatic(site, options);
    server = http.createServer(handler);
    stop = () => handler.close();
  } else if (host === 'express') {
    const express = require('express');
    const { serveStatic } = require('smartread/serve');
    const handler = serveStatic(site, options);
    const app = express();
    // Express logs the errors it renders unless it runs as 'test'.
    app.set('env', 'test');
    app.use(handler);
    server = http.createServer(app);
    stop = () => handler.close();
  } else if (host === 'fastify') {
    const Fastify = require('fastify');
    const plugin = require('smartread/serve/fastify');
    const app = Fastify();
    const { fallthrough: _ignored, ...rest } = options;
    app.register(plugin, { root: site, ...rest });
    await app.listen({ port: 0, host: '127.0.0.1' });
    return {
      url: `http://127.0.0.1:${app.server.address().port}`,
      agent,
      async close() {
        agent.destroy();
        await app.close();
      },
    };
  } else {
    throw new Error(`unknown host ${host}`);
  }
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    agent,
    server,
    close: () => new Promise((resolve) => {
      agent.destroy();
      server.close(() => {
        stop();
        resolve();
      });
      server.closeIdleConnections();
    }),
  };
}

/** One request, the path sent as given; resolves to { status, headers, body (Buffer) }. */
function request(target, rawPath, { method = 'GET', headers = {} } = {}) {
  const { hostname, port } = new URL(target.url);
  return new Promise((resolve, reject) => {
    const req = http.request({ hostname, port, path: rawPath, method, headers, agent: target.agent }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

module.exports = { SECRET, makeSite, startHost, request };
