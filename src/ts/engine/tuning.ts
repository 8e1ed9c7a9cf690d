// The thresholds 'auto' and io_uring read by: their ranges and defaults, and the calibration
// profiles that set them. The thresholds in use are engine.ts's, which gives them to the addon.
import { availableParallelism } from 'node:os';
import { originalReadFileSync } from '../common/fs_originals';
import { invalidArgValue, withCode } from '../common/errors';

/** The thresholds by which 'auto' chooses and io_uring reads, per thread. */
export interface Tuning {
  /** 'auto' reads a cached file on the calling thread while its copy is expected to take at
   * most this many microseconds (readMany: the files of one run together)... */
  fastPathBudgetUs: number;
  /** ...at this rate, in MB/s, of a copy from the page cache (`smartread calibrate` measures
   * it): the fast path takes files of up to fastPathBudgetUs × copyRateMBps bytes. */
  copyRateMBps: number;
  /** io_uring reads a larger file in chunks of this many bytes... */
  uringChunk: number;
  /** ...with this many in flight (1 to 16). */
  uringInFlight: number;
  /** From this size on, io_uring's reads run on its workers, not inline at submission. */
  uringAsyncFrom: number;
  /** Results of at least this many bytes are read into recycled blocks (0: none are)... */
  blockPoolFrom: number;
  /** ...of which at most this many bytes are kept while no result uses them... */
  blockPoolMaxBytes: number;
  /** ...each for at most this many milliseconds after its last use. */
  blockPoolIdleMs: number;
  /** Pool threads that read runs of a readMany list of cached files beside the JS thread
   * (default: one per core besides it, at most 3; 0: the JS thread alone). */
  readManyThreads: number;
}

/** What `smartread calibrate` writes: the tuning it chose, and what it measured to choose it. */
export interface Profile {
  /** The profile format: 1. */
  version: 1;
  /** The thresholds the profile sets. */
  tuning: Tuning;
  [detail: string]: unknown;
}

const MiB = 1024 * 1024;
const limits: Record<keyof Tuning, { min: number; max: number; multipleOf?: number }> = {
  fastPathBudgetUs: { min: 0, max: 1_000_000 },
  copyRateMBps: { min: 1, max: 1_000_000 },
  uringChunk: { min: 4096, max: 64 * MiB, multipleOf: 4096 },
  uringInFlight: { min: 1, max: 16 },
  uringAsyncFrom: { min: 0, max: Number.MAX_SAFE_INTEGER },
  blockPoolFrom: { min: 0, max: Number.MAX_SAFE_INTEGER },
  blockPoolMaxBytes: { min: 0, max: Number.MAX_SAFE_INTEGER },
  blockPoolIdleMs: { min: 0, max: 24 * 3600 * 1000 },
  readManyThreads: { min: 0, max: 16 },
};
const names = Object.keys(limits) as Array<keyof Tuning>;

/**
 * The size from which results come from the block pool by default. The pool has V8 scavenge
 * for dropped results, as Node's allocator does for its own Buffers, where V8 does that: V8 12
 * and before (Node 20 and 22). There recycled blocks beat fresh Buffers from 128 KiB on
 * (measured on Node 20, a cached file read back to back: 128 KiB 29k -> 51k reads/s with
 * smartReadSync, 512 KiB 12k -> 15k, 2 MiB 3.3k -> 4.1k; smartRead auto 37k -> 43k, 10k -> 14k,
 * 3.4k -> 3.9k), and from 64 KiB on since the pool looks at its loans only after a collection
 * (a loop of 64 KiB reads: 11.2 us a read from the pool, 11.4 from Node's allocator). Where
 * glibc gives the top of its heap back after each scavenge, a fresh Buffer of 64 KiB faulted
 * in 9-11 pages a read (the bench's warm-64k: 27 us a read against 11); a block 0.01-0.06.
 * Below 64 KiB the pool still lost (16 KiB: 6.1 against 5.5 us). From V8 13 (Node 24 and 26)
 * dead results wait for a full collection, and a synchronous loop of results below 8 MiB was
 * slower from the pool (Node 24, 512 KiB: 10.6k -> 8.6k reads/s).
 */
export function defaultBlockPoolFrom(): number {
  return Number(process.versions.v8.split('.')[0]) < 13 ? 64 * 1024 : 8 * 1024 * 1024;
}

// The TypeScript side's own threshold (the addon has none such).
export const defaultReadManyThreads = Math.max(0, Math.min(availableParallelism() - 1, 3));

/** The addon's own defaults (instance.h), which the pure-JS engine keeps to report, and readManyThreads. */
export function defaultTuning(): Tuning {
  return {
    fastPathBudgetUs: 500, copyRateMBps: 8000, uringChunk: 2 * MiB, uringInFlight: availableParallelism() <= 2 ? 4 : 8, uringAsyncFrom: 512 * 1024,
    blockPoolFrom: defaultBlockPoolFrom(), blockPoolMaxBytes: 256 * MiB, blockPoolIdleMs: 3000, readManyThreads: defaultReadManyThreads,
  };
}

/**
 * `from` with `changes` made, each checked against its range (setTuning's rules).
 *
 * @throws ERR_INVALID_ARG_VALUE for an unknown name or a value out of range, with the stack of `caller`.
 */
export function withChanges(from: Tuning, changes: Partial<Tuning>, caller: Function): Tuning {
  if (changes === null || typeof changes !== 'object') {
    throw invalidArgValue('changes', changes, 'must be an object', caller);
  }
  const next = { ...from };
  for (const [name, value] of Object.entries(changes)) {
    const limit = limits[name as keyof Tuning];
    if (limit === undefined) {
      throw invalidArgValue(`changes.${name}`, value, `is not a threshold (${names.join(', ')})`, caller);
    }
    if (!Number.isSafeInteger(value) || value < limit.min || value > limit.max ||
        (limit.multipleOf !== undefined && value % limit.multipleOf !== 0)) {
      const multiple = limit.multipleOf ? `, a multiple of ${limit.multipleOf}` : '';
      throw invalidArgValue(`changes.${name}`, value, `must be an integer from ${limit.min} to ${limit.max}${multiple}`, caller);
    }
    next[name as keyof Tuning] = value;
  }
  return next;
}

/**
 * The thresholds a profile written by `smartread calibrate` sets, unchecked (useProfile's rules).
 *
 * @throws ERR_SMARTREAD_BAD_PROFILE, with the stack of `caller`, when it cannot be read or is not a profile.
 */
export function profileTuning(profile: string | Profile, caller: Function): Partial<Tuning> {
  let data: unknown = profile;
  if (typeof profile === 'string') {
    try {
      data = JSON.parse(originalReadFileSync(profile, 'utf8'));
    } catch (err) {
      throw withCode(new Error(`smartread: cannot read the profile ${profile}: ${(err as Error).message}`), 'ERR_SMARTREAD_BAD_PROFILE', caller);
    }
  }
  const p = data as Partial<Profile> | null;
  if (p === null || typeof p !== 'object' || p.version !== 1 || p.tuning === null || typeof p.tuning !== 'object') {
    throw withCode(new Error('smartread: not a calibration profile (expected { version: 1, tuning: {...} })'), 'ERR_SMARTREAD_BAD_PROFILE', caller);
  }
  return p.tuning;
}
