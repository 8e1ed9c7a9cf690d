// readInto and readIntoSync: positional reads into the caller's memory, with fs.read's and
// fs.readSync's arguments, validation and errors, from a path or an fd.
import { engine } from '../engine/engine';
import { failureToError, invalidArgValue } from '../common/errors';
import {
  getValidatedPath, handleToFd, isURL, validateBuffer, validateFd, validateInteger, validateOffsetLengthRead,
  validateOptionsObject, validatePosition, type PathOrHandle,
} from '../common/args';
import type { RawFailure } from '../common/raw';

/** Where readInto and readIntoSync put the bytes, and where they read them from. */
export interface ReadIntoOptions {
  /** Where in the buffer the bytes go (default 0). */
  offset?: number;
  /** How many bytes to read (default: the rest of the buffer after offset). */
  length?: number;
  /** Where in the file to read from. null or -1: an fd's current position (which then
   * advances), or the start of a path. Default null. A bigint is taken too. */
  position?: number | bigint | null;
}

/**
 * What {@link readInto} resolves with: the shape of fs.promises FileHandle.read's result.
 *
 * @typeParam T - The buffer's type.
 */
export interface ReadIntoResult<T extends NodeJS.ArrayBufferView> {
  /** How many bytes were read (fewer than asked at the end of the file). */
  bytesRead: number;
  /** The buffer that was given. */
  buffer: T;
}

interface Validated {
  target: string | Buffer | number;
  offset: number;
  length: number;
  /** -1 (or any negative): the fd's position; a bigint only past Number.MAX_SAFE_INTEGER. */
  position: number | bigint;
}

// node:fs readSync's argument handling, in its order: the fd (or path), the buffer, the
// options object or the offset, the length, the position. null when there is nothing to read.
function validate(pathOrFd: unknown, buffer: unknown, args: unknown[], caller: Function, sync: boolean): Validated | null {
  let target: string | Buffer | number;
  if (typeof pathOrFd === 'string' || pathOrFd instanceof Uint8Array || isURL(pathOrFd)) {
    target = getValidatedPath(pathOrFd, caller);
  } else {
    // Anything else is an fd, or a FileHandle's (read as FileHandle.read reads), and is named
    // as fs.read names it: `The "fd" argument must be of type number`.
    const fd = handleToFd(pathOrFd);
    validateFd(fd, caller, sync);
    target = fd;
  }
  validateBuffer(buffer, caller);
  let [offset, length, position] = args as [unknown, unknown, unknown];
  if (args.length <= 1 || (typeof offset === 'object' && offset !== null)) {
    if (offset !== undefined) validateOptionsObject(offset, 'options', caller);
    const options = (offset ?? {}) as ReadIntoOptions;
    ({ offset = 0, position = null } = options);
    length = options.length ?? buffer.byteLength - (offset as number);
  }
  if (offset == null) {
    offset = 0;
  } else {
    validateInteger(offset, 'offset', 0, Number.MAX_SAFE_INTEGER, caller);
  }
  // As fs.readSync: the length is taken as an int32.
  length = (length as number) | 0;
  if (length === 0) return null;
  if (buffer.byteLength === 0) throw invalidArgValue('buffer', buffer, 'is empty and cannot be written', caller);
  validateOffsetLengthRead(offset as number, length as number, buffer.byteLength, caller);
  const at = position == null ? -1 : validatePosition(position, 'position', length as number, caller);
  return { target, offset: offset as number, length: length as number, position: at };
}

function isFailure(raw: number | RawFailure): raw is RawFailure {
  return typeof raw !== 'number';
}

/**
 * Reads into `buffer` and returns how many bytes were read, as fs.readSync, from an fd (one
 * read, at `position` or, without one, at the fd's position) or from a path (opened, read from
 * `position` until the range is full or the file ends, closed).
 *
 * @param pathOrFd - A path, or an open fd or FileHandle.
 * @param buffer - Where the bytes go: a Buffer, TypedArray or DataView.
 * @param options - `offset` and `length` in the buffer, `position` in the file.
 * @returns How many bytes were read.
 */
export function readIntoSync(pathOrFd: PathOrHandle, buffer: NodeJS.ArrayBufferView, options?: ReadIntoOptions | null): number;
/**
 * readIntoSync with fs.readSync's positional arguments.
 *
 * @param pathOrFd - A path, or an open fd or FileHandle.
 * @param buffer - Where the bytes go: a Buffer, TypedArray or DataView.
 * @param offset - Where in the buffer the bytes go (default 0).
 * @param length - How many bytes to read (default: the rest of the buffer).
 * @param position - Where in the file to read from (null or -1: an fd's current position).
 * @returns How many bytes were read.
 */
export function readIntoSync(pathOrFd: PathOrHandle, buffer: NodeJS.ArrayBufferView, offset?: number | null, length?: number, position?: number | bigint | null): number;
export function readIntoSync(pathOrFd: PathOrHandle, buffer: NodeJS.ArrayBufferView, ...args: unknown[]): number {
  const req = validate(pathOrFd, buffer, args, readIntoSync, true);
  if (req === null) return 0;
  const raw = engine.readIntoSync(req.target, buffer, req.offset, req.length, req.position);
  if (isFailure(raw)) throw failureToError(raw, pathOrFd, req.target, readIntoSync);
  return raw;
}

/**
 * {@link readIntoSync} on libuv's thread pool, as a promise of `{ bytesRead, buffer }` (the
 * shape of fs.promises FileHandle.read). Invalid arguments reject; nothing throws synchronously.
 *
 * @typeParam T - The buffer's type.
 * @param pathOrFd - A path, or an open fd or FileHandle.
 * @param buffer - Where the bytes go: a Buffer, TypedArray or DataView.
 * @param options - `offset` and `length` in the buffer, `position` in the file.
 * @returns How many bytes were read, and the buffer.
 */
export function readInto<T extends NodeJS.ArrayBufferView>(pathOrFd: PathOrHandle, buffer: T, options?: ReadIntoOptions | null): Promise<ReadIntoResult<T>>;
/**
 * readInto with fs.read's positional arguments.
 *
 * @typeParam T - The buffer's type.
 * @param pathOrFd - A path, or an open fd or FileHandle.
 * @param buffer - Where the bytes go: a Buffer, TypedArray or DataView.
 * @param offset - Where in the buffer the bytes go (default 0).
 * @param length - How many bytes to read (default: the rest of the buffer).
 * @param position - Where in the file to read from (null or -1: an fd's current position).
 * @returns How many bytes were read, and the buffer.
 */
export function readInto<T extends NodeJS.ArrayBufferView>(pathOrFd: PathOrHandle, buffer: T, offset?: number | null, length?: number, position?: number | bigint | null): Promise<ReadIntoResult<T>>;
export async function readInto<T extends NodeJS.ArrayBufferView>(pathOrFd: PathOrHandle, buffer: T, ...args: unknown[]): Promise<ReadIntoResult<T>> {
  const req = validate(pathOrFd, buffer, args, readInto, false);
  if (req === null) return { bytesRead: 0, buffer };
  const raw = await engine.readIntoAsync(req.target, buffer, req.offset, req.length, req.position);
  if (isFailure(raw)) throw failureToError(raw, pathOrFd, req.target, readInto);
  return { bytesRead: raw, buffer };
}
