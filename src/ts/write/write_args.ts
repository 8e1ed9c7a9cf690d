// Arguments of the writing functions, with node:fs's rules, order and errors: the data, the
// mode, the flag, and the options smartread adds (atomic, mkdirs, strategy).
import * as fs from 'node:fs';
import { platformPath } from '../common/platform';
import { getOptions, getValidatedPath, isFd, stringToFlags, validateBoolean, type PathLike } from '../common/args';
import { invalidArgType, invalidArgValue, outOfRange } from '../common/errors';
import { rootOf } from '../read/read_async';
import type { Root, ConfineOptions } from '../read/confine';
import { writeEngineFor, writeStrategyNames, type WriteEngine, type WriteStrategy } from './write_engines';

const { O_APPEND, O_CREAT, O_EXCL, O_TRUNC, O_WRONLY, O_RDWR } = fs.constants;

/** What can be written: a string (in `encoding`), or any view of bytes. */
export type WriteData = string | NodeJS.ArrayBufferView;

export interface WriteFileOptions extends ConfineOptions {
  /** The encoding of string data (default 'utf8'). */
  encoding?: BufferEncoding | null;
  /** The new file's mode, before the umask (default 0o666); a number or an octal string. */
  mode?: number | string;
  /** open(2) flags as node:fs takes them (default 'w'). */
  flag?: string | number;
  /** fsync the file before it is closed (and, with atomic, its directory after the rename). */
  flush?: boolean;
  /** Aborts the write: it rejects with an AbortError (what was written may stay). */
  signal?: AbortSignal;
  /**
   * Write a temporary file beside the target and rename it over the target once it is whole,
   * so that no reader ever sees a part of it. The flag must replace the file: 'w' or 'w+'
   * (the default), or 'wx' / 'wx+' to fail with EEXIST where the target exists.
   */
  atomic?: boolean;
  /** Make the file's parent directories first, as fs.mkdir(dirname, { recursive: true }). */
  mkdirs?: boolean;
  /** The mode of the directories mkdirs makes (default 0o777, before the umask). */
  dirMode?: number | string;
  /** The engine: 'auto' (the default) chooses; the others force one, or fail where it is missing. */
  strategy?: WriteStrategy;
}

/** How a write replaces its target, as the addon takes it. */
export const enum AtomicMode { None = 0, Replace = 1, NoReplace = 2 }

/** What every write of a call shares, validated. */
export interface WriteCommon {
  engine: WriteEngine;
  encoding: BufferEncoding;
  flags: number;
  mode: number;
  flush: boolean;
  atomic: AtomicMode;
  mkdirs: boolean;
  dirMode: number;
  signal: AbortSignal | undefined;
  root: Root | undefined;
  ownsRoot: boolean;
}

const octal = /^[0-7]+$/;
const modeDescription = 'must be a 32-bit unsigned integer or an octal string';

/** node:internal/validators parseFileMode. */
export function parseFileMode(value: unknown, name: string, fallback: number, caller: Function): number {
  value ??= fallback;
  if (typeof value === 'string') {
    if (!octal.test(value)) throw invalidArgValue(name, value, modeDescription, caller);
    value = Number.parseInt(value, 8);
  }
  if (typeof value !== 'number') throw invalidArgType(name, 'of type number', value, caller);
  if (!Number.isInteger(value)) throw outOfRange(name, 'an integer', value, caller);
  if (value < 0 || value > 4294967295) throw outOfRange(name, '>= 0 && <= 4294967295', value, caller);
  return value;
}

/** The bytes of write data, as node:fs takes it (validateStringAfterArrayBufferView). */
export function dataBytes(data: unknown, encoding: BufferEncoding | null | undefined, name: string, caller: Function): Uint8Array {
  if (ArrayBuffer.isView(data)) {
    return data instanceof Uint8Array ? data : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  }
  if (typeof data !== 'string') {
    throw invalidArgType(name, 'of type string or an instance of Buffer, TypedArray, or DataView', data, caller);
  }
  // As node:fs: an encoding of 'buffer' passes getOptions and fails here (ERR_UNKNOWN_ENCODING).
  return Buffer.from(data, (encoding || 'utf8') as BufferEncoding);
}

/** The atomic mode a flag allows, or an error: an atomic write replaces the whole file. */
function atomicMode(flags: number, flag: unknown, caller: Function): AtomicMode {
  const replaces = (flags & O_CREAT) !== 0 && (flags & O_TRUNC) !== 0 && (flags & O_APPEND) === 0 &&
    (flags & (O_WRONLY | O_RDWR)) !== 0;
  if (!replaces) {
    throw invalidArgValue('options.flag', flag, "cannot be used with options.atomic, which replaces the whole file (use 'w', 'w+', 'wx' or 'wx+')", caller);
  }
  return (flags & O_EXCL) !== 0 ? AtomicMode.NoReplace : AtomicMode.Replace;
}

function optionalBoolean(value: unknown, name: string, caller: Function): boolean {
  if (value === undefined) return false;
  validateBoolean(value, name, caller);
  return value;
}

/**
 * The options of a write, validated in the order of fs.promises.writeFile (getOptions, flush;
 * the data comes next, at the caller), then smartread's own. The flag and mode are checked
 * later by `flagsAndMode`, after the path, as node:fs's open() checks them.
 */
export function writeOptions(options: unknown, caller: Function): {
  encoding: BufferEncoding | null | undefined;
  flag: unknown;
  signal: AbortSignal | undefined;
  flush: boolean;
  raw: WriteFileOptions;
} {
  const { encoding, flag, signal } = getOptions(options, caller);
  const raw = (options !== null && typeof options === 'object' ? options : {}) as WriteFileOptions;
  const flush = raw.flush ?? false;
  validateBoolean(flush, 'options.flush', caller);
  return { encoding: encoding as BufferEncoding | null | undefined, flag, signal, flush, raw };
}

/** The open flags (flag || 'w') and mode (default 0o666), after the path, as open() checks them. */
export function flagsAndMode(flag: unknown, raw: WriteFileOptions, caller: Function): { flags: number; mode: number } {
  const flags = stringToFlags(flag || 'w', caller);
  return { flags, mode: parseFileMode(raw.mode, 'mode', 0o666, caller) };
}

/** smartread's own options (atomic, mkdirs, dirMode, strategy, root), validated; the root is opened last. */
export function writeCommon(validated: ReturnType<typeof writeOptions>, flags: number, mode: number, caller: Function): WriteCommon {
  const { raw } = validated;
  const atomic = optionalBoolean(raw.atomic, 'options.atomic', caller) ? atomicMode(flags, validated.flag || 'w', caller) : AtomicMode.None;
  const mkdirs = optionalBoolean(raw.mkdirs, 'options.mkdirs', caller);
  const dirMode = parseFileMode(raw.dirMode, 'options.dirMode', 0o777, caller);
  const strategy = raw.strategy ?? 'auto';
  if (!writeStrategyNames.includes(strategy)) {
    throw invalidArgValue('options.strategy', strategy, `must be one of ${writeStrategyNames.map((s) => `'${s}'`).join(', ')}`, caller);
  }
  const engine = writeEngineFor(strategy, caller);
  return {
    engine,
    encoding: (validated.encoding || 'utf8') as BufferEncoding,
    flags,
    mode,
    flush: validated.flush,
    atomic,
    mkdirs,
    dirMode,
    signal: validated.signal,
    ...rootOf(raw, caller),
  };
}

/** A write's target: a validated path, or an fd (written at its position, left open). */
export function writeTarget(target: unknown, caller: Function): string | Buffer | number {
  if (isFd(target)) {
    if (target < 0) throw outOfRange('fd', '>= 0 && <= 2147483647', target, caller);
    return target;
  }
  return getValidatedPath(target, caller);
}

/** The directory a path's file is in, in the path's own kind (a Buffer's bytes kept as they are). */
export function parentOf(target: string | Buffer): string | Buffer {
  if (typeof target === 'string') return platformPath.dirname(target);
  return Buffer.from(platformPath.dirname(target.toString('latin1')), 'latin1');
}

/** Whether a parent is the working directory (or a root) itself: always there, nothing to make. */
export function isCurrentDir(dir: string | Buffer): boolean {
  return dir.length === 1 && (typeof dir === 'string' ? dir === '.' : dir[0] === 0x2e);
}

export type { PathLike };
