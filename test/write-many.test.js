// writeMany: every file's bytes at every concurrency and on every strategy, parent directories
// made once per batch (and again when they vanish behind smartread's back), the first error
// naming its file or settle's statuses, abort with settle and without, atomic batches, entry
// modes, argument errors before anything is written, and confinement.
'use strict';
const { test, describe } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { writeMany, engineInfo, createWriter } = require('smartread');
const {
  checkNoFdLeak, useTempDirs, patternBuffer, assertSameBytes, errorFacts, thrownBy, rejectionOf, setUpAsyncEngines, runToEnd,
  skipWithoutOpenat2,
} = require('./helpers');

setUpAsyncEngines();
checkNoFdLeak();
const tempDirs = useTempDirs();
const native = engineInfo().engine === 'native';
const uringReason = () => (engineInfo().uring.available ? null : engineInfo().uring.reason);
const STRATEGIES = ['auto', 'sync', 'threadpool', 'uring'];

function skipMissing(t, strategy) {
  if (strategy === 'uring' && uringReason()) {
    t.skip(`io_uring is not available: ${uringReason()}`);
    return true;
  }
  return false;
}

/** File i's 4 KiB: pattern bytes from offset i, with i at both ends, so that no two are alike. */
function contentOf(i, size = 4096) {
  const bytes = patternBuffer(size, i);
  bytes.writeUInt32LE(i, 0);
  bytes.writeUInt32LE(i, size - 4);
  return bytes;
}

const temporaries = (dir) => fs.readdirSync(dir, { recursive: true }).filter((n) => /(^|\/)\..*\.smartread-[0-9a-f]{12}\.tmp$/.test(n));

/** 2,000 entries into `dirs` directories under base, file i holding contentOf(i). */
function tree(base, files = 2000, dirs = 100) {
  return Array.from({ length: files }, (_, i) => ({ path: path.join(base, `d${i % dirs}`, `f${i}`), data: contentOf(i) }));
}

function assertWritten(entries, what) {
  entries.forEach((e, i) => assertSameBytes(fs.readFileSync(e.path), e.data, `${what}: entry ${i}`));
}

// Files are cheap on tmpfs and dear on the disk (a CI budget): the whole trial on the one, a
// smaller tree on the other.
for (const { kind, dir } of tempDirs.all) {
  const [files, dirs, concurrencies] = kind === 'tmpfs' ? [2000, 100, [1, 64, 256]] : [300, 20, [7]];
  describe(`${kind}: ${files.toLocaleString('en-US')} files of 4 KiB into a fresh tree of ${dirs} directories`, () => {
    for (const strategy of STRATEGIES) {
      test(`strategy '${strategy}', concurrency ${concurrencies.join(', ')}; then atomically over them`, async (t) => {
        if (skipMissing(t, strategy)) return;
        for (const concurrency of concurrencies) {
          const base = fs.mkdtempSync(path.join(dir, `many-${strategy}-`));
          const entries = tree(base, files, dirs);
          assert.equal(await writeMany(entries, { strategy, concurrency, mkdirs: true }), undefined);
          assertWritten(entries, `concurrency ${concurrency}`);
          // Over the same files, atomically, with other contents.
          const again = entries.map((e, i) => ({ path: e.path, data: contentOf(i + 7) }));
          await writeMany(again, { strategy, concurrency, atomic: true });
          assertWritten(again, `atomic, concurrency ${concurrency}`);
          assert.deepEqual(temporaries(base), []);
          fs.rmSync(base, { recursive: true });
        }
      });
    }
  });
}

const dir = tempDirs.tmpfs ?? tempDirs.disk;

describe('results and errors', () => {
  for (const strategy of STRATEGIES) {
    test(`strategy '${strategy}': the first error, settle's statuses, strings and modes`, async (t) => {
      if (skipMissing(t, strategy)) return;
      const base = fs.mkdtempSync(path.join(dir, 'errors-'));
      fs.writeFileSync(path.join(base, 'a-file'), 'x');
      const entries = [
        { path: path.join(base, 'ok-1'), data: 'one' },
        { path: path.join(base, 'missing', 'x'), data: 'never' },
        { path: path.join(base, 'a-file', 'x'), data: 'never' },
        { path: path.join(base, 'ok-2'), data: 'dHdv', mode: 0o600 },
        { path: base, data: 'a directory' },
      ];
      const expected = entries.map((e) => {
        try {
          fs.writeFileSync(e.path, 'probe');
          fs.rmSync(e.path);
          return null;
        } catch (err) {
          return errorFacts(err);
        }
      });
      const first = await rejectionOf(() => writeMany(entries, { strategy, encoding: 'base64' }));
      assert.deepEqual(errorFacts(first), expected[1]);
      const settled = await writeMany(entries, { strategy, settle: true, encoding: 'base64' });
      assert.deepEqual(settled.map((s) => s.status), ['fulfilled', 'rejected', 'rejected', 'fulfilled', 'rejected']);
      settled.forEach((s, i) => {
        if (s.status === 'rejected') assert.deepEqual(errorFacts(s.reason), expected[i], `entry ${i}`);
        else assert.equal(s.value, undefined);
      });
      assert.equal(fs.readFileSync(path.join(base, 'ok-2'), 'utf8'), 'two');
      assert.equal(fs.statSync(path.join(base, 'ok-2')).mode & 0o777, 0o600 & ~process.umask());
    });
  }

  test('bad entries: nothing is written without settle; with it, each fails alone', async () => {
    const base = fs.mkdtempSync(path.join(dir, 'bad-'));
    const good = { path: path.join(base, 'good'), data: 'good' };
    const bad = [
      [42, 'ERR_INVALID_ARG_TYPE'],
      [{ path: path.join(base, 'x'), data: 5 }, 'ERR_INVALID_ARG_TYPE'],
      [{ path: 3, data: 'fd' }, 'ERR_INVALID_ARG_TYPE'],
      [{ path: `${base}/nul\0`, data: 'x' }, 'ERR_INVALID_ARG_VALUE'],
      [{ path: path.join(base, 'x'), data: 'x', mode: 'zz' }, 'ERR_INVALID_ARG_VALUE'],
    ];
    for (const [entry, code] of bad) {
      assert.equal((await rejectionOf(() => writeMany([good, entry]))).code, code);
      assert.equal(fs.existsSync(good.path), false);
      const settled = await writeMany([good, entry], { settle: true });
      assert.equal(settled[0].status, 'fulfilled');
      assert.equal(settled[1].reason.code, code);
      fs.rmSync(good.path);
    }
    assert.equal((await rejectionOf(() => writeMany('not a list'))).code, 'ERR_INVALID_ARG_TYPE');
    assert.equal((await rejectionOf(() => writeMany([good], { concurrency: 0 }))).code, 'ERR_INVALID_ARG_VALUE');
    assert.equal((await rejectionOf(() => writeMany([good], { flag: 'bogus' }))).code, 'ERR_INVALID_ARG_VALUE');
    assert.equal((await rejectionOf(() => writeMany([good], { atomic: true, flag: 'a' }))).code, 'ERR_INVALID_ARG_VALUE');
    assert.deepEqual(await writeMany([]), undefined);
    assert.deepEqual(await writeMany([], { settle: true }), []);
  });
});

describe('mkdirs: each directory a batch needs, made once', () => {
  for (const strategy of STRATEGIES) {
    test(`strategy '${strategy}': made again when removed, fs.mkdir's error where a file is in the way`, async (t) => {
      if (skipMissing(t, strategy)) return;
      const base = fs.mkdtempSync(path.join(dir, 'mkdirs-'));
      const entries = tree(path.join(base, 'deep', 'er'), 200, 20);
      await writeMany(entries, { strategy, mkdirs: true });
      assertWritten(entries, 'first');
      // Known now; then removed, or made files, behind smartread's back.
      fs.rmSync(path.join(base, 'deep'), { recursive: true });
      await writeMany(entries, { strategy, mkdirs: true });
      assertWritten(entries, 'after the tree was removed');
      fs.rmSync(path.join(base, 'deep/er/d3'), { recursive: true });
      fs.writeFileSync(path.join(base, 'deep/er/d3'), 'in the way');
      const expected = await rejectionOf(() => fs.promises.mkdir(path.join(base, 'deep/er/d3'), { recursive: true }));
      const settled = await writeMany(entries, { strategy, mkdirs: true, settle: true });
      settled.forEach((s, i) => {
        if (i % 20 === 3) assert.deepEqual(errorFacts(s.reason), errorFacts(expected), `entry ${i}`);
        else assert.equal(s.status, 'fulfilled', `entry ${i}: ${s.reason?.message}`);
      });
    });
  }

  test('no stat per level, no failing mkdir per file: the mkdirs strace counts (calling thread)', async (t) => {
    const probe = await runToEnd('strace', ['-V']).catch((err) => ({ code: -1, stderr: err.message }));
    if (probe.code !== 0) return t.skip(`strace is not available (${String(probe.stderr).trim()})`);
    const base = path.join(fs.mkdtempSync(path.join(dir, 'strace-')), 'fresh');
    const script = `
      const { writeMany } = require('smartread');
      const entries = Array.from({ length: 2000 }, (_, i) => ({ path: ${JSON.stringify(base)} + '/d' + (i % 100) + '/f' + i, data: 'x' }));
      writeMany(entries, { strategy: 'sync', mkdirs: true });`;
    const run = await runToEnd('strace', ['-f', '-c', '-U', 'name,calls', '-e', 'trace=mkdir,mkdirat,stat,newfstatat,statx', process.execPath, '-e', script]);
    assert.equal(run.code, 0, run.stderr);
    const calls = (name) => Number(new RegExp(`\\b${name}\\s+(\\d+)`).exec(run.stderr)?.[1] ?? 0);
    const mkdirs = calls('mkdir') + calls('mkdirat');
    // 100 directories and the fresh one above them, once each, and a first walk that finds
    // where the tree begins; node's mkdirSync(recursive) per file would make 2,000 more.
    assert.ok(mkdirs >= 101 && mkdirs <= 104, `${mkdirs} mkdirs: ${run.stderr}`);
    for (let i = 0; i < 100; i++) assert.ok(fs.statSync(path.join(base, `d${i}`)).isDirectory());
  });
});

describe('abort', () => {
  for (const strategy of STRATEGIES) {
    test(`strategy '${strategy}': an AbortError without settle; with it, each entry written or aborted; nothing left half-done`, async (t) => {
      if (skipMissing(t, strategy)) return;
      const base = fs.mkdtempSync(path.join(dir, 'abort-'));
      const entries = tree(base, 1000, 10);
      const already = new AbortController();
      already.abort();
      assert.equal((await rejectionOf(() => writeMany(entries, { strategy, mkdirs: true, signal: already.signal }))).name, 'AbortError');
      assert.deepEqual(fs.readdirSync(base), []);
      const settledEarly = await writeMany(entries.slice(0, 3), { strategy, settle: true, signal: already.signal });
      assert.deepEqual(settledEarly.map((s) => s.reason.name), ['AbortError', 'AbortError', 'AbortError']);

      const late = new AbortController();
      const pending = writeMany(entries, { strategy, mkdirs: true, atomic: true, signal: late.signal });
      setImmediate(() => late.abort());
      const outcome = await pending.then(() => 'written', (e) => e.name);
      assert.ok(outcome === 'AbortError' || outcome === 'written', outcome);

      const again = new AbortController();
      const settling = writeMany(entries, { strategy, mkdirs: true, atomic: true, settle: true, signal: again.signal });
      setImmediate(() => again.abort());
      const settled = await settling;
      let written = 0;
      settled.forEach((s, i) => {
        if (s.status === 'fulfilled') {
          written++;
          assertSameBytes(fs.readFileSync(entries[i].path), entries[i].data, `entry ${i}`);
        } else {
          assert.equal(s.reason.name, 'AbortError', `entry ${i}: ${s.reason.message}`);
        }
      });
      t.diagnostic(`${written} of ${entries.length} written before the abort`);
      const deadline = Date.now() + 10000;
      while (temporaries(base).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      assert.deepEqual(temporaries(base), []);
    });
  }
});

test('confined beneath a root (createWriter): mkdirs and atomic beneath it, nothing outside', async (t) => {
  if (!native) return t.skip('confinement needs the native addon (openat2)');
  if (skipWithoutOpenat2(t)) return;
  const root = fs.mkdtempSync(path.join(dir, 'root-'));
  const outside = fs.mkdtempSync(path.join(dir, 'outside-'));
  fs.symlinkSync(outside, path.join(root, 'out'));
  const writer = createWriter({ root });
  t.after(() => writer.close());
  const entries = Array.from({ length: 200 }, (_, i) => ({ path: `d${i % 10}/sub/f${i}`, data: contentOf(i) }));
  await writer.writeMany(entries, { mkdirs: true, atomic: true });
  entries.forEach((e, i) => assertSameBytes(fs.readFileSync(path.join(root, e.path)), e.data, `entry ${i}`));
  const settled = await writer.writeMany([{ path: 'ok', data: 'ok' }, { path: 'out/x', data: 'x' }, { path: '../x', data: 'x' }], { settle: true, mkdirs: true });
  assert.deepEqual(settled.map((s) => s.status), ['fulfilled', 'rejected', 'rejected']);
  assert.equal(settled[1].reason.code, 'ERR_SMARTREAD_OUTSIDE_ROOT');
  assert.equal(settled[2].reason.code, 'ERR_SMARTREAD_OUTSIDE_ROOT');
  assert.deepEqual(fs.readdirSync(outside), []);
  assert.deepEqual(temporaries(root), []);
  writer.close();
  assert.equal((await rejectionOf(() => writer.writeMany([{ path: 'late', data: 'x' }]))).code, 'ERR_SMARTREAD_READER_CLOSED');
  assert.equal(thrownBy(() => writer.smartWriteFileSync('late', 'x')).code, 'ERR_SMARTREAD_READER_CLOSED');
});
