// Argument normalisation with node:fs's rules, in node:fs's order, with node:fs's errors.
import { fileURLToPath } from 'node:url';
import { constants as fsConstants } from 'node:fs';
import { invalidArgType, invalidArgValue, nullBytesInPath, outOfRange } from './errors';

export type PathLike = string | Buffer | URL;
export type PathOrFd = PathLike | number;

export interface ReadFileOptions {
  /** Any encoding Buffer supports; the result is then a string. */
  encoding?: BufferEncoding | null;
  /** open(2) flags as node:fs takes them: 'r', 'r+', 'rs+', 'w+', ... or a number. */
  flag?: string | number;
  /** Aborts an asynchronous read. */
  signal?: AbortSignal;
}

export interface NormalizedOptions {
  encoding: BufferEncoding | 'buffer' | null | undefined;
  flag: string | number | undefined;
  signal: AbortSignal | undefined;
}

/** node:fs getOptions: undefined, null or a function mean defaults; a string is the encoding. */
export function getOptions(options: unknown, caller: Function): NormalizedOptions {
  if (options == null || typeof options === 'function') {
    return { encoding: undefined, flag: undefined, signal: undefined };
  }
  let encoding: unknown;
  let flag: unknown;
  let signal: unknown;
  if (typeof options === 'string') {
    encoding = options;
  } else if (typeof options === 'object') {
    ({ encoding, flag, signal } = options as ReadFileOptions);
  } else {
    throw invalidArgType('options', 'one of type string or object', options, caller);
  }
  if (encoding !== 'buffer' && encoding && !Buffer.isEncoding(encoding as string)) {
    throw invalidArgValue('encoding', encoding, 'is invalid encoding', caller);
  }
  if (signal !== undefined &&
      (signal === null || typeof signal !== 'object' || !('aborted' in (signal as object)))) {
    throw invalidArgType('options.signal', 'an instance of AbortSignal', signal, caller);
  }
  return {
    encoding: encoding as NormalizedOptions['encoding'],
    flag: flag as NormalizedOptions['flag'],
    signal: signal as AbortSignal | undefined,
  };
}

/** node:fs's test for "this path argument is an fd". Throws, as Node does, for BigInt and Symbol. */
export function isFd(value: unknown): value is number {
  return ((value as number) | 0) === value;
}

// node:internal/url isURL: a URL from any realm, without the legacy url.parse() shape.
function isURL(value: unknown): value is URL {
  const v = value as { href?: unknown; protocol?: unknown; auth?: unknown; path?: unknown } | null;
  return Boolean(v?.href && v.protocol && v.auth === undefined && v.path === undefined);
}

/**
 * A path argument as the engines take it: a string or a Buffer (a file: URL becomes its path).
 * Throws node:fs's ERR_INVALID_ARG_TYPE / ERR_INVALID_ARG_VALUE and the URL errors.
 */
export function getValidatedPath(value: unknown, caller: Function): string | Buffer {
  const path = isURL(value) ? fileURLToPath(value) : value;
  if (typeof path === 'string') {
    if (path.includes('\u0000')) throw nullBytesInPath(path, caller);
    return path;
  }
  if (path instanceof Uint8Array) {
    if (path.includes(0)) throw nullBytesInPath(path, caller);
    return Buffer.isBuffer(path) ? path : Buffer.from(path.buffer, path.byteOffset, path.byteLength);
  }
  throw invalidArgType('path', 'of type string or an instance of Buffer or URL', path, caller);
}

const { O_APPEND, O_CREAT, O_EXCL, O_RDONLY, O_RDWR, O_SYNC, O_TRUNC, O_WRONLY } = fsConstants;

const flagTable: Record<string, number> = {
  'r': O_RDONLY,
  'rs': O_RDONLY | O_SYNC,
  'sr': O_RDONLY | O_SYNC,
  'r+': O_RDWR,
  'rs+': O_RDWR | O_SYNC,
  'sr+': O_RDWR | O_SYNC,
  'w': O_TRUNC | O_CREAT | O_WRONLY,
  'wx': O_TRUNC | O_CREAT | O_WRONLY | O_EXCL,
  'xw': O_TRUNC | O_CREAT | O_WRONLY | O_EXCL,
  'w+': O_TRUNC | O_CREAT | O_RDWR,
  'wx+': O_TRUNC | O_CREAT | O_RDWR | O_EXCL,
  'xw+': O_TRUNC | O_CREAT | O_RDWR | O_EXCL,
  'a': O_APPEND | O_CREAT | O_WRONLY,
  'ax': O_APPEND | O_CREAT | O_WRONLY | O_EXCL,
  'xa': O_APPEND | O_CREAT | O_WRONLY | O_EXCL,
  'as': O_APPEND | O_CREAT | O_WRONLY | O_SYNC,
  'sa': O_APPEND | O_CREAT | O_WRONLY | O_SYNC,
  'a+': O_APPEND | O_CREAT | O_RDWR,
  'ax+': O_APPEND | O_CREAT | O_RDWR | O_EXCL,
  'xa+': O_APPEND | O_CREAT | O_RDWR | O_EXCL,
  'as+': O_APPEND | O_CREAT | O_RDWR | O_SYNC,
  'sa+': O_APPEND | O_CREAT | O_RDWR | O_SYNC,
};

/** node:fs stringToFlags: a number passes through if it is an int32, null means 'r'. */
export function stringToFlags(flag: unknown, caller: Function): number {
  if (typeof flag === 'number') {
    // As node:fs's validateInt32: the engines would otherwise truncate it and read.
    if (!Number.isInteger(flag)) throw outOfRange('flags', 'an integer', flag, caller);
    if (flag < -(2 ** 31) || flag > 2 ** 31 - 1) throw outOfRange('flags', '>= -2147483648 && <= 2147483647', flag, caller);
    return flag;
  }
  if (flag == null) return O_RDONLY;
  const bits = typeof flag === 'string' ? flagTable[flag] : undefined;
  if (bits === undefined) throw invalidArgValue('flags', flag, 'is invalid', caller);
  return bits;
}

/** A list of paths as an array; a string or a Buffer is one path, not a list of them. */
export function pathList<T>(paths: Iterable<T>, caller: Function): T[] {
  if (paths == null || typeof (paths as Iterable<unknown>)[Symbol.iterator] !== 'function' ||
      typeof paths === 'string' || ArrayBuffer.isView(paths)) {
    throw invalidArgType('paths', 'an iterable of paths', paths, caller);
  }
  return Array.from(paths);
}
