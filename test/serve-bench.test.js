// bench/http.js runs: the conditional mix and the rss trial, briefly, on serveStatic and sirv,
// with every server's statuses and bytes checked by the bench itself; the report has a ratio
// for each trial, and the longest each server's event loop was held; with --fuse-latency, the
// site is served through the bench's fuse-latency mount, removed after. (No figure is
// asserted: speed is the bench's to show.)
'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { engineInfo } = require('smartread');
const { checkNoFdLeak, useTempDirs, waitForExit } = require('./helpers');
const { mountUnavailable, mountsUnder } = require('../bench/mounts');

checkNoFdLeak({ spawnsChildren: true });
const tempDirs = useTempDirs();
const native = engineInfo().engine === 'native';

/** Runs bench/http.js briefly (20 small files, one round of 0.5 s) with `args`, its site and
 * report in the test's disk dir; its exit must be 0. Returns { report (the JSON), out }. */
async function runHttpBench(jsonName, args) {
  const json = path.join(tempDirs.disk, jsonName);
  const child = spawn(process.execPath, [path.join(__dirname, '..', 'bench', 'http.js'),
    '--seconds', '0.5', '--rounds', '1', '--small', '20', ...args, '--dir', tempDirs.disk, '--json', json], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (c) => { out += c; });
  child.stderr.on('data', (c) => { out += c; });
  const { code } = await waitForExit(child);
  assert.equal(code, 0, out);
  return { report: JSON.parse(fs.readFileSync(json, 'utf8')), out };
}

test('bench:http measures serveStatic against a peer and reports ratios', { skip: !native && 'serveStatic needs the addon' }, async () => {
  const { report, out } = await runHttpBench('http.json', ['--large', '1', '--large-size', '1m',
    '--rss-size', '4m', '--rss-clients', '4', '--servers', 'smartread,sirv,ceiling', '--trials', 'conditional,rss,precompressed']);
  assert.deepEqual(report.trials.map((t) => t.trial), ['conditional', 'rss', 'precompressed']);
  // What bench:docs needs to put the run on docs/serving.md: its format, its command, and the
  // place it served from, named by its filesystem.
  assert.equal(report.format, 'smartread-bench-http/1');
  assert.match(report.command, /^node bench\/http\.js --seconds 0\.5 /);
  const { fsType } = require('../bench/targets').describeTarget(tempDirs.disk);
  assert.deepEqual([report.filesystem.type, report.filesystem.label], [fsType, fsType]);
  assert.match(out, new RegExp(`the site on ${fsType}; loop:`));
  // The ceiling (its answers checked like every server's) runs in the conditional mix, not the
  // rss trial, and serves no precompressed siblings.
  assert.deepEqual(report.trials.map((t) => t.servers), [['smartread', 'sirv', 'ceiling'], ['smartread', 'sirv'], ['smartread', 'sirv']]);
  assert.ok(report.trials[0].summary.ceiling.requestsPerSec > 0);
  for (const t of report.trials) {
    assert.equal(t.bestPeer, 'sirv');
    assert.equal(t.summary.sirv.vsBestPeer, 1);
    assert.ok(t.summary.smartread.vsBestPeer > 0, `${t.trial}: ${JSON.stringify(t.summary.smartread)}`);
    for (const runs of Object.values(t.runs)) assert.equal(runs[0].failures, 0);
    for (const server of t.servers) assert.ok(Number.isFinite(t.summary[server].loopMaxMs) && t.summary[server].loopMaxMs >= 0, `${t.trial}: ${server}'s loop`);
  }
  assert.ok(report.trials[1].summary.smartread.rssMaxMB > 0);
  assert.match(out, /conditional mix\s+smartread\s/);
  assert.match(out, /conditional mix\s+ceiling\s.*\(the limit\)/);
  assert.match(out, /precompressed mix\s+smartread\s/);
  assert.ok(!fs.existsSync(path.join(tempDirs.disk, 'smartread-http-bench')), 'the bench removes its site');
});

test('bench:http --fuse-latency serves the site through a fuse-latency mount it removes after', async (t) => {
  if (!native) return t.skip('serveStatic needs the addon');
  const why = mountUnavailable('fuse-latency');
  if (why) return t.skip(why);
  const { report, out } = await runHttpBench('http-fuse.json', ['--servers', 'smartread,sirv', '--trials', 'small',
    '--fuse-latency', '--cache-ms', '0']);
  assert.equal(report.filesystem.type, 'fuse-latency');
  assert.equal(report.filesystem.cacheMs, 0);
  const [trial] = report.trials;
  assert.equal(trial.bestPeer, 'sirv');
  assert.ok(trial.summary.smartread.requestsPerSec > 0 && Number.isFinite(trial.summary.smartread.loopMaxMs));
  assert.match(out, /the site on fuse-latency \(1 ms a request, attributes kept 0 ms\)/);
  assert.deepEqual(mountsUnder(tempDirs.disk), [], 'nothing left mounted');
});
