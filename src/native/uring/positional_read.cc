// SPDX-License-Identifier: MIT
// One positional read on the ring: a single READ of an open file into the caller's memory.
#ifdef HAVE_LIBURING

#include "positional_read.h"

#include <cerrno>

#include "../common/errors.h"

namespace smartread {
namespace uring {

PositionalRead::PositionalRead(Ring* ring, napi_deferred deferred, napi_ref view_ref, uint8_t* data,
                               uint32_t length, uint64_t position, int fd, bool fixed, bool on_workers)
    : SingleOp(ring),
      deferred_(deferred),
      view_ref_(view_ref),
      data_(data),
      length_(length),
      position_(position),
      fd_(fd),
      fixed_(fixed),
      on_workers_(on_workers) {}

PositionalRead::~PositionalRead() {
  // At teardown the environment releases its references itself.
  if (!ring_->closing()) napi_delete_reference(ring_->env(), view_ref_);
}

void PositionalRead::Start() {
  io_uring_sqe* sqe = QueueOp(0);
  io_uring_prep_read(sqe, fd_, data_, length_, position_);
  if (fixed_) sqe->flags |= IOSQE_FIXED_FILE;
  // As for whole-file reads: a large read of cached pages would otherwise be copied inline, on
  // the JS thread, during submission; and a read on a server's mount would wait there for it.
  if (on_workers_ || length_ >= ring_->tuning().uring_async_from) sqe->flags |= IOSQE_ASYNC;
}

void PositionalRead::OnCompletion(Op*, int res) {
  op_.busy = false;
  res_ = res;
  ring_->FinishSingle(this);
}

void PositionalRead::Settle(napi_env env) {
  napi_value result = nullptr;
  if (res_ < 0) {
    result = FailureToJs(Napi::Env(env), Failure::Errno(-res_, Syscall::kRead));
  } else {
    napi_create_double(env, static_cast<double>(res_), &result);
  }
  if (result != nullptr) napi_resolve_deferred(env, deferred_, result);
}

}  // namespace uring
}  // namespace smartread

#endif  // HAVE_LIBURING
