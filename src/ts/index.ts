/**
 * smartread: read files as fast as Linux allows, with node:fs's arguments, results and errors.
 *
 * `require('smartread')` or `import { smartRead } from 'smartread'`: the readers
 * ({@link smartReadSync}, {@link smartRead}, {@link readMany}, {@link mapFile},
 * {@link readInto}, {@link openReader}, {@link createReader}), and what tells how they read
 * ({@link engineInfo}, {@link explain}, {@link metrics}, {@link tuning}).
 *
 * @module
 */
import { loadReport } from './engine/engine';
import { uringAvailability } from './read/strategies';
import type { LoadReport } from './engine/loader';
import { dropInStatus, type DropInStatus } from './drop_in/drop_in';

export { smartReadSync } from './read/read_sync';
export { smartRead, readMany } from './read/read_async';
export { AbortError } from './common/errors';
export { evictFromPageCache, pageCacheResidency } from './read/page_cache';
export { metrics, readChannel, latencyBuckets } from './read/metrics';
export { prefetch } from './read/prefetch';
export { createReader } from './read/confined_reader';
export type { ConfinedReader } from './read/confined_reader';
export type { ConfineOptions, ConfinedStats } from './read/confine';
export { mapFile } from './read/map_file';
export { readInto, readIntoSync } from './read/read_into';
export { openReader, Reader } from './read/reader';
export type { MapAdvice, MapFileOptions, MappedBuffer } from './read/map_file';
export type { ReadIntoOptions, ReadIntoResult } from './read/read_into';
export type { OpenReaderOptions, ReaderStrategy } from './read/reader';
export { smartWriteFile, smartWriteFileSync } from './write/write';
export { writeMany } from './write/write_many';
export { mkdirAll, mkdirAllSync, mkdirMany } from './write/mkdir_all';
export { createWriter } from './write/writer';
export type { ConfinedWriter, Unconfined } from './write/writer';
export type { WriteData, WriteFileOptions } from './write/write_args';
export type { SettledWrite, WriteEntry, WriteManyOptions } from './write/write_many';
export type { MkdirAllOptions, MkdirManyOptions, SettledMkdir } from './write/mkdir_all';
export type { WriteStrategy } from './write/write_engines';
export { tuning, setTuning, useProfile } from './engine/engine';
export type { Tuning, Profile } from './engine/tuning';
export type { PrefetchResult } from './read/prefetch';
export type { BlockPoolMetrics, FastPathJudgements, Metrics, MetricsSnapshot, PromClientRegistry, ServedBy, StrategyMetrics } from './read/metrics';
export type { ReadManyOptions, SettledRead, SmartReadOptions } from './read/read_async';
export type { Strategy } from './read/strategies';
export type { PathLike, PathList, PathOrFd, PathOrHandle, ReadFileOptions } from './common/args';
export type { FsError } from './common/errors';
export type { HugePageAdvice } from './engine/huge_pages';
export { register, unregister } from './drop_in/drop_in';
export type { DropInStatus } from './drop_in/drop_in';

/** What {@link engineInfo} returns: the engine in use, where it came from, and what works here. */
export interface EngineInfo extends LoadReport {
  /** Whether the io_uring engine is usable here, and why not when it is not. */
  uring: {
    /** io_uring reads are available. */
    available: true;
  } | {
    /** io_uring reads are not available. */
    available: false;
    /** Why: not built with liburing, io_uring_setup refused (EPERM, ENOSYS), an op missing... */
    reason: string;
  };
  /** Whether node:fs's readers are served by smartread in this thread (smartread/register), and
   * why not when they are not. */
  dropIn: DropInStatus;
}

/** Which engine this process reads with, where it came from, and why; sets io_uring up if needed. */
export function engineInfo(): EngineInfo {
  const ring = uringAvailability();
  return {
    ...loadReport,
    tried: [...loadReport.tried],
    hugePages: { ...loadReport.hugePages },
    uring: typeof ring === 'string' ? { available: false, reason: ring } : { available: true },
    dropIn: dropInStatus(),
  };
}
export { explain } from './read/explain';
export type { Explanation, ExplainOptions, ReadPath } from './read/explain';
export type { BlockDevice, DeviceInfo, DeviceKind } from './engine/device';
