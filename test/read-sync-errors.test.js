// Error parity: every way smartReadSync can fail, called side by side with fs.readFileSync on the
// same arguments; the errors must match in class, message and every fs property.
'use strict';
const { test, describe, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const { smartReadSync } = require('smartread');
const {
  checkNoFdLeak, useTempDirs, openFdCount, openFds, isOpenFd, errorFacts, thrownBy, stdoutLines,
  unreachableWithoutRoot,
} = require('./helpers');

checkNoFdLeak({ spawnsChildren: true });
const { disk: dir } = useTempDirs();

const file = path.join(dir, 'file');
const symlinkA = path.join(dir, 'loop-a');
const symlinkB = path.join(dir, 'loop-b');
const link = path.join(dir, 'link');
// 40 MiB, sparse: large enough for the native engine's two-thread reader.
const largeFile = path.join(dir, 'large');

before(() => {
  fs.writeFileSync(file, 'some content\n');
  fs.symlinkSync(symlinkB, symlinkA);
  fs.symlinkSync(symlinkA, symlinkB);
  fs.symlinkSync(file, link);
  fs.symlinkSync(path.join(dir, 'nothing here'), path.join(dir, 'dangling'));
  fs.writeFileSync(largeFile, 'x');
  fs.truncateSync(largeFile, 40 << 20);
});

// A descriptor number that is not open in this process, for EBADF.
const closedFd = 4000;

/**
 * Calls fs.readFileSync and smartReadSync with the same arguments (made fresh for each by
 * `makeArgs`, so that a case with side effects starts from the same state) and asserts that both
 * throw the same error and that no descriptor is left open.
 */
function assertSameError(makeArgs, setup) {
  setup?.();
  const expected = thrownBy(() => fs.readFileSync(...makeArgs()), 'fs.readFileSync');
  setup?.();
  const fdsBefore = openFdCount();
  const actual = thrownBy(() => smartReadSync(...makeArgs()), 'smartReadSync');
  assert.equal(openFdCount(), fdsBefore, `descriptors after the call: ${JSON.stringify(openFds())}`);
  assert.deepEqual(errorFacts(actual), errorFacts(expected));
  assert.equal(actual.constructor, expected.constructor);
}

// Paths that fail; each is tried with no options, 'utf8' (node:fs's own reader), an options
// object with another encoding, and an options object without one.
const failingPaths = {
  'missing file': () => path.join(dir, 'missing'),
  'missing parent directory': () => path.join(dir, 'nope', 'file'),
  'empty path': () => '',
  'a file: URL as a string (a relative path to node:fs)': () => pathToFileURL(path.join(dir, 'missing')).href,
  'a directory': () => dir,
  'a directory, as a Buffer': () => Buffer.from(dir),
  'a directory, as a file: URL': () => pathToFileURL(dir),
  'a path through a file (ENOTDIR)': () => path.join(file, 'x'),
  'a symlink loop': () => symlinkA,
  'a name too long': () => path.join(dir, 'n'.repeat(300)),
  'a path too long': () => `/${'p'.repeat(250)}`.repeat(20),
  'a missing file, as a Buffer of invalid UTF-8': () => Buffer.concat([Buffer.from(`${dir}/`), Buffer.from([0xff, 0xfe, 0x80])]),
  'a missing file, as a file: URL': () => pathToFileURL(path.join(dir, 'missing é')),
  'a missing file, as a Uint8Array': () => new Uint8Array(Buffer.from(path.join(dir, 'missing'))),
  'a missing file whose name has a lone surrogate': () => path.join(dir, 'lone \ud800 surrogate'),
  'an empty Buffer': () => Buffer.alloc(0),
  'a dangling symlink': () => path.join(dir, 'dangling'),
  'NUL byte in a string path': () => `${file}\u0000x`,
  'NUL byte in a long string path': () => `${dir}/${'l'.repeat(200)}\u0000`,
  'NUL byte in a Buffer path': () => Buffer.from(`${file}\u0000x`),
  'NUL byte in a long Buffer path (over 1 KiB)': () => Buffer.from(`${dir}/${'l'.repeat(1100)}\u0000`),
  'NUL byte in a Uint8Array path': () => new Uint8Array(Buffer.from(`${file}\u0000x`)),
  'NUL byte in a file: URL': () => new URL(`${pathToFileURL(file).href}%00x`),
  'a non-file URL': () => new URL('http://x/'),
  'a file: URL with a host': () => new URL('file://host/x'),
  'a file: URL with %2F': () => new URL('file:///tmp%2Fx'),
  'undefined': () => undefined,
  'null': () => null,
  'an object': () => ({}),
  'an object without prototype': () => Object.create(null),
  'an array': () => [],
  'true': () => true,
  '1.5': () => 1.5,
  '2 ** 31 (not an int32)': () => 2 ** 31,
  'NaN': () => NaN,
  'a String object': () => new String(file), // eslint-disable-line no-new-wrappers
  'an anonymous function': () => [() => {}][0],
  'a named function': () => function readMe() {},
  'a Symbol': () => Symbol('s'),
  'a BigInt': () => 10n,
  'a closed fd': () => closedFd,
  'fd -1': () => -1,
};

const optionVariants = {
  'no options': [],
  "'utf8'": ['utf8'],
  "{ encoding: 'latin1' }": [{ encoding: 'latin1' }],
  '{}': [{}],
};

describe('the same error as fs.readFileSync, for a failing path', () => {
  before(() => assert.equal(isOpenFd(closedFd), false, `fd ${closedFd} must not be open`));
  for (const [name, makePath] of Object.entries(failingPaths)) {
    for (const [variant, options] of Object.entries(optionVariants)) {
      test(`${name}, ${variant}`, () => assertSameError(() => [makePath(), ...options]));
    }
  }
});

// Arguments where the options or flags are what fails.
const failingCalls = {
  'options 5': () => [file, 5],
  'options true': () => [file, true],
  'options 0n': () => [file, 0n],
  "encoding 'bogus'": () => [file, 'bogus'],
  "{ encoding: 'bogus' }": () => [file, { encoding: 'bogus' }],
  '{ encoding: 5 }': () => [file, { encoding: 5 }],
  "encoding 'buffer'": () => [file, 'buffer'],
  "{ encoding: 'buffer' }": () => [file, { encoding: 'buffer' }],
  "{ flag: 'zz' }": () => [file, { flag: 'zz' }],
  "{ flag: 'zz', encoding: 'utf8' }": () => [file, { flag: 'zz', encoding: 'utf8' }],
  '{ flag: true }': () => [file, { flag: true }],
  '{ flag: {} }': () => [file, { flag: {} }],
  "invalid options before an invalid path: (undefined, 'bogus')": () => [undefined, 'bogus'],
  "an invalid flag after an invalid path: (undefined, { flag: 'zz' })": () => [undefined, { flag: 'zz' }],
  "{ flag: 'wx' } on an existing file (EEXIST)": () => [file, { flag: 'wx' }],
  "{ flag: 'a' }: opened write-only (EBADF on read)": () => [file, { flag: 'a' }],
  "{ flag: 'a', encoding: 'utf8' }": () => [file, { flag: 'a', encoding: 'utf8' }],
  "{ flag: 'a' } on a 40 MiB file": () => [largeFile, { flag: 'a' }],
  "{ flag: 'a', encoding: 'latin1' } on a 40 MiB file": () => [largeFile, { flag: 'a', encoding: 'latin1' }],
  "{ flag: 'r+' } on a directory (EISDIR on open)": () => [dir, { flag: 'r+' }],
  "{ flag: 'r+', encoding: 'utf8' } on a directory": () => [dir, { flag: 'r+', encoding: 'utf8' }],
  '{ flag: O_RDONLY | O_DIRECTORY } on a file (ENOTDIR)': () => [file, { flag: fs.constants.O_RDONLY | fs.constants.O_DIRECTORY }],
  '{ flag: O_RDONLY | O_NOFOLLOW } on a symlink (ELOOP)': () => [link, { flag: fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW }],
  '{ flag: O_NOFOLLOW, encoding: utf8 } on a symlink': () => [link, { flag: fs.constants.O_NOFOLLOW, encoding: 'utf8' }],
  "{ flag: 'r', encoding: 'hex' } on a directory": () => [dir, { flag: 'r', encoding: 'hex' }],
  "a closed fd, { encoding: 'utf8' }": () => [closedFd, { encoding: 'utf8' }],
  "fd -1, 'hex'": () => [-1, 'hex'],
  'fd 2 ** 31 - 1 (not open)': () => [2 ** 31 - 1],
  "fd 2 ** 31 - 1 (not open), 'utf8'": () => [2 ** 31 - 1, 'utf8'],
  'fd -(2 ** 31)': () => [-(2 ** 31)],
  "fd -(2 ** 31), 'utf8'": () => [-(2 ** 31), 'utf8'],
  "{ signal: 'x' }": () => [file, { signal: 'x' }],
  '{ signal: null }': () => [file, { signal: null }],
  '{ signal: {} }': () => [file, { signal: {} }],
  "{ signal: 'x', encoding: 'utf8' }": () => [file, { signal: 'x', encoding: 'utf8' }],
};

describe('the same error as fs.readFileSync, for failing options or flags', () => {
  for (const [name, makeArgs] of Object.entries(failingCalls)) {
    test(name, () => assertSameError(makeArgs));
  }

  test("{ flag: 'w' }: truncates, then EBADF on read", () => {
    const target = path.join(dir, 'truncated');
    assertSameError(() => [target, { flag: 'w' }], () => fs.writeFileSync(target, 'will be truncated'));
    assert.equal(fs.statSync(target).size, 0);
  });

  test('an fd of a directory (EISDIR on read), with and without an encoding', () => {
    const fd = fs.openSync(dir, 'r');
    try {
      for (const options of [[], ['utf8'], ['latin1'], [{ flag: 'r' }]]) {
        assertSameError(() => [fd, ...options]);
        assert.ok(isOpenFd(fd), 'the fd stays open');
      }
    } finally {
      fs.closeSync(fd);
    }
  });

  test("an fd with an invalid flag: fs ignores the flag, except in its 'utf8' reader", () => {
    const fd = fs.openSync(file, 'r');
    try {
      assertSameError(() => [fd, { flag: 'zz', encoding: 'utf8' }]);
      assertSameError(() => [fd, { flag: 'zz', encoding: 'utf-8' }]);
    } finally {
      fs.closeSync(fd);
    }
    // Without utf8, node:fs does not look at the flag of an fd: both read.
    for (const options of [{ flag: 'zz' }, { flag: 'zz', encoding: 'latin1' }]) {
      const mine = fs.openSync(file, 'r');
      const theirs = fs.openSync(file, 'r');
      try {
        const expected = fs.readFileSync(theirs, options);
        assert.ok(expected.length > 0);
        assert.deepEqual(smartReadSync(mine, options), expected);
      } finally {
        fs.closeSync(mine);
        fs.closeSync(theirs);
      }
    }
  });

  test('an fd opened write-only (EBADF on read)', () => {
    const fd = fs.openSync(path.join(dir, 'write-only'), 'w');
    try {
      for (const options of [[], ['utf8'], ['base64']]) assertSameError(() => [fd, ...options]);
      assert.ok(isOpenFd(fd), 'the fd stays open');
    } finally {
      fs.closeSync(fd);
    }
  });
});

// The child drops root before it loads smartread, then reads a root-only file both ways.
const permissionChild = `
  const fs = require('node:fs');
  process.setgroups([]);
  process.setgid(65534);
  process.setuid(65534);
  const { smartReadSync } = require('smartread');
  const { errorFacts } = require(process.argv[2]);
  const target = process.argv[1];
  for (const options of [[], ['utf8'], [{ encoding: 'latin1' }]]) {
    const caught = (fn) => { try { fn(); return null; } catch (err) { return errorFacts(err); } };
    console.log(JSON.stringify({
      options,
      fs: caught(() => fs.readFileSync(target, ...options)),
      smartread: caught(() => smartReadSync(target, ...options)),
    }));
  }
`;

test('permission denied (EACCES), in a child that is not root', async (t) => {
  if (process.getuid() !== 0) {
    t.skip('needs root, to make a file that a dropped-privilege child cannot read');
    return;
  }
  const unreachable = unreachableWithoutRoot();
  if (unreachable) {
    t.skip(`a child that is not root could not load smartread: ${unreachable}`);
    return;
  }
  const secret = path.join(dir, 'secret');
  fs.writeFileSync(secret, 'root only\n', { mode: 0o600 });
  fs.chmodSync(secret, 0o600);
  // mkdtemp makes the directory 0700; the child must be able to look it up.
  fs.chmodSync(dir, 0o755);
  try {
    const child = spawn(process.execPath, ['-e', permissionChild, secret, require.resolve('./helpers')], {
      cwd: path.resolve(__dirname, '..'),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const lines = await stdoutLines(child).all();
    assert.equal(lines.length, 3);
    for (const line of lines) {
      const result = JSON.parse(line);
      assert.ok(result.fs, `fs.readFileSync read the file with options ${JSON.stringify(result.options)}`);
      assert.equal(result.fs.code, 'EACCES');
      assert.deepEqual(result.smartread, result.fs, `options ${JSON.stringify(result.options)}`);
    }
  } finally {
    fs.chmodSync(dir, 0o700);
  }
});

after(() => {
  // The fd the EBADF cases used is still not open (nothing here opened it by accident).
  assert.equal(isOpenFd(closedFd), false);
});
