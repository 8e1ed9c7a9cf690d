// SPDX-License-Identifier: MIT
// One positional read on the ring: a single READ of an open file into the caller's memory.
#pragma once

#ifdef HAVE_LIBURING

#include <napi.h>

#include <cstdint>

#include "ring.h"

namespace smartread {
namespace uring {

// A single op (ring.h, SingleOp): made on the JS thread with the caller's view referenced;
// Start() queues its READ (on the fixed-file slot, or on the fd itself when the reader got no
// slot); the completion settles the promise with the count (a short count at EOF, as pread(2))
// or a failure.
class PositionalRead final : public SingleOp {
 public:
  // `on_workers`: the file is on a server's mount, where an inline READ would wait for it.
  PositionalRead(Ring* ring, napi_deferred deferred, napi_ref view_ref, uint8_t* data,
                 uint32_t length, uint64_t position, int fd, bool fixed, bool on_workers);
  ~PositionalRead() override;

  void Start() override;
  void OnCompletion(Op* op, int res) override;
  void Settle(napi_env env) override;

 private:
  const napi_deferred deferred_;
  const napi_ref view_ref_;
  uint8_t* const data_;
  const uint32_t length_;
  const uint64_t position_;
  const int fd_;
  const bool fixed_;
  const bool on_workers_;
  int res_ = 0;
};

}  // namespace uring
}  // namespace smartread

#endif  // HAVE_LIBURING
