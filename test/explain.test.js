// explain(): the way smartRead would read a file right now (the fast path, io_uring, chunked
// io_uring, the thread pool, the calling thread, or node:fs on the JS engine), why, and the
// device under it: the filesystem from statfs, the block device from /sys/dev/block. Loop and
// zram devices are created here when running as root.
'use strict';
const { test, after } = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { explain, smartRead, engineInfo, pageCacheResidency, tuning, setTuning } = require('smartread');
const { describeBlockDevice } = require('../dist/engine/device.js');
const {
  checkNoFdLeak, useTempDirs, makeTempDir, writePattern, assertSameBytes, errorFacts, thrownBy,
  runToEnd, setUpAsyncEngines, openFdCount, evictCompletely, forcedPlatform, skipOffLinux,
} = require('./helpers');

setUpAsyncEngines();
checkNoFdLeak({ spawnsChildren: true });
const tempDirs = useTempDirs();
const info = engineInfo();
const native = info.engine === 'native';
const isRoot = process.getuid?.() === 0;

const KiB = 1024;
const MiB = 1024 * KiB;

// What a read that misses the fast path takes here.
const nextRung = !native ? 'js' : info.uring.available ? 'uring' : 'threadpool';

// st_dev as MAJ:MIN, by the shell's stat(1), apart from smartread's own decoding.
function devOf(file) {
  const [major, minor] = execFileSync('stat', ['-c', '%Hd %Ld', file], { encoding: 'utf8' }).trim().split(' ');
  return `${major}:${minor}`;
}

// The filesystem type mountinfo gives for the mount numbered `majMin` (ext2/3 share ext4's magic).
function mountinfoType(majMin) {
  for (const line of fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    const fields = line.split(' ');
    if (fields[2] === majMin) {
      const type = fields[fields.indexOf('-') + 1];
      return /^ext[234]$/.test(type) ? 'ext4' : type;
    }
  }
  return undefined;
}

function hasCommand(name) {
  try {
    execFileSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

test('a file on tmpfs: filesystem tmpfs, no block device, its st_dev', (t) => {
  if (tempDirs.tmpfs === undefined) {
    t.skip('/dev/shm is not a tmpfs here');
    return;
  }
  const file = writePattern(path.join(tempDirs.tmpfs, 'small'), 4 * KiB);
  const { device } = explain(file);
  if (forcedPlatform !== null) {
    // Off Linux, statfs's f_type numbers other filesystems and there is no sysfs to ask.
    assert.deepEqual(device, { filesystem: 'unknown', kind: 'unknown', dev: String(fs.statSync(file, { bigint: true }).dev) });
    return;
  }
  assert.equal(device.filesystem, 'tmpfs');
  assert.equal(device.kind, 'none');
  assert.equal(device.dev, devOf(file));
  assert.equal(device.block, undefined);
});

// The fast path's limit with a budget of `us` µs at 8,192 MB/s (tests set small ones).
function withFastPathLimit(us, body) {
  const before = tuning();
  setTuning({ fastPathBudgetUs: us, copyRateMBps: 8192 });
  const restore = () => setTuning(before);
  try {
    const result = body(us * 8192);
    if (result instanceof Promise) return result.finally(restore);
    restore();
    return result;
  } catch (err) {
    restore();
    throw err;
  }
}

test('tmpfs: always in memory, so a file up to the limit always takes the fast path (without RWF_NOWAIT, which tmpfs refuses)', async (t) => {
  if (tempDirs.tmpfs === undefined) {
    t.skip('/dev/shm is not a tmpfs here');
    return;
  }
  await withFastPathLimit(16, async (limit) => {
    for (const size of [1, 4 * KiB, 100 * KiB, limit, limit + 1]) {
      const file = writePattern(path.join(tempDirs.tmpfs, `always-${size}`), size);
      const { strategy, reason } = explain(file);
      if (!native) assert.equal(strategy, 'js');
      else if (size <= limit) {
        assert.equal(strategy, 'fast-path', `${size} bytes: ${reason}`);
        assert.match(reason, new RegExp(`always in memory on tmpfs, and ${size} bytes ≤ ${limit} \\(a copy of 16 µs at 8192 MB/s\\)`));
      } else {
        assert.equal(strategy, nextRung === 'uring' ? 'uring-chunked' : nextRung, `${size} bytes: ${reason}`);
        assert.match(reason, new RegExp(`${size} bytes > the fast path's ${limit}`));
      }
      assertSameBytes(await smartRead(file), fs.readFileSync(file), `${size} bytes on tmpfs`);
    }
  });
});

test('a file on the disk temp dir: the filesystem mountinfo names, the block device sysfs names', (t) => {
  if (skipOffLinux(t, 'a device named by mountinfo and sysfs')) return;
  const file = writePattern(path.join(tempDirs.disk, 'small'), 4 * KiB);
  const { device } = explain(file);
  const dev = devOf(file);
  assert.equal(device.dev, dev);
  assert.equal(device.filesystem, mountinfoType(dev));
  const sysDir = fs.realpathSync(`/sys/dev/block/${dev}`);
  const disk = fs.existsSync(path.join(sysDir, 'partition')) ? path.dirname(sysDir) : sysDir;
  assert.equal(device.block, path.basename(disk));
  assert.equal(device.rotational, fs.readFileSync(path.join(disk, 'queue/rotational'), 'utf8').trim() === '1');
  if (!sysDir.includes('/virtio')) {
    t.skip(`${os.tmpdir()} is not on a virtio disk here (${sysDir}): its kind is not checked`);
    return;
  }
  assert.equal(device.kind, 'virtual');
});

test('device facts are looked up once per st_dev and cannot be changed', () => {
  const a = explain(writePattern(path.join(tempDirs.disk, 'one'), 10)).device;
  const b = explain(writePattern(path.join(tempDirs.disk, 'two'), 10)).device;
  assert.equal(a, b);
  assert.ok(Object.isFrozen(a));
  assert.throws(() => { 'use strict'; a.kind = 'hdd'; }, TypeError);
});

test('a cached small file takes the fast path; the fast path reads the same bytes', async () => {
  const file = writePattern(path.join(tempDirs.disk, 'cached'), 4 * KiB);
  fs.readFileSync(file);
  const { strategy, reason } = explain(file);
  if (!native) {
    assert.equal(strategy, 'js');
    assert.match(reason, /native addon is not in use/);
  } else {
    assert.equal(strategy, 'fast-path');
    assert.match(reason, new RegExp(`4096 bytes ≤ ${tuning().fastPathBudgetUs * tuning().copyRateMBps}`));
  }
  assertSameBytes(await smartRead(file), fs.readFileSync(file));
});

test('a file evicted from the page cache misses the fast path and goes to the next rung', (t) => {
  if (!native) {
    assert.equal(explain(writePattern(path.join(tempDirs.disk, 'js-evicted'), 4 * KiB)).strategy, 'js');
    t.skip('page-cache control needs the addon');
    return;
  }
  // An evicted file is no sure miss: explain's RWF_NOWAIT read starts readahead, and on a fast
  // disk the pages can be in by the time it looks (Linux 6.18 on a virtio disk: a fifth of such
  // reads, more under load). Each try is either that (a real hit) or the miss under test.
  const file = writePattern(path.join(tempDirs.disk, 'evicted'), 4 * KiB);
  const tries = 20;
  for (let i = 0; i < tries; i++) {
    evictCompletely(file);
    const { strategy, reason } = explain(file);
    if (strategy === 'fast-path') {
      assert.equal(pageCacheResidency(file).cached, 4 * KiB, 'a hit after eviction: the pages came back');
      continue;
    }
    assert.equal(strategy, nextRung);
    assert.match(reason, /the fast path missed/);
    return;
  }
  t.skip(`the fast path's own readahead brought the evicted file back before it looked, ${tries} times in a row`);
});

test("cached files over the fast path's limit: opened at once, read in chunks on io_uring's workers", () => withFastPathLimit(32, (limit) => {
  const medium = writePattern(path.join(tempDirs.disk, 'medium'), 1 * MiB);
  const large = writePattern(path.join(tempDirs.disk, 'large'), 8 * MiB);
  fs.readFileSync(medium);
  fs.readFileSync(large);
  const m = explain(medium);
  const l = explain(large);
  const expected = nextRung === 'uring' ? 'uring-chunked' : nextRung;
  assert.equal(m.strategy, expected);
  assert.equal(l.strategy, expected);
  if (native) {
    assert.match(m.reason, new RegExp(`1048576 bytes > the fast path's ${limit}`));
    assert.match(l.reason, new RegExp(`8388608 bytes > the fast path's ${limit}`));
  }
  if (nextRung === 'uring') assert.match(l.reason, /opened at once on the calling thread \(openat2 RESOLVE_CACHED\), then io_uring reads it in \d+-byte chunks/);
}));

test('a forced strategy is explained as that engine', () => {
  const file = writePattern(path.join(tempDirs.disk, 'forced'), 100);
  fs.readFileSync(file);
  assert.equal(explain(file, { strategy: 'sync' }).strategy, native ? 'sync' : 'js');
  assert.equal(explain(file, { strategy: 'threadpool' }).strategy, native ? 'threadpool' : 'js');
  if (nextRung === 'uring') {
    const forced = explain(file, { strategy: 'uring' });
    assert.equal(forced.strategy, 'uring');
    assert.match(forced.reason, /strategy 'uring'/);
  } else {
    assert.equal(thrownBy(() => explain(file, { strategy: 'uring' })).code, 'ERR_SMARTREAD_STRATEGY_UNAVAILABLE');
  }
});

test("explain never creates or changes a file, even with flags that would ('w+', 'a+')", () => {
  const file = writePattern(path.join(tempDirs.disk, 'kept'), 4 * KiB);
  fs.readFileSync(file);
  const truncating = explain(file, { flag: 'w+' });
  assert.equal(fs.statSync(file).size, 4 * KiB);
  assert.equal(truncating.strategy, native ? nextRung : 'js', 'openat2 RESOLVE_CACHED refuses O_TRUNC: no fast path');
  const missing = path.join(tempDirs.disk, 'not-created');
  assert.deepEqual(errorFacts(thrownBy(() => explain(missing, { flag: 'a+' }))), errorFacts(thrownBy(() => fs.statSync(missing))));
  assert.equal(fs.existsSync(missing), false);
});

test('an fd is explained without the fast path, on the device of its file', () => {
  const file = writePattern(path.join(tempDirs.disk, 'by-fd'), 3 * MiB);
  const fd = fs.openSync(file, 'r');
  try {
    const byFd = explain(fd);
    assert.deepEqual(byFd.device, explain(file).device);
    if (native) {
      assert.equal(byFd.strategy, nextRung === 'uring' ? 'uring-chunked' : nextRung);
      assert.match(byFd.reason, /file descriptor/);
    } else {
      assert.equal(byFd.strategy, 'js');
    }
  } finally {
    fs.closeSync(fd);
  }
});

test('files without a size: procfs and character devices', (t) => {
  if (skipOffLinux(t, 'procfs')) return;
  const proc = explain('/proc/self/status');
  assert.equal(proc.device.filesystem, 'proc');
  assert.equal(proc.device.kind, 'none');
  const devNull = explain('/dev/null');
  assert.equal(devNull.device.kind, 'none');
  if (native) {
    assert.equal(proc.strategy, nextRung);
    assert.match(proc.reason, /no size/);
    assert.match(devNull.reason, /not a regular file/);
    // A directory: the fast path finds it one and the read fails with EISDIR, as node:fs's does;
    // an engine without a fast path tries it and fails alike.
    const dir = explain(tempDirs.disk);
    assert.equal(dir.strategy, 'fast-path');
    assert.match(dir.reason, /EISDIR/);
    assert.equal(explain(tempDirs.disk, { strategy: 'threadpool' }).strategy, 'threadpool');
  }
});

test('errors: those of fs.statSync for a bad path, of fs.fstatSync for a bad fd, of smartRead for bad arguments', async () => {
  const dir = tempDirs.disk;
  const plain = writePattern(path.join(dir, 'plain'), 10);
  for (const bad of [path.join(dir, 'missing'), path.join(plain, 'below'), Buffer.from(path.join(dir, 'missing-buffer')),
    new URL(`file://${path.join(dir, 'missing-url')}`)]) {
    const ours = errorFacts(thrownBy(() => explain(bad)));
    const theirs = errorFacts(thrownBy(() => fs.statSync(bad)));
    assert.deepEqual(ours, theirs);
  }
  assert.deepEqual(errorFacts(thrownBy(() => explain(987654))), errorFacts(thrownBy(() => fs.fstatSync(987654))));
  const invalid = [[42n], [{}], ['a\u0000b'], [-1], [plain, { strategy: 'fastest' }], [plain, { flag: 'q' }], [plain, 7]];
  for (const args of invalid) {
    const ours = errorFacts(thrownBy(() => explain(...args)));
    const theirs = errorFacts(await smartRead(...args).then(() => assert.fail('smartRead resolved'), (e) => e));
    assert.deepEqual(ours, theirs, `explain(${args.map(String).join(', ')})`);
  }
});

test('with io_uring turned off, auto explains the thread pool and why; a forced uring throws', async (t) => {
  if (!native) {
    t.skip('the thread-pool rung of auto needs the addon');
    return;
  }
  const file = writePattern(path.join(tempDirs.disk, 'no-uring'), 1 * MiB);
  const script = `const { explain, setTuning } = require('smartread');
    setTuning({ fastPathBudgetUs: 1 });
    const auto = explain(${JSON.stringify(file)});
    let forced; try { explain(${JSON.stringify(file)}, { strategy: 'uring' }); } catch (e) { forced = e.code; }
    console.log(JSON.stringify({ auto, forced }));`;
  const run = await runToEnd(process.execPath, ['-e', script], { env: { SMARTREAD_IO_URING: '0' } });
  assert.equal(run.code, 0, run.stderr);
  const { auto, forced } = JSON.parse(run.stdout);
  assert.equal(auto.strategy, 'threadpool');
  assert.match(auto.reason, /io_uring unavailable: io_uring is turned off \(SMARTREAD_IO_URING=0\)/);
  assert.equal(forced, 'ERR_SMARTREAD_STRATEGY_UNAVAILABLE');
});

test('explain is exported by the ES module entry too', async () => {
  const esm = await import('smartread');
  assert.equal(esm.explain, explain);
});

// ---------------------------------------------------------------------------------------------
// The sysfs walk, on a made-up /sys: partitions, stacked devices, drivers.

function fakeSysfs() {
  const root = makeTempDir(tempDirs.disk, 'fake-sys-');
  const disk = (rel, { dev, rotational, driver }) => {
    const dir = path.join(root, 'devices', rel);
    fs.mkdirSync(path.join(dir, 'queue'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'dev'), `${dev}\n`);
    fs.writeFileSync(path.join(dir, 'queue', 'rotational'), `${rotational}\n`);
    if (driver) {
      fs.mkdirSync(path.join(root, 'bus', driver), { recursive: true });
      fs.mkdirSync(path.join(dir, 'device'));
      fs.symlinkSync(path.join(root, 'bus', driver), path.join(dir, 'device', 'driver'));
    }
    return dir;
  };
  const partition = (diskDir, name, dev, number) => {
    const dir = path.join(diskDir, name);
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'dev'), `${dev}\n`);
    fs.writeFileSync(path.join(dir, 'partition'), `${number}\n`);
    return dir;
  };
  const link = (majMin, dir) => {
    fs.mkdirSync(path.join(root, 'dev', 'block'), { recursive: true });
    fs.symlinkSync(dir, path.join(root, 'dev', 'block', majMin));
  };
  const stack = (name, dev, parts) => {
    const dir = disk(`virtual/block/${name}`, { dev, rotational: 0 });
    fs.mkdirSync(path.join(dir, 'slaves'));
    for (const p of parts) fs.symlinkSync(p, path.join(dir, 'slaves', path.basename(p)));
    return dir;
  };
  const sda = disk('pci0000:00/ata1/block/sda', { dev: '8:0', rotational: 1 });
  const sda1 = partition(sda, 'sda1', '8:1', 1);
  const sdb = disk('pci0000:00/ata2/block/sdb', { dev: '8:16', rotational: 0 });
  const sdc = disk('pci0000:00/virtio3/host0/block/sdc', { dev: '8:32', rotational: 1 });
  const nvme = disk('pci0000:00/nvme/nvme0/nvme0n1', { dev: '259:0', rotational: 0 });
  const nvmeP1 = partition(nvme, 'nvme0n1p1', '259:1', 1);
  const ram = disk('virtual/block/ram0', { dev: '1:0', rotational: 0, driver: 'brd' });
  const xen = disk('vbd-51712/block/xvda', { dev: '202:0', rotational: 0 });
  link('8:1', sda1);
  link('8:16', sdb);
  link('8:32', sdc);
  link('259:1', nvmeP1);
  link('1:0', ram);
  link('202:0', xen);
  link('253:0', stack('dm-0', '253:0', [nvmeP1]));
  link('253:1', stack('dm-1', '253:1', [sda1, nvmeP1]));
  link('9:0', stack('md0', '9:0', [sdb, nvme]));
  return root;
}

test('the sysfs walk: partitions to disks, dm and md to their parents, kinds by name, driver and rotation', () => {
  const sys = fakeSysfs();
  const noFile = () => assert.fail('no loop device here');
  const at = (majMin) => describeBlockDevice(majMin, sys, noFile);
  assert.deepEqual(at('8:1'), { dev: '8:0', block: 'sda', kind: 'hdd', rotational: true, partition: 'sda1' });
  assert.deepEqual(at('8:16'), { dev: '8:16', block: 'sdb', kind: 'ssd', rotational: false });
  assert.equal(at('8:32').kind, 'virtual', 'a SCSI disk behind virtio');
  assert.deepEqual(at('259:1'), { dev: '259:0', block: 'nvme0n1', kind: 'nvme', rotational: false, partition: 'nvme0n1p1' });
  assert.equal(at('1:0').kind, 'ram');
  assert.equal(at('202:0').kind, 'virtual');
  const dm0 = at('253:0');
  assert.equal(dm0.kind, 'nvme', 'a stack over one kind is that kind');
  assert.deepEqual(dm0.parents.map((p) => p.block), ['nvme0n1']);
  const dm1 = at('253:1');
  assert.equal(dm1.kind, 'hdd', 'a disk that spins sets the pace of a mixed stack');
  assert.deepEqual(dm1.parents.map((p) => `${p.block}/${p.partition}`).sort(), ['nvme0n1/nvme0n1p1', 'sda/sda1']);
  const md0 = at('9:0');
  assert.equal(md0.kind, 'ssd', 'solid state and nvme together are solid state');
  assert.deepEqual(md0.parents.map((p) => p.kind).sort(), ['nvme', 'ssd']);
  assert.equal(at('7:99'), undefined, 'no sysfs entry');
});

// ---------------------------------------------------------------------------------------------
// Real devices, made for the test (root only).

// Runs a command; its stderr in the error when it fails.
function run(command, args) {
  return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

// Why a device test cannot run here, or null.
function deviceTestBlocker(tools) {
  if (!isRoot) return 'needs root (losetup, mount)';
  for (const tool of tools) if (!hasCommand(tool)) return `${tool} is not installed`;
  return null;
}

test('a loop device: kind loop, its backing file, and the device that file is on', (t) => {
  if (skipOffLinux(t, 'a loop device named by sysfs')) return;
  const blocker = deviceTestBlocker(['mkfs.ext4', 'losetup', 'mount', 'umount']);
  if (blocker !== null) {
    t.skip(blocker);
    return;
  }
  const dir = makeTempDir(tempDirs.disk, 'loop-');
  const image = path.join(dir, 'image');
  const mnt = path.join(dir, 'mnt');
  fs.mkdirSync(mnt);
  fs.writeFileSync(image, '');
  fs.truncateSync(image, 8 * MiB);
  run('mkfs.ext4', ['-q', '-F', image]);
  let loop;
  try {
    loop = run('losetup', ['-f', '--show', image]);
  } catch (err) {
    t.skip(`losetup could not attach a loop device: ${err.stderr || err.message}`);
    return;
  }
  let mounted = false;
  t.after(() => {
    if (mounted) run('umount', [mnt]);
    run('losetup', ['-d', loop]);
  });
  run('mount', [loop, mnt]);
  mounted = true;
  const file = writePattern(path.join(mnt, 'file'), 64 * KiB);
  const { device } = explain(file);
  assert.equal(device.filesystem, 'ext4');
  assert.equal(device.kind, 'loop');
  assert.equal(device.block, path.basename(loop));
  assert.equal(device.dev, devOf(file));
  assert.equal(device.backingFile, image);
  assert.equal(device.backing.dev, devOf(image));
  assert.equal(device.backing.filesystem, explain(image).device.filesystem);
  assert.equal(device.backing.kind, explain(image).device.kind);
});

test('a zram device: kind zram', (t) => {
  if (skipOffLinux(t, 'a zram device named by sysfs')) return;
  const blocker = deviceTestBlocker(['mkfs.ext4', 'mount', 'umount']);
  if (blocker !== null) {
    t.skip(blocker);
    return;
  }
  if (!fs.existsSync('/sys/class/zram-control/hot_add')) {
    try {
      run('modprobe', ['zram', 'num_devices=0']);
    } catch (err) {
      t.skip(`this kernel has no zram (modprobe zram: ${(err.stderr || err.message).trim()})`);
      return;
    }
  }
  if (!fs.existsSync('/sys/class/zram-control/hot_add')) {
    t.skip('this kernel has no zram-control (zram hot_add)');
    return;
  }
  const id = fs.readFileSync('/sys/class/zram-control/hot_add', 'utf8').trim();
  const name = `zram${id}`;
  const mnt = makeTempDir(tempDirs.disk, 'zram-');
  let mounted = false;
  t.after(() => {
    if (mounted) run('umount', [mnt]);
    fs.writeFileSync('/sys/class/zram-control/hot_remove', id);
  });
  fs.writeFileSync(`/sys/block/${name}/disksize`, String(16 * MiB));
  run('mkfs.ext4', ['-q', `/dev/${name}`]);
  run('mount', [`/dev/${name}`, mnt]);
  mounted = true;
  const file = writePattern(path.join(mnt, 'file'), 4 * KiB);
  const { device } = explain(file);
  assert.equal(device.filesystem, 'ext4');
  assert.equal(device.kind, 'zram');
  assert.equal(device.block, name);
  assert.equal(device.dev, devOf(file));
});

after(() => {
  // Nothing mounted by this file outlives it: its after() hooks unmounted and detached.
  const mounts = fs.readFileSync('/proc/self/mountinfo', 'utf8');
  assert.ok(!mounts.includes(tempDirs.disk), 'a test mount is left behind');
});

test('explain refuses a root (it would look up another file) and opens nothing for it', () => {
  const before = openFdCount();
  for (const root of ['/etc', os.tmpdir()]) {
    const err = thrownBy(() => explain('hosts', { root }));
    assert.equal(err.code, 'ERR_INVALID_ARG_VALUE');
    assert.match(err.message, /options\.root/);
  }
  assert.equal(openFdCount(), before);
});
