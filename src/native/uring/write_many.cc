// SPDX-License-Identifier: MIT
// Whole-file writes on the ring: linked OPENAT → WRITE → (FSYNC) → CLOSE chains on direct
// descriptors, and for atomic writes a temporary file renamed over the target.
#ifdef HAVE_LIBURING

#include "write_many.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>


namespace smartread {
namespace uring {

namespace {

// One WRITE carries at most this much (the SQE's length is 32 bits; Linux moves at most
// 2 GiB - 4 KiB per call): a larger file is written a part at a time.
constexpr uint64_t kMaxWrite = uint64_t{1} << 30;

// Test-only switch (RELIABILITY.md; never set it in production):
//   SMARTREAD_TEST_URING_WRITE_PART=N  WRITEs of at most N bytes (N >= 1), so that tests can run
//     the parts of a file past 1 GiB with a few KiB.
uint64_t MaxWrite() {
  static const uint64_t part = [] {
    const char* value = getenv("SMARTREAD_TEST_URING_WRITE_PART");
    const long long n = value == nullptr ? 0 : strtoll(value, nullptr, 10);
    return n >= 1 ? static_cast<uint64_t>(n) : kMaxWrite;
  }();
  return part;
}
// Attempts at a temporary name before giving up with EEXIST.
constexpr int kTemporaryAttempts = 8;
// A WRITE at the file's position: for a user's fd, which node:fs writes at its position.
constexpr uint64_t kCurrentPosition = ~uint64_t{0};
// From this size on a WRITE runs on io_uring's workers: a buffered write that can go ahead
// without blocking would otherwise copy the whole file inline, on the JS thread, during the
// submission.
constexpr uint64_t kAsyncFrom = uint64_t{512} << 10;

}  // namespace

const WriteSupport& ProbeWriteSupport() {
  static const WriteSupport support = [] {
    WriteSupport s;
    io_uring_probe* probe = io_uring_get_probe();
    if (probe == nullptr) {
      s.probe_failure = std::string("the io_uring probe failed: ") + strerror(errno);
      return s;
    }
    const auto has = [&](int op) { return io_uring_opcode_supported(probe, op) != 0; };
    s.writes = has(IORING_OP_OPENAT) && has(IORING_OP_WRITE) && has(IORING_OP_FSYNC) && has(IORING_OP_CLOSE);
    s.atomic = s.writes && has(IORING_OP_RENAMEAT) && has(IORING_OP_UNLINKAT);
    s.mkdir = has(IORING_OP_MKDIRAT) && has(IORING_OP_STATX);
    io_uring_free_probe(probe);
    return s;
  }();
  return support;
}

// One file of a batch, from its admission to its end: its ops, and what is done of it.
class FileWrite final : public OpOwner {
 public:
  FileWrite(WriteBatch* batch, size_t index, int slot);
  void Start();
  void OnCompletion(Op* op, int res) override;
  void Cancel();
  size_t index() const { return index_; }
  int slot() const { return slot_; }
  const Failure& failure() const { return failure_; }

 private:
  enum Kind : uint16_t { kOpen, kWrite, kFsync, kClose, kRename, kDirOpen, kDirFsync, kDirClose, kUnlink, kKinds };

  io_uring_sqe* Queue(Kind kind);
  // Queues what the file still needs, from its state: the rest of its bytes, its fsync, its
  // close, the rename, the directory's fsync; or, once it failed, its cleanup. Ends the file
  // when nothing is left.
  void Next();
  void QueueOpen();
  // WRITE (→ FSYNC → CLOSE, linked once the last part is written) for an open file; for a
  // user's fd, WRITE (→ FSYNC).
  void QueueRest();
  // Whether everything the write had to do is done (a batch cancelled at its very end).
  bool Complete() const;
  void QueueRename();
  void QueueCleanup();
  void Fail(const Failure& failure) {
    if (!failure_.failed()) failure_ = failure;
  }
  bool Going() const;

  WriteBatch* const batch_;
  const size_t index_;
  const int slot_;
  // Strings the kernel reads at submission: they live as long as the file's ops.
  std::string temporary_;
  std::string directory_;
  int attempts_ = 0;
  // The temporary name was taken (O_EXCL): the file opens again under another.
  bool retry_open_ = false;
  unsigned in_flight_ = 0;
  bool cancelled_ = false;
  Failure failure_;
  uint64_t written_ = 0;
  bool open_ = false;
  bool synced_ = false;
  bool temporary_exists_ = false;
  bool renamed_ = false;
  bool dir_open_ = false;
  bool dir_synced_ = false;
  Op ops_[kKinds];
};

class WriteBatch final : public RingClient {
 public:
  struct Item {
    ReadTarget target;
    const uint8_t* data = nullptr;
    uint64_t length = 0;
    mode_t mode = 0666;
  };

  WriteBatch(Ring* ring, uint32_t id) : ring_(ring), id_(id) {}
  ~WriteBatch() override;

  uint32_t id() const override { return id_; }
  void Cancel() override;
  void Continue() override { Admit(); }

  // Starts what the concurrency and the free slots allow.
  void Admit();
  // The file has nothing left in the kernel: keep its outcome, free its slot, go on.
  void Finished(FileWrite* file);

  Ring* ring() const { return ring_; }
  const Item& item(size_t index) const { return items_[index]; }

  std::vector<Item> items_;
  int flags_ = 0;
  bool flush_ = false;
  Atomic atomic_ = Atomic::kNone;
  size_t concurrency_ = 64;
  napi_deferred deferred_ = nullptr;
  napi_ref datas_ref_ = nullptr;
  std::vector<Failure> failures_;

 private:
  void Settle();

  Ring* const ring_;
  const uint32_t id_;
  size_t next_ = 0;
  size_t done_ = 0;
  bool cancelled_ = false;
  bool admitting_ = false;
  std::vector<std::unique_ptr<FileWrite>> active_;
};

FileWrite::FileWrite(WriteBatch* batch, size_t index, int slot) : batch_(batch), index_(index), slot_(slot) {
  for (Op& op : ops_) op.owner = this;
}

bool FileWrite::Going() const { return !failure_.failed() && !cancelled_ && !batch_->ring()->closing(); }

io_uring_sqe* FileWrite::Queue(Kind kind) {
  Op* op = &ops_[kind];
  op->kind = kind;
  op->busy = true;
  in_flight_++;
  return batch_->ring()->Sqe(op);
}

void FileWrite::Start() {
  const WriteBatch::Item& item = batch_->item(index_);
  if (item.target.fd >= 0) return Next();
  // A name that ends in '/', '.' or '..' has no file to replace: open's error for it, as a write
  // in place gets (write_file.cc).
  if (batch_->atomic_ != Atomic::kNone && TemporaryName(item.target.path).empty()) {
    Fail(Failure::Errno(EISDIR, Syscall::kOpen));
    return Next();
  }
  QueueOpen();
}

void FileWrite::QueueOpen() {
  const WriteBatch::Item& item = batch_->item(index_);
  batch_->ring()->Reserve(4);
  io_uring_sqe* sqe = Queue(kOpen);
  // Direct descriptors refuse O_CLOEXEC (they are not in the fd table to inherit).
  if (batch_->atomic_ != Atomic::kNone) {
    temporary_ = TemporaryName(item.target.path);
    io_uring_prep_openat_direct(sqe, AT_FDCWD, temporary_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW,
                                item.mode, static_cast<unsigned>(slot_));
  } else {
    io_uring_prep_openat_direct(sqe, AT_FDCWD, item.target.path.c_str(), batch_->flags_ & ~O_CLOEXEC, item.mode,
                                static_cast<unsigned>(slot_));
  }
  sqe->flags |= IOSQE_IO_LINK;
  QueueRest();
}

void FileWrite::QueueRest() {
  const WriteBatch::Item& item = batch_->item(index_);
  const bool user_fd = item.target.fd >= 0;
  const int fd = user_fd ? item.target.fd : slot_;
  const uint64_t remaining = item.length - written_;
  const bool fsync = batch_->flush_ && !synced_;
  if (remaining > 0) {
    const uint64_t part = std::min(remaining, MaxWrite());
    io_uring_sqe* sqe = Queue(kWrite);
    io_uring_prep_write(sqe, fd, item.data + written_, static_cast<unsigned>(part),
                        user_fd ? kCurrentPosition : written_);
    if (!user_fd) sqe->flags |= IOSQE_FIXED_FILE;
    if (item.length >= kAsyncFrom) sqe->flags |= IOSQE_ASYNC;
    // Not the last part: the file goes on from the WRITE's completion.
    if (part < remaining) return;
    if (fsync || !user_fd) sqe->flags |= IOSQE_IO_LINK;
  }
  if (fsync) {
    io_uring_sqe* sqe = Queue(kFsync);
    io_uring_prep_fsync(sqe, fd, 0);
    if (!user_fd) sqe->flags |= IOSQE_FIXED_FILE | IOSQE_IO_LINK;
  }
  if (!user_fd) io_uring_prep_close_direct(Queue(kClose), static_cast<unsigned>(slot_));
}

void FileWrite::QueueRename() {
  const WriteBatch::Item& item = batch_->item(index_);
  batch_->ring()->Reserve(4);
  if (!renamed_) {
    io_uring_sqe* sqe = Queue(kRename);
    io_uring_prep_renameat(sqe, AT_FDCWD, temporary_.c_str(), AT_FDCWD, item.target.path.c_str(),
                           batch_->atomic_ == Atomic::kNoReplace ? RENAME_NOREPLACE : 0);
    if (!batch_->flush_) return;
    sqe->flags |= IOSQE_IO_LINK;
  }
  // The rename is durable once its directory is: the directory's fsync, on the file's slot.
  if (!dir_open_) {
    const std::string& path = item.target.path;
    const size_t slash = path.find_last_of('/');
    directory_ = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
    io_uring_sqe* sqe = Queue(kDirOpen);
    io_uring_prep_openat_direct(sqe, AT_FDCWD, directory_.c_str(), O_RDONLY | O_DIRECTORY, 0,
                                static_cast<unsigned>(slot_));
    sqe->flags |= IOSQE_IO_LINK;
  }
  if (!dir_synced_) {
    io_uring_sqe* sqe = Queue(kDirFsync);
    io_uring_prep_fsync(sqe, slot_, 0);
    sqe->flags |= IOSQE_FIXED_FILE | IOSQE_IO_LINK;
  }
  io_uring_prep_close_direct(Queue(kDirClose), static_cast<unsigned>(slot_));
}

void FileWrite::QueueCleanup() {
  // The CLOSEs and the UNLINK do not depend on each other: unlinking an open file is fine.
  if (open_) io_uring_prep_close_direct(Queue(kClose), static_cast<unsigned>(slot_));
  if (dir_open_) io_uring_prep_close_direct(Queue(kDirClose), static_cast<unsigned>(slot_));
  if (temporary_exists_) io_uring_prep_unlinkat(Queue(kUnlink), AT_FDCWD, temporary_.c_str(), 0);
}

void FileWrite::OnCompletion(Op* op, int res) {
  op->busy = false;
  in_flight_--;
  // -ECANCELED: the op never ran (an earlier op of its chain failed or came back short, or the
  // batch was cancelled): nothing changed, and what is still needed is queued again by Next().
  const bool cancelled_op = res == -ECANCELED;
  switch (op->kind) {
    case kOpen:
      if (res >= 0) {
        open_ = true;
        temporary_exists_ = batch_->atomic_ != Atomic::kNone;
      } else if (res == -EEXIST && batch_->atomic_ != Atomic::kNone && attempts_ + 1 < kTemporaryAttempts) {
        retry_open_ = true;
      } else if (!cancelled_op) {
        Fail(Failure::Errno(-res, Syscall::kOpen));
      }
      break;
    case kWrite:
      if (res > 0) {
        written_ += static_cast<uint64_t>(res);
      } else if (res == 0) {
        // A regular file takes at least a byte or says why not; anything else would spin here.
        Fail(Failure::Errno(EIO, Syscall::kWrite));
      } else if (!cancelled_op) {
        Fail(Failure::Errno(-res, Syscall::kWrite));
      }
      break;
    case kFsync:
      if (res == 0) synced_ = true;
      else if (!cancelled_op) Fail(Failure::Errno(-res, Syscall::kFsync));
      break;
    case kClose:
      if (cancelled_op) break;
      open_ = false;
      if (res < 0) Fail(Failure::Errno(-res, Syscall::kClose));
      break;
    case kRename:
      if (res == 0) {
        renamed_ = true;
        temporary_exists_ = false;
      } else if (!cancelled_op) {
        Fail(Failure::Errno(-res, RenameFailureSyscall(-res)));
      }
      break;
    case kDirOpen:
      if (res >= 0) dir_open_ = true;
      else if (!cancelled_op) Fail(Failure::Errno(-res, Syscall::kFsync));
      break;
    case kDirFsync:
      if (res == 0) dir_synced_ = true;
      else if (!cancelled_op) Fail(Failure::Errno(-res, Syscall::kFsync));
      break;
    case kDirClose:
      if (!cancelled_op) dir_open_ = false;
      break;
    case kUnlink:
      if (!cancelled_op) temporary_exists_ = false;
      break;
  }
  if (in_flight_ == 0) Next();
}

bool FileWrite::Complete() const {
  const WriteBatch::Item& item = batch_->item(index_);
  const bool synced = !batch_->flush_ || synced_;
  if (item.target.fd >= 0) return written_ == item.length && synced;
  if (open_ || written_ < item.length || !synced) return false;
  if (batch_->atomic_ == Atomic::kNone) return true;
  return renamed_ && (!batch_->flush_ || dir_synced_);
}

void FileWrite::Next() {
  const WriteBatch::Item& item = batch_->item(index_);
  if (!Going()) {
    if (!failure_.failed() && !Complete()) Fail(Failure::Errno(ECANCELED, Syscall::kWrite));
    QueueCleanup();
    if (in_flight_ == 0) batch_->Finished(this);
    return;
  }
  if (retry_open_) {
    retry_open_ = false;
    attempts_++;
    return QueueOpen();
  }
  if (item.target.fd >= 0) {
    batch_->ring()->Reserve(2);
    QueueRest();
    if (in_flight_ == 0) batch_->Finished(this);
    return;
  }
  if (open_) {
    batch_->ring()->Reserve(3);
    return QueueRest();
  }
  if (written_ < item.length) {
    // Closed before its bytes were all written: only a cancelled chain does that.
    Fail(Failure::Errno(ECANCELED, Syscall::kWrite));
    return Next();
  }
  if (batch_->atomic_ != Atomic::kNone && !Complete()) {
    if (renamed_ && dir_synced_) {
      io_uring_prep_close_direct(Queue(kDirClose), static_cast<unsigned>(slot_));
      return;
    }
    return QueueRename();
  }
  batch_->Finished(this);
}

void FileWrite::Cancel() {
  if (cancelled_) return;
  cancelled_ = true;
  for (Op& op : ops_) {
    // CLOSEs and the UNLINK are left to run: cancelling them would leak a descriptor or a file.
    if (!op.busy || op.kind == kClose || op.kind == kDirClose || op.kind == kUnlink) continue;
    io_uring_prep_cancel64(batch_->ring()->Sqe(nullptr), reinterpret_cast<uint64_t>(&op), 0);
  }
}

WriteBatch::~WriteBatch() {
  if (datas_ref_ != nullptr && !ring_->closing()) napi_delete_reference(ring_->env(), datas_ref_);
}

void WriteBatch::Admit() {
  // A file may end while it starts (an fd with nothing to write): the outer call goes on.
  if (admitting_) return;
  admitting_ = true;
  while (next_ < items_.size() && active_.size() < concurrency_) {
    if (cancelled_) {
      failures_[next_++] = Failure::Errno(ECANCELED, Syscall::kWrite);
      done_++;
      continue;
    }
    int slot = -1;
    if (items_[next_].target.fd < 0) {
      slot = ring_->AcquireSlot();
      if (slot < 0) break;
    }
    active_.push_back(std::make_unique<FileWrite>(this, next_++, slot));
    active_.back()->Start();
  }
  admitting_ = false;
  // Deletes the batch.
  if (done_ == items_.size()) Settle();
}

void WriteBatch::Finished(FileWrite* file) {
  failures_[file->index()] = file->failure();
  if (file->slot() >= 0) ring_->ReleaseSlot(file->slot());
  done_++;
  // The file is deleted here, inside its own call: it touches nothing of itself after this.
  for (auto it = active_.begin(); it != active_.end(); ++it) {
    if (it->get() != file) continue;
    active_.erase(it);
    break;
  }
  Admit();
}

void WriteBatch::Cancel() {
  // Files not started yet fail at the next Continue() (or are deleted with the batch at
  // teardown): settling here would unregister the batch while the ring iterates its clients.
  if (cancelled_) return;
  cancelled_ = true;
  for (auto& file : active_) file->Cancel();
}

void WriteBatch::Settle() {
  ring_->RemoveClient(this);
  if (!ring_->closing()) {
    napi_env env = ring_->env();
    napi_value result = nullptr;
    bool any = false;
    for (const Failure& failure : failures_) any = any || failure.failed();
    if (!any) {
      napi_get_undefined(env, &result);
    } else if (napi_create_array_with_length(env, failures_.size(), &result) == napi_ok) {
      for (size_t i = 0; i < failures_.size(); i++) {
        if (!failures_[i].failed()) continue;
        napi_value failure = FailureToJs(Napi::Env(env), failures_[i]);
        if (failure != nullptr) napi_set_element(env, result, static_cast<uint32_t>(i), failure);
      }
    }
    if (result != nullptr) napi_resolve_deferred(env, deferred_, result);
  }
  delete this;
}

napi_value StartWriteBatch(Ring* ring, const Napi::CallbackInfo& info) {
  napi_env env = info.Env();
  napi_value targets = info[0];
  napi_value datas = info[1];
  uint32_t count = 0;
  uint32_t* modes = nullptr;
  size_t modes_length = 0;
  napi_typedarray_type type;
  // Raw N-API throughout (WriteTargetFromJs): under a worker's termination, nothing starts.
  if (!ArrayLength(env, targets, &count) ||
      napi_get_typedarray_info(env, info[2], &type, &modes_length, reinterpret_cast<void**>(&modes), nullptr, nullptr) != napi_ok ||
      type != napi_uint32_array || modes_length < count) {
    return nullptr;
  }
  auto batch = std::make_unique<WriteBatch>(ring, info[7].As<Napi::Number>().Uint32Value());
  batch->items_.resize(count);
  for (uint32_t i = 0; i < count; i++) {
    WriteBatch::Item& item = batch->items_[i];
    napi_value target, data;
    uint8_t* bytes = nullptr;
    size_t length = 0;
    if (!ArrayElement(env, targets, i, &target) || !ArrayElement(env, datas, i, &data) ||
        !WriteTargetFromJs(env, target, &item.target) || !ViewBytes(env, data, &bytes, &length)) {
      return nullptr;
    }
    item.data = bytes;
    item.length = length;
    item.mode = static_cast<mode_t>(modes[i]);
  }
  batch->failures_.resize(batch->items_.size());
  batch->flags_ = info[3].As<Napi::Number>().Int32Value();
  batch->flush_ = BoolArg(env, info[4]);
  batch->atomic_ = static_cast<Atomic>(info[5].As<Napi::Number>().Uint32Value());
  batch->concurrency_ = std::max<size_t>(1, info[6].As<Napi::Number>().Uint32Value());
  napi_value promise = nullptr;
  // As in Ring::Read(): under a worker's termination, nothing is started.
  if (napi_create_promise(env, &batch->deferred_, &promise) != napi_ok) return nullptr;
  if (napi_create_reference(env, datas, 1, &batch->datas_ref_) != napi_ok) {
    napi_value undefined = nullptr;
    if (napi_get_undefined(env, &undefined) == napi_ok) napi_reject_deferred(env, batch->deferred_, undefined);
    return nullptr;
  }
  WriteBatch* started = batch.release();
  ring->AddClient(started);
  started->Admit();
  return promise;
}

}  // namespace uring
}  // namespace smartread

#endif  // HAVE_LIBURING
