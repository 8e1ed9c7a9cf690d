// SPDX-License-Identifier: MIT
// Lookups and opens under a confinement on the ring, made by io-wq's workers instead of libuv's
// pool: what read/beneath.h's statBeneathAsync, statAtAsync and openBeneathAsync do there.
#ifdef HAVE_LIBURING

#include "beneath_op.h"

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

BeneathOp::BeneathOp(Ring* ring, napi_deferred deferred, Kind kind, const char* path, int flags, const Confinement& confinement)
    : SingleOp(ring),
      deferred_(deferred),
      kind_(kind),
      path_(path),
      dirfd_(confinement.dirfd >= 0 ? confinement.dirfd : AT_FDCWD) {
  // O_PATH: resolution and permission to search only; a FIFO or device is not opened.
  how_.flags = static_cast<uint64_t>((kind == kOpen ? flags : O_PATH) | O_CLOEXEC);
  how_.resolve = confinement.resolve;
}

BeneathOp::~BeneathOp() {
  // A lookup's descriptor, or an open's that no promise took (the environment went away).
  if (fd_ >= 0) close(fd_);
}

void BeneathOp::Start() {
  if (kind_ == kCheck) {
    QueueStatx(dirfd_, path_.c_str(), 0);
  } else {
    QueueOpen();
  }
}

void BeneathOp::QueueOpen() {
  open_attempts_++;
  io_uring_sqe* sqe = QueueOp(kOpOpen);
  io_uring_prep_openat2(sqe, dirfd_, path_.c_str(), &how_);
  sqe->flags |= IOSQE_ASYNC;
}

void BeneathOp::QueueStatx(int dirfd, const char* path, int flags) {
  io_uring_sqe* sqe = QueueOp(kOpStatx);
  io_uring_prep_statx(sqe, dirfd, path, flags, STATX_BASIC_STATS, &stx_);
  sqe->flags |= IOSQE_ASYNC;
}

void BeneathOp::OnCompletion(Op*, int res) {
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
      if (kind_ == kLookUp && !ring_->closing()) {
        QueueStatx(fd_, "", AT_EMPTY_PATH);
        return;
      }
    }
  } else if (res < 0) {
    error_ = -res;
  }
  // A lookup's O_PATH descriptor is closed with it (the destructor), once settled.
  ring_->FinishSingle(this);
}

void BeneathOp::Settle(napi_env env) {
  if (error_ != 0) {
    napi_value failure = FailureToJs(Napi::Env(env), Failure::Errno(error_, kind_ == kOpen ? Syscall::kOpen : Syscall::kStat));
    if (failure != nullptr) napi_resolve_deferred(env, deferred_, failure);
    return;
  }
  if (kind_ != kOpen) {
    napi_value stat = StatToJs(env, StatFromStatx(stx_));
    if (stat != nullptr) napi_resolve_deferred(env, deferred_, stat);
    return;
  }
  // The descriptor is the caller's once its promise has it; else the destructor closes it.
  napi_value fd;
  if (napi_create_int32(env, fd_, &fd) == napi_ok && napi_resolve_deferred(env, deferred_, fd) == napi_ok) fd_ = -1;
}

}  // namespace uring
}  // namespace smartread

#endif  // HAVE_LIBURING
