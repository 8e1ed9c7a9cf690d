#!/usr/bin/env node
// `npm run prebuild` (and `npm pack`, through prepack): the prebuilt addons that ship in the
// package, prebuilds/linux-<arch>/smartread.glibc.node for x64 and arm64. One N-API build serves
// every Node version; liburing is linked statically (SMARTREAD_STATIC_LIBURING=1), so the addon
// needs neither liburing nor a compiler where it is installed. The architecture this machine is
// not is cross-compiled with Debian's toolchain for it (g++-aarch64-linux-gnu) against Debian's
// liburing for it (liburing-dev:arm64, through multiarch). Each build runs in a copy of the
// native sources, so the checkout's own build/ is left as it was.
// SMARTREAD_PREBUILD_ARCHS=x64 (a comma-separated list) builds fewer, on purpose.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { nodeHeadersDir, compileJobsEnv } = require('./node-headers');

const root = path.resolve(__dirname, '..');

// Debian's GNU triplet (toolchain prefix and multiarch directory) of each architecture shipped.
const triplets = { x64: 'x86_64-linux-gnu', arm64: 'aarch64-linux-gnu' };
// readelf's e_machine name of each.
const machines = { x64: 'Advanced Micro Devices X86-64', arm64: 'AArch64' };
const archs = (process.env.SMARTREAD_PREBUILD_ARCHS || 'x64,arm64').split(',').map((a) => a.trim()).filter(Boolean);

function fail(message) {
  process.stderr.write(`prebuild: ${message}\n`);
  process.exit(1);
}

function run(cmd, args, options = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', ...options });
  if (r.error) fail(`${cmd}: ${r.error.message}`);
  if (r.status !== 0) fail(`${cmd} ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}

// The sources binding.gyp needs, and node-addon-api beside them.
function stage() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smartread-prebuild-'));
  for (const entry of ['package.json', 'binding.gyp', 'src/native', 'scripts/liburing.sh']) {
    fs.cpSync(path.join(root, entry), path.join(dir, entry), { recursive: true });
  }
  fs.symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'));
  return dir;
}

// The environment that makes node-gyp, and liburing.sh's pkg-config, build for `arch` on this
// machine; with what is missing for it, or null.
function crossEnv(arch) {
  const triplet = triplets[arch];
  if (triplet === undefined) return { missing: `no toolchain known for ${arch} (known: ${Object.keys(triplets).join(', ')})` };
  const env = {
    CC: `${triplet}-gcc`, CXX: `${triplet}-g++`, LINK: `${triplet}-g++`, AR: `${triplet}-ar`,
    PREBUILD_STRIP_BIN: `${triplet}-strip`,
    // Only the target's .pc files: the build machine's liburing must not be linked by mistake.
    PKG_CONFIG_LIBDIR: `/usr/lib/${triplet}/pkgconfig:/usr/share/pkgconfig`,
  };
  const cxx = spawnSync(env.CXX, ['--version'], { encoding: 'utf8' });
  if (cxx.error || cxx.status !== 0) return { missing: `${env.CXX} (apt-get install g++-${triplet})`, env };
  const libdir = spawnSync('pkg-config', ['--variable=libdir', 'liburing'], { encoding: 'utf8', env: { ...process.env, PKG_CONFIG_LIBDIR: env.PKG_CONFIG_LIBDIR } });
  if (libdir.status !== 0 || !fs.existsSync(path.join(libdir.stdout.trim(), 'liburing.a'))) {
    const debArch = arch === 'x64' ? 'amd64' : arch;
    return { missing: `liburing for ${arch} (dpkg --add-architecture ${debArch} && apt-get update && apt-get install liburing-dev:${debArch})`, env };
  }
  return { missing: null, env };
}

// The newest symbol versions the file needs from glibc and libstdc++: the oldest systems it loads on.
function newestVersions(file, objdump) {
  const older = (a, b) => {
    const [x, y] = [a.split('.').map(Number), b.split('.').map(Number)];
    for (let i = 0; i < Math.max(x.length, y.length); i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) < (y[i] ?? 0);
    return false;
  };
  const newest = {};
  for (const [, lib, version] of run(objdump, ['-T', file]).matchAll(/\b(GLIBC|GLIBCXX)_([0-9.]+)/g)) {
    if (newest[lib] === undefined || older(newest[lib], version)) newest[lib] = version;
  }
  return Object.entries(newest).map(([lib, version]) => `${lib}_${version}`).join(', ');
}

// What a prebuild must be: for its machine, with io_uring and no liburing.so to need; loaded
// here where it is this machine's (scripts/arm64-parity.js loads the other under qemu).
function check(file, arch, cross) {
  const header = run('readelf', ['-h', file]);
  if (!header.includes(machines[arch])) fail(`${file} is not built for ${arch}:\n${header}`);
  const dynamic = run('readelf', ['-d', file]);
  if (/NEEDED.*liburing/.test(dynamic)) fail(`${file} links liburing dynamically:\n${dynamic}`);
  const needs = newestVersions(file, cross ? `${triplets[arch]}-objdump` : 'objdump');
  if (cross) return `built for ${arch} on ${process.arch}, not loaded here; needs ${needs}`;
  const probe = spawnSync(process.execPath, ['-e', 'process.stdout.write(JSON.stringify(require(process.argv[1]).features))', file], { encoding: 'utf8' });
  if (probe.status !== 0) fail(`${file} does not load: ${probe.stderr}`);
  if (JSON.parse(probe.stdout).liburing !== true) fail(`${file} was built without liburing`);
  return `loads here; needs ${needs}`;
}

if (process.platform !== 'linux') fail(`the addon is for Linux only; prebuilds are made on Linux (this is ${process.platform})`);
const headers = nodeHeadersDir();
if (!headers) fail(`no Node headers beside ${process.execPath} (include/node): set npm_config_nodedir`);
// Every toolchain is checked before anything is built: a missing one fails at once.
const builds = archs.map((arch) => {
  if (arch === process.arch) return { arch, cross: false, env: {} };
  const { missing, env } = crossEnv(arch);
  if (missing !== null) fail(`cannot build for ${arch}: needs ${missing}; SMARTREAD_PREBUILD_ARCHS=${process.arch} builds this machine's alone`);
  return { arch, cross: true, env };
});

for (const { arch, cross, env } of builds) {
  const dir = path.join(root, 'prebuilds', `linux-${arch}`);
  fs.rmSync(dir, { recursive: true, force: true });
  const staged = stage();
  // prebuildify names the file after package.json's name and tags it. --target is this node,
  // whose headers node-gyp takes from npm_config_nodedir (so nothing is downloaded; N-API's are
  // the same for every architecture); with --napi the file loads on every node with N-API 8.
  const prebuildify = require.resolve('prebuildify/bin.js');
  const built = spawnSync(process.execPath, [prebuildify, '--napi', '--tag-libc', '--strip', `--arch=${arch}`, `--target=${process.versions.node}`,
    `--node-gyp=${path.join(root, 'node_modules', '.bin', 'node-gyp')}`, `--out=${root}`, staged], {
    stdio: 'inherit',
    env: { ...compileJobsEnv(), ...env, ...(cross ? { PREBUILD_LIBC: 'glibc' } : {}), SMARTREAD_STATIC_LIBURING: '1', npm_config_nodedir: headers },
  });
  fs.rmSync(staged, { recursive: true, force: true });
  if (built.status !== 0) fail(`prebuildify for ${arch} exited with ${built.status ?? built.signal}`);
  // prebuildify tags a build by /etc/alpine-release (musl there); Debian's cross toolchains are glibc's.
  const libc = !cross && fs.existsSync('/etc/alpine-release') ? 'musl' : 'glibc';
  const file = path.join(dir, `smartread.${libc}.node`);
  if (!fs.existsSync(file)) fail(`prebuildify left no ${file}`);
  const note = check(file, arch, cross);
  process.stdout.write(`prebuild: ${path.relative(root, file)} (${fs.statSync(file).size} bytes, liburing linked statically; ${note})\n`);
}
