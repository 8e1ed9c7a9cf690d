// mapFile: a file's bytes as a Buffer over a private mapping of it (zero-copy), and the 'mmap'
// strategy of smartRead.
import { constants as bufferConstants } from 'node:buffer';
import { constants as fsConstants } from 'node:fs';
import { engine, native } from '../engine/engine';
import { errnoOf, failureToError, invalidArgValue, windowOutOfRange } from '../common/errors';
import { getValidatedPath, validateBoolean, validateInteger, validateOptionsObject, type PathLike } from '../common/args';
import type { RawFailure, RawMapping, RawResult } from '../common/raw';

/** madvise advice for the mapping: how it will be read. */
export type MapAdvice = 'normal' | 'sequential' | 'random' | 'willneed' | 'hugepage';
// In the order of the addon's table (mmap_file.cc kAdvice).
const adviceNames: readonly MapAdvice[] = ['normal', 'sequential', 'random', 'willneed', 'hugepage'];

/** Which part of the file {@link mapFile} maps, and how. */
export interface MapFileOptions {
  /** Where the window starts in the file (any byte offset; default 0). */
  offset?: number;
  /** How many bytes it holds (default: up to the end of the file). */
  length?: number;
  /** madvise advice (default 'normal'). */
  advice?: MapAdvice;
  /** Fault every page in now (MADV_POPULATE_READ), so that reading it later never waits. */
  populate?: boolean;
}

/**
 * A Buffer over the mapped window. `close()` (or `using`) unmaps it at once; the Buffer is then
 * detached (length 0) so that nothing can reach the unmapped memory. Without close() it is
 * unmapped when the Buffer is garbage-collected.
 */
export type MappedBuffer = Buffer & {
  /** true when the Buffer is the mapping itself; false when it is a copy (an empty window, the
   * pure-JS engine, or a runtime that forbids external buffers). */
  readonly mapped: boolean;
  /** Unmaps now and detaches the Buffer; calling it again does nothing. */
  close(): void;
  /** close(), for `using`. */
  [Symbol.dispose](): void;
};

const { O_RDONLY } = fsConstants;

function isFailure(raw: RawMapping | RawFailure | RawResult): raw is RawFailure {
  return (raw as RawFailure).errno !== undefined;
}

// The Buffer with its close(): non-enumerable, so that the Buffer inspects, compares and
// serialises like any other.
function withClose(raw: RawMapping): MappedBuffer {
  const { buffer } = raw;
  let mapping = raw.mapping;
  const close = () => {
    if (mapping === undefined || native === null) return;
    const handle = mapping;
    mapping = undefined;
    native.unmap(handle, buffer);
  };
  Object.defineProperties(buffer, {
    mapped: { value: raw.mapping !== undefined },
    close: { value: close },
    [Symbol.dispose]: { value: close },
  });
  return buffer as MappedBuffer;
}

/**
 * Maps a file, or a window of it, and returns a Buffer over the mapping. Pages are read from
 * the page cache when touched; writes into the Buffer are private (copy-on-write) and never
 * reach the file. Only regular files can be mapped.
 *
 * @param path - The file.
 * @param options - The window (`offset`, `length`), madvise `advice`, and `populate`.
 * @returns A Buffer over the mapping, with `close()` and `mapped`.
 */
export function mapFile(path: PathLike, options?: MapFileOptions | null): MappedBuffer {
  const target = getValidatedPath(path, mapFile);
  validateOptionsObject(options, 'options', mapFile);
  const { offset = 0, length, advice = 'normal', populate = false } = options ?? {};
  validateInteger(offset, 'options.offset', 0, Number.MAX_SAFE_INTEGER, mapFile);
  if (length !== undefined) validateInteger(length, 'options.length', 0, bufferConstants.MAX_LENGTH, mapFile);
  const adviceIndex = adviceNames.indexOf(advice);
  if (adviceIndex < 0) {
    throw invalidArgValue('options.advice', advice, `must be one of ${adviceNames.map((a) => `'${a}'`).join(', ')}`, mapFile);
  }
  validateBoolean(populate, 'options.populate', mapFile);
  const raw = engine.mapFile(target, O_RDONLY, offset, length ?? -1, adviceIndex, populate);
  if (isFailure(raw)) {
    if (raw.reason === 'window') throw windowOutOfRange(offset, length, raw.size ?? 0, mapFile);
    throw failureToError(raw, path, target, mapFile);
  }
  return withClose(raw);
}

const { O_WRONLY, O_CREAT, O_TRUNC, O_APPEND, O_EXCL } = fsConstants;
// O_ACCMODE, which fs.constants lacks.
const kAccessMode = 3;
// What mapFile reports for a file that is not regular.
const kNotMappable = [errnoOf('ENODEV'), errnoOf('EISDIR')];

/** Whether open flags leave a file to be mapped: not those that write, create or truncate. */
export function flagsAllowMapping(flags: number): boolean {
  return (flags & kAccessMode) !== O_WRONLY && (flags & (O_CREAT | O_TRUNC | O_APPEND | O_EXCL)) === 0;
}

/**
 * smartRead's 'mmap' strategy: a regular file mapped whole. An fd, a flag that writes, creates
 * or truncates, and a file that cannot be mapped (a directory, a device, a pipe, or a size of 0
 * as /proc files report) are read by the engine's readFileSync instead, which reads them as
 * fs.readFile would (and fails as it does).
 */
export function mapForRead(target: string | Buffer | number, flags: number, statUserFd: boolean): RawResult {
  if (typeof target === 'number' || !flagsAllowMapping(flags)) {
    return engine.readFileSync(target, flags, statUserFd);
  }
  const raw = engine.mapFile(target, flags, 0, -1, 0, false);
  if (isFailure(raw)) {
    return raw.reason === undefined && kNotMappable.includes(raw.errno) ? engine.readFileSync(target, flags, statUserFd) : raw;
  }
  return raw.buffer.length === 0 ? engine.readFileSync(target, flags, statUserFd) : withClose(raw);
}
