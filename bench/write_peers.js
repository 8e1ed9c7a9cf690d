// The write bench's peers (--peers): Bun, installed from the npm registry on first use, and the
// C program of the machine's limits (--limits), compiled on first use. A stand-in for the read
// bench's peer runner (bench/peers.js on the bench-peers branch), whose installer and cache it
// follows, until the two are merged: the same cache directory, the same pinned Bun.
//
// Bun goes into the cache directory ($SMARTREAD_BENCH_CACHE, else
// $XDG_CACHE_HOME/smartread-bench, else ~/.cache/smartread-bench; outside node_modules, so
// that `npm ci` keeps it) and is reused by later runs; never by the package's own install. Its
// binary comes in an optional dependency for the platform (@oven/bun-linux-x64, ...), taken
// from where it lies (the install runs no scripts). Each timed run of a peer driver is one
// process (write_peer_runner.js) that times its own operations; its start-up is not timed.
'use strict';
const { execFile } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { promisify } = require('node:util');

const execFileAsync = promisify(execFile);

const BUN_VERSION = '1.4.4';
const RUNNER = path.join(__dirname, 'write_peer_runner.js');
const LIMITS_SOURCE = path.join(__dirname, 'write_limits.c');

/** Where peers are installed and the C program is compiled. */
function cacheDir(env = process.env) {
  if (env.SMARTREAD_BENCH_CACHE) return path.resolve(env.SMARTREAD_BENCH_CACHE);
  return path.join(env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'smartread-bench');
}

function bunBinaryIn(prefix) {
  const scope = path.join(prefix, 'node_modules', '@oven');
  let names;
  try {
    names = fs.readdirSync(scope).filter((n) => n.startsWith(`bun-${process.platform}-${os.arch()}`)).sort();
  } catch {
    return null;
  }
  for (const name of names) {
    const binary = path.join(scope, name, 'bin', 'bun');
    if (fs.existsSync(binary)) return binary;
  }
  return null;
}

/** Bun's binary, installed if missing: { binary, version }; throws with the reason otherwise. */
async function prepareBun(progress = () => {}) {
  const prefix = path.join(cacheDir(), 'peers', `bun-${BUN_VERSION}`);
  let binary = bunBinaryIn(prefix);
  if (!binary) {
    progress(`installing bun@${BUN_VERSION} into ${prefix}\n`);
    fs.mkdirSync(prefix, { recursive: true });
    try {
      await execFileAsync('npm', ['install', '--prefix', prefix, '--no-save', '--ignore-scripts', '--no-audit', '--no-fund',
        `bun@${BUN_VERSION}`], { maxBuffer: 16 << 20 });
    } catch (err) {
      const line = `${err.stderr ?? ''}`.split('\n').find((l) => l.includes('npm error')) ?? err.message;
      throw new Error(`npm install bun@${BUN_VERSION} failed: ${line.trim()}`);
    }
    binary = bunBinaryIn(prefix);
    if (!binary) throw new Error(`npm installed bun@${BUN_VERSION}, but no binary for ${process.platform}-${os.arch()} came with it`);
  }
  const { stdout } = await execFileAsync(binary, ['--version']);
  return { binary, version: stdout.trim() };
}

/** One timed run of a Bun driver: { samples (ms), error }. */
async function runBun(bun, request) {
  try {
    const { stdout } = await execFileAsync(bun.binary, [RUNNER, JSON.stringify(request)], {
      maxBuffer: 16 << 20,
      // No transpiler cache in ~/.bun.
      env: { ...process.env, BUN_RUNTIME_TRANSPILER_CACHE_PATH: '0' },
    });
    return JSON.parse(stdout.trim().split('\n').pop());
  } catch (err) {
    return { samples: [], error: `bun failed: ${`${err.stderr ?? err.message}`.trim().split('\n')[0]}` };
  }
}

/** The C program of the limits, compiled if missing (or older than its source): its path. */
async function prepareLimits(progress = () => {}) {
  const dir = path.join(cacheDir(), 'limits');
  const binary = path.join(dir, 'write_limits');
  const built = fs.statSync(binary, { throwIfNoEntry: false });
  if (built && built.mtimeMs >= fs.statSync(LIMITS_SOURCE).mtimeMs) return binary;
  fs.mkdirSync(dir, { recursive: true });
  progress(`compiling ${path.basename(LIMITS_SOURCE)} into ${dir}\n`);
  try {
    await execFileAsync(process.env.CC || 'cc', ['-O2', '-std=gnu11', '-Wall', '-o', binary, LIMITS_SOURCE, '-luring', '-lpthread']);
  } catch (err) {
    throw new Error(`cc ${path.basename(LIMITS_SOURCE)} -luring failed: ${`${err.stderr ?? err.message}`.trim().split('\n')[0]}`);
  }
  return binary;
}

/** One timed run of a C mode: { samples (ms), error }. */
async function runLimits(binary, request) {
  const s = request.sizes;
  try {
    const { stdout } = await execFileAsync(binary, [request.kind, request.mode, request.scratch, String(request.operations),
      String(s.files), String(s.dirs), String(s.fileSize), String(s.nested), String(s.depth), String(s.large)], { maxBuffer: 16 << 20 });
    return JSON.parse(stdout.trim().split('\n').pop());
  } catch (err) {
    return { samples: [], error: `write_limits failed: ${`${err.stderr ?? err.message}`.trim().split('\n')[0]}` };
  }
}

module.exports = { cacheDir, prepareBun, runBun, prepareLimits, runLimits };
