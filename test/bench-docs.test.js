// The benchmark pages are made from the run, not written by hand: the tables of
// docs/benchmarks.md and of the README's "How fast" are what bench/docs.js makes of the latest
// committed report in bench/results/, and the script renders any run, whatever its targets and
// drivers: a run made up here, with a filesystem it has never heard of, comes out with every
// figure in its place, the same bytes every time, and --check tells a stale page.
'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { makeTempDir, runToEnd } = require('./helpers');
const { generate, latestRun } = require('../bench/docs');

const repo = path.resolve(__dirname, '..');
const script = path.join(repo, 'bench', 'docs.js');

// ---------------------------------------------------------------------------------------------
// A run made up for the test: two targets, the second on a filesystem the script does not know

const startedAt = '2031-02-03T04:05:06.789Z';

/** A driver's summary as index.js writes it, with only the figures the pages read. */
function driver(name, opsPerSec, { files = 1, baseline = 0, reference = 0, async = false, peer = null, medianUs, loopStall = null } = {}) {
  return {
    name,
    baseline: opsPerSec === baseline,
    reference: opsPerSec === reference,
    async,
    peer,
    timedIn: peer ? 'peer' : 'runner',
    medianUs: medianUs ?? 1e6 / opsPerSec,
    opsPerSec,
    filesPerSec: opsPerSec * files,
    ratio: baseline ? opsPerSec / baseline : null,
    ratioToReference: reference ? opsPerSec / reference : null,
    loopStall,
  };
}

function fabricatedRun() {
  const stall = { resolutionMs: 1, maxMs: 1.25, p99Ms: 0.5, gcMaxMs: 0.25 };
  const oneFile = (base, ref) => [
    driver('fs.readFileSync', base, { baseline: base, reference: ref, medianUs: 5 }),
    driver('smartReadSync', 312000, { baseline: base, reference: ref, medianUs: 3 }),
    driver('fs.promises.readFile', ref, { baseline: base, reference: ref, async: true, loopStall: stall }),
    driver('smartRead auto', 229000, { baseline: base, reference: ref, async: true, loopStall: stall }),
    driver('smartRead threadpool', 40000, { baseline: base, reference: ref, async: true, loopStall: stall, medianUs: 23 }),
  ];
  const disk = {
    dir: '/mnt/disk', realpath: '/mnt/disk', fsType: 'ext4', mountPoint: '/mnt/disk', source: '/dev/nvme0n1',
    device: { kind: 'NVMe disk', name: 'nvme0n1', majorMinor: '259:1', rotational: false },
    label: null, emulated: false, readBps: null, readIops: null,
    trials: [
      {
        name: 'warm-4k', shape: 'file', bytes: 4096, files: 1, cold: false, comparisons: [],
        drivers: [...oneFile(178000, 11000), { name: 'smartRead uring', baseline: false, reference: false, async: true, peer: null, timedIn: 'runner', skipped: 'io_uring is off here' }],
      },
      {
        name: 'warm-2000x4k', shape: 'files', bytes: 2000 * 4096, files: 2000, cold: false, comparisons: [],
        drivers: [
          driver('fs.readFileSync loop', 77.5, { files: 2000, baseline: 77.5, reference: 8.6 }),
          driver('fs.promises.readFile ×64', 8.6, { files: 2000, baseline: 77.5, reference: 8.6, async: true, loopStall: stall }),
          driver('readMany auto ×64', 169.5, { files: 2000, baseline: 77.5, reference: 8.6, async: true, loopStall: stall }),
        ],
      },
    ],
  };
  const far = {
    dir: '/mnt/far', realpath: '/mnt/far', fsType: 'fuse.slowfs', mountPoint: '/mnt/far', source: 'slowfs',
    device: { kind: 'no block device', name: null, majorMinor: '0:77', rotational: null },
    label: 'fuse-latency', emulated: false, readBps: null, readIops: null,
    trials: [
      { name: 'warm-4k', shape: 'file', bytes: 4096, files: 1, cold: false, comparisons: [], drivers: oneFile(6400, 1600) },
      { name: 'warm-stripes', shape: 'stripes', bytes: 8192, files: 2, cold: false, comparisons: [], drivers: [
        driver('stripe reader', 500, { files: 2, baseline: 500 }),
        { name: 'stripe reader ×8', baseline: false, reference: false, async: true, peer: null, timedIn: 'bench', error: 'wrong result: 3 bytes instead of 4096' },
      ] },
      { name: 'cold-4k', shape: 'file', bytes: 4096, files: 1, cold: true, skipped: 'eviction does not work on this target: EPERM', drivers: [] },
    ],
  };
  return {
    format: 'smartread-bench/3',
    startedAt,
    durationMs: 65000,
    command: 'node bench/index.js --dir /mnt/disk --dir /mnt/far',
    options: { mode: 'quick', rounds: 4, timeMs: 100, minSamples: 8 },
    machine: { hostname: 'box', cpu: 'Test CPU', cores: 8, kernel: 'Linux 9.9', node: 'v99.0.0', transparentHugepages: 'never', loadAverage1m: 0.5 },
    engine: null,
    peers: null,
    runner: { runtime: 'node', version: '99.0.0', pid: 1 },
    loopFloor: { resolutionMs: 1, maxMs: 0.6, p99Ms: 0.1, durationMs: 2000 },
    drivers: [],
    targets: [disk, far],
  };
}

const BLOCKS = (names) => names.map((n) => `<!-- bench:${n} begin -->\nstale\n<!-- bench:${n} end -->`).join('\n\nprose in between\n\n');

/** A repository of the pages and bench/results/ only, holding `runs` ({ name: document }). */
function fakeRepo(runs) {
  const root = makeTempDir(os.tmpdir(), 'smartread-bench-docs-');
  fs.mkdirSync(path.join(root, 'docs'));
  fs.mkdirSync(path.join(root, 'bench', 'results'), { recursive: true });
  fs.writeFileSync(path.join(root, 'docs', 'benchmarks.md'), `# Benchmarks\n\n${BLOCKS(['tables', 'limits'])}\n\nthe end\n`);
  fs.writeFileSync(path.join(root, 'README.md'), `# Readme\n\n## How fast\n\n${BLOCKS(['tables'])}\n\n## Next\n`);
  for (const [name, document] of Object.entries(runs)) {
    fs.writeFileSync(path.join(root, 'bench', 'results', name), JSON.stringify(document));
  }
  return root;
}

const pageOf = (result, page) => result.pages.find((p) => p.page === page).want;
const blockOf = (text, name) => new RegExp(`<!-- bench:${name} begin[^\\n]*-->\\n([^]*?)\\n<!-- bench:${name} end -->`).exec(text)[1];

test('the latest run is the one that started last, of the read bench\'s reports', () => {
  const older = { ...fabricatedRun(), startedAt: '2030-01-01T00:00:00.000Z' };
  const root = fakeRepo({
    'a-newest.json': fabricatedRun(),
    'z-older.json': older,
    'w-writes.json': { format: 'smartread-write-bench/1', startedAt: '2040-01-01T00:00:00.000Z', targets: [] },
  });
  assert.equal(path.basename(latestRun(root).file), 'a-newest.json');
});

test('a made-up run of two targets, one on an unknown filesystem, renders every figure in its place', () => {
  const root = fakeRepo({ 'run.json': fabricatedRun() });
  const result = generate({ root });
  const docs = pageOf(result, path.join('docs', 'benchmarks.md'));
  const readme = pageOf(result, 'README.md');

  assert.ok(docs.startsWith('# Benchmarks\n\n<!-- bench:tables begin: generated by npm run bench:docs from bench/results/run.json; do not edit -->\n'));
  assert.ok(docs.includes('\n<!-- bench:tables end -->\n\nprose in between\n\n<!-- bench:limits begin: generated'), 'the prose between blocks is kept');
  assert.ok(docs.endsWith('<!-- bench:limits end -->\n\nthe end\n'));
  const tables = blockOf(docs, 'tables');
  assert.match(tables, /^- command: `node bench\/index\.js --dir \/mnt\/disk --dir \/mnt\/far` \(quick; 4 rounds, ≥100 ms per driver per round\), started 2031-02-03 04:05 UTC, 1 min 5 s$/m);
  assert.ok(!tables.includes('!['), 'no chart beside the run: no image');

  // Each target under its own heading, labelled from the report.
  const disk = tables.slice(tables.indexOf('### /mnt/disk (ext4)\n'), tables.indexOf('### fuse-latency: /mnt/far (fuse.slowfs)\n'));
  const far = tables.slice(tables.indexOf('### fuse-latency: /mnt/far (fuse.slowfs)\n'));
  assert.ok(disk.length > 0 && far.length > 0, tables);
  assert.match(disk, /^\/mnt\/disk: ext4 \(\/dev\/nvme0n1 on \/mnt\/disk\), NVMe disk nvme0n1 \(259:1, non-rotational as the kernel reports it\)$/m);
  assert.match(far, /^fuse-latency: \/mnt\/far: fuse\.slowfs \(slowfs on \/mnt\/far\), no block device$/m);

  // One file: reads/s, vs sync · vs promises, and the loop for the async ones.
  assert.match(disk, /^\| One file, warm \| `warm-4k` \|\n\|:---\|---:\|$/m);
  assert.match(disk, /^\| fs\.readFileSync \| 178k<br>1\.00× · 16\.18× \|$/m);
  assert.match(disk, /^\| smartReadSync \| 312k<br>1\.75× · 28\.36× \|$/m);
  assert.match(disk, /^\| smartRead auto \| 229k<br>1\.29× · 20\.82×<br>loop 1\.25\/0\.50, GC 0\.25 \|$/m);
  assert.match(disk, /^\| smartRead uring \| skipped \|$/m);
  assert.match(disk, /^- `warm-4k`: smartRead uring skipped: io_uring is off here$/m);
  // Many files: files per second.
  assert.match(disk, /^\| Many files, warm \| `warm-2000x4k` \|$/m);
  assert.match(disk, /^\| readMany auto ×64 \| 339k<br>2\.19× · 19\.71×<br>loop 1\.25\/0\.50, GC 0\.25 \|$/m);
  assert.match(far, /^\| smartReadSync \| 312k<br>48\.75× · 195\.00× \|$/m);
  // A shape the script has no title for, a driver that failed, a trial skipped.
  assert.match(far, /^\| stripes, warm \| `warm-stripes` \|$/m);
  assert.match(far, /^\| stripe reader \| 1\.0k<br>1\.00× · — \|$/m);
  assert.match(far, /^\| stripe reader ×8 \| error \|$/m);
  assert.match(far, /^- `warm-stripes`: stripe reader ×8 failed: wrong result: 3 bytes instead of 4096$/m);
  assert.match(far, /^\*\*One file, cold\*\*\n\n- `cold-4k`: skipped: eviction does not work on this target: EPERM$/m);

  // The limits this run has: no peers, so only the wake-ups', a column per target.
  const limits = blockOf(docs, 'limits');
  assert.match(limits, /^\| limit \| measured by \| \/mnt\/disk \(ext4\) \| fuse-latency: \/mnt\/far \(fuse\.slowfs\) \|$/m);
  assert.match(limits, /^\| the VM's wake-ups \| a trip to a pool thread and back: [^|]+ \| 20\.0 \| 20\.0 \|$/m);
  assert.match(limits, /^\| the VM's wake-ups \| an idle event loop: [^|]+ \| 0\.60 \| 0\.60 \|$/m);
  assert.ok(!/V8's loop|the C floor/.test(limits), 'rows of figures the run does not have');

  // The README: the first target's files, only the columns the run has.
  const readmeTables = blockOf(readme, 'tables');
  assert.match(readmeTables, /files in \/mnt\/disk \(ext4 on NVMe disk nvme0n1\), all in the page cache\./);
  assert.match(readmeTables, /^\| warm file \| Node `readFileSync` \| \*\*`smartReadSync`\*\* \|\n\|:---\|---:\|---:\|\n\| 4 KiB \| 178k \| \*\*312k\*\* \|$/m);
  assert.match(readmeTables, /^\| warm file, async \| Node `fs\.promises\.readFile` \| \*\*`smartRead`\*\* \|\n\|:---\|---:\|---:\|\n\| 4 KiB \| 11k \| \*\*229k\*\* \|$/m);
  assert.match(readmeTables, /^\| many files \| Node `readFileSync` loop \| \*\*`readMany`\*\* \|\n\|:---\|---:\|---:\|\n\| 2,000 × 4 KiB \| 155k \| \*\*339k\*\* \|$/m);
  assert.ok(!readmeTables.includes('fuse.slowfs') && !readmeTables.includes('6.4k'), 'the README reads the first target only');
  assert.ok(readme.endsWith('<!-- bench:tables end -->\n\n## Next\n'));

  // The same run makes the same bytes.
  const again = generate({ root });
  assert.deepEqual(again.pages.map((p) => p.want), result.pages.map((p) => p.want));
});

test('--check says which page differs and where, and exits 1; bench:docs mends it', async () => {
  const root = fakeRepo({ 'run.json': fabricatedRun() });
  const check = () => runToEnd(process.execPath, [script, '--check', '--root', root]);
  let run = await check();
  assert.equal(run.code, 1);
  assert.match(run.stderr, /^docs\/benchmarks\.md:3: differs from what the run makes of it\n  committed: "<!-- bench:tables begin -->"\n/m);
  assert.match(run.stderr, /^README\.md:5: differs/m);
  assert.match(run.stderr, /2 page\(s\) differ from bench\/results\/run\.json: run npm run bench:docs/);

  run = await runToEnd(process.execPath, [script, '--root', root]);
  assert.equal(run.code, 0, run.stderr);
  assert.equal((await check()).code, 0);

  // A figure edited by hand is found, by its line.
  const page = path.join(root, 'README.md');
  const text = fs.readFileSync(page, 'utf8');
  fs.writeFileSync(page, text.replace('**312k**', '**412k**'));
  run = await check();
  assert.equal(run.code, 1);
  const line = text.split('\n').findIndex((l) => l.includes('**312k**')) + 1;
  assert.match(run.stderr, new RegExp(`^README\\.md:${line}: differs from what the run makes of it\\n  committed: "\\| 4 KiB \\| 178k \\| \\*\\*412k\\*\\* \\|"\\n  generated: "\\| 4 KiB \\| 178k \\| \\*\\*312k\\*\\* \\|"$`, 'm'));

  // A page without its block cannot be written: it says which.
  fs.writeFileSync(page, '# Readme\n');
  run = await runToEnd(process.execPath, [script, '--root', root]);
  assert.equal(run.code, 2);
  assert.match(run.stderr, /^README\.md: no block bench:tables, or more than one/m);
  run = await check();
  assert.equal(run.code, 1);
  assert.match(run.stderr, /^README\.md: no block bench:tables/m);
});
