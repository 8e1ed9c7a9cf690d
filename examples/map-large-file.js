// Scans a large file through a memory mapping: mapFile returns a Buffer whose memory is the
// file's pages in the page cache, so counting its lines copies none of it into the process
// (a read would first copy the whole file into a Buffer of its own). Prints the size, the
// number of lines and the longest one, and whether the Buffer is the mapping itself.
//
//   node map-large-file.js [FILE]      (without FILE: a 32 MiB text file in a temp dir)
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { mapFile } = require('smartread');

function sampleFile(size) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'map-large-file-'));
  const file = path.join(dir, 'log.txt');
  const fd = fs.openSync(file, 'w');
  for (let written = 0, n = 0; written < size; n++) {
    const chunk = Array.from({ length: 1000 }, (_, i) => `line ${n * 1000 + i}: ${'x'.repeat(i % 80)}\n`).join('');
    written += fs.writeSync(fd, chunk);
  }
  fs.closeSync(fd);
  return file;
}

const given = process.argv[2];
const file = given ?? sampleFile(32 << 20);
// 'sequential': the scan goes from start to end once, so the kernel may read far ahead.
const map = mapFile(file, { advice: 'sequential' });
try {
  let lines = 0;
  let longest = 0;
  let start = 0;
  // Buffer#indexOf searches the mapped pages where they are (memchr).
  for (let end = map.indexOf(10); end !== -1; end = map.indexOf(10, start)) {
    lines++;
    longest = Math.max(longest, end - start);
    start = end + 1;
  }
  if (start < map.length) {
    lines++;
    longest = Math.max(longest, map.length - start);
  }
  // mapped is false where smartread gave a copy (the pure-JS engine, or an empty file).
  console.log(JSON.stringify({ bytes: map.length, lines, longest, mapped: map.mapped }));
} finally {
  // Unmaps now, rather than when the Buffer is collected; the Buffer is empty from here on.
  map.close();
  if (given === undefined) fs.rmSync(path.dirname(file), { recursive: true });
}
