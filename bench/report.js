// Turning latency samples into figures, figures into tables, and saying what ran where.
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const { COMPARISONS, comparisonLabel } = require('./comparisons');

// Linear interpolation between closest ranks (numpy's default).
function quantile(sorted, q) {
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

/**
 * Figures for a set of latency samples in milliseconds (tinybench's unit), of operations that
 * each deliver `bytes` in `files` files. ops/s is the reciprocal of the mean latency, what a
 * loop of these operations achieves, rather than the mean of per-sample rates, which fast
 * outliers inflate.
 */
function summarize(samplesMs, { bytes, files }) {
  const sorted = Float64Array.from(samplesMs).sort();
  let total = 0;
  for (const s of sorted) total += s;
  const meanMs = total / sorted.length;
  const opsPerSec = 1e3 / meanMs;
  return {
    samples: sorted.length,
    meanUs: meanMs * 1e3,
    medianUs: quantile(sorted, 0.5) * 1e3,
    p99Us: quantile(sorted, 0.99) * 1e3,
    minUs: sorted[0] * 1e3,
    maxUs: sorted[sorted.length - 1] * 1e3,
    opsPerSec,
    filesPerSec: files * opsPerSec,
    mbPerSec: (bytes * opsPerSec) / 1e6,
  };
}

/** Three significant digits, no exponent, thousands grouped: 6.12, 61.2, 612, 6,123. */
function formatNumber(value) {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  if (value >= 1000) return Math.round(value).toLocaleString('en-US');
  if (value >= 100) return value.toFixed(0);
  if (value >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

function formatRatio(ratio) {
  return ratio === null ? '—' : `${ratio.toFixed(2)}×`;
}

function formatDuration(ms) {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

/**
 * Rows of strings as aligned text. `columns` is [{ title, align: 'left' | 'right' }]; the last
 * column is never padded, so long notes there do not widen the table.
 */
function formatTable(columns, rows) {
  const widths = columns.map((c, i) => Math.max(c.title.length, ...rows.map((r) => r[i].length)));
  const line = (cells) => cells.map((cell, i) => {
    if (i === cells.length - 1 && columns[i].align === 'left') return cell;
    return columns[i].align === 'left' ? cell.padEnd(widths[i]) : cell.padStart(widths[i]);
  }).join('  ').trimEnd();
  return [line(columns.map((c) => c.title)), ...rows.map(line)].join('\n');
}

/** The latency at every whole percentile 0–100 of pooled samples in ms, in µs: the distribution behind median and p99. */
function latencyPercentiles(samplesMs) {
  const sorted = Float64Array.from(samplesMs).sort();
  return Array.from({ length: 101 }, (_, p) => Number((quantile(sorted, p / 100) * 1e3).toPrecision(6)));
}

const MB = 1e6;

// The columns of a target's table, in the terminal and in the Markdown report alike.
const tableColumns = [
  { title: 'trial', align: 'left' },
  { title: 'driver', align: 'left' },
  { title: 'median µs', align: 'right' },
  { title: 'p99 µs', align: 'right' },
  { title: 'ops/s', align: 'right' },
  { title: 'MB/s', align: 'right' },
  { title: 'vs sync', align: 'right' },
  { title: 'vs promises', align: 'right' },
  { title: 'loop max/p99 ms', align: 'right' },
  { title: 'GC max ms', align: 'right' },
  { title: 'peak RSS MB', align: 'right' },
  { title: 'faults/op', align: 'right' },
  { title: 'CPU busy/daemon %', align: 'right' },
  { title: 'rounds', align: 'left' },
];

/** What the columns of the tables mean. */
function legend(loopResolutionMs) {
  return [
    'vs sync: ops/s ÷ the baseline\'s (fs.readFileSync; its loop for many files) in this run, all rounds pooled',
    'vs promises: ops/s ÷ fs.promises.readFile\'s (64 in flight for many files), likewise',
    'rounds: vs sync per round, in round order; their spread is the noise of the ratio',
    `loop max/p99 ms: the event loop's longest stall / worst p99 stall while an async driver read (monitorEventLoopDelay, ${loopResolutionMs} ms resolution, and the wait for the loop's first turn);`,
    '  — for a sync driver, which blocks the loop for each whole read (see p99 µs)',
    'GC max ms: V8\'s longest single pause (\'gc\' performance entries) while the loop was watched; — where the runtime does not report them (Bun, Deno)',
    'peak RSS MB: the process\'s peak resident memory during the driver\'s timed operations; faults/op: page faults (minor + major) per operation',
    'CPU busy/daemon %: in a cold trial, the share of every CPU\'s time that was busy while the operations ran, and the share the mount\'s FUSE daemon took of it (/proc, clock ticks)',
  ].join('\n');
}

// The per-round ratios, in round order; their spread is the noise of the ratio.
function formatRoundRatios(rounds) {
  const ratios = rounds.map((r) => r.ratio).filter((r) => r !== null);
  if (ratios.length <= 4) return ratios.map((r) => r.toFixed(2)).join(' ');
  return `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}`;
}

function formatLoopStall(loopStall) {
  return loopStall ? `${formatNumber(loopStall.maxMs)}/${formatNumber(loopStall.p99Ms)}` : '—';
}

function formatCpu(cpu) {
  if (!cpu) return '—';
  const percent = (share) => (share * 100).toFixed(0);
  return cpu.daemon === null ? percent(cpu.busy) : `${percent(cpu.busy)}/${percent(cpu.daemon)}`;
}

function formatGcPause(loopStall) {
  return typeof loopStall?.gcMaxMs === 'number' ? formatNumber(loopStall.gcMaxMs) : '—';
}

/** A target's rows of cells (strings), one per trial and driver, in driver order. */
function targetRows(targetResult) {
  const rows = [];
  const blank = tableColumns.length - 3;
  const dashes = () => Array(blank).fill('—');
  for (const trial of targetResult.trials) {
    if (trial.skipped) {
      rows.push([trial.name, '—', ...dashes(), `skipped: ${trial.skipped}`]);
      continue;
    }
    trial.drivers.forEach((d, i) => {
      const name = i === 0 ? trial.name : '';
      if (d.skipped) {
        rows.push([name, d.name, ...dashes(), `skipped: ${d.skipped}`]);
        return;
      }
      if (d.error) {
        rows.push([name, d.name, ...dashes(), `ERROR ${d.error}`]);
        return;
      }
      rows.push([
        name,
        d.name,
        formatNumber(d.medianUs),
        formatNumber(d.p99Us),
        formatNumber(d.opsPerSec),
        formatNumber(d.mbPerSec),
        formatRatio(d.ratio),
        formatRatio(d.ratioToReference),
        formatLoopStall(d.loopStall),
        formatGcPause(d.loopStall),
        d.resources ? formatNumber(d.resources.peakRssBytes / MB) : '—',
        d.resources ? formatNumber(d.resources.faultsPerOperation) : '—',
        formatCpu(d.cpu),
        d.baseline ? '' : formatRoundRatios(d.rounds),
      ]);
    });
  }
  return rows;
}

/** The table for one target, as aligned text. */
function targetTable(targetResult) {
  return formatTable(tableColumns, targetRows(targetResult));
}

// 'Bun fs.promises.readFile ×64' → 'fs.promises.readFile': which of a peer's readers was best.
const readerOf = (driverName) => driverName.replace(/^(Bun|Deno) /, '').replace(/ (×\d+|loop)$/, '');

/**
 * The comparisons of a target's trials (comparisons.js) as grids, one per shape: a row per
 * comparison that some trial has, a column per trial, the ratio in each cell; after the first
 * row against a "best", a row saying which reader that was. [{ columns, rows }].
 */
function comparisonGrids(targetResult) {
  const grids = [];
  const trials = targetResult.trials.filter((t) => t.comparisons?.length > 0);
  for (const shape of [...new Set(trials.map((t) => t.shape))]) {
    const columns = trials.filter((t) => t.shape === shape);
    const rows = [];
    const named = new Set();
    for (const c of COMPARISONS.filter((x) => x.shape === shape)) {
      const label = comparisonLabel(c);
      const cells = columns.map((t) => t.comparisons.find((x) => x.label === label) ?? null);
      if (cells.every((x) => x === null)) continue;
      rows.push([label, ...cells.map((x) => (x ? formatRatio(x.ratio) : '—'))]);
      if (/best/.test(c.against) && !named.has(c.against)) {
        named.add(c.against);
        rows.push([`  ${c.against}: which`, ...cells.map((x) => (x ? readerOf(x.best) : '—'))]);
      }
    }
    grids.push({
      columns: [{ title: `comparison (${shape === 'file' ? 'one file' : 'many files'})`, align: 'left' }, ...columns.map((t) => ({ title: t.name, align: 'right' }))],
      rows,
    });
  }
  return grids;
}

const COMPARISONS_HEADING = 'Comparisons: the first reader\'s ops/s ÷ the second\'s, in the same trial of this run, all rounds pooled; '
  + '"best": the one of those readers with the most ops/s there, named on the row below';

/** The comparisons of a target as aligned text, or '' when it has none. */
function comparisonTables(targetResult) {
  const grids = comparisonGrids(targetResult);
  if (grids.length === 0) return '';
  return [COMPARISONS_HEADING, ...grids.map((g) => formatTable(g.columns, g.rows))].join('\n\n');
}

const escapeMarkdownCell = (text) => text.replace(/\|/g, '\\|');

function markdownTable(columns, rows) {
  const line = (cells) => `| ${cells.map(escapeMarkdownCell).join(' | ')} |`;
  return [
    line(columns.map((c) => c.title)),
    `|${columns.map((c) => (c.align === 'right' ? '---:' : ':---')).join('|')}|`,
    ...rows.map(line),
  ].join('\n');
}

/** The same table in Markdown. */
function targetMarkdownTable(targetResult) {
  return markdownTable(tableColumns, targetRows(targetResult));
}

/** The comparisons of a target in Markdown, or '' when it has none. */
function comparisonMarkdownTables(targetResult) {
  const grids = comparisonGrids(targetResult);
  if (grids.length === 0) return '';
  return [COMPARISONS_HEADING, ...grids.map((g) => markdownTable(g.columns, g.rows))].join('\n\n');
}

function targetHeading(target) {
  const label = target.label ? `${target.label}${target.emulated ? ' (emulated)' : ''}: ` : '';
  if (target.corpus) {
    const size = target.corpus.files === null ? '' : ` (${target.corpus.files.toLocaleString('en-US')} files, ${formatNumber(target.corpus.bytes / MB)} MB, read where they lie)`;
    const mount = target.mountPoint ? ` (${target.source} on ${target.mountPoint})` : '';
    return `${label}${target.dir}${size}: ${target.fsType}${mount}${target.device ? `, ${describeDevice(target.device)}` : ''}`;
  }
  if (target.mount?.skipped) return `${label}not mounted: ${target.mount.skipped}`;
  const mount = target.mountPoint ? ` (${target.source} on ${target.mountPoint})` : '';
  const real = target.realpath === target.dir ? '' : ` → ${target.realpath}`;
  const device = target.device ? `, ${describeDevice(target.device)}` : '';
  // A mount of bench/mounts.js: the trials' files are written beneath it and read through it.
  const backing = target.mount?.backingDir ? `; files written to ${target.mount.backingDir}, read through the mount` : '';
  return `${label}${target.dir}${real}: ${target.fsType}${mount}${device}${backing}`;
}

function describeDevice(device) {
  if (!device.name) return device.kind;
  const rotational = device.rotational === null ? '' : `, ${device.rotational ? 'rotational' : 'non-rotational'} as the kernel reports it`;
  return `${device.kind} ${device.name} (${device.majorMinor}${rotational})`;
}

// "always [madvise] never" → "madvise": large fresh buffers fault per page unless it allows 2 MiB pages.
function transparentHugepages() {
  try {
    const text = fs.readFileSync('/sys/kernel/mm/transparent_hugepage/enabled', 'utf8');
    return /\[(\w+)\]/.exec(text)?.[1] ?? text.trim();
  } catch {
    return 'unknown';
  }
}

function machineInfo() {
  const cpus = os.cpus();
  return {
    hostname: os.hostname(),
    cpu: cpus.length > 0 ? cpus[0].model.trim() : 'unknown',
    cores: cpus.length,
    kernel: `${os.type()} ${os.release()}`,
    node: process.version,
    memoryBytes: os.totalmem(),
    transparentHugepages: transparentHugepages(),
    // Taken before the run: other work on the machine is the first suspect for noisy ratios.
    loadAverage1m: Number(os.loadavg()[0].toFixed(2)),
  };
}

function describeEngine(info) {
  if (!info) return 'smartread did not load';
  if (info.engine === 'native') return `native, liburing ${info.liburing ? 'yes' : 'no'} (${info.path})`;
  return `pure JS (${info.reason ?? 'no reason given'})`;
}

/** The peers of a --peers run (peers.js preparePeers' info), as one line. */
function describePeers(info) {
  if (!info) return 'none (--peers adds Bun, Deno and a C loop)';
  const each = info.runtimes.map((r) => {
    if (r.available !== true) return `${r.name} skipped (${r.available})`;
    if (r.name === 'C') return `C driver (read loop${r.uring ? ', io_uring' : ''}) built by ${r.compilerVersion} ${r.flags}`;
    return `${r.name} ${r.version} (npm ${r.pinned})`;
  });
  return `${each.join(', ')}; installed in ${info.cacheDir}, ready in ${formatNumber(info.setupMs / 1000)} s`;
}

/** Where Node's drivers were timed (index.js's runner, or --in-process), as one line. */
function describeTiming(document) {
  if (!document.runner) return "Node's drivers timed in the bench's own process (--in-process)";
  return `Node's drivers of one file or many timed in a child process of their own (node ${document.runner.version}, `
    + "--expose-gc bench/peer_runner.js), as the peers' are; the random reads in the bench's process";
}

function describeMachine(m) {
  return `${m.cpu}, ${m.cores} cores, ${m.kernel}, node ${m.node}, transparent hugepages: ${m.transparentHugepages}, 1-min load before the run ${m.loadAverage1m}`;
}

/** The idle loop's stalls, the floor under the "loop max/p99 ms" column, as one line. */
function describeLoopFloor(floor) {
  return `an idle event loop, watched for ${formatNumber(floor.durationMs / 1000)} s before the trials, stalled up to ${formatNumber(floor.maxMs)} ms `
    + `(p99 ${formatNumber(floor.p99Ms)} ms): the machine's own floor under every driver's loop max/p99`;
}

/** The run as a Markdown document: what ran where, a table per target, the chart beside it. */
function markdownReport(document, chartFile) {
  const o = document.options;
  const lines = [
    `# smartread bench, ${document.startedAt}`,
    '',
    `- command: \`${document.command}\``,
    `- mode: ${o.mode}; ${o.rounds} rounds per trial, ≥${o.timeMs} ms per driver per round, ≥${o.minSamples} operations per driver over all rounds`,
    `- run time: ${formatDuration(document.durationMs)}`,
    `- machine: ${document.machine.hostname}: ${describeMachine(document.machine)}`,
    `- engine: ${describeEngine(document.engine)}`,
    `- timing: ${describeTiming(document)}`,
    `- peers: ${describePeers(document.peers)}`,
    ...(o.against ? [`- against: the build at ${o.against.dir} (${o.against.build}), its drivers named @${o.against.build}`] : []),
    ...(document.loopFloor ? [`- loop: ${describeLoopFloor(document.loopFloor)}`] : []),
    '',
    legend(o.loopResolutionMs).split('\n').map((l) => (l.startsWith('  ') ? `  ${l.trim()}` : `- ${l}`)).join('\n'),
    '',
  ];
  const skipped = document.drivers.filter((d) => d.available !== true);
  if (skipped.length > 0) {
    lines.push('Skipped drivers:', '', ...skipped.map((d) => `- ${d.name}: ${d.available}`), '');
  }
  if (chartFile) lines.push(`![ops/s ÷ fs.readFileSync's, per trial and target](${chartFile})`, '');
  for (const target of document.targets) {
    lines.push(`## ${targetHeading(target)}`, '', targetMarkdownTable(target), '');
    const comparisons = comparisonMarkdownTables(target);
    if (comparisons) lines.push(comparisons, '');
  }
  return lines.join('\n');
}

module.exports = {
  summarize,
  latencyPercentiles,
  formatNumber,
  formatRatio,
  formatDuration,
  formatLoopStall,
  formatGcPause,
  formatCpu,
  markdownTable,
  legend,
  targetTable,
  targetMarkdownTable,
  comparisonTables,
  comparisonGrids,
  describePeers,
  describeTiming,
  targetHeading,
  machineInfo,
  describeEngine,
  describeMachine,
  describeLoopFloor,
  markdownReport,
};
