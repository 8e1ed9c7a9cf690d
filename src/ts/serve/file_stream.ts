// A byte range of an open file as a Readable: positional reads on libuv's pool, a few chunks
// ahead of the consumer and no more (backpressure: reads are started only while the stream's
// buffer is below its mark), pushed in file order; the descriptor is closed once the stream
// ends or is destroyed, after the reads in flight have come back.
import * as fs from 'node:fs';
import { Readable } from 'node:stream';
import { native } from '../engine';
import { failureToError } from '../errors';
import type { RawFailure } from '../native';

interface PendingRead {
  buffer: Buffer;
  position: number;
  result: number | RawFailure | Error | undefined;
}

export class FileRangeStream extends Readable {
  private nextPosition: number;
  private readonly end: number;
  private readonly pending: PendingRead[] = [];
  private fd: number;
  private wantsMore = false;
  private afterReads: (() => void) | null = null;

  /** Streams bytes [start, end] (inclusive) of `fd`, which it owns and closes, reading
   * `chunkSize` bytes at a time with up to `depth` reads in flight. */
  constructor(fd: number, start: number, end: number, private readonly chunkSize: number,
              private readonly depth: number, private readonly rel: string) {
    super({ highWaterMark: chunkSize * depth });
    this.fd = fd;
    this.nextPosition = start;
    this.end = end;
  }

  override _read(): void {
    this.wantsMore = true;
    this.startReads();
  }

  private startReads(): void {
    while (this.wantsMore && this.pending.length < this.depth && this.nextPosition <= this.end) {
      const length = Math.min(this.chunkSize, this.end + 1 - this.nextPosition);
      // A Buffer of its own per chunk: the socket may still hold the previous ones.
      const read: PendingRead = { buffer: Buffer.allocUnsafeSlow(length), position: this.nextPosition, result: undefined };
      this.nextPosition += length;
      this.pending.push(read);
      native!.readIntoAsync(this.fd, read.buffer, 0, length, read.position).then(
        (result) => this.completed(read, result),
        (err: Error) => this.completed(read, err));
    }
    if (this.pending.length === 0 && this.nextPosition > this.end && !this.destroyed) this.push(null);
  }

  private completed(read: PendingRead, result: number | RawFailure | Error): void {
    read.result = result;
    // Pushed in file order: a later chunk waits for the ones before it.
    while (this.pending.length > 0 && this.pending[0].result !== undefined) {
      const done = this.pending.shift()!;
      if (this.afterReads !== null || this.destroyed) continue;
      const r = done.result!;
      if (r instanceof Error) {
        this.destroy(r);
      } else if (typeof r !== 'number') {
        this.destroy(failureToError(r, this.rel, this.fd, FileRangeStream));
      } else if (r < done.buffer.length) {
        // The file shrank under the response, which promised more bytes (Content-Length).
        this.destroy(Object.assign(new Error(`'${this.rel}' ended at byte ${done.position + r}, before the ${this.end + 1} bytes the response announced`),
          { code: 'ERR_SMARTREAD_FILE_SHRANK' }));
      } else {
        this.wantsMore = this.push(done.buffer);
      }
    }
    if (this.afterReads !== null) {
      if (this.pending.length === 0) this.afterReads();
      return;
    }
    if (!this.destroyed) this.startReads();
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    const close = () => {
      this.afterReads = null;
      const fd = this.fd;
      this.fd = -1;
      if (fd < 0) return callback(err);
      fs.close(fd, (closeErr) => callback(err ?? closeErr));
    };
    // The reads in flight write into their buffers and use the descriptor: close after them.
    if (this.pending.length > 0) this.afterReads = close;
    else close();
  }
}
