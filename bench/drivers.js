// The readers being compared. A driver is
//   { name, shape, async, available(), read(what), baseline?, reference?, cold? }
// shape says what read() takes: 'file', one path, returning its Buffer; 'files', an array
// of paths, returning their Buffers in the same order; or 'random', a random-reads context
// (trials.js randomReads), returning the pages read as one Buffer. A trial runs the drivers of its shape
// (and of those, a cold trial only the ones marked cold, to keep cold runs short; and not one
// whose `inFlight` exceeds the trial's files, which would measure the same as a lower one).
// `fullOnly` drivers run with --full only: variations whose question the quick run's drivers
// already answer roughly (callbacks instead of promises, more in flight). With `async`
// read() returns a Promise, and one call is still one timed operation: one file in flight for
// 'file', N files in flight for the '×N' drivers of 'files'.
// `consumeOnly` drivers run only in the trials that consume every byte (+consume): they do not
// read at all (no_read.js), and show what is left of every reader's time there.
// `coldOnly` drivers (a peer's, peers.js) run only in the cold trials.
// `warmOnly` drivers never run in a cold trial, not even in one that runs every driver of its
// shape (trials.js everyDriver): they bound warm reads.
// available() returns true, or a string saying why the driver is skipped on this machine (an
// addon that did not load, a kernel without io_uring, ...). Of each shape, exactly one driver
// is the baseline: every other driver's result is checked against its result before anything
// is timed, and every ratio in a report is against it; one more is the reference, the async
// reader node:fs users have now, against which each driver gets a second ratio.
'use strict';
const fs = require('node:fs');
const { promisify } = require('node:util');
const { smartread, smartreadLoaded, uringUsable } = require('./smartread');
const { IN_FLIGHT, readAllInFlight } = require('./in_flight');
const noRead = require('./no_read');

const readFileCallback = promisify(fs.readFile);

/** The same with fs.readFile's callbacks, as a callback program does it: no promise per file. */
function readAllWithCallbacks(paths, inFlight) {
  return new Promise((resolve, reject) => {
    const results = new Array(paths.length);
    let next = 0;
    let done = 0;
    let failed = false;
    const start = () => {
      const i = next++;
      fs.readFile(paths[i], (err, data) => {
        if (failed) return;
        if (err) {
          failed = true;
          reject(err);
          return;
        }
        results[i] = data;
        done++;
        if (done === paths.length) resolve(results);
        else if (next < paths.length) start();
      });
    };
    if (paths.length === 0) resolve(results);
    for (let k = 0; k < Math.min(inFlight, paths.length); k++) start();
  });
}

// A driver that returns a mapping unmaps the one it returned before: by then the bench has
// consumed it, and that munmap is part of what mapping costs. Its read.release() unmaps the last
// one, once the trial is over: a mapping of a file on a FUSE mount would keep the mount busy.
function closingPrevious(map) {
  let previous = null;
  const keep = (mapped) => {
    previous = mapped;
    return mapped;
  };
  const release = () => {
    // A result that could not be mapped (smartRead mmap reads those) has nothing to close.
    previous?.close?.();
    previous = null;
  };
  const read = (path) => {
    release();
    const result = map(path);
    return result instanceof Promise ? result.then(keep) : keep(result);
  };
  read.release = release;
  return read;
}

/**
 * A random-reads driver: `open(path)` gives { readAt(dest, offset, length, position) -> count,
 * close() }, made on the first call of a trial (untimed, at verification) and kept in the
 * trial's context; each call reads ctx.offsets into one Buffer, ctx.inFlight at a time.
 */
function randomReader(key, open) {
  return async (ctx) => {
    let state = ctx.perDriver.get(key);
    if (state === undefined) {
      state = { ...(await open(ctx.path)), dest: Buffer.alloc(ctx.offsets.length * ctx.readSize) };
      ctx.perDriver.set(key, state);
    }
    const { dest, readAt } = state;
    const { offsets, readSize } = ctx;
    let next = 0;
    const lane = async () => {
      while (next < offsets.length) {
        const i = next++;
        const n = await readAt(dest, i * readSize, readSize, offsets[i]);
        if (n !== readSize) throw new Error(`short read at ${offsets[i]}: ${n} bytes`);
      }
    };
    await Promise.all(Array.from({ length: ctx.inFlight }, lane));
    return dest;
  };
}

async function openFileHandle(path) {
  const handle = await fs.promises.open(path, 'r');
  return {
    readAt: async (dest, offset, length, position) => (await handle.read(dest, offset, length, position)).bytesRead,
    close: () => handle.close(),
  };
}

function openSmartReader(options) {
  return async (path) => {
    const reader = await smartread.openReader(path, options);
    return { readAt: (dest, offset, length, position) => reader.readInto(dest, position, offset, length), close: () => reader.close() };
  };
}

// smartRead (auto) with the metrics counting on or off around each read, both through the same
// wrapper, so that the two rows differ only by what counting costs (issue 4: under 2% at 4 KiB).
async function smartReadCounting(path, counting) {
  smartread.metrics.enable(counting);
  try {
    return await smartread.smartRead(path);
  } finally {
    smartread.metrics.enable(true);
  }
}

// The most an awaited reader can make of smartReadSync's reads: the same reads, each one's
// promise awaited, the event loop let turn as auto lets it, by auto's own turn clock
// (src/ts/read/turn_clock.ts: the reads of one turn go on until they have spent the fast path's
// share of it, then wait for the next). What auto adds to smartReadSync's figure is this,
// whatever its engine does: on this VM the turns make V8 run its scavenges in parallel, and
// posting that job stalls the JS thread until a helper thread wakes (docs/how-it-works.md,
// Limits). The clock is not among the package's exports: it is taken from the build beside the
// bench, when a driver first reads (the drivers are listed even where smartread did not load).
let turnClock = null;
function awaitedTurn() {
  turnClock ??= { ...require('../dist/read/turn_clock'), shareMs: smartread.tuning().fastPathBudgetUs / 2000 };
  return turnClock;
}

async function smartReadSyncAwaited(path) {
  const { turnSpent, waitForNextTurn, shareMs } = awaitedTurn();
  while (turnSpent(shareMs)) await waitForNextTurn();
  return smartread.smartReadSync(path);
}

async function smartReadSyncLoopAwaited(paths) {
  const { turnSpent, waitForNextTurn, shareMs } = awaitedTurn();
  const results = new Array(paths.length);
  for (let i = 0; i < paths.length; i++) {
    while (turnSpent(shareMs)) await waitForNextTurn();
    results[i] = smartread.smartReadSync(paths[i]);
  }
  return results;
}

const drivers = [
  // One file: one read in flight at a time.
  {
    name: 'fs.readFileSync',
    shape: 'file',
    baseline: true,
    cold: true,
    available: () => true,
    read: (path) => fs.readFileSync(path),
  },
  {
    name: 'smartReadSync',
    shape: 'file',
    available: smartreadLoaded,
    read: (path) => smartread.smartReadSync(path),
  },
  {
    name: 'fs.promises.readFile',
    shape: 'file',
    async: true,
    reference: true,
    cold: true,
    available: () => true,
    read: (path) => fs.promises.readFile(path),
  },
  {
    name: 'fs.readFile (callback)',
    fullOnly: true,
    shape: 'file',
    async: true,
    available: () => true,
    read: (path) => readFileCallback(path),
  },
  {
    name: 'smartRead auto',
    shape: 'file',
    async: true,
    cold: true,
    available: smartreadLoaded,
    read: (path) => smartread.smartRead(path),
  },
  {
    name: 'smartRead auto, metrics counting',
    fullOnly: true,
    shape: 'file',
    async: true,
    available: smartreadLoaded,
    read: (path) => smartReadCounting(path, true),
  },
  {
    name: 'smartRead auto, metrics off',
    fullOnly: true,
    shape: 'file',
    async: true,
    available: smartreadLoaded,
    read: (path) => smartReadCounting(path, false),
  },
  {
    name: 'smartReadSync, awaited',
    shape: 'file',
    async: true,
    warmOnly: true,
    available: smartreadLoaded,
    read: smartReadSyncAwaited,
  },
  {
    name: 'smartRead uring',
    shape: 'file',
    async: true,
    cold: true,
    available: uringUsable,
    read: (path) => smartread.smartRead(path, { strategy: 'uring' }),
  },
  {
    name: 'smartRead threadpool',
    shape: 'file',
    async: true,
    cold: true,
    available: smartreadLoaded,
    read: (path) => smartread.smartRead(path, { strategy: 'threadpool' }),
  },
  {
    name: 'mapFile',
    shape: 'file',
    available: smartreadLoaded,
    read: closingPrevious((path) => smartread.mapFile(path)),
  },
  {
    name: 'smartRead mmap',
    fullOnly: true,
    shape: 'file',
    async: true,
    available: smartreadLoaded,
    read: closingPrevious((path) => smartread.smartRead(path, { strategy: 'mmap' })),
  },
  {
    name: 'new Buffer + copy (no read)',
    shape: 'file',
    available: () => true,
    read: noRead.freshCopy(),
  },
  {
    name: 'consume only (no read)',
    shape: 'file',
    consumeOnly: true,
    available: () => true,
    read: noRead.preloaded(),
  },

  // Random reads of one large file: ctx.offsets, 4 KiB each, 32 in flight.
  {
    name: 'FileHandle.read ×32',
    shape: 'random',
    async: true,
    baseline: true,
    reference: true,
    cold: true,
    available: () => true,
    read: randomReader('filehandle', openFileHandle),
  },
  {
    name: 'openReader auto ×32',
    shape: 'random',
    async: true,
    cold: true,
    available: smartreadLoaded,
    read: randomReader('reader-auto', openSmartReader()),
  },
  {
    name: 'openReader auto ×32, readahead on',
    fullOnly: true,
    shape: 'random',
    async: true,
    cold: true,
    available: smartreadLoaded,
    read: randomReader('reader-readahead', openSmartReader({ random: false })),
  },
  {
    name: 'openReader threadpool ×32',
    shape: 'random',
    async: true,
    cold: true,
    available: smartreadLoaded,
    read: randomReader('reader-threadpool', openSmartReader({ strategy: 'threadpool' })),
  },

  // Many files: one operation reads them all.
  {
    name: 'fs.readFileSync loop',
    shape: 'files',
    baseline: true,
    cold: true,
    available: () => true,
    read: (paths) => paths.map((path) => fs.readFileSync(path)),
  },
  {
    name: 'smartReadSync loop',
    shape: 'files',
    available: smartreadLoaded,
    read: (paths) => paths.map((path) => smartread.smartReadSync(path)),
  },
  {
    name: 'smartReadSync loop, awaited',
    shape: 'files',
    async: true,
    warmOnly: true,
    available: smartreadLoaded,
    read: smartReadSyncLoopAwaited,
  },
  {
    name: `fs.promises.readFile ×${IN_FLIGHT}`,
    shape: 'files',
    async: true,
    reference: true,
    cold: true,
    available: () => true,
    read: (paths) => readAllInFlight(paths, IN_FLIGHT, (path) => fs.promises.readFile(path)),
  },
  {
    name: `fs.readFile ×${IN_FLIGHT} (callback)`,
    fullOnly: true,
    shape: 'files',
    async: true,
    available: () => true,
    read: (paths) => readAllWithCallbacks(paths, IN_FLIGHT),
  },
  {
    name: `smartRead auto ×${IN_FLIGHT}`,
    fullOnly: true,
    shape: 'files',
    async: true,
    available: smartreadLoaded,
    read: (paths) => readAllInFlight(paths, IN_FLIGHT, (path) => smartread.smartRead(path)),
  },
  {
    name: `readMany auto ×${IN_FLIGHT}`,
    shape: 'files',
    async: true,
    cold: true,
    available: smartreadLoaded,
    read: (paths) => smartread.readMany(paths, { concurrency: IN_FLIGHT }),
  },
  {
    name: 'readMany auto ×256',
    fullOnly: true,
    shape: 'files',
    async: true,
    inFlight: 256,
    available: smartreadLoaded,
    read: (paths) => smartread.readMany(paths, { concurrency: 256 }),
  },
  {
    name: `readMany uring ×${IN_FLIGHT}`,
    shape: 'files',
    async: true,
    cold: true,
    available: uringUsable,
    read: (paths) => smartread.readMany(paths, { concurrency: IN_FLIGHT, strategy: 'uring' }),
  },
  {
    name: `readMany threadpool ×${IN_FLIGHT}`,
    shape: 'files',
    async: true,
    cold: true,
    available: smartreadLoaded,
    read: (paths) => smartread.readMany(paths, { concurrency: IN_FLIGHT, strategy: 'threadpool' }),
  },
];

module.exports = { drivers };
