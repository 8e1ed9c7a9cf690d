// The bench's peers (bench/peers.js): the protocol between the bench and a peer process, spoken
// by the peer runner under Node and by the C driver compiled here, for real: every file's bytes
// checked by digest against node:fs's, samples and resources from the timed loop, a cold run
// asking for an eviction before each operation, node:fs's error messages; the digest check
// catching a result that differs; Bun and Deno themselves, installed into the bench's cache
// (skipped, with the reason, where they cannot be); and the corpus trial's file list.
'use strict';
const { test, describe, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const { once } = require('node:events');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { checkNoFdLeak, useTempDirs, makeTempDir, writePattern, patternBuffer, runToEnd } = require('./helpers');
const {
  startPeer, compileCDriver, installRuntime, cacheDir, writePathsFile, digestMismatch, tinybenchUrl, PEER_RUNTIMES, PEER_READERS, RUNNER,
} = require('../bench/peers');
const { listCorpus, corpusTrials } = require('../bench/trials');
const { poolCpu, MIN_SHARE_TICKS } = require('../bench/resources');
const { useMounts } = require('./mounts');

checkNoFdLeak({ spawnsChildren: true });
const tempDirs = useTempDirs();

// Short runs: the protocol is under test here, not the speed.
const TIMING = { time: 1, iterations: 3, warmupTime: 1, warmupIterations: 1 };
const COLD_TIMING = { time: 0, iterations: 3, warmupTime: 0, warmupIterations: 0 };

/** Files of several sizes (none, one byte, a page, more than the C driver's first chunk) in `dir`. */
function makeFiles(dir) {
  return [0, 1, 4096, 70001].map((size) => writePattern(path.join(dir, `f${size}.bin`), size));
}

/** A path beside `file` that does not exist, and the message fs.readFileSync fails it with. */
function missingBeside(file) {
  const missing = path.join(path.dirname(file), 'missing');
  try {
    fs.readFileSync(missing);
  } catch (err) {
    return { missing, expected: err.message };
  }
  return assert.fail('the file exists');
}

let pathsFiles = 0;
/** A new paths file (peers.js writePathsFile) listing `paths`. */
function pathsFile(paths) {
  return writePathsFile(path.join(tempDirs.disk, `paths-${pathsFiles++}`), paths);
}

// The two peers every machine with a compiler has: the runner under this Node, and the C loop.
const localPeers = [
  {
    name: 'the peer runner under Node',
    readers: { sync: 'readFileSync', async: 'fs.promises.readFile' },
    start: async () => ({ peer: await startPeer('Node', process.execPath, ['--expose-gc', RUNNER, tinybenchUrl()], {}) }),
  },
  {
    name: 'the C driver',
    // 'threads': 'read' from every CPU at once; 'uring' where it was built with liburing (the
    // skip says when not).
    readers: { sync: 'read', threads: 'threads', uring: 'uring' },
    async start() {
      let compiled;
      try {
        // Compiled into a cache of its own: the test compiles this source, whatever is cached.
        compiled = await compileCDriver(makeTempDir(tempDirs.disk, 'cache-'));
      } catch (err) {
        if (/no C compiler/.test(err.message)) return { skip: err.message };
        throw err;
      }
      const skipReaders = compiled.uring ? {} : { uring: 'the C driver was built without liburing (pkg-config found none)' };
      return { peer: await startPeer('C', compiled.binary, [], {}), skipReaders };
    },
  },
];

for (const local of localPeers) {
  describe(local.name, () => {
    let peer = null;
    let skipReason = null;
    let skipReaders = {};
    let files;
    before(async () => {
      files = makeFiles(makeTempDir(tempDirs.disk, 'files-'));
      ({ peer = null, skip: skipReason = null, skipReaders = {} } = await local.start());
    });
    after(() => peer?.close());

    const context = (shape, paths, { consumeAll = false, evict = null, daemonPid = null } = {}) => peer.setContext({
      shape, consumeAll, pathsFile: pathsFile(paths), evict, daemonPid,
    });
    const skipped = (t) => {
      if (skipReason) t.skip(skipReason);
      return Boolean(skipReason);
    };

    test('says it is ready, with its runtime and version', (t) => {
      if (skipped(t)) return;
      assert.equal(peer.ready.ready, true);
      assert.match(peer.ready.version, /^\d+\.\d+/);
      assert.ok(['node', 'c'].includes(peer.ready.runtime), peer.ready.runtime);
    });

    for (const kind of Object.keys(local.readers)) {
      test(`its ${kind} reader reads every file's bytes, one file or many, on disk and tmpfs, and /proc files of no size`, async (t) => {
        if (skipped(t)) return;
        if (skipReaders[kind]) return t.skip(skipReaders[kind]);
        const reader = local.readers[kind];
        const sets = [files, ...(tempDirs.tmpfs ? [makeFiles(makeTempDir(tempDirs.tmpfs, 'files-'))] : []), ['/proc/version']];
        for (const paths of sets) {
          assert.deepEqual(await context('files', paths), { ok: true, files: paths.length });
          const answer = await peer.verify(reader);
          assert.deepEqual(answer.lengths, paths.map((p) => fs.readFileSync(p).length));
          assert.equal(digestMismatch(paths.map((p) => fs.readFileSync(p)), answer, paths), null);
          for (const file of paths) {
            await context('file', [file]);
            const one = await peer.verify(reader);
            assert.equal(digestMismatch(fs.readFileSync(file), one, [file]), null, file);
          }
        }
      });

      test(`its ${kind} reader is timed in its own process: samples, resources${kind === 'async' ? ', the event loop' : kind === 'threads' ? ', a watcher thread\'s stalls' : ''}`, async (t) => {
        if (skipped(t)) return;
        if (skipReaders[kind]) return t.skip(skipReaders[kind]);
        await context('files', files, { consumeAll: true });
        const run = await peer.time(local.readers[kind], TIMING, false);
        assert.ok(run.samples.length >= TIMING.iterations, `${run.samples.length} samples`);
        assert.ok(run.samples.every((ms) => ms > 0), 'every sample is a duration');
        assert.equal(run.resources.operations, run.samples.length);
        assert.ok(run.resources.peakRssBytes > 0 && run.resources.minorFaults >= 0 && run.resources.majorFaults >= 0, JSON.stringify(run.resources));
        // An async reader's loop, and the watcher thread beside the C driver's readers on every CPU.
        if (kind === 'async' || kind === 'threads') {
          assert.ok(run.loopStall && run.loopStall.stretches === 1 && run.loopStall.maxMs >= run.loopStall.p99Ms, JSON.stringify(run.loopStall));
        } else {
          assert.equal(run.loopStall, null);
        }
      });
    }

    test('a cold run asks for the files\' eviction before every operation, the first checking them all', async (t) => {
      if (skipped(t)) return;
      const asked = [];
      await context('files', files, { evict: (checkAll) => asked.push(checkAll) });
      const run = await peer.time(local.readers.sync, COLD_TIMING, true);
      assert.equal(run.samples.length, COLD_TIMING.iterations);
      assert.deepEqual(asked, [true, false, false]);
    });

    test('a cold run counts the CPU ticks of its operations, not of the evictions: the machine\'s, its own and the daemon\'s', async (t) => {
      if (skipped(t)) return;
      if (!fs.existsSync('/proc/stat')) return t.skip('no /proc/stat here');
      // A file whose read costs the peer CPU (tens of ms a read), a "daemon" that spins
      // throughout, and evictions that hold this process's CPU for 150 ms each.
      const big = writePattern(path.join(makeTempDir(tempDirs.disk, 'big-'), 'big.bin'), 32 << 20);
      const spinner = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
      try {
        await once(spinner, 'spawn');
        await context('file', [big], {
          evict: () => {
            const until = Date.now() + 150;
            while (Date.now() < until);
          },
          daemonPid: spinner.pid,
        });
        const run = await peer.time(local.readers.sync, COLD_TIMING, true);
        assert.ok(run.cpu, 'CPU ticks counted');
        const cpus = os.availableParallelism();
        // Every CPU's ticks over the operations' windows: the samples' time, the trips over the
        // pipe, and a tick per CPU at each end of each window (USER_HZ 100); the 450 ms of
        // evictions would add 45 ticks a CPU.
        const timedMs = run.samples.reduce((sum, ms) => sum + ms, 0);
        assert.ok(run.cpu.total <= cpus * ((timedMs + 3 * 5) / 10 + 2 * run.samples.length), `${run.cpu.total} ticks over ${timedMs.toFixed(1)} ms of operations on ${cpus} CPUs`);
        assert.ok(run.cpu.reader > 0 && run.cpu.daemon > 0, JSON.stringify(run.cpu));
        // Shares of every CPU's time, once the runs pooled count MIN_SHARE_TICKS (a run of
        // three reads counts about 15 here); over fewer, the busy share alone.
        const pooled = poolCpu([run.cpu]);
        assert.ok(pooled.busy > 0 && pooled.busy <= 1, JSON.stringify(pooled));
        if (run.cpu.total < MIN_SHARE_TICKS) assert.ok(pooled.reader === null && pooled.daemon === null, JSON.stringify(pooled));
        const runs = Array.from({ length: Math.ceil(MIN_SHARE_TICKS / run.cpu.total) }, () => run.cpu);
        const shares = poolCpu(runs);
        assert.ok(shares.daemon > 0 && shares.reader > 0, JSON.stringify(shares));
        assert.equal(shares.reader, run.cpu.reader / run.cpu.total);
        assert.equal(shares.daemon, run.cpu.daemon / run.cpu.total);
        // A warm run counts none.
        assert.equal((await peer.time(local.readers.sync, TIMING, false)).cpu, null);
      } finally {
        spinner.kill('SIGKILL');
      }
    });

    test('an eviction that fails ends the run with its reason, and the peer goes on', async (t) => {
      if (skipped(t)) return;
      await context('file', [files[2]], {
        evict: () => {
          throw new Error('pages still cached');
        },
      });
      await assert.rejects(peer.time(local.readers.sync, COLD_TIMING, true), { message: 'pages still cached' });
      await context('file', [files[2]]);
      assert.equal(digestMismatch(fs.readFileSync(files[2]), await peer.verify(local.readers.sync), [files[2]]), null);
    });

    test('a missing file fails with node:fs\'s message; so do an unknown reader and a bad context', async (t) => {
      if (skipped(t)) return;
      const { missing, expected } = missingBeside(files[0]);
      await context('files', [files[1], missing]);
      await assert.rejects(peer.verify(local.readers.sync), { message: expected });
      await assert.rejects(peer.time(local.readers.sync, TIMING, false), { message: expected });
      await assert.rejects(peer.verify('no-such-reader'), /reader/);
      await assert.rejects(context('file', files), /one path/);
      await assert.rejects(peer.setContext({ shape: 'files', consumeAll: false, pathsFile: missing }), /ENOENT/);
    });

    if (local.readers.uring) test('its io_uring reader fails a missing file as node:fs does, and reads on', async (t) => {
      if (skipped(t)) return;
      if (skipReaders.uring) return t.skip(skipReaders.uring);
      const { missing, expected } = missingBeside(files[0]);
      // The missing file among others: every other chain still runs to its CLOSE.
      await context('files', [files[0], missing, ...files]);
      await assert.rejects(peer.verify(local.readers.uring), { message: expected });
      await context('files', files);
      assert.equal(digestMismatch(files.map((f) => fs.readFileSync(f)), await peer.verify(local.readers.uring), files), null);
    });

    if (local.readers.uring) test('its io_uring reader reads one file whole after sizing it, and fails a missing one as node:fs does', async (t) => {
      if (skipped(t)) return;
      if (skipReaders.uring) return t.skip(skipReaders.uring);
      const dir = makeTempDir(tempDirs.disk, 'uring-one-');
      // Empty, under and over the many-files reader's 64 KiB, and over 1 MiB.
      for (const size of [0, 5, (64 << 10) + 3, (1 << 20) + 5]) {
        const file = writePattern(path.join(dir, `f-${size}`), size);
        await context('file', [file]);
        assert.equal(digestMismatch(fs.readFileSync(file), await peer.verify(local.readers.uring), [file]), null, `${size} bytes`);
      }
      const { missing, expected } = missingBeside(files[0]);
      await context('file', [missing]);
      await assert.rejects(peer.verify(local.readers.uring), { message: expected });
    });

    if (local.readers.threads) test('its reader on every CPU says how many threads it reads with, and fails as a loop would: the first failing file in list order', async (t) => {
      if (skipped(t)) return;
      assert.ok(Number.isInteger(peer.ready.threads) && peer.ready.threads >= 1, JSON.stringify(peer.ready));
      const { missing, expected } = missingBeside(files[0]);
      const later = path.join(path.dirname(missing), 'not-this-one-either');
      // Many files after the first missing one, and another missing one among them: whichever
      // thread meets which first, the answer is the first in the list.
      const many = Array.from({ length: 50 }, (_, i) => files[i % files.length]);
      await context('files', [files[0], missing, ...many, later, ...many]);
      await assert.rejects(peer.verify(local.readers.threads), { message: expected });
      await assert.rejects(peer.time(local.readers.threads, TIMING, false), { message: expected });
      await context('files', many);
      assert.equal(digestMismatch(many.map((f) => fs.readFileSync(f)), await peer.verify(local.readers.threads), many), null);
    });

    if (local.readers.threads) test('its reader on every CPU reads one large file in chunks, byte for byte, and times it with a watcher thread\'s stalls', async (t) => {
      if (skipped(t)) return;
      // Over two of its 2 MiB chunks and not a multiple of one; and a small file, read whole.
      const large = writePattern(path.join(path.dirname(files[0]), 'large.bin'), 5 * 1024 * 1024 + 4097);
      for (const file of [large, files[2]]) {
        await context('file', [file]);
        assert.equal(digestMismatch(fs.readFileSync(file), await peer.verify(local.readers.threads), [file]), null);
        const run = await peer.time(local.readers.threads, TIMING, false);
        assert.ok(run.samples.length >= TIMING.iterations, JSON.stringify(run.samples));
        const stall = run.loopStall;
        assert.ok(stall && stall.intervals >= 1 && stall.maxMs >= stall.p99Ms && stall.p99Ms >= 0, JSON.stringify(stall));
        assert.equal(stall.gcMaxMs, null);
      }
      // The other readers keep no watcher.
      assert.equal((await peer.time(local.readers.sync, TIMING, false)).loopStall, null);
      const { missing, expected } = missingBeside(files[0]);
      await context('file', [missing]);
      await assert.rejects(peer.verify(local.readers.threads), { message: expected });
      await assert.rejects(peer.time(local.readers.threads, TIMING, false), { message: expected });
    });

    test('the bench\'s digest check catches a result that is not the baseline\'s', async (t) => {
      if (skipped(t)) return;
      const file = files[3];
      await context('file', [file]);
      const answer = await peer.verify(local.readers.sync);
      const changed = fs.readFileSync(file);
      changed[500] ^= 1;
      assert.match(digestMismatch(changed, answer, [file]), /right length, different bytes \((sha1|crc32) differs\)/);
      assert.equal(digestMismatch(changed.subarray(1), answer, [file]), `${changed.length} bytes instead of ${changed.length - 1}`);
      await context('files', files);
      const many = await peer.verify(local.readers.sync);
      const expected = files.map((f) => fs.readFileSync(f));
      expected[3] = changed;
      assert.match(digestMismatch(expected, many, files), /^f70001\.bin: right length, different bytes/);
      assert.match(digestMismatch(expected.slice(1), many, files), /4 results for 3 files/);
    });
  });
}

// Node's own drivers (bench/drivers.js), which the bench times in the runner under Node rather
// than in its own process: asked for by name, as 'driver:' and the name URI-encoded.
// On FUSE its OPENATs go to io_uring's workers (c_read_loop.c: the open asks the daemon), on
// overlayfs they stay inline: either way every file's bytes are node:fs's, and a missing one
// fails as node:fs fails it while the other chains run to their CLOSE.
describe('the C driver\'s io_uring reader through overlay and FUSE', () => {
  const mounts = useMounts();
  let peer = null;
  let skipReason = null;
  before(async () => {
    const { peer: started = null, skip = null, skipReaders = {} } = await localPeers.find((p) => p.name === 'the C driver').start();
    peer = started;
    skipReason = skip ?? skipReaders.uring ?? null;
  });
  after(() => peer?.close());

  for (const { kind, label } of mounts.all) {
    test(`${label}: every file's bytes, and node:fs's error for a missing one`, async (t) => {
      if (skipReason) return t.skip(skipReason);
      const mount = mounts.get(kind);
      if (!mount) return t.skip(mounts.skipReason(kind));
      const written = makeFiles(makeTempDir(mount.backingDir, 'files-'));
      const files = written.map((file) => path.join(mount.dir, path.relative(mount.backingDir, file)));
      await peer.setContext({ shape: 'files', consumeAll: false, pathsFile: pathsFile(files), evict: null });
      const answer = await peer.verify('uring');
      assert.deepEqual(answer.lengths, files.map((f) => fs.readFileSync(f).length));
      assert.equal(digestMismatch(files.map((f) => fs.readFileSync(f)), answer, files), null);
      const { missing, expected } = missingBeside(files[0]);
      await peer.setContext({ shape: 'files', consumeAll: false, pathsFile: pathsFile([files[0], missing, ...files]), evict: null });
      await assert.rejects(peer.verify('uring'), { message: expected });
    });
  }
});

describe('the bench\'s own drivers in the runner under Node', () => {
  let peer;
  let files;
  before(async () => {
    files = makeFiles(makeTempDir(tempDirs.disk, 'files-'));
    peer = await startPeer('Node', process.execPath, ['--expose-gc', RUNNER, tinybenchUrl()], {});
  });
  after(() => peer?.close());
  const driver = (name) => `driver:${encodeURIComponent(name)}`;
  const context = (shape, paths) => peer.setContext({ shape, consumeAll: false, pathsFile: pathsFile(paths), evict: null });

  test('a driver of one file, and one of many, read the bytes node:fs reads and are timed there', async () => {
    const { drivers } = require('../bench/drivers');
    const ofShape = (shape) => drivers.filter((d) => d.shape === shape && d.available() === true).map((d) => d.name);
    assert.ok(ofShape('file').includes('smartRead auto') && ofShape('files').includes('readMany auto ×64'));
    for (const name of ofShape('file').filter((n) => !/consume only/.test(n))) {
      for (const file of files) {
        await context('file', [file]);
        assert.equal(digestMismatch(fs.readFileSync(file), await peer.verify(driver(name)), [file]), null, `${name}: ${file}`);
      }
    }
    await context('files', files);
    for (const name of ofShape('files')) {
      assert.equal(digestMismatch(files.map((f) => fs.readFileSync(f)), await peer.verify(driver(name)), files), null, name);
    }
    await context('file', [files[3]]);
    const run = await peer.time(driver('smartRead auto'), TIMING, false);
    assert.ok(run.samples.length >= TIMING.iterations && run.loopStall?.stretches === 1, JSON.stringify(run.loopStall));
    assert.equal((await peer.time(driver('smartReadSync'), TIMING, false)).loopStall, null);
  });

  test('a driver of another shape than the context\'s, of random reads, or unknown, is refused with why', async () => {
    await context('file', [files[2]]);
    await assert.rejects(peer.verify(driver('readMany auto ×64')), /readMany auto ×64 reads files, not file/);
    await assert.rejects(peer.verify(driver('FileHandle.read ×32')), /shape random runs in the bench's process/);
    await assert.rejects(peer.verify(driver('no such driver')), /no bench driver no such driver/);
    assert.equal(digestMismatch(fs.readFileSync(files[2]), await peer.verify(driver('fs.readFileSync')), [files[2]]), null);
  });
});

// Bun and Deno as the bench runs them, from the bench's cache (installed there now when they
// are not yet: a few seconds from the npm registry). Where that cannot be done, the tests are
// skipped with the reason.
describe('Bun and Deno', () => {
  let files;
  before(() => {
    files = makeFiles(makeTempDir(tempDirs.disk, 'files-'));
  });

  for (const runtime of PEER_RUNTIMES) {
    test(`${runtime.name} ${runtime.version}: every reader of its, one file and many, reads the bytes node:fs reads, and is timed`, async (t) => {
      let binary;
      try {
        ({ binary } = await installRuntime(runtime, cacheDir()));
      } catch (err) {
        t.skip(`${runtime.name} cannot be installed here: ${err.message}`);
        return;
      }
      const peer = await startPeer(runtime.name, binary, runtime.args(tinybenchUrl()), runtime.env(cacheDir()));
      try {
        assert.equal(peer.ready.version, runtime.version);
        assert.equal(peer.ready.runtime, runtime.package);
        assert.equal(peer.ready.gc, true, 'a GC before each run');
        assert.ok(['interval', 'lateness'].includes(peer.ready.loopStall), peer.ready.loopStall);
        const readers = PEER_READERS.filter((r) => r.peer === runtime.name);
        assert.ok(readers.length >= 2);
        for (const { reader, async: isAsync } of readers) {
          for (const [shape, paths] of [['file', [files[3]]], ['files', files]]) {
            await peer.setContext({ shape, consumeAll: false, pathsFile: pathsFile(paths) });
            const expected = shape === 'file' ? fs.readFileSync(paths[0]) : paths.map((p) => fs.readFileSync(p));
            assert.equal(digestMismatch(expected, await peer.verify(reader), paths), null, `${reader}, ${shape}`);
          }
          const run = await peer.time(reader, TIMING, false);
          assert.ok(run.samples.length >= TIMING.iterations && run.resources.operations === run.samples.length, `${reader}: ${run.samples.length} samples`);
          assert.equal(run.loopStall === null, !isAsync, `${reader}: the loop watched while an async reader reads`);
          // Neither runtime delivers 'gc' entries (Deno lists the type all the same): no figure,
          // rather than a pause of 0.
          if (isAsync) assert.equal(run.loopStall.gcMaxMs, null, `${reader}: no GC figure`);
        }
      } finally {
        await peer.close();
      }
    });
  }
});

test('a peer that cannot be started is a reason, and leaves nothing running', async () => {
  const missing = path.join(tempDirs.disk, 'no-such-runtime');
  await assert.rejects(startPeer('Nothing', missing, [], {}), new RegExp(`Nothing did not start: spawn ${missing} ENOENT`));
  await assert.rejects(startPeer('Node', process.execPath, ['-e', 'process.exit(3)'], {}), /Node ended \(exit code 3\)/);
  await assert.rejects(startPeer('Node', process.execPath, ['-e', 'console.log("hello")'], {}), /Node wrote a line that is not JSON: hello/);
});

describe('the corpus', () => {
  test('is every regular file under the directory, depth first in name order, links and other files left out', () => {
    const dir = makeTempDir(tempDirs.disk, 'corpus-');
    fs.mkdirSync(path.join(dir, 'b', 'c'), { recursive: true });
    fs.mkdirSync(path.join(dir, 'a'));
    fs.writeFileSync(path.join(dir, 'b', 'c', 'deep.js'), patternBuffer(300));
    fs.writeFileSync(path.join(dir, 'b', 'Z.md'), patternBuffer(20));
    fs.writeFileSync(path.join(dir, 'a', 'empty'), '');
    fs.writeFileSync(path.join(dir, 'top.json'), patternBuffer(5000));
    fs.symlinkSync(path.join(dir, 'top.json'), path.join(dir, 'a', 'link.json'));
    fs.symlinkSync(path.join(dir, 'b'), path.join(dir, 'linked-dir'));
    const list = listCorpus(dir);
    assert.deepEqual(list.paths.map((p) => path.relative(dir, p)), ['a/empty', 'b/Z.md', 'b/c/deep.js', 'top.json']);
    assert.equal(list.bytes, 5320);
    const [warm, cold] = corpusTrials(list, { cold: true });
    assert.deepEqual([warm.name, cold.name], ['warm-corpus', 'cold-corpus']);
    assert.equal(warm.files, 4);
    assert.equal(warm.bytes, 5320);
    assert.equal(warm.shape, 'files');
    assert.match(cold.unavailable({ fsType: 'tmpfs' }) ?? 'needs the addon', /tmpfs|addon/);
    assert.deepEqual(warm.setup().paths, list.paths, 'read in place');
    assert.throws(() => listCorpus(path.join(dir, 'missing')), { code: 'ENOENT' });
  });

  test('--corpus must name a directory', async () => {
    const run = await runToEnd(process.execPath, ['bench/index.js', '--corpus', path.join(tempDirs.disk, 'missing'), '--filter', 'corpus']);
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /--corpus .*missing: not a directory/);
  });
});
