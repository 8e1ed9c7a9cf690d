// The pure-JS engine for writes: the addon's write contract over node:fs, for where the addon
// cannot be loaded (or SMARTREAD_FORCE_JS=1). Same results, same temporary files, slower.
import * as fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import { errnoOf } from '../common/errors';
import { platform, posixOpenFlag } from '../common/platform';
import type { RawFailure } from '../common/raw';

const { O_WRONLY, O_CREAT, O_EXCL, O_RDONLY } = fs.constants;
// Windows has neither: a temporary name is random there too, and its directories are not synced.
const O_NOFOLLOW = posixOpenFlag('O_NOFOLLOW');
const O_DIRECTORY = posixOpenFlag('O_DIRECTORY');
const EEXIST = errnoOf('EEXIST');
const EISDIR = errnoOf('EISDIR');
const cancelled: RawFailure = { errno: errnoOf('ECANCELED'), syscall: 'write' };
const kNameMax = 255;
const kTemporaryOverhead = 1 + 11 + 12 + 4;
const kTemporaryAttempts = 8;
// node:fs validates lengths against 2 GiB - 1; larger data is written in pieces of this size.
const kIoChunk = 2 ** 31 - 1;

function failure(err: unknown): RawFailure {
  const e = err as NodeJS.ErrnoException;
  if (typeof e.errno !== 'number' || typeof e.syscall !== 'string') throw err;
  return { errno: e.errno, syscall: e.syscall };
}

const asBuffer = (target: string | Buffer) => (typeof target === 'string' ? Buffer.from(target) : target);

// Where a path's last component starts: after its last '/', and on Windows after its last '\'
// or a drive's colon too ('C:name' is a name in drive C's working directory).
function nameStart(bytes: Buffer): number {
  const afterSlash = bytes.lastIndexOf(0x2f) + 1;
  if (platform !== 'win32') return afterSlash;
  const afterDrive = bytes.length >= 2 && bytes[1] === 0x3a ? 2 : 0;
  return Math.max(afterSlash, bytes.lastIndexOf(0x5c) + 1, afterDrive);
}

/**
 * The temporary file an atomic write of `target` goes through (write_file.cc TemporaryName):
 * `.NAME.smartread-XXXXXXXXXXXX.tmp` beside it; null where the path names no file to replace.
 */
export function temporaryName(target: string | Buffer): Buffer | null {
  const bytes = asBuffer(target);
  const start = nameStart(bytes);
  const name = bytes.subarray(start);
  if (name.length === 0 || name.equals(Buffer.from('.')) || name.equals(Buffer.from('..'))) return null;
  const suffix = `.smartread-${randomBytes(6).toString('hex')}.tmp`;
  return Buffer.concat([bytes.subarray(0, start), Buffer.from('.'), name.subarray(0, kNameMax - kTemporaryOverhead), Buffer.from(suffix)]);
}

// The directory to sync after a rename: POSIX paths only (Windows syncs none, see syncDirectory).
function directoryOf(target: string | Buffer): Buffer {
  const bytes = asBuffer(target);
  const slash = bytes.lastIndexOf(0x2f);
  if (slash < 0) return Buffer.from('.');
  return slash === 0 ? Buffer.from('/') : bytes.subarray(0, slash);
}

function writeAllSync(fd: number, data: Uint8Array): void {
  let done = 0;
  while (done < data.length) done += fs.writeSync(fd, data, done, Math.min(data.length - done, kIoChunk));
}

async function writeAll(handle: fs.promises.FileHandle, data: Uint8Array): Promise<void> {
  let done = 0;
  while (done < data.length) done += (await handle.write(data, done, Math.min(data.length - done, kIoChunk))).bytesWritten;
}

// The rename of an atomic write: over the target, or, where it must not exist yet ('wx'), a
// hard link that fails with EEXIST where it does (node:fs has no RENAME_NOREPLACE).
function renameSync(temporary: Buffer, target: string | Buffer, noReplace: boolean): RawFailure | undefined {
  try {
    if (noReplace) {
      fs.linkSync(temporary, target);
      fs.unlinkSync(temporary);
    } else {
      fs.renameSync(temporary, target);
    }
    return undefined;
  } catch (err) {
    return renameFailure(err);
  }
}

// 'wx' finding the target, or a directory there: open's errors, as without atomic.
function renameFailure(err: unknown): RawFailure {
  const raw = failure(err);
  return { errno: raw.errno, syscall: raw.errno === EEXIST || raw.errno === EISDIR ? 'open' : 'rename' };
}

function atomicSync(target: string | Buffer, data: Uint8Array, mode: number, flush: boolean, noReplace: boolean): RawFailure | undefined {
  let temporary: Buffer | null = null;
  let fd = -1;
  for (let attempt = 0; attempt < kTemporaryAttempts && fd < 0; attempt++) {
    temporary = temporaryName(target);
    if (temporary === null) return { errno: EISDIR, syscall: 'open' };
    try {
      fd = fs.openSync(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
    } catch (err) {
      const raw = failure(err);
      if (raw.errno !== EEXIST || attempt + 1 === kTemporaryAttempts) return { errno: raw.errno, syscall: 'open' };
    }
  }
  let result = fillAndCloseSync(fd, data, flush);
  if (result === undefined) result = renameSync(temporary!, target, noReplace);
  if (result !== undefined) {
    try {
      fs.unlinkSync(temporary!);
    } catch {
      // Already gone (the hard link's second half).
    }
    return result;
  }
  return flush ? syncDirectorySync(target) : undefined;
}

function fillAndCloseSync(fd: number, data: Uint8Array, flush: boolean): RawFailure | undefined {
  let result: RawFailure | undefined;
  try {
    writeAllSync(fd, data);
    if (flush) fs.fsyncSync(fd);
  } catch (err) {
    result = failure(err);
  }
  try {
    fs.closeSync(fd);
  } catch (err) {
    result ??= failure(err);
  }
  return result;
}

// A rename is durable once its directory is synced. Not on Windows: libuv opens a directory
// read-only at most, FlushFileBuffers needs write access (fsync would fail with EPERM), and NTFS
// journals the rename itself.
const syncsDirectories = platform !== 'win32';

function syncDirectorySync(target: string | Buffer): RawFailure | undefined {
  if (!syncsDirectories) return undefined;
  try {
    const fd = fs.openSync(directoryOf(target), O_RDONLY | O_DIRECTORY);
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    return undefined;
  } catch (err) {
    return { errno: failure(err).errno, syscall: 'fsync' };
  }
}

/** NativeBinding.writeFileSync over node:fs. */
export function jsWriteFileSync(target: string | Buffer | number, data: Uint8Array, flags: number, mode: number,
  flush: boolean, atomic: number): RawFailure | undefined {
  if (typeof target === 'number') {
    try {
      writeAllSync(target, data);
      if (flush) fs.fsyncSync(target);
      return undefined;
    } catch (err) {
      return failure(err);
    }
  }
  if (atomic !== 0) return atomicSync(target, data, mode, flush, atomic === 2);
  let fd: number;
  try {
    fd = fs.openSync(target, flags, mode);
  } catch (err) {
    return failure(err);
  }
  return fillAndCloseSync(fd, data, flush);
}

async function fillAndClose(handle: fs.promises.FileHandle, data: Uint8Array, flush: boolean): Promise<RawFailure | undefined> {
  let result: RawFailure | undefined;
  try {
    await writeAll(handle, data);
    if (flush) await handle.sync();
  } catch (err) {
    result = failure(err);
  }
  try {
    await handle.close();
  } catch (err) {
    result ??= failure(err);
  }
  return result;
}

async function atomicAsync(target: string | Buffer, data: Uint8Array, mode: number, flush: boolean, noReplace: boolean,
  stopped: () => boolean): Promise<RawFailure | undefined> {
  let temporary: Buffer | null = null;
  let handle: fs.promises.FileHandle | undefined;
  for (let attempt = 0; attempt < kTemporaryAttempts && handle === undefined; attempt++) {
    temporary = temporaryName(target);
    if (temporary === null) return { errno: EISDIR, syscall: 'open' };
    try {
      handle = await fs.promises.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
    } catch (err) {
      const raw = failure(err);
      if (raw.errno !== EEXIST || attempt + 1 === kTemporaryAttempts) return { errno: raw.errno, syscall: 'open' };
    }
  }
  let result = await fillAndClose(handle!, data, flush);
  // Stopped while it wrote: the target is left as it was.
  if (result === undefined && stopped()) result = cancelled;
  if (result === undefined) {
    try {
      if (noReplace) {
        await fs.promises.link(temporary!, target);
        await fs.promises.unlink(temporary!);
      } else {
        await fs.promises.rename(temporary!, target);
      }
    } catch (err) {
      result = renameFailure(err);
    }
  }
  if (result !== undefined) {
    await fs.promises.unlink(temporary!).catch(() => undefined);
    return result;
  }
  if (!flush || !syncsDirectories) return undefined;
  try {
    const dir = await fs.promises.open(directoryOf(target), O_RDONLY | O_DIRECTORY);
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
    return undefined;
  } catch (err) {
    return { errno: failure(err).errno, syscall: 'fsync' };
  }
}

/**
 * jsWriteFileSync's contract through node:fs's asynchronous calls (libuv's thread pool).
 * `stopped` is asked before the write begins and before an atomic write's rename: once it says
 * yes, the write fails with ECANCELED there, and an atomic one unlinks its temporary file.
 */
export async function jsWriteFile(target: string | Buffer | number, data: Uint8Array, flags: number, mode: number,
  flush: boolean, atomic: number, stopped: () => boolean = () => false): Promise<RawFailure | undefined> {
  if (stopped()) return cancelled;
  if (typeof target === 'number') {
    try {
      let done = 0;
      while (done < data.length) {
        done += await new Promise<number>((resolve, reject) => {
          fs.write(target, data, done, Math.min(data.length - done, kIoChunk), null, (err, n) => (err ? reject(err) : resolve(n)));
        });
      }
      if (flush) await new Promise<void>((resolve, reject) => fs.fsync(target, (err) => (err ? reject(err) : resolve())));
      return undefined;
    } catch (err) {
      return failure(err);
    }
  }
  if (atomic !== 0) return atomicAsync(target, data, mode, flush, atomic === 2, stopped);
  let handle: fs.promises.FileHandle;
  try {
    handle = await fs.promises.open(target, flags, mode);
  } catch (err) {
    return failure(err);
  }
  return fillAndClose(handle, data, flush);
}

/** fs.mkdirSync(path, { recursive: true, mode }): the first directory made, or undefined. */
export function jsMkdirAllSync(target: string | Buffer, mode: number): string | undefined | RawFailure {
  try {
    return fs.mkdirSync(target, { recursive: true, mode });
  } catch (err) {
    return failure(err);
  }
}

/** The same through fs.promises.mkdir, whose errors name the level its walk failed at (`at`,
 * as a byte length of the path). */
export async function jsMkdirAll(target: string | Buffer, mode: number): Promise<string | undefined | (RawFailure & { at?: number })> {
  try {
    return await fs.promises.mkdir(target, { recursive: true, mode });
  } catch (err) {
    const named = (err as NodeJS.ErrnoException).path;
    return { ...failure(err), at: typeof named === 'string' ? Buffer.byteLength(named) : undefined };
  }
}
