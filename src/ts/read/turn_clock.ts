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

// Calls waiting for a turn with share left (turnShare), first come first served, and woken one
// at a time: the first of the line by an immediate at the next turn, each next one by passTurn()
// once the one before it has made its read, while the share lasts. Woken all at once by the
// next turn's promise, every waiter looked at the clock again and nearly all went back to wait,
// turn after turn: 10,000 smartRead calls at once, each a cached file, took 1.9-3.7 s against
// 0.36 s for a smartReadSync loop of the same reads (the waiters' wake-ups grew as the square of
// their number).
// The line is an array read from lineHead; the woken calls' slots before it are dropped once
// they are half the array (and at least kCompactFrom), so that a line that never empties (a
// server under steady load) does not grow by a slot for every call that ever waited in it: 8
// bytes a read, 14 MB of JS heap after 1.8 million reads of 256 calls at once.
const line: Array<(() => void) | undefined> = [];
let lineHead = 0;
const kCompactFrom = 1024;
let wakeScheduled = false;
// A call woken in the line has not yet started its read (takeTurn) nor given its turn up
// (passTurn): see turnBeingHandedOn().
let handingOn = false;

function wakeFirst(): void {
  if (lineHead === line.length) return;
  const resolve = line[lineHead]!;
  line[lineHead++] = undefined;
  if (lineHead === line.length) {
    line.length = 0;
    lineHead = 0;
  } else if (lineHead >= kCompactFrom && lineHead * 2 >= line.length) {
    line.copyWithin(0, lineHead);
    line.length -= lineHead;
    lineHead = 0;
  }
  handingOn = true;
  resolve();
}

// The first of the line is woken at the next turn, whatever passTurn() does meanwhile: a call
// that leaves its turn without passing it (an error, an abort) never holds the line for longer.
// The turn's clock is stopped then, for the woken call's read to start it (takeTurn): this
// immediate may run before the one that ends the last turn (endTurn).
function wakeFirstNextTurn(): void {
  if (wakeScheduled) return;
  wakeScheduled = true;
  setImmediate(() => {
    wakeScheduled = false;
    endTurn();
    wakeFirst();
    if (lineHead < line.length) wakeFirstNextTurn();
  });
}

/**
 * When a read may start on this thread within the turn's share: undefined when it may now
 * (nobody is waiting, and the share is not spent), else a promise that resolves at its turn in
 * the line. A call that waited calls takeTurn() before its read, unless it gives up (an abort),
 * and passTurn() once its read is made or given up.
 */
export function turnShare(shareMs: number): Promise<void> | undefined {
  // turnFree(), written out: this runs before every read (through turnFree(), awaited reads of a
  // cached 4 KiB file pinned to one CPU took 3.09 us against 2.95, medians of six runs each).
  if (lineHead === line.length && !turnSpent(shareMs)) return undefined;
  return waitInLine();
}

/** The slots the line's array holds, those of calls already woken included (the tests' view). */
export function lineSlots(): number {
  return line.length;
}

/** Whether a read may start on this thread now: nobody is waiting, and the share is not spent. */
export function turnFree(shareMs: number): boolean {
  return lineHead === line.length && !turnSpent(shareMs);
}

/** Joins the line: resolves at the caller's turn (then takeTurn(), and passTurn() after). */
export function waitInLine(): Promise<void> {
  return new Promise<void>((resolve) => {
    line.push(resolve);
    wakeFirstNextTurn();
  });
}

/** A call woken in the line starts its read: the turn's clock runs from it, if it was stopped. */
export function takeTurn(): void {
  handingOn = false;
  turnSpent(0);
}

/** After a read: wakes the next call in line if the turn's share is not spent yet. */
export function passTurn(shareMs: number): void {
  handingOn = false;
  if (lineHead < line.length && !turnSpent(shareMs)) wakeFirst();
}

/**
 * Whether the line is handing the turn on: a call woken at its turn has yet to start its read.
 * Its wake-up is a promise reaction queued behind whatever the call before it queued, the
 * submission of io_uring's reads included (strategies.ts), which waits for it so that the reads
 * of one turn reach the kernel together rather than one io_uring_enter each.
 */
export function turnBeingHandedOn(): boolean {
  return handingOn;
}
