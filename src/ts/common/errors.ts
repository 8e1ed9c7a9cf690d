// Errors shaped exactly like node:fs's: the same messages, codes, classes and properties.
import { inspect, getSystemErrorMap } from 'node:util';
import { maxReadLength } from './limits';
import type { RawFailure } from './raw';

/** An error as node:fs throws it: `ENOENT: no such file or directory, open '/x'`. */
export interface FsError extends Error {
  /** The negated errno of a failed syscall (-2 for ENOENT). */
  errno?: number;
  /** The error code: 'ENOENT', 'EISDIR', 'ERR_INVALID_ARG_TYPE'... */
  code: string;
  /** The syscall that failed: 'open', 'read'... */
  syscall?: string;
  /** The path the call was given, where node:fs names it. */
  path?: string;
}

// Node's internal errors carry their code in the stack's first line
// ("TypeError [ERR_INVALID_ARG_TYPE]: ..."), then behave as plain TypeErrors.
export function withCode<T extends Error>(err: T, code: string, caller: Function): T & { code: string } {
  Error.captureStackTrace(err, caller);
  err.name = `${err.name} [${code}]`;
  void err.stack;
  delete (err as { name?: string }).name;
  return Object.assign(err, { code });
}

// libuv's error numbers by code: what node:fs's errors carry on this platform. ENOENT is -2 on
// Linux and macOS but -4058 on Windows, where os.constants.errno has the C runtime's numbers.
let errnoByCode: Map<string, number> | undefined;

/** The (negative) errno a node:fs error with this code carries here: errnoOf('ENOENT'). */
export function errnoOf(code: string): number {
  if (errnoByCode === undefined) {
    errnoByCode = new Map();
    for (const [errno, [name]] of getSystemErrorMap()) errnoByCode.set(name, errno);
  }
  const errno = errnoByCode.get(code);
  if (errno === undefined) throw new Error(`smartread: libuv has no error ${code}`);
  return errno;
}

/** An error from a failed syscall, as libuv's UVException builds it. */
export function uvError(errno: number, syscall: string, path: string | undefined, caller: Function): FsError {
  const [code, description] = getSystemErrorMap().get(errno) ?? ['UNKNOWN', 'unknown error'];
  let message = `${code}: ${description}, ${syscall}`;
  if (path !== undefined) message += ` '${path}'`;
  const err = new Error(message) as FsError;
  err.errno = errno;
  err.code = code;
  err.syscall = syscall;
  if (path !== undefined) err.path = path;
  Error.captureStackTrace(err, caller);
  return err;
}

// How Node names a wrong value in "Received ..." (internal/errors determineSpecificType).
function describeReceived(value: unknown): string {
  if (value == null) return `${value}`;
  if (typeof value === 'function') return `function ${value.name}`;
  if (typeof value === 'object') {
    const ctor = (value as { constructor?: { name?: string } }).constructor;
    if (ctor?.name) return `an instance of ${ctor.name}`;
    return inspect(value, { depth: -1 });
  }
  let inspected = inspect(value, { colors: false });
  if (inspected.length > 28) inspected = `${inspected.slice(0, 25)}...`;
  return `type ${typeof value} (${inspected})`;
}

/** ERR_INVALID_ARG_TYPE; `expected` is the middle of Node's sentence, e.g. 'of type string'. */
export function invalidArgType(name: string, expected: string, actual: unknown, caller: Function) {
  const kind = name.includes('.') ? 'property' : 'argument';
  return withCode(new TypeError(`The "${name}" ${kind} must be ${expected}. Received ${describeReceived(actual)}`), 'ERR_INVALID_ARG_TYPE', caller);
}

export function invalidArgValue(name: string, value: unknown, reason: string, caller: Function) {
  let inspected = inspect(value);
  if (inspected.length > 128) inspected = `${inspected.slice(0, 128)}...`;
  const kind = name.includes('.') ? 'property' : 'argument';
  return withCode(new TypeError(`The ${kind} '${name}' ${reason}. Received ${inspected}`), 'ERR_INVALID_ARG_VALUE', caller);
}

// internal/errors addNumericalSeparator: 4294967297 -> 4_294_967_297.
function addNumericalSeparator(value: string): string {
  let res = '';
  let i = value.length;
  const start = value[0] === '-' ? 1 : 0;
  for (; i >= start + 4; i -= 3) res = `_${value.slice(i - 3, i)}${res}`;
  return `${value.slice(0, i)}${res}`;
}

export function outOfRange(name: string, range: string, value: unknown, caller: Function) {
  let received: string;
  if (Number.isInteger(value) && Math.abs(value as number) > 2 ** 32) {
    received = addNumericalSeparator(String(value));
  } else if (typeof value === 'bigint') {
    received = String(value);
    if (value > 2n ** 32n || value < -(2n ** 32n)) received = addNumericalSeparator(received);
    received += 'n';
  } else {
    received = inspect(value);
  }
  return withCode(new RangeError(`The value of "${name}" is out of range. It must be ${range}. Received ${received}`), 'ERR_OUT_OF_RANGE', caller);
}

export function nullBytesInPath(value: unknown, caller: Function) {
  return invalidArgValue('path', value, 'must be a string, Uint8Array, or URL without null bytes', caller);
}

// node:fs refuses files over 2 GiB; smartread reads up to what a Buffer can hold.
const maxLengthText = maxReadLength % 2 ** 30 === 0
  ? `${maxReadLength / 2 ** 30} GiB`
  : `${maxReadLength} bytes`;

export function fileTooLarge(size: number, caller: Function) {
  return withCode(new RangeError(`File size (${size}) is greater than ${maxLengthText}`), 'ERR_FS_FILE_TOO_LARGE', caller);
}

// The path as node:fs writes it into errors: after its trip through UTF-8, so that a lone
// surrogate shows as U+FFFD.
function displayPath(target: string | Buffer): string {
  return (typeof target === 'string' ? Buffer.from(target) : target).toString();
}

/**
 * The Error for a failed raw read of `target` (the validated path or fd that the engine was
 * given; `path` is the argument as the caller passed it). Open and stat errors name the path,
 * as in node:fs; other errors only with `namePath` (see read_async.ts's readErrorNamesPath).
 */
export function failureToError(failure: RawFailure, path: unknown, target: string | Buffer | number, caller: Function, namePath = false): Error {
  switch (failure.reason) {
    case 'null-bytes':
      return nullBytesInPath(path, caller);
    case 'too-large':
      return fileTooLarge(failure.size ?? 0, caller);
    default:
      return uvError(failure.errno, failure.syscall ?? 'read',
        (failure.syscall === 'open' || failure.syscall === 'stat' || namePath) && typeof target !== 'number' ? displayPath(target) : undefined, caller);
  }
}

/** What node:fs rejects with when a read is aborted: AbortError, code ABORT_ERR, cause = reason. */
export class AbortError extends Error {
  /** Always 'ABORT_ERR', as node:fs's. */
  readonly code = 'ABORT_ERR';
  /**
   * @param message - The message (node:fs's by default).
   * @param options - `cause`: the signal's reason.
   */
  constructor(message = 'The operation was aborted', options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AbortError';
  }
}

export function abortError(signal: AbortSignal, caller: Function): AbortError {
  const err = new AbortError(undefined, { cause: signal.reason });
  Error.captureStackTrace(err, caller);
  return err;
}

/** A forced strategy that this machine cannot run: never quietly replaced by another. */
export function strategyUnavailable(strategy: string, reason: string, caller: Function) {
  return withCode(new Error(`smartread: strategy '${strategy}' is not available here: ${reason}`), 'ERR_SMARTREAD_STRATEGY_UNAVAILABLE', caller);
}

/** A read or close of an openReader() handle after close() was called. */
export function readerClosed(caller: Function) {
  return withCode(new Error('smartread: the reader is closed'), 'ERR_SMARTREAD_READER_CLOSED', caller);
}

/** mapFile's window (offset, length) reaches past the end of a file of `size` bytes. */
export function windowOutOfRange(offset: number, length: number | undefined, size: number, caller: Function) {
  if (offset > size) return outOfRange('options.offset', `<= ${size}`, offset, caller);
  return outOfRange('options.length', `<= ${size - offset}`, length, caller);
}
