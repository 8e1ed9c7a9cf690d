// Loaded (--require) beside smartread/register in the node-compat runs: when the test process
// exits, appends what smartread served in it (metrics(), by engine) and whether register was
// active to the file named by SMARTREAD_COMPAT_READS.
'use strict';
const fs = require('node:fs');
const { engineInfo, metrics } = require('smartread');

// What loading this file read is not the test's.
metrics.reset();

process.on('exit', () => {
  const reads = Object.fromEntries(Object.entries(metrics().strategies).map(([by, m]) => [by, m.reads]));
  fs.appendFileSync(process.env.SMARTREAD_COMPAT_READS, `${JSON.stringify({ dropIn: engineInfo().dropIn, reads })}\n`);
});
