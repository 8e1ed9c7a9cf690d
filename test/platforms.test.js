// Where the package runs besides Linux x64 with glibc: off Linux (macOS, Windows) the install
// builds nothing and the JS engine keeps to what that platform has; on Linux the loader picks the
// prebuild for this node's C library. Other platforms are taken by SMARTREAD_TEST_PLATFORM, which
// makes smartread's own branches go their way while node:fs and the kernel stay Linux's.
'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { elfInterpreter, libc } = require('../dist/common/platform.js');
const { checkNoFdLeak, useTempDirs, makeTempDir, runToEnd } = require('./helpers');

checkNoFdLeak({ spawnsChildren: true });
const tempDirs = useTempDirs();
const root = path.resolve(__dirname, '..');
const built = path.join(root, 'build', 'Release', 'smartread.node');

const { O_RDONLY, O_WRONLY, O_RDWR, O_CREAT, O_EXCL, O_TRUNC, O_APPEND, O_SYNC, O_NONBLOCK, O_DIRECTORY, O_NOFOLLOW } = fs.constants;
// The open flags each platform's fs.constants has (Windows: none of O_NONBLOCK, O_DIRECTORY,
// O_NOFOLLOW, O_SYNC); Linux's own (O_NOATIME, O_DIRECT, O_PATH...) are in neither.
const windowsFlags = O_RDONLY | O_WRONLY | O_RDWR | O_CREAT | O_EXCL | O_TRUNC | O_APPEND;
const allowedFlags = { win32: windowsFlags, darwin: windowsFlags | O_SYNC | O_NONBLOCK | O_DIRECTORY | O_NOFOLLOW };

// The workload of every public call, in a child acting for `platform` ('' for Linux as it is,
// on the JS engine), with node:fs recorded; its report and the record.
async function runWorkload(platform) {
  const dir = makeTempDir(tempDirs.disk, `workload-${platform || 'linux'}-`);
  const record = path.join(dir, 'record.json');
  const work = path.join(dir, 'files');
  fs.mkdirSync(work);
  const r = await runToEnd(process.execPath, ['--require', path.join(__dirname, 'fixtures', 'record-fs.js'),
    path.join(__dirname, 'fixtures', 'js-engine-workload.js'), work], {
    env: {
      SMARTREAD_TEST_PLATFORM: platform, SMARTREAD_FORCE_JS: platform ? '' : '1', SMARTREAD_REQUIRE_NATIVE: '',
      SMARTREAD_TEST_FS_RECORD: record,
    },
    timeoutMs: 60000,
  });
  assert.equal(r.code, 0, `${platform || 'linux'}: exit ${r.code} ${r.signal}\n${r.stderr}`);
  return { report: JSON.parse(r.stdout.trim().split('\n').at(-1)), record: JSON.parse(fs.readFileSync(record, 'utf8')) };
}

test('as Linux, the JS engine looks at /proc and /sys (the recorder sees them)', async () => {
  const { report, record } = await runWorkload('');
  assert.deepEqual(report.mismatches, []);
  assert.equal(report.engine, 'js');
  assert.ok(record.linuxOnly.some((call) => call.includes('/proc/self/fd/')), JSON.stringify(record.linuxOnly));
  assert.ok(record.linuxOnly.some((call) => call.includes('/sys/')), JSON.stringify(record.linuxOnly));
});

for (const platform of ['darwin', 'win32']) {
  test(`as ${platform}: every call reads and writes as node:fs does, asks nothing of /proc or /sys, and opens with ${platform}'s flags only`, async () => {
    const { report, record } = await runWorkload(platform);
    assert.deepEqual(report.mismatches, []);
    assert.equal(report.engine, 'js');
    assert.equal(report.reason, `the native addon is for Linux only (io_uring, openat2, preadv2); on ${platform} smartread reads through node:fs`);
    assert.equal(report.device.filesystem, 'unknown');
    assert.equal(report.device.kind, 'unknown');
    assert.match(report.device.dev, /^\d+$/);
    assert.deepEqual(record.linuxOnly, []);
    assert.ok(record.openFlags.length > 0, 'no numeric open flags recorded: the recorder saw nothing');
    for (const flags of record.openFlags) {
      assert.equal(flags & ~allowedFlags[platform], 0, `open flags 0x${flags.toString(16)} hold bits ${platform} has not`);
    }
  });
}

test('as darwin, SMARTREAD_REQUIRE_NATIVE=1 fails the require with why', async () => {
  const r = await runToEnd(process.execPath, ['-e', "require('smartread')"], {
    env: { SMARTREAD_TEST_PLATFORM: 'darwin', SMARTREAD_REQUIRE_NATIVE: '1', SMARTREAD_FORCE_JS: '' },
  });
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /smartread: no native addon here: the native addon is for Linux only \(io_uring, openat2, preadv2\); on darwin/);
});

// The install script in a package laid out as npm installs it, with node-gyp replaced by a script
// that leaves a mark: whether a build was started is that mark.
function installedPackage(name) {
  const pkg = makeTempDir(tempDirs.disk, `${name}-`);
  for (const entry of ['package.json', 'dist', 'scripts/build-native.js', 'scripts/node-headers.js']) {
    fs.cpSync(path.join(root, entry), path.join(pkg, entry), { recursive: true });
  }
  const mark = path.join(pkg, 'node-gyp-ran');
  const nodeGyp = path.join(pkg, 'fake-node-gyp.js');
  fs.writeFileSync(nodeGyp, `require('node:fs').writeFileSync(${JSON.stringify(mark)}, process.argv.slice(2).join(' '));\n`);
  return { pkg, mark, nodeGyp };
}

async function runInstallScript(pkg, nodeGyp, platform, args = []) {
  return runToEnd(process.execPath, [path.join(pkg, 'scripts', 'build-native.js'), ...args], {
    cwd: pkg,
    env: { SMARTREAD_TEST_PLATFORM: platform, npm_config_node_gyp: nodeGyp },
  });
}

test('the install script on Linux without a prebuild starts a build (the mark is made)', async () => {
  const { pkg, mark, nodeGyp } = installedPackage('install-linux');
  const r = await runInstallScript(pkg, nodeGyp, '');
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'smartread: native addon built\n');
  assert.match(fs.readFileSync(mark, 'utf8'), /^rebuild/);
});

for (const platform of ['darwin', 'win32']) {
  test(`the install script as ${platform}: one line, exit 0, no build started and no prebuild loaded; --force fails`, async () => {
    const { pkg, mark, nodeGyp } = installedPackage(`install-${platform}`);
    // A prebuild in this platform's folder that would load here: the script must not even look.
    if (fs.existsSync(built)) {
      fs.mkdirSync(path.join(pkg, 'prebuilds', `${platform}-${process.arch}`), { recursive: true });
      fs.copyFileSync(built, path.join(pkg, 'prebuilds', `${platform}-${process.arch}`, 'smartread.node'));
    }
    const line = `smartread: the native addon is for Linux only (io_uring, openat2, preadv2); on ${platform} smartread reads through node:fs (nothing built)\n`;
    const r = await runInstallScript(pkg, nodeGyp, platform);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, line);
    assert.equal(r.stderr, '');
    assert.ok(!fs.existsSync(mark), 'node-gyp was started');
    assert.ok(!fs.existsSync(path.join(pkg, 'build')), 'a build/ folder was made');
    const forced = await runInstallScript(pkg, nodeGyp, platform, ['--force']);
    assert.equal(forced.code, 1);
    assert.equal(forced.stdout, line);
    assert.ok(!fs.existsSync(mark), 'node-gyp was started by --force');
  });
}

// What an atomic write's temporary file and a write's parent directory are for `paths`, in a
// child acting for `platform`.
async function writePathsAs(platform, paths) {
  const source = `
    const { temporaryName } = require('./dist/write/js_write_engine.js');
    const { parentOf } = require('./dist/write/write_args.js');
    const paths = JSON.parse(process.argv[1]);
    console.log(JSON.stringify(paths.map((p) => [temporaryName(p).toString(), parentOf(p)])));
  `;
  const r = await runToEnd(process.execPath, ['-e', source, JSON.stringify(paths)], {
    env: { SMARTREAD_TEST_PLATFORM: platform, SMARTREAD_REQUIRE_NATIVE: '', SMARTREAD_FORCE_JS: '' },
  });
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

test("as win32, an atomic write's temporary file is beside its target in \\ and drive paths; on Linux \\ is part of a name", async () => {
  const escape = (text) => text.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');
  const temporary = (dir, name) => new RegExp(`^${escape(dir)}\\.${escape(name)}\\.smartread-[0-9a-f]{12}\\.tmp$`);
  const paths = ['C:\\dir\\file.txt', 'C:file.txt', 'dir/sub\\x', '\\\\server\\share\\y'];
  const win32 = await writePathsAs('win32', paths);
  assert.match(win32[0][0], temporary('C:\\dir\\', 'file.txt'));
  assert.equal(win32[0][1], 'C:\\dir');
  assert.match(win32[1][0], temporary('C:', 'file.txt'));
  assert.match(win32[2][0], temporary('dir/sub\\', 'x'));
  assert.equal(win32[2][1], 'dir/sub');
  assert.match(win32[3][0], temporary('\\\\server\\share\\', 'y'));
  const linux = await writePathsAs('', paths);
  assert.match(linux[0][0], temporary('', 'C:\\dir\\file.txt'));
  assert.equal(linux[0][1], '.');
  assert.match(linux[2][0], temporary('dir/', 'sub\\x'));
});

// A minimal ELF file: the header, then one PT_LOAD and one PT_INTERP program header.
function elfWith(interpreter, { is64, littleEndian }) {
  const headerSize = is64 ? 64 : 52;
  const phentsize = is64 ? 56 : 32;
  const interpAt = headerSize + 2 * phentsize;
  const name = Buffer.from(`${interpreter}\0`, 'latin1');
  const file = Buffer.alloc(interpAt + name.length);
  file.write('\x7fELF', 0, 'latin1');
  file[4] = is64 ? 2 : 1;
  file[5] = littleEndian ? 1 : 2;
  file[6] = 1;
  const u16 = (v, at) => (littleEndian ? file.writeUInt16LE(v, at) : file.writeUInt16BE(v, at));
  const u32 = (v, at) => (littleEndian ? file.writeUInt32LE(v, at) : file.writeUInt32BE(v, at));
  const word = (v, at) => (is64 ? (littleEndian ? file.writeBigUInt64LE(BigInt(v), at) : file.writeBigUInt64BE(BigInt(v), at)) : u32(v, at));
  u16(2, 16);
  word(headerSize, is64 ? 0x20 : 0x1c);
  u16(phentsize, is64 ? 0x36 : 0x2a);
  u16(2, is64 ? 0x38 : 0x2c);
  const load = headerSize;
  u32(1, load);
  const interp = headerSize + phentsize;
  u32(3, interp);
  word(interpAt, interp + (is64 ? 0x08 : 0x04));
  word(name.length, interp + (is64 ? 0x20 : 0x10));
  name.copy(file, interpAt);
  return file;
}

test('elfInterpreter: the PT_INTERP of 64-bit little-endian and 32-bit big-endian files; none for others', () => {
  const dir = makeTempDir(tempDirs.disk, 'elf-');
  const cases = [
    ['/lib/ld-musl-x86_64.so.1', { is64: true, littleEndian: true }],
    ['/lib/ld-linux-aarch64.so.1', { is64: true, littleEndian: true }],
    ['/lib/ld.so.1', { is64: false, littleEndian: false }],
  ];
  for (const [interpreter, shape] of cases) {
    const file = path.join(dir, path.basename(interpreter));
    fs.writeFileSync(file, elfWith(interpreter, shape));
    assert.equal(elfInterpreter(file), interpreter);
  }
  const noInterp = elfWith('/lib/ld-musl-x86_64.so.1', { is64: true, littleEndian: true });
  noInterp.writeUInt32LE(1, 64 + 56);
  fs.writeFileSync(path.join(dir, 'static'), noInterp);
  assert.equal(elfInterpreter(path.join(dir, 'static')), undefined);
  fs.writeFileSync(path.join(dir, 'script'), '#!/bin/sh\necho not ELF\n');
  assert.equal(elfInterpreter(path.join(dir, 'script')), undefined);
  assert.equal(elfInterpreter(path.join(dir, 'missing')), undefined);
  assert.match(elfInterpreter(process.execPath) ?? '', /^\/.*ld-(linux|musl)/);
});

test("libc(): the C library this node runs with, as node's own report says", () => {
  const reported = process.report.getReport().header.glibcVersionRuntime === undefined ? 'musl' : 'glibc';
  assert.equal(libc(), reported);
});
