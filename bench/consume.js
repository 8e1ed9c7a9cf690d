// What every driver's result goes through after each timed read, the same for every driver.
// Both ways leave a value in the module's `sink`, so that no read can be optimised away.
// - touchEveryPage reads one byte of every 4 KiB page: a lazy result (a mapping nobody touches)
//   pays for its pages like the others, and the read itself dominates the time.
// - sumEveryWord reads every byte, as 32-bit words summed over a Uint32Array view (the bytes
//   before the first 4-byte boundary and after the last one one by one): the "read and consume
//   every byte" trials, where a zero-copy reader must still bring every page in.
'use strict';

let sink = 0;

function touchEveryPage(result) {
  if (Array.isArray(result)) {
    for (const buffer of result) touchEveryPage(buffer);
    return;
  }
  for (let i = 0; i < result.length; i += 4096) sink ^= result[i];
}

// The hot loop alone, so that it stays monomorphic (a Uint32Array in, an int out).
function sumWords(view, sum) {
  const n = view.length;
  for (let i = 0; i < n; i++) sum = (sum + view[i]) | 0;
  return sum;
}

function sumEveryWord(result) {
  if (Array.isArray(result)) {
    for (const buffer of result) sumEveryWord(buffer);
    return;
  }
  const head = Math.min((4 - (result.byteOffset & 3)) & 3, result.length);
  const words = (result.length - head) >>> 2;
  let sum = sink;
  for (let i = 0; i < head; i++) sum = (sum + result[i]) | 0;
  sum = sumWords(new Uint32Array(result.buffer, result.byteOffset + head, words), sum);
  for (let i = head + words * 4; i < result.length; i++) sum = (sum + result[i]) | 0;
  sink = sum;
}

module.exports = { touchEveryPage, sumEveryWord };
