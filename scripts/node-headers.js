// What both build scripts tell node-gyp: where the running node's headers are, so that it never
// downloads them (distribution packages, Debian's and NodeSource's nodejs, install them beside
// the binary, in include/node), and how many files to compile at once.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

/** The --nodedir for node-gyp: npm's own setting when given, else this node's prefix when it
 * holds the headers, else undefined (node-gyp would then download them). */
function nodeHeadersDir() {
  if (process.env.npm_config_nodedir) return process.env.npm_config_nodedir;
  const prefix = path.resolve(path.dirname(process.execPath), '..');
  if (fs.existsSync(path.join(prefix, 'include', 'node', 'node_api.h'))) return prefix;
  return undefined;
}

/** The environment for node-gyp: one compile job per core (JOBS=max; node-gyp compiles one file
 * at a time unless told, 49 s against 25 on two cores here), unless the user chose (JOBS, or
 * npm's `jobs` setting). */
function compileJobsEnv() {
  const env = process.env;
  return env.JOBS || env.npm_config_jobs ? env : { ...env, JOBS: 'max' };
}

module.exports = { nodeHeadersDir, compileJobsEnv };
