// Shared test utilities: descriptor accounting, temp directories on tmpfs and on disk, the
// deterministic byte pattern, byte comparisons that never print large buffers, error facts.
'use strict';
const { before, after } = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const TMPFS_MAGIC = 0x01021994;

// ---------------------------------------------------------------------------------------------
// Descriptors

/**
 * Whether a descriptor's target counts as one of ours: anonymous pipes do not, smartread never
 * makes one and the runtime makes some lazily (a Node 24 run of read-many.test.js found
 * `pipe:[…]` at fd 251 after a readMany, held for good).
 */
const countsAsOurs = (target) => !target.startsWith('pipe:');

/**
 * How many descriptors this process holds (not counting the one that reads the directory), but
 * for anonymous pipes (countsAsOurs).
 */
function openFdCount() {
  return Object.values(openFds()).filter(countsAsOurs).length;
}

/** fd number → what it points at, for messages when a count differs. */
function openFds() {
  const out = {};
  for (const name of fs.readdirSync('/proc/self/fd')) {
    try {
      out[name] = fs.readlinkSync(`/proc/self/fd/${name}`);
    } catch {
      // The descriptor readdirSync itself used, closed by now.
    }
  }
  return out;
}

function isOpenFd(fd) {
  return fs.existsSync(`/proc/self/fd/${fd}`);
}

// libuv opens /dev/null on the first child process spawned with a pipe and keeps it for the
// life of the process: spawn one before counting, so that the count measures only the tests.
async function warmUpChildProcesses() {
  const child = spawn(process.execPath, ['-e', ''], { stdio: ['ignore', 'pipe', 'pipe'] });
  await waitForExit(child);
}

/**
 * The descriptors open now (fd number → what it points at) that were not open to the same thing
 * in `before` (an openFds() of earlier), pipes aside (countsAsOurs).
 */
function fdsOpenedSince(before) {
  return Object.fromEntries(Object.entries(openFds())
    .filter(([fd, target]) => countsAsOurs(target) && before[fd] !== target));
}

/**
 * Registers hooks that record the descriptors open before this file's tests and assert, after
 * them, that none is open that was not open before: a leak is a descriptor the tests left, not
 * one fewer. The root's before() hooks do not wait for one another, so one that spawns a child
 * (abort.test.js's mkfifo) may still hold the child's stdio sockets when the descriptors are
 * recorded, and close them during the tests (a count that had to come back equal failed there,
 * 18 before and 16 after, in CI). `spawnsChildren` warms up child-process machinery first;
 * `after`, a promise, is waited for before recording (another before() hook's work, such as
 * test/mounts.js's `ready`).
 */
function checkNoFdLeak({ spawnsChildren = false, after: settled = null } = {}) {
  let startFds;
  before(async () => {
    if (settled) await settled;
    if (spawnsChildren) await warmUpChildProcesses();
    // The environment's io_uring (its ring fd and eventfd) lives as long as the environment:
    // set it up first, so that it is part of the baseline rather than counted as a leak.
    require('smartread').engineInfo();
    startFds = openFds();
  });
  // Work may outlive the promise a test awaited and still hold a descriptor for a moment: the
  // other lanes of a readMany that rejected at its first error (they hold a reader's root until
  // their reads end), an engine finishing after an abort. Those close within moments; a leak
  // never does. (An ASan run of fuzz.test.js saw a root still open as its last test ended.)
  after(async () => {
    await waitUntil(() => Object.keys(fdsOpenedSince(startFds)).length === 0, 5000, () =>
      `descriptor leak: open after the tests and not before: ${JSON.stringify(fdsOpenedSince(startFds))}\n` +
      `before: ${JSON.stringify(startFds)}\nafter:  ${JSON.stringify(openFds())}`);
  });
}

// ---------------------------------------------------------------------------------------------
// Temp directories

function fsType(dir) {
  return fs.statfsSync(dir).type === TMPFS_MAGIC ? 'tmpfs' : 'disk';
}

const created = new Set();
function removeCreated() {
  for (const dir of created) fs.rmSync(dir, { recursive: true, force: true });
  created.clear();
}
// A test file that dies before its after hook still leaves nothing behind.
process.on('exit', removeCreated);

function makeTempDir(parent, prefix = 'smartread-test-') {
  const dir = fs.mkdtempSync(path.join(parent, prefix));
  created.add(dir);
  return dir;
}

/**
 * Creates one temp directory per filesystem kind, now (so tests can be declared per kind), and
 * removes them after this file's tests. Returns { tmpfs?, disk, all: [{ kind, dir }] }; tmpfs is
 * /dev/shm when it is a tmpfs, disk is os.tmpdir() when it is not.
 */
function useTempDirs() {
  const dirs = { all: [] };
  const shm = '/dev/shm';
  if (fs.existsSync(shm) && fsType(shm) === 'tmpfs') {
    dirs.tmpfs = makeTempDir(shm);
    dirs.all.push({ kind: 'tmpfs', dir: dirs.tmpfs });
  }
  const tmp = os.tmpdir();
  if (fsType(tmp) !== 'disk') throw new Error(`${tmp} is a tmpfs: no disk temp dir for the tests`);
  dirs.disk = makeTempDir(tmp);
  dirs.all.push({ kind: 'disk', dir: dirs.disk });
  after(() => {
    for (const { dir } of dirs.all) {
      fs.rmSync(dir, { recursive: true, force: true });
      created.delete(dir);
    }
  });
  return dirs;
}

// ---------------------------------------------------------------------------------------------
// The byte pattern: byte i is (i * 7 + 3) % 251, so any byte tells its offset modulo 251, and a
// zero, a stale byte or a shifted range does not pass for file content.

const PERIOD = 251;

function patternByte(offset) {
  return (offset * 7 + 3) % PERIOD;
}

const onePeriod = Buffer.from(Array.from({ length: PERIOD }, (_, i) => patternByte(i)));

/** The pattern's bytes [offset, offset + length). */
function patternBuffer(length, offset = 0) {
  const buffer = Buffer.allocUnsafe(length);
  const start = offset % PERIOD;
  buffer.fill(Buffer.concat([onePeriod.subarray(start), onePeriod.subarray(0, start)]));
  return buffer;
}

/** Writes a file of `size` pattern bytes, in pieces so that large files cost little memory. */
function writePattern(file, size) {
  const piece = 8 << 20;
  const fd = fs.openSync(file, 'w');
  try {
    for (let offset = 0; offset < size; offset += piece) {
      const chunk = patternBuffer(Math.min(piece, size - offset), offset);
      fs.writeSync(fd, chunk, 0, chunk.length, offset);
    }
  } finally {
    fs.closeSync(fd);
  }
  return file;
}

// ---------------------------------------------------------------------------------------------
// Comparisons

function firstDifference(a, b) {
  const n = Math.min(a.length, b.length);
  // Narrow down by halves with Buffer.equals (memcmp) rather than a byte loop over megabytes.
  let lo = 0;
  let hi = n;
  if (a.subarray(0, n).equals(b.subarray(0, n))) return n < Math.max(a.length, b.length) ? n : -1;
  while (hi - lo > 64) {
    const mid = lo + Math.floor((hi - lo) / 2);
    if (a.subarray(lo, mid).equals(b.subarray(lo, mid))) lo = mid;
    else hi = mid;
  }
  for (let i = lo; i < hi; i++) if (a[i] !== b[i]) return i;
  return -1;
}

/** Asserts two byte sequences are equal; on failure says where, without printing them. */
function assertSameBytes(actual, expected, what = 'bytes') {
  assert.ok(actual instanceof Uint8Array, `${what}: expected bytes, got ${typeof actual}`);
  if (actual.length === expected.length && Buffer.from(actual.buffer, actual.byteOffset, actual.length).equals(expected)) return;
  const at = firstDifference(Buffer.from(actual.buffer, actual.byteOffset, actual.length), expected);
  assert.fail(`${what}: length ${actual.length}, expected ${expected.length}; first difference at ` +
    `offset ${at}: got ${actual[at]}, expected ${expected[at]}`);
}

/** Everything about an error that parity is judged on (own keys in order), as plain JSON data. */
function errorFacts(err) {
  if (!(err instanceof Error)) return { thrown: typeof err, value: String(err) };
  return {
    constructor: err.constructor.name,
    name: err.name,
    message: err.message,
    code: err.code,
    errno: err.errno,
    syscall: err.syscall,
    hasPath: Object.prototype.hasOwnProperty.call(err, 'path'),
    path: err.path,
    keys: Object.keys(err),
  };
}

/** Calls fn and returns what it threw; fails when it returns. */
function thrownBy(fn, what = 'call') {
  try {
    fn();
  } catch (err) {
    return err;
  }
  assert.fail(`${what} did not throw`);
}

// ---------------------------------------------------------------------------------------------
// Child processes

function waitForExit(child) {
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
}

/**
 * Why a child that has dropped root could not load this package with this node, or null: the
 * first directory above the package or the node binary that other users may not enter (a
 * checkout under a 0700 mktemp directory). A reason for those tests to skip, not to fail.
 */
function unreachableWithoutRoot() {
  for (const target of [path.resolve(__dirname, '..'), process.execPath]) {
    for (let dir = path.dirname(target); ; dir = path.dirname(dir)) {
      const { mode } = fs.statSync(dir);
      if ((mode & 0o001) === 0) {
        return `${dir} (mode ${(mode & 0o777).toString(8)}) cannot be entered by other users, and ${target} is below it`;
      }
      if (dir === path.dirname(dir)) break;
    }
  }
  return null;
}

/**
 * Collects the child's stdout by lines: next() resolves with the next line, count() says how
 * many have arrived, exited() whether the child is gone, all() resolves with every line once the
 * child has exited (rejecting when it exited with a code other than 0).
 */
function stdoutLines(child) {
  const lines = [];
  const waiting = [];
  let text = '';
  let closed = false;
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk) => {
    text += chunk;
    let end;
    while ((end = text.indexOf('\n')) >= 0) {
      lines.push(text.slice(0, end));
      text = text.slice(end + 1);
    }
    while (waiting.length > 0 && waiting[0].index < lines.length) {
      const w = waiting.shift();
      w.resolve(lines[w.index]);
    }
  });
  const exited = waitForExit(child).then((status) => {
    closed = true;
    for (const w of waiting.splice(0)) {
      w.reject(new Error(`child exited (${status.code ?? status.signal}) before writing line ${w.index + 1}`));
    }
    return status;
  });
  let nextIndex = 0;
  return {
    next() {
      const index = nextIndex++;
      if (index < lines.length) return Promise.resolve(lines[index]);
      if (closed) return Promise.reject(new Error(`child exited before writing line ${index + 1}`));
      return new Promise((resolve, reject) => waiting.push({ index, resolve, reject }));
    },
    count: () => lines.length,
    exited: () => closed,
    async all() {
      const status = await exited;
      if (status.code !== 0) throw new Error(`child exited with ${status.code ?? status.signal}`);
      return lines;
    },
  };
}

/**
 * Makes `dir` a place where `require('smartread')`, `import ... from 'smartread'` and
 * `--import smartread/register` find this package, as they would in an application that
 * installed it: `dir/node_modules/smartread` is a symbolic link to the package root.
 */
function linkPackage(dir) {
  fs.mkdirSync(path.join(dir, 'node_modules'), { recursive: true });
  fs.symlinkSync(path.resolve(__dirname, '..'), path.join(dir, 'node_modules', 'smartread'), 'dir');
  return dir;
}

// ---------------------------------------------------------------------------------------------
// Asynchronous calls: bounded waits, so that a hang fails the test instead of stalling the run

/** Resolves or rejects as `promise` does; fails with `what` after `ms` milliseconds. */
function withinTime(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: still pending after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Polls `condition` every 10 ms until it holds; fails with `describe()` after `ms` milliseconds. */
async function waitUntil(condition, ms, describe) {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`${describe()} (waited ${ms} ms)`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * Calls `fn`, which must return a promise without throwing, and returns what that promise
 * rejects with; fails when it throws synchronously, returns something else, or resolves.
 */
async function rejectionOf(fn, what = 'call') {
  let returned;
  try {
    returned = fn();
  } catch (err) {
    assert.fail(`${what} threw synchronously instead of returning a rejected promise: ${err}`);
  }
  assert.ok(returned instanceof Promise, `${what} returned ${typeof returned}, not a promise`);
  try {
    await returned;
  } catch (err) {
    return err;
  }
  assert.fail(`${what} resolved instead of rejecting`);
}

// Node flags for a child whose test is how it ends (process.exit() or the loop ending with reads
// in flight). Node's own exit can deadlock whatever the addon does (nodejs/node#54918, the
// process.exit() variant): the main thread, in DisposePlatform(), joins V8's worker threads
// while a concurrent Maglev or Sparkplug job on one of them waits, in
// CollectionBarrier::AwaitCollectionBackground, for a garbage collection that only the main
// thread could run. Caught looping the child of 'process.exit(0) from inside the first
// completion' beside the suite and two CPU hogs: Node 26, 10 hangs in 5,500 runs; Node 24, 5 in
// 1,500; Node 22, none in 1,700 (the addon's teardown does not even run at process.exit()). The
// burst of large Buffers just before the exit likely leaves V8 over its allocation limit, so
// that its background allocations wait for a GC. With --single-threaded V8 starts no such job
// (Node 26: no hang in 4,000 runs); the addon's own threads and io_uring are unchanged.
const exitTestNodeFlags = ['--single-threaded'];

/**
 * Runs a command to its end with piped output and kills it (SIGKILL) after `timeoutMs`:
 * resolves with { code, signal, stdout, stderr, timedOut }. Node children run in the package
 * root, where require('smartread') finds this package, unless given another `cwd`.
 */
function runToEnd(command, args, { env = {}, timeoutMs = 20000, cwd = path.resolve(__dirname, '..') } = {}) {
  const child = spawn(command, args, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => { stdout += chunk; });
  child.stderr.setEncoding('utf8').on('data', (chunk) => { stderr += chunk; });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, timeoutMs);
  return waitForExit(child).then(({ code, signal }) => {
    clearTimeout(timer);
    return { code, signal, stdout, stderr, timedOut };
  }, (err) => {
    clearTimeout(timer);
    throw err;
  });
}

/**
 * A writer for the FIFO at `fifo` that comes only when called: a worker thread that waits until
 * release() is called (or, so that an engine holding the JS thread cannot hang a test, until
 * `patienceMs` have passed), then writes `payload` and closes, as soon as a reader waits in
 * open(2). It looks for a reader for `readerMs` (a reader that was aborted is gone; a read left
 * waiting on a pool thread is released). `done` resolves with { released, wrote }: released is
 * false when the patience ran out first.
 */
function fifoWriterOnRelease(fifo, payload, { patienceMs = 20000, readerMs = 20000 } = {}) {
  const source = `
    const { workerData: { fifo, payload, flag, patienceMs, readerMs }, parentPort } = require('node:worker_threads');
    const fs = require('node:fs');
    const released = Atomics.wait(new Int32Array(flag), 0, 0, patienceMs) !== 'timed-out';
    const pause = new Int32Array(new SharedArrayBuffer(4));
    const end = Date.now() + readerMs;
    let wrote = false;
    while (!wrote && Date.now() <= end) {
      let fd;
      try {
        fd = fs.openSync(fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
      } catch (err) {
        if (err.code !== 'ENXIO') throw err; // ENXIO: no reader waits yet
        Atomics.wait(pause, 0, 0, 10);
        continue;
      }
      try {
        fs.writeSync(fd, payload);
      } finally {
        fs.closeSync(fd);
      }
      wrote = true;
    }
    parentPort.postMessage({ released, wrote });`;
  const flag = new SharedArrayBuffer(4);
  const { Worker } = require('node:worker_threads');
  const worker = new Worker(source, { eval: true, workerData: { fifo, payload, flag, patienceMs, readerMs } });
  const outcome = new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  const exited = new Promise((resolve) => worker.once('exit', resolve));
  return {
    release() {
      const cell = new Int32Array(flag);
      Atomics.store(cell, 0, 1);
      Atomics.notify(cell, 0);
    },
    done: withinTime(Promise.all([outcome, exited]).then(([result]) => result), patienceMs + readerMs + 20000, 'the FIFO writer'),
  };
}

// ---------------------------------------------------------------------------------------------
// The platform smartread acts for

/** The platform smartread is told it runs on (SMARTREAD_TEST_PLATFORM, which run-tests.js
 * --platform sets), or null where it acts for Linux, as it is. */
const forcedPlatform = process.env.SMARTREAD_TEST_PLATFORM || null;

/**
 * Skips test `t` when smartread acts for another platform than Linux: `what` (a behaviour of
 * Linux's: statfs's magic numbers, /sys, procfs) is not smartread's there. Returns true if it did.
 */
function skipOffLinux(t, what) {
  if (forcedPlatform === null) return false;
  t.skip(`${what} is Linux's; smartread acts for ${forcedPlatform} here (SMARTREAD_TEST_PLATFORM)`);
  return true;
}

/** Whether the platform smartread acts for has FIFOs: Windows has none (nor the O_NONBLOCK that
 * opens one without waiting for a writer), so tests acting for win32 leave them out. */
const hasFifos = forcedPlatform !== 'win32';

let openat2Answer;

/**
 * Why openat2 cannot be used here, or null where it can (or there is no addon to use it). Linux
 * has it since 5.6; qemu-user 7.2 (the arm64 tests) has none (ENOSYS). Confined reads and writes
 * and the fast path's hits need it: their tests skip with this reason. Asked once, with a
 * confined read of a root itself (EISDIR where openat2 works).
 */
function openat2Missing() {
  if (openat2Answer === undefined) {
    openat2Answer = null;
    const { createReader, engineInfo } = require('smartread');
    if (engineInfo().engine === 'native') {
      const reader = createReader({ root: os.tmpdir() });
      try {
        reader.smartReadSync('.');
      } catch (err) {
        if (err.code === 'ENOSYS') openat2Answer = 'openat2 is missing here (ENOSYS: a kernel before 5.6, or qemu-user)';
      } finally {
        reader.close();
      }
    }
  }
  return openat2Answer;
}

/** Skips test `t` with the reason where openat2 is missing; returns true if it did. */
function skipWithoutOpenat2(t) {
  const why = openat2Missing();
  if (why === null) return false;
  t.skip(why);
  return true;
}

// ---------------------------------------------------------------------------------------------
// smartread's asynchronous strategies

const STRATEGIES = ['auto', 'sync', 'threadpool', 'uring'];

/** null when smartRead can use `strategy` in this process, else why it cannot. */
function strategyUnavailableReason(strategy) {
  if (strategy !== 'uring') return null;
  const { uring } = require('smartread').engineInfo();
  return uring.available ? null : uring.reason;
}

/**
 * Skips test `t` with the reason when `strategy` is unavailable here; returns true if it did.
 * A missing engine is a skip that says why, never a pass.
 */
function skipUnlessAvailable(t, strategy) {
  const reason = strategyUnavailableReason(strategy);
  if (reason === null) return false;
  t.skip(`strategy '${strategy}' is not available: ${reason}`);
  return true;
}

/**
 * Sets up, now, what the engines keep open for the life of the process (engineInfo() sets the
 * io_uring ring up), so that checkNoFdLeak counts it before the tests. Call it at the top of a
 * test file: root-level before() hooks do not run one after another, so a hook cannot do this.
 */
function setUpAsyncEngines() {
  require('smartread').engineInfo();
}

/**
 * Evicts a file's pages and checks with mincore that none is left, trying again for a while:
 * pages still under writeback, just after the file was written, cannot be dropped yet (seen on a
 * loaded machine), and beside a busy suite an eviction sometimes does not take. Returns how many
 * checks it made (each is a pageCacheResidency call, with an fstat of its own). Needs the addon.
 */
let smartreadModule = null;
function evictCompletely(file) {
  // Required once: each require() of the package looks it up again (a stat a call).
  const { evictFromPageCache, pageCacheResidency } = (smartreadModule ??= require('smartread'));
  for (let attempt = 0; attempt < 200; attempt++) {
    evictFromPageCache(file);
    if (pageCacheResidency(file).cached === 0) return attempt + 1;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
  }
  assert.fail(`${file}: still ${pageCacheResidency(file).cached} bytes in the page cache after 2 s of evictions`);
}

/**
 * Counts the turns of the event loop from now until stop() is called, which returns the count:
 * an immediate that schedules the next, once per turn.
 */
function countLoopTurns() {
  let turns = 0;
  let ticking = true;
  const tick = () => setImmediate(() => {
    turns++;
    if (ticking) tick();
  });
  tick();
  return {
    stop() {
      ticking = false;
      return turns;
    },
  };
}

/**
 * Sets the fast path's budget to 1 µs, so that any read spends a turn's share of the JS thread,
 * until the test ends; `changes` are further tuning changes.
 */
function spendTheTurnOnEachRead(t, changes = {}) {
  const { tuning, setTuning } = require('smartread');
  const before = tuning();
  t.after(() => setTuning(before));
  setTuning({ fastPathBudgetUs: 1, ...changes });
}

// The calls a child makes to each of `syscalls` (all its threads), counted by strace -c, and
// what it wrote to stdout: the child runs `script` with `args` in process.argv[1...]. Null, with
// the test skipped, where strace is missing. Only those calls stop the child (--seccomp-bpf):
// the others keep their pace, which the fast path times on filesystems it reads without asking
// the kernel.
async function syscallCounts(t, syscalls, script, args) {
  if (!(await straceRuns(t))) return null;
  const traced = await underStrace(['-c', '-U', 'name,calls'], syscalls, script, args);
  const calls = { output: traced.stderr, stdout: traced.stdout };
  for (const line of traced.stderr.split('\n')) {
    const match = /^\s*(\w+)\s+(\d+)\s*$/.exec(line);
    if (match && syscalls.includes(match[1])) calls[match[1]] = Number(match[2]);
  }
  for (const name of syscalls) calls[name] ??= 0;
  return calls;
}

// The child of syscallCounts and syscallTrace: `script` run with `args` under strace with
// `options`, every thread followed, only `syscalls` stopping it. Its exit code must be 0.
async function underStrace(options, syscalls, script, args) {
  const traced = await runToEnd('strace', ['-f', '--seccomp-bpf', ...options, '-e', `trace=${syscalls.join(',')}`,
    process.execPath, '-e', script, ...args], { env: { UV_USE_IO_URING: '0' }, timeoutMs: 60000 });
  assert.equal(traced.code, 0, traced.stderr);
  return traced;
}

// Whether strace runs here; else the test is skipped.
async function straceRuns(t) {
  const probe = await runToEnd('strace', ['-V']).catch((err) => ({ code: -1, stderr: err.message }));
  if (probe.code === 0) return true;
  t.skip(`strace is not available (${probe.stderr.trim()}); apt-get install -y strace`);
  return false;
}

// The calls a child makes to `syscalls` (all its threads), each as strace writes it (its name and
// arguments: 'io_uring_enter(5, 3, 0, IORING_ENTER_GETEVENTS, NULL, 8) = 3'), with the child run as
// syscallCounts runs it. Null, with the test skipped, where strace is missing.
async function syscallTrace(t, syscalls, script, args) {
  if (!(await straceRuns(t))) return null;
  const traced = await underStrace(['-qq'], syscalls, script, args);
  // -f prefixes a thread's id ('[pid 123] '); a call another thread interrupted is written in
  // two parts, of which the first holds the arguments.
  return traced.stderr.split('\n').map((line) => line.replace(/^\[pid +\d+\] /, ''))
    .filter((line) => syscalls.some((name) => line.startsWith(`${name}(`)));
}

/** The stat calls of every kind among syscallCounts' counts. */
function statCalls(calls) {
  return calls.fstat + calls.newfstatat + calls.statx;
}

module.exports = {
  forcedPlatform,
  skipOffLinux,
  hasFifos,
  openat2Missing,
  skipWithoutOpenat2,
  countLoopTurns,
  spendTheTurnOnEachRead,
  fifoWriterOnRelease,
  unreachableWithoutRoot,
  evictCompletely,
  openFdCount,
  openFds,
  isOpenFd,
  checkNoFdLeak,
  useTempDirs,
  makeTempDir,
  fsType,
  PERIOD,
  patternByte,
  patternBuffer,
  writePattern,
  firstDifference,
  assertSameBytes,
  errorFacts,
  thrownBy,
  waitForExit,
  stdoutLines,
  withinTime,
  waitUntil,
  rejectionOf,
  runToEnd,
  syscallCounts,
  syscallTrace,
  statCalls,
  exitTestNodeFlags,
  linkPackage,
  STRATEGIES,
  strategyUnavailableReason,
  skipUnlessAvailable,
  setUpAsyncEngines,
};
