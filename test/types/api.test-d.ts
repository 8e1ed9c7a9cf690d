// The public API as typed for a CommonJS user (`require('smartread')`): what each overload
// returns, and misuse the compiler must refuse (each @ts-expect-error line must be an error).
import {
  smartReadSync, smartRead, readMany, explain, metrics, engineInfo, prefetch, tuning, setTuning, useProfile,
  evictFromPageCache, pageCacheResidency, AbortError, createReader, mapFile, readInto, readIntoSync, openReader,
  type ConfinedReader, type ConfinedStats, type MappedBuffer, type Reader,
  type EngineInfo, type Explanation, type MetricsSnapshot, type SettledRead, type Strategy, type Tuning,
  type PrefetchResult, type FsError,
} from 'smartread';
import { expectType } from './assert';
import { open } from 'node:fs/promises';

const url = new URL('file:///etc/hosts');
const signal = new AbortController().signal;

// smartReadSync: Buffer without an encoding, string with one, either when it is not known.
expectType<Buffer>()(smartReadSync('/etc/hosts'));
expectType<Buffer>()(smartReadSync(Buffer.from('/etc/hosts'), null));
expectType<Buffer>()(smartReadSync(url, { flag: 'r' }));
expectType<Buffer>()(smartReadSync(3, { encoding: null }));
expectType<string>()(smartReadSync('/etc/hosts', 'utf8'));
expectType<string>()(smartReadSync('/etc/hosts', { encoding: 'latin1', flag: 'r' }));
declare const someEncoding: BufferEncoding | undefined;
expectType<string | Buffer>()(smartReadSync('/etc/hosts', { encoding: someEncoding }));
// @ts-expect-error: not an encoding
smartReadSync('/etc/hosts', 'utf-9');
// @ts-expect-error: a path is required
smartReadSync();
// @ts-expect-error: not a path
smartReadSync({ path: '/etc/hosts' });
// @ts-expect-error: a string result is not a Buffer
const notBuffer: Buffer = smartReadSync('/etc/hosts', 'utf8');
void notBuffer;

async function asyncApi(): Promise<void> {
  // smartRead: the same, as promises; strategy and signal are options.
  expectType<Promise<Buffer>>()(smartRead('/etc/hosts'));
  expectType<Buffer>()(await smartRead('/etc/hosts', { strategy: 'uring', signal }));
  expectType<string>()(await smartRead(url, { encoding: 'utf8', strategy: 'threadpool' }));
  expectType<string>()(await smartRead('/etc/hosts', 'base64'));
  expectType<string | Buffer>()(await smartRead('/etc/hosts', { encoding: someEncoding }));
  // A FileHandle, as fs.promises.readFile takes one (not smartReadSync, as not fs.readFileSync).
  const handle = await open('/etc/hosts');
  expectType<string>()(await smartRead(handle, 'utf8'));
  expectType<Buffer[]>()(await readMany([handle, '/etc/hosts', 3]));
  expectType<number>()(readIntoSync(handle, Buffer.alloc(4)));
  // @ts-expect-error: fs.readFileSync takes no FileHandle, nor does smartReadSync
  smartReadSync(handle);
  // @ts-expect-error: not a strategy
  await smartRead('/etc/hosts', { strategy: 'fastest' });
  // @ts-expect-error: smartRead returns a promise, not a Buffer
  const sync: Buffer = smartRead('/etc/hosts');
  void sync;

  // readMany: Buffers, strings with an encoding, settled results with settle: true.
  expectType<Buffer[]>()(await readMany(['/a', '/b']));
  expectType<Buffer[]>()(await readMany(new Set(['/a', url]), { concurrency: 8, strategy: 'auto' }));
  expectType<string[]>()(await readMany(['/a'], 'utf8'));
  expectType<string[]>()(await readMany(['/a'], { encoding: 'hex', signal }));
  const settled = await readMany(['/a', '/b'], { settle: true });
  expectType<SettledRead<Buffer | string>[]>()(settled);
  for (const r of settled) {
    if (r.status === 'fulfilled') expectType<Buffer | string>()(r.value);
    else expectType<Error>()(r.reason);
  }
  // @ts-expect-error: readMany takes a list of paths
  await readMany(42);
  // @ts-expect-error: a string is one path, not a list of them (readMany refuses it)
  await readMany('/a');
  expectType<Buffer[]>()(await readMany((function* paths() { yield '/a'; yield 3; })()));
  // @ts-expect-error: concurrency is a number
  await readMany(['/a'], { concurrency: '8' });

  // prefetch
  expectType<PrefetchResult>()(await prefetch(['/a', url]));
  // @ts-expect-error: prefetch takes paths, not descriptors
  await prefetch([3]);
  // @ts-expect-error: a string is one path, not a list of them
  await prefetch('/a');
}
void asyncApi;

// explain: the way, the reason, the device.
const e = explain('/etc/hosts', { strategy: 'auto', flag: 'r' });
expectType<Explanation>()(e);
expectType<'fast-path' | 'uring' | 'uring-chunked' | 'threadpool' | 'sync' | 'mmap' | 'js'>()(e.strategy);
expectType<string>()(e.reason);
// @ts-expect-error: explain never reads, so it takes no encoding
explain('/etc/hosts', { encoding: 'utf8' });

// metrics: a callable snapshot with methods.
const snapshot = metrics();
expectType<MetricsSnapshot>()(snapshot);
expectType<number>()(snapshot.strategies.uring.bytes);
expectType<number>()(snapshot.fastPath.hits);
expectType<number>()(snapshot.blockPool.idleBytes);
expectType<string>()(metrics.prometheus());
metrics.enableLatency();
metrics.enable(false);
metrics.reset();
expectType<number>()(snapshot.strategies.mmap.reads);
// @ts-expect-error: there is no such strategy to count
void snapshot.strategies.bogus;

// engineInfo: which engine, and io_uring's state with the reason when it is unavailable.
const info = engineInfo();
expectType<EngineInfo>()(info);
expectType<'native' | 'js'>()(info.engine);
expectType<string[]>()(info.tried);
if (!info.uring.available) expectType<string>()(info.uring.reason);
// @ts-expect-error: a reason only when io_uring is unavailable
void info.uring.reason;
expectType<boolean>()(info.hugePages.advised);
expectType<string>()(info.hugePages.reason);

// tuning
expectType<Tuning>()(tuning());
expectType<Tuning>()(setTuning({ fastPathBudgetUs: 250, blockPoolMaxBytes: 64 << 20 }));
expectType<Tuning>()(useProfile('./smartread-profile.json'));
// @ts-expect-error: not a threshold
setTuning({ fastPath: 1 });

// page cache and errors
evictFromPageCache('/etc/hosts');
expectType<{ size: number; cached: number }>()(pageCacheResidency('/etc/hosts'));
const strategy: Strategy = 'threadpool';
void strategy;
// @ts-expect-error: not a strategy
const unknownStrategy: Strategy = 'fastest';
void unknownStrategy;
const abort = new AbortError();
expectType<'ABORT_ERR'>()(abort.code);
declare const err: FsError;
expectType<string>()(err.code);

// Confined reads: a reader over one root, with the readers' own overloads.
const site: ConfinedReader = createReader({ root: '/srv/www', noSymlinks: true });
expectType<ConfinedStats>()(site.statSync('index.html'));
expectType<Promise<Buffer>>()(site.readRange('index.html', 0, 10));
expectType<Buffer | string>()(site.smartReadSync('index.html'));
site.close();
// @ts-expect-error: a root is a path, not a number
createReader({ root: 3 });

// mapFile, readInto and openReader.
const mapped = mapFile('/data/big.bin', { offset: 4096, length: 8192, advice: 'sequential', populate: true });
expectType<MappedBuffer>()(mapped);
expectType<boolean>()(mapped.mapped);
mapped.close();
// @ts-expect-error: not an advice madvise has
mapFile('/data/big.bin', { advice: 'fast' });
expectType<number>()(readIntoSync('/etc/hosts', Buffer.alloc(10), { position: 0 }));
async function positional() {
  const into = await readInto('/etc/hosts', new Uint8Array(10));
  expectType<number>()(into.bytesRead);
  expectType<Uint8Array<ArrayBuffer>>()(into.buffer);
  const reader = await openReader('/etc/hosts');
  expectType<Reader>()(reader);
  expectType<Promise<Buffer>>()(reader.read(0, 10));
  await reader.close();
}
void positional;
