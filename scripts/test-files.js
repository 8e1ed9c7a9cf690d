// The suite's test files, and which of them test the tools around the package rather than the
// package: the bench harness (its drivers, mounts, peers and reports) and the documentation.
// Those run once, on this machine's node, in npm test; the runs that repeat the suite to test
// the package elsewhere (the other Node lines, the JS engine as darwin and win32, the ASan build)
// leave them out: they spent 25-30 s of each such run here and test nothing of the package there.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const toolTests = ['bench-docs', 'bench-mounts', 'bench-peers', 'bench-smoke', 'docs', 'serve-bench', 'write-bench']
  .map((name) => `${name}.test.js`);

// The test files under root/test, as paths relative to root, sorted, without those in `leftOut`.
function testFiles(root, leftOut = []) {
  return fs.readdirSync(path.join(root, 'test'))
    .filter((f) => f.endsWith('.test.js') && !leftOut.includes(f)).sort().map((f) => path.join('test', f));
}

module.exports = { toolTests, testFiles };
