// The real size limit on endless files (npm run test:stress): /dev/zero read to 4 GiB
// (buffer.constants.MAX_LENGTH) stops with ERR_FS_FILE_TOO_LARGE on each engine instead of
// exhausting memory; each read in a child of its own, so that its memory goes with it.
// (test/faults.test.js checks every API and strategy with the limit lowered to 1 MiB.)
'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { constants: bufferConstants } = require('node:buffer');
const { runToEnd, skipUnlessAvailable } = require('../helpers');

const cases = [
  ['smartReadSync', "try { smartReadSync('/dev/zero'); out('read'); } catch (err) { out(err); }"],
  ["smartRead, strategy 'uring'", "smartRead('/dev/zero', { strategy: 'uring' }).then(() => out('read'), out);"],
  ["smartRead, strategy 'threadpool'", "smartRead('/dev/zero', { strategy: 'threadpool' }).then(() => out('read'), out);"],
];

for (const [name, call] of cases) {
  test(`${name} of /dev/zero: ERR_FS_FILE_TOO_LARGE at ${bufferConstants.MAX_LENGTH} bytes`, async (t) => {
    if (name.includes("'uring'") && skipUnlessAvailable(t, 'uring')) return;
    const result = await runToEnd(process.execPath, ['-e', `
      const { smartRead, smartReadSync } = require('smartread');
      const out = (x) => process.stdout.write(JSON.stringify(x instanceof Error
        ? { name: x.name, code: x.code, message: x.message, rssMB: Math.round(process.memoryUsage.rss() / 2 ** 20) } : x) + '\\n');
      ${call}
    `], { timeoutMs: 120000 });
    assert.equal(result.timedOut, false, 'the read ended');
    assert.equal(result.signal, null, `killed by ${result.signal}: ${result.stderr}`);
    assert.equal(result.code, 0, result.stderr);
    const out = JSON.parse(result.stdout);
    assert.equal(out.code, 'ERR_FS_FILE_TOO_LARGE', result.stdout);
    assert.equal(out.name, 'RangeError');
    assert.match(out.message, /^File size \(\d+\) is greater than 4 GiB$/);
    t.diagnostic(`${out.message}; RSS when it failed: ${out.rssMB} MB`);
  });
}
