// The cache-hit fast path's policy, as the addon applies it (src/native/cached_read.cc), for
// explain() to report.
import { native } from './engine';

// A hit copies the file on the calling thread: past this size the copy alone would hold the
// event loop for more than a few tens of microseconds. The addon says what it uses.
export const fastPathMaxSize: number = native?.features.fastPathMax ?? 0;

// Filesystems whose pages are always in memory. Linux refuses RWF_NOWAIT on them (shmem:
// EOPNOTSUPP), so the fast path reads them with a plain read, which cannot wait for a device.
export const memoryFilesystems: readonly string[] = ['tmpfs', 'ramfs'];
