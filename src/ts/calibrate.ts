// smartread calibrate: measures, on this machine and in one directory, where the fast path stops
// paying (warm reads by size) and which io_uring chunking reads a cold file fastest, and makes
// a profile of it (see tuning.ts).
import * as fs from 'node:fs';
import { originalReadFileSync } from './fs_originals';
import * as os from 'node:os';
import * as path from 'node:path';
import { native } from './engine';
import { smartRead } from './read_async';
import { evictFromPageCache, pageCacheResidency } from './page_cache';
import { uringAvailability } from './strategies';
import { setTuning, tuning, type Profile, type Tuning } from './tuning';
import { explain, memoryFilesystems } from './explain';

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

export interface WarmMeasurement { size: number; fastPathUs: number; uringUs: number; fastPath: boolean }
export interface ColdMeasurement { chunk: number; inFlight: number; mbPerSec: number }

// A hit holds the event loop while it copies: the fast path takes a size only while a hit
// costs at most this, and no more than io_uring's whole read of it.
export const kLoopBudgetUs = 200;

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

async function measureWarm(dir: string, sizes: number[], log: (line: string) => void): Promise<WarmMeasurement[]> {
  const binding = native!;
  const results: WarmMeasurement[] = [];
  for (const size of sizes) {
    const file = path.join(dir, `warm-${size}`);
    writeFile(file, size);
    originalReadFileSync(file);
    if (binding.cachedRead(file, fs.constants.O_RDONLY, -1) === null) {
      log(`  ${size} bytes: not a hit even when cached; the fast path stops here`);
      results.push({ size, fastPathUs: NaN, uringUs: NaN, fastPath: false });
      break;
    }
    const fastPathUs = await timeMedian(() => binding.cachedRead(file, fs.constants.O_RDONLY, -1), 100);
    const uringUs = await timeMedian(() => smartRead(file, { strategy: 'uring' }), 100);
    const fastPath = fastPathUs <= kLoopBudgetUs && fastPathUs <= uringUs;
    results.push({ size, fastPathUs, uringUs, fastPath });
    log(`  warm ${size} bytes: fast path ${fastPathUs.toFixed(1)} µs, io_uring ${uringUs.toFixed(1)} µs`);
    fs.rmSync(file);
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
    const sizes = quick ? [4 * KiB, 64 * KiB, 256 * KiB, MiB] : [4 * KiB, 16 * KiB, 64 * KiB, 256 * KiB, MiB, 4 * MiB];
    const coldSize = options.coldSize ?? 64 * MiB;
    const candidates: Array<[number, number]> = [];
    for (const chunk of quick ? [MiB, 2 * MiB, 4 * MiB] : [MiB, 2 * MiB, 4 * MiB, 8 * MiB]) {
      for (const inFlight of quick ? [4, 8] : [4, 8, 16]) candidates.push([chunk, inFlight]);
    }
    setTuning({ fastPathMax: 64 * MiB, fastPathMaxInMemory: 64 * MiB });
    log(`warm reads in ${dir}:`);
    const warm = await measureWarm(dir, sizes, log);
    setTuning(before);
    log('cold reads through io_uring:');
    const cold = await measureCold(dir, coldSize, candidates, log);

    const chosen: Tuning = { ...before };
    // The largest size up to which every measured size was for the fast path.
    let fastPathMax = 0;
    for (const w of warm) {
      if (!w.fastPath) break;
      fastPathMax = w.size;
    }
    // On tmpfs or ramfs it is their own limit that was measured.
    if (memoryFilesystems.includes(explain(dir).device.filesystem)) chosen.fastPathMaxInMemory = fastPathMax;
    else chosen.fastPathMax = fastPathMax;
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
      loopBudgetUs: kLoopBudgetUs,
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
  const lines = ['warm (cached) reads, median µs:', '  size        fast path   io_uring   fast path takes it'];
  for (const w of warm) {
    const size = w.size >= MiB ? `${w.size / MiB} MiB` : `${w.size / KiB} KiB`;
    lines.push(`  ${size.padEnd(10)}  ${w.fastPathUs.toFixed(1).padStart(9)}  ${w.uringUs.toFixed(1).padStart(9)}   ${w.fastPath ? 'yes' : 'no'}`);
  }
  if (Array.isArray(cold)) {
    lines.push('', 'cold reads through io_uring:', '  chunk     in flight   MB/s');
    for (const c of cold) lines.push(`  ${`${c.chunk / MiB} MiB`.padEnd(8)}  ${String(c.inFlight).padStart(9)}   ${c.mbPerSec.toFixed(0).padStart(5)}`);
  } else {
    lines.push('', `cold reads: ${cold.skipped}`);
  }
  const t = profile.tuning;
  lines.push('', `chosen: fastPathMax ${t.fastPathMax}, fastPathMaxInMemory ${t.fastPathMaxInMemory}, uringChunk ${t.uringChunk}, uringInFlight ${t.uringInFlight}, uringAsyncFrom ${t.uringAsyncFrom} (not measured)`);
  return lines.join('\n');
}
