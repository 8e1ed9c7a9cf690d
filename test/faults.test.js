// Faults and odd inputs on every strategy: running out of descriptors (ulimit -n 64), special
// files (a FIFO without a writer, a unix socket, endless character devices, /proc and /sys,
// /dev/null), and permission denied in a child that is not root. Each case ends with node:fs's
// error or the right bytes, never a crash, a hang or a descriptor left open.
'use strict';
const { test, describe, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const { smartRead, smartReadSync, readMany, engineInfo, tuning, setTuning } = require('smartread');
const {
  checkNoFdLeak, useTempDirs, writePattern, assertSameBytes, errorFacts, thrownBy, rejectionOf, runToEnd, unreachableWithoutRoot,
  withinTime, STRATEGIES, skipUnlessAvailable, setUpAsyncEngines,
} = require('./helpers');

setUpAsyncEngines();
checkNoFdLeak({ spawnsChildren: true });
const tempDirs = useTempDirs();
const dir = tempDirs.disk;
const KiB = 1024;

/** A child's exit, checked: it ended by itself with code 0. */
function assertCleanExit(result, what) {
  const output = `\nstdout: ${result.stdout.slice(-2000)}\nstderr: ${result.stderr.slice(-2000)}`;
  assert.equal(result.timedOut, false, `${what}: still running, killed${output}`);
  assert.equal(result.signal, null, `${what}: killed by ${result.signal}${output}`);
  assert.equal(result.code, 0, `${what}: exit code ${result.code}${output}`);
}

// ---------------------------------------------------------------------------------------------
// Running out of descriptors

describe('10,000 concurrent reads with ulimit -n 64 (in a child process)', () => {
  const files = [];
  before(() => {
    for (let i = 0; i < 50; i++) files.push(writePattern(path.join(dir, `emfile-${i}`), [0, 100, 5000, 20 * KiB, 300 * KiB][i % 5] + i));
  });

  // Every result is the file's bytes or an EMFILE error (a read that could not get a descriptor);
  // afterwards a read works. The child reports counts.
  const childSource = `
    const fs = require('node:fs');
    const { smartRead, readMany } = require('smartread');
    const files = JSON.parse(process.env.SMARTREAD_TEST_FILES);
    const strategy = process.env.SMARTREAD_TEST_STRATEGY;
    const expected = files.map((f) => fs.readFileSync(f));
    (async () => {
      const counts = { ok: 0, emfile: 0, other: [] };
      const note = (k) => (bytes) => {
        if (bytes.equals(expected[k])) counts.ok++;
        else counts.other.push('wrong bytes for ' + files[k]);
      };
      const fail = (err) => {
        if (err.code === 'EMFILE' && err.syscall === 'open' && typeof err.path === 'string' &&
            err.message.startsWith('EMFILE: too many open files, open ')) counts.emfile++;
        else counts.other.push(String(err.stack));
      };
      const reads = [];
      for (let i = 0; i < 10000; i++) {
        const k = i % files.length;
        reads.push(smartRead(files[k], { strategy }).then(note(k), fail));
      }
      const list = Array.from({ length: 10000 }, (_, i) => files[i % files.length]);
      const many = readMany(list, { strategy, concurrency: 10000, settle: true }).then((results) => {
        results.forEach((r, i) => (r.status === 'fulfilled' ? note(i % files.length)(r.value) : fail(r.reason)));
      });
      await Promise.all([...reads, many]);
      const after = await smartRead(files[3], { strategy });
      counts.afterwards = after.equals(expected[3]);
      counts.afterwardsSync = require('smartread').smartReadSync(files[4]).equals(expected[4]);
      counts.uring = require('smartread').engineInfo().uring;
      process.stdout.write(JSON.stringify(counts) + '\\n');
    })();
  `;

  for (const strategy of STRATEGIES) {
    test(`strategy '${strategy}': every read gives its bytes or EMFILE; the process goes on`, async (t) => {
      if (skipUnlessAvailable(t, strategy)) return;
      const result = await runToEnd('sh', ['-c', 'ulimit -n 64 && exec "$0" -e "$1"', process.execPath, childSource], {
        env: { SMARTREAD_TEST_FILES: JSON.stringify(files), SMARTREAD_TEST_STRATEGY: strategy },
        timeoutMs: 120000,
      });
      assertCleanExit(result, `the child reading on '${strategy}' with 64 descriptors`);
      const counts = JSON.parse(result.stdout);
      assert.deepEqual(counts.other, [], 'nothing but bytes and EMFILE');
      assert.equal(counts.ok + counts.emfile, 20000);
      assert.equal(counts.afterwards, true, 'a read afterwards works');
      assert.equal(counts.afterwardsSync, true, 'a smartReadSync afterwards works');
      // Direct descriptors count against no limit, but the kernel sizes their table by it: the
      // ring takes a smaller table rather than giving io_uring up.
      assert.deepEqual(counts.uring, engineInfo().uring, 'io_uring is as available as without the limit');
      t.diagnostic(`${counts.ok} read, ${counts.emfile} EMFILE`);
    });
  }
});

// ---------------------------------------------------------------------------------------------
// Many failures in a row

// A failed open must give back everything the read took: io_uring's direct-descriptor slots
// (1,024) once ran out after that many failed opens, and every later read waited forever.
for (const strategy of STRATEGIES) {
  test(`strategy '${strategy}': 3,000 failed opens (ENOENT, EISDIR), then reads work`, async (t) => {
    if (skipUnlessAvailable(t, strategy)) return;
    const good = writePattern(path.join(dir, `after-failures-${strategy}`), 5000);
    for (let i = 0; i < 3000; i += 100) {
      const batch = Array.from({ length: 100 }, (_, k) => ((i + k) % 3 === 0 ? dir : path.join(dir, `missing-${i + k}`)));
      const results = await withinTime(readMany(batch, { strategy, settle: true, concurrency: 32 }), 20000, `failed reads ${i}..${i + 99}`);
      for (const r of results) assert.match(r.reason?.code ?? 'resolved', /^(ENOENT|EISDIR)$/);
    }
    const bytes = await withinTime(smartRead(good, { strategy }), 20000, 'a read after 3,000 failures');
    assert.ok(bytes.equals(fs.readFileSync(good)));
  });
}

// ---------------------------------------------------------------------------------------------
// Special files

describe('a FIFO without a writer', () => {
  let fifo;
  before(async () => {
    fifo = path.join(dir, 'fifo');
    const made = await runToEnd('mkfifo', [fifo]);
    assert.equal(made.code, 0, made.stderr);
  });

  // Only the asynchronous strategies: smartReadSync and strategy 'sync' wait in open(2) on the
  // calling thread, as fs.readFileSync does, which no test can interrupt in-process.
  for (const strategy of ['auto', 'uring', 'threadpool']) {
    test(`strategy '${strategy}': smartRead and readMany wait, and a signal ends the wait`, async (t) => {
      if (skipUnlessAvailable(t, strategy)) return;
      const ac = new AbortController();
      const one = smartRead(fifo, { strategy, signal: ac.signal });
      const many = readMany([fifo, fifo], { strategy, signal: ac.signal, settle: true });
      let settled = false;
      one.then(() => { settled = true; }, () => { settled = true; });
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(settled, false, 'the read waits for a writer');
      ac.abort();
      const err = await withinTime(one.then(() => null, (e) => e), 5000, 'the aborted FIFO read');
      assert.equal(err?.name, 'AbortError');
      const results = await withinTime(many, 5000, 'the aborted readMany');
      for (const r of results) assert.equal(r.reason?.name, 'AbortError');
      // A read left waiting in open(2) on a pool thread (the thread pool cannot be interrupted)
      // ends when a writer comes and goes; its result is dropped and its fd closed.
      for (let i = 0; i < 4; i++) {
        try {
          fs.closeSync(fs.openSync(fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK));
        } catch (e) {
          if (e.code !== 'ENXIO') throw e; // no reader waits any more
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    });
  }
});

describe('a unix socket file: ENXIO, as node:fs', () => {
  let socketPath;
  let server;
  before(async () => {
    socketPath = path.join(dir, 'socket');
    server = net.createServer();
    await new Promise((resolve) => server.listen(socketPath, resolve));
  });
  // Closing it unlinks the socket file, so only once every strategy has tried it.
  after(() => new Promise((resolve) => server.close(resolve)));

  test('smartReadSync: the error of fs.readFileSync', () => {
    const expected = thrownBy(() => fs.readFileSync(socketPath));
    assert.equal(expected.code, 'ENXIO');
    assert.deepEqual(errorFacts(thrownBy(() => smartReadSync(socketPath))), errorFacts(expected));
    assert.deepEqual(errorFacts(thrownBy(() => smartReadSync(socketPath, 'utf8'))), errorFacts(thrownBy(() => fs.readFileSync(socketPath, 'utf8'))));
  });

  for (const strategy of STRATEGIES) {
    test(`strategy '${strategy}': smartRead and readMany reject as fs.promises.readFile`, async (t) => {
      if (skipUnlessAvailable(t, strategy)) return;
      const expected = errorFacts(await rejectionOf(() => fs.promises.readFile(socketPath)));
      assert.equal(expected.code, 'ENXIO');
      assert.deepEqual(errorFacts(await rejectionOf(() => smartRead(socketPath, { strategy }))), expected);
      assert.deepEqual(errorFacts(await rejectionOf(() => readMany([socketPath], { strategy }))), expected);
    });
  }
});

describe('endless character devices stop at the size limit', () => {
  // The limit is 4 GiB (buffer.constants.MAX_LENGTH); the test-only SMARTREAD_TEST_MAX_LENGTH
  // lowers it in a child so that each read stops after 1 MiB (test:stress reads the real 4 GiB).
  const limit = 1 << 20;
  const childSource = `
    const { smartRead, smartReadSync, readMany } = require('smartread');
    const facts = (err) => ({ name: err.name, code: err.code, message: err.message, isRangeError: err instanceof RangeError });
    (async () => {
      const out = {};
      for (const device of ['/dev/zero', '/dev/urandom']) {
        try { smartReadSync(device); out[device + ' sync'] = 'read'; } catch (err) { out[device + ' sync'] = facts(err); }
        for (const strategy of ['auto', 'sync', 'threadpool', 'uring']) {
          out[device + ' ' + strategy] = await smartRead(device, { strategy }).then(() => 'read', facts);
        }
        out[device + ' readMany'] = await readMany([device, device], { settle: true })
          .then((rs) => rs.map((r) => r.status === 'fulfilled' ? 'read' : facts(r.reason)));
      }
      out.devNull = (await smartRead('/dev/null')).length + smartReadSync('/dev/null').length;
      process.stdout.write(JSON.stringify(out) + '\\n');
    })();
  `;

  test('/dev/zero and /dev/urandom: RangeError ERR_FS_FILE_TOO_LARGE on every API and strategy; /dev/null is empty', async () => {
    const result = await runToEnd(process.execPath, ['-e', childSource], {
      env: { SMARTREAD_TEST_MAX_LENGTH: String(limit) },
      timeoutMs: 60000,
    });
    assertCleanExit(result, 'the child reading endless devices');
    const out = JSON.parse(result.stdout);
    const uring = engineInfo().uring.available;
    const tooLarge = {
      name: 'RangeError',
      code: 'ERR_FS_FILE_TOO_LARGE',
      isRangeError: true,
    };
    for (const [what, value] of Object.entries(out)) {
      if (what === 'devNull') {
        assert.equal(value, 0);
        continue;
      }
      if (what.endsWith(' uring') && !uring) {
        assert.equal(value.code, 'ERR_SMARTREAD_STRATEGY_UNAVAILABLE', what);
        continue;
      }
      for (const one of Array.isArray(value) ? value : [value]) {
        assert.notEqual(one, 'read', `${what}: read to the end of an endless file`);
        const { message, ...rest } = one;
        assert.deepEqual(rest, tooLarge, what);
        // The size reported is past the limit: what was read when the limit was passed.
        assert.match(message, new RegExp(`^File size \\(\\d+\\) is greater than ${limit} bytes$`), what);
        assert.ok(Number(/\((\d+)\)/.exec(message)[1]) > limit, `${what}: ${message}`);
      }
    }
  });
});

describe('/proc and /sys files', () => {
  const stable = [
    '/proc/sys/kernel/ostype',
    '/proc/filesystems',
    '/sys/kernel/mm/transparent_hugepage/enabled',
    // 5 MB without a size in stat: read to EOF through a growing buffer.
    '/proc/kallsyms',
    // 5 MB, a sysfs binary attribute with a size.
    '/sys/kernel/btf/vmlinux',
  ].filter((f) => fs.existsSync(f));

  for (const strategy of STRATEGIES) {
    test(`strategy '${strategy}': the bytes fs.readFileSync reads; /proc/self/mem fails with EIO as in node:fs`, async (t) => {
      if (skipUnlessAvailable(t, strategy)) return;
      for (const file of stable) {
        assertSameBytes(await smartRead(file, { strategy }), fs.readFileSync(file), `${file} on '${strategy}'`);
        assertSameBytes(smartReadSync(file), fs.readFileSync(file), `${file} by smartReadSync`);
      }
      const results = await readMany(stable, { strategy });
      results.forEach((bytes, k) => assertSameBytes(bytes, fs.readFileSync(stable[k]), `${stable[k]} by readMany`));
      const expected = errorFacts(await rejectionOf(() => fs.promises.readFile('/proc/self/mem')));
      assert.equal(expected.code, 'EIO');
      assert.deepEqual(errorFacts(await rejectionOf(() => smartRead('/proc/self/mem', { strategy }))), expected);
      assert.deepEqual(errorFacts(thrownBy(() => smartReadSync('/proc/self/mem'))), errorFacts(thrownBy(() => fs.readFileSync('/proc/self/mem'))));
    });
  }

  // sysfs gives a page per read: with chunks larger than the file, io_uring reads it in one READ
  // linked to its CLOSE, which the short read cancels; the rest is read before the file closes.
  test("strategy 'uring': a sysfs file with a size, read in one linked READ that comes back short", async (t) => {
    if (skipUnlessAvailable(t, 'uring')) return;
    const file = '/sys/kernel/btf/vmlinux';
    if (!fs.existsSync(file)) {
      t.skip(`no ${file} in this kernel`);
      return;
    }
    const saved = tuning();
    setTuning({ uringChunk: 8 << 20 });
    try {
      for (let i = 0; i < 5; i++) assertSameBytes(await smartRead(file, { strategy: 'uring' }), fs.readFileSync(file), file);
    } finally {
      setTuning(saved);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Permission denied

test('permission denied (EACCES) in a child running as nobody: smartRead and readMany on every strategy', async (t) => {
  if (process.getuid() !== 0) {
    t.skip('needs root, to make a file that a child with another uid cannot read');
    return;
  }
  const unreachable = unreachableWithoutRoot();
  if (unreachable) {
    t.skip(`a child running as nobody could not load smartread: ${unreachable}`);
    return;
  }
  const secret = path.join(dir, 'secret');
  const open = path.join(dir, 'readable');
  fs.writeFileSync(secret, 'root only\n', { mode: 0o600 });
  fs.chmodSync(secret, 0o600);
  fs.writeFileSync(open, 'anyone\n', { mode: 0o644 });
  fs.chmodSync(dir, 0o755);
  try {
    const childSource = `
      const fs = require('node:fs');
      const { smartRead, readMany, smartReadSync, engineInfo } = require('smartread');
      const { errorFacts } = require(process.env.SMARTREAD_TEST_HELPERS);
      const [secret, open] = JSON.parse(process.env.SMARTREAD_TEST_FILES);
      (async () => {
        const out = { uid: process.getuid(), uring: engineInfo().uring.available, cases: [] };
        const expected = await fs.promises.readFile(secret).then(() => null, errorFacts);
        for (const strategy of ['auto', 'sync', 'threadpool', 'uring']) {
          if (strategy === 'uring' && !out.uring) continue;
          const one = await smartRead(secret, { strategy }).then(() => null, errorFacts);
          const many = await readMany([open, secret], { strategy }).then(() => null, errorFacts);
          const settled = await readMany([open, secret], { strategy, settle: true });
          out.cases.push({ strategy, expected, one, many,
            settled: [settled[0].value?.toString(), errorFacts(settled[1].reason)] });
        }
        out.sync = (() => { try { smartReadSync(secret); return null; } catch (err) { return errorFacts(err); } })();
        out.syncExpected = (() => { try { fs.readFileSync(secret); return null; } catch (err) { return errorFacts(err); } })();
        process.stdout.write(JSON.stringify(out) + '\\n');
      })();
    `;
    const { spawn } = require('node:child_process');
    const { stdoutLines } = require('./helpers');
    const child = spawn(process.execPath, ['-e', childSource], {
      cwd: path.resolve(__dirname, '..'),
      uid: 65534,
      gid: 65534,
      env: { ...process.env, SMARTREAD_TEST_HELPERS: require.resolve('./helpers'), SMARTREAD_TEST_FILES: JSON.stringify([secret, open]) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const [line] = await withinTime(stdoutLines(child).all(), 60000, 'the child as nobody');
    const out = JSON.parse(line);
    assert.equal(out.uid, 65534);
    assert.equal(out.syncExpected.code, 'EACCES');
    assert.deepEqual(out.sync, out.syncExpected);
    assert.ok(out.cases.length >= 3);
    for (const c of out.cases) {
      assert.equal(c.expected.code, 'EACCES');
      assert.deepEqual(c.one, c.expected, `smartRead on '${c.strategy}'`);
      assert.deepEqual(c.many, c.expected, `readMany on '${c.strategy}'`);
      assert.deepEqual(c.settled, ['anyone\n', c.expected], `readMany settle on '${c.strategy}'`);
    }
  } finally {
    fs.chmodSync(dir, 0o700);
  }
});
