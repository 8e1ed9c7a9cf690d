// bench/index.js --against DIR: another build of smartread, loaded from DIR into the same
// processes, timed beside this build in the warm trials of the same run, with this build's
// figures divided by its (bench/against.js). A folder that holds no build makes its drivers
// skips with the reason; a path that is no folder is a usage error.
'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { checkNoFdLeak, useTempDirs, makeTempDir, runToEnd } = require('./helpers');

checkNoFdLeak({ spawnsChildren: true });
const tempDirs = useTempDirs();
const root = path.resolve(__dirname, '..');

/** Runs the bench on the disk directory with --against `against`: { run, doc, markdown }. */
async function benchAgainst(against) {
  const outDir = makeTempDir(tempDirs.disk, 'results-');
  const run = await runToEnd(process.execPath, [
    'bench/index.js', '--dir', tempDirs.disk, '--sizes', '4k', '--files', '4', '--filter', '^warm-(4k|4x4k)$',
    '--time', '1', '--rounds', '1', '--against', against, '--out', outDir,
  ], { timeoutMs: 60000 });
  const report = (ext) => {
    const file = fs.existsSync(outDir) && fs.readdirSync(outDir).find((f) => f.endsWith(ext));
    return file ? fs.readFileSync(path.join(outDir, file), 'utf8') : null;
  };
  const json = report('.json');
  return { run, doc: json && JSON.parse(json), markdown: report('.md') };
}

/** A copy of this package's build in a folder of its own: a second addon, loaded beside the first. */
function copyOfThisBuild() {
  const dir = makeTempDir(tempDirs.disk, 'other-build-');
  fs.copyFileSync(path.join(root, 'package.json'), path.join(dir, 'package.json'));
  // What the loader looks at, where there is one: the copy loads the addon this build loads.
  for (const part of ['dist', 'prebuilds', 'build/Release/smartread.node', 'build/Debug/smartread.node']) {
    if (fs.existsSync(path.join(root, part))) fs.cpSync(path.join(root, part), path.join(dir, part), { recursive: true });
  }
  fs.symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'));
  return dir;
}

const OTHER_DRIVERS = {
  'warm-4k': ['smartReadSync', 'smartRead auto'],
  'warm-4x4k': ['readMany auto ×64'],
};

test('--against DIR times the build in DIR beside this one, in the same trials, and divides this one by it', async () => {
  const other = copyOfThisBuild();
  // Not a git checkout: the build is named by its folder.
  const label = path.basename(other);
  const { run, doc, markdown } = await benchAgainst(other);
  assert.equal(run.code, 0, run.stderr.slice(-3000));
  assert.deepEqual(doc.options.against, { dir: other, build: label });
  assert.match(markdown, new RegExp(`^- against: the build at ${other} \\(${label}\\), its drivers named @${label}$`, 'm'));
  const trials = doc.targets[0].trials;
  assert.deepEqual(trials.map((t) => t.name).sort(), Object.keys(OTHER_DRIVERS).sort());
  for (const trial of trials) {
    for (const name of OTHER_DRIVERS[trial.name]) {
      const theirs = trial.drivers.find((d) => d.name === `${name} @${label}`);
      assert.ok(theirs, `${trial.name}: ${name} @${label} among ${trial.drivers.map((d) => d.name).join(', ')}`);
      assert.equal(theirs.skipped, undefined, `${trial.name}: ${theirs.name} ran`);
      assert.ok(theirs.samples >= 1 && theirs.opsPerSec > 0, `${trial.name}: ${theirs.name} was timed: ${JSON.stringify(theirs)}`);
      const ours = trial.drivers.find((d) => d.name === name);
      const comparison = trial.comparisons.find((c) => c.label === `${name} ÷ ${name} @against`);
      assert.ok(comparison, `${trial.name}: ${name} ÷ ${name} @against among ${trial.comparisons.map((c) => c.label).join(', ')}`);
      assert.equal(comparison.best, theirs.name);
      assert.equal(comparison.ratio, ours.opsPerSec / theirs.opsPerSec);
    }
  }
});

test('--against a folder that holds no build of smartread: its drivers are skipped with the reason, the rest run', async () => {
  const empty = makeTempDir(tempDirs.disk, 'no-build-');
  const { run, doc } = await benchAgainst(empty);
  assert.equal(run.code, 0, run.stderr.slice(-3000));
  const label = path.basename(empty);
  const skipped = doc.drivers.filter((d) => d.name.endsWith(` @${label}`));
  assert.deepEqual(skipped.map((d) => d.name).sort(), ['readMany auto ×64', 'smartRead auto', 'smartReadSync'].map((n) => `${n} @${label}`).sort());
  for (const d of skipped) assert.match(String(d.available), new RegExp(`^the build at ${empty} did not load: `));
  const trial = doc.targets[0].trials.find((t) => t.name === 'warm-4k');
  assert.ok(trial.drivers.find((d) => d.name === 'smartRead auto').opsPerSec > 0, 'this build was timed');
  assert.equal(trial.comparisons.find((c) => c.label.endsWith('@against')), undefined, 'no comparison with a build that did not run');
});

test('--against a path that is not a folder: a usage error, nothing timed', async () => {
  const missing = path.join(tempDirs.disk, 'no-such-build');
  const { run, doc } = await benchAgainst(missing);
  assert.equal(run.code, 2, run.stderr);
  assert.match(run.stderr, new RegExp(`--against ${missing}: not a directory`));
  assert.equal(doc, null);
});
