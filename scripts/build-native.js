#!/usr/bin/env node
// Builds the addon with node-gyp. `npm install` runs it without --force: then a prebuilt addon
// (prebuilds/, shipped in the npm package) that loads here makes the build unnecessary, and a
// failed build is reported in one line and the package runs on its pure-JS engine instead of
// failing the install. `npm run build:native` passes --force: it always builds, and a failed
// build is an error. Off Linux there is nothing to build: the addon's engines are Linux
// syscalls, so the install says so in one line and succeeds at once, with no compiler.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { nodeHeadersDir, compileJobsEnv } = require('./node-headers');

const root = path.resolve(__dirname, '..');
const force = process.argv.includes('--force');
const debug = process.argv.includes('--debug');

function nodeGypCommand() {
  // npm points its scripts at the node-gyp it bundles; a checkout has it as a devDependency.
  if (process.env.npm_config_node_gyp) return [process.execPath, process.env.npm_config_node_gyp];
  return [process.execPath, require.resolve('node-gyp/bin/node-gyp.js')];
}

function nodedirArgs() {
  const dir = nodeHeadersDir();
  return dir ? [`--nodedir=${dir}`] : [];
}

// The first prebuild that loads, as the loader (dist/engine/loader.js) finds them; what it tried on the way.
function loadablePrebuild() {
  const tried = [];
  let loader;
  try {
    loader = require(path.join(root, 'dist', 'engine', 'loader.js'));
  } catch {
    return { file: null, tried: ['no dist/engine/loader.js to find prebuilds with'] };
  }
  for (const candidate of loader.prebuildCandidates()) {
    if (candidate.skipped) {
      tried.push(candidate.skipped);
      continue;
    }
    try {
      require(candidate.file);
      return { file: candidate.file, tried };
    } catch (err) {
      tried.push(`${candidate.file}: ${err.message.split('\n')[0]}`);
    }
  }
  return { file: null, tried };
}

// The loader's word on the platform (dist/ is in the package; in a checkout, `prepare` builds it
// after this script has run once, so a first install asks process.platform itself).
function platformWithoutAddon() {
  let loader;
  try {
    loader = require(path.join(root, 'dist', 'engine', 'loader.js'));
  } catch {
    return process.platform === 'linux' ? null : `the native addon is for Linux only; on ${process.platform} smartread reads through node:fs`;
  }
  return loader.platformWithoutAddon();
}

const offPlatform = platformWithoutAddon();
if (offPlatform !== null) {
  process.stdout.write(`smartread: ${offPlatform} (nothing built)\n`);
  process.exit(force ? 1 : 0);
}

if (!force) {
  const prebuild = loadablePrebuild();
  if (prebuild.file) {
    process.stdout.write(`smartread: using the prebuilt addon ${path.relative(root, prebuild.file)}\n`);
    process.exit(0);
  }
  if (fs.existsSync(path.join(root, 'prebuilds'))) {
    process.stdout.write(`smartread: no prebuilt addon fits (${prebuild.tried.join('; ')}); building from source\n`);
  }
}

const [cmd, ...pre] = nodeGypCommand();
const args = [...pre, 'rebuild', ...nodedirArgs(), ...(debug ? ['--debug'] : [])];
const result = spawnSync(cmd, args, { cwd: root, env: compileJobsEnv(), stdio: force ? 'inherit' : ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
if (result.status === 0) {
  if (!force) process.stdout.write('smartread: native addon built\n');
  process.exit(0);
}
if (force) process.exit(result.status ?? 1);
const log = path.join(root, 'build-native.log');
fs.writeFileSync(log, `${result.stdout ?? ''}\n${result.stderr ?? ''}\n${result.error ?? ''}`);
process.stdout.write(`smartread: the native addon could not be built (details in ${log}); the pure-JS engine will be used\n`);
