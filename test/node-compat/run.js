#!/usr/bin/env node
// Node's own tests of readFile, readFileSync and promises.readFile (see README.md here for where
// each file came from), each run twice: on plain node, and under `--import smartread/register`.
// Every test that passes on plain node must pass under register; the register run also reports
// what smartread served (metrics(), by engine), so that a register that did nothing cannot pass
// unseen. Tests that inspect node's internals are skipped, with the reason, never edited.
//   node test/node-compat/run.js [--set node-vX.Y.Z] [--repeat N] [test-file-name...]
// --repeat N runs each test N times both ways; a test passes only if all N runs pass (timing-
// dependent checks, such as an abort issued on the next tick, are caught by repetition).
// The tests run on SMARTREAD_TEST_NODE when set (a node binary), else on this node. Ends with
// "N passed, N failed, N skipped"; exits 1 on any failure.
'use strict';
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..', '..');
const node = process.env.SMARTREAD_TEST_NODE || process.execPath;

// The set of tests for each release line: its own where one could be had, else the newest.
const setForLine = { 20: 'node-v20.19.2', 22: 'node-v22.22.2', 24: 'node-v24.21.0' };
const newestSet = 'node-v24.21.0';

// Tests that patch node's internals (--expose-internals, internalBinding('fs')): what they
// check is node's own plumbing, which no drop-in goes through.
const skipped = {
  'test-fs-readfile-buffer-option.js': "--expose-internals: replaces internalBinding('fs').fstat to make a file report size 0",
  'test-fs-promises-readfile-buffer-option.js': "--expose-internals: replaces internalBinding('fs').fstat to make a file report size 0",
};

// Tests that must fail under register, and only as said: after the checks that are smartread's
// (bytes, aborts, argument errors), a check of node's own plumbing that no drop-in goes through.
// The register run passes when the rest of its output is node's notes and warnings and exactly
// these lines; anything else (an abort that resolved, a wrong byte) fails it.
const failsOnlyAsSaid = {
  'test-fs-promises-readfile.js': {
    why: "validateZeroByteLiar replaces internalBinding('fs').fstat with a size of 0 and asserts (common.mustCall) that readFile called it; smartread's own fstat is not node's binding",
    lines: [
      /^Mismatched <anonymous> function calls\. Expected exactly 1, actual 0\.$/,
      /^ {4}at Proxy\.mustCall \(.*test\/common\/index\.js:\d+:\d+\)$/,
      /^ {4}at validateZeroByteLiar \(.*test-fs-promises-readfile\.js:\d+:\d+\)$/,
      /^ {4}at .*test-fs-promises-readfile\.js:\d+:\d+$/,
    ],
  },
};
// What node and Node's test/common print besides a test's own output.
const nodeNotes = [
  /^\(node:\d+\) /,
  /^\(Use `node --trace-warnings \.\.\.` to show where the warning was created\)$/,
  /^NOTE: The test started as a child_process using these flags: /,
];

/** Whether a run that failed failed only as `expected` says. */
function failedOnlyAsSaid(run, expected) {
  if (run.outcome !== 'fail' || run.killed) return false;
  const lines = run.output.split('\n').filter((l) => l.trim() !== '' && !nodeNotes.some((re) => re.test(l)));
  return lines.length === expected.lines.length && lines.every((l, i) => expected.lines[i].test(l));
}

// Node 26 has a localStorage global that warns, once read, unless given a file; test/common of
// Node 24 reads every global (its leak check) and children it spawns then print the warning,
// which the pipe tests take as unexpected stderr. On a line newer than the set, both runs (and
// the tests' children, through NODE_OPTIONS) are without web storage, as the set's node was.
const kOlderSetNodeOptions = '--no-experimental-webstorage';

const kTimeoutMs = 120_000;
const kParallel = 2;

const args = process.argv.slice(2);
const setFlag = args.indexOf('--set');
const repeatFlag = args.indexOf('--repeat');
const repeat = repeatFlag >= 0 ? Number(args[repeatFlag + 1]) : 1;
if (!Number.isInteger(repeat) || repeat < 1) throw new Error(`--repeat: a whole number of runs, not ${args[repeatFlag + 1]}`);
const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
const line = Number(version.replace(/^v/, '').split('.')[0]);
const set = setFlag >= 0 ? args[setFlag + 1] : (setForLine[line] ?? newestSet);
const only = args.filter((a, i) => !a.startsWith('--') && (setFlag < 0 || i !== setFlag + 1) && (repeatFlag < 0 || i !== repeatFlag + 1));
const parallelDir = path.join(__dirname, set, 'test', 'parallel');
const setLine = Number(/^node-v(\d+)\./.exec(set)[1]);
const nodeOptions = line > setLine ? `${process.env.NODE_OPTIONS ?? ''} ${kOlderSetNodeOptions}`.trim() : process.env.NODE_OPTIONS;
const files = fs.readdirSync(parallelDir).filter((f) => f.endsWith('.js') && (only.length === 0 || only.includes(f))).sort();

const reporter = path.join(__dirname, 'report-reads.js');

// One run of one test file: 'pass', 'skip' (the test skipped itself: common.skip), or 'fail',
// with its output; under register, with the reads smartread served in its processes.
function runOnce(file, register) {
  return new Promise((resolve) => {
    const testDir = fs.mkdtempSync(path.join(os.tmpdir(), 'smartread-node-compat-'));
    const readsFile = path.join(testDir, 'reads.jsonl');
    const execArgv = register ? ['--import', 'smartread/register', '--require', reporter] : [];
    const child = spawn(node, [...execArgv, path.join(parallelDir, file)], {
      // From the repository's root, where `smartread/register` resolves to this checkout.
      cwd: root,
      env: { ...process.env, NODE_OPTIONS: nodeOptions ?? '', NODE_TEST_DIR: testDir, SMARTREAD_COMPAT_READS: readsFile },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => { output += d; });
    child.stderr.on('data', (d) => { output += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), kTimeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      let outcome = 'fail';
      if (code === 0) outcome = /^1\.\.0 # Skipped:/m.test(output) ? 'skip' : 'pass';
      if (signal) output += `\n(killed by ${signal}${signal === 'SIGKILL' ? ` after ${kTimeoutMs / 1000} s` : ''})`;
      const reads = {};
      let dropIn = null;
      if (fs.existsSync(readsFile)) {
        for (const entry of fs.readFileSync(readsFile, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l))) {
          dropIn ??= entry.dropIn;
          for (const [by, n] of Object.entries(entry.reads)) reads[by] = (reads[by] ?? 0) + n;
        }
      }
      fs.rmSync(testDir, { recursive: true, force: true });
      resolve({ outcome, output, reads, dropIn, killed: signal !== null });
    });
  });
}

function describeReads(reads) {
  const served = Object.entries(reads).filter(([, n]) => n > 0).map(([by, n]) => `${by} ${n}`);
  return served.length > 0 ? served.join(', ') : 'none';
}

// What one plain run and one register run of a test say together: 'pass', 'skip' or 'fail',
// and the line (and output) to print for it.
function judge(file, plain, registered) {
  const reads = `smartread served: ${describeReads(registered.reads)}`;
  if (plain.outcome === 'fail') {
    // Not a test of this node: nothing to compare with.
    return { kind: 'skip', line: `ok - ${file} # SKIP fails on plain node ${version} too (a test of another release line)`, output: plain.output };
  }
  if (plain.outcome === 'skip') {
    const why = /^1\.\.0 # Skipped: (.*)$/m.exec(plain.output)[1];
    return { kind: 'skip', line: `ok - ${file} # SKIP on plain node too: ${why}` };
  }
  const active = registered.dropIn?.active === true;
  if (active && registered.outcome === 'pass') {
    return { kind: 'pass', line: `ok - ${file}: passes on plain node and under register (${reads})` };
  }
  const expected = failsOnlyAsSaid[file];
  if (active && expected && failedOnlyAsSaid(registered, expected)) {
    return { kind: 'pass', line: `ok - ${file}: passes on plain node, and under register fails only as said: ${expected.why} (${reads})` };
  }
  const why = active ? `${registered.outcome} under register`
    : `register was not active: ${registered.dropIn ? registered.dropIn.reason : 'no report from the test process'}`;
  return { kind: 'fail', line: `not ok - ${file}: passes on plain node, ${why} (${reads})`, output: registered.output };
}

(async () => {
  process.stdout.write(`# node-compat: node ${version}, Node's tests from ${set}${nodeOptions !== process.env.NODE_OPTIONS ? `, NODE_OPTIONS=${nodeOptions}` : ''}${repeat > 1 ? `, ${repeat} runs of each` : ''}\n`);
  const results = new Map();
  const queue = files.filter((f) => !(f in skipped)).flatMap((f) => Array.from({ length: repeat }, () => f));
  const worker = async () => {
    while (queue.length > 0) {
      const file = queue.shift();
      const plain = await runOnce(file, false);
      const registered = await runOnce(file, true);
      if (!results.has(file)) results.set(file, []);
      results.get(file).push(judge(file, plain, registered));
      for (const [by, n] of Object.entries(registered.reads)) served[by] = (served[by] ?? 0) + n;
    }
  };
  const served = {};
  await Promise.all(Array.from({ length: kParallel }, worker));

  let passed = 0;
  let failed = 0;
  let skips = 0;
  for (const file of files) {
    if (file in skipped) {
      skips++;
      process.stdout.write(`ok - ${file} # SKIP ${skipped[file]}\n`);
      continue;
    }
    const runs = results.get(file);
    const failures = runs.filter((r) => r.kind === 'fail');
    // A failed run says most; then a skip (a plain run that failed), then a pass.
    const shown = failures[0] ?? runs.find((r) => r.kind === 'skip') ?? runs[0];
    if (shown.kind === 'fail') failed++;
    else if (shown.kind === 'skip') skips++;
    else passed++;
    const tally = repeat > 1 ? ` [${runs.length - failures.length} of ${runs.length} runs passed]` : '';
    process.stdout.write(`${shown.line}${tally}\n`);
    if (shown.output !== undefined) process.stdout.write(shown.output.replace(/^/gm, '#   ') + '\n');
  }
  process.stdout.write(`# reads smartread served under register, all tests: ${describeReads(served)}\n`);
  process.stdout.write(`${passed} passed, ${failed} failed, ${skips} skipped\n`);
  process.exit(failed > 0 || passed === 0 ? 1 : 0);
})();
