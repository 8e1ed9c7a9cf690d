// The raw binding: what the addon (and the pure-JS engine standing in for it) exports, and the
// loader that finds it. Public types live in index.ts; nothing here is part of the API.
import { maxReadLength } from './limits';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** A read that produced no bytes: a syscall failure (negative errno), or a reason of our own. */
export interface RawFailure {
  errno: number;
  syscall?: string;
  reason?: 'null-bytes' | 'too-large';
  size?: number;
}

export type RawResult = Buffer | RawFailure;

/** A confined read's root: a directory descriptor, and openat2 RESOLVE_* flags. */
export interface Confine {
  dirfd: number;
  resolve: number;
}

/** What every engine offers: the addon, and the pure-JS engine over node:fs. */
export interface Engine {
  /**
   * Reads a whole file. `target` is a validated path (string or Buffer) or an fd; a path is
   * opened with `flags` and closed, an fd is read from its position and left open. With
   * `statUserFd` false an fd is read to EOF without fstat (as node:fs's utf8 reader does).
   */
  readFileSync(target: string | Buffer | number, flags: number, statUserFd: boolean, confine?: Confine): RawResult;
}

/** The asynchronous contract: Engine.readFileSync's arguments and results, as a promise. */
export type AsyncRead = (target: string | Buffer | number, flags: number, statUserFd: boolean, confine?: Confine) => Promise<RawResult>;

export interface NativeBinding {
  setup(options: { maxLength: number }): void;
  readonly features: { liburing: boolean };
  /** The thresholds of this environment (instance.h Tuning), and a change of them. */
  tuning(): { fastPathMax: number; uringChunk: number; uringInFlight: number; uringAsyncFrom: number };
  setTuning(tuning: { fastPathMax: number; uringChunk: number; uringInFlight: number; uringAsyncFrom: number }): void;
  /** The slab that small results are read into from now on (held by the addon). */
  setPool(pool: Buffer): void;
  /** Engine.readFileSync, plus: a regular file of at most 4 KiB that fits in the pool after
   * `poolOffset` (-1: never) is read there, and its byte count is returned instead of a Buffer. */
  readFileSync(target: string | Buffer | number, flags: number, statUserFd: boolean, poolOffset: number,
    rootFd?: number, resolve?: number): RawResult | number;
  evictFromPageCache(path: string | Buffer): RawFailure | undefined;
  /** Readahead (posix_fadvise WILLNEED) of each path, on one pool thread; failures by index. */
  prefetch(paths: Array<string | Buffer>): Promise<{ started: number; failures: Array<RawFailure & { index: number }> }>;
  pageCacheResidency(path: string | Buffer): { size: number; cached: number } | RawFailure;
  /** The cache-hit fast path: the file read without blocking (openat2 RESOLVE_CACHED, preadv2
   * RWF_NOWAIT), or null when that is not possible; pooled like readFileSync. Paths only. */
  cachedRead(target: string | Buffer, flags: number, poolOffset: number, rootFd?: number, resolve?: number): RawResult | number | null;
  /** The fast path over paths[start..end), strings only, in one call: for each, sizes[k] is a
   * pooled result's byte count (laid out from poolOffset, 8-byte aligned), -2 for a hit left
   * as a Buffer in out[k], or -1 for anything else (a miss, an error, not a string). Returns
   * how many it went through: fewer when the pool may not hold the next result. */
  cachedReadBatch(paths: readonly unknown[], start: number, end: number, flags: number, poolOffset: number,
    sizes: Int32Array, out: unknown[], rootFd?: number, resolve?: number): number;
  /** AsyncRead on libuv's thread pool. */
  threadpoolRead(target: string | Buffer | number, flags: number, statUserFd: boolean, rootFd?: number, resolve?: number): Promise<RawResult>;
  /** Sets the ring up on first use: null when io_uring is usable, else why not. Absent when
   * the addon was built without liburing. */
  uringStatus?(): string | null;
  /** AsyncRead on the ring; `id` names it for uringCancel. Queued until uringSubmit(). */
  uringRead?(target: string | Buffer | number, flags: number, statUserFd: boolean, id: number, rootFd?: number, resolve?: number): Promise<RawResult>;
  /** Submits what was queued since the last call (reads started in one tick share it). */
  uringSubmit?(): void;
  /** Cancels read `id` in the kernel; its promise still settles once the ring is done with it. */
  uringCancel?(id: number): void;
}

export interface LoadReport {
  /** 'native' when the addon is in use, 'js' for the pure-JS engine over node:fs. */
  engine: 'native' | 'js';
  /** The addon file that was loaded. */
  path?: string;
  /** Whether the loaded addon was built with liburing. */
  liburing: boolean;
  /** Why the pure-JS engine is in use. */
  reason?: string;
  /** Every place looked at, with what happened there. */
  tried: string[];
}

const packageRoot = path.resolve(__dirname, '..');

function candidates(): string[] {
  return [
    path.join(packageRoot, 'prebuilds', `${process.platform}-${process.arch}`, 'smartread.node'),
    path.join(packageRoot, 'build', 'Release', 'smartread.node'),
    path.join(packageRoot, 'build', 'Debug', 'smartread.node'),
  ];
}

function loadFailureText(report: LoadReport): string {
  return [
    'smartread: no native addon could be loaded.',
    ...report.tried.map((line) => `  - ${line}`),
    'Build it with `npm run build:native` (needs a C++ toolchain; liburing-dev for io_uring),',
    'or unset SMARTREAD_REQUIRE_NATIVE to run on the pure-JS engine.',
  ].join('\n');
}

/**
 * Loads the addon: prebuilds/ first, then build/Release, then build/Debug. A file that is
 * missing is skipped; one that exists but fails to load is reported and the next is tried.
 * With none, or with SMARTREAD_FORCE_JS=1, returns no binding and says why; with
 * SMARTREAD_REQUIRE_NATIVE=1 that is an error listing what was tried.
 */
export function loadNative(): { binding: NativeBinding | null; report: LoadReport } {
  const report: LoadReport = { engine: 'js', liburing: false, tried: [] };
  if (process.env.SMARTREAD_FORCE_JS === '1') {
    report.reason = 'SMARTREAD_FORCE_JS=1';
    return { binding: null, report };
  }
  for (const file of candidates()) {
    if (!fs.existsSync(file)) {
      report.tried.push(`${file}: not found`);
      continue;
    }
    try {
      const binding = require(file) as NativeBinding;
      binding.setup({ maxLength: maxReadLength });
      report.tried.push(`${file}: loaded`);
      return {
        binding,
        report: { ...report, engine: 'native', path: file, liburing: binding.features.liburing },
      };
    } catch (err) {
      report.tried.push(`${file}: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  report.reason = 'no native addon could be loaded';
  if (process.env.SMARTREAD_REQUIRE_NATIVE === '1') throw new Error(loadFailureText(report));
  return { binding: null, report };
}
