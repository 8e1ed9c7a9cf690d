// The source tree's layers: a TypeScript file imports, and a C++ file includes, only files of its
// own folder or of a folder below it, and no file comes back to itself through them (so no
// folder does either). Each check lists all its failures at once, with file and line.
//
// The folders, bottom first, are `tsLayers` and `nativeLayers` below (docs/how-it-works.md draws
// the same trees); folders of one layer stand side by side and take nothing of each other; `.` is
// the top of the tree, the entry points (src/ts) and addon.cc (src/native). Every import counts,
// type-only ones too: a type still ties one file's meaning to another's, and the circle this
// check replaced (engine.ts → native.ts → tuning.ts → engine.ts) ran through a type. Imports are
// read by TypeScript's own scanner (ts.preProcessFile: import, export … from, import x =
// require(), import()), not by a pattern; includes are the `#include "…"` lines, each resolved
// from the including file's folder, as the compiler resolves them (binding.gyp adds no
// include path of ours), conditional ones too.
'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const ts = require('typescript');
const { makeTempDir } = require('./helpers');

const repo = path.resolve(__dirname, '..');

// src/ts, bottom first: what every area shares; the engine (the addon, its loader, the pure-JS
// engine, the tuning); the readers; the writers (which use the readers' confined roots and ring);
// the static-file handler and the drop-in (both built on the readers); the entry points.
const tsLayers = [['common'], ['engine'], ['read'], ['write'], ['serve', 'drop_in'], ['.']];
// src/native, the same split: what every engine shares (arguments, errors, read loops, destination
// Buffers, the block pool, the pool job); the read engines and the write engines, side by side;
// io_uring, whose chains do both; addon.cc.
const nativeLayers = [['common'], ['read', 'write'], ['uring'], ['.']];

// The folder of a file given relative to the tree's root: its first directory, or '.' at the top.
function folderOf(file) {
  const parts = file.split('/');
  return parts.length > 1 ? parts[0] : '.';
}

function lineAt(text, pos) {
  return text.slice(0, pos).split('\n').length;
}

/** Every .ts file under `root` (relative, '/'-separated, sorted) with the files it imports: { file: [{ target, line }] }. */
function tsImports(root) {
  const files = fs.readdirSync(root, { recursive: true })
    .map((f) => f.split(path.sep).join('/')).filter((f) => f.endsWith('.ts')).sort();
  const graph = new Map();
  const failures = [];
  for (const file of files) {
    const text = fs.readFileSync(path.join(root, file), 'utf8');
    const edges = [];
    for (const { fileName, pos } of ts.preProcessFile(text, true, true).importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const base = path.posix.normalize(path.posix.join(path.posix.dirname(file), fileName));
      const target = [`${base}.ts`, `${base}/index.ts`].find((f) => files.includes(f));
      if (target === undefined) failures.push(`${file}:${lineAt(text, pos)}: imports ${fileName}, no .ts file of the tree`);
      else edges.push({ target, line: lineAt(text, pos) });
    }
    graph.set(file, edges);
  }
  return { graph, failures };
}

/** Every .cc and .h file under `root` with the files its quoted includes name: { file: [{ target, line }] }. */
function nativeIncludes(root) {
  const files = fs.readdirSync(root, { recursive: true })
    .map((f) => f.split(path.sep).join('/')).filter((f) => /\.(cc|h)$/.test(f)).sort();
  const graph = new Map();
  const failures = [];
  for (const file of files) {
    const edges = [];
    fs.readFileSync(path.join(root, file), 'utf8').split('\n').forEach((text, i) => {
      const included = /^\s*#\s*include\s*"([^"]+)"/.exec(text)?.[1];
      if (included === undefined) return;
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), included));
      if (files.includes(target)) edges.push({ target, line: i + 1 });
      else failures.push(`${file}:${i + 1}: includes "${included}", no file of the tree`);
    });
    graph.set(file, edges);
  }
  return { graph, failures };
}

/** What breaks the layers: a file taken from a folder beside or above, a folder in no layer, a layer's folder that is gone. */
function layerFailures(root, graph, layers, verb) {
  const rank = new Map(layers.flatMap((folders, i) => folders.map((f) => [f, i])));
  const failures = [];
  const folders = new Set([...graph.keys()].map(folderOf));
  for (const folder of [...folders].sort()) {
    if (!rank.has(folder)) failures.push(`${folder}/: a folder in no layer (add it to the layers, in order)`);
  }
  for (const folder of rank.keys()) {
    if (!fs.existsSync(path.join(root, folder))) failures.push(`${folder}/: a layer's folder that does not exist`);
  }
  for (const [file, edges] of graph) {
    const from = folderOf(file);
    for (const { target, line } of edges) {
      const to = folderOf(target);
      if (to === from || !rank.has(from) || !rank.has(to)) continue;
      if (rank.get(to) > rank.get(from)) failures.push(`${file}:${line}: ${verb} ${target}, from a folder above (${to}/ over ${from}/)`);
      else if (rank.get(to) === rank.get(from)) failures.push(`${file}:${line}: ${verb} ${target}, from a folder beside (${to}/ and ${from}/ are one layer)`);
    }
  }
  return failures;
}

/** Every circle of the graph, each once: the files of a strongly connected component (Tarjan), and a file that imports itself. */
function circles(graph) {
  const index = new Map();
  const low = new Map();
  const onStack = new Set();
  const stack = [];
  const found = [];
  let next = 0;
  const visit = (file) => {
    index.set(file, next);
    low.set(file, next++);
    stack.push(file);
    onStack.add(file);
    for (const { target } of graph.get(file)) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file), low.get(target)));
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file), index.get(target)));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component = [];
    let member;
    do {
      member = stack.pop();
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    const selfLoop = graph.get(file).some((e) => e.target === file);
    if (component.length > 1 || selfLoop) found.push(describeCircle(graph, component.sort()));
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found.sort();
}

// One way round a circle, from its first file: a → b → … → a, with the line of each import.
function describeCircle(graph, component) {
  const members = new Set(component);
  const start = component[0];
  // Breadth-first from start, within the component, back to start: the shortest way round.
  const cameFrom = new Map();
  const queue = [start];
  let last = null;
  while (queue.length > 0 && last === null) {
    const file = queue.shift();
    for (const edge of graph.get(file)) {
      if (!members.has(edge.target)) continue;
      if (edge.target === start) {
        last = { file, edge };
        break;
      }
      if (!cameFrom.has(edge.target)) {
        cameFrom.set(edge.target, { file, edge });
        queue.push(edge.target);
      }
    }
  }
  const steps = [last];
  while (steps[0].file !== start) steps.unshift(cameFrom.get(steps[0].file));
  const way = steps.map(({ file, edge }) => `${file}:${edge.line}`).join(' → ');
  const others = component.filter((f) => !steps.some((s) => s.file === f));
  return `a circle: ${way} → ${start}${others.length > 0 ? ` (and round through ${others.join(', ')})` : ''}`;
}

/** All that is wrong with the TypeScript tree at `root`. */
function checkTs(root, layers) {
  const { graph, failures } = tsImports(root);
  return [...failures, ...layerFailures(root, graph, layers, 'imports'), ...circles(graph)];
}

/** All that is wrong with the C++ tree at `root`. */
function checkNative(root, layers) {
  const { graph, failures } = nativeIncludes(root);
  return [...failures, ...layerFailures(root, graph, layers, 'includes'), ...circles(graph)];
}

// ---------------------------------------------------------------------------------------------
// The checks on this repository

test('src/ts: every import is of its own folder or one below, and none comes back round', () => {
  const failures = checkTs(path.join(repo, 'src', 'ts'), tsLayers);
  assert.deepEqual(failures, [], `the TypeScript tree breaks its layers:\n  ${failures.join('\n  ')}`);
});

test('src/native: every include is of its own folder or one below, and none comes back round', () => {
  const failures = checkNative(path.join(repo, 'src', 'native'), nativeLayers);
  assert.deepEqual(failures, [], `the C++ tree breaks its layers:\n  ${failures.join('\n  ')}`);
});

// ---------------------------------------------------------------------------------------------
// The checks themselves, on a small tree with a fault of each kind

test('the TypeScript check finds circles, imports from above and beside, and strays, with file and line', () => {
  const root = makeTempDir(os.tmpdir(), 'smartread-layers-ts-');
  const write = (file, text) => {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), text);
  };
  write('index.ts', "export { a } from './low/a';\nimport './high';\n");
  write('high/index.ts', "import type { A } from '../low/a';\nexport type B = A;\n");
  write('low/a.ts', "// import { c } from './c'; (a comment)\nimport { b } from './b';\nexport const a = b;\n");
  write('low/b.ts', "import type { C } from './c';\nexport const b: C = 1;\n");
  write('low/c.ts', "export type C = number;\nimport('./a');\nimport x = require('../side/s');\n");
  write('side/s.ts', "import { a } from '../low/a';\nimport { t } from '../twin/t';\nexport = a;\n");
  write('twin/t.ts', "import { self } from './t';\nexport const t = 1;\nexport const self = 2;\nimport { no } from './missing';\n");
  const layers = [['low'], ['side', 'twin'], ['high'], ['.'], ['gone']];
  assert.deepEqual(checkTs(root, layers), [
    'twin/t.ts:4: imports ./missing, no .ts file of the tree',
    'gone/: a layer\'s folder that does not exist',
    'low/c.ts:3: imports side/s.ts, from a folder above (side/ over low/)',
    'side/s.ts:2: imports twin/t.ts, from a folder beside (twin/ and side/ are one layer)',
    'a circle: low/a.ts:2 → low/b.ts:1 → low/c.ts:2 → low/a.ts (and round through side/s.ts)',
    'a circle: twin/t.ts:1 → twin/t.ts',
  ]);
  // A folder the layers leave out is named, and its imports are not judged until it has a place.
  assert.deepEqual(checkTs(root, [['low'], ['side'], ['high'], ['.']]).filter((f) => !f.startsWith('a circle')), [
    'twin/t.ts:4: imports ./missing, no .ts file of the tree',
    'twin/: a folder in no layer (add it to the layers, in order)',
    'low/c.ts:3: imports side/s.ts, from a folder above (side/ over low/)',
  ]);
});

test('the C++ check finds circles between folders, includes from above and beside, with file and line', () => {
  const root = makeTempDir(os.tmpdir(), 'smartread-layers-native-');
  const write = (file, text) => {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), text);
  };
  write('addon.cc', '#include <napi.h>\n#include "read/r.h"\n#include "write/w.h"\n');
  write('common/c.h', '#pragma once\n// #include "../addon.cc" is not an include\n#include "c.h"\n');
  write('common/c.cc', '#include "c.h"\n#include "../top.h"\n');
  write('top.h', '#pragma once\n');
  write('read/r.h', '#pragma once\n#include "../common/c.h"\n#ifdef HAVE_LIBURING\n#include "../write/w.h"\n#endif\n');
  write('write/w.h', '#pragma once\n  #  include "../read/r.h"\n#include "nowhere.h"\n');
  assert.deepEqual(checkNative(root, [['common'], ['read', 'write'], ['.']]), [
    'write/w.h:3: includes "nowhere.h", no file of the tree',
    'common/c.cc:2: includes top.h, from a folder above (./ over common/)',
    'read/r.h:4: includes write/w.h, from a folder beside (write/ and read/ are one layer)',
    'write/w.h:2: includes read/r.h, from a folder beside (read/ and write/ are one layer)',
    'a circle: common/c.h:3 → common/c.h',
    'a circle: read/r.h:4 → write/w.h:2 → read/r.h',
  ]);
});
