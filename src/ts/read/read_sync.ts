// smartReadSync: fs.readFileSync's contract, read in one call into the engine.
import { constants as fsConstants, openSync } from 'node:fs';
import { engine, loadReport } from '../engine/engine';
import { recordRead, timing } from './metrics';
import { failureToError, outOfRange } from '../common/errors';
import { getOptions, getValidatedPath, isFd, stringToFlags, type PathOrFd, type ReadFileOptions } from '../common/args';
import { isRawFailure } from '../common/raw';
import { rootOf } from './read_async';
import type { ConfineOptions } from './confine';

const { O_RDONLY } = fsConstants;

/**
 * Reads a whole file into a Buffer on the calling thread: the counterpart of fs.readFileSync,
 * with its arguments, result and errors.
 *
 * @param path - The file, or an fd (read from its current position, left open).
 * @param options - The open flag (default 'r'), and a `root` to read beneath.
 * @returns The file's bytes.
 * @throws fs.readFileSync's errors (`ENOENT`, `EISDIR`, `ERR_INVALID_ARG_TYPE`...).
 */
export function smartReadSync(path: PathOrFd, options?: { encoding?: null; flag?: string | number } | null): Buffer;
/**
 * Reads a whole file and decodes it, on the calling thread, as fs.readFileSync does with an
 * encoding.
 *
 * @param path - The file, or an fd (read from its current position, left open).
 * @param options - The encoding, or `{ encoding, flag }`.
 * @returns The file's text.
 */
export function smartReadSync(path: PathOrFd, options: { encoding: BufferEncoding; flag?: string | number } | BufferEncoding): string;
/**
 * Reads a whole file on the calling thread, as fs.readFileSync does; a string when an encoding
 * is given. Files over 2 GiB are read too, up to buffer.constants.MAX_LENGTH.
 *
 * @param path - The file, or an fd (read from its current position, left open).
 * @param options - An encoding, or `{ encoding, flag, root, noSymlinks }`.
 * @returns The file's bytes, or its text when an encoding is given.
 */
export function smartReadSync(path: PathOrFd, options?: (ReadFileOptions & ConfineOptions) | BufferEncoding | null): string | Buffer;
export function smartReadSync(path: PathOrFd, options?: (ReadFileOptions & ConfineOptions) | BufferEncoding | null): string | Buffer {
  // The common call, a string path and no options, goes straight to the engine.
  const started = timing() ? performance.now() : -1;
  try {
    let value: string | Buffer;
    if (options === undefined && typeof path === 'string') {
      const result = engine.readFileSync(path, O_RDONLY, true);
      if (isRawFailure(result)) throw failureToError(result, path, path, smartReadSync);
      value = result;
    } else {
      value = readSyncWithOptions(path, options);
    }
    recordRead(servedBy, path, value, started);
    return value;
  } catch (err) {
    if (isReadError(err)) recordRead(servedBy, path, err as Error, started);
    throw err;
  }
}

const servedBy = loadReport.engine === 'js' ? 'js' : 'sync';

// Argument errors are thrown before any read; only the reads' own errors are accounted for.
function isReadError(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException)?.code;
  return typeof code === 'string' && !code.startsWith('ERR_INVALID_ARG') && code !== 'ERR_OUT_OF_RANGE' && code !== 'ERR_UNKNOWN_ENCODING';
}

// node:fs's order: options first, then the path (or fd), then the flags.
function readSyncWithOptions(path: unknown, options: unknown): string | Buffer {
  const { encoding, flag } = getOptions(options, smartReadSync);
  // node:fs reads utf8 with a reader of its own that takes any int32 as an fd and does not
  // fstat it; the other encodings go through open/fstat, which refuse negative fds.
  const utf8 = encoding === 'utf8' || encoding === 'utf-8';
  let target: string | Buffer | number;
  let flags = O_RDONLY;
  if (isFd(path)) {
    if (!utf8 && path < 0) throw outOfRange('fd', '>= 0 && <= 2147483647', path, smartReadSync);
    if (utf8) flags = stringToFlags(flag, smartReadSync);
    target = path;
  } else if (!utf8 && openChecksFlagsFirst()) {
    flags = stringToFlags(flag, smartReadSync);
    target = getValidatedPath(path, smartReadSync);
  } else {
    target = getValidatedPath(path, smartReadSync);
    flags = stringToFlags(flag, smartReadSync);
  }
  // A root applies to paths; an fd is already open.
  const { root, ownsRoot } = typeof target === 'number' ? { root: undefined, ownsRoot: false } : rootOf(options, smartReadSync);
  let result;
  const endUse = root?.use();
  try {
    result = engine.readFileSync(target, flags, !utf8, root?.confine);
  } finally {
    endUse?.();
    if (ownsRoot) root!.release();
  }
  if (isRawFailure(result)) {
    const err = failureToError(result, path, target, smartReadSync);
    throw root ? root.explainError(err, path) : err;
  }
  // Like node:fs, an encoding of 'buffer' passes validation and then fails in toString().
  return encoding ? (result as Buffer).toString(encoding as BufferEncoding) : (result as Buffer);
}

// Whether this node's fs.openSync, which readFileSync opens through for every encoding but
// utf8, checks the flags before the path (Node 26) or the path first (Node 20 to 24). Asked of
// openSync itself, once, with arguments that both fail before any syscall.
let flagsFirst: boolean | undefined;
function openChecksFlagsFirst(): boolean {
  if (flagsFirst === undefined) {
    try {
      openSync(undefined as unknown as string, 'not a flag');
      flagsFirst = false;
    } catch (err) {
      flagsFirst = (err as NodeJS.ErrnoException).code === 'ERR_INVALID_ARG_VALUE';
    }
  }
  return flagsFirst;
}
