// A pool of worker threads that read files with smartRead and send the bytes back to the main
// thread, which prints each file's size and SHA-256.
//
// How a worker sends a result matters. smartread reads results of 128 KiB and more (8 MiB on
// Node 24 and later) into blocks it recycles, and smaller ones may share one Buffer: a result's
// ArrayBuffer is not the result alone, and cannot be transferred (postMessage copies it on
// Node 20, and refuses the transfer list from Node 22 on). Post the result without a transfer
// list (the whole ArrayBuffer is cloned), or, as here, copy exactly the result's bytes and
// transfer the copy.
//
//   node worker-pool.js [FILE...]      (without files: some samples in a temp dir)
'use strict';
const { Worker, isMainThread, parentPort } = require('node:worker_threads');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

if (!isMainThread) {
  const { smartRead } = require('smartread');
  parentPort.on('message', async ({ id, file }) => {
    try {
      const copy = new Uint8Array(await smartRead(file)); // its own ArrayBuffer, of its size
      parentPort.postMessage({ id, bytes: copy }, [copy.buffer]);
    } catch (err) {
      parentPort.postMessage({ id, error: err.message });
    }
  });
} else {
  const given = process.argv.slice(2);
  const dir = given.length > 0 ? null : fs.mkdtempSync(path.join(os.tmpdir(), 'worker-pool-'));
  const files = given.length > 0 ? given : [1, 64, 300, 2048].map((kib) => {
    const file = path.join(dir, `${kib}k.bin`);
    fs.writeFileSync(file, crypto.randomBytes(kib * 1024));
    return file;
  });
  const results = [];
  let next = 0;
  // Each worker asks for the next file when it has sent one back, until none is left.
  const work = (worker) => new Promise((resolve, reject) => {
    const take = () => {
      if (next === files.length) return resolve();
      const id = next++;
      worker.postMessage({ id, file: files[id] });
    };
    worker.on('message', ({ id, bytes, error }) => {
      const hash = bytes && crypto.createHash('sha256').update(bytes).digest('hex');
      results[id] = error ? `${files[id]}\terror\t${error}` : `${files[id]}\t${bytes.length}\t${hash}`;
      take();
    });
    worker.on('error', reject);
    take();
  });
  const pool = Array.from({ length: Math.min(os.availableParallelism(), files.length, 4) }, () => new Worker(__filename));
  Promise.all(pool.map(work)).then(() => {
    console.log(results.join('\n'));
    for (const worker of pool) worker.terminate();
    if (dir) fs.rmSync(dir, { recursive: true });
  });
}
