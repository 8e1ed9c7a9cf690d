#!/usr/bin/env node
// `npm run test:stress`: the heavy reliability tests, on the native engine (which must load):
//  - test/stress/soak.test.js: SMARTREAD_STRESS_READS reads (default 400,000; the full million
//    by hand: SMARTREAD_STRESS_READS=1000000 npm run test:stress), 256 in flight, every byte
//    checked, RSS, the bytes malloc holds, the JS heap and descriptors flat after the warm-up;
//  - test/stress/endless-devices.test.js: /dev/zero read to the real 4 GiB limit on each engine;
//  - test/stress/block-pool-memory.test.js: 1,000 reads of 128 MiB, RSS bounded by the block
//    pool, which then drains;
//  - test/uring-lifecycle.test.js's worker terminations, 200 in a row instead of 50 (io_uring).
// (npm test runs the races and random aborts 1,000 times each; SMARTREAD_TEST_RACE_ROUNDS and
// SMARTREAD_TEST_ABORTS raise that: 3,000 each took about 2 minutes here.)
// The three run at once, their reports printed whole, in order, once all have ended; then one
// line counting every run. Exits non-zero if anything failed.
'use strict';
const path = require('node:path');
const { runTap, describeFailures } = require('./tap');

const root = path.resolve(__dirname, '..');
const native = { SMARTREAD_REQUIRE_NATIVE: '1', SMARTREAD_FORCE_JS: '' };
const runs = [
  { name: 'soak and endless devices', args: ['--expose-gc', '--test', 'test/stress/soak.test.js', 'test/stress/endless-devices.test.js'], env: native },
  { name: 'block pool memory', args: ['--expose-gc', '--test', 'test/stress/block-pool-memory.test.js'], env: native },
  {
    name: '200 worker terminations',
    args: ['--test', '--test-name-pattern', "strategy 'uring': 200 workers terminated", 'test/uring-lifecycle.test.js'],
    env: { ...native, SMARTREAD_TEST_TERMINATIONS: '200' },
  },
];

// One run, its report (stdout and stderr) kept whole, to be printed once it ends.
async function run({ name, args, env }) {
  const report = [];
  const result = await runTap(process.execPath, [args[0], '--test-reporter=tap', ...args.slice(1)], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    write: (chunk) => report.push(chunk),
  });
  return { ...result, report: `\n# smartread stress: ${name}\n${Buffer.concat(report).toString()}` };
}

(async () => {
  const total = { pass: 0, fail: 0, skipped: 0 };
  let bad = false;
  const failures = [];
  // All at once: one after another they kept the two CPUs of CI's VM 73% busy (100 s).
  for (const result of await Promise.all(runs.map(run))) {
    process.stdout.write(result.report);
    for (const k of Object.keys(total)) total[k] += result[k];
    if (result.code !== 0 || result.pass === 0) bad = true;
    failures.push(...result.failures);
  }
  if (failures.length > 0) process.stdout.write(`\n# failed:\n${describeFailures(failures).join('\n')}\n`);
  process.stdout.write(`\nstress: ${total.pass} passed, ${total.fail} failed, ${total.skipped} skipped\n`);
  process.exit(bad || total.fail > 0 ? 1 : 0);
})();
