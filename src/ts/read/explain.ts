// explain(): how smartRead would read a file right now, why, and what device the file is on.
import * as fs from 'node:fs';
import { fastPathMax, loadReport, native, tuning } from '../engine/engine';
import { commonOptions, request } from './read_async';
import { uringAvailability, type Strategy } from './strategies';
import { deviceOf, type DeviceInfo } from '../engine/device';
import { failureToError, invalidArgValue } from '../common/errors';
import { flagsAllowMapping } from './map_file';
import type { PathOrFd } from '../common/args';
import type { BlindReadsLook, BlindReadsStats } from '../engine/native';
import type { RawFailure, RawResult } from '../common/raw';

/** The way a read goes: a rung of 'auto', or the engine a forced strategy names. */
export type ReadPath = 'fast-path' | 'uring' | 'uring-chunked' | 'threadpool' | 'sync' | 'mmap' | 'js';

/** What {@link explain} returns: how a read would go now, why, and the device under the file. */
export interface Explanation {
  /** The way the read would go. */
  strategy: ReadPath;
  /** Why, in a sentence. */
  reason: string;
  /** The file's filesystem and the storage under it. */
  device: DeviceInfo;
  /**
   * Where the filesystem refuses non-blocking reads (overlayfs, FUSE, NFS: the kernel will not
   * say whether a read would wait), how 'auto' judged this read from earlier ones:
   * 'first-read' (not read lately, or changed: for the engines), 'recent-read' (read lately: on
   * the calling thread), 'resident' / 'not-resident' (a large file read lately, whose pages were
   * / were not all in memory), 'cooling' (reads of its filesystem on the calling thread waited
   * too often lately: for the engines, for `coolingMs` more).
   */
  judged?: {
    /** The filesystem's name: 'overlay', 'fuse', 'nfs'... */
    filesystem: string;
    /** How the read was judged. */
    judgement: BlindReadsLook['judgement'];
    /** With 'cooling': how long its filesystem's reads stay off the calling thread. */
    coolingMs: number;
  };
}

/** The options of the smartRead call to explain. */
export interface ExplainOptions {
  /** As smartRead's: 'auto' (the default) or the strategy to explain. */
  strategy?: Strategy;
  /** As smartRead's: the open flags the read would use. */
  flag?: string | number;
}

// Filesystems whose pages are always in memory. Linux refuses RWF_NOWAIT on them (shmem:
// EOPNOTSUPP), so the fast path reads them with a plain read, which cannot wait for a device.
export const memoryFilesystems: readonly string[] = ['tmpfs', 'ramfs'];

function isFailure(result: RawResult | number | null | false): result is RawFailure {
  return result !== null && typeof result === 'object' && (result as RawFailure).errno !== undefined;
}

// What io_uring does with a file of this stat.
function onRing(st: fs.BigIntStats): { strategy: ReadPath; reason: string } {
  const size = Number(st.size);
  const { uringChunk: kUringChunk, uringInFlight } = tuning();
  if (st.isDirectory()) return { strategy: 'uring', reason: 'io_uring tries it, and the read fails with EISDIR as in node:fs' };
  if (!st.isFile() || size === 0) {
    return { strategy: 'uring', reason: 'io_uring reads it to EOF (stat gives no size)' };
  }
  if (size > kUringChunk) {
    return { strategy: 'uring-chunked', reason: `io_uring reads its ${size} bytes (> ${kUringChunk}) in ${kUringChunk}-byte chunks, ${uringInFlight} in flight` };
  }
  return { strategy: 'uring', reason: `io_uring reads its ${size} bytes (≤ ${kUringChunk}) in one READ` };
}

// The fast path's limit, and where it comes from.
function budgetText(): string {
  const t = tuning();
  return `${fastPathMax(t)} (a copy of ${t.fastPathBudgetUs} µs at ${t.copyRateMBps} MB/s)`;
}

// Why a path the fast path was tried on did not take it. (The page cache cannot tell after the
// fact: a refused RWF_NOWAIT read starts readahead, so the pages may be arriving by now.)
function missReason(st: fs.BigIntStats): string {
  const size = Number(st.size);
  if (!st.isFile()) return 'not a regular file, so not for the fast path';
  if (size === 0) return 'stat gives no size (an empty or procfs-like file), so not for the fast path';
  if (size > fastPathMax()) return `${size} bytes > the fast path's ${budgetText()}`;
  return 'not readable without waiting (its pages or its path were not in memory, or the filesystem refuses non-blocking reads): the fast path missed';
}

const judgementNames: Array<[keyof BlindReadsStats, BlindReadsLook['judgement']]> = [
  ['firstRead', 'first-read'], ['recentRead', 'recent-read'], ['resident', 'resident'],
  ['notResident', 'not-resident'], ['cooling', 'cooling'],
];

// How the fast path judged the probe (the counter it moved), on a filesystem that refuses
// RWF_NOWAIT; undefined where it did not judge (the kernel was asked, or the file was not read).
function judgementOf(before: BlindReadsStats, after: BlindReadsStats, target: string | Buffer): Explanation['judged'] {
  const moved = judgementNames.find(([key]) => after[key] > before[key]);
  const look = moved === undefined ? null : native!.blindReadsLook(target);
  if (moved === undefined || look === null) return undefined;
  return { filesystem: look.filesystem, judgement: moved[1], coolingMs: look.coolingMs };
}

function judgedText(judged: NonNullable<Explanation['judged']>): string {
  const fs = `${judged.filesystem} refuses non-blocking reads (RWF_NOWAIT), so the fast path judges from earlier reads`;
  switch (judged.judgement) {
    case 'first-read': return `${fs}: not read in the last minute, or changed since (first-read), so the engines read it and it is remembered`;
    case 'recent-read': return `${fs}: read lately and unchanged (recent-read)`;
    case 'resident': return `${fs}: read lately, and every page in memory (resident: mincore through a mapping)`;
    case 'not-resident': return `${fs}: read lately, but not known to be all in memory (not-resident: on overlayfs mincore through a mapping saw a page missing; where opens ask a server, a file of 256 KiB or more comes from it)`;
    case 'cooling': return `${fs}: its reads on the calling thread waited too often lately (cooling, ${judged.coolingMs} ms more)`;
  }
}

/**
 * How `smartRead(path, options)` would read the file now: the fast path (tried for real, as
 * smartRead tries it), io_uring (chunked for large files), the thread pool, the calling thread,
 * or node:fs on the pure-JS engine; with the reason and the device the file is on. Takes a path
 * or an fd; throws smartRead's argument errors, and fs.statSync's (fs.fstatSync's) for a file
 * that cannot be looked at. Never creates or changes a file.
 *
 * @param path - The file, or an fd.
 * @param options - The `strategy` and `flag` of the smartRead call to explain.
 * @returns The way, the reason in a sentence, and the device.
 */
export function explain(path: PathOrFd, options?: ExplainOptions | null): Explanation {
  // A confined read resolves beneath its root, which the lookups here do not: refuse it rather
  // than explain another file (and before commonOptions opens the root).
  if (options != null && typeof options === 'object' && (options as { root?: unknown }).root !== undefined) {
    throw invalidArgValue('options.root', (options as { root?: unknown }).root, 'is not supported by explain()', explain);
  }
  const common = commonOptions(options, explain);
  const { engine, target, flags } = request(path, common, explain);
  const isPath = typeof target !== 'number';
  // The probe runs before stat: a stat would put the path in the dentry cache, where
  // RESOLVE_CACHED then finds it although a read of a path never looked up would miss.
  const tried = native !== null && engine.readNow !== undefined && isPath;
  const judgedBefore = tried ? native!.blindReadsStats() : null;
  const probe = tried ? native!.cachedRead(target, flags, -1) : null;
  const judged = tried ? judgementOf(judgedBefore!, native!.blindReadsStats(), target) : undefined;
  const st = isPath ? fs.statSync(target, { bigint: true }) : fs.fstatSync(target, { bigint: true });
  // A directory's EISDIR is the read's answer, found by the fast path: explained, not thrown.
  const directoryRefused = isFailure(probe) && probe.syscall === 'read' && st.isDirectory();
  if (isFailure(probe) && !directoryRefused) throw failureToError(probe, path, target, explain);
  const device = deviceOf(st.dev, target);
  const explained = (strategy: ReadPath, reason: string): Explanation =>
    (judged === undefined ? { strategy, reason, device } : { strategy, reason, device, judged });

  if (native === null) {
    const how = engine.name === 'sync' ? 'fs.readFileSync on the calling thread' : "node:fs's asynchronous reads";
    return explained('js', `the native addon is not in use (${loadReport.reason}): ${how}`);
  }
  if (engine.name === 'sync') return explained('sync', "strategy 'sync': open, fstat, read and close on the calling thread");
  if (engine.name === 'mmap') {
    return st.isFile() && st.size > 0n && isPath && flagsAllowMapping(flags)
      ? explained('mmap', "strategy 'mmap': the file is mapped (mmap MAP_PRIVATE) and the Buffer is the mapping, unmapped when it is collected")
      : explained('sync', "strategy 'mmap': what cannot be mapped (an fd, a flag that writes, creates or truncates, a file that is not regular or has no size) is read on the calling thread");
  }
  const forced = options != null && typeof options === 'object' && (options.strategy ?? 'auto') !== 'auto';
  let why = '';
  let large = false;
  if (directoryRefused) {
    return explained('fast-path', 'a directory: the fast path finds it one, and the read fails with EISDIR on the calling thread, as node:fs\'s read does');
  }
  if (engine.readNow !== undefined) {
    const inMemory = memoryFilesystems.includes(device.filesystem);
    if (probe !== null && probe !== false) {
      const how = inMemory
        ? `always in memory on ${device.filesystem}, and ${st.size} bytes ≤ ${budgetText()}: read on the calling thread (openat2 RESOLVE_CACHED, then a plain read: ${device.filesystem} refuses RWF_NOWAIT)`
        : judged !== undefined
          ? `${judgedText(judged)}, and ${st.size} bytes ≤ ${budgetText()}: read on the calling thread (openat2 RESOLVE_CACHED, then a plain read, timed: one slower than the budget sends the file back to the engines)`
          : `cached in memory and ${st.size} bytes ≤ ${budgetText()}: read on the calling thread (openat2 RESOLVE_CACHED, preadv2 RWF_NOWAIT)`;
      return explained('fast-path', how);
    }
    large = probe === false;
    why = !isPath ? 'a file descriptor does not take the fast path'
      : judged !== undefined ? `${judgedText(judged)}: the fast path left it to the engines` : missReason(st);
  }
  const lead = why === '' ? '' : `${why}; `;
  if (engine.name === 'threadpool') {
    const ring = uringAvailability();
    const because = typeof ring === 'string' && !forced ? `io_uring unavailable: ${ring}` : "strategy 'threadpool'";
    return explained('threadpool', `${lead}${because}; the thread pool reads it (open, fstat, read, close)`);
  }
  if (large) {
    const { uringChunk, uringInFlight } = tuning();
    return explained('uring-chunked', `${lead}its path is cached: opened at once on the calling thread (openat2 RESOLVE_CACHED), then io_uring reads it in ${uringChunk}-byte chunks on its workers, ${uringInFlight} in flight, while the calling thread copies its tail within the fast path's budget`);
  }
  const ring = onRing(st);
  return explained(ring.strategy, `${lead}${forced ? "strategy 'uring': " : ''}${ring.reason}`);
}
