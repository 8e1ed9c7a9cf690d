// createReader({ root }): smartRead, smartReadSync and readMany confined beneath one directory,
// opened once for all of them.
import { Root, type ConfinedStats } from './confine';
import { kReaderRoot, readMany, smartRead, type ReadManyOptions, type SettledRead, type SmartReadOptions } from './read_async';
import { smartReadSync } from './read_sync';
import * as fs from 'node:fs';
import { promisify } from 'node:util';
import { kMaxLength } from 'node:buffer';
import { invalidArgType, outOfRange } from '../common/errors';
import { getValidatedPath, type PathLike, type PathOrFd, type ReadFileOptions } from '../common/args';

/**
 * smartRead, smartReadSync and readMany confined beneath one root directory, opened once for
 * all of them (see {@link createReader}). A path that leaves the root fails with
 * ERR_SMARTREAD_OUTSIDE_ROOT.
 */
export interface ConfinedReader {
  /** The root, as given. */
  readonly root: string | Buffer;
  /**
   * {@link smartRead} beneath the root.
   *
   * @param path - Relative to the root (or absolute beneath it); an fd is read as it is.
   * @param options - smartRead's options, without a root of their own.
   * @returns The file's bytes, or its text when an encoding is given.
   */
  smartRead(path: PathOrFd, options?: Omit<SmartReadOptions, 'root' | 'noSymlinks'> | BufferEncoding | null): Promise<Buffer | string>;
  /**
   * {@link smartReadSync} beneath the root.
   *
   * @param path - Relative to the root (or absolute beneath it); an fd is read as it is.
   * @param options - smartReadSync's options, without a root of their own.
   * @returns The file's bytes, or its text when an encoding is given.
   */
  smartReadSync(path: PathOrFd, options?: ReadFileOptions | BufferEncoding | null): Buffer | string;
  /**
   * {@link readMany} beneath the root.
   *
   * @param paths - Each relative to the root (or absolute beneath it).
   * @param options - readMany's options, without a root of their own.
   * @returns Per path, in input order: its bytes, its text, or its outcome (with `settle`).
   */
  readMany(paths: Iterable<PathOrFd>, options?: Omit<ReadManyOptions, 'root' | 'noSymlinks'> | BufferEncoding | null): Promise<Array<Buffer | string | SettledRead<Buffer | string>>>;
  /**
   * The file's metadata beneath the root, on the calling thread as fs.statSync (for ETags,
   * sizes, Range requests); the same resolution rules and errors as the reads.
   *
   * @param path - Relative to the root (or absolute beneath it).
   * @returns Its type, size, mode, mtime, inode and device.
   */
  statSync(path: PathLike): ConfinedStats;
  /**
   * Up to `length` bytes from byte `position` of the file (fewer at its end), e.g. for an HTTP
   * Range request: opened beneath the root, read with one positional read, closed.
   *
   * @param path - Relative to the root (or absolute beneath it).
   * @param position - The first byte to read.
   * @param length - How many bytes to read at most.
   * @returns The bytes read.
   */
  readRange(path: PathLike, position: number, length: number): Promise<Buffer>;
  /** Stops new reads; the root's descriptor closes when the reads under way have ended. */
  close(): void;
  /** close(), for `using`. */
  [Symbol.dispose](): void;
}

const closeFd = promisify(fs.close);
const read = promisify((fd: number, buffer: Buffer, offset: number, length: number, position: number,
  done: (err: Error | null, bytesRead: number) => void) => fs.read(fd, buffer, offset, length, position, done));

/**
 * A reader of the files beneath `root` only, enforced by the kernel (openat2 RESOLVE_BENEATH):
 * for services that read files their users name. Needs the native addon.
 *
 * @param options - `root`, the directory (opened now, once), and `noSymlinks` to refuse every
 * symbolic link on the way, not only those that lead out.
 * @returns The reader; close() it when done.
 * @throws ERR_SMARTREAD_CONFINEMENT_UNAVAILABLE on the pure-JS engine; fs.openSync's errors for
 * the root.
 */
export function createReader(options: { root: PathLike; noSymlinks?: boolean }): ConfinedReader {
  if (options === null || typeof options !== 'object') throw invalidArgType('options', 'of type object', options, createReader);
  const root = new Root(options.root, options.noSymlinks, createReader);
  // The options passed on, with the reader's root under a key of its own.
  const withRoot = (o: unknown) => ({
    ...(typeof o === 'string' ? { encoding: o } : (o as object | null | undefined) ?? {}),
    [kReaderRoot]: root,
  }) as SmartReadOptions;
  const close = () => root.release();
  // Methods name the reader's own functions (not `this`) as the callers in errors' stacks, so
  // that they work destructured too.
  const reader: ConfinedReader = {
    root: root.path,
    async smartRead(path, o) {
      root.assertOpen(reader.smartRead);
      return smartRead(path, withRoot(o));
    },
    smartReadSync(path, o) {
      root.assertOpen(reader.smartReadSync);
      return smartReadSync(path, withRoot(o));
    },
    async readMany(paths, o) {
      root.assertOpen(reader.readMany);
      return readMany(paths, withRoot(o));
    },
    statSync(path) {
      root.assertOpen(reader.statSync);
      return root.statSync(path, reader.statSync);
    },
    async readRange(path, position, length) {
      root.assertOpen(reader.readRange);
      if (typeof position !== 'number') throw invalidArgType('position', 'of type number', position, reader.readRange);
      if (typeof length !== 'number') throw invalidArgType('length', 'of type number', length, reader.readRange);
      if (!Number.isSafeInteger(position) || position < 0) throw outOfRange('position', `>= 0 && <= ${Number.MAX_SAFE_INTEGER}`, position, reader.readRange);
      if (!Number.isSafeInteger(length) || length < 0 || length > kMaxLength) throw outOfRange('length', `>= 0 && <= ${kMaxLength}`, length, reader.readRange);
      // Where the open waits for a server (FUSE, NFS), off the loop (Root.openAsync), and the
      // read and the close (FUSE sends the daemon a FLUSH) on the thread pool.
      const waits = root.opensWait(getValidatedPath(path, reader.readRange));
      const fd = waits ? await root.openAsync(path, reader.readRange) : root.openSync(path, reader.readRange);
      try {
        const buffer = Buffer.allocUnsafe(length);
        const bytesRead = length === 0 ? 0 : await read(fd, buffer, 0, length, position);
        return bytesRead === length ? buffer : buffer.subarray(0, bytesRead);
      } finally {
        if (waits) await closeFd(fd);
        else fs.closeSync(fd);
      }
    },
    close,
    [Symbol.dispose]: close,
  };
  return reader;
}
