// Where the running node's headers are, so that node-gyp never downloads them: distribution
// packages (Debian's and NodeSource's nodejs) install them beside the binary, in include/node.
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

module.exports = { nodeHeadersDir };
