// The engines smartRead can use, whether each is usable here, and why not when it is not.
import {
  cachedRead, cachedReadElsewhere, cachedReadMany, engine, loadReport, native,
  type CachedRead, type CachedReadElsewhere, type CachedReadMany,
} from '../engine/engine';
import { jsReadAsync } from '../engine/js_engine';
import { mapForRead } from './map_file';
import { turnBeingHandedOn } from './turn_clock';
import type { AsyncRead, Confine, NativeBinding } from '../engine/native';
import type { RawResult } from '../common/raw';

/**
 * The engine a read uses: 'auto' (the fast path, then io_uring, then the thread pool), or one
 * forced: 'sync' (the calling thread), 'uring', 'threadpool', 'mmap'.
 */
export type Strategy = 'auto' | 'sync' | 'uring' | 'threadpool' | 'mmap';
export const strategyNames: readonly Strategy[] = ['auto', 'sync', 'uring', 'threadpool', 'mmap'];

export interface AsyncEngine {
  readonly name: Exclude<Strategy, 'auto'>;
  /** Reads one file; `id` names the read for cancel(). */
  read(target: string | Buffer | number, flags: number, statUserFd: boolean, id: number, confine?: Confine): Promise<RawResult>;
  /** Stops read `id` where the engine can (io_uring cancels it in the kernel). */
  cancel?(id: number): void;
  /** The result at once when it can be had without waiting (a cache hit), else null, or false
   * for a regular file too large to copy within the fast path's budget; callers try it before
   * read() (or, after false, readLarge() where there is one), which do not. */
  readNow?(target: string | Buffer | number, flags: number, confine?: Confine): RawResult | null | false;
  /** read() of a path readNow() found too large: its chunks go out at once, in parallel. */
  readLarge?(target: string | Buffer, flags: number, id: number, confine?: Confine): Promise<RawResult>;
  /** readNow over a run of a list in one go (see CachedReadMany); string paths only. */
  readNowMany?: (paths: readonly unknown[], start: number, end: number, flags: number,
    out: Array<RawResult | null | false | undefined>, confine?: Confine) => number;
  /** readNowMany's hits on a pool thread, while the calling thread reads on (CachedReadElsewhere). */
  readElsewhereMany?: CachedReadElsewhere;
}

// On the calling thread, settled as a promise.
const syncEngine: AsyncEngine = {
  name: 'sync',
  read: async (target, flags, statUserFd, _id, confine) => engine.readFileSync(target, flags, statUserFd, confine),
};

// The addon's pool worker, or node:fs's asynchronous calls (also libuv's thread pool).
const threadpoolRead: AsyncRead = native
  ? (target, flags, statUserFd, confine) => native!.threadpoolRead(target, flags, statUserFd, confine?.dirfd, confine?.resolve)
  : jsReadAsync;
const threadpoolEngine: AsyncEngine = {
  name: 'threadpool',
  read: (target, flags, statUserFd, _id, confine) => threadpoolRead(target, flags, statUserFd, confine),
};

// The file mapped, a Buffer over the mapping; what cannot be mapped is read on the calling thread.
const mmapEngine: AsyncEngine = {
  name: 'mmap',
  read: async (target, flags, statUserFd) => mapForRead(target, flags, statUserFd),
};

// Reads queued in one tick, whole-file and positional alike, are submitted together by one
// microtask: one io_uring_enter for a whole batch instead of one per read. While the turn line
// hands the turn from call to call (turn_clock.ts), each woken call starts its read in a promise
// reaction queued behind this microtask, which then waits for it, up to kMostHandOffs times:
// without that wait, readMany's lanes and smartRead calls in the line went to the kernel one read
// per io_uring_enter (2,000 cached 4 KiB files with strategy 'uring', 64 lanes: ~3 enters a
// file, against one a 64 files when the line was idle). The bound keeps a submission to 17 such
// reads: those of cached pages complete inline as it is made, past the turn's share.
const kMostHandOffs = 16;
let submitQueued = false;
let handOffsWaited = 0;
const submitUring = () => {
  if (turnBeingHandedOn() && handOffsWaited < kMostHandOffs) {
    handOffsWaited++;
    queueMicrotask(submitUring);
    return;
  }
  handOffsWaited = 0;
  submitQueued = false;
  native?.uringSubmit?.();
};

/**
 * The promise of a request the addon has just queued on the ring (no syscall yet): what is
 * queued is submitted once the current tick's synchronous code is done.
 */
export function submittedSoon<T>(pending: Promise<T>): Promise<T> {
  if (!submitQueued) {
    submitQueued = true;
    queueMicrotask(submitUring);
  }
  return pending;
}

function uringEngine(binding: Required<NativeBinding>): AsyncEngine {
  return {
    name: 'uring',
    read(target, flags, statUserFd, id, confine) {
      return submittedSoon(binding.uringRead(target, flags, statUserFd, id, confine?.dirfd, confine?.resolve));
    },
    readLarge(target, flags, id, confine) {
      return submittedSoon(binding.uringRead(target, flags, true, id, confine?.dirfd, confine?.resolve, true));
    },
    cancel: (id) => binding.uringCancel(id),
  };
}

let uring: AsyncEngine | string | undefined;

/** The io_uring engine, or why it cannot be used here; the ring is set up on the first ask. */
export function uringAvailability(): AsyncEngine | string {
  if (uring === undefined) {
    if (process.env.SMARTREAD_IO_URING === '0') {
      uring = 'io_uring is turned off (SMARTREAD_IO_URING=0)';
    } else if (!native) {
      uring = `the native addon is not in use (${loadReport.reason})`;
    } else if (!native.uringStatus || !native.uringRead || !native.uringSubmit || !native.uringCancel) {
      uring = 'the addon was built without liburing';
    } else {
      const why = native.uringStatus();
      uring = why === null ? uringEngine(native as Required<NativeBinding>) : why;
    }
  }
  return uring;
}

// The first rung of 'auto': a file that is in memory is read on the calling thread, without a
// hop to another thread or a ring (the promise still settles asynchronously). A miss costs a
// failed openat2 or preadv2 and goes to the next engine: callers try readNow first and, on a
// miss, call read(), which is the next engine's.
function withCacheFastPath(next: AsyncEngine, tryCached: CachedRead, tryCachedMany: CachedReadMany,
  tryElsewhere: CachedReadElsewhere | null): AsyncEngine {
  return {
    name: next.name,
    read: next.read,
    readLarge: next.readLarge,
    cancel: next.cancel,
    readNow: (target, flags, confine) => (typeof target === 'number' ? null : tryCached(target, flags, confine)),
    readNowMany: (paths, start, end, flags, out, confine) =>
      tryCachedMany(paths, start, end, flags, out, next.name === 'uring', confine),
    readElsewhereMany: tryElsewhere ?? undefined,
  };
}

let autoEngine: AsyncEngine | undefined;

/** The engine for a strategy, or why it is not available. */
export function engineFor(strategy: Strategy): AsyncEngine | string {
  switch (strategy) {
    case 'sync':
      return syncEngine;
    case 'threadpool':
      return threadpoolEngine;
    case 'uring':
      return uringAvailability();
    case 'mmap':
      return mmapEngine;
    case 'auto': {
      if (autoEngine === undefined) {
        const ring = uringAvailability();
        const next = typeof ring === 'string' ? threadpoolEngine : ring;
        autoEngine = cachedRead && cachedReadMany ? withCacheFastPath(next, cachedRead, cachedReadMany, cachedReadElsewhere) : next;
      }
      return autoEngine;
    }
  }
}
