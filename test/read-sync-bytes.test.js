// smartReadSync returns the bytes fs.readFileSync returns: every size class, on tmpfs and on disk,
// files whose size the kernel does not report, every path form, fds, encodings, flags, and files
// beyond node:fs's 2 GiB limit.
'use strict';
const { test, describe } = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const { constants: bufferConstants } = require('node:buffer');
const fs = require('node:fs');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const { smartReadSync } = require('smartread');
const {
  checkNoFdLeak, useTempDirs, openFdCount, isOpenFd, patternBuffer, writePattern, assertSameBytes,
  thrownBy, waitForExit, errorFacts,
} = require('./helpers');

checkNoFdLeak({ spawnsChildren: true });
const tempDirs = useTempDirs();

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;

/** Reads `file` both ways and asserts the same bytes, which must also be `expected` if given. */
function assertReadsLikeFs(file, expected, ...options) {
  const actual = smartReadSync(file, ...options);
  const reference = fs.readFileSync(file, ...options);
  assert.ok(Buffer.isBuffer(actual), 'the result is a Buffer');
  assertSameBytes(actual, reference, 'smartReadSync vs fs.readFileSync');
  if (expected) assertSameBytes(actual, expected, 'smartReadSync vs the bytes written');
  return actual;
}

describe('every size class, on each filesystem', () => {
  // Around each threshold of the native reader: 256 KiB (a fresh destination is faulted in
  // first), 1 MiB (a name read before is read without fstat up to this), 4 MiB (a helper thread
  // fills 1 MiB chunks; 5 MiB + 3 ends in a short one), 32 MiB (huge pages, 8 MiB chunks).
  const sizes = [0, 1, 4095, 4096, 4097, 65536, 65537, 256 * KiB - 1, 256 * KiB, MiB, 4 * MiB - 1, 4 * MiB,
    5 * MiB + 3, 32 * MiB - 1, 32 * MiB, 128 * MiB];
  for (const { kind, dir } of tempDirs.all) {
    for (const size of sizes) {
      test(`${kind}: ${size} bytes`, () => {
        const file = writePattern(path.join(dir, `size-${size}`), size);
        try {
          const expected = patternBuffer(size);
          assertReadsLikeFs(file, expected);
          // The options path, which small reads and large reads take as well.
          assertReadsLikeFs(file, expected, { flag: 'r' });
        } finally {
          fs.rmSync(file);
        }
      });
    }
  }
});

describe('files whose size the kernel does not report', () => {
  test('/proc/self/status: same structure (its values change between reads)', () => {
    const actual = smartReadSync('/proc/self/status', 'utf8');
    const reference = fs.readFileSync('/proc/self/status', 'utf8');
    assert.equal(fs.statSync('/proc/self/status').size, 0);
    assert.ok(actual.startsWith('Name:'), actual.slice(0, 40));
    const keys = (text) => text.split('\n').map((line) => line.split(':')[0]);
    assert.deepEqual(keys(actual), keys(reference));
    assert.ok(Math.abs(actual.length - reference.length) < reference.length / 10,
      `${actual.length} vs ${reference.length} characters`);
    // The same, as a Buffer through the path without options.
    const bytes = smartReadSync('/proc/self/status');
    assert.ok(Buffer.isBuffer(bytes) && bytes.toString('latin1').startsWith('Name:'));
  });

  for (const file of ['/proc/version', '/sys/kernel/mm/transparent_hugepage/enabled', '/proc/self/cmdline']) {
    test(`${file}: exactly the same bytes`, (t) => {
      if (!fs.existsSync(file)) {
        t.skip(`${file} does not exist on this kernel`);
        return;
      }
      assert.equal(fs.statSync(file).size, file.startsWith('/sys') ? 4096 : 0);
      const bytes = assertReadsLikeFs(file);
      assert.ok(bytes.length > 0);
      assert.equal(smartReadSync(file, 'utf8'), fs.readFileSync(file, 'utf8'));
      assert.equal(smartReadSync(file, { encoding: 'latin1' }), fs.readFileSync(file, { encoding: 'latin1' }));
    });
  }

  test('/dev/null: empty', () => {
    const bytes = assertReadsLikeFs('/dev/null', Buffer.alloc(0));
    assert.equal(bytes.length, 0);
    assert.equal(smartReadSync('/dev/null', 'utf8'), '');
  });

  // A FIFO has no size and delivers its bytes in pieces: the reads run to EOF through a growing
  // buffer. Each read needs its own writer: a child that opens the FIFO and writes `size` pattern
  // bytes (the same formula as patternBuffer, computed there to keep the child light).
  async function readFifo(fifo, size, read) {
    const writer = spawn(process.execPath, ['-e', `
      const size = Number(process.argv[2]);
      const bytes = Buffer.alloc(size, Buffer.from(Array.from({ length: 251 }, (_, i) => (i * 7 + 3) % 251)));
      require('node:fs').writeFileSync(process.argv[1], bytes);
    `, fifo, String(size)], { stdio: 'inherit' });
    // Blocks in open(2) until the child has opened the other end.
    const result = read(fifo);
    assert.deepEqual(await waitForExit(writer), { code: 0, signal: null });
    return result;
  }

  for (const size of [0, 64 * KiB, 64 * KiB + 1, 3 * MiB + 7]) {
    test(`a FIFO delivering ${size} bytes`, async () => {
      const fifo = path.join(tempDirs.disk, `fifo-${size}`);
      const mkfifo = spawn('mkfifo', [fifo], { stdio: 'inherit' });
      assert.deepEqual(await waitForExit(mkfifo), { code: 0, signal: null });
      try {
        const expected = patternBuffer(size);
        const actual = await readFifo(fifo, size, (p) => smartReadSync(p));
        assert.ok(Buffer.isBuffer(actual));
        assertSameBytes(actual, expected, 'smartReadSync');
        assertSameBytes(await readFifo(fifo, size, (p) => fs.readFileSync(p)), expected, 'fs.readFileSync');
        const latin1 = await readFifo(fifo, size, (p) => smartReadSync(p, { encoding: 'latin1' }));
        assert.ok(latin1 === expected.toString('latin1'), 'latin1 string');
      } finally {
        fs.rmSync(fifo);
      }
    });
  }
});

// smartReadSync remembers the size a name had and reads it again without fstat, checking that
// the file still ends there; whatever the name holds now must be read as fs.readFileSync reads it.
describe('a name read before, then changed', () => {
  for (const { kind, dir } of tempDirs.all) {
    test(`${kind}: other bytes of the same size, shrunk, grown by one byte, emptied, 1 MiB and more`, () => {
      const file = path.join(dir, 'changing');
      const versions = [
        patternBuffer(4096), Buffer.alloc(4096, 0x5a), patternBuffer(4095), patternBuffer(4096),
        patternBuffer(4097), Buffer.alloc(0), patternBuffer(64 * KiB), patternBuffer(MiB), patternBuffer(MiB + 1),
        patternBuffer(MiB),
      ];
      for (const [i, version] of versions.entries()) {
        fs.writeFileSync(file, version);
        // Twice each: once after the change, once with the new size known.
        for (const round of [1, 2]) {
          assertSameBytes(smartReadSync(file), version, `version ${i} (${version.length} bytes), read ${round}`);
        }
      }
    });
  }

  test('replaced by a directory, removed, replaced by a symlink loop: the errors of fs.readFileSync', () => {
    const file = path.join(tempDirs.disk, 'then-gone');
    const change = {
      directory: () => fs.mkdirSync(file),
      removed: () => {},
      'symlink loop': () => fs.symlinkSync(path.basename(file), file),
    };
    for (const [what, make] of Object.entries(change)) {
      fs.writeFileSync(file, patternBuffer(4096));
      assertSameBytes(smartReadSync(file), patternBuffer(4096), `${what}: before`);
      fs.rmSync(file);
      make();
      try {
        assert.deepEqual(errorFacts(thrownBy(() => smartReadSync(file), what)), errorFacts(thrownBy(() => fs.readFileSync(file), what)), what);
      } finally {
        fs.rmSync(file, { recursive: true, force: true });
      }
    }
  });

  // The dangerous change: a FIFO whose writer has written exactly as many bytes as the file had
  // and then pauses. A read of that many bytes and one more would stop there; the bytes after
  // the pause are part of what fs.readFileSync returns.
  test('replaced by a FIFO whose writer pauses after as many bytes as the file had', async () => {
    const file = path.join(tempDirs.disk, 'then-fifo');
    const expected = patternBuffer(4096 + 100);
    fs.writeFileSync(file, expected.subarray(0, 4096));
    assertSameBytes(smartReadSync(file), expected.subarray(0, 4096), 'the regular file');
    fs.rmSync(file);
    const mkfifo = spawn('mkfifo', [file], { stdio: 'inherit' });
    assert.deepEqual(await waitForExit(mkfifo), { code: 0, signal: null });
    try {
      const writer = spawn(process.execPath, ['-e', `
        const fs = require('node:fs');
        const bytes = Buffer.from(process.argv[2], 'base64');
        const fd = fs.openSync(process.argv[1], 'w');
        fs.writeSync(fd, bytes.subarray(0, 4096));
        setTimeout(() => { fs.writeSync(fd, bytes.subarray(4096)); fs.closeSync(fd); }, 200);
      `, file, expected.toString('base64')], { stdio: 'inherit' });
      // Blocks in open(2) until the writer has opened the other end, then reads to EOF.
      const actual = smartReadSync(file);
      assert.deepEqual(await waitForExit(writer), { code: 0, signal: null });
      assertSameBytes(actual, expected, 'every byte the FIFO delivered');
    } finally {
      fs.rmSync(file);
    }
  });
});

describe('path forms', () => {
  const dir = tempDirs.tmpfs ?? tempDirs.disk;
  const content = patternBuffer(5000);

  test('string, Buffer, Uint8Array, file: URL, relative path and symlink give the same bytes', () => {
    const file = path.join(dir, 'name with spaces, %25, #hash, ?query, é 𝄞');
    fs.writeFileSync(file, content);
    const link = path.join(dir, 'link');
    fs.symlinkSync(file, link);
    try {
      const padded = Buffer.from(`xx${file}yy`);
      const forms = {
        string: file,
        Buffer: Buffer.from(file),
        Uint8Array: new Uint8Array(Buffer.from(file)),
        'Uint8Array over part of a larger buffer': new Uint8Array(padded.buffer, padded.byteOffset + 2, padded.length - 4),
        'file: URL': pathToFileURL(file),
        'relative path': path.relative(process.cwd(), file),
        symlink: link,
      };
      for (const [form, value] of Object.entries(forms)) {
        const actual = smartReadSync(value);
        assert.ok(Buffer.isBuffer(actual), form);
        assertSameBytes(actual, content, form);
        assertSameBytes(actual, fs.readFileSync(value), `${form}, against fs.readFileSync`);
        assertSameBytes(smartReadSync(value, {}), content, `${form}, with options`);
        assert.equal(smartReadSync(value, 'latin1'), content.toString('latin1'), `${form}, latin1`);
      }
    } finally {
      fs.rmSync(link);
      fs.rmSync(file);
    }
  });

  test('names that are not valid UTF-8: a Buffer path with raw bytes, a string with a lone surrogate', () => {
    const raw = Buffer.concat([Buffer.from(`${dir}/raw-`), Buffer.from([0xff, 0xfe, 0x80, 0x41])]);
    fs.writeFileSync(raw, 'raw bytes');
    // node:fs writes a lone surrogate as U+FFFD (EF BF BD) in the name.
    const surrogate = path.join(dir, 'lone-\ud800-surrogate');
    fs.writeFileSync(surrogate, 'lone surrogate');
    try {
      assert.ok(fs.existsSync(path.join(dir, 'lone-\ufffd-surrogate')));
      assertSameBytes(smartReadSync(raw), Buffer.from('raw bytes'), 'raw bytes');
      assert.equal(smartReadSync(raw, 'utf8'), 'raw bytes');
      assertSameBytes(smartReadSync(surrogate), Buffer.from('lone surrogate'), 'lone surrogate');
      assert.equal(smartReadSync(surrogate, { encoding: 'latin1' }), 'lone surrogate');
    } finally {
      fs.rmSync(raw);
      fs.rmSync(surrogate);
    }
  });

  // Paths around 1 KiB in UTF-8, some with a 4-byte character across the 1 KiB mark: the native
  // engine keeps short paths on the stack and must not cut a long one short.
  test('paths of 1000 to 1040 bytes, ASCII and with 4-byte characters at the end', () => {
    let deep = dir;
    while (Buffer.byteLength(deep) < 800) deep = path.join(deep, 'd'.repeat(Math.min(200, 900 - Buffer.byteLength(deep))));
    fs.mkdirSync(deep, { recursive: true });
    const prefix = Buffer.byteLength(deep) + 1;
    let files = 0;
    for (let total = 1000; total <= 1040; total++) {
      for (const tail of ['', '𝄞', '𝄞a', '𝄞ab', '𝄞abc', 'é𝄞']) {
        const name = 'f'.repeat(total - prefix - Buffer.byteLength(tail)) + tail;
        const file = path.join(deep, name);
        assert.equal(Buffer.byteLength(file), total);
        const expected = Buffer.from(`${total}:${tail}`);
        fs.writeFileSync(file, expected);
        assertSameBytes(smartReadSync(file), expected, `${total} bytes, ending ${JSON.stringify(tail)}`);
        assertSameBytes(smartReadSync(Buffer.from(file)), expected, `${total} bytes as a Buffer`);
        assertSameBytes(smartReadSync(file, { flag: 'r' }), expected, `${total} bytes, with options`);
        assert.equal(smartReadSync(file, 'utf8'), expected.toString());
        files++;
      }
    }
    assert.equal(files, 41 * 6);
    fs.rmSync(path.join(dir, 'd'.repeat(200)), { recursive: true });
  });
});

describe('an fd', () => {
  for (const { kind, dir } of tempDirs.all) {
    for (const size of [0, 5000, 100 * KiB, 40 * MiB]) {
      test(`${kind}: ${size} bytes, read from the fd's position, and the fd left open`, () => {
        const file = writePattern(path.join(dir, `fd-${size}`), size);
        const skip = Math.min(1234, size);
        // One fd for smartReadSync, one for fs.readFileSync, both moved past the same bytes.
        const open = () => {
          const fd = fs.openSync(file, 'r');
          fs.readSync(fd, Buffer.alloc(skip), 0, skip, null);
          return fd;
        };
        const fds = [];
        try {
          // Large strings cost more than the reads: a large file is read as bytes and as utf8 only.
          const optionSets = size < MiB ? [[], ['utf8'], ['latin1'], [{ encoding: 'hex' }], [{ flag: 'r' }]] : [[], ['utf8']];
          for (const options of optionSets) {
            const mine = open();
            const theirs = open();
            fds.push(mine, theirs);
            const actual = smartReadSync(mine, ...options);
            const reference = fs.readFileSync(theirs, ...options);
            if (Buffer.isBuffer(reference)) {
              assert.ok(Buffer.isBuffer(actual));
              assertSameBytes(actual, reference, `options ${JSON.stringify(options)}`);
              assertSameBytes(actual, patternBuffer(size - skip, skip), 'the bytes after the position');
            } else {
              assert.ok(actual === reference, `options ${JSON.stringify(options)}: the same string`);
            }
            assert.ok(isOpenFd(mine), 'the fd is still open');
            fs.fstatSync(mine);
            // Both fds are at EOF now: a second read gives nothing, and the fd stays usable.
            assert.equal(smartReadSync(mine, ...options).length, 0);
            assert.equal(fs.readFileSync(theirs, ...options).length, 0);
            assert.equal(fs.readSync(mine, Buffer.alloc(1), 0, 1, 0), Math.min(size, 1));
          }
        } finally {
          for (const fd of fds) fs.closeSync(fd);
          fs.rmSync(file);
        }
      });
    }
  }

  test('an fd of a file without a reported size (/proc/version)', () => {
    const mine = fs.openSync('/proc/version', 'r');
    const theirs = fs.openSync('/proc/version', 'r');
    try {
      assertSameBytes(smartReadSync(mine), fs.readFileSync(theirs), '/proc/version');
      assert.ok(isOpenFd(mine));
    } finally {
      fs.closeSync(mine);
      fs.closeSync(theirs);
    }
  });
});

describe('encodings', () => {
  const dir = tempDirs.tmpfs ?? tempDirs.disk;
  // Text in several scripts, invalid UTF-8, and an odd length (for UTF-16).
  const content = Buffer.concat([
    Buffer.from('plain ASCII, é ü ß, ✓ — 漢字, 𝄞 emoji 🙂\r\n\t\u0000end\n'),
    Buffer.from([0xff, 0xfe, 0x80, 0xc3, 0x28, 0xe2, 0x82]),
    patternBuffer(3001),
  ]);
  const encodings = ['utf8', 'utf-8', 'UTF8', 'UTF-8', 'utf16le', 'utf-16le', 'ucs2', 'ucs-2', 'latin1', 'binary',
    'base64', 'base64url', 'hex', 'HEX', 'ascii', 'Latin1'];

  for (const encoding of encodings) {
    test(`'${encoding}', as a string and as { encoding }, from a path and from an fd`, () => {
      const file = path.join(dir, `encoding-${encoding}`);
      fs.writeFileSync(file, content);
      try {
        const expected = content.toString(encoding);
        for (const options of [encoding, { encoding }, { encoding, flag: 'r' }]) {
          const actual = smartReadSync(file, options);
          assert.equal(typeof actual, 'string');
          assert.ok(actual === expected, `${JSON.stringify(options)}: the string fs.readFileSync returns`);
          assert.ok(actual === fs.readFileSync(file, options));
          const fd = fs.openSync(file, 'r');
          try {
            assert.ok(smartReadSync(fd, options) === expected, `${JSON.stringify(options)}, from an fd`);
          } finally {
            fs.closeSync(fd);
          }
        }
        // An empty file is '' in every encoding.
        fs.writeFileSync(file, '');
        assert.equal(smartReadSync(file, encoding), '');
      } finally {
        fs.rmSync(file);
      }
    });
  }

  test('no encoding in every spelling gives a Buffer', () => {
    const file = path.join(dir, 'no-encoding');
    fs.writeFileSync(file, content);
    try {
      // An aborted signal does not stop a synchronous read, in node:fs either.
      for (const options of [undefined, null, '', {}, { encoding: null }, { encoding: undefined }, { encoding: '' },
        { flag: undefined }, () => {}, { signal: AbortSignal.abort() }, { signal: new AbortController().signal }]) {
        const actual = smartReadSync(file, options);
        const reference = fs.readFileSync(file, options);
        assert.ok(Buffer.isBuffer(reference));
        assert.ok(Buffer.isBuffer(actual), `options ${String(options)}`);
        assertSameBytes(actual, content, `options ${String(options)}`);
      }
    } finally {
      fs.rmSync(file);
    }
  });

  test("encoding 'buffer' of an empty file: '' (as fs, which only fails on non-empty files)", () => {
    const file = path.join(dir, 'empty');
    fs.writeFileSync(file, '');
    try {
      assert.equal(fs.readFileSync(file, 'buffer'), '');
      assert.equal(smartReadSync(file, 'buffer'), '');
      assert.equal(smartReadSync(file, { encoding: 'buffer' }), '');
    } finally {
      fs.rmSync(file);
    }
  });
});

describe('flags', () => {
  const dir = tempDirs.tmpfs ?? tempDirs.disk;
  const content = patternBuffer(10000);
  const { O_RDONLY, O_RDWR, O_NOATIME, O_NOFOLLOW } = fs.constants;

  for (const flag of ['r', 'rs', 'sr', 'r+', 'rs+', 'sr+', 'a+', 'as+', 'sa+', O_RDONLY, O_RDWR, O_RDONLY | O_NOATIME,
    O_RDONLY | O_NOFOLLOW]) {
    test(`flag ${JSON.stringify(flag)} on an existing file: the same bytes, the file unchanged`, () => {
      const file = path.join(dir, `flag-${flag}`);
      fs.writeFileSync(file, content);
      try {
        assertReadsLikeFs(file, content, { flag });
        assert.equal(smartReadSync(file, { flag, encoding: 'utf8' }), fs.readFileSync(file, { flag, encoding: 'utf8' }));
        assert.equal(smartReadSync(file, { flag, encoding: 'hex' }), content.toString('hex'));
        assertSameBytes(fs.readFileSync(file), content, 'the file afterwards');
      } finally {
        fs.rmSync(file);
      }
    });
  }

  for (const flag of ['a+', 'ax+', 'w+', 'wx+']) {
    test(`flag '${flag}' on a missing file creates it, empty, as fs does`, () => {
      const mine = path.join(dir, `created-${flag}-mine`);
      const theirs = path.join(dir, `created-${flag}-theirs`);
      try {
        assert.equal(smartReadSync(mine, { flag }).length, 0);
        assert.equal(fs.readFileSync(theirs, { flag }).length, 0);
        assert.equal(fs.statSync(mine).mode, fs.statSync(theirs).mode);
        assert.equal(smartReadSync(`${mine}-utf8`, { flag, encoding: 'utf8' }), '');
        assert.equal(fs.statSync(`${mine}-utf8`).size, 0);
      } finally {
        for (const f of [mine, theirs, `${mine}-utf8`]) fs.rmSync(f, { force: true });
      }
    });
  }

  test("flag 'w+' on an existing file truncates it and reads nothing, as fs does", () => {
    const file = path.join(dir, 'truncated');
    for (const read of [smartReadSync, fs.readFileSync]) {
      fs.writeFileSync(file, content);
      assert.equal(read(file, { flag: 'w+' }).length, 0);
      assert.equal(fs.statSync(file).size, 0);
    }
    fs.rmSync(file);
  });
});

// Sparse files on the disk: only the marker bytes take space. Each is deleted right after use.
describe('files larger than 2 GiB', () => {
  const { MAX_LENGTH } = bufferConstants;
  const dir = tempDirs.disk;

  function makeSparse(name, size, markers = {}) {
    const file = path.join(dir, name);
    const fd = fs.openSync(file, 'w');
    try {
      fs.ftruncateSync(fd, size);
      for (const [offset, value] of Object.entries(markers)) fs.writeSync(fd, Buffer.from([value]), 0, 1, Number(offset));
    } finally {
      fs.closeSync(fd);
    }
    return file;
  }

  // Checks the markers, then that every other byte is zero (64 MiB at a time, by memcmp).
  function assertSparseContent(bytes, size, markers) {
    assert.equal(bytes.length, size);
    for (const [offset, value] of Object.entries(markers)) {
      assert.equal(bytes[Number(offset)], value, `marker at ${offset}`);
      bytes[Number(offset)] = 0;
    }
    const zeros = Buffer.alloc(64 * MiB);
    for (let offset = 0; offset < size; offset += zeros.length) {
      const piece = bytes.subarray(offset, Math.min(size, offset + zeros.length));
      if (!piece.equals(zeros.subarray(0, piece.length))) {
        const at = offset + piece.findIndex((b) => b !== 0);
        assert.fail(`byte ${at} is ${bytes[at]}, the file holds 0 there`);
      }
    }
  }

  test('2 GiB + 12345 bytes: read whole by path and by fd, where fs.readFileSync refuses', () => {
    const size = 2 * GiB + 12345;
    const markers = { 0: 0x11, 1: 0x12, [GiB + 7]: 0x22, [2 * GiB - 1]: 0x33, [2 * GiB]: 0x44, [size - 1]: 0x55 };
    const file = makeSparse('sparse-2g', size, markers);
    try {
      const refused = thrownBy(() => fs.readFileSync(file), 'fs.readFileSync');
      assert.ok(refused instanceof RangeError);
      assert.equal(refused.code, 'ERR_FS_FILE_TOO_LARGE');

      let bytes = smartReadSync(file);
      assert.ok(Buffer.isBuffer(bytes));
      assertSparseContent(bytes, size, markers);
      bytes = null;

      // From an fd, at an offset: the engine's read loop crosses 2 GiB on a descriptor it does not own.
      const fd = fs.openSync(file, 'r');
      try {
        fs.readSync(fd, Buffer.alloc(1), 0, 1, null);
        bytes = smartReadSync(fd);
        assert.equal(bytes.length, size - 1);
        assert.equal(bytes[0], 0x12);
        assert.equal(bytes[2 * GiB - 1], 0x44);
        assert.equal(bytes[size - 2], 0x55);
        assert.ok(isOpenFd(fd));
      } finally {
        fs.closeSync(fd);
      }
      bytes = null;
    } finally {
      fs.rmSync(file);
    }
  });

  // Node 20's Buffer limit is 4 GiB; from Node 22 it is 2^53 - 1 bytes, more than a file can
  // hold here (ext4 and tmpfs stop far below) and than memory could take.
  const beyondFiles = MAX_LENGTH > 2 ** 32
    ? `buffer.constants.MAX_LENGTH is ${MAX_LENGTH} bytes on node ${process.version}: no file that large can be made here`
    : false;

  test('exactly buffer.constants.MAX_LENGTH bytes is read whole', { skip: beyondFiles }, () => {
    const markers = { 0: 1, [MAX_LENGTH - 1]: 2 };
    const file = makeSparse('sparse-max', MAX_LENGTH, markers);
    try {
      let bytes = smartReadSync(file);
      assert.equal(bytes.length, MAX_LENGTH);
      assert.equal(bytes[0], 1);
      assert.equal(bytes[MAX_LENGTH - 1], 2);
      assert.equal(bytes[MAX_LENGTH / 2], 0);
      bytes = null;
    } finally {
      fs.rmSync(file);
    }
  });

  test('MAX_LENGTH + 1 bytes: RangeError ERR_FS_FILE_TOO_LARGE, and no descriptor left open', { skip: beyondFiles }, () => {
    const size = MAX_LENGTH + 1;
    const file = makeSparse('sparse-too-large', size, { [MAX_LENGTH]: 1 });
    try {
      const fds = openFdCount();
      for (const options of [[], ['utf8'], ['latin1'], [{ flag: 'r' }]]) {
        const err = thrownBy(() => smartReadSync(file, ...options), `smartReadSync(${JSON.stringify(options)})`);
        assert.ok(err instanceof RangeError, `${JSON.stringify(options)}: ${err}`);
        assert.equal(err.code, 'ERR_FS_FILE_TOO_LARGE');
        assert.equal(err.name, 'RangeError');
        assert.match(err.message, new RegExp(`^File size \\(${size}\\) is greater than `));
        assert.equal(openFdCount(), fds);
      }
      const fd = fs.openSync(file, 'r');
      try {
        const err = thrownBy(() => smartReadSync(fd), 'smartReadSync(fd)');
        assert.equal(err.code, 'ERR_FS_FILE_TOO_LARGE');
        assert.ok(isOpenFd(fd), 'the fd stays open');
      } finally {
        fs.closeSync(fd);
      }
    } finally {
      fs.rmSync(file);
    }
  });
});

describe('small results share a pool, as Buffer.allocUnsafe does', () => {
  test('hundreds of small reads kept alive at once each still hold their own file', () => {
    const disk = tempDirs.disk;
    const files = [];
    for (let i = 0; i < 300; i++) {
      const file = path.join(disk, `small-${i}`);
      // Sizes from 1 to 4096 bytes, distinct contents, so that an overlap would show.
      fs.writeFileSync(file, Buffer.alloc(1 + ((i * 977) % 4096), i % 256));
      files.push(file);
    }
    const results = files.map((file) => smartReadSync(file));
    for (let i = 0; i < files.length; i++) {
      assertSameBytes(results[i], fs.readFileSync(files[i]), files[i]);
      assert.ok(Buffer.isBuffer(results[i]));
    }
    // Writing into one result never changes another.
    results[0].fill(0xee);
    for (let i = 1; i < files.length; i++) assertSameBytes(results[i], fs.readFileSync(files[i]), files[i]);
  });
});
