// examples/: each program, copied alone into a directory where 'smartread' resolves to this
// checkout (as it does in a project that installed it), runs and prints what it should, on
// files the test made and on the samples it makes itself. examples/static-server.ts has a test
// of its own (static-server.test.js).
'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { engineInfo } = require('smartread');
const { checkNoFdLeak, useTempDirs, makeTempDir, linkPackage, runToEnd, writePattern } = require('./helpers');

checkNoFdLeak({ spawnsChildren: true });
const tempDirs = useTempDirs();
const native = engineInfo().engine === 'native';
const examples = path.resolve(__dirname, '..', 'examples');

/** A copy of the example `name` (a file or a directory) in a directory of its own; its path. */
function install(name) {
  const dir = linkPackage(makeTempDir(tempDirs.disk, 'example-'));
  fs.cpSync(path.join(examples, name), path.join(dir, name), { recursive: true });
  return path.join(dir, name);
}

/** Runs node with `args` in `cwd`; fails unless it exits 0 with nothing on stderr but `stderr`. */
async function node(cwd, args, { stderr = '' } = {}) {
  const run = await runToEnd(process.execPath, args, { cwd, timeoutMs: 30000 });
  assert.equal(run.code, 0, `node ${args.join(' ')}: exited with ${run.code ?? run.signal}\n${run.stderr}`);
  assert.equal(run.stderr, stderr, `node ${args.join(' ')}: stderr`);
  return run.stdout;
}

test('drop-in-register: the app, unchanged, prints its page, and its reads are served by smartread where the addon is in use', async () => {
  const app = install('drop-in-register');
  const page = [
    '<!doctype html>',
    "<title>Today's reads</title>",
    "<h1>Today's reads</h1>",
    '<ul>',
    '  <li>fs.readFileSync</li>',
    '  <li>fs.promises.readFile</li>',
    '  <li>fs.readFile</li>',
    '</ul>',
    '',
  ].join('\n');
  assert.equal(await node(app, ['app.js']), page, 'on plain node');

  // The same flags on a program that reads nothing: what the loaders read, to take away.
  fs.writeFileSync(path.join(app, 'nothing.js'), '');
  const flags = ['--import', 'smartread/register', '--import', './report-served.mjs'];
  const report = (stdout) => JSON.parse(/^smartread: (.*)\n$/m.exec(stdout)[1]);
  const registered = await node(app, [...flags, 'app.js']);
  assert.ok(registered.startsWith(page), `under smartread/register:\n${registered}`);
  const { dropIn, served } = report(registered);
  const { served: byLoaders } = report(await node(app, [...flags, 'nothing.js']));
  const reads = (counts, by) => by.reduce((n, name) => n + (counts[name] ?? 0), 0);
  if (native) {
    assert.deepEqual(dropIn, { active: true, patched: ['fs.readFile', 'fs.readFileSync', 'fs.promises.readFile'] });
    assert.equal(reads(served, ['sync']) - reads(byLoaders, ['sync']), 1, 'fs.readFileSync of config.json');
    const async = ['fast-path', 'uring', 'threadpool'];
    assert.equal(reads(served, async) - reads(byLoaders, async), 2, 'fs.promises.readFile and fs.readFile of the templates');
  } else {
    assert.equal(dropIn.active, false);
    assert.match(dropIn.reason, /native addon is not in use/);
    assert.deepEqual(served, {}, 'node:fs is left alone on the pure-JS engine');
  }
});

test('read-config-tree: one object nested as the tree, JSON and flat YAML parsed, a bad file reported and left out', async () => {
  const example = install('read-config-tree.js');
  const tree = makeTempDir(tempDirs.disk, 'config-');
  fs.mkdirSync(path.join(tree, 'services', 'db'), { recursive: true });
  fs.writeFileSync(path.join(tree, 'app.json'), '{ "name": "shop", "ports": [80, 443] }');
  fs.writeFileSync(path.join(tree, 'services', 'db', 'primary.yaml'), '# the main one\nhost: db.internal\nport: 5432\nssl: true\nuser: "admin" # quoted\n\n');
  fs.writeFileSync(path.join(tree, 'services', 'cache.yml'), 'ttl: 60\n');
  const broken = '{ "name": ';
  fs.writeFileSync(path.join(tree, 'broken.json'), broken);
  fs.writeFileSync(path.join(tree, 'notes.txt'), 'not config');
  const parseError = (() => {
    try {
      JSON.parse(broken);
    } catch (err) {
      return err.message;
    }
  })();
  const stdout = await node(path.dirname(example), [example, tree], { stderr: `skipped broken.json: ${parseError}\n` });
  assert.deepEqual(JSON.parse(stdout), {
    app: { name: 'shop', ports: [80, 443] },
    services: {
      cache: { ttl: 60 },
      db: { primary: { host: 'db.internal', port: 5432, ssl: true, user: 'admin' } },
    },
  });

  assert.deepEqual(JSON.parse(await node(path.dirname(example), [example])), {
    app: { name: 'shop', port: 8080 },
    services: { cache: { ttl: 60 }, db: { host: 'db.internal', port: 5432, ssl: true } },
  }, 'the sample tree');
});

test('map-large-file: lines counted through the mapping, which is the mapping itself where the addon is in use', async () => {
  const example = install('map-large-file.js');
  // The pattern has a newline (10) at every offset ≡ 1 (mod 251), and none at the end.
  const file = writePattern(path.join(tempDirs.disk, 'large.bin'), 3 * 1024 * 1024 + 5);
  const bytes = fs.readFileSync(file);
  let lines = 0;
  let longest = 0;
  let lineStart = 0;
  for (let i = 0; i <= bytes.length; i++) {
    if (i < bytes.length && bytes[i] !== 10) continue;
    if (i < bytes.length || lineStart < bytes.length) lines++;
    longest = Math.max(longest, i - lineStart);
    lineStart = i + 1;
  }
  assert.deepEqual(JSON.parse(await node(path.dirname(example), [example, file])),
    { bytes: bytes.length, lines, longest, mapped: native });

  assert.deepEqual(JSON.parse(await node(path.dirname(example), [example])),
    { bytes: 33564190, lines: 639000, longest: 92, mapped: native }, 'the 32 MiB sample');
});

test('worker-pool: every file comes back from a worker whole, below and above the block pool size, and a failed read as its error', async () => {
  const example = install('worker-pool.js');
  const sizes = [0, 4096, 300 * 1024, 1024 * 1024 + 3];
  const files = sizes.map((size) => writePattern(path.join(tempDirs.disk, `pool-${size}`), size));
  const missing = path.join(tempDirs.disk, 'missing');
  const stdout = await node(path.dirname(example), [example, ...files, missing]);
  const sha256 = (file) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
  assert.deepEqual(stdout.trimEnd().split('\n'), [
    ...files.map((file, i) => `${file}\t${sizes[i]}\t${sha256(file)}`),
    `${missing}\terror\tENOENT: no such file or directory, open '${missing}'`,
  ]);

  const samples = (await node(path.dirname(example), [example])).trimEnd().split('\n').map((line) => line.split('\t'));
  assert.deepEqual(samples.map(([file, size]) => [path.basename(file), Number(size)]),
    [['1k.bin', 1024], ['64k.bin', 65536], ['300k.bin', 307200], ['2048k.bin', 2097152]]);
  for (const [, , hash] of samples) assert.match(hash, /^[0-9a-f]{64}$/);
});
