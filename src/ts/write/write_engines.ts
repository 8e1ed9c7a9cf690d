// The engines writes can use, chosen by one ladder: io_uring, then libuv's thread pool, then
// node:fs where the addon is missing; and the calling thread for the synchronous calls.
import { native } from '../engine/engine';
import { submittedSoon, uringAvailability } from '../read/strategies';
import { errnoOf, strategyUnavailable } from '../common/errors';
import { jsMkdirAll, jsMkdirAllSync, jsWriteFile, jsWriteFileSync } from './js_write_engine';
import type { Confine, NativeBinding } from '../engine/native';
import type { RawFailure } from '../common/raw';

/** The engine a write runs on: 'auto' (the default) chooses; the others force one. */
export type WriteStrategy = 'auto' | 'sync' | 'uring' | 'threadpool';
export const writeStrategyNames: readonly WriteStrategy[] = ['auto', 'sync', 'uring', 'threadpool'];

/** A run of whole-file writes that share their flags. */
export interface WriteJob {
  targets: Array<string | Buffer | number>;
  datas: Uint8Array[];
  /** Each file's mode. */
  modes: Uint32Array;
  flags: number;
  flush: boolean;
  /** 0 in place, 1 atomic, 2 atomic where the target does not exist yet. */
  atomic: number;
  confine?: Confine;
}

/** Each write's failure by index, or undefined when all succeeded. */
export type WriteFailures = Array<RawFailure | undefined> | undefined;
/** A mkdir -p that failed; `at` is the byte length of the level node's asynchronous walk names. */
export type MkdirFailure = RawFailure & { at?: number };
/** Each mkdir -p's first directory made (as node names it), undefined, or its failure. */
export type MkdirResults = Array<string | undefined | MkdirFailure>;

export interface WriteEngine {
  readonly name: 'sync' | 'uring' | 'threadpool' | 'js';
  /** Writes every file of the job, at most `concurrency` at once; `id` names it for cancel(). */
  writeFiles(job: WriteJob, concurrency: number, id: number): Promise<WriteFailures>;
  /** fs.mkdir(path, { recursive: true, mode }) for each path, as if one after another. */
  mkdirMany(paths: Array<string | Buffer>, mode: number, confine: Confine | undefined, concurrency: number, id: number): Promise<MkdirResults>;
  /** Stops the job or mkdirs `id` where it can; its promise still settles (ECANCELED for what it stopped). */
  cancel?(id: number): void;
}

/** A failure of an op stopped by cancel(). */
export const ECANCELED = errnoOf('ECANCELED');
const cancelled: RawFailure = { errno: ECANCELED, syscall: 'write' };

/** The first directory made as node names it, from the addon's byte length in the path. */
function firstMade(target: string | Buffer, result: number | MkdirFailure): string | undefined | MkdirFailure {
  if (typeof result !== 'number') return result;
  if (result < 0) return undefined;
  return (typeof target === 'string' ? Buffer.from(target) : target).toString('utf8', 0, result);
}

/** The level of a path that a mkdir failure names (`at` bytes of it), as node names paths. */
export function levelOf(target: string | Buffer, at: number): string | Buffer {
  if (typeof target !== 'string') return target.subarray(0, at);
  return at === Buffer.byteLength(target) ? target : Buffer.from(target).toString('utf8', 0, at);
}

/** The calling thread's writes: the addon, or node:fs. */
export const syncWrites = native
  ? {
    writeFileSync: (target: string | Buffer | number, data: Uint8Array, flags: number, mode: number, flush: boolean, atomic: number, confine?: Confine) =>
      native!.writeFileSync(target, data, flags, mode, flush, atomic, confine?.dirfd, confine?.resolve),
    mkdirAllSync: (target: string | Buffer, mode: number, asyncErrors: boolean, confine?: Confine) =>
      firstMade(target, native!.mkdirAllSync(target, mode, asyncErrors, confine?.dirfd, confine?.resolve)),
  }
  : {
    writeFileSync: (target: string | Buffer | number, data: Uint8Array, flags: number, mode: number, flush: boolean, atomic: number) =>
      jsWriteFileSync(target, data, flags, mode, flush, atomic),
    mkdirAllSync: (target: string | Buffer, mode: number) => jsMkdirAllSync(target, mode),
  };

/** Which of `paths` the environment knows to be directories (always none on the pure-JS engine). */
export function knownDirs(paths: Array<string | Buffer>): Uint8Array {
  const out = new Uint8Array(paths.length);
  if (native && paths.length > 0) native.dirsKnown(paths, out);
  return out;
}

export function forgetDirs(paths: Array<string | Buffer>): void {
  if (native && paths.length > 0) native.forgetDirs(paths);
}

// The calling thread, settled as a promise: one file after another.
const syncEngine: WriteEngine = {
  name: 'sync',
  async writeFiles(job) {
    let failures: WriteFailures;
    job.targets.forEach((target, i) => {
      const failure = syncWrites.writeFileSync(target, job.datas[i], job.flags, job.modes[i], job.flush, job.atomic, job.confine);
      if (failure) (failures ??= [])[i] = failure;
    });
    return failures;
  },
  async mkdirMany(paths, mode, confine, concurrency, id) {
    // For fs.mkdir's callers: its asynchronous walk's errors, which node:fs gives only through
    // fs.promises.mkdir where the addon is missing.
    if (!native) return jsEngine.mkdirMany(paths, mode, confine, concurrency, id);
    return paths.map((target) => syncWrites.mkdirAllSync(target, mode, true, confine));
  },
};

// Runs of a list, each one job on the pool: a thread hop per run rather than per file, with
// enough runs in flight to keep the pool's threads busy and the list's end not waiting on one.
const kPoolRunMax = 64;
const kPoolLanesMax = 8;
const stopped = new Set<number>();
// The byte each running job's pool runs look at (WriteRequest::stop, MkdirManyJob::stop), by
// id: set by cancel(), so that the file a run is writing is not renamed over its target, and the
// paths it has not begun are not made, after an abort.
const stopBytes = new Map<number, Uint8Array>();

function cancelPoolWrites(id: number): void {
  stopped.add(id);
  const stop = stopBytes.get(id);
  if (stop) stop[0] = 1;
}

// Each run gets the job's stop byte, which cancel(id) sets while the job runs.
async function inPoolRuns(count: number, concurrency: number, id: number,
  run: (start: number, end: number, stop: Uint8Array) => Promise<void>, skip: (start: number, end: number) => void): Promise<void> {
  const stop = new Uint8Array(1);
  stopBytes.set(id, stop);
  const lanes = Math.max(1, Math.min(kPoolLanesMax, Math.ceil(concurrency / 16), count));
  const size = Math.max(1, Math.min(kPoolRunMax, Math.ceil(count / (lanes * 4))));
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const start = next;
      const end = Math.min(count, start + size);
      next = end;
      if (stopped.has(id)) skip(start, end);
      else await run(start, end, stop);
    }
  };
  try {
    await Promise.all(Array.from({ length: lanes }, lane));
  } finally {
    stopped.delete(id);
    stopBytes.delete(id);
  }
}

function nativePoolEngine(binding: NativeBinding): WriteEngine {
  return {
    name: 'threadpool',
    async writeFiles(job, concurrency, id) {
      let failures: WriteFailures;
      await inPoolRuns(job.targets.length, concurrency, id, async (start, end, stop) => {
        const run = await binding.threadpoolWriteFiles(job.targets.slice(start, end), job.datas.slice(start, end),
          job.modes.subarray(start, end), job.flags, job.flush, job.atomic, job.confine?.dirfd, job.confine?.resolve, stop);
        run?.forEach((failure, k) => {
          if (failure) (failures ??= [])[start + k] = failure;
        });
      }, (start, end) => {
        for (let i = start; i < end; i++) (failures ??= [])[i] = cancelled;
      });
      return failures;
    },
    async mkdirMany(paths, mode, confine, concurrency, id) {
      const results: MkdirResults = new Array(paths.length);
      await inPoolRuns(paths.length, concurrency, id, async (start, end, stop) => {
        const run = await binding.threadpoolMkdirMany(paths.slice(start, end), mode, confine?.dirfd, confine?.resolve, stop);
        run.forEach((result, k) => {
          results[start + k] = firstMade(paths[start + k], result);
        });
      }, (start, end) => {
        for (let i = start; i < end; i++) results[i] = { errno: ECANCELED, syscall: 'mkdir' };
      });
      return results;
    },
    cancel: cancelPoolWrites,
  };
}

// node:fs's asynchronous calls, `concurrency` at once.
const jsEngine: WriteEngine = {
  name: 'js',
  async writeFiles(job, concurrency, id) {
    let failures: WriteFailures;
    const isStopped = () => stopped.has(id);
    await inLanes(job.targets.length, concurrency, id, async (i) => {
      const failure = await jsWriteFile(job.targets[i], job.datas[i], job.flags, job.modes[i], job.flush, job.atomic, isStopped);
      if (failure) (failures ??= [])[i] = failure;
    }, (i) => {
      (failures ??= [])[i] = cancelled;
    });
    return failures;
  },
  async mkdirMany(paths, mode, _confine, concurrency, id) {
    const results: MkdirResults = new Array(paths.length);
    // In order, as the results are those of making the paths one after another.
    await inLanes(paths.length, Math.min(concurrency, 1), id, async (i) => {
      results[i] = await jsMkdirAll(paths[i], mode);
    }, (i) => {
      results[i] = { errno: ECANCELED, syscall: 'mkdir' };
    });
    return results;
  },
  cancel: (id) => stopped.add(id),
};

async function inLanes(count: number, concurrency: number, id: number, each: (i: number) => Promise<void>, skip: (i: number) => void): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const i = next++;
      if (stopped.has(id)) skip(i);
      else await each(i);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, count)) }, lane));
  } finally {
    stopped.delete(id);
  }
}

const threadpoolEngine: WriteEngine = native ? nativePoolEngine(native) : jsEngine;

// The ring, with the ops this kernel's io_uring lacks (RENAMEAT before 5.11, MKDIRAT before
// 5.15) and confined writes (openat2 beneath a root for every level) on the pool.
function uringWriteEngine(binding: Required<NativeBinding>, support: { writes: boolean; atomic: boolean; mkdir: boolean }): WriteEngine {
  return {
    name: 'uring',
    writeFiles(job, concurrency, id) {
      if (job.confine || (job.atomic !== 0 && !support.atomic)) return threadpoolEngine.writeFiles(job, concurrency, id);
      return submittedSoon(binding.uringWriteFiles(job.targets, job.datas, job.modes, job.flags, job.flush, job.atomic, concurrency, id));
    },
    async mkdirMany(paths, mode, confine, concurrency, id) {
      if (confine || !support.mkdir) return threadpoolEngine.mkdirMany(paths, mode, confine, concurrency, id);
      const results = (await submittedSoon(binding.uringMkdirMany(paths, mode, concurrency, id))).map((result, i) => firstMade(paths[i], result));
      // A path that failed without making anything is walked again as node walks, on the pool,
      // for node's error in every detail (mkdir_many.h); what was cancelled stays so.
      const failed = results.flatMap((r, i) => (r !== undefined && typeof r !== 'string' && r.at === undefined && r.errno !== ECANCELED ? [i] : []));
      if (failed.length > 0) {
        const again = await threadpoolEngine.mkdirMany(failed.map((i) => paths[i]), mode, undefined, concurrency, id);
        failed.forEach((i, k) => {
          results[i] = again[k];
        });
      }
      return results;
    },
    cancel(id) {
      binding.uringCancelBatch(id);
      threadpoolEngine.cancel?.(id);
    },
  };
}

let uring: WriteEngine | string | undefined;

/** The io_uring write engine, or why it cannot be used here. */
export function uringWriteAvailability(): WriteEngine | string {
  if (uring === undefined) {
    const ring = uringAvailability();
    if (typeof ring === 'string') {
      uring = ring;
    } else if (!native?.uringWriteSupport || !native.uringWriteFiles || !native.uringMkdirMany || !native.uringCancelBatch) {
      uring = 'the addon was built without io_uring writes';
    } else {
      const support = native.uringWriteSupport();
      uring = support.writes
        ? uringWriteEngine(native as Required<NativeBinding>, support)
        : support.why ?? "this kernel's io_uring lacks OPENAT, WRITE, FSYNC or CLOSE";
    }
  }
  return uring;
}

/** The engine for a strategy, or its error (a forced engine that is missing is never replaced). */
export function writeEngineFor(strategy: WriteStrategy, caller: Function): WriteEngine {
  switch (strategy) {
    case 'sync':
      return syncEngine;
    case 'threadpool':
      return threadpoolEngine;
    case 'uring': {
      const engine = uringWriteAvailability();
      if (typeof engine === 'string') throw strategyUnavailable(strategy, engine, caller);
      return engine;
    }
    case 'auto': {
      if (autoEngine === undefined) {
        const ring = uringWriteAvailability();
        autoEngine = typeof ring === 'string' ? threadpoolEngine : byBatchSize(ring, threadpoolEngine);
      }
      return autoEngine;
    }
  }
}

// From this many files (or paths) a batch goes to the pool's runs. Measured with bench:write on
// tmpfs (a 2-vCPU VM): 2,000 files into a new tree, writeMany 81k files/s on the pool against
// 68k on the ring (whose completions keep the JS thread busy on a CPU the kernel's workers
// want, against one hop per run of 64 files); 100,000 nested paths, mkdirMany 1.37× the
// mkdirSync loop on the pool, 1.02× on the ring. Single files and small batches stay on the
// ring, where the calls of a tick share one submission: 64 smartWriteFile calls at once, 41k
// files/s against 21k with a pool hop each.
const kPoolBatchMin = 32;
let autoEngine: WriteEngine | undefined;

function byBatchSize(ring: WriteEngine, pool: WriteEngine): WriteEngine {
  return {
    name: 'uring',
    writeFiles: (job, concurrency, id) => (job.targets.length >= kPoolBatchMin ? pool : ring).writeFiles(job, concurrency, id),
    mkdirMany: (paths, mode, confine, concurrency, id) =>
      (paths.length >= kPoolBatchMin ? pool : ring).mkdirMany(paths, mode, confine, concurrency, id),
    cancel(id) {
      ring.cancel?.(id);
      pool.cancel?.(id);
    },
  };
}
