// smartRead and readMany: fs.promises.readFile's contract on the engine the strategy names.
import { engineFor, strategyNames, type AsyncEngine, type Strategy } from './strategies';
import { abortError, failureToError, invalidArgType, invalidArgValue, outOfRange, strategyUnavailable } from './errors';
import { getOptions, getValidatedPath, isFd, stringToFlags, type PathOrFd, type ReadFileOptions } from './args';
import type { RawFailure, RawResult } from './native';

export interface SmartReadOptions extends ReadFileOptions {
  /** The engine: 'auto' (the default) chooses; the others force one, or fail where it is missing. */
  strategy?: Strategy;
}

export interface ReadManyOptions extends SmartReadOptions {
  /** How many reads are in flight at once (default 64). */
  concurrency?: number;
  /** Resolve with one { status, value | reason } per path instead of rejecting on the first error. */
  settle?: boolean;
}

export type SettledRead<T> = { status: 'fulfilled'; value: T } | { status: 'rejected'; reason: Error };

// What a read needs once its arguments are known to be valid.
export interface Request {
  engine: AsyncEngine;
  target: string | Buffer | number;
  flags: number;
  encoding: BufferEncoding | 'buffer' | null | undefined;
  signal: AbortSignal | undefined;
}

export interface Common {
  engine: AsyncEngine;
  encoding: Request['encoding'];
  signal: AbortSignal | undefined;
  flag: unknown;
}

/** The options every read shares, validated; the engine the strategy names, or its error. */
export function commonOptions(options: unknown, caller: Function): Common {
  const { encoding, flag, signal } = getOptions(options, caller);
  const strategy = (options !== null && typeof options === 'object'
    ? (options as SmartReadOptions).strategy : undefined) ?? 'auto';
  if (!strategyNames.includes(strategy)) {
    throw invalidArgValue('options.strategy', strategy, `must be one of ${strategyNames.map((s) => `'${s}'`).join(', ')}`, caller);
  }
  const engine = engineFor(strategy);
  if (typeof engine === 'string') throw strategyUnavailable(strategy, engine, caller);
  return { engine, encoding, signal, flag };
}

/** One read's validated path or fd and open flags. */
export function request(path: unknown, common: Common, caller: Function): Request {
  if (isFd(path)) {
    if (path < 0) throw outOfRange('fd', '>= 0 && <= 2147483647', path, caller);
    // An fd is already open: like fs.readFile, the flag is not looked at.
    return { engine: common.engine, target: path, flags: 0, encoding: common.encoding, signal: common.signal };
  }
  const target = getValidatedPath(path, caller);
  // fs.promises.readFile opens with `flag || 'r'`: an empty flag reads.
  const flags = stringToFlags(common.flag || 'r', caller);
  return { engine: common.engine, target, flags, encoding: common.encoding, signal: common.signal };
}

let nextId = 1;

// How many cache hits in a row one readMany lane takes before the event loop gets a turn:
// ~64 × 5 µs, a fraction of a millisecond.
const kHitsBeforeYield = 64;

// One 'abort' listener per signal, shared by all the reads waiting on it (hundreds, in a
// readMany), removed when the last of them settles.
interface AbortWatch {
  waiters: Set<() => void>;
  fire: () => void;
}
const abortWatches = new WeakMap<AbortSignal, AbortWatch>();

function onAbort(signal: AbortSignal, waiter: () => void): () => void {
  let watch = abortWatches.get(signal);
  if (watch === undefined) {
    const waiters = new Set<() => void>();
    const fire = () => {
      abortWatches.delete(signal);
      for (const w of waiters) w();
    };
    watch = { waiters, fire };
    abortWatches.set(signal, watch);
    signal.addEventListener('abort', fire, { once: true });
  }
  const current = watch;
  current.waiters.add(waiter);
  return () => {
    current.waiters.delete(waiter);
    if (current.waiters.size === 0 && abortWatches.get(signal) === current) {
      abortWatches.delete(signal);
      signal.removeEventListener('abort', current.fire);
    }
  };
}

// Settles with the engine's result, or rejects with an AbortError as soon as the signal fires
// (the engine is told to stop; its own promise settles later and is ignored).
function untilAborted<T>(pending: Promise<T>, signal: AbortSignal, stop: () => void, caller: Function): Promise<T> {
  return new Promise((resolve, reject) => {
    const forget = onAbort(signal, () => {
      stop();
      reject(abortError(signal, caller));
    });
    pending.then((value) => {
      forget();
      resolve(value);
    }, (err) => {
      forget();
      reject(err);
    });
  });
}

// The caller's result from an engine's raw one: the bytes (decoded if asked), or the error.
function shape(raw: RawResult, req: Request, path: unknown, caller: Function): Buffer | string {
  if ((raw as RawFailure).errno !== undefined) throw failureToError(raw as RawFailure, path, req.target, caller);
  // Like node:fs, an encoding of 'buffer' passes validation and then fails in toString().
  return req.encoding ? (raw as Buffer).toString(req.encoding as BufferEncoding) : (raw as Buffer);
}

async function perform(req: Request, path: unknown, caller: Function): Promise<Buffer | string> {
  const { engine, target, signal } = req;
  if (signal?.aborted) throw abortError(signal, caller);
  const id = nextId++;
  const pending = engine.read(target, req.flags, true, id);
  const raw = signal
    ? await untilAborted(pending, signal, () => engine.cancel?.(id), caller)
    : await pending;
  return shape(raw, req, path, caller);
}

export function smartRead(path: PathOrFd, options?: { encoding?: null; flag?: string | number; signal?: AbortSignal; strategy?: Strategy } | null): Promise<Buffer>;
export function smartRead(path: PathOrFd, options: { encoding: BufferEncoding; flag?: string | number; signal?: AbortSignal; strategy?: Strategy } | BufferEncoding): Promise<string>;
export function smartRead(path: PathOrFd, options?: SmartReadOptions | BufferEncoding | null): Promise<string | Buffer>;
/** The counterpart of fs.promises.readFile (and of fs.readFile, as it also takes an fd). */
export async function smartRead(path: PathOrFd, options?: SmartReadOptions | BufferEncoding | null): Promise<string | Buffer> {
  const common = commonOptions(options, smartRead);
  // As fs.promises.readFile: an aborted signal wins over an invalid path or flag.
  if (common.signal?.aborted) throw abortError(common.signal, smartRead);
  return perform(request(path, common, smartRead), path, smartRead);
}

export function readMany(paths: Iterable<PathOrFd>, options: ReadManyOptions & { settle: true }): Promise<SettledRead<Buffer | string>[]>;
export function readMany(paths: Iterable<PathOrFd>, options: (ReadManyOptions & { encoding: BufferEncoding }) | BufferEncoding): Promise<string[]>;
export function readMany(paths: Iterable<PathOrFd>, options?: ReadManyOptions | null): Promise<Buffer[]>;
export function readMany(paths: Iterable<PathOrFd>, options?: ReadManyOptions | BufferEncoding | null): Promise<Array<Buffer | string | SettledRead<Buffer | string>>>;
/**
 * Reads every path with at most `concurrency` in flight; results in input order. Rejects with
 * the first error (node:fs-style, naming its file) unless `settle` is set.
 */
export async function readMany(paths: Iterable<PathOrFd>, options?: ReadManyOptions | BufferEncoding | null): Promise<Array<Buffer | string | SettledRead<Buffer | string>>> {
  // A string or a Buffer is one path, not a list of them.
  if (paths == null || typeof (paths as Iterable<unknown>)[Symbol.iterator] !== 'function' ||
      typeof paths === 'string' || ArrayBuffer.isView(paths)) {
    throw invalidArgType('paths', 'an iterable of paths', paths, readMany);
  }
  const list = Array.from(paths);
  const common = commonOptions(options, readMany);
  const many = options !== null && typeof options === 'object' ? options : {};
  const concurrency = many.concurrency ?? 64;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw invalidArgValue('options.concurrency', concurrency, 'must be an integer >= 1', readMany);
  }
  const settle = many.settle === true;
  const results: Array<Buffer | string | SettledRead<Buffer | string>> = new Array(list.length);
  let next = 0;
  let failed = false;
  // Cache hits are taken at once, without a promise each; after a run of them (counted over
  // all the lanes: they start one after another in this same turn) every lane waits for the
  // event loop to turn, so that a list of cached files cannot hold it for long.
  let hitsSinceTurn = 0;
  let turn: Promise<void> | null = null;
  const nextTurn = () => turn ??= new Promise<void>((resolve) => setImmediate(() => {
    turn = null;
    hitsSinceTurn = 0;
    resolve();
  }));
  const lane = async () => {
    while (!failed && next < list.length) {
      if (hitsSinceTurn >= kHitsBeforeYield) {
        await nextTurn();
        continue;
      }
      const i = next++;
      try {
        if (common.signal?.aborted) throw abortError(common.signal, readMany);
        const req = request(list[i], common, readMany);
        const now = req.engine.readNow?.(req.target, req.flags) ?? null;
        let value: Buffer | string;
        if (now !== null) {
          value = shape(now, req, list[i], readMany);
          hitsSinceTurn++;
        } else {
          value = await perform(req, list[i], readMany);
        }
        results[i] = settle ? { status: 'fulfilled', value } : value;
      } catch (err) {
        if (!settle) {
          failed = true;
          throw err;
        }
        results[i] = { status: 'rejected', reason: err as Error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, list.length) }, lane));
  return results;
}
