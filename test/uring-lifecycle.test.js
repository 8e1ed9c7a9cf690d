// The asynchronous engines across process and thread lifecycles: a process that exits with
// reads in flight, or from inside a completion; a worker that reads through its own ring while
// the main thread reads; workers terminated mid-read; and a process where io_uring is refused
// by a seccomp filter or turned off by SMARTREAD_IO_URING=0. io_uring-only cases are skipped,
// with the reason, where io_uring is unavailable.
'use strict';
const { test, describe, before } = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const { createHash } = require('node:crypto');
const { once } = require('node:events');
const fs = require('node:fs');
const path = require('node:path');
const { Worker } = require('node:worker_threads');
const { readMany, engineInfo } = require('smartread');
const {
  checkNoFdLeak, useTempDirs, makeTempDir, openFdCount, openFds, writePattern, withinTime,
  waitUntil, runToEnd, strategyUnavailableReason, skipUnlessAvailable, setUpAsyncEngines, exitTestNodeFlags,
} = require('./helpers');

setUpAsyncEngines();
checkNoFdLeak({ spawnsChildren: true });
const tempDirs = useTempDirs();

const KiB = 1024;
const MiB = 1024 * KiB;
const childTimeoutMs = 20000;

// Files from 1 byte to 2 MiB on both filesystems, and /proc files without a reported size.
const files = [];
before(() => {
  for (const { kind, dir } of tempDirs.all) {
    for (const size of [1, 4096, 65537, 300 * KiB, MiB + 3, 2 * MiB]) {
      files.push(writePattern(path.join(dir, `${kind}-${size}`), size));
    }
  }
  files.push('/proc/version');
});

/** 'uring' where io_uring is available, else 'auto', for the cases that run either way. */
function preferredStrategy() {
  return strategyUnavailableReason('uring') === null ? 'uring' : 'auto';
}

/** Asserts a child ended by itself with exit code `code`: not killed by the timeout, no signal. */
function assertEndedWith(result, code, what) {
  const output = `\nstdout: ${result.stdout.slice(-2000)}\nstderr: ${result.stderr.slice(-2000)}`;
  assert.equal(result.timedOut, false, `${what}: still running after ${childTimeoutMs} ms, killed${output}`);
  assert.equal(result.signal, null, `${what}: killed by ${result.signal}${output}`);
  assert.equal(result.code, code, `${what}: exit code ${result.code}${output}`);
}

// ---------------------------------------------------------------------------------------------
// Exiting with reads in flight

describe('a process that exits with reads in flight', () => {
  // Each child starts 1,000 reads of `files` on `strategy` (from the environment), then ends as
  // `ending` says. It writes one line before it ends: pipes are written synchronously on Linux.
  const exitCases = {
    'process.exit(0) in the tick that started 1,000 reads': {
      code: 0,
      ending: `
        for (let i = 0; i < 1000; i++) smartRead(files[i % files.length], { strategy }).catch(() => {});
        report({ started: 1000 });
        process.exit(0);`,
    },
    'process.exit(0) from inside the first completion': {
      code: 0,
      ending: `
        let completed = 0;
        for (let i = 0; i < 1000; i++) {
          smartRead(files[i % files.length], { strategy }).then(() => {
            if (completed++ === 0) {
              report({ completed });
              process.exit(0);
            }
          });
        }`,
    },
    'process.exit(0) from inside the first AbortError, with the rest cancelled': {
      code: 0,
      ending: `
        const controller = new AbortController();
        let rejected = 0;
        for (let i = 0; i < 1000; i++) {
          smartRead(files[i % files.length], { strategy, signal: controller.signal }).catch((err) => {
            if (rejected++ === 0) {
              report({ rejected: err.name });
              process.exit(0);
            }
          });
        }
        // In the tick that started them, so that every read is still outstanding: a later abort
        // can come after all 1,000 have completed (cached reads complete as they are submitted),
        // and the child then ends with nothing rejected.
        controller.abort();`,
    },
    'an exception thrown from inside a completion (exit code 1, no crash)': {
      code: 1,
      ending: `
        let completed = 0;
        for (let i = 0; i < 1000; i++) {
          smartRead(files[i % files.length], { strategy }).then(() => {
            if (completed++ === 10) {
              report({ completed });
              throw new Error('thrown from a completion on purpose');
            }
          });
        }`,
    },
    'the event loop ending by itself after 1,000 reads': {
      code: 0,
      ending: `
        let bytes = 0;
        Promise.all(Array.from({ length: 1000 }, (_, i) => smartRead(files[i % files.length], { strategy })
          .then((b) => { bytes += b.length; }))).then(() => report({ bytes }));`,
    },
  };

  for (const [name, { code, ending }] of Object.entries(exitCases)) {
    test(name, async (t) => {
      const strategy = preferredStrategy();
      t.diagnostic(`strategy '${strategy}'`);
      const source = `
        const { smartRead, engineInfo } = require('smartread');
        const files = JSON.parse(process.env.SMARTREAD_TEST_FILES);
        const strategy = process.env.SMARTREAD_TEST_STRATEGY;
        const report = (facts) => process.stdout.write(JSON.stringify({ uring: engineInfo().uring.available, ...facts }) + '\\n');
        ${ending}
      `;
      // Without V8's background tasks: Node's exit can otherwise hang by itself (see helpers.js).
      const result = await runToEnd(process.execPath, [...exitTestNodeFlags, '-e', source], {
        env: { SMARTREAD_TEST_FILES: JSON.stringify(files), SMARTREAD_TEST_STRATEGY: strategy },
        timeoutMs: childTimeoutMs,
      });
      assertEndedWith(result, code, name);
      const lines = result.stdout.trim().split('\n');
      assert.equal(lines.length, 1, `one line from the child: ${result.stdout}`);
      const facts = JSON.parse(lines[0]);
      assert.equal(facts.uring, strategy === 'uring', 'the child sees io_uring as this process does');
      if (name.startsWith('the event loop')) {
        const sizes = files.map((file) => fs.readFileSync(file).length);
        const expected = Array.from({ length: 1000 }, (_, i) => sizes[i % files.length]).reduce((a, b) => a + b);
        assert.equal(facts.bytes, expected);
      }
      if (name.includes('AbortError')) assert.equal(facts.rejected, 'AbortError');
      if (code === 1) assert.match(result.stderr, /thrown from a completion on purpose/);
    });
  }
});

// ---------------------------------------------------------------------------------------------
// Worker threads

// A worker that reads `files` on `strategy`, keeping `inFlight` reads going, `rounds` times over
// (Infinity: until terminated), and checks every result against fs.readFileSync. It says which
// io_uring it sees, starts on the first message, posts { reading } after `reportAfter` reads and
// { done } at the end.
const workerSource = `
  const { parentPort, workerData } = require('node:worker_threads');
  const fs = require('node:fs');
  const { smartRead, engineInfo } = require('smartread');
  const { files, strategy, rounds, inFlight, reportAfter } = workerData;
  const expected = files.map((f) => fs.readFileSync(f));
  let mismatches = 0;
  let completed = 0;
  let started = 0;
  const total = rounds * files.length;
  function startOne() {
    if (started >= total) return;
    const k = started++ % files.length;
    smartRead(files[k], { strategy }).then((bytes) => {
      if (!bytes.equals(expected[k])) mismatches++;
      completed++;
      if (completed === reportAfter) parentPort.postMessage({ reading: true, mismatches });
      if (completed === total) parentPort.postMessage({ done: true, mismatches, completed });
      startOne();
    }, (err) => parentPort.postMessage({ error: String(err) }));
  }
  parentPort.postMessage({ uring: engineInfo().uring });
  parentPort.once('message', () => {
    for (let i = 0; i < inFlight; i++) startOne();
  });
`;

/** A worker and its messages, each awaited with a bound; a worker error rejects the wait. */
function startWorker(workerData) {
  const worker = new Worker(workerSource, { eval: true, workerData });
  const messages = [];
  const waiting = [];
  let failure;
  const fail = (err) => {
    failure = err;
    for (const w of waiting.splice(0)) w.reject(err);
  };
  worker.on('message', (message) => (waiting.length > 0 ? waiting.shift().resolve(message) : messages.push(message)));
  worker.on('error', fail);
  const exited = once(worker, 'exit').then(([code]) => {
    fail(new Error(`worker exited (${code}) before its next message`));
    return code;
  });
  const nextMessage = () => {
    if (messages.length > 0) return Promise.resolve(messages.shift());
    if (failure) return Promise.reject(failure);
    return withinTime(new Promise((resolve, reject) => waiting.push({ resolve, reject })), 30000, "the worker's next message");
  };
  return { worker, nextMessage, exited };
}

/** Reads every file `rounds` times in this thread, `inFlight` at a time; returns the mismatches. */
async function readRounds(strategy, rounds, inFlight) {
  const expected = files.map((f) => fs.readFileSync(f));
  let mismatches = 0;
  for (let round = 0; round < rounds; round++) {
    const results = await readMany(files, { strategy, concurrency: inFlight });
    results.forEach((bytes, k) => {
      if (!bytes.equals(expected[k])) mismatches++;
    });
  }
  return mismatches;
}

// Runs in a child process, so that a crash is a failed test rather than the end of this file:
// starts `workers` workers one after another, terminates each in the middle of its reads, then
// reads every file in the main thread and waits (bounded) for the descriptor count to come back.
// `syncFailing` workers loop on smartReadSync of a missing file instead.
const terminationsSource = `
  const { Worker } = require('node:worker_threads');
  const { once } = require('node:events');
  const fs = require('node:fs');
  const { readMany, engineInfo } = require('smartread');
  const { files, strategy, workerSource, workers, syncFailing, missing } = JSON.parse(process.env.SMARTREAD_TEST_CASE);
  const syncFailingSource = \`
    const { parentPort } = require('node:worker_threads');
    const { smartReadSync } = require('smartread');
    for (let n = 0; ; n++) {
      try { smartReadSync(\${JSON.stringify(missing)}); } catch (err) { if (err.code !== 'ENOENT') throw err; }
      if (n === 20) parentPort.postMessage({ reading: true, mismatches: 0 });
    }
  \`;
  const fdCount = () => fs.readdirSync('/proc/self/fd').length;
  const fdList = () => fs.readdirSync('/proc/self/fd').map((fd) => { try { return fs.readlinkSync('/proc/self/fd/' + fd); } catch { return ''; } });
  engineInfo();
  (async () => {
    // libuv opens /dev/null once per loop, on its first stream handle (uv__stream_init: the
    // descriptor it gives up to accept a connection under EMFILE), and the first Worker creates
    // one: start and end a worker before counting, so that the count measures the terminations.
    const warmUp = new Worker('', { eval: true });
    await once(warmUp, 'exit');
    const fdsBefore = fdCount();
    const problems = [];
    for (let n = 0; n < workers; n++) {
      const worker = syncFailing
        ? new Worker(syncFailingSource, { eval: true })
        : new Worker(workerSource, { eval: true, workerData: { files, strategy, rounds: Infinity, inFlight: 32, reportAfter: 20 + n } });
      let [message] = await once(worker, 'message');
      if (!syncFailing) {
        worker.postMessage('start');
        [message] = await once(worker, 'message');
      }
      if (!message.reading || message.mismatches !== 0) problems.push({ worker: n, message });
      const code = await worker.terminate();
      if (code !== 1) problems.push({ worker: n, exitCode: code });
    }
    const expected = files.map((f) => fs.readFileSync(f));
    const results = await readMany(files, { strategy: syncFailing ? 'auto' : strategy, concurrency: 4 });
    const mismatches = results.filter((bytes, k) => !bytes.equals(expected[k])).length;
    const deadline = Date.now() + 10000;
    while (fdCount() !== fdsBefore && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    const fdsLeft = fdCount() - fdsBefore;
    process.stdout.write(JSON.stringify({ problems, mismatches, fdsLeft, fds: fdsLeft === 0 ? [] : fdList() }) + '\\n');
  })();
`;

/** Runs terminationsSource; asserts no crash, every worker terminated mid-read, reads correct. */
async function runTerminations(t, testCase) {
  const result = await runToEnd(process.execPath, ['-e', terminationsSource], {
    env: { SMARTREAD_TEST_CASE: JSON.stringify({ files, workerSource, missing: path.join(tempDirs.disk, 'missing'), ...testCase }) },
    timeoutMs: 120000 * Math.max(1, testCase.workers / 50),
  });
  assertEndedWith(result, 0, 'the child terminating workers');
  const report = JSON.parse(result.stdout);
  assert.deepEqual(report.problems, []);
  assert.equal(report.mismatches, 0, 'the main thread reads correctly afterwards');
  if (engineInfo().engine === 'js') {
    // node:fs cannot close what a terminated worker opened (fs.promises.readFile leaks the same way).
    t.diagnostic(`JS engine: ${report.fdsLeft} descriptors of terminated workers left open, as node:fs leaves them`);
  } else {
    assert.equal(report.fdsLeft, 0, `descriptors left open by terminated workers: ${JSON.stringify(report.fds)}`);
  }
}

// 50 in `npm test`; `npm run test:stress` runs these tests again with 200.
const terminations = Number(process.env.SMARTREAD_TEST_TERMINATIONS) || 50;

describe('worker threads', () => {
  for (const strategy of ['uring', 'threadpool']) {
    test(`strategy '${strategy}': a worker reads through its own engine while the main thread reads`, async (t) => {
      if (skipUnlessAvailable(t, strategy)) return;
      const fdsBefore = openFdCount();
      const rounds = 40;
      const w = startWorker({ files, strategy, rounds, inFlight: 16, reportAfter: -1 });
      assert.deepEqual(await w.nextMessage(), { uring: engineInfo().uring }, 'the worker sees io_uring as this thread does');
      w.worker.postMessage('start');
      const mine = await withinTime(readRounds(strategy, rounds, 16), 60000, "the main thread's reads");
      assert.equal(mine, 0, 'the main thread read what fs.readFileSync read');
      assert.deepEqual(await w.nextMessage(), { done: true, mismatches: 0, completed: rounds * files.length });
      // Nothing is left to keep it alive: it ends by itself, and its engine with it.
      assert.equal(await withinTime(w.exited, 30000, 'the worker exiting'), 0);
      await waitUntil(() => openFdCount() === fdsBefore, 10000,
        () => `descriptors after the worker exited: ${JSON.stringify(openFds())}`);
    });

    test(`strategy '${strategy}': ${terminations} workers terminated one after another in the middle of reads (in a child process)`, async (t) => {
      if (skipUnlessAvailable(t, strategy)) return;
      await runTerminations(t, { strategy, workers: terminations });
    });
  }

  test(`${terminations} workers terminated while smartReadSync fails (ENOENT) in a loop (in a child process)`, async (t) => {
    await runTerminations(t, { strategy: 'auto', workers: terminations, syncFailing: true });
  });
});

// ---------------------------------------------------------------------------------------------
// io_uring refused or turned off

describe('a process without io_uring falls back', () => {
  // On the disk, over the fast path's limit as the child sets it (a budget of 100 µs at 8,000
  // MB/s: 800,000 bytes).
  const probeFile = () => files.find((file) => path.basename(file) === `disk-${MiB + 3}`);
  // The child reports what it saw: engineInfo(), a hash of what smartRead and readMany read on
  // 'auto' (the parent compares it with its own), and what a forced 'uring' rejects with.
  const childSource = `
    const { createHash } = require('node:crypto');
    const path = require('node:path');
    const { smartRead, smartReadSync, readMany, engineInfo, explain, prefetch, createReader, setTuning } = require('smartread');
    setTuning({ fastPathBudgetUs: 100, copyRateMBps: 8000 });
    const files = JSON.parse(process.env.SMARTREAD_TEST_FILES);
    const probe = process.env.SMARTREAD_TEST_PROBE;
    const hash = (bytes) => createHash('sha256').update(bytes).digest('hex');
    (async () => {
      const info = engineInfo();
      const auto = hash(await smartRead(probe));
      const many = (await readMany(files, { concurrency: 4 })).map(hash);
      const utf8 = await smartRead('/proc/version', { strategy: 'auto', encoding: 'utf8' });
      const sync = hash(smartReadSync(probe));
      const explained = explain(probe);
      const prefetched = await prefetch(files);
      let confined;
      try {
        const reader = createReader({ root: path.dirname(probe) });
        confined = hash(await reader.smartRead(path.basename(probe)));
        reader.close();
      } catch (err) {
        confined = { code: err.code };
      }
      let forced;
      try {
        await smartRead(probe, { strategy: 'uring' });
        forced = { resolved: true };
      } catch (err) {
        forced = { name: err.name, code: err.code, message: err.message };
      }
      process.stdout.write(JSON.stringify({ info, auto, many, utf8, forced, sync, explained, prefetched, confined }) + '\\n');
    })();
  `;
  const hash = (bytes) => createHash('sha256').update(bytes).digest('hex');

  function assertFellBack(result, what) {
    assertEndedWith(result, 0, what);
    const report = JSON.parse(result.stdout);
    assert.equal(report.info.engine, engineInfo().engine, 'the child loaded the engine this process did');
    assert.equal(report.info.uring.available, false);
    assert.equal(typeof report.info.uring.reason, 'string');
    assert.match(report.info.uring.reason, /\S/);
    assert.equal(report.auto, hash(fs.readFileSync(probeFile())), "the bytes read on 'auto'");
    assert.deepEqual(report.many, files.map((f) => hash(fs.readFileSync(f))), 'the bytes readMany read');
    assert.equal(report.utf8, fs.readFileSync('/proc/version', 'utf8'));
    assert.equal(report.forced.code, 'ERR_SMARTREAD_STRATEGY_UNAVAILABLE', JSON.stringify(report.forced));
    assert.ok(report.forced.message.includes(report.info.uring.reason), report.forced.message);
    assert.equal(report.sync, hash(fs.readFileSync(probeFile())), 'the bytes smartReadSync read');
    assert.deepEqual(report.prefetched, { started: files.length, failed: [] });
    if (report.info.engine === 'native') {
      // A file over the fast path's limit: explain() names the thread pool and says why.
      assert.equal(report.explained.strategy, 'threadpool', JSON.stringify(report.explained));
      assert.ok(report.explained.reason.includes(report.info.uring.reason), report.explained.reason);
      assert.equal(report.confined, hash(fs.readFileSync(probeFile())), 'the bytes a confined reader read');
    } else {
      assert.equal(report.explained.strategy, 'js', JSON.stringify(report.explained));
      assert.deepEqual(report.confined, { code: 'ERR_SMARTREAD_CONFINEMENT_UNAVAILABLE' });
    }
    return report;
  }

  let helper;
  let helperSkip;
  before(() => {
    const probe = spawnSync('cc', ['--version'], { encoding: 'utf8' });
    if (probe.error?.code === 'ENOENT') {
      helperSkip = 'no C compiler (cc) to build test/fixtures/no-io-uring.c';
      return;
    }
    helper = path.join(makeTempDir(tempDirs.disk, 'no-io-uring-'), 'no-io-uring');
    const compiled = spawnSync('cc', ['-O2', '-Wall', '-Wextra', '-Werror', '-o', helper,
      path.join(__dirname, 'fixtures', 'no-io-uring.c')], { encoding: 'utf8' });
    assert.equal(compiled.status, 0, `cc failed:\n${compiled.stderr}`);
  });

  test('io_uring_setup refused by a seccomp filter: unavailable with a reason; auto and readMany read through the thread pool', async (t) => {
    if (helperSkip) {
      t.skip(helperSkip);
      return;
    }
    const result = await runToEnd(helper, [process.execPath, '-e', childSource], {
      env: { SMARTREAD_TEST_FILES: JSON.stringify(files), SMARTREAD_TEST_PROBE: probeFile() },
      timeoutMs: childTimeoutMs,
    });
    if (result.code === 126) {
      t.skip(`this environment does not let a process install a seccomp filter: ${result.stderr.trim()}`);
      return;
    }
    const report = assertFellBack(result, 'the child under the seccomp filter');
    t.diagnostic(`reason under the filter: ${report.info.uring.reason}`);
    // Only where io_uring works without the filter does this show the fallback.
    const reason = strategyUnavailableReason('uring');
    if (reason !== null) {
      t.skip(`io_uring is unavailable here even without the filter (${reason}): the checks passed, but no fallback was exercised`);
    }
  });

  // A kernel without io_uring (ENOSYS) and one that refuses the ring's parameters (EINVAL, on
  // every rung of the setup ladder), through the addon's test-only switch.
  for (const [errno, text] of [['ENOSYS', 'Function not implemented'], ['EINVAL', 'Invalid argument']]) {
    test(`io_uring_setup failing with ${errno} (SMARTREAD_TEST_URING_SETUP_ERRNO): every API still works, and says why`, async () => {
      const result = await runToEnd(process.execPath, ['-e', childSource], {
        env: { SMARTREAD_TEST_FILES: JSON.stringify(files), SMARTREAD_TEST_PROBE: probeFile(), SMARTREAD_TEST_URING_SETUP_ERRNO: errno },
        timeoutMs: childTimeoutMs,
      });
      const report = assertFellBack(result, `the child with io_uring_setup failing with ${errno}`);
      if (report.info.engine === 'native') assert.equal(report.info.uring.reason, `io_uring_setup failed: ${text}`);
    });
  }

  test('SMARTREAD_IO_URING=0: unavailable, the reason names the variable; auto and readMany still read', async () => {
    const result = await runToEnd(process.execPath, ['-e', childSource], {
      env: { SMARTREAD_TEST_FILES: JSON.stringify(files), SMARTREAD_TEST_PROBE: probeFile(), SMARTREAD_IO_URING: '0' },
      timeoutMs: childTimeoutMs,
    });
    const report = assertFellBack(result, 'the child with SMARTREAD_IO_URING=0');
    assert.match(report.info.uring.reason, /SMARTREAD_IO_URING=0/);
  });

  test('SMARTREAD_IO_URING=0 under the seccomp filter too', async (t) => {
    if (helperSkip) {
      t.skip(helperSkip);
      return;
    }
    const result = await runToEnd(helper, [process.execPath, '-e', childSource], {
      env: { SMARTREAD_TEST_FILES: JSON.stringify(files), SMARTREAD_TEST_PROBE: probeFile(), SMARTREAD_IO_URING: '0' },
      timeoutMs: childTimeoutMs,
    });
    if (result.code === 126) {
      t.skip(`this environment does not let a process install a seccomp filter: ${result.stderr.trim()}`);
      return;
    }
    const report = assertFellBack(result, 'the child with SMARTREAD_IO_URING=0 under the filter');
    assert.match(report.info.uring.reason, /SMARTREAD_IO_URING=0/);
  });
});
