#!/usr/bin/env node
// `npm run bench:http`: the example static server (examples/static-server.ts) on smartread and
// the same server on fs.promises.readFile, loaded one after the other over loopback with the
// same requests, for a small-file mix and for large files. Each server runs in a child process
// of its own, the load in this one, placed by the scheduler (pinning the load to one core of
// two left autocannon short of CPU and capped both servers alike): autocannon for the small files;
// for the large files a plain keep-alive node:http client, because autocannon's parser takes
// bodies at only ~30 MB/s here and would measure itself. Runs are bounded in time and in
// requests; backends alternate in ABBA order; the result is the ratio of requests/s measured
// in this run.
//
//   node bench/http.js [--seconds 5] [--rounds 2] [--connections 32] [--small 400] [--large 4]
//                      [--large-size 8m] [--dir DIR] [--json FILE]
'use strict';
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { parseArgs } = require('node:util');
const autocannon = require('autocannon');

const root = path.resolve(__dirname, '..');
const { values: opts } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '2' },
    connections: { type: 'string', default: '32' },
    small: { type: 'string', default: '400' },
    large: { type: 'string', default: '4' },
    'large-size': { type: 'string', default: '8m' },
    dir: { type: 'string', default: os.tmpdir() },
    json: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (opts.help) {
  const header = fs.readFileSync(__filename, 'utf8').split('\n').slice(1);
  process.stdout.write(header.slice(0, header.findIndex((l) => !l.startsWith('//'))).map((l) => l.replace(/^\/\/ ?/, '')).join('\n') + '\n');
  process.exit(0);
}
const seconds = Number(opts.seconds);
const rounds = Number(opts.rounds);
const connections = Number(opts.connections);
const sizeOf = (s) => Number(/^(\d+)([km]?)$/i.exec(s)[1]) * ({ k: 1024, m: 1 << 20 }[s.slice(-1).toLowerCase()] ?? 1);

// Deterministic files: a seeded PRNG picks the sizes of the small mix (mostly 0.5-8 KiB, some
// up to 64 KiB, like the assets of a web page) and fills every file: the small ones with
// printable ASCII, as text assets are, the large ones with any bytes. (autocannon turns every
// response body into a string; random bytes decode as UTF-8 at half the speed or less, and the
// load generator, not the server, then set the pace: 100% of a core at ~2-3k requests/s.)
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
    const size = rand() < 0.85 ? 512 + Math.floor(rand() * 7680) : 8192 + Math.floor(rand() * 57344);
    const rel = `assets/${i % 16}/file-${i}.${['js', 'css', 'html', 'json', 'svg'][i % 5]}`;
    fs.mkdirSync(path.join(dir, path.dirname(rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), fill(size, true));
    small.push(rel);
  }
  const large = [];
  for (let i = 0; i < Number(opts.large); i++) {
    const rel = `media/large-${i}.bin`;
    fs.mkdirSync(path.join(dir, 'media'), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), fill(sizeOf(opts['large-size'])));
    large.push(rel);
  }
  return { small, large };
}

function startServer(backend, site) {
  const child = spawn(process.execPath, [path.join(root, 'build/examples/static-server.js'), '--root', site, '--backend', backend], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the ${backend} server exited (${code}) before listening`)));
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

// Every file of the set, fetched once from the server, must be the file's bytes.
async function checkServes(url, site, files) {
  for (const rel of files) {
    const res = await fetch(`${url}/${rel}`);
    const body = Buffer.from(await res.arrayBuffer());
    if (res.status !== 200 || !body.equals(fs.readFileSync(path.join(site, rel)))) {
      throw new Error(`${url}/${rel}: status ${res.status}, ${body.length} bytes that differ from the file`);
    }
  }
}

// Bounds on every run, whichever comes first: `seconds`, and this many requests.
const MAX_REQUESTS = 2_000_000;

// { requestsPerSec, latencyMs: { p50, p99, max }, bytesPerSec, requests, failures }
function loadSmall(url, files) {
  let next = 0;
  return new Promise((resolve, reject) => {
    autocannon({
      url,
      connections,
      duration: seconds,
      maxOverallRequests: MAX_REQUESTS,
      requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: `/${files[next++ % files.length]}` }) }],
    }, (err, res) => (err ? reject(err) : resolve({
      requestsPerSec: res.requests.total / res.duration,
      latencyMs: { p50: res.latency.p50, p99: res.latency.p99, max: res.latency.max },
      bytesPerSec: res.throughput.total / res.duration,
      requests: res.requests.total,
      failures: res.errors + res.timeouts + res.non2xx,
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

async function main() {
  execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', path.join(root, 'tsconfig.examples.json')], { stdio: 'inherit' });
  const site = path.join(opts.dir, 'smartread-http-bench');
  const sets = makeSite(site);
  const trials = [
    ['small-file mix', sets.small, (url, files) => loadSmall(url, files)],
    ['large files', sets.large, (url, files) => loadLarge(url, files, Math.min(connections, 4))],
  ];
  const report = { when: new Date().toISOString(), node: process.version, cpus: os.cpus().length, cpu: os.cpus()[0]?.model,
    kernel: os.release(), options: opts, trials: [] };
  for (const [trial, files, load] of trials) {
    const runs = { smartread: [], fs: [] };
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? ['fs', 'smartread'] : ['smartread', 'fs'];
      for (const backend of order) {
        const { url, child } = await startServer(backend, site);
        try {
          await checkServes(url, site, files.slice(0, 50));
          const res = await load(url, files);
          if (res.failures) throw new Error(`${backend}: ${res.failures} requests failed`);
          runs[backend].push(res);
          process.stdout.write(`  ${trial}, round ${r + 1}, ${backend}: ${Math.round(res.requestsPerSec)} req/s, p99 ${res.latencyMs.p99.toFixed(1)} ms\n`);
        } finally {
          await stopServer(child);
        }
      }
    }
    const mean = (xs, f) => xs.reduce((a, x) => a + f(x), 0) / xs.length;
    const summary = {};
    for (const backend of ['fs', 'smartread']) {
      summary[backend] = {
        requestsPerSec: mean(runs[backend], (x) => x.requestsPerSec),
        p50: mean(runs[backend], (x) => x.latencyMs.p50),
        p99: mean(runs[backend], (x) => x.latencyMs.p99),
        mbPerSec: mean(runs[backend], (x) => x.bytesPerSec) / 1e6,
      };
    }
    const ratio = summary.smartread.requestsPerSec / summary.fs.requestsPerSec;
    report.trials.push({ trial, files: files.length, runs, summary, ratio });
  }
  process.stdout.write(`\nstatic server: small files ${connections} connections (autocannon), large files ${Math.min(connections, 4)} (node:http); ` +
    `${seconds} s × ${rounds} rounds per backend; ${process.version}, ${os.cpus().length} cores\n`);
  process.stdout.write('trial            server      req/s    MB/s   p50 ms   p99 ms   vs fs\n');
  for (const t of report.trials) {
    for (const backend of ['fs', 'smartread']) {
      const s = t.summary[backend];
      process.stdout.write(`${t.trial.padEnd(16)} ${backend.padEnd(9)} ${Math.round(s.requestsPerSec).toString().padStart(7)} ${s.mbPerSec.toFixed(0).padStart(7)} ` +
        `${s.p50.toFixed(1).padStart(8)} ${s.p99.toFixed(1).padStart(8)}   ${backend === 'fs' ? '1.00×' : t.ratio.toFixed(2) + '×'}\n`);
    }
  }
  if (opts.json) fs.writeFileSync(opts.json, JSON.stringify(report, null, 2));
  fs.rmSync(site, { recursive: true, force: true });
}

main().catch((err) => {
  process.stderr.write(`bench:http: ${err.stack}\n`);
  process.exit(1);
});
