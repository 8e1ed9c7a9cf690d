// bench/http.js runs: the conditional mix and the rss trial, briefly, on serveStatic and sirv,
// with every server's statuses and bytes checked by the bench itself; the report has a ratio
// for each trial. (No figure is asserted: speed is the bench's to show.)
'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { engineInfo } = require('smartread');
const { checkNoFdLeak, useTempDirs, waitForExit } = require('./helpers');

checkNoFdLeak({ spawnsChildren: true });
const tempDirs = useTempDirs();
const native = engineInfo().engine === 'native';

test('bench:http measures serveStatic against a peer and reports ratios', { skip: !native && 'serveStatic needs the addon' }, async () => {
  const json = path.join(tempDirs.disk, 'http.json');
  const child = spawn(process.execPath, [path.join(__dirname, '..', 'bench', 'http.js'),
    '--seconds', '0.5', '--rounds', '1', '--small', '20', '--large', '1', '--large-size', '1m',
    '--rss-size', '4m', '--rss-clients', '4', '--servers', 'smartread,sirv,ceiling', '--trials', 'conditional,rss',
    '--dir', tempDirs.disk, '--json', json], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (c) => { out += c; });
  child.stderr.on('data', (c) => { out += c; });
  const { code } = await waitForExit(child);
  assert.equal(code, 0, out);
  const report = JSON.parse(fs.readFileSync(json, 'utf8'));
  assert.deepEqual(report.trials.map((t) => t.trial), ['conditional', 'rss']);
  // The ceiling (its answers checked like every server's) runs in the conditional mix, not the rss trial.
  assert.deepEqual(report.trials.map((t) => t.servers), [['smartread', 'sirv', 'ceiling'], ['smartread', 'sirv']]);
  assert.ok(report.trials[0].summary.ceiling.requestsPerSec > 0);
  for (const t of report.trials) {
    assert.equal(t.bestPeer, 'sirv');
    assert.equal(t.summary.sirv.vsBestPeer, 1);
    assert.ok(t.summary.smartread.vsBestPeer > 0, `${t.trial}: ${JSON.stringify(t.summary.smartread)}`);
    for (const runs of Object.values(t.runs)) assert.equal(runs[0].failures, 0);
  }
  assert.ok(report.trials[1].summary.smartread.rssMaxMB > 0);
  assert.match(out, /conditional mix\s+smartread\s/);
  assert.match(out, /conditional mix\s+ceiling\s.*\(the limit\)/);
  assert.ok(!fs.existsSync(path.join(tempDirs.disk, 'smartread-http-bench')), 'the bench removes its site');
});
