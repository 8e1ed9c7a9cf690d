#!/usr/bin/env node
// `npm run test:asan`: the test suite against an AddressSanitizer + UndefinedBehaviorSanitizer
// build of the addon, on the native engine only.
//
// The sanitized addon is built (SMARTREAD_SANITIZE=1: -fsanitize=address,undefined
// -fno-omit-frame-pointer, see binding.gyp) in a scratch copy of the package in the temp dir, so
// that build/Release is left alone; the copy has its own dist/, test/ and build/, and links
// node_modules. Node is not built with ASan, so the runtime is preloaded
// (LD_PRELOAD=$(gcc -print-file-name=libasan.so)); leak detection is off, as Node leaks by design
// at exit; any ASan report or UBSan error ends the process with an error and fails its tests.
//
// Files skipped under ASan, to keep it within CI's time (each also runs unsanitized in npm test):
// the tests of the bench and the docs (scripts/test-files.js: tools, no engine code of their own),
// races and read-sync-races (timing races that need speed to race), sync-memory (peak RSS beside
// fs.readFileSync's, which ASan's quarantine of freed memory makes meaningless), and
// uring-lifecycle's slow worker terminations are cut to 10.
'use strict';
const { spawnSync, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { runTap, runRetrying, describeFailures } = require('./tap');
const { toolTests, testFiles } = require('./test-files');

const root = path.resolve(__dirname, '..');
const skipped = [...toolTests, 'races.test.js', 'read-sync-races.test.js', 'sync-memory.test.js'];
// --retry-failed: rerun, once, the files of failed tests (.ci/run); a failure that does not come
// back is listed as flaky. A sanitizer report is never forgiven.
const retryFailed = process.argv.includes('--retry-failed');
const extraArgs = process.argv.slice(2).filter((a) => a !== '--retry-failed');

function runtime(name) {
  const file = execFileSync('gcc', [`-print-file-name=${name}`], { encoding: 'utf8' }).trim();
  if (!path.isAbsolute(file) || !fs.existsSync(file)) throw new Error(`no ${name} from gcc (got '${file}'): install gcc's sanitizer runtimes`);
  return file;
}

function copy(from, to) {
  const results = path.join(root, 'bench', 'results');
  // Bench reports stay behind: no test left under ASan reads them.
  const kept = (src) => !src.startsWith(results + path.sep);
  fs.cpSync(path.join(root, from), path.join(to, from), { recursive: true, filter: kept });
}

function build(scratch) {
  // The bench too: the tests' mounts are its (test/mounts.js).
  for (const item of ['package.json', 'binding.gyp', 'tsconfig.json', 'tsconfig.examples.json', 'src', 'scripts', 'test',
    'dist', 'bench', 'examples', 'LICENSE']) copy(item, scratch);
  // Children that drop root (the EACCES tests) must still reach the package.
  fs.chmodSync(scratch, 0o755);
  fs.symlinkSync(path.join(root, 'node_modules'), path.join(scratch, 'node_modules'));
  process.stdout.write(`# asan: building the sanitized addon in ${scratch}\n`);
  const built = spawnSync(process.execPath, [path.join(scratch, 'scripts', 'build-native.js'), '--force'], {
    cwd: scratch,
    env: { ...process.env, SMARTREAD_SANITIZE: '1' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (built.status !== 0) throw new Error('the sanitized build failed');
  const nm = spawnSync('nm', ['-D', path.join(scratch, 'build', 'Release', 'smartread.node')], { encoding: 'utf8' });
  if (!/__asan_/.test(nm.stdout ?? '')) throw new Error('the addon was built without ASan instrumentation');
}

function runTests(scratch, env) {
  const files = testFiles(scratch, skipped);
  process.stdout.write(`# asan: ${files.length} test files; skipped: ${skipped.join(', ')}\n`);
  return runRetrying((which) => {
    if (which !== files) process.stdout.write(`# asan: again: ${which.join(' ')}\n`);
    return runTap(process.execPath, ['--test', '--test-reporter=tap', ...extraArgs, ...which], {
      cwd: scratch, env, stdio: ['ignore', 'pipe', 'pipe'],
    });
  }, files, retryFailed);
}

(async () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'smartread-asan-'));
  try {
    build(scratch);
    const env = {
      ...process.env,
      SMARTREAD_REQUIRE_NATIVE: '1',
      SMARTREAD_FORCE_JS: '',
      SMARTREAD_TEST_TERMINATIONS: '10',
      LD_PRELOAD: runtime('libasan.so'),
      ASAN_OPTIONS: 'detect_leaks=0:abort_on_error=1:print_summary=1',
      UBSAN_OPTIONS: 'halt_on_error=1:print_stacktrace=1',
    };
    const r = await runTests(scratch, env);
    if (r.failures.length > 0) process.stdout.write(`\n# failed:\n${describeFailures(r.failures).join('\n')}\n`);
    if (r.flaky.length > 0) process.stdout.write(`\n# FLAKY (failed, then passed when rerun):\n${describeFailures(r.flaky).join('\n')}\n`);
    process.stdout.write(`\nasan: ${r.pass} passed, ${r.fail} failed, ${r.skipped} skipped, ${r.sanitizerReports} sanitizer reports\n`);
    process.exitCode = r.code === 0 && r.fail === 0 && r.pass > 0 && r.sanitizerReports === 0 ? 0 : 1;
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
})().catch((err) => {
  process.stderr.write(`asan: ${err.message}\n`);
  process.exitCode = 1;
});
