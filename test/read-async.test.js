// smartRead resolves with the bytes fs.readFileSync returns and rejects with the errors
// fs.promises.readFile rejects with, on every strategy: every size class on tmpfs and on disk, files
// without a reported size, every path form and fds, encodings, hundreds of reads started in one
// tick. It never throws synchronously. A strategy this machine lacks is skipped with its reason.
'use strict';
const { test, describe, before } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const { smartRead, readMany, engineInfo } = require('smartread');
const {
  checkNoFdLeak, useTempDirs, openFdCount, openFds, isOpenFd, patternBuffer, writePattern, assertSameBytes,
  errorFacts, thrownBy, rejectionOf, runToEnd, STRATEGIES, strategyUnavailableReason, skipUnlessAvailable, setUpAsyncEngines,
  countLoopTurns, spendTheTurnOnEachRead, openat2Missing,
} = require('./helpers');

setUpAsyncEngines();
checkNoFdLeak();
const tempDirs = useTempDirs();

const KiB = 1024;
const MiB = 1024 * KiB;

/**
 * The options smartRead gets for `strategy`: 'auto' passes the caller's options untouched (the
 * default route, no strategy named), the others add { strategy } to them.
 */
function withStrategy(options, strategy) {
  if (strategy === 'auto') return options;
  if (options === undefined || options === null) return { strategy };
  if (typeof options === 'string') return { encoding: options, strategy };
  return { ...options, strategy };
}

/** smartRead(target, options) on `strategy`, checked to return a promise rather than throw. */
function readWith(strategy, target, options) {
  const returned = smartRead(target, withStrategy(options, strategy));
  assert.ok(returned instanceof Promise, 'smartRead returns a promise');
  return returned;
}

// Files of every size class on each filesystem, written once and read by every strategy. Files
// of 32 MiB and more are filled by two threads in the native engines.
const sizes = [0, 1, 4095, 4096, 4097, 65536, MiB + 1, 40 * MiB];
const sizedFiles = new Map();
before(() => {
  for (const { kind, dir } of tempDirs.all) {
    for (const size of sizes) sizedFiles.set(`${kind}-${size}`, writePattern(path.join(dir, `size-${size}`), size));
  }
});

for (const strategy of STRATEGIES) {
  describe(`strategy '${strategy}'`, () => {
    describe('every size class, on each filesystem', () => {
      for (const { kind } of tempDirs.all) {
        for (const size of sizes) {
          test(`${kind}: ${size} bytes`, async (t) => {
            if (skipUnlessAvailable(t, strategy)) return;
            const file = sizedFiles.get(`${kind}-${size}`);
            const reference = fs.readFileSync(file);
            assertSameBytes(reference, patternBuffer(size), 'fs.readFileSync vs the bytes written');
            for (const options of [undefined, { flag: 'r' }]) {
              const actual = await readWith(strategy, file, options);
              assert.ok(Buffer.isBuffer(actual), 'the result is a Buffer');
              assertSameBytes(actual, reference, `smartRead(${JSON.stringify(options ?? null)}) vs fs.readFileSync`);
            }
            if (size <= MiB + 1) {
              assert.ok(await readWith(strategy, file, 'latin1') === reference.toString('latin1'), 'as latin1');
            }
          });
        }
      }
    });

    describe('files whose size the kernel does not report', () => {
      test('/proc/self/status: same structure (its values change between reads)', async (t) => {
        if (skipUnlessAvailable(t, strategy)) return;
        assert.equal(fs.statSync('/proc/self/status').size, 0);
        const actual = await readWith(strategy, '/proc/self/status', 'utf8');
        const reference = fs.readFileSync('/proc/self/status', 'utf8');
        assert.ok(actual.startsWith('Name:'), actual.slice(0, 40));
        const keys = (text) => text.split('\n').map((line) => line.split(':')[0]);
        assert.deepEqual(keys(actual), keys(reference));
        const bytes = await readWith(strategy, '/proc/self/status');
        assert.ok(Buffer.isBuffer(bytes) && bytes.toString('latin1').startsWith('Name:'));
      });

      test('/proc/version: exactly the same bytes', async (t) => {
        if (skipUnlessAvailable(t, strategy)) return;
        assert.equal(fs.statSync('/proc/version').size, 0);
        const bytes = await readWith(strategy, '/proc/version');
        assert.ok(bytes.length > 0);
        assertSameBytes(bytes, fs.readFileSync('/proc/version'), '/proc/version');
        assert.equal(await readWith(strategy, '/proc/version', 'utf8'), fs.readFileSync('/proc/version', 'utf8'));
      });

      // A FIFO whose writer pauses: the first read gets the first piece only, and what later
      // reads get must follow it with nothing in between ('uring' reads the start of a file
      // with two reads in one submission, into one block, and closes the gap between them).
      test('a FIFO written in two pieces: the bytes in order, nothing between them', async (t) => {
        if (skipUnlessAvailable(t, strategy)) return;
        const fifo = path.join(tempDirs.disk, `fifo-pieces-${strategy}`);
        assert.equal((await runToEnd('mkfifo', [fifo])).code, 0);
        try {
          const expected = patternBuffer(1000 + 70000);
          const writer = runToEnd(process.execPath, ['-e', `
            const fs = require('node:fs');
            const bytes = Buffer.from(process.argv[2], 'base64');
            const fd = fs.openSync(process.argv[1], 'w');
            fs.writeSync(fd, bytes.subarray(0, 1000));
            setTimeout(() => { fs.writeSync(fd, bytes.subarray(1000)); fs.closeSync(fd); }, 100);
          `, fifo, expected.toString('base64')]);
          const actual = await readWith(strategy, fifo);
          assert.equal((await writer).code, 0);
          assertSameBytes(actual, expected, 'the FIFO');
        } finally {
          fs.rmSync(fifo);
        }
      });
    });

    describe('path forms and fds', () => {
      test('string, Buffer, Uint8Array, file: URL and URL string give the same bytes', async (t) => {
        if (skipUnlessAvailable(t, strategy)) return;
        const dir = tempDirs.tmpfs ?? tempDirs.disk;
        const file = writePattern(path.join(dir, `forms-${strategy} é %25 #`), 70000);
        try {
          const expected = patternBuffer(70000);
          const forms = {
            string: file,
            Buffer: Buffer.from(file),
            Uint8Array: new Uint8Array(Buffer.from(file)),
            'file: URL': pathToFileURL(file),
          };
          for (const [form, target] of Object.entries(forms)) {
            assertSameBytes(await readWith(strategy, target), expected, form);
            assert.equal(await readWith(strategy, target, 'hex'), expected.toString('hex'), `${form}, hex`);
          }
        } finally {
          fs.rmSync(file);
        }
      });

      for (const size of [0, 5000, 100 * KiB, 40 * MiB]) {
        test(`an fd of ${size} bytes: read from its position, and left open`, async (t) => {
          if (skipUnlessAvailable(t, strategy)) return;
          const file = sizedFiles.get(`disk-${size}`) ?? writePattern(path.join(tempDirs.disk, `fd-${size}`), size);
          const skip = Math.min(1234, size);
          const fds = [];
          // One fd for smartRead, one for fs.readFileSync, both moved past the same bytes.
          const open = () => {
            const fd = fs.openSync(file, 'r');
            fds.push(fd);
            fs.readSync(fd, Buffer.alloc(skip), 0, skip, null);
            return fd;
          };
          try {
            for (const options of [undefined, 'utf8', { encoding: 'latin1' }]) {
              if (options !== undefined && size > MiB) continue;
              const mine = open();
              const reference = fs.readFileSync(open(), options);
              const actual = await readWith(strategy, mine, options);
              if (Buffer.isBuffer(reference)) {
                assertSameBytes(actual, reference, 'smartRead(fd) vs fs.readFileSync(fd)');
                assertSameBytes(actual, patternBuffer(size - skip, skip), 'the bytes after the position');
              } else {
                assert.ok(actual === reference, `${JSON.stringify(options)}: the same string`);
              }
              assert.ok(isOpenFd(mine), 'the fd is still open');
              // The fd is at EOF now: reading again gives nothing, and the fd stays usable.
              assert.equal((await readWith(strategy, mine, options)).length, 0);
              assert.equal(fs.readSync(mine, Buffer.alloc(1), 0, 1, 0), Math.min(size, 1));
            }
          } finally {
            for (const fd of fds) fs.closeSync(fd);
            if (!sizedFiles.has(`disk-${size}`)) fs.rmSync(file);
          }
        });
      }

      test('an fd of a file without a reported size (/proc/version)', async (t) => {
        if (skipUnlessAvailable(t, strategy)) return;
        const mine = fs.openSync('/proc/version', 'r');
        try {
          assertSameBytes(await readWith(strategy, mine), fs.readFileSync('/proc/version'), '/proc/version');
          assert.ok(isOpenFd(mine));
        } finally {
          fs.closeSync(mine);
        }
      });
    });

    describe('encodings', () => {
      // Several scripts, invalid UTF-8 and an odd length (for UTF-16).
      const content = Buffer.concat([
        Buffer.from('plain ASCII, é ü ß, ✓ — 漢字, 𝄞 🙂\r\n\t\u0000end\n'),
        Buffer.from([0xff, 0xfe, 0x80, 0xc3, 0x28, 0xe2, 0x82]),
        patternBuffer(3001),
      ]);
      for (const encoding of ['utf8', 'latin1', 'base64', 'hex', 'utf16le']) {
        test(`'${encoding}', as a string and as { encoding }`, async (t) => {
          if (skipUnlessAvailable(t, strategy)) return;
          const file = path.join(tempDirs.tmpfs ?? tempDirs.disk, `encoding-${strategy}-${encoding}`);
          fs.writeFileSync(file, content);
          try {
            const expected = fs.readFileSync(file, encoding);
            assert.equal(expected, content.toString(encoding));
            for (const options of [encoding, { encoding }, { encoding, flag: 'r' }]) {
              const actual = await readWith(strategy, file, options);
              assert.equal(typeof actual, 'string');
              assert.ok(actual === expected, `${JSON.stringify(options)}: the string fs.readFileSync returns`);
            }
            fs.writeFileSync(file, '');
            assert.equal(await readWith(strategy, file, encoding), '');
          } finally {
            fs.rmSync(file);
          }
        });
      }
    });

    test('300 reads started in one tick all resolve with their own file', async (t) => {
      if (skipUnlessAvailable(t, strategy)) return;
      const dir = tempDirs.disk;
      const files = [];
      for (let i = 0; i < 300; i++) {
        // Sizes from 1 byte to about 150 KiB, each file starting at a different pattern offset.
        const size = 1 + ((i * 7919) % (150 * KiB));
        const bytes = patternBuffer(size, i);
        bytes[0] = i % 256;
        const file = path.join(dir, `many-${strategy}-${i}`);
        fs.writeFileSync(file, bytes);
        files.push(file);
      }
      try {
        const results = await Promise.all(files.map((file) => readWith(strategy, file)));
        for (let i = 0; i < files.length; i++) assertSameBytes(results[i], fs.readFileSync(files[i]), files[i]);
        // Writing into one result never changes another (small results may share memory).
        results[0].fill(0xee);
        for (let i = 1; i < files.length; i++) assertSameBytes(results[i], fs.readFileSync(files[i]), files[i]);
      } finally {
        for (const file of files) fs.rmSync(file);
      }
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Errors

const errorDir = tempDirs.disk;
const file = path.join(errorDir, 'file');
const symlinkA = path.join(errorDir, 'loop-a');
const symlinkB = path.join(errorDir, 'loop-b');
// Node 26 reads files of up to 512 KiB in one round trip, whose read errors name the path.
const oneChunkFile = path.join(errorDir, 'one-chunk');
const overOneChunkFile = path.join(errorDir, 'over-one-chunk');
before(() => {
  fs.writeFileSync(file, 'some content\n');
  fs.writeFileSync(oneChunkFile, Buffer.alloc(512 * 1024, 1));
  fs.writeFileSync(overOneChunkFile, Buffer.alloc(512 * 1024 + 1, 2));
  fs.symlinkSync(symlinkB, symlinkA);
  fs.symlinkSync(symlinkA, symlinkB);
});

/**
 * Calls fs.promises.readFile and smartRead (on `strategy`) with the same arguments, made fresh
 * for each by `makeArgs`; both must return a promise that rejects with the same error, and
 * smartRead must leave no descriptor open.
 */
async function assertSameRejection(makeArgs, strategy) {
  const expected = await rejectionOf(() => fs.promises.readFile(...makeArgs()), 'fs.promises.readFile');
  const [target, options] = makeArgs();
  const fdsBefore = openFdCount();
  const actual = await rejectionOf(() => smartRead(target, withStrategy(options, strategy)), 'smartRead');
  assert.equal(openFdCount(), fdsBefore, `descriptors after the call: ${JSON.stringify(openFds())}`);
  assert.deepEqual(errorFacts(actual), errorFacts(expected));
  assert.equal(actual.constructor, expected.constructor);
}

// Paths that fail, each tried with no options, 'utf8' and { encoding: 'latin1' }.
const failingPaths = {
  'a missing file (ENOENT)': () => path.join(errorDir, 'missing'),
  'a missing file, as a Buffer': () => Buffer.from(path.join(errorDir, 'missing')),
  'a missing file, as a file: URL': () => pathToFileURL(path.join(errorDir, 'missing é')),
  'a missing parent directory': () => path.join(errorDir, 'nope', 'file'),
  'a directory (EISDIR on read)': () => errorDir,
  'a path through a file (ENOTDIR)': () => path.join(file, 'x'),
  'a symlink loop (ELOOP)': () => symlinkA,
  'a name too long (ENAMETOOLONG)': () => path.join(errorDir, 'n'.repeat(300)),
  'a path too long (ENAMETOOLONG)': () => `/${'p'.repeat(250)}`.repeat(20),
  'a NUL byte in a string path': () => `${file}\u0000x`,
  'a NUL byte in a Buffer path': () => Buffer.from(`${file}\u0000x`),
  'a NUL byte in a file: URL': () => new URL(`${pathToFileURL(file).href}%00x`),
  'a non-file URL': () => new URL('http://x/'),
  '{}': () => ({}),
  'null': () => null,
  'undefined': () => undefined,
  'true': () => true,
  '1.5': () => 1.5,
  '2 ** 31 (not an int32)': () => 2 ** 31,
  'an array': () => [],
};

const optionVariants = {
  'no options': undefined,
  "'utf8'": 'utf8',
  "{ encoding: 'latin1' }": { encoding: 'latin1' },
};

// Options or flags that fail; each runs on every strategy.
const failingOptions = {
  "encoding 'bogus'": () => [file, 'bogus'],
  "{ encoding: 'bogus' }": () => [file, { encoding: 'bogus' }],
  "encoding 'buffer' on a non-empty file": () => [file, 'buffer'],
  "{ flag: 'zz' }": () => [file, { flag: 'zz' }],
  "{ flag: 'zz', encoding: 'utf8' }": () => [file, { flag: 'zz', encoding: 'utf8' }],
  '{ flag: {} }': () => [file, { flag: {} }],
  "an invalid path and { flag: 'zz' }: the path is reported": () => [{}, { flag: 'zz' }],
  "an invalid path and encoding 'bogus': the encoding is reported": () => [{}, { encoding: 'bogus' }],
  "{ flag: 'wx' } on an existing file (EEXIST)": () => [file, { flag: 'wx' }],
  "{ flag: 'a' }: opened write-only (EBADF on read)": () => [file, { flag: 'a' }],
  "{ flag: 'a' } on a file of 512 KiB": () => [oneChunkFile, { flag: 'a' }],
  "{ flag: 'a' } on a file of 512 KiB + 1 byte": () => [overOneChunkFile, { flag: 'a' }],
  "{ flag: 'r+' } on a directory (EISDIR on open)": () => [errorDir, { flag: 'r+' }],
  '{ flag: O_RDONLY | O_DIRECTORY } on a file (ENOTDIR)': () => [file, { flag: fs.constants.O_RDONLY | fs.constants.O_DIRECTORY }],
  "{ signal: 'x' }": () => [file, { signal: 'x' }],
  '{ signal: null }': () => [file, { signal: null }],
};

describe('the same rejection as fs.promises.readFile', () => {
  for (const strategy of STRATEGIES) {
    describe(`strategy '${strategy}'`, () => {
      for (const [name, makePath] of Object.entries(failingPaths)) {
        test(name, async (t) => {
          if (skipUnlessAvailable(t, strategy)) return;
          for (const options of Object.values(optionVariants)) {
            await assertSameRejection(() => [makePath(), options], strategy);
          }
        });
      }
      for (const [name, makeArgs] of Object.entries(failingOptions)) {
        test(name, async (t) => {
          if (skipUnlessAvailable(t, strategy)) return;
          await assertSameRejection(makeArgs, strategy);
        });
      }
    });
  }

  // Options that are not an object cannot carry a strategy: these take the default route.
  for (const [name, options] of Object.entries({ 'options 5': 5, 'options true': true, 'options 0n': 0n })) {
    test(name, async () => {
      await assertSameRejection(() => [file, options], 'auto');
    });
  }

  test('a file: URL with a host, and one with %2F', async () => {
    await assertSameRejection(() => [new URL('file://host/x')], 'auto');
    await assertSameRejection(() => [new URL('file:///tmp%2Fx')], 'auto');
  });
});

// fs.promises.readFile takes no fds. fs.readFileSync is the reference for them: fs.readFile's
// callback reader rejects a closed fd with a TypeError about a "list" and reads a directory's fd
// as empty.
describe('fd errors: the same as fs.readFileSync, as a rejection', () => {
  const closedFd = 4000;
  before(() => assert.equal(isOpenFd(closedFd), false, `fd ${closedFd} must not be open`));

  async function assertFdRejection(makeFd, options, strategy) {
    const expected = thrownBy(() => fs.readFileSync(makeFd(), options), 'fs.readFileSync');
    const actual = await rejectionOf(() => smartRead(makeFd(), withStrategy(options, strategy)), 'smartRead');
    assert.deepEqual(errorFacts(actual), errorFacts(expected));
    assert.equal(actual.constructor, expected.constructor);
  }

  for (const strategy of STRATEGIES) {
    test(`strategy '${strategy}': a closed fd (EBADF on fstat), a directory's fd (EISDIR), a write-only fd`, async (t) => {
      if (skipUnlessAvailable(t, strategy)) return;
      await assertFdRejection(() => closedFd, undefined, strategy);
      await assertFdRejection(() => closedFd, { encoding: 'latin1' }, strategy);
      const dirFd = fs.openSync(errorDir, 'r');
      const writeOnly = fs.openSync(file, 'a');
      try {
        await assertFdRejection(() => dirFd, undefined, strategy);
        await assertFdRejection(() => writeOnly, { encoding: 'hex' }, strategy);
        assert.ok(isOpenFd(dirFd) && isOpenFd(writeOnly), 'the fds stay open');
      } finally {
        fs.closeSync(dirFd);
        fs.closeSync(writeOnly);
      }
    });
  }

  test('fd -1: RangeError ERR_OUT_OF_RANGE, as a rejection', async () => {
    const err = await rejectionOf(() => smartRead(-1), 'smartRead(-1)');
    assert.ok(err instanceof RangeError);
    assert.equal(err.code, 'ERR_OUT_OF_RANGE');
    assert.equal(err.message, 'The value of "fd" is out of range. It must be >= 0 && <= 2147483647. Received -1');
  });
});

// ---------------------------------------------------------------------------------------------
// Options where fs.promises.readFile reads

describe('options fs.promises.readFile accepts', () => {
  // fs.promises.readFile opens with `options.flag || 'r'`: a falsy flag means 'r'.
  for (const flag of ['', false, null, 0]) {
    test(`{ flag: ${JSON.stringify(flag)} } reads as 'r', as fs.promises.readFile does`, async () => {
      const expected = await fs.promises.readFile(file, { flag });
      assertSameBytes(await smartRead(file, { flag }), expected, `flag ${JSON.stringify(flag)}`);
    });
  }

  // node:fs does not look at the flag of an fd it is given (fs.readFile, and fs.readFileSync
  // outside its utf8 reader): the flag was used when the fd was opened.
  test("an fd with { flag: 'zz' } reads, as fs.readFile and fs.readFileSync read it", async () => {
    const fds = [fs.openSync(file, 'r'), fs.openSync(file, 'r')];
    try {
      const expected = fs.readFileSync(fds[0], { flag: 'zz' });
      assert.equal(expected.toString(), 'some content\n');
      assertSameBytes(await smartRead(fds[1], { flag: 'zz' }), expected, "smartRead(fd, { flag: 'zz' })");
    } finally {
      for (const fd of fds) fs.closeSync(fd);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Strategies

describe('the strategy option', () => {
  for (const strategy of ['fast', 'URING', '', 1, {}, true]) {
    test(`strategy ${JSON.stringify(strategy)}: TypeError ERR_INVALID_ARG_VALUE, as a rejection`, async () => {
      const err = await rejectionOf(() => smartRead(file, { strategy }), 'smartRead');
      assert.ok(err instanceof TypeError, String(err));
      assert.equal(err.code, 'ERR_INVALID_ARG_VALUE');
      assert.match(err.message, /^The property 'options\.strategy' must be one of 'auto', 'sync', 'uring', 'threadpool', 'mmap'\. Received /);
    });
  }

  test('strategy undefined means auto', async () => {
    assert.equal((await smartRead(file, { strategy: undefined })).toString(), 'some content\n');
  });

  test("a forced 'uring' where io_uring is unavailable rejects with ERR_SMARTREAD_STRATEGY_UNAVAILABLE and says why", async (t) => {
    const reason = strategyUnavailableReason('uring');
    if (reason === null) {
      t.skip('io_uring is available here');
      return;
    }
    assert.equal(engineInfo().uring.available, false);
    for (const target of [file, path.join(errorDir, 'missing'), 0]) {
      const err = await rejectionOf(() => smartRead(target, { strategy: 'uring' }), "smartRead({ strategy: 'uring' })");
      assert.equal(err.constructor, Error);
      assert.equal(err.code, 'ERR_SMARTREAD_STRATEGY_UNAVAILABLE');
      assert.ok(err.message.includes(reason), `${err.message} names the reason: ${reason}`);
    }
    // Never quietly replaced by another engine, even with valid other options.
    const err = await rejectionOf(() => smartRead(file, { strategy: 'uring', encoding: 'utf8', flag: 'r' }), 'smartRead');
    assert.equal(err.code, 'ERR_SMARTREAD_STRATEGY_UNAVAILABLE');
  });

  test("'sync' and 'threadpool' are always available", async () => {
    for (const strategy of ['sync', 'threadpool']) {
      assert.equal(strategyUnavailableReason(strategy), null);
      assert.equal(await smartRead(file, { strategy, encoding: 'utf8' }), 'some content\n');
    }
  });
});

// ---------------------------------------------------------------------------------------------
// No thread hop for a small cached file on io_uring

describe('io_uring reads of small cached files', () => {
  // The whole read (open, read, EOF, close) completes inline, on the JS thread: io_uring never
  // hands an op of it to one of its worker threads (named iou-wrk-*), which is the ~50 µs thread
  // hop the engine exists to avoid. Before the first READ was linked to the open, every read
  // sent a STATX to a worker (the kernel always runs STATX there). In a fresh child, whose
  // io_uring has no workers yet. On the disk only: tmpfs files cannot be read without blocking
  // in io_uring's sense (no FMODE_NOWAIT), so their READs always go to a worker ('auto' reads
  // them on the calling thread instead).
  test("strategy 'uring': 1 B to 68 KiB on the disk, no io_uring worker thread", async (t) => {
    if (skipUnlessAvailable(t, 'uring')) return;
    const sizes = [1, 4096, 64 * KiB, 68 * KiB - 1];
    const targets = sizes.map((size) => writePattern(path.join(tempDirs.disk, `inline-${size}`), size));
    for (const target of targets) fs.readFileSync(target); // cached, dentries too
    const source = `
      const fs = require('node:fs');
      const { smartRead } = require('smartread');
      const targets = JSON.parse(process.env.SMARTREAD_TEST_FILES);
      (async () => {
        let wrong = 0;
        for (let round = 0; round < 20; round++) {
          for (const target of targets) {
            if (!(await smartRead(target, { strategy: 'uring' })).equals(fs.readFileSync(target))) wrong++;
          }
        }
        // Together too: reads started in one tick.
        const all = await Promise.all(targets.map((target) => smartRead(target, { strategy: 'uring' })));
        all.forEach((bytes, k) => { if (!bytes.equals(fs.readFileSync(targets[k]))) wrong++; });
        const threads = fs.readdirSync('/proc/self/task')
          .map((task) => fs.readFileSync('/proc/self/task/' + task + '/comm', 'utf8').trim());
        process.stdout.write(JSON.stringify({ wrong, threads }) + '\\n');
      })();
    `;
    const result = await runToEnd(process.execPath, ['-e', source], {
      env: { SMARTREAD_TEST_FILES: JSON.stringify(targets) },
    });
    assert.equal(result.code, 0, result.stderr);
    const report = JSON.parse(result.stdout);
    assert.equal(report.wrong, 0, 'every read gave the bytes of the file');
    assert.deepEqual(report.threads.filter((name) => name.startsWith('iou-wrk')), [],
      `no io_uring worker thread: ${report.threads.join(', ')}`);
  });
});

describe("io_uring reads completed inline let the event loop turn", () => {
  // A cached file on the disk is read by io_uring as it is submitted (see above), in a microtask:
  // awaited one after another, such reads settled in promise reactions and the loop did not turn
  // at all until the last. They share the fast path's turn clock: with a budget of 1 µs, every
  // read after the first of a turn waits for the next.
  const reads = 100;
  let file;
  let expected;
  before(() => {
    file = writePattern(path.join(tempDirs.disk, 'inline-back-to-back'), 16 * KiB);
    expected = fs.readFileSync(file);
  });

  test("smartRead with strategy 'uring', awaited back to back", async (t) => {
    if (skipUnlessAvailable(t, 'uring')) return;
    spendTheTurnOnEachRead(t);
    await smartRead(file, { strategy: 'uring' });
    const counting = countLoopTurns();
    let turns;
    try {
      for (let i = 0; i < reads; i++) assertSameBytes(await smartRead(file, { strategy: 'uring' }), expected, `read ${i}`);
    } finally {
      turns = counting.stop();
    }
    assert.ok(turns >= reads - 1, `the loop turned ${turns} times in ${reads} reads`);
  });

  test("readMany with strategy 'uring': a list of one file read by 8 lanes", async (t) => {
    if (skipUnlessAvailable(t, 'uring')) return;
    spendTheTurnOnEachRead(t);
    const list = Array.from({ length: reads }, () => file);
    const counting = countLoopTurns();
    let turns;
    let results;
    try {
      results = await readMany(list, { strategy: 'uring', concurrency: 8 });
    } finally {
      turns = counting.stop();
    }
    results.forEach((bytes, i) => assertSameBytes(bytes, expected, `path ${i}`));
    // Each turn starts one read per lane at most before the share is spent: at least one turn
    // for every 8 reads.
    assert.ok(turns >= reads / 8 - 1, `the loop turned ${turns} times in ${reads} reads by 8 lanes`);
  });
});

describe('calls made at once past the turn\'s share wait in line', () => {
  // Each read spends the turn's share (1 µs): the calls made at once then read one a turn, in
  // the order they were made. A call aborted while it waits leaves the line to the others.
  // 'auto' reads on the calling thread where the addon's fast path does; on the pure-JS engine,
  // and where openat2 is missing (qemu-user), it reads through the thread pool, where reads
  // started in line may end in another order.
  const strategies = engineInfo().engine === 'native' && openat2Missing() === null ? ['sync', 'auto'] : ['sync'];
  test(`500 smartRead calls at once, ${strategies.join(' and ')}: one read a turn, in call order; the aborted ones reject`, async (t) => {
    spendTheTurnOnEachRead(t);
    const file = writePattern(path.join(tempDirs.disk, 'in-line'), 4 * KiB);
    const expected = fs.readFileSync(file);
    for (const strategy of strategies) {
      await smartRead(file, { strategy });
      const controller = new AbortController();
      const order = [];
      const counting = countLoopTurns();
      let outcomes;
      let turns;
      try {
        const calls = Array.from({ length: 500 }, (_, i) => smartRead(file, { strategy, signal: i % 5 === 4 ? controller.signal : undefined })
          .then((bytes) => {
            order.push(i);
            return bytes;
          }));
        // Once the first hundred have read, every fifth call still waiting is aborted.
        while (order.length < 100) await new Promise(setImmediate);
        controller.abort();
        outcomes = await Promise.allSettled(calls);
      } finally {
        turns = counting.stop();
      }
      const read = outcomes.flatMap((o, i) => (o.status === 'fulfilled' ? [i] : []));
      for (const i of read) assertSameBytes(outcomes[i].value, expected, `${strategy}: call ${i}`);
      for (const [i, o] of outcomes.entries()) {
        if (o.status === 'rejected') {
          assert.equal(i % 5, 4, `${strategy}: call ${i} had no signal: ${o.reason}`);
          assert.equal(o.reason.name, 'AbortError', `${strategy}: call ${i}`);
        }
      }
      assert.deepEqual(order, read, `${strategy}: read in call order`);
      assert.ok(turns >= read.length - 2, `${strategy}: the loop turned ${turns} times for ${read.length} reads`);
      assert.ok(read.length >= 400 && read.length < 500, `${strategy}: ${read.length} read, the rest aborted`);
    }
  });

  // A line that never empties (64 calls kept waiting, each replaced by a new one as it reads, as
  // a server under steady load does) holds a slot for the calls waiting, and not one for every
  // call that ever waited: the slots before the first still waiting are dropped as it goes. (It
  // kept them all until the line emptied: 8 bytes a read, 14 MB of JS heap after 1.8 million
  // reads, found by the soak.)
  test('a line that never empties does not keep a slot for every call that waited in it', async (t) => {
    spendTheTurnOnEachRead(t);
    const { lineSlots } = require('../dist/read/turn_clock.js');
    const file = writePattern(path.join(tempDirs.disk, 'steady-line'), 4 * KiB);
    const expected = fs.readFileSync(file);
    const lanes = 64;
    const reads = 6000;
    let started = 0;
    let mostSlots = 0;
    let turns = 0;
    let wrong = 0;
    const lane = async () => {
      while (started < reads) {
        started++;
        const bytes = await smartRead(file, { strategy: 'sync' });
        if (!bytes.equals(expected)) wrong++;
        mostSlots = Math.max(mostSlots, lineSlots());
      }
    };
    const counting = countLoopTurns();
    try {
      await Promise.all(Array.from({ length: lanes }, lane));
    } finally {
      turns = counting.stop();
    }
    assert.equal(wrong, 0);
    assert.ok(turns >= reads / 2, `the calls waited in line (the loop turned ${turns} times for ${reads} reads)`);
    // Dropped once they are half the array and at least 1,024: never more than 1,024 slots
    // beside the calls waiting.
    assert.ok(mostSlots <= 1024 + lanes, `the line held ${mostSlots} slots for at most ${lanes} calls waiting`);
    assert.equal(lineSlots(), 0, 'the line is empty once every call has read');
  });

  // readMany calls wait in the same line, a run of their list at each of their turns: made at
  // once with smartRead calls, and each with a list of one, each call settles in the order made,
  // whichever of the two it is.
  test(`readMany and smartRead calls at once, ${strategies.join(' and ')}: each settles in the order made`, async (t) => {
    spendTheTurnOnEachRead(t);
    const files = [0, 1, 2].map((k) => writePattern(path.join(tempDirs.disk, `in-line-many-${k}`), (k + 1) * KiB));
    const expected = files.map((f) => fs.readFileSync(f));
    for (const strategy of strategies) {
      await readMany(files, { strategy });
      const order = [];
      const counting = countLoopTurns();
      let outcomes;
      let turns;
      try {
        outcomes = await Promise.all(Array.from({ length: 300 }, (_, i) => (i % 3 === 0
          ? smartRead(files[i % 3], { strategy }).then((bytes) => [bytes])
          : readMany([files[i % 3]], { strategy })).then((all) => {
          order.push(i);
          return all;
        })));
      } finally {
        turns = counting.stop();
      }
      for (const [i, all] of outcomes.entries()) {
        assert.equal(all.length, 1, `${strategy}: call ${i}`);
        assertSameBytes(all[0], expected[i % 3], `${strategy}: call ${i}`);
      }
      assert.deepEqual(order, outcomes.map((_, i) => i), `${strategy}: settled in the order made`);
      assert.ok(turns >= 100, `${strategy}: the loop turned ${turns} times for 300 calls`);
    }
  });
});
