// prefetch(): readahead for files about to be read, so that a later smartRead finds them cached.
import * as fs from 'node:fs';
import { native } from '../engine/engine';
import { failureToError } from '../common/errors';
import { getValidatedPath, pathList, type PathLike, type PathList } from '../common/args';
import { posixOpenFlag } from '../common/platform';

/** What {@link prefetch} started, and what it could not. */
export interface PrefetchResult {
  /** Files whose readahead was started (on the JS engine: files read through once). */
  started: number;
  /** Paths that could not be prefetched, in the order given, with node:fs-style errors. Other
   * kinds of files than regular ones (directories, FIFOs, devices) are skipped without an error. */
  failed: Array<{
    /** The path, as given. */
    path: PathLike;
    /** Why it could not be prefetched. */
    error: Error;
  }>;
}

// The JS engine has no fadvise: it reads each file through a small buffer and drops the bytes,
// a few at a time, which leaves them in the page cache as readahead would.
const kJsChunk = 1 << 20;
const kJsConcurrency = 4;

// A FIFO must not hold the open until a writer comes (Windows has no FIFOs, and no O_NONBLOCK).
const kOpenFlags = fs.constants.O_RDONLY | posixOpenFlag('O_NONBLOCK');

async function readThrough(target: string | Buffer): Promise<boolean> {
  const handle = await fs.promises.open(target, kOpenFlags);
  try {
    if (!(await handle.stat()).isFile()) return false;
    const scratch = Buffer.allocUnsafe(kJsChunk);
    while ((await handle.read(scratch, 0, kJsChunk, null)).bytesRead > 0);
    return true;
  } finally {
    await handle.close();
  }
}

async function prefetchJs(paths: PathLike[], targets: Array<string | Buffer>): Promise<PrefetchResult> {
  let started = 0;
  // By index: the lanes' failures come back in the order their opens end, and are listed in
  // the input's order, as the addon lists them.
  const errors: Array<Error | undefined> = new Array(targets.length);
  let next = 0;
  const lane = async () => {
    while (next < targets.length) {
      const i = next++;
      try {
        if (await readThrough(targets[i])) started++;
      } catch (err) {
        errors[i] = err as Error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(kJsConcurrency, targets.length) }, lane));
  const failed: PrefetchResult['failed'] = [];
  errors.forEach((error, i) => {
    if (error !== undefined) failed.push({ path: paths[i], error });
  });
  return { started, failed };
}

/**
 * Starts readahead of whole files (posix_fadvise WILLNEED, on one pool thread for the list) and
 * resolves once it is under way, not when the bytes are in memory, so that a later smartRead
 * finds them cached. Directories, FIFOs and devices are skipped.
 *
 * @param paths - The files, any iterable.
 * @returns How many were started, and those that failed with why.
 */
export async function prefetch(paths: PathList<PathLike>): Promise<PrefetchResult> {
  const list = pathList(paths, prefetch);
  const targets = list.map((p) => getValidatedPath(p, prefetch));
  if (!native) return prefetchJs(list, targets);
  const raw = await native.prefetch(targets);
  return {
    started: raw.started,
    failed: raw.failures.map((f) => ({ path: list[f.index], error: failureToError(f, list[f.index], targets[f.index], prefetch) })),
  };
}
