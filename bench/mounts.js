// Filesystems that refuse non-blocking reads, mounted for a bench run (index.js --mounts,
// http.js --overlay) or a test file (test/mounts.js), and always taken down again:
//   overlay       the kernel's overlayfs, the filesystem of every container image: a lower layer
//                 (the image's, where the files lie), an upper layer and its work directory,
//                 all on the disk the set lives on;
//   fuse          bindfs (Debian's FUSE passthrough) over a directory on that disk;
//   fuse-latency  bench/fuse_latency.c over a directory on that disk: a FUSE passthrough that
//                 answers each request a fixed delay (1 ms) late, as shared storage does, every
//                 request a reader has in flight waiting at once, none holding a thread.
// A mount is { kind, dir, backingDir, ... }: files are written into backingDir (the overlay's
// lower layer, the FUSE daemon's source) and read through dir, where the same names appear.
//
// As scripts/devices/lib.sh does for the block devices, every step records how to undo itself,
// and teardown() runs those records newest first, each allowed to fail without stopping the
// others: a failure half-way, the end of the run, an error or a signal (the process's 'exit',
// and SIGINT, SIGTERM, SIGHUP) leave no mount, no daemon and no directory. teardown() is
// synchronous so that it can run in 'exit'. A FUSE daemon is started in the foreground, in a
// session of its own (a Ctrl-C at the terminal reaches the bench, which unmounts in order, not
// the daemon), with the mount option auto_unmount and a parent-death signal. And a guard, a
// shell started with the set, waits for this process to end (the end of a pipe from it), then
// unmounts whatever is still mounted beneath the set and removes it: even a process killed
// outright (SIGKILL) leaves nothing behind.
// Root only; what this machine lacks is a reason, given by mountUnavailable().
'use strict';
const { spawn, spawnSync, execFile } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { promisify } = require('node:util');
const { cacheDir, compilerVersion } = require('./peers');
const { readMounts } = require('./targets');

const execFileAsync = promisify(execFile);

const MOUNT_KINDS = ['overlay', 'fuse', 'fuse-latency'];
// The fuse-latency daemon's delay, unless told otherwise.
const DEFAULT_FUSE_DELAY_MS = 1;
const FUSE_LATENCY_SOURCE = path.join(__dirname, 'fuse_latency.c');
const FUSE_LATENCY_FLAGS = ['-O2', '-std=gnu11', '-Wall', '-Wextra', '-pthread'];
// What /proc/mounts calls each kind's filesystem (bindfs and our daemon are given a subtype).
const FS_TYPES = { overlay: 'overlay', fuse: 'fuse.bindfs', 'fuse-latency': 'fuse.smartread-latency' };
const MOUNT_TIMEOUT_MS = 10000;
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'];
const DAEMON_EXIT_MS = 3000;

/** How a kind is named in the reports. */
function mountLabel(kind, delayMs = DEFAULT_FUSE_DELAY_MS) {
  if (kind === 'fuse') return 'fuse (bindfs)';
  if (kind === 'fuse-latency') return `fuse-latency (${delayMs} ms a request)`;
  return kind;
}

function kernelFilesystems() {
  try {
    return new Set(fs.readFileSync('/proc/filesystems', 'utf8').split('\n').map((line) => line.split('\t').pop().trim()).filter(Boolean));
  } catch {
    return new Set();
  }
}

/** Whether the kernel has filesystem `type`, after asking modprobe to load it where it is a module. */
function kernelHas(type) {
  if (kernelFilesystems().has(type)) return true;
  spawnSync('modprobe', [type], { stdio: 'ignore' });
  return kernelFilesystems().has(type);
}

function onPath(command) {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

/**
 * Why this process cannot mount `kind`, in one line, or null. The fuse-latency daemon's build is
 * checked by buildFuseLatency().
 */
function mountUnavailable(kind) {
  if (!MOUNT_KINDS.includes(kind)) return `unknown kind of mount ${kind}: one of ${MOUNT_KINDS.join(', ')}`;
  if (process.getuid() !== 0) return `mounting needs root (this process runs as uid ${process.getuid()})`;
  if (kind === 'overlay') return kernelHas('overlay') ? null : 'this kernel has no overlayfs (no overlay in /proc/filesystems)';
  if (!fs.existsSync('/dev/fuse')) return 'no /dev/fuse';
  if (!kernelHas('fuse')) return 'this kernel has no FUSE (no fuse in /proc/filesystems)';
  if (kind === 'fuse' && !onPath('bindfs')) return 'bindfs is not installed (Debian: apt-get install bindfs)';
  return null;
}

/**
 * The fuse-latency daemon: fuse_latency.c compiled with $CC (else cc) and pkg-config's fuse3
 * flags into the bench's cache (peers.js cacheDir()), named by a hash of the source, the
 * compiler and the flags, as the C driver is; never at the package's install. Returns
 * { binary, compiler, compilerVersion, flags, compiledMs }; throws, with the reason, when
 * libfuse3's headers or a compiler are missing.
 */
async function buildFuseLatency(cache = cacheDir()) {
  let cflags;
  let libs;
  try {
    [cflags, libs] = (await Promise.all(['--cflags', '--libs'].map((o) => execFileAsync('pkg-config', [o, 'fuse3']))))
      .map(({ stdout }) => stdout.trim().split(/\s+/).filter(Boolean));
  } catch (err) {
    throw new Error(err.code === 'ENOENT' ? 'pkg-config is not installed, which finds libfuse3'
      : 'libfuse3\'s headers are missing (pkg-config finds no fuse3; Debian: apt-get install libfuse3-dev)');
  }
  const compiler = process.env.CC || 'cc';
  const version = await compilerVersion(compiler);
  const flags = [...FUSE_LATENCY_FLAGS, ...cflags];
  const source = fs.readFileSync(FUSE_LATENCY_SOURCE);
  const hash = crypto.createHash('sha1').update(source).update(`\0${compiler}\0${version}\0${flags.join(' ')}\0${libs.join(' ')}`).digest('hex').slice(0, 12);
  const dir = path.join(cache, 'fuse-latency');
  const binary = path.join(dir, `fuse_latency-${hash}`);
  const described = { binary, compiler, compilerVersion: version, flags: [...flags, ...libs].join(' ') };
  if (fs.existsSync(binary)) return { ...described, compiledMs: 0 };
  const started = performance.now();
  fs.mkdirSync(dir, { recursive: true });
  const building = `${binary}.${process.pid}.tmp`;
  try {
    await execFileAsync(compiler, [...flags, '-o', building, FUSE_LATENCY_SOURCE, ...libs]);
    fs.renameSync(building, binary);
  } catch (err) {
    throw new Error(`${compiler} could not compile ${path.basename(FUSE_LATENCY_SOURCE)}: ${(err.stderr || err.message).trim().split('\n').slice(0, 3).join(' / ')}`);
  } finally {
    fs.rmSync(building, { force: true });
  }
  return { ...described, compiledMs: performance.now() - started };
}

// The guard (see the top of this file): its stdin is a pipe from this process, which it reads
// until this process ends, however it ends; then it detaches every mount beneath the set, the
// deepest first, and removes the set's directory once nothing is mounted there.
const GUARD_SCRIPT = `
  base=$1
  read -r _
  awk -v base="$base" '$2 == base || index($2, base "/") == 1 { print length($2), $2 }' /proc/self/mounts |
    sort -rn | while read -r _ dir; do umount --lazy "$dir"; done
  awk -v base="$base" '$2 == base || index($2, base "/") == 1 { found = 1 } END { exit found }' /proc/self/mounts &&
    rm -rf -- "$base"`;

const sleepSync = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** Whether process `pid` still runs (a zombie, ended but not yet reaped, does not). */
function running(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** The mounts at or beneath `dir`. */
function mountsUnder(dir) {
  return readMounts().filter((m) => m.mountPoint === dir || m.mountPoint.startsWith(`${dir}/`));
}

function umount(dir) {
  const result = spawnSync('umount', [dir], { encoding: 'utf8' });
  if (result.status === 0) return null;
  return (result.error?.message ?? result.stderr).trim() || `umount exited with ${result.status}`;
}

/**
 * A set of mounts beneath one new directory of `parent`, where their files lie (a directory on a
 * disk, for a cold read to be a read of the disk). Each mount method returns (or resolves with)
 * the mount; teardown() undoes everything. `log(line)` hears what teardown had to do beyond the
 * plan (a busy mount detached lazily, a daemon signalled).
 */
class MountSet {
  constructor(parent, { log = (line) => process.stderr.write(`mounts: ${line}\n`) } = {}) {
    this.log = log;
    this.steps = [];
    this.base = fs.mkdtempSync(path.join(fs.realpathSync(parent), 'smartread-mounts-'));
    this.later('remove the directories', () => this.removeBase());
    this.onExit = () => this.teardown();
    process.on('exit', this.onExit);
    // A signal that would end the process at once (no other listener: a script, a test file
    // that its runner times out) first takes the set down, then ends it as the signal would.
    this.onSignal = (signal) => {
      this.teardown();
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    };
    for (const signal of SIGNALS) process.once(signal, this.onSignal);
    this.startGuard();
  }

  /** Starts the guard (GUARD_SCRIPT); teardown() stops it once it has done the guard's work itself. */
  startGuard() {
    const guard = spawn('sh', ['-c', GUARD_SCRIPT, 'smartread-mounts-guard', this.base], { stdio: ['pipe', 'ignore', 'ignore'], detached: true });
    guard.on('error', (err) => this.log(`the guard did not start (a killed process would leave its mounts): ${err.message}`));
    // Neither the guard nor its pipe keeps this process alive.
    guard.unref();
    guard.stdin.on('error', () => {});
    guard.stdin.unref();
    this.later('stop the guard', () => {
      if (guard.exitCode === null && guard.signalCode === null) guard.kill('SIGKILL');
    });
  }

  /** Records how to undo the step just taken: `undo` runs at teardown, newest first. */
  later(what, undo) {
    this.steps.push({ what, undo });
  }

  dirs(name, ...names) {
    const root = path.join(this.base, name);
    fs.mkdirSync(root);
    return names.map((n) => {
      const dir = path.join(root, n);
      fs.mkdirSync(dir);
      return dir;
    });
  }

  /** The kernel's overlayfs: { kind, dir (the merged view), backingDir (the lower layer), upperDir, workDir }. */
  overlay(name = 'overlay') {
    // overlayfs's options separate layers with ':' and options with ','.
    if (/[,:\\]/.test(this.base)) throw new Error(`overlayfs cannot be given a layer whose path holds ',', ':' or '\\': ${this.base}`);
    const [lower, upper, work, merged] = this.dirs(name, 'lower', 'upper', 'work', 'merged');
    const result = spawnSync('mount', ['-t', 'overlay', 'overlay', '-o', `lowerdir=${lower},upperdir=${upper},workdir=${work}`, merged], { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`mount -t overlay failed: ${(result.error?.message ?? result.stderr).trim()}`);
    this.later(`umount ${merged}`, () => this.unmount(merged));
    return { kind: 'overlay', fsType: FS_TYPES.overlay, dir: merged, backingDir: lower, upperDir: upper, workDir: work };
  }

  /** bindfs over a new directory: { kind, dir, backingDir, pid }. */
  bindfs(name = 'fuse') {
    const [source, mnt] = this.dirs(name, 'source', 'mnt');
    // setpriv gives bindfs (not ours to change) the parent-death signal that our daemon sets itself.
    const pdeathsig = onPath('setpriv') ? ['setpriv', '--pdeathsig', 'TERM'] : [];
    const command = [...pdeathsig, 'bindfs', '-f', '-o', `auto_unmount,subtype=bindfs,fsname=${source}`, source, mnt];
    return this.fuseDaemon('fuse', command, source, mnt);
  }

  /**
   * bench/fuse_latency.c (built by buildFuseLatency) over a new directory: { kind, dir, backingDir,
   * pid, delayMs, opensLog }; with opensLog, the daemon logs there the thread of each open,
   * statfs, stat and read (for the tests); with cacheMs, the kernel keeps names and attributes that
   * long instead of a day (0: every lookup reaches the daemon).
   */
  async fuseLatency({ binary, delayMs = DEFAULT_FUSE_DELAY_MS, opensLog = null, cacheMs = null }, name = 'fuse-latency') {
    const [source, mnt] = this.dirs(name, 'source', 'mnt');
    const args = [binary, source, mnt, '-f', `--delay-us=${Math.round(delayMs * 1000)}`,
      ...(opensLog ? [`--opens-log=${opensLog}`] : []), ...(cacheMs !== null ? [`--cache-ms=${cacheMs}`] : [])];
    const mount = await this.fuseDaemon('fuse-latency', args, source, mnt);
    return { ...mount, delayMs, opensLog };
  }

  /** Starts a FUSE daemon in the foreground and resolves once its mount is there. */
  async fuseDaemon(kind, [command, ...args], source, mnt) {
    const logFile = path.join(path.dirname(mnt), 'daemon.log');
    const logFd = fs.openSync(logFile, 'w');
    let child;
    try {
      child = spawn(command, args, { stdio: ['ignore', 'ignore', logFd], detached: true });
    } finally {
      fs.closeSync(logFd);
    }
    const daemonLog = () => fs.readFileSync(logFile, 'utf8').trim().split('\n').filter(Boolean).slice(-3).join(' / ');
    let exited = null;
    child.on('exit', (code, signal) => { exited = signal ? `signal ${signal}` : `exit code ${code}`; });
    const spawned = await new Promise((resolve) => {
      child.once('spawn', () => resolve(null));
      child.once('error', (err) => resolve(err));
    });
    if (spawned) throw new Error(`${command} did not start: ${spawned.message}`);
    // The daemon does not keep this process alive: one that ends without teardown() (a test
    // file whose hooks failed) still ends, and 'exit' takes the mount down.
    child.unref();
    this.later(`stop ${command} (pid ${child.pid})`, () => this.stopDaemon(child, command));
    this.later(`umount ${mnt}`, () => this.unmount(mnt));
    const deadline = Date.now() + MOUNT_TIMEOUT_MS;
    while (!readMounts().some((m) => m.mountPoint === mnt && m.fsType === FS_TYPES[kind])) {
      if (exited) throw new Error(`${path.basename(command)} ended (${exited}) before mounting: ${daemonLog() || 'it said nothing'}`);
      if (Date.now() > deadline) throw new Error(`${path.basename(command)} had not mounted ${mnt} after ${MOUNT_TIMEOUT_MS / 1000} s: ${daemonLog() || 'it said nothing'}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return { kind, fsType: FS_TYPES[kind], dir: mnt, backingDir: source, pid: child.pid };
  }

  /** Unmounts `dir`; a mount still busy (a file open on it in another process) is detached lazily. */
  unmount(dir) {
    if (!mountsUnder(dir).some((m) => m.mountPoint === dir)) return;
    const why = umount(dir);
    if (why === null) return;
    const lazy = spawnSync('umount', ['--lazy', dir], { encoding: 'utf8' });
    if (lazy.status !== 0) throw new Error(`umount ${dir}: ${why}; umount --lazy: ${(lazy.error?.message ?? lazy.stderr).trim()}`);
    this.log(`umount ${dir}: ${why}; detached it lazily`);
  }

  /** Ends a daemon whose mount is gone (it ends by itself then), SIGTERM and then SIGKILL if it lingers. */
  stopDaemon(child, command) {
    for (const [signal, ms] of [[null, DAEMON_EXIT_MS / 3], ['SIGTERM', DAEMON_EXIT_MS], ['SIGKILL', DAEMON_EXIT_MS]]) {
      if (signal) {
        this.log(`${path.basename(command)} (pid ${child.pid}) still runs: ${signal}`);
        child.kill(signal);
      }
      for (const deadline = Date.now() + ms; running(child.pid) && Date.now() < deadline;) sleepSync(5);
      if (!running(child.pid)) return;
    }
    throw new Error(`${path.basename(command)} (pid ${child.pid}) did not end after SIGKILL`);
  }

  /** Removes the set's directory, unless something is still mounted beneath it. */
  removeBase() {
    const left = mountsUnder(this.base);
    if (left.length > 0) throw new Error(`still mounted, so ${this.base} is kept: ${left.map((m) => m.mountPoint).join(', ')}`);
    fs.rmSync(this.base, { recursive: true, force: true });
  }

  /** Undoes every step, newest first; safe to call again. Returns the steps that failed, each with why. */
  teardown() {
    process.removeListener('exit', this.onExit);
    for (const signal of SIGNALS) process.removeListener(signal, this.onSignal);
    const failed = [];
    while (this.steps.length > 0) {
      const { what, undo } = this.steps.pop();
      try {
        undo();
      } catch (err) {
        failed.push(`${what}: ${err.message}`);
        this.log(`teardown step failed (continuing): ${what}: ${err.message}`);
      }
    }
    return failed;
  }
}

// The daemon check's reads at once: as many as the bench's ×64 drivers keep in flight.
const CHECK_FILES = 64;

// Run by a child node whose thread pool has more threads than reads, so that the reader does not
// serialize them as a pool of 4 would: one read, then CHECK_FILES at once, each timed, after the
// pool's threads have started (an fstat each).
const CHECK_SCRIPT = `
  const fs = require('node:fs');
  const [first, ...rest] = JSON.parse(process.argv[1]);
  (async () => {
    await Promise.all(rest.map(() => fs.promises.stat('.')));
    let t = performance.now();
    fs.readFileSync(first);
    const oneReadMs = performance.now() - t;
    t = performance.now();
    await Promise.all(rest.map((file) => fs.promises.readFile(file)));
    process.stdout.write(JSON.stringify({ oneReadMs, concurrentMs: performance.now() - t }));
  })();`;

/**
 * The direct check of a fuse-latency mount (from buildFuseLatency and MountSet.fuseLatency): one
 * cold read of a 4 KiB file through it takes at least the delay, and CHECK_FILES cold reads at
 * once take far less than CHECK_FILES delays (the daemon's answers wait together, not in turn).
 * The files are written into its source, their names looked up through the mount (as in the
 * bench's cold trials, where names stay cached: this kernel sends a directory's LOOKUPs one at
 * a time), their data evicted from the source (with smartread's evictFromPageCache, where the
 * addon is in use), then read through the mount by a child. Resolves with { oneReadMs,
 * concurrentMs, files, evicted }; figures to print, judged by whoever reads them.
 */
async function checkFuseLatency(mount) {
  const { smartread, pageCacheControllable } = require('./smartread');
  const dir = fs.mkdtempSync(path.join(mount.backingDir, 'latency-check-'));
  try {
    const written = Array.from({ length: CHECK_FILES + 1 }, (_, i) => {
      const file = path.join(dir, `${i}.bin`);
      fs.writeFileSync(file, crypto.randomBytes(4096), { flush: true });
      return file;
    });
    const through = written.map((file) => path.join(mount.dir, path.relative(mount.backingDir, file)));
    for (const file of through) fs.statSync(file);
    const evicted = pageCacheControllable() === true;
    if (evicted) for (const file of written) smartread.evictFromPageCache(file);
    const { stdout } = await execFileAsync(process.execPath, ['-e', CHECK_SCRIPT, JSON.stringify(through)], {
      env: { ...process.env, UV_THREADPOOL_SIZE: String(2 * CHECK_FILES) },
    });
    return { ...JSON.parse(stdout), files: CHECK_FILES, evicted };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

module.exports = {
  MOUNT_KINDS, DEFAULT_FUSE_DELAY_MS, FS_TYPES, MountSet, mountUnavailable, buildFuseLatency, checkFuseLatency, mountLabel, mountsUnder,
  running,
};
