// The write bench's peers (--peers): Bun, installed from the npm registry on first use by the
// read bench's installer (peers.js: the same cache directory, the same pinned version), and the
// C program of the machine's limits (--limits), compiled on first use. Never by the package's
// own install. Each timed run of a peer driver is one process (write_peer_runner.js) that times
// its own operations; its start-up is not timed.
'use strict';
const { execFile } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { promisify } = require('node:util');
const { cacheDir, installRuntime, PEER_RUNTIMES } = require('./peers');

const execFileAsync = promisify(execFile);

const BUN = PEER_RUNTIMES.find((runtime) => runtime.name === 'Bun');
const RUNNER = path.join(__dirname, 'write_peer_runner.js');
const LIMITS_SOURCE = path.join(__dirname, 'write_limits.c');

/** Bun's binary, installed if missing: { binary, version }; throws with the reason otherwise. */
async function prepareBun(progress = () => {}) {
  const { binary } = await installRuntime(BUN, cacheDir(), progress);
  const { stdout } = await execFileAsync(binary, ['--version']);
  return { binary, version: stdout.trim() };
}

/** One timed run of a Bun driver: { samples (ms), error }. */
async function runBun(bun, request) {
  try {
    const { stdout } = await execFileAsync(bun.binary, [RUNNER, JSON.stringify(request)], {
      maxBuffer: 16 << 20,
      env: { ...process.env, ...BUN.env(cacheDir()) },
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

module.exports = { prepareBun, runBun, prepareLimits, runLimits };
