// smartWriteFile and smartWriteFileSync against fs.writeFile and fs.writeFileSync: the bytes
// every kind of data and encoding gives, flags, modes and fds, node:fs's errors for bad
// arguments and failed syscalls, on every strategy; atomic replacement (no reader sees a part,
// no temporary file stays), parent directories on request, flush, abort, and confinement.
'use strict';
const { test, describe } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { Worker } = require('node:worker_threads');
const { smartWriteFile, smartWriteFileSync, engineInfo, createWriter } = require('smartread');
const {
  checkNoFdLeak, useTempDirs, patternBuffer, assertSameBytes, errorFacts, thrownBy, rejectionOf, setUpAsyncEngines,
  runToEnd, withinTime, openFds, skipWithoutOpenat2,
} = require('./helpers');

setUpAsyncEngines();
checkNoFdLeak();
const tempDirs = useTempDirs();
const native = engineInfo().engine === 'native';
const uringReason = () => (engineInfo().uring.available ? null : engineInfo().uring.reason);

const STRATEGIES = ['auto', 'sync', 'threadpool', 'uring'];
// smartWriteFileSync, and smartWriteFile on each strategy, as one calling convention.
const WRITERS = [
  { name: 'smartWriteFileSync', write: async (p, d, o) => smartWriteFileSync(p, d, o) },
  ...STRATEGIES.map((strategy) => ({
    name: `smartWriteFile '${strategy}'`,
    strategy,
    write: (p, d, o) => smartWriteFile(p, d, typeof o === 'string' ? { encoding: o, strategy } : { ...o, strategy }),
  })),
];

function skipMissing(t, writer) {
  if (writer.strategy === 'uring' && uringReason()) {
    t.skip(`io_uring is not available: ${uringReason()}`);
    return true;
  }
  return false;
}

let count = 0;
const fresh = (dir, name = 'file') => path.join(dir, `${name}-${count++}`);

/** Names left in `dir` that look like an atomic write's temporary files. */
const temporaries = (dir) => fs.readdirSync(dir).filter((n) => /^\..*\.smartread-[0-9a-f]{12}\.tmp$/.test(n));

const dir = tempDirs.tmpfs ?? tempDirs.disk;

describe('the bytes fs.writeFileSync writes', () => {
  const floats = new Float64Array([1.5, -2.25, Math.PI, 1e300]);
  const data = [
    ['a string (utf8)', 'héllo wörld ✓ 🎉', undefined],
    ['a string in latin1', 'héllo', 'latin1'],
    ['a string in base64', Buffer.from('any bytes \u0000\u00ff').toString('base64'), 'base64'],
    ['a string in hex', 'deadbeef00ff', 'hex'],
    ['a string in utf16le', 'wide ✓', { encoding: 'utf16le' }],
    ['an empty string', '', undefined],
    ['a Buffer', patternBuffer(10000), undefined],
    ['an empty Buffer', Buffer.alloc(0), undefined],
    ['a Uint16Array', new Uint16Array([1, 2, 0xffff, 0x1234]), undefined],
    ['a Float64Array view with an offset', floats.subarray(1, 3), undefined],
    ['a DataView', new DataView(patternBuffer(64).buffer, 8, 40), undefined],
    ['a 2 MiB Buffer', patternBuffer(2 << 20), undefined],
  ];
  for (const writer of WRITERS) {
    test(writer.name, async (t) => {
      if (skipMissing(t, writer)) return;
      for (const [what, value, options] of data) {
        const expected = fresh(dir, 'expected');
        fs.writeFileSync(expected, value, options);
        const actual = fresh(dir);
        await writer.write(actual, value, options);
        assertSameBytes(fs.readFileSync(actual), fs.readFileSync(expected), what);
        // Over a longer file: truncated first, as 'w' does.
        fs.writeFileSync(actual, patternBuffer(3 << 20));
        await writer.write(actual, value, options);
        assertSameBytes(fs.readFileSync(actual), fs.readFileSync(expected), `${what}, over a longer file`);
      }
    });
  }
});

describe('flags, modes and fds as node:fs takes them', () => {
  for (const writer of WRITERS) {
    test(writer.name, async (t) => {
      if (skipMissing(t, writer)) return;
      const file = fresh(dir);
      fs.writeFileSync(file, 'first line\n');
      await writer.write(file, 'second line\n', { flag: 'a' });
      assert.equal(fs.readFileSync(file, 'utf8'), 'first line\nsecond line\n');
      await writer.write(file, 'FIRST', { flag: 'r+' });
      assert.equal(fs.readFileSync(file, 'utf8'), 'FIRST line\nsecond line\n');
      await writer.write(file, 'numeric', { flag: fs.constants.O_WRONLY | fs.constants.O_TRUNC });
      assert.equal(fs.readFileSync(file, 'utf8'), 'numeric');
      // 'wx' on a file that exists: open's EEXIST, and the file is left alone.
      const expected = thrownBy(() => fs.writeFileSync(file, 'x', { flag: 'wx' }));
      const err = await rejectionOf(() => writer.write(file, 'x', { flag: 'wx' }));
      assert.deepEqual(errorFacts(err), errorFacts(expected));
      assert.equal(fs.readFileSync(file, 'utf8'), 'numeric');
      // The mode of a new file, under the same umask.
      for (const mode of [0o600, '640', 0o755]) {
        const made = fresh(dir);
        const byNode = fresh(dir);
        await writer.write(made, 'm', { mode });
        fs.writeFileSync(byNode, 'm', { mode });
        assert.equal(fs.statSync(made).mode & 0o777, fs.statSync(byNode).mode & 0o777, `mode ${mode}`);
      }
      // An fd: written at its position and left open.
      const fd = fs.openSync(fresh(dir), 'w+');
      try {
        fs.writeSync(fd, 'head:');
        await writer.write(fd, 'tail', {});
        await writer.write(fd, '!', { flush: true });
        assert.equal(fs.readFileSync(fd, 'utf8'), '');
        const buffer = Buffer.alloc(20);
        assert.equal(fs.readSync(fd, buffer, 0, 20, 0), 10);
        assert.equal(buffer.toString('utf8', 0, 10), 'head:tail!');
      } finally {
        fs.closeSync(fd);
      }
    });
  }
});

describe('failed syscalls: the errors of node:fs', () => {
  fs.writeFileSync(path.join(dir, 'a-file'), 'x');
  const cases = [
    ['a directory', dir],
    ['a missing directory', path.join(dir, 'missing', 'x')],
    ['a file as the parent (ENOTDIR)', path.join(dir, 'a-file', 'x')],
    ['a trailing slash', `${path.join(dir, 'no-such')}/`],
  ];
  for (const writer of WRITERS) {
    test(writer.name, async (t) => {
      if (skipMissing(t, writer)) return;
      for (const [what, target] of cases) {
        const expected = thrownBy(() => fs.writeFileSync(target, 'data'));
        for (const atomic of [false, true]) {
          const err = await rejectionOf(() => writer.write(target, 'data', { atomic }));
          assert.deepEqual(errorFacts(err), errorFacts(expected), `${what}${atomic ? ', atomic' : ''}`);
        }
      }
      assert.deepEqual(temporaries(dir), []);
      // A closed fd: EBADF from write(2), as node:fs says it.
      const fd = fs.openSync(fresh(dir), 'w');
      fs.closeSync(fd);
      const expected = thrownBy(() => fs.writeFileSync(fd, 'x'));
      assert.deepEqual(errorFacts(await rejectionOf(() => writer.write(fd, 'x', {}))), errorFacts(expected));
    });
  }
});

describe('bad arguments: the errors of node:fs', () => {
  const target = path.join(dir, 'never-written');
  const bad = [
    ['a number as data', [target, 123]],
    ['an object as data', [target, { toString: () => 'x' }]],
    ['null as data', [target, null]],
    ['a bad encoding', [target, 'x', { encoding: 'nope' }]],
    ["the encoding 'buffer'", [target, 'x', { encoding: 'buffer' }]],
    ['options of the wrong type', [target, 'x', 42]],
    ['a bad flag', [target, 'x', { flag: 'bogus' }]],
    ['a flag that is not an integer', [target, 'x', { flag: 1.5 }]],
    ['a bad mode', [target, 'x', { mode: 'zz' }]],
    ['a negative mode', [target, 'x', { mode: -1 }]],
    ['a mode past 32 bits', [target, 'x', { mode: 2 ** 33 }]],
    ['flush that is not a boolean', [target, 'x', { flush: 'yes' }]],
    ['a signal that is not one', [target, 'x', { signal: {} }]],
    ['a path of the wrong type', [12.5, 'x']],
    ['a path with a NUL byte', [`${target}\0`, 'x']],
  ];
  for (const [name, args] of bad) {
    test(`${name}: smartWriteFileSync throws what fs.writeFileSync throws`, () => {
      assert.deepEqual(errorFacts(thrownBy(() => smartWriteFileSync(...args))), errorFacts(thrownBy(() => fs.writeFileSync(...args))));
    });
    test(`${name}: smartWriteFile rejects with what fs.promises.writeFile rejects with`, async () => {
      const expected = await rejectionOf(() => fs.promises.writeFile(...args));
      assert.deepEqual(errorFacts(await rejectionOf(() => smartWriteFile(...args))), errorFacts(expected));
    });
  }
  test("smartread's own options", async () => {
    const codes = async (options) => (await rejectionOf(() => smartWriteFile(target, 'x', options))).code;
    assert.equal(await codes({ atomic: 'yes' }), 'ERR_INVALID_ARG_TYPE');
    assert.equal(await codes({ mkdirs: 1 }), 'ERR_INVALID_ARG_TYPE');
    assert.equal(await codes({ strategy: 'mmap' }), 'ERR_INVALID_ARG_VALUE');
    assert.equal(await codes({ dirMode: 'zz' }), 'ERR_INVALID_ARG_VALUE');
    // An atomic write replaces the whole file: not with an appending or reading flag.
    assert.equal(await codes({ atomic: true, flag: 'a' }), 'ERR_INVALID_ARG_VALUE');
    assert.equal(await codes({ atomic: true, flag: 'r+' }), 'ERR_INVALID_ARG_VALUE');
    // ...nor through an fd, which has no name to replace.
    const fd = fs.openSync(fresh(dir), 'w');
    try {
      assert.equal((await rejectionOf(() => smartWriteFile(fd, 'x', { atomic: true }))).code, 'ERR_INVALID_ARG_VALUE');
      assert.equal(thrownBy(() => smartWriteFileSync(fd, 'x', { atomic: true })).code, 'ERR_INVALID_ARG_VALUE');
    } finally {
      fs.closeSync(fd);
    }
    assert.equal(fs.existsSync(target), false);
  });
});

describe('atomic: the old file or the whole new one, never a part, and nothing left beside it', () => {
  for (const writer of WRITERS) {
    test(writer.name, async (t) => {
      if (skipMissing(t, writer)) return;
      const work = fs.mkdtempSync(path.join(dir, 'atomic-'));
      const file = path.join(work, 'target');
      await writer.write(file, 'one', { atomic: true, mode: 0o640 });
      assert.equal(fs.readFileSync(file, 'utf8'), 'one');
      assert.equal(fs.statSync(file).mode & 0o777, 0o640 & ~process.umask());
      const inode = fs.statSync(file).ino;
      await writer.write(file, patternBuffer(300000), { atomic: true, flush: true });
      assertSameBytes(fs.readFileSync(file), patternBuffer(300000));
      // A new file took the name: the old one's inode is gone from it.
      assert.notEqual(fs.statSync(file).ino, inode);
      // 'wx': only where nothing has the name yet, with open's error otherwise.
      const expected = thrownBy(() => fs.writeFileSync(file, 'x', { flag: 'wx' }));
      assert.deepEqual(errorFacts(await rejectionOf(() => writer.write(file, 'x', { atomic: true, flag: 'wx' }))), errorFacts(expected));
      await writer.write(path.join(work, 'new'), 'made', { atomic: true, flag: 'wx' });
      assert.equal(fs.readFileSync(path.join(work, 'new'), 'utf8'), 'made');
      // A symbolic link at the name is replaced by the file, as rename(2) replaces names.
      fs.writeFileSync(path.join(work, 'real'), 'real');
      fs.symlinkSync('real', path.join(work, 'link'));
      await writer.write(path.join(work, 'link'), 'replaced', { atomic: true });
      assert.equal(fs.lstatSync(path.join(work, 'link')).isFile(), true);
      assert.equal(fs.readFileSync(path.join(work, 'real'), 'utf8'), 'real');
      // A name as long as a name may be still gets a temporary name beside it.
      await writer.write(path.join(work, 'n'.repeat(255)), 'long', { atomic: true });
      assert.equal(fs.readFileSync(path.join(work, 'n'.repeat(255)), 'utf8'), 'long');
      assert.deepEqual(temporaries(work), []);
    });
  }

  test('a reader in another thread sees only whole versions while they are replaced', async (t) => {
    const work = fs.mkdtempSync(path.join(dir, 'readers-'));
    const file = path.join(work, 'versions');
    const size = 256 * 1024;
    const version = (k) => Buffer.alloc(size, k);
    fs.writeFileSync(file, version(0));
    const reader = new Worker(`
      const { parentPort, workerData: { file, size } } = require('node:worker_threads');
      const fs = require('node:fs');
      let reads = 0;
      let bad = null;
      let stop = false;
      parentPort.on('message', () => { stop = true; });
      const loop = () => {
        for (let i = 0; i < 50 && !bad; i++) {
          const bytes = fs.readFileSync(file);
          reads++;
          if (bytes.length !== size || !bytes.every((b) => b === bytes[0])) bad = { length: bytes.length, first: bytes[0], last: bytes[bytes.length - 1] };
        }
        if (stop || bad) parentPort.postMessage({ reads, bad });
        else setImmediate(loop);
      };
      loop();`, { eval: true, workerData: { file, size } });
    const outcome = new Promise((resolve, reject) => {
      reader.once('message', resolve);
      reader.once('error', reject);
    });
    let k = 1;
    for (const writer of WRITERS) {
      if (writer.strategy === 'uring' && uringReason()) continue;
      for (let i = 0; i < 30; i++) await writer.write(file, version(k++ % 250 + 1), { atomic: true });
    }
    reader.postMessage('stop');
    const { reads, bad } = await withinTime(outcome, 20000, 'the reader');
    await reader.terminate();
    assert.equal(bad, null, `a read saw a part of a version: ${JSON.stringify(bad)}`);
    t.diagnostic(`${reads} reads during ${k - 1} atomic replacements`);
    assert.deepEqual(temporaries(work), []);
  });
});

describe('mkdirs: the parent directories made first, as fs.mkdir(dirname, { recursive: true })', () => {
  for (const writer of WRITERS) {
    test(writer.name, async (t) => {
      if (skipMissing(t, writer)) return;
      const work = fs.mkdtempSync(path.join(dir, 'mkdirs-'));
      await writer.write(path.join(work, 'a/b/c/file'), 'deep', { mkdirs: true, dirMode: 0o750 });
      assert.equal(fs.readFileSync(path.join(work, 'a/b/c/file'), 'utf8'), 'deep');
      assert.equal(fs.statSync(path.join(work, 'a/b')).mode & 0o777, 0o750 & ~process.umask());
      // Known now: removed behind smartread's back, made again.
      fs.rmSync(path.join(work, 'a'), { recursive: true });
      await writer.write(path.join(work, 'a/b/c/file'), 'again', { mkdirs: true, atomic: true });
      assert.equal(fs.readFileSync(path.join(work, 'a/b/c/file'), 'utf8'), 'again');
      // Made a file: fs.mkdir's error for the parent.
      fs.rmSync(path.join(work, 'a/b'), { recursive: true });
      fs.writeFileSync(path.join(work, 'a/b'), 'in the way');
      const expected = await rejectionOf(() => fs.promises.mkdir(path.join(work, 'a/b/c'), { recursive: true }));
      const err = await rejectionOf(() => writer.write(path.join(work, 'a/b/c/file'), 'x', { mkdirs: true }));
      if (writer.name === 'smartWriteFileSync') {
        assert.deepEqual(errorFacts(err), errorFacts(thrownBy(() => fs.mkdirSync(path.join(work, 'a/b/c'), { recursive: true }))));
      } else {
        assert.deepEqual(errorFacts(err), errorFacts(expected));
      }
      // A file in the working directory has no parent to make.
      const cwd = process.cwd();
      process.chdir(work);
      try {
        await writer.write('here', 'cwd', { mkdirs: true });
        assert.equal(fs.readFileSync(path.join(work, 'here'), 'utf8'), 'cwd');
      } finally {
        process.chdir(cwd);
      }
    });
  }
});

describe('flush and abort', () => {
  test('flush: the file is fsynced before it is closed (strace, on the calling thread and the pool)', async (t) => {
    const probe = await runToEnd('strace', ['-V']).catch((err) => ({ code: -1, stderr: err.message }));
    if (probe.code !== 0) return t.skip(`strace is not available (${String(probe.stderr).trim()})`);
    const file = fresh(dir);
    const script = (flush, strategy) => `require('smartread').smartWriteFile(${JSON.stringify(file)}, 'x', { flush: ${flush}, strategy: '${strategy}' })`;
    for (const strategy of ['sync', 'threadpool']) {
      for (const flush of [true, false]) {
        const run = await runToEnd('strace', ['-f', '-c', '-U', 'name,calls', '-e', 'trace=fsync,fdatasync', process.execPath, '-e', script(flush, strategy)]);
        assert.equal(run.code, 0, run.stderr);
        assert.equal(/\bfsync\b/.test(run.stderr), flush, `${strategy}, flush ${flush}: ${run.stderr}`);
      }
    }
  });

  for (const writer of WRITERS.slice(1)) {
    test(`${writer.name}: an aborted signal rejects with an AbortError and writes nothing`, async (t) => {
      if (skipMissing(t, writer)) return;
      const controller = new AbortController();
      controller.abort(new Error('stop'));
      const file = fresh(dir);
      const err = await rejectionOf(() => writer.write(file, 'x', { signal: controller.signal }));
      assert.equal(err.name, 'AbortError');
      assert.equal(err.cause.message, 'stop');
      assert.equal(fs.existsSync(file), false);
      // Aborted while it writes 64 MiB atomically: an AbortError, and the target is the old
      // file or the whole new one, with no temporary file left.
      const work = fs.mkdtempSync(path.join(dir, 'abort-'));
      const target = path.join(work, 'big');
      fs.writeFileSync(target, 'old');
      const late = new AbortController();
      const big = Buffer.alloc(64 << 20, 7);
      const settled = writer.write(target, big, { atomic: true, signal: late.signal }).then(() => 'written', (e) => e.name);
      // Aborted once its temporary file is there (or once it is done): aborted at once, the
      // write may not have opened it yet (the pure-JS engine opens it on libuv's pool), and
      // then no temporary file was not proof that the engine had finished.
      let done = false;
      void settled.then(() => { done = true; });
      while (!done && temporaries(work).length === 0) await new Promise((r) => setImmediate(r));
      late.abort();
      const outcome = await settled;
      t.diagnostic(`outcome: ${outcome}`);
      assert.ok(outcome === 'AbortError' || outcome === 'written', outcome);
      // The engine finishes its cleanup after the rejection: wait for the temporary file to go
      // and for the engine's descriptors in `work` to close.
      const inWork = () => Object.values(openFds()).filter((link) => link.startsWith(work));
      const deadline = Date.now() + 10000;
      while ((temporaries(work).length > 0 || inWork().length > 0) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 10));
      }
      assert.deepEqual(temporaries(work), []);
      assert.deepEqual(inWork(), []);
      const now = fs.readFileSync(target);
      assert.ok(now.equals(Buffer.from('old')) || now.equals(big), `the target holds ${now.length} bytes`);
    });
  }
});

describe('an abort stops the engines\' writes in flight where they still can', () => {
  test('the pure-JS engine: asked before it begins and before an atomic rename; stopped, the target stays as it was', async () => {
    const { jsWriteFile } = require('../dist/write/js_write_engine.js');
    const { O_WRONLY, O_CREAT, O_TRUNC } = fs.constants;
    const work = fs.mkdtempSync(path.join(dir, 'stop-js-'));
    const target = path.join(work, 'target');
    fs.writeFileSync(target, 'old');
    const data = Buffer.alloc(1 << 20, 5);
    const cancelled = { errno: -125, syscall: 'write' };
    // Stopped before it begins: nothing opened, in place or atomic.
    for (const atomic of [0, 1]) {
      assert.deepEqual(await jsWriteFile(target, data, O_WRONLY | O_CREAT | O_TRUNC, 0o644, false, atomic, () => true), cancelled);
    }
    assert.deepEqual(fs.readdirSync(work), ['target']);
    // Stopped while it writes (the second question is the one before the rename): the
    // temporary file is unlinked, the target not replaced.
    let asked = 0;
    assert.deepEqual(await jsWriteFile(target, data, O_WRONLY | O_CREAT | O_TRUNC, 0o644, false, 1, () => asked++ > 0), cancelled);
    assert.equal(asked, 2);
    assert.deepEqual(fs.readdirSync(work), ['target']);
    assert.equal(fs.readFileSync(target, 'latin1'), 'old');
    // Never stopped: written.
    assert.equal(await jsWriteFile(target, data, O_WRONLY | O_CREAT | O_TRUNC, 0o644, false, 1, () => false), undefined);
    assertSameBytes(fs.readFileSync(target), data);
  });

  test('the thread pool: a run looks at its stop byte while it runs; what it had not begun fails with ECANCELED', async (t) => {
    if (!native) return t.skip('the thread-pool engine needs the native addon');
    const { native: binding } = require('../dist/engine/engine.js');
    const { O_WRONLY, O_CREAT, O_TRUNC } = fs.constants;
    const work = fs.mkdtempSync(path.join(dir, 'stop-pool-'));
    const targets = ['a', 'b', 'c'].map((name) => path.join(work, name));
    for (const target of targets) fs.writeFileSync(target, 'old');
    const data = Buffer.alloc(4096, 9);
    const flags = O_WRONLY | O_CREAT | O_TRUNC;
    const modes = new Uint32Array([0o644, 0o644, 0o644, 0o644]);
    // Set before the run: nothing is written.
    const before = await binding.threadpoolWriteFiles(targets, [data, data, data], modes, flags, false, 1, undefined, undefined, Uint8Array.of(1));
    assert.deepEqual(before, targets.map(() => ({ errno: -125, syscall: 'write' })));
    assert.deepEqual(fs.readdirSync(work).sort(), ['a', 'b', 'c']);
    for (const target of targets) assert.equal(fs.readFileSync(target, 'latin1'), 'old');
    // Set while the run's first write waits on a FIFO nobody reads yet (its descriptor is the
    // run's first target, written in place): the files after it are not begun.
    const fifo = path.join(work, 'fifo');
    assert.equal((await runToEnd('mkfifo', [fifo])).code, 0);
    const fd = fs.openSync(fifo, 'r+');
    try {
      const stop = new Uint8Array(1);
      const piped = Buffer.alloc(1 << 20, 3);
      const pending = binding.threadpoolWriteFiles([fd, ...targets], [piped, data, data, data], modes, flags, false, 1, undefined, undefined, stop);
      // The first bytes through the FIFO: the run is in its first write (1 MiB, 16 times what
      // the FIFO holds), past the question before it. Then the rest, so that it ends.
      const drained = Buffer.alloc(piped.length);
      let got = fs.readSync(fd, drained, 0, 1, null);
      stop[0] = 1;
      while (got < piped.length) got += fs.readSync(fd, drained, got, piped.length - got, null);
      assertSameBytes(drained, piped);
      const run = await pending;
      assert.equal(run[0], undefined);
      assert.deepEqual(run.slice(1), targets.map(() => ({ errno: -125, syscall: 'write' })));
    } finally {
      fs.closeSync(fd);
    }
    assert.deepEqual(fs.readdirSync(work).sort(), ['a', 'b', 'c', 'fifo']);
    for (const target of targets) assert.equal(fs.readFileSync(target, 'latin1'), 'old');
  });
});

test('io_uring writes a file a part at a time where one WRITE cannot carry it (parts of 1000 bytes)', async (t) => {
  if (!native || uringReason()) return t.skip('io_uring is not available here');
  const file = fresh(dir);
  const script = `
    const { smartWriteFile } = require('smartread');
    const data = Buffer.alloc(10000);
    for (let i = 0; i < data.length; i++) data[i] = (i * 7 + 3) % 251;
    (async () => {
      await smartWriteFile(${JSON.stringify(file)}, data, { strategy: 'uring', flush: true });
      await smartWriteFile(${JSON.stringify(file)}, data, { strategy: 'uring', flag: 'a' });
      await smartWriteFile(${JSON.stringify(`${file}-atomic`)}, data, { strategy: 'uring', atomic: true });
    })();`;
  const run = await runToEnd(process.execPath, ['-e', script], { env: { SMARTREAD_TEST_URING_WRITE_PART: '1000' } });
  assert.equal(run.code, 0, run.stderr);
  assertSameBytes(fs.readFileSync(file), Buffer.concat([patternBuffer(10000), patternBuffer(10000)]));
  assertSameBytes(fs.readFileSync(`${file}-atomic`), patternBuffer(10000));
});

describe('confined beneath a root (createWriter)', () => {
  test('writes beneath the root only; atomic and mkdirs there too', async (t) => {
    if (!native) return t.skip('confinement needs the native addon (openat2)');
    if (skipWithoutOpenat2(t)) return;
    const root = fs.mkdtempSync(path.join(dir, 'root-'));
    const outside = fs.mkdtempSync(path.join(dir, 'outside-'));
    fs.symlinkSync(outside, path.join(root, 'out'));
    const writer = createWriter({ root });
    t.after(() => writer.close());
    for (const strategy of STRATEGIES) {
      if (strategy === 'uring' && uringReason()) continue;
      await writer.smartWriteFile(`${strategy}/a/b.txt`, strategy, { strategy, mkdirs: true });
      await writer.smartWriteFile(`${strategy}/a/b.txt`, `${strategy}!`, { strategy, atomic: true, flush: true });
      assert.equal(fs.readFileSync(path.join(root, strategy, 'a/b.txt'), 'utf8'), `${strategy}!`);
      for (const escape of ['../escaped', 'out/escaped', `${strategy}/../../escaped`]) {
        for (const options of [{ strategy }, { strategy, atomic: true }, { strategy, mkdirs: true }]) {
          const err = await rejectionOf(() => writer.smartWriteFile(escape, 'x', options));
          assert.equal(err.code, 'ERR_SMARTREAD_OUTSIDE_ROOT', `${escape} ${JSON.stringify(options)}`);
        }
      }
    }
    writer.smartWriteFileSync('sync-call/file', 'sync', { mkdirs: true, atomic: true });
    assert.equal(fs.readFileSync(path.join(root, 'sync-call/file'), 'utf8'), 'sync');
    assert.equal(thrownBy(() => writer.smartWriteFileSync('out/x', 'x')).code, 'ERR_SMARTREAD_OUTSIDE_ROOT');
    assert.deepEqual(fs.readdirSync(outside), []);
    assert.equal(fs.existsSync(path.join(path.dirname(root), 'escaped')), false);
    assert.deepEqual(temporaries(root), []);
  });
});
