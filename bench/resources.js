// What a driver's timed operations cost the process beyond time: its peak resident memory and
// its page faults. Page faults are what a reader pays for fresh destination memory (the kernel
// zeroes each new page on first touch) and, for a mapping, for every page it reads.
//
// Figures come from process.resourceUsage() (getrusage) taken before and after one timed run:
// faults are the difference. maxRSS is a high-water mark for the whole process, so before each
// run the mark is reset to the current RSS by writing 5 to /proc/self/clear_refs (Linux 4.0+);
// maxRSS after the run is then this run's peak. Where the reset is refused, the peak is the
// process's since it started, and `peakRssReset: false` says so.
'use strict';
const fs = require('node:fs');

function resetPeakRss() {
  try {
    fs.writeFileSync('/proc/self/clear_refs', '5');
    return true;
  } catch {
    return false;
  }
}

class ResourceRecorder {
  constructor() {
    this.runs = [];
    this.started = null;
  }

  start() {
    const peakRssReset = resetPeakRss();
    const usage = process.resourceUsage();
    this.started = {
      peakRssReset,
      rssBytes: process.memoryUsage.rss(),
      minorFaults: usage.minorPageFault,
      majorFaults: usage.majorPageFault,
    };
  }

  /** Ends the run that start() began, of `operations` timed operations. */
  stop(operations) {
    const usage = process.resourceUsage();
    const s = this.started;
    this.started = null;
    this.runs.push({
      operations,
      peakRssReset: s.peakRssReset,
      rssBeforeBytes: s.rssBytes,
      peakRssBytes: usage.maxRSS * 1024,
      minorFaults: usage.minorPageFault - s.minorFaults,
      majorFaults: usage.majorPageFault - s.majorFaults,
    });
  }

  /** The figures of the runs so far as one (see poolResources). */
  result() {
    return poolResources(this.runs);
  }
}

/**
 * Several runs' figures as one: { operations, peakRssBytes (the highest), peakRssReset (all of
 * them), rssBeforeBytes (the lowest), minorFaults, majorFaults (sums), faultsPerOperation }.
 */
function poolResources(runs) {
  const present = runs.filter(Boolean);
  if (present.length === 0) return null;
  const sum = (key) => present.reduce((total, r) => total + r[key], 0);
  const operations = sum('operations');
  const minorFaults = sum('minorFaults');
  const majorFaults = sum('majorFaults');
  return {
    operations,
    peakRssReset: present.every((r) => r.peakRssReset),
    rssBeforeBytes: Math.min(...present.map((r) => r.rssBeforeBytes)),
    peakRssBytes: Math.max(...present.map((r) => r.peakRssBytes)),
    minorFaults,
    majorFaults,
    faultsPerOperation: operations > 0 ? (minorFaults + majorFaults) / operations : null,
  };
}

module.exports = { ResourceRecorder, poolResources };
