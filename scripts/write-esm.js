#!/usr/bin/env node
// Writes dist/index.mjs and dist/index.d.mts (and the same for the drop-in entries, below): the ES module entry re-exports the CommonJS build
// by name, so `import { smartReadSync } from 'smartread'` and `require('smartread')` share one
// instance (one addon load, one engine) and one set of types.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const dist = path.resolve(__dirname, '..', 'dist');
const names = Object.keys(require(path.join(dist, 'index.js'))).filter((n) => n !== 'default').sort();
fs.writeFileSync(path.join(dist, 'index.mjs'),
  `import cjs from './index.js';\n\nexport const {\n${names.map((n) => `  ${n},`).join('\n')}\n} = cjs;\nexport default cjs;\n`);
// The types say what index.mjs exports: the names, and the CommonJS module as the default.
fs.writeFileSync(path.join(dist, 'index.d.mts'),
  "export * from './index.js';\nimport * as smartread from './index.js';\nexport default smartread;\n");

// The drop-in entries. smartread/fs and smartread/fs/promises are node:fs and node:fs/promises,
// name for name, with the CommonJS build's readers in place of node's (an explicit export hides
// the star export of the same name); smartread/register patches when its CommonJS build loads.
const dropIns = [
  { file: 'fs', node: 'node:fs', ours: ['readFile', 'readFileSync', 'promises'] },
  { file: 'fs_promises', node: 'node:fs/promises', ours: ['readFile'] },
];
for (const { file, node, ours } of dropIns) {
  fs.writeFileSync(path.join(dist, `${file}.mjs`),
    `export * from '${node}';\nimport cjs from './${file}.js';\n\nexport const { ${ours.join(', ')} } = cjs;\nexport default cjs;\n`);
  fs.writeFileSync(path.join(dist, `${file}.d.mts`),
    `export * from '${node}';\nimport cjs = require('./${file}.js');\nexport default cjs;\n`);
}
fs.writeFileSync(path.join(dist, 'register.mjs'),
  "import cjs from './register.js';\n\nexport const { register, unregister } = cjs;\nexport default cjs;\n");
fs.writeFileSync(path.join(dist, 'register.d.mts'),
  "export * from './register.js';\nimport * as cjs from './register.js';\nexport default cjs;\n");

// The command line entry (package.json "bin"), runnable from a checkout as dist/cli.js.
fs.chmodSync(path.join(dist, 'cli.js'), 0o755);
