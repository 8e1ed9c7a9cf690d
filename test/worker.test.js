// smartReadSync in worker threads: each thread has its own engine state, reads in several threads
// at once do not disturb each other, and a worker terminated mid-read takes nothing down with it.
'use strict';
const { test, before } = require('node:test');
const assert = require('node:assert/strict');
const { Worker } = require('node:worker_threads');
const { once } = require('node:events');
const fs = require('node:fs');
const path = require('node:path');
const { smartReadSync, engineInfo } = require('smartread');
const { checkNoFdLeak, useTempDirs, openFdCount, openFds, writePattern, assertSameBytes, runToEnd } = require('./helpers');

checkNoFdLeak();
const tempDirs = useTempDirs();

const KiB = 1024;
const MiB = 1024 * KiB;

// Small and medium files on each filesystem, files without a reported size, and one large file
// (the native engine reads files of 32 MiB and more with a helper thread).
const files = [];
let largeFile;
before(() => {
  for (const { kind, dir } of tempDirs.all) {
    for (const size of [0, 1, 4096, 65537, 300 * KiB, MiB + 3]) {
      files.push(writePattern(path.join(dir, `${kind}-${size}`), size));
    }
  }
  files.push('/proc/version', '/proc/self/cmdline');
  largeFile = writePattern(path.join(tempDirs.tmpfs ?? tempDirs.disk, 'large'), 33 * MiB + 5);
});

// Runs in the workers and in the main thread: reads the files in a loop, each in one of four
// ways, and checks every result against what fs.readFileSync read before the loop. The two
// directions make threads read different files through the same code at the same time; the 'utf8'
// read of an fd has no size to go by, so it runs through the engine's per-thread scratch buffer.
const readLoopSource = `
  function readLoop({ smartReadSync, fs, files, largeFile, reads, reverse, onProgress }) {
    const expected = new Map([...files, largeFile].map((f) => [f, fs.readFileSync(f)]));
    const expectedUtf8 = new Map(files.map((f) => [f, expected.get(f).length > 400 * 1024 ? null : fs.readFileSync(f, 'utf8')]));
    const mismatches = [];
    for (let i = 0; reads === Infinity || i < reads; i++) {
      const k = reverse ? files.length - 1 - (i % files.length) : i % files.length;
      // Every 200th read is of the large file, by path (way 0).
      const file = i % 200 === 196 ? largeFile : files[k];
      // utf8 decoding of pattern bytes costs more than the read: not for the 1 MiB files.
      const way = i % 4 === 3 && expectedUtf8.get(file) == null ? 2 : i % 4;
      let ok;
      if (way === 0) {
        ok = smartReadSync(file).equals(expected.get(file));
      } else if (way === 1) {
        ok = smartReadSync(file, { flag: 'r' }).equals(expected.get(file));
      } else {
        const fd = fs.openSync(file, 'r');
        try {
          ok = way === 2
            ? smartReadSync(fd).equals(expected.get(file))
            : smartReadSync(fd, 'utf8') === expectedUtf8.get(file);
        } finally {
          fs.closeSync(fd);
        }
      }
      if (!ok && mismatches.length < 10) mismatches.push({ read: i, file, way });
      if (onProgress) onProgress(i);
    }
    return mismatches;
  }
`;
// eslint-disable-next-line no-new-func
const readLoop = new Function(`${readLoopSource}; return readLoop;`)();

// The worker: loads smartread, says which engine it got, waits for the start signal (so that all
// threads read at once), reads, reports. With reads = Infinity it reads until terminated.
const workerSource = `
  const { parentPort, workerData } = require('node:worker_threads');
  const fs = require('node:fs');
  const { smartReadSync, engineInfo } = require('smartread');
  ${readLoopSource}
  const { files, largeFile, reads, reverse, start } = workerData;
  parentPort.postMessage({ engine: engineInfo().engine });
  Atomics.wait(new Int32Array(start), 0, 0);
  const mismatches = readLoop({
    smartReadSync, fs, files, largeFile, reads, reverse,
    onProgress: reads === Infinity ? (i) => { if (i === 200) parentPort.postMessage({ reading: true }); } : undefined,
  });
  parentPort.postMessage({ mismatches });
`;

function startWorker(start, { reads, reverse }) {
  const worker = new Worker(workerSource, {
    eval: true,
    workerData: { files, largeFile, reads, reverse, start },
  });
  const messages = [];
  const waiting = [];
  worker.on('message', (message) => (waiting.length > 0 ? waiting.shift()(message) : messages.push(message)));
  const exited = once(worker, 'exit').then(([code]) => code);
  const nextMessage = () => (messages.length > 0
    ? Promise.resolve(messages.shift())
    : new Promise((resolve, reject) => {
      waiting.push(resolve);
      exited.then((code) => reject(new Error(`worker exited (${code}) before its next message`)));
      worker.once('error', reject);
    }));
  return { worker, nextMessage, exited };
}

/** Starts `count` workers reading `reads` times each, and reads as many in this thread meanwhile. */
async function readInThreads(count, reads) {
  const fdsBefore = openFdCount();
  const start = new SharedArrayBuffer(4);
  const workers = Array.from({ length: count }, (_, n) => startWorker(start, { reads, reverse: n % 2 === 0 }));
  for (const w of workers) {
    assert.deepEqual(await w.nextMessage(), { engine: engineInfo().engine }, 'the worker uses the same engine');
  }
  Atomics.store(new Int32Array(start), 0, 1);
  Atomics.notify(new Int32Array(start), 0);
  const mine = readLoop({ smartReadSync, fs, files, largeFile, reads, reverse: false });
  assert.deepEqual(mine, [], 'the main thread read what fs.readFileSync read');
  for (const w of workers) {
    assert.deepEqual(await w.nextMessage(), { mismatches: [] }, 'the worker read what fs.readFileSync read');
    assert.equal(await w.exited, 0);
  }
  assert.equal(openFdCount(), fdsBefore, `descriptors after the workers exited: ${JSON.stringify(openFds())}`);
}

test('a worker and the main thread read the same files at the same time', async () => {
  await readInThreads(1, 2000);
});

test('two workers and the main thread read the same files at the same time', async () => {
  await readInThreads(2, 2000);
});

test('a worker terminated while it reads: no crash, and reads go on correctly', async () => {
  const fdsBefore = openFdCount();
  const start = new SharedArrayBuffer(4);
  const w = startWorker(start, { reads: Infinity, reverse: false });
  assert.deepEqual(await w.nextMessage(), { engine: engineInfo().engine });
  Atomics.store(new Int32Array(start), 0, 1);
  Atomics.notify(new Int32Array(start), 0);
  assert.deepEqual(await w.nextMessage(), { reading: true });
  assert.equal(await w.worker.terminate(), 1);
  assert.deepEqual(readLoop({ smartReadSync, fs, files, largeFile, reads: 400, reverse: false }), []);
  assert.equal(openFdCount(), fdsBefore, `descriptors after the worker was terminated: ${JSON.stringify(openFds())}`);
});

test('a worker terminated while it loads smartread', async () => {
  const fdsBefore = openFdCount();
  for (let n = 0; n < 5; n++) {
    const worker = new Worker("require('smartread').smartReadSync('/proc/version');", { eval: true });
    await once(worker, 'online');
    await worker.terminate();
  }
  assertSameBytes(smartReadSync(files[3]), fs.readFileSync(files[3]));
  assert.equal(openFdCount(), fdsBefore);
});

// A worker that ends (process.exit, or terminate() from outside) while the addon reads a property
// of an argument: the read fails, as every call into JavaScript does from then on, and the addon
// must return rather than go on with the missing value (which node-addon-api turned into a fatal
// error, "Error::New napi_get_last_error_info", killing the whole process: seen once in CI when
// a worker was terminated while smartread's loader passed the addon its options). A getter that
// ends the worker makes that moment certain; each call runs in a worker of a child process.
test('a worker that ends while the addon reads its arguments: no fatal error', async (t) => {
  const addon = engineInfo().path;
  if (engineInfo().engine !== 'native') return t.skip('the native addon did not load');
  const inWorker = `const binding = require(${JSON.stringify(addon)});
    const call = require('node:worker_threads').workerData;
    const ending = { get() { process.exit(0); }, enumerable: true };
    if (call === 'setup') {
      binding.setup(Object.defineProperty({ hugePages: false, blockPoolFrom: 0 }, 'maxLength', ending));
    } else if (call === 'setTuning') {
      binding.setTuning(Object.defineProperty({ ...binding.tuning() }, 'fastPathBudgetUs', ending));
    } else {
      binding.prefetch(Object.defineProperty(['/proc/version', '/proc/version'], 1, ending));
    }
    process.exit(3);`;
  const script = `const { Worker } = require('node:worker_threads');
    const codes = [];
    for (const call of ['setup', 'setTuning', 'prefetch']) {
      new Worker(${JSON.stringify(inWorker)}, { eval: true, workerData: call })
        .on('exit', (code) => { codes.push(call + ' ' + code); if (codes.length === 3) console.log(codes.sort().join(', ')); });
    }`;
  const { code, signal, stdout, stderr } = await runToEnd(process.execPath, ['-e', script]);
  assert.deepEqual([code, signal, stdout.trim()], [0, null, 'prefetch 0, setTuning 0, setup 0'], stderr);
});

// Node unloads an addon with the last environment that loaded it: here a worker's, the main
// thread never requiring smartread. The worker's pool gives its 64 MiB block back at teardown,
// to the process's unmapping thread, which must still have its code when munmap returns.
test("a process whose only smartread was a worker's exits cleanly after the worker ends", async () => {
  const file = writePattern(path.join(tempDirs.tmpfs ?? tempDirs.disk, 'pooled-in-worker'), 64 * MiB);
  const inWorker = `const { smartReadSync } = require('smartread');
    if (smartReadSync(${JSON.stringify(file)}).length !== ${64 * MiB}) process.exit(3);`;
  const script = `const { Worker } = require('node:worker_threads');
    const worker = new Worker(${JSON.stringify(inWorker)}, { eval: true });
    worker.on('exit', (code) => setTimeout(() => console.log(code), 200));`;
  // Without the fix, 7 in 10 such runs died of SIGSEGV.
  for (let run = 0; run < 4; run++) {
    const { code, signal, stdout, stderr } = await runToEnd(process.execPath, ['-e', script]);
    assert.deepEqual([code, signal, stdout.trim()], [0, null, '0'], stderr);
  }
});
