// Writes under faults: a process SIGKILLed in the middle of atomic batches leaves every target
// absent or whole; a full filesystem (ENOSPC, a 1 MiB tmpfs), a full descriptor table (EMFILE)
// and a file where a directory should be (ENOTDIR) give node:fs's errors and leave no
// temporary file and no descriptor; workers terminated in the middle of batches leave nothing
// half-done. On every strategy, and through npm test on the pure-JS engine too.
'use strict';
const { test, describe, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');
const { smartWriteFile, smartWriteFileSync, writeMany, engineInfo } = require('smartread');
const {
  checkNoFdLeak, useTempDirs, errorFacts, rejectionOf, thrownBy, setUpAsyncEngines, stdoutLines, withinTime, runToEnd,
  waitForExit,
} = require('./helpers');

setUpAsyncEngines();
checkNoFdLeak();
const tempDirs = useTempDirs();
const native = engineInfo().engine === 'native';
const uringReason = () => (engineInfo().uring.available ? null : engineInfo().uring.reason);
const STRATEGIES = ['auto', 'sync', 'threadpool', 'uring'];
const packageRoot = path.resolve(__dirname, '..');

const temporaryName = /^\..*\.smartread-[0-9a-f]{12}\.tmp$/;
const temporaries = (dir) => fs.readdirSync(dir, { recursive: true }).filter((n) => temporaryName.test(path.basename(n)));

describe('SIGKILL in the middle of atomic batches: every target absent or whole', () => {
  // The child rewrites 40 files of 64 KiB in rounds; round r fills file i with (r * 31 + i) % 256,
  // and says when each round is done. The parent kills it at a random moment of a later round.
  const childSource = `
    const { writeMany } = require('smartread');
    const [dir, strategy] = process.argv.slice(1);
    (async () => {
      for (let round = 1; ; round++) {
        const entries = Array.from({ length: 40 }, (_, i) => ({ path: dir + '/f' + i, data: Buffer.alloc(65536, (round * 31 + i) % 256) }));
        await writeMany(entries, { strategy, atomic: true, concurrency: 16 });
        process.stdout.write(round + '\\n');
      }
    })();`;
  for (const strategy of STRATEGIES) {
    test(`strategy '${strategy}'`, async (t) => {
      if (strategy === 'uring' && uringReason()) return t.skip(`io_uring is not available: ${uringReason()}`);
      for (let kill = 0; kill < 3; kill++) {
        const dir = fs.mkdtempSync(path.join(tempDirs.disk, 'killed-'));
        const child = spawn(process.execPath, ['-e', childSource, dir, strategy], { cwd: packageRoot, stdio: ['ignore', 'pipe', 'inherit'] });
        const lines = stdoutLines(child);
        await withinTime(lines.next(), 30000, 'the first round');
        await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 30)));
        child.kill('SIGKILL');
        const { signal } = await waitForExit(child);
        assert.equal(signal, 'SIGKILL');
        for (const name of fs.readdirSync(dir)) {
          // A temporary file a killed process leaves is recognisable by its name (README).
          if (temporaryName.test(name)) continue;
          const bytes = fs.readFileSync(path.join(dir, name));
          assert.equal(bytes.length, 65536, `${name}: ${bytes.length} bytes, not a whole version`);
          assert.ok(bytes.every((b) => b === bytes[0]), `${name}: a mix of versions`);
        }
        t.diagnostic(`kill ${kill + 1}: after ${lines.count()} rounds, ${temporaries(dir).length} temporary files left`);
      }
    });
  }
});

// Every caller of a write as one convention, so that each fault runs on each.
const WRITERS = [
  { name: 'smartWriteFileSync', write: async (p, d, o) => smartWriteFileSync(p, d, o) },
  ...STRATEGIES.map((strategy) => ({ name: `smartWriteFile '${strategy}'`, strategy, write: (p, d, o) => smartWriteFile(p, d, { ...o, strategy }) })),
];

describe('ENOSPC: a full tmpfs of 1 MiB', () => {
  let mountPoint;
  const mountError = (() => {
    if (process.getuid() !== 0) return 'needs root, to mount a 1 MiB tmpfs';
    mountPoint = fs.mkdtempSync(path.join(tempDirs.disk, 'small-'));
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mountPoint], { encoding: 'utf8' });
    if (mounted.status !== 0) return `mount -t tmpfs -o size=1m failed: ${mounted.stderr || mounted.error?.message}`;
    return null;
  })();
  let unmounted = false;
  const unmount = () => {
    if (mountError || unmounted) return;
    spawnSync('umount', [mountPoint]);
    unmounted = true;
  };
  // A hook, not a test, so that it runs whichever of the tests a name pattern picks.
  after(unmount);
  process.on('exit', unmount);

  for (const writer of WRITERS) {
    test(`${writer.name}: node:fs's error; atomic leaves the target as it was and nothing beside it`, async (t) => {
      if (mountError) return t.skip(mountError);
      if (writer.strategy === 'uring' && uringReason()) return t.skip(`io_uring is not available: ${uringReason()}`);
      const big = Buffer.alloc(2 << 20, 1);
      const byNode = path.join(mountPoint, 'node');
      // fs.writeFileSync's and fs.promises.writeFile's errors differ (in their keys' order).
      const expected = writer.strategy === undefined
        ? thrownBy(() => fs.writeFileSync(byNode, big))
        : await rejectionOf(() => fs.promises.writeFile(byNode, big));
      fs.rmSync(byNode, { force: true });
      assert.equal(expected.code, 'ENOSPC');
      const target = path.join(mountPoint, 'target');
      const err = await rejectionOf(() => writer.write(target, big, {}));
      assert.deepEqual(errorFacts(err), errorFacts(expected));
      fs.rmSync(target, { force: true });
      fs.writeFileSync(target, 'before');
      for (const options of [{ atomic: true }, { atomic: true, flush: true }]) {
        const atomicErr = await rejectionOf(() => writer.write(target, big, options));
        assert.deepEqual(errorFacts(atomicErr), errorFacts(expected), JSON.stringify(options));
        assert.equal(fs.readFileSync(target, 'utf8'), 'before');
        assert.deepEqual(temporaries(mountPoint), []);
      }
      fs.rmSync(target);
    });
  }

  for (const strategy of STRATEGIES) {
    test(`writeMany '${strategy}': each file whole or ENOSPC, nothing left beside them`, async (t) => {
      if (mountError) return t.skip(mountError);
      if (strategy === 'uring' && uringReason()) return t.skip(`io_uring is not available: ${uringReason()}`);
      const dir = path.join(mountPoint, strategy);
      const entries = Array.from({ length: 40 }, (_, i) => ({ path: path.join(dir, `f${i}`), data: Buffer.alloc(64 << 10, i) }));
      const settled = await writeMany(entries, { strategy, atomic: true, mkdirs: true, settle: true });
      const failed = settled.filter((s) => s.status === 'rejected');
      assert.ok(failed.length > 0, 'the filesystem filled up');
      for (const s of failed) assert.equal(s.reason.code, 'ENOSPC', s.reason.message);
      settled.forEach((s, i) => {
        if (s.status === 'fulfilled') assert.ok(fs.readFileSync(entries[i].path).equals(entries[i].data), `entry ${i}`);
        else assert.equal(fs.existsSync(entries[i].path), false, `entry ${i}`);
      });
      assert.deepEqual(temporaries(dir), []);
      fs.rmSync(dir, { recursive: true });
    });
  }
});

describe('EMFILE: a full descriptor table (a child with RLIMIT_NOFILE 64)', () => {
  // In the child, descriptors are opened until open(2) fails, then every writer writes, atomic
  // or not. node:fs's open fails with EMFILE; so must every engine that opens a descriptor.
  // io_uring opens into direct descriptors, which are not in the table: there the write may
  // succeed, and must then have written the bytes.
  const childSource = `
    const fs = require('node:fs');
    const { smartWriteFile, smartWriteFileSync, engineInfo } = require('smartread');
    const { errorFacts } = require(process.env.SMARTREAD_TEST_HELPERS);
    const dir = process.env.SMARTREAD_TEST_DIR;
    engineInfo();
    const fillers = [];
    try {
      for (;;) fillers.push(fs.openSync('/dev/null', 'r'));
    } catch (err) {
      if (err.code !== 'EMFILE') throw err;
    }
    (async () => {
      const caught = async (fn) => { try { await fn(); return null; } catch (err) { return errorFacts(err); } };
      const out = { expected: await caught(() => fs.writeFileSync(dir + '/node', 'x')),
        expectedAsync: await caught(() => fs.promises.writeFile(dir + '/node', 'x')), cases: [] };
      for (const atomic of [false, true]) {
        out.cases.push({ name: 'smartWriteFileSync', atomic, async: false, err: await caught(() => smartWriteFileSync(dir + '/sync-' + atomic, 'bytes', { atomic })) });
        for (const strategy of ['auto', 'sync', 'threadpool', 'uring']) {
          if (strategy === 'uring' && !engineInfo().uring.available) continue;
          const file = dir + '/' + strategy + '-' + atomic;
          out.cases.push({ name: strategy, atomic, async: true, strategy, file, err: await caught(() => smartWriteFile(file, 'bytes', { strategy, atomic })) });
        }
      }
      for (const fd of fillers) fs.closeSync(fd);
      out.after = await caught(() => smartWriteFile(dir + '/after', 'after'));
      process.stdout.write(JSON.stringify(out) + '\\n');
    })();`;

  test('every writer: node:fs\'s EMFILE, or the bytes where io_uring needs no descriptor; nothing left beside them', async (t) => {
    const probe = spawnSync('sh', ['-c', 'ulimit -n 64 && echo ok'], { encoding: 'utf8' });
    if (probe.stdout.trim() !== 'ok') return t.skip(`ulimit -n 64 failed in sh: ${probe.stderr}`);
    const dir = fs.mkdtempSync(path.join(tempDirs.disk, 'emfile-'));
    const run = await runToEnd('sh', ['-c', 'ulimit -n 64 && exec "$0" -e "$1"', process.execPath, childSource], {
      env: { SMARTREAD_TEST_HELPERS: require.resolve('./helpers'), SMARTREAD_TEST_DIR: dir },
      timeoutMs: 60000,
    });
    assert.equal(run.code, 0, run.stderr);
    const out = JSON.parse(run.stdout);
    assert.equal(out.expected.code, 'EMFILE');
    assert.equal(out.expectedAsync.code, 'EMFILE');
    for (const c of out.cases) {
      const expected = c.async ? out.expectedAsync : out.expected;
      const rename = (facts) => facts && JSON.parse(JSON.stringify(facts).split(`${dir}/node`).join('<target>'));
      const actual = c.err && JSON.parse(JSON.stringify(c.err).split(c.file ?? `${dir}/sync-${c.atomic}`).join('<target>'));
      if (c.err === null) {
        // Written without a descriptor of the table: only io_uring can.
        assert.ok(native && (c.strategy === 'uring' || c.strategy === 'auto'), `${c.name} atomic ${c.atomic} succeeded`);
        assert.equal(fs.readFileSync(c.file, 'utf8'), 'bytes');
      } else {
        assert.deepEqual(actual, rename(expected), `${c.name}, atomic ${c.atomic}`);
      }
    }
    assert.equal(out.after, null);
    assert.deepEqual(temporaries(dir), []);
  });
});

describe('ENOTDIR: a file where a directory should be', () => {
  for (const strategy of STRATEGIES) {
    test(`writeMany '${strategy}', with mkdirs and atomic: the errors of fs.mkdir and fs.writeFile`, async (t) => {
      if (strategy === 'uring' && uringReason()) return t.skip(`io_uring is not available: ${uringReason()}`);
      const dir = fs.mkdtempSync(path.join(tempDirs.tmpfs ?? tempDirs.disk, 'enotdir-'));
      fs.writeFileSync(path.join(dir, 'file'), 'x');
      const direct = path.join(dir, 'file', 'x');
      const deep = path.join(dir, 'file', 'a', 'x');
      const expectedWrite = await rejectionOf(() => fs.promises.writeFile(direct, 'x'));
      const expectedMkdir = await rejectionOf(() => fs.promises.mkdir(path.dirname(deep), { recursive: true }));
      assert.equal(expectedWrite.code, 'ENOTDIR');
      assert.equal(expectedMkdir.code, 'ENOTDIR');
      for (const atomic of [false, true]) {
        const plain = await writeMany([{ path: direct, data: 'x' }, { path: deep, data: 'x' }], { strategy, atomic, settle: true });
        assert.deepEqual(errorFacts(plain[0].reason), errorFacts(expectedWrite));
        assert.equal(plain[1].reason.code, 'ENOTDIR');
        const made = await writeMany([{ path: deep, data: 'x' }], { strategy, atomic, mkdirs: true, settle: true });
        assert.deepEqual(errorFacts(made[0].reason), errorFacts(expectedMkdir));
      }
      assert.deepEqual(temporaries(dir), []);
    });
  }
});

describe('workers terminated in the middle of atomic batches', () => {
  const childSource = `
    const { Worker } = require('node:worker_threads');
    const fs = require('node:fs');
    const [dir, strategy] = process.argv.slice(1);
    const source = \`
      const { writeMany } = require('smartread');
      const { workerData: { dir, strategy, n } } = require('node:worker_threads');
      const entries = Array.from({ length: 300 }, (_, i) => ({ path: dir + '/w' + n + '/f' + i, data: Buffer.alloc(16384, i % 256) }));
      (async () => { for (;;) await writeMany(entries, { strategy, atomic: true, mkdirs: true }); })();\`;
    (async () => {
      for (let n = 0; n < 20; n++) {
        const worker = new Worker(source, { eval: true, workerData: { dir, strategy, n } });
        await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 40));
        await worker.terminate();
      }
      process.stdout.write('done\\n');
    })();`;
  for (const strategy of ['uring', 'threadpool']) {
    test(`strategy '${strategy}': 20 terminations, in a child; every file whole, no temporary file left`, async (t) => {
      if (!native) return t.skip("node:fs's own writes in a terminated worker are abandoned where they are");
      if (strategy === 'uring' && uringReason()) return t.skip(`io_uring is not available: ${uringReason()}`);
      const dir = fs.mkdtempSync(path.join(tempDirs.tmpfs ?? tempDirs.disk, 'workers-'));
      const run = await runToEnd(process.execPath, ['-e', childSource, dir, strategy], { timeoutMs: 60000 });
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout, 'done\n');
      for (const name of fs.readdirSync(dir, { recursive: true })) {
        const full = path.join(dir, name);
        if (!fs.statSync(full).isFile()) continue;
        const bytes = fs.readFileSync(full);
        assert.equal(bytes.length, 16384, name);
      }
      assert.deepEqual(temporaries(dir), []);
    });
  }
});
