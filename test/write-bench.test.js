// `npm run bench:write` at tiny sizes: one run on a disk and a tmpfs directory reports every
// trial on every target, with the baseline's and the reference's figures, every driver of ours
// timed (or skipped with the reason where its engine is missing), each result checked before it
// was timed, and the targets each said met or not. Nothing is left in the targets.
'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { engineInfo } = require('smartread');
const { checkNoFdLeak, useTempDirs, runToEnd } = require('./helpers');

checkNoFdLeak({ spawnsChildren: true });
const tempDirs = useTempDirs();

test('one run of every trial on every target, at tiny sizes', async () => {
  const json = path.join(tempDirs.disk, 'bench.json');
  const dirs = tempDirs.all.flatMap(({ dir }) => ['--dir', dir]);
  const run = await runToEnd(process.execPath, [path.join(__dirname, '..', 'bench', 'write.js'), ...dirs,
    '--files', '20', '--dirs', '4', '--nested', '30', '--large', '64k', '--rounds', '2', '--ops', '1', '--json', json], { timeoutMs: 120000 });
  assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
  const report = JSON.parse(fs.readFileSync(json, 'utf8'));
  assert.equal(report.format, 'smartread-write-bench/1');
  assert.equal(report.targets.length, tempDirs.all.length);
  const uring = engineInfo().uring.available;
  for (const target of report.targets) {
    assert.deepEqual(target.trials.map((t) => t.kind), ['tree', 'nested', 'large']);
    for (const trial of target.trials) {
      for (const d of trial.drivers) {
        if (d.skipped) {
          // Only a missing engine may keep one of ours from running.
          assert.ok(/uring/.test(d.name) && !uring, `${trial.name}: ${d.name} skipped: ${d.skipped}`);
          continue;
        }
        assert.equal(d.error, undefined, `${trial.name}: ${d.name}: ${d.error}`);
        assert.ok(d.unitsPerSec > 0 && d.rounds.length === 2, `${trial.name}: ${d.name}`);
      }
      const baseline = trial.drivers.find((d) => d.role === 'baseline');
      assert.equal(baseline.ratio, 1);
      assert.ok(trial.drivers.some((d) => d.role === 'reference' && d.ratioToReference === 1));
      assert.ok(trial.drivers.filter((d) => d.role === 'ours' && !d.skipped).length >= 4, trial.name);
    }
    // What each operation wrote was removed, and so was the bench's scratch directory.
    assert.deepEqual(fs.readdirSync(target.dir).filter((n) => n.startsWith('smartread-write-bench-')), []);
  }
  assert.equal(report.goals.length, 5 * report.targets.length);
  // Bun's is not measured without --peers.
  for (const goal of report.goals) assert.equal(typeof goal.met, goal.against === 'Bun (best)' ? 'object' : 'boolean', JSON.stringify(goal));
  assert.match(run.stdout, /targets:/);
});
