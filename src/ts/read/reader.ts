// openReader: one open file for many positional reads, on io_uring (the fd in a fixed-file slot
// of the thread's ring, reads batched per tick) or on libuv's thread pool.
import { constants as bufferConstants } from 'node:buffer';
import * as fs from 'node:fs';
import { fastPathTurnMs, native } from '../engine/engine';
import { jsEngine } from '../engine/js_engine';
import { failureToError, invalidArgValue, readerClosed, strategyUnavailable } from '../common/errors';
import {
  getValidatedPath, validateBoolean, validateBuffer, validateInteger, validateOffsetLengthRead,
  validateOptionsObject, type PathLike,
} from '../common/args';
import { submittedSoon, uringAvailability } from './strategies';
import type { NativeBinding } from '../engine/native';
import type { RawFailure } from '../common/raw';
import { passTurn, takeTurn, turnShare } from './turn_clock';

/** What serves an {@link openReader} handle's reads: 'auto' chooses, the others force one. */
export type ReaderStrategy = 'auto' | 'uring' | 'threadpool';
const readerStrategies: readonly ReaderStrategy[] = ['auto', 'uring', 'threadpool'];

/** How {@link openReader} reads the file. */
export interface OpenReaderOptions {
  /** 'auto' (default): io_uring where available, else the thread pool; the others force one. */
  strategy?: ReaderStrategy;
  /** posix_fadvise(POSIX_FADV_RANDOM) on the file (default true): no readahead, so that a cold
   * 4 KiB read reads 4 KiB. Set false for mostly sequential reads. */
  random?: boolean;
}

// node:fs's largest single read.
const kMaxRead = 2 ** 31 - 1;

type ReadAt = (view: NodeJS.ArrayBufferView, offset: number, length: number, position: number) => Promise<number | RawFailure>;

/** A file kept open for positional reads. */
export class Reader implements AsyncDisposable {
  /** The file's size when it was opened. */
  readonly size: number;
  /** What serves the reads: 'uring', 'threadpool' or 'js' (the pure-JS engine). */
  readonly strategy: 'uring' | 'threadpool' | 'js';
  readonly #path: PathLike;
  readonly #handle: fs.promises.FileHandle;
  readonly #readAt: ReadAt;
  readonly #release: () => void;
  #inFlight = 0;
  #drained: (() => void) | null = null;
  #closing: Promise<void> | null = null;

  /** @internal Made by openReader(). */
  constructor(path: PathLike, handle: fs.promises.FileHandle, size: number, strategy: Reader['strategy'], readAt: ReadAt, release: () => void) {
    this.#path = path;
    this.#handle = handle;
    this.size = size;
    this.strategy = strategy;
    this.#readAt = readAt;
    this.#release = release;
  }

  /**
   * `length` bytes from `position` as a new Buffer (shorter at the end of the file).
   *
   * @param position - The first byte to read.
   * @param length - How many bytes to read.
   * @returns The bytes read.
   */
  async read(position: number, length: number): Promise<Buffer> {
    if (this.#closing !== null) throw readerClosed(this.read);
    validateInteger(position, 'position', 0, Number.MAX_SAFE_INTEGER, this.read);
    validateInteger(length, 'length', 0, Math.min(kMaxRead, bufferConstants.MAX_LENGTH), this.read);
    const buffer = Buffer.allocUnsafe(length);
    const n = length === 0 ? 0 : await this.#perform(buffer, 0, length, position, this.read);
    return n === length ? buffer : buffer.subarray(0, n);
  }

  /**
   * Reads into buffer[offset, offset + length) from `position`, without allocating; resolves
   * with the byte count (fewer at the end of the file), as fs.read's bytesRead.
   *
   * @param buffer - Where the bytes go: a Buffer, TypedArray or DataView.
   * @param position - The first byte of the file to read.
   * @param offset - Where in the buffer they go (default 0).
   * @param length - How many bytes to read (default: the rest of the buffer).
   * @returns How many bytes were read.
   */
  async readInto(buffer: NodeJS.ArrayBufferView, position: number, offset = 0, length?: number): Promise<number> {
    if (this.#closing !== null) throw readerClosed(this.readInto);
    validateBuffer(buffer, this.readInto);
    validateInteger(position, 'position', 0, Number.MAX_SAFE_INTEGER, this.readInto);
    validateInteger(offset, 'offset', 0, Number.MAX_SAFE_INTEGER, this.readInto);
    const count = length ?? buffer.byteLength - offset;
    validateInteger(count, 'length', 0, kMaxRead, this.readInto);
    validateOffsetLengthRead(offset, count, buffer.byteLength, this.readInto);
    if (count === 0) return 0;
    return this.#perform(buffer, offset, count, position, this.readInto);
  }

  async #perform(view: NodeJS.ArrayBufferView, offset: number, length: number, position: number, caller: Function): Promise<number> {
    this.#inFlight++;
    let raw: number | RawFailure;
    try {
      // io_uring completes a read of cached pages as it is submitted: reads awaited one after
      // another would not let the loop turn (3,000 reads of 4 KiB: none in 55 ms).
      const shareMs = fastPathTurnMs();
      const waiting = turnShare(shareMs);
      if (waiting === undefined) {
        raw = await this.#readAt(view, offset, length, position);
      } else {
        await waiting;
        takeTurn();
        let reading;
        try {
          reading = this.#readAt(view, offset, length, position);
        } finally {
          passTurn(shareMs);
        }
        raw = await reading;
      }
    } finally {
      if (--this.#inFlight === 0 && this.#drained !== null) this.#drained();
    }
    if (typeof raw !== 'number') throw failureToError(raw, this.#path, this.#handle.fd, caller);
    return raw;
  }

  /**
   * Closes the file once the reads in flight are done (they complete; reads started after
   * close() reject with ERR_SMARTREAD_READER_CLOSED). Closing again returns the same promise.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      if (this.#inFlight > 0) await new Promise<void>((resolve) => { this.#drained = resolve; });
      this.#release();
      await this.#handle.close();
    })();
    return this.#closing;
  }

  /** close(), for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

// A reader dropped without close(): node:fs closes its FileHandle when it is collected, and this
// empties its fixed-file slot, which would otherwise hold the file open for the thread's life.
// A reader with reads in flight is still reachable (their promises lead back to it).
const slotsOfDroppedReaders = new FinalizationRegistry<number>((slot) => native?.uringUnregisterFile?.(slot));

// How reads reach the kernel for one fd: the ring (in a fixed-file slot when one is free), the
// addon's pool work, or node:fs.
interface ReadPath {
  by: Reader['strategy'];
  readAt: ReadAt;
  release: () => void;
  /** The fixed-file slot the fd is in, or -1. */
  slot: number;
}

function readPath(strategy: ReaderStrategy, fd: number, caller: Function): ReadPath {
  if (native === null) {
    return { by: 'js', readAt: (view, offset, length, position) => jsEngine.readIntoAsync(fd, view, offset, length, position), release: () => {}, slot: -1 };
  }
  const ring = strategy === 'threadpool' ? 'not asked for' : uringAvailability();
  if (typeof ring === 'string') {
    if (strategy === 'uring') throw strategyUnavailable('uring', ring, caller);
    const binding = native;
    return { by: 'threadpool', readAt: (view, offset, length, position) => binding.readIntoAsync(fd, view, offset, length, position), release: () => {}, slot: -1 };
  }
  const binding = native as Required<NativeBinding>;
  const slot = binding.uringRegisterFile(fd);
  const fixed = slot >= 0;
  // On a server's mount (FUSE, NFS), a READ the ring tried inline would wait for the server on
  // the JS thread: asked once, as the file's mount does not change.
  const onWorkers = binding.fileAsksServer(fd);
  return {
    by: 'uring',
    readAt: (view, offset, length, position) => submittedSoon(binding.uringReadAt(fixed ? slot : fd, fixed, view, offset, length, position, onWorkers)),
    release: () => {
      if (fixed) binding.uringUnregisterFile(slot);
    },
    slot,
  };
}

/**
 * Opens a file for positional reads: `read(position, length)`, `readInto(buffer, position,
 * offset?, length?)`, `size`, `close()` and `await using`. Open errors are fs.promises.open's.
 *
 * @param path - The file.
 * @param options - The engine (`strategy`), and whether to advise random access (`random`).
 * @returns The open reader; close it when done.
 */
export async function openReader(path: PathLike, options?: OpenReaderOptions | null): Promise<Reader> {
  const target = getValidatedPath(path, openReader);
  validateOptionsObject(options, 'options', openReader);
  const { strategy = 'auto', random = true } = options ?? {};
  if (!readerStrategies.includes(strategy)) {
    throw invalidArgValue('options.strategy', strategy, `must be one of ${readerStrategies.map((s) => `'${s}'`).join(', ')}`, openReader);
  }
  validateBoolean(random, 'options.random', openReader);
  if (strategy === 'uring') {
    const ring = native === null ? `the native addon is not in use` : uringAvailability();
    if (typeof ring === 'string') throw strategyUnavailable('uring', ring, openReader);
  }
  const handle = await fs.promises.open(target, 'r');
  try {
    const { size } = await handle.stat();
    // Advice only: a file that refuses it is read with readahead.
    if (random && native !== null) native.adviseRandom(handle.fd);
    const how = readPath(strategy, handle.fd, openReader);
    const reader: Reader = new Reader(path, handle, size, how.by, how.readAt, () => {
      slotsOfDroppedReaders.unregister(reader);
      how.release();
    });
    if (how.slot >= 0) slotsOfDroppedReaders.register(reader, how.slot, reader);
    return reader;
  } catch (err) {
    await handle.close();
    throw err;
  }
}
