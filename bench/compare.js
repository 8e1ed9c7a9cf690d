#!/usr/bin/env node
// Compares two bench runs: how far each ratio of one moved in the other. A ratio (ops/s over
// the baseline's, "vs sync") is what a run claims, so two runs of the same command should
// agree on it, within the noise of the machine; absolute figures may drift together.
//
//   node bench/compare.js A.json B.json [--threshold 20] [--all]
//
// For each target (by directory), trial and driver present in both reports with a ratio, the
// difference is the larger ratio over the smaller, minus one: symmetric, so 1.00× against
// 1.25× and 1.25× against 1.00× are both 25%. Warm trials only, unless --all (cold trials
// swing with the disk). The baseline driver (always 1.00×) is left out. Prints a table of every
// pair, then the largest difference; exits 1 when one is over the threshold (percent), 2 on
// bad input.
'use strict';
const fs = require('node:fs');
const { parseArgs } = require('node:util');

const usage = 'usage: node bench/compare.js A.json B.json [--threshold PERCENT] [--all]';

/** The ratios of a report, keyed by target dir, trial and driver. */
function ratiosOf(report, all) {
  const ratios = new Map();
  for (const target of report.targets ?? []) {
    for (const trial of target.trials ?? []) {
      if (trial.cold && !all) continue;
      for (const driver of trial.drivers ?? []) {
        if (driver.baseline || typeof driver.ratio !== 'number') continue;
        ratios.set(JSON.stringify([target.dir, trial.name, driver.name]), driver.ratio);
      }
    }
  }
  return ratios;
}

/** Every ratio of `a` that `b` has too, with how far apart they are (0.25 for 25%). */
function compareReports(a, b, { all = false } = {}) {
  const ratiosB = ratiosOf(b, all);
  const pairs = [];
  for (const [key, ratioA] of ratiosOf(a, all)) {
    const ratioB = ratiosB.get(key);
    if (ratioB === undefined) continue;
    const [target, trial, driver] = JSON.parse(key);
    pairs.push({ target, trial, driver, a: ratioA, b: ratioB, difference: Math.max(ratioA, ratioB) / Math.min(ratioA, ratioB) - 1 });
  }
  return pairs;
}

function main() {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: { threshold: { type: 'string', default: '20' }, all: { type: 'boolean', default: false } },
    });
  } catch (err) {
    console.error(`${err.message}\n${usage}`);
    return 2;
  }
  const threshold = Number(parsed.values.threshold);
  if (parsed.positionals.length !== 2 || !(threshold > 0)) {
    console.error(usage);
    return 2;
  }
  const [a, b] = parsed.positionals.map((file) => JSON.parse(fs.readFileSync(file, 'utf8')));
  const pairs = compareReports(a, b, { all: parsed.values.all });
  if (pairs.length === 0) {
    console.error('no ratio is in both reports: were they run on the same targets and trials?');
    return 2;
  }
  const rows = pairs.map((p) => [p.target, p.trial, p.driver, `${p.a.toFixed(2)}×`, `${p.b.toFixed(2)}×`,
    `${(p.difference * 100).toFixed(1)}%${p.difference * 100 > threshold ? ' !' : ''}`]);
  const header = ['target', 'trial', 'driver', 'A vs sync', 'B vs sync', 'difference'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells) => cells.map((c, i) => (i >= 3 ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  ');
  console.log(line(header));
  for (const row of rows) console.log(line(row));
  const worst = pairs.reduce((w, p) => (p.difference > w.difference ? p : w));
  const over = pairs.filter((p) => p.difference * 100 > threshold);
  console.log(`\n${pairs.length} ratios compared (${parsed.values.all ? 'all' : 'warm'} trials); the largest difference: ` +
    `${(worst.difference * 100).toFixed(1)}% (${worst.target} ${worst.trial}, ${worst.driver}); ` +
    `${over.length} over ${threshold}%`);
  return over.length > 0 ? 1 : 0;
}

module.exports = { compareReports };

if (require.main === module) process.exitCode = main();
