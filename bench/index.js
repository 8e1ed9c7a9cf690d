#!/usr/bin/env node
// `npm run bench`: every trial × every available driver × every target directory, timed with
// tinybench and reported per target as ratios against the baseline driver (fs.readFileSync)
// measured in the same run. Absolute figures swing from run to run on these VMs; the ratios
// measured side by side are the result.
//
//   node bench/index.js [--dir DIR]... [--sizes 4k,64k,1m] [--filter REGEX] [--time MS]
//                       [--rounds N] [--json FILE]
//
// How one trial is measured, so that every driver runs under the same conditions:
// - The trial creates its files, flushes them to disk and reads them once (warm cache).
// - Every driver reads them once, untimed; its result must be byte-equal to the baseline's.
//   A driver that differs or throws is reported as an error and not timed.
// - The drivers then run back to back in rounds, in ABBA order (round 1 in the listed order,
//   round 2 reversed, ...), so that a drift in the machine's state does not favour whichever
//   runs first. One run is one tinybench task: a short warm-up, then timed reads until both
//   --time ms and a minimum count of reads have passed: MIN_SAMPLES over all rounds, so that a
//   slow trial (128 MiB at ~10 reads/s) still has enough samples for a median and a p99.
//   Each read is timed alone: its ~0.1 µs of timer calls are paid by every driver alike.
// - Every read's bytes are consumed the same way, one byte from every 4 KiB page, so that a
//   lazy driver (a mapping nobody touches) pays for its pages like the others.
// - A full GC runs before every run so that no driver pays for another's garbage. That needs
//   node's --expose-gc, and `npm run bench` cannot pass node flags, so without it this script
//   runs itself again with it.
// - The samples of all rounds are pooled: median and p99 are of the pooled latencies, ops/s is
//   1 / mean latency, and "vs base" is ops/s over the baseline's. The same ratio per round is
//   shown under "rounds": its spread is the noise of the ratio.
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { parseArgs } = require('node:util');

const DEFAULT_TIME_MS = 1000;
const DEFAULT_ROUNDS = 4;
const MIN_SAMPLES = 24;
const WARMUP_MS = 100;
const WARMUP_ITERATIONS = 3;

const usage = `usage: node bench/index.js [options]
  --dir DIR        a directory to put the trial files in; repeatable
                   (default: ${os.tmpdir()}, and /dev/shm when it exists)
  --sizes LIST     file sizes to run, e.g. 4k,64k,1m,16m,128m (the default)
  --filter REGEX   only trials whose name matches, e.g. 'warm-(4k|1m)$'
  --time MS        time per driver per round, at least (default ${DEFAULT_TIME_MS})
  --rounds N       rounds per trial, drivers in ABBA order (default ${DEFAULT_ROUNDS})
  --json FILE      also write every measurement to FILE
  -h, --help       this text`;

const { drivers, smartread } = require('./drivers');
const { defaultSizes, parseSize, sizeLabel, trialsFor } = require('./trials');
const { defaultTargetDirs, describeTarget } = require('./targets');
const report = require('./report');

class UsageError extends Error {}

function parseOptions(argv) {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        dir: { type: 'string', multiple: true },
        sizes: { type: 'string' },
        filter: { type: 'string' },
        time: { type: 'string' },
        rounds: { type: 'string' },
        json: { type: 'string' },
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
  return {
    help: Boolean(values.help),
    dirs: values.dir ?? defaultTargetDirs(),
    sizes,
    filter,
    time: positive('time', values.time, DEFAULT_TIME_MS, false),
    rounds: positive('rounds', values.rounds, DEFAULT_ROUNDS, true),
    json: values.json ?? null,
  };
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

// The sink keeps the consumed bytes observable, so that no read can be optimised away.
let sink = 0;
function consume(buffer) {
  for (let i = 0; i < buffer.length; i += 4096) sink ^= buffer[i];
}

/** Why `actual` is not the baseline's `expected` result, or null when it is byte-equal. */
function resultMismatch(expected, actual) {
  if (!Buffer.isBuffer(actual)) return `returned ${actual === null ? 'null' : typeof actual}, not a Buffer`;
  if (actual.length !== expected.length) return `${actual.length} bytes instead of ${expected.length}`;
  if (actual.equals(expected)) return null;
  let i = 0;
  while (actual[i] === expected[i]) i++;
  return `right length, different bytes from byte ${i}`;
}

/** A Map from driver to the error that disqualifies it in this trial. */
async function verifyDrivers(trial, ctx, active, baseline) {
  const errors = new Map();
  let expected;
  try {
    expected = await trial.run(baseline, ctx);
  } catch (err) {
    errors.set(baseline, `threw: ${err.message}`);
  }
  for (const driver of active) {
    if (driver === baseline) continue;
    try {
      const result = await trial.run(driver, ctx);
      const mismatch = expected === undefined ? null : resultMismatch(expected, result);
      if (mismatch) errors.set(driver, `wrong result: ${mismatch}`);
    } catch (err) {
      errors.set(driver, `threw: ${err.message}`);
    }
  }
  return errors;
}

/** One run of one driver: a tinybench task; returns its latency samples in ms. */
async function timeDriver(trial, ctx, driver, options) {
  // tinybench is ESM only; import() loads it on every node 20, require() only from 20.19.
  const { Bench } = await import('tinybench');
  const bench = new Bench({
    time: options.time,
    iterations: Math.ceil(MIN_SAMPLES / options.rounds),
    warmupTime: WARMUP_MS,
    warmupIterations: WARMUP_ITERATIONS,
    setup: () => globalThis.gc(),
    throws: true,
  });
  bench.add(driver.name, driver.async
    ? async () => consume(await trial.run(driver, ctx))
    : () => consume(trial.run(driver, ctx)));
  await bench.run();
  return bench.tasks[0].result.latency.samples;
}

async function runTrial(trial, ctx, active, baseline, options) {
  const errors = await verifyDrivers(trial, ctx, active, baseline);
  progress(errors.size === 0 ? ' every result matches\n' : '\n');
  for (const [driver, error] of errors) progress(`    ${driver.name}: ${error}\n`);
  const runs = new Map(active.map((d) => [d, []]));
  for (let round = 0; round < options.rounds; round++) {
    const order = round % 2 === 0 ? active : [...active].reverse();
    progress(`    round ${round + 1}, median µs:`);
    for (const [position, driver] of order.entries()) {
      if (errors.has(driver)) continue;
      try {
        const samples = await timeDriver(trial, ctx, driver, options);
        runs.get(driver).push({ round, position, samples });
        progress(` ${driver.name} ${report.formatNumber(report.summarize(samples, trial.bytes).medianUs)}`);
      } catch (err) {
        errors.set(driver, `threw: ${err.message}`);
        progress(` ${driver.name} failed: ${err.message}`);
      }
      // Lets a Ctrl-C in: the runs themselves never return to the event loop.
      await new Promise(setImmediate);
    }
    progress('\n');
  }
  return summarizeTrial(trial, active, baseline, runs, errors);
}

function summarizeTrial(trial, active, baseline, runs, errors) {
  const base = errors.has(baseline) ? null : report.summarize(runs.get(baseline).flatMap((r) => r.samples), trial.bytes);
  const baseRounds = new Map((errors.has(baseline) ? [] : runs.get(baseline)).map((r) => [r.round, report.summarize(r.samples, trial.bytes)]));
  return {
    name: trial.name,
    bytes: trial.bytes,
    drivers: active.map((driver) => {
      if (errors.has(driver)) return { name: driver.name, baseline: Boolean(driver.baseline), error: errors.get(driver) };
      const pooled = report.summarize(runs.get(driver).flatMap((r) => r.samples), trial.bytes);
      return {
        name: driver.name,
        baseline: Boolean(driver.baseline),
        ...pooled,
        ratio: base ? pooled.opsPerSec / base.opsPerSec : null,
        ratioOfMedians: base ? base.medianUs / pooled.medianUs : null,
        rounds: runs.get(driver).map(({ round, position, samples }) => {
          const figures = report.summarize(samples, trial.bytes);
          const baseRound = baseRounds.get(round);
          return { round, position, ...figures, ratio: baseRound ? figures.opsPerSec / baseRound.opsPerSec : null };
        }),
      };
    }),
  };
}

async function runTarget(target, trials, active, baseline, options) {
  const scratch = fs.mkdtempSync(path.join(target.realpath, 'smartread-bench-'));
  scratchDirs.add(scratch);
  const results = [];
  try {
    for (const trial of trials) {
      const started = performance.now();
      progress(`  ${trial.name}:`);
      const ctx = trial.setup(scratch);
      progress(' files ready,');
      try {
        results.push(await runTrial(trial, ctx, active, baseline, options));
      } finally {
        trial.teardown(ctx);
      }
      progress(`    (${((performance.now() - started) / 1000).toFixed(1)} s)\n`);
    }
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
    scratchDirs.delete(scratch);
  }
  return results;
}

async function main() {
  const startedAt = new Date();
  const started = performance.now();
  const machine = report.machineInfo();
  const options = parseOptions(process.argv.slice(2));
  if (options.help) {
    console.log(usage);
    return;
  }
  removeScratchDirsOnExit();
  const trials = trialsFor(options.sizes).filter((t) => !options.filter || options.filter.test(t.name));
  if (trials.length === 0) throw new UsageError('no trial matches --sizes and --filter');
  const driverStatus = drivers.map((d) => ({ driver: d, available: d.available() }));
  const active = driverStatus.filter((s) => s.available === true).map((s) => s.driver);
  const skipped = driverStatus.filter((s) => s.available !== true);
  const baseline = drivers.find((d) => d.baseline);
  if (!active.includes(baseline)) throw new Error(`the baseline driver ${baseline.name} is not available`);
  const targets = options.dirs.map((dir) => {
    try {
      return describeTarget(dir);
    } catch (err) {
      throw new UsageError(`--dir ${dir}: ${err.message}`);
    }
  });

  progress(`smartread bench: ${trials.length} trials × ${active.length} drivers × ${targets.length} targets; `
    + `${options.rounds} rounds per trial of ≥${options.time} ms per driver, ≥${MIN_SAMPLES} reads per driver over all rounds\n`);
  for (const s of skipped) progress(`skipped driver ${s.driver.name}: ${s.available}\n`);

  const targetResults = [];
  for (const [i, target] of targets.entries()) {
    progress(`[${i + 1}/${targets.length}] ${report.targetHeading(target)}\n`);
    targetResults.push({ ...target, trials: await runTarget(target, trials, active, baseline, options) });
  }

  const engine = smartread ? smartread.engineInfo() : null;
  const durationMs = performance.now() - started;
  console.log(`\nvs base: ops/s ÷ ${baseline.name}'s ops/s in this run, all rounds pooled; rounds: the same ratio per round`);
  for (const t of targetResults) {
    console.log(`\n${report.targetHeading(t)}`);
    console.log(report.targetTable(t));
  }
  console.log('');
  for (const s of skipped) console.log(`skipped: ${s.driver.name}: ${s.available}`);
  console.log(`engine:   ${report.describeEngine(engine)}`);
  console.log(`machine:  ${report.describeMachine(machine)}`);
  console.log(`run time: ${report.formatDuration(durationMs)}`);

  if (options.json) {
    const document = {
      format: 'smartread-bench/1',
      startedAt: startedAt.toISOString(),
      durationMs,
      options: {
        sizes: options.sizes.map(sizeLabel),
        filter: options.filter ? options.filter.source : null,
        timeMs: options.time,
        rounds: options.rounds,
        minSamples: MIN_SAMPLES,
        warmupMs: WARMUP_MS,
      },
      machine,
      engine,
      drivers: driverStatus.map((s) => ({ name: s.driver.name, baseline: Boolean(s.driver.baseline), available: s.available })),
      targets: targetResults,
    };
    fs.writeFileSync(options.json, `${JSON.stringify(document, null, 2)}\n`);
    console.log(`json:     ${path.resolve(options.json)}`);
  }

  const failures = targetResults.flatMap((t) => t.trials.flatMap((tr) => tr.drivers)).filter((d) => d.error);
  if (failures.length > 0) {
    console.error(`\n${failures.length} driver run(s) failed; see ERROR rows above`);
    process.exitCode = 1;
  }
}

function restartWithGc() {
  const child = spawn(process.execPath, [...process.execArgv, '--expose-gc', __filename, ...process.argv.slice(2)], {
    stdio: 'inherit',
  });
  // A signal is passed on, and this process waits for the child to clean up and exit.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? 128 + os.constants.signals[signal]));
}

if (typeof globalThis.gc !== 'function' && !process.execArgv.includes('--expose-gc')) {
  restartWithGc();
} else {
  main().catch((err) => {
    if (err instanceof UsageError) {
      console.error(`bench: ${err.message}\n${usage}`);
      process.exitCode = 2;
    } else {
      console.error(err);
      process.exitCode = 1;
    }
  });
}
