// The cache-hit fast path's policy: the addon applies it (setFastPath) and explain() reports it.
import { filesystemMagicNumber } from './device';

// A hit copies the file on the calling thread: past this size the copy alone would hold the
// event loop for more than a few tens of microseconds.
export const fastPathMaxSize = 256 * 1024;

// Filesystems whose pages are always in memory. Linux refuses RWF_NOWAIT on them (shmem:
// EOPNOTSUPP), so the fast path reads them with a plain read, which cannot wait for a device.
export const memoryFilesystems: readonly string[] = ['tmpfs', 'ramfs'];

/** What the addon's setFastPath takes. */
export function fastPathPolicy(): { maxSize: number; memoryFilesystems: number[] } {
  return { maxSize: fastPathMaxSize, memoryFilesystems: memoryFilesystems.map(filesystemMagicNumber) };
}
