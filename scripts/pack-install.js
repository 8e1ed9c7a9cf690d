#!/usr/bin/env node
// The package as a user gets it: `npm pack` (which builds the prebuilds for x64 and arm64), then
// `npm install` of the tarball into a fresh project on a PATH holding only node, npm and sh,
// with CC=false and CXX=false, so that a source build could not succeed. The install must take
// the prebuild, and the installed package must load it, read through io_uring, answer require()
// and import(), run its command, and hold only what users need. Acting for darwin and win32
// (SMARTREAD_TEST_PLATFORM), the install must build nothing and the package read on its pure-JS
// engine. Then the same tarball without prebuilds/ must build from source where a compiler is,
// and still install without one, on the pure-JS engine, with one line saying why. CI runs this
// (slow: the prebuilds are full builds); it prints one line per check and exits non-zero on a
// failure. SMARTREAD_PACK_OUT=dir leaves the tarball there (CI installs it for arm64 next:
// scripts/qemu-arm64.js).
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'smartread-pack-'));
// What users download: the tarball stays well under this (it held one prebuild of ~0.5 MB).
const kMaxTarballBytes = 2 * 1024 * 1024;
const prebuildFiles = ['prebuilds/linux-x64/smartread.glibc.node', 'prebuilds/linux-arm64/smartread.glibc.node'];
let failures = 0;

function check(name, fn) {
  try {
    const note = fn();
    process.stdout.write(`ok - ${name}${note ? ` (${note})` : ''}\n`);
  } catch (err) {
    failures++;
    process.stdout.write(`not ok - ${name}\n${String(err.stack ?? err).replace(/^/gm, '  # ')}\n`);
  }
}

function run(cmd, args, options) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', ...options });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited with ${r.status}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

// A PATH with node, npm and the sh that npm runs scripts with: no compiler, make, python,
// pkg-config.
function bareBin() {
  const bin = path.join(work, 'bin');
  fs.mkdirSync(bin);
  fs.symlinkSync('/bin/sh', path.join(bin, 'sh'));
  fs.symlinkSync(process.execPath, path.join(bin, 'node'));
  const npmCli = fs.realpathSync(run('sh', ['-c', 'command -v npm']).trim());
  fs.symlinkSync(npmCli, path.join(bin, 'npm'));
  fs.symlinkSync(path.join(path.dirname(npmCli), 'npx-cli.js'), path.join(bin, 'npx'));
  return bin;
}

const bin = bareBin();
const bareEnv = { ...process.env, PATH: bin, CC: 'false', CXX: 'false' };
delete bareEnv.SMARTREAD_FORCE_JS;
delete bareEnv.SMARTREAD_REQUIRE_NATIVE;
delete bareEnv.SMARTREAD_TEST_PLATFORM;

function installInto(name, tarball, env = bareEnv) {
  const app = path.join(work, name);
  fs.mkdirSync(app);
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name, private: true, version: '1.0.0' }));
  const out = run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--foreground-scripts', tarball], { cwd: app, env });
  return { app, out, pkg: path.join(app, 'node_modules', 'smartread') };
}

// Runs `source` with node in the project; returns its parsed JSON output.
function inApp(app, source, args = [], env = bareEnv) {
  return JSON.parse(run('node', ['-e', source, ...args], { cwd: app, env }));
}

let tarball;
check('npm pack builds the prebuilds for x64 and arm64 and packs them, in under 2 MB', () => {
  const out = run('npm', ['pack', '--json', '--pack-destination', work], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  const [info] = JSON.parse(out.slice(out.indexOf('[')));
  tarball = path.join(work, info.filename);
  const files = info.files.map((f) => f.path);
  const missing = prebuildFiles.filter((f) => !files.includes(f));
  if (missing.length > 0) throw new Error(`no ${missing.join(', ')} in ${files.join(' ')}`);
  const extra = files.filter((f) => f.startsWith('prebuilds/') && !prebuildFiles.includes(f));
  if (extra.length > 0) throw new Error(`prebuilds not tested anywhere: ${extra.join(', ')}`);
  if (info.size >= kMaxTarballBytes) throw new Error(`the tarball is ${info.size} bytes`);
  if (fs.existsSync(path.join(root, 'prebuilds'))) throw new Error('postpack left prebuilds/ in the checkout');
  if (process.env.SMARTREAD_PACK_OUT) fs.copyFileSync(tarball, path.join(process.env.SMARTREAD_PACK_OUT, info.filename));
  return `${info.filename}, ${info.files.length} files, ${info.size} bytes`;
});
if (!tarball) process.exit(1);

let installed;
check('npm install of the tarball with no compiler takes the prebuild', () => {
  installed = installInto('app', tarball);
  if (!/smartread: using the prebuilt addon prebuilds\/linux-x64\/smartread\.glibc\.node/.test(installed.out)) {
    throw new Error(`install output:\n${installed.out}`);
  }
  if (fs.existsSync(path.join(installed.pkg, 'build'))) throw new Error('a build/ folder was made');
});
if (!installed) process.exit(1);
const { app, pkg } = installed;

check('the installed files are what users need, and no more', () => {
  const files = [];
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const rel = path.relative(pkg, path.join(dir, entry.name));
      if (entry.isDirectory()) walk(path.join(dir, entry.name));
      else files.push(rel);
    }
  };
  walk(pkg);
  const needed = ['package.json', 'README.md', 'LICENSE', 'binding.gyp', 'dist/index.js', 'dist/index.mjs', 'dist/index.d.ts',
    'dist/index.d.mts', 'dist/cli.js', 'scripts/build-native.js', 'scripts/liburing.sh', 'src/native/addon.cc', 'bench/index.js',
    ...prebuildFiles];
  const missing = needed.filter((f) => !files.includes(f));
  if (missing.length > 0) throw new Error(`missing: ${missing.join(', ')}`);
  const unwanted = files.filter((f) => /^(test|src\/ts|build|bench\/results|node_modules)\/|\.tgz$|^scripts\/(prebuild|pack-install|run-tests|qemu-arm64)|^\.ci\//.test(f));
  if (unwanted.length > 0) throw new Error(`should not ship: ${unwanted.join(', ')}`);
  const ldd = run('ldd', [path.join(pkg, 'prebuilds/linux-x64/smartread.glibc.node')]);
  if (/liburing/.test(ldd)) throw new Error(`the prebuild links liburing dynamically:\n${ldd}`);
  return `${files.length} files`;
});

const readCheck = `
  const fs = require('node:fs');
  const file = process.argv[1];
  const expected = fs.readFileSync(file);
  const cjs = require('smartread');
  import('smartread').then(async (esm) => {
    const info = cjs.engineInfo();
    const out = {
      info,
      esmSame: esm.smartReadSync === cjs.smartReadSync && esm.default === cjs,
      sync: cjs.smartReadSync(file).equals(expected),
      esmSync: esm.smartReadSync(file).equals(expected),
      auto: (await cjs.smartRead(file)).equals(expected),
      many: (await cjs.readMany([file, file])).every((b) => b.equals(expected)),
    };
    if (info.uring.available) out.uring = (await cjs.smartRead(file, { strategy: 'uring' })).equals(expected);
    console.log(JSON.stringify(out));
  });
`;
const sample = path.join(work, 'sample.bin');
fs.writeFileSync(sample, Buffer.from(Array.from({ length: 300000 }, (_, i) => (i * 7 + (i >> 9)) & 0xff)));

check('require() and import() load the prebuild, read the same bytes as fs, and io_uring reads', () => {
  const r = inApp(app, readCheck, [sample]);
  const prebuild = path.join(pkg, 'prebuilds/linux-x64/smartread.glibc.node');
  if (r.info.engine !== 'native' || r.info.path !== prebuild) throw new Error(`engine: ${JSON.stringify(r.info)}`);
  if (r.info.liburing !== true || r.info.uring.available !== true) throw new Error(`io_uring: ${JSON.stringify(r.info)}`);
  for (const key of ['esmSame', 'sync', 'esmSync', 'auto', 'many', 'uring']) if (r[key] !== true) throw new Error(`${key}: ${r[key]}`);
  return `${path.relative(app, r.info.path)}`;
});

// macOS and Windows, as far as Linux can act them: the install script and the loader take those
// platforms' branches (node:fs and npm stay Linux's).
for (const platform of ['darwin', 'win32']) {
  check(`as ${platform}, npm install of the tarball builds nothing, in one line, and the package reads on its JS engine`, () => {
    const env = { ...bareEnv, SMARTREAD_TEST_PLATFORM: platform };
    const other = installInto(`app-${platform}`, tarball, env);
    const lines = other.out.split('\n').filter((l) => l.startsWith('smartread:'));
    const expected = `smartread: the native addon is for Linux only (io_uring, openat2, preadv2); on ${platform} smartread reads through node:fs (nothing built)`;
    if (lines.length !== 1 || lines[0] !== expected) throw new Error(`install output:\n${other.out}`);
    if (fs.existsSync(path.join(other.pkg, 'build'))) throw new Error('a build/ folder was made');
    const r = inApp(other.app, readCheck, [sample], env);
    if (r.info.engine !== 'js' || r.info.tried.length !== 0 || !r.info.reason.endsWith(`on ${platform} smartread reads through node:fs`)) {
      throw new Error(`engine: ${JSON.stringify(r.info)}`);
    }
    for (const key of ['esmSame', 'sync', 'esmSync', 'auto', 'many']) if (r[key] !== true) throw new Error(`${key}: ${r[key]}`);
    return lines[0];
  });
}

check('the smartread command: --help, explain, explain --json, bench --help, calibrate --quick', () => {
  const help = run('npx', ['--no-install', 'smartread', '--help'], { cwd: app, env: bareEnv });
  if (!/^usage: smartread <command>/.test(help)) throw new Error(help);
  const explained = run('npx', ['--no-install', 'smartread', 'explain', sample], { cwd: app, env: bareEnv });
  if (!explained.startsWith(`${sample}\n  strategy: `)) throw new Error(explained);
  const json = JSON.parse(run('npx', ['--no-install', 'smartread', 'explain', '--json', sample], { cwd: app, env: bareEnv }));
  if (json.path !== sample || typeof json.strategy !== 'string') throw new Error(JSON.stringify(json));
  const bench = run('npx', ['--no-install', 'smartread', 'bench', '--help'], { cwd: app, env: bareEnv });
  if (!/usage: node bench\/index\.js/.test(bench)) throw new Error(bench);
  const calibrateDir = path.join(work, 'calibrate');
  fs.mkdirSync(calibrateDir);
  const profileFile = path.join(work, 'profile.json');
  run('npx', ['--no-install', 'smartread', 'calibrate', '--quick', '--out', profileFile, calibrateDir], { cwd: app, env: bareEnv });
  const profile = JSON.parse(fs.readFileSync(profileFile, 'utf8'));
  if (profile.version !== 1 || !Number.isInteger(profile.tuning?.copyRateMBps)) throw new Error(JSON.stringify(profile));
  return `explain: ${json.strategy}; calibrate: copyRateMBps ${profile.tuning.copyRateMBps}`;
});

// The same package where no prebuild fits: the tarball without prebuilds/.
function tarballWithoutPrebuilds() {
  const unpacked = path.join(work, 'unpacked');
  fs.mkdirSync(unpacked);
  run('tar', ['xzf', tarball, '-C', unpacked]);
  fs.rmSync(path.join(unpacked, 'package', 'prebuilds'), { recursive: true });
  const bare = path.join(work, 'smartread-no-prebuild.tgz');
  run('tar', ['czf', bare, '-C', unpacked, 'package']);
  return bare;
}
const noPrebuild = tarballWithoutPrebuilds();

check('without a prebuild, with a compiler, the install builds the addon from source', () => {
  const built = installInto('app-source', noPrebuild, process.env);
  if (!/smartread: native addon built/.test(built.out)) throw new Error(`install output:\n${built.out}`);
  const r = inApp(built.app, readCheck, [sample]);
  const expected = path.join(built.pkg, 'build/Release/smartread.node');
  if (r.info.engine !== 'native' || r.info.path !== expected) throw new Error(`engine: ${JSON.stringify(r.info)}`);
  for (const key of ['esmSame', 'sync', 'esmSync', 'auto', 'many']) if (r[key] !== true) throw new Error(`${key}: ${r[key]}`);
  return `${path.relative(built.app, r.info.path)}, liburing ${r.info.liburing}`;
});

check('without a prebuild and without a compiler the install succeeds, on the pure-JS engine', () => {
  const js = installInto('app-js', noPrebuild);
  const lines = js.out.split('\n').filter((l) => l.startsWith('smartread:'));
  if (lines.length !== 1 || !/the native addon could not be built .*the pure-JS engine will be used/.test(lines[0])) {
    throw new Error(`install output:\n${js.out}`);
  }
  const r = inApp(js.app, readCheck, [sample]);
  if (r.info.engine !== 'js') throw new Error(`engine: ${JSON.stringify(r.info)}`);
  for (const key of ['esmSame', 'sync', 'esmSync', 'auto', 'many']) if (r[key] !== true) throw new Error(`${key}: ${r[key]}`);
  return lines[0];
});

// SMARTREAD_PACK_NODES: more node binaries (colon-separated; .ci/run gives one per release
// line) that must load the same installed prebuild and read with it through io_uring.
for (const otherNode of (process.env.SMARTREAD_PACK_NODES ?? '').split(':').filter(Boolean)) {
  const version = run(otherNode, ['--version']).trim();
  check(`node ${version} loads the installed prebuild and reads through io_uring`, () => {
    const r = JSON.parse(run(otherNode, ['-e', readCheck, sample], { cwd: app, env: bareEnv }));
    if (r.info.engine !== 'native' || r.info.path !== path.join(pkg, 'prebuilds/linux-x64/smartread.glibc.node')) throw new Error(`engine: ${JSON.stringify(r.info)}`);
    if (r.info.uring.available !== true) throw new Error(`io_uring: ${JSON.stringify(r.info.uring)}`);
    for (const key of ['esmSame', 'sync', 'esmSync', 'auto', 'many', 'uring']) if (r[key] !== true) throw new Error(`${key}: ${r[key]}`);
  });
}

fs.rmSync(work, { recursive: true, force: true });
process.stdout.write(failures === 0 ? 'pack-install: all checks passed\n' : `pack-install: ${failures} check(s) failed\n`);
process.exit(failures === 0 ? 0 : 1);
