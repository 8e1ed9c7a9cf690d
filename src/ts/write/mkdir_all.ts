// mkdirAll, mkdirAllSync and mkdirMany: fs.mkdir(path, { recursive: true })'s results and errors,
// starting below the directories the environment knows, and many paths in one submission.
import * as fs from 'node:fs';
import { abortError, failureToError, invalidArgType, invalidArgValue } from '../common/errors';
import { getValidatedPath, pathList, type PathLike, type PathList } from '../common/args';
import { parseFileMode } from './write_args';
import { untilAborted } from './write_many';
import { rootOf } from '../read/read_async';
import { levelOf, syncWrites, writeEngineFor, writeStrategyNames, type MkdirFailure, type MkdirResults, type WriteStrategy } from './write_engines';
import type { ConfineOptions, Root } from '../read/confine';

export interface MkdirAllOptions extends ConfineOptions {
  /** The mode of the directories made (default 0o777, before the umask). */
  mode?: number | string;
  /** Aborts the call: it rejects with an AbortError (directories made so far stay). */
  signal?: AbortSignal;
  /** The engine: 'auto' (the default) chooses; the others force one, or fail where it is missing. */
  strategy?: WriteStrategy;
}

export interface MkdirManyOptions extends MkdirAllOptions {
  /** How many paths have syscalls in flight at once (default 64). */
  concurrency?: number;
  /** Resolve with one { status, value | reason } per path instead of rejecting on the first error. */
  settle?: boolean;
}

/** One path's outcome in mkdirMany's `settle` mode, as Promise.allSettled gives it. */
export type SettledMkdir =
  | {
    /** The path is a directory now. */
    status: 'fulfilled';
    /** The first directory made for it, or undefined when none was (fs.mkdir's result). */
    value: string | undefined;
  }
  | {
    /** It could not be made. */
    status: 'rejected';
    /** node:fs's error for this path. */
    reason: Error;
  };

// Node 22 and later check fs.mkdirSync's mode before its path, and name an options object's mode
// 'options.mode'; Node 20 checks the path first and says 'mode'. Asked of mkdirSync itself,
// once, with arguments that both fail before any syscall.
let syncModeFirst: boolean | undefined;
function mkdirSyncChecksModeFirst(): boolean {
  if (syncModeFirst === undefined) {
    try {
      fs.mkdirSync('\0', { mode: 'not a mode' as unknown as number });
      syncModeFirst = false;
    } catch (err) {
      syncModeFirst = (err as Error).message.includes("'options.mode'");
    }
  }
  return syncModeFirst;
}

/**
 * The result, or node's error: its synchronous walk names the whole path, whichever level
 * failed; its asynchronous one the level it failed at (`at`), as a string.
 */
function resultOrError(result: string | undefined | MkdirFailure, path: unknown, target: string | Buffer, root: Root | undefined,
  caller: Function): string | undefined {
  if (result === undefined || typeof result === 'string') return result;
  const named = result.at === undefined ? target : levelOf(target, result.at);
  const err = failureToError(result, result.at === undefined ? path : named, named, caller, true);
  throw root ? root.explainError(err, result.at === undefined ? path : named) : err;
}

function confinedOptions(options: unknown): ConfineOptions | undefined {
  return options !== null && typeof options === 'object' ? options as ConfineOptions : undefined;
}

/**
 * fs.mkdirSync(path, { recursive: true, mode }): makes the directory and every missing parent;
 * returns the first directory made, or undefined when none was. Starts right below the deepest
 * directory the environment knows to exist, where node walks up with a failing mkdir per
 * missing level.
 *
 * @param path - The directory to make (string, Buffer or file: URL).
 * @param options - Its mode (a number or an octal string), or {@link MkdirAllOptions} without
 *   the asynchronous ones.
 * @returns The first directory made, or undefined when none was.
 */
export function mkdirAllSync(path: PathLike, options?: Omit<MkdirAllOptions, 'signal' | 'strategy'> | number | string | null): string | undefined {
  let mode: number;
  let target: string | Buffer;
  const raw = typeof options === 'number' || typeof options === 'string' ? { mode: options } : options ?? {};
  if (mkdirSyncChecksModeFirst()) {
    mode = parseFileMode(raw.mode, typeof options === 'object' && options !== null ? 'options.mode' : 'mode', 0o777, mkdirAllSync);
    target = getValidatedPath(path, mkdirAllSync);
  } else {
    target = getValidatedPath(path, mkdirAllSync);
    mode = parseFileMode(raw.mode, 'mode', 0o777, mkdirAllSync);
  }
  const { root, ownsRoot } = rootOf(confinedOptions(options), mkdirAllSync);
  const endUse = root?.use();
  try {
    const result = syncWrites.mkdirAllSync(target, mode, false, root?.confine);
    // The synchronous walk's errors name the whole path.
    return resultOrError(typeof result === 'object' ? { ...result, at: undefined } : result, path, target, root, mkdirAllSync);
  } finally {
    endUse?.();
    if (ownsRoot) root!.release();
  }
}

interface MkdirCall {
  mode: number;
  strategy: WriteStrategy;
  signal: AbortSignal | undefined;
}

// The options of fs.promises.mkdir (a mode, or an object), and smartread's own.
function mkdirCall(options: unknown, caller: Function): MkdirCall & { rawMode: unknown } {
  if (typeof options === 'number' || typeof options === 'string') return { mode: 0, rawMode: options, strategy: 'auto', signal: undefined };
  const o = (options ?? {}) as MkdirManyOptions;
  const strategy = o.strategy ?? 'auto';
  if (!writeStrategyNames.includes(strategy)) {
    throw invalidArgValue('options.strategy', strategy, `must be one of ${writeStrategyNames.map((s) => `'${s}'`).join(', ')}`, caller);
  }
  const signal = o.signal;
  if (signal !== undefined && (signal === null || typeof signal !== 'object' || !('aborted' in signal))) {
    throw invalidArgType('options.signal', 'an instance of AbortSignal', signal, caller);
  }
  return { mode: 0, rawMode: o.mode, strategy, signal };
}

let nextId = 1 << 30;

async function makeAll(targets: Array<string | Buffer>, call: MkdirCall, concurrency: number, root: Root | undefined,
  caller: Function): Promise<MkdirResults> {
  const engine = writeEngineFor(call.strategy, caller);
  const id = nextId++;
  const endUse = root?.use();
  const pending = engine.mkdirMany(targets, call.mode, root?.confine, concurrency, id);
  if (endUse) pending.then(endUse, endUse);
  const { signal } = call;
  if (signal === undefined) return pending;
  return untilAborted(pending, signal, () => engine.cancel?.(id), caller);
}

/**
 * fs.promises.mkdir(path, { recursive: true, mode }), on the engine the strategy names.
 *
 * @param path - The directory to make (string, Buffer or file: URL).
 * @param options - Its mode (a number or an octal string), or {@link MkdirAllOptions}.
 * @returns The first directory made, or undefined when none was.
 */
export async function mkdirAll(path: PathLike, options?: MkdirAllOptions | number | string | null): Promise<string | undefined> {
  const call = mkdirCall(options, mkdirAll);
  // fs.promises.mkdir: the path, then the mode.
  const target = getValidatedPath(path, mkdirAll);
  call.mode = parseFileMode(call.rawMode, 'mode', 0o777, mkdirAll);
  if (call.signal?.aborted) throw abortError(call.signal, mkdirAll);
  const { root, ownsRoot } = rootOf(confinedOptions(options), mkdirAll);
  try {
    const [result] = await makeAll([target], call, 1, root, mkdirAll);
    return resultOrError(result, path, target, root, mkdirAll);
  } finally {
    if (ownsRoot) root!.release();
  }
}

/**
 * mkdirAll for every path, with one outcome per path in input order, as Promise.allSettled
 * gives them: no path's error rejects the whole.
 *
 * @param paths - The directories to make, any iterable.
 * @param options - `settle: true`, and {@link MkdirManyOptions}.
 * @returns `{ status: 'fulfilled', value }` or `{ status: 'rejected', reason }` per path.
 */
export function mkdirMany(paths: PathList<PathLike>, options: MkdirManyOptions & { settle: true }): Promise<SettledMkdir[]>;
/**
 * mkdirAll for every path, `concurrency` at once; rejects with the first error.
 *
 * @param paths - The directories to make, any iterable.
 * @param options - Their mode, or {@link MkdirManyOptions}.
 * @returns Per path, the first directory made for it, or undefined.
 */
export function mkdirMany(paths: PathList<PathLike>, options?: MkdirManyOptions | number | string | null): Promise<Array<string | undefined>>;
/**
 * mkdirAll for every path, `concurrency` at once; rejects with the first error unless `settle`
 * is set.
 *
 * @param paths - The directories to make, any iterable.
 * @param options - Their mode, or {@link MkdirManyOptions}.
 * @returns Per path, the first directory made for it (or its outcome, with `settle`).
 */
export function mkdirMany(paths: PathList<PathLike>, options?: MkdirManyOptions | number | string | null): Promise<Array<string | undefined> | SettledMkdir[]>;
/**
 * mkdirAll for every path, `concurrency` at once: on io_uring in one submission, each path's
 * missing levels one chain of MKDIRATs, and a directory that several paths need made once. Each
 * result is fs.mkdir(path, { recursive: true })'s; where several paths share a directory that is
 * not there yet, which of them reports making it may differ from one run to the next, as with
 * concurrent fs.mkdir calls (with strategy 'sync', they are made in order). Rejects with the
 * first error unless `settle` is set.
 *
 * @param paths - The directories to make, any iterable.
 * @param options - Their mode, or {@link MkdirManyOptions}.
 * @returns Per path, the first directory made for it (or its outcome, with `settle`).
 */
export async function mkdirMany(paths: PathList<PathLike>, options?: MkdirManyOptions | number | string | null): Promise<Array<string | undefined> | SettledMkdir[]> {
  const list = pathList(paths, mkdirMany);
  const call = mkdirCall(options, mkdirMany);
  call.mode = parseFileMode(call.rawMode, 'mode', 0o777, mkdirMany);
  const many = (options !== null && typeof options === 'object' ? options : {}) as MkdirManyOptions;
  const concurrency = many.concurrency ?? 64;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw invalidArgValue('options.concurrency', concurrency, 'must be an integer >= 1', mkdirMany);
  }
  const settle = many.settle === true;
  // Every path is checked before any directory is made.
  const targets: Array<string | Buffer | undefined> = new Array(list.length);
  const invalid: Array<Error | undefined> = new Array(list.length);
  list.forEach((path, i) => {
    try {
      targets[i] = getValidatedPath(path, mkdirMany);
    } catch (err) {
      if (!settle) throw err;
      invalid[i] = err as Error;
    }
  });
  if (call.signal?.aborted) throw abortError(call.signal, mkdirMany);
  const { root, ownsRoot } = rootOf(confinedOptions(options), mkdirMany);
  try {
    const indexes = targets.flatMap((t, i) => (t === undefined ? [] : [i]));
    const results = await makeAll(indexes.map((i) => targets[i]!), call, concurrency, root, mkdirMany);
    const settled: SettledMkdir[] = list.map((_, i) => ({ status: 'rejected', reason: invalid[i]! }));
    indexes.forEach((i, k) => {
      try {
        settled[i] = { status: 'fulfilled', value: resultOrError(results[k], list[i], targets[i]!, root, mkdirMany) };
      } catch (err) {
        if (!settle) throw err;
        settled[i] = { status: 'rejected', reason: err as Error };
      }
    });
    return settle ? settled : settled.map((s) => (s as { value: string | undefined }).value);
  } finally {
    if (ownsRoot) root!.release();
  }
}
