// SPDX-License-Identifier: MIT
// A lookup on the ring: statBeneath or statAt made by io-wq's workers instead of libuv's pool.
#ifdef HAVE_LIBURING

#include "lookup.h"

#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "../common/errors.h"
#include "../read/beneath.h"

namespace smartread {
namespace uring {

namespace {
enum OpKind : uint16_t { kOpOpen = 1, kOpStatx = 2 };
}  // namespace

Lookup::Lookup(Ring* ring, napi_deferred deferred, const char* path, const Confinement& confinement, bool confined)
    : ring_(ring),
      deferred_(deferred),
      path_(path),
      dirfd_(confinement.dirfd >= 0 ? confinement.dirfd : AT_FDCWD),
      confined_(confined) {
  op_.owner = this;
  how_.flags = O_PATH | O_CLOEXEC;
  how_.resolve = confinement.resolve;
}

Lookup::~Lookup() {
  // A descriptor whose STATX never came (the environment went away meanwhile).
  if (fd_ >= 0) close(fd_);
}

void Lookup::Start() {
  if (confined_) {
    QueueOpen();
  } else {
    QueueStatx(dirfd_, path_.c_str(), 0);
  }
}

void Lookup::QueueOpen() {
  open_attempts_++;
  op_.busy = true;
  op_.kind = kOpOpen;
  io_uring_sqe* sqe = ring_->Sqe(&op_);
  io_uring_prep_openat2(sqe, dirfd_, path_.c_str(), &how_);
  sqe->flags |= IOSQE_ASYNC;
}

void Lookup::QueueStatx(int dirfd, const char* path, int flags) {
  op_.busy = true;
  op_.kind = kOpStatx;
  io_uring_sqe* sqe = ring_->Sqe(&op_);
  io_uring_prep_statx(sqe, dirfd, path, flags, STATX_BASIC_STATS, &stx_);
  sqe->flags |= IOSQE_ASYNC;
}

void Lookup::OnCompletion(Op*, int res) {
  op_.busy = false;
  if (op_.kind == kOpOpen) {
    if (res == -EAGAIN && RetriesOnEagain(how_.resolve) && open_attempts_ < kScopedOpenAttempts && !ring_->closing()) {
      QueueOpen();
      return;
    }
    if (res < 0) {
      error_ = -res;
    } else {
      fd_ = res;
      if (!ring_->closing()) {
        QueueStatx(fd_, "", AT_EMPTY_PATH);
        return;
      }
    }
  } else {
    if (res < 0) error_ = -res;
    if (fd_ >= 0) {
      close(fd_);
      fd_ = -1;
    }
  }
  ring_->FinishSingle(this);
}

void Lookup::Cancel() {
  if (!op_.busy) return;
  io_uring_prep_cancel64(ring_->Sqe(nullptr), reinterpret_cast<uint64_t>(&op_), 0);
}

void Lookup::Settle(napi_env env) {
  napi_value result = error_ != 0 ? FailureToJs(Napi::Env(env), Failure::Errno(error_, Syscall::kStat))
                                  : StatToJs(env, StatFromStatx(stx_));
  if (result != nullptr) napi_resolve_deferred(env, deferred_, result);
}

}  // namespace uring
}  // namespace smartread

#endif  // HAVE_LIBURING
