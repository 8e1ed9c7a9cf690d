// Real overlay and FUSE mounts for a test file, made with the bench's mount set (bench/mounts.js):
// the kernel's overlayfs over a disk directory, bindfs over one, and the bench's fuse-latency
// daemon (1 ms a request, built from bench/fuse_latency.c, logging the threads of its opens,
// statfs calls, stats and reads to the mount's opensLog) over one. Mounted before the file's
// tests and always taken down after them (on 'exit' too); a kind this machine cannot mount (not
// root, no overlayfs or /dev/fuse, no bindfs, a mount refused) is a reason to skip, never a pass.
'use strict';
const { before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { engineInfo } = require('smartread');
const { MountSet, mountUnavailable, mountsUnder, buildFuseLatency } = require('../bench/mounts');

const LABELS = { overlay: 'overlay', fuse: 'bindfs', 'fuse-latency': 'fuse-latency' };

/**
 * Mounts each of `kinds` ('overlay', 'fuse', 'fuse-latency') under a new temp directory on the disk, in a
 * before() hook, and takes them down in after(), which also checks that nothing of theirs is
 * left in /proc/self/mounts. `options.fuseLatencyCacheMs`: how long the kernel keeps the
 * fuse-latency mount's names and attributes (default a day; 0: every lookup and stat reaches the
 * daemon). Returns { ready (settles once mounted), all: [{ kind, label }], get(kind) → the mount (bench/mounts.js:
 * { dir, backingDir, upperDir? }) or null, skipReason(kind) → why it is not there, or null,
 * forTest(t, kind, { needs }) → the mount, or null with t skipped }.
 * Declared now, so that tests can be declared per kind; the mounts exist from the hook on.
 */
function useMounts(kinds = ['overlay', 'fuse'], { fuseLatencyCacheMs = null } = {}) {
  const mounts = new Map();
  const reasons = new Map(kinds.map((kind) => [kind, mountUnavailable(kind)]));
  let set = null;
  let parent = null;
  // Not a helpers.js temp dir: those are removed on 'exit' before the mount set's own handler
  // has taken the mounts down, and a recursive removal would reach through them.
  const removeParent = () => {
    if (parent !== null && mountsUnder(parent).length === 0) fs.rmSync(parent, { recursive: true, force: true });
  };
  // Settles once the hook has mounted what it could: a file's descriptor count waits for it
  // (checkNoFdLeak's `after`), as the root's before() hooks, run as they are declared, do not
  // wait for one another; the compiler's pipes, while the fuse-latency daemon is built, and the
  // daemons' own are no descriptors of the tests.
  let mounted;
  const ready = new Promise((resolve) => { mounted = resolve; });
  const skipReason = (kind) => (mounts.has(kind) ? null : reasons.get(kind) ?? 'not mounted yet');
  const mountAll = async () => {
    if (kinds.every((kind) => reasons.get(kind) !== null)) return;
    parent = fs.mkdtempSync(path.join(os.tmpdir(), 'smartread-mounts-test-'));
    process.on('exit', removeParent);
    set = new MountSet(parent, { log: () => {} });
    for (const kind of kinds) {
      if (reasons.get(kind) !== null) continue;
      try {
        if (kind === 'overlay') mounts.set(kind, set.overlay());
        else if (kind === 'fuse') mounts.set(kind, await set.bindfs());
        else mounts.set(kind, await set.fuseLatency({ binary: (await buildFuseLatency()).binary, delayMs: 1, opensLog: path.join(parent, 'opens.log'), cacheMs: fuseLatencyCacheMs }));
      } catch (err) {
        reasons.set(kind, `could not mount ${LABELS[kind]}: ${err.message}`);
      }
    }
  };
  before(async () => {
    try {
      await mountAll();
    } finally {
      mounted();
    }
  });
  after(() => {
    if (set === null) return;
    const failed = set.teardown();
    assert.deepEqual(failed, [], 'every teardown step succeeds');
    assert.deepEqual(mountsUnder(parent), [], 'nothing left mounted');
    removeParent();
    process.removeListener('exit', removeParent);
    assert.equal(fs.existsSync(parent), false, 'no directory left');
  });
  return {
    ready,
    all: kinds.map((kind) => ({ kind, label: LABELS[kind] })),
    get: (kind) => mounts.get(kind) ?? null,
    skipReason,
    /**
     * The mount of `kind` for the test `t`, or null once `t` is skipped with the reason: the
     * pure-JS engine, where the test needs what only the addon has (`needs`: 'confinement',
     * 'io_uring'...), or a mount this process could not make.
     */
    forTest(t, kind, { needs = null } = {}) {
      const why = needs !== null && engineInfo().engine !== 'native' ? `the pure-JS engine has no ${needs}` : skipReason(kind);
      if (why) {
        t.skip(why);
        return null;
      }
      return mounts.get(kind);
    },
  };
}

/** What a fuse-latency daemon logged (its opensLog): [{ tid, op ('open', 'statfs', 'stat' or 'read'),
 * name (beneath the mount) }]; `tid` is the thread that asked the kernel. */
function requestsLogged(log) {
  return fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).map((line) => {
    const [tid, op, ...name] = line.split(' ');
    return { tid: Number(tid), op, name: name.join(' ') };
  });
}

module.exports = { useMounts, requestsLogged };
