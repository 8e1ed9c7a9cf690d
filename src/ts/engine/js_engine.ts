// The pure-JS engine: the raw binding's contract implemented over node:fs, for where the addon
// cannot be loaded (or SMARTREAD_FORCE_JS=1). Same results, slower.
import * as fs from 'node:fs';
import { maxReadLength } from '../common/limits';
import { errnoOf } from '../common/errors';
import { posixOpenFlag } from '../common/platform';
import { promisify } from 'node:util';
import type { Engine } from './native';
import type { RawFailure, RawMapping, RawResult } from '../common/raw';

// node:fs validates lengths against 2 GiB - 1; larger files are read in pieces of this size.
const kIoChunk = 2 ** 31 - 1;
const kUnknownSizeChunk = 64 * 1024;

function failure(err: unknown): RawFailure {
  const e = err as NodeJS.ErrnoException;
  if (typeof e.errno !== 'number' || typeof e.syscall !== 'string') throw err;
  return { errno: e.errno, syscall: e.syscall };
}

// Reads into `buffer` from the fd's position until it is full or EOF; returns the count.
function readFully(fd: number, buffer: Buffer): number {
  let done = 0;
  while (done < buffer.length) {
    const n = fs.readSync(fd, buffer, done, Math.min(buffer.length - done, kIoChunk), null);
    if (n === 0) break;
    done += n;
  }
  return done;
}

function readToEof(fd: number): RawResult {
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const chunk = Buffer.allocUnsafe(kUnknownSizeChunk);
    const n = readFully(fd, chunk);
    if (n > 0) chunks.push(n === chunk.length ? chunk : chunk.subarray(0, n));
    total += n;
    if (total > maxReadLength) return { errno: 0, reason: 'too-large', size: total };
    if (n < chunk.length) return Buffer.concat(chunks, total);
  }
}

function readWholeFd(fd: number, statFirst: boolean): RawResult {
  if (statFirst) {
    const stats = fs.fstatSync(fd);
    if (stats.isFile() && stats.size > 0) {
      if (stats.size > maxReadLength) return { errno: 0, reason: 'too-large', size: stats.size };
      const buffer = Buffer.allocUnsafe(stats.size);
      const n = readFully(fd, buffer);
      return n === buffer.length ? buffer : Buffer.from(buffer.subarray(0, n));
    }
  }
  return readToEof(fd);
}

function hasNullBytes(target: string | Buffer): boolean {
  return typeof target === 'string' ? target.includes('\u0000') : target.includes(0);
}

// So that opening a FIFO does not wait for a writer (Windows has no FIFOs, and no O_NONBLOCK).
const O_NONBLOCK = posixOpenFlag('O_NONBLOCK');

// `done` bytes past `position`, in the position's own type (a bigint past 2^53).
const advance = (position: number | bigint, done: number) => (typeof position === 'bigint' ? position + BigInt(done) : position + done);
// A path is read from its start where the position is negative.
const fromStart = (position: number | bigint) => (position < 0 ? 0 : position);

// Reads view[offset, offset + length) from `position` until full or EOF; returns the count.
function preadFully(fd: number, view: NodeJS.ArrayBufferView, offset: number, length: number, position: number | bigint): number {
  let done = 0;
  while (done < length) {
    const n = fs.readSync(fd, view, offset + done, Math.min(length - done, kIoChunk), advance(position, done));
    if (n === 0) break;
    done += n;
  }
  return done;
}

// mapFile without mmap: the window's bytes copied into a Buffer, with the addon's checks.
function copyWindow(fd: number, offset: number, wanted: number): RawMapping | RawFailure {
  const stats = fs.fstatSync(fd);
  if (!stats.isFile()) {
    return { errno: errnoOf(stats.isDirectory() ? 'EISDIR' : 'ENODEV'), syscall: 'mmap' };
  }
  const length = wanted < 0 ? Math.max(stats.size - offset, 0) : wanted;
  if (offset > stats.size || length > stats.size - offset) return { errno: 0, reason: 'window', size: stats.size };
  if (length > maxReadLength) return { errno: 0, reason: 'too-large', size: length };
  const buffer = Buffer.allocUnsafe(length);
  const n = preadFully(fd, buffer, 0, length, offset);
  return { buffer: n === length ? buffer : Buffer.from(buffer.subarray(0, n)) };
}

export const jsEngine: Engine = {
  mapFile(target, flags, offset, length) {
    if (hasNullBytes(target)) return { errno: 0, reason: 'null-bytes' };
    let fd: number;
    try {
      fd = fs.openSync(target, flags | O_NONBLOCK);
    } catch (err) {
      return failure(err);
    }
    try {
      return copyWindow(fd, offset, length);
    } catch (err) {
      return failure(err);
    } finally {
      fs.closeSync(fd);
    }
  },

  readIntoSync(target, view, offset, length, position) {
    try {
      if (typeof target === 'number') return fs.readSync(target, view, offset, length, position < 0 ? null : position);
      if (hasNullBytes(target)) return { errno: 0, reason: 'null-bytes' };
      const fd = fs.openSync(target, 'r');
      try {
        return preadFully(fd, view, offset, length, fromStart(position));
      } finally {
        fs.closeSync(fd);
      }
    } catch (err) {
      return failure(err);
    }
  },

  readIntoAsync: (target, view, offset, length, position) => jsReadIntoAsync(target, view, offset, length, position),

  readFileSync(target, flags, statUserFd) {
    if (typeof target === 'number') {
      // node:fs validates fds before the syscall; the kernel's answer for a negative one is EBADF.
      if (target < 0) return { errno: errnoOf('EBADF'), syscall: statUserFd ? 'fstat' : 'read' };
      try {
        return readWholeFd(target, statUserFd);
      } catch (err) {
        return failure(err);
      }
    }
    if (hasNullBytes(target)) return { errno: 0, reason: 'null-bytes' };
    let fd: number;
    try {
      fd = fs.openSync(target, flags, 0o666);
    } catch (err) {
      return failure(err);
    }
    let result: RawResult;
    try {
      result = readWholeFd(fd, true);
    } catch (err) {
      result = failure(err);
    }
    try {
      fs.closeSync(fd);
    } catch (err) {
      if (Buffer.isBuffer(result)) result = failure(err);
    }
    return result;
  },
};

// The asynchronous contract over node:fs's callback API (libuv's thread pool), with the same
// raw results as the addon's engines.
const openAsync = promisify(fs.open);
const fstatAsync = promisify(fs.fstat);
const closeAsync = promisify(fs.close);
const readAsync = (fd: number, buffer: Buffer, offset: number, length: number) =>
  new Promise<number>((resolve, reject) => {
    fs.read(fd, buffer, offset, length, null, (err, n) => (err ? reject(err) : resolve(n)));
  });

async function readFullyAsync(fd: number, buffer: Buffer): Promise<number> {
  let done = 0;
  while (done < buffer.length) {
    const n = await readAsync(fd, buffer, done, Math.min(buffer.length - done, kIoChunk));
    if (n === 0) break;
    done += n;
  }
  return done;
}

async function readWholeFdAsync(fd: number, statFirst: boolean): Promise<RawResult> {
  if (statFirst) {
    const stats = await fstatAsync(fd);
    if (stats.isFile() && stats.size > 0) {
      if (stats.size > maxReadLength) return { errno: 0, reason: 'too-large', size: stats.size };
      const buffer = Buffer.allocUnsafe(stats.size);
      const n = await readFullyAsync(fd, buffer);
      return n === buffer.length ? buffer : Buffer.from(buffer.subarray(0, n));
    }
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const chunk = Buffer.allocUnsafe(kUnknownSizeChunk);
    const n = await readFullyAsync(fd, chunk);
    if (n > 0) chunks.push(n === chunk.length ? chunk : chunk.subarray(0, n));
    total += n;
    if (total > maxReadLength) return { errno: 0, reason: 'too-large', size: total };
    if (n < chunk.length) return Buffer.concat(chunks, total);
  }
}

export async function jsReadAsync(target: string | Buffer | number, flags: number, statUserFd: boolean): Promise<RawResult> {
  if (typeof target === 'number') {
    if (target < 0) return { errno: errnoOf('EBADF'), syscall: statUserFd ? 'fstat' : 'read' };
    try {
      return await readWholeFdAsync(target, statUserFd);
    } catch (err) {
      return failure(err);
    }
  }
  if (hasNullBytes(target)) return { errno: 0, reason: 'null-bytes' };
  let fd: number;
  try {
    fd = await openAsync(target, flags, 0o666);
  } catch (err) {
    return failure(err);
  }
  let result: RawResult;
  try {
    result = await readWholeFdAsync(fd, true);
  } catch (err) {
    result = failure(err);
  }
  try {
    await closeAsync(fd);
  } catch (err) {
    if (Buffer.isBuffer(result)) result = failure(err);
  }
  return result;
}

const readAtAsync = (fd: number, view: NodeJS.ArrayBufferView, offset: number, length: number, position: number | bigint | null) =>
  new Promise<number>((resolve, reject) => {
    fs.read(fd, view, offset, length, position, (err, n) => (err ? reject(err) : resolve(n)));
  });

async function jsReadIntoAsync(target: string | Buffer | number, view: NodeJS.ArrayBufferView, offset: number,
  length: number, position: number | bigint): Promise<number | RawFailure> {
  try {
    if (typeof target === 'number') return await readAtAsync(target, view, offset, length, position < 0 ? null : position);
    if (hasNullBytes(target)) return { errno: 0, reason: 'null-bytes' };
    const fd = await openAsync(target, 'r', 0o666);
    try {
      let done = 0;
      while (done < length) {
        const n = await readAtAsync(fd, view, offset + done, Math.min(length - done, kIoChunk), advance(fromStart(position), done));
        if (n === 0) break;
        done += n;
      }
      return done;
    } finally {
      await closeAsync(fd);
    }
  } catch (err) {
    return failure(err);
  }
}
