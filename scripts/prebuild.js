#!/usr/bin/env node
// `npm run prebuild` (and `npm pack`, through prepack): the prebuilt addon that ships in the
// package, prebuilds/<platform>-<arch>/smartread.glibc.node. One N-API build serves every Node
// version; liburing is linked statically (SMARTREAD_STATIC_LIBURING=1), so the addon needs
// neither liburing nor a compiler where it is installed. The build runs in a copy of the
// native sources, so the checkout's own build/ is left as it was.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { nodeHeadersDir, compileJobsEnv } = require('./node-headers');

const root = path.resolve(__dirname, '..');

function fail(message) {
  process.stderr.write(`prebuild: ${message}\n`);
  process.exit(1);
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

// What the prebuild must be: it loads, it has io_uring, and it needs no liburing.so.
function check(file) {
  const ldd = spawnSync('ldd', [file], { encoding: 'utf8' });
  if (ldd.status !== 0) fail(`ldd ${file} failed: ${ldd.stderr}`);
  if (/liburing/.test(ldd.stdout)) fail(`${file} links liburing dynamically:\n${ldd.stdout}`);
  const probe = spawnSync(process.execPath, ['-e', 'process.stdout.write(JSON.stringify(require(process.argv[1]).features))', file], { encoding: 'utf8' });
  if (probe.status !== 0) fail(`${file} does not load: ${probe.stderr}`);
  if (JSON.parse(probe.stdout).liburing !== true) fail(`${file} was built without liburing`);
}

const headers = nodeHeadersDir();
if (!headers) fail(`no Node headers beside ${process.execPath} (include/node): set npm_config_nodedir`);
const dir = path.join(root, 'prebuilds', `${process.platform}-${process.arch}`);
fs.rmSync(dir, { recursive: true, force: true });
const staged = stage();
// prebuildify names the file after package.json's name and tags it. --target is this node,
// whose headers node-gyp takes from npm_config_nodedir (so nothing is downloaded); with --napi
// the file loads on every node with N-API 8.
const prebuildify = require.resolve('prebuildify/bin.js');
const run = spawnSync(process.execPath, [prebuildify, '--napi', '--tag-libc', '--strip', `--target=${process.versions.node}`,
  `--node-gyp=${path.join(root, 'node_modules', '.bin', 'node-gyp')}`, `--out=${root}`, staged], {
  stdio: 'inherit',
  env: { ...compileJobsEnv(), SMARTREAD_STATIC_LIBURING: '1', npm_config_nodedir: headers },
});
fs.rmSync(staged, { recursive: true, force: true });
if (run.status !== 0) fail(`prebuildify exited with ${run.status ?? run.signal}`);

const libc = fs.existsSync('/etc/alpine-release') ? 'musl' : 'glibc';
const built = path.join(dir, `smartread.${libc}.node`);
if (!fs.existsSync(built)) fail(`prebuildify left no ${built}`);
check(built);
process.stdout.write(`prebuild: ${path.relative(root, built)} (${fs.statSync(built).size} bytes, liburing linked statically)\n`);
