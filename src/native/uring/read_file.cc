// SPDX-License-Identifier: MIT
// One whole-file read on the ring: open and size it, read it in chunks, close it.
#ifdef HAVE_LIBURING

#include "read_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "../common/dest_buffer.h"
#include "../common/file_io.h"

namespace smartread {
namespace uring {

namespace {

// The chunk size, the chunks in flight and the size from which reads are punted to io_uring's
// workers come from the environment's Tuning (defaults in instance.h). From uring_async_from
// on, reads run on the workers (IOSQE_ASYNC): a cached file would otherwise be copied inline,
// on the JS thread, during submission, holding the loop for the whole file (200 reads of 4 MiB
// started in one tick all finished inside it); the workers copy on the other core and fault the
// destination in parallel.
//
// A path is opened and read in the same submission, into a block of this size, without asking
// for its size: the STATX that would give it always runs on an io_uring worker (the kernel
// forces it async), a thread hop that costs more than the whole read of a small cached file.
// A file that fills the block is then sized with a STATX and read in chunks.
constexpr size_t kFirstBlock = size_t{68} << 10;
// The block is read by two READs hard-linked one after the other, the second into its last
// kTail bytes: for a file of up to kFirstBlock - kTail bytes the second finds EOF, so that the
// whole read is one submission. Where READs run on an io_uring worker (tmpfs, a cold disk) the
// worker runs the second straight after the first, with no round trip through the loop.
constexpr size_t kTail = size_t{4} << 10;
// A read at the file's current position: for a file read without its size (pipes have no
// offsets), and for user fds, whose position node:fs honours.
constexpr uint64_t kCurrentPosition = ~uint64_t{0};

}  // namespace

FileRead::FileRead(Ring* ring, uint32_t id, napi_deferred deferred, std::string path, int fd,
                   bool owns_fd, int flags, bool stat_user_fd, const Confinement& confinement,
                   bool async_open, uint64_t size_hint)
    : ring_(ring),
      id_(id),
      deferred_(deferred),
      path_(std::move(path)),
      fd_(fd),
      owns_fd_(owns_fd),
      flags_(flags),
      stat_user_fd_(stat_user_fd),
      confinement_(confinement),
      async_open_(async_open),
      size_hint_(size_hint) {
  for (size_t i = 0; i < kMaxOps; i++) ops_[i].owner = this;
}

FileRead::~FileRead() {
  // Only when the environment's teardown deleted the read before it finished.
  if (owns_fd_ && fd_ >= 0) close(fd_);
  free(block_);
  if (dest_ref_ != nullptr && !ring_->closing()) napi_delete_reference(ring_->env(), dest_ref_);
}

io_uring_sqe* FileRead::Queue(Op* op) {
  op->busy = true;
  in_flight_++;
  return ring_->Sqe(op);
}

void FileRead::Start(int slot) {
  if (fd_ >= 0) {
    phase_ = Phase::kReading;
    if (!stat_user_fd_) return BeginRead(false, 0);
    // fstat of an open fd does not wait for the disk: done here rather than as a ring op.
    struct stat st;
    if (fstat(fd_, &st) < 0) {
      Fail(Failure::Errno(errno, Syscall::kFstat));
      return CloseOrFinish();
    }
    return BeginRead(S_ISREG(st.st_mode), static_cast<uint64_t>(st.st_size));
  }
  slot_ = slot;
  if (!NewHintedDest() && !NewBlock()) {
    ring_->ReleaseSlot(slot_);
    slot_ = -1;
    return CloseOrFinish();
  }
  Open();
}

void FileRead::Open() {
  ring_->Reserve(3);
  Op* open = &ops_[kOpen];
  open->kind = kOpen;
  io_uring_sqe* sqe = Queue(open);
  if (confinement_.confined()) {
    how_.flags = static_cast<uint64_t>(flags_ & ~O_CLOEXEC);
    if (OpenMayCreate(flags_)) how_.mode = 0666;
    how_.resolve = confinement_.resolve;
    io_uring_prep_openat2_direct(sqe, confinement_.dirfd >= 0 ? confinement_.dirfd : AT_FDCWD,
                                 path_.c_str(), &how_, static_cast<unsigned>(slot_));
  } else {
    // No O_CLOEXEC: the kernel refuses it (EINVAL) for a direct descriptor, which never enters
    // the fd table and so cannot be inherited anyway.
    io_uring_prep_openat_direct(sqe, AT_FDCWD, path_.c_str(), flags_ & ~O_CLOEXEC, 0666,
                                static_cast<unsigned>(slot_));
  }
  // The READs run only once the open has succeeded (a failed open cancels both). The second
  // runs whatever the first gave: a READ shorter than asked would otherwise cancel it.
  sqe->flags |= IOSQE_IO_LINK;
  if (async_open_) sqe->flags |= IOSQE_ASYNC;
  if (hinted_) {
    Op* whole = FreeReadOp();
    whole->kind = kRead;
    whole->offset = 0;
    whole->length = size_;
    io_uring_sqe* read = Queue(whole);
    io_uring_prep_read(read, slot_, dest_, static_cast<unsigned>(size_), kCurrentPosition);
    read->flags |= IOSQE_FIXED_FILE | IOSQE_IO_HARDLINK;
    if (async_open_) read->flags |= IOSQE_ASYNC;
    QueueBlockRead(0, kTail);
    return;
  }
  QueueBlockRead(0, kFirstBlock - kTail)->flags |= IOSQE_IO_HARDLINK;
  QueueBlockRead(kFirstBlock - kTail, kTail);
}

uint64_t FileRead::HintedSize() const {
  if (!async_open_ || fd_ >= 0 || confinement_.confined()) return 0;
  if (size_hint_ <= kFirstBlock - kTail || size_hint_ > ring_->tuning().uring_chunk) return 0;
  return size_hint_;
}

bool FileRead::NewHintedDest() {
  const uint64_t size = HintedSize();
  if (size == 0) return false;
  DestBuffer dest;
  if (!NewDestBuffer(ring_->env(), ring_->instance().blocks.get(), static_cast<size_t>(size), &dest)) {
    napi_value ignored;
    napi_get_and_clear_last_exception(ring_->env(), &ignored);
    return false;
  }
  block_ = static_cast<uint8_t*>(malloc(kTail));
  if (block_ == nullptr) return false;
  napi_create_reference(ring_->env(), dest.value, 1, &dest_ref_);
  dest_ = dest.data;
  size_ = size;
  valid_end_ = size;
  capacity_ = kTail;
  to_eof_ = false;
  hinted_ = true;
  return true;
}

void FileRead::TakeHintedReads() {
  hinted_ = false;
  // What each READ gave (OnRead left it in the op's length); the second read on from where the
  // first stopped.
  const size_t whole = ops_[kFirstRead].length;
  const size_t past = ops_[kFirstRead + 1].length;
  if (whole == size_ && past == 0) {
    next_offset_ = size_;
    return;
  }
  // Not the size it was: on without a size, from a block holding what was read. A READ past the
  // end that gave nothing found EOF; one that gave something leaves the block full, so that a
  // STATX sizes the rest (as after a first block filled). The name's hint goes: its next read
  // looks at it afresh (the fast path's O_PATH look), and keeps what it finds.
  ring_->instance().fast_path.Forget(path_.c_str());
  const size_t length = whole + past;
  uint8_t* block = static_cast<uint8_t*>(malloc(std::max(length, kFirstBlock)));
  if (block == nullptr) return Fail(Failure::Errno(ENOMEM, Syscall::kRead));
  memcpy(block, dest_, whole);
  memcpy(block + whole, block_, past);
  free(block_);
  block_ = block;
  length_ = length;
  capacity_ = past > 0 ? length : std::max(length, kFirstBlock);
  eof_ = past == 0;
  napi_delete_reference(ring_->env(), dest_ref_);
  dest_ref_ = nullptr;
  dest_ = nullptr;
  size_ = 0;
  valid_end_ = 0;
  to_eof_ = true;
}

void FileRead::Size() {
  phase_ = Phase::kSizing;
  // The size comes from the path, as no op stats a direct descriptor. Should the path be
  // replaced in between, it is only a hint: the reads stop at EOF and never return bytes that
  // the opened file did not hold.
  Op* stat = &ops_[kStatx];
  stat->kind = kStatx;
  io_uring_prep_statx(Queue(stat), AT_FDCWD, path_.c_str(), 0, STATX_TYPE | STATX_SIZE, &statx_);
}

void FileRead::OnCompletion(Op* op, int res) {
  op->busy = false;
  in_flight_--;
  switch (op->kind) {
    case kOpen:
      // A confined open that met a racing rename (file_io.h, OpenAt2) is queued again, into the
      // same slot (it installed nothing there), once its cancelled READs are back.
      if (res == -EAGAIN && RetriesOpen()) {
        reopen_ = true;
      } else if (res < 0) {
        Fail(Failure::Errno(-res, Syscall::kOpen));
        // Nothing was installed in the slot: it is free again at once (kept, the ring would run
        // out of slots after 1,024 failed opens and every later read would wait forever).
        ring_->ReleaseSlot(slot_);
        slot_ = -1;
      } else {
        opened_ = true;
      }
      break;
    case kStatx:
      // The STATX is of the path, not of the file opened: a path deleted or replaced in between
      // fails here though the file is open (node:fs, which fstats its fd, would read it). The
      // file is then read on to EOF, without a size.
      if (res < 0) statx_failed_ = true;
      break;
    case kRead:
      OnRead(op, res);
      break;
    case kClose:
      close_queued_ = false;
      opened_ = false;
      ring_->ReleaseSlot(slot_);
      if (res < 0 && res != -ECANCELED) Fail(Failure::Errno(-res, Syscall::kClose));
      break;
  }
  Step();
}

void FileRead::Step() {
  switch (phase_) {
    case Phase::kOpening:
      // Once the open and the first READs are done. A block filled: a large file, worth a STATX
      // for its size (not for a confined read: STATX would resolve the path again, unconfined).
      // Otherwise on to EOF.
      if (in_flight_ > 0) return;
      if (reopen_) {
        reopen_ = false;
        if (Going()) return Open();
        ring_->ReleaseSlot(slot_);
        slot_ = -1;
      }
      if (Going()) hinted_ ? TakeHintedReads() : TakeFirstReads();
      if (Going() && to_eof_ && !eof_ && length_ == capacity_ && !confinement_.confined()) return Size();
      phase_ = Phase::kReading;
      return Step();
    case Phase::kSizing:
      if (in_flight_ > 0) return;
      phase_ = Phase::kReading;
      if (Going() && !statx_failed_ && S_ISREG(statx_.stx_mode) && statx_.stx_size > length_) {
        return BeginRead(true, statx_.stx_size);
      }
      return Step();
    case Phase::kReading:
      if (Going()) ScheduleReads();
      if (in_flight_ == 0) CloseOrFinish();
      return;
    case Phase::kClosing:
      if (in_flight_ == 0) CloseOrFinish();
      return;
  }
}

void FileRead::BeginRead(bool regular, uint64_t size) {
  if (regular && size > length_) {
    if (size > ring_->max_length()) {
      Fail(Failure::TooLarge(size));
      return CloseOrFinish();
    }
    DestBuffer dest;
    if (!NewDestBuffer(ring_->env(), ring_->instance().blocks.get(), static_cast<size_t>(size), &dest)) {
      napi_value ignored;
      napi_get_and_clear_last_exception(ring_->env(), &ignored);
      Fail(Failure::Errno(ENOMEM, Syscall::kRead));
      return CloseOrFinish();
    }
    napi_create_reference(ring_->env(), dest.value, 1, &dest_ref_);
    dest_ = dest.data;
    size_ = size;
    valid_end_ = size;
    // What the first READ brought is the start of the file.
    if (length_ > 0) memcpy(dest_, block_, length_);
    next_offset_ = length_;
    free(block_);
    block_ = nullptr;
    to_eof_ = false;
    const Tuning& tuning = ring_->tuning();
    chunk_ = std::max<uint64_t>(tuning.uring_chunk, 4096);
    chunks_in_flight_ = std::clamp<size_t>(tuning.uring_in_flight, 1, kMaxChunks);
    // A file found in memory (opened here for that) is read by copies alone, one io_uring worker
    // each: more of them than there are CPUs only take the CPU from the loop's thread. On this
    // 2-vCPU VM, 2 chunks in flight instead of 4 held the loop 1.3-1.6 ms at most during warm
    // 16 MiB reads instead of 1.9-2.4 (the bench, two runs each), at the same speed; a warm
    // 128 MiB read on ext4 took ~10% longer (its stalls are V8's mark-compacts either way). A
    // file on a disk keeps uring_in_flight: its chunks wait for the device, not for a CPU.
    // The CPUs are counted once: libuv's count is a syscall, and reads cgroup files on newer libuv.
    static const size_t cpus = std::max<unsigned>(uv_available_parallelism(), 1);
    if (fd_ >= 0 && owns_fd_) chunks_in_flight_ = std::min(chunks_in_flight_, cpus);
    chunked_async_ = size >= tuning.uring_async_from;
    if (chunked_async_ && fd_ >= 0 && owns_fd_) ReadTailHere();
  } else {
    if (!NewBlock()) return CloseOrFinish();
  }
  ScheduleReads();
  if (in_flight_ == 0) CloseOrFinish();
}

// A file opened on the JS thread (its path was cached) and read by io_uring's workers: while they
// copy its chunks, the JS thread copies its tail, as much as the fast path's budget allows and
// no more than a worker's share, if the pages are in memory (RWF_NOWAIT). On a 2-vCPU VM the
// workers' copies ran slower than the loop's own (16 MiB from tmpfs: 2.8-3.1 ms in chunks on the
// workers against 2.1-2.7 inline), and the loop's thread would otherwise only wait. What it
// cannot read at once goes to a worker like any chunk.
void FileRead::ReadTailHere() {
  constexpr uint64_t kPage = 4096;
  constexpr uint64_t kTailMin = uint64_t{256} << 10;
  const uint64_t share = size_ / (chunks_in_flight_ + 1);
  const uint64_t tail = std::min<uint64_t>(ring_->tuning().FastPathMax(), share) & ~(kPage - 1);
  if (tail < kTailMin || tail >= size_ - next_offset_) return;
  const uint64_t from = size_ - tail;
  workers_end_ = from;
  resume_at_ = from;
  ScheduleReads();
  ring_->SubmitQueued();
  bool in_memory = false;
  const NoWaitRead read = ReadWithoutWaiting(fd_, dest_ + from, size_ - from, from, &in_memory);
  // What it did not copy (not in memory: EAGAIN; an error or EOF, which a worker then reports as
  // it would have) the workers read after their own chunks.
  resume_at_ = from + read.done;
}

Op* FileRead::FreeReadOp() {
  for (size_t i = kFirstRead; i < kMaxOps; i++) {
    if (!ops_[i].busy) return &ops_[i];
  }
  return nullptr;
}

void FileRead::ScheduleReads() {
  if (to_eof_) {
    // One at a time, at the current position, into the rest of the block.
    if (eof_ || in_flight_ > 0) return;
    if (length_ == capacity_ && !GrowBlock()) return;
    QueueBlockRead(length_, capacity_ - length_);
    return;
  }
  // A user fd is read in order from its position; a file we opened, in parallel chunks.
  const size_t max_in_flight = positional() ? chunks_in_flight_ : 1;
  if (next_offset_ >= workers_end_) {
    // The workers' chunks are all out: on with what is left of the tail.
    next_offset_ = std::max(next_offset_, resume_at_);
    workers_end_ = ~uint64_t{0};
  }
  const uint64_t end = std::min(valid_end_, workers_end_);
  while (next_offset_ < end && in_flight_ < max_in_flight) {
    Op* op = FreeReadOp();
    if (op == nullptr) return;
    // Chunks end on multiples of the chunk size, also after a first block of another size.
    const uint64_t length = std::min(chunk_ - next_offset_ % chunk_, end - next_offset_);
    const uint64_t offset = next_offset_;
    next_offset_ += length;
    op->kind = kRead;
    op->offset = offset;
    op->length = length;
    QueueRead(op);
  }
}

io_uring_sqe* FileRead::QueueBlockRead(size_t at, size_t length) {
  const bool fixed = fd_ < 0;
  Op* op = FreeReadOp();
  op->kind = kRead;
  op->offset = at;
  op->length = length;
  io_uring_sqe* sqe = Queue(op);
  io_uring_prep_read(sqe, fixed ? slot_ : fd_, block_ + at, static_cast<unsigned>(length),
                     kCurrentPosition);
  if (fixed) sqe->flags |= IOSQE_FIXED_FILE;
  // Where opens wait for a server, a read cannot be had without waiting either: every READ goes
  // straight to a worker. FUSE does not refuse one tried inline, and asks the daemon there (on
  // the JS thread) for pages it does not keep, and for attributes once they lapse, even for a
  // READ past EOF: a confined 3 MB read on a 1 ms mount with lapsed attributes made 21 reads and
  // 18 stats from the JS thread, held there up to 6.5 ms per submission.
  if (async_open_) sqe->flags |= IOSQE_ASYNC;
  return sqe;
}

void FileRead::TakeFirstReads() {
  // The two READs of the opening, in file order (each left what it read in its op's length).
  // Bytes of the second follow those of the first in the file, so they are moved down when
  // the first was short; a first READ that found EOF ends the file there.
  for (Op* op : {&ops_[kFirstRead], &ops_[kFirstRead + 1]}) {
    if (op->length == 0) {
      eof_ = true;
      return;
    }
    if (op->offset != length_) memmove(block_ + length_, block_ + op->offset, op->length);
    length_ += op->length;
  }
}

void FileRead::QueueRead(Op* op) {
  const bool fixed = fd_ < 0;
  io_uring_sqe* sqe = Queue(op);
  io_uring_prep_read(sqe, fixed ? slot_ : fd_, dest_ + op->offset,
                     static_cast<unsigned>(op->length), positional() ? op->offset : kCurrentPosition);
  if (fixed) sqe->flags |= IOSQE_FIXED_FILE;
  if (chunked_async_ || async_open_) sqe->flags |= IOSQE_ASYNC;
}

bool FileRead::NewBlock() {
  to_eof_ = true;
  capacity_ = kFirstBlock;
  block_ = static_cast<uint8_t*>(malloc(capacity_));
  if (block_ == nullptr) Fail(Failure::Errno(ENOMEM, Syscall::kRead));
  return block_ != nullptr;
}

bool FileRead::GrowBlock() {
  // To at most one byte past the limit, which is enough to tell that it was passed.
  const size_t next = std::min<size_t>(capacity_ * 2, ring_->max_length() + 1);
  uint8_t* grown = static_cast<uint8_t*>(realloc(block_, next));
  if (grown == nullptr) {
    Fail(Failure::Errno(ENOMEM, Syscall::kRead));
    return false;
  }
  block_ = grown;
  capacity_ = next;
  return true;
}

void FileRead::OnRead(Op* op, int res) {
  if (res < 0) {
    // -ECANCELED: cancelled on purpose, or the first READ, whose open failed.
    const bool expected_cancel = cancelled_ || failure_.failed() || (phase_ == Phase::kOpening && !opened_);
    if (res != -ECANCELED || !expected_cancel) {
      Fail(Failure::Errno(-res, Syscall::kRead));
    }
    return;
  }
  const size_t n = static_cast<size_t>(res);
  // The opening's READs are taken together, in order, once both are done.
  if (phase_ == Phase::kOpening && (to_eof_ || hinted_)) {
    op->length = n;
    return;
  }
  if (to_eof_) {
    if (n == 0) {
      eof_ = true;
      return;
    }
    length_ += n;
    if (length_ > ring_->max_length()) Fail(Failure::TooLarge(length_));
    return;
  }
  // Nothing read is EOF: the file shrank. Nothing past it is part of the result.
  if (n == 0) {
    valid_end_ = std::min(valid_end_, op->offset);
    next_offset_ = std::max(next_offset_, valid_end_);
    return;
  }
  if (n == op->length) return;
  // A short read is not EOF (sysfs and procfs give a page at a time; a signal may cut a read):
  // the rest of the chunk is read next, until a read gives nothing.
  op->offset += n;
  op->length -= n;
  if (!Going()) return;
  QueueRead(op);
}

void FileRead::CloseOrFinish() {
  phase_ = Phase::kClosing;
  // An fd of its own is closed once nothing reads it any more: close(2) of a regular file
  // does not wait. Linux releases it even when close reports EINTR: never retried.
  if (owns_fd_ && fd_ >= 0 && in_flight_ == 0) {
    if (close(fd_) < 0 && errno != EINTR) Fail(Failure::Errno(errno, Syscall::kClose));
    fd_ = -1;
  }
  if (opened_ && !close_queued_) {
    Op* close = &ops_[kClose];
    close->kind = kClose;
    io_uring_prep_close_direct(Queue(close), static_cast<unsigned>(slot_));
    close_queued_ = true;
  }
  if (in_flight_ == 0) ring_->Finish(this);
}

void FileRead::Cancel() {
  if (cancelled_) return;
  cancelled_ = true;
  for (size_t i = 0; i < kMaxOps; i++) {
    // A CLOSE is left to run: cancelling it would leak the descriptor.
    if (!ops_[i].busy || ops_[i].kind == kClose) continue;
    io_uring_prep_cancel64(ring_->Sqe(nullptr), reinterpret_cast<uint64_t>(&ops_[i]), 0);
  }
}

napi_value FileRead::Result(napi_env env) {
  napi_value out = nullptr;
  if (cancelled_ && !failure_.failed()) failure_ = Failure::Errno(ECANCELED, Syscall::kRead);
  if (failure_.failed()) return FailureToJs(Napi::Env(env), failure_);
  if (to_eof_) {
    if (!CopyToBuffer(env, block_, length_, &out)) return nullptr;
    return out;
  }
  napi_value dest = nullptr;
  if (napi_get_reference_value(env, dest_ref_, &dest) != napi_ok || dest == nullptr) return nullptr;
  if (valid_end_ == size_) return dest;
  if (!CopyToBuffer(env, dest_, static_cast<size_t>(valid_end_), &out)) return nullptr;
  return out;
}

}  // namespace uring
}  // namespace smartread

#endif  // HAVE_LIBURING
