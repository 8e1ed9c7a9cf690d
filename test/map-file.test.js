// mapFile: the bytes of files and of windows at and across page boundaries, on tmpfs and on the
// disk; copy-on-write (writes into the Buffer never reach the file); unmapping on close() and on
// garbage collection, counted in /proc/self/maps; the copy where external buffers are
// forbidden; node:fs's errors; and smartRead's 'mmap' strategy. Cases that need a real mapping
// are skipped, with the reason, on the pure-JS engine (which copies).
'use strict';
const { test, describe, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { constants: bufferConstants } = require('node:buffer');
const { mapFile, smartRead, explain, metrics, engineInfo } = require('smartread');
const {
  checkNoFdLeak, useTempDirs, writePattern, patternBuffer, assertSameBytes, errorFacts, thrownBy,
  runToEnd, rejectionOf, setUpAsyncEngines, hasFifos,
} = require('./helpers');

setUpAsyncEngines();
checkNoFdLeak({ spawnsChildren: true });
const tempDirs = useTempDirs();

const KiB = 1024;
const MiB = 1024 * KiB;
const PAGE = 4096;
const native = engineInfo().engine === 'native';
const notNative = `the native addon is not in use (${engineInfo().reason}): mapFile copies`;

/** How many mappings of `file` this process (or `pid`) has. */
function mappingsOf(file, pid = 'self') {
  return fs.readFileSync(`/proc/${pid}/maps`, 'utf8').split('\n').filter((line) => line.endsWith(` ${file}`)).length;
}

const sizes = [1, PAGE - 1, PAGE, PAGE + 1, 3 * PAGE + 5, MiB + 3];

for (const { kind, dir } of tempDirs.all) {
  describe(`on ${kind}`, () => {
    const files = new Map();
    before(() => {
      for (const size of sizes) files.set(size, writePattern(path.join(dir, `f-${size}`), size));
    });

    for (const size of sizes) {
      test(`a file of ${size} bytes, whole: its bytes; mapped on the native engine`, () => {
        const buffer = mapFile(files.get(size));
        assert.ok(Buffer.isBuffer(buffer));
        assertSameBytes(buffer, patternBuffer(size), `${size} bytes`);
        assert.equal(buffer.mapped, native);
        buffer.close();
      });
    }

    test('windows at and across page boundaries give the bytes of the file there', () => {
      const size = 3 * PAGE + 5;
      const file = files.get(size);
      const windows = [
        [0, 1], [0, PAGE], [1, PAGE], [PAGE - 1, 2], [PAGE, PAGE], [PAGE + 1, PAGE - 1],
        [PAGE - 7, 2 * PAGE + 9], [2 * PAGE + 3, PAGE + 2], [size - 1, 1], [size, 0], [7, undefined],
        [3 * PAGE, undefined],
      ];
      for (const [offset, length] of windows) {
        const buffer = mapFile(file, { offset, length });
        const expected = patternBuffer(size).subarray(offset, length === undefined ? size : offset + length);
        assertSameBytes(buffer, expected, `window (${offset}, ${length})`);
        buffer.close();
      }
    });

    test('every advice and populate give the same bytes', () => {
      const file = files.get(MiB + 3);
      for (const advice of ['normal', 'sequential', 'random', 'willneed', 'hugepage']) {
        for (const populate of [false, true]) {
          const buffer = mapFile(file, { advice, populate, offset: 5 });
          assertSameBytes(buffer, patternBuffer(MiB + 3).subarray(5), `advice ${advice}, populate ${populate}`);
          buffer.close();
        }
      }
    });

    test('copy-on-write: writing into the Buffer never changes the file', (t) => {
      const file = files.get(3 * PAGE + 5);
      const buffer = mapFile(file, { offset: PAGE - 2, length: PAGE + 4 });
      buffer.fill(0xee);
      assert.ok(buffer.every((b) => b === 0xee), 'the Buffer holds what was written');
      assertSameBytes(fs.readFileSync(file), patternBuffer(3 * PAGE + 5), 'the file after writes into the mapping');
      const again = mapFile(file);
      assertSameBytes(again, patternBuffer(3 * PAGE + 5), 'a new mapping of the file');
      buffer.close();
      again.close();
    });
  });
}

test('an empty file and an empty window: an empty Buffer, not mapped', () => {
  const empty = path.join(tempDirs.disk, 'empty');
  fs.writeFileSync(empty, '');
  const buffer = mapFile(empty);
  assert.equal(buffer.length, 0);
  assert.equal(buffer.mapped, false);
  buffer.close();
  const file = writePattern(path.join(tempDirs.disk, 'ten'), 10);
  assert.equal(mapFile(file, { offset: 10 }).length, 0);
  assert.equal(mapFile(file, { offset: 3, length: 0 }).length, 0);
});

test('close(): the Buffer is detached and the mapping gone; closing again and dispose do nothing', (t) => {
  if (!native) return t.skip(notNative);
  const file = writePattern(path.join(tempDirs.disk, 'to-close'), 2 * MiB);
  const buffer = mapFile(file);
  assert.equal(mappingsOf(file), 1);
  for (const key of ['close', 'mapped', Symbol.dispose]) {
    assert.equal(Object.getOwnPropertyDescriptor(buffer, key).enumerable, false, `${String(key)} is not enumerable`);
  }
  buffer.close();
  assert.equal(buffer.length, 0, 'detached: length 0');
  assert.equal(buffer.buffer.byteLength, 0);
  assert.equal(buffer[0], undefined, 'no byte can be read any more');
  assert.equal(mappingsOf(file), 0);
  buffer.close();
  buffer[Symbol.dispose]();
  const other = mapFile(file, { offset: 5 });
  other[Symbol.dispose]();
  assert.equal(other.length, 0);
  assert.equal(mappingsOf(file), 0);
});

describe('unmapping by garbage collection (in a child with --expose-gc)', () => {
  const childSource = `
    const fs = require('node:fs');
    const { mapFile } = require('smartread');
    const file = process.argv[1];
    const count = () => fs.readFileSync('/proc/self/maps', 'utf8').split('\\n').filter((l) => l.endsWith(' ' + file)).length;
    const settle = () => new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
    (async () => {
      const out = {};
      (() => { const b = mapFile(file); out.mappedBefore = count(); out.sum = b[0] + b[b.length - 1]; })();
      for (let i = 0; i < 3; i++) { globalThis.gc(); await settle(); }
      out.afterGc = count();
      // Closed, then collected: the finalizer must not unmap again. A mapping made in between is
      // likely to reuse the freed addresses; a second munmap would unmap it and reading it crash.
      let closed = mapFile(file);
      closed.close();
      closed = null;
      const kept = mapFile(file);
      for (let i = 0; i < 3; i++) { globalThis.gc(); await settle(); }
      out.keptReadable = kept.equals(fs.readFileSync(file));
      out.afterSecondGc = count();
      console.log(JSON.stringify(out));
    })();
  `;

  test('a dropped Buffer is unmapped; one closed first is not unmapped twice', async (t) => {
    if (!native) return t.skip(notNative);
    const file = writePattern(path.join(tempDirs.disk, 'to-collect'), 4 * MiB + 1);
    const result = await runToEnd(process.execPath, ['--expose-gc', '-e', childSource, file]);
    assert.equal(result.code, 0, `child failed: ${result.signal ?? ''} ${result.stderr}`);
    const out = JSON.parse(result.stdout);
    assert.equal(out.mappedBefore, 1);
    assert.equal(out.afterGc, 0, 'unmapped once the Buffer was collected');
    assert.equal(out.keptReadable, true);
    assert.equal(out.afterSecondGc, 1, 'only the mapping still referenced is left');
  });
});

test('where external buffers are forbidden, mapFile copies and says so (SMARTREAD_TEST_NO_EXTERNAL=1)', async (t) => {
  if (!native) return t.skip(notNative);
  const file = writePattern(path.join(tempDirs.disk, 'copied'), MiB + 7);
  const source = `
    const fs = require('node:fs');
    const { mapFile } = require('smartread');
    const file = process.argv[1];
    const b = mapFile(file, { offset: 4095, length: 8192 });
    const maps = fs.readFileSync('/proc/self/maps', 'utf8').split('\\n').filter((l) => l.endsWith(' ' + file)).length;
    const ok = b.equals(fs.readFileSync(file).subarray(4095, 4095 + 8192));
    b.close();
    console.log(JSON.stringify({ mapped: b.mapped, ok, maps, lengthAfterClose: b.length }));
  `;
  const result = await runToEnd(process.execPath, ['-e', source, file], { env: { SMARTREAD_TEST_NO_EXTERNAL: '1' } });
  assert.equal(result.code, 0, result.stderr);
  assert.deepEqual(JSON.parse(result.stdout), { mapped: false, ok: true, maps: 0, lengthAfterClose: 8192 });
});

// Node 20's buffer.constants.MAX_LENGTH is 4 GiB; from Node 22 it is 2 ** 53 - 1, past any file
// ext4 can hold (16 TiB): there the whole of a 5 GiB file maps, and a file mapFile must refuse is
// made only where the filesystem allows one.
describe('files past 4 GiB (sparse)', () => {
  const size = 5 * 2 ** 30;
  const tailOffset = size - 3 * PAGE - 11;
  let file;
  before(() => {
    file = path.join(tempDirs.disk, 'huge');
    fs.writeFileSync(file, '');
    fs.truncateSync(file, size);
    const fd = fs.openSync(file, 'r+');
    fs.writeSync(fd, patternBuffer(PAGE), 0, PAGE, tailOffset);
    fs.closeSync(fd);
  });
  after(() => fs.rmSync(file, { force: true }));

  test('a window past 4 GiB: its bytes', () => {
    const window = mapFile(file, { offset: tailOffset, length: PAGE });
    assertSameBytes(window, patternBuffer(PAGE), 'a window past 4 GiB');
    window.close();
  });

  test('the whole file: mapped if a Buffer can be that large, else ERR_FS_FILE_TOO_LARGE', (t) => {
    if (size > bufferConstants.MAX_LENGTH) {
      const err = thrownBy(() => mapFile(file), 'mapFile of 5 GiB');
      assert.equal(err.code, 'ERR_FS_FILE_TOO_LARGE');
      assert.ok(err instanceof RangeError);
      return;
    }
    if (!native) return t.skip(`${notNative} (5 GiB into memory)`);
    const whole = mapFile(file);
    assert.equal(whole.length, size);
    assertSameBytes(whole.subarray(tailOffset, tailOffset + PAGE), patternBuffer(PAGE), 'the tail of the whole file');
    assertSameBytes(whole.subarray(0, PAGE), Buffer.alloc(PAGE), 'the hole at the start');
    whole.close();
  });

  test('a file larger than a Buffer can be: ERR_FS_FILE_TOO_LARGE', (t) => {
    if (size > bufferConstants.MAX_LENGTH) return t.skip('covered by the 5 GiB file: a Buffer is at most 4 GiB here');
    if (bufferConstants.MAX_LENGTH >= Number.MAX_SAFE_INTEGER) {
      return t.skip(`buffer.constants.MAX_LENGTH is ${bufferConstants.MAX_LENGTH} (2 ** 53 - 1): a larger size is past ` +
        'what node:fs can truncate a file to (and past the 16 TiB ext4 holds), so no such file can be made');
    }
    const larger = path.join(tempDirs.disk, 'larger-than-a-buffer');
    fs.writeFileSync(larger, '');
    try {
      try {
        fs.truncateSync(larger, bufferConstants.MAX_LENGTH + 1);
      } catch (err) {
        if (err.code !== 'EFBIG' && err.code !== 'EINVAL') throw err;
        return t.skip(`buffer.constants.MAX_LENGTH is ${bufferConstants.MAX_LENGTH} bytes, and this filesystem ` +
          `refuses a file one byte larger (${err.code}): no file here is larger than a Buffer can be`);
      }
      const err = thrownBy(() => mapFile(larger), 'mapFile of a file past buffer.constants.MAX_LENGTH');
      assert.equal(err.code, 'ERR_FS_FILE_TOO_LARGE');
      assert.ok(err instanceof RangeError);
    } finally {
      fs.rmSync(larger);
    }
  });
});

describe("errors are node:fs's", () => {
  let dir;
  let file;
  before(() => {
    dir = tempDirs.disk;
    file = writePattern(path.join(dir, 'small'), 100);
  });

  test('a missing file: fs.readFileSync\'s ENOENT, naming the path', () => {
    const missing = path.join(dir, 'missing');
    assert.deepEqual(errorFacts(thrownBy(() => mapFile(missing))), errorFacts(thrownBy(() => fs.readFileSync(missing))));
  });

  test('an invalid path: the same ERR_INVALID_ARG_TYPE / ERR_INVALID_ARG_VALUE as node:fs', () => {
    for (const bad of [5, null, {}, 'a\u0000b']) {
      const ours = errorFacts(thrownBy(() => mapFile(bad)));
      const theirs = errorFacts(thrownBy(() => fs.statSync(bad)));
      assert.deepEqual({ ...ours }, { ...theirs }, `path ${String(bad)}`);
    }
  });

  test('a directory: EISDIR (syscall mmap); a FIFO and /dev/zero: ENODEV; nothing blocks', () => {
    const fifo = path.join(dir, 'fifo');
    if (hasFifos) execFileSync('mkfifo', [fifo]);
    const dirErr = thrownBy(() => mapFile(dir));
    const nodeDirErr = thrownBy(() => fs.readFileSync(dir));
    assert.equal(dirErr.code, nodeDirErr.code);
    assert.equal(dirErr.errno, nodeDirErr.errno);
    assert.equal(dirErr.message, nodeDirErr.message.replace(/, read$/, ', mmap'));
    for (const special of hasFifos ? [fifo, '/dev/zero'] : ['/dev/zero']) {
      const err = thrownBy(() => mapFile(special));
      assert.deepEqual(
        { code: err.code, syscall: err.syscall, message: err.message, hasPath: 'path' in err },
        { code: 'ENODEV', syscall: 'mmap', message: 'ENODEV: no such device, mmap', hasPath: false }, special);
    }
  });

  test('bad windows and options: ERR_OUT_OF_RANGE, ERR_INVALID_ARG_TYPE, ERR_INVALID_ARG_VALUE', () => {
    const cases = [
      [{ offset: 101 }, 'ERR_OUT_OF_RANGE', 'The value of "options.offset" is out of range. It must be <= 100. Received 101'],
      [{ offset: 1, length: 100 }, 'ERR_OUT_OF_RANGE', 'The value of "options.length" is out of range. It must be <= 99. Received 100'],
      [{ offset: -1 }, 'ERR_OUT_OF_RANGE', 'The value of "options.offset" is out of range. It must be >= 0 && <= 9007199254740991. Received -1'],
      [{ offset: 1.5 }, 'ERR_OUT_OF_RANGE', 'The value of "options.offset" is out of range. It must be an integer. Received 1.5'],
      [{ offset: '1' }, 'ERR_INVALID_ARG_TYPE', 'The "options.offset" property must be of type number. Received type string (\'1\')'],
      // One byte past what a Buffer can be (4 GiB on Node 20, 2 ** 53 - 1 from 22): Buffer.alloc's words.
      [{ length: bufferConstants.MAX_LENGTH + 1 }, 'ERR_OUT_OF_RANGE',
        thrownBy(() => Buffer.alloc(bufferConstants.MAX_LENGTH + 1)).message.replace('"size"', '"options.length"')],
      [{ advice: 'fast' }, 'ERR_INVALID_ARG_VALUE', "The property 'options.advice' must be one of 'normal', 'sequential', 'random', 'willneed', 'hugepage'. Received 'fast'"],
      [{ populate: 1 }, 'ERR_INVALID_ARG_TYPE', 'The "options.populate" property must be of type boolean. Received type number (1)'],
      ['utf8', 'ERR_INVALID_ARG_TYPE', 'The "options" argument must be of type object. Received type string (\'utf8\')'],
    ];
    for (const [options, code, message] of cases) {
      const err = thrownBy(() => mapFile(file, options), JSON.stringify(options));
      assert.deepEqual({ code: err.code, message: err.message }, { code, message }, JSON.stringify(options));
    }
  });
});

describe("smartRead with strategy 'mmap'", () => {
  test('the bytes of files on tmpfs and disk, of /proc files and of an fd', async () => {
    for (const { kind, dir } of tempDirs.all) {
      for (const size of [1, PAGE + 1, MiB + 3]) {
        const file = writePattern(path.join(dir, `strategy-${size}`), size);
        assertSameBytes(await smartRead(file, { strategy: 'mmap' }), patternBuffer(size), `${kind} ${size}`);
        assert.equal(await smartRead(file, { strategy: 'mmap', encoding: 'latin1' }), patternBuffer(size).toString('latin1'));
      }
    }
    assert.equal((await smartRead('/proc/version', { strategy: 'mmap', encoding: 'utf8' })), fs.readFileSync('/proc/version', 'utf8'));
    const file = writePattern(path.join(tempDirs.disk, 'by-fd'), 5000);
    const fd = fs.openSync(file, 'r');
    try {
      assertSameBytes(await smartRead(fd, { strategy: 'mmap' }), patternBuffer(5000), 'an fd');
    } finally {
      fs.closeSync(fd);
    }
  });

  test("explain and metrics name it 'mmap' (the pure-JS engine 'js')", async () => {
    const file = writePattern(path.join(tempDirs.disk, 'explained'), 5000);
    assert.equal(explain(file, { strategy: 'mmap' }).strategy, native ? 'mmap' : 'js');
    // A flag that writes is read on the calling thread, and explain says so.
    assert.equal(explain(file, { strategy: 'mmap', flag: 'r+' }).strategy, native ? 'mmap' : 'js');
    assert.equal(explain(file, { strategy: 'mmap', flag: 'a+' }).strategy, native ? 'sync' : 'js');
    const servedBy = native ? 'mmap' : 'js';
    const before = metrics().strategies[servedBy].reads;
    await smartRead(file, { strategy: 'mmap' });
    assert.equal(metrics().strategies[servedBy].reads, before + 1);
  });

  test("errors are fs.promises.readFile's", async () => {
    for (const target of [path.join(tempDirs.disk, 'nope'), tempDirs.disk]) {
      const ours = await rejectionOf(() => smartRead(target, { strategy: 'mmap' }));
      const theirs = await rejectionOf(() => fs.promises.readFile(target));
      assert.deepEqual({ ...errorFacts(ours) }, { ...errorFacts(theirs) }, target);
    }
  });
});
