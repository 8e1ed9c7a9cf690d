// Documentation that cannot rot: docs/api is what TypeDoc makes of the sources now, every code
// block of the Markdown marked runnable runs and exits 0, and every relative link and anchor
// leads somewhere. Each check lists all its failures at once, with file and line.
//
// A runnable block is a fence whose info string has the word `runnable` after the language
// (GitHub highlights by the first word and ignores the rest):
//   ```js runnable        CommonJS (.cjs), or an ES module (.mjs) when it has import/export
//                         statements or the word `esm` (then it may use top-level await)
//   ```ts runnable        transpiled (not type-checked) by the repository's TypeScript to an ES
//                         module (.mjs)
// Each block runs in a fresh directory of its own, as its cwd (files it writes there are
// scratch, removed afterwards), where `smartread` resolves to this repository; with a timeout.
'use strict';
const { test, before } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const MarkdownIt = require('markdown-it');
const { makeTempDir, linkPackage, runToEnd } = require('./helpers');

const repo = path.resolve(__dirname, '..');
const blockTimeoutMs = 15000;

/** The documentation under `root`: its top-level Markdown, and all of it under docs/ and examples/. */
function markdownFiles(root) {
  const files = fs.readdirSync(root).filter((f) => f.endsWith('.md'));
  for (const dir of ['docs', 'examples']) {
    if (!fs.existsSync(path.join(root, dir))) continue;
    for (const f of fs.readdirSync(path.join(root, dir), { recursive: true })) {
      if (f.endsWith('.md')) files.push(path.join(dir, f));
    }
  }
  return files.sort();
}

// ---------------------------------------------------------------------------------------------
// Parsing: markdown-it's tokens; headings' anchors as GitHub makes them (github-slugger)

const markdown = new MarkdownIt({ html: true });
let GithubSlugger;
before(async () => {
  ({ default: GithubSlugger } = await import('github-slugger'));
});

// The text GitHub slugs a heading from: what it renders, without markup or HTML tags.
function plainText(inline) {
  return inline.children.filter((t) => t.type === 'text' || t.type === 'code_inline').map((t) => t.content).join('');
}

const htmlAttribute = (names) => new RegExp(`\\b(?:${names})\\s*=\\s*["']([^"']*)["']`, 'gi');
const htmlTargets = (html) => [...html.matchAll(htmlAttribute('href|src'))].map((m) => m[1]);

/** A Markdown file under `root`: its anchors, its links with their lines, its fenced code blocks. */
function parse(root, file) {
  const source = fs.readFileSync(path.join(root, file), 'utf8');
  const lines = source.split('\n');
  const tokens = markdown.parse(source, {});
  const slugger = new GithubSlugger();
  const anchors = new Set();
  const links = [];
  const fences = [];
  // A link's line: where its target first appears in its block's source, after the one before
  // (the inline content of a table cell has no lines of its own: its row's are used).
  let map = [0, lines.length];
  const linksIn = (token, targets) => {
    const [start, end] = token.map ?? map;
    const text = lines.slice(start, end).join('\n');
    let from = 0;
    for (const target of targets) {
      const at = text.indexOf(target, from);
      if (at >= 0) from = at + target.length;
      links.push({ target, line: start + 1 + (at >= 0 ? text.slice(0, at).split('\n').length - 1 : 0) });
    }
  };
  tokens.forEach((token, i) => {
    if (token.map) map = token.map;
    if (token.type === 'heading_open') anchors.add(slugger.slug(plainText(tokens[i + 1])));
    if (token.type === 'fence') {
      const [lang = '', ...words] = token.info.trim().split(/\s+/);
      fences.push({ file, line: token.map[0] + 1, lang, words, code: token.content });
    }
    if (token.type === 'html_block') {
      for (const m of token.content.matchAll(htmlAttribute('id|name'))) anchors.add(m[1]);
      linksIn(token, htmlTargets(token.content));
    }
    if (token.type === 'inline') {
      const targets = [];
      for (const child of token.children) {
        if (child.type === 'link_open') targets.push(child.attrGet('href'));
        if (child.type === 'image') targets.push(child.attrGet('src'));
        if (child.type === 'html_inline') {
          for (const m of child.content.matchAll(htmlAttribute('id|name'))) anchors.add(m[1]);
          targets.push(...htmlTargets(child.content));
        }
      }
      linksIn(token, targets);
    }
  });
  return { anchors, links, fences };
}

// ---------------------------------------------------------------------------------------------
// Runnable blocks

const runnableLanguages = ['js', 'javascript', 'mjs', 'cjs', 'ts', 'typescript'];

/** The blocks marked runnable in the documentation under `root`. */
function runnableBlocks(root) {
  return markdownFiles(root).flatMap((file) => parse(root, file).fences.filter((f) => f.words.includes('runnable')));
}

let typescript;
function moduleFile(block) {
  if (block.lang === 'ts' || block.lang === 'typescript') {
    typescript ??= require('typescript');
    const { outputText } = typescript.transpileModule(block.code, {
      compilerOptions: { module: typescript.ModuleKind.ESNext, target: typescript.ScriptTarget.ES2022, esModuleInterop: true },
    });
    return { name: 'block.mjs', text: outputText };
  }
  const esm = block.lang === 'mjs' || block.words.includes('esm') || /^\s*(import\s+[\w*{'"]|export\s)/m.test(block.code);
  return { name: esm ? 'block.mjs' : 'block.cjs', text: block.code };
}

/** Runs one block in a scratch directory of its own; null when it exits 0, else why not. */
async function runBlock(block) {
  if (!runnableLanguages.includes(block.lang)) {
    return `${block.file}:${block.line}: a runnable block must be ${runnableLanguages.join(', ')}, not '${block.lang}'`;
  }
  const dir = linkPackage(makeTempDir(os.tmpdir(), 'smartread-doc-block-'));
  try {
    const { name, text } = moduleFile(block);
    fs.writeFileSync(path.join(dir, name), text);
    const run = await runToEnd(process.execPath, [name], { cwd: dir, timeoutMs: blockTimeoutMs });
    if (run.code === 0) return null;
    const why = run.timedOut ? `still running after ${blockTimeoutMs} ms` : `exited with ${run.code ?? run.signal}`;
    const output = `${run.stderr}${run.stdout}`.trim().split('\n').slice(-12).map((l) => `    ${l}`).join('\n');
    return `${block.file}:${block.line}: ${block.lang} block ${why}\n${output}`;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Every failure of `blocks`, two running at a time (each is a node process). */
async function runBlocks(blocks) {
  const failures = [];
  for (let i = 0; i < blocks.length; i += 2) {
    failures.push(...await Promise.all(blocks.slice(i, i + 2).map(runBlock)));
  }
  return failures.filter((f) => f !== null);
}

// ---------------------------------------------------------------------------------------------
// Links

/** Why `target`, a link in `from` under `root`, leads nowhere; null when it resolves. */
function brokenLink(root, from, target, parsed) {
  if (target === '') return 'an empty link';
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) {
    // Not fetched (the tests run offline): only checked to be a URL.
    let url;
    try {
      url = new URL(target);
    } catch {
      return 'not a well-formed URL';
    }
    return /^https?:$/.test(url.protocol) && url.hostname === '' ? 'a URL without a host' : null;
  }
  const hash = target.indexOf('#');
  let pathPart;
  let anchor;
  try {
    pathPart = decodeURIComponent((hash < 0 ? target : target.slice(0, hash)).replace(/\?.*$/, ''));
    anchor = hash < 0 ? null : decodeURIComponent(target.slice(hash + 1));
  } catch {
    return 'a malformed %-escape';
  }
  const file = pathPart === '' ? path.join(root, from)
    : path.join(pathPart.startsWith('/') ? root : path.dirname(path.join(root, from)), pathPart);
  const relative = path.relative(root, file);
  if (relative.startsWith('..')) return `${pathPart} is outside the repository`;
  if (!fs.existsSync(file)) return `${relative} does not exist`;
  if (anchor === null) return null;
  if (!relative.endsWith('.md')) {
    return /^L\d+(-L\d+)?$/.test(anchor) ? null : `#${anchor}: ${relative} is not Markdown, and this is not a line anchor`;
  }
  return parsed(relative).anchors.has(anchor) ? null : `#${anchor}: no such heading or anchor in ${relative}`;
}

/** Every link of the documentation under `root`: how many, and those that lead nowhere. */
function checkLinks(root) {
  const cache = new Map();
  const parsed = (file) => {
    if (!cache.has(file)) cache.set(file, parse(root, file));
    return cache.get(file);
  };
  const failures = [];
  let checked = 0;
  for (const file of markdownFiles(root)) {
    for (const { target, line } of parsed(file).links) {
      checked++;
      const why = brokenLink(root, file, target, parsed);
      if (why !== null) failures.push(`${file}:${line}: (${target}) ${why}`);
    }
  }
  return { checked, failures };
}

// ---------------------------------------------------------------------------------------------
// The checks on this repository

test('docs/api is what `npm run docs` makes of the sources now', async () => {
  const out = makeTempDir(os.tmpdir(), 'smartread-api-');
  const typedoc = path.join(repo, 'node_modules', 'typedoc', 'bin', 'typedoc');
  const run = await runToEnd(process.execPath, [typedoc, '--out', out], { timeoutMs: 120000 });
  assert.equal(run.code, 0, `npm run docs fails (a TypeDoc warning is an error: document what it names):\n${run.stdout}${run.stderr}`);
  const listing = (dir) => fs.existsSync(dir)
    ? fs.readdirSync(dir, { recursive: true }).filter((f) => fs.statSync(path.join(dir, f)).isFile()).sort()
    : [];
  const committed = path.join(repo, 'docs', 'api');
  const want = listing(out);
  const have = listing(committed);
  const differences = [
    ...want.filter((f) => !have.includes(f)).map((f) => `missing: docs/api/${f}`),
    ...have.filter((f) => !want.includes(f)).map((f) => `no longer generated: docs/api/${f}`),
    ...want.filter((f) => have.includes(f) && !fs.readFileSync(path.join(out, f)).equals(fs.readFileSync(path.join(committed, f))))
      .map((f) => `differs: docs/api/${f}`),
  ];
  // One module per public entry point, named as it is imported.
  const { name, exports } = JSON.parse(fs.readFileSync(path.join(repo, 'package.json'), 'utf8'));
  for (const subpath of Object.keys(exports).filter((p) => !p.endsWith('.json'))) {
    const page = path.join(path.posix.join(name, subpath), 'README.md');
    assert.ok(want.includes(page), `${subpath} of package.json's exports has no page in the reference (${page})`);
  }
  const shown = differences.slice(0, 20).concat(differences.length > 20 ? [`and ${differences.length - 20} more`] : []);
  assert.equal(differences.length, 0, `the reference is stale: run npm run docs\n  ${shown.join('\n  ')}`);
});

test('every runnable code block of the Markdown runs and exits 0', async () => {
  const blocks = runnableBlocks(repo);
  assert.ok(blocks.some((b) => b.file === 'README.md'), 'README.md has no runnable block: the check would prove nothing');
  const failed = await runBlocks(blocks);
  assert.equal(failed.length, 0, `${failed.length} of ${blocks.length} runnable blocks failed:\n${failed.join('\n')}`);
});

test('every relative link and anchor of the Markdown resolves, and every URL is well-formed', () => {
  const { checked, failures } = checkLinks(repo);
  assert.ok(checked > 0, 'no links found: the check would prove nothing');
  assert.equal(failures.length, 0, `${failures.length} of ${checked} links lead nowhere:\n${failures.join('\n')}`);
});

// ---------------------------------------------------------------------------------------------
// The checks themselves, on a small tree with a fault of each kind

test('the checks find every broken link, anchor and failing block, with its file and line', async () => {
  const root = makeTempDir(os.tmpdir(), 'smartread-doc-faults-');
  fs.mkdirSync(path.join(root, 'docs'));
  fs.writeFileSync(path.join(root, 'README.md'), [
    '# Title', //                                   1
    '## Same `code` here', //                       2
    '## Same code here', //                         3
    '<a id="custom"></a>', //                       4
    '[a](#title) [b](#same-code-here-1) [c](#custom) [d](docs/guide.md#set-up)', // 5
    'See [e](#nope) and', //                        6
    '[f](docs/missing.md) [g](docs/guide.md#gone)', // 7
    '[h](https://) [i](https://example.com/x) [j](../outside.md) [k](LICENSE#L3) [l](LICENSE#top)', // 8
    '```sh', //                                     9
    '# not a heading [m](#not-a-link)', //           10
    '```', //                                       11
    '```js runnable', //                            12
    "require('node:fs').writeFileSync('scratch.txt', 'x'); process.exit(require('smartread').smartReadSync('scratch.txt', 'utf8') === 'x' ? 0 : 5);", // 13
    '```', //                                       14
    '```js runnable', //                            15
    'process.exit(3);', //                          16
    '```', //                                       17
    '```js', //                                     18
    'process.exit(4); // not marked runnable', //    19
    '```', //                                       20
  ].join('\n'));
  fs.writeFileSync(path.join(root, 'docs', 'guide.md'), '# Guide\n\n## Set up\n\n```ts runnable\nimport { engineInfo } from \'smartread\';\nconst n: number = 1;\nthrow new Error(`typed ${n} ${engineInfo().engine}`);\n```\n');
  fs.writeFileSync(path.join(root, 'LICENSE'), 'MIT\n');
  const { checked, failures } = checkLinks(root);
  assert.equal(checked, 12);
  assert.deepEqual(failures, [
    'README.md:6: (#nope) #nope: no such heading or anchor in README.md',
    'README.md:7: (docs/missing.md) docs/missing.md does not exist',
    'README.md:7: (docs/guide.md#gone) #gone: no such heading or anchor in docs/guide.md',
    'README.md:8: (https://) not a well-formed URL',
    'README.md:8: (../outside.md) ../outside.md is outside the repository',
    'README.md:8: (LICENSE#top) #top: LICENSE is not Markdown, and this is not a line anchor',
  ]);
  const blocks = runnableBlocks(root);
  assert.deepEqual(blocks.map((b) => `${b.file}:${b.line}`), ['README.md:12', 'README.md:15', 'docs/guide.md:5']);
  const failed = await runBlocks(blocks);
  assert.equal(failed.length, 2, failed.join('\n'));
  assert.match(failed[0], /^README\.md:15: js block exited with 3\n/);
  assert.match(failed[1], /^docs\/guide\.md:5: ts block exited with 1\n[^]*Error: typed 1 (native|js)/);
});
