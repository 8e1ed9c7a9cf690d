// One clock per thread for the JS thread's share of a turn of the event loop, for the reads
// whose promises can settle without the loop turning.

// When the first read of this turn of the event loop started (-1: not yet), shared by every
// smartRead, readMany and Reader call on this thread: reads awaited back to back (fast-path
// hits, io_uring reads completed inline) follow one another in promise reactions without the
// loop turning, and so share one turn's budget; past it they wait for the next turn (20,000
// cached files read by smartRead one after another held the loop for 145 ms). It is reset by
// an immediate that holds nothing of any call: one holding a call's closures would keep all its
// results alive until the loop turned, and back-to-back readMany calls piled up results (3,000
// calls of 64 x 64 KiB: 392 MB of RSS, the loop turning once in ten calls, and a full GC every
// 30 calls).
let turnStarted = -1;
function endTurn(): void {
  turnStarted = -1;
}
// Starts this turn's clock if it is not running; whether the reads have spent their share.
export function turnSpent(shareMs: number): boolean {
  const now = performance.now();
  if (turnStarted < 0) {
    turnStarted = now;
    setImmediate(endTurn);
    return false;
  }
  return now - turnStarted >= shareMs;
}
let nextTurn: Promise<void> | null = null;
/** One promise for every read waiting, resolved by an immediate of the next turn. */
export function waitForNextTurn(): Promise<void> {
  return nextTurn ??= new Promise<void>((resolve) => setImmediate(() => {
    nextTurn = null;
    resolve();
  }));
}
