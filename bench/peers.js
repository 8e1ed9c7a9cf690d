// The bench's peers (--peers): Bun and Deno, and a C loop, as drivers of the same trials.
//
// Bun and Deno come from the npm registry, pinned (PEER_RUNTIMES), installed on first use into
// the cache directory (cacheDir(): $SMARTREAD_BENCH_CACHE, else $XDG_CACHE_HOME/smartread-bench,
// else ~/.cache/smartread-bench; outside node_modules, so that `npm ci` keeps them) and reused
// by later runs; never by the package's own install. The C driver (c_read_loop.c) is compiled
// there too, once per source and compiler. Each runs as one process for the whole run, started
// here and driven over stdin and stdout (peer_runner.js says the protocol): the bench sends it a
// trial's paths, asks it to read them once (a digest per file, checked against the baseline's
// result) and to time a reader, and gets the latency samples back, so that its rounds take
// their place in the bench's ABBA order like any other driver's. Whatever cannot be installed,
// compiled or started makes its drivers skipped, with the reason, and the run goes on.
'use strict';
const { spawn, execFile } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');
const { pathToFileURL } = require('node:url');
const { promisify } = require('node:util');
const zlib = require('node:zlib');
const { IN_FLIGHT } = require('./in_flight');
const { CpuRecorder } = require('./resources');

const execFileAsync = promisify(execFile);

const RUNNER = path.join(__dirname, 'peer_runner.js');
const C_SOURCE = path.join(__dirname, 'c_read_loop.c');
const C_FLAGS = ['-O2', '-std=gnu11', '-Wall', '-Wextra', '-pthread'];

/** Where the peers are installed and the C driver is compiled. */
function cacheDir(env = process.env) {
  if (env.SMARTREAD_BENCH_CACHE) return path.resolve(env.SMARTREAD_BENCH_CACHE);
  return path.join(env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'smartread-bench');
}

// The versions BASELINES.md was measured with. Each package's binary comes in an optional
// dependency for the platform (@oven/bun-linux-x64, @deno/linux-x64-glibc, ...). Their install
// scripts only move that binary into place (Bun's would download it from GitHub when the
// optional dependency is missing), so the install runs no scripts and the binary is taken from
// the platform package where it lies.
const PEER_RUNTIMES = [
  {
    name: 'Bun',
    package: 'bun',
    version: '1.4.4',
    binaryIn: (modules) => platformBinary(path.join(modules, '@oven'), `bun-${process.platform}-${os.arch()}`, ['bin', 'bun']),
    args: (tinybench) => [RUNNER, tinybench],
    // Bun keeps a transpiler cache in ~/.bun unless told otherwise: "0" turns it off.
    env: () => ({ BUN_RUNTIME_TRANSPILER_CACHE_PATH: '0' }),
  },
  {
    name: 'Deno',
    package: 'deno',
    version: '2.9.6',
    binaryIn: (modules) => platformBinary(path.join(modules, '@deno'), `${process.platform}-${os.arch()}`, ['deno']),
    args: (tinybench) => ['run', '--allow-all', '--no-lock', '--v8-flags=--expose-gc', RUNNER, tinybench],
    // Deno's module and code caches go into the bench's cache too, and it asks no server
    // whether it is the latest release.
    env: (cache) => ({ DENO_DIR: path.join(cache, 'peers', 'deno-dir'), DENO_NO_UPDATE_CHECK: '1', DENO_NO_PROMPT: '1' }),
  },
];

/** The first directory under `scope` named `prefix`… that holds `file`, as a path, or null. */
function platformBinary(scope, prefix, file) {
  let names;
  try {
    names = fs.readdirSync(scope).filter((n) => n.startsWith(prefix)).sort();
  } catch {
    return null;
  }
  for (const name of names) {
    const binary = path.join(scope, name, ...file);
    if (fs.existsSync(binary)) return binary;
  }
  return null;
}

// The drivers, two per reader: one file per operation, and every file of a many-files trial
// per operation (a loop of a sync reader, IN_FLIGHT in flight of an async one); a reader without
// `files` has the first only. `cold` drivers run in the cold trials too, `coldOnly` ones only
// there, `consumeOnly` ones only in the +consume trials (drivers.js).
const PEER_READERS = [
  { peer: 'Bun', reader: 'readFileSync', file: 'Bun readFileSync', files: 'Bun readFileSync loop', async: false },
  { peer: 'Bun', reader: 'fs.promises.readFile', file: 'Bun fs.promises.readFile', files: `Bun fs.promises.readFile ×${IN_FLIGHT}`, async: true, cold: true },
  { peer: 'Bun', reader: 'Bun.file().bytes()', file: 'Bun.file().bytes()', files: `Bun.file().bytes() ×${IN_FLIGHT}`, async: true, cold: true },
  { peer: 'Bun', reader: 'freshCopy', file: 'Bun new Buffer + copy (no read)', files: null, async: false },
  { peer: 'Bun', reader: 'preloaded', file: 'Bun consume only (no read)', files: null, async: false, consumeOnly: true },
  { peer: 'Deno', reader: 'Deno.readFileSync', file: 'Deno.readFileSync', files: 'Deno.readFileSync loop', async: false },
  { peer: 'Deno', reader: 'Deno.readFile', file: 'Deno.readFile', files: `Deno.readFile ×${IN_FLIGHT}`, async: true, cold: true },
  { peer: 'C', reader: 'read', file: 'C read', files: 'C read loop', async: false, cold: true },
  // The same from every CPU at once (one thread each; one file in chunks): warm, the most a
  // reader can make of this machine's CPUs; and, from the thread it keeps beside them, how long
  // the machine keeps a waking thread (an event loop) from running meanwhile (its loop max/p99).
  { peer: 'C', reader: 'threads', file: 'C read, every CPU', files: 'C read, every CPU', async: false },
  // The device's limit for a batch reader at the same depth, so in the cold trials only (warm,
  // its malloc'd buffers and io_uring's own path make it no limit of anything); on a mount whose
  // opens ask a server, with those opens on io_uring's workers (c_read_loop.c). Built where
  // liburing is (compileCDriver): otherwise skipped, with the reason.
  { peer: 'C', reader: 'uring', file: null, files: `C io_uring ×${IN_FLIGHT}`, async: false, cold: true, coldOnly: true, needs: 'uring' },
  // Of one file, warm too: the least an io_uring reader does for it (sized, then read in one
  // chain and waited for, c_read_loop.c), against 'C read': where io_uring hands a read to a
  // worker (overlayfs, FUSE), what the hop and the wake-up cost any reader that does not wait on
  // the calling thread, whatever it is written in.
  { peer: 'C', reader: 'uring', file: 'C io_uring', files: null, async: false, cold: true, needs: 'uring' },
];

const STDERR_KEPT = 4000;

/**
 * One peer process, started with start(), driven by request(): a command line out, JSON lines
 * back. A line {"evict":...} in the middle of a request is the peer asking for the current
 * context's eviction (setContext's `evict`); it is answered 'evicted' or 'stop REASON'.
 */
class PeerProcess {
  constructor(name, command, args, env = {}) {
    this.name = name;
    this.command = command;
    this.args = args;
    this.env = env;
    this.child = null;
    this.pending = null;
    this.exited = null;
    this.stderr = '';
    this.evict = null;
    this.daemonPid = null;
    // Counts a cold run's CPU ticks while it is timed (time()).
    this.cpu = null;
    // The peer's {"ready":true,...} line: its runtime, version, gc and loopStall.
    this.ready = null;
  }

  /** Starts the process; resolves with its {"ready":true,...} line. */
  start() {
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject, ready: true };
      this.child = spawn(this.command, this.args, {
        env: { ...process.env, ...this.env },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      // A process that could not be spawned emits no 'exit': it is over all the same.
      this.child.on('error', (err) => {
        this.exited = `${this.name} did not start: ${err.message}`;
        this.fail(new Error(this.exited));
      });
      this.child.stdin.on('error', () => {});
      this.child.stderr.setEncoding('utf8').on('data', (chunk) => {
        this.stderr = (this.stderr + chunk).slice(-STDERR_KEPT);
      });
      readline.createInterface({ input: this.child.stdout, crlfDelay: Infinity }).on('line', (line) => this.receive(line));
      this.child.on('exit', (code, signal) => {
        const why = signal ? `signal ${signal}` : `exit code ${code}`;
        this.exited = `${this.name} ended (${why})${this.stderr.trim() ? `: ${this.stderr.trim().split('\n').slice(-5).join(' / ')}` : ''}`;
        this.fail(new Error(this.exited));
      });
    });
  }

  fail(err) {
    const pending = this.pending;
    this.pending = null;
    pending?.reject(err);
  }

  receive(line) {
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      this.fail(new Error(`${this.name} wrote a line that is not JSON: ${line.slice(0, 200)}`));
      return;
    }
    // An operation of a cold run ends where the peer asks for the next eviction, or answers.
    this.cpu?.stop();
    if (message.evict) {
      this.answerEviction(message.checkAll);
      return;
    }
    const pending = this.pending;
    this.pending = null;
    if (!pending) return;
    if (pending.ready ? message.ready : message.ok) pending.resolve(message);
    else pending.reject(new Error(message.error ?? `unexpected answer: ${line.slice(0, 200)}`));
  }

  answerEviction(checkAll) {
    let answer = 'evicted';
    try {
      if (!this.evict) throw new Error('the bench has no eviction for this trial');
      this.evict(checkAll);
    } catch (err) {
      answer = `stop ${err.message.replace(/\n/g, ' ')}`;
    }
    if (answer === 'evicted') this.cpu?.start();
    this.child.stdin.write(`${answer}\n`);
  }

  request(line) {
    if (this.exited) return Promise.reject(new Error(this.exited));
    if (this.pending) return Promise.reject(new Error(`${this.name}: a request is still in progress`));
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject, ready: false };
      this.child.stdin.write(`${line}\n`);
    });
  }

  /**
   * The trial the next requests are about: its paths (in `pathsFile`, see writePathsFile), the
   * shape and consumption, and for a cold trial evict(checkAll), called before each operation,
   * and the pid of the daemon that serves the files, if any (see time()).
   */
  setContext({ shape, consumeAll, pathsFile, evict = null, daemonPid = null }) {
    this.evict = evict;
    this.daemonPid = daemonPid;
    return this.request(`context ${shape} ${consumeAll ? 'all' : 'page'} ${pathsFile}`);
  }

  /** One untimed read: { algorithm, lengths, digests }. */
  verify(reader) {
    return this.request(`verify ${reader}`);
  }

  /**
   * One timed run (timing.js's runTiming): { samples, resources, loopStall, cpu }; for a cold
   * run, `cpu` holds the CPU ticks of its operations (resources.js CpuRecorder: the machine's,
   * this peer's and the daemon's), counted here from each eviction's answer to the peer's next
   * line, else null.
   */
  async time(reader, timing, cold) {
    const { time, iterations, warmupTime, warmupIterations } = timing;
    this.cpu = cold ? new CpuRecorder({ reader: this.child.pid, daemon: this.daemonPid }) : null;
    try {
      const { samples, resources, loopStall } = await this.request(`time ${reader} ${time} ${iterations} ${warmupTime} ${warmupIterations} ${cold ? 1 : 0}`);
      return { samples, resources, loopStall, cpu: this.cpu?.result() ?? null };
    } finally {
      this.cpu = null;
    }
  }

  /** Ends the process: stdin closes, and it exits; killed if it has not within `graceMs`. */
  async close(graceMs = 5000) {
    if (!this.child || this.exited) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  }
}

/** Writes `paths` into `file`, each ended by a NUL byte (no path can hold one). */
function writePathsFile(file, paths) {
  fs.writeFileSync(file, paths.map((p) => `${p}\0`).join(''));
  return file;
}

const digestOf = {
  sha1: (bytes) => crypto.createHash('sha1').update(bytes).digest('hex'),
  crc32: (bytes) => zlib.crc32(bytes).toString(16).padStart(8, '0'),
};

/**
 * Why a peer's { algorithm, lengths, digests } is not the baseline's result (a Buffer, or one
 * per file), or null when every length and digest matches.
 */
function digestMismatch(expected, answer, paths) {
  const buffers = Array.isArray(expected) ? expected : [expected];
  const digest = digestOf[answer.algorithm];
  if (!digest) return `unknown digest ${answer.algorithm}`;
  if (answer.lengths.length !== buffers.length) return `${answer.lengths.length} results for ${buffers.length} files`;
  for (let i = 0; i < buffers.length; i++) {
    const where = Array.isArray(expected) ? `${path.basename(paths[i])}: ` : '';
    if (answer.lengths[i] !== buffers[i].length) return `${where}${answer.lengths[i]} bytes instead of ${buffers[i].length}`;
    if (answer.digests[i] !== digest(buffers[i])) return `${where}right length, different bytes (${answer.algorithm} differs)`;
  }
  return null;
}

/** The tinybench module the bench runs, as a URL any runtime's import() takes. */
function tinybenchUrl() {
  return pathToFileURL(require.resolve('tinybench')).href;
}

/**
 * What npm's error output says went wrong, in one line: its error code and its first line that
 * is not a detail of it ("ECONNREFUSED: FetchError: request to … failed"), or null.
 */
function npmFailure(stderr) {
  const lines = stderr.split('\n').map((l) => /^npm (?:error|ERR!) (.*)/.exec(l)?.[1]).filter(Boolean);
  const code = lines.find((l) => l.startsWith('code '))?.slice(5);
  const what = lines.find((l) => !/^(code|syscall|errno|path) |^\s+at |^A complete log|^\s*$/.test(l));
  if (!code && !what) return null;
  return [code, what].filter(Boolean).join(': ');
}

/** Runs npm to install `name@version` in a directory of its own; resolves, or rejects with npm's error. */
async function npmInstall(dir, name, version) {
  fs.writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify({ private: true, dependencies: { [name]: version } }, null, 2)}\n`);
  try {
    await execFileAsync('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--no-update-notifier'], {
      cwd: dir,
      maxBuffer: 16 << 20,
    });
  } catch (err) {
    throw new Error(`npm install ${name}@${version} failed: ${npmFailure(`${err.stderr ?? ''}`) ?? err.message}`);
  }
}

/**
 * The binary of a peer runtime, installed into the cache on first use: a directory per package
 * and version, made in a temporary directory and renamed into place, so that an interrupted or
 * concurrent install (two test files at once) never leaves a half one. Returns
 * { binary, installedMs } (0 when it was there already).
 */
async function installRuntime(runtime, cache, progress = () => {}) {
  const peersDir = path.join(cache, 'peers');
  const dir = path.join(peersDir, `${runtime.package}-${runtime.version}`);
  const installed = () => runtime.binaryIn(path.join(dir, 'node_modules'));
  const existing = installed();
  if (existing) return { binary: existing, installedMs: 0 };
  const started = performance.now();
  progress(`peer ${runtime.name}: installing ${runtime.package}@${runtime.version} from the npm registry into ${dir}\n`);
  fs.mkdirSync(peersDir, { recursive: true });
  const building = fs.mkdtempSync(path.join(peersDir, `.${runtime.package}-${runtime.version}-`));
  try {
    await npmInstall(building, runtime.package, runtime.version);
    if (!runtime.binaryIn(path.join(building, 'node_modules'))) {
      throw new Error(`npm installed ${runtime.package}@${runtime.version}, but no binary for ${process.platform}-${os.arch()} came with it`);
    }
    // A damaged install (no binary) is replaced; one that another process finished first is kept.
    if (fs.existsSync(dir) && !installed()) fs.rmSync(dir, { recursive: true, force: true });
    try {
      fs.renameSync(building, dir);
    } catch (err) {
      if (!['ENOTEMPTY', 'EEXIST'].includes(err.code) || !installed()) throw err;
    }
  } finally {
    fs.rmSync(building, { recursive: true, force: true });
  }
  return { binary: installed(), installedMs: performance.now() - started };
}

/** The compiler's first line of --version, or throws why there is none. */
async function compilerVersion(compiler) {
  try {
    const { stdout } = await execFileAsync(compiler, ['--version']);
    return stdout.split('\n')[0].trim();
  } catch (err) {
    throw new Error(err.code === 'ENOENT' ? `no C compiler (${compiler}) on PATH` : `${compiler} --version failed: ${err.message}`);
  }
}

/**
 * liburing's compiler and linker flags where pkg-config finds it (the C driver's 'uring' reader
 * is built only then), else null.
 */
async function liburingFlags() {
  try {
    const [cflags, libs] = await Promise.all(['--cflags', '--libs'].map((o) => execFileAsync('pkg-config', [o, 'liburing'])));
    return { cflags: cflags.stdout.trim().split(/\s+/).filter(Boolean), libs: libs.stdout.trim().split(/\s+/).filter(Boolean) };
  } catch {
    return null;
  }
}

/**
 * The C driver's binary: c_read_loop.c compiled with $CC (else cc) and C_FLAGS (and liburing,
 * where pkg-config finds it) into the cache, named by a hash of the source, the compiler and
 * the flags, so that a change to any of them compiles it again. Returns { binary, compiler,
 * flags, uring (whether it has the 'uring' reader), compiledMs }.
 */
async function compileCDriver(cache) {
  if (!fs.existsSync(C_SOURCE)) throw new Error(`${C_SOURCE} is not in this copy of the bench`);
  if (typeof zlib.crc32 !== 'function') throw new Error(`its results are checked with zlib.crc32, which node ${process.version} lacks (20.15 and later have it)`);
  const compiler = process.env.CC || 'cc';
  const version = await compilerVersion(compiler);
  const uring = await liburingFlags();
  const flags = uring ? [...C_FLAGS, '-DHAVE_LIBURING', ...uring.cflags] : C_FLAGS;
  const libs = uring ? uring.libs : [];
  const source = fs.readFileSync(C_SOURCE);
  const hash = crypto.createHash('sha1').update(source).update(`\0${compiler}\0${version}\0${flags.join(' ')}\0${libs.join(' ')}`).digest('hex').slice(0, 12);
  const dir = path.join(cache, 'c-read-loop');
  const binary = path.join(dir, `c_read_loop-${hash}`);
  const described = { binary, compiler, compilerVersion: version, flags: [...flags, ...libs].join(' '), uring: Boolean(uring) };
  if (fs.existsSync(binary)) return { ...described, compiledMs: 0 };
  const started = performance.now();
  fs.mkdirSync(dir, { recursive: true });
  const building = `${binary}.${process.pid}.tmp`;
  try {
    await execFileAsync(compiler, [...flags, '-o', building, C_SOURCE, ...libs]);
    fs.renameSync(building, binary);
  } catch (err) {
    throw new Error(`${compiler} could not compile ${path.basename(C_SOURCE)}: ${(err.stderr || err.message).trim().split('\n').slice(0, 3).join(' / ')}`);
  } finally {
    fs.rmSync(building, { force: true });
  }
  return { ...described, compiledMs: performance.now() - started };
}

/** Starts a peer process and waits for its ready line; the process, or throws why not. */
async function startPeer(name, command, args, env) {
  const peer = new PeerProcess(name, command, args, env);
  try {
    peer.ready = await peer.start();
  } catch (err) {
    await peer.close(0);
    throw err;
  }
  return peer;
}

/**
 * Installs, compiles and starts the peers. Returns { drivers, info, close() }: the drivers in
 * drivers.js's terms plus { peer, reader, remote } (remote: the PeerProcess, or null when the
 * peer is skipped, and available() says why); info for the reports; close() ends the processes.
 */
async function preparePeers({ cache = cacheDir(), progress = () => {} } = {}) {
  const started = performance.now();
  const tinybench = tinybenchUrl();
  const setUps = PEER_RUNTIMES.map(async (runtime) => {
    const { binary, installedMs } = await installRuntime(runtime, cache, progress);
    const remote = await startPeer(runtime.name, binary, runtime.args(tinybench), runtime.env(cache));
    return { remote, described: { binary, installedMs, pinned: `${runtime.package}@${runtime.version}` } };
  });
  setUps.push((async () => {
    const { compiledMs, ...compiled } = await compileCDriver(cache);
    const remote = await startPeer('C', compiled.binary, [], {});
    return { remote, described: { ...compiled, compiledMs } };
  })());
  const names = [...PEER_RUNTIMES.map((r) => r.name), 'C'];
  const settled = await Promise.allSettled(setUps);
  const runtimes = new Map();
  const info = { cacheDir: cache, runtimes: [] };
  settled.forEach((outcome, i) => {
    const name = names[i];
    if (outcome.status === 'fulfilled') {
      const { remote, described } = outcome.value;
      runtimes.set(name, { remote, available: true, described });
      const { version, gc, loopStall } = remote.ready;
      info.runtimes.push({ name, version, ...described, gc, loopStall, available: true });
      progress(`peer ${name} ${version} ready${described.installedMs ? ` (installed in ${(described.installedMs / 1000).toFixed(1)} s)` : ''}${described.compiledMs ? ` (compiled in ${(described.compiledMs / 1000).toFixed(1)} s)` : ''}\n`);
    } else {
      const reason = outcome.reason.message;
      runtimes.set(name, { remote: null, available: reason });
      info.runtimes.push({ name, available: reason });
      progress(`peer ${name} skipped: ${reason}\n`);
    }
  });
  info.setupMs = performance.now() - started;
  const drivers = PEER_READERS.flatMap((r) => ['file', 'files'].filter((shape) => r[shape]).map((shape) => {
    const { remote, available, described } = runtimes.get(r.peer);
    const lacking = available === true && r.needs && !described[r.needs]
      ? `the C driver was built without liburing (pkg-config found none): no '${r.reader}' reader` : null;
    return {
      name: r[shape],
      shape,
      async: r.async,
      cold: Boolean(r.cold),
      consumeOnly: Boolean(r.consumeOnly),
      coldOnly: Boolean(r.coldOnly),
      peer: r.peer,
      reader: r.reader,
      remote,
      available: () => lacking ?? available,
    };
  }));
  return {
    drivers,
    info,
    close: () => Promise.all([...runtimes.values()].filter((r) => r.remote).map((r) => r.remote.close())),
  };
}

module.exports = {
  cacheDir,
  preparePeers,
  startPeer,
  installRuntime,
  compileCDriver,
  compilerVersion,
  writePathsFile,
  digestMismatch,
  tinybenchUrl,
  PeerProcess,
  PEER_RUNTIMES,
  PEER_READERS,
  RUNNER,
};
