// The bench's mounts (bench/mounts.js, `--mounts`): the fuse-latency daemon is a read-only
// passthrough of its source; a process killed outright (SIGKILL) leaves no mount, daemon or
// directory; a bench run with --mounts names each target by its filesystem, runs each kind's
// trials, and leaves nothing behind, whether it ends or is interrupted; run by a user who cannot
// mount, it lists each kind with its trials skipped and the reason. Root only (mounting):
// skipped, with the reason, elsewhere, as is what this machine lacks (overlayfs, /dev/fuse,
// bindfs, libfuse3's headers).
'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const {
  MountSet, MOUNT_KINDS, FS_TYPES, mountUnavailable, buildFuseLatency, mountsUnder, running,
} = require('../bench/mounts');
const { readMounts } = require('../bench/targets');
const { pageCacheControllable } = require('../bench/smartread');
const { MIN_SHARE_TICKS } = require('../bench/resources');
const {
  checkNoFdLeak, useTempDirs, makeTempDir, runToEnd, waitUntil, waitForExit, stdoutLines, withinTime, patternBuffer, assertSameBytes, thrownBy,
  unreachableWithoutRoot,
} = require('./helpers');

checkNoFdLeak({ spawnsChildren: true });
const tempDirs = useTempDirs();

const BENCH = path.join(__dirname, '..', 'bench', 'index.js');

/** The daemon's build, or the reason there is none (a skip): built once for the file. */
let daemon;
async function fuseLatencyDaemon() {
  daemon ??= buildFuseLatency().catch((err) => err.message);
  return daemon;
}

/** A fuse-latency mount answering each request `delayMs` late, in a set of its own (the caller
 * tears it down): { set, mount }; or null, the test skipped with the reason. */
async function fuseLatencyMount(t, delayMs) {
  const why = mountUnavailable('fuse-latency') ?? (typeof (await fuseLatencyDaemon()) === 'string' ? await fuseLatencyDaemon() : null);
  if (why) {
    t.skip(why);
    return null;
  }
  const set = new MountSet(tempDirs.disk, { log: () => {} });
  try {
    return { set, mount: await set.fuseLatency({ binary: (await fuseLatencyDaemon()).binary, delayMs }) };
  } catch (err) {
    set.teardown();
    throw err;
  }
}

/** The kinds this machine can mount, and why each other one is skipped. */
async function mountable() {
  const kinds = [];
  const skipped = [];
  for (const kind of MOUNT_KINDS) {
    let why = mountUnavailable(kind);
    if (!why && kind === 'fuse-latency' && typeof (await fuseLatencyDaemon()) === 'string') why = await fuseLatencyDaemon();
    if (why) skipped.push(`${kind}: ${why}`);
    else kinds.push(kind);
  }
  return { kinds, skipped };
}

/** Asserts that nothing is mounted beneath `dir` and no smartread-mounts-* directory is left in it. */
function assertNothingLeft(dir) {
  assert.deepEqual(mountsUnder(dir), [], `nothing mounted beneath ${dir}`);
  assert.deepEqual(fs.readdirSync(dir).filter((name) => name.startsWith('smartread-mounts-')), [], `no mount set left in ${dir}`);
}

test('the fuse-latency daemon: a read-only passthrough of its source, gone with its mount', async (t) => {
  const mounted = await fuseLatencyMount(t, 0.1);
  if (mounted === null) return;
  const { set, mount } = mounted;
  try {
    assert.equal(readMounts().find((m) => m.mountPoint === mount.dir)?.fsType, FS_TYPES['fuse-latency']);
    const files = { small: patternBuffer(4096), large: patternBuffer(1024 * 1024 + 3, 7), empty: Buffer.alloc(0) };
    fs.mkdirSync(path.join(mount.backingDir, 'sub'));
    for (const [name, bytes] of Object.entries(files)) fs.writeFileSync(path.join(mount.backingDir, 'sub', name), bytes);
    fs.symlinkSync('small', path.join(mount.backingDir, 'sub', 'link'));
    const sub = path.join(mount.dir, 'sub');
    for (const [name, bytes] of Object.entries(files)) {
      assertSameBytes(fs.readFileSync(path.join(sub, name)), bytes, name);
      assertSameBytes(await fs.promises.readFile(path.join(sub, name)), bytes, `${name}, async`);
      assert.equal(fs.statSync(path.join(sub, name)).size, bytes.length);
    }
    assert.deepEqual(fs.readdirSync(sub).sort(), fs.readdirSync(path.join(mount.backingDir, 'sub')).sort());
    assert.equal(fs.readlinkSync(path.join(sub, 'link')), 'small');
    assertSameBytes(fs.readFileSync(path.join(sub, 'link')), files.small, 'through the link');
    assert.equal(thrownBy(() => fs.readFileSync(path.join(sub, 'missing'))).code, 'ENOENT');
    assert.equal(thrownBy(() => fs.writeFileSync(path.join(sub, 'small'), 'x')).code, 'EROFS');
    assert.equal(thrownBy(() => fs.writeFileSync(path.join(sub, 'new'), 'x')).code, 'EROFS');
    assert.ok(running(mount.pid), 'the daemon runs while mounted');
    set.teardown();
    assert.equal(readMounts().some((m) => m.mountPoint === mount.dir), false, 'unmounted');
    assert.equal(running(mount.pid), false, 'the daemon ended');
  } finally {
    set.teardown();
  }
});

test('the fuse-latency daemon answers 64 requests at once without a thread held for each', async (t) => {
  // Each answer waits 20 ms: long enough that the 64 reads are in flight together.
  const mounted = await fuseLatencyMount(t, 20);
  if (mounted === null) return;
  const { set, mount } = mounted;
  try {
    const count = 64;
    const bytes = patternBuffer(4096, 3);
    fs.mkdirSync(path.join(mount.backingDir, 'many'));
    for (let i = 0; i < count; i++) fs.writeFileSync(path.join(mount.backingDir, 'many', `f${i}`), bytes);
    const files = Array.from({ length: count }, (_, i) => path.join(mount.dir, 'many', `f${i}`));
    // The names first (the kernel sends one directory's lookups one at a time), then 64 reads at
    // once from 64 of libuv's threads: an open and a read of each, all in flight together.
    for (const file of files) fs.statSync(file);
    const threadsBefore = fs.readdirSync(`/proc/${mount.pid}/task`).length;
    const run = await runToEnd(process.execPath, ['-e', `
      const fs = require('node:fs');
      const files = JSON.parse(process.argv[1]);
      Promise.all(files.map((file) => fs.promises.readFile(file))).then((all) => {
        process.stdout.write(JSON.stringify({ sizes: all.map((b) => b.length), first: all[0].toString('base64') }));
      });`, JSON.stringify(files)], { env: { UV_THREADPOOL_SIZE: String(count) } });
    assert.equal(run.code, 0, run.stderr);
    const { sizes, first } = JSON.parse(run.stdout);
    assert.deepEqual(sizes, files.map(() => bytes.length));
    assertSameBytes(Buffer.from(first, 'base64'), bytes, 'f0');
    // libfuse starts a thread only when none is free to take the next request; a request in its
    // delay holds none, so far fewer threads than requests in flight. (A daemon that slept on a
    // thread per request had 64 or more.)
    const threads = fs.readdirSync(`/proc/${mount.pid}/task`).length;
    t.diagnostic(`threads: ${threadsBefore} before, ${threads} after`);
    assert.ok(threads < count / 2, `the daemon has ${threads} threads after 64 requests at once (${threadsBefore} before)`);
  } finally {
    set.teardown();
  }
});

test('a process killed outright (SIGKILL) with every kind mounted leaves no mount, daemon or directory', async (t) => {
  const { kinds, skipped } = await mountable();
  if (kinds.length === 0) return t.skip(skipped.join('; '));
  if (skipped.length > 0) t.diagnostic(`not mounted here: ${skipped.join('; ')}`);
  const parent = makeTempDir(tempDirs.disk, 'killed-');
  const source = `
    const { MountSet } = require(${JSON.stringify(require.resolve('../bench/mounts'))});
    (async () => {
      const set = new MountSet(process.argv[1], { log: () => {} });
      const pids = [];
      for (const kind of JSON.parse(process.argv[2])) {
        const mount = kind === 'overlay' ? set.overlay() : kind === 'fuse' ? await set.bindfs()
          : await set.fuseLatency({ binary: process.argv[3], delayMs: 0.1 });
        if (mount.pid) pids.push(mount.pid);
      }
      process.stdout.write(JSON.stringify({ base: set.base, pids }) + '\\n');
      setInterval(() => {}, 1000);
    })();`;
  const binary = kinds.includes('fuse-latency') ? (await fuseLatencyDaemon()).binary : '';
  const child = spawn(process.execPath, ['-e', source, parent, JSON.stringify(kinds), binary], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = waitForExit(child);
  const { base, pids } = JSON.parse(await withinTime(stdoutLines(child).next(), 30000, 'the mounts'));
  assert.equal(mountsUnder(base).length, kinds.length, 'mounted');
  child.kill('SIGKILL');
  assert.equal((await exited).signal, 'SIGKILL');
  await waitUntil(() => mountsUnder(base).length === 0 && !fs.existsSync(base) && !pids.some(running), 10000,
    () => `left behind: ${JSON.stringify({ mounted: mountsUnder(base).map((m) => m.mountPoint), dir: fs.existsSync(base), daemons: pids.filter(running) })}`);
  assertNothingLeft(parent);
});

test('a bench run with --mounts: targets named by their filesystem, each kind its trials, nothing left', async (t) => {
  const { kinds, skipped } = await mountable();
  if (kinds.length === 0) return t.skip(skipped.join('; '));
  const dir = makeTempDir(tempDirs.disk, 'bench-');
  const out = makeTempDir(tempDirs.disk, 'out-');
  const json = path.join(out, 'report.json');
  const run = await runToEnd(process.execPath, [
    BENCH, '--mounts', '--dir', dir, '--sizes', '4k', '--files', '4', '--time', '1', '--rounds', '1',
    '--filter', '^(warm|cold)-(4k|4x4k)$', '--out', out, '--json', json,
  ], { timeoutMs: 240000 });
  assert.equal(run.code, 0, `the bench exited with ${run.code ?? run.signal}:\n${run.stderr.slice(-3000)}`);
  const report = JSON.parse(fs.readFileSync(json, 'utf8'));
  assert.deepEqual(report.options.mounts, MOUNT_KINDS);
  const expected = {
    overlay: { trials: ['warm-4k', 'warm-4x4k', 'cold-4k'], skipped: [] },
    fuse: { trials: ['warm-4k', 'warm-4x4k'], skipped: [] },
    'fuse-latency': { trials: ['warm-4k', 'cold-4x4k'], skipped: ['warm-4x4k'] },
  };
  for (const kind of MOUNT_KINDS) {
    const target = report.targets.find((tg) => tg.mount?.kind === kind);
    assert.ok(target, `a target for ${kind}`);
    const ran = target.trials.filter((tr) => !tr.skipped).map((tr) => tr.name);
    // Cold trials need the addon's page-cache control: skipped, with the reason, on the JS engine.
    const coldSkipped = target.trials.filter((tr) => tr.cold && tr.skipped);
    if (pageCacheControllable() !== true) {
      for (const trial of coldSkipped) assert.match(trial.skipped, /native addon/, `${kind} ${trial.name}`);
    }
    if (!kinds.includes(kind)) {
      assert.deepEqual(ran, [], `${kind} cannot be mounted here: its trials are skipped`);
      assert.equal(typeof target.mount.skipped, 'string');
      continue;
    }
    assert.equal(target.fsType, FS_TYPES[kind], `${kind}'s filesystem`);
    assert.equal(typeof target.mount.backingDir, 'string');
    const cold = pageCacheControllable() === true;
    assert.deepEqual(ran, expected[kind].trials.filter((name) => cold || !name.startsWith('cold')), `${kind}'s trials`);
    assert.deepEqual(target.trials.filter((tr) => tr.skipped && !coldSkipped.includes(tr)).map((tr) => tr.name), expected[kind].skipped, `${kind}'s skipped trials`);
    for (const trial of target.trials.filter((tr) => !tr.skipped)) {
      for (const driver of trial.drivers) {
        assert.equal(driver.error, undefined, `${kind} ${trial.name} ${driver.name}: ${driver.error}`);
      }
      if (trial.cold) {
        assert.equal(trial.eviction.through, kind === 'overlay' ? 'the mount' : 'the written files', `${kind} ${trial.name}: evicted through`);
      }
    }
  }
  const latency = report.targets.find((tg) => tg.mount?.kind === 'fuse-latency');
  if (kinds.includes('fuse-latency')) {
    assert.equal(latency.mount.delayMs, 1);
    for (const figure of ['oneReadMs', 'concurrentMs']) assert.equal(typeof latency.mount.check[figure], 'number', figure);
    assert.equal(latency.mount.check.evicted, pageCacheControllable() === true);
    // The cold many files run every driver of their shape, --full's too, but not the floor of
    // warm awaited reads.
    const cold = latency.trials.find((tr) => tr.name === 'cold-4x4k');
    if (!cold.skipped) {
      const drivers = cold.drivers.map((d) => d.name);
      for (const name of ['fs.readFileSync loop', 'smartReadSync loop', 'fs.promises.readFile ×64', 'smartRead auto ×64', 'readMany auto ×64']) {
        assert.ok(drivers.includes(name), `${name} in ${drivers.join(', ')}`);
      }
      assert.ok(!drivers.includes('smartReadSync loop, awaited'), drivers.join(', '));
      assert.deepEqual(cold.timing, { rounds: 1, coldOperationsPerRound: 2 });
      // The daemon's share of the CPUs is counted beside the reader's, where enough ticks passed.
      for (const d of cold.drivers.filter((x) => x.cpu)) {
        if (d.cpu.ticks < MIN_SHARE_TICKS) assert.ok(d.cpu.daemon === null && d.cpu.reader === null, `${d.name}: ${JSON.stringify(d.cpu)}`);
        else assert.ok(d.cpu.daemon >= 0 && d.cpu.daemon <= 1 && d.cpu.reader >= 0, `${d.name}: ${JSON.stringify(d.cpu)}`);
      }
      assert.ok(cold.drivers.some((d) => d.cpu), 'CPU figures for some driver');
    }
  }
  assertNothingLeft(dir);
});

test('a bench run with --mounts interrupted (SIGINT) mid-run exits 130 and leaves nothing behind', async (t) => {
  const why = mountUnavailable('overlay');
  if (why) return t.skip(why);
  const control = pageCacheControllable();
  if (control !== true) return t.skip(`the run goes straight to a cold trial, which cannot run here: ${control}`);
  const dir = makeTempDir(tempDirs.disk, 'interrupted-');
  const out = makeTempDir(tempDirs.disk, 'out-');
  const child = spawn(process.execPath, [
    // Without --full only the overlay has a cold single file: the run goes straight to it.
    BENCH, '--mount', 'overlay', '--dir', dir, '--sizes', '1m', '--rounds', '8', '--filter', '^cold-1m$', '--out', out,
  ], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk) => { stderr += chunk; });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  // Once the overlay's trial is under way, its files beneath the mount.
  await waitUntil(() => /overlay: .*\n {2}cold-1m: files ready/.test(stderr), 120000, () => `the overlay trial did not start:\n${stderr.slice(-2000)}`);
  assert.equal(mountsUnder(dir).length, 1, 'the overlay is mounted');
  child.kill('SIGINT');
  assert.equal(await withinTime(exited, 30000, 'the interrupted bench'), 130);
  assertNothingLeft(dir);
});

test('a bench run with --mounts by a user who cannot mount: each kind listed, its trials skipped with the reason', async (t) => {
  if (process.getuid() !== 0) return t.skip('needs root, to run the bench as another user');
  const unreachable = unreachableWithoutRoot();
  if (unreachable) return t.skip(`a child running as nobody could not load smartread: ${unreachable}`);
  // A directory that user may write: the trials' files and the reports.
  const dir = makeTempDir(os.tmpdir(), 'smartread-bench-nobody-');
  fs.chmodSync(dir, 0o777);
  const json = path.join(dir, 'report.json');
  const child = spawn(process.execPath, [
    BENCH, '--mounts', '--dir', dir, '--sizes', '4k', '--filter', '^warm-4k$', '--time', '1', '--rounds', '1', '--out', dir, '--json', json,
  ], { cwd: path.resolve(__dirname, '..'), uid: 65534, gid: 65534, env: { ...process.env, HOME: dir }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk) => { stderr += chunk; });
  const { code } = await withinTime(waitForExit(child), 120000, 'the bench as nobody');
  assert.equal(code, 0, stderr.slice(-2000));
  const report = JSON.parse(fs.readFileSync(json, 'utf8'));
  for (const kind of MOUNT_KINDS) {
    const target = report.targets.find((tg) => tg.mount?.kind === kind);
    assert.match(target.mount.skipped, /mounting needs root/, kind);
    assert.deepEqual(target.trials.map((tr) => [tr.name, tr.skipped]), [['warm-4k', target.mount.skipped]], kind);
  }
  assert.equal(report.targets.find((tg) => tg.realpath === fs.realpathSync(dir)).trials[0].skipped, undefined, 'the disk target still runs');
  assertNothingLeft(dir);
});
