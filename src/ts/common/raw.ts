// What the engines return: bytes, or a failure as data ({ errno, syscall }) that errors.ts
// shapes into a node:fs Error.

/** A read that produced no bytes: a syscall failure (negative errno), or a reason of our own. */
export interface RawFailure {
  errno: number;
  syscall?: string;
  reason?: 'null-bytes' | 'too-large' | 'window';
  /** too-large: the offending size; window: the file's size. */
  size?: number;
}

/** A mapped file: the Buffer, and the handle unmap() takes (absent when the Buffer is a copy). */
export interface RawMapping {
  buffer: Buffer;
  mapping?: object;
}

export type RawResult = Buffer | RawFailure;

/** Whether an engine's result is its failure. Asked of the result's kind, not of its `errno`:
 * looking a name up on a Buffer is a slow, generic lookup (V8 first asks whether the name is an
 * index), a few percent of a cached 4 KiB read. */
export function isRawFailure(raw: RawResult): raw is RawFailure {
  return !(raw instanceof Uint8Array);
}
