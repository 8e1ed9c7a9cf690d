#!/usr/bin/env node
// `npm run bench:http`: serveStatic (smartread/serve) on node:http and as a Fastify plugin
// against the static servers people run: @fastify/static (Fastify), serve-static (Express) and
// sirv (node:http), on the same deterministic site, each in a child process of its own, loaded
// over loopback by this one. Four trials by default:
//   small-file mix  300 text files of 0.5-30 KiB, GET in turn, autocannon with 32 connections;
//   large files     8 MiB files, a plain keep-alive node:http client with 4 connections
//                   (autocannon's parser takes bodies at only ~30 MB/s and would measure itself);
//   conditional     a browser-shaped mix on the small files, autocannon: revalidations with the
//                   ETag each server gave (304), some with a stale one (200), plain GETs, and
//                   ranges with If-Range (206);
//   rss             100 concurrent downloads of one 1 GiB file for the trial's seconds, the
//                   server's RSS sampled every 50 ms (a figure to read, not a timing);
// and one asked for by name:
//   precompressed   the small-file mix, each request accepting `br, gzip`, every other file with
//                   a .br and a .gz beside it (the others with none, as a build leaves small
//                   files); the servers that serve such siblings, each with its option for them
//                   (serveStatic `precompressed`, @fastify/static `preCompressed`, sirv `brotli`
//                   and `gzip`); every answer's bytes checked against the sibling it names.
// Peers run as their users run them in production: @fastify/static and serve-static with their
// defaults, sirv with { dev: false, etag: true } (its default sends no ETag), all with
// NODE_ENV=production. Servers alternate in order round by round (ABBA); every server's bytes
// are checked before it is measured, and a run whose requests fail is an error. Results are
// ratios to the best peer, measured in this run.
//
// The limit: `ceiling`, a node:http server that answers from memory (every small file read and
// its ETag made once at start, no system call per request), runs in the small-file and
// conditional trials. Nobody should serve files so (it never sees a file change), but no static
// server on node:http can do more under this load generator on this machine: where ours is
// near it, the client, not the server, sets the pace.
//
// --overlay (root only) puts the site where a container's files lie: in the lower layer of the
// kernel's overlayfs, mounted for the run under --dir (bench/mounts.js) and served through it,
// so that every server reads through overlayfs, which refuses non-blocking reads. --fuse-latency
// (root only) puts it where shared storage lies: behind the bench's fuse-latency daemon, which
// answers each request 1 ms later as a network filesystem does, the kernel keeping names and
// attributes for --cache-ms (default a day; 0: every lookup and stat asks the daemon, as on NFS
// or FUSE once cached attributes lapse). Either mount is removed however the run ends.
// Each server's event loop is watched during each run (monitorEventLoopDelay): the longest it
// was held is reported beside its speed, as a server that waits for a filesystem on its loop
// makes every client wait.
//
//   node bench/http.js [--seconds 5] [--rounds 2] [--connections 32] [--small 300] [--large 4]
//                      [--large-size 8m] [--rss-size 1g] [--rss-clients 100] [--dir DIR]
//                      [--overlay | --fuse-latency [--cache-ms N]]
//                      [--servers a,b] [--trials small,large,conditional,rss,precompressed]
//                      [--json FILE]
// A server alone: node bench/http.js --serve NAME --root DIR
'use strict';
const { spawn } = require('node:child_process');
const { createHash } = require('node:crypto');
const zlib = require('node:zlib');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { parseArgs } = require('node:util');

const SERVERS = ['smartread', 'smartread-fastify', 'fastify-static', 'serve-static', 'sirv', 'ceiling'];
// The servers that take part in a trial: the ceiling holds its files in memory, small ones only;
// serve-static and the ceiling serve no precompressed siblings.
const CEILING_TRIALS = ['small', 'conditional'];
const takesPart = (server, trial) => (server !== 'ceiling' || CEILING_TRIALS.includes(trial)) &&
  (trial !== 'precompressed' || (server !== 'ceiling' && server !== 'serve-static'));
const OURS = ['smartread', 'smartread-fastify'];
const PEERS = ['fastify-static', 'serve-static', 'sirv'];
const TRIALS = ['small', 'large', 'conditional', 'rss', 'precompressed'];
const DEFAULT_TRIALS = ['small', 'large', 'conditional', 'rss'];
// A precompressed sibling's suffix, by the content coding a response names.
const CODING_SUFFIX = { br: '.br', gzip: '.gz' };

const { values: opts } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '2' },
    connections: { type: 'string', default: '32' },
    small: { type: 'string', default: '300' },
    large: { type: 'string', default: '4' },
    'large-size': { type: 'string', default: '8m' },
    'rss-size': { type: 'string', default: '1g' },
    'rss-clients': { type: 'string', default: '100' },
    dir: { type: 'string', default: os.tmpdir() },
    overlay: { type: 'boolean', default: false },
    'fuse-latency': { type: 'boolean', default: false },
    'cache-ms': { type: 'string' },
    servers: { type: 'string', default: SERVERS.join(',') },
    trials: { type: 'string', default: DEFAULT_TRIALS.join(',') },
    json: { type: 'string' },
    serve: { type: 'string' },
    root: { type: 'string' },
    precompressed: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h' },
  },
});

// ---------------------------------------------------------------------------------------------
// The servers, each started in a child process by `--serve NAME --root DIR`.

async function serve(name, root, precompressed) {
  let server;
  if (name === 'smartread') {
    const { serveStatic } = require('smartread/serve');
    server = http.createServer(serveStatic(root, precompressed ? { precompressed: true } : {}));
  } else if (name === 'sirv') {
    const sirv = require('sirv');
    server = http.createServer(sirv(root, { dev: false, etag: true, ...(precompressed ? { brotli: true, gzip: true } : {}) }));
  } else if (name === 'serve-static') {
    const express = require('express');
    const serveStatic = require('serve-static');
    const app = express();
    app.use(serveStatic(root));
    server = http.createServer(app);
  } else if (name === 'ceiling') {
    server = http.createServer(memoryServer(root));
  } else if (name === 'smartread-fastify' || name === 'fastify-static') {
    const app = require('fastify')();
    if (name === 'fastify-static') app.register(require('@fastify/static'), { root, ...(precompressed ? { preCompressed: true } : {}) });
    else app.register(require('smartread/serve/fastify'), { root, ...(precompressed ? { precompressed: true } : {}) });
    await app.listen({ port: 0, host: '127.0.0.1' });
    return app.server;
  } else {
    throw new Error(`unknown server ${name}: one of ${SERVERS.join(', ')}`);
  }
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

// The ceiling's handler: GET of the small files from memory, with the answers the trials expect
// (200, 304 on a matching If-None-Match, 206 for a single range whose If-Range matches).
function memoryServer(root) {
  const mime = require('mime-types');
  const files = new Map();
  for (const entry of fs.readdirSync(path.join(root, 'assets'), { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const name = path.join(entry.parentPath ?? entry.path, entry.name);
    const body = fs.readFileSync(name);
    files.set(`/${path.relative(root, name)}`, {
      body, etag: `"${body.length.toString(16)}-${createHash('sha1').update(body).digest('base64url').slice(0, 16)}"`,
      type: mime.contentType(path.extname(name)) || 'application/octet-stream',
    });
  }
  return (req, res) => {
    const file = files.get(req.url);
    if (file === undefined) {
      res.statusCode = 404;
      res.end();
      return;
    }
    res.setHeader('etag', file.etag);
    if (req.headers['if-none-match'] === file.etag) {
      res.statusCode = 304;
      res.end();
      return;
    }
    res.setHeader('content-type', file.type);
    const range = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
    if (range && req.headers['if-range'] === file.etag) {
      const end = Math.min(Number(range[2]), file.body.length - 1);
      res.statusCode = 206;
      res.setHeader('content-range', `bytes ${range[1]}-${end}/${file.body.length}`);
      res.end(file.body.subarray(Number(range[1]), end + 1));
      return;
    }
    res.end(file.body);
  };
}

// The server's side of the loop watch: the bench asks it to start over before a run ('reset')
// and for the longest wait since after it ('report').
function watchLoop() {
  const { monitorEventLoopDelay } = require('node:perf_hooks');
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  process.on('message', (message) => {
    if (message === 'reset') delay.reset();
    process.send({ loopMaxMs: delay.max / 1e6 });
  });
}

if (opts.serve !== undefined) {
  serve(opts.serve, path.resolve(opts.root), opts.precompressed).then((server) => {
    if (process.send) watchLoop();
    process.stdout.write(`listening on http://127.0.0.1:${server.address().port}\n`);
    process.on('SIGTERM', () => process.exit(0));
  }, (err) => {
    process.stderr.write(`${opts.serve}: ${err.stack}\n`);
    process.exit(1);
  });
  return;
}

if (opts.help) {
  const header = fs.readFileSync(__filename, 'utf8').split('\n').slice(1);
  process.stdout.write(header.slice(0, header.findIndex((l) => !l.startsWith('//'))).map((l) => l.replace(/^\/\/ ?/, '')).join('\n') + '\n');
  process.exit(0);
}

const autocannon = require('autocannon');
const seconds = Number(opts.seconds);
const rounds = Number(opts.rounds);
const connections = Number(opts.connections);
const sizeOf = (s) => Number(/^(\d+)([kmg]?)$/i.exec(s)[1]) * ({ k: 1024, m: 1 << 20, g: 1 << 30 }[s.slice(-1).toLowerCase()] ?? 1);
const allServers = opts.servers.split(',');
const trials = opts.trials.split(',');
for (const s of allServers) if (!SERVERS.includes(s)) throw new Error(`--servers: unknown server ${s}`);
for (const t of trials) if (!TRIALS.includes(t)) throw new Error(`--trials: unknown trial ${t}`);

// ---------------------------------------------------------------------------------------------
// The site: deterministic files. The small ones are printable ASCII, as text assets are (and
// because autocannon turns every body into a string: random bytes decode at half the speed and
// the load generator, not the server, would set the pace); the large ones any bytes.

function prng(seed) {
  let x = seed >>> 0;
  return () => {
    x ^= x << 13; x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5; x >>>= 0;
    return x / 0x100000000;
  };
}

function makeSite(dir) {
  const rand = prng(20261123);
  const fill = (size, text) => {
    const buf = Buffer.allocUnsafe(size);
    for (let i = 0; i < size; i++) buf[i] = text ? 32 + ((rand() * 95) >>> 0) : (rand() * 256) >>> 0;
    return buf;
  };
  fs.rmSync(dir, { recursive: true, force: true });
  const small = [];
  for (let i = 0; i < Number(opts.small); i++) {
    // Mostly 0.5-8 KiB, some up to 30 KiB, as the assets of a web page.
    const size = rand() < 0.85 ? 512 + Math.floor(rand() * 7680) : 8192 + Math.floor(rand() * 22528);
    const rel = `assets/${i % 16}/file-${i}.${['js', 'css', 'html', 'json', 'svg'][i % 5]}`;
    fs.mkdirSync(path.join(dir, path.dirname(rel)), { recursive: true });
    const body = fill(size, true);
    fs.writeFileSync(path.join(dir, rel), body);
    if (trials.includes('precompressed') && i % 2 === 0) {
      // Printable bytes of the size compression would give, standing in for compressed ones,
      // which autocannon would decode as text at half the speed (see above).
      for (const [coding, suffix] of Object.entries(CODING_SUFFIX)) {
        const compressed = coding === 'br' ? zlib.brotliCompressSync(body) : zlib.gzipSync(body);
        fs.writeFileSync(path.join(dir, rel + suffix), fill(compressed.length, true));
      }
    }
    small.push(rel);
  }
  const large = [];
  fs.mkdirSync(path.join(dir, 'media'), { recursive: true });
  for (let i = 0; i < Number(opts.large); i++) {
    const rel = `media/large-${i}.bin`;
    fs.writeFileSync(path.join(dir, rel), fill(sizeOf(opts['large-size'])));
    large.push(rel);
  }
  let huge = null;
  if (trials.includes('rss')) {
    // One block repeated: the bytes matter less here than the size.
    huge = 'media/huge.bin';
    const block = fill(8 << 20);
    const fd = fs.openSync(path.join(dir, huge), 'w');
    for (let off = 0; off < sizeOf(opts['rss-size']); off += block.length) {
      fs.writeSync(fd, block, 0, Math.min(block.length, sizeOf(opts['rss-size']) - off), off);
    }
    fs.closeSync(fd);
  }
  return { small, large, huge };
}

// ---------------------------------------------------------------------------------------------
// Child processes

// The servers running now: a run that ends early (an error, a signal) ends them on its way out.
const running = new Set();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

function startServer(name, site, precompressed) {
  const child = spawn(process.execPath, [__filename, '--serve', name, '--root', site, ...(precompressed ? ['--precompressed'] : [])], {
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    env: { ...process.env, NODE_ENV: 'production' },
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  return new Promise((resolve, reject) => {
    let out = '';
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the ${name} server exited (${code}) before listening`)));
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        child.removeAllListeners('exit');
        resolve({ url: m[1], child });
      }
    });
  });
}

function stopServer(child) {
  return new Promise((resolve) => {
    child.once('exit', resolve);
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 3000).unref();
  });
}

/** Sends the server `message` ('reset' or 'report') and resolves with its loop watch's answer. */
function askLoop(child, message) {
  return new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.send(message, (err) => err && reject(err));
  });
}

function rssOf(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

// ---------------------------------------------------------------------------------------------
// Checks and loads

// Every file of the set, fetched once from the server, must be the file's bytes; returns the
// ETag each file was served with.
async function checkServes(url, site, files) {
  const etags = new Map();
  for (const rel of files) {
    const res = await fetch(`${url}/${rel}`);
    const body = Buffer.from(await res.arrayBuffer());
    if (res.status !== 200 || !body.equals(fs.readFileSync(path.join(site, rel)))) {
      throw new Error(`${url}/${rel}: status ${res.status}, ${body.length} bytes that differ from the file`);
    }
    etags.set(rel, res.headers.get('etag'));
  }
  return etags;
}

// Every file of the set, asked for with `accept-encoding: br, gzip`: the bytes must be those of
// the sibling the response names (Content-Encoding), or of the file where it names none, and
// a file that has siblings must be served from one of them.
async function checkPrecompressed(url, site, files) {
  const { hostname, port } = new URL(url);
  for (const rel of files) {
    const { status, coding, body } = await new Promise((resolve, reject) => {
      http.get({ hostname, port, path: `/${rel}`, headers: { 'accept-encoding': 'br, gzip' }, agent: false }, (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode, coding: res.headers['content-encoding'], body: Buffer.concat(chunks) }));
      }).on('error', reject);
    });
    if (coding !== undefined && !(coding in CODING_SUFFIX)) throw new Error(`${url}/${rel}: content-encoding ${coding}`);
    const served = rel + (coding === undefined ? '' : CODING_SUFFIX[coding]);
    if (status !== 200 || !body.equals(fs.readFileSync(path.join(site, served)))) {
      throw new Error(`${url}/${rel}: status ${status}, ${body.length} bytes that differ from ${served}`);
    }
    if (coding === undefined && fs.existsSync(path.join(site, rel + CODING_SUFFIX.gzip))) {
      throw new Error(`${url}/${rel}: served as it is, beside its precompressed siblings`);
    }
  }
}

// The browser-shaped mix: per 20 requests, 14 revalidations with the server's own ETag (304),
// 2 with a stale one (200), 2 plain GETs (200) and 2 ranges of the first KiB with If-Range
// (206). Every server must answer these with those statuses, or it would be doing other work.
function conditionalRequest(i, rel, etags) {
  const etag = etags.get(rel);
  const kind = i % 20;
  if (kind < 14) return { headers: { 'if-none-match': etag }, expect: 304 };
  if (kind < 16) return { headers: { 'if-none-match': '"stale-0"' }, expect: 200 };
  if (kind < 18) return { headers: {}, expect: 200 };
  return { headers: { range: 'bytes=0-1023', 'if-range': etag }, expect: 206 };
}

// Sent with node:http, as autocannon sends them: fetch() adds `Cache-Control: no-cache` to a
// conditional request, which send (and so @fastify/static and serve-static) answers with 200.
async function checkConditional(url, files, etags) {
  const { hostname, port } = new URL(url);
  for (let i = 0; i < 40; i++) {
    const rel = files[i % files.length];
    const { headers, expect } = conditionalRequest(i, rel, etags);
    const status = await new Promise((resolve, reject) => {
      http.get({ hostname, port, path: `/${rel}`, headers, agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
      }).on('error', reject);
    });
    if (status !== expect) throw new Error(`${url}/${rel} with ${JSON.stringify(headers)}: ${status}, expected ${expect}`);
  }
}

// Bounds on every run, whichever comes first: `seconds`, and this many requests.
const MAX_REQUESTS = 2_000_000;

// { requestsPerSec, latencyMs: { p50, p99, max }, bytesPerSec, requests, failures }. The
// requests are a fixed list that every connection goes through in turn (autocannon builds each
// one's bytes once: a request made per call would cost the load generator more than a server),
// each connection from its own place in it: clients of a site do not all ask for the same file
// at the same moment, and a server that is slow on a file it has not served yet would
// otherwise meet every connection there at once.
function loadAutocannon(url, files, headersFor) {
  const requests = [];
  for (let i = 0; i < Math.max(files.length, headersFor ? 20 * files.length : 0); i++) {
    const rel = files[i % files.length];
    requests.push({ method: 'GET', path: `/${rel}`, headers: headersFor ? headersFor(i, rel) : {} });
  }
  let clients = 0;
  return new Promise((resolve, reject) => {
    autocannon({
      url,
      connections,
      duration: seconds,
      maxOverallRequests: MAX_REQUESTS,
      requests,
      setupClient: (client) => {
        const from = Math.floor((clients++ % connections) * requests.length / connections);
        client.setRequests([...requests.slice(from), ...requests.slice(0, from)]);
      },
    }, (err, res) => (err ? reject(err) : resolve({
      requestsPerSec: res.requests.total / res.duration,
      latencyMs: { p50: res.latency.p50, p99: res.latency.p99, max: res.latency.max },
      bytesPerSec: res.throughput.total / res.duration,
      requests: res.requests.total,
      failures: res.errors + res.timeouts + res['4xx'] + res['5xx'],
    })));
  });
}

function loadLarge(url, files, clients) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
  const { hostname, port } = new URL(url);
  const latencies = [];
  let bytes = 0;
  let failures = 0;
  let next = 0;
  const started = process.hrtime.bigint();
  const deadline = Date.now() + seconds * 1000;
  const client = () => new Promise((resolve) => {
    const one = () => {
      if (Date.now() >= deadline || latencies.length + failures >= MAX_REQUESTS) return resolve();
      const t0 = process.hrtime.bigint();
      http.get({ hostname, port, path: `/${files[next++ % files.length]}`, agent }, (res) => {
        res.on('data', (chunk) => { bytes += chunk.length; });
        res.on('end', () => {
          if (res.statusCode === 200) latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
          else failures++;
          one();
        });
      }).on('error', () => {
        failures++;
        one();
      });
    };
    one();
  });
  return Promise.all(Array.from({ length: clients }, client)).then(() => {
    agent.destroy();
    const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
    latencies.sort((a, b) => a - b);
    const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
    return {
      requestsPerSec: latencies.length / elapsed,
      latencyMs: { p50: at(0.5), p99: at(0.99), max: latencies[latencies.length - 1] ?? 0 },
      bytesPerSec: bytes / elapsed,
      requests: latencies.length,
      failures,
    };
  });
}

// `clients` downloads of one file at once, for `seconds`, each on a connection of its own, the
// server's RSS sampled meanwhile; then every download is abandoned (the server must stop
// reading them). Figures in bytes.
async function loadRss(url, rel, clients, pid) {
  const { hostname, port } = new URL(url);
  const rssIdle = rssOf(pid);
  let rssMax = rssIdle;
  let bytes = 0;
  let failures = 0;
  let finished = 0;
  const requests = [];
  const sampler = setInterval(() => { rssMax = Math.max(rssMax, rssOf(pid)); }, 50);
  const started = process.hrtime.bigint();
  for (let i = 0; i < clients; i++) {
    const req = http.get({ hostname, port, path: `/${rel}`, agent: false }, (res) => {
      if (res.statusCode !== 200) failures++;
      res.on('data', (chunk) => { bytes += chunk.length; });
      res.on('end', () => { finished++; });
      res.on('error', () => {});
    });
    req.on('error', () => {});
    requests.push(req);
  }
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
  clearInterval(sampler);
  rssMax = Math.max(rssMax, rssOf(pid));
  for (const req of requests) req.destroy();
  return {
    requestsPerSec: finished / elapsed,
    latencyMs: { p50: 0, p99: 0, max: 0 },
    bytesPerSec: bytes / elapsed,
    requests: finished,
    failures,
    rss: { idle: rssIdle, max: rssMax, growth: rssMax - rssIdle },
  };
}

// ---------------------------------------------------------------------------------------------

// The site's directory: beside --dir, or with --overlay in the lower layer of an overlay mounted
// for the run, or with --fuse-latency in the source of a fuse-latency mount, served through the
// mount (`served`); `mounts` is the MountSet to tear down.
async function placeSite() {
  if (opts.overlay && opts['fuse-latency']) throw new Error('--overlay and --fuse-latency: one mount at a time');
  if (opts['cache-ms'] !== undefined && !opts['fuse-latency']) throw new Error('--cache-ms is for --fuse-latency');
  const kind = opts.overlay ? 'overlay' : opts['fuse-latency'] ? 'fuse-latency' : null;
  if (kind === null) {
    const site = path.join(opts.dir, 'smartread-http-bench');
    const { fsType } = require('./targets').describeTarget(opts.dir);
    return { written: site, served: site, mounts: null, filesystem: { type: fsType, label: fsType, dir: opts.dir } };
  }
  const { MountSet, mountUnavailable, buildFuseLatency } = require('./mounts');
  const why = mountUnavailable(kind);
  if (why) throw new Error(`--${kind}: ${why}`);
  const cacheMs = opts['cache-ms'] === undefined ? null : Number(opts['cache-ms']);
  if (cacheMs !== null && !(Number.isSafeInteger(cacheMs) && cacheMs >= 0)) throw new Error(`--cache-ms: ${opts['cache-ms']} is not a number of milliseconds`);
  // A signal ends the run through 'exit', where the mount set takes itself down.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => process.exit(128 + os.constants.signals[signal]));
  const mounts = new MountSet(opts.dir);
  if (kind === 'overlay') {
    const overlay = mounts.overlay();
    process.stdout.write(`site: in the lower layer ${overlay.backingDir}, served through the overlay mounted on ${overlay.dir}\n`);
    return {
      written: path.join(overlay.backingDir, 'site'),
      served: path.join(overlay.dir, 'site'),
      mounts,
      filesystem: { type: 'overlay', label: 'overlay (its lower layer)', mountPoint: overlay.dir, lowerDir: overlay.backingDir },
    };
  }
  const fuse = await mounts.fuseLatency({ binary: (await buildFuseLatency()).binary, cacheMs });
  const kept = cacheMs === null ? 'a day' : `${cacheMs} ms`;
  process.stdout.write(`site: in ${fuse.backingDir}, served through the fuse-latency daemon (${fuse.delayMs} ms a request, ` +
    `names and attributes kept ${kept}) mounted on ${fuse.dir}\n`);
  return {
    written: path.join(fuse.backingDir, 'site'),
    served: path.join(fuse.dir, 'site'),
    mounts,
    filesystem: { type: 'fuse-latency', label: `fuse-latency (${fuse.delayMs} ms a request, attributes kept ${kept})`, mountPoint: fuse.dir, source: fuse.backingDir, delayMs: fuse.delayMs, cacheMs },
  };
}

async function main() {
  const place = await placeSite();
  try {
    await run(place);
  } finally {
    place.mounts?.teardown();
  }
}

async function run({ written, served: site, filesystem }) {
  const sets = makeSite(written);
  const trialDefs = {
    small: { label: 'small-file mix', files: sets.small, load: (url) => loadAutocannon(url, sets.small) },
    large: { label: 'large files', files: sets.large, load: (url) => loadLarge(url, sets.large, Math.min(connections, 4)) },
    conditional: {
      label: 'conditional mix',
      files: sets.small,
      prepare: async (url, etags) => checkConditional(url, sets.small, etags),
      load: (url, etags) => loadAutocannon(url, sets.small, (i, rel) => conditionalRequest(i, rel, etags).headers),
    },
    rss: { label: `rss, ${opts['rss-clients']} × ${opts['rss-size']}`, files: [], load: (url, _etags, pid) => loadRss(url, sets.huge, Number(opts['rss-clients']), pid) },
    precompressed: {
      label: 'precompressed mix',
      files: sets.small,
      check: (url) => checkPrecompressed(url, site, sets.small),
      load: (url) => loadAutocannon(url, sets.small, () => ({ 'accept-encoding': 'br, gzip' })),
    },
  };
  const report = {
    format: 'smartread-bench-http/1',
    command: ['node', 'bench/http.js', ...process.argv.slice(2)].join(' '),
    when: new Date().toISOString(), node: process.version, cpus: os.cpus().length, cpu: os.cpus()[0]?.model,
    kernel: os.release(), options: opts, filesystem,
    versions: Object.fromEntries(['fastify', '@fastify/static', 'express', 'serve-static', 'sirv', 'autocannon']
      .map((p) => [p, require(`${p}/package.json`).version])),
    trials: [],
  };
  for (const trial of trials) {
    const def = trialDefs[trial];
    const servers = allServers.filter((s) => takesPart(s, trial));
    const runs = Object.fromEntries(servers.map((s) => [s, []]));
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? servers : [...servers].reverse();
      for (const name of order) {
        const { url, child } = await startServer(name, site, trial === 'precompressed');
        try {
          const etags = def.check ? await def.check(url) : await checkServes(url, site, def.files.slice(0, trial === 'small' || trial === 'large' ? 50 : def.files.length));
          if (def.prepare) await def.prepare(url, etags);
          await askLoop(child, 'reset');
          const res = await def.load(url, etags, child.pid);
          res.loopMaxMs = (await askLoop(child, 'report')).loopMaxMs;
          if (res.failures) throw new Error(`${name}: ${res.failures} requests failed in the ${def.label} trial`);
          runs[name].push(res);
          const rss = res.rss ? `, RSS ${(res.rss.idle / 1e6).toFixed(0)} → ${(res.rss.max / 1e6).toFixed(0)} MB` : '';
          process.stdout.write(`  ${def.label}, round ${r + 1}, ${name}: ${Math.round(res.requestsPerSec)} req/s, ` +
            `${(res.bytesPerSec / 1e6).toFixed(0)} MB/s, p99 ${res.latencyMs.p99.toFixed(1)} ms, loop held ${res.loopMaxMs.toFixed(1)} ms${rss}\n`);
        } finally {
          await stopServer(child);
        }
      }
    }
    const mean = (xs, f) => xs.reduce((a, x) => a + f(x), 0) / xs.length;
    const summary = {};
    for (const name of servers) {
      summary[name] = {
        requestsPerSec: mean(runs[name], (x) => x.requestsPerSec),
        mbPerSec: mean(runs[name], (x) => x.bytesPerSec) / 1e6,
        p50: mean(runs[name], (x) => x.latencyMs.p50),
        p99: mean(runs[name], (x) => x.latencyMs.p99),
        loopMaxMs: Math.max(...runs[name].map((x) => x.loopMaxMs)),
      };
      if (trial === 'rss') {
        summary[name].rssIdleMB = mean(runs[name], (x) => x.rss.idle) / 1e6;
        summary[name].rssMaxMB = Math.max(...runs[name].map((x) => x.rss.max)) / 1e6;
      }
    }
    // The measure a trial is judged by: MB/s for the large files, requests/s otherwise.
    const figure = (name) => (trial === 'large' || trial === 'rss' ? summary[name].mbPerSec : summary[name].requestsPerSec);
    const peers = servers.filter((s) => PEERS.includes(s));
    const bestPeer = peers.length > 0 ? peers.reduce((a, b) => (figure(b) > figure(a) ? b : a)) : null;
    for (const name of servers) summary[name].vsBestPeer = bestPeer ? figure(name) / figure(bestPeer) : null;
    report.trials.push({ trial, label: def.label, files: def.files.length, servers, runs, summary, bestPeer });
  }

  process.stdout.write(`\nstatic servers: autocannon ${connections} connections (small, conditional), node:http client 4 (large); ` +
    `${seconds} s × ${rounds} rounds per server; ${process.version}, ${os.cpus().length} cores` +
    `; the site on ${filesystem.label}; loop: the longest the server's event loop was held\n`);
  process.stdout.write('trial                    server              req/s    MB/s   p50 ms   p99 ms  loop ms  vs best peer\n');
  for (const t of report.trials) {
    for (const name of t.servers) {
      const s = t.summary[name];
      const mark = OURS.includes(name) ? '' : name === t.bestPeer ? ' (best peer)' : name === 'ceiling' ? ' (the limit)' : '';
      const rss = t.trial === 'rss' ? `   RSS ${s.rssIdleMB.toFixed(0)} → ${s.rssMaxMB.toFixed(0)} MB` : '';
      process.stdout.write(`${t.label.padEnd(24)} ${name.padEnd(18)} ${Math.round(s.requestsPerSec).toString().padStart(7)} ` +
        `${s.mbPerSec.toFixed(0).padStart(7)} ${s.p50.toFixed(1).padStart(8)} ${s.p99.toFixed(1).padStart(8)} ${s.loopMaxMs.toFixed(1).padStart(8)}  ` +
        `${s.vsBestPeer === null ? '' : s.vsBestPeer.toFixed(2) + '×'}${mark}${rss}\n`);
    }
  }
  if (opts.json) fs.writeFileSync(opts.json, JSON.stringify(report, null, 2));
  fs.rmSync(written, { recursive: true, force: true });
}

main().catch((err) => {
  process.stderr.write(`bench:http: ${err.stack}\n`);
  process.exit(1);
});
