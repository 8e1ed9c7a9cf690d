// Page-cache control: what benchmarks and tests need to read files cold, and to check that
// they were.
import { native } from '../engine/engine';
import { failureToError, strategyUnavailable } from '../common/errors';
import { getValidatedPath, type PathLike } from '../common/args';
import type { RawFailure } from '../common/raw';

function requireNative(caller: Function) {
  if (!native) throw strategyUnavailable('page cache control', 'it needs the native addon', caller);
  return native;
}

function check<T>(result: T | RawFailure, path: PathLike, target: string | Buffer, caller: Function): T {
  if (result !== undefined && (result as RawFailure).errno !== undefined) {
    throw failureToError(result as RawFailure, path, target, caller);
  }
  return result as T;
}

/**
 * Drops the file's clean pages from the page cache (posix_fadvise DONTNEED; no root needed;
 * tmpfs pages cannot be dropped). For benchmarks and tests; needs the native addon.
 *
 * @param path - The file.
 * @throws node:fs-style errors for the file (ENOENT...); ERR_SMARTREAD_STRATEGY_UNAVAILABLE without the addon.
 */
export function evictFromPageCache(path: PathLike): void {
  const target = getValidatedPath(path, evictFromPageCache);
  check(requireNative(evictFromPageCache).evictFromPageCache(target), path, target, evictFromPageCache);
}

/**
 * How many of the file's bytes are in the page cache now (mincore). Needs the native addon.
 *
 * @param path - The file.
 * @returns Its size, and how many of its bytes are cached.
 */
export function pageCacheResidency(path: PathLike): {
  /** The file's size in bytes. */
  size: number;
  /** How many of them are in the page cache. */
  cached: number;
} {
  const target = getValidatedPath(path, pageCacheResidency);
  return check(requireNative(pageCacheResidency).pageCacheResidency(target), path, target, pageCacheResidency);
}
