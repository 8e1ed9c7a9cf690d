// SPDX-License-Identifier: MIT
// One whole-file read on the ring: open and size it, read it in chunks, close it.
#pragma once

#ifdef HAVE_LIBURING

#include <napi.h>
#include <linux/openat2.h>
#include <sys/stat.h>

#include <cstdint>
#include <string>

#include "../common/errors.h"
#include "../common/file_io.h"
#include "ring.h"

namespace smartread {
namespace uring {

// The phases of a read of a path (a user fd skips opening and closing; so does a path opened
// on the JS thread beforehand, whose fd the read owns and closes at the end):
//   opening  OPENAT into a direct descriptor, linked to two READs that fill a malloc'd block
//            (with a size hint, HintedSize(): the first READ fills the result's Buffer of that
//            size, the second looks past its end for EOF; a file of another size goes on from
//            a block, as one without a size).
//   sizing   only when that READ filled the block: a STATX of the path for the size.
//   reading  without a size (a small file, procfs, pipes, a confined read): one READ at a time
//            into the block, grown as needed, until a READ gives nothing. With one: a Buffer of
//            that size is made on the JS thread, the block copied in, and the rest filled with
//            READs on the fixed file, several chunks in flight (a user fd's regular file: all
//            of it, from its position, one READ at a time). A short READ is continued until a
//            READ gives nothing.
//   closing  CLOSE of the direct descriptor, whatever happened before (error or cancel).
// The read settles only when nothing of it is left in the kernel: its buffer is referenced
// until then, and its descriptor slot is returned.
class FileRead final : public OpOwner {
 public:
  // The most chunks one read may have in flight (Tuning::uring_in_flight is capped here).
  static constexpr size_t kMaxChunks = 16;
  static constexpr size_t kMaxOps = 3 + kMaxChunks;

  // `fd` >= 0: a descriptor to read instead of opening the path; `owns_fd`: one opened for
  // this read (read in parallel chunks at their offsets, closed at the end), else the user's
  // (read in order from its position, left open).
  // `async_open`: the file is on a server's mount: its OPENAT and every READ go to an io-wq
  // worker (IOSQE_ASYNC) rather than inline, where they would wait for the server.
  // `size_hint`: the size the path's file had when it was last read (0: not known); see
  // HintedSize().
  FileRead(Ring* ring, uint32_t id, napi_deferred deferred, std::string path, int fd,
           bool owns_fd, int flags, bool stat_user_fd, const Confinement& confinement,
           bool async_open = false, uint64_t size_hint = 0);
  ~FileRead();

  uint32_t id() const { return id_; }
  bool needs_slot() const { return fd_ < 0; }
  // Queues the first ops; `slot` is the direct descriptor to open into (-1 for a user fd).
  void Start(int slot);
  void OnCompletion(Op* op, int res) override;
  // Asks the kernel to cancel every op in flight; the read then closes and settles.
  void Cancel();
  // The promise's value: the Buffer, or a failure object. Called once, on the JS thread.
  napi_value Result(napi_env env);
  napi_deferred deferred() const { return deferred_; }
  bool cancelled() const { return cancelled_; }

 private:
  enum Kind : uint16_t { kOpen, kStatx, kRead, kClose };
  // The ops of the opening's two READs (FreeReadOp hands out the first free from here).
  static constexpr size_t kFirstRead = kClose + 1;

  void Step();
  // Queues the OPENAT into slot_ and the opening's two READs linked to it.
  void Open();
  // Whether an open that failed with EAGAIN is tried again: a confined one (not RESOLVE_CACHED),
  // up to kScopedOpenAttempts times in all, while the read is going.
  bool RetriesOpen() {
    return confinement_.confined() && RetriesOnEagain(how_.resolve) && Going() && ++open_attempts_ < kScopedOpenAttempts;
  }
  // Neither failed, nor cancelled, nor cut short by the environment's teardown.
  bool Going() const { return !failure_.failed() && !cancelled_ && !ring_->closing(); }
  // Queues the STATX of a file whose first READ filled the block.
  void Size();
  void BeginRead(bool regular, uint64_t size);
  // Reads without a size from here on, into a new block of kFirstBlock; false (with the
  // failure set) when it cannot be had.
  bool NewBlock();
  // The size hint to open with, or 0. Where opens ask a server (FUSE, NFS: async_open), a file
  // larger than the first block, up to one chunk, known from an earlier read, is opened and read
  // whole in one submission: OPENAT, a READ of that size straight into the result's Buffer, and
  // a READ of kTail bytes past it that finds EOF. Without it such a file takes three trips
  // through io-wq and the loop (the opening, the STATX, the rest).
  uint64_t HintedSize() const;
  // The result's Buffer of size_hint_ bytes and the block for the READ past it; false when
  // either cannot be had (the read then goes as one without a hint).
  bool NewHintedDest();
  // After the opening of a hinted read: the Buffer is the result if the file was that size;
  // otherwise what was read goes to a block, and the read goes on as one without a size.
  void TakeHintedReads();
  // Doubles the block; false (with the failure set) when it cannot.
  bool GrowBlock();
  void ScheduleReads();
  void CloseOrFinish();
  void OnRead(Op* op, int res);
  Op* FreeReadOp();
  // Queues a READ at the file's position into `length` bytes of the block from `at`.
  io_uring_sqe* QueueBlockRead(size_t at, size_t length);
  // Starts the workers' chunks of a file opened here, and copies its tail meanwhile; the caller
  // schedules what is left.
  void ReadTailHere();
  // Adds what the opening's two READs brought to the block, in file order.
  void TakeFirstReads();
  // Queues a READ of op's range of the destination.
  void QueueRead(Op* op);
  io_uring_sqe* Queue(Op* op);
  void Fail(const Failure& failure) {
    if (!failure_.failed()) failure_ = failure;
  }
  // Reads go at their own offsets, several at once: a file opened for this read (a direct
  // descriptor, or an fd it owns), not a user's fd, whose position is honoured.
  bool positional() const { return fd_ < 0 || owns_fd_; }

  Ring* const ring_;
  const uint32_t id_;
  const napi_deferred deferred_;
  const std::string path_;
  int fd_;
  const bool owns_fd_;
  const int flags_;
  const bool stat_user_fd_;
  // A confined read opens with OPENAT2 beneath its root; it does not stat by path (STATX would
  // resolve the path again, unconfined), so it reads to EOF like a file without a size.
  const Confinement confinement_;
  const bool async_open_;
  const uint64_t size_hint_;
  // The opening reads into the result's Buffer (NewHintedDest).
  bool hinted_ = false;
  open_how how_{};

  enum class Phase { kOpening, kSizing, kReading, kClosing } phase_ = Phase::kOpening;
  int slot_ = -1;
  int open_attempts_ = 0;
  bool reopen_ = false;
  bool opened_ = false;
  bool close_queued_ = false;
  bool cancelled_ = false;
  unsigned in_flight_ = 0;
  Failure failure_;
  struct statx statx_ {};
  bool statx_failed_ = false;
  Op ops_[kMaxOps];

  // A file with a size: a Buffer of that size, filled from offset 0 up to valid_end_.
  napi_ref dest_ref_ = nullptr;
  uint8_t* dest_ = nullptr;
  uint64_t size_ = 0;
  uint64_t next_offset_ = 0;
  uint64_t valid_end_ = 0;
  bool chunked_async_ = false;
  uint64_t chunk_ = 0;
  size_t chunks_in_flight_ = 1;
  // The workers' chunks stop here; past it the JS thread copies the file itself (ReadTailHere),
  // up to resume_at_, from where the workers read what it could not.
  uint64_t workers_end_ = ~uint64_t{0};
  uint64_t resume_at_ = 0;
  // A file without one: a malloc'd block grown to EOF.
  bool to_eof_ = false;
  bool eof_ = false;
  uint8_t* block_ = nullptr;
  size_t length_ = 0;
  size_t capacity_ = 0;
};

}  // namespace uring
}  // namespace smartread

#endif  // HAVE_LIBURING
