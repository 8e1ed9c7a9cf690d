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

// What the machine's CPUs did while a cold run's operations ran, and how much of it went to the
// process that read and to a FUSE daemon: on a mount whose daemon runs on the same CPUs, a reader
// that keeps the CPUs busy has reached the machine's floor, whatever its queue depth (a network
// filesystem's server would run elsewhere). Figures come from /proc/stat and /proc/PID/stat, in
// clock ticks (USER_HZ, 100 a second): a cold operation takes 0.1-0.3 s on two CPUs, 20-60 ticks,
// and a driver's operations of all rounds are pooled. Linux only; elsewhere there is none.

// [busy, total] ticks of every CPU since boot: total less idle and iowait is busy (guest time is
// counted in user already).
function machineTicks() {
  const fields = fs.readFileSync('/proc/stat', 'latin1').split('\n', 1)[0].trim().split(/\s+/).slice(1, 9).map(Number);
  const total = fields.reduce((sum, n) => sum + n, 0);
  return [total - fields[3] - fields[4], total];
}

// The user and system ticks of every thread of process `pid` (io_uring's workers are threads of
// the process that made the ring), or null when it is gone.
function processTicks(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    // The name, in parentheses, may hold spaces; utime and stime are the 14th and 15th fields.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return null;
  }
}

/**
 * Sums the CPU ticks of windows, start() … stop(): the machine's busy and total ticks, and those
 * of the processes named in `pids` ({ reader, daemon }, each a pid or null).
 */
class CpuRecorder {
  constructor(pids) {
    this.pids = Object.entries(pids).filter(([, pid]) => Number.isInteger(pid));
    this.sums = { busy: 0, total: 0, ...Object.fromEntries(this.pids.map(([name]) => [name, 0])) };
    this.started = null;
    this.available = fs.existsSync('/proc/stat');
  }

  start() {
    if (!this.available) return;
    const [busy, total] = machineTicks();
    this.started = { busy, total, processes: this.pids.map(([, pid]) => processTicks(pid)) };
  }

  stop() {
    const s = this.started;
    this.started = null;
    if (!s) return;
    const [busy, total] = machineTicks();
    this.sums.busy += busy - s.busy;
    this.sums.total += total - s.total;
    this.pids.forEach(([name, pid], i) => {
      const now = processTicks(pid);
      if (now !== null && s.processes[i] !== null) this.sums[name] += now - s.processes[i];
    });
  }

  /** The ticks summed so far, or null when none were counted (see poolCpu). */
  result() {
    return this.available && this.sums.total > 0 ? { ...this.sums } : null;
  }
}

// The fewest ticks the windows must count for the reader's and the daemon's shares: a process's
// ticks and the machine's are read at different moments, a tick or so apart, so over a handful
// of ticks a share means nothing (a tiny run counted 1 machine tick and 2 of the reader's). A
// cold run of the bench counts hundreds.
const MIN_SHARE_TICKS = 50;

/**
 * Several runs' CPU ticks (CpuRecorder's result) as shares of every CPU's time over the windows:
 * { busy, reader, daemon } (reader and daemon null where not watched, or where the windows
 * counted fewer than MIN_SHARE_TICKS), and the ticks counted.
 */
function poolCpu(runs) {
  const present = runs.filter(Boolean);
  if (present.length === 0) return null;
  const sum = (key) => present.reduce((total, r) => total + (r[key] ?? 0), 0);
  const total = sum('total');
  if (total === 0) return null;
  const share = (key) => (total >= MIN_SHARE_TICKS && present.every((r) => r[key] !== undefined) ? sum(key) / total : null);
  return { busy: sum('busy') / total, reader: share('reader'), daemon: share('daemon'), ticks: total };
}

module.exports = { ResourceRecorder, poolResources, CpuRecorder, poolCpu, MIN_SHARE_TICKS };
