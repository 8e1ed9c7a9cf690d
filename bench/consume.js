// What every driver's result goes through after each timed read, the same for every driver.
// Both ways leave a value in the module's `sink`, so that no read can be optimised away.
// - touchEveryPage reads one byte of every 4 KiB page: a lazy result (a mapping nobody touches)
//   pays for its pages like the others, and the read itself dominates the time.
// - sumEveryWord reads every byte, as 32-bit words folded together by XOR (a sum without carries)
//   over an Int32Array view (the bytes before the first 4-byte boundary and after the last one
//   one by one): the "read and consume every byte" trials, where a zero-copy reader must still
//   bring every page in.
'use strict';

let sink = 0;

function touchEveryPage(result) {
  if (Array.isArray(result)) {
    for (const buffer of result) touchEveryPage(buffer);
    return;
  }
  for (let i = 0; i < result.length; i += 4096) sink ^= result[i];
}

// The hot loop alone, so that it stays monomorphic (an Int32Array in, an int out). Int32 and
// XOR, not Uint32 and a sum: a word of 2^31 or more from a Uint32Array is no small integer for
// V8, and a sum that overflows int32 makes V8 deoptimise to double arithmetic; either way the
// loop ran ~10 ns a word on incompressible bytes instead of ~1, and the consumption, not the
// read, dominated every +consume trial.
function xorWords(view, sum) {
  const n = view.length;
  for (let i = 0; i < n; i++) sum ^= view[i];
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
  for (let i = 0; i < head; i++) sum ^= result[i];
  sum = xorWords(new Int32Array(result.buffer, result.byteOffset + head, words), sum);
  for (let i = head + words * 4; i < result.length; i++) sum ^= result[i];
  sink = sum;
}

module.exports = { touchEveryPage, sumEveryWord };
