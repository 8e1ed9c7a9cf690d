// SPDX-License-Identifier: MIT
// A small synchronous io_uring that reads a run of small cached files in two io_uring_enter
// calls: readMany's cache hits without four syscalls per file.
#include "cached_batch.h"

#ifdef HAVE_LIBURING

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace smartread {
namespace uring {

namespace {

// Phase 1 takes three ops per item.
constexpr unsigned kSqEntries = 4 * kCachedRunMax;
enum OpKind : uint64_t { kOpen = 0, kCheck = 1, kRead = 2, kTail = 3, kClose = 4 };

uint64_t Tag(size_t item, OpKind kind) { return (uint64_t{item} << 3) | kind; }
size_t ItemOf(const io_uring_cqe* cqe) { return cqe->user_data >> 3; }
OpKind KindOf(const io_uring_cqe* cqe) { return static_cast<OpKind>(cqe->user_data & 7); }

// Submits the queued ops and hands each of their completions to `handle`. Every op submitted is
// waited for, however often a signal interrupts the wait: they write into the caller's memory
// (the results' Buffer, the open_how structs, the tail bytes), which must outlive them. They
// all complete at submission, so the wait ends at once. False when not all were submitted (the
// kernel out of memory) or the ring failed: the ring is then for the caller to close, as the
// ops left in the submission queue must never reach the kernel.
template <typename Handle>
bool SubmitAndReap(io_uring* ring, unsigned queued, Handle handle) {
  // One io_uring_enter submits them all and waits until they are done (with DEFER_TASKRUN, it
  // is also what posts their completions); the loop below then finds them without a syscall,
  // unless a signal cut the wait short.
  const int submitted = io_uring_submit_and_wait(ring, queued);
  if (submitted < 0) return false;
  for (unsigned left = static_cast<unsigned>(submitted); left > 0;) {
    io_uring_cqe* cqe;
    const int err = io_uring_wait_cqe(ring, &cqe);
    if (err == -EINTR) continue;
    if (err < 0) return false;
    handle(cqe);
    io_uring_cqe_seen(ring, cqe);
    left--;
  }
  return static_cast<unsigned>(submitted) == queued;
}

}  // namespace

std::unique_ptr<CachedBatchRing> CachedBatchRing::Create(std::string* why) {
  std::unique_ptr<CachedBatchRing> batch(new CachedBatchRing());
  // The best flags first: completions run only when this thread asks for them (6.1), then
  // without interrupting it (5.19), then plain. Every op here completes at submission anyway.
  static constexpr unsigned kFlags[] = {
      IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
      IORING_SETUP_COOP_TASKRUN,
      0,
  };
  int err = -EINVAL;
  for (unsigned flags : kFlags) {
    io_uring_params params{};
    params.flags = flags;
    err = io_uring_queue_init_params(kSqEntries, &batch->ring_, &params);
    if (err != -EINVAL) break;
  }
  if (err != 0) {
    *why = std::string("io_uring_setup failed: ") + strerror(-err);
    return nullptr;
  }
  io_uring_probe* probe = io_uring_get_probe_ring(&batch->ring_);
  const bool ops_ok = probe != nullptr && io_uring_opcode_supported(probe, IORING_OP_OPENAT2) &&
                      io_uring_opcode_supported(probe, IORING_OP_FADVISE) &&
                      io_uring_opcode_supported(probe, IORING_OP_READ) &&
                      io_uring_opcode_supported(probe, IORING_OP_CLOSE);
  if (probe != nullptr) io_uring_free_probe(probe);
  if (!ops_ok) {
    *why = "io_uring lacks OPENAT2, FADVISE, READ or CLOSE";
    io_uring_queue_exit(&batch->ring_);
    return nullptr;
  }
  // A direct descriptor per item of a run: the files never enter the fd table.
  err = io_uring_register_files_sparse(&batch->ring_, kCachedRunMax);
  if (err != 0) {
    *why = std::string("io_uring_register_files_sparse failed: ") + strerror(-err);
    io_uring_queue_exit(&batch->ring_);
    return nullptr;
  }
  return batch;
}

CachedBatchRing::~CachedBatchRing() { io_uring_queue_exit(&ring_); }

bool CachedBatchRing::ReadSmall(SmallFileRead* items, size_t count, int flags) {
  if (count > kCachedRunMax) count = kCachedRunMax;
  // The SQ holds a whole phase (kSqEntries) and is empty between phases, so io_uring_get_sqe
  // cannot run out.
  // Phase 1: open each into its slot, check that it is not a FIFO, and read it; what follows a
  // failed op is cancelled. The open_how structs must live until the submit, which copies them.
  open_how how[kCachedRunMax];
  for (size_t k = 0; k < count; k++) {
    how[k] = open_how{};
    // Direct descriptors refuse O_CLOEXEC (they are not in the fd table to inherit).
    how[k].flags = static_cast<uint64_t>((flags & ~O_CLOEXEC) | O_NONBLOCK);
    how[k].resolve = RESOLVE_CACHED;
    io_uring_sqe* open = io_uring_get_sqe(&ring_);
    io_uring_prep_openat2_direct(open, AT_FDCWD, items[k].path, &how[k], static_cast<unsigned>(k));
    open->flags |= IOSQE_IO_LINK;
    open->user_data = Tag(k, kOpen);
    // A FIFO put in a regular file's place must not be read here: its bytes, taken without
    // waiting, would be lost to the read that then waits for all of them. fadvise refuses a
    // FIFO (ESPIPE), and POSIX_FADV_NORMAL, which only resets this open file's readahead, runs
    // inline.
    io_uring_sqe* check = io_uring_get_sqe(&ring_);
    io_uring_prep_fadvise(check, static_cast<int>(k), 0, 0, POSIX_FADV_NORMAL);
    check->flags |= IOSQE_FIXED_FILE | IOSQE_IO_LINK;
    check->user_data = Tag(k, kCheck);
    io_uring_sqe* read = io_uring_get_sqe(&ring_);
    // One byte more than expected, to see a file that grew.
    io_uring_prep_read(read, static_cast<int>(k), items[k].dest, items[k].size + 1, 0);
    read->rw_flags = RWF_NOWAIT;
    read->flags |= IOSQE_FIXED_FILE;
    read->user_data = Tag(k, kRead);
    items[k].result = -EAGAIN;
  }
  int opened[kCachedRunMax];
  std::fill(opened, opened + count, -ECANCELED);
  // The first failure of a chain is its result; the ops after it complete as cancelled.
  const bool phase1 = SubmitAndReap(&ring_, static_cast<unsigned>(3 * count), [&](const io_uring_cqe* cqe) {
    const size_t k = ItemOf(cqe);
    switch (KindOf(cqe)) {
      case kOpen:
        opened[k] = cqe->res;
        if (cqe->res < 0) items[k].result = cqe->res;
        break;
      case kCheck:
        if (cqe->res < 0 && cqe->res != -ECANCELED) items[k].result = cqe->res;
        break;
      default:
        if (cqe->res != -ECANCELED) items[k].result = cqe->res;
        break;
    }
  });
  if (!phase1) return Abandon(items, count);
  // Phase 2: a file that did not give its size has changed; one that did must be at EOF there
  // (it may have grown, with the page past it not cached); then every open slot is closed,
  // hard-linked so that it always runs.
  char tail[kCachedRunMax];
  unsigned want = 0;
  for (size_t k = 0; k < count; k++) {
    if (opened[k] < 0) continue;
    if (items[k].result >= 0 && items[k].result != static_cast<int32_t>(items[k].size)) items[k].result = -ESTALE;
    if (items[k].result >= 0) {
      io_uring_sqe* read = io_uring_get_sqe(&ring_);
      io_uring_prep_read(read, static_cast<int>(k), &tail[k], 1,
                         static_cast<uint64_t>(items[k].result));
      read->rw_flags = RWF_NOWAIT;
      read->flags |= IOSQE_FIXED_FILE | IOSQE_IO_HARDLINK;
      read->user_data = Tag(k, kTail);
      want++;
    }
    io_uring_sqe* close = io_uring_get_sqe(&ring_);
    io_uring_prep_close_direct(close, static_cast<unsigned>(k));
    close->user_data = Tag(k, kClose);
    want++;
  }
  if (want == 0) return true;
  const bool phase2 = SubmitAndReap(&ring_, want, [&](const io_uring_cqe* cqe) {
    // More bytes past its size: the file grew.
    if (KindOf(cqe) == kTail && cqe->res != 0) items[ItemOf(cqe)].result = cqe->res > 0 ? -ESTALE : cqe->res;
  });
  return phase2 || Abandon(items, count);
}

bool CachedBatchRing::Abandon(SmallFileRead* items, size_t count) {
  for (size_t k = 0; k < count; k++) items[k].result = -EAGAIN;
  return false;
}

}  // namespace uring
}  // namespace smartread

#endif  // HAVE_LIBURING
