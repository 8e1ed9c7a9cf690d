// smartRead and readMany: fs.promises.readFile's contract on the engine the strategy names.
import { engineFor, strategyNames, type AsyncEngine, type Strategy } from './strategies';
import { abortError, failureToError, invalidArgValue, outOfRange, strategyUnavailable } from '../common/errors';
import {
  getOptions, getValidatedPath, handleToFd, isFd, pathList, stringToFlags, type PathList, type PathOrHandle, type ReadFileOptions,
} from '../common/args';
import { constants, statSync } from 'node:fs';
import { sep } from 'node:path';
import { originalPromisesReadFile, originalReadFile } from '../common/fs_originals';
import { isRawFailure, type RawFailure, type RawResult } from '../common/raw';
import {
  fastPathTurnMs, kCachedRunMax, kElsewhereRunMax, kRunMiss, kRunTaken, kRunWarming, loadReport, tuning, type ElsewhereRun,
} from '../engine/engine';
import { countFastPath, countTooLarge, recordRead, timing, type ServedBy } from './metrics';
import { Root, type ConfineOptions } from './confine';
import { passTurn, takeTurn, turnFree, turnShare, turnSpent, waitForNextTurn, waitInLine } from './turn_clock';

const { O_RDONLY } = constants;

/** smartRead's options: fs.promises.readFile's, a root to read beneath, and the engine. */
export interface SmartReadOptions extends ReadFileOptions, ConfineOptions {
  /** The engine: 'auto' (the default) chooses; the others force one, or fail where it is missing. */
  strategy?: Strategy;
}

/** readMany's options: smartRead's, which apply to every path, and how the list is read. */
export interface ReadManyOptions extends SmartReadOptions {
  /** How many reads are in flight at once (default 64). */
  concurrency?: number;
  /** Resolve with one { status, value | reason } per path instead of rejecting on the first error. */
  settle?: boolean;
}

/**
 * One path's outcome in `readMany(paths, { settle: true })`, shaped as Promise.allSettled's.
 *
 * @typeParam T - The result of a read that succeeded: a Buffer, or a string with an encoding.
 */
export type SettledRead<T> =
  | {
    /** The read succeeded. */
    status: 'fulfilled';
    /** What it read. */
    value: T;
  }
  | {
    /** The read failed. */
    status: 'rejected';
    /** Its node:fs-style error. */
    reason: Error;
  };

// What a read needs once its arguments are known to be valid.
export interface Request {
  engine: AsyncEngine;
  target: string | Buffer | number;
  flags: number;
  encoding: BufferEncoding | 'buffer' | null | undefined;
  signal: AbortSignal | undefined;
  /** A confined read's root (paths only). */
  root: Root | undefined;
  /** readMany's: whether its call has rejected, so that a read still waiting for its turn gives up. */
  callEnded: (() => boolean) | undefined;
}

export interface Common {
  engine: AsyncEngine;
  encoding: Request['encoding'];
  signal: AbortSignal | undefined;
  flag: unknown;
  root: Root | undefined;
  /** The root was opened for this call, which releases it when its reads are done. */
  ownsRoot: boolean;
}

/** Where createReader() puts its root in the options it passes on. */
export const kReaderRoot = Symbol('smartread reader root');

/** The root of a read's options: a reader's, or one opened for this call, or none. */
export function rootOf(options: unknown, caller: Function): { root: Root | undefined; ownsRoot: boolean } {
  if (options === null || typeof options !== 'object') return { root: undefined, ownsRoot: false };
  const o = options as ConfineOptions & { [kReaderRoot]?: Root };
  if (o[kReaderRoot] !== undefined) return { root: o[kReaderRoot], ownsRoot: false };
  if (o.root === undefined) return { root: undefined, ownsRoot: false };
  return { root: new Root(o.root, o.noSymlinks, caller), ownsRoot: true };
}

// The options of a call without any (the common call): nothing in them varies but the engine,
// which 'auto' resolves once and for all.
let noOptions: Common | undefined;

/** The options every read shares, validated; the engine the strategy names, or its error. */
export function commonOptions(options: unknown, caller: Function): Common {
  if (options == null && noOptions !== undefined) return noOptions;
  const { encoding, flag, signal } = getOptions(options, caller);
  const strategy = (options !== null && typeof options === 'object'
    ? (options as SmartReadOptions).strategy : undefined) ?? 'auto';
  if (!strategyNames.includes(strategy)) {
    throw invalidArgValue('options.strategy', strategy, `must be one of ${strategyNames.map((s) => `'${s}'`).join(', ')}`, caller);
  }
  const engine = engineFor(strategy);
  if (typeof engine === 'string') throw strategyUnavailable(strategy, engine, caller);
  // A mapping is opened by path outside the confined engines: it cannot honour a root.
  const confined = options as SmartReadOptions & { [kReaderRoot]?: Root };
  if (strategy === 'mmap' && (confined.root !== undefined || confined[kReaderRoot] !== undefined)) {
    throw invalidArgValue('options.strategy', strategy, "cannot read confined to a root (use 'auto', 'sync', 'uring' or 'threadpool')", caller);
  }
  if (options == null) return noOptions = { engine, encoding, signal, flag, root: undefined, ownsRoot: false };
  // Opened last, once nothing else can fail.
  return { engine, encoding, signal, flag, ...rootOf(options, caller) };
}

/** One read's validated path or fd (a FileHandle's) and open flags. */
export function request(pathOrHandle: unknown, common: Common, caller: Function): Request {
  const path = handleToFd(pathOrHandle);
  if (isFd(path)) {
    if (path < 0) throw outOfRange('fd', '>= 0 && <= 2147483647', path, caller);
    // An fd is already open: like fs.readFile, the flag is not looked at.
    return { engine: common.engine, target: path, flags: 0, encoding: common.encoding, signal: common.signal, root: undefined, callEnded: undefined };
  }
  const target = getValidatedPath(path, caller);
  // fs.promises.readFile opens with `flag || 'r'`: an empty flag reads.
  const flags = common.flag === undefined ? O_RDONLY : stringToFlags(common.flag || 'r', caller);
  return { engine: common.engine, target, flags, encoding: common.encoding, signal: common.signal, root: common.root, callEnded: undefined };
}

let nextId = 1;

// What perform() throws for a read it gave up before starting it, because its readMany call had
// rejected (Request.callEnded): not a read's outcome, so not counted as one.
const notStarted = new Error('the readMany call rejected before this read started');

// The open flags of a flag option, or null where it is invalid (each read then reports it).
function flagsOrNull(flag: unknown): number | null {
  try {
    return stringToFlags(flag || 'r', readMany);
  } catch {
    return null;
  }
}

// The first run of a readMany call, and the first after a cold stretch, is this short: on a cold
// list each miss costs the calling thread tens of µs (RWF_NOWAIT starts the readahead before it
// gives EAGAIN), and a whole run of misses would hold the loop for milliseconds. A run with a hit
// lets the next be as long as the engine takes (kCachedRunMax).
const kFirstRun = 16;
// readMany reads a list of up to this many files as smartRead reads each (see readMany).
const kShortList = 8;
// The fewest paths left of which a list too short for runs elsewhere from its start may hand half
// to one (see handOffHalf in readMany): fewer are read sooner on the JS thread than a thread hop
// would allow, whatever their size.
const kHandOffMin = 8;
// A list too short for runs from its start hands half of what is left to one run elsewhere only
// when at least this much work is left at the JS thread's pace (see handOffHalf in readMany).
// Less is read sooner on the JS thread: the run costs it a job queued (a call that held the JS
// thread 1-4 ms in 1-3% of calls in the bench's short rounds, see docs/how-it-works.md), its
// Buffer and its completion. readMany ÷ the smartReadSync loop, 64 cached
// files a call (node bench/index.js --mount overlay --filter 64inflight; ext4 / tmpfs / overlay):
// 4 KiB (about 0.2 ms left) 0.88 / 0.80 / 0.85 handed off from 0.1 ms, 1.00 / 0.84 / 0.92 from
// 0.3; 64 KiB (about 0.4 ms left) 1.03 / 0.93 / 1.02 from 0.1, 0.88 / 0.99 / 1.07 from 0.3, and
// 0.83 / 0.84 / 0.78 from 0.5, where it was no longer handed off.
const kHandOffMinMs = 0.3;
// How long a lane that has read the last file of a run handed off waits, on the JS thread, for
// the pool thread to finish the one it is reading, rather than for the loop to turn: a cached
// file of up to 256 KiB is read in well under this (a run takes files of up to 4 MiB: for one of
// those the lane waits for the loop to turn instead).
const kSettleSpinUs = 100;

// One 'abort' listener per signal, shared by all the reads waiting on it (hundreds, in a
// readMany), removed when the last of them settles.
interface AbortWatch {
  waiters: Set<() => void>;
  fire: () => void;
}
const abortWatches = new WeakMap<AbortSignal, AbortWatch>();

// null where the signal takes no listener: node:fs only ever reads a signal's `aborted`, so it
// takes any object that has one, a Proxy of an AbortSignal included (Node's own tests pass one),
// whose addEventListener throws.
function onAbort(signal: AbortSignal, waiter: () => void): (() => void) | null {
  let watch = abortWatches.get(signal);
  if (watch === undefined) {
    const waiters = new Set<() => void>();
    const fire = () => {
      abortWatches.delete(signal);
      for (const w of waiters) w();
    };
    try {
      signal.addEventListener('abort', fire, { once: true });
    } catch {
      return null;
    }
    watch = { waiters, fire };
    abortWatches.set(signal, watch);
  }
  const current = watch;
  current.waiters.add(waiter);
  return () => {
    current.waiters.delete(waiter);
    if (current.waiters.size === 0 && abortWatches.get(signal) === current) {
      abortWatches.delete(signal);
      signal.removeEventListener('abort', current.fire);
    }
  };
}

// Settles with the engine's result, or rejects with an AbortError as soon as the signal fires
// (the engine is told to stop; its own promise settles later and is ignored). A signal that
// takes no listener is looked at once the engine is done.
function untilAborted<T>(pending: Promise<T>, signal: AbortSignal, stop: () => void, caller: Function): Promise<T> {
  return new Promise((resolve, reject) => {
    const forget = onAbort(signal, () => {
      stop();
      reject(abortError(signal, caller));
    });
    pending.then((value) => {
      forget?.();
      if (forget === null && signal.aborted) reject(abortError(signal, caller));
      else resolve(value);
    }, (err) => {
      forget?.();
      reject(err);
    });
  });
}

// The caller's result from an engine's raw one: the bytes (decoded if asked), or the error.
function shape(raw: RawResult, req: Request, path: unknown, caller: Function, namePath = false): Buffer | string {
  if (isRawFailure(raw)) {
    const err = failureToError(raw, path, req.target, caller, namePath);
    throw req.root ? req.root.explainError(err, path) : err;
  }
  // Like node:fs, an encoding of 'buffer' passes validation and then fails in toString().
  return req.encoding ? (raw as Buffer).toString(req.encoding as BufferEncoding) : (raw as Buffer);
}

// Node 26's fs.promises.readFile reads a file of up to one chunk (512 KiB; a directory or
// another file that is not regular has size 0) in one thread-pool round trip, and the errors of
// that read(2) name the path; larger files, and Node 20 to 24, leave it out. Whether this node
// names it is asked of fs.readFile itself, once, on the first failed read: it reads a directory.
const kOneRoundTripMax = 512 * 1024;
let readErrorsNamePath: Promise<boolean> | undefined;

function nodeNamesPathInReadErrors(): Promise<boolean> {
  return readErrorsNamePath ??= new Promise((resolve) => {
    originalReadFile(__dirname, (err) => resolve(err?.path !== undefined));
  });
}

// Whether node:fs would name the path in this failed read's error (an open error always does).
async function readErrorNamesPath(failure: RawFailure, target: string | Buffer | number): Promise<boolean> {
  if (failure.reason !== undefined || (failure.syscall ?? 'read') !== 'read' || typeof target === 'number') return false;
  if (!await nodeNamesPathInReadErrors()) return false;
  const stats = statSync(target, { throwIfNoEntry: false });
  return stats === undefined || !stats.isFile() || stats.size <= kOneRoundTripMax;
}

// What serves reads on an engine, for the metrics.
function servedBy(engine: AsyncEngine): ServedBy {
  return loadReport.engine === 'js' ? 'js' : engine.name;
}

// A read with a signal settles no sooner than the next turn of the event loop, as node:fs's
// does (its open and fstat take a thread-pool round trip each): an abort issued after the call,
// in the same tick, a microtask or on process.nextTick, must still reject it, however fast the
// bytes came. The promise a call waits on is one immediate's, shared by every call of the turn.
function settleNoSoonerThanNextTurn(signal: AbortSignal | undefined): Promise<void> | undefined {
  return signal === undefined ? undefined : waitForNextTurn();
}

// Whether an abort seen before settling wins over a read's outcome. fs.promises.readFile looks at
// its signal after its open and fstat, then before each read: an open's or an fstat's error is
// the caller's whatever the signal says; the bytes, and a read's error, are not.
function abortWinsOver(raw: RawResult): boolean {
  return !isRawFailure(raw) || (raw.syscall !== 'open' && raw.syscall !== 'fstat');
}

// From Node 26, fs.promises.readFile of a path reads it whole before it looks at the signal, so
// any error of the read (EISDIR for a directory) is the caller's too, and only the bytes lose to
// an abort; a FileHandle's readFile still looks between reads. Which of the two the running Node
// does is asked of it, once, the first time it matters: a directory read with an abort after the
// call.
let readErrorsBeatAbort: Promise<boolean> | undefined;
function pathReadErrorsBeatAbort(): Promise<boolean> {
  readErrorsBeatAbort ??= (async () => {
    const controller = new AbortController();
    const reading = originalPromisesReadFile(sep, { signal: controller.signal });
    controller.abort();
    try {
      await reading;
      return false;
    } catch (err) {
      return (err as { code?: unknown }).code === 'EISDIR';
    }
  })();
  return readErrorsBeatAbort;
}

async function abortWins(raw: RawResult, target: string | Buffer | number): Promise<boolean> {
  if (!abortWinsOver(raw)) return false;
  return !isRawFailure(raw) || typeof target === 'number' || !await pathReadErrorsBeatAbort();
}

// One read on req's engine: the fast path first where the engine has one (unless the caller
// just tried it), then the engine; accounted for in the metrics either way. With `settleAfter`,
// the outcome waits for it and then for the signal's last word (see settleNoSoonerThanNextTurn).
// `tooLarge`: the caller's fast path found the path cached and too large for it (readNow's
// false), so the engine reads it as such.
async function perform(req: Request, path: unknown, caller: Function, tryNow = true,
  settleAfter?: Promise<void>, tooLarge = false): Promise<Buffer | string> {
  const { engine, target, signal } = req;
  if (signal?.aborted) throw abortError(signal, caller);
  const started = timing() ? performance.now() : -1;
  let by = servedBy(engine);
  // A read holds the root from its start, its wait for a turn included, so that a read begun
  // before its reader's close() ends as it would have; an engine takes its own hold before this
  // one goes.
  let endStartUse: (() => void) | undefined;
  let inLine = -1;
  try {
    endStartUse = req.root?.use();
    // Every read starts within its turn's share of the JS thread, whichever engine reads it: the
    // fast path's hits, and io_uring's reads of cached files (completed inline, as they are
    // submitted, in a microtask), settle in promise reactions without the loop turning (5,000
    // awaited reads of a cached 64 KiB file with strategy 'uring', or five readMany calls of
    // 4,000 files: 0 turns in 200-250 ms). Past the share a call waits in line (turn_clock.ts);
    // at its turn its read starts the turn's clock, and once the read is made or started (the
    // sync engine reads as it is called, io_uring's cached reads complete as they are
    // submitted), or given up, it passes the turn on. An abort meanwhile ends the read here,
    // unless the outcome is to be judged at settling (settleAfter) and the fast path can still
    // look: an open's error it finds (a missing file, a directory's EISDIR) is the caller's, as
    // in node:fs. No engine read starts after it. Nor does one of a readMany call that has
    // rejected meanwhile: no one would see its bytes.
    const shareMs = fastPathTurnMs();
    const waiting = turnShare(shareMs);
    if (waiting !== undefined) {
      inLine = shareMs;
      await waiting;
      if (signal?.aborted && (settleAfter === undefined || !tryNow || !engine.readNow)) throw abortError(signal, caller);
      if (req.callEnded?.()) throw notStarted;
      takeTurn();
    }
    let raw: RawResult | null | false = tooLarge ? false : null;
    const confine = req.root?.confine;
    if (tryNow && engine.readNow) {
      raw = engine.readNow(target, req.flags, confine);
      const hit = raw !== null && raw !== false;
      countFastPath(hit);
      if (hit) by = 'fast-path';
    }
    if (raw === null || raw === false) {
      if (signal?.aborted) throw abortError(signal, caller);
      const id = nextId++;
      // The root stays open until the engine is done with it, even after an abort.
      const endUse = req.root?.use();
      endStartUse?.();
      // A large file the fast path found cached goes out in parallel chunks at once.
      if (raw === false) countTooLarge();
      const pending = raw === false && engine.readLarge && typeof target !== 'number'
        ? engine.readLarge(target, req.flags, id, confine)
        : engine.read(target, req.flags, true, id, confine);
      inLine = passLine(inLine);
      if (endUse) pending.then(endUse, endUse);
      raw = signal ? await untilAborted(pending, signal, () => engine.cancel?.(id), caller) : await pending;
    }
    inLine = passLine(inLine);
    if (settleAfter !== undefined) {
      await settleAfter;
      if (signal!.aborted && await abortWins(raw, target)) throw abortError(signal!, caller);
    }
    const namePath = isRawFailure(raw) && await readErrorNamesPath(raw, target);
    const value = shape(raw, req, path, caller, namePath);
    recordRead(by, path, value, started);
    return value;
  } catch (err) {
    if (err !== notStarted) recordRead(by, path, err as Error, started);
    throw err;
  } finally {
    passLine(inLine);
    endStartUse?.();
  }
}

// Passes the turn on for a call that waited in line (`inLine`: its share of the turn, or -1 when
// it did not wait or has passed it already); -1.
function passLine(inLine: number): number {
  if (inLine >= 0) passTurn(inLine);
  return -1;
}

/**
 * Reads a whole file into a Buffer without blocking: the counterpart of fs.promises.readFile
 * (and of fs.readFile, as it also takes an fd), with its arguments, result and errors.
 *
 * @param path - The file, or an fd or a FileHandle (read from its current position, left open).
 * @param options - The open flag, an AbortSignal, and the engine (`strategy`, default 'auto').
 * @returns The file's bytes.
 */
export function smartRead(path: PathOrHandle, options?: { encoding?: null; flag?: string | number; signal?: AbortSignal; strategy?: Strategy } | null): Promise<Buffer>;
/**
 * Reads a whole file and decodes it without blocking, as fs.promises.readFile does with an
 * encoding.
 *
 * @param path - The file, or an fd or a FileHandle (read from its current position, left open).
 * @param options - The encoding, or `{ encoding, flag, signal, strategy }`.
 * @returns The file's text.
 */
export function smartRead(path: PathOrHandle, options: { encoding: BufferEncoding; flag?: string | number; signal?: AbortSignal; strategy?: Strategy } | BufferEncoding): Promise<string>;
/**
 * Reads a whole file without blocking, as fs.promises.readFile does; a string when an encoding
 * is given. `strategy: 'auto'` reads a small cached file on the calling thread, others through
 * io_uring or the thread pool; the promise always settles asynchronously.
 *
 * @param path - The file, or an fd or a FileHandle (read from its current position, left open).
 * @param options - An encoding, or {@link SmartReadOptions}.
 * @returns The file's bytes, or its text when an encoding is given.
 */
export function smartRead(path: PathOrHandle, options?: SmartReadOptions | BufferEncoding | null): Promise<string | Buffer>;
export function smartRead(path: PathOrHandle, options?: SmartReadOptions | BufferEncoding | null): Promise<string | Buffer> {
  // Not an async function itself: the common call (no root of its own) returns perform()'s
  // promise, without a second async frame to settle. Whatever throws here rejects.
  let common: Common | undefined;
  try {
    common = commonOptions(options, smartRead);
    // As fs.promises.readFile: an aborted signal wins over an invalid path or flag.
    if (common.signal?.aborted) throw abortError(common.signal, smartRead);
    const read = perform(request(path, common, smartRead), path, smartRead, true, settleNoSoonerThanNextTurn(common.signal));
    if (!common.ownsRoot) return read;
    const root = common.root!;
    return read.finally(() => root.release());
  } catch (err) {
    if (common?.ownsRoot) common.root!.release();
    return Promise.reject(err);
  }
}

/**
 * Reads every path, and resolves with one outcome per path in input order, as
 * Promise.allSettled does: no read's error rejects the whole.
 *
 * @param paths - The files (or fds, or FileHandles), any iterable.
 * @param options - `settle: true`, and {@link ReadManyOptions}.
 * @returns `{ status: 'fulfilled', value }` or `{ status: 'rejected', reason }` per path.
 */
export function readMany(paths: PathList<PathOrHandle>, options: ReadManyOptions & { settle: true }): Promise<SettledRead<Buffer | string>[]>;
/**
 * Reads and decodes every path, with at most `concurrency` reads in flight.
 *
 * @param paths - The files (or fds, or FileHandles), any iterable.
 * @param options - The encoding, or {@link ReadManyOptions} with one.
 * @returns Each file's text, in input order.
 */
export function readMany(paths: PathList<PathOrHandle>, options: (ReadManyOptions & { encoding: BufferEncoding }) | BufferEncoding): Promise<string[]>;
/**
 * Reads every path, with at most `concurrency` reads in flight (default 64), and resolves with
 * their bytes in input order; rejects with the first error (node:fs-style, naming its file),
 * as Promise.all over fs.promises.readFile does, and starts no further reads.
 *
 * @param paths - The files (or fds, or FileHandles), any iterable.
 * @param options - {@link ReadManyOptions}: those of smartRead, `concurrency` and `settle`.
 * @returns Each file's bytes, in input order.
 */
export function readMany(paths: PathList<PathOrHandle>, options?: ReadManyOptions | null): Promise<Buffer[]>;
/**
 * Reads every path, with at most `concurrency` reads in flight; results in input order. Rejects
 * with the first error (node:fs-style, naming its file) unless `settle` is set.
 *
 * @param paths - The files (or fds, or FileHandles), any iterable.
 * @param options - An encoding, or {@link ReadManyOptions}.
 * @returns Per path: its bytes, its text (with an encoding), or its outcome (with `settle`).
 */
export function readMany(paths: PathList<PathOrHandle>, options?: ReadManyOptions | BufferEncoding | null): Promise<Array<Buffer | string | SettledRead<Buffer | string>>>;
export async function readMany(paths: PathList<PathOrHandle>, options?: ReadManyOptions | BufferEncoding | null): Promise<Array<Buffer | string | SettledRead<Buffer | string>>> {
  const list = pathList(paths, readMany);
  const many = options !== null && typeof options === 'object' ? options : {};
  const concurrency = many.concurrency ?? 64;
  const common = commonOptions(options, readMany);
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    if (common.ownsRoot) common.root!.release();
    throw invalidArgValue('options.concurrency', concurrency, 'must be an integer >= 1', readMany);
  }
  const settle = many.settle === true;
  const results: Array<Buffer | string | SettledRead<Buffer | string>> = new Array(list.length);
  const lanes = Math.min(concurrency, list.length);
  const { engine } = common;
  const runFlags = engine.readNowMany ? flagsOrNull(common.flag) : null;
  // The request of every cache hit (the fast path's, only where runFlags is not null): a hit's
  // path was a string the addon took (so valid: it refuses what getValidatedPath would), read
  // with the call's flags; shape() needs only its encoding. One for the call instead of a
  // request() per hit: node_modules' 9,487 cached files of up to 256 KiB, a call: medians
  // 36.6-37.1 ms against 37.2-37.8, fastest 30.3-30.7 against 31.3-32.0 (four alternating runs
  // of 50 calls).
  const hitRequest: Request | null = runFlags === null ? null
    : { engine, target: '', flags: runFlags, encoding: common.encoding, signal: common.signal, root: common.root, callEnded: undefined };
  let next = 0;
  let failed = false;
  const callFailed = () => failed;
  // Paths the fast path missed, waiting for any lane to read them through the engine, so that
  // a run of misses is spread over the lanes instead of queueing behind one.
  const missed: number[] = [];
  let nextMissed = 0;
  // Paths the fast path found cached but too large for it, for the engine's read of a large
  // cached file (its chunks at once, in parallel), as smartRead reads one.
  const tooLarge: number[] = [];
  let nextTooLarge = 0;
  // Paths a run on a pool thread left to the lanes' own fast path (not small regular files,
  // errors, no room in its slab).
  const left: number[] = [];
  let nextLeft = 0;
  // A run without a single hit (a cold list) makes the fast path sit out a stretch of the list
  // that doubles with each such run; those paths go straight to the engine. A hit ends it.
  let fastPathFrom = 0;
  let coldStretch = 0;
  let runLength = kFirstRun;

  // With a signal, the call settles no sooner than the next turn (settleNoSoonerThanNextTurn):
  // an abort by then rejects it, or with settle, every path read before then, which would not
  // have settled yet either; a path read after it settled as it was read.
  const { signal } = common;
  const boundary = settleNoSoonerThanNextTurn(signal);
  let readBeforeBoundary: number[] | null = null;
  if (boundary !== undefined) {
    readBeforeBoundary = [];
    void boundary.then(() => {
      const early = readBeforeBoundary!;
      readBeforeBoundary = null;
      if (!settle || !signal!.aborted) return;
      for (const i of early) {
        if ((results[i] as SettledRead<unknown>).status === 'fulfilled') {
          results[i] = { status: 'rejected', reason: abortError(signal!, readMany) };
        }
      }
    });
  }
  const settleCall = async () => {
    if (boundary !== undefined) {
      await boundary;
      if (!settle && signal!.aborted) throw abortError(signal!, readMany);
    }
    return results;
  };
  const store = (i: number, value: Buffer | string) => {
    results[i] = settle ? { status: 'fulfilled', value } : value;
    readBeforeBoundary?.push(i);
  };
  // Records path i's error, or, without settle, ends the whole call with it.
  const fail = (i: number, err: unknown) => {
    if (!settle) {
      failed = true;
      wakeParked();
      throw err;
    }
    results[i] = { status: 'rejected', reason: err as Error };
  };
  // Path i's hit (see hitRequest).
  const takeHit = (i: number, raw: RawResult, started: number) => {
    try {
      if (common.signal?.aborted) throw abortError(common.signal, readMany);
      const req = hitRequest!;
      countFastPath(true);
      let value: Buffer | string;
      try {
        value = shape(raw, req, list[i], readMany);
      } catch (err) {
        recordRead('fast-path', list[i], err as Error, started);
        throw err;
      }
      recordRead('fast-path', list[i], value, started);
      store(i, value);
    } catch (err) {
      fail(i, err);
    }
  };
  // Path i through perform(): after a miss of the fast path, without it, or trying it there.
  const readThrough = async (i: number, fastPath: 'missed' | 'too-large' | 'skip' | 'try') => {
    try {
      if (common.signal?.aborted) throw abortError(common.signal, readMany);
      const req = request(list[i], common, readMany);
      req.callEnded = callFailed;
      if (fastPath === 'missed' || fastPath === 'too-large') countFastPath(false);
      store(i, await perform(req, list[i], readMany, fastPath === 'try', undefined, fastPath === 'too-large'));
    } catch (err) {
      // A read given up unstarted leaves the call's rejection to the error that ended it.
      if (err !== notStarted) fail(i, err);
    }
  };

  // Cache hits are taken at once, without a promise each, a run of them per call (whose copies
  // fit the fast path's budget); once the fast path has spent its share of a turn of the event
  // loop (turn_clock.ts), the call waits in the line that smartRead's calls wait in, so that a
  // list of cached files cannot hold the loop for longer than about the share. Woken at its
  // turn, the call reads until the share is spent (`turn`), and passes the turn on as it leaves
  // the fast path. Each call's waiting lane once woke at every turn to look at the clock:
  // 10,000 readMany calls at once of 10 cached 4 KiB files each took 6.4 s, against 1.1 s in
  // line and 0.3 s for a smartReadSync loop of the same reads.
  const threads = tuning().readManyThreads;
  // Whether runs may go to pool threads (see readElsewhere), and the pace of the fast path's
  // runs on the JS thread in this call so far (see handOffHalf).
  const canRunElsewhere = threads > 0 && concurrency > 1 && engine.readElsewhereMany !== undefined && runFlags !== null;
  // A long list's runs go there from its start (readElsewhere); a shorter one may hand off once.
  const elsewhereFromStart = canRunElsewhere && list.length > 2 * kCachedRunMax;
  const mayHandOff = canRunElsewhere && !elsewhereFromStart;
  let inlineMs = 0;
  let inlineFiles = 0;
  const turnBudgetMs = fastPathTurnMs();
  // One lane waits for the next turn to go on with the fast path; the others park until there
  // is work for the engines (misses, paths left by a run elsewhere), until a lane goes off to an
  // engine, or until the list is done, instead of all 64 waking each turn to find that one lane
  // is enough for the hits (2,000 cached files of 4 KiB: 276k files/s against 260k, medians of
  // six alternating runs).
  let turnWaiter = false;
  // The call's place in the line: 'woken' at its turn, for its next step on the JS thread
  // whatever the clock says by then (as smartRead's read at its turn), then 'held' until the
  // share is spent or the call leaves the fast path.
  let turn: 'none' | 'woken' | 'held' = 'none';
  const passTurnOn = () => {
    if (turn === 'none') return;
    turn = 'none';
    passTurn(turnBudgetMs);
  };
  let parked: Array<() => void> = [];
  const park = () => new Promise<void>((resolve) => parked.push(resolve));
  function wakeParked() {
    if (parked.length === 0) return;
    const waking = parked;
    parked = [];
    for (const resolve of waking) resolve();
  }
  // Lanes are started as they are needed, up to `lanes`: one to begin with, and one more each
  // time a lane goes off to wait for an engine, or a run elsewhere leaves paths to the lanes. A
  // list of cache hits is read by the first lane alone (64 cached files of 4 KiB, a call: 200 µs
  // with 64 lanes made up front, 182 with lanes started as needed; the smartReadSync loop 178).
  let lanesStarted = 0;
  let lanesRunning = 0;
  // The current runLanes() call's promise; null once its lanes have all ended (what a run
  // elsewhere leaves after that is read by the next call).
  let lanesDone: { resolve: () => void; reject: (err: unknown) => void } | null = null;
  // A lane runs until its first wait as it starts, and may ask for the next one then: those are
  // started one after another here, not one inside the other (10,000 lanes of a cold list would
  // overflow the stack).
  let lanesWanted = 0;
  let startingLanes = false;
  const startLane = () => {
    lanesWanted++;
    if (startingLanes) return;
    startingLanes = true;
    try {
      while (lanesWanted > 0 && lanesDone !== null && lanesStarted < lanes) {
        lanesWanted--;
        const done = lanesDone;
        lanesStarted++;
        lanesRunning++;
        lane().then(() => {
          if (--lanesRunning === 0) {
            lanesDone = null;
            done.resolve();
          }
        }, done.reject);
      }
    } finally {
      lanesWanted = 0;
      startingLanes = false;
    }
  };
  // Starts the first lane; settles once every lane started meanwhile has ended, or with the
  // first error one of them throws (without settle, the call's rejection; the others go on).
  const runLanes = () => new Promise<void>((resolve, reject) => {
    lanesStarted = 0;
    lanesRunning = 0;
    lanesDone = { resolve, reject };
    startLane();
    if (lanesRunning === 0) {
      lanesDone = null;
      resolve();
    }
  });
  // A lane that goes off to wait for an engine first wakes the parked ones, and starts one more,
  // so that the rest of the list does not wait with it.
  const readAside = (i: number, fastPath: 'missed' | 'too-large' | 'skip' | 'try') => {
    passTurnOn();
    wakeParked();
    const reading = readThrough(i, fastPath);
    startLane();
    return reading;
  };

  const lane = async () => {
    try {
      await laneLoop();
    } finally {
      passTurnOn();
      // Parked lanes look again: at what this one left, or at nothing left to do.
      wakeParked();
    }
  };
  const laneLoop = async () => {
    const run: Array<RawResult | null | false | undefined> = [];
    while (!failed) {
      if (nextMissed < missed.length) {
        await readAside(missed[nextMissed++], 'missed');
        continue;
      }
      if (nextTooLarge < tooLarge.length) {
        await readAside(tooLarge[nextTooLarge++], 'too-large');
        continue;
      }
      const leftOver = nextLeft < left.length;
      // With the list read up to its end, a lane helps the run handed off (see helpRun).
      const helping = !leftOver && next >= list.length && shared !== null && !shared.exhausted;
      if (!leftOver && next >= list.length && !helping) break;
      const start = next;
      const fastPath = helping || leftOver ||
        (runFlags !== null && typeof list[start] === 'string' && start >= fastPathFrom);
      if (fastPath) {
        // What the fast path reads holds the JS thread: the lanes' share of a turn is bounded.
        if (turn === 'woken') {
          turn = 'held';
        } else if (turn === 'held' ? turnSpent(turnBudgetMs) : !turnFree(turnBudgetMs)) {
          turn = 'none';
          handOffHalf();
          if (turnWaiter) {
            await park();
          } else {
            turnWaiter = true;
            await waitInLine();
            turnWaiter = false;
            takeTurn();
            turn = 'woken';
          }
          continue;
        }
      }
      if (helping) {
        helpRun(shared!);
        continue;
      }
      if (leftOver) {
        await readAside(left[nextLeft++], 'try');
        continue;
      }
      if (!fastPath) {
        next++;
        await readAside(start, runFlags !== null && start < fastPathFrom ? 'skip' : 'try');
        continue;
      }
      // A run of paths tried by the fast path in one call (misses are shared out among the
      // lanes through `missed`). A hit from a run is timed from the start of its run.
      const want = Math.min(runLength, list.length - start);
      const started = timing() ? performance.now() : -1;
      const endUse = common.root?.use();
      const runStarted = mayHandOff ? performance.now() : 0;
      let count: number;
      try {
        count = engine.readNowMany!(list, start, start + want, runFlags!, run, common.root?.confine);
      } finally {
        endUse?.();
      }
      if (mayHandOff) {
        inlineMs += performance.now() - runStarted;
        inlineFiles += count;
      }
      next = start + count;
      // A miss the engines will make a hit of (null) is no sign of a cold list: a list on
      // overlayfs or FUSE read for the first time lately is all such misses. Nor is a cached
      // file too large for the fast path (false).
      let hits = 0;
      let warming = 0;
      for (let k = 0; k < count; k++) {
        const raw = run[k];
        run[k] = undefined;
        if (raw === false) {
          warming++;
          tooLarge.push(start + k);
        } else if (raw === undefined || raw === null) {
          if (raw === null) warming++;
          missed.push(start + k);
        } else {
          hits++;
          takeHit(start + k, raw, started);
        }
      }
      if (hits < count) wakeParked();
      if (hits === 0 && warming === 0) {
        coldStretch = Math.min(Math.max(coldStretch * 2, 64), 1024);
        fastPathFrom = next + coldStretch;
        runLength = kFirstRun;
      } else {
        coldStretch = 0;
        runLength = kCachedRunMax;
        handOffHalf();
      }
    }
  };
  // While the lanes read runs on the JS thread, runs further on are read on pool threads
  // (tuning().readManyThreads, one per spare core by default): a list of cached files is read by
  // every core. A run there without a single hit (a cold list) ends this for the call; its
  // misses go to the engines as the lanes' do. A run reads its files one at a time: it is one
  // read in flight beside the lanes', so a concurrency of 1 leaves the JS thread alone. Runs are
  // long (kElsewhereRunMax) while the list is, and never more than half of what is left, so
  // that the lanes do not end long before the last run does.
  let elsewhere = elsewhereFromStart;
  // A shorter list gets one run there once the fast path's runs on the JS thread show at least
  // kHandOffMinMs of work left at their pace: half of what is left, read while the lanes go on
  // with the other half, and helped with by the lanes once they are done (helpRun), so that the
  // JS thread neither sits idle until the pool thread has woken nor waits for the loop to turn
  // for the run's results. Before the lanes helped, a hand-off paid off only past two turns'
  // share of work: the JS thread, done with its half, slept until the run settled, where this
  // VM's wake-ups show (64 cached files of 4 KiB handed off: readMany's p99 on overlay 3.9-4.0
  // ms, 0.76-0.79x the smartReadSync loop).
  let handedOff: Promise<void> | null = null;
  // The run handed off, while a lane may still help with it: the lanes, done with the rest of
  // the list, claim its files that the pool thread has not reached and read them here, then
  // take its results at once if the pool thread is done with what it claimed (settling them
  // without a turn of the event loop). A pool thread woken late (this VM's wake-ups take tens of
  // µs, and sometimes the loop's own stall of ms) then costs the call nothing but its files read
  // here, and its results wait for no wake-up (in a script of 1 s rounds, 64 cached files of 64
  // KiB a call, the run settled at once in all but 6 of 4,386 calls).
  let shared: { run: ElsewhereRun; start: number; exhausted: boolean; give: (out: Array<Buffer | number>) => void } | null = null;
  // One path by the fast path on the JS thread, under the call's root (a short list's, or a
  // file of the run handed off).
  const readNowHere = (path: string): RawResult | null | false => {
    const endUse = common.root?.use();
    try {
      return engine.readNow!(path, runFlags!, common.root?.confine);
    } finally {
      endUse?.();
    }
  };
  // One file of the run handed off, read here; once none is left, its results if they are ready.
  const helpRun = (run: NonNullable<typeof shared>) => {
    const k = run.run.claim();
    if (k < 0) {
      run.exhausted = true;
      const out = run.run.settle(kSettleSpinUs);
      if (out !== undefined) run.give(out);
      return;
    }
    const i = run.start + k;
    const path = list[i];
    let raw: RawResult | null | false = null;
    if (typeof path === 'string') {
      const started = timing() ? performance.now() : -1;
      raw = readNowHere(path);
      if (raw !== null && raw !== false && !isRawFailure(raw)) {
        takeHit(i, raw, started);
        return;
      }
    }
    // As the pool thread would have left it: a miss for the engines, a large file for theirs,
    // anything else (an error, not a string) for the lanes' own read, which reports it.
    if (raw === null && typeof path === 'string') missed.push(i);
    else if (raw === false) tooLarge.push(i);
    else left.push(i);
    wakeParked();
  };
  const handOffHalf = () => {
    const remaining = list.length - next;
    if (!mayHandOff || elsewhere || handedOff !== null || failed || remaining < kHandOffMin || coldStretch > 0 ||
      inlineFiles === 0 || remaining * (inlineMs / inlineFiles) < kHandOffMinMs) {
      return;
    }
    elsewhere = true;
    handedOff = readElsewhere(remaining >> 1).finally(() => {
      elsewhere = false;
    });
    // Awaited by readAll; a rejection that ends the call first is the call's, not unhandled.
    handedOff.catch(() => {});
  };
  const readElsewhere = async (only = 0) => {
    while (!failed && elsewhere && next < list.length) {
      const start = next;
      const length = only > 0 ? Math.min(only, kElsewhereRunMax) : Math.max(kCachedRunMax, Math.min(kElsewhereRunMax, (list.length - start) >> 1));
      const end = Math.min(start + length, list.length);
      next = end;
      const started = timing() ? performance.now() : -1;
      const endUse = common.root?.use();
      let out: Array<Buffer | number>;
      try {
        const run = engine.readElsewhereMany!(list, start, end, runFlags!, common.root?.confine);
        // The run handed off is the lanes' to help with; runs from the start are long, and the
        // lanes have the rest of the list to read.
        out = only === 0 ? (await run.done)! : await new Promise<Array<Buffer | number>>((resolve, reject) => {
          shared = { run, start, exhausted: false, give: resolve };
          run.done.then((value) => {
            if (value !== undefined) resolve(value);
          }, reject);
        });
      } finally {
        shared = null;
        endUse?.();
      }
      if (failed) return;
      let hits = 0;
      let warming = 0;
      for (let k = 0; k < out.length; k++) {
        const value = out[k];
        if (typeof value !== 'number') {
          hits++;
          takeHit(start + k, value, started);
        } else if (value === kRunTaken) {
          // Read by a lane (helpRun).
        } else if (value === kRunMiss || value === kRunWarming) {
          if (value === kRunWarming) warming++;
          missed.push(start + k);
        } else {
          left.push(start + k);
        }
      }
      if (hits < out.length) {
        wakeParked();
        startLane();
      }
      if (hits === 0 && warming === 0) elsewhere = false;
      if (only > 0) return;
    }
  };
  const pending = () => nextMissed < missed.length || nextTooLarge < tooLarge.length || nextLeft < left.length;
  const readAll = async () => {
    await Promise.all([
      runLanes(),
      ...Array.from({ length: elsewhereFromStart ? threads : 0 }, () => readElsewhere()),
    ]);
    if (handedOff !== null) await handedOff;
    // What the last runs elsewhere passed on after the lanes had ended.
    while (!failed && pending()) await runLanes();
  };
  // A short list is read from its start file by file, as smartRead's fast path reads one, while
  // the files are cache hits and the turn's share lasts: no lane, no run's own Buffer, no
  // io_uring batch, whose fixed cost a short list does not make up for (cached 4 KiB files, a
  // call: 1 file 5.0 µs against 10.6, 8 files 25.9 against 27.5; 16 files 49.6 against 48.3).
  // A file too large for the fast path is passed to the lanes for the engine's read of a large
  // cached file, and the loop goes on; the lanes take what is left, from the first file that
  // is not a hit (its error, if any, is theirs to give).
  if (list.length <= kShortList && runFlags !== null && engine.readNow) {
    try {
      while (!failed && next < list.length) {
        const path = list[next];
        if (typeof path !== 'string' || !turnFree(turnBudgetMs)) break;
        const started = timing() ? performance.now() : -1;
        const raw = readNowHere(path);
        if (raw === false) {
          tooLarge.push(next++);
          continue;
        }
        if (raw === null || isRawFailure(raw)) break;
        takeHit(next++, raw, started);
      }
    } catch (err) {
      if (common.ownsRoot) common.root!.release();
      throw err;
    }
    if (next === list.length && tooLarge.length === 0) {
      if (common.ownsRoot) common.root!.release();
      return settleCall();
    }
  }
  // The call holds its root until every lane has ended, so that a call begun before its
  // reader's close() ends as it would have, whatever turns of the loop its lanes wait for.
  const endCallUse = common.root?.use();
  const running = readAll();
  if (endCallUse) void running.then(endCallUse, endCallUse);
  // A root opened for this call is released once every lane has ended (reads may still be on
  // their way in the kernel after a rejection; they hold the root themselves).
  if (common.ownsRoot) void running.then(() => common.root!.release(), () => common.root!.release());
  await running;
  return settleCall();
}