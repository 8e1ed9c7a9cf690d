// 'auto' on filesystems that refuse non-blocking reads (overlayfs, FUSE), where the kernel will
// not say whether a read would wait: a file is read by the engines first, then on the calling
// thread while it is read again; a large one only while its pages are in memory; a read that
// takes longer than the fast path's budget sends the file, and after three its filesystem, back
// to the engines. Bytes are node:fs's throughout. On real mounts, made by the test as root.
'use strict';
const { test, describe, before, afterEach } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { once } = require('node:events');
const { smartRead, readMany, explain, metrics, tuning, setTuning, evictFromPageCache, engineInfo } = require('smartread');
const { checkNoFdLeak, writePattern, assertSameBytes, setUpAsyncEngines, runToEnd } = require('./helpers');
const { useMounts } = require('./mounts');

setUpAsyncEngines();
// The mounts first: the descriptor count waits for them, and their helpers' after hooks run after.
const mounts = useMounts(['overlay', 'fuse']);
checkNoFdLeak({ spawnsChildren: true, after: mounts.ready });
const native = engineInfo().engine === 'native';
const defaults = tuning();
afterEach(() => setTuning(defaults));
const KiB = 1024;

/** Why a test on `kind` cannot run here, or null. */
function skipReason(kind) {
  if (!native) return 'the pure-JS engine has no fast path';
  return mounts.skipReason(kind);
}

const judged = () => metrics().fastPath.judged;
// A budget no read here comes near, so that a busy machine's preemptions are not taken for
// reads that waited (the last test sets one that every read passes).
const roomyBudget = { fastPathBudgetUs: 100_000, copyRateMBps: 100 };

for (const { kind, label } of mounts.all) {
  describe(`on ${label}`, () => {
    // Files in the backing directory (an overlay's lower layer), read through the mount.
    let dir;
    before(() => {
      if (skipReason(kind) !== null) return;
      const mount = mounts.get(kind);
      fs.mkdirSync(path.join(mount.backingDir, 'judged'), { recursive: true });
      for (const size of [4 * KiB, 1024 * KiB]) writePattern(path.join(mount.backingDir, 'judged', `file-${size}`), size);
      for (let i = 0; i < 300; i++) writePattern(path.join(mount.backingDir, 'judged', `many-${i}`), 4 * KiB - i);
      dir = path.join(mount.dir, 'judged');
    });

    test('a file is read by an engine first, then on the calling thread, with the same bytes', async (t) => {
      const why = skipReason(kind);
      if (why !== null) return t.skip(why);
      setTuning(roomyBudget);
      // bindfs drops a file's pages at each open: a large file there is never all in memory.
      const large = kind === 'overlay' ? 'resident' : 'notResident';
      for (const [size, again] of [[4 * KiB, 'recentRead'], [1024 * KiB, large]]) {
        const file = path.join(dir, `file-${size}`);
        const expected = fs.readFileSync(file);
        metrics.reset();
        assertSameBytes(await smartRead(file), expected, 'first read');
        // FUSE may look the name up again (its dentry timed out): then nothing is judged yet.
        const first = judged();
        assert.equal(first.recentRead + first.resident, 0, `not read on the calling thread first: ${JSON.stringify(first)}`);
        for (let i = 0; i < 5; i++) assertSameBytes(await smartRead(file), expected, `read ${i + 2}`);
        const m = metrics();
        assert.ok(m.fastPath.judged[again] >= 1, `${size} bytes: ${again}: ${JSON.stringify(m.fastPath)}`);
        assert.equal(m.fastPath.judged.misjudged, 0);
        const onThisThread = again !== 'notResident';
        assert.equal(m.strategies['fast-path'].reads >= 1, onThisThread, `served by the fast path: ${onThisThread}`);
        const e = explain(file);
        assert.equal(e.judged?.filesystem, kind === 'overlay' ? 'overlay' : 'fuse', JSON.stringify(e));
        assert.equal(e.strategy === 'fast-path', onThisThread, e.reason);
      }
    });

    test('readMany of files read before reads them in runs, on the calling thread and pool threads', async (t) => {
      const why = skipReason(kind);
      if (why !== null) return t.skip(why);
      setTuning(roomyBudget);
      const list = Array.from({ length: 300 }, (_, i) => path.join(dir, `many-${i}`));
      const expected = list.map((f) => fs.readFileSync(f));
      await readMany(list);
      metrics.reset();
      const again = await readMany(list);
      again.forEach((bytes, i) => assertSameBytes(bytes, expected[i], list[i]));
      const m = metrics();
      assert.ok(m.strategies['fast-path'].reads >= 250, `most were fast-path hits: ${JSON.stringify(m.fastPath)}, ${m.strategies['fast-path'].reads}`);
    });

    if (kind === 'overlay') {
      test('a large file whose pages were evicted is left to the engines (not resident), then read as before', async (t) => {
        const why = skipReason(kind);
        if (why !== null) return t.skip(why);
        setTuning(roomyBudget);
        const file = path.join(dir, `file-${1024 * KiB}`);
        const expected = fs.readFileSync(file);
        await smartRead(file);
        await smartRead(file);
        // The overlay file's pages are its layer's: evicting through either name evicts them.
        evictFromPageCache(path.join(mounts.get(kind).backingDir, 'judged', `file-${1024 * KiB}`));
        // A look at its pages holds for 2 ms (BlindReads::kResidentLookNs): past that, it is looked at again.
        await new Promise((resolve) => setTimeout(resolve, 20));
        metrics.reset();
        assertSameBytes(await smartRead(file), expected, 'after the eviction');
        assert.equal(judged().notResident, 1, JSON.stringify(judged()));
        assert.equal(metrics().strategies['fast-path'].reads, 0, 'not read on the calling thread');
        assertSameBytes(await smartRead(file), expected, 'once the engine has read it');
        assert.equal(judged().resident, 1, JSON.stringify(judged()));
      });
    }

    if (kind === 'overlay') {
      // Under the default budget, the reading process pinned to one CPU beside a busy loop: a
      // read there is preempted now and then, and takes longer than the budget allows without
      // waiting for anything. Timed alone, such reads of six cached 2-4 MiB files, 100 times
      // with readMany, were taken for waits and cooled the overlay within a few calls (hits 26 to
      // 47 of 600, in each of five children); a large read is also judged by whether its thread
      // slept, which a preempted read does not.
      test('large files read again and again stay on the calling thread when their CPU is shared: a preempted read is not taken for a wait', async (t) => {
        const why = skipReason(kind);
        if (why !== null) return t.skip(why);
        const MiB = 1024 * KiB;
        const list = [2.2, 2.7, 2.9, 3.0, 3.6, 3.8].map((mib, i) => {
          const written = path.join(mounts.get(kind).backingDir, 'judged-large', `file-${i}`);
          fs.mkdirSync(path.dirname(written), { recursive: true });
          writePattern(written, Math.round(mib * MiB));
          return path.join(dir, '..', 'judged-large', `file-${i}`);
        });
        const script = `
          const fs = require('node:fs');
          const { readMany, metrics } = require('smartread');
          const list = process.argv.slice(1);
          const expected = list.map((f) => fs.readFileSync(f));
          (async () => {
            // The engines read each first; from the next call they are judged.
            await readMany(list);
            metrics.reset();
            for (let c = 0; c < 100; c++) {
              const got = await readMany(list);
              got.forEach((bytes, i) => { if (!bytes.equals(expected[i])) throw new Error('call ' + c + ': ' + list[i]); });
            }
            process.stdout.write(JSON.stringify(metrics().fastPath));
          })();
        `;
        // The first CPU this process may run on (a container's cpuset may leave out CPU 0).
        const cpu = /^Cpus_allowed_list:\s*(\d+)/m.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1];
        const busy = spawn('taskset', ['-c', cpu, process.execPath, '-e', 'for (;;) {}'], { stdio: 'ignore' });
        t.after(() => busy.kill('SIGKILL'));
        await once(busy, 'spawn');
        const child = await runToEnd('taskset', ['-c', cpu, process.execPath, '-e', script, ...list], { timeoutMs: 60000 });
        assert.equal(child.code, 0, child.stderr);
        const fastPath = JSON.parse(child.stdout);
        assert.equal(fastPath.judged.cooling, 0, `the overlay cooled: ${child.stdout}`);
        assert.ok(fastPath.hits >= 100 * list.length * 0.9, `fast-path hits: ${child.stdout}`);
      });
    }

    if (kind === 'fuse') {
      // Where opens ask a server, io_uring opens a file read before and reads it at the size it
      // had then, in one submission; the size is only a hint.
      test('a file whose size changed since it was last read is read whole, as node:fs reads it', async (t) => {
        const why = skipReason(kind);
        if (why !== null) return t.skip(why);
        setTuning(roomyBudget);
        const file = path.join(dir, 'changing');
        const random = (size, seed = 0) => Buffer.from(Array.from({ length: size }, (_, i) => (i * 131 + size + seed) % 251));
        const changes = [
          ['the same size, other bytes', () => random(512 * KiB, 1)],
          ['grown by 10 KiB', () => random(522 * KiB)],
          ['grown past one io_uring chunk', () => random(tuning().uringChunk + 300 * KiB)],
          ['shrunk to 100 KiB', () => random(100 * KiB)],
          ['shrunk by one byte', () => random(512 * KiB - 1)],
          ['emptied', () => Buffer.alloc(0)],
        ];
        for (const [label, bytes] of changes) {
          // Written through the mount, so that the kernel's view of the file is the new one.
          fs.writeFileSync(file, random(512 * KiB));
          // The first read finds the file, the next are judged and go to io_uring with its size.
          for (let i = 0; i < 3; i++) assertSameBytes(await smartRead(file), fs.readFileSync(file), `${label}: before, read ${i + 1}`);
          const changed = bytes();
          fs.writeFileSync(file, changed);
          assertSameBytes(await smartRead(file), changed, label);
          assertSameBytes((await readMany([file, file]))[1], changed, `${label}: readMany`);
        }
        fs.rmSync(file);
        await assert.rejects(smartRead(file), { code: 'ENOENT', syscall: 'open' });
      });

      // A budget of 1 µs: every read there, its open included, takes longer.
      test('reads slower than the budget go back to the engines, and after three the filesystem does (cooling)', async (t) => {
        const why = skipReason(kind);
        if (why !== null) return t.skip(why);
        const file = path.join(dir, `file-${4 * KiB}`);
        const expected = fs.readFileSync(file);
        setTuning({ fastPathBudgetUs: 1, copyRateMBps: 100_000 });
        metrics.reset();
        for (let i = 0; i < 8; i++) assertSameBytes(await smartRead(file), expected, `read ${i}`);
        const j = judged();
        assert.ok(j.misjudged >= 3, `misjudged: ${JSON.stringify(j)}`);
        assert.ok(j.cooling >= 1, `cooling: ${JSON.stringify(j)}`);
        const e = explain(file);
        assert.equal(e.judged?.judgement, 'cooling', JSON.stringify(e));
        assert.ok(e.judged.coolingMs > 0);
        assert.notEqual(e.strategy, 'fast-path', e.reason);
      });
    }
  });
}
