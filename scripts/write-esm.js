#!/usr/bin/env node
// Writes dist/index.mjs and dist/index.d.mts: the ES module entry re-exports the CommonJS build
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

// The command line entry (package.json "bin"), runnable from a checkout as dist/cli.js.
fs.chmodSync(path.join(dist, 'cli.js'), 0o755);
