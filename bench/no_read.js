// The no-read readers, the same in the bench's own process (drivers.js) and in a peer's
// (peer_runner.js, under Bun and Deno): they measure what a runtime does to a result when no
// read is made at all. Each is a function of a path; the file's bytes are read once, by the
// untimed verification that comes first, and kept while the trial reads the same path.
//
// - preloaded(): hands those bytes out again. In a +consume trial its time is what consuming
//   alone costs in this runtime, which no reader of it can go below; where a peer's read and
//   consumption together take less (Bun's JIT folds the same words 3-4x faster than V8's here),
//   no reader of this runtime can match the peer's figure.
// - freshCopy(): a new Buffer of the file's size (Buffer.allocUnsafeSlow, as fresh as a reader's
//   result) filled from those bytes. A read does that much and more (open, the kernel's copy
//   from the page cache, close): where a peer's reader is ahead of this, what stands between is
//   the runtime's allocator, not the read.
'use strict';
const fs = require('node:fs');
const { Buffer } = require('node:buffer');

function preloaded() {
  let path = null;
  let bytes = null;
  return (p) => {
    if (p !== path) {
      bytes = fs.readFileSync(p);
      path = p;
    }
    return bytes;
  };
}

function freshCopy() {
  const bytesOf = preloaded();
  return (p) => {
    const bytes = bytesOf(p);
    const copy = Buffer.allocUnsafeSlow(bytes.length);
    copy.set(bytes);
    return copy;
  };
}

module.exports = { preloaded, freshCopy };
