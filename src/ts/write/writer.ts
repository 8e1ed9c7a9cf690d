// createWriter({ root }): smartWriteFile, smartWriteFileSync, writeMany, mkdirAll, mkdirAllSync and
// mkdirMany confined beneath one directory, opened once for all of them: the writing sibling of
// createReader, for services that write files their users name.
import { Root } from '../read/confine';
import { kReaderRoot } from '../read/read_async';
import { invalidArgType } from '../common/errors';
import { smartWriteFile, smartWriteFileSync } from './write';
import { writeMany, type SettledWrite, type WriteEntry, type WriteManyOptions } from './write_many';
import { mkdirAll, mkdirAllSync, mkdirMany, type MkdirAllOptions, type MkdirManyOptions, type SettledMkdir } from './mkdir_all';
import type { PathLike, PathOrFd } from '../common/args';
import type { WriteData, WriteFileOptions } from './write_args';

/** Options of a confined writer's calls: the writer's root is theirs, so they take none. */
export type Unconfined<T> = Omit<T, 'root' | 'noSymlinks'>;

/** What createWriter returns: the write functions, each resolving its paths beneath the root. */
export interface ConfinedWriter {
  /** The root, as given. */
  readonly root: string | Buffer;
  /**
   * smartWriteFile beneath the root.
   * @param path - A path relative to the root (or an fd, which is written as it is).
   * @param data - A string, a Buffer, a TypedArray or a DataView.
   * @param options - The encoding, or smartWriteFile's options but `root`.
   */
  smartWriteFile(path: PathOrFd, data: WriteData, options?: Unconfined<WriteFileOptions> | BufferEncoding | null): Promise<void>;
  /**
   * smartWriteFileSync beneath the root.
   * @param path - A path relative to the root (or an fd, which is written as it is).
   * @param data - A string, a Buffer, a TypedArray or a DataView.
   * @param options - The encoding, or smartWriteFileSync's options but `root`.
   */
  smartWriteFileSync(path: PathOrFd, data: WriteData, options?: Unconfined<Omit<WriteFileOptions, 'signal' | 'strategy'>> | BufferEncoding | null): void;
  /**
   * writeMany beneath the root.
   * @param entries - The files to write, their paths relative to the root.
   * @param options - The encoding, or writeMany's options but `root`.
   */
  writeMany(entries: Iterable<WriteEntry>, options?: Unconfined<WriteManyOptions> | BufferEncoding | null): Promise<void | SettledWrite[]>;
  /**
   * mkdirAll beneath the root.
   * @param path - A directory relative to the root.
   * @param options - Its mode, or mkdirAll's options but `root`.
   */
  mkdirAll(path: PathLike, options?: Unconfined<MkdirAllOptions> | number | string | null): Promise<string | undefined>;
  /**
   * mkdirAllSync beneath the root.
   * @param path - A directory relative to the root.
   * @param options - Its mode, or mkdirAllSync's options but `root`.
   */
  mkdirAllSync(path: PathLike, options?: Unconfined<Omit<MkdirAllOptions, 'signal' | 'strategy'>> | number | string | null): string | undefined;
  /**
   * mkdirMany beneath the root.
   * @param paths - Directories relative to the root.
   * @param options - Their mode, or mkdirMany's options but `root`.
   */
  mkdirMany(paths: Iterable<PathLike>, options?: Unconfined<MkdirManyOptions> | number | string | null): Promise<Array<string | undefined> | SettledMkdir[]>;
  /** Stops new writes; the root's descriptor closes when the writes under way have ended. */
  close(): void;
  /** close(), for `using`. */
  [Symbol.dispose](): void;
}

/**
 * A writer of files beneath `root` only, enforced by the kernel: every path is resolved with
 * openat2 RESOLVE_BENEATH from the root (a path that leads out of it, by '..' or a symbolic
 * link, fails with ERR_SMARTREAD_OUTSIDE_ROOT), directories are made one level at a time
 * beneath it, and an atomic write's temporary file and rename stay in the directory resolved
 * so. Confined writes run on the thread pool (or the calling thread for the Sync calls).
 *
 * @param options - `root`, the directory (opened now, and held until close()), and
 *   `noSymlinks`, to refuse every symbolic link beneath it too.
 */
export function createWriter(options: { root: PathLike; noSymlinks?: boolean }): ConfinedWriter {
  if (options === null || typeof options !== 'object') throw invalidArgType('options', 'of type object', options, createWriter);
  const root = new Root(options.root, options.noSymlinks, createWriter);
  // The options passed on, with the writer's root under a key of its own.
  const withRoot = <T>(o: unknown, key: 'encoding' | 'mode'): T => ({
    ...(typeof o === 'string' || typeof o === 'number' ? { [key]: o } : (o as object | null | undefined) ?? {}),
    [kReaderRoot]: root,
  }) as T;
  const close = () => root.release();
  // Methods name the writer's own functions (not `this`) as the callers in errors' stacks, so
  // that they work destructured too.
  const writer: ConfinedWriter = {
    root: root.path,
    async smartWriteFile(path, data, o) {
      root.assertOpen(writer.smartWriteFile);
      return smartWriteFile(path, data, withRoot(o, 'encoding'));
    },
    smartWriteFileSync(path, data, o) {
      root.assertOpen(writer.smartWriteFileSync);
      return smartWriteFileSync(path, data, withRoot(o, 'encoding'));
    },
    async writeMany(entries, o) {
      root.assertOpen(writer.writeMany);
      return writeMany(entries, withRoot(o, 'encoding'));
    },
    async mkdirAll(path, o) {
      root.assertOpen(writer.mkdirAll);
      return mkdirAll(path, withRoot(o, 'mode'));
    },
    mkdirAllSync(path, o) {
      root.assertOpen(writer.mkdirAllSync);
      return mkdirAllSync(path, withRoot(o, 'mode'));
    },
    async mkdirMany(paths, o) {
      root.assertOpen(writer.mkdirMany);
      return mkdirMany(paths, withRoot(o, 'mode'));
    },
    close,
    [Symbol.dispose]: close,
  };
  return writer;
}
