// The engine this process reads with, and the thresholds it reads by: the addon when it loads,
// else the pure-JS engine. The one module that loads it and holds the tuning (and gives it to the
// addon); the rest of the package imports both from here.
import type { Confine, Engine, NativeBinding } from './native';
import { loadNative, type LoadReport } from './loader';
import type { RawResult } from '../common/raw';
import { jsEngine } from './js_engine';
import { withCode } from '../common/errors';
import { defaultReadManyThreads, defaultTuning, profileTuning, withChanges, type Profile, type Tuning } from './tuning';

/** A read that succeeds only if it need not wait (the file is cached), else null; false for a
 * regular file whose path is cached but whose copy would take longer than the fast path's
 * budget (a large file, for the engines that read in parallel chunks). */
export type CachedRead = (target: string | Buffer, flags: number, confine?: Confine) => RawResult | null | false;

/**
 * The fast path over a run of a list, paths[start..end): out[k] is the result of a hit on
 * paths[start + k], null for a miss the engines will make a hit of (a file on overlayfs or FUSE
 * read for the first time lately), false for a regular file whose path is cached, too large to
 * copy within the fast path's budget (as CachedRead's false), undefined otherwise (a miss, an
 * error, not a string: the caller reads those one by one). Returns how many it went through, at
 * least one. onRing: the engine after the fast path is io_uring, which may then read the run's
 * small files in one batch.
 */
export type CachedReadMany = (paths: readonly unknown[], start: number, end: number, flags: number,
  out: Array<RawResult | null | false | undefined>, onRing: boolean, confine?: Confine) => number;

/**
 * The fast path over a run of a list on a pool thread (while the JS thread reads another run):
 * for each of paths[start..end) (at most kElsewhereRunMax), a hit's Buffer, kRunMiss (not in
 * memory: for the engines), kRunLeft (for the JS thread's own fast path: not a string, not a
 * small regular file, an error) or kRunTaken (claimed by the JS thread, see ElsewhereRun).
 */
export type CachedReadElsewhere = (paths: readonly unknown[], start: number, end: number, flags: number,
  confine?: Confine) => ElsewhereRun;
/** A run on a pool thread, which the JS thread may help with once it has nothing else to read. */
export interface ElsewhereRun {
  /** Its results, unless settle() gave them first (then undefined). */
  done: Promise<Array<Buffer | number> | undefined>;
  /** The index (from start) of the next path nobody has claimed, now the caller's to read; -1: none left. */
  claim(): number;
  /** Once claim() has returned -1: the results, when the pool thread finishes what it claimed
   * within spinUs (waited for on this thread); undefined otherwise, and done gives them. */
  settle(spinUs: number): Array<Buffer | number> | undefined;
}
export const kRunMiss = -1;
export const kRunLeft = -4;
/** A miss the engines will make a hit of (cached_run.h kRunWarming): not a sign of a cold list. */
export const kRunWarming = -5;
/** A path the JS thread claimed from a run elsewhere and read itself (cached_run.h kRunTaken). */
export const kRunTaken = -6;

// The longest run one cachedReadMany call takes.
export const kCachedRunMax = 64;
// The longest run one cachedReadElsewhere call takes (cached_run.h says why it is longer).
export const kElsewhereRunMax = 256;

// Small results share a slab, as Node's own small Buffers share Buffer.poolSize: a view costs
// far less than a Buffer of its own (one malloc, and one free on a sweeper thread, per read).
// As with Buffer.allocUnsafe, a small result keeps its slab alive while it lives.
const kPoolSize = 32 * 1024;
const kPooledMax = 4096;
// cachedReadBatch's marks for a path that was not a hit, and for one past the end of the run
// (the run's copies had used up the fast path's budget).
const kNotHit = -1;
const kNotReached = -3;
const kWarmingMiss = -5;
const kTooLargeMiss = -6;

// A run's results from the pool thread: a Buffer over the slab for each hit, else its mark.
function resultsOfRun([slab, results]: [Buffer, Int32Array]): Array<Buffer | number> {
  const out: Array<Buffer | number> = new Array(results.length / 2);
  for (let k = 0; k < out.length; k++) {
    const size = results[2 * k];
    out[k] = size >= 0 ? Buffer.from(slab.buffer, slab.byteOffset + results[2 * k + 1], size) : size;
  }
  return out;
}

// The addon's synchronous readers, with the pool they share.
function nativeReaders(binding: NativeBinding): {
  engine: Engine; cachedRead: CachedRead; cachedReadMany: CachedReadMany; cachedReadElsewhere: CachedReadElsewhere;
} {
  // cachedReadBatch's results: per path of a run, a size (or a mark) and where it is.
  const runResults = new Int32Array(2 * kCachedRunMax);
  let pool = Buffer.allocUnsafeSlow(0);
  let offset = kPoolSize;
  // Where the next small result may go; a new slab when this one is full.
  const slot = () => {
    if (offset + kPooledMax > kPoolSize) {
      pool = Buffer.allocUnsafeSlow(kPoolSize);
      binding.setPool(pool);
      offset = 0;
    }
    return offset;
  };
  // The result of a read that may have gone into the pool (a byte count) as a Buffer.
  const take = <T>(result: T | number): T | Buffer => {
    if (typeof result !== 'number') return result;
    const view = Buffer.from(pool.buffer, offset, result);
    offset = (offset + result + 7) & ~7;
    return view;
  };
  return {
    engine: {
      readFileSync: (target, flags, statUserFd, confine) =>
        take(binding.readFileSync(target, flags, statUserFd, slot(), confine?.dirfd, confine?.resolve)) as RawResult,
      mapFile: binding.mapFile.bind(binding),
      readIntoSync: binding.readIntoSync.bind(binding),
      readIntoAsync: binding.readIntoAsync.bind(binding),
    },
    cachedRead: (target, flags, confine) =>
      take(binding.cachedRead(target, flags, slot(), confine?.dirfd, confine?.resolve)) as RawResult | null | false,
    cachedReadMany: (paths, start, end, flags, out, onRing, confine) => {
      // A run's small results share one Buffer.
      const slab = binding.cachedReadBatch(paths, start, end, flags, runResults, out, onRing, confine?.dirfd, confine?.resolve);
      const count = Math.min(end - start, kCachedRunMax);
      for (let k = 0; k < count; k++) {
        const size = runResults[2 * k];
        if (size >= 0) out[k] = Buffer.from(slab!.buffer, slab!.byteOffset + runResults[2 * k + 1], size);
        else if (size === kNotHit) out[k] = undefined;
        else if (size === kWarmingMiss) out[k] = null;
        else if (size === kTooLargeMiss) out[k] = false;
        else if (size === kNotReached) return k;
      }
      return count;
    },
    cachedReadElsewhere: (paths, start, end, flags, confine) => {
      const [settled, run] = binding.cachedReadRun(paths, start, end, flags, confine?.dirfd, confine?.resolve);
      return {
        done: settled.then((value) => (value === undefined ? undefined : resultsOfRun(value))),
        claim: () => binding.cachedRunClaim(run),
        settle: (spinUs) => {
          const value = binding.cachedRunSettle(run, spinUs);
          return value === undefined ? undefined : resultsOfRun(value);
        },
      };
    },
  };
}

const loaded = loadNative();
const readers = loaded.binding ? nativeReaders(loaded.binding) : null;

export const native: NativeBinding | null = loaded.binding;
export const engine: Engine = readers ? readers.engine : jsEngine;
/** The cache-hit fast path; null on the pure-JS engine. */
export const cachedRead: CachedRead | null = readers ? readers.cachedRead : null;
/** The fast path over a run of a list; null on the pure-JS engine. */
export const cachedReadMany: CachedReadMany | null = readers ? readers.cachedReadMany : null;
/** The same on a pool thread; null on the pure-JS engine. */
export const cachedReadElsewhere: CachedReadElsewhere | null = readers ? readers.cachedReadElsewhere : null;
export const loadReport: LoadReport = loaded.report;

// The thresholds in use in this thread: the addon's own (instance.h), or the pure-JS engine's
// copy of them to report.
let current: Tuning = native ? { ...native.tuning(), readManyThreads: defaultReadManyThreads } : defaultTuning();

/** The largest file the fast path reads on the calling thread, in bytes. */
export function fastPathMax(t: Tuning = current): number {
  return t.fastPathBudgetUs * t.copyRateMBps;
}

/** The thresholds in use in this thread. */
export function tuning(): Tuning {
  return { ...current };
}

/** The fast path's share of one turn of the event loop, in ms: half its budget (read_async.ts). */
export function fastPathTurnMs(): number {
  return current.fastPathBudgetUs / 2000;
}

/**
 * Changes some thresholds in this thread (reads already started keep theirs).
 *
 * @param changes - The thresholds to change; each must be an integer in its range.
 * @returns Every threshold, as {@link tuning} returns them.
 * @throws ERR_INVALID_ARG_VALUE for an unknown name or a value out of range.
 */
export function setTuning(changes: Partial<Tuning>): Tuning {
  const next = withChanges(current, changes, setTuning);
  native?.setTuning(next);
  current = next;
  return tuning();
}

/**
 * Applies a profile written by `smartread calibrate`.
 *
 * @param profile - The path of its JSON file, or the profile itself.
 * @returns Every threshold, as {@link tuning} returns them.
 * @throws ERR_SMARTREAD_BAD_PROFILE when it cannot be read or is not a valid profile.
 */
export function useProfile(profile: string | Profile): Tuning {
  const changes = profileTuning(profile, useProfile);
  try {
    return setTuning(changes);
  } catch (err) {
    throw withCode(new Error(`smartread: a bad profile: ${(err as Error).message}`), 'ERR_SMARTREAD_BAD_PROFILE', useProfile);
  }
}

// SMARTREAD_PROFILE names a profile to use from the start. A bad one must not stop the
// package from loading: it is reported as a warning, and the defaults stay.
if (process.env.SMARTREAD_PROFILE) {
  try {
    useProfile(process.env.SMARTREAD_PROFILE);
  } catch (err) {
    process.emitWarning((err as Error).message, { code: 'SMARTREAD_PROFILE' });
  }
}
