// A byte range of an open file as a Readable: positional reads (on io_uring where it is usable,
// else on libuv's pool), a few chunks
// ahead of the consumer and no more (backpressure: reads are started only while the stream's
// buffer is below its mark), pushed in file order; the descriptor is closed once the stream
// ends or is destroyed, after the reads in flight have come back. A consumer that knows when
// it is done with a chunk (a socket write's callback) gives it back with recycle(), and the
// next reads go into it: no fresh memory to fault in, and none left for the collector.
import * as fs from 'node:fs';
import { Readable } from 'node:stream';
import { fastPathTurnMs, native } from '../engine/engine';
import { failureToError } from '../common/errors';
import type { NativeBinding } from '../engine/native';
import type { RawFailure } from '../common/raw';
import { submittedSoon, uringAvailability } from '../read/strategies';
import { passTurn, takeTurn, turnShare } from '../read/turn_clock';

type ReadAt = (fd: number, buffer: Buffer, length: number, position: number, onWorkers: boolean) => Promise<number | RawFailure>;

let readAt: ReadAt | undefined;

// The ring completes reads on the event loop's thread (no thread hop per chunk); the pool is
// where io_uring is missing or refused.
function positionalReads(): ReadAt {
  if (readAt === undefined) {
    const binding = native as NativeBinding;
    if (typeof uringAvailability() !== 'string' && binding.uringReadAt !== undefined) {
      const ring = binding as Required<NativeBinding>;
      readAt = (fd, buffer, length, position, onWorkers) => submittedSoon(ring.uringReadAt(fd, false, buffer, 0, length, position, onWorkers));
    } else {
      readAt = (fd, buffer, length, position) => binding.readIntoAsync(fd, buffer, 0, length, position);
    }
  }
  return readAt;
}

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
  private readonly spare: Buffer[] = [];
  private waitingForTurn = false;

  /** Streams bytes [start, end] (inclusive) of `fd`, which it owns and closes, reading
   * `chunkSize` bytes at a time with up to `depth` reads in flight; `onWorkers`: the file is on
   * a server's mount, whose reads the ring must not try inline on the JS thread. */
  constructor(fd: number, start: number, end: number, private readonly chunkSize: number,
              private readonly depth: number, private readonly rel: string, private readonly onWorkers = false) {
    super({ highWaterMark: chunkSize });
    this.fd = fd;
    this.nextPosition = start;
    this.end = end;
  }

  override _read(): void {
    this.wantsMore = true;
    this.startReads();
  }

  // `woken`: called at the stream's turn in the line, for one read whatever the clock says.
  private startReads(woken = false): void {
    while (this.wantsMore && this.pending.length < this.depth && this.nextPosition <= this.end) {
      // A read of cached bytes on the ring completes as it is submitted and settles in a promise
      // reaction, whose socket write may take the chunk at once and ask for the next: streams
      // whose clients keep up would read on without the loop turning (100 downloads of a cached
      // 1 GiB file held it for up to 1.2 s). Past this turn's share of the JS thread (the clock
      // smartRead's reads share), the next read waits in their line (turn_clock.ts).
      if (this.waitingForTurn) return;
      const waiting = woken ? undefined : turnShare(fastPathTurnMs());
      woken = false;
      if (waiting !== undefined) {
        this.waitingForTurn = true;
        void waiting.then(() => {
          this.waitingForTurn = false;
          takeTurn();
          if (!this.destroyed) this.startReads(true);
          passTurn(fastPathTurnMs());
        });
        return;
      }
      const length = Math.min(this.chunkSize, this.end + 1 - this.nextPosition);
      // A chunk given back by the consumer, or a new one (the socket may hold the others).
      const whole = this.spare.pop() ?? Buffer.allocUnsafeSlow(this.chunkSize);
      const read: PendingRead = { buffer: length === whole.length ? whole : whole.subarray(0, length), position: this.nextPosition, result: undefined };
      this.nextPosition += length;
      this.pending.push(read);
      positionalReads()(this.fd, read.buffer, length, read.position, this.onWorkers).then(
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

  /** Takes back a chunk this stream pushed, once nothing uses it any more. */
  recycle(chunk: Buffer): void {
    if (chunk.buffer.byteLength === this.chunkSize && this.spare.length < this.depth + 2 && !this.destroyed) {
      this.spare.push(Buffer.from(chunk.buffer, 0, this.chunkSize));
    }
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
