// Lifecycle faults of the asynchronous engines: signals aborting reads at random moments, 1,000
// times on every strategy, and an io_uring whose completion queue is far smaller than the ops in
// flight (a test-only ring size). After each, no crash, no hang, and the process holds the
// descriptors and io_uring mappings it held before.
'use strict';
const { test, before } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { smartRead, readMany, engineInfo } = require('smartread');
const {
  checkNoFdLeak, useTempDirs, openFds, writePattern, withinTime, waitUntil, runToEnd, STRATEGIES,
  skipUnlessAvailable, setUpAsyncEngines,
} = require('./helpers');

setUpAsyncEngines();
checkNoFdLeak({ spawnsChildren: true });
const tempDirs = useTempDirs();

const KiB = 1024;
const MiB = 1024 * KiB;
const ABORTS = Number(process.env.SMARTREAD_TEST_ABORTS) || 1000;

// Files of every path through the engines: fast-path sizes, one READ, chunks, and /proc.
const files = [];
before(() => {
  for (const { kind, dir } of tempDirs.all) {
    for (const size of [0, 100, 4096, 70 * KiB, 300 * KiB, 3 * MiB + 1]) {
      files.push(writePattern(path.join(dir, `${kind}-${size}`), size));
    }
  }
  files.push('/proc/self/stat');
});

/** How many io_uring mappings (SQ, CQ, SQEs of each ring) this process has. */
function ringMappings() {
  return fs.readFileSync('/proc/self/maps', 'utf8').split('\n').filter((line) => line.includes('io_uring')).length;
}

// A tiny deterministic PRNG, so that a failure can be replayed from its seed.
function prng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

// Ways to wait before aborting: none, a microtask, the next tick, the next turn, a timer.
const delays = [
  () => Promise.resolve(),
  () => new Promise((resolve) => queueMicrotask(resolve)),
  () => new Promise((resolve) => process.nextTick(resolve)),
  () => new Promise((resolve) => setImmediate(resolve)),
  (r) => new Promise((resolve) => setTimeout(resolve, Math.floor(r() * 3))),
];

for (const strategy of STRATEGIES) {
  test(`strategy '${strategy}': ${ABORTS} aborts at random moments; every read gives its bytes or an AbortError`, async (t) => {
    if (skipUnlessAvailable(t, strategy)) return;
    const expected = new Map(files.filter((f) => !f.startsWith('/proc')).map((f) => [f, fs.readFileSync(f)]));
    // Descriptors are compared by number and target: one that another part of the process
    // closed meanwhile is no leak, and one that is new is.
    const fdsBefore = openFds();
    const mapsBefore = ringMappings();
    const seed = 0x5eed + strategy.length;
    const r = prng(seed);
    const counts = { read: 0, aborted: 0 };
    const check = (file) => (result) => {
      if (result instanceof Error) {
        assert.equal(result.name, 'AbortError', `${file}: ${result.stack}`);
        assert.equal(result.code, 'ABORT_ERR');
        counts.aborted++;
        return;
      }
      if (expected.has(file)) assert.ok(result.equals(expected.get(file)), `${file}: wrong bytes`);
      counts.read++;
    };
    for (let round = 0; round < ABORTS; round++) {
      const ac = new AbortController();
      const reads = [];
      const n = 1 + Math.floor(r() * 6);
      for (let k = 0; k < n; k++) {
        const file = files[Math.floor(r() * files.length)];
        reads.push(smartRead(file, { strategy, signal: ac.signal }).then(check(file), check(file)));
      }
      if (r() < 0.3) {
        const list = Array.from({ length: 4 }, () => files[Math.floor(r() * files.length)]);
        reads.push(readMany(list, { strategy, signal: ac.signal, settle: true, concurrency: 2 }).then((results) => {
          results.forEach((res, k) => check(list[k])(res.status === 'fulfilled' ? res.value : res.reason));
        }));
      }
      await delays[Math.floor(r() * delays.length)](r);
      ac.abort();
      await withinTime(Promise.all(reads), 20000, `round ${round} (seed ${seed})`);
    }
    t.diagnostic(`seed ${seed}: ${counts.read} read, ${counts.aborted} aborted`);
    assert.ok(counts.aborted > 0, 'some reads were aborted');
    // Reads the abort left running (a thread-pool read cannot be stopped) close their files when
    // they end, after the AbortError.
    const newFds = () => Object.entries(openFds()).filter(([fd, target]) => fdsBefore[fd] !== target);
    await waitUntil(() => newFds().length === 0, 15000,
      () => `descriptors opened and not closed: ${JSON.stringify(newFds())}; before: ${JSON.stringify(fdsBefore)}`);
    assert.equal(ringMappings(), mapsBefore, 'io_uring mappings');
  });
}

test('an io_uring with a 4-entry completion queue (SMARTREAD_TEST_URING_ENTRIES=2): 3,000 reads with chunks in flight, aborts, no leak (in a child process)', async (t) => {
  if (skipUnlessAvailable(t, 'uring')) return;
  const childSource = `
    const fs = require('node:fs');
    const { smartRead, readMany, engineInfo } = require('smartread');
    const files = JSON.parse(process.env.SMARTREAD_TEST_FILES);
    const expected = files.map((f) => f.startsWith('/proc') ? null : fs.readFileSync(f));
    const fdCount = () => fs.readdirSync('/proc/self/fd').length;
    (async () => {
      // The libuv of Node 22 and later batches epoll_ctl through an io_uring of its own per loop
      // (256 entries; fs ops stay off it unless UV_USE_IO_URING=1): smartread's rings are the
      // ones that engineInfo() brings, the engine's first and then readMany's batch ring, which
      // the test setting does not size. Descriptors are numbered lowest free first, and nothing
      // is closed between the two.
      const ringFds = () => fs.readdirSync('/proc/self/fd').filter((fd) => {
        try { return fs.readlinkSync('/proc/self/fd/' + fd) === 'anon_inode:[io_uring]'; } catch { return false; }
      }).map(Number);
      const libuvRings = ringFds();
      engineInfo();
      const ours = ringFds().filter((fd) => !libuvRings.includes(fd)).sort((a, b) => a - b);
      if (ours.length < 1 || ours.length > 2) throw new Error('expected one or two new io_uring fds, found ' + ours.length);
      const fdinfo = fs.readFileSync('/proc/self/fdinfo/' + ours[0], 'utf8');
      // libuv opens /dev/null once per loop with its first stream handle (uv__stream_init):
      // make the stdio streams before counting.
      void process.stdout;
      void process.stderr;
      const fdsBefore = fdCount();
      let wrong = 0;
      let aborted = 0;
      for (let round = 0; round < 30; round++) {
        const ac = new AbortController();
        const reads = Array.from({ length: 100 }, (_, i) => {
          const k = (round + i) % files.length;
          const signal = round % 3 === 2 ? ac.signal : undefined;
          return smartRead(files[k], { strategy: 'uring', signal }).then((b) => {
            if (expected[k] && !b.equals(expected[k])) wrong++;
          }, (err) => { if (err.name === 'AbortError') aborted++; else throw err; });
        });
        if (round % 3 === 2) setImmediate(() => ac.abort());
        await Promise.all(reads);
      }
      const many = await readMany(files, { strategy: 'uring', concurrency: 64 });
      many.forEach((b, k) => { if (expected[k] && !b.equals(expected[k])) wrong++; });
      const deadline = Date.now() + 10000;
      while (fdCount() !== fdsBefore && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      process.stdout.write(JSON.stringify({
        sqMask: /SqMask:\\s*(\\S+)/.exec(fdinfo)[1], cqMask: /CqMask:\\s*(\\S+)/.exec(fdinfo)[1],
        wrong, aborted, fdsLeft: fdCount() - fdsBefore, fds: fs.readdirSync('/proc/self/fd').map((fd) => { try { return fd + '=' + fs.readlinkSync('/proc/self/fd/' + fd); } catch { return fd; } }),
      }) + '\\n');
    })();
  `;
  const result = await runToEnd(process.execPath, ['-e', childSource], {
    env: { SMARTREAD_TEST_FILES: JSON.stringify(files), SMARTREAD_TEST_URING_ENTRIES: '2' },
    timeoutMs: 120000,
  });
  assert.equal(result.timedOut, false, `the child hung: ${result.stderr}`);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stderr, '', 'no warning from the child');
  const report = JSON.parse(result.stdout);
  if (engineInfo().engine === 'native') {
    // The SQ has the 4 entries at least that a read's opening chain needs in one submission.
    assert.equal(report.sqMask, '0x3', 'the ring has 4 SQ entries');
    assert.equal(report.cqMask, '0x3', 'the ring has 4 CQ entries');
  }
  assert.equal(report.wrong, 0, 'every read gave its bytes');
  assert.equal(report.fdsLeft, 0, `descriptors left open: ${report.fds}`);
  t.diagnostic(`${report.aborted} aborted`);
});
