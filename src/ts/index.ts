// smartread: read files as fast as Linux allows, with node:fs's arguments, results and errors.
import { loadReport } from './engine';
import type { LoadReport } from './native';

export { smartReadSync } from './read_sync';
export type { PathLike, PathOrFd, ReadFileOptions } from './args';
export type { FsError } from './errors';
export type { LoadReport };

/** Which engine this process reads with, where it came from, and why. */
export function engineInfo(): LoadReport {
  return { ...loadReport, tried: [...loadReport.tried] };
}
