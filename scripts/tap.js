// Runs a `node --test --test-reporter=tap` child, passes its report through, and reads it: the
// summary counts, and each failed test with where it is, so that a runner can name the failures
// again at the end of a long log (CI shows only the log's tail) and rerun the files they are in.
'use strict';
const { spawn } = require('node:child_process');
const path = require('node:path');

const SANITIZER_REPORT = /ERROR: AddressSanitizer|runtime error:|ERROR: LeakSanitizer/g;

/**
 * Spawns `command args` with `options` (stdout is piped, stderr inherited unless options.stdio
 * says otherwise) and resolves with { pass, fail, skipped, code, failures, sanitizerReports }.
 * The report is passed through to this process's stdout and stderr, or to `write` when given
 * (a runner that runs several at once keeps each whole).
 * failures: [{ name, file }] for every failed test, nested ones included; `file` is the test file
 * (relative to options.cwd) from the failure's location, or undefined when the report has none.
 */
function runTap(command, args, { write, ...options }) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'], ...options });
    const result = { pass: 0, fail: 0, skipped: 0, failures: [], sanitizerReports: 0 };
    const out = write ?? ((text) => process.stdout.write(text));
    const err = write ?? ((text) => process.stderr.write(text));
    let pending; // the last failure seen, waiting for its location line
    let tail = '';
    const countSanitizerReports = (text) => {
      result.sanitizerReports += (text.match(SANITIZER_REPORT) ?? []).length;
    };
    child.stdout.on('data', (chunk) => {
      out(chunk);
      const text = chunk.toString();
      // node:test forwards a test file's stderr into its report.
      countSanitizerReports(text);
      tail += text;
      const lines = tail.split('\n');
      tail = lines.pop();
      for (const line of lines) {
        const count = /^# (pass|fail|skipped) (\d+)$/.exec(line);
        if (count) result[count[1]] = Number(count[2]);
        // A failing test marked todo is expected to fail: TAP does not count it as a failure.
        const failed = /^\s*not ok \d+ - (.*?)(?: # (TODO|SKIP)\b.*)?$/i.exec(line);
        if (failed && !failed[2]) {
          pending = { name: failed[1], file: testFileOf(failed[1], options.cwd) };
          result.failures.push(pending);
          continue;
        }
        const location = /^\s*location: '(.*):\d+:\d+'$/.exec(line);
        if (location && pending) {
          pending.file ??= testFileOf(location[1], options.cwd);
          pending = undefined;
        }
      }
    });
    child.stderr?.on('data', (chunk) => {
      err(chunk);
      countSanitizerReports(chunk.toString());
    });
    child.on('close', (code) => resolve({ ...result, code }));
  });
}

// A test file named by a failure: its location, or the name itself when a whole file failed.
function testFileOf(text, cwd) {
  if (!/\.test\.js$/.test(text)) return undefined;
  return path.relative(cwd ?? process.cwd(), path.resolve(cwd ?? process.cwd(), text));
}

/** The lines that name each failure, for the end of a log. */
function describeFailures(failures) {
  return failures.map((f) => `#   not ok: ${f.name}${f.file ? ` (${f.file})` : ''}`);
}

/**
 * Runs `files` through `run(files)` (a promise of runTap's result); with `retry`, the files of
 * the failed tests run once more. A failure that does not come back is returned in `flaky` and no
 * longer fails the result; one that does, fails it with the failures of both runs. Sanitizer
 * reports of both runs are added up: a rerun never forgives one.
 */
async function runRetrying(run, files, retry) {
  const first = await run(files);
  const report = { ...first, flaky: [] };
  if (!retry || first.failures.length === 0) return report;
  const rerun = [...new Set(first.failures.map((f) => f.file))];
  if (rerun.includes(undefined)) return report;
  const again = await run(rerun);
  const sanitizerReports = first.sanitizerReports + again.sanitizerReports;
  if (again.code !== 0 || again.fail > 0 || again.pass === 0) {
    return { ...report, sanitizerReports, failures: [...first.failures, ...again.failures] };
  }
  // Every test that failed passed on its second run: it counts as passed.
  return { ...report, sanitizerReports, code: 0, pass: first.pass + first.fail, fail: 0, failures: [], flaky: first.failures };
}

module.exports = { runTap, runRetrying, describeFailures };
