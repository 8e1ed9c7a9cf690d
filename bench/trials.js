// The trials: which files are read, and in what state. A trial is
//   { name, shape, bytes, files, cold?, unavailable(target), setup(dir), beforeEach?(ctx, checkAll),
//     run(driver, ctx), teardown(ctx) }
// shape picks the drivers ('file': one path; 'files': an array of paths, see drivers.js).
// unavailable(target) returns why the trial cannot run on a target, or null. setup(dir) creates
// the trial's files in a target's scratch directory, brings them into the cache state the trial
// is about, and returns a context; run(driver, ctx) is the one operation that is timed (it calls
// the driver with the trial's path or paths and returns what it returned); bytes and files are
// what one operation delivers, for MB/s and files/s; teardown(ctx) deletes the files.
// A cold trial has beforeEach(ctx, checkAll), called before every operation, timed or not, and
// outside the timed region: it evicts the files from the page cache and checks that they are
// gone, every file when checkAll is set, else a sample.
'use strict';
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
const MANY_FILES_COUNT = 2000;
const MANY_FILES_SIZE = 4 * KiB;
// The cold single-file trial: big enough to be about the disk's bandwidth.
const COLD_FILE_SIZE = 128 * MiB;
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

function writeDeterministicFile(file, size, number = 0) {
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
    // The pages stay in the cache.
    fs.fsyncSync(fd);
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

const runsOnAnyTarget = () => null;

// Cold reads need a disk under the target: tmpfs and ramfs keep files in the page cache and
// nowhere else, so POSIX_FADV_DONTNEED has nothing to drop.
const memoryFileSystems = new Set(['tmpfs', 'ramfs']);
function coldUnavailable(target) {
  const control = pageCacheControllable();
  if (control !== true) return control;
  if (memoryFileSystems.has(target.fsType)) return `${target.fsType} keeps files only in memory: there is no cold read`;
  return null;
}

/**
 * Evicts every file from the page cache, then checks that nothing of them is left: all files
 * when checkAll is set, else COLD_CHECK_SAMPLE of them, a different sample each time. Throws
 * when a checked file still has cached bytes.
 */
function evictFiles(ctx, checkAll) {
  const { paths } = ctx;
  for (const file of paths) smartread.evictFromPageCache(file);
  const check = (file) => {
    const { size, cached } = smartread.pageCacheResidency(file);
    if (cached !== 0) throw new Error(`${file}: ${cached} of ${size} bytes still cached after evictFromPageCache`);
  };
  if (checkAll || paths.length <= COLD_CHECK_SAMPLE) {
    paths.forEach(check);
  } else {
    const stride = Math.floor(paths.length / COLD_CHECK_SAMPLE);
    for (let j = 0; j < COLD_CHECK_SAMPLE; j++) check(paths[j * stride + (ctx.evictions % stride)]);
  }
  ctx.evictions++;
}

/** One file of `size` bytes, in the page cache (warm) or evicted before every operation (cold). */
function singleFile(size, cold) {
  const label = sizeLabel(size);
  const name = `${cold ? 'cold' : 'warm'}-${label}`;
  return {
    name,
    shape: 'file',
    bytes: size,
    files: 1,
    cold,
    unavailable: cold ? coldUnavailable : runsOnAnyTarget,
    setup(dir) {
      const file = path.join(dir, `${name}.bin`);
      writeDeterministicFile(file, size);
      if (!cold) fs.readFileSync(file);
      return { path: file, paths: [file], evictions: 0 };
    },
    beforeEach: cold ? evictFiles : undefined,
    run: (driver, ctx) => driver.read(ctx.path),
    teardown(ctx) {
      fs.rmSync(ctx.path, { force: true });
    },
  };
}

/** `count` different files of `size` bytes each, all read in one operation; warm or cold as above. */
function manyFiles(count, size, cold) {
  const name = `${cold ? 'cold' : 'warm'}-${count}x${sizeLabel(size)}`;
  return {
    name,
    shape: 'files',
    bytes: count * size,
    files: count,
    cold,
    unavailable: cold ? coldUnavailable : runsOnAnyTarget,
    setup(dir) {
      const paths = writeManyFiles(path.join(dir, name), count, size);
      if (!cold) for (const file of paths) fs.readFileSync(file);
      return { dir: path.join(dir, name), paths, evictions: 0 };
    },
    beforeEach: cold ? evictFiles : undefined,
    run: (driver, ctx) => driver.read(ctx.paths),
    teardown(ctx) {
      fs.rmSync(ctx.dir, { recursive: true, force: true });
    },
  };
}

/**
 * The trials, in the order they run: a warm single file of each size in `sizes`, the warm many
 * files, and with `cold` the cold trials (a single 128 MiB file, the many files).
 */
function trialsFor(sizes, { cold }) {
  const trials = [
    ...sizes.map((size) => singleFile(size, false)),
    manyFiles(MANY_FILES_COUNT, MANY_FILES_SIZE, false),
  ];
  if (cold) trials.push(singleFile(COLD_FILE_SIZE, true), manyFiles(MANY_FILES_COUNT, MANY_FILES_SIZE, true));
  return trials;
}

module.exports = { defaultSizes, parseSize, sizeLabel, trialsFor };
