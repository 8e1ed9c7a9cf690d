// Another build of smartread timed beside this one, in the same trials of the same run
// (--against DIR): DIR is a checkout of the package, built (`npm ci && npm run build`), for
// instance `git worktree add /tmp/before REV`. Its smartRead auto, smartReadSync and readMany
// auto ×64 become drivers of their own, named with '@' and the build's commit (or DIR's name
// where DIR is not a git checkout), warm trials only. They take turns with this build's drivers
// in the ABBA order of every driver, and the report divides this build's figure by theirs
// (comparisons.js): "no regression" judged within one run, where two runs of the same command
// on these VMs move a ratio by 10% and more between them (docs/benchmarks.md).
//
// The bench's process and its runner of Node's drivers (peer_runner.js) both make these
// drivers from the environment variable below, which index.js sets for --against.
'use strict';
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { IN_FLIGHT } = require('./in_flight');

const AGAINST_ENV = 'SMARTREAD_BENCH_AGAINST';

/** How the other build is named in its drivers' names: its short commit, or its folder's name. */
function buildLabel(dir) {
  try {
    const commit = execFileSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    if (commit) return commit;
  } catch {
    // Not a git checkout (or no git): the folder's name says which build it is.
  }
  return path.basename(path.resolve(dir));
}

/** The other build's exports: { module } or { error } (why it could not be used). */
function loadBuild(dir) {
  try {
    const module = require(path.resolve(dir));
    for (const name of ['smartRead', 'smartReadSync', 'readMany']) {
      if (typeof module[name] !== 'function') throw new Error(`it exports no ${name}()`);
    }
    return { module };
  } catch (err) {
    return { error: `the build at ${dir} did not load: ${err.message.split('\n')[0]}` };
  }
}

/** The drivers of the build in `dir`, named with `label`; it is loaded at their first use. */
function driversOf(dir, label) {
  let loaded = null;
  const load = () => (loaded ??= loadBuild(dir));
  const available = () => load().error ?? true;
  const build = () => load().module;
  return [
    {
      name: `smartReadSync @${label}`,
      shape: 'file',
      warmOnly: true,
      available,
      read: (file) => build().smartReadSync(file),
    },
    {
      name: `smartRead auto @${label}`,
      shape: 'file',
      async: true,
      warmOnly: true,
      available,
      read: (file) => build().smartRead(file),
    },
    {
      name: `readMany auto ×${IN_FLIGHT} @${label}`,
      shape: 'files',
      async: true,
      warmOnly: true,
      available,
      read: (paths) => build().readMany(paths, { concurrency: IN_FLIGHT }),
    },
  ];
}

// Made once per process: the runner looks its drivers up for every command it is sent.
let against;

/** The build named by SMARTREAD_BENCH_AGAINST: { dir, build (its label), drivers }; null when none is. */
function againstBuild() {
  if (against !== undefined) return against;
  const dir = process.env[AGAINST_ENV];
  if (!dir) return (against = null);
  const build = buildLabel(dir);
  return (against = { dir, build, drivers: driversOf(dir, build) });
}

/** The drivers of the build named by SMARTREAD_BENCH_AGAINST; none when it is not set. */
function againstDrivers() {
  return againstBuild()?.drivers ?? [];
}

/** Whether a driver (or a report's summary of one) is the other build's `name`. */
const ofOtherBuild = (name) => (d) => d.name.startsWith(`${name} @`);

module.exports = { AGAINST_ENV, againstBuild, againstDrivers, ofOtherBuild };
