// A fuzz test of the public API (fast-check, seeded, a bounded number of runs): random paths,
// fds, options, flags, encodings, strategies, signals and roots for smartReadSync, smartRead,
// readMany, explain, prefetch and createReader. Every call returns the right kind of result or
// throws/rejects with a documented error: a node:fs system error (E*, negative errno, a syscall)
// or one of the codes below; never a crash, never a hang, never an undocumented error.
//
// The arguments cannot harm the machine: paths are names inside this file's temp dir (which is
// the working directory; '.' and '/' are replaced), a few fixed absolute paths, file: URLs of
// those; fds are one opened here, a closed number and invalid numbers, never 0-2.
'use strict';
const { test, before } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const fc = require('fast-check');
const { smartRead, smartReadSync, readMany, explain, prefetch, createReader, engineInfo } = require('smartread');
const { checkNoFdLeak, makeTempDir, setUpAsyncEngines, withinTime } = require('./helpers');

setUpAsyncEngines();
const dir = makeTempDir(require('node:os').tmpdir(), 'smartread-fuzz-');
fs.writeFileSync(path.join(dir, 'file'), 'some content\n');
fs.writeFileSync(path.join(dir, 'empty'), '');
fs.mkdirSync(path.join(dir, 'sub'));
fs.writeFileSync(path.join(dir, 'sub', 'inner'), Buffer.alloc(70000, 1));
fs.symlinkSync('loop-b', path.join(dir, 'loop-a'));
fs.symlinkSync('loop-a', path.join(dir, 'loop-b'));
// A link out of the dir (for confined reads), to a file of the test's own.
const elsewhere = makeTempDir(require('node:os').tmpdir(), 'smartread-fuzz-elsewhere-');
fs.writeFileSync(path.join(elsewhere, 'target'), 'elsewhere\n');
fs.symlinkSync(path.join(elsewhere, 'target'), path.join(dir, 'outside'));
// An fd open for the whole file (opened before the descriptor baseline is taken).
const openFd = fs.openSync(path.join(dir, 'file'), 'r');
checkNoFdLeak();
before(() => process.chdir(dir));

// The error codes the API documents besides node:fs's system errors (README, errors.ts).
const documentedCodes = new Set([
  'ERR_INVALID_ARG_TYPE', 'ERR_INVALID_ARG_VALUE', 'ERR_OUT_OF_RANGE', 'ERR_UNKNOWN_ENCODING',
  'ERR_FS_FILE_TOO_LARGE', 'ERR_INVALID_URL', 'ERR_INVALID_URL_SCHEME', 'ERR_INVALID_FILE_URL_HOST',
  'ERR_INVALID_FILE_URL_PATH', 'ABORT_ERR', 'ERR_SMARTREAD_STRATEGY_UNAVAILABLE',
  'ERR_SMARTREAD_OUTSIDE_ROOT', 'ERR_SMARTREAD_READER_CLOSED', 'ERR_SMARTREAD_CONFINEMENT_UNAVAILABLE',
]);
const syscalls = new Set(['open', 'read', 'fstat', 'close', 'stat', 'lstat', 'fadvise']);

/** Null when `err` is a documented error, else what is wrong with it. */
function undocumented(err) {
  if (!(err instanceof Error)) return `threw a non-Error: ${String(err)}`;
  const { code } = err;
  if (typeof code === 'string' && /^E[A-Z0-9]+$/.test(code) && code !== 'ERR') {
    if (!(Number.isInteger(err.errno) && err.errno < 0)) return `${code} without a negative errno`;
    if (!syscalls.has(err.syscall)) return `${code} with syscall ${err.syscall}`;
    if (!err.message.startsWith(`${code}: `)) return `${code} with message ${err.message}`;
    return null;
  }
  if (documentedCodes.has(code)) {
    if (code.startsWith('ERR_INVALID_ARG') && !(err instanceof TypeError)) return `${code} not a TypeError`;
    if ((code === 'ERR_OUT_OF_RANGE' || code === 'ERR_FS_FILE_TOO_LARGE') && !(err instanceof RangeError)) return `${code} not a RangeError`;
    return null;
  }
  // node:fs's own fd check (value | 0) throws these plain TypeErrors for a BigInt, a Symbol or
  // an object without prototype as the path; fs.readFileSync throws the same
  // (read-sync-errors.test.js compares them).
  if (code === undefined && err instanceof TypeError &&
      /^Cannot (mix BigInt and other types|convert a Symbol value to a number|convert object to primitive value)/.test(err.message)) return null;
  return `undocumented error ${err.name} (code ${String(code)}): ${err.message}`;
}

// ---------------------------------------------------------------------------------------------
// Arbitraries

const names = ['file', 'empty', 'sub', 'sub/inner', 'missing', 'loop-a', 'outside', 'sub/../file', ''];
const absolute = [dir, path.join(dir, 'file'), '/proc/version', '/dev/null', '/proc/self/stat'];
const safeName = fc.string({ maxLength: 40 }).map((s) => s.replace(/[./]/g, '_'));
const pathString = fc.oneof(
  fc.constantFrom(...names, ...absolute),
  safeName,
  safeName.map((s) => `${s}\u0000x`),
  fc.nat({ max: 5000 }).map((n) => 'n'.repeat(n)),
  fc.string({ unit: 'binary', maxLength: 20 }).map((s) => s.replace(/[./]/g, '_')),
);
const pathLike = fc.oneof(
  pathString,
  pathString.map((s) => Buffer.from(s)),
  pathString.map((s) => new Uint8Array(Buffer.from(s))),
  fc.uint8Array({ maxLength: 30 }).map((b) => Buffer.from(b.map((x) => (x === 0x2e || x === 0x2f ? 0x5f : x)))),
  fc.constantFrom(...names.filter(Boolean), 'missing').map((n) => pathToFileURL(path.join(dir, n))),
  fc.constantFrom(new URL('http://x/'), new URL('file://host/x'), new URL('file:///tmp%2Fx'), new URL(`${pathToFileURL(dir).href}/%00`)),
);
const fd = fc.constantFrom(openFd, 4000, -1, -7, 2 ** 31 - 1, 2 ** 31, 1.5, NaN, Infinity);
const junk = fc.oneof(
  fc.constantFrom(undefined, null, true, false, {}, [], () => {}, Symbol('s'), 10n, new Date(0), Object.create(null)),
  // Not an int32: those are fds, and 0-2 would read the test's own stdio.
  fc.double().filter((d) => (d | 0) !== d),
);
const anyPath = fc.oneof({ weight: 6, arbitrary: pathLike }, { weight: 2, arbitrary: fd }, { weight: 1, arbitrary: junk });

const encoding = fc.oneof(fc.constantFrom(undefined, null, 'utf8', 'latin1', 'base64', 'hex', 'ucs2', 'buffer', 'bogus', ''), junk);
// Flags that never write to an existing file outside the temp dir: every table flag (they may
// create or truncate names inside it), numbers from the table's bits, and junk.
const flag = fc.oneof(
  fc.constantFrom(undefined, null, '', 'r', 'rs', 'r+', 'rs+', 'w', 'wx', 'w+', 'a', 'ax', 'a+', 'as+', 'zz', 'R'),
  fc.integer({ min: 0, max: 0o4000000 }).map((n) => n & ~0o3),
  junk,
);
const strategy = fc.oneof(fc.constantFrom(undefined, 'auto', 'sync', 'threadpool', 'uring', 'mmap', 'AUTO'), junk);
const signal = fc.oneof(fc.constant(undefined), fc.constant('aborted'), fc.constant('fresh'), fc.constantFrom(null, {}, 'x', { aborted: false }));
const optionsObject = fc.record({ encoding, flag, signal, strategy }, { requiredKeys: [] });
const options = fc.oneof(fc.constantFrom(undefined, null), encoding, optionsObject, junk);

function withSignal(o) {
  if (o === null || typeof o !== 'object' || Array.isArray(o) || !('signal' in o)) return o;
  if (o.signal === 'aborted') return { ...o, signal: AbortSignal.abort() };
  if (o.signal === 'fresh') return { ...o, signal: new AbortController().signal };
  return o;
}

// Paths that are unsafe to write to with a random flag: the fixed absolute ones outside the dir.
function writesOutside(p, o) {
  const f = o !== null && typeof o === 'object' ? o.flag : undefined;
  const writes = f !== undefined && f !== null && f !== '' && f !== 'r' && f !== 'rs';
  const name = p instanceof Uint8Array ? Buffer.from(p).toString() : p instanceof URL ? p.pathname : p;
  return writes && typeof name === 'string' && !name.startsWith(dir) && name.startsWith('/');
}

const runs = Number(process.env.SMARTREAD_FUZZ_RUNS) || 400;
const seed = Number(process.env.SMARTREAD_FUZZ_SEED) || 20261123;

function checkResult(value, o) {
  const enc = typeof o === 'string' ? o : o?.encoding;
  assert.ok(Buffer.isBuffer(value) || typeof value === 'string', `a Buffer or a string, got ${typeof value}`);
  if (typeof value === 'string') assert.ok(enc, 'a string only with an encoding');
}

test(`smartReadSync: ${runs} random calls, only documented errors`, () => {
  fc.assert(fc.property(anyPath, options, (p, o) => {
    o = withSignal(o);
    fc.pre(!writesOutside(p, o));
    try {
      checkResult(smartReadSync(p, o), o);
    } catch (err) {
      const problem = undocumented(err);
      if (problem) throw new Error(problem);
    }
  }), { seed, numRuns: runs });
});

test(`smartRead: ${runs} random calls, never a synchronous throw, only documented rejections`, async () => {
  await fc.assert(fc.asyncProperty(anyPath, options, async (p, o) => {
    o = withSignal(o);
    fc.pre(!writesOutside(p, o));
    let pending;
    try {
      pending = smartRead(p, o);
    } catch (err) {
      throw new Error(`threw synchronously: ${err}`);
    }
    try {
      checkResult(await withinTime(pending, 10000, 'smartRead'), o);
    } catch (err) {
      const problem = undocumented(err);
      if (problem) throw new Error(problem);
    }
  }), { seed, numRuns: runs });
});

test(`readMany: ${runs / 2} random calls, only documented rejections`, async () => {
  const list = fc.oneof(fc.array(anyPath, { maxLength: 6 }), junk, pathString);
  const many = fc.oneof(options, optionsObject.chain((o) => fc.record({
    concurrency: fc.oneof(fc.constantFrom(undefined, null, 1, 2, 64, 0, -1, 1.5, NaN, Infinity, '3'), junk),
    settle: fc.boolean(),
  }).map((extra) => ({ ...o, ...extra }))));
  await fc.assert(fc.asyncProperty(list, many, async (ps, o) => {
    o = withSignal(o);
    fc.pre(!(Array.isArray(ps) && ps.some((p) => writesOutside(p, o))));
    let pending;
    try {
      pending = readMany(ps, o);
    } catch (err) {
      throw new Error(`threw synchronously: ${err}`);
    }
    try {
      const results = await withinTime(pending, 10000, 'readMany');
      assert.ok(Array.isArray(results));
      for (const r of results) {
        if (r !== null && typeof r === 'object' && 'status' in r && !Buffer.isBuffer(r)) {
          if (r.status === 'rejected') {
            const problem = undocumented(r.reason);
            if (problem) throw new Error(problem);
          }
        }
      }
    } catch (err) {
      const problem = undocumented(err);
      if (problem) throw new Error(problem);
    }
  }), { seed, numRuns: runs / 2 });
});

test(`explain, prefetch and createReader: ${runs / 2} random calls each, only documented errors`, async () => {
  fc.assert(fc.property(anyPath, options, (p, o) => {
    try {
      const e = explain(p, withSignal(o));
      assert.equal(typeof e.strategy, 'string');
      assert.equal(typeof e.reason, 'string');
    } catch (err) {
      const problem = undocumented(err);
      if (problem) throw new Error(problem);
    }
  }), { seed, numRuns: runs / 2 });
  await fc.assert(fc.asyncProperty(fc.oneof(fc.array(pathLike, { maxLength: 5 }), junk, pathString), async (ps) => {
    try {
      const r = await withinTime(prefetch(ps), 10000, 'prefetch');
      assert.ok(Number.isInteger(r.started));
      for (const f of r.failed) {
        const problem = undocumented(f.error);
        if (problem) throw new Error(problem);
      }
    } catch (err) {
      const problem = undocumented(err);
      if (problem) throw new Error(problem);
    }
  }), { seed, numRuns: runs / 2 });
  const root = fc.oneof(fc.constantFrom(dir, path.join(dir, 'sub'), path.join(dir, 'file'), path.join(dir, 'missing'), pathToFileURL(dir), Buffer.from(dir)), junk);
  await fc.assert(fc.asyncProperty(root, fc.oneof(fc.boolean(), junk), anyPath, options, async (r, noSymlinks, p, o) => {
    o = withSignal(o);
    fc.pre(!writesOutside(p, o));
    let reader;
    try {
      reader = createReader({ root: r, noSymlinks });
    } catch (err) {
      const problem = undocumented(err);
      if (problem) throw new Error(problem);
      return;
    }
    try {
      for (const call of [() => reader.smartReadSync(p, o), () => reader.smartRead(p, o), () => reader.readMany([p, p], o)]) {
        try {
          await withinTime(Promise.resolve().then(call), 10000, 'a confined read');
        } catch (err) {
          const problem = undocumented(err);
          if (problem) throw new Error(problem);
        }
      }
    } finally {
      reader.close();
    }
    try {
      await reader.smartRead('file');
      throw new Error('a closed reader read');
    } catch (err) {
      assert.equal(err.code, engineInfo().engine === 'native' ? 'ERR_SMARTREAD_READER_CLOSED' : err.code);
    }
  }), { seed, numRuns: runs / 2 });
});
