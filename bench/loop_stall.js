// How long the event loop was kept from running while an async driver read: the figure that
// separates a reader that waits off the JS thread from one that only looks asynchronous.
//
// perf_hooks.monitorEventLoopDelay fires a libuv timer (no JavaScript) every RESOLUTION_MS and
// records the time between firings, so a recorded value is the resolution plus how late the
// timer was; the stall is that minus the resolution. A stall shorter than the resolution can go
// unseen, hence 1 ms: the timer wakes the loop 1,000 times a second, a few µs each.
//
// A recorder measures stretches: start() … stop(), one per timed run, or one per timed read
// when the trial's own work between reads (evicting files) runs on the JS thread and must not
// count. Each stretch gets a new histogram: one that is disabled and enabled again records
// the whole pause as one interval.
'use strict';
const { monitorEventLoopDelay } = require('node:perf_hooks');

const RESOLUTION_MS = 1;

const stallMs = (ns) => Math.max(0, ns / 1e6 - RESOLUTION_MS);

class LoopStallRecorder {
  constructor() {
    this.histogram = null;
    this.figures = { resolutionMs: RESOLUTION_MS, maxMs: 0, p99Ms: 0, stretches: 0, intervals: 0 };
  }

  start() {
    this.histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
    this.histogram.enable();
  }

  /** Ends the stretch, after letting the timer fire once more: a stall that ends it is seen. */
  async stop() {
    await new Promise((resolve) => setTimeout(resolve, RESOLUTION_MS + 1));
    const h = this.histogram;
    h.disable();
    this.histogram = null;
    const f = this.figures;
    f.stretches++;
    if (h.count === 0) return;
    f.intervals += h.count;
    f.maxMs = Math.max(f.maxMs, stallMs(h.max));
    f.p99Ms = Math.max(f.p99Ms, stallMs(h.percentile(99)));
  }

  /**
   * { resolutionMs, maxMs, p99Ms, stretches, intervals }: maxMs is the longest stall seen,
   * p99Ms the highest p99 of any one stretch (histograms of separate stretches cannot be merged).
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
  };
}

module.exports = { LoopStallRecorder, poolLoopStalls, idleLoopStall, RESOLUTION_MS };
