#!/usr/bin/env node
// Writes an ES module entry beside each CommonJS entry of dist/ that package.json exports
// (dist/index.mjs and .d.mts, dist/serve/index.*, dist/serve/fastify.*, and the drop-in entries
// below): it re-exports the CommonJS build by name, so that `import { smartReadSync } from
// 'smartread'` and `require('smartread')` share one instance (one addon load, one engine) and
// one set of types.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const dist = path.resolve(__dirname, '..', 'dist');
// Each entry, and what its ES module's default export is: the CommonJS module itself, or its
// `default` (a Fastify plugin, which `import plugin from` expects to be the function).
const entries = [
  { name: 'index', defaultExport: 'module' },
  { name: 'serve/index', defaultExport: 'module' },
  { name: 'serve/fastify', defaultExport: 'default' },
];

for (const { name, defaultExport } of entries) {
  const base = path.basename(name);
  const names = Object.keys(require(path.join(dist, `${name}.js`))).filter((n) => n !== 'default').sort();
  const defaultValue = defaultExport === 'module' ? 'cjs' : 'cjs.default';
  fs.writeFileSync(path.join(dist, `${name}.mjs`),
    `import cjs from './${base}.js';\n\nexport const {\n${names.map((n) => `  ${n},`).join('\n')}\n} = cjs;\nexport default ${defaultValue};\n`);
  // The types say what the .mjs exports: the names, and the default as above.
  fs.writeFileSync(path.join(dist, `${name}.d.mts`), defaultExport === 'module'
    ? `export * from './${base}.js';\nimport * as cjs from './${base}.js';\nexport default cjs;\n`
    : `export * from './${base}.js';\nimport cjs from './${base}.js';\ndeclare const defaultExport: typeof cjs.default;\nexport default defaultExport;\n`);
}

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
