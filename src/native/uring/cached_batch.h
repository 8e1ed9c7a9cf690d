// SPDX-License-Identifier: MIT
// A small synchronous io_uring that reads a run of small cached files in two io_uring_enter
// calls: readMany's cache hits without four syscalls per file.
#pragma once

#ifdef HAVE_LIBURING

#include <liburing.h>

#include <memory>
#include <string>

#include "../read/cached_read.h"

namespace smartread {
namespace uring {

// Each item's file is opened (RESOLVE_CACHED, nonblocking) into a direct descriptor, checked
// not to be a FIFO, read with RWF_NOWAIT, then read once more at its end, which must find EOF,
// and closed. Every op
// completes inline at submission: a name or page that is not in memory fails with EAGAIN
// instead of going to io_uring's workers, so the calling thread never waits on a device.
// Nothing is left in flight between calls, so the ring can be closed at any time.
//
// There is no fstat between the open and the read: a hit is a file of exactly the size it had
// when it was last read, found at EOF after that many bytes. A name changed since into a
// directory or a FIFO fails before it is read (EISDIR, ESPIPE); into a device (which takes
// root), it is read without waiting, and is a miss unless it gave exactly that many bytes and
// then nothing.
class CachedBatchRing final : public SmallFileBatch {
 public:
  // A ring, or nullptr with `why` set (any setup error: the caller reads with syscalls).
  static std::unique_ptr<CachedBatchRing> Create(std::string* why);
  ~CachedBatchRing() override;

  bool ReadSmall(SmallFileRead* items, size_t count, int flags) override;

 private:
  CachedBatchRing() = default;
  // A phase that did not submit or complete in full (the kernel out of memory): every item is
  // a miss, and the ring, whose state is no longer known, is for the caller to close.
  static bool Abandon(SmallFileRead* items, size_t count);
  io_uring ring_{};
};

}  // namespace uring
}  // namespace smartread

#endif  // HAVE_LIBURING
