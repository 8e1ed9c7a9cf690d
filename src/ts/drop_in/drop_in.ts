// node:fs's readFile, readFileSync and promises.readFile served by smartread, with node:fs's own
// functions taking every call that smartread would not answer exactly as they do: what
// smartread/fs exports, and what smartread/register puts in place of node:fs's functions.
import * as fs from 'node:fs';
import { constants as bufferConstants } from 'node:buffer';
import { syncBuiltinESMExports } from 'node:module';
import { fileURLToPath } from 'node:url';
import { smartRead } from '../read/read_async';
import { smartReadSync } from '../read/read_sync';
import { loadReport } from '../engine/engine';
import { originalPromisesReadFile, originalReadFile, originalReadFileSync } from '../common/fs_originals';
import { isFileHandle } from '../common/args';
import type { FileHandle } from 'node:fs/promises';

/** node:fs's functions that a drop-in serves, and passes on to. */
export interface FsReaders {
  readFile: typeof fs.readFile;
  readFileSync: typeof fs.readFileSync;
  promisesReadFile: typeof fs.promises.readFile;
}

// node:fs refuses to read more than this into one Buffer (kIoMaxLength, ERR_FS_FILE_TOO_LARGE);
// smartread reads up to what a Buffer holds. A longer result goes to node:fs, which says no.
const kNodeMaxRead = 2 ** 31 - 1;

// The encoding a call reads with, null for a Buffer, or kNotPlain: the options are anything but
// undefined, null, a callback (readFile's defaults), an encoding name, or a plain object of
// encoding (a name or null), flag 'r' and an AbortSignal not yet aborted (an aborted one is
// node:fs's to refuse, at once, with the caller's frames in its stack). Unknown keys go to
// node:fs: they may be a newer Node's options (Node 24's `buffer`).
const kNotPlain = Symbol('not plain');
type Encoding = BufferEncoding | null | typeof kNotPlain;

function plainEncoding(options: unknown): Encoding {
  if (options === undefined || options === null || typeof options === 'function') return null;
  if (typeof options === 'string') return options !== 'buffer' && Buffer.isEncoding(options) ? options : kNotPlain;
  if (typeof options !== 'object') return kNotPlain;
  const proto = Object.getPrototypeOf(options);
  if (proto !== Object.prototype && proto !== null) return kNotPlain;
  for (const key of Object.keys(options)) {
    if (key !== 'encoding' && key !== 'flag' && key !== 'signal') return kNotPlain;
  }
  const { encoding, flag, signal } = options as { encoding?: unknown; flag?: unknown; signal?: unknown };
  if (flag !== undefined && flag !== null && flag !== 'r') return kNotPlain;
  if (signal !== undefined && (!(signal instanceof AbortSignal) || signal.aborted)) return kNotPlain;
  if (encoding === undefined || encoding === null) return null;
  return typeof encoding === 'string' && encoding !== 'buffer' && Buffer.isEncoding(encoding) ? encoding : kNotPlain;
}

// A plain call's signal (plainEncoding has let only an AbortSignal through).
function signalOf(options: unknown): { signal?: AbortSignal } | undefined {
  const signal = typeof options === 'object' && options !== null ? (options as { signal?: AbortSignal }).signal : undefined;
  return signal === undefined ? undefined : { signal };
}

// The path as smartread takes it, or null: a string or Buffer without NUL bytes, or a valid
// file: URL. An fd (read from its position) and anything invalid go to node:fs, which also
// throws its own argument errors, at the moment it throws them; a FileHandle is promisesReadFile's.
function plainPath(path: unknown): string | Buffer | null {
  if (typeof path === 'string') return path.length > 0 && !path.includes('\u0000') ? path : null;
  if (Buffer.isBuffer(path)) return path.length > 0 && !path.includes(0) ? path : null;
  if (path instanceof URL) {
    try {
      return plainPath(fileURLToPath(path));
    } catch {
      return null;
    }
  }
  return null;
}

// The caller's result from smartread's bytes, or null when node:fs would not give these bytes
// back (it refuses files over 2 GiB, and a string beyond V8's limit). Like node:fs's, the Buffer
// owns its memory: smartread's small results share a slab, and code that hands `buf.buffer` on
// (to a worker, to WebAssembly) must see the file and nothing else.
function finish(bytes: Buffer, encoding: BufferEncoding | null): Buffer | string | null {
  if (bytes.length > kNodeMaxRead) return null;
  if (encoding !== null) return bytes.length > bufferConstants.MAX_STRING_LENGTH ? null : bytes.toString(encoding);
  return ownBuffer(bytes);
}

// The bytes in a Buffer that owns its whole ArrayBuffer.
function ownBuffer(bytes: Buffer): Buffer {
  if (bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.length) return bytes;
  const own = Buffer.allocUnsafeSlow(bytes.length);
  bytes.copy(own);
  return own;
}

// The drop-in settles a read on a later turn of the event loop (its check phase), never in the
// tick that asked, as node:fs's asynchronous readers do (they settle in the poll phase, after
// the thread pool). Code written against node:fs may rely on the turn: a server under load
// answers the requests of a whole turn, then writes, and clients are woken in batches. Settled
// in the same tick (a microtask, as smartRead's fast path does), fastify + @fastify/view under
// 32 connections on this 2 vCPU VM served 0.6x the requests of plain Node at the same CPU;
// settled with setImmediate, 1.0-1.1x. See docs/drop-in.md.
function onLaterTurn<T>(value: T): Promise<T> {
  return new Promise((resolve) => setImmediate(resolve, value));
}

// An error thrown by node:fs's function under ours, with our frame taken out of its stack, so
// that it reads as if the caller had called node:fs directly (node:fs's functions are called on
// what the caller called ours on, so that V8 names their frames as it would have: `Object.x` for
// fs.x(), `x` for a bare call).
function withoutOwnFrames(err: unknown): unknown {
  if (err instanceof Error && typeof err.stack === 'string' && err.stack.includes(__filename)) {
    err.stack = err.stack.split('\n').filter((line) => !line.includes(__filename)).join('\n');
  }
  return err;
}

// fs.promises.readFile(fileHandle): read from the handle's position, as node:fs does. Nothing
// can be asked of node:fs again once smartread has read (the position has moved), so smartread's
// error is the call's (it is node:fs's in message and properties); only a result past what
// node:fs gives back goes to node:fs, which refuses it by the file's size before it reads.
function readHandle(handle: FileHandle, encoding: BufferEncoding | null, options: { signal?: AbortSignal } | undefined,
  byNode: () => Promise<Buffer | string>): Promise<Buffer | string> {
  return smartRead(handle, options).then((bytes) => {
    if (bytes.length > kNodeMaxRead) return byNode();
    // Past V8's longest string, toString throws node:fs's own ERR_STRING_TOO_LONG.
    return onLaterTurn(encoding !== null ? bytes.toString(encoding) : ownBuffer(bytes));
  });
}

/**
 * Drop-in readers over `node`: a call with a plain path and plain options is read by smartread;
 * any other call, and any read that smartread could not complete, is node:fs's (so that its
 * error, or its result, is exactly node:fs's). Served only while `active()` says so.
 */
export function dropInReaders(node: FsReaders, active: () => boolean): FsReaders {
  function readFileSync(this: unknown, path: unknown, options?: unknown): Buffer | string {
    const encoding = active() ? plainEncoding(options) : kNotPlain;
    const target = encoding === kNotPlain ? null : plainPath(path);
    if (target !== null) {
      let bytes: Buffer | undefined;
      try {
        bytes = smartReadSync(target);
      } catch {
        // node:fs reads it again below and says what it says.
      }
      const result = bytes && finish(bytes, encoding as BufferEncoding | null);
      if (result) return result;
    }
    try {
      // eslint-disable-next-line prefer-rest-params
      return Reflect.apply(node.readFileSync, this, arguments) as Buffer | string;
    } catch (err) {
      throw withoutOwnFrames(err);
    }
  }

  function readFile(this: unknown, path: unknown, options: unknown, callback?: unknown): void {
    const cb = callback ?? options;
    const encoding = active() && typeof cb === 'function' ? plainEncoding(callback === undefined ? undefined : options) : kNotPlain;
    const target = encoding === kNotPlain ? null : plainPath(path);
    // node:fs's own call, with its callback given errors without our frames (an error node:fs
    // makes before it goes asynchronous, as for an aborted signal, has them).
    // eslint-disable-next-line prefer-rest-params
    const args = Array.prototype.slice.call(arguments);
    const cbIndex = callback ? 2 : 1;
    if (typeof cb === 'function') {
      args[cbIndex] = function (this: unknown, err: unknown, ...rest: unknown[]) {
        return Reflect.apply(cb, this, [err ? withoutOwnFrames(err) : err, ...rest]);
      };
    }
    const self = this;
    const byNode = () => Reflect.apply(node.readFile, self, args);
    if (target === null) {
      try {
        byNode();
        return;
      } catch (err) {
        throw withoutOwnFrames(err);
      }
    }
    smartRead(target, signalOf(callback === undefined ? undefined : options)).then((bytes) => {
      const result = finish(bytes, encoding as BufferEncoding | null);
      // The callback runs on a later turn of the loop, as node:fs's does (see onLaterTurn): what
      // it throws is an uncaught exception, not a rejection of this promise.
      if (result) setImmediate(cb as (err: null, data: Buffer | string) => void, null, result);
      else byNode();
    }, byNode);
  }

  function promisesReadFile(this: unknown, path: unknown, options?: unknown): Promise<Buffer | string> {
    const encoding = active() ? plainEncoding(options) : kNotPlain;
    // eslint-disable-next-line prefer-rest-params
    const args = arguments;
    const self = this;
    const byNode = () => (Reflect.apply(node.promisesReadFile, self, args) as Promise<Buffer | string>)
      .catch((err: unknown) => { throw withoutOwnFrames(err); });
    if (encoding !== kNotPlain && isFileHandle(path)) return readHandle(path, encoding, signalOf(options), byNode);
    const target = encoding === kNotPlain ? null : plainPath(path);
    if (target === null) return byNode();
    return smartRead(target, signalOf(options)).then((bytes) => {
      const result = finish(bytes, encoding as BufferEncoding | null);
      return result === null ? byNode() : onLaterTurn(result);
    }, byNode);
  }

  // Named and shaped as node:fs's (name, length), for code that looks.
  Object.defineProperty(promisesReadFile, 'name', { value: 'readFile' });
  return {
    readFile: readFile as unknown as typeof fs.readFile,
    readFileSync: readFileSync as typeof fs.readFileSync,
    promisesReadFile: promisesReadFile as typeof fs.promises.readFile,
  };
}

/** Why reads through node:fs are, or are not, served by smartread in this thread. */
export type DropInStatus =
  | {
    /** node:fs's readers are served by smartread. */
    active: true;
    /** Which: 'fs.readFile', 'fs.readFileSync', 'fs.promises.readFile'. */
    patched: string[];
  }
  | {
    /** node:fs is left alone. */
    active: false;
    /** Why, in words. */
    reason: string;
  };

const nativeInUse = () => loadReport.engine === 'native';

/** The readers of smartread/fs: node:fs's as smartread found them when it loaded. */
export const fsReaders: FsReaders = dropInReaders(
  { readFile: originalReadFile, readFileSync: originalReadFileSync, promisesReadFile: originalPromisesReadFile },
  nativeInUse,
);

// Which smartread patched this thread's node:fs: set on the module object, so that a second
// copy of smartread (another version, elsewhere in node_modules) sees it and leaves fs alone.
const kPatchedBy = Symbol.for('smartread.register');
type Patched = { file: string };
// The module object itself (an ES namespace to TypeScript, read-only; a plain object to Node).
const fsModule = fs as { -readonly [K in keyof typeof fs]: (typeof fs)[K] } & { [kPatchedBy]?: Patched };

interface Patch {
  /** What the properties held before, and what we put there. */
  saved: FsReaders;
  ours: FsReaders;
}
let patch: Patch | null = null;
let status: DropInStatus = { active: false, reason: 'not registered: nothing loaded smartread/register or called register()' };

/** What engineInfo().dropIn reports: a copy of this thread's drop-in status. */
export function dropInStatus(): DropInStatus {
  return status.active ? { active: true, patched: [...status.patched] } : { ...status };
}

/**
 * Puts smartread in place of node:fs's readFile, readFileSync and promises.readFile in this
 * thread (named ES imports included), unless SMARTREAD_REGISTER=0 or the native addon is not in
 * use (then it says why in engineInfo().dropIn). Doing it again does nothing.
 *
 * @returns Whether node:fs is now served, and why not when it is not.
 */
export function register(): DropInStatus {
  if (patch !== null) return dropInStatus();
  if (process.env.SMARTREAD_REGISTER === '0') {
    status = { active: false, reason: 'SMARTREAD_REGISTER=0: node:fs is left alone' };
  } else if (!nativeInUse()) {
    status = { active: false, reason: `the native addon is not in use (${loadReport.reason}): node:fs is left alone, as it is faster than smartread's pure-JS engine` };
  } else if (fsModule[kPatchedBy] !== undefined) {
    status = { active: false, reason: `node:fs is already served by the smartread at ${fsModule[kPatchedBy].file}` };
  } else {
    const saved: FsReaders = { readFile: fs.readFile, readFileSync: fs.readFileSync, promisesReadFile: fs.promises.readFile };
    const ours = dropInReaders(saved, () => patch !== null);
    patch = { saved, ours };
    fsModule.readFile = ours.readFile;
    fsModule.readFileSync = ours.readFileSync;
    fs.promises.readFile = ours.promisesReadFile;
    Object.defineProperty(fsModule, kPatchedBy, { value: { file: __filename }, configurable: true });
    // `import { readFile } from 'node:fs'` binds to the ES module's copy of the export, which
    // follows the CommonJS object only when asked to.
    syncBuiltinESMExports();
    status = { active: true, patched: ['fs.readFile', 'fs.readFileSync', 'fs.promises.readFile'] };
  }
  return dropInStatus();
}

/**
 * Gives node:fs its functions back (those that nothing replaced since register()), and the
 * named ES imports with them.
 *
 * @returns The status now: not active, and why.
 */
export function unregister(): DropInStatus {
  if (patch === null) return dropInStatus();
  const { saved, ours } = patch;
  patch = null;
  if (fsModule.readFile === ours.readFile) fsModule.readFile = saved.readFile;
  if (fsModule.readFileSync === ours.readFileSync) fsModule.readFileSync = saved.readFileSync;
  if (fs.promises.readFile === ours.promisesReadFile) fs.promises.readFile = saved.promisesReadFile;
  delete fsModule[kPatchedBy];
  syncBuiltinESMExports();
  status = { active: false, reason: 'unregistered: node:fs has its own functions back' };
  return dropInStatus();
}
