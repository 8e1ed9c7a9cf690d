// Memory of synchronous loops over large files, which never let the event loop turn: the peak
// RSS of a smartReadSync loop stays within 256 MiB of fs.readFileSync's in the same loop, in the
// main thread and in a worker (each loop in a process of its own, its peak from the kernel's
// high-water mark). The results are dropped at once, as a build tool hashing files drops them.
'use strict';
const { test, before } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { engineInfo } = require('smartread');
const { checkNoFdLeak, useTempDirs, writePattern, runToEnd } = require('./helpers');

checkNoFdLeak({ spawnsChildren: true });
const tempDirs = useTempDirs();
const native = engineInfo().engine === 'native';
const MiB = 1024 * 1024;
// The bound, in bytes, over fs.readFileSync's peak.
const kAllowance = 256 * MiB;

const loops = [
  { size: 16 * MiB, reads: 300 },
  { size: 128 * MiB, reads: 40 },
];
const files = {};
before(() => {
  for (const { size } of loops) files[size] = writePattern(path.join(tempDirs.disk, `large-${size}`), size);
});

// A loop of `reads` reads of `file` by `reader` ('fs' or 'smartread'), in this process's main
// thread or in a worker; prints the process's peak RSS, whether the first and last results were
// the file's bytes, and the block pool's figures.
function loopScript(reader, file, reads, inWorker) {
  const loop = `
    const fs = require('node:fs');
    const { smartReadSync, metrics } = require('smartread');
    const read = ${reader === 'fs' ? 'fs.readFileSync' : 'smartReadSync'};
    const file = ${JSON.stringify(file)};
    const expected = fs.readFileSync(file);
    let same = true;
    for (let i = 0; i < ${reads}; i++) {
      const bytes = read(file);
      if (i === 0 || i === ${reads} - 1) same = same && bytes.equals(expected);
    }
    const report = { same, pool: metrics().blockPool };`;
  if (!inWorker) return `${loop}\nconsole.log(JSON.stringify({ ...report, maxRssKiB: process.resourceUsage().maxRSS }));`;
  return `
    const { Worker } = require('node:worker_threads');
    const worker = new Worker(${JSON.stringify(`${loop}\nrequire('node:worker_threads').parentPort.postMessage(report);`)}, { eval: true });
    worker.once('message', (report) => console.log(JSON.stringify({ ...report, maxRssKiB: process.resourceUsage().maxRSS })));
    worker.once('error', (err) => { throw err; });`;
}

async function peakOf(reader, file, reads, inWorker) {
  const run = await runToEnd(process.execPath, ['-e', loopScript(reader, file, reads, inWorker)], { timeoutMs: 120000 });
  assert.equal(run.code, 0, run.stderr);
  const report = JSON.parse(run.stdout);
  assert.ok(report.same, `${reader}: the results are the file's bytes`);
  return report;
}

for (const { size, reads } of loops) {
  for (const inWorker of [false, true]) {
    const where = inWorker ? 'in a worker' : 'in the main thread';
    test(`smartReadSync of ${size / MiB} MiB x ${reads} ${where}: peak RSS within 256 MiB of fs.readFileSync's`, async (t) => {
      if (!native) {
        t.skip('the pure-JS engine is fs.readFileSync itself');
        return;
      }
      const theirs = await peakOf('fs', files[size], reads, inWorker);
      const ours = await peakOf('smartread', files[size], reads, inWorker);
      const overMiB = (ours.maxRssKiB * 1024 - theirs.maxRssKiB * 1024) / MiB;
      t.diagnostic(`peak RSS: fs.readFileSync ${Math.round(theirs.maxRssKiB / 1024)} MiB, smartReadSync ${Math.round(ours.maxRssKiB / 1024)} MiB; pool ${JSON.stringify(ours.pool)}`);
      assert.ok(ours.maxRssKiB * 1024 <= theirs.maxRssKiB * 1024 + kAllowance,
        `smartReadSync peaked ${overMiB.toFixed(0)} MiB above fs.readFileSync (pool: ${JSON.stringify(ours.pool)})`);
    });
  }
}
