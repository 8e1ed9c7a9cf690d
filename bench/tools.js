#!/usr/bin/env node
// `npm run bench:tools`: real programs that read many files, each run as it is and again under
// `node --import smartread/register`, with no other change. Their outputs must be byte-identical
// (the run fails otherwise); what is printed is the wall time of each, and their ratio, from this
// one run: the median of --rounds runs of each, plain and register alternating (noisy on a shared
// machine: a ratio near 1.00x means the tool is not bound by its reads).
// The register runs also report what smartread served (metrics(), by engine).
//
//   tsc          the TypeScript compiler over this repository (tsc -p tsconfig.json, emitting
//                into two directories that are then compared)
//   tsc-types    the TypeScript compiler checking a larger tree of declarations from
//                node_modules (@types/node, fastify, @fastify/view, rollup, fast-check, typescript)
//   rollup       Rollup bundling fast-check's ES modules (235 files, read with
//                fs.promises.readFile) into one file
//   fastify-view a fastify server rendering EJS pages with @fastify/view in development mode,
//                which reads the template with fs.promises.readFile on every request, under
//                autocannon (requests/s; the response bodies are compared)
//
//   node bench/tools.js [--only tsc,rollup] [--rounds 3] [--seconds 5] [--connections 32]
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { parseArgs } = require('node:util');
const autocannon = require('autocannon');

const root = path.resolve(__dirname, '..');
const { values: opts } = parseArgs({
  options: {
    only: { type: 'string' },
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '32' },
  },
});
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'smartread-bench-tools-'));
const reporter = path.join(root, 'test', 'node-compat', 'report-reads.js');
const registerArgs = ['--import', 'smartread/register', '--require', reporter];

const rounds = Number(opts.rounds);
if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds wants a whole number from 1, not ${opts.rounds}`);
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)];

function bin(pkg, name) {
  const dir = path.join(root, 'node_modules', pkg);
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  return path.join(dir, typeof manifest.bin === 'string' ? manifest.bin : manifest.bin[name]);
}

// Runs node with `args` from the repository's root; resolves with its output, wall time and,
// under register, the reads smartread served. A non-zero exit rejects.
function runNode(args, { register, env = {} }) {
  const readsFile = path.join(work, `reads-${process.hrtime.bigint()}.jsonl`);
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, [...(register ? registerArgs : []), ...args], {
      cwd: root,
      env: { ...process.env, ...env, SMARTREAD_COMPAT_READS: readsFile },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out = [];
    const err = [];
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => err.push(d));
    child.on('close', (code) => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      if (code !== 0) {
        reject(new Error(`node ${args.join(' ')} exited ${code}:\n${Buffer.concat(err)}${Buffer.concat(out)}`));
        return;
      }
      resolve({ stdout: Buffer.concat(out), stderr: Buffer.concat(err), seconds, reads: readsOf(readsFile) });
    });
  });
}

function readsOf(file) {
  if (!fs.existsSync(file)) return null;
  const reads = {};
  for (const line of fs.readFileSync(file, 'utf8').trim().split('\n')) {
    for (const [by, n] of Object.entries(JSON.parse(line).reads)) if (n > 0) reads[by] = (reads[by] ?? 0) + n;
  }
  return reads;
}

// Every file under `dir`, relative, with its bytes.
function treeOf(dir) {
  const files = new Map();
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath ?? entry.path, entry.name);
    files.set(path.relative(dir, full), fs.readFileSync(full));
  }
  return files;
}

function sameTree(a, b) {
  const ta = treeOf(a);
  const tb = treeOf(b);
  if (ta.size !== tb.size || ta.size === 0) return false;
  for (const [name, bytes] of ta) if (!tb.get(name)?.equals(bytes)) return false;
  return true;
}

// `rounds` runs of `runOnce(register, round)`, plain and under register alternating, each pair's
// outputs compared by `same(plain, registered)`: { plain, registered (the runs' results), identical }.
async function alternating(runOnce, same) {
  const plain = [];
  const registered = [];
  let identical = true;
  for (let round = 0; round < rounds; round++) {
    const a = await runOnce(false, round);
    const b = await runOnce(true, round);
    identical = identical && same(a, b);
    plain.push(a);
    registered.push(b);
  }
  return { plain, registered, identical };
}

// A tool run once to warm the caches, then alternating() runs of it; the medians of the times.
async function timeTool(name, what, makeArgs, compare) {
  await runNode(makeArgs('warm'), { register: false });
  const { plain, registered, identical } = await alternating(
    (register) => runNode(makeArgs(register ? 'register' : 'plain'), { register }), compare);
  const seconds = (runs) => median(runs.map((r) => r.seconds));
  return { name, what, plain: seconds(plain), register: seconds(registered), identical, reads: registered.at(-1).reads, unit: 's' };
}

const tools = {
  tsc: () => timeTool('tsc', 'tsc -p tsconfig.json over this repository, emitting',
    (tag) => [bin('typescript', 'tsc'), '-p', 'tsconfig.json', '--outDir', path.join(work, `tsc-${tag}`)],
    (a, b) => a.stdout.equals(b.stdout) && sameTree(path.join(work, 'tsc-plain'), path.join(work, 'tsc-register'))),

  'tsc-types': () => {
    const project = path.join(work, 'tsconfig.types.json');
    // The entry points; the compiler finds and checks the rest of each package's declarations.
    const declarations = [
      'node_modules/@types/node/index.d.ts', 'node_modules/fastify/fastify.d.ts', 'node_modules/@fastify/view/types/index.d.ts',
      'node_modules/rollup/dist/rollup.d.ts', 'node_modules/fast-check/lib/types/fast-check.d.ts', 'node_modules/typescript/lib/typescript.d.ts',
    ];
    fs.writeFileSync(project, JSON.stringify({
      compilerOptions: {
        noEmit: true, strict: true, esModuleInterop: true, types: [], lib: ['es2022', 'dom'],
        moduleResolution: 'node16', module: 'node16', target: 'es2022',
      },
      files: declarations.map((d) => path.join(root, d)),
    }));
    return timeTool('tsc-types', 'tsc --noEmit --listFiles checking the declarations of @types/node, fastify, @fastify/view, rollup, fast-check and typescript',
      () => [bin('typescript', 'tsc'), '-p', project, '--listFiles'],
      (a, b) => a.stdout.equals(b.stdout) && a.stdout.length > 0);
  },

  rollup: () => {
    const config = path.join(work, 'rollup.config.mjs');
    fs.writeFileSync(config, `export default {
  input: ${JSON.stringify(path.join(root, 'node_modules/fast-check/lib/esm/fast-check.js'))},
  external: (id) => !id.startsWith('.') && !id.startsWith('/'),
  output: { file: process.env.ROLLUP_OUT, format: 'es' },
};\n`);
    return timeTool('rollup', 'rollup bundling fast-check\'s 235 ES modules',
      (tag) => {
        process.env.ROLLUP_OUT = path.join(work, `rollup-${tag}.js`);
        return [bin('rollup', 'rollup'), '-c', config, '--silent'];
      },
      () => fs.readFileSync(path.join(work, 'rollup-plain.js')).equals(fs.readFileSync(path.join(work, 'rollup-register.js'))));
  },

  'fastify-view': async () => {
    const server = path.join(__dirname, 'tools-fastify-view.js');
    const pages = ['/page/0', '/page/7', '/page/19'];
    const measure = async (register, round) => {
      const child = spawn(process.execPath, [...(register ? registerArgs : []), server], {
        cwd: root,
        env: { ...process.env, SMARTREAD_COMPAT_READS: path.join(work, `reads-fastify-${register}-${round}.jsonl`) },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const port = await new Promise((resolve, reject) => {
        child.stdout.once('data', (d) => resolve(Number(String(d).trim())));
        child.once('exit', (code) => reject(new Error(`the fastify server exited ${code}`)));
      });
      try {
        const bodies = [];
        for (const page of pages) bodies.push(Buffer.from(await (await fetch(`http://127.0.0.1:${port}${page}`)).arrayBuffer()));
        const result = await autocannon({
          url: `http://127.0.0.1:${port}`,
          connections: Number(opts.connections),
          duration: Number(opts.seconds),
          requests: pages.map((p) => ({ method: 'GET', path: p })),
        });
        if (result.non2xx > 0 || result.errors > 0) throw new Error(`fastify-view: ${result.non2xx} non-2xx responses, ${result.errors} errors`);
        return { rps: result.requests.average, bodies };
      } finally {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
    };
    const { plain, registered, identical } = await alternating(measure,
      (a, b) => a.bodies.every((body, i) => body.equals(b.bodies[i]) && body.length > 0));
    const rps = (runs) => median(runs.map((r) => r.rps));
    return {
      name: 'fastify-view', what: `fastify + @fastify/view (EJS, development mode) under autocannon, ${opts.connections} connections, ${opts.seconds} s`,
      plain: rps(plain), register: rps(registered), identical, reads: readsOf(path.join(work, `reads-fastify-true-${rounds - 1}.jsonl`)), unit: 'req/s',
    };
  },
};

(async () => {
  const names = opts.only ? opts.only.split(',') : Object.keys(tools);
  console.log(`bench:tools on node ${process.version}, ${os.cpus().length} CPUs; each tool plain, then under --import smartread/register`);
  const results = [];
  let failed = false;
  try {
    for (const name of names) {
      if (!tools[name]) throw new Error(`no tool named ${name} (${Object.keys(tools).join(', ')})`);
      const r = await tools[name]();
      results.push(r);
      // Time: plain / register (above 1 the register run was faster); requests/s: register / plain.
      const ratio = r.unit === 's' ? r.plain / r.register : r.register / r.plain;
      const fmt = (v) => (r.unit === 's' ? `${v.toFixed(2)} s` : `${Math.round(v)} req/s`);
      const served = r.reads ? Object.entries(r.reads).map(([by, n]) => `${by} ${n}`).join(', ') : 'no report';
      console.log(`${r.identical ? 'identical' : 'DIFFERENT'}  ${r.name.padEnd(13)} plain ${fmt(r.plain).padStart(12)}  register ${fmt(r.register).padStart(12)}  ${ratio.toFixed(2)}x  (${r.what}; smartread served: ${served})`);
      if (!r.identical) failed = true;
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  if (failed) {
    console.log('bench:tools: outputs differ between plain node and register');
    process.exit(1);
  }
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
