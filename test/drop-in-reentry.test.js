// smartread never calls what it patched: with node:fs's readers replaced by smartread (naively,
// as a new user would, and by smartread/register), reads of a directory, a missing file, a FIFO
// and /proc files through every entry point settle as node:fs's own reads do. Before smartread
// captured node:fs's readers at load, the first failed read never settled: smartread asks
// fs.readFile once how this node names paths in read errors, and that read came back into
// smartread and waited on itself.
'use strict';
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const smartread = require('smartread');
const { checkNoFdLeak, useTempDirs, errorFacts, fifoWriterOnRelease, withinTime, setUpAsyncEngines, hasFifos } = require('./helpers');

setUpAsyncEngines();
checkNoFdLeak();
const tempDirs = useTempDirs();
const dir = tempDirs.tmpfs ?? tempDirs.disk;

// node:fs's own readers, taken before anything is patched: the reference for every outcome.
const node = { readFile: fs.readFile, readFileSync: fs.readFileSync, promisesReadFile: fs.promises.readFile };
const kSettleMs = 15000;

// /proc files whose bytes do not change between two reads by this process.
const procFiles = ['/proc/version', '/proc/self/cmdline', '/proc/sys/kernel/ostype'];
const fifoPayload = 'through the FIFO\n';

let missing;
let fifo;
before(() => {
  missing = path.join(dir, 'missing', 'file');
  fifo = path.join(dir, 'fifo');
  if (hasFifos) execFileSync('mkfifo', [fifo]);
});

// Every way to read a whole file (or part of one) through smartread, each as (path) => result;
// the asynchronous ones return promises. The fs ones call through the module object, so that
// they see what is patched. Those that read at a position are in `positional`.
const entryPoints = {
  'fs.readFileSync': (p) => fs.readFileSync(p),
  'fs.readFile': (p) => new Promise((resolve, reject) => fs.readFile(p, (err, data) => (err ? reject(err) : resolve(data)))),
  'fs.promises.readFile': (p) => fs.promises.readFile(p),
  smartReadSync: (p) => smartread.smartReadSync(p),
  'smartReadSync utf8': (p) => Buffer.from(smartread.smartReadSync(p, 'utf8')),
  'smartRead auto': (p) => smartread.smartRead(p),
  'smartRead sync': (p) => smartread.smartRead(p, { strategy: 'sync' }),
  'smartRead threadpool': (p) => smartread.smartRead(p, { strategy: 'threadpool' }),
  'smartRead uring': (p) => smartread.smartRead(p, { strategy: smartread.engineInfo().uring.available ? 'uring' : 'auto' }),
  'smartRead mmap': (p) => smartread.smartRead(p, { strategy: 'mmap' }),
  readMany: async (p) => {
    const [settled] = await smartread.readMany([p], { settle: true });
    if (settled.status === 'rejected') throw settled.reason;
    return settled.value;
  },
  // Confined reads need the addon (openat2): on the pure-JS engine they refuse before reading.
  ...(smartread.engineInfo().engine === 'native' ? {
    'createReader().smartRead': async (p) => {
      const reader = smartread.createReader({ root: path.dirname(p) });
      try {
        return await reader.smartRead(path.basename(p));
      } finally {
        reader.close();
      }
    },
    'createReader().smartReadSync': (p) => {
      const reader = smartread.createReader({ root: path.dirname(p) });
      try {
        return reader.smartReadSync(path.basename(p));
      } finally {
        reader.close();
      }
    },
  } : {}),
  openReader: async (p) => {
    const reader = await smartread.openReader(p);
    try {
      return await reader.read(0, 1 << 16);
    } finally {
      await reader.close();
    }
  },
  readIntoSync: (p) => {
    const chunk = Buffer.alloc(1 << 16);
    return chunk.subarray(0, smartread.readIntoSync(p, chunk));
  },
  readInto: async (p) => {
    const { bytesRead, buffer } = await smartread.readInto(p, Buffer.alloc(1 << 16));
    return buffer.subarray(0, bytesRead);
  },
};

const positional = new Set(['openReader', 'readIntoSync', 'readInto']);

// What node:fs's readFileSync says of the same file, as the entry point's result should be.
function reference(p) {
  try {
    return { bytes: node.readFileSync(p) };
  } catch (err) {
    return { code: err.code };
  }
}

// Runs `read(p)`: its outcome, or a failure when it does not settle in time.
async function outcomeOf(read, p, what) {
  try {
    const result = await withinTime(Promise.resolve().then(() => read(p)), kSettleMs, what);
    return { bytes: Buffer.from(result) };
  } catch (err) {
    if (/still pending after/.test(err.message)) throw err;
    return { code: err.code, facts: errorFacts(err) };
  }
}

function assertSameOutcome(actual, expected, what) {
  if (expected.bytes) {
    assert.ok(actual.bytes, `${what}: failed with ${JSON.stringify(actual.facts)}, node:fs read ${expected.bytes.length} bytes`);
    assert.ok(actual.bytes.equals(expected.bytes), `${what}: other bytes than node:fs's`);
  } else {
    assert.equal(actual.code, expected.code, `${what}: ${JSON.stringify(actual.facts ?? 'read bytes')}, node:fs failed with ${expected.code}`);
  }
}

// Every entry point over a directory, a missing file, /proc files and a FIFO (each read of the
// FIFO with a writer of its own, on another thread, as a synchronous read holds this one).
async function readEverythingEverywhere() {
  for (const [name, read] of Object.entries(entryPoints)) {
    for (const p of [dir, missing, ...procFiles]) {
      // A confined reader reads beneath its root: a directory is its own root, which it reads as '.'.
      assertSameOutcome(await outcomeOf(read, p, `${name}(${p})`), reference(p), `${name}(${p})`);
    }
    // A FIFO has no positions: the whole-file readers only.
    if (positional.has(name) || !hasFifos) continue;
    const writer = fifoWriterOnRelease(fifo, fifoPayload);
    writer.release();
    const outcome = await outcomeOf(read, fifo, `${name}(FIFO)`);
    await writer.done;
    assertSameOutcome(outcome, { bytes: Buffer.from(fifoPayload) }, `${name}(FIFO)`);
  }
}

function restore() {
  fs.readFile = node.readFile;
  fs.readFileSync = node.readFileSync;
  fs.promises.readFile = node.promisesReadFile;
}
after(restore);

// The first of these tests is the one that runs smartread's first failed read in this process,
// so it is the one that asks node:fs how it names paths, under the patch.
test('patched naively (fs.readFile = smartRead and so on), every read settles as node:fs\'s does', { timeout: 240000 }, async () => {
  fs.readFileSync = smartread.smartReadSync;
  fs.promises.readFile = smartread.smartRead;
  fs.readFile = (p, options, callback) => {
    const cb = typeof options === 'function' ? options : callback;
    smartread.smartRead(p, typeof options === 'function' ? undefined : options).then((data) => cb(null, data), cb);
  };
  try {
    await readEverythingEverywhere();
  } finally {
    restore();
  }
});

test('patched by smartread/register, every read settles as node:fs\'s does', { timeout: 240000 }, async () => {
  const register = require('smartread/register');
  try {
    await readEverythingEverywhere();
  } finally {
    register.unregister();
  }
  assert.equal(fs.readFileSync, node.readFileSync);
  assert.equal(fs.readFile, node.readFile);
  assert.equal(fs.promises.readFile, node.promisesReadFile);
});
