// The thresholds 'auto' and io_uring read by, and calibration profiles that set them.
import { availableParallelism } from 'node:os';
import { originalReadFileSync } from './fs_originals';
import { native } from './engine';
import { defaultBlockPoolFrom } from './native';
import { invalidArgValue, withCode } from './errors';

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

// The addon's own defaults (instance.h); the JS engine keeps the same numbers to report.
// readManyThreads is the TypeScript side's own.
const readManyThreads = Math.max(0, Math.min(availableParallelism() - 1, 3));
let current: Tuning = native ? { ...native.tuning(), readManyThreads } : {
  fastPathBudgetUs: 500, copyRateMBps: 8000, uringChunk: 2 * MiB, uringInFlight: availableParallelism() <= 2 ? 4 : 8, uringAsyncFrom: 512 * 1024,
  blockPoolFrom: defaultBlockPoolFrom(), blockPoolMaxBytes: 256 * MiB, blockPoolIdleMs: 3000, readManyThreads,
};

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
  if (changes === null || typeof changes !== 'object') {
    throw invalidArgValue('changes', changes, 'must be an object', setTuning);
  }
  const next = { ...current };
  for (const [name, value] of Object.entries(changes)) {
    const limit = limits[name as keyof Tuning];
    if (limit === undefined) {
      throw invalidArgValue(`changes.${name}`, value, `is not a threshold (${names.join(', ')})`, setTuning);
    }
    if (!Number.isSafeInteger(value) || value < limit.min || value > limit.max ||
        (limit.multipleOf !== undefined && value % limit.multipleOf !== 0)) {
      const multiple = limit.multipleOf ? `, a multiple of ${limit.multipleOf}` : '';
      throw invalidArgValue(`changes.${name}`, value, `must be an integer from ${limit.min} to ${limit.max}${multiple}`, setTuning);
    }
    next[name as keyof Tuning] = value;
  }
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
  let data: unknown = profile;
  if (typeof profile === 'string') {
    try {
      data = JSON.parse(originalReadFileSync(profile, 'utf8'));
    } catch (err) {
      throw withCode(new Error(`smartread: cannot read the profile ${profile}: ${(err as Error).message}`), 'ERR_SMARTREAD_BAD_PROFILE', useProfile);
    }
  }
  const p = data as Partial<Profile> | null;
  if (p === null || typeof p !== 'object' || p.version !== 1 || p.tuning === null || typeof p.tuning !== 'object') {
    throw withCode(new Error('smartread: not a calibration profile (expected { version: 1, tuning: {...} })'), 'ERR_SMARTREAD_BAD_PROFILE', useProfile);
  }
  try {
    return setTuning(p.tuning);
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
