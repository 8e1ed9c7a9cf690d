// The raw binding: what the addon (and the pure-JS engine standing in for it) exports; loader.ts
// finds it. Public types live in index.ts; nothing here is part of the API.
import type { Tuning } from './tuning';
import type { RawFailure, RawMapping, RawResult } from '../common/raw';

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
  /**
   * Maps the window [offset, offset + length) (length -1: to the end) of the file at a
   * validated path opened with `flags`, advised with advice index `advice` (mapAdvice order),
   * populated if asked. Non-regular files fail (EISDIR for a directory, ENODEV otherwise, syscall
   * 'mmap'); a window past the end fails with reason 'window' and the file's size. The pure-JS
   * engine returns a copy.
   */
  mapFile(target: string | Buffer, flags: number, offset: number, length: number, advice: number, populate: boolean): RawMapping | RawFailure;
  /**
   * Reads into view[offset, offset + length): an fd with one read (position -1: at its
   * position) as fs.readSync; a path opened, read from `position` until full or EOF, closed.
   * Returns the byte count. Arguments are validated by the caller.
   */
  readIntoSync(target: string | Buffer | number, view: NodeJS.ArrayBufferView, offset: number, length: number, position: number | bigint): number | RawFailure;
  /** readIntoSync on a thread of libuv's pool. */
  readIntoAsync(target: string | Buffer | number, view: NodeJS.ArrayBufferView, offset: number, length: number, position: number | bigint): Promise<number | RawFailure>;
}

/** The asynchronous contract: Engine.readFileSync's arguments and results, as a promise. */
export type AsyncRead = (target: string | Buffer | number, flags: number, statUserFd: boolean, confine?: Confine) => Promise<RawResult>;

/** What the recycled-block pool holds and has done (native: BlockPoolStats). */
export interface BlockPoolStats {
  idleBytes: number;
  idleBlocks: number;
  lentBytes: number;
  lentBlocks: number;
  hits: number;
  misses: number;
  released: number;
  declined: number;
  processBytes: number;
}

/** blind_reads.h Stats: judgements by kind, and the reads on the calling thread that took too long. */
export interface BlindReadsStats {
  firstRead: number;
  recentRead: number;
  resident: number;
  notResident: number;
  cooling: number;
  misjudged: number;
}

/** blind_reads.h Peek. */
export interface BlindReadsLook {
  filesystem: string;
  judgement: 'first-read' | 'recent-read' | 'resident' | 'not-resident' | 'cooling';
  coolingMs: number;
}

export interface NativeBinding {
  setup(options: { maxLength: number; hugePages: boolean; blockPoolFrom: number }): void;
  readonly features: { liburing: boolean };
  /** The thresholds of this environment (instance.h Tuning), and a change of them. */
  tuning(): Tuning;
  setTuning(tuning: Tuning): void;
  /** The block pool's figures (block_pool.h BlockPoolStats), or null where there is none. */
  blockPoolStats(): BlockPoolStats | null;
  /** The bytes malloc has handed out and not had back (glibc's mallinfo2), or null where that
   * cannot be asked: the soak test's leak check, which RSS cannot make. */
  mallocInUse(): number | null;
  /** The fast path's judgements on filesystems that refuse RWF_NOWAIT (blind_reads.h). */
  blindReadsStats(): BlindReadsStats;
  /** How the fast path would judge a read of the file now, where its filesystem is known to
   * refuse RWF_NOWAIT; null elsewhere, or where it cannot be looked at. */
  blindReadsLook(target: string | Buffer | number): BlindReadsLook | null;
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
  /** [mode, size, mtimeMs, ino, dev, ctimeMs] of a path resolved under a confinement (openat2 O_PATH). */
  statBeneath(path: string | Buffer, rootFd?: number, resolve?: number): Float64Array | RawFailure;
  /** statBeneath's array for one unconfined fstatat(dirfd, path): only to check that a path a
   * confined lookup resolved still names the same file. */
  statAt(path: string | Buffer, dirfd: number): Float64Array | RawFailure;
  /** statBeneath without waiting: the name from the dentry cache, the stat off a server's
   * mount only; null where a name on the way is not cached, or the file's stat may ask a server. */
  statBeneathIfCached(path: string | Buffer, rootFd: number, resolve: number): Float64Array | RawFailure | null;
  /** statAt where `dev` is no server's mount; on one (FUSE, NFS), with `trustHeld`, the
   * attributes the kernel holds (the name from the dentry cache), else (or where a name on the
   * way is not cached) null. */
  statAtNow(path: string | Buffer, dirfd: number, dev: number, trustHeld: boolean): Float64Array | RawFailure | null;
  /** statBeneath on libuv's thread pool. */
  statBeneathAsync(path: string | Buffer, rootFd: number, resolve: number): Promise<Float64Array | RawFailure>;
  /** statAt on libuv's thread pool. */
  statAtAsync(path: string | Buffer, dirfd: number): Promise<Float64Array | RawFailure>;
  /** A descriptor (O_CLOEXEC) opened with `flags` under a confinement, as a confined read opens. */
  openBeneath(path: string | Buffer, flags: number, rootFd?: number, resolve?: number): number | RawFailure;
  /** openBeneath on libuv's thread pool, for a file whose open waits for a server. */
  openBeneathAsync(path: string | Buffer, flags: number, rootFd?: number, resolve?: number): Promise<number | RawFailure>;
  /** Whether opening `path` under the confinement would wait for a server (FUSE, NFS, SMB...),
   * from the mount table and the opens timed so far; asks the filesystem nothing. */
  opensWaitBeneath(path: string | Buffer, rootFd?: number, resolve?: number): boolean;
  /** Whether the open file is on a filesystem that asks a server (FUSE, NFS, SMB...), where
   * io_uring would wait for it inline: its positional reads go to the ring's workers. */
  fileAsksServer(fd: number): boolean;
  /** The cache-hit fast path: the file read without blocking (openat2 RESOLVE_CACHED, preadv2
   * RWF_NOWAIT), or null when that is not possible; pooled like readFileSync. Paths only. */
  cachedRead(target: string | Buffer, flags: number, poolOffset: number, rootFd?: number, resolve?: number): RawResult | number | null | false;
  /** The fast path over paths[start..end), at most 64 of them, strings only, in one call: for
   * each, results[2k] is a small result's byte count (the bytes are in the returned Buffer at
   * results[2k + 1]), -2 for a hit left as a Buffer in out[k], -1 for anything else (a
   * miss, an error, not a string), or -3 for the paths after the run ended (the fast path's
   * budget was used up; the next run starts at the first of them). With onRing (the next engine is io_uring), names that were
   * small regular files last time are read in one io_uring batch. Returns undefined when
   * there is no small result. */
  cachedReadBatch(paths: readonly unknown[], start: number, end: number, flags: number,
    results: Int32Array, out: unknown[], onRing: boolean, rootFd?: number, resolve?: number): Buffer | undefined;
  /** readMany's fast path on a pool thread: the small regular files of paths[start..end) (at
   * most 256) read without waiting, into one Buffer. results[2k] is a hit's byte count (its
   * bytes at results[2k + 1] in the Buffer), -1 for a miss (not in memory: for the engines),
   * -4 for a path left to the JS thread's fast path (anything else), -5 for a miss the engines
   * make a hit of, or -6 for a path the JS thread claimed (cachedRunClaim). With the promise,
   * the run's handle; the promise gives undefined where cachedRunSettle gave the results. */
  cachedReadRun(paths: readonly unknown[], start: number, end: number, flags: number,
    rootFd?: number, resolve?: number): [Promise<[Buffer, Int32Array] | undefined>, object];
  /** The index (from start) of the next path of the run nobody has claimed, now the caller's; -1: none left. */
  cachedRunClaim(run: object): number;
  /** Once cachedRunClaim has given -1: the run's results, if the pool thread is done with what
   * it claimed within spinUs (at most 1,000, waited for on this thread); else undefined. */
  cachedRunSettle(run: object, spinUs: number): [Buffer, Int32Array] | undefined;
  /** AsyncRead on libuv's thread pool. */
  threadpoolRead(target: string | Buffer | number, flags: number, statUserFd: boolean, rootFd?: number, resolve?: number): Promise<RawResult>;
  mapFile: Engine['mapFile'];
  /** Detaches the Buffer made with `mapping` and unmaps it; false when that was done before. */
  unmap(mapping: object, buffer: Buffer): boolean;
  readIntoSync: Engine['readIntoSync'];
  readIntoAsync: Engine['readIntoAsync'];
  /** posix_fadvise(POSIX_FADV_RANDOM) on an open fd: no readahead for its reads. */
  adviseRandom(fd: number): RawFailure | undefined;
  /** Writes a whole file on the calling thread: `target` a validated path (opened with `flags`
   * and `mode`) or an fd (written at its position, left open); `atomic` 0 in place, 1 through a
   * temporary file renamed over the target, 2 the same where the target does not exist yet. */
  writeFileSync(target: string | Buffer | number, data: Uint8Array, flags: number, mode: number, flush: boolean,
    atomic: number, rootFd?: number, resolve?: number): RawFailure | undefined;
  /** fs.mkdirSync(path, { recursive: true, mode }) on the calling thread: the byte length of
   * the first directory made in the path, or -1 when none was. With asyncErrors, the errors of
   * node's asynchronous walk (fs.mkdir), which differ in one case (mkdir_all.h). */
  mkdirAllSync(path: string | Buffer, mode: number, asyncErrors: boolean, rootFd?: number, resolve?: number): number | RawFailure;
  /** out[i] = 1 where paths[i] is a directory the environment made or saw (a hint). */
  dirsKnown(paths: ReadonlyArray<string | Buffer>, out: Uint8Array): void;
  /** Drops paths from the directories the environment knows. */
  forgetDirs(paths: ReadonlyArray<string | Buffer>): void;
  /** writeFileSync for each target in turn, on one pool thread: undefined when all succeeded,
   * else each one's failure at its index. Setting `stop[0]` stops what has not been renamed or
   * begun (ECANCELED). */
  threadpoolWriteFiles(targets: ReadonlyArray<string | Buffer | number>, datas: readonly Uint8Array[], modes: Uint32Array,
    flags: number, flush: boolean, atomic: number, rootFd?: number, resolve?: number, stop?: Uint8Array): Promise<Array<RawFailure | undefined> | undefined>;
  /** mkdirAllSync (asyncErrors) for each path in turn, on one pool thread. Setting `stop[0]`
   * leaves the paths not begun unmade (ECANCELED). */
  threadpoolMkdirMany(paths: ReadonlyArray<string | Buffer>, mode: number, rootFd?: number, resolve?: number,
    stop?: Uint8Array): Promise<Array<number | RawFailure>>;
  /** What the kernel's io_uring can do for writes (why: the probe failed); absent without liburing. */
  uringWriteSupport?(): { writes: boolean; atomic: boolean; mkdir: boolean; why?: string };
  /** threadpoolWriteFiles' contract on the ring, `concurrency` files in flight; `id` names the
   * batch for uringCancelBatch. Queued until uringSubmit(). */
  uringWriteFiles?(targets: ReadonlyArray<string | Buffer | number>, datas: readonly Uint8Array[], modes: Uint32Array,
    flags: number, flush: boolean, atomic: number, concurrency: number, id: number): Promise<Array<RawFailure | undefined> | undefined>;
  /** threadpoolMkdirMany's contract on the ring (MKDIRAT chains), `concurrency` paths in flight. */
  uringMkdirMany?(paths: ReadonlyArray<string | Buffer>, mode: number, concurrency: number, id: number): Promise<Array<number | RawFailure>>;
  /** Cancels a write or mkdir batch; what it had not finished fails with ECANCELED. */
  uringCancelBatch?(id: number): void;
  /** Sets the ring up on first use: null when io_uring is usable, else why not. Absent when
   * the addon was built without liburing. */
  uringStatus?(): string | null;
  /** AsyncRead on the ring; `id` names it for uringCancel. Queued until uringSubmit(). With
   * `large` (a path the fast path found cached, too large for it), the file is opened at once
   * and read in parallel chunks. */
  uringRead?(target: string | Buffer | number, flags: number, statUserFd: boolean, id: number, rootFd?: number, resolve?: number, large?: boolean): Promise<RawResult>;
  /** Submits what was queued since the last call (reads started in one tick share it). */
  uringSubmit?(): void;
  /** Cancels read `id` in the kernel; its promise still settles once the ring is done with it. */
  uringCancel?(id: number): void;
  /** Puts fd in a free slot of the ring's fixed-file table: the slot, or -1 when none is free. */
  uringRegisterFile?(fd: number): number;
  /** Empties a slot once no read of it is in flight. */
  uringUnregisterFile?(slot: number): void;
  /** One READ of `length` bytes at `position` into view[offset..], on the fixed-file slot
   * (fixed) or the fd; the byte count. Queued until uringSubmit(). */
  uringReadAt?(fdOrSlot: number, fixed: boolean, view: NodeJS.ArrayBufferView, offset: number, length: number, position: number, onWorkers?: boolean): Promise<number | RawFailure>;
  /** Whether uringLookUp and uringOpenBeneath can be used: the ring is set up, and the kernel's
   * io_uring has OPENAT2. */
  uringCanLookUp?(): boolean;
  /** statBeneathAsync (confined) or statAtAsync made by io-wq's workers; the directory's
   * descriptor must stay open until it settles. Queued until uringSubmit(). */
  uringLookUp?(path: string | Buffer, dirfd: number, resolve: number, confined: boolean): Promise<Float64Array | RawFailure>;
  /** openBeneathAsync made by io-wq's workers; a descriptor no promise took is closed. Queued
   * until uringSubmit(). */
  uringOpenBeneath?(path: string | Buffer, flags: number, dirfd: number, resolve: number): Promise<number | RawFailure>;
}
