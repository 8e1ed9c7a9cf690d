// Confined reads: paths resolved beneath a root directory by the kernel (openat2 RESOLVE_BENEATH
// and RESOLVE_NO_MAGICLINKS, and RESOLVE_NO_SYMLINKS on request), for services that read files
// their users name.
import * as fs from 'node:fs';
import { native } from '../engine/engine';
import { failureToError, invalidArgType, withCode } from '../common/errors';
import { getValidatedPath, type PathLike } from '../common/args';
import type { Confine, NativeBinding } from '../engine/native';
import type { RawFailure } from '../common/raw';
import { submittedSoon, uringAvailability } from './strategies';

// linux/openat2.h
const RESOLVE_NO_MAGICLINKS = 0x02;
const RESOLVE_NO_SYMLINKS = 0x04;
const RESOLVE_BENEATH = 0x08;
const EXDEV = 18;

/** What a confined stat tells of a file (the fields of fs.Stats a server needs). */
export interface ConfinedStats {
  /** The file type and permission bits, as fs.Stats.mode. */
  mode: number;
  /** The size in bytes. */
  size: number;
  /** The last modification time, in milliseconds since the epoch. */
  mtimeMs: number;
  /** The inode number. */
  ino: number;
  /** The device number (st_dev). */
  dev: number;
  /** When the inode last changed (contents, metadata, links): a writer cannot set it, unlike
   * mtime, so caches of the file validate against it. */
  ctimeMs: number;
  /** Whether it is a regular file. */
  isFile(): boolean;
  /** Whether it is a directory. */
  isDirectory(): boolean;
}

/** Confines a read beneath a directory, enforced by the kernel (openat2 RESOLVE_BENEATH). */
export interface ConfineOptions {
  /** Read only beneath this directory: paths are relative to it, and none may leave it. */
  root?: PathLike;
  /** Refuse any symbolic link on the way (ELOOP), not only those that lead out of the root. */
  noSymlinks?: boolean;
}

function closedError(caller: Function): Error {
  return withCode(new Error('smartread: this reader is closed'), 'ERR_SMARTREAD_READER_CLOSED', caller);
}

// Nonblocking, so that a FIFO cannot hold the thread in open(2); regular files ignore it.
const kOpenFlags = fs.constants.O_RDONLY | fs.constants.O_NONBLOCK;

/** Lookups and opens beneath a root that may wait (a cold disk's lookup; any on a FUSE or NFS
 * mount), made off the event loop's thread. */
interface OffLoop {
  /** statBeneath's array (confined) or statAt's (from the root, unconfined), or the failure. */
  lookUp(path: string | Buffer, dirfd: number, resolve: number, confined: boolean): Promise<Float64Array | RawFailure>;
  open(path: string | Buffer, flags: number, dirfd: number, resolve: number): Promise<number | RawFailure>;
}
let offLoop: OffLoop | undefined;

/**
 * Where they are made: by io_uring's workers where the ring can make them (OPENAT2 and STATX;
 * src/native/uring/beneath_op.h says what libuv's 4 threads made of them), else on libuv's
 * thread pool.
 */
function madeOffLoop(): OffLoop {
  if (offLoop === undefined) {
    const binding = native!;
    if (typeof uringAvailability() !== 'string' && binding.uringCanLookUp?.() === true) {
      const ring = binding as Required<NativeBinding>;
      offLoop = {
        lookUp(path, dirfd, resolve, confined) {
          return submittedSoon(ring.uringLookUp(path, dirfd, resolve, confined));
        },
        open(path, flags, dirfd, resolve) {
          return submittedSoon(ring.uringOpenBeneath(path, flags, dirfd, resolve));
        },
      };
    } else {
      offLoop = {
        lookUp: (path, dirfd, resolve, confined) => (confined ? binding.statBeneathAsync(path, dirfd, resolve) : binding.statAtAsync(path, dirfd)),
        open: (path, flags, dirfd, resolve) => binding.openBeneathAsync(path, flags, dirfd, resolve),
      };
    }
  }
  return offLoop;
}

/**
 * An open root directory shared by the reads that resolve beneath it. Its descriptor is closed
 * only when it has been released and no read that uses it is still on its way: a descriptor
 * number closed early could be reused for another directory, and a read would resolve there.
 */
export class Root {
  readonly confine: Confine;
  readonly path: string | Buffer;
  private users = 0;
  private released = false;
  private closed = false;

  constructor(root: unknown, noSymlinks: unknown, caller: Function) {
    if (noSymlinks !== undefined && typeof noSymlinks !== 'boolean') {
      throw invalidArgType('options.noSymlinks', 'of type boolean', noSymlinks, caller);
    }
    this.path = getValidatedPath(root, caller);
    if (!native) {
      throw withCode(new Error('smartread: confined reads (options.root) need the native addon (openat2), which is not in use'),
        'ERR_SMARTREAD_CONFINEMENT_UNAVAILABLE', caller);
    }
    const dirfd = fs.openSync(this.path, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
    this.confine = { dirfd, resolve: RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | (noSymlinks ? RESOLVE_NO_SYMLINKS : 0) };
  }

  /** Throws ERR_SMARTREAD_READER_CLOSED once the root is released: a reader's calls start no
   * read after close(), even while reads begun before it still hold the descriptor. */
  assertOpen(caller: Function): void {
    if (this.released) throw closedError(caller);
  }

  /** Marks a read that uses the descriptor; returns the function that ends it. */
  use(): () => void {
    if (this.closed) throw closedError(this.use);
    this.users++;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.users--;
      this.closeIfIdle();
    };
  }

  /** No more reads will start; the descriptor closes once the last one has ended. */
  release(): void {
    this.released = true;
    this.closeIfIdle();
  }

  get isReleased(): boolean {
    return this.released;
  }

  private closeIfIdle(): void {
    if (this.released && this.users === 0 && !this.closed) {
      this.closed = true;
      fs.closeSync(this.confine.dirfd);
    }
  }

  /** The metadata of `path` beneath the root, resolved by the rules reads follow (fs.statSync's
   * errors, with the path as given). */
  statSync(path: unknown, caller: Function): ConfinedStats {
    const target = getValidatedPath(path, caller);
    const endUse = this.use();
    let raw: Float64Array | RawFailure;
    try {
      raw = native!.statBeneath(target, this.confine.dirfd, this.confine.resolve);
    } finally {
      endUse();
    }
    if (!(raw instanceof Float64Array)) throw this.explainError(failureToError(raw, path, target, caller), path);
    const [mode, size, mtimeMs, ino, dev, ctimeMs] = raw;
    const type = mode & fs.constants.S_IFMT;
    return {
      mode, size, mtimeMs, ino, dev, ctimeMs,
      isFile: () => type === fs.constants.S_IFREG,
      isDirectory: () => type === fs.constants.S_IFDIR,
    };
  }

  /** A descriptor of `path` beneath the root, opened for reading (O_CLOEXEC) as reads open it;
   * the caller closes it. */
  openSync(path: unknown, caller: Function): number {
    const target = getValidatedPath(path, caller);
    const endUse = this.use();
    let raw: number | RawFailure;
    try {
      raw = native!.openBeneath(target, kOpenFlags, this.confine.dirfd, this.confine.resolve);
    } finally {
      endUse();
    }
    if (typeof raw !== 'number') throw this.explainError(failureToError(raw, path, target, caller), path);
    return raw;
  }

  /** Whether opening `path` beneath the root would wait for a server: a FUSE, NFS or SMB mount
   * (the process's mount table), or one where opens were timed waiting; asks it nothing. */
  opensWait(path: string | Buffer): boolean {
    // Once closed, the descriptor's number may name another directory.
    return !this.closed && native!.opensWaitBeneath(path, this.confine.dirfd, this.confine.resolve);
  }

  /** openSync's descriptor, opened off the event loop's thread (madeOffLoop): for a file whose
   * open waits for a server (opensWait), which would otherwise hold the loop for a round trip. */
  async openAsync(path: unknown, caller: Function): Promise<number> {
    const target = getValidatedPath(path, caller);
    const endUse = this.use();
    let raw: number | RawFailure;
    try {
      // The root's descriptor stays open (use) until the open is done.
      raw = await madeOffLoop().open(target, kOpenFlags, this.confine.dirfd, this.confine.resolve);
    } finally {
      endUse();
    }
    if (typeof raw !== 'number') throw this.explainError(failureToError(raw, path, target, caller), path);
    return raw;
  }

  /** `path` looked up beneath the root (statBeneath's array), or with `check` one stat of it from
   * the root, unconfined (statAt's), made off the event loop's thread (madeOffLoop); or the
   * failure. The root's descriptor stays open until it is done. */
  async statAsync(path: string, check: boolean): Promise<Float64Array | RawFailure> {
    const endUse = this.use();
    try {
      return await madeOffLoop().lookUp(path, this.confine.dirfd, this.confine.resolve, !check);
    } finally {
      endUse();
    }
  }

  /** node:fs has no error for a path that leaves a root: EXDEV from openat2 becomes one. */
  explainError(err: Error, path: unknown): Error {
    const e = err as NodeJS.ErrnoException;
    if (e.code !== 'EXDEV') return err;
    const shown = Buffer.isBuffer(path) ? path.toString() : String(path);
    const error = withCode(new Error(`'${shown}' resolves outside the root '${this.path.toString()}'`), 'ERR_SMARTREAD_OUTSIDE_ROOT', this.explainError);
    return Object.assign(error, { errno: -EXDEV, syscall: 'open', path: e.path ?? shown });
  }
}
