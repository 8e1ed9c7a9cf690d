#!/usr/bin/env node
// Builds the addon with node-gyp. `npm install` runs it without --force: then a failed build is
// reported in one line and the package runs on its pure-JS engine instead of failing the
// install. `npm run build:native` passes --force, where a failed build is an error.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const force = process.argv.includes('--force');
const debug = process.argv.includes('--debug');

function nodeGypCommand() {
  // npm points its scripts at the node-gyp it bundles; a checkout has it as a devDependency.
  if (process.env.npm_config_node_gyp) return [process.execPath, process.env.npm_config_node_gyp];
  return [process.execPath, require.resolve('node-gyp/bin/node-gyp.js')];
}

function nodedirArgs() {
  // Use the headers installed beside this node (distribution packages ship them) so that the
  // build never downloads them; node-gyp downloads only when neither is given.
  if (process.env.npm_config_nodedir) return [`--nodedir=${process.env.npm_config_nodedir}`];
  const prefix = path.resolve(path.dirname(process.execPath), '..');
  if (fs.existsSync(path.join(prefix, 'include', 'node', 'node_api.h'))) return [`--nodedir=${prefix}`];
  return [];
}

const [cmd, ...pre] = nodeGypCommand();
const args = [...pre, 'rebuild', ...nodedirArgs(), ...(debug ? ['--debug'] : [])];
const result = spawnSync(cmd, args, { cwd: root, stdio: force ? 'inherit' : ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
if (result.status === 0) {
  if (!force) process.stdout.write('smartread: native addon built\n');
  process.exit(0);
}
if (force) process.exit(result.status ?? 1);
const log = path.join(root, 'build-native.log');
fs.writeFileSync(log, `${result.stdout ?? ''}\n${result.stderr ?? ''}\n${result.error ?? ''}`);
process.stdout.write(`smartread: the native addon could not be built (details in ${log}); the pure-JS engine will be used\n`);
