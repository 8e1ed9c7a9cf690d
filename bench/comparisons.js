// The ratios smartread is judged on, worked out for every trial so that nobody has to divide by
// hand: a smartread reader's ops/s over a peer's (Bun's, Deno's, the C loop's; with --peers) or
// over another reader's, measured in the same trial of the same run. Where the other side is
// "the best" of several readers, it is the one with the most ops/s in that trial, named in the
// result. Each ratio is of the pooled rounds, and per round (the same round of both drivers),
// whose spread is its noise.
'use strict';
const { ofOtherBuild } = require('./against');

const isBunAsync = (d) => d.peer === 'Bun' && d.async;
const isBun = (d) => d.peer === 'Bun';
const named = (name) => (d) => d.name === name;

// shape: the trials it applies to; subject: the driver whose ops/s is divided; against: the
// label of the other side, and of: which drivers make it (the best of them is taken).
const COMPARISONS = [
  { shape: 'file', subject: 'smartReadSync', against: 'Bun readFileSync', of: named('Bun readFileSync') },
  { shape: 'file', subject: 'smartReadSync', against: 'C read', of: named('C read') },
  { shape: 'file', subject: 'smartRead auto', against: 'Bun best async', of: isBunAsync },
  { shape: 'file', subject: 'smartRead auto', against: 'Deno.readFile', of: named('Deno.readFile') },
  { shape: 'file', subject: 'smartRead auto', against: 'fs.readFileSync', of: named('fs.readFileSync') },
  // The most an awaited reader makes of smartReadSync's read (drivers.js): what auto adds to it
  // of its own, and what that floor is against fs.readFileSync's loop.
  { shape: 'file', subject: 'smartRead auto', against: 'smartReadSync, awaited', of: named('smartReadSync, awaited') },
  { shape: 'file', subject: 'smartReadSync, awaited', against: 'fs.readFileSync', of: named('fs.readFileSync') },
  // The least a reader of one file does from every CPU at once: warm, the most this machine's
  // CPUs make of a large file.
  { shape: 'file', subject: 'smartRead auto', against: 'C read, every CPU', of: named('C read, every CPU') },
  // The least an io_uring reader of one file does, waiting for nothing but the ring: what an
  // asynchronous read costs over a synchronous one on this filesystem, whoever makes it.
  { shape: 'file', subject: 'smartRead auto', against: 'C io_uring', of: named('C io_uring') },
  { shape: 'file', subject: 'C io_uring', against: 'C read', of: named('C read') },
  // The most a reader of Node's that returns a new Buffer can make of the first: no read, only
  // the new Buffer and a copy into it; and the two runtimes' allocators at that.
  { shape: 'file', subject: 'new Buffer + copy (no read)', against: 'Bun readFileSync', of: named('Bun readFileSync') },
  { shape: 'file', subject: 'new Buffer + copy (no read)', against: 'Bun new Buffer + copy (no read)', of: named('Bun new Buffer + copy (no read)') },
  // In a +consume trial: the most any reader of Node's can make of the two above, its consumption
  // alone against the peer's read and consumption; and the two runtimes' consumption alone.
  { shape: 'file', subject: 'consume only (no read)', against: 'Bun readFileSync', of: named('Bun readFileSync') },
  { shape: 'file', subject: 'consume only (no read)', against: 'Bun best async', of: isBunAsync },
  { shape: 'file', subject: 'consume only (no read)', against: 'Bun consume only (no read)', of: named('Bun consume only (no read)') },
  { shape: 'files', subject: 'readMany auto ×64', against: 'smartReadSync loop', of: named('smartReadSync loop') },
  { shape: 'files', subject: 'readMany auto ×64', against: 'Bun best', of: isBun },
  { shape: 'files', subject: 'readMany auto ×64', against: 'smartReadSync loop, awaited', of: named('smartReadSync loop, awaited') },
  { shape: 'files', subject: 'smartReadSync loop, awaited', against: 'smartReadSync loop', of: named('smartReadSync loop') },
  { shape: 'files', subject: 'smartReadSync loop', against: 'Bun best', of: isBun },
  { shape: 'files', subject: 'readMany auto ×64', against: 'C read loop', of: named('C read loop') },
  { shape: 'files', subject: 'smartReadSync loop', against: 'C read loop', of: named('C read loop') },
  // The same least reads from every CPU at once: warm, the most this machine's CPUs make.
  { shape: 'files', subject: 'readMany auto ×64', against: 'C read, every CPU', of: named('C read, every CPU') },
  // The least an io_uring reader does at the same depth: on a cold disk, the device's limit.
  { shape: 'files', subject: 'readMany auto ×64', against: 'C io_uring ×64', of: named('C io_uring ×64') },
  // This build against another (--against, against.js): above 1 where this one is faster.
  { shape: 'file', subject: 'smartReadSync', against: 'smartReadSync @against', of: ofOtherBuild('smartReadSync') },
  { shape: 'file', subject: 'smartRead auto', against: 'smartRead auto @against', of: ofOtherBuild('smartRead auto') },
  { shape: 'files', subject: 'readMany auto ×64', against: 'readMany auto ×64 @against', of: ofOtherBuild('readMany auto ×64') },
];

/** "smartReadSync ÷ Bun readFileSync": how a comparison is named in the reports. */
function comparisonLabel(c) {
  return `${c.subject} ÷ ${c.against}`;
}

/** Whether a trial's driver summary (index.js summarizeTrial) has figures. */
const measured = (d) => typeof d.opsPerSec === 'number';

/** Of a trial's drivers, the measured one that `of` accepts with the most ops/s; null when none. */
function bestDriver(drivers, of) {
  const candidates = drivers.filter(measured).filter(of);
  return candidates.length === 0 ? null : candidates.reduce((a, b) => (b.opsPerSec > a.opsPerSec ? b : a));
}

/**
 * The comparisons of one summarized trial ({ shape, drivers: [...] }) that it has both sides
 * of: [{ label, subject, against, best (the driver taken), ratio, rounds: [per-round ratio] }].
 */
function peerComparisons(trial) {
  const drivers = trial.drivers.filter(measured);
  const out = [];
  for (const c of COMPARISONS) {
    if (c.shape !== trial.shape) continue;
    const subject = drivers.find((d) => d.name === c.subject);
    const best = bestDriver(drivers, c.of);
    if (!subject || !best) continue;
    const roundOf = new Map(best.rounds.map((r) => [r.round, r]));
    out.push({
      label: comparisonLabel(c),
      subject: c.subject,
      against: c.against,
      best: best.name,
      ratio: subject.opsPerSec / best.opsPerSec,
      rounds: subject.rounds
        .filter((r) => roundOf.has(r.round))
        .map((r) => ({ round: r.round, ratio: r.opsPerSec / roundOf.get(r.round).opsPerSec })),
    });
  }
  return out;
}

module.exports = {
  peerComparisons, comparisonLabel, bestDriver, isBun, isBunAsync, COMPARISONS,
};
