// SPDX-License-Identifier: MIT
// One positional read on the ring: a single READ of an open file into the caller's memory.
#pragma once

#ifdef HAVE_LIBURING

#include <napi.h>

#include <cstdint>

#include "ring.h"

namespace smartread {
namespace uring {

// Lifecycle: made on the JS thread with the caller's view referenced; Start() queues its READ
// (on the fixed-file slot, or on the fd itself when the reader got no slot); the completion
// settles the promise with the count (a short count at EOF, as pread(2)) or a failure, and the
// ring deletes it. At teardown the ring cancels it and deletes it unsettled.
class PositionalRead final : public OpOwner {
 public:
  // `on_workers`: the file is on a server's mount, where an inline READ would wait for it.
  PositionalRead(Ring* ring, napi_deferred deferred, napi_ref view_ref, uint8_t* data,
                 uint32_t length, uint64_t position, int fd, bool fixed, bool on_workers);
  ~PositionalRead();

  void Start();
  void OnCompletion(Op* op, int res) override;
  // Asks the kernel to cancel the READ if it is in flight; its completion still comes.
  void Cancel();
  // Settles the promise; called once, on the JS thread, unless the environment is going away.
  void Settle(napi_env env);

 private:
  Ring* const ring_;
  const napi_deferred deferred_;
  const napi_ref view_ref_;
  uint8_t* const data_;
  const uint32_t length_;
  const uint64_t position_;
  const int fd_;
  const bool fixed_;
  const bool on_workers_;
  Op op_;
  int res_ = 0;
};

}  // namespace uring
}  // namespace smartread

#endif  // HAVE_LIBURING
