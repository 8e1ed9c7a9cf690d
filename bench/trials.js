// The trials: which files are read, and in what state. A trial is
//   { name, shape, bytes, files, cold?, consumeAll?, unavailable(target), setup(scratch, target),
//     beforeEach?(ctx, checkAll), run(driver, ctx), teardown(ctx) }
// shape picks the drivers ('file': one path; 'files': an array of paths, see drivers.js).
// unavailable(target) returns why the trial cannot run on a target, or null. setup(scratch,
// target) creates the trial's files in the target's scratch directory (the tree: once, beside
// it, see treeDir), brings them into the cache state the trial is about, and returns a context;
// run(driver, ctx) is the one operation that is timed (it calls the driver with the trial's path
// or paths and returns what it returned); bytes and files are what one operation delivers, for
// MB/s and files/s; teardown(ctx) deletes the files (not the tree). consumeAll: after each read
// every byte of the result is read (consume.js), not one per page.
// maxRounds and coldOperations, where set, cap the run's rounds and set a cold trial's operations
// per round (timing.js), for a trial whose operations take seconds.
// A cold trial has beforeEach(ctx, checkAll), called before every operation, timed or not, and
// outside the timed region: it evicts the files from the page cache and checks that they are
// gone, every file when checkAll is set, else a sample.
// On a mount target (mounts.js: overlay, FUSE) a trial writes its files beneath the mount (the
// overlay's lower layer, as a container image's files lie; the FUSE daemon's source) and the
// drivers read them through it: ctx.paths are the paths through the mount, ctx.written the same
// files as written. everyDriver: a cold trial that runs every driver of its shape, not only
// those marked cold, --full's included.
'use strict';
const { spawnSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { smartread, pageCacheControllable } = require('./smartread');

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;
const units = { k: KiB, m: MiB, g: GiB };

const defaultSizes = [4 * KiB, 64 * KiB, MiB, 16 * MiB, 128 * MiB];

// The many-files trials: the "2,000 files of 4 KiB".
const DEFAULT_MANY_FILES = 2000;
const MANY_FILES_SIZE = 4 * KiB;
// The tree: a node_modules-like folder of this many files (see treeSpec).
const DEFAULT_TREE_FILES = 3000;
// Single-file reads with this many in flight: one file read that many times at once, as a
// server reads a popular file for concurrent requests.
const IN_FLIGHT = 64;
// The largest file read with IN_FLIGHT in flight: 64 destinations of 1 MiB already hold 64 MiB.
const IN_FLIGHT_MAX_SIZE = MiB;
// Files whose eviction is checked before each operation of a cold trial (all of them before a
// round's first): checking 2,000 files costs ~20 ms, a sample well under 1 ms.
const COLD_CHECK_SAMPLE = 20;

/** '4k', '64K', '1m', '128MiB', '4096' → bytes; NaN when the text is not a size. */
function parseSize(text) {
  const m = /^(\d+)(?:([kmg])(?:i?b)?)?$/i.exec(text.trim());
  return m ? Number(m[1]) * (m[2] ? units[m[2].toLowerCase()] : 1) : NaN;
}

/** 4096 → '4k', 1048576 → '1m': the short form used in trial names. */
function sizeLabel(bytes) {
  for (const [suffix, unit] of [['g', GiB], ['m', MiB], ['k', KiB]]) {
    if (bytes % unit === 0) return `${bytes / unit}${suffix}`;
  }
  return String(bytes);
}

// The AES-256-CTR keystream under a fixed key: the same bytes on every run and machine, fast
// to make, and incompressible, so that no layer (zero pages, compression, dedup) can shortcut
// a read. The size and the file's number are in the IV so that every file differs.
const contentKey = crypto.createHash('sha256').update('smartread bench content').digest();

function writeDeterministicFile(file, size, number = 0, { flush = true } = {}) {
  const iv = Buffer.alloc(16);
  iv.writeBigUInt64BE(BigInt(size));
  iv.writeBigUInt64BE(BigInt(number), 8);
  const cipher = crypto.createCipheriv('aes-256-ctr', contentKey, iv);
  const zeros = Buffer.alloc(Math.min(size, MiB));
  const fd = fs.openSync(file, 'w', 0o644);
  try {
    for (let written = 0; written < size;) {
      const chunk = cipher.update(zeros.subarray(0, Math.min(zeros.length, size - written)));
      for (let off = 0; off < chunk.length;) off += fs.writeSync(fd, chunk, off);
      written += chunk.length;
    }
    // Written back now, so that the flusher does not write 128 MiB in the middle of a timed
    // read on a disk target, and so that the pages are clean: eviction drops only clean pages.
    // The pages stay in the cache. Many files are flushed at once instead (flushFileSystem).
    if (flush) fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** `count` files of `size` bytes, each different, in a new directory `dir`; their paths. */
function writeManyFiles(dir, count, size) {
  fs.mkdirSync(dir);
  const digits = String(count - 1).length;
  return Array.from({ length: count }, (_, i) => {
    const file = path.join(dir, `${String(i).padStart(digits, '0')}.bin`);
    writeDeterministicFile(file, size, i + 1);
    return file;
  });
}

/** Writes back every dirty page of the filesystem that holds `dir`: one syncfs for many files. */
function flushFileSystem(dir) {
  const result = spawnSync('sync', ['--file-system', dir], { stdio: ['ignore', 'ignore', 'pipe'] });
  if (result.error || result.status !== 0) {
    throw new Error(`sync --file-system ${dir} failed: ${result.error?.message ?? result.stderr.toString().trim()}`);
  }
}

// ---------------------------------------------------------------------------------------------
// The tree: a folder shaped like node_modules, made from a seeded PRNG so that it is the same
// files of the same sizes on every run and machine.

// mulberry32: a 32-bit PRNG with a one-word state; good enough to shuffle and to pick sizes.
function prng(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

const TREE_SEED = 0x5eed;
const TREE_FORMAT = 1;
// The size mix, by count: most files of a node_modules folder are small sources and manifests,
// some are bundles and maps, a few are binaries or large bundles. A size is drawn log-uniformly
// within its class (uniformly for the large ones).
const TREE_LARGE_SHARE = 0.002;
const TREE_MEDIUM_SHARE = 0.1;
const TREE_SUBDIRS = ['', 'lib', 'dist', 'src', 'lib/util', 'test', 'types'];
const TREE_FILES_PER_PACKAGE = 15;

/**
 * The tree of `count` files: [{ path (relative), size }] in the order they are read, the size
 * classes shuffled together. At least one file of each class when count allows.
 */
function treeSpec(count) {
  const random = prng(TREE_SEED ^ count);
  const logUniform = (lo, hi) => Math.round(Math.exp(Math.log(lo) + random() * (Math.log(hi) - Math.log(lo))));
  const large = Math.max(1, Math.round(count * TREE_LARGE_SHARE));
  const medium = Math.max(1, Math.round(count * TREE_MEDIUM_SHARE));
  const sizes = Array.from({ length: count }, (_, i) => {
    if (i < large) return MiB + Math.floor(random() * 3 * MiB);
    if (i < large + medium) return logUniform(16 * KiB, 200 * KiB);
    return logUniform(100, 8 * KiB);
  });
  for (let i = sizes.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [sizes[i], sizes[j]] = [sizes[j], sizes[i]];
  }
  const packages = Math.max(1, Math.ceil(count / TREE_FILES_PER_PACKAGE));
  return sizes.map((size, i) => {
    const pkg = `pkg-${String(Math.floor(random() * packages)).padStart(4, '0')}`;
    const sub = TREE_SUBDIRS[Math.floor(random() * TREE_SUBDIRS.length)];
    return { path: path.join('node_modules', pkg, sub, `file-${i}.js`), size };
  });
}

/**
 * Where the tree of `count` files is written on a target: made once, then reused by every run
 * (on a mount target, beneath the mount, which lasts one run).
 */
function treeDir(target, count) {
  return path.join(writeRoot(target), `smartread-bench-tree-v${TREE_FORMAT}-${count}`);
}

/**
 * The tree's paths, in read order, after making sure that it is there and whole: its manifest
 * lists exactly its files, each of its size. A missing or damaged tree is made again, in a
 * temporary directory renamed into place, so that an interrupted run leaves no half tree.
 */
function ensureTree(target, count) {
  const spec = treeSpec(count);
  const dir = treeDir(target, count);
  const manifestFile = path.join(dir, 'manifest.json');
  const expected = JSON.stringify(spec);
  const whole = () => {
    try {
      if (fs.readFileSync(manifestFile, 'utf8') !== expected) return false;
      return spec.every((f) => fs.statSync(path.join(dir, f.path)).size === f.size);
    } catch {
      return false;
    }
  };
  if (!whole()) {
    fs.rmSync(dir, { recursive: true, force: true });
    const building = fs.mkdtempSync(`${dir}.building-`);
    try {
      spec.forEach((f, i) => {
        const file = path.join(building, f.path);
        fs.mkdirSync(path.dirname(file), { recursive: true });
        writeDeterministicFile(file, f.size, i + 1, { flush: false });
      });
      fs.writeFileSync(path.join(building, 'manifest.json'), expected);
      flushFileSystem(building);
      fs.renameSync(building, dir);
    } catch (err) {
      fs.rmSync(building, { recursive: true, force: true });
      throw err;
    }
  }
  return spec.map((f) => path.join(dir, f.path));
}

const runsOnAnyTarget = () => null;

/** Where a trial writes its files on `target`: beneath its mount, when it is one (mounts.js). */
function writeRoot(target) {
  return target?.mount?.backingDir ?? target?.realpath;
}

/**
 * The files a trial wrote (`written`) as its drivers read them: the same paths, or on a mount
 * target the same names through the mount.
 */
function throughMount(target, written) {
  const backing = target?.mount?.backingDir;
  if (!backing) return written;
  return written.map((file) => path.join(target.realpath, path.relative(backing, file)));
}

/**
 * A trial's context for the files it wrote on `target`: { path (the first), paths (as the
 * drivers read them), written, mount (how to evict them, for a mount target: mounts.js's
 * evictThrough), evictions }, and `more`.
 */
function filesContext(target, written, more = {}) {
  const paths = throughMount(target, written);
  return { path: paths[0], paths, written, mount: target?.mount ?? null, evictions: 0, ...more };
}

// Cold reads need a disk under the target: tmpfs and ramfs keep files in the page cache and
// nowhere else, so POSIX_FADV_DONTNEED has nothing to drop.
const memoryFileSystems = new Set(['tmpfs', 'ramfs']);
// On a throttled target (an emulated HDD) a cold trial whose one operation would take longer
// than this is skipped, saying how long: a whole trial is some 20 such operations per driver.
const COLD_OPERATION_LIMIT_S = 3;

/** Why a cold trial of `files` files and `bytes` bytes per operation cannot run on a target, or null. */
function coldUnavailable(files, bytes) {
  return (target) => {
    const control = pageCacheControllable();
    if (control !== true) return control;
    if (memoryFileSystems.has(target.fsType)) return `${target.fsType} keeps files only in memory: there is no cold read`;
    // At least one request per file, and the bytes at the allowed bandwidth.
    const seconds = Math.max(target.readIops ? files / target.readIops : 0, target.readBps ? bytes / target.readBps : 0);
    if (seconds > COLD_OPERATION_LIMIT_S) {
      return `reads are throttled here (${target.readIops} IOPS, ${(target.readBps / 1e6).toFixed(0)} MB/s): one operation would take ≥${seconds.toFixed(0)} s; --files, --tree and --sizes make it smaller`;
    }
    return null;
  };
}

/**
 * The beforeEach of cold trials: evicts every file from the page cache, then checks that nothing
 * of them is left: all files when checkAll is set, else COLD_CHECK_SAMPLE of them, a different
 * sample each time. Throws when a checked file still has cached bytes. With `dropCaches` it
 * also drops the kernel's whole page cache, dentries and inodes (/proc/sys/vm/drop_caches, root
 * only), so that a read also looks its path and inode up from the disk, as after a reboot.
 *
 * On a mount target the pages that count are the written files' (the overlay's lower layer, the
 * FUSE daemon's source), and those are checked. An overlay's files are evicted through the mount,
 * as a reader would name them (overlayfs passes the advice on to the layer's file); should that
 * leave pages of the lower file, the written files are evicted from then on, and the context
 * says so (ctx.evictedWritten). A FUSE daemon's files are evicted where it reads them: these
 * daemons keep no page cache of their own across opens (every open drops it), so what a cold
 * read meets is their source's state, and an eviction through the mount would cost a request to
 * the daemon per file.
 */
function evictor(dropCaches) {
  return (ctx, checkAll) => {
    const written = ctx.written ?? ctx.paths;
    const throughMount = ctx.mount?.evictThrough === 'mount' && !ctx.evictedWritten;
    for (const file of throughMount ? ctx.paths : written) smartread.evictFromPageCache(file);
    if (dropCaches) fs.writeFileSync('/proc/sys/vm/drop_caches', '3');
    const check = (i) => {
      const file = written[i];
      let { size, cached } = smartread.pageCacheResidency(file);
      if (cached !== 0 && throughMount) {
        ctx.evictedWritten = `${cached} of ${size} bytes of ${file} were still cached after evictFromPageCache of ${ctx.paths[i]}`;
        for (const each of written) smartread.evictFromPageCache(each);
        ({ size, cached } = smartread.pageCacheResidency(file));
      }
      if (cached !== 0) throw new Error(`${file}: ${cached} of ${size} bytes still cached after evictFromPageCache`);
    };
    if (checkAll || written.length <= COLD_CHECK_SAMPLE) {
      written.forEach((_, i) => check(i));
    } else {
      const stride = Math.floor(written.length / COLD_CHECK_SAMPLE);
      for (let j = 0; j < COLD_CHECK_SAMPLE; j++) check(j * stride + (ctx.evictions % stride));
    }
    ctx.evictions++;
  };
}

const warmUp = (paths) => {
  for (const file of paths) fs.readFileSync(file);
};

const stateName = (cold) => (cold ? 'cold' : 'warm');
const consumeSuffix = (consumeAll) => (consumeAll ? '+consume' : '');

/** One file of `size` bytes, in the page cache (warm) or evicted before every operation (cold). */
function singleFile(size, { cold = false, consumeAll = false, dropCaches = false } = {}) {
  const name = `${stateName(cold)}-${sizeLabel(size)}${consumeSuffix(consumeAll)}`;
  return {
    name,
    shape: 'file',
    bytes: size,
    files: 1,
    cold,
    consumeAll,
    unavailable: cold ? coldUnavailable(1, size) : runsOnAnyTarget,
    setup(scratch, target) {
      const file = path.join(scratch, `${name}.bin`);
      writeDeterministicFile(file, size);
      const ctx = filesContext(target, [file]);
      if (!cold) warmUp(ctx.paths);
      return ctx;
    },
    beforeEach: cold ? evictor(dropCaches) : undefined,
    run: (driver, ctx) => driver.read(ctx.path),
    teardown(ctx) {
      fs.rmSync(ctx.written[0], { force: true });
    },
  };
}

/** One cached file of `size` bytes read IN_FLIGHT times in one operation, all at once where the driver can. */
function sameFileInFlight(size) {
  const name = `warm-${sizeLabel(size)}-${IN_FLIGHT}inflight`;
  return {
    name,
    shape: 'files',
    bytes: IN_FLIGHT * size,
    files: IN_FLIGHT,
    cold: false,
    consumeAll: false,
    unavailable: runsOnAnyTarget,
    setup(scratch, target) {
      const file = path.join(scratch, `${name}.bin`);
      writeDeterministicFile(file, size);
      const ctx = filesContext(target, Array(IN_FLIGHT).fill(file));
      warmUp([ctx.path]);
      return ctx;
    },
    run: (driver, ctx) => driver.read(ctx.paths),
    teardown(ctx) {
      fs.rmSync(ctx.written[0], { force: true });
    },
  };
}

/** `count` different files of `size` bytes each, all read in one operation; warm or cold as above. */
function manyFiles(count, size, {
  cold = false, consumeAll = false, dropCaches = false, everyDriver = false, maxRounds, coldOperations,
} = {}) {
  const name = `${stateName(cold)}-${count}x${sizeLabel(size)}${consumeSuffix(consumeAll)}`;
  return {
    name,
    shape: 'files',
    bytes: count * size,
    files: count,
    cold,
    consumeAll,
    everyDriver,
    maxRounds,
    coldOperations,
    unavailable: cold ? coldUnavailable(count, count * size) : runsOnAnyTarget,
    setup(scratch, target) {
      const dir = path.join(scratch, name);
      const ctx = filesContext(target, writeManyFiles(dir, count, size), { dir });
      if (!cold) warmUp(ctx.paths);
      return ctx;
    },
    beforeEach: cold ? evictor(dropCaches) : undefined,
    run: (driver, ctx) => driver.read(ctx.paths),
    teardown(ctx) {
      fs.rmSync(ctx.dir, { recursive: true, force: true });
    },
  };
}

/** The tree of `count` files (treeSpec), all read in one operation; warm or cold as above. */
function tree(count, { cold = false, consumeAll = false, dropCaches = false } = {}) {
  const spec = treeSpec(count);
  const bytes = spec.reduce((total, f) => total + f.size, 0);
  return {
    name: `${stateName(cold)}-tree${count}${consumeSuffix(consumeAll)}`,
    shape: 'files',
    bytes,
    files: count,
    cold,
    consumeAll,
    unavailable: cold ? coldUnavailable(count, bytes) : runsOnAnyTarget,
    setup(scratch, target) {
      const ctx = filesContext(target, ensureTree(target, count));
      if (!cold) warmUp(ctx.paths);
      return ctx;
    },
    beforeEach: cold ? evictor(dropCaches) : undefined,
    run: (driver, ctx) => driver.read(ctx.paths),
    // The tree stays for the next run.
    teardown() {},
  };
}

// ---------------------------------------------------------------------------------------------
// The corpus: a real tree that nobody here wrote (the repository's node_modules unless --corpus
// names another), read where it lies, so that its files keep the sizes, names, depth and place
// on the disk that whoever installed them gave them. It is a target of its own (index.js), not
// copied into each target directory: a copy would be files this bench wrote, laid out afresh.

const DEFAULT_CORPUS = path.join(__dirname, '..', 'node_modules');

const byName = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Every regular file under `dir`, depth first in name order (symbolic links are not followed,
 * and nothing but regular files is read): { paths, bytes }. Throws when dir cannot be listed.
 */
function listCorpus(dir) {
  const paths = [];
  let bytes = 0;
  const walk = (current) => {
    for (const name of fs.readdirSync(current).sort(byName)) {
      const full = path.join(current, name);
      const stat = fs.lstatSync(full);
      if (stat.isDirectory()) {
        walk(full);
      } else if (stat.isFile()) {
        paths.push(full);
        bytes += stat.size;
      }
    }
  };
  walk(dir);
  return { paths, bytes };
}

/** The corpus `list` (listCorpus) read whole in one operation; warm, or evicted before every operation. */
function corpus(list, { cold = false, dropCaches = false } = {}) {
  return {
    name: `${stateName(cold)}-corpus`,
    shape: 'files',
    bytes: list.bytes,
    files: list.paths.length,
    cold,
    consumeAll: false,
    unavailable: cold ? coldUnavailable(list.paths.length, list.bytes) : runsOnAnyTarget,
    setup() {
      if (!cold) warmUp(list.paths);
      return { paths: list.paths, evictions: 0 };
    },
    beforeEach: cold ? evictor(dropCaches) : undefined,
    run: (driver, ctx) => driver.read(ctx.paths),
    // The corpus is not ours to delete.
    teardown() {},
  };
}

/** The names of the corpus trials: warm-corpus, and cold-corpus with `cold`. */
function corpusTrialNames({ cold = false } = {}) {
  return ['warm-corpus', ...(cold ? ['cold-corpus'] : [])];
}

/** The corpus trials of `list` (listCorpus) whose names `keep` accepts. */
function corpusTrials(list, { cold = false, dropCaches = false, keep = () => true } = {}) {
  return [corpus(list), ...(cold ? [corpus(list, { cold: true, dropCaches })] : [])].filter((t) => keep(t.name));
}

// Random reads: RANDOM_READS reads of 4 KiB at page-aligned offsets spread over one large file,
// RANDOM_IN_FLIGHT at a time, in one operation (a database or an index lookup pattern).
const RANDOM_READ_SIZE = 4 * KiB;
const RANDOM_READS = 1024;
const RANDOM_IN_FLIGHT = 32;

/**
 * One file of `size` bytes read at RANDOM_READS random 4 KiB pages per operation, the same pages
 * for every driver (a seeded PRNG), RANDOM_IN_FLIGHT in flight; warm, or evicted before every
 * operation. Drivers of shape 'random' take the context ({ path, offsets, perDriver }) and
 * return one Buffer of the pages in order; what they open is kept in perDriver and closed by
 * teardown.
 */
function randomReads(size, { cold = false, dropCaches = false } = {}) {
  const name = `${stateName(cold)}-random4k-${sizeLabel(size)}-${RANDOM_IN_FLIGHT}inflight`;
  return {
    name,
    shape: 'random',
    bytes: RANDOM_READS * RANDOM_READ_SIZE,
    files: RANDOM_READS,
    cold,
    consumeAll: false,
    unavailable: cold ? coldUnavailable(RANDOM_READS, RANDOM_READS * RANDOM_READ_SIZE) : runsOnAnyTarget,
    setup(scratch, target) {
      const file = path.join(scratch, `${name}.bin`);
      writeDeterministicFile(file, size);
      const random = prng(0x4a11 ^ size);
      const pages = size / RANDOM_READ_SIZE;
      const offsets = Array.from({ length: RANDOM_READS }, () => Math.floor(random() * pages) * RANDOM_READ_SIZE);
      const ctx = filesContext(target, [file], { offsets, readSize: RANDOM_READ_SIZE, inFlight: RANDOM_IN_FLIGHT, perDriver: new Map() });
      if (!cold) warmUp(ctx.paths);
      return ctx;
    },
    beforeEach: cold ? evictor(dropCaches) : undefined,
    run: (driver, ctx) => driver.read(ctx),
    teardown(ctx) {
      for (const state of ctx.perDriver.values()) state.close();
      fs.rmSync(ctx.written[0], { force: true });
    },
  };
}

/**
 * The trials, in the order they run. Quick (the default): a warm single file of each size in
 * `sizes`, also consumed whole at 1 MiB; 64 in flight of each size up
 * to 64 KiB; the warm many files; the warm tree; random 4 KiB reads of a 64 MiB file (1 GiB
 * with `full`). `full` adds the consumed variant of every size, of the many files and of the
 * tree, and 64 in flight up to 1 MiB. `cold` adds the cold trials: the largest size, the many
 * files, the tree, the random reads.
 */
function trialsFor(sizes, {
  full = false, cold = false, dropCaches = false, manyFiles: manyCount = DEFAULT_MANY_FILES, treeFiles = DEFAULT_TREE_FILES,
} = {}) {
  const trials = [];
  for (const size of sizes) {
    trials.push(singleFile(size));
    if (full || size === MiB) trials.push(singleFile(size, { consumeAll: true }));
  }
  for (const size of sizes) {
    if (size <= (full ? IN_FLIGHT_MAX_SIZE : 64 * KiB)) trials.push(sameFileInFlight(size));
  }
  trials.push(manyFiles(manyCount, MANY_FILES_SIZE));
  if (full) trials.push(manyFiles(manyCount, MANY_FILES_SIZE, { consumeAll: true }));
  trials.push(tree(treeFiles));
  if (full) trials.push(tree(treeFiles, { consumeAll: true }));
  trials.push(randomReads(full ? GiB : 64 * MiB));
  if (cold) {
    trials.push(
      singleFile(Math.max(...sizes), { cold: true, dropCaches }),
      manyFiles(manyCount, MANY_FILES_SIZE, { cold: true, dropCaches }),
      tree(treeFiles, { cold: true, dropCaches }),
      randomReads(full ? GiB : 64 * MiB, { cold: true, dropCaches }),
    );
  }
  return trials;
}

// The cold single files read on an overlay (the run's sizes up to this), for the loop's stall
// where every read misses the fast path (overlayfs refuses RWF_NOWAIT): whatever auto does there
// must not wait for the disk on the JS thread.
const OVERLAY_COLD_MAX_SIZE = MiB;
// On fuse-latency, where each request waits (a millisecond by default): the warm files of up to
// this size, and the cold many files with every driver; in the quick run, where a sync loop over
// 2,000 files takes ~5 s an operation and the nine drivers take ~10 min at the run's 4 rounds of
// 3, in 2 rounds of 2 operations (the delay sets the pace: rounds agree within a few percent).
const LATENCY_MAX_SIZE = MiB;
const LATENCY_QUICK = { maxRounds: 2, coldOperations: 2 };

/**
 * The trials of a mount target of `kind` (mounts.js), given the trials every target runs
 * (`common`, trialsFor's): { trials, skipped: [{ trial, reason }] }. overlay: every common trial,
 * and cold single files of the run's `sizes` up to OVERLAY_COLD_MAX_SIZE. fuse (bindfs): every
 * common trial.
 * fuse-latency: the warm single files of up to LATENCY_MAX_SIZE, read as they are elsewhere, and
 * the cold many files with every driver of their shape (everyDriver), including the --full ones
 * (smartRead auto ×64, readMany auto ×256), fewer rounds unless `full` (LATENCY_QUICK); the
 * rest would take minutes each at a request's delay and are skipped, with the reason. `keep(name)`
 * is --filter.
 */
function trialsForMount(kind, common, {
  sizes = defaultSizes, full = false, delayMs, manyFiles: manyCount = DEFAULT_MANY_FILES, dropCaches = false, keep = () => true,
} = {}) {
  if (kind === 'overlay') {
    const extra = sizes.filter((size) => size <= OVERLAY_COLD_MAX_SIZE).map((size) => singleFile(size, { cold: true, dropCaches }))
      .filter((t) => keep(t.name) && !common.some((c) => c.name === t.name));
    return { trials: [...common, ...extra], skipped: [] };
  }
  if (kind !== 'fuse-latency') return { trials: common, skipped: [] };
  const cold = manyFiles(manyCount, MANY_FILES_SIZE, { cold: true, dropCaches, everyDriver: true, ...(full ? {} : LATENCY_QUICK) });
  const runs = common.filter((t) => !t.cold && t.shape === 'file' && !t.consumeAll && t.bytes <= LATENCY_MAX_SIZE);
  const reason = `each request to this filesystem waits ${delayMs} ms: it runs the warm single files of up to `
    + `${sizeLabel(LATENCY_MAX_SIZE)} and ${cold.name} only`;
  return {
    trials: [...runs, ...(keep(cold.name) ? [cold] : [])],
    skipped: common.filter((t) => !runs.includes(t) && t.name !== cold.name).map((trial) => ({ trial, reason })),
  };
}

module.exports = {
  trialsForMount,
  defaultSizes,
  parseSize,
  sizeLabel,
  trialsFor,
  treeSpec,
  treeDir,
  listCorpus,
  corpusTrials,
  corpusTrialNames,
  DEFAULT_MANY_FILES,
  DEFAULT_TREE_FILES,
  DEFAULT_CORPUS,
};
