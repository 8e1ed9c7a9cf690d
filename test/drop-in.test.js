// smartread/fs and smartread/register: node:fs's readFile, readFileSync and promises.readFile
// with the same results, the same errors (stacks included) and the same callback semantics as
// node:fs's own, for every kind of argument; reads served by smartread where the addon is in
// use; register in the main thread, in workers, for named ES imports, and turned off.
'use strict';
const { test, before } = require('node:test');
const assert = require('node:assert/strict');
const { AsyncLocalStorage } = require('node:async_hooks');
const { createHash } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const dropIn = require('smartread/fs');
const dropInPromises = require('smartread/fs/promises');
const { metrics, engineInfo } = require('smartread');
const { checkNoFdLeak, useTempDirs, writePattern, errorFacts, runToEnd, setUpAsyncEngines } = require('./helpers');

setUpAsyncEngines();
checkNoFdLeak({ spawnsChildren: true });
const tempDirs = useTempDirs();
const native = engineInfo().engine === 'native';
const nodeLine = Number(process.versions.node.split('.')[0]);

const files = {};
before(() => {
  for (const { kind, dir } of tempDirs.all) {
    for (const size of [0, 1, 4096, 4097, 70000, 1024 * 1024 + 3]) files[`${kind}-${size}`] = writePattern(path.join(dir, `${kind}-${size}`), size);
    files[`${kind}-utf8`] = path.join(dir, `${kind}-utf8`);
    fs.writeFileSync(files[`${kind}-utf8`], 'héllo wörld \u{1F600} \xff\n'.repeat(100));
    files[`${kind}-dir`] = dir;
    files[`${kind}-missing`] = path.join(dir, 'missing');
    files[`${kind}-notdir`] = `${files[`${kind}-1`]}/below`;
  }
  files.proc = '/proc/self/cmdline';
});

// The arguments to compare on, as [label, path, options]: paths of every kind node:fs takes
// (and some it refuses), with options of every kind.
function cases() {
  const list = [];
  for (const [name, file] of Object.entries(files)) {
    list.push([name, file, undefined]);
    list.push([`${name} utf8`, file, 'utf8']);
  }
  const file = files['disk-4096'];
  const small = files['disk-1'];
  list.push(
    ['Buffer path', Buffer.from(file), undefined],
    ['file: URL', pathToFileURL(file), { encoding: 'latin1' }],
    ['http: URL', new URL('http://example.com/x'), undefined],
    ['empty path', '', undefined],
    ['NUL in path', `${file}\0x`, undefined],
    ['number path (no such fd)', 2 ** 30, undefined],
    ['float path', 1.5, undefined],
    ['object path', {}, undefined],
    ['null options', file, null],
    ['{ encoding: null }', file, { encoding: null }],
    ['{ encoding: "base64", flag: "r" }', file, { encoding: 'base64', flag: 'r' }],
    ['{ flag: "rs" }', small, { flag: 'rs' }],
    ['{ flag: "x" }', small, { flag: 'x' }],
    ['{ flag: 0 }', small, { flag: 0 }],
    ['encoding "buffer"', small, 'buffer'],
    ['encoding "bogus"', small, 'bogus'],
    ['{ encoding: "bogus" }', small, { encoding: 'bogus' }],
    ['options 42', small, 42],
    ['unknown option key', small, { encoding: 'utf8', somethingNew: true }],
    ['options with a prototype', small, Object.create({ encoding: 'hex' })],
    ['aborted signal', small, { signal: AbortSignal.abort() }],
    ['invalid signal', small, { signal: 'nope' }],
  );
  // A caller's buffer (Node 24): node:fs's own answer, whatever this node makes of it.
  list.push(['{ buffer } option', file, { buffer: Buffer.alloc(8192) }]);
  return list;
}

// What a call produced, comparable across the two implementations: the value, or the error's
// facts and stack.
function describe(outcome) {
  if ('error' in outcome) return { error: errorFacts(outcome.error), stack: stackToCaller(outcome.error?.stack) };
  const { value } = outcome;
  return Buffer.isBuffer(value) ? { buffer: value.toString('hex') } : { value };
}

// A stack down to the frame of the call* helper that made the call (the test's own frames below
// it differ by line between the two calls).
function stackToCaller(stack) {
  if (typeof stack !== 'string') return stack;
  const lines = stack.split('\n');
  const caller = lines.findIndex((line) => /\bcall(Sync|Back|Promise)\b/.test(line));
  return caller < 0 ? stack : lines.slice(0, caller + 1).join('\n');
}

// Where node:fs's Buffer has its memory to itself (not a view into a pool: node:fs pools only
// some small results, differently from one entry point and release to the next), the drop-in's
// must too: code may hand `buf.buffer` on, to a worker or to WebAssembly, and expect the file.
function assertOwnsMemoryWhereNodeDoes(actual, expected, label) {
  const owns = (b) => b.byteOffset === 0 && b.buffer.byteLength === b.length;
  if (Buffer.isBuffer(expected.value) && owns(expected.value)) {
    assert.ok(owns(actual.value), `${label}: node:fs's Buffer owns its memory, the drop-in's is a view into a larger one`);
  }
}

// Each entry point, called from one line, so that the caller's frame in an error's stack is
// the same line for node:fs's function and for the drop-in's.
function callSync(fn, p, options) {
  try {
    return { value: fn(p, options) };
  } catch (error) {
    return { error };
  }
}
function callBack(fn, p, options) {
  return new Promise((resolve) => {
    let calls = 0;
    let sync = true;
    const done = (error, value) => {
      calls++;
      resolve(error ? { error, sync, calls } : { value, sync, calls });
    };
    try {
      if (options === undefined) fn(p, done); else fn(p, options, done);
    } catch (error) {
      resolve({ error, thrown: true });
    }
    sync = false;
  });
}
async function callPromise(fn, p, options) {
  let promise;
  try {
    promise = fn(p, options);
  } catch (error) {
    return { error, thrown: true };
  }
  try {
    return { value: await promise };
  } catch (error) {
    return { error };
  }
}

test('smartread/fs is node:fs, but for its readers, and smartread/fs/promises is node:fs/promises', async () => {
  assert.deepEqual(Object.keys(dropIn).sort(), Object.keys(fs).sort());
  for (const key of Object.keys(fs)) {
    if (['readFile', 'readFileSync', 'promises'].includes(key)) continue;
    assert.equal(dropIn[key], fs[key], `smartread/fs.${key}`);
  }
  assert.notEqual(dropIn.readFile, fs.readFile);
  assert.notEqual(dropIn.readFileSync, fs.readFileSync);
  assert.equal(dropIn.promises, dropInPromises);
  assert.deepEqual(Object.keys(dropInPromises).sort(), Object.keys(fs.promises).sort());
  for (const key of Object.keys(fs.promises)) {
    if (key !== 'readFile') assert.equal(dropInPromises[key], fs.promises[key], `smartread/fs/promises.${key}`);
  }
  assert.equal(dropIn.readFile.name, 'readFile');
  assert.equal(dropIn.readFileSync.name, 'readFileSync');
  assert.equal(dropInPromises.readFile.name, 'readFile');
  // As ES modules: every name node:fs exports, the drop-in's readers among them.
  const esm = await import('smartread/fs');
  const esmNode = await import('node:fs');
  assert.deepEqual(Object.keys(esm).sort(), Object.keys(esmNode).sort());
  assert.equal(esm.readFileSync, dropIn.readFileSync);
  assert.equal(esm.default, dropIn);
  assert.equal(esm.statSync, fs.statSync);
  const esmPromises = await import('smartread/fs/promises');
  assert.deepEqual(Object.keys(esmPromises).sort(), Object.keys(await import('node:fs/promises')).sort());
  assert.equal(esmPromises.readFile, dropInPromises.readFile);
});

test('readFileSync: the same value or the same error (stack included) as node:fs, for every kind of argument', () => {
  for (const [label, p, options] of cases()) {
    const expected = callSync(fs.readFileSync, p, options);
    const actual = callSync(dropIn.readFileSync, p, options);
    assert.deepEqual(describe(actual), describe(expected), label);
    assertOwnsMemoryWhereNodeDoes(actual, expected, label);
  }
});

test('readFile: the same value or error, as asynchronously, once, as node:fs', async () => {
  for (const [label, p, options] of cases()) {
    const expected = await callBack(fs.readFile, p, options);
    const actual = await callBack(dropIn.readFile, p, options);
    assert.deepEqual(describe(actual), describe(expected), label);
    assertOwnsMemoryWhereNodeDoes(actual, expected, label);
    assert.deepEqual([actual.sync, actual.calls, actual.thrown], [expected.sync, expected.calls, expected.thrown], `${label}: how the callback was called`);
  }
});

test('promises.readFile: the same value or rejection (stack included) as node:fs', async () => {
  for (const [label, p, options] of cases()) {
    const expected = await callPromise(fs.promises.readFile, p, options);
    const actual = await callPromise(dropInPromises.readFile, p, options);
    assert.deepEqual(describe(actual), describe(expected), label);
    assertOwnsMemoryWhereNodeDoes(actual, expected, label);
    assert.equal(actual.thrown, expected.thrown, `${label}: threw instead of rejecting`);
  }
});

test('plain reads are served by smartread where the addon is in use, and by node:fs where it is not', async () => {
  metrics.reset();
  dropIn.readFileSync(files['disk-4096']);
  dropIn.readFileSync(files['disk-70000'], 'utf8');
  await dropInPromises.readFile(files['disk-4096']);
  await new Promise((resolve, reject) => dropIn.readFile(files['disk-1'], (err) => (err ? reject(err) : resolve())));
  // A signal that is not aborted yet is smartread's too: it honours an abort up to settling.
  await dropInPromises.readFile(files['disk-1'], { signal: new AbortController().signal });
  await new Promise((resolve, reject) => dropIn.readFile(files['disk-1'], { signal: new AbortController().signal }, (err) => (err ? reject(err) : resolve())));
  const served = Object.values(metrics().strategies).reduce((sum, m) => sum + m.reads, 0);
  assert.equal(served, native ? 6 : 0);
  // Calls that go to node:fs are not smartread's.
  metrics.reset();
  dropIn.readFileSync(files['disk-1'], { flag: 'rs' });
  await dropInPromises.readFile(files['disk-1'], { signal: AbortSignal.abort() }).catch(() => {});
  await dropInPromises.readFile(files['disk-1'], { encoding: 'utf8', somethingNew: true });
  assert.equal(Object.values(metrics().strategies).reduce((sum, m) => sum + m.reads, 0), 0);
});

test('readFile: the callback runs in the caller\'s async context', async () => {
  const als = new AsyncLocalStorage();
  const seen = await als.run('the caller', () => new Promise((resolve) => {
    dropIn.readFile(files['disk-4096'], () => resolve(als.getStore()));
  }));
  assert.equal(seen, 'the caller');
});

// node:fs never settles a read in the tick that asked: every nextTick and microtask that the
// tick queues, however long their chain, runs first (the result comes from the thread pool, in
// a later phase of the loop). smartread's fast path has the bytes in that tick; the drop-in
// still lets the tick end (servers batch their answers by it).
test('readFile and promises.readFile never settle in the tick that asked, as node:fs\'s do', async () => {
  const tickDoneAtSettle = (read) => new Promise((resolve, reject) => {
    let tickDone = false;
    (async () => {
      for (let i = 0; i < 200; i++) await new Promise((next) => process.nextTick(next));
      tickDone = true;
    })();
    read((err) => (err ? reject(err) : resolve(tickDone)));
  });
  const expected = (err) => (err && err.code !== 'ENOENT' ? err : null);
  for (const file of [files['disk-4096'], files['tmpfs-70000'], files['disk-missing']]) {
    for (const [label, fsys, fsp] of [['node:fs', fs, fs.promises], ['smartread/fs', dropIn, dropInPromises]]) {
      assert.equal(await tickDoneAtSettle((done) => fsys.readFile(file, (err) => done(expected(err)))), true, `${label} readFile ${file}`);
      assert.equal(await tickDoneAtSettle((done) => fsp.readFile(file).then(() => done(), (err) => done(expected(err)))), true, `${label} promises.readFile ${file}`);
    }
  }
});

test('readFile: what the callback throws is an uncaught exception, as with node:fs', async () => {
  const script = `
    const fs = require('smartread/fs');
    process.on('uncaughtException', (err) => { console.log('uncaught:', err.message); });
    process.on('unhandledRejection', (err) => { console.log('unhandled rejection:', err.message); });
    fs.readFile(${JSON.stringify(files['disk-1'])}, () => { throw new Error('from the callback'); });`;
  const { code, stdout, stderr } = await runToEnd(process.execPath, ['-e', script]);
  assert.equal(code, 0, stderr);
  assert.equal(stdout, 'uncaught: from the callback\n');
});

test('register: node:fs and named ES imports of node:fs and node:fs/promises read through smartread; metrics say by which engine', async (t) => {
  if (!native) return t.skip('register leaves node:fs alone without the addon (a test below checks that)');
  const script = `
    import { readFileSync, readFile } from 'node:fs';
    import { readFile as promisesReadFile } from 'node:fs/promises';
    import fs from 'node:fs';
    import { metrics, engineInfo } from 'smartread';
    metrics.reset();
    const file = ${JSON.stringify(files['disk-70000'])};
    const { createHash } = await import('node:crypto');
    const sha256 = (data) => createHash('sha256').update(data).digest('hex');
    const expected = ${JSON.stringify(createHash('sha256').update(fs.readFileSync(files['disk-70000'])).digest('hex'))};
    const results = [
      sha256(readFileSync(file)),
      sha256(await promisesReadFile(file)),
      sha256(Buffer.from(await new Promise((resolve, reject) => readFile(file, 'hex', (err, data) => (err ? reject(err) : resolve(data)))), 'hex')),
      sha256(Buffer.from(fs.readFileSync(file, 'latin1'), 'latin1')),
    ];
    const served = Object.fromEntries(Object.entries(metrics().strategies).filter(([, m]) => m.reads > 0).map(([by, m]) => [by, m.reads]));
    console.log(JSON.stringify({
      same: results.every((r) => r === expected),
      live: readFileSync === fs.readFileSync && promisesReadFile === fs.promises.readFile,
      served,
      dropIn: engineInfo().dropIn,
    }));`;
  for (const how of [['--import', 'smartread/register'], ['--require', 'smartread/register']]) {
    const { code, stdout, stderr } = await runToEnd(process.execPath, [...how, '--input-type=module', '-e', script]);
    assert.equal(code, 0, stderr);
    const report = JSON.parse(stdout);
    assert.equal(report.same, true, how.join(' '));
    assert.equal(report.live, true, `${how.join(' ')}: named imports are not the patched functions`);
    assert.deepEqual(report.dropIn, { active: true, patched: ['fs.readFile', 'fs.readFileSync', 'fs.promises.readFile'] });
    const total = Object.values(report.served).reduce((a, b) => a + b, 0);
    assert.equal(total, 4, `${how.join(' ')}: reads served ${JSON.stringify(report.served)}`);
    assert.ok(Object.keys(report.served).every((by) => ['fast-path', 'uring', 'threadpool', 'sync'].includes(by)), JSON.stringify(report.served));
  }
});

test('register: in a worker started with it in execArgv, and through NODE_OPTIONS', async (t) => {
  if (!native) return t.skip('register leaves node:fs alone without the addon');
  const file = files['disk-4096'];
  // A worker run from a file: node runs --import for a worker's file, not for eval'd source.
  const workerFile = path.join(tempDirs.disk, 'worker.js');
  fs.writeFileSync(workerFile, `
    const fs = require('node:fs');
    const { metrics, engineInfo } = require(${JSON.stringify(require.resolve('smartread'))});
    metrics.reset();
    const bytes = fs.readFileSync(${JSON.stringify(file)});
    require('node:worker_threads').parentPort.postMessage({ length: bytes.length, reads: metrics().strategies.sync.reads, active: engineInfo().dropIn.active });`);
  const script = `
    const { Worker } = require('node:worker_threads');
    const worker = new Worker(${JSON.stringify(workerFile)}, { execArgv: process.env.WITH_EXEC_ARGV ? ['--import', 'smartread/register'] : undefined });
    worker.on('message', (m) => console.log(JSON.stringify(m)));
    worker.on('error', (e) => { console.error(e); process.exitCode = 1; });`;
  const viaExecArgv = await runToEnd(process.execPath, ['-e', script], { env: { WITH_EXEC_ARGV: '1' } });
  assert.equal(viaExecArgv.code, 0, viaExecArgv.stderr);
  assert.deepEqual(JSON.parse(viaExecArgv.stdout), { length: 4096, reads: 1, active: true });
  const viaNodeOptions = await runToEnd(process.execPath, ['-e', script], { env: { NODE_OPTIONS: '--import=smartread/register' } });
  assert.equal(viaNodeOptions.code, 0, viaNodeOptions.stderr);
  assert.deepEqual(JSON.parse(viaNodeOptions.stdout), { length: 4096, reads: 1, active: true });
  const without = await runToEnd(process.execPath, ['-e', script]);
  assert.deepEqual(JSON.parse(without.stdout), { length: 4096, reads: 0, active: false });
});

test('register: loaded twice patches once; unregister() gives node:fs (and the named ES imports) their functions back', async () => {
  const script = `
    const fs = require('node:fs');
    const before = { readFile: fs.readFile, readFileSync: fs.readFileSync, promisesReadFile: fs.promises.readFile };
    const register = require('smartread/register');
    const patched = fs.readFileSync;
    const again = register.register();
    await import('smartread/register');
    const stillOne = fs.readFileSync === patched;
    const esmPatched = (await import('node:fs')).readFileSync === patched;
    const after = register.unregister();
    const esm = await import('node:fs');
    const esmPromises = await import('node:fs/promises');
    console.log(JSON.stringify({
      native: require('smartread').engineInfo().engine === 'native',
      changed: patched !== before.readFileSync,
      again, stillOne, esmPatched, after,
      restored: fs.readFile === before.readFile && fs.readFileSync === before.readFileSync && fs.promises.readFile === before.promisesReadFile,
      esmRestored: esm.readFileSync === before.readFileSync && esm.readFile === before.readFile && esmPromises.readFile === before.promisesReadFile,
    }));`;
  const { code, stdout, stderr } = await runToEnd(process.execPath, ['--input-type=module', '-e', `import { createRequire } from 'node:module'; const require = createRequire(process.cwd() + '/'); ${script}`]);
  assert.equal(code, 0, stderr);
  const r = JSON.parse(stdout);
  if (r.native) {
    assert.equal(r.changed, true);
    assert.equal(r.again.active, true);
    assert.equal(r.stillOne, true);
    assert.equal(r.esmPatched, true);
  } else {
    assert.equal(r.changed, false);
    assert.match(r.again.reason, /native addon is not in use/);
  }
  assert.equal(r.after.active, false);
  assert.equal(r.restored, true);
  assert.equal(r.esmRestored, true);
});

test('register: SMARTREAD_REGISTER=0, a missing addon, or another smartread already in place leave node:fs alone, saying why on engineInfo() only', async () => {
  const script = `
    const fs = require('node:fs');
    const original = fs.readFileSync;
    ${'${PRELUDE}'}
    require('smartread/register');
    console.log(JSON.stringify({ untouched: fs.readFileSync === original, dropIn: require('smartread').engineInfo().dropIn }));`;
  const run = async (env, prelude = '') => {
    const r = await runToEnd(process.execPath, ['-e', script.replace('${PRELUDE}', prelude)], { env });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '', 'nothing on stderr');
    return JSON.parse(r.stdout);
  };
  const off = await run({ SMARTREAD_REGISTER: '0' });
  assert.equal(off.untouched, true);
  assert.match(off.dropIn.reason, /SMARTREAD_REGISTER=0/);
  const noAddon = await run({ SMARTREAD_FORCE_JS: '1', SMARTREAD_REQUIRE_NATIVE: '' });
  assert.equal(noAddon.untouched, true);
  assert.match(noAddon.dropIn.reason, /native addon is not in use/);
  if (native) {
    const other = await run({}, "Object.defineProperty(fs, Symbol.for('smartread.register'), { value: { file: '/elsewhere/smartread/dist/drop_in/drop_in.js' }, configurable: true });");
    assert.equal(other.untouched, true);
    assert.match(other.dropIn.reason, /already served by the smartread at \/elsewhere/);
  }
});

test('the { buffer } option, a signal and an fd go to node:fs, whatever this node makes of them', { skip: nodeLine < 24 && 'node:fs has no buffer option before Node 24' }, () => {
  const file = files['disk-4096'];
  const buffer = Buffer.alloc(8192, 0x78);
  const mine = Buffer.alloc(8192, 0x78);
  const expected = fs.readFileSync(file, { buffer });
  const actual = dropIn.readFileSync(file, { buffer: mine });
  assert.deepEqual(describe({ value: actual }), describe({ value: expected }));
  assert.ok(mine.equals(buffer), 'the caller\'s buffer holds what node:fs put in it');
});
