#!/usr/bin/env node
// Checks that the io_uring engine batches: 1,000 smartRead(path, { strategy: 'uring' }) calls
// started in one tick must reach the kernel in a few io_uring_enter calls, not one per file.
//
//   node scripts/check-uring-batching.js
//
// Exit status: 0 batched (at most one io_uring_enter per 32 files); 1 not batched; 2 strace is
// missing; 3 io_uring is not available here (the reason is printed); 4 the check itself failed.
//
// How the calls are counted. A child node runs under
//   strace -f --seccomp-bpf -o LOG -e trace=io_uring_enter,access,faccessat,faccessat2
// It reads one file first, which sets the ring up (the engine does that on first use, with
// io_uring_enter calls of its own), then marks the start of the batch with a syscall that
// nothing else makes: fs.existsSync() of a path that cannot exist, named for the mark. It starts
// the 1,000 reads in one tick, awaits them all, and marks the end the same way. The count is the
// io_uring_enter lines between the two marks in the log, of any thread: every call begun during
// the batch, to submit or to wait for completions. strace writes a call that another thread
// interrupts as "<unfinished ...>" and later "<... io_uring_enter resumed>"; only the first is
// counted, where the call began. Marks bracket the batch exactly, which subtracting a baseline
// run (setup + one read) would not: how many calls the setup makes can differ between runs.
// The child runs with UV_USE_IO_URING=0, so that libuv's own rings (node 20 makes them only when
// that is 1) cannot add calls.
// The child widens the fast path's time budget, and with it the share of a turn of the event loop
// that reads may take before they wait for the next turn (src/ts/read/turn_clock.ts), and strace
// stops it only at the traced calls (--seccomp-bpf): a traced process is slow, and once the reads
// of the tick outlast the share, the rest go out a turn at a time, 17 to a submission, whatever
// the batching. With the default share of 0.25 ms: 164-336 calls (2026-11-26); with the budget
// widened to its most (a share of 0.5 s) but every syscall stopped, 19-23, then 40-48 on a slower
// day (2026-12-02: 1,000 calls took 1.4 s to make), which failed CI; with both, 18 (40 ms).
// What is checked here is the batching.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const FILES = 1000;
const FILES_PER_CALL = 32;
const packageRoot = path.resolve(__dirname, '..');
const markStart = '/nonexistent/smartread-check-uring-batching/start';
const markEnd = '/nonexistent/smartread-check-uring-batching/end';

class CheckFailed extends Error {}

function requireStrace() {
  const probe = spawnSync('strace', ['-V'], { encoding: 'utf8' });
  if (probe.error && probe.error.code === 'ENOENT') {
    console.error('strace is not installed; install it with: apt-get install -y strace');
    process.exit(2);
  }
  if (probe.error) throw new CheckFailed(`strace -V: ${probe.error.message}`);
}

function requireUring() {
  const { engineInfo } = require(packageRoot);
  const { uring } = engineInfo();
  if (!uring.available) {
    console.error(`io_uring is not available: ${uring.reason}`);
    process.exit(3);
  }
}

/** FILES small files with different contents, read once so that they are in the page cache. */
function writeCachedFiles(dir) {
  const files = [];
  for (let i = 0; i < FILES; i++) {
    const file = path.join(dir, `${String(i).padStart(4, '0')}.txt`);
    fs.writeFileSync(file, `file ${i}\n`.repeat(1 + (i % 64)));
    fs.readFileSync(file);
    files.push(file);
  }
  return files;
}

// The child: a warm-up read (ring setup), the start mark, the batch in one tick, the end mark.
// It prints the bytes it read, for the parent to check against the files.
function childProgram(dir) {
  return `
const fs = require('node:fs');
const path = require('node:path');
const { smartRead, setTuning } = require(${JSON.stringify(packageRoot)});
const dir = ${JSON.stringify(dir)};
const files = fs.readdirSync(dir).filter((name) => name.endsWith('.txt')).sort().map((name) => path.join(dir, name));
(async () => {
  setTuning({ fastPathBudgetUs: 1000000 });
  await smartRead(files[0], { strategy: 'uring' });
  fs.existsSync(${JSON.stringify(markStart)});
  const results = await Promise.all(files.map((file) => smartRead(file, { strategy: 'uring' })));
  fs.existsSync(${JSON.stringify(markEnd)});
  process.stdout.write(String(results.reduce((sum, buffer) => sum + buffer.length, 0)));
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
`;
}

/** The io_uring_enter calls begun between the two marks of a strace -f log. */
function countEntersInBatch(log) {
  let state = 'before';
  let calls = 0;
  for (const line of log.split('\n')) {
    // With -f every line starts with the thread id; a resumed call starts with "<...".
    const call = /^\d+\s+(\w+)\((.*)/.exec(line);
    if (!call) continue;
    const [, name, args] = call;
    if (name === 'io_uring_enter') {
      if (state === 'during') calls++;
    } else if (args.includes(JSON.stringify(markStart))) {
      state = 'during';
    } else if (args.includes(JSON.stringify(markEnd))) {
      if (state !== 'during') throw new CheckFailed('the end mark came before the start mark in the strace log');
      state = 'after';
    }
  }
  if (state !== 'after') throw new CheckFailed(`strace log has no ${state === 'before' ? 'start' : 'end'} mark`);
  return calls;
}

function main() {
  requireStrace();
  requireUring();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smartread-uring-batching-'));
  try {
    const files = writeCachedFiles(dir);
    const expectedBytes = files.reduce((sum, file) => sum + fs.statSync(file).size, 0);
    const log = path.join(dir, 'strace.log');  // not a .txt: the child reads only those
    const child = spawnSync('strace', [
      '-f', '--seccomp-bpf', '-o', log, '-e', 'trace=io_uring_enter,access,faccessat,faccessat2',
      process.execPath, '-e', childProgram(dir),
    ], { encoding: 'utf8', env: { ...process.env, UV_USE_IO_URING: '0' }, maxBuffer: 16 * 1024 * 1024 });
    if (child.error) throw new CheckFailed(`strace: ${child.error.message}`);
    if (child.status !== 0) throw new CheckFailed(`the traced child exited with ${child.status ?? child.signal}:\n${child.stderr.trim()}`);
    if (Number(child.stdout) !== expectedBytes) {
      throw new CheckFailed(`the batch read ${child.stdout} bytes; the files hold ${expectedBytes}`);
    }
    const calls = countEntersInBatch(fs.readFileSync(log, 'utf8'));
    const per = calls === 0 ? 'none: submitted without a syscall' : `one per ${(FILES / calls).toFixed(1).replace(/\.0$/, '')} files`;
    console.log(`io_uring_enter calls: ${calls} for ${FILES} files (${per})`);
    if (calls > FILES / FILES_PER_CALL) {
      console.error(`not batched: more than one io_uring_enter per ${FILES_PER_CALL} files`);
      process.exitCode = 1;
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

try {
  main();
} catch (err) {
  console.error(`check-uring-batching: ${err instanceof CheckFailed ? err.message : err.stack}`);
  process.exitCode = 4;
}
