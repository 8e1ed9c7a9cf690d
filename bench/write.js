#!/usr/bin/env node
// `npm run bench:write`: the write side's trials × drivers × target directories, reported as
// ratios against the baseline (the sync loop node:fs users write today) and the reference
// (fs.promises, 64 in flight), both measured in the same run.
//
//   node bench/write.js [--dir DIR]... [--trials tree,nested,large] [--rounds N] [--ops N]
//                       [--files N] [--dirs N] [--nested N] [--large SIZE] [--filter REGEX]
//                       [--peers] [--limits] [--json FILE]
//
// How one trial is measured, so that every driver runs under the same conditions:
// - An operation writes the trial's whole set into a place that is new: a fresh tree (its top
//   directory does not exist), a fresh directory for the nested paths, a fresh name for the
//   large file. Making that place ready and removing what the operation wrote happen outside
//   the timed region, and so does a full GC before each driver's run.
// - Every driver does one untimed operation first, and its result is checked (every file's
//   bytes, every path a directory); a driver whose result is wrong, or that throws, is reported
//   with the error and not timed.
// - The drivers then run in rounds, in ABBA order (round 1 in the listed order, round 2
//   reversed, ...), each for --ops operations per round, each operation timed alone. Figures
//   pool all rounds: the median operation, units per second from the mean, "vs sync" and "vs
//   promises" as ratios of those rates; "rounds" is vs sync per round, whose spread is the
//   noise of the ratio.
// - --peers adds Bun's drivers (Bun.write and Bun's node:fs), each run a Bun process timing its
//   own operations the same way (write_peer_runner.js); --limits adds a C program doing the
//   fewest syscalls each trial can be done in (write_limits.c): the ceiling the targets are
//   measured against.
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { parseArgs } = require('node:util');

const report = require('./report');
const { smartread, smartreadLoaded, uringUsable } = require('./smartread');
const { defaultTargetDirs, describeTarget } = require('./targets');
const { DEFAULTS, writeTrials } = require('./write_trials');
const { prepareBun, runBun, prepareLimits, runLimits } = require('./write_peers');
const { parseSize } = require('./trials');

const IN_FLIGHT = 64;
// Operations per driver per round, by trial: a nested operation makes 700,000 directories.
const OPERATIONS = { tree: 5, nested: 1, large: 3 };
const ROUNDS = 4;

const usage = `usage: node bench/write.js [options]
  --dir DIR        a directory to write in; repeatable (default: ${os.tmpdir()}, and /dev/shm)
  --trials LIST    tree, nested, large (default: all)
  --rounds N       rounds per trial, drivers in ABBA order (default ${ROUNDS})
  --ops N          timed operations per driver per round (default: tree ${OPERATIONS.tree}, nested ${OPERATIONS.nested}, large ${OPERATIONS.large})
  --files N        files in the tree trial (default ${DEFAULTS.files})
  --dirs N         directories they go into (default ${DEFAULTS.dirs})
  --nested N       paths in the nested trial (default ${DEFAULTS.nested.toLocaleString('en-US')}, depth ${DEFAULTS.depth})
  --large SIZE     the large file, e.g. 128m (default)
  --filter REGEX   only drivers whose name matches (the baselines always run)
  --peers          also Bun's drivers (installed into the bench's cache on first use)
  --limits         also the C program of the machine's limits (compiled on first use)
  --json FILE      write every measurement to FILE
  -h, --help       this text
The trials: tree, ${DEFAULTS.files.toLocaleString('en-US')} files of 4 KiB into a fresh tree of ${DEFAULTS.dirs} directories; nested,
${DEFAULTS.nested.toLocaleString('en-US')} paths of depth ${DEFAULTS.depth}, each with its own top directory, in a fresh directory; large,
one 128 MiB file.`;

class UsageError extends Error {}

function parseOptions(argv) {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        dir: { type: 'string', multiple: true },
        trials: { type: 'string' },
        rounds: { type: 'string' },
        ops: { type: 'string' },
        files: { type: 'string' },
        dirs: { type: 'string' },
        nested: { type: 'string' },
        large: { type: 'string' },
        filter: { type: 'string' },
        peers: { type: 'boolean' },
        limits: { type: 'boolean' },
        json: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    throw new UsageError(err.message);
  }
  const positive = (name, text, fallback) => {
    if (text === undefined) return fallback;
    const n = Number(text);
    if (!Number.isInteger(n) || n < 1) throw new UsageError(`--${name} must be a positive integer: ${text}`);
    return n;
  };
  const kinds = values.trials === undefined ? ['tree', 'nested', 'large'] : values.trials.split(',').filter(Boolean);
  for (const kind of kinds) if (!['tree', 'nested', 'large'].includes(kind)) throw new UsageError(`--trials: no trial '${kind}'`);
  let large = DEFAULTS.large;
  if (values.large !== undefined) {
    large = parseSize(values.large);
    if (!(large > 0)) throw new UsageError(`--large: not a size: ${values.large}`);
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
    kinds,
    rounds: positive('rounds', values.rounds, ROUNDS),
    ops: values.ops === undefined ? null : positive('ops', values.ops, 1),
    sizes: {
      files: positive('files', values.files, DEFAULTS.files),
      dirs: positive('dirs', values.dirs, DEFAULTS.dirs),
      nested: positive('nested', values.nested, DEFAULTS.nested),
      large,
    },
    filter,
    peers: Boolean(values.peers),
    limits: Boolean(values.limits),
    json: values.json ?? null,
  };
}

const progress = (text) => process.stderr.write(text);

/** Runs each(i) for i in 0..count-1 with `inFlight` at once. */
async function inFlight(count, each, lanes = IN_FLIGHT) {
  let next = 0;
  const lane = async () => {
    while (next < count) await each(next++);
  };
  await Promise.all(Array.from({ length: Math.min(lanes, count) }, lane));
}

// The drivers. Each: { name, kind, role, run(ctx) } for this process, or { peer } / { limit }
// for Bun and C. role: 'baseline' (the sync loop, every ratio's denominator), 'reference'
// (fs.promises ×64), 'ours', 'peer', 'limit'. available() says true or why not.
function nodeDrivers() {
  const sr = smartread;
  const loaded = () => smartreadLoaded();
  const uring = () => uringUsable();
  return [
    // 2,000 × 4 KiB into a fresh tree.
    { kind: 'tree', role: 'baseline', name: 'fs sync loop (mkdirSync recursive + writeFileSync)', run(ctx) {
      for (const e of ctx.entries) {
        fs.mkdirSync(path.dirname(e.path), { recursive: true });
        fs.writeFileSync(e.path, e.data);
      }
    } },
    { kind: 'tree', role: 'reference', name: 'fs.promises ×64 (mkdir recursive + writeFile)', run: (ctx) => inFlight(ctx.entries.length, async (i) => {
      const e = ctx.entries[i];
      await fs.promises.mkdir(path.dirname(e.path), { recursive: true });
      await fs.promises.writeFile(e.path, e.data);
    }) },
    { kind: 'tree', role: 'ours', name: 'writeMany auto', available: loaded, run: (ctx) => sr.writeMany(ctx.entries, { mkdirs: true }) },
    { kind: 'tree', role: 'ours', name: 'writeMany uring', available: uring, run: (ctx) => sr.writeMany(ctx.entries, { mkdirs: true, strategy: 'uring' }) },
    { kind: 'tree', role: 'ours', name: 'writeMany threadpool', available: loaded, run: (ctx) => sr.writeMany(ctx.entries, { mkdirs: true, strategy: 'threadpool' }) },
    { kind: 'tree', role: 'ours', name: 'writeMany sync', available: loaded, run: (ctx) => sr.writeMany(ctx.entries, { mkdirs: true, strategy: 'sync' }) },
    { kind: 'tree', role: 'ours', name: 'writeMany auto, atomic', available: loaded, run: (ctx) => sr.writeMany(ctx.entries, { mkdirs: true, atomic: true }) },
    { kind: 'tree', role: 'ours', name: 'smartWriteFile auto ×64 (mkdirs)', available: loaded, run: (ctx) => inFlight(ctx.entries.length, (i) => sr.smartWriteFile(ctx.entries[i].path, ctx.entries[i].data, { mkdirs: true })) },
    { kind: 'tree', role: 'ours', name: 'smartWriteFile uring ×64 (mkdirs)', available: uring, run: (ctx) => inFlight(ctx.entries.length, (i) => sr.smartWriteFile(ctx.entries[i].path, ctx.entries[i].data, { mkdirs: true, strategy: 'uring' })) },
    { kind: 'tree', role: 'ours', name: 'smartWriteFile threadpool ×64 (mkdirs)', available: loaded, run: (ctx) => inFlight(ctx.entries.length, (i) => sr.smartWriteFile(ctx.entries[i].path, ctx.entries[i].data, { mkdirs: true, strategy: 'threadpool' })) },
    { kind: 'tree', role: 'ours', name: 'smartWriteFileSync loop (mkdirs)', available: loaded, run(ctx) {
      for (const e of ctx.entries) sr.smartWriteFileSync(e.path, e.data, { mkdirs: true });
    } },
    // 100,000 nested paths of depth 7.
    { kind: 'nested', role: 'baseline', name: 'fs.mkdirSync loop (recursive)', run(ctx) {
      for (const p of ctx.paths) fs.mkdirSync(p, { recursive: true });
    } },
    { kind: 'nested', role: 'reference', name: 'fs.promises.mkdir ×64 (recursive)', run: (ctx) => inFlight(ctx.paths.length, (i) => fs.promises.mkdir(ctx.paths[i], { recursive: true })) },
    { kind: 'nested', role: 'ours', name: 'mkdirMany auto', available: loaded, run: (ctx) => sr.mkdirMany(ctx.paths) },
    { kind: 'nested', role: 'ours', name: 'mkdirMany uring', available: uring, run: (ctx) => sr.mkdirMany(ctx.paths, { strategy: 'uring' }) },
    { kind: 'nested', role: 'ours', name: 'mkdirMany threadpool', available: loaded, run: (ctx) => sr.mkdirMany(ctx.paths, { strategy: 'threadpool' }) },
    { kind: 'nested', role: 'ours', name: 'mkdirAll auto ×64', available: loaded, run: (ctx) => inFlight(ctx.paths.length, (i) => sr.mkdirAll(ctx.paths[i])) },
    { kind: 'nested', role: 'ours', name: 'mkdirAll uring ×64', available: uring, run: (ctx) => inFlight(ctx.paths.length, (i) => sr.mkdirAll(ctx.paths[i], { strategy: 'uring' })) },
    { kind: 'nested', role: 'ours', name: 'mkdirAll threadpool ×64', available: loaded, run: (ctx) => inFlight(ctx.paths.length, (i) => sr.mkdirAll(ctx.paths[i], { strategy: 'threadpool' })) },
    { kind: 'nested', role: 'ours', name: 'mkdirAllSync loop', available: loaded, run(ctx) {
      for (const p of ctx.paths) sr.mkdirAllSync(p);
    } },
    // One 128 MiB file.
    { kind: 'large', role: 'baseline', name: 'fs.writeFileSync', run: (ctx) => fs.writeFileSync(ctx.file, ctx.data) },
    { kind: 'large', role: 'reference', name: 'fs.promises.writeFile', run: (ctx) => fs.promises.writeFile(ctx.file, ctx.data) },
    { kind: 'large', role: 'ours', name: 'smartWriteFile auto', available: loaded, run: (ctx) => sr.smartWriteFile(ctx.file, ctx.data) },
    { kind: 'large', role: 'ours', name: 'smartWriteFile uring', available: uring, run: (ctx) => sr.smartWriteFile(ctx.file, ctx.data, { strategy: 'uring' }) },
    { kind: 'large', role: 'ours', name: 'smartWriteFile threadpool', available: loaded, run: (ctx) => sr.smartWriteFile(ctx.file, ctx.data, { strategy: 'threadpool' }) },
    { kind: 'large', role: 'ours', name: 'smartWriteFileSync', available: loaded, run: (ctx) => sr.smartWriteFileSync(ctx.file, ctx.data) },
    { kind: 'large', role: 'ours', name: 'smartWriteFile auto, atomic', available: loaded, run: (ctx) => sr.smartWriteFile(ctx.file, ctx.data, { atomic: true }) },
  ];
}

const PEER_DRIVERS = [
  ['tree', 'Bun.write ×64'], ['tree', 'Bun fs sync loop'], ['tree', 'Bun fs.promises ×64'],
  ['nested', 'Bun fs.mkdirSync loop'], ['nested', 'Bun fs.promises.mkdir ×64'],
  ['large', 'Bun.write'], ['large', 'Bun fs.writeFileSync'],
];
const LIMIT_DRIVERS = [
  ['tree', 'loop'], ['tree', 'threads2'], ['tree', 'threads4'], ['tree', 'uring64'],
  ['nested', 'node-walk'], ['nested', 'top-down'], ['nested', 'threads2'], ['nested', 'uring64'],
  ['large', 'write'],
];

/**
 * One run of a driver: `operations` operations, each in a place prepared for it; the latencies
 * in ms. Throws when the driver throws; with verify, returns the first operation's problem.
 */
async function runDriver(driver, trial, ctxFor, operations, sizes, verify) {
  if (driver.peer || driver.limit) {
    const request = { kind: trial.kind, sizes: { ...DEFAULTS, ...sizes }, operations, scratch: ctxFor.scratch, verify };
    const out = driver.peer
      ? await runBun(driver.peer, { ...request, driver: driver.peerName })
      : await runLimits(driver.limit, { ...request, mode: driver.mode });
    if (out.error) throw new Error(out.error);
    return out.samples;
  }
  globalThis.gc?.();
  const samples = [];
  for (let k = 0; k < operations; k++) {
    const ctx = ctxFor.next();
    try {
      const started = performance.now();
      await driver.run(ctx);
      samples.push(performance.now() - started);
      if (verify) {
        const problem = trial.verify(ctx);
        if (problem) throw new Error(`wrong result: ${problem}`);
      }
    } finally {
      trial.clean(ctx);
    }
  }
  return samples;
}

/** Figures of pooled latencies: median ms, units per second (from the mean). */
function figures(samples, trial) {
  const s = report.summarize(samples, { bytes: 0, files: 1 });
  return { samples: s.samples, medianMs: s.medianUs / 1e3, p99Ms: s.p99Us / 1e3, opsPerSec: s.opsPerSec, unitsPerSec: s.opsPerSec * trial.perOperation };
}

async function runTrial(trial, drivers, scratch, options) {
  let n = 0;
  const ctxFor = { scratch, next: () => trial.prepare(path.join(scratch, `op-${n++}`)) };
  const operations = options.ops ?? OPERATIONS[trial.kind];
  const errors = new Map();
  // Every driver once, untimed, checked.
  for (const driver of drivers) {
    try {
      await runDriver(driver, trial, ctxFor, 1, options.sizes, true);
    } catch (err) {
      errors.set(driver, err.message);
      progress(`    ${driver.name}: ${err.message}\n`);
    }
  }
  const runs = new Map(drivers.map((d) => [d, []]));
  for (let round = 0; round < options.rounds; round++) {
    const order = round % 2 === 0 ? drivers : [...drivers].reverse();
    progress(`    round ${round + 1}, median ms:`);
    for (const driver of order) {
      if (errors.has(driver)) continue;
      try {
        const samples = await runDriver(driver, trial, ctxFor, operations, options.sizes, false);
        runs.get(driver).push({ round, samples });
        progress(` ${driver.short ?? driver.name} ${report.formatNumber(figures(samples, trial).medianMs)}`);
      } catch (err) {
        errors.set(driver, err.message);
        progress(` ${driver.name} failed: ${err.message}`);
      }
    }
    progress('\n');
  }
  const pooled = (d) => (errors.has(d) || runs.get(d).length === 0 ? null : figures(runs.get(d).flatMap((r) => r.samples), trial));
  const perRound = (d, round) => {
    const r = runs.get(d)?.find((x) => x.round === round);
    return r ? figures(r.samples, trial) : null;
  };
  const baseline = drivers.find((d) => d.role === 'baseline');
  const reference = drivers.find((d) => d.role === 'reference');
  const base = baseline && pooled(baseline);
  const ref = reference && pooled(reference);
  return {
    name: trial.name,
    kind: trial.kind,
    unit: trial.unit,
    perOperation: trial.perOperation,
    operationsPerRound: operations,
    drivers: drivers.map((d) => {
      const identity = { name: d.name, role: d.role };
      if (errors.has(d)) return { ...identity, error: errors.get(d) };
      const own = pooled(d);
      return {
        ...identity,
        ...own,
        ratio: base ? own.unitsPerSec / base.unitsPerSec : null,
        ratioToReference: ref ? own.unitsPerSec / ref.unitsPerSec : null,
        rounds: runs.get(d).map(({ round, samples }) => {
          const f = figures(samples, trial);
          const b = perRound(baseline, round);
          return { round, samples, medianMs: f.medianMs, unitsPerSec: f.unitsPerSec, ratio: b ? f.unitsPerSec / b.unitsPerSec : null };
        }),
      };
    }),
  };
}

// The issue's targets, each a ratio of two drivers of one trial: [kind, ours, against, at least].
const GOALS = [
  ['tree', 'writeMany auto', 'fs.promises ×64 (mkdir recursive + writeFile)', 2.5],
  ['tree', 'writeMany auto', 'fs sync loop (mkdirSync recursive + writeFileSync)', 1.5],
  ['tree', 'writeMany auto', 'Bun (best)', 1.0],
  ['nested', 'mkdirMany auto', 'fs.mkdirSync loop (recursive)', 2.0],
  ['large', 'smartWriteFile auto', 'fs.writeFileSync', 1.0],
];

function goals(targetResults) {
  const out = [];
  for (const target of targetResults) {
    for (const [kind, ours, against, atLeast] of GOALS) {
      const trial = target.trials.find((t) => t.kind === kind);
      if (!trial) continue;
      const rate = (name) => {
        const rows = name === 'Bun (best)'
          ? trial.drivers.filter((d) => d.role === 'peer' && d.unitsPerSec)
          : trial.drivers.filter((d) => d.name === name && d.unitsPerSec);
        return rows.length === 0 ? null : Math.max(...rows.map((d) => d.unitsPerSec));
      };
      const a = rate(ours);
      const b = rate(against);
      // The ceiling: the best C mode, where --limits ran.
      const limit = trial.drivers.filter((d) => d.role === 'limit' && d.unitsPerSec).reduce((m, d) => Math.max(m, d.unitsPerSec), 0) || null;
      out.push({
        target: target.dir, trial: trial.name, ours, against, atLeast,
        ratio: a && b ? a / b : null,
        met: a && b ? a / b >= atLeast : null,
        limitRatio: limit && b ? limit / b : null,
      });
    }
  }
  return out;
}

function unitLabel(unit) {
  return unit === 'MB' ? 'MB/s' : `${unit}/s`;
}

function trialTable(trial) {
  const columns = ['driver', 'median ms', unitLabel(trial.unit), 'vs sync', 'vs promises', 'rounds'];
  const rows = trial.drivers.map((d) => {
    if (d.skipped) return [d.name, '—', '—', '—', '—', `skipped: ${d.skipped}`];
    if (d.error) return [d.name, '—', '—', '—', '—', `ERROR ${d.error}`];
    return [
      d.name,
      report.formatNumber(d.medianMs),
      report.formatNumber(d.unitsPerSec),
      report.formatRatio(d.ratio),
      report.formatRatio(d.ratioToReference),
      d.role === 'baseline' ? '' : d.rounds.map((r) => (r.ratio === null ? '—' : r.ratio.toFixed(2))).join(' '),
    ];
  });
  const widths = columns.map((c, i) => Math.max(c.length, ...rows.map((r) => r[i].length)));
  const line = (cells) => cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : i === cells.length - 1 ? cell : cell.padStart(widths[i]))).join('  ').trimEnd();
  return [line(columns), ...rows.map(line)].join('\n');
}

async function main(options) {
  const startedAt = new Date();
  const started = performance.now();
  const machine = report.machineInfo();
  const trials = writeTrials(options.sizes).filter((t) => options.kinds.includes(t.kind));
  const all = nodeDrivers();
  const chosen = all.filter((d) => d.role === 'baseline' || d.role === 'reference' || !options.filter || options.filter.test(d.name));
  const skipped = [];
  const drivers = [];
  for (const d of chosen) {
    const available = d.available ? d.available() : true;
    if (available === true) drivers.push(d);
    else skipped.push({ name: d.name, kind: d.kind, why: available });
  }
  if (options.peers) {
    try {
      const bun = await prepareBun(progress);
      progress(`peers: bun ${bun.version} (${bun.binary})\n`);
      for (const [kind, name] of PEER_DRIVERS) {
        if (!options.filter || options.filter.test(name)) drivers.push({ kind, role: 'peer', name: `${name} (bun ${bun.version})`, short: name, peer: bun, peerName: name });
      }
    } catch (err) {
      for (const [kind, name] of PEER_DRIVERS) skipped.push({ name, kind, why: err.message });
    }
  }
  if (options.limits) {
    try {
      const binary = await prepareLimits(progress);
      for (const [kind, mode] of LIMIT_DRIVERS) drivers.push({ kind, role: 'limit', name: `C: ${mode}`, limit: binary, mode });
    } catch (err) {
      for (const [kind, mode] of LIMIT_DRIVERS) skipped.push({ name: `C: ${mode}`, kind, why: err.message });
    }
  }
  const targets = options.dirs.map((dir) => {
    try {
      return describeTarget(dir);
    } catch (err) {
      throw new UsageError(`--dir ${dir}: ${err.message}`);
    }
  });
  progress(`smartread write bench: ${trials.length} trials × ${targets.length} targets; ${options.rounds} rounds in ABBA order\n`);
  for (const s of skipped) progress(`skipped driver ${s.name}: ${s.why}\n`);

  const targetResults = [];
  for (const [i, target] of targets.entries()) {
    progress(`[${i + 1}/${targets.length}] ${report.targetHeading(target)}\n`);
    const scratch = fs.mkdtempSync(path.join(target.realpath, 'smartread-write-bench-'));
    const results = [];
    try {
      for (const trial of trials) {
        const t0 = performance.now();
        progress(`  ${trial.name}:\n`);
        const result = await runTrial(trial, drivers.filter((d) => d.kind === trial.kind), scratch, options);
        for (const s of skipped.filter((x) => x.kind === trial.kind)) result.drivers.push({ name: s.name, role: 'skipped', skipped: s.why });
        results.push(result);
        progress(`    (${((performance.now() - t0) / 1000).toFixed(1)} s)\n`);
      }
    } finally {
      fs.rmSync(scratch, { recursive: true, force: true });
    }
    targetResults.push({ ...target, trials: results });
  }

  const reached = goals(targetResults);
  console.log('\nvs sync: units/s ÷ the sync loop\'s in this run; vs promises: ÷ fs.promises ×64\'s; rounds: vs sync per round (their spread is the noise)');
  for (const t of targetResults) {
    console.log(`\n${report.targetHeading(t)}`);
    for (const trial of t.trials) console.log(`\n${trial.name} (${trial.operationsPerRound} operation(s) per driver per round)\n${trialTable(trial)}`);
  }
  console.log('\ntargets:');
  for (const g of reached) {
    const verdict = g.met === null ? 'not measured' : g.met ? 'met' : 'NOT met';
    const ceiling = g.limitRatio === null ? '' : `; the C limit is ${g.limitRatio.toFixed(2)}×`;
    console.log(`  ${g.target} ${g.trial}: ${g.ours} ÷ ${g.against} = ${g.ratio === null ? '—' : `${g.ratio.toFixed(2)}×`} (≥ ${g.atLeast}×: ${verdict}${ceiling})`);
  }
  console.log(`engine:   ${report.describeEngine(smartread ? smartread.engineInfo() : null)}`);
  console.log(`machine:  ${report.describeMachine(machine)}`);
  console.log(`run time: ${report.formatDuration(performance.now() - started)}`);

  if (options.json) {
    const document = {
      format: 'smartread-write-bench/1',
      startedAt: startedAt.toISOString(),
      durationMs: performance.now() - started,
      command: ['node', 'bench/write.js', ...process.argv.slice(2)].join(' '),
      options: { kinds: options.kinds, rounds: options.rounds, ops: options.ops, sizes: options.sizes, peers: options.peers, limits: options.limits },
      machine,
      engine: smartread ? smartread.engineInfo() : null,
      targets: targetResults,
      goals: reached,
    };
    fs.writeFileSync(options.json, `${JSON.stringify(document, null, 2)}\n`);
    console.log(`json:     ${path.resolve(options.json)}`);
  }
  const failures = targetResults.flatMap((t) => t.trials.flatMap((tr) => tr.drivers)).filter((d) => d.error);
  if (failures.length > 0) {
    console.error(`\n${failures.length} driver(s) failed; see ERROR rows above`);
    process.exitCode = 1;
  }
}

async function start() {
  const options = parseOptions(process.argv.slice(2));
  if (options.help) {
    console.log(usage);
    return;
  }
  if (typeof globalThis.gc !== 'function') {
    // A full GC before each driver's run needs --expose-gc, which npm run cannot pass.
    const child = spawn(process.execPath, [...process.execArgv, '--expose-gc', __filename, ...process.argv.slice(2)], { stdio: 'inherit' });
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
    child.on('exit', (code, signal) => process.exit(code ?? 128 + os.constants.signals[signal]));
    return;
  }
  await main(options);
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
