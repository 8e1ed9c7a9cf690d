// The write bench's trials: what one operation writes, how it is set up and cleaned away
// (outside the timed region), and how its result is checked. Shared by bench/write.js and the
// peer runner (bench/write_peer_runner.js), so that Node's drivers and Bun's do the very same.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const KiB = 1024;
const MiB = 1024 * KiB;

// The trials: 2,000 files of 4 KiB into a fresh tree of 100 directories; 100,000
// nested paths of depth 7, each with its own top directory, in a fresh directory every
// operation; one 128 MiB file.
const DEFAULTS = { files: 2000, dirs: 100, fileSize: 4 * KiB, nested: 100000, depth: 7, large: 128 * MiB };

/** Bytes that tell their offset: byte i is (i * 7 + 3) % 251 (as test/helpers.js). */
function patternBytes(length) {
  const period = Buffer.from(Array.from({ length: 251 }, (_, i) => (i * 7 + 3) % 251));
  const out = Buffer.allocUnsafe(length);
  out.fill(period);
  return out;
}

const NESTED_LEVELS = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'];

/**
 * The trials for `sizes` (DEFAULTS overridden). Each: { name, unit ('files' | 'paths' | 'MB'),
 * perOperation (units one operation does), prepare(base) -> ctx (untimed; base does not exist
 * yet), clean(ctx) (untimed), verify(ctx) -> null | why the result is wrong }.
 */
function writeTrials(sizes = {}) {
  const s = { ...DEFAULTS, ...sizes };
  const fileData = patternBytes(s.fileSize);
  let largeData = null;
  const levels = NESTED_LEVELS.slice(0, s.depth - 1);
  return [
    {
      name: `${s.files}x${s.fileSize / KiB}k-tree${s.dirs}`,
      kind: 'tree',
      unit: 'files',
      perOperation: s.files,
      bytes: s.files * s.fileSize,
      // A fresh tree: its top directory does not exist yet either.
      prepare(base) {
        const entries = Array.from({ length: s.files }, (_, i) => ({ path: path.join(base, `d${i % s.dirs}`, `f${i}`), data: fileData }));
        return { base, entries };
      },
      clean(ctx) {
        fs.rmSync(ctx.base, { recursive: true, force: true });
      },
      verify(ctx) {
        for (const e of ctx.entries) {
          let bytes;
          try {
            bytes = fs.readFileSync(e.path);
          } catch (err) {
            return `${path.relative(ctx.base, e.path)}: ${err.code}`;
          }
          if (!bytes.equals(e.data)) return `${path.relative(ctx.base, e.path)}: ${bytes.length} bytes, not the data written`;
        }
        return null;
      },
    },
    {
      name: `${s.nested}-nested-depth${s.depth}`,
      kind: 'nested',
      unit: 'paths',
      perOperation: s.nested,
      bytes: 0,
      // A fresh directory, made here; every path has a top directory of its own in it.
      prepare(base) {
        fs.mkdirSync(base);
        const paths = Array.from({ length: s.nested }, (_, i) => path.join(base, `t${i}`, ...levels));
        return { base, paths };
      },
      clean(ctx) {
        fs.rmSync(ctx.base, { recursive: true, force: true });
      },
      verify(ctx) {
        const tops = fs.readdirSync(ctx.base).length;
        if (tops !== ctx.paths.length) return `${tops} top directories for ${ctx.paths.length} paths`;
        for (let i = 0; i < ctx.paths.length; i += Math.max(1, Math.floor(ctx.paths.length / 200))) {
          if (!fs.statSync(ctx.paths[i], { throwIfNoEntry: false })?.isDirectory()) return `${ctx.paths[i]} is not a directory`;
        }
        return null;
      },
    },
    {
      name: `${s.large / MiB}m-file`,
      kind: 'large',
      unit: 'MB',
      perOperation: s.large / 1e6,
      bytes: s.large,
      // A fresh name: the truncation of the last operation's file is no driver's cost.
      prepare(base) {
        largeData ??= patternBytes(s.large);
        fs.mkdirSync(base);
        return { base, file: path.join(base, 'large.bin'), data: largeData };
      },
      clean(ctx) {
        fs.rmSync(ctx.base, { recursive: true, force: true });
      },
      verify(ctx) {
        const bytes = fs.readFileSync(ctx.file);
        return bytes.equals(ctx.data) ? null : `${bytes.length} bytes, not the data written`;
      },
    },
  ];
}

module.exports = { DEFAULTS, writeTrials, patternBytes };
