#!/usr/bin/env node
// `npm test`: checks the package (the public types with tsc on test/types, package.json with
// publint), then runs the whole node:test suite twice, on the native addon (which must load)
// and on the pure-JS engine (SMARTREAD_FORCE_JS=1), and ends with one line counting both runs.
// Extra arguments are passed to `node --test` (e.g. a single test file; the package checks are
// then left out), except these:
//   --native-only   the native pass only, no package checks (.ci/run on each extra Node line)
//   --retry-failed  rerun, once, the test files of a pass's failures (.ci/run); failures that do
//                   not come back are listed at the end as flaky and do not fail the run
//   --without-tools leave out the tests of the bench and the docs (scripts/test-files.js), for
//                   the runs that test the package elsewhere (.ci/run's other Node lines, the
//                   platform suites)
//   --platform=P    the JS engine's pass alone, as on platform P (darwin, win32): with
//                   SMARTREAD_TEST_PLATFORM=P the loader loads no addon and the JS engine takes
//                   P's branches (node:fs and the kernel stay Linux's); no package checks
// The suite runs on SMARTREAD_TEST_NODE when set (a node binary), else on this node.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { runTap, runRetrying, describeFailures } = require('./tap');
const { toolTests, testFiles: suiteFiles } = require('./test-files');

const root = path.resolve(__dirname, '..');
const args = process.argv.slice(2);
const ownFlags = ['--native-only', '--retry-failed', '--without-tools'];
const nativeOnly = args.includes('--native-only');
const retryFailed = args.includes('--retry-failed');
const forcedPlatform = args.find((a) => a.startsWith('--platform='))?.slice('--platform='.length);
if (forcedPlatform !== undefined && !['aix', 'android', 'cygwin', 'darwin', 'freebsd', 'haiku', 'netbsd', 'openbsd', 'sunos', 'win32'].includes(forcedPlatform)) {
  process.stderr.write(`run-tests: --platform=${forcedPlatform}: not one of Node's platforms other than linux\n`);
  process.exit(2);
}
const files = args.filter((a) => !a.startsWith('-'));
const flags = args.filter((a) => a.startsWith('-') && !ownFlags.includes(a) && !a.startsWith('--platform='));
const testFiles = files.length > 0 ? files : suiteFiles(root, args.includes('--without-tools') ? toolTests : []);
const node = process.env.SMARTREAD_TEST_NODE || process.execPath;

// The JS engine as forcedPlatform gets it: not forced by SMARTREAD_FORCE_JS, but chosen by the
// loader, which loads no addon off Linux.
const passes = forcedPlatform ? [
  { name: `js as ${forcedPlatform}`, env: { SMARTREAD_TEST_PLATFORM: forcedPlatform, SMARTREAD_FORCE_JS: '', SMARTREAD_REQUIRE_NATIVE: '' } },
] : [
  { name: 'native', env: { SMARTREAD_REQUIRE_NATIVE: '1', SMARTREAD_FORCE_JS: '' } },
  ...(nativeOnly ? [] : [{ name: 'js', env: { SMARTREAD_FORCE_JS: '1', SMARTREAD_REQUIRE_NATIVE: '' } }]),
];

// Checks of the package itself, each a devDependency's command that must exit 0.
function bin(pkg, name) {
  const dir = path.join(root, 'node_modules', pkg);
  return path.join(dir, JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).bin[name]);
}
const packageChecks = [
  { name: 'types (tsc on test/types)', cmd: [process.execPath, bin('typescript', 'tsc'), '-p', 'test/types/tsconfig.json'] },
  { name: 'package.json (publint --strict)', cmd: [process.execPath, bin('publint', 'publint'), '--strict'] },
];

function runPackageCheck(check) {
  process.stdout.write(`\n# smartread package check: ${check.name}\n`);
  const [cmd, ...rest] = check.cmd;
  const r = spawnSync(cmd, rest, { cwd: root, stdio: 'inherit' });
  return r.status === 0;
}

// The suite makes no TLS connection. Node 26 reads NODE_EXTRA_CA_CERTS on a thread of its own
// once crypto is loaded (prom-client loads it); a file checkNoFdLeak then finds open while the
// thread is still reading, on a loaded machine, would fail the test file.
const testEnv = { ...process.env };
delete testEnv.NODE_EXTRA_CA_CERTS;

function run(pass, which) {
  const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
  process.stdout.write(`\n# smartread tests: ${pass.name} engine, node ${version}${which === testFiles ? '' : `, again: ${which.join(' ')}`}\n`);
  return runTap(node, ['--test', '--test-reporter=tap', ...flags, ...which], {
    cwd: root,
    env: { ...testEnv, ...pass.env },
  });
}

// With --retry-failed, the files of a pass's failed tests run once more. A failure that does not
// come back is still named at the end, as flaky, for the next person to chase.
function runPass(pass) {
  return runRetrying((which) => run(pass, which), testFiles, retryFailed);
}

(async () => {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  let bad = false;
  const checked = [];
  if (!nativeOnly && !forcedPlatform && files.length === 0) {
    for (const check of packageChecks) {
      const ok = runPackageCheck(check);
      checked.push(`${check.name}: ${ok ? 'ok' : 'FAILED'}`);
      if (!ok) bad = true;
    }
  }
  const endLines = [];
  for (const pass of passes) {
    const r = await runPass(pass);
    passed += r.pass;
    failed += r.fail;
    skipped += r.skipped;
    if (r.code !== 0 || r.pass === 0) bad = true;
    if (r.failures.length > 0) endLines.push(`# ${pass.name} engine, failed:`, ...describeFailures(r.failures));
    if (r.flaky.length > 0) endLines.push(`# ${pass.name} engine, FLAKY (failed, then passed when rerun):`, ...describeFailures(r.flaky));
  }
  for (const line of [...checked.map((c) => `# ${c}`), ...endLines]) process.stdout.write(`\n${line}`);
  process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  process.exit(bad || failed > 0 ? 1 : 0);
})();
