// engineInfo() and the package entry points: the native pass must load the addon, the JS pass must
// say why it did not, and the ES module entry is the CommonJS one.
'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const smartread = require('smartread');
const { checkNoFdLeak, useTempDirs, writePattern, patternBuffer, assertSameBytes, stdoutLines, runToEnd, forcedPlatform } = require('./helpers');

const { smartReadSync, engineInfo } = smartread;

checkNoFdLeak({ spawnsChildren: true });
const tempDirs = useTempDirs();

const nativePass = process.env.SMARTREAD_REQUIRE_NATIVE === '1';
const jsPass = process.env.SMARTREAD_FORCE_JS === '1';

test('engineInfo() has the documented shape', () => {
  const info = engineInfo();
  assert.ok(info.engine === 'native' || info.engine === 'js', info.engine);
  assert.equal(typeof info.liburing, 'boolean');
  assert.ok(Array.isArray(info.tried));
  for (const line of info.tried) assert.equal(typeof line, 'string');
  for (const key of Object.keys(info)) assert.ok(['engine', 'liburing', 'path', 'reason', 'tried', 'uring', 'hugePages', 'dropIn'].includes(key), key);
  // Nothing here loaded smartread/register.
  assert.equal(info.dropIn.active, false);
  assert.match(info.dropIn.reason, /not registered/);
  assert.equal(typeof info.uring.available, 'boolean');
  if (!info.uring.available) assert.match(info.uring.reason, /\S/);
  assert.equal(typeof info.hugePages.advised, 'boolean');
  assert.match(info.hugePages.reason, /\S/);
  // io_uring and the advice need the addon: the JS engine claims neither.
  if (info.engine === 'js') {
    assert.equal(info.uring.available, false);
    assert.equal(info.hugePages.advised, false);
  }
});

test('engineInfo() returns a copy: changing it changes nothing', () => {
  const info = engineInfo();
  info.engine = 'changed';
  info.tried.push('changed');
  info.hugePages.advised = 'changed';
  const again = engineInfo();
  assert.notEqual(again.engine, 'changed');
  assert.ok(!again.tried.includes('changed'));
  assert.notEqual(again.hugePages.advised, 'changed');
});

// scripts/run-tests.js runs this file once with SMARTREAD_REQUIRE_NATIVE=1, once with
// SMARTREAD_FORCE_JS=1, and with --platform once as another platform: each pass checks its own engine.
test('the engine of this pass: the addon from a .node file, or the JS engine and why', (t) => {
  const info = engineInfo();
  if (forcedPlatform !== null && !jsPass) {
    // Off Linux no file is tried: the addon's engines are Linux syscalls.
    assert.equal(info.engine, 'js');
    assert.equal(info.liburing, false);
    assert.equal(info.path, undefined);
    assert.deepEqual(info.tried, []);
    assert.equal(info.reason, `the native addon is for Linux only (io_uring, openat2, preadv2); on ${forcedPlatform} smartread reads through node:fs`);
    assert.ok(!Object.keys(require.cache).some((file) => file.endsWith('.node')), 'an addon was loaded');
  } else if (nativePass) {
    assert.equal(info.engine, 'native');
    assert.equal(typeof info.path, 'string');
    assert.ok(path.isAbsolute(info.path), info.path);
    assert.ok(info.path.endsWith('.node'), info.path);
    assert.ok(fs.existsSync(info.path));
    assert.equal(typeof info.liburing, 'boolean');
    assert.equal(info.reason, undefined);
    // Every place looked at, in order, each a .node file (or the prebuilds/ folder that has none)
    // with what happened there; the last one is the file that loaded.
    assert.ok(info.tried.length >= 1);
    for (const line of info.tried) assert.match(line, /^\/.+(\.node|\/prebuilds\/[\w-]+): .+/);
    assert.equal(info.tried.at(-1), `${info.path}: loaded`);
    assert.equal(info.tried.filter((line) => line.endsWith(': loaded')).length, 1);
  } else if (jsPass) {
    assert.equal(info.engine, 'js');
    assert.equal(info.liburing, false);
    assert.equal(info.path, undefined);
    assert.match(info.reason, /SMARTREAD_FORCE_JS/);
  } else {
    t.skip('set SMARTREAD_REQUIRE_NATIVE=1 or SMARTREAD_FORCE_JS=1 (npm test does)');
  }
});

test('the ES module entry exposes the same functions and reads correctly', async () => {
  const esm = await import('smartread');
  assert.equal(esm.smartReadSync, smartReadSync);
  assert.equal(esm.engineInfo, engineInfo);
  assert.equal(esm.default, smartread);
  for (const name of Object.keys(smartread)) assert.equal(esm[name], smartread[name], name);
  const file = writePattern(path.join(tempDirs.disk, 'esm'), 70000);
  assertSameBytes(esm.smartReadSync(file), patternBuffer(70000));
  assert.equal(esm.smartReadSync(file, 'hex'), fs.readFileSync(file, 'hex'));
  assert.deepEqual(esm.engineInfo(), engineInfo());
});

/** Runs `source` in a child node with extra environment variables; returns its stdout lines. */
async function runChild(source, env) {
  const child = spawn(process.execPath, ['-e', source], {
    cwd: path.resolve(__dirname, '..'),
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return stdoutLines(child).all();
}

test('a child with SMARTREAD_FORCE_JS=1 uses the JS engine, even with SMARTREAD_REQUIRE_NATIVE=1', async () => {
  const file = writePattern(path.join(tempDirs.disk, 'child'), 5000);
  const [line] = await runChild(`
    const { smartReadSync, engineInfo } = require('smartread');
    const bytes = smartReadSync(process.env.FILE);
    console.log(JSON.stringify({ info: engineInfo(), hex: bytes.toString('hex') }));
  `, { SMARTREAD_FORCE_JS: '1', SMARTREAD_REQUIRE_NATIVE: '1', FILE: file });
  const { info, hex } = JSON.parse(line);
  assert.equal(info.engine, 'js');
  assert.match(info.reason, /SMARTREAD_FORCE_JS/);
  assert.equal(hex, patternBuffer(5000).toString('hex'));
});

test('a child in the ES module entry alone loads the same engine as this process', async () => {
  const [line] = await runChild(`
    import('smartread').then(({ engineInfo }) => console.log(JSON.stringify(engineInfo())));
  `, {});
  assert.deepEqual(JSON.parse(line), engineInfo());
});

// A package laid out as npm installs it: dist/ and prebuilds/<platform>-<arch>/ with files named
// as prebuildify names them. The loader takes the one for this libc and says why not the other.
test('prebuilds/: the file tagged for this libc loads; another libc is skipped with the reason', async (t) => {
  if (!nativePass) return t.skip('needs the addon (the native pass)');
  // The C library this node runs on, by another way than the loader's (its ELF interpreter):
  // glibc builds of node report the glibc they run with.
  const built = path.resolve(__dirname, '..', 'build', 'Release', 'smartread.node');
  if (!fs.existsSync(built)) return t.skip('no build/Release/smartread.node to lay out as a prebuild');
  const root = path.join(tempDirs.disk, 'installed');
  fs.cpSync(path.resolve(__dirname, '..', 'dist'), path.join(root, 'dist'), { recursive: true });
  const dir = path.join(root, 'prebuilds', `${process.platform}-${process.arch}`);
  fs.mkdirSync(dir, { recursive: true });
  const libc = process.report.getReport().header.glibcVersionRuntime === undefined ? 'musl' : 'glibc';
  const other = libc === 'glibc' ? 'musl' : 'glibc';
  fs.copyFileSync(built, path.join(dir, `smartread.${libc}.node`));
  fs.writeFileSync(path.join(dir, `smartread.${other}.node`), 'not an addon');
  fs.writeFileSync(path.join(dir, 'README'), 'not a prebuild');
  const [line] = await runChild(`console.log(JSON.stringify(require(${JSON.stringify(path.join(root, 'dist'))}).engineInfo()))`, {});
  const info = JSON.parse(line);
  assert.equal(info.engine, 'native');
  assert.equal(info.path, path.join(dir, `smartread.${libc}.node`));
  assert.deepEqual(info.tried, [
    `${path.join(dir, `smartread.${other}.node`)}: built for ${other}, this node runs on ${libc}`,
    `${info.path}: loaded`,
  ]);
});

// Bun is installed by the bench's installer into its cache, as the bench installs it (skipped
// with the reason where it cannot be).
test('under Bun, whose Node-API aborts on libuv calls, the JS engine reads, and says why', async (t) => {
  if (forcedPlatform !== null) return t.skip(`off Linux (${forcedPlatform}) no addon is tried, under Bun or node`);
  const { installRuntime, cacheDir, PEER_RUNTIMES } = require('../bench/peers');
  const runtime = PEER_RUNTIMES.find((r) => r.name === 'Bun');
  let binary;
  try {
    ({ binary } = await installRuntime(runtime, cacheDir()));
  } catch (err) {
    t.skip(`Bun cannot be installed here: ${err.message}`);
    return;
  }
  const small = writePattern(path.join(tempDirs.disk, 'bun-small'), 5000);
  const large = writePattern(path.join(tempDirs.disk, 'bun-large'), 3 * 1024 * 1024 + 7);
  const script = `
    const { smartRead, smartReadSync, readMany, engineInfo } = require(${JSON.stringify(path.resolve(__dirname, '..'))});
    (async () => {
      const files = [process.env.SMALL, process.env.LARGE];
      const missing = await smartRead(process.env.SMALL + '-missing').catch((err) => err.code);
      const hex = (b) => require('node:crypto').createHash('sha256').update(b).digest('hex');
      console.log(JSON.stringify({
        info: engineInfo(),
        sync: files.map((f) => hex(smartReadSync(f))),
        async: await Promise.all(files.map(async (f) => hex(await smartRead(f)))),
        many: (await readMany(files)).map(hex),
        missing,
      }));
    })();
  `;
  const env = { ...runtime.env(cacheDir()), SMALL: small, LARGE: large, SMARTREAD_FORCE_JS: '', SMARTREAD_REQUIRE_NATIVE: '' };
  const { code, signal, stdout, stderr } = await runToEnd(binary, ['-e', script], { env, timeoutMs: 60000 });
  assert.equal(code, 0, `exit ${code} ${signal}: ${stderr}`);
  const result = JSON.parse(stdout.trim().split('\n').at(-1));
  const expected = [small, large].map((f) => require('node:crypto').createHash('sha256').update(fs.readFileSync(f)).digest('hex'));
  assert.equal(result.info.engine, 'js');
  assert.match(result.info.reason, /Bun 1\.\d+\.\d+: its Node-API lacks the libuv functions/);
  assert.deepEqual(result.sync, expected);
  assert.deepEqual(result.async, expected);
  assert.deepEqual(result.many, expected);
  assert.equal(result.missing, 'ENOENT');
  // Asked to insist on the addon, Bun is told why it cannot have it.
  const insisting = await runToEnd(binary, ['-e', `require(${JSON.stringify(path.resolve(__dirname, '..'))})`],
    { env: { ...env, SMARTREAD_REQUIRE_NATIVE: '1' }, timeoutMs: 60000 });
  assert.notEqual(insisting.code, 0);
  assert.equal(insisting.signal, null, insisting.stderr);
  assert.match(insisting.stderr, /its Node-API lacks the libuv functions/);
});
