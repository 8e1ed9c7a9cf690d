// The trials: which files are read, and in what state. A trial is
//   { name, bytes, setup(dir), run(driver, ctx), teardown(ctx) }
// setup(dir) creates the trial's files in a target's scratch directory, brings them into the
// cache state the trial is about, and returns a context; run(driver, ctx) is the one operation
// that is timed (it calls the driver method the trial needs and returns what it returned);
// bytes is what one run delivers, for MB/s; teardown(ctx) deletes the files.
'use strict';
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;
const units = { k: KiB, m: MiB, g: GiB };

const defaultSizes = [4 * KiB, 64 * KiB, MiB, 16 * MiB, 128 * MiB];

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
// a read. The size is in the IV so that files of different sizes differ.
const contentKey = crypto.createHash('sha256').update('smartread bench content').digest();

function writeDeterministicFile(file, size) {
  const iv = Buffer.alloc(16);
  iv.writeBigUInt64BE(BigInt(size));
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
    // read on a disk target; the pages stay in the cache.
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** One file of `size` bytes whose pages are all in the page cache when timing starts. */
function warmSingleFile(size) {
  const label = sizeLabel(size);
  return {
    name: `warm-${label}`,
    bytes: size,
    setup(dir) {
      const file = path.join(dir, `warm-${label}.bin`);
      writeDeterministicFile(file, size);
      fs.readFileSync(file);
      return { path: file };
    },
    run: (driver, ctx) => driver.read(ctx.path),
    teardown(ctx) {
      fs.rmSync(ctx.path, { force: true });
    },
  };
}

/** The trials for these file sizes, in the order they run. */
function trialsFor(sizes) {
  return sizes.map(warmSingleFile);
}

module.exports = { defaultSizes, parseSize, sizeLabel, trialsFor };
