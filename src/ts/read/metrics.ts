// What smartread has read, per strategy: counts, bytes, errors, fast-path hits and misses, and
// (while someone looks) a latency histogram; also published on a diagnostics channel.
import * as diagnosticsChannel from 'node:diagnostics_channel';
import { native } from '../engine/engine';

/** What served a read: the cache-hit fast path, an engine, or the pure-JS fallback. */
export type ServedBy = 'fast-path' | 'uring' | 'threadpool' | 'sync' | 'mmap' | 'js';
const servedByNames: readonly ServedBy[] = ['fast-path', 'uring', 'threadpool', 'sync', 'mmap', 'js'];

/** Upper bounds of the latency histogram's buckets, in seconds (the last one is +Inf). */
export const latencyBuckets: readonly number[] = [
  5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2, 5e-2, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

/** What one engine (or the fast path) has read in this thread. */
export interface StrategyMetrics {
  /** Reads that ended, with bytes or with an error. */
  reads: number;
  /** Bytes returned. */
  bytes: number;
  /** Reads that failed. */
  errors: number;
  /** Timed reads (only while latency is recorded: see metrics.enableLatency). */
  latency: {
    /** How many reads were timed. */
    count: number;
    /** Their total time, in seconds. */
    sumSeconds: number;
    /** The histogram: how many took at most `le` seconds (cumulative, as Prometheus's). */
    buckets: Array<{
      /** The bucket's upper bound in seconds (Infinity for the last). */
      le: number;
      /** Reads that took at most `le` seconds. */
      count: number;
    }>;
  };
}

/** What `metrics()` returns: every counter of this thread at the time of the call. */
export interface MetricsSnapshot {
  /** Reads, bytes, errors and latencies by what served each read. */
  strategies: Record<ServedBy, StrategyMetrics>;
  /** Failed reads by error code (ENOENT, ERR_FS_FILE_TOO_LARGE, ABORT_ERR...). */
  errorsByCode: Record<string, number>;
  /** Reads 'auto' served from memory on the calling thread, and those it passed on. */
  fastPath: {
    /** Reads the fast path answered. */
    hits: number;
    /** Reads it passed on to io_uring or the thread pool. */
    misses: number;
    /** Of those misses, files whose path and pages were in memory but too large to copy within
     * the fast path's budget (`tuning().fastPathBudgetUs`): opened at once and read in parallel
     * chunks. */
    tooLarge: number;
    /** Where the kernel will not say whether a read would wait (overlayfs, FUSE, NFS refuse
     * RWF_NOWAIT), how the fast path decided, judging from earlier reads: `firstRead` (not read
     * lately, or changed: to the engines), `recentRead` (read lately: on the calling thread),
     * `resident` / `notResident` (a large file read lately whose pages were / were not all in
     * memory), `cooling` (its filesystem's reads on the calling thread waited too often lately:
     * to the engines); and `misjudged`, reads on the calling thread that took longer than the
     * fast path's budget (the file, and after three within 64 reads its filesystem, then go to
     * the engines). Counted since the thread started, or the last reset(). */
    judged: FastPathJudgements;
  };
  /** This thread's pool of recycled blocks for large results (see tuning().blockPoolFrom):
   * the bytes and blocks it holds idle, those results hold now, the results that got a
   * recycled block (hits) or a new one (misses) or were left to Node's allocator (declined),
   * the blocks given back to the system; and the bytes the pools of every thread of the process
   * hold mapped, idle or lent. */
  blockPool: BlockPoolMetrics;
  /** Whether reads are being counted (metrics.enable). */
  enabled: boolean;
  /** Whether their latencies are recorded (metrics.enableLatency). */
  latencyEnabled: boolean;
}

/** This thread's pool of recycled blocks for large results (all 0 on the pure-JS engine). */
export interface BlockPoolMetrics {
  /** Bytes the pool holds with no result in them. */
  idleBytes: number;
  /** Blocks the pool holds with no result in them. */
  idleBlocks: number;
  /** Bytes of blocks that results (Buffers not yet collected) hold now. */
  lentBytes: number;
  /** Blocks that results hold now. */
  lentBlocks: number;
  /** Results that got a recycled block. */
  hits: number;
  /** Results that got a new block. */
  misses: number;
  /** Blocks given back to the system: idle too long, past the bound, or at teardown. */
  released: number;
  /** Large results left to Node's allocator: the turn of the event loop had mapped its share of
   * new blocks (a synchronous loop, whose blocks cannot come back before the loop turns). */
  declined: number;
  /** Bytes the pools of every thread of the process hold mapped, idle or lent. */
  processBytes: number;
}

/** See MetricsSnapshot.fastPath.judged. */
export interface FastPathJudgements {
  /** Not read lately, or changed since: left to the engines, and remembered. */
  firstRead: number;
  /** Read lately, unchanged: read on the calling thread. */
  recentRead: number;
  /** A large file read lately whose pages were all in memory: read on the calling thread. */
  resident: number;
  /** A large file read lately whose pages were not all in memory: left to the engines. */
  notResident: number;
  /** Its filesystem's reads on the calling thread waited too often lately: left to the engines. */
  cooling: number;
  /** Reads on the calling thread that took longer than the fast path's budget. */
  misjudged: number;
}

const noJudgements: FastPathJudgements = { firstRead: 0, recentRead: 0, resident: 0, notResident: 0, cooling: 0, misjudged: 0 };
// The addon's counts since the thread started; reset() keeps where they were.
const judgedZero: FastPathJudgements = { ...noJudgements };

function fastPathJudgements(): FastPathJudgements {
  const now = native?.blindReadsStats() ?? noJudgements;
  const out = { ...noJudgements };
  for (const key of Object.keys(out) as Array<keyof FastPathJudgements>) out[key] = now[key] - judgedZero[key];
  return out;
}

// The pool's counters are the addon's, since it started; reset() keeps where they were.
const blockPoolZero = { hits: 0, misses: 0, released: 0, declined: 0 };

function blockPoolMetrics(): BlockPoolMetrics {
  const stats = native?.blockPoolStats() ?? null;
  if (stats === null) return { idleBytes: 0, idleBlocks: 0, lentBytes: 0, lentBlocks: 0, hits: 0, misses: 0, released: 0, declined: 0, processBytes: 0 };
  return {
    ...stats,
    hits: stats.hits - blockPoolZero.hits,
    misses: stats.misses - blockPoolZero.misses,
    released: stats.released - blockPoolZero.released,
    declined: stats.declined - blockPoolZero.declined,
  };
}

interface Counters {
  reads: number;
  bytes: number;
  errors: number;
  timed: number;
  sumSeconds: number;
  // Non-cumulative counts per bucket; the last is for latencies above every bound.
  buckets: Float64Array;
}

const counters = new Map<ServedBy, Counters>(servedByNames.map((name) => [name, {
  reads: 0, bytes: 0, errors: 0, timed: 0, sumSeconds: 0, buckets: new Float64Array(latencyBuckets.length + 1),
}]));
const errorsByCode = new Map<string, number>();
const fastPath = { hits: 0, misses: 0, tooLarge: 0 };

/** Every ended read is published here ({ path, strategy, bytes, seconds, error }) to subscribers. */
export const readChannel = diagnosticsChannel.channel('smartread:read');

let latencyEnabled = process.env.SMARTREAD_METRICS === '1';
// Counting itself can be turned off (SMARTREAD_METRICS=0, metrics.enable(false)).
let countingEnabled = process.env.SMARTREAD_METRICS !== '0';

/** Whether a read should be timed: someone records latencies or listens on the channel. */
export function timing(): boolean {
  return latencyEnabled || readChannel.hasSubscribers;
}

export function countFastPath(hit: boolean): void {
  if (!countingEnabled) return;
  if (hit) fastPath.hits++;
  else fastPath.misses++;
}

/** A miss of a cached file too large for the fast path (counted as a miss too). */
export function countTooLarge(): void {
  if (countingEnabled) fastPath.tooLarge++;
}

/** Accounts for one ended read; `started` is a performance.now() reading, or -1 if not timed. */
export function recordRead(servedBy: ServedBy, path: unknown, result: Buffer | string | Error, started: number): void {
  if (!countingEnabled && started < 0) return;
  const c = counters.get(servedBy)!;
  const failed = result instanceof Error;
  const bytes = failed ? 0 : typeof result === 'string' ? Buffer.byteLength(result) : result.length;
  if (countingEnabled) {
    c.reads++;
    if (failed) {
      c.errors++;
      const code = String((result as NodeJS.ErrnoException).code ?? 'UNKNOWN');
      errorsByCode.set(code, (errorsByCode.get(code) ?? 0) + 1);
    } else {
      c.bytes += bytes;
    }
  }
  if (started < 0) return;
  const seconds = (performance.now() - started) / 1000;
  if (latencyEnabled && countingEnabled) {
    c.timed++;
    c.sumSeconds += seconds;
    let i = 0;
    while (i < latencyBuckets.length && seconds > latencyBuckets[i]) i++;
    c.buckets[i]++;
  }
  if (readChannel.hasSubscribers) {
    readChannel.publish({ path, strategy: servedBy, bytes, seconds, error: failed ? result : undefined });
  }
}

function snapshot(): MetricsSnapshot {
  const strategies = {} as Record<ServedBy, StrategyMetrics>;
  for (const [name, c] of counters) {
    let cumulative = 0;
    const buckets = latencyBuckets.map((le, i) => ({ le, count: (cumulative += c.buckets[i]) }));
    buckets.push({ le: Infinity, count: cumulative + c.buckets[latencyBuckets.length] });
    strategies[name] = {
      reads: c.reads, bytes: c.bytes, errors: c.errors,
      latency: { count: c.timed, sumSeconds: c.sumSeconds, buckets },
    };
  }
  return {
    strategies,
    errorsByCode: Object.fromEntries(errorsByCode),
    fastPath: { ...fastPath, judged: fastPathJudgements() },
    blockPool: blockPoolMetrics(),
    enabled: countingEnabled,
    latencyEnabled: latencyEnabled && countingEnabled,
  };
}

interface Sample {
  metricName?: string;
  labels: Record<string, string>;
  value: number;
}

interface Family {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  values: Sample[];
}

// The metrics as Prometheus families: what metrics.prometheus() prints and prom-client serves.
function families(): Family[] {
  const s = snapshot();
  const perStrategy = (pick: (m: StrategyMetrics) => number) =>
    servedByNames.map((strategy) => ({ labels: { strategy }, value: pick(s.strategies[strategy]) }));
  const latency: Sample[] = [];
  for (const strategy of servedByNames) {
    const { count, sumSeconds, buckets } = s.strategies[strategy].latency;
    for (const b of buckets) {
      latency.push({
        metricName: 'smartread_read_duration_seconds_bucket',
        labels: { strategy, le: b.le === Infinity ? '+Inf' : String(b.le) },
        value: b.count,
      });
    }
    latency.push({ metricName: 'smartread_read_duration_seconds_sum', labels: { strategy }, value: sumSeconds });
    latency.push({ metricName: 'smartread_read_duration_seconds_count', labels: { strategy }, value: count });
  }
  return [
    { name: 'smartread_reads_total', help: 'Reads that ended, by what served them.', type: 'counter', values: perStrategy((m) => m.reads) },
    { name: 'smartread_read_bytes_total', help: 'Bytes returned by reads, by what served them.', type: 'counter', values: perStrategy((m) => m.bytes) },
    {
      name: 'smartread_read_errors_total', help: 'Reads that failed, by error code.', type: 'counter',
      values: Object.entries(s.errorsByCode).map(([code, value]) => ({ labels: { code }, value })),
    },
    {
      name: 'smartread_fast_path_total', help: "Reads 'auto' tried on the cache-hit fast path, by outcome.", type: 'counter',
      values: [{ labels: { outcome: 'hit' }, value: s.fastPath.hits }, { labels: { outcome: 'miss' }, value: s.fastPath.misses }],
    },
    {
      name: 'smartread_fast_path_too_large_total',
      help: 'Misses of the fast path on files in memory but too large to copy within its budget, read in parallel chunks.',
      type: 'counter',
      values: [{ labels: {}, value: s.fastPath.tooLarge }],
    },
    {
      name: 'smartread_fast_path_judged_total',
      help: 'Decisions of the fast path on filesystems that refuse non-blocking reads (overlayfs, FUSE), by judgement; misjudged: reads on the calling thread that took too long.',
      type: 'counter',
      values: Object.entries(s.fastPath.judged).map(([judgement, value]) => ({ labels: { judgement }, value })),
    },
    {
      name: 'smartread_block_pool_bytes', help: 'Bytes of recycled blocks for large results, idle in the pool or lent to results.', type: 'gauge',
      values: [{ labels: { state: 'idle' }, value: s.blockPool.idleBytes }, { labels: { state: 'lent' }, value: s.blockPool.lentBytes }],
    },
    {
      name: 'smartread_block_pool_takes_total', help: "Large results read into a recycled block (hit), a new one (miss), or Node's memory (declined).", type: 'counter',
      values: [
        { labels: { outcome: 'hit' }, value: s.blockPool.hits }, { labels: { outcome: 'miss' }, value: s.blockPool.misses },
        { labels: { outcome: 'declined' }, value: s.blockPool.declined },
      ],
    },
    {
      name: 'smartread_read_duration_seconds', help: 'Latency of reads, by what served them (recorded while enabled).',
      type: 'histogram', values: latency,
    },
  ];
}

// Prometheus label values escape backslash, double quote and newline.
function labelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function prometheusText(): string {
  const lines: string[] = [];
  for (const family of families()) {
    lines.push(`# HELP ${family.name} ${family.help}`, `# TYPE ${family.name} ${family.type}`);
    for (const sample of family.values) {
      const labels = Object.entries(sample.labels).map(([k, v]) => `${k}="${labelValue(v)}"`).join(',');
      lines.push(`${sample.metricName ?? family.name}${labels ? `{${labels}}` : ''} ${sample.value}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** What registerPromClient needs of a prom-client Registry. */
export interface PromClientRegistry {
  /**
   * Adds a metric (a collector that reads smartread's counters at each scrape).
   *
   * @param metric - A prom-client metric.
   */
  registerMetric(metric: unknown): void;
}

// The same families as collectors of a prom-client registry, read at each scrape.
function registerPromClient(registry?: PromClientRegistry): void {
  let target = registry;
  if (target === undefined) {
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      target = (require('prom-client') as { register: PromClientRegistry }).register;
    } catch (err) {
      throw Object.assign(new Error(`smartread: prom-client is not installed (${(err as Error).message}); pass a registry or npm install prom-client`), { code: 'ERR_SMARTREAD_NO_PROM_CLIENT' });
    }
  }
  for (const { name, help, type } of families()) {
    target.registerMetric({
      name,
      help,
      type,
      aggregator: 'sum',
      get: async () => ({ ...families().find((f) => f.name === name)!, aggregator: 'sum' }),
      reset: () => undefined,
    });
  }
  latencyEnabled = true;
}

/**
 * The type of {@link metrics}: a function that returns a snapshot, with the methods that
 * export, switch and reset the counters.
 */
export interface Metrics {
  /** A snapshot of every counter. */
  (): MetricsSnapshot;
  /** The same in Prometheus's text exposition format. */
  prometheus(): string;
  /**
   * Starts (or stops) timing every read into the latency histogram.
   *
   * @param on - true (the default) to time reads, false to stop.
   */
  enableLatency(on?: boolean): void;
  /**
   * Turns counting on (the default) or off (also SMARTREAD_METRICS=0); the channel still publishes.
   *
   * @param on - true (the default) to count reads, false to stop.
   */
  enable(on?: boolean): void;
  /** Zeroes every counter (between test phases, or after a scrape that resets). */
  reset(): void;
  /**
   * Registers the same metrics in a prom-client registry and starts recording latencies.
   *
   * @param registry - A prom-client Registry; its default one when none is given (prom-client
   * must then be installed).
   */
  registerPromClient(registry?: PromClientRegistry): void;
}

/**
 * What smartread has read in this thread, by what served each read: `metrics()` for a
 * snapshot, `metrics.prometheus()` for the Prometheus text format.
 */
export const metrics: Metrics = Object.assign(snapshot, {
  prometheus: prometheusText,
  registerPromClient,
  enableLatency(on = true) {
    latencyEnabled = on;
  },
  enable(on = true) {
    countingEnabled = on;
  },
  reset() {
    for (const c of counters.values()) {
      c.reads = c.bytes = c.errors = c.timed = c.sumSeconds = 0;
      c.buckets.fill(0);
    }
    errorsByCode.clear();
    fastPath.hits = fastPath.misses = fastPath.tooLarge = 0;
    Object.assign(judgedZero, native?.blindReadsStats() ?? noJudgements);
    const stats = native?.blockPoolStats() ?? null;
    if (stats !== null) Object.assign(blockPoolZero, { hits: stats.hits, misses: stats.misses, released: stats.released, declined: stats.declined });
  },
});
