// writeMany, and what smartWriteFile shares with it: parent directories made once per batch,
// the files written on the engine, cancellation by a signal, errors shaped as node:fs's.
import { abortError, errnoOf, failureToError, invalidArgType, invalidArgValue } from '../common/errors';
import { getValidatedPath, isFd, pathList, type PathLike, type PathList } from '../common/args';
import { dataBytes, flagsAndMode, isCurrentDir, parentOf, parseFileMode, writeCommon, writeOptions, type WriteCommon, type WriteData, type WriteFileOptions } from './write_args';
import { ECANCELED, forgetDirs, knownDirs, levelOf, type MkdirFailure, type WriteFailures } from './write_engines';
import type { RawFailure } from '../common/raw';
import type { Root } from '../read/confine';

/** One file for writeMany: where, what, and (optionally) its mode. */
export interface WriteEntry {
  /** The file's path (string, Buffer or file: URL); not an fd. */
  path: PathLike;
  /** Its contents: a string (in the call's encoding), a Buffer, a TypedArray or a DataView. */
  data: WriteData;
  /** This file's mode (default: options.mode, else 0o666). */
  mode?: number | string;
}

export interface WriteManyOptions extends WriteFileOptions {
  /** How many files are in flight at once (default 64). */
  concurrency?: number;
  /** Resolve with one { status, value | reason } per entry instead of rejecting on the first error. */
  settle?: boolean;
}

/** One entry's outcome in writeMany's `settle` mode, as Promise.allSettled gives it. */
export type SettledWrite =
  | {
    /** Written. */
    status: 'fulfilled';
    /** Nothing, as fs.promises.writeFile resolves with. */
    value: undefined;
  }
  | {
    /** Not written. */
    status: 'rejected';
    /** node:fs's error for this entry. */
    reason: Error;
  };

/** One file to write, validated. */
export interface WriteItem {
  target: string | Buffer | number;
  bytes: Uint8Array;
  mode: number;
  /** The path as the caller gave it, for errors. */
  path: unknown;
}

let nextId = 1;

const ENOENT = errnoOf('ENOENT');
const ENOTDIR = errnoOf('ENOTDIR');

function writeError(raw: RawFailure, item: WriteItem, root: Root | undefined, caller: Function): Error {
  if (raw.errno === ECANCELED) return new CancelledWrite();
  // A failed rename names its target, as node:fs's rename does.
  const err = failureToError(raw, item.path, item.target, caller, raw.syscall === 'rename');
  return root ? root.explainError(err, item.path) : err;
}

// fs.mkdir(dir, { recursive: true })'s error: it names the level its walk failed at.
function mkdirError(raw: MkdirFailure, dir: string | Buffer, root: Root | undefined, caller: Function): Error {
  if (raw.errno === ECANCELED) return new CancelledWrite();
  const named = raw.at === undefined ? dir : levelOf(dir, raw.at);
  const err = failureToError(raw, named, named, caller, true);
  return root ? root.explainError(err, named) : err;
}

// What an entry stopped by the signal holds until the caller turns it into its AbortError.
class CancelledWrite extends Error {}

// A parent directory of the batch and the entries in it.
interface Parent {
  dir: string | Buffer;
  items: number[];
  /** Taken from what the environment knows, without a syscall: checked by the writes. */
  trusted: boolean;
}

function parentsOf(items: WriteItem[], indexes: number[]): Parent[] {
  const byKey = new Map<string, Parent>();
  for (const i of indexes) {
    const { target } = items[i];
    if (typeof target === 'number') continue;
    const dir = parentOf(target);
    if (isCurrentDir(dir)) continue;
    const key = typeof dir === 'string' ? `s${dir}` : `b${dir.toString('latin1')}`;
    let parent = byKey.get(key);
    if (parent === undefined) byKey.set(key, parent = { dir, items: [], trusted: false });
    parent.items.push(i);
  }
  return [...byKey.values()];
}

/**
 * Writes every item on the common engine, making parents first with mkdirs; resolves with each
 * item's error (undefined where it was written). Without `settle`, an abort rejects at once
 * with an AbortError (the engine is told to stop, and cleans up on its own); with it, the
 * abort is waited out and what it stopped is an AbortError in its place.
 */
export async function runWrites(common: WriteCommon, items: WriteItem[], concurrency: number, settle: boolean,
  caller: Function): Promise<Array<Error | undefined>> {
  const { engine, root, signal } = common;
  const errors: Array<Error | undefined> = new Array(items.length);
  // 1 once an item's write came back without an error.
  const written = new Uint8Array(items.length);
  const id = nextId++;
  const stop = () => engine.cancel?.(id);
  const aborted = () => signal?.aborted === true;

  const writeAll = async (indexes: number[]) => {
    if (indexes.length === 0) return;
    const failures: WriteFailures = await engine.writeFiles({
      targets: indexes.map((i) => items[i].target),
      datas: indexes.map((i) => items[i].bytes),
      modes: Uint32Array.from(indexes, (i) => items[i].mode),
      flags: common.flags,
      flush: common.flush,
      atomic: common.atomic,
      confine: root?.confine,
    }, concurrency, id);
    indexes.forEach((i, k) => {
      const failure = failures?.[k];
      errors[i] = failure ? writeError(failure, items[i], root, caller) : undefined;
      if (!failure) written[i] = 1;
    });
  };
  // Makes the parents; the entries of one that cannot be made fail with its mkdir error.
  const makeAll = async (parents: Parent[]) => {
    if (parents.length === 0) return;
    const results = await engine.mkdirMany(parents.map((p) => p.dir), common.dirMode, root?.confine, concurrency, id);
    parents.forEach((parent, k) => {
      const result = results[k];
      if (result === undefined || typeof result === 'string') return;
      const err = mkdirError(result, parent.dir, root, caller);
      for (const i of parent.items) errors[i] = err;
    });
  };

  const work = async () => {
    const endUse = root?.use();
    try {
      const all = items.map((_, i) => i);
      let parents: Parent[] = [];
      if (common.mkdirs) {
        parents = parentsOf(items, all);
        // Under a root, paths are relative to it: what the environment knows does not apply.
        const known = root ? new Uint8Array(parents.length) : knownDirs(parents.map((p) => p.dir));
        parents.forEach((parent, k) => {
          parent.trusted = known[k] === 1;
        });
        await makeAll(parents.filter((p) => !p.trusted));
      }
      if (aborted()) return;
      await writeAll(all.filter((i) => errors[i] === undefined));
      // A parent taken as known that a write found gone (ENOENT) or no longer a directory
      // (ENOTDIR): forgotten, made as node would, and its entries written once more.
      const stale = parents.filter((p) => p.trusted && p.items.some((i) => {
        const e = errors[i] as NodeJS.ErrnoException | undefined;
        return e?.syscall === 'open' && (e.errno === ENOENT || e.errno === ENOTDIR);
      }));
      if (stale.length === 0 || aborted()) return;
      forgetDirs(stale.map((p) => p.dir));
      for (const p of stale) for (const i of p.items) errors[i] = undefined;
      await makeAll(stale);
      if (aborted()) return;
      await writeAll(stale.flatMap((p) => p.items).filter((i) => errors[i] === undefined));
    } finally {
      endUse?.();
    }
  };

  if (signal === undefined) {
    await work();
    return errors;
  }
  if (!settle) {
    await untilAborted(work(), signal, stop, caller);
    return errors;
  }
  const onAbort = () => stop();
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    await work();
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
  if (aborted()) {
    // What the abort stopped, or did not let start, is its AbortError.
    for (let i = 0; i < items.length; i++) {
      if (errors[i] instanceof CancelledWrite || (errors[i] === undefined && written[i] === 0)) errors[i] = abortError(signal, caller);
    }
  }
  return errors;
}

// Settles with `pending`, or rejects with an AbortError as soon as the signal fires (the engine
// is told to stop; `pending` settles later and is ignored). mkdirAll's too.
export function untilAborted<T>(pending: Promise<T>, signal: AbortSignal, stop: () => void, caller: Function): Promise<T> {
  if (signal.aborted) {
    stop();
    pending.catch(() => undefined);
    return Promise.reject(abortError(signal, caller));
  }
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      stop();
      reject(abortError(signal, caller));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    pending.then((value) => {
      signal.removeEventListener('abort', onAbort);
      resolve(value);
    }, (err) => {
      signal.removeEventListener('abort', onAbort);
      reject(err);
    });
  });
}

/** An entry of writeMany, validated; throws node:fs's argument errors. */
function entryItem(entry: unknown, defaultMode: number, encoding: BufferEncoding, caller: Function): WriteItem {
  if (entry === null || typeof entry !== 'object') throw invalidArgType('entry', 'of type object', entry, caller);
  const { path, data, mode } = entry as WriteEntry;
  const bytes = dataBytes(data, encoding, 'data', caller);
  // A batch writes files by path: an fd has no parent to make, and no place beside it.
  if (isFd(path)) throw invalidArgType('path', 'of type string or an instance of Buffer or URL', path, caller);
  const target = getValidatedPath(path, caller);
  return { target, bytes, mode: mode === undefined ? defaultMode : parseFileMode(mode, 'mode', 0o666, caller), path };
}

/**
 * Writes every entry, and resolves with one outcome per entry in input order, as
 * Promise.allSettled does: no entry's error rejects the whole.
 *
 * @param entries - The files to write ({@link WriteEntry}), any iterable.
 * @param options - `settle: true`, and {@link WriteManyOptions}.
 * @returns `{ status: 'fulfilled' }` or `{ status: 'rejected', reason }` per entry.
 */
export function writeMany(entries: PathList<WriteEntry>, options: WriteManyOptions & { settle: true }): Promise<SettledWrite[]>;
/**
 * Writes every entry, at most `concurrency` files in flight (default 64); rejects with the
 * first error (node:fs's, naming its file).
 *
 * @param entries - The files to write ({@link WriteEntry}), any iterable.
 * @param options - The encoding of string data, or {@link WriteManyOptions}.
 * @returns Nothing, once every file is written.
 */
export function writeMany(entries: PathList<WriteEntry>, options?: WriteManyOptions | BufferEncoding | null): Promise<void>;
/**
 * Writes every entry's data to its path, at most `concurrency` files in flight: on io_uring as
 * linked OPENAT → WRITE → CLOSE chains submitted together, elsewhere in runs on libuv's pool.
 * With `mkdirs`, each parent directory the batch needs is made once before its files. Rejects
 * with the first error (node:fs's, naming its file) unless `settle` is set.
 *
 * @param entries - The files to write ({@link WriteEntry}), any iterable.
 * @param options - The encoding of string data, or {@link WriteManyOptions}.
 * @returns Nothing, or one outcome per entry with `settle`.
 */
export function writeMany(entries: PathList<WriteEntry>, options?: WriteManyOptions | BufferEncoding | null): Promise<void | SettledWrite[]>;
/**
 * Writes every entry's data to its path, at most `concurrency` files in flight: on io_uring as
 * linked OPENAT → WRITE → CLOSE chains submitted together, elsewhere in runs on libuv's pool.
 * With `mkdirs`, each parent directory the batch needs is made once before its files. Rejects
 * with the first error (node:fs's, naming its file) unless `settle` is set.
 *
 * @param entries - The files to write ({@link WriteEntry}), any iterable.
 * @param options - The encoding of string data, or {@link WriteManyOptions}.
 * @returns Nothing, or one outcome per entry with `settle`.
 */
export async function writeMany(entries: PathList<WriteEntry>, options?: WriteManyOptions | BufferEncoding | null): Promise<void | SettledWrite[]> {
  const list = pathList(entries, writeMany);
  const many = (options !== null && typeof options === 'object' ? options : {}) as WriteManyOptions;
  const validated = writeOptions(options, writeMany);
  const { flags, mode } = flagsAndMode(validated.flag, validated.raw, writeMany);
  const concurrency = many.concurrency ?? 64;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw invalidArgValue('options.concurrency', concurrency, 'must be an integer >= 1', writeMany);
  }
  const settle = many.settle === true;
  const common = writeCommon(validated, flags, mode, writeMany);
  try {
    // Every entry is checked before any is written: a bad argument writes nothing, or, with
    // settle, fails that entry alone.
    const items: Array<WriteItem | undefined> = new Array(list.length);
    const invalid: Array<Error | undefined> = new Array(list.length);
    list.forEach((entry, i) => {
      try {
        items[i] = entryItem(entry, common.mode, common.encoding, writeMany);
      } catch (err) {
        if (!settle) throw err;
        invalid[i] = err as Error;
      }
    });
    const signal = common.signal;
    if (signal?.aborted) {
      if (!settle) throw abortError(signal, writeMany);
      return list.map((_, i) => ({ status: 'rejected', reason: invalid[i] ?? abortError(signal, writeMany) }));
    }
    const indexes = items.flatMap((item, i) => (item ? [i] : []));
    const errors = await runWrites(common, indexes.map((i) => items[i]!), concurrency, settle, writeMany);
    const results: Array<Error | undefined> = invalid;
    indexes.forEach((i, k) => {
      results[i] = errors[k];
    });
    if (!settle) {
      const first = results.find((e) => e !== undefined);
      if (first) throw first;
      return;
    }
    return results.map((reason) => (reason ? { status: 'rejected', reason } : { status: 'fulfilled', value: undefined }));
  } finally {
    if (common.ownsRoot) common.root!.release();
  }
}
