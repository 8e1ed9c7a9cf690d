// Reading many files with a fixed number of reads in flight, shared by the bench's drivers and
// by the peer runner (peer_runner.js), so that Node, Bun and Deno keep the same number of reads
// in flight the same way.
'use strict';

// The '×64' drivers: how many reads each keeps in flight.
const IN_FLIGHT = 64;

/** Reads every path with `inFlight` calls of `readOne` in flight; results in input order. */
async function readAllInFlight(paths, inFlight, readOne) {
  const results = new Array(paths.length);
  let next = 0;
  const lane = async () => {
    while (next < paths.length) {
      const i = next++;
      results[i] = await readOne(paths[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, paths.length) }, lane));
  return results;
}

module.exports = { IN_FLIGHT, readAllInFlight };
