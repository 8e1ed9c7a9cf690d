// Huge-page advice for large destinations: the decision (transparent huge pages, free page
// reporting by a virtio balloon, SMARTREAD_HUGE_PAGES), read from a sysfs tree made here and from
// this machine's own /sys, and what it does: with advice, a 64 MiB result is mostly huge pages
// (AnonHugePages in /proc/self/smaps_rollup); without, none where THP is 'madvise'. Either way the
// bytes are the file's.
'use strict';
const { test, describe } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { engineInfo } = require('smartread');
const { hugePageAdvice, freePageReportingDevice } = require('../dist/engine/huge_pages.js');
const { checkNoFdLeak, useTempDirs, makeTempDir, writePattern, runToEnd } = require('./helpers');

checkNoFdLeak({ spawnsChildren: true });
const tempDirs = useTempDirs();
const MiB = 1024 * 1024;

/** A sysfs tree with a THP mode (or none) and virtio devices { name: [deviceId, features] }. */
function fakeSysfs(thp, devices = {}) {
  const root = makeTempDir(tempDirs.tmpfs ?? tempDirs.disk, 'sysfs-');
  if (thp !== null) {
    fs.mkdirSync(path.join(root, 'kernel/mm/transparent_hugepage'), { recursive: true });
    fs.writeFileSync(path.join(root, 'kernel/mm/transparent_hugepage/enabled'), `${thp}\n`);
  }
  for (const [name, [id, features]] of Object.entries(devices)) {
    const dir = path.join(root, 'bus/virtio/devices', name);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'device'), `${id}\n`);
    fs.writeFileSync(path.join(dir, 'features'), `${features}\n`);
  }
  return root;
}

// Feature strings as sysfs prints them: one character a bit, bit 0 first.
const bits = (...set) => Array.from({ length: 64 }, (_, i) => (set.includes(i) ? '1' : '0')).join('');

describe('the decision', () => {
  const madvise = 'always [madvise] never';
  const cases = [
    ['no transparent huge pages at all', null, {}, false],
    ["THP 'never'", 'always madvise [never]', {}, false],
    ["THP 'madvise', no virtio devices", madvise, {}, true],
    ["THP 'always', no virtio devices", '[always] madvise never', {}, true],
    ['a balloon reporting free pages (bit 5)', madvise, { virtio0: ['0x0005', bits(1, 2, 5, 7)], virtio1: ['0x0002', bits(5)] }, false],
    ['a balloon without reporting', madvise, { virtio0: ['0x0005', bits(1, 2, 7)] }, true],
    ['feature bit 5 on a device that is no balloon (a block device)', madvise, { virtio1: ['0x0002', bits(5, 9)] }, true],
    ['a reporting balloon that is not the first device', madvise, { virtio0: ['0x0001', bits(0)], virtio3: ['0x0005', bits(5)] }, false],
  ];
  for (const [name, thp, devices, advised] of cases) {
    test(`${name}: ${advised ? 'advised' : 'not advised'}`, () => {
      const sysfs = fakeSysfs(thp, devices);
      const advice = hugePageAdvice({}, sysfs);
      assert.equal(advice.advised, advised, advice.reason);
      assert.ok(advice.reason.length > 0);
    });
  }

  test('SMARTREAD_HUGE_PAGES=1 and =0 decide whatever the machine', () => {
    const reporting = fakeSysfs('always [madvise] never', { virtio0: ['0x0005', bits(5)] });
    assert.deepEqual(hugePageAdvice({ SMARTREAD_HUGE_PAGES: '1' }, reporting), { advised: true, reason: 'SMARTREAD_HUGE_PAGES=1' });
    assert.deepEqual(hugePageAdvice({ SMARTREAD_HUGE_PAGES: '0' }, fakeSysfs('[always] madvise never')),
      { advised: false, reason: 'SMARTREAD_HUGE_PAGES=0' });
  });

  test("engineInfo().hugePages is this machine's, read from /sys independently", () => {
    const info = engineInfo().hugePages;
    if (engineInfo().engine !== 'native') {
      assert.equal(info.advised, false);
      return;
    }
    const env = process.env.SMARTREAD_HUGE_PAGES;
    let expected;
    if (env === '1' || env === '0') {
      expected = env === '1';
    } else {
      let thp = null;
      try {
        thp = /\[(\w+)\]/.exec(fs.readFileSync('/sys/kernel/mm/transparent_hugepage/enabled', 'latin1'))?.[1] ?? null;
      } catch {
        // no THP
      }
      let reporting = false;
      try {
        for (const name of fs.readdirSync('/sys/bus/virtio/devices')) {
          const dir = path.join('/sys/bus/virtio/devices', name);
          const id = fs.readFileSync(path.join(dir, 'device'), 'latin1').trim();
          const features = fs.readFileSync(path.join(dir, 'features'), 'latin1').trim();
          if (id === '0x0005' && features[5] === '1') reporting = true;
        }
      } catch {
        // no virtio bus
      }
      expected = thp !== null && thp !== 'never' && !reporting;
      assert.equal(freePageReportingDevice() !== null, reporting);
    }
    assert.equal(info.advised, expected, info.reason);
  });
});

// In a child, so that its memory is its own: reads a 64 MiB file with smartReadSync, keeps the
// result, and prints how much of the process is huge pages now and before.
const childSource = `
  const { smartReadSync, engineInfo } = require('smartread');
  const hugeKb = () => Number(/AnonHugePages:\\s+(\\d+)/.exec(require('node:fs').readFileSync('/proc/self/smaps_rollup', 'latin1'))[1]);
  const before = hugeKb();
  const bytes = smartReadSync(process.argv[1]);
  const after = hugeKb();
  const expected = require('node:fs').readFileSync(process.argv[1]);
  console.log(JSON.stringify({ advised: engineInfo().hugePages.advised, grewKb: after - before, same: bytes.equals(expected) }));
`;

describe('what the advice does', () => {
  let thp = null;
  try {
    thp = /\[(\w+)\]/.exec(fs.readFileSync('/sys/kernel/mm/transparent_hugepage/enabled', 'latin1'))?.[1] ?? null;
  } catch {
    // no THP
  }
  for (const setting of ['1', '0']) {
    test(`SMARTREAD_HUGE_PAGES=${setting}: a 64 MiB result ${setting === '1' ? 'is mostly' : 'has no'} huge pages, and the file's bytes`, async (t) => {
      if (engineInfo().engine !== 'native') return t.skip('the pure-JS engine allocates as node:fs does');
      if (thp !== 'madvise') return t.skip(`transparent huge pages are '${thp}' here, not 'madvise': advice decides nothing`);
      const file = writePattern(path.join(tempDirs.tmpfs ?? tempDirs.disk, `huge-${setting}`), 64 * MiB);
      const run = await runToEnd(process.execPath, ['-e', childSource, file], { env: { SMARTREAD_HUGE_PAGES: setting, SMARTREAD_REQUIRE_NATIVE: '1' } });
      assert.equal(run.code, 0, run.stderr);
      const facts = JSON.parse(run.stdout);
      assert.equal(facts.advised, setting === '1');
      assert.ok(facts.same, 'the bytes of the file');
      if (setting === '1') {
        // The 2 MiB-aligned interior of the destination: 62 MiB at least.
        assert.ok(facts.grewKb >= 62 * 1024, `AnonHugePages grew by ${facts.grewKb} kB`);
      } else {
        assert.ok(facts.grewKb < 2 * 1024, `AnonHugePages grew by ${facts.grewKb} kB without advice`);
      }
    });
  }
});
