// mkdirAll, mkdirAllSync and mkdirMany against node:fs's recursive mkdir: the same result (the
// first directory made, or undefined), the same error, the same tree afterwards, for every kind
// of path and of thing in the way, on every strategy; what the environment knows about
// directories never changes an outcome, only what it costs; arguments as node:fs checks them.
'use strict';
const { test, describe } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const { mkdirAll, mkdirAllSync, mkdirMany, engineInfo, createWriter } = require('smartread');
const {
  checkNoFdLeak, useTempDirs, errorFacts, thrownBy, rejectionOf, setUpAsyncEngines, unreachableWithoutRoot,
  stdoutLines, withinTime, runToEnd,
} = require('./helpers');

setUpAsyncEngines();
checkNoFdLeak();
const tempDirs = useTempDirs();

const STRATEGIES = ['auto', 'sync', 'threadpool', 'uring'];
const uringReason = () => (engineInfo().uring.available ? null : engineInfo().uring.reason);
const native = engineInfo().engine === 'native';

let fixtureCount = 0;

/** A fresh directory holding the fixture's dirs, files and symlinks ([target, name]). */
function makeFixture(base, { dirs = [], files = [], links = [] } = {}) {
  const root = path.join(base, `f${fixtureCount++}`);
  fs.mkdirSync(root);
  for (const d of dirs) fs.mkdirSync(path.join(root, d), { recursive: true });
  for (const f of files) fs.writeFileSync(path.join(root, f), 'file');
  for (const [target, name] of links) fs.symlinkSync(target, path.join(root, name));
  return root;
}

/** Every entry beneath root, with its kind and permission bits: the tree a call left. */
function treeOf(root) {
  const out = [];
  const walk = (dir) => {
    for (const name of fs.readdirSync(dir).sort()) {
      const full = path.join(dir, name);
      const st = fs.lstatSync(full);
      const kind = st.isSymbolicLink() ? 'link' : st.isDirectory() ? 'dir' : 'file';
      out.push(`${path.relative(root, full)} ${kind} ${(st.mode & 0o777).toString(8)}`);
      if (kind === 'dir') walk(full);
    }
  };
  walk(root);
  return out;
}

// The cases: a fixture, and the path (relative to it) to make.
const cases = [
  { name: 'a new tree', path: 'a/b/c' },
  { name: 'an existing directory', setup: { dirs: ['a/b'] }, path: 'a/b' },
  { name: 'only the last level missing', setup: { dirs: ['a'] }, path: 'a/b' },
  { name: 'existing levels in the middle', setup: { dirs: ['a/b'] }, path: 'a/b/c/d' },
  { name: 'a file in the way', setup: { files: ['f'] }, path: 'f' },
  { name: 'a file as the parent', setup: { files: ['f'] }, path: 'f/x' },
  { name: 'a file further up', setup: { files: ['f'] }, path: 'f/x/y/z' },
  { name: 'a dangling symlink', setup: { links: [['nowhere', 'l']] }, path: 'l' },
  { name: 'below a dangling symlink', setup: { links: [['nowhere', 'l']] }, path: 'l/x/y' },
  { name: 'a symlink to a directory', setup: { dirs: ['d'], links: [['d', 'l']] }, path: 'l' },
  { name: 'below a symlink to a directory', setup: { dirs: ['d'], links: [['d', 'l']] }, path: 'l/x/y' },
  { name: 'below a symlink loop', setup: { links: [['loop', 'loop']] }, path: 'loop/x' },
  { name: 'a trailing slash', path: 'a/b/' },
  { name: 'a double slash', path: 'a//b' },
  { name: 'dot segments', path: 'a/./b/../c' },
  { name: 'a dot-dot through a missing directory', path: 'n3/../n4/a' },
  { name: 'a name too long', path: `a/${'x'.repeat(300)}/y` },
  { name: 'a mode', path: 'm/n/o', mode: 0o750 },
  { name: 'a mode as an octal string', path: 'm/n', mode: '711' },
];

/** What a call did: its result (relative to root) or its error, and the tree it left. */
function outcome(root, fn) {
  const rel = (p) => (typeof p === 'string' ? p.split(root).join('<root>') : p);
  let result;
  try {
    result = { value: rel(fn()) };
  } catch (err) {
    const facts = errorFacts(err);
    result = { error: { ...facts, message: rel(facts.message), path: rel(facts.path) } };
  }
  return { ...result, tree: treeOf(root) };
}

async function outcomeAsync(root, fn) {
  let settled;
  try {
    settled = { ok: await fn() };
  } catch (err) {
    settled = { err };
  }
  return outcome(root, () => {
    if ('err' in settled) throw settled.err;
    return settled.ok;
  });
}

// The references: node's synchronous walk for mkdirAllSync, its asynchronous one (which differs
// below a dangling symbolic link: ENOTDIR where the other says ENOENT) for the rest.
const nodeSync = async (p, o) => fs.mkdirSync(p, { recursive: true, ...o });
const nodeAsync = (p, o) => fs.promises.mkdir(p, { recursive: true, ...o });

// node:fs on a fixture, then smartread on the same fixture made again: the same path names.
async function compare(base, c, ours, reference) {
  const setup = c.setup ?? {};
  const root = makeFixture(base, setup);
  const target = (r) => path.join(r, c.path) + (c.path.endsWith('/') ? '/' : '');
  const expected = await outcomeAsync(root, () => reference(target(root), c.mode === undefined ? {} : { mode: c.mode }));
  fs.rmSync(root, { recursive: true, force: true });
  fs.mkdirSync(root);
  for (const d of setup.dirs ?? []) fs.mkdirSync(path.join(root, d), { recursive: true });
  for (const f of setup.files ?? []) fs.writeFileSync(path.join(root, f), 'file');
  for (const [t, name] of setup.links ?? []) fs.symlinkSync(t, path.join(root, name));
  const actual = await outcomeAsync(root, () => ours(target(root), c.mode === undefined ? {} : { mode: c.mode }));
  assert.deepEqual(actual, expected);
  fs.rmSync(root, { recursive: true, force: true });
}

for (const { kind, dir } of tempDirs.all) {
  describe(`${kind}: the same as node:fs's recursive mkdir`, () => {
    for (const c of cases) {
      test(`${c.name}: mkdirAllSync`, async () => {
        await compare(dir, c, async (p, o) => mkdirAllSync(p, o), nodeSync);
      });
      for (const strategy of STRATEGIES) {
        test(`${c.name}: mkdirAll, strategy '${strategy}'`, async (t) => {
          if (strategy === 'uring' && uringReason()) return t.skip(`io_uring is not available: ${uringReason()}`);
          await compare(dir, c, (p, o) => mkdirAll(p, { ...o, strategy }), nodeAsync);
        });
      }
      test(`${c.name}: mkdirMany`, async () => {
        await compare(dir, c, async (p, o) => (await mkdirMany([p], o))[0], nodeAsync);
      });
    }
  });
}

const base = tempDirs.tmpfs ?? tempDirs.disk;

describe('what the environment knows never changes an outcome', () => {
  // Each case makes a tree through smartread (so that the environment knows its directories),
  // changes it behind smartread's back, then compares smartread's next call with node:fs's on
  // an identical tree.
  const changes = [
    { name: 'the tree removed', change: (r) => fs.rmSync(path.join(r, 'x'), { recursive: true }), path: 'x/a/b/c' },
    { name: 'the target removed', change: (r) => fs.rmdirSync(path.join(r, 'x/a/b')), path: 'x/a/b' },
    { name: 'the target made a file', change: (r) => { fs.rmdirSync(path.join(r, 'x/a/b')); fs.writeFileSync(path.join(r, 'x/a/b'), ''); }, path: 'x/a/b' },
    { name: 'a parent made a file', change: (r) => { fs.rmSync(path.join(r, 'x/a'), { recursive: true }); fs.writeFileSync(path.join(r, 'x/a'), ''); }, path: 'x/a/b/c' },
    { name: 'a parent made a symlink elsewhere', change: (r) => { fs.rmSync(path.join(r, 'x/a'), { recursive: true }); fs.mkdirSync(path.join(r, 'y')); fs.symlinkSync(path.join(r, 'y'), path.join(r, 'x/a')); }, path: 'x/a/b/c' },
    { name: 'a parent made a dangling symlink', change: (r) => { fs.rmSync(path.join(r, 'x/a'), { recursive: true }); fs.symlinkSync(path.join(r, 'nowhere'), path.join(r, 'x/a')); }, path: 'x/a/b/c' },
  ];
  const apis = [
    ['mkdirAllSync', (p) => mkdirAllSync(p), undefined, nodeSync],
    ...STRATEGIES.map((strategy) => [`mkdirAll '${strategy}'`, (p) => mkdirAll(p, { strategy }), strategy, nodeAsync]),
    ['mkdirMany', async (p) => (await mkdirMany([p]))[0], undefined, nodeAsync],
  ];
  for (const ch of changes) {
    for (const [name, call, strategy, reference] of apis) {
      test(`${ch.name}: ${name}`, async (t) => {
        if (strategy === 'uring' && uringReason()) return t.skip(`io_uring is not available: ${uringReason()}`);
        const expectedRoot = makeFixture(base);
        fs.mkdirSync(path.join(expectedRoot, 'x/a/b'), { recursive: true });
        ch.change(expectedRoot);
        const expected = await outcomeAsync(expectedRoot, () => reference(path.join(expectedRoot, ch.path)));
        const root = makeFixture(base);
        // Made (and so known) by smartread, through the same API.
        await call(path.join(root, 'x/a/b'));
        ch.change(root);
        const actual = await outcomeAsync(root, () => call(path.join(root, ch.path)));
        const rel = (o, r) => JSON.parse(JSON.stringify(o).split(r).join('<root>'));
        assert.deepEqual(rel(actual, root), rel(expected, expectedRoot));
      });
    }
  }
});

describe('mkdirMany', () => {
  test('results as if the paths were made one after another, each missing directory made once', async (t) => {
    for (const strategy of STRATEGIES) {
      if (strategy === 'uring' && uringReason()) {
        t.diagnostic(`uring skipped: ${uringReason()}`);
        continue;
      }
      const list = ['a/b/c', 'a/b', 'a/b/d', 'a/b/c/e', 'a/b/c', 'f', 'a/b/d/g/h', 'a/x/y', 'f/z'];
      const expectedRoot = makeFixture(base);
      const expected = list.map((p) => fs.mkdirSync(path.join(expectedRoot, p), { recursive: true })?.split(expectedRoot).join(''));
      const root = makeFixture(base);
      const actual = (await mkdirMany(list.map((p) => path.join(root, p)), { strategy, concurrency: 3 })).map((r) => r?.split(root).join(''));
      if (strategy === 'sync') assert.deepEqual(actual, expected, strategy);
      // The other engines make paths at once: which of two paths under one new directory
      // reports making it may differ, but every path's levels exist and are directories.
      assert.equal(actual.filter((r) => r !== undefined).length, expected.filter((r) => r !== undefined).length, strategy);
      assert.deepEqual(treeOf(root), treeOf(expectedRoot), strategy);
    }
  });

  test('100 paths under one new directory: every result, every directory', async () => {
    const root = makeFixture(base);
    const list = Array.from({ length: 100 }, (_, i) => path.join(root, 'top', `d${i}`, 'leaf'));
    const results = await mkdirMany(list);
    // The top directory is made by one of them; every other makes its own d<i>.
    assert.equal(results.filter((r) => r === path.join(root, 'top')).length, 1);
    results.forEach((r, i) => {
      if (r !== path.join(root, 'top')) assert.equal(r, path.join(root, 'top', `d${i}`));
    });
    for (const p of list) assert.ok(fs.statSync(p).isDirectory());
    assert.deepEqual(await mkdirMany(list), list.map(() => undefined));
  });

  test('the first error rejects, naming its path; settle gives each its own', async () => {
    const root = makeFixture(base, { files: ['file'] });
    const list = [path.join(root, 'ok/1'), path.join(root, 'file/x'), path.join(root, 'ok/2')];
    const expected = thrownBy(() => fs.mkdirSync(list[1], { recursive: true }));
    const err = await rejectionOf(() => mkdirMany(list));
    assert.deepEqual(errorFacts(err), errorFacts(expected));
    const settled = await mkdirMany(list, { settle: true });
    assert.equal(settled[0].status, 'fulfilled');
    assert.deepEqual(errorFacts(settled[1].reason), errorFacts(expected));
    assert.deepEqual(settled[2], { status: 'fulfilled', value: undefined });
    const withBad = await mkdirMany([path.join(root, 'ok/3'), 42], { settle: true });
    assert.equal(withBad[0].status, 'fulfilled');
    assert.equal(withBad[1].reason.code, 'ERR_INVALID_ARG_TYPE');
    // Without settle a bad path makes nothing.
    assert.equal((await rejectionOf(() => mkdirMany([path.join(root, 'none'), 42]))).code, 'ERR_INVALID_ARG_TYPE');
    assert.equal(fs.existsSync(path.join(root, 'none')), false);
  });

  test('an aborted signal rejects with an AbortError', async () => {
    const root = makeFixture(base);
    const controller = new AbortController();
    controller.abort();
    const err = await rejectionOf(() => mkdirMany([path.join(root, 'a')], { signal: controller.signal }));
    assert.equal(err.name, 'AbortError');
    const late = new AbortController();
    const pending = mkdirMany(Array.from({ length: 2000 }, (_, i) => path.join(root, `b${i}`, 'c', 'd')), { signal: late.signal });
    late.abort();
    assert.equal((await rejectionOf(() => pending)).name, 'AbortError');
  });

  test('the thread pool\'s runs look at a stop byte: paths not begun when it is set are not made (ECANCELED)', async (t) => {
    if (!native) return t.skip('the thread-pool engine needs the native addon');
    const { native: binding } = require('../dist/engine/engine.js');
    const root = makeFixture(base);
    const paths = ['a/b', 'c', 'd/e/f'].map((p) => path.join(root, p));
    assert.deepEqual(await binding.threadpoolMkdirMany(paths, 0o777, undefined, undefined, Uint8Array.of(1)),
      paths.map(() => ({ errno: -125, syscall: 'mkdir' })));
    assert.deepEqual(fs.readdirSync(root), []);
    // Not set: made as without one.
    assert.deepEqual(await binding.threadpoolMkdirMany(paths, 0o777, undefined, undefined, new Uint8Array(1)),
      [path.join(root, 'a').length, path.join(root, 'c').length, path.join(root, 'd').length]);
    assert.deepEqual(fs.readdirSync(root).sort(), ['a', 'c', 'd']);
  });

  test('an abort leaves the thread pool\'s queued runs unmade', async (t) => {
    if (!native) return t.skip('the thread-pool engine needs the native addon');
    const root = makeFixture(base);
    const fifo = path.join(root, 'fifo');
    assert.equal((await runToEnd('mkfifo', [fifo])).code, 0);
    // One pool thread, held in an open of a FIFO nobody writes: the runs mkdirMany starts wait
    // behind it, and are still queued when the signal aborts. Then the FIFO gets its writer,
    // and a stat queued after the runs tells when they have run.
    const script = `
      const fs = require('node:fs');
      const path = require('node:path');
      const { mkdirMany } = require('smartread');
      const [root, fifo] = process.argv.slice(1);
      fs.open(fifo, 'r', (err, fd) => { if (!err) fs.closeSync(fd); });
      const controller = new AbortController();
      const pending = mkdirMany(Array.from({ length: 200 }, (_, i) => path.join(root, 'made', 'd' + i, 'e')),
        { strategy: 'threadpool', signal: controller.signal });
      controller.abort();
      pending.then(() => console.log('fulfilled'), (err) => console.log(err.name));
      setTimeout(async () => {
        fs.closeSync(fs.openSync(fifo, 'w'));
        await fs.promises.stat(root);
        console.log(JSON.stringify(fs.existsSync(path.join(root, 'made')) ? fs.readdirSync(path.join(root, 'made')) : []));
      }, 100);`;
    const run = await runToEnd(process.execPath, ['-e', script, root, fifo], { env: { UV_THREADPOOL_SIZE: '1' } });
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(run.stdout.trim().split('\n'), ['AbortError', '[]']);
  });
});

describe('paths and arguments as node:fs takes them', () => {
  test('Buffer and URL paths, relative paths', async () => {
    const root = makeFixture(base);
    const expectedRoot = makeFixture(base);
    assert.equal(mkdirAllSync(Buffer.from(path.join(root, 'buf/a'))), path.join(root, 'buf'));
    assert.equal(await mkdirAll(pathToFileURL(path.join(root, 'url/a'))), path.join(root, 'url'));
    const cwd = process.cwd();
    process.chdir(root);
    try {
      assert.equal(mkdirAllSync('rel/a/b'), 'rel');
      assert.equal(await mkdirAll('./rel2/a'), './rel2');
      assert.equal((await mkdirMany(['rel3//a']))[0], 'rel3/');
      assert.equal(mkdirAllSync('.'), undefined);
      assert.deepEqual(errorFacts(thrownBy(() => mkdirAllSync(''))), errorFacts(thrownBy(() => fs.mkdirSync('', { recursive: true }))));
    } finally {
      process.chdir(cwd);
    }
    assert.equal(mkdirAllSync('/'), undefined);
    assert.equal(treeOf(expectedRoot).length, 0);
  });

  const bad = [
    ['a number path', [42]],
    ['null bytes', ['/tmp/a\0b']],
    ['a bad mode string', ['/tmp/x-never', { mode: 'zz' }]],
    ['a negative mode', ['/tmp/x-never', { mode: -1 }]],
    ['a mode that is not a number', ['/tmp/x-never', { mode: true }]],
    ['a mode given as a bad string', ['/tmp/x-never', 'zz']],
    ['a bad path and a bad mode', [42, { mode: 'zz' }]],
  ];
  for (const [name, args] of bad) {
    test(`${name}: mkdirAllSync throws what fs.mkdirSync throws`, () => {
      const expected = thrownBy(() => fs.mkdirSync(args[0], typeof args[1] === 'object' ? { recursive: true, ...args[1] } : args[1]));
      assert.deepEqual(errorFacts(thrownBy(() => mkdirAllSync(...args))), errorFacts(expected));
    });
    test(`${name}: mkdirAll rejects with what fs.promises.mkdir rejects with`, async () => {
      const expected = await rejectionOf(() => fs.promises.mkdir(args[0], typeof args[1] === 'object' ? { recursive: true, ...args[1] } : args[1]));
      assert.deepEqual(errorFacts(await rejectionOf(() => mkdirAll(...args))), errorFacts(expected));
    });
  }

  test('an unknown strategy, a bad concurrency and a bad signal are refused', async () => {
    assert.equal((await rejectionOf(() => mkdirAll('/tmp/x-never', { strategy: 'mmap' }))).code, 'ERR_INVALID_ARG_VALUE');
    assert.equal((await rejectionOf(() => mkdirMany(['/tmp/x-never'], { concurrency: 0 }))).code, 'ERR_INVALID_ARG_VALUE');
    assert.equal((await rejectionOf(() => mkdirAll('/tmp/x-never', { signal: {} }))).code, 'ERR_INVALID_ARG_TYPE');
    assert.equal((await rejectionOf(() => mkdirMany('/tmp/x-never'))).code, 'ERR_INVALID_ARG_TYPE');
  });
});

test('a directory in which mkdir fails with ENOENT though it exists (/proc): ENOENT, where node would loop forever', async (t) => {
  if (!native) return t.skip('the pure-JS engine is node:fs, which never returns here');
  // As node's walks name paths: the synchronous one the whole path, the asynchronous one the
  // level it stopped at.
  const facts = (err) => ({ code: err.code, syscall: err.syscall, path: err.path });
  const sync = thrownBy(() => mkdirAllSync('/proc/self/smartread-x/y'));
  assert.deepEqual(facts(sync), { code: 'ENOENT', syscall: 'mkdir', path: '/proc/self/smartread-x/y' });
  for (const strategy of STRATEGIES) {
    if (strategy === 'uring' && uringReason()) continue;
    const err = await rejectionOf(() => mkdirAll('/proc/self/smartread-x/y', { strategy }));
    assert.deepEqual(facts(err), { code: 'ENOENT', syscall: 'mkdir', path: '/proc/self/smartread-x' }, strategy);
  }
});

describe('confined beneath a root (createWriter)', () => {
  test('made beneath the root; out of it by .. or a symlink: ERR_SMARTREAD_OUTSIDE_ROOT, nothing made', async (t) => {
    if (!native) return t.skip('confinement needs the native addon (openat2)');
    const root = makeFixture(base, { dirs: ['inside'], links: [['/tmp', 'out']] });
    const writer = createWriter({ root });
    t.after(() => writer.close());
    assert.equal(writer.mkdirAllSync('a/b'), 'a');
    assert.equal(await writer.mkdirAll('c/d/e'), 'c');
    // Paths made at once: either of the two reports making 'f'.
    const many = await writer.mkdirMany(['f/g', 'f/h', 'inside']);
    assert.deepEqual([...many].sort(), ['f', many.includes('f/g') ? 'f/g' : 'f/h', undefined].sort());
    assert.equal(writer.mkdirAllSync('a/b'), undefined);
    for (const escape of ['../escaped', 'out/escaped', 'a/../../escaped']) {
      const err = await rejectionOf(() => writer.mkdirAll(escape));
      assert.equal(err.code, 'ERR_SMARTREAD_OUTSIDE_ROOT', escape);
      assert.equal(thrownBy(() => writer.mkdirAllSync(escape)).code, 'ERR_SMARTREAD_OUTSIDE_ROOT', escape);
    }
    assert.equal(fs.existsSync(path.join(path.dirname(root), 'escaped')), false);
    assert.equal(fs.existsSync('/tmp/escaped'), false);
    fs.writeFileSync(path.join(root, 'file'), '');
    const expected = thrownBy(() => fs.mkdirSync(path.join(root, 'file/x'), { recursive: true }));
    const err = thrownBy(() => writer.mkdirAllSync('file/x'));
    assert.equal(err.code, expected.code);
    assert.equal(err.syscall, 'mkdir');
    writer.close();
    assert.equal((await rejectionOf(() => writer.mkdirAll('z'))).code, 'ERR_SMARTREAD_READER_CLOSED');
  });
});

test('permission denied (EACCES) in a child running as nobody: the errors of node:fs', async (t) => {
  if (process.getuid() !== 0) return t.skip('needs root, to make a directory that a child with another uid cannot write');
  const unreachable = unreachableWithoutRoot();
  if (unreachable) return t.skip(`a child running as nobody could not load smartread: ${unreachable}`);
  const root = makeFixture(tempDirs.disk, { dirs: ['locked'] });
  fs.chmodSync(root, 0o755);
  fs.chmodSync(path.join(root, 'locked'), 0o555);
  let dir = path.dirname(root);
  const restore = [];
  // The child must reach the fixture: open the way down to it.
  for (; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const mode = fs.statSync(dir).mode & 0o777;
    if ((mode & 0o001) === 0) {
      restore.push([dir, mode]);
      fs.chmodSync(dir, mode | 0o001);
    }
  }
  try {
    const childSource = `
      const fs = require('node:fs');
      const { mkdirAll, mkdirAllSync, mkdirMany, engineInfo } = require('smartread');
      const { errorFacts } = require(process.env.SMARTREAD_TEST_HELPERS);
      const target = process.env.SMARTREAD_TEST_TARGET;
      (async () => {
        const out = { uid: process.getuid(), cases: [] };
        const caught = (fn) => { try { fn(); return null; } catch (err) { return errorFacts(err); } };
        out.expected = caught(() => fs.mkdirSync(target, { recursive: true }));
        out.expectedAsync = await fs.promises.mkdir(target, { recursive: true }).then(() => null, errorFacts);
        out.sync = caught(() => mkdirAllSync(target));
        for (const strategy of ['auto', 'sync', 'threadpool', 'uring']) {
          if (strategy === 'uring' && !engineInfo().uring.available) continue;
          out.cases.push({ strategy, one: await mkdirAll(target, { strategy }).then(() => null, errorFacts),
            many: await mkdirMany([target], { strategy }).then(() => null, errorFacts) });
        }
        process.stdout.write(JSON.stringify(out) + '\\n');
      })();
    `;
    const { spawn } = require('node:child_process');
    const child = spawn(process.execPath, ['-e', childSource], {
      cwd: path.resolve(__dirname, '..'),
      uid: 65534,
      gid: 65534,
      env: { ...process.env, SMARTREAD_TEST_HELPERS: require.resolve('./helpers'), SMARTREAD_TEST_TARGET: path.join(root, 'locked/a/b') },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const [line] = await withinTime(stdoutLines(child).all(), 60000, 'the child as nobody');
    const out = JSON.parse(line);
    assert.equal(out.uid, 65534);
    assert.equal(out.expected.code, 'EACCES');
    assert.deepEqual(out.sync, out.expected);
    assert.equal(out.expectedAsync.code, 'EACCES');
    for (const c of out.cases) {
      assert.deepEqual(c.one, out.expectedAsync, `mkdirAll '${c.strategy}'`);
      assert.deepEqual(c.many, out.expectedAsync, `mkdirMany '${c.strategy}'`);
    }
  } finally {
    for (const [d, mode] of restore) fs.chmodSync(d, mode);
  }
});
