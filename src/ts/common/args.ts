// Argument normalisation with node:fs's rules, in node:fs's order, with node:fs's errors.
import { fileURLToPath } from 'node:url';
import { constants as fsConstants, read, readSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { invalidArgType, invalidArgValue, nullBytesInPath, outOfRange } from './errors';

/** A path as node:fs takes one: a string, a Buffer, or a `file:` URL. */
export type PathLike = string | Buffer | URL;
/** A path, or an open file descriptor (read from its current position and left open). */
export type PathOrFd = PathLike | number;
/** What fs.promises.readFile reads: a path, an fd, or a FileHandle (from its position, left open). */
export type PathOrHandle = PathOrFd | FileHandle;

/** The options of fs.readFile, as smartread's readers take them. */
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

/**
 * Whether `value` is a FileHandle of node:fs/promises. Node does not export the class (its own
 * check is a private brand), so it is told by its shape: the class's name, a numeric fd (-1 once
 * closed) and the methods every release line's FileHandle has.
 */
export function isFileHandle(value: unknown): value is FileHandle {
  if (value === null || typeof value !== 'object') return false;
  const v = value as { constructor?: { name?: unknown }; fd?: unknown; readFile?: unknown; close?: unknown };
  return v.constructor?.name === 'FileHandle' && typeof v.fd === 'number' &&
    typeof v.readFile === 'function' && typeof v.close === 'function';
}

/** A path argument's fd where it is a FileHandle, else the argument as it was. */
export function handleToFd<T>(value: T | FileHandle): T | number {
  return isFileHandle(value) ? value.fd : value;
}

// node:internal/url isURL: a URL from any realm, without the legacy url.parse() shape.
export function isURL(value: unknown): value is URL {
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

/**
 * A list of paths: any iterable object. A string is iterable too, but it is one path, not a
 * list of them, and is refused (as is a Buffer, which the type cannot tell from a list of fds).
 *
 * @typeParam T - What each entry is: a path, or a path or an fd.
 */
export type PathList<T> = Iterable<T> & object;

/** A list of paths as an array; a string or a Buffer is one path, not a list of them. */
export function pathList<T>(paths: Iterable<T>, caller: Function): T[] {
  if (paths == null || typeof (paths as Iterable<unknown>)[Symbol.iterator] !== 'function' ||
      typeof paths === 'string' || ArrayBuffer.isView(paths)) {
    throw invalidArgType('paths', 'an iterable of paths', paths, caller);
  }
  return Array.from(paths);
}

// node:internal/validators, with node:fs's messages.

/** validateInteger: a number that is an integer within [min, max]. */
export function validateInteger(value: unknown, name: string, min: number, max: number, caller: Function): asserts value is number {
  if (typeof value !== 'number') throw invalidArgType(name, 'of type number', value, caller);
  if (!Number.isInteger(value)) throw outOfRange(name, 'an integer', value, caller);
  if (value < min || value > max) throw outOfRange(name, `>= ${min} && <= ${max}`, value, caller);
}

/**
 * getValidatedFd: validateInt32(fd, 'fd', 0). A value that is not a number is refused with the
 * very error of node:fs's own reader, fs.readSync's (`sync`) or fs.read's: from Node 22 the first
 * checks in C++ and words a bigint unlike the second ("type bigint (5)", not "(5n)").
 */
export function validateFd(fd: unknown, caller: Function, sync = true): asserts fd is number {
  if (typeof fd !== 'number') throw fdTypeError(fd, caller, sync);
  if (!Number.isInteger(fd)) throw outOfRange('fd', 'an integer', fd, caller);
  if (fd < 0 || fd > 2 ** 31 - 1) throw outOfRange('fd', '>= 0 && <= 2147483647', fd, caller);
}

const scratch = Buffer.alloc(1);
const noop = () => {};

// node:fs refuses a value that is not a number before it reads anything (a length of 0 would
// return early, before the check, from Node 22).
function fdTypeError(fd: unknown, caller: Function, sync: boolean): Error {
  try {
    if (sync) readSync(fd as number, scratch, 0, 1, null);
    else read(fd as number, scratch, 0, 1, null, noop);
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ERR_INVALID_ARG_TYPE') {
      Error.captureStackTrace(err as Error, caller);
      return err as Error;
    }
  }
  return invalidArgType('fd', 'of type number', fd, caller);
}

/** validateBuffer: a Buffer, TypedArray or DataView. */
export function validateBuffer(buffer: unknown, caller: Function): asserts buffer is NodeJS.ArrayBufferView {
  if (!ArrayBuffer.isView(buffer)) {
    throw invalidArgType('buffer', 'an instance of Buffer, TypedArray, or DataView', buffer, caller);
  }
}

/** validateOffsetLengthRead. */
export function validateOffsetLengthRead(offset: number, length: number, bufferLength: number, caller: Function): void {
  if (offset < 0) throw outOfRange('offset', '>= 0', offset, caller);
  if (length < 0) throw outOfRange('length', '>= 0', length, caller);
  if (offset + length > bufferLength) throw outOfRange('length', `<= ${bufferLength - offset}`, length, caller);
}

// Since nodejs/node#42835 (Node 22), node:fs takes a bigint position in -1n..2n ** 63n - 1n - length
// (a read that would end past int64 is refused up front); before, anything within int64 (the kernel
// then says EINVAL). The running node:fs is the reference, so it is asked once which rule it keeps:
// fd 0x7fffffff is never open (the kernel's fd limit is below it), so an older node:fs gets as far
// as read(2) and EBADF, a newer one refuses the position first.
let bigintPositionBoundedByLength: boolean | undefined;
function nodeBoundsBigintPositionByLength(): boolean {
  if (bigintPositionBoundedByLength === undefined) {
    try {
      readSync(0x7fffffff, Buffer.alloc(1), 0, 1, 2n ** 63n - 1n);
      bigintPositionBoundedByLength = false;
    } catch (err) {
      bigintPositionBoundedByLength = (err as NodeJS.ErrnoException).code === 'ERR_OUT_OF_RANGE';
    }
  }
  return bigintPositionBoundedByLength;
}

/** validatePosition: an integer >= -1, or a bigint in the range the running node:fs allows for a
 * read of `length` bytes; as a number where one holds it exactly. */
export function validatePosition(position: unknown, name: string, length: number, caller: Function): number | bigint {
  if (typeof position === 'number') {
    validateInteger(position, name, -1, Number.MAX_SAFE_INTEGER, caller);
    return position;
  }
  if (typeof position === 'bigint') {
    const [min, max] = nodeBoundsBigintPositionByLength()
      ? [-1n, 2n ** 63n - 1n - BigInt(length)]
      : [-(2n ** 63n), 2n ** 63n - 1n];
    if (!(position >= min && position <= max)) throw outOfRange(name, `>= ${min} && <= ${max}`, position, caller);
    // A number cannot hold every offset past 2^53: those stay bigints, down to the syscall.
    return position > BigInt(Number.MAX_SAFE_INTEGER) ? position : Number(position);
  }
  throw invalidArgType(name, 'of type bigint or integer', position, caller);
}

export function validateBoolean(value: unknown, name: string, caller: Function): asserts value is boolean {
  if (typeof value !== 'boolean') throw invalidArgType(name, 'of type boolean', value, caller);
}

/** validateObject with nullable allowed: undefined, null or an object that is not an array. */
export function validateOptionsObject(value: unknown, name: string, caller: Function): void {
  if (value != null && (typeof value !== 'object' || Array.isArray(value))) {
    throw invalidArgType(name, 'of type object', value, caller);
  }
  // The APIs that take options this way do not read confined: a root must not be ignored.
  const root = (value as { root?: unknown } | null | undefined)?.root;
  if (root !== undefined) {
    throw invalidArgValue(`${name}.root`, root, 'is not supported here (smartRead, smartReadSync, readMany and createReader read confined)', caller);
  }
}
