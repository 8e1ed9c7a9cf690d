// How long the event loop was kept from running while an async driver read: the figure that
// separates a reader that waits off the JS thread from one that only looks asynchronous.
//
// perf_hooks.monitorEventLoopDelay fires a libuv timer (no JavaScript) every RESOLUTION_MS and
// records the time between firings, so a recorded value is the resolution plus how late the
// timer was; the stall is that minus the resolution. A stall shorter than the resolution can go
// unseen, hence 1 ms: the timer wakes the loop 1,000 times a second, a few µs each.
//
// The histogram records an interval only between two firings, so a loop held from the start of
// a stretch (a reader whose promises settle in promise reactions, read after read) was not seen
// at all: held 100 ms, it recorded one firing and a stall of 0.12 ms. Each stretch therefore
// also notes when the loop first turned after start(), and that wait counts as a stall too.
//
// A recorder measures stretches: start() … stop(), one per timed run, or one per timed read
// when the trial's own work between reads (evicting files) runs on the JS thread and must not
// count. Each stretch gets a new histogram: one that is disabled and enabled again records
// the whole pause as one interval.
//
// Bun and Deno (the bench's peers, peer_runner.js) implement the same histogram but record how
// late each firing was rather than the interval: idle, their values are near 0, not near the
// resolution. histogramRecordsInterval() tells which a runtime does, and a recorder is told.
//
// V8's own pauses are recorded beside the stalls where the runtime reports them ('gc' performance
// entries: Node does, Bun and Deno do not): the longest pause of any stretch (gcMaxMs) and how
// many there were (gcPauses), null where the runtime has no such entries. A stall within the
// idle floor of the longest GC pause is V8's to shorten, not the reader's: on Node 20 each
// Buffer of 64 MiB and more starts a mark-compact for "external memory pressure", whoever
// allocated it, and its pause of 2-4 ms on this machine kind is the stall of a loop of such reads.
'use strict';
const { monitorEventLoopDelay, PerformanceObserver } = require('node:perf_hooks');

// Whether this runtime reports GC pauses as performance entries. Deno lists 'gc' among the
// supported entry types and never delivers one: only Node's are taken.
function reportsGcPauses() {
  if (typeof globalThis.Bun !== 'undefined' || typeof globalThis.Deno !== 'undefined') return false;
  try {
    return typeof PerformanceObserver === 'function' && PerformanceObserver.supportedEntryTypes.includes('gc');
  } catch {
    return false;
  }
}
const GC_PAUSES = reportsGcPauses();

const RESOLUTION_MS = 1;

// The next turn of the event loop: an immediate where the runtime has them.
const nextTurn = typeof setImmediate === 'function' ? setImmediate : (fn) => setTimeout(fn, 0);

class LoopStallRecorder {
  /** recordsInterval: the histogram's values include the resolution (Node's), see above. */
  constructor({ recordsInterval = true } = {}) {
    this.offsetMs = recordsInterval ? RESOLUTION_MS : 0;
    this.histogram = null;
    this.gcObserver = null;
    this.figures = {
      resolutionMs: RESOLUTION_MS, maxMs: 0, p99Ms: 0, stretches: 0, intervals: 0,
      gcMaxMs: GC_PAUSES ? 0 : null, gcPauses: GC_PAUSES ? 0 : null,
    };
  }

  noteGcPauses(entries) {
    const f = this.figures;
    for (const entry of entries) {
      f.gcPauses++;
      f.gcMaxMs = Math.max(f.gcMaxMs, entry.duration);
    }
  }

  start() {
    if (GC_PAUSES) {
      this.gcObserver = new PerformanceObserver((list) => this.noteGcPauses(list.getEntries()));
      this.gcObserver.observe({ entryTypes: ['gc'] });
    }
    this.histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
    this.histogram.enable();
    const stretch = { startedAt: performance.now(), firstTurnAt: -1 };
    this.stretch = stretch;
    nextTurn(() => {
      stretch.firstTurnAt = performance.now();
    });
  }

  /** Ends the stretch, after letting the timer fire once more: a stall that ends it is seen. */
  async stop() {
    await new Promise((resolve) => setTimeout(resolve, RESOLUTION_MS + 1));
    const h = this.histogram;
    h.disable();
    this.histogram = null;
    if (this.gcObserver) {
      // Entries not yet delivered to the callback are taken here, before the observer goes.
      this.noteGcPauses(this.gcObserver.takeRecords());
      this.gcObserver.disconnect();
      this.gcObserver = null;
    }
    const f = this.figures;
    f.stretches++;
    const { startedAt, firstTurnAt } = this.stretch;
    const heldAtStart = firstTurnAt - startedAt;
    f.maxMs = Math.max(f.maxMs, heldAtStart);
    if (h.count === 0) {
      f.p99Ms = Math.max(f.p99Ms, heldAtStart);
      return;
    }
    f.intervals += h.count;
    f.maxMs = Math.max(f.maxMs, this.stallMs(h.max));
    // Bun's percentiles are the upper edges of its buckets, a little above the largest value.
    f.p99Ms = Math.max(f.p99Ms, this.stallMs(Math.min(h.percentile(99), h.max)));
  }

  stallMs(ns) {
    return Math.max(0, ns / 1e6 - this.offsetMs);
  }

  /**
   * { resolutionMs, maxMs, p99Ms, stretches, intervals, gcMaxMs, gcPauses }: maxMs is the longest
   * stall seen, p99Ms the highest p99 of any one stretch (histograms of separate stretches cannot
   * be merged), gcMaxMs V8's longest pause meanwhile (null where the runtime does not say).
   */
  result() {
    return { ...this.figures };
  }
}

/**
 * The stalls of an event loop with nothing to do for `ms`: the floor under every driver's
 * figures. On a VM the host takes the CPU away now and then, and a loop that only waits stalls
 * for milliseconds too; a driver's stall near this floor is the machine's, not the driver's.
 */
async function idleLoopStall(ms) {
  const recorder = new LoopStallRecorder();
  recorder.start();
  await new Promise((resolve) => setTimeout(resolve, ms));
  await recorder.stop();
  return { ...recorder.result(), durationMs: ms };
}

// An idle loop's timer mostly fires on time to within a fraction of the resolution: the median
// value is near the resolution when intervals are recorded (Node: 1.08-1.3 ms here), near 0 when
// lateness is (Bun: 0.08 ms, Deno: 0.001 ms). Bun's histogram sometimes records nothing for its
// first 25 ms: the probe watches until it has PROBE_INTERVALS values, PROBE_LIMIT_MS at most.
const PROBE_STEP_MS = 25;
const PROBE_INTERVALS = 10;
const PROBE_LIMIT_MS = 1000;

/**
 * Whether this runtime's monitorEventLoopDelay records intervals (true), lateness (false), or
 * records nothing at all (null), from its median value while the loop idles.
 */
async function histogramRecordsInterval() {
  const h = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  h.enable();
  const deadline = performance.now() + PROBE_LIMIT_MS;
  do {
    await new Promise((resolve) => setTimeout(resolve, PROBE_STEP_MS));
  } while (h.count < PROBE_INTERVALS && performance.now() < deadline);
  h.disable();
  if (!(h.count > 0)) return null;
  return h.percentile(50) / 1e6 >= RESOLUTION_MS / 2;
}

/** The figures of several recorders' results as one, in the same terms. */
function poolLoopStalls(results) {
  const present = results.filter(Boolean);
  if (present.length === 0) return null;
  return {
    resolutionMs: RESOLUTION_MS,
    maxMs: Math.max(...present.map((r) => r.maxMs)),
    p99Ms: Math.max(...present.map((r) => r.p99Ms)),
    stretches: present.reduce((sum, r) => sum + r.stretches, 0),
    intervals: present.reduce((sum, r) => sum + r.intervals, 0),
    ...poolGcPauses(present),
  };
}

// Bun's and Deno's results have no GC figures: null unless every result has them.
function poolGcPauses(present) {
  if (!present.every((r) => typeof r.gcMaxMs === 'number' && typeof r.gcPauses === 'number')) {
    return { gcMaxMs: null, gcPauses: null };
  }
  return {
    gcMaxMs: Math.max(...present.map((r) => r.gcMaxMs)),
    gcPauses: present.reduce((sum, r) => sum + r.gcPauses, 0),
  };
}

module.exports = { LoopStallRecorder, poolLoopStalls, idleLoopStall, histogramRecordsInterval, RESOLUTION_MS };
