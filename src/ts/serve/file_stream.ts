// A byte range of an open file as a Readable: positional reads of one chunk at a time on libuv's
// pool, each started only when the consumer wants more (backpressure), and the descriptor
// closed once the stream ends or is destroyed, after the read in flight has come back.
import * as fs from 'node:fs';
import { Readable } from 'node:stream';
import { native } from '../engine';
import { failureToError } from '../errors';

export class FileRangeStream extends Readable {
  private position: number;
  private readonly end: number;
  private reading = false;
  private fd: number;
  private afterRead: (() => void) | null = null;

  /** Streams bytes [start, end] (inclusive) of `fd`, which it owns and closes. */
  constructor(fd: number, start: number, end: number, private readonly chunkSize: number, private readonly rel: string) {
    super({ highWaterMark: chunkSize });
    this.fd = fd;
    this.position = start;
    this.end = end;
  }

  override _read(): void {
    if (this.reading) return;
    const length = Math.min(this.chunkSize, this.end + 1 - this.position);
    if (length <= 0) {
      this.push(null);
      return;
    }
    this.reading = true;
    // A Buffer of its own per chunk: the socket may still hold the previous one.
    const buffer = Buffer.allocUnsafeSlow(length);
    native!.readIntoAsync(this.fd, buffer, 0, length, this.position).then((result) => {
      this.reading = false;
      if (this.afterRead !== null) {
        this.afterRead();
        return;
      }
      if (this.destroyed) return;
      if (typeof result !== 'number') {
        this.destroy(failureToError(result, this.rel, this.fd, FileRangeStream));
      } else if (result === 0) {
        // The file shrank under the response, which promised more bytes (Content-Length).
        this.destroy(Object.assign(new Error(`'${this.rel}' ended at byte ${this.position}, before the ${this.end + 1} bytes the response announced`),
          { code: 'ERR_SMARTREAD_FILE_SHRANK' }));
      } else {
        this.position += result;
        this.push(result === length ? buffer : buffer.subarray(0, result));
      }
    }, (err: Error) => {
      this.reading = false;
      if (this.afterRead !== null) this.afterRead();
      else this.destroy(err);
    });
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    const close = () => {
      this.afterRead = null;
      const fd = this.fd;
      this.fd = -1;
      if (fd < 0) return callback(err);
      fs.close(fd, (closeErr) => callback(err ?? closeErr));
    };
    // The read in flight writes into its buffer and uses the descriptor: close after it.
    if (this.reading) this.afterRead = close;
    else close();
  }
}
