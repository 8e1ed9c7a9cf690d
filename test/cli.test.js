// The smartread command: explain (text and JSON, as explain() says), bench (the suite's own
// options), help, and errors for what it does not know.
'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { explain } = require('smartread');
const { checkNoFdLeak, useTempDirs, writePattern, runToEnd } = require('./helpers');

checkNoFdLeak({ spawnsChildren: true });
const tempDirs = useTempDirs();
const cli = path.resolve(__dirname, '..', 'dist', 'cli.js');
const smartread = (...args) => runToEnd(process.execPath, [cli, ...args]);

test('explain --json says what explain() says, for each path; a missing one is an error', async () => {
  const file = writePattern(path.join(tempDirs.disk, 'explained'), 5000);
  const missing = path.join(tempDirs.disk, 'missing');
  const one = await smartread('explain', '--json', '--strategy', 'threadpool', file);
  assert.equal(one.code, 0, one.stderr);
  const expected = explain(file, { strategy: 'threadpool' });
  assert.deepEqual(JSON.parse(one.stdout), { path: file, ...JSON.parse(JSON.stringify(expected)) });

  const two = await smartread('explain', '--json', file, missing);
  assert.equal(two.code, 1);
  const [ok, bad] = JSON.parse(two.stdout);
  assert.equal(ok.path, file);
  assert.ok(typeof ok.strategy === 'string' && ok.reason.length > 0 && ok.device.filesystem);
  assert.deepEqual(bad, { path: missing, error: { code: 'ENOENT', message: `ENOENT: no such file or directory, stat '${missing}'` } });
});

test('explain prints the strategy, the reason and the device of each file', async () => {
  const file = writePattern(path.join(tempDirs.disk, 'printed'), 10);
  const run = await smartread('explain', file);
  assert.equal(run.code, 0, run.stderr);
  const e = explain(file);
  assert.match(run.stdout, new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n  strategy: \\S+\\n  reason: {3}.+\\n  device: {3}${e.device.filesystem}`));
});

test('help, bench --help, and what the command does not know', async () => {
  const help = await smartread('--help');
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^usage: smartread <command>/);
  assert.match(help.stdout, /explain/);
  const bench = await smartread('bench', '--help');
  assert.equal(bench.code, 0, bench.stderr);
  assert.match(bench.stdout, /usage: node bench\/index\.js/);
  for (const [args, message] of [
    [[], /usage/],
    [['frobnicate'], /unknown command 'frobnicate'/],
    [['explain'], /no path given/],
    [['explain', '--fast', '/etc/hosts'], /unknown option --fast/],
  ]) {
    const run = await smartread(...args);
    assert.equal(run.code, 2, args.join(' '));
    assert.match(args.length === 0 ? run.stdout : run.stderr, message);
  }
  const badStrategy = await smartread('explain', '--strategy', 'warp', '/etc/hosts');
  assert.equal(badStrategy.code, 1);
  assert.match(badStrategy.stderr, /ERR_INVALID_ARG_VALUE|must be one of/);
});
