#!/usr/bin/env node
// `npm test`: runs the whole node:test suite twice, on the native addon (which must load) and on
// the pure-JS engine (SMARTREAD_FORCE_JS=1), and ends with one line counting both runs.
// Extra arguments are passed to `node --test` (e.g. a single test file).
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const args = process.argv.slice(2);
const files = args.filter((a) => !a.startsWith('-'));
const flags = args.filter((a) => a.startsWith('-'));
const testFiles = files.length > 0 ? files : fs.readdirSync(path.join(root, 'test'))
  .filter((f) => f.endsWith('.test.js')).sort().map((f) => path.join('test', f));

const passes = [
  { name: 'native', env: { SMARTREAD_REQUIRE_NATIVE: '1', SMARTREAD_FORCE_JS: '' } },
  { name: 'js', env: { SMARTREAD_FORCE_JS: '1', SMARTREAD_REQUIRE_NATIVE: '' } },
];

function run(pass) {
  return new Promise((resolve) => {
    process.stdout.write(`\n# smartread tests: ${pass.name} engine\n`);
    const child = spawn(process.execPath, ['--test', '--test-reporter=tap', ...flags, ...testFiles], {
      cwd: root,
      env: { ...process.env, ...pass.env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const counts = { pass: 0, fail: 0, skipped: 0 };
    let tail = '';
    child.stdout.on('data', (chunk) => {
      process.stdout.write(chunk);
      tail += chunk.toString();
      const lines = tail.split('\n');
      tail = lines.pop();
      for (const line of lines) {
        const m = /^# (pass|fail|skipped) (\d+)$/.exec(line);
        if (m) counts[m[1]] = Number(m[2]);
      }
    });
    child.on('close', (code) => resolve({ ...counts, code }));
  });
}

(async () => {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  let bad = false;
  for (const pass of passes) {
    const r = await run(pass);
    passed += r.pass;
    failed += r.fail;
    skipped += r.skipped;
    if (r.code !== 0 || r.pass === 0) bad = true;
  }
  process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  process.exit(bad || failed > 0 ? 1 : 0);
})();
