// smartread calibrate: measures, on this machine and in one directory, how fast the fast path
// copies a cached file (which, with its time budget, sets the largest file it takes) and which
// io_uring chunking reads a cold file fastest, and makes a profile of it (see tuning.ts).
import * as fs from 'node:fs';
import { originalReadFileSync } from '../common/fs_originals';
import * as os from 'node:os';
import * as path from 'node:path';
import { native, setTuning, tuning } from '../engine/engine';
import { smartRead } from './read_async';
import { evictFromPageCache, pageCacheResidency } from './page_cache';
import { uringAvailability } from './strategies';
import type { Profile, Tuning } from '../engine/tuning';
import { explain } from './explain';

export interface CalibrateOptions {
  /** Where the trial files go (default: os.tmpdir()); the profile is for reads there. */
  dir?: string;
  /** The size of the cold file (default 64 MiB). */
  coldSize?: number;
  /** Fewer sizes and candidates, for a first look or a test. */
  quick?: boolean;
  /** Progress lines. */
  log?: (line: string) => void;
}

export interface WarmMeasurement { size: number; fastPathUs: number; mbPerSec: number }
export interface ColdMeasurement { chunk: number; inFlight: number; mbPerSec: number }

const KiB = 1024;
const MiB = 1024 * KiB;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

// Runs `once` until `budgetMs` has passed (3 to 200 times); its median in µs.
async function timeMedian(once: () => unknown, budgetMs: number): Promise<number> {
  const times: number[] = [];
  const end = performance.now() + budgetMs;
  while (times.length < 3 || (performance.now() < end && times.length < 200)) {
    const t = performance.now();
    await once();
    times.push((performance.now() - t) * 1000);
  }
  return median(times);
}

function writeFile(file: string, size: number): void {
  const block = Buffer.alloc(Math.min(size, MiB), 0x5a);
  const fd = fs.openSync(file, 'w');
  try {
    for (let done = 0; done < size; done += block.length) fs.writeSync(fd, block, 0, Math.min(block.length, size - done));
  } finally {
    fs.closeSync(fd);
  }
}

// The fast path's copy rate: each size read warm, twice over, into a destination in place (a
// recycled block: the second read of a size reuses the first's).
async function measureWarm(dir: string, sizes: number[], log: (line: string) => void): Promise<WarmMeasurement[]> {
  const binding = native!;
  const results: WarmMeasurement[] = [];
  for (const size of sizes) {
    const file = path.join(dir, `warm-${size}`);
    writeFile(file, size);
    try {
      originalReadFileSync(file);
      const first = binding.cachedRead(file, fs.constants.O_RDONLY, -1);
      if (first === null || first === false) {
        log(`  ${size} bytes: not a hit even when cached; no copy rate to measure here`);
        continue;
      }
      const fastPathUs = await timeMedian(() => binding.cachedRead(file, fs.constants.O_RDONLY, -1), 100);
      const mbPerSec = size / fastPathUs;
      results.push({ size, fastPathUs, mbPerSec });
      log(`  warm ${size} bytes: fast path ${fastPathUs.toFixed(1)} µs, ${mbPerSec.toFixed(0)} MB/s`);
    } finally {
      fs.rmSync(file);
    }
  }
  return results;
}

async function measureCold(dir: string, size: number, candidates: Array<[number, number]>, log: (line: string) => void): Promise<ColdMeasurement[] | string> {
  const file = path.join(dir, `cold-${size}`);
  writeFile(file, size);
  try {
    evictFromPageCache(file);
    if (pageCacheResidency(file).cached > size / 10) {
      return `the pages of ${dir} cannot be evicted (${explain(file).device.filesystem}): no cold reads to measure`;
    }
    const results: ColdMeasurement[] = [];
    for (const [chunk, inFlight] of candidates) {
      setTuning({ uringChunk: chunk, uringInFlight: inFlight });
      let best = 0;
      for (let round = 0; round < 2; round++) {
        evictFromPageCache(file);
        const t = performance.now();
        const bytes = await smartRead(file, { strategy: 'uring' });
        const seconds = (performance.now() - t) / 1000;
        if (bytes.length !== size) throw new Error(`calibrate: read ${bytes.length} of ${size} bytes`);
        best = Math.max(best, size / seconds / 1e6);
      }
      results.push({ chunk, inFlight, mbPerSec: best });
      log(`  cold ${size} bytes, chunks of ${chunk / MiB} MiB, ${inFlight} in flight: ${best.toFixed(0)} MB/s`);
    }
    return results;
  } finally {
    fs.rmSync(file, { force: true });
  }
}

/** Measures, chooses thresholds and returns the profile (also applied to this thread). */
export async function calibrate(options: CalibrateOptions = {}): Promise<Profile> {
  const log = options.log ?? (() => {});
  if (!native) throw new Error('smartread calibrate needs the native addon: the pure-JS engine has no thresholds to set');
  const ring = uringAvailability();
  if (typeof ring === 'string') throw new Error(`smartread calibrate measures io_uring, which is unavailable here: ${ring}`);
  const parent = options.dir ?? os.tmpdir();
  const dir = fs.mkdtempSync(path.join(parent, 'smartread-calibrate-'));
  const before = tuning();
  try {
    const quick = options.quick === true;
    // Sizes whose copy is most of the read (a small file's read is mostly its syscalls).
    const sizes = quick ? [MiB, 4 * MiB] : [256 * KiB, MiB, 4 * MiB, 16 * MiB];
    const coldSize = options.coldSize ?? 64 * MiB;
    const candidates: Array<[number, number]> = [];
    for (const chunk of quick ? [MiB, 2 * MiB, 4 * MiB] : [MiB, 2 * MiB, 4 * MiB, 8 * MiB]) {
      for (const inFlight of quick ? [4, 8] : [4, 8, 16]) candidates.push([chunk, inFlight]);
    }
    // Room for every size on the fast path while it is measured.
    setTuning({ fastPathBudgetUs: 1_000_000 });
    log(`warm reads in ${dir}:`);
    const warm = await measureWarm(dir, sizes, log);
    setTuning(before);
    log('cold reads through io_uring:');
    const cold = await measureCold(dir, coldSize, candidates, log);

    const chosen: Tuning = { ...before };
    // The slowest rate measured: the budget must hold for every size.
    if (warm.length > 0) chosen.copyRateMBps = Math.max(1, Math.floor(Math.min(...warm.map((w) => w.mbPerSec))));
    if (typeof cold !== 'string') {
      const best = cold.reduce((a, b) => (b.mbPerSec > a.mbPerSec ? b : a));
      chosen.uringChunk = best.chunk;
      chosen.uringInFlight = best.inFlight;
    }
    setTuning(chosen);
    return {
      version: 1,
      tuning: chosen,
      createdAt: new Date().toISOString(),
      machine: { cpu: os.cpus()[0]?.model, cores: os.cpus().length, kernel: os.release(), node: process.version },
      directory: parent,
      device: explain(parent).device,
      warm,
      cold: typeof cold === 'string' ? { skipped: cold } : cold,
    };
  } catch (err) {
    setTuning(before);
    throw err;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The profile's findings as the table `smartread calibrate` prints. */
export function profileTable(profile: Profile): string {
  const warm = profile.warm as WarmMeasurement[];
  const cold = profile.cold as ColdMeasurement[] | { skipped: string };
  const lines = ['warm (cached) reads on the fast path, median:', '  size        µs          MB/s'];
  for (const w of warm) {
    const size = w.size >= MiB ? `${w.size / MiB} MiB` : `${w.size / KiB} KiB`;
    lines.push(`  ${size.padEnd(10)}  ${w.fastPathUs.toFixed(1).padStart(9)}  ${w.mbPerSec.toFixed(0).padStart(9)}`);
  }
  if (Array.isArray(cold)) {
    lines.push('', 'cold reads through io_uring:', '  chunk     in flight   MB/s');
    for (const c of cold) lines.push(`  ${`${c.chunk / MiB} MiB`.padEnd(8)}  ${String(c.inFlight).padStart(9)}   ${c.mbPerSec.toFixed(0).padStart(5)}`);
  } else {
    lines.push('', `cold reads: ${cold.skipped}`);
  }
  const t = profile.tuning;
  lines.push('', `chosen: copyRateMBps ${t.copyRateMBps} (with fastPathBudgetUs ${t.fastPathBudgetUs}, not measured: the fast path takes files up to ${t.fastPathBudgetUs * t.copyRateMBps} bytes), uringChunk ${t.uringChunk}, uringInFlight ${t.uringInFlight}, uringAsyncFrom ${t.uringAsyncFrom} (not measured)`);
  return lines.join('\n');
}
