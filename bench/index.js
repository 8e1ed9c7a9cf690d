#!/usr/bin/env node
// `npm run bench`: every trial × every available driver of its shape × every target directory,
// timed with tinybench and reported per target as ratios against the baseline driver
// (fs.readFileSync, or a loop of it for many files) and against the reference driver
// (fs.promises.readFile, 64 in flight for many files), both measured in the same run.
// Absolute figures swing from run to run on these VMs; the ratios measured side by side are
// the result.
//
//   node bench/index.js [--dir DIR]... [--quick | --full] [--sizes 4k,64k,1m] [--filter REGEX]
//                       [--time MS] [--rounds N] [--files N] [--tree N] [--corpus DIR] [--peers]
//                       [--mounts | --mount KIND...] [--fuse-latency-ms MS] [--out DIR] [--json FILE]
//
// How one trial is measured, so that every driver runs under the same conditions:
// - The trial creates its files, flushes them to disk and reads them once (warm cache), or,
//   for a cold trial, evicts them before every read (see below).
// - Every driver reads them once, untimed; its result must be byte-equal to the baseline's,
//   every file of a many-files trial included. A driver that differs or throws is reported as
//   an error and not timed.
// - The drivers then run back to back in rounds, in ABBA order (round 1 in the listed order,
//   round 2 reversed, ...), so that a drift in the machine's state does not favour whichever
//   runs first. One run is one tinybench task: a short warm-up, then timed operations until
//   both --time ms and a minimum count have passed: MIN_SAMPLES over all rounds, so that a slow
//   trial (128 MiB at ~10 reads/s) still has a median (its p99 is then about its maximum).
//   Each operation is timed alone: its ~0.1 µs of timer calls are paid by every driver alike.
//   An operation is one read of one file, or for a many-files trial one read of all of them;
//   an async driver's operation is awaited before the next starts.
// - Cold trials run a fixed COLD_OPERATIONS_PER_ROUND operations per round, without warm-up.
//   Before each, in tinybench's beforeEach hook and so outside the timed region, the trial
//   evicts every file with evictFromPageCache and checks with pageCacheResidency that none is
//   left (all files before a round's first operation, a sample before the others). They need
//   a disk under the target and are skipped, with the reason, on tmpfs. Only the files' data
//   pages are evicted: inodes and directory entries stay cached, as after a warm stat.
// - Every result's bytes are consumed the same way (consume.js): one byte from every 4 KiB page,
//   so that a lazy driver (a mapping nobody touches) pays for its pages like the others, or in
//   the '+consume' trials every byte, folded as 32-bit words by XOR.
// - Around each timed run, process.resourceUsage() gives the page faults and, after a reset of
//   the high-water mark, the peak RSS (resources.js). Around each operation of a cold run,
//   /proc gives the CPU ticks of the machine, of the reading process and of the mount's FUSE
//   daemon (resources.js): where the daemon shares the machine's CPUs, busy CPUs are the floor.
// - A full GC runs before every run so that no driver pays for another's garbage. That needs
//   node's --expose-gc, and `npm run bench` cannot pass node flags, so without it this script
//   runs itself again with it.
// - While an async driver's timed operations run, monitorEventLoopDelay watches the event loop
//   (loop_stall.js): the longest stall and the worst p99 are the "loop max/p99 ms" column. A
//   sync driver blocks the loop for each whole read, which its latencies already say.
// - Node's drivers of one file or many files are timed in a process of their own too (the
//   runner: peer_runner.js under this node), started once per run, as Bun's and Deno's are.
//   Timed in this process, which holds the run's results and the peers' samples, the same
//   reads paid for its heap: in a --peers run of warm-64k (6 rounds) V8 ran 450 mark-compacts
//   here besides the forced ones, 3 in the runner; smartRead auto went from 65k reads/s in the
//   first round to 36-37k from the fourth, its loop stalls up to 3.7 ms (p99 3.0), where in
//   the runner it held 56-60k in every round, stalls up to 1.5 ms (p99 0.6). Their results are
//   still checked here, byte for byte; --in-process times them here as before. The
//   random-reads drivers, whose context holds open handles, run here.
// - With --peers, Bun's and Deno's readers and a C loop are drivers too (peers.js). Each peer
//   is a process of its own, which runs the same timing loop (timing.js) on its side and sends
//   the samples back; its result is checked by a digest per file instead of the bytes. Its
//   rounds take their place in the ABBA order like any other driver's, and for a cold trial the
//   peer asks this process to evict the files before each operation.
// - The samples of all rounds are pooled: median and p99 are of the pooled latencies, ops/s is
//   1 / mean latency, files/s and MB/s follow from it, and "vs sync" is ops/s over the
//   baseline's ("vs promises" over the reference's). The same ratio to the baseline per round
//   is shown under "rounds": its spread is the noise of the ratio.
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { parseArgs } = require('node:util');

// Short runs in --quick (the default), so that its 10 trials × 6–7 drivers × 2 targets × 4
// rounds take under 3 minutes on a 2-vCPU VM; --full, --time and --rounds buy precision.
const MODES = {
  quick: { timeMs: 100, rounds: 4 },
  full: { timeMs: 250, rounds: 6 },
};
const { drivers } = require('./drivers');
const { AGAINST_ENV, againstBuild, againstDrivers } = require('./against');
const { smartread } = require('./smartread');
const {
  defaultSizes, parseSize, sizeLabel, trialsFor, trialsForMount, listCorpus, corpusTrials, corpusTrialNames, DEFAULT_MANY_FILES, DEFAULT_TREE_FILES,
  DEFAULT_CORPUS,
} = require('./trials');
const { defaultTargetDirs, describeTarget, deviceTargets } = require('./targets');
const {
  MOUNT_KINDS, DEFAULT_FUSE_DELAY_MS, MountSet, mountUnavailable, buildFuseLatency, mountLabel, checkFuseLatency,
} = require('./mounts');
const { poolLoopStalls, idleLoopStall, RESOLUTION_MS: LOOP_RESOLUTION_MS } = require('./loop_stall');
const { CpuRecorder, poolCpu, poolResources } = require('./resources');
const report = require('./report');
const { timeOperations, runTiming, settleAllocator, MIN_SAMPLES, WARMUP_MS, COLD_OPERATIONS_PER_ROUND } = require('./timing');
const { svgChart } = require('./chart');
const { preparePeers, cacheDir, writePathsFile, digestMismatch, startPeer, tinybenchUrl, RUNNER } = require('./peers');
const { peerComparisons } = require('./comparisons');

const DEFAULT_RESULTS_DIR = path.join(__dirname, 'results');

const usage = `usage: node bench/index.js [options]
  --dir DIR        a directory to put the trial files in; repeatable
                   (default: ${os.tmpdir()}, and /dev/shm when it exists)
  --quick          the default: the trials below, ${MODES.quick.rounds} rounds of ≥${MODES.quick.timeMs} ms
  --full           also every size, the many files and the tree read and consumed whole, 64 in
                   flight up to 1m, the cold trials (the largest size, the many files, the
                   tree; on disk targets only), and the drivers fs.readFile (callback),
                   smartRead auto ×64 and readMany auto ×256; ${MODES.full.rounds} rounds of ≥${MODES.full.timeMs} ms
  --sizes LIST     single-file sizes to run, e.g. 4k,64k,1m,16m,128m (the default)
  --files N        files of 4 KiB in the many-files trials (default ${DEFAULT_MANY_FILES})
  --tree N         files in the tree trials (default ${DEFAULT_TREE_FILES}); the tree is made once
                   per target, in DIR/smartread-bench-tree-v1-N, and reused by later runs
  --corpus DIR     the real tree of the corpus trials, read where it lies, as a target of its
                   own (default: the repository's node_modules, skipped where there is none)
  --peers          also Bun's and Deno's readers and a C loop as drivers: bun and deno from
                   the npm registry, installed on first use into ${cacheDir()}
                   ($SMARTREAD_BENCH_CACHE), and the C loop compiled there with cc ($CC)
  --in-process     time Node's drivers in this process instead of a child of their own (see
                   the header of bench/index.js for why the child is the default)
  --filter REGEX   only trials whose name matches, e.g. 'warm-(4k|1m)$' or 'tree'
  --time MS        time per driver per round, at least (cold trials run
                   ${COLD_OPERATIONS_PER_ROUND} operations per round instead)
  --rounds N       rounds per trial, drivers in ABBA order
  --out DIR        where the reports go (default bench/results/): DATE-HOST.json (every
                   measurement), DATE-HOST.md (the tables) and DATE-HOST.svg (the chart)
  --json FILE      also write the JSON report to FILE
  --devices        root only: also run on a zram ext4, a loop-device ext4 and two throttled
                   devices emulating a SATA SSD and an HDD, set up for the run and removed
                   after it (scripts/devices/with-devices.sh); adds the cold trials
  --mounts         root only: also run on the filesystems of containers and shared storage,
                   mounted for the run beside the first disk directory and removed after it
                   (bench/mounts.js): overlay (the kernel's overlayfs; the files in its lower
                   layer, as an image's are), fuse (bindfs over a directory) and fuse-latency
                   (bench/fuse_latency.c, compiled into the cache as the C driver is: a FUSE
                   passthrough that answers each request --fuse-latency-ms late, holding
                   no thread while it waits); adds cold single files of the sizes up to 1m on
                   overlay, and on fuse-latency runs the warm files of up to 1m and
                   cold-${DEFAULT_MANY_FILES}x4k with every driver (3 min; --filter narrows it); what
                   cannot be mounted here is skipped with the reason
  --mount KIND     the same for one kind (overlay, fuse, fuse-latency); repeatable
  --fuse-latency-ms MS  what fuse-latency waits per request (default ${DEFAULT_FUSE_DELAY_MS})
  --against DIR    also time another build of smartread (DIR: a checkout of it, built) in the
                   warm trials, its smartRead auto, smartReadSync and readMany auto ×64 beside
                   this build's, and divide this build's by theirs (bench/against.js)
  --drop-caches    root only: before every cold operation also drop the kernel's whole page
                   cache, dentries and inodes (/proc/sys/vm/drop_caches), so that path lookups
                   are cold too; this empties the cache of everything else on the machine
  -h, --help       this text
By default, on every target, all in the page cache: warm-SIZE for each size (one file),
warm-1m+consume (every byte of the result read too), warm-SIZE-64inflight for 4k and 64k (one
file read 64 times at once; one at a time by the sync drivers), warm-2000x4k (2,000 files of
4 KiB, read all in one operation) and warm-treeN (a node_modules-like tree: many files of
0.1–8 KiB, some of 16–200 KiB, a few of 1–4 MiB, read all in one operation); and on the
corpus, warm-corpus (every regular file of it, read all in one operation; cold-corpus too with
--full or --devices).`;

class UsageError extends Error {}

function parseOptions(argv) {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        dir: { type: 'string', multiple: true },
        sizes: { type: 'string' },
        quick: { type: 'boolean' },
        full: { type: 'boolean' },
        files: { type: 'string' },
        tree: { type: 'string' },
        corpus: { type: 'string' },
        peers: { type: 'boolean' },
        'in-process': { type: 'boolean' },
        filter: { type: 'string' },
        time: { type: 'string' },
        rounds: { type: 'string' },
        json: { type: 'string' },
        out: { type: 'string' },
        devices: { type: 'boolean' },
        mounts: { type: 'boolean' },
        mount: { type: 'string', multiple: true },
        'fuse-latency-ms': { type: 'string' },
        'drop-caches': { type: 'boolean' },
        against: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    throw new UsageError(err.message);
  }
  const positive = (name, text, fallback, integer) => {
    if (text === undefined) return fallback;
    const n = Number(text);
    if (!(n > 0) || (integer && !Number.isInteger(n))) throw new UsageError(`--${name} must be a positive ${integer ? 'integer' : 'number'}: ${text}`);
    return n;
  };
  let sizes = defaultSizes;
  if (values.sizes !== undefined) {
    sizes = values.sizes.split(',').filter(Boolean).map((text) => {
      const size = parseSize(text);
      if (!(size > 0)) throw new UsageError(`--sizes: not a size: ${text} (use e.g. 4k, 64k, 1m)`);
      return size;
    });
  }
  let filter = null;
  if (values.filter !== undefined) {
    try {
      filter = new RegExp(values.filter);
    } catch (err) {
      throw new UsageError(`--filter: ${err.message}`);
    }
  }
  if (values.quick && values.full) throw new UsageError('--quick and --full exclude each other');
  if (values['drop-caches'] && process.getuid() !== 0) throw new UsageError('--drop-caches writes /proc/sys/vm/drop_caches: run it as root');
  // A corpus named on the command line must be there; the default may be missing (an installed
  // copy of the package has no node_modules of its own), and its trials are then skipped.
  if (values.corpus !== undefined && !isDirectory(values.corpus)) throw new UsageError(`--corpus ${values.corpus}: not a directory`);
  if (values.against !== undefined && !isDirectory(values.against)) throw new UsageError(`--against ${values.against}: not a directory`);
  for (const kind of values.mount ?? []) {
    if (!MOUNT_KINDS.includes(kind)) throw new UsageError(`--mount ${kind}: one of ${MOUNT_KINDS.join(', ')}`);
  }
  const mounts = values.mounts ? MOUNT_KINDS : MOUNT_KINDS.filter((kind) => values.mount?.includes(kind));
  const mode = values.full ? 'full' : 'quick';
  return {
    help: Boolean(values.help),
    dirs: values.dir ?? defaultTargetDirs(),
    sizes,
    mode,
    full: mode === 'full',
    filter,
    time: positive('time', values.time, MODES[mode].timeMs, false),
    rounds: positive('rounds', values.rounds, MODES[mode].rounds, true),
    manyFiles: positive('files', values.files, DEFAULT_MANY_FILES, true),
    treeFiles: positive('tree', values.tree, DEFAULT_TREE_FILES, true),
    corpus: values.corpus ?? DEFAULT_CORPUS,
    peers: Boolean(values.peers),
    inProcess: Boolean(values['in-process']),
    json: values.json ?? null,
    out: values.out ?? DEFAULT_RESULTS_DIR,
    devices: Boolean(values.devices),
    mounts,
    fuseLatencyMs: positive('fuse-latency-ms', values['fuse-latency-ms'], DEFAULT_FUSE_DELAY_MS, false),
    dropCaches: Boolean(values['drop-caches']),
    against: values.against === undefined ? null : path.resolve(values.against),
  };
}

function isDirectory(dir) {
  try {
    return fs.statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

// Scratch directories are removed however the run ends: finished, failed or interrupted.
const scratchDirs = new Set();
function removeScratchDirsOnExit() {
  process.on('exit', () => {
    for (const dir of scratchDirs) fs.rmSync(dir, { recursive: true, force: true });
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => {
      progress(`\n${signal}: stopped after the run in progress\n`);
      process.exit(128 + os.constants.signals[signal]);
    });
  }
}

const progress = (text) => process.stderr.write(text);

/** Why `actual` is not the baseline's `expected` Buffer, or null when it is byte-equal. */
function bufferMismatch(expected, actual) {
  if (!Buffer.isBuffer(actual)) return `returned ${actual === null ? 'null' : typeof actual}, not a Buffer`;
  if (actual.length !== expected.length) return `${actual.length} bytes instead of ${expected.length}`;
  if (actual.equals(expected)) return null;
  let i = 0;
  while (actual[i] === expected[i]) i++;
  return `right length, different bytes from byte ${i}`;
}

/** The same for a result of a Buffer per file: the first file that differs. */
function resultMismatch(expected, actual, paths) {
  if (!Array.isArray(expected)) return bufferMismatch(expected, actual);
  if (!Array.isArray(actual)) return `returned ${actual === null ? 'null' : typeof actual}, not an array`;
  if (actual.length !== expected.length) return `${actual.length} results for ${expected.length} files`;
  for (let i = 0; i < expected.length; i++) {
    const mismatch = bufferMismatch(expected[i], actual[i]);
    if (mismatch) return `${path.basename(paths[i])}: ${mismatch}`;
  }
  return null;
}

/**
 * A Map from driver to the error that disqualifies it in this trial. A peer's driver (one with a
 * `remote`, peers.js) is first told the trial's paths, in a file written into `pathsDir`, and
 * answers with a digest per file instead of the bytes.
 */
async function verifyDrivers(trial, ctx, active, baseline, pathsDir) {
  const errors = new Map();
  let pathsFile = null;
  const told = new Map();
  // Each peer process is told once per trial, before its first driver reads.
  const tell = (remote) => {
    if (!told.has(remote)) {
      pathsFile ??= writePathsFile(path.join(pathsDir, 'paths'), ctx.paths);
      const evict = trial.beforeEach ? (checkAll) => trial.beforeEach(ctx, checkAll) : null;
      told.set(remote, remote.setContext({ shape: trial.shape, consumeAll: Boolean(trial.consumeAll), pathsFile, evict, daemonPid: daemonPidOf(ctx) }));
    }
    return told.get(remote);
  };
  const once = async (driver) => {
    if (driver.remote) await tell(driver.remote);
    trial.beforeEach?.(ctx, false);
    return driver.remote ? driver.remote.verify(driver.reader) : trial.run(driver, ctx);
  };
  let expected;
  try {
    expected = await once(baseline);
  } catch (err) {
    errors.set(baseline, `threw: ${err.message}`);
  }
  for (const driver of active) {
    if (driver === baseline) continue;
    try {
      const result = await once(driver);
      const mismatch = expected === undefined ? null
        : driver.remote ? digestMismatch(expected, result, ctx.paths) : resultMismatch(expected, result, ctx.paths);
      if (mismatch) errors.set(driver, `wrong result: ${mismatch}`);
    } catch (err) {
      errors.set(driver, `threw: ${err.message}`);
    }
  }
  return errors;
}

/** The pid of the FUSE daemon that serves a trial's files (bindfs, fuse-latency), or null. */
function daemonPidOf(ctx) {
  return ctx.mount?.pid ?? null;
}

/**
 * One run of one driver: a tinybench task (timing.js). Returns its latency samples in ms, its
 * peak RSS and page faults over the timed operations, for an async driver what the event loop
 * went through meanwhile, and for a cold run the CPU ticks of its operations (resources.js).
 */
async function timeDriver(trial, ctx, driver, options) {
  const timing = runTiming({ cold: trial.cold, time: options.time, rounds: roundsOf(trial, options), coldOperations: trial.coldOperations });
  // A peer runs the same loop in its own process (peer_runner.js, c_read_loop.c), and so do
  // Node's drivers, in the runner, where it runs.
  if (driver.remote) return driver.remote.time(driver.reader, timing, trial.cold);
  if (runsInRunner(trial, options)) return options.runner.time(`driver:${encodeURIComponent(driver.name)}`, timing, trial.cold);
  // tinybench is ESM only; import() loads it on every node 20, require() only from 20.19.
  const { Bench } = await import('tinybench');
  const cpu = trial.cold ? new CpuRecorder({ reader: process.pid, daemon: daemonPidOf(ctx) }) : null;
  const timed = await timeOperations({
    Bench,
    operation: () => trial.run(driver, ctx),
    isAsync: Boolean(driver.async),
    consumeAll: Boolean(trial.consumeAll),
    timing,
    beforeEach: trial.beforeEach ? (first) => trial.beforeEach(ctx, first) : null,
    collectGarbage: globalThis.gc,
    loopStall: driver.async ? {} : null,
    cpu,
  });
  return { ...timed, cpu: cpu?.result() ?? null };
}

/** The rounds of a trial: the run's, or fewer where the trial caps them (trials.js maxRounds). */
function roundsOf(trial, options) {
  return Math.min(options.rounds, trial.maxRounds ?? Infinity);
}

/** Whether this trial's Node drivers are timed in the runner: those of one file or many. */
function runsInRunner(trial, options) {
  return options.runner !== null && (trial.shape === 'file' || trial.shape === 'files');
}

async function runTrial(trial, ctx, candidates, options) {
  const active = candidates.filter((s) => s.available === true).map((s) => s.driver);
  const baseline = active.find((d) => d.baseline);
  if (trial.beforeEach) {
    try {
      trial.beforeEach(ctx, true);
    } catch (err) {
      return skippedTrial(trial, `eviction does not work on this target: ${err.message}`);
    }
  }
  const errors = await verifyDrivers(trial, ctx, active, baseline, options.pathsDir);
  progress(errors.size === 0 ? ' every result matches\n' : '\n');
  for (const [driver, error] of errors) progress(`    ${driver.name}: ${error}\n`);
  if (runsInRunner(trial, options)) {
    const pathsFile = writePathsFile(path.join(options.pathsDir, 'paths'), ctx.paths);
    const evict = trial.beforeEach ? (checkAll) => trial.beforeEach(ctx, checkAll) : null;
    await options.runner.setContext({ shape: trial.shape, consumeAll: Boolean(trial.consumeAll), pathsFile, evict, daemonPid: daemonPidOf(ctx) });
  }
  const runs = new Map(active.map((d) => [d, []]));
  for (let round = 0; round < roundsOf(trial, options); round++) {
    const order = round % 2 === 0 ? active : [...active].reverse();
    progress(`    round ${round + 1}, median µs:`);
    for (const [position, driver] of order.entries()) {
      if (errors.has(driver)) continue;
      try {
        const { samples, resources, loopStall, cpu } = await timeDriver(trial, ctx, driver, options);
        runs.get(driver).push({ round, position, samples, resources, loopStall, cpu });
        progress(` ${driver.name} ${report.formatNumber(report.summarize(samples, trial).medianUs)}`);
      } catch (err) {
        errors.set(driver, `threw: ${err.message}`);
        progress(` ${driver.name} failed: ${err.message}`);
      }
      // Lets a Ctrl-C in: the runs of sync drivers never return to the event loop.
      await new Promise(setImmediate);
    }
    progress('\n');
  }
  const summary = summarizeTrial(trial, candidates, runs, errors, options);
  if (trial.maxRounds !== undefined || trial.coldOperations !== undefined) {
    summary.timing = { rounds: roundsOf(trial, options), coldOperationsPerRound: trial.cold ? trial.coldOperations ?? COLD_OPERATIONS_PER_ROUND : null };
  }
  if (trial.cold && ctx.mount) {
    // Where the cold trial's files were evicted, and why not through the mount if it had to.
    summary.eviction = {
      through: ctx.mount.evictThrough === 'mount' && !ctx.evictedWritten ? 'the mount' : 'the written files',
      why: ctx.evictedWritten ?? null,
    };
    if (ctx.evictedWritten) progress(`    evicted the written files: ${ctx.evictedWritten}\n`);
  }
  return summary;
}

function skippedTrial(trial, reason) {
  return { name: trial.name, shape: trial.shape, bytes: trial.bytes, files: trial.files, cold: Boolean(trial.cold), skipped: reason, drivers: [] };
}

function summarizeTrial(trial, candidates, runs, errors, options) {
  // The pooled figures, and those of each round, of a driver that ran without error.
  const figures = (driver) => {
    if (!driver || errors.has(driver) || !runs.has(driver)) return null;
    return {
      pooled: report.summarize(runs.get(driver).flatMap((r) => r.samples), trial),
      rounds: new Map(runs.get(driver).map((r) => [r.round, report.summarize(r.samples, trial)])),
    };
  };
  const ratio = (a, b) => (b ? a.opsPerSec / b.opsPerSec : null);
  const base = figures(candidates.find((s) => s.driver.baseline)?.driver);
  const reference = figures(candidates.find((s) => s.driver.reference)?.driver);
  const summary = {
    name: trial.name,
    shape: trial.shape,
    bytes: trial.bytes,
    files: trial.files,
    cold: Boolean(trial.cold),
    drivers: candidates.map(({ driver, available }) => {
      const identity = {
        name: driver.name,
        baseline: Boolean(driver.baseline),
        reference: Boolean(driver.reference),
        async: Boolean(driver.async),
        peer: driver.peer ?? null,
        // Which process timed it: a peer's own, Node's runner, or the bench's.
        timedIn: driver.remote !== undefined ? 'peer' : runsInRunner(trial, options) ? 'runner' : 'bench',
      };
      if (available !== true) return { ...identity, skipped: available };
      if (errors.has(driver)) return { ...identity, error: errors.get(driver) };
      const { pooled } = figures(driver);
      return {
        ...identity,
        ...pooled,
        percentilesUs: report.latencyPercentiles(runs.get(driver).flatMap((r) => r.samples)),
        ratio: ratio(pooled, base?.pooled),
        ratioToReference: ratio(pooled, reference?.pooled),
        ratioOfMedians: base ? base.pooled.medianUs / pooled.medianUs : null,
        loopStall: poolLoopStalls(runs.get(driver).map((r) => r.loopStall)),
        resources: poolResources(runs.get(driver).map((r) => r.resources)),
        cpu: poolCpu(runs.get(driver).map((r) => r.cpu)),
        rounds: runs.get(driver).map(({ round, position, samples, resources, loopStall }) => {
          const own = report.summarize(samples, trial);
          return {
            round,
            position,
            ...own,
            ratio: ratio(own, base?.rounds.get(round)),
            ratioToReference: ratio(own, reference?.rounds.get(round)),
            loopStall,
            resources,
          };
        }),
      };
    }),
  };
  summary.comparisons = peerComparisons(summary);
  return summary;
}

/**
 * Whether a trial runs a driver: one of its shape, for a cold trial one marked cold (any, in a
 * trial of every driver), a --full one with --full or in a trial of every driver, not one
 * with more reads in flight than the trial has files (it would repeat a driver with fewer), a
 * consume-only one only where every byte is consumed, a cold-only one only in cold trials, and a
 * warm-only one only in warm trials.
 */
function runsIn(driver, trial, full) {
  return driver.shape === trial.shape && (!trial.cold || Boolean(driver.cold) || Boolean(trial.everyDriver))
    && (!driver.fullOnly || full || Boolean(trial.everyDriver)) && !(driver.inFlight > trial.files)
    && (!driver.consumeOnly || Boolean(trial.consumeAll)) && (!driver.coldOnly || Boolean(trial.cold))
    && !(driver.warmOnly && trial.cold);
}

async function runTarget(target, trials, driverStatus, options) {
  // The corpus is read where it lies: nothing is written beside it. On a mount target the files
  // are written beneath the mount and read through it (trials.js).
  // A target with no trial to run (a mount that could not be made) gets no scratch directory.
  const scratch = target.corpus || trials.length === 0 ? null
    : fs.mkdtempSync(path.join(target.mount?.backingDir ?? target.realpath, 'smartread-bench-'));
  if (scratch) scratchDirs.add(scratch);
  const results = [];
  try {
    for (const trial of trials) {
      const started = performance.now();
      progress(`  ${trial.name}:`);
      const why = trial.unavailable(target);
      if (why) {
        progress(` skipped: ${why}\n`);
        results.push(skippedTrial(trial, why));
        continue;
      }
      const candidates = driverStatus.filter((s) => runsIn(s.driver, trial, options.full));
      const ctx = trial.setup(scratch, target);
      progress(' files ready,');
      try {
        results.push(await runTrial(trial, ctx, candidates, options));
      } finally {
        // What a driver still holds of the trial's files (a mapping: drivers.js closingPrevious).
        for (const { driver } of candidates) driver.read?.release?.();
        trial.teardown(ctx);
      }
      progress(`    (${((performance.now() - started) / 1000).toFixed(1)} s)\n`);
    }
  } finally {
    if (scratch) {
      fs.rmSync(scratch, { recursive: true, force: true });
      scratchDirs.delete(scratch);
    }
  }
  return results;
}

/**
 * The corpus as a target of its own: { target: { ...describeTarget(dir), label, corpus: { files,
 * bytes } }, trials, skipped }, with the corpus trials that --filter and the mode keep; null
 * when they keep none. When the corpus cannot be listed (no such directory, no regular file in
 * it), its trials are in `skipped`, each with the reason.
 */
function corpusTarget(options, cold) {
  const keep = (name) => !options.filter || options.filter.test(name);
  const names = corpusTrialNames({ cold }).filter(keep);
  if (names.length === 0) return null;
  const dir = options.corpus;
  let list = null;
  let why = null;
  try {
    list = listCorpus(dir);
    if (list.paths.length === 0) why = `${dir} holds no regular file`;
  } catch (err) {
    why = `the corpus ${dir} cannot be listed: ${err.code === 'ENOENT' ? 'no such directory' : err.message}`;
  }
  if (why) {
    return {
      target: { ...unknownTarget(dir), label: 'corpus', corpus: { files: null, bytes: null } },
      trials: [],
      skipped: names.map((name) => skippedTrial({ name, shape: 'files', bytes: null, files: null, cold: name.startsWith('cold') }, why)),
    };
  }
  return {
    target: { ...describeTarget(dir), label: 'corpus', corpus: { files: list.paths.length, bytes: list.bytes } },
    trials: corpusTrials(list, { cold, dropCaches: options.dropCaches, keep }),
    skipped: [],
  };
}

/** A target that is not there to be described. */
function unknownTarget(dir) {
  return {
    dir, realpath: dir, fsType: 'unknown', mountPoint: null, source: null, device: null, label: null, emulated: false, readBps: null, readIops: null,
  };
}

// How long the idle event loop is watched for the floor of the loop-stall figures: as long as
// 20 of a driver's rounds (a smoke run's 1 ms rounds make it short), at most this.
const IDLE_LOOP_MS = 2000;
const IDLE_LOOP_MS_FULL = 10000;

async function main(options) {
  const startedAt = new Date();
  const started = performance.now();
  const machine = report.machineInfo();
  removeScratchDirsOnExit();
  const cold = options.full || options.devices;
  const trials = trialsFor(options.sizes, {
    full: options.full,
    cold,
    dropCaches: options.dropCaches,
    manyFiles: options.manyFiles,
    treeFiles: options.treeFiles,
  }).filter((t) => !options.filter || options.filter.test(t.name));
  const corpus = corpusTarget(options, cold);
  const mountTrials = options.mounts.flatMap((kind) => mountTrialsOf(kind, trials, options).trials);
  if (trials.length === 0 && mountTrials.length === 0 && !corpus) {
    throw new UsageError(`no trial matches --sizes and --filter${cold ? '' : ' (cold trials need --full or --devices)'}`);
  }
  const targets = options.dirs.map((dir) => {
    try {
      return describeTarget(dir);
    } catch (err) {
      throw new UsageError(`--dir ${dir}: ${err.message}`);
    }
  });
  if (options.devices) targets.push(...deviceTargets(process.env[DEVICES_ENV]).map((d) => ({ ...describeTarget(d.dir), ...d })));

  let peers = null;
  let runner = null;
  if (options.peers) {
    progress(`peers: in ${cacheDir()}\n`);
    peers = await preparePeers({ progress });
  }
  // Mounted before anything else starts, so that the runner and the peers see them; taken down
  // last, after they ended (on 'exit' too, should the run end otherwise).
  const mounts = options.mounts.length > 0 ? await setUpMounts(options, trials, targets) : { set: null, runs: [] };
  // The drivers timed in this process (trees, writes, --in-process) see the heap the runner's see.
  settleAllocator(globalThis.gc);
  try {
    if (!options.inProcess) runner = await startRunner();
    // Where each trial's paths are written for the runner and the peers to read.
    const pathsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'smartread-bench-peers-'));
    scratchDirs.add(pathsDir);
    const allTrials = [...trials, ...mounts.runs.flatMap((r) => r.trials), ...(corpus?.trials ?? [])];
    await runAll({ options: { ...options, pathsDir, runner }, startedAt, started, machine, targets, trials, allTrials, mountRuns: mounts.runs, corpus, peers });
  } finally {
    await Promise.all([peers?.close(), runner?.close()]);
    mounts.set?.teardown();
  }
}

/** The trials of a mount target of `kind`: trialsForMount's, with the run's options. */
function mountTrialsOf(kind, trials, options) {
  return trialsForMount(kind, trials, {
    sizes: options.sizes,
    full: options.full,
    delayMs: options.fuseLatencyMs,
    manyFiles: options.manyFiles,
    dropCaches: options.dropCaches,
    keep: (name) => !options.filter || options.filter.test(name),
  });
}

/**
 * The mount targets of --mounts / --mount (mounts.js), beside the first target on a disk:
 * { set (the MountSet, to tear down), runs: [{ target, trials, skipped }] }. A kind that cannot
 * be mounted here is a target whose trials are all skipped, with the reason.
 */
async function setUpMounts(options, trials, targets) {
  const onDisk = targets.find((t) => !['tmpfs', 'ramfs', 'overlay'].includes(t.fsType) && !t.fsType.startsWith('fuse'));
  const parent = onDisk?.realpath ?? os.tmpdir();
  const runs = [];
  let set = null;
  let daemon = null;
  for (const kind of options.mounts) {
    const label = mountLabel(kind, options.fuseLatencyMs);
    const { trials: kindTrials, skipped } = mountTrialsOf(kind, trials, options);
    // --filter kept none of its trials: nothing to mount it for.
    if (kindTrials.length === 0) continue;
    let reason = mountUnavailable(kind);
    if (!reason && kind === 'fuse-latency') {
      try {
        daemon = await buildFuseLatency();
        if (daemon.compiledMs) progress(`${label}: compiled ${daemon.binary} in ${(daemon.compiledMs / 1000).toFixed(1)} s\n`);
      } catch (err) {
        reason = err.message;
      }
    }
    let mount = null;
    if (!reason) {
      try {
        set ??= new MountSet(parent, { log: (line) => progress(`mounts: ${line}\n`) });
        if (kind === 'overlay') mount = set.overlay();
        else if (kind === 'fuse') mount = await set.bindfs();
        else mount = await set.fuseLatency({ binary: daemon.binary, delayMs: options.fuseLatencyMs });
      } catch (err) {
        reason = err.message;
      }
    }
    if (reason) {
      progress(`${label}: skipped: ${reason}\n`);
      runs.push({
        target: { ...unknownTarget(kind), label, mount: { kind, skipped: reason } },
        trials: [],
        skipped: [...kindTrials, ...skipped.map((s) => s.trial)].map((t) => skippedTrial(t, reason)),
      });
      continue;
    }
    // overlayfs passes the eviction of a file on to its layer's file; these FUSE daemons keep no
    // cache across opens, and a cold read meets their source's state (trials.js evictor).
    const described = { ...mount, evictThrough: kind === 'overlay' ? 'mount' : 'written' };
    if (kind === 'fuse-latency') {
      described.daemon = { binary: daemon.binary, compiler: daemon.compilerVersion, flags: daemon.flags };
      described.check = await checkFuseLatency(mount);
      progress(`${label}: ${describeLatencyCheck(described.check, mount.delayMs)}\n`);
    }
    const target = { ...describeTarget(mount.dir), label, mount: described };
    progress(`${label}: ${mount.dir} (${target.fsType}), its files written to ${mount.backingDir}\n`);
    runs.push({ target, trials: kindTrials, skipped: skipped.map((s) => skippedTrial(s.trial, s.reason)) });
  }
  return { set, runs };
}

/** The daemon check (mounts.js checkFuseLatency) in a line, with a warning where it failed. */
function describeLatencyCheck(check, delayMs) {
  const line = `one cold read ${check.oneReadMs.toFixed(2)} ms (the delay: ${delayMs} ms); ${check.files} cold reads at once `
    + `${check.concurrentMs.toFixed(1)} ms (one after another: ≥${(check.files * delayMs).toFixed(0)} ms)`;
  const problems = [
    check.oneReadMs < delayMs && 'a read took less than the delay',
    check.concurrentMs >= check.files * delayMs && 'the daemon did not serve the reads at once',
  ].filter(Boolean);
  return problems.length > 0 ? `${line}; WARNING: ${problems.join('; ')}` : line;
}

/**
 * Node's runner: this node running peer_runner.js with --expose-gc and no other flag of this
 * process's (one that writes to stdout, as --trace-gc does, would break the protocol).
 */
async function startRunner() {
  const args = ['--expose-gc', RUNNER, tinybenchUrl()];
  const runner = await startPeer('Node runner', process.execPath, args, {});
  progress(`node's drivers: timed in a child process of their own (pid ${runner.child.pid})\n`);
  return runner;
}

async function runAll({ options, startedAt, started, machine, targets, trials, allTrials, mountRuns, corpus, peers }) {
  // --full's drivers, and those of the trials of every driver.
  const runsSomewhere = (d) => allTrials.some((t) => runsIn(d, t, options.full));
  const driverStatus = [...drivers.filter((d) => options.full || !d.fullOnly || runsSomewhere(d)), ...againstDrivers(), ...(peers?.drivers ?? [])]
    .map((d) => ({ driver: d, available: d.available() }));
  const skipped = driverStatus.filter((s) => s.available !== true && runsSomewhere(s.driver));
  for (const shape of new Set(allTrials.map((t) => t.shape))) {
    const baseline = driverStatus.find((s) => s.driver.shape === shape && s.driver.baseline);
    if (baseline.available !== true) throw new Error(`the baseline driver ${baseline.driver.name} is not available: ${baseline.available}`);
  }
  // The per-target trials run on every target (none when --filter keeps only the corpus's).
  const runs = [
    ...(trials.length > 0 ? targets.map((target) => ({ target, trials, skipped: [] })) : []),
    ...mountRuns.filter((r) => r.trials.length > 0 || r.skipped.length > 0),
    ...(corpus ? [corpus] : []),
  ];

  const activeCount = driverStatus.filter((s) => s.available === true && runsSomewhere(s.driver)).length;
  progress(`smartread bench: ${trials.length} trials × ${activeCount} drivers × ${targets.length} targets`
    + `${mountRuns.length > 0 ? `, ${mountRuns.map((r) => `${r.trials.length} on ${r.target.label}`).join(', ')}` : ''}`
    + `${corpus ? `, ${corpus.trials.length + corpus.skipped.length} on the corpus ${corpus.target.dir}` : ''}; `
    + `${options.rounds} rounds per trial of ≥${options.time} ms per driver, ≥${MIN_SAMPLES} operations per driver over all rounds`
    + `${options.full ? `; cold trials ${COLD_OPERATIONS_PER_ROUND} operations per round` : ''}\n`);
  for (const s of skipped) progress(`skipped driver ${s.driver.name}: ${s.available}\n`);

  // Before the trials, so that nothing of theirs (files to remove, a GC) is still running.
  const loopFloor = await idleLoopStall(Math.min(options.full ? IDLE_LOOP_MS_FULL : IDLE_LOOP_MS, 20 * options.time));
  progress(`${report.describeLoopFloor(loopFloor)}\n`);
  const targetResults = [];
  for (const [i, { target, trials: targetTrials, skipped: skippedTrials }] of runs.entries()) {
    progress(`[${i + 1}/${runs.length}] ${report.targetHeading(target)}\n`);
    for (const s of skippedTrials) progress(`  ${s.name}: skipped: ${s.skipped}\n`);
    targetResults.push({ ...target, trials: [...skippedTrials, ...await runTarget(target, targetTrials, driverStatus, options)] });
  }

  const engine = smartread ? smartread.engineInfo() : null;
  const durationMs = performance.now() - started;
  console.log(`\n${report.legend(LOOP_RESOLUTION_MS)}`);
  for (const t of targetResults) {
    console.log(`\n${report.targetHeading(t)}`);
    console.log(report.targetTable(t));
    const comparisons = report.comparisonTables(t);
    if (comparisons) console.log(`\n${comparisons}`);
  }
  console.log('');
  for (const s of skipped) console.log(`skipped: ${s.driver.name}: ${s.available}`);
  console.log(`loop:     ${report.describeLoopFloor(loopFloor)}`);
  console.log(`engine:   ${report.describeEngine(engine)}`);
  const runnerInfo = options.runner ? { runtime: options.runner.ready.runtime, version: options.runner.ready.version, pid: options.runner.child.pid } : null;
  console.log(`timing:   ${report.describeTiming({ runner: runnerInfo })}`);
  console.log(`peers:    ${report.describePeers(peers?.info ?? null)}`);
  console.log(`machine:  ${report.describeMachine(machine)}`);
  console.log(`run time: ${report.formatDuration(durationMs)}`);

  const other = againstBuild();
  const document = {
    format: 'smartread-bench/3',
    startedAt: startedAt.toISOString(),
    durationMs,
    command: ['node', 'bench/index.js', ...process.argv.slice(2)].join(' '),
    options: {
      mode: options.mode,
      devices: options.devices,
      mounts: options.mounts,
      fuseLatencyMs: options.mounts.includes('fuse-latency') ? options.fuseLatencyMs : null,
      dropCaches: options.dropCaches,
      sizes: options.sizes.map(sizeLabel),
      manyFiles: options.manyFiles,
      treeFiles: options.treeFiles,
      corpus: options.corpus,
      peers: options.peers,
      inProcess: options.inProcess,
      full: options.full,
      filter: options.filter ? options.filter.source : null,
      timeMs: options.time,
      rounds: options.rounds,
      minSamples: MIN_SAMPLES,
      warmupMs: WARMUP_MS,
      coldOperationsPerRound: COLD_OPERATIONS_PER_ROUND,
      loopResolutionMs: LOOP_RESOLUTION_MS,
      against: other && { dir: other.dir, build: other.build },
    },
    machine,
    engine,
    peers: peers?.info ?? null,
    runner: runnerInfo,
    loopFloor,
    drivers: driverStatus.map((s) => ({
      name: s.driver.name,
      shape: s.driver.shape,
      async: Boolean(s.driver.async),
      baseline: Boolean(s.driver.baseline),
      reference: Boolean(s.driver.reference),
      peer: s.driver.peer ?? null,
      available: s.available,
    })),
    targets: targetResults,
  };
  const written = writeReports(document, options.out, startedAt);
  console.log(`reports:  ${written.json}\n          ${written.markdown}\n          ${written.svg}`);
  if (options.json) {
    fs.writeFileSync(options.json, `${JSON.stringify(document, null, 2)}\n`);
    console.log(`json:     ${path.resolve(options.json)}`);
  }

  const failures = targetResults.flatMap((t) => t.trials.flatMap((tr) => tr.drivers)).filter((d) => d.error);
  if (failures.length > 0) {
    console.error(`\n${failures.length} driver run(s) failed; see ERROR rows above`);
    process.exitCode = 1;
  }
}

/**
 * Writes DATE-HOST.json, .md and .svg into `dir` (created if missing); DATE is the start time in
 * ISO 8601 with '-' for ':', which file names on every system accept. Returns their paths.
 */
function writeReports(document, dir, startedAt) {
  fs.mkdirSync(dir, { recursive: true });
  const stamp = startedAt.toISOString().replace(/\.\d+Z$/, 'Z').replace(/:/g, '-');
  const base = path.resolve(dir, `${stamp}-${os.hostname()}`);
  const files = { json: `${base}.json`, markdown: `${base}.md`, svg: `${base}.svg` };
  fs.writeFileSync(files.json, `${JSON.stringify(document, null, 2)}\n`);
  fs.writeFileSync(files.svg, svgChart(document));
  fs.writeFileSync(files.markdown, report.markdownReport(document, path.basename(files.svg)));
  return files;
}

const DEVICES_ENV = 'SMARTREAD_BENCH_DEVICES';
const DEVICES_SCRIPT = path.join(__dirname, '..', 'scripts', 'devices', 'with-devices.sh');

/**
 * Runs this script again in a child: with node's --expose-gc, and with --devices inside
 * with-devices.sh, which sets the devices up, passes their list in SMARTREAD_BENCH_DEVICES and
 * tears them down when the child ends.
 */
function restart({ withDevices }) {
  const nodeArgs = [...process.execArgv, '--expose-gc', __filename, ...process.argv.slice(2)];
  const child = withDevices
    ? spawn('bash', [DEVICES_SCRIPT, process.execPath, ...nodeArgs], { stdio: 'inherit' })
    : spawn(process.execPath, nodeArgs, { stdio: 'inherit' });
  // A signal is passed on, and this process waits for the child to clean up and exit.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? 128 + os.constants.signals[signal]));
}

async function start() {
  const options = parseOptions(process.argv.slice(2));
  if (options.help) {
    console.log(usage);
    return;
  }
  const gcExposed = typeof globalThis.gc === 'function';
  if (options.devices && !process.env[DEVICES_ENV]) {
    if (process.getuid() !== 0) {
      throw new UsageError('--devices sets up block devices, mounts and a block-io cgroup: run it as root');
    }
    restart({ withDevices: true });
  } else if (!gcExposed) {
    restart({ withDevices: false });
  } else {
    // Read by againstDrivers() here and in the runner of Node's drivers, which inherits it.
    if (options.against) process.env[AGAINST_ENV] = options.against;
    await main(options);
  }
}

start().catch((err) => {
  if (err instanceof UsageError) {
    console.error(`bench: ${err.message}\n${usage}`);
    process.exitCode = 2;
  } else {
    console.error(err);
    process.exitCode = 1;
  }
});
